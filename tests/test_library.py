"""Built-in channels: documented losses and sanity of their physics."""

from __future__ import annotations

import pytest

import channels
from channels import library


@pytest.mark.parametrize("name", library.names())
def test_documented_losses_match_the_computed_ones(name):
    ch = library.get(name)
    for f, loss in library.ENTRIES[name].loss_db.items():
        assert ch.insertion_loss_db(f) == pytest.approx(loss, abs=0.05), (name, f)
    # the module docstring's table quotes the same numbers
    for loss in library.ENTRIES[name].loss_db.values():
        assert f"{loss:.2f} dB" in library.__doc__


@pytest.mark.parametrize("name", library.names())
def test_builtins_are_good_quality_full_channels(name):
    ch = library.get(name)
    assert ch.nports == 4 and ch.name == name
    assert ch.quality.ok, ch.quality.problems()
    pr = ch.pulse_response(106.25e9, 32)
    assert pr.ui_sum() == pytest.approx(ch.sdd21[0].real, rel=1e-9)


def test_loss_classes_are_as_named():
    il = {n: library.get(n).insertion_loss_db(26.5625e9) for n in library.names()}
    assert 28 <= il["backplane_30db"] <= 32  # 802.3ck backplane class, about 28-30 dB
    assert il["cpo_short"] < il["twinax_1m_26awg"] < il["chip_to_module"] < il["backplane_30db"]
    # a 200G/lane CPO host path is about 4 dB at 53.125 GHz (REFERENCES.md)
    assert library.get("cpo_short").insertion_loss_db(53.125e9) == pytest.approx(4.0, abs=0.5)


def test_get_is_cached_and_rejects_unknown_names():
    assert library.get("cpo_short") is library.get("cpo_short")
    with pytest.raises(channels.ChannelError, match="unknown built-in"):
        library.get("nope")
    with pytest.raises(channels.ChannelError, match="unknown built-in"):
        library.describe(["cpo_short"])
    d = library.describe("twinax_1m_26awg")
    assert d["parameters"]["awg"] == 26
