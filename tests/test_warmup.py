"""The warm-up (phy.warmup): its groups compile what a real run needs, the cold check
reads Numba's cache, and the command's inputs are checked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from phy import warmup
from phy.cli import main
from phy.errors import ConfigError

# In a fresh process: run every group's calls, then the demo (no plots), and report the
# kernels of phy, fec and channels that the demo reached with a type signature the groups
# had not compiled (those a cold first run would still compile after a warm-up), and the
# canaries each group's calls left without a compiled signature.
_PROBE = textwrap.dedent("""
    import json, sys
    from numba.core.registry import CPUDispatcher
    from phy import warmup
    from phy.cli.demo import run_demo

    def kernels():
        out = {}
        for name, mod in list(sys.modules.items()):
            if not name.startswith(("phy", "fec", "channels")):
                continue
            for attr, obj in list(vars(mod).items()):
                if isinstance(obj, CPUDispatcher):
                    out[f"{obj.py_func.__module__}:{obj.py_func.__qualname__}"] = set(obj.overloads)
        return out

    missing = {}
    for g, (_, run, canaries) in warmup.GROUPS.items():
        run()
        missing[g] = [c for c in canaries if not warmup._dispatcher(c).overloads]
    before = kernels()
    run_demo(None, n_ui=4_000, plots=False)
    after = kernels()
    new = sorted(k for k, sigs in after.items() if sigs - before.get(k, set()))
    print(json.dumps({"missing_canaries": missing, "new_in_demo": new}))
""")


def test_groups_reach_their_canaries_and_cover_the_demo():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["missing_canaries"] == {g: [] for g in warmup.GROUPS}
    assert res["new_in_demo"] == [], "the demo reaches kernels (or signatures) no warm-up group compiles"


def test_cold_groups_reads_each_canary(monkeypatch):
    cached = {ref for ref in warmup.GROUPS["com"][2]} | {warmup.GROUPS["link"][2][0]}
    monkeypatch.setattr(warmup, "_cached", lambda ref: ref in cached)
    assert warmup.cold_groups() == ["timesim", "link", "touchstone"]  # link has one canary cached, not all
    assert warmup.cold_groups("com") == []
    with pytest.raises(ConfigError, match=r"unknown warm-up group\(s\) 'eye'; the groups are com, timesim, link, touchstone"):
        warmup.cold_groups(["com", "eye"])


def test_the_demo_warms_only_its_own_groups(monkeypatch):
    """``linkmodel demo`` reads no Touchstone file: a cold reader is not compiled for it."""
    from fec import _numba_setup
    from phy.cli import demo

    monkeypatch.setattr(_numba_setup, "state", "user")
    monkeypatch.setattr(warmup, "_cached", lambda ref: False)  # everything cold
    warmed = []
    monkeypatch.setattr(warmup, "warm_up", lambda names, **kw: warmed.append(list(names)))
    demo._warm_up_if_cold()
    assert warmed == [list(warmup.DEMO_GROUPS)] and "touchstone" not in warmup.DEMO_GROUPS
    assert set(warmup.DEMO_GROUPS) < set(warmup.GROUPS)


def test_cached_is_false_for_what_numba_cannot_read():
    assert warmup._cached("phy.warmup:cold_groups") is False  # not a kernel: no cache to read


def test_warm_up_runs_only_the_cold_groups_in_order(monkeypatch):
    ran = []
    fake = {g: (what, (lambda g=g: ran.append(g)), canaries) for g, (what, _, canaries) in warmup.GROUPS.items()}
    monkeypatch.setattr(warmup, "GROUPS", fake)
    monkeypatch.setattr(warmup, "cold_groups", lambda names: [g for g in names if g != "com"])
    seen = []
    done = warmup.warm_up(workers=1, report=lambda g, s: seen.append(g))
    assert ran == seen == list(done) == ["timesim", "link", "touchstone"]
    assert warmup.warm_up(["com"], workers=1) == {}  # warm: nothing run
    assert warmup.warm_up(["com"], workers=1, only_cold=False) == {"com": pytest.approx(0.0, abs=1.0)}


def test_warmup_command(monkeypatch, capsys):
    monkeypatch.setattr(warmup, "cold_groups", lambda names=None: [])
    assert main(["warmup"]) == 0
    assert "nothing to compile" in capsys.readouterr().out
    assert main(["warmup", "eye"]) == 2
    assert "unknown warm-up group(s) 'eye'" in capsys.readouterr().err
    assert main(["warmup", "--workers", "0"]) == 2


def test_direct_and_long_span_paths_share_one_kernel_signature():
    """The tail's outputs reach the kernel C-contiguous, like the direct path's placeholder:
    a second layout would compile the time-domain kernel a second time (about 9 s)."""
    import channels
    from phy.engines import simulate
    from phy.engines.timesim import _kernels as K

    ch = channels.library.get("twinax_1m_26awg")
    direct = simulate(ch, 3_000, baud_hz=106.25e9, tail="direct", eye=True, seed=1)
    before = set(K.run_chunk.signatures)
    fft = simulate(ch, 3_000, baud_hz=106.25e9, tail="fft", eye=True, seed=1)  # the eye's shifts: a sliced view
    assert direct.config["tail"] is None and fft.config["tail"] is not None
    assert set(K.run_chunk.signatures) == before
