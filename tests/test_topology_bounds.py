"""Issue 31, the topology part: every call of ``phy.topology`` and ``linkmodel rack`` has a
bounded cost on any accepted input, and a refusal comes before the work.

No test here times anything: a refusal is shown to come first by making the work raise if
it is reached (numpy in the builders, link evaluation, the roll-up, the plans), and the cost
that is accepted is shown bounded by counting (link evaluations, plans made) and by
measuring memory against the estimate the refusals use."""

from __future__ import annotations

import importlib
import re
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from phy import ConfigError, cli
from phy import topology as tp
from phy.cli import rack as rk
from phy.topology import builders, fabric
from phy.topology import domain as dm

ru = importlib.import_module("phy.topology.rollup")  # the module, not the function
BIG = tp.SwitchAsic("big", 10**10, 800e9, 200e-9, 0.0)


class _NoArrays:
    """Stands in for numpy in :mod:`phy.topology.builders`: any use is work done before the
    refusal."""

    def __getattr__(self, name):
        raise AssertionError(f"numpy.{name} used before the size was checked")


@pytest.fixture(scope="module")
def optical_report():
    return tp.LinkClass.optical("dsp", lanes=2).report(10.0)


@pytest.fixture(scope="module")
def fixed(optical_report):
    """Link classes with one report at every length (no evaluation): copper and optics."""
    return (tp.LinkClass.from_report("cu", optical_report, 4.1e-9, "copper", awg=26),
            tp.LinkClass.from_report("op", optical_report, 4.9e-9, "optical"))


# ----------------------------------------------------------------------------- builders
HUGE = {
    "scale_out 1e9": lambda: tp.scale_out(10**9),
    "two_tier 1e6 racks": lambda: tp.two_tier(10**6),
    "single_tier, huge radix": lambda: tp.single_tier(1000, asic=BIG, links_per_accel=10**6),
    "hgx8, 1e12 switches": lambda: tp.hgx8(n_switches=10**12),
    "hgx8, 1e9 links per GPU": lambda: tp.hgx8(asic=BIG, links_per_gpu=10**9),
    "nvl72, 1e9 GPUs per tray": lambda: tp.nvl72(asic=BIG, gpus_per_tray=10**9),
    "nvl72, a million trays": lambda: tp.nvl72(asic=BIG, tray_order="C" * 10**6 + "S" * 9),
}


@pytest.mark.parametrize("build", HUGE.values(), ids=HUGE.keys())
def test_a_huge_domain_is_refused_before_any_array(build, monkeypatch):
    monkeypatch.setattr(builders, "np", _NoArrays())
    with pytest.raises(ConfigError, match=r"links and .* nodes would take about .*MAX_TOPOLOGY_BYTES"):
        build()


def test_counts_given_as_floats_are_refused():
    with pytest.raises(ConfigError, match="n_accelerators must be an integer"):
        tp.scale_out(1e9)
    with pytest.raises(ConfigError, match="n_racks must be an integer"):
        tp.two_tier(1e6)


def test_the_limit_holds_before_allocating(monkeypatch):
    """With the limit 1 MiB above the fixed part, domains the old code built (tens of MB)
    are refused with almost nothing allocated."""
    monkeypatch.setattr(fabric, "MAX_TOPOLOGY_BYTES", fabric.BYTES_FIXED + 2**20)
    for build in (lambda: tp.scale_out(5_000), lambda: tp.two_tier(4), lambda: tp.single_tier(1024),
                  lambda: tp.nvl36x2(asic=tp.SwitchAsic("wide", 20_036, 800e9, 200e-9, 0.0))):
        tracemalloc.start()
        try:
            with pytest.raises(ConfigError, match="MAX_TOPOLOGY_BYTES"):
                build()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2**20


def test_the_memory_estimate_covers_a_build_and_its_roll_up(fixed):
    """The refusals' estimate (:func:`estimate_bytes`) is at least what building
    and rolling up costs, measured, so an accepted domain stays within the limit."""
    cu, op = fixed
    for build in (lambda: tp.scale_out(20_000, op), lambda: tp.two_tier(12, cu, op)):
        tracemalloc.start()
        try:
            topo = build()
            tp.rollup(topo)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert topo.n_links > 30_000
        assert peak < fabric.estimate_bytes(topo.n_links, topo.n_nodes)


def test_a_topology_with_too_many_nodes_or_racks_is_refused():
    acc = tp.Accelerator.gb200()
    none_i, none_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    with pytest.raises(ConfigError, match="nodes would take"):
        tp.Topology("t", acc, 10**12, (), (), none_i, none_i, none_f, none_i, none_i, {})
    with pytest.raises(ConfigError, match="rack_of must give a rack index from 0 to 1"):
        tp.Topology("t", acc, 2, (), (), none_i, none_i, none_f, none_i, none_i, {},
                    rack_of=np.array([0, 10**12]))


