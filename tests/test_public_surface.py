"""What the README says ``phy`` offers is there (issue 34: it said ``phy`` re-exports
``phy.topology``, which a bare ``import phy`` did not give)."""

import subprocess
import sys

import pytest

import phy


def test_subpackages_are_attributes_of_phy_loaded_when_first_touched():
    code = ("import sys, phy; before = 'phy.topology' in sys.modules; "
            "ok = phy.topology.nvl72 is not None and phy.latency.Collectives is not None and phy.sweep is not None; "
            "print(before, ok, 'phy.topology' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]  # not loaded by `import phy`, there when asked


def test_unknown_attributes_still_fail():
    with pytest.raises(AttributeError, match="no attribute 'topologie'"):
        phy.topologie  # noqa: B018
    assert {"topology", "latency", "sweep"} <= set(dir(phy))