# ----------------------------------------------------------------------------- roll-up
def test_a_roll_up_needing_too_many_evaluations_refuses_before_the_first():
    calls = []

    def spec(length_m):
        calls.append(length_m)
        raise AssertionError("a link was evaluated")

    fine = tp.LinkClass("fine", spec, resolution_m=1e-3)
    topo = tp.single_tier(600, fine, accels_per_rack=1)  # 300 distances from the switch rack
    with pytest.raises(ConfigError, match=r"need \d+ link evaluations .* over the 256"):
        tp.rollup(topo)
    assert not calls


def test_too_many_loads_are_refused(fixed):
    topo = tp.nvl72(fixed[0])
    with pytest.raises(ConfigError, match="at most 64 utilisations"):
        tp.rollup(topo, utilisations=[0.5] * 65)


def test_each_bucket_gets_its_links(fixed):
    """The links grouped by length bucket in one pass: every link carries its own
    length's report."""
    op = fixed[1]
    topo = tp.single_tier(600, op, accels_per_rack=1)
    ev = ru._Evaluated(topo)
    assert np.unique(topo.length_m).size > 250
    want = np.array([op.report(float(x)).latency_s for x in topo.length_m])
    assert np.allclose(ev.latency, want, rtol=1e-12, atol=0)  # lengths differ by 0.6 m: 3 ns


# ----------------------------------------------------------------------------- domains
def _stub_plans(monkeypatch):
    """plan_domain replaced by a recorder whose plans close when the radix allows."""
    seen = []

    def plan(n, lay, cands, *, asic, accelerator=None, objective="power"):
        seen.append((n, cands))
        return SimpleNamespace(n_accelerators=n, closes=n <= lay.max_accelerators(asic))

    monkeypatch.setattr(dm, "plan_domain", plan)
    return seen


def test_one_tier_plans_one_size_with_candidates_made_once(monkeypatch):
    seen = _stub_plans(monkeypatch)
    best, plans = tp.largest_domain(tp.Layout(max_tiers=1))          # the README's example
    assert best.n_accelerators == 72
    assert [n for n, _ in seen] == [72]                               # was 72, 144, ..., 2592
    assert seen[0][1] is dm.default_candidates()                      # made once, shared


def test_two_tiers_stop_at_the_first_size_that_closes(monkeypatch):
    seen = _stub_plans(monkeypatch)
    best, plans = tp.largest_domain(tp.Layout())
    assert best.n_accelerators == 2592 and [n for n, _ in seen] == [2592]
    seen.clear()
    _, plans = tp.largest_domain(tp.Layout(), sizes=(72, 144, 288), every=True)
    assert [n for n, _ in seen] == [288, 144, 72] and [p.n_accelerators for p in plans] == [72, 144, 288]
    assert len({id(c) for _, c in seen}) == 1


def test_default_candidates_are_shared_between_plans():
    a, b = dm.default_candidates(), dm.default_candidates()
    assert a is b
    assert dm.default_candidates(lanes=4) is not a


def test_every_size_is_checked_before_any_plan(monkeypatch):
    seen = _stub_plans(monkeypatch)
    lay = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2)
    asic = tp.SwitchAsic("small", 8, 800e9, 200e-9, 30.0)
    with pytest.raises(ConfigError, match="whole racks: 12"):
        dm.largest_domain(lay, sizes=(8, 16, 12), asic=asic)
    with pytest.raises(ConfigError, match="trays of 4"):
        dm.largest_domain(lay, sizes=(8, 6), asic=asic)
    with pytest.raises(ConfigError, match="more than 64"):
        dm.largest_domain(lay, sizes=[8 * k for k in range(1, 66)], asic=asic, every=True)
    with pytest.raises(ConfigError, match="more than 8192 values"):
        dm.largest_domain(lay, sizes=iter(lambda: 8, None), asic=asic)
    assert not seen


LAYOUTS = {"two tiers": {}, "one tier": {"max_tiers": 1}, "one rack's power": {"rack_power_w": 11_650.0},
           "too little power": {"rack_power_w": 5_000.0}, "cables": {"max_cables_per_rack": 100},
           "copper": {"max_copper_kg_per_rack": 0.2}}


@pytest.mark.parametrize("limits", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_the_search_gives_the_exhaustive_answer(limits, fixed):
    """The largest closing size equals the old search's: every whole-rack size up to what
    two tiers allow planned, the largest that closes kept."""
    asic = tp.SwitchAsic("small", 8, 800e9, 200e-9, 30.0)
    lay = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2, **limits)
    sizes = (4, 8, 16, 24, 32)
    every = {n: dm.plan_domain(n, lay, fixed, asic=asic) for n in sizes}

    def largest(ns):
        return max((n for n in ns if every[n].closes), default=None)

    def n_of(plan):
        return None if plan is None else plan.n_accelerators

    best, plans = dm.largest_domain(lay, fixed, sizes=sizes, asic=asic)
    assert n_of(best) == largest(sizes)
    best, plans = dm.largest_domain(lay, fixed, asic=asic)          # whole racks
    assert n_of(best) == largest((8, 16, 24, 32))
    assert len(plans) <= 4
    best, plans = dm.largest_domain(lay, fixed, sizes=sizes, asic=asic, every=True)
    assert n_of(best) == largest(sizes)
    assert [(p.n_accelerators, p.closes, p.binding) for p in plans] == [
        (n, every[n].closes, every[n].binding) for n in sizes]


# ----------------------------------------------------------------------------- linkmodel rack
class _Reached(Exception):
    pass


def test_rack_runs_with_its_defaults_without_a_file(monkeypatch):
    got = []

    def run_rack(cfg, where="rack file", workers=None):
        got.append((cfg, where))
        raise _Reached

    monkeypatch.setattr(rk, "run_rack", run_rack)
    with pytest.raises(_Reached):
        cli.main(["rack"])
    assert got == [(rk.rack_defaults(), "rack defaults")]


@pytest.fixture
def no_work(monkeypatch):
    """Any link evaluation or roll-up raises."""
    def boom(*a, **k):
        raise AssertionError("work was done before the file was checked")

    monkeypatch.setattr(tp.LinkClass, "report", boom)
    monkeypatch.setattr(tp, "rollup", boom)


BAD = {
    "max_tiers": ('[domain]\nsearch = "largest"\nmax_tiers = 5\n', r"line 3: \[domain\] max_tiers must be a whole number from 1 to 2"),
    "lanes": ("[link]\nlanes = 2000\n", r"line 2: \[link\] lanes must be a whole number from 1 to 1024"),
    "awg": ("[link]\nawg = 50\n", r"\[link\] awg must be a finite number from 18 to 40"),
    "size": ('[domain]\nsearch = "sizes"\nsizes = [72, 98]\n', r"\[domain\] 98 accelerators do not fill trays"),
    "size range": ('[domain]\nsearch = "sizes"\nsizes = [72, 9000]\n', r"\[domain\] sizes must be a non-empty list, each a whole number from 1 to 8192"),
    "racks": ('[domain]\nsearch = "sizes"\nsizes = [144, 200]\n', r"whole racks: 200"),
    "too many sizes": ('[domain]\nsearch = "sizes"\naccelerators_per_rack = 8\nsizes = ['
                       + ", ".join(str(8 * k) for k in range(1, 70)) + "]\n", "more than 64"),
}


@pytest.mark.parametrize("text, err", BAD.values(), ids=BAD.keys())
def test_a_rack_file_is_checked_whole_before_any_link_is_evaluated(text, err, no_work, tmp_path, capsys):
    p = tmp_path / "r.toml"
    p.write_text(text)
    assert cli.main(["rack", str(p)]) == 2
    msg = capsys.readouterr().err
    assert msg.count("\n") == 1 and "r.toml" in msg
    assert re.search(err, msg), msg


# ----------------------------------------------------------------------------- latency
def test_simulated_waits_are_bounded():
    from phy.latency import queueing

    with pytest.raises(ConfigError, match="from 10 to 20000000"):
        queueing.simulate_md1(0.5, 1e-9, queueing.MAX_SIMULATED_WAITS + 1)


def test_a_flit_error_ratio_near_one_keeps_its_replay_distribution_bounded(monkeypatch):
    """Replays of a link whose flits nearly all fail: millions of possible retries, put on
    at most _MAX_GRID points (memory bounded) with the quantiles kept."""
    from scipy import stats

    stack = importlib.import_module("phy.latency.stack")
    monkeypatch.setattr(stack, "_MAX_GRID", 2**12)
    f, t = 1 - 1e-5, 1e-9                        # about 3 million replays at the 1e-13 tail
    mean = f / (1 - f) * t
    tracemalloc.start()
    try:
        q = stack._quantiles({"link": {"replay": mean}}, [("replay", f, 1, t)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20                      # 3 million points would take 24 MB each
    for name, p in stack.QUANTILES.items():
        assert q[name] == pytest.approx(stats.nbinom.ppf(p, 1, 1 - f) * t, rel=0.02)
