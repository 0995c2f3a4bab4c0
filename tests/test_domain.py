"""The domain-size trade (phy.topology.domain): each cable's class chosen by what closes at
its length, the binding constraint, the largest domain, the steps between sizes.

A small layout (racks of 8 accelerators with 2 links each, 8-port switches) keeps the real
link evaluations to a handful: the in-rack cables are a few tenths of a metre, the
cross-rack ones 4.6 m and more (the fixed overhead route: ``route="overhead"``; the laid-out
route of issue 33, which lets neighbouring racks' cables through their side walls, is
tested in tests/test_domain_trade.py), past passive copper's and the active cable's reach at
212.5 Gb/s in this model."""

import math

import numpy as np
import pytest

from phy import ConfigError
from phy import topology as tp
from phy.topology import domain as dm

LAYOUT = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2, route="overhead")


@pytest.fixture(scope="module")
def cands():
    return dm.default_candidates()


@pytest.fixture(scope="module")
def asic():
    return tp.SwitchAsic("small", 8, 800e9, 200e-9, 30.0)


@pytest.fixture(scope="module")
def plans(cands, asic):
    return {n: dm.plan_domain(n, LAYOUT, cands, asic=asic) for n in (8, 16)}


def test_one_rack_is_one_tier_and_the_radix_is_full(plans):
    p = plans[8]
    assert p.tiers == 1 and p.closes
    assert p.utilisation["switch_radix"] == pytest.approx(1.0)  # the next size needs a second tier
    assert p.binding == "switch_radix"
    assert {c["class"] for c in p.choices} == {"copper_26awg_HL_flyover"}


def test_past_copper_reach_no_cable_is_passive_copper(plans, cands):
    p = plans[16]
    assert p.tiers == 2
    copper = cands[0]
    long_ = [c for c in p.choices if c["level"] == 1]
    assert long_ and min(c["length_m"] for c in long_) > 4
    for c in long_:
        assert c["class"] != copper.name
        opt = {o[0]: o for o in c["options"]}
        assert not opt[copper.name][1]  # copper does not close there
    # and where it was evaluated its own report says so
    assert not copper.report(min(c["length_m"] for c in long_)).passes
    # every link of level 1 in the rolled-up topology carries a class other than copper
    names = [cls.name for cls in p.report_topology.classes]
    lvl1 = p.report_topology.level == 1
    assert copper.name not in {names[i] for i in np.unique(p.report_topology.link_class[lvl1])}
    assert p.closes


def test_a_choice_is_never_beaten_by_an_alternative_that_closes(plans):
    for p in plans.values():
        for c in p.choices:
            chosen = next(o for o in c["options"] if o[0] == c["class"])
            assert chosen[1]
            for o in c["options"]:
                if o[1]:
                    assert chosen[2] <= o[2] + 1e-12


def test_the_plan_costs_no_more_than_any_single_class_that_closes_everywhere(plans, cands, asic):
    p = plans[16]
    for c in cands:
        alone = dm.plan_domain(16, LAYOUT, (c,), asic=asic)
        if alone.closes:
            assert p.power.total_w <= alone.power.total_w + 1e-9


def test_copper_only_stops_at_one_rack_for_reach(cands, asic):
    best, plans = dm.largest_domain(LAYOUT, cands[:2], sizes=(8, 16), asic=asic)
    assert best is not None and best.n_accelerators == 8
    assert not plans[1].closes and plans[1].binding == "reach"
    assert "close with no candidate" in plans[1].reasons[0]


def test_one_tier_only_stops_at_the_radix(cands, asic):
    lay = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2, max_tiers=1, route="overhead")
    p = dm.plan_domain(16, lay, cands, asic=asic)
    assert not p.closes and p.binding == "switch_radix"
    assert p.utilisation["switch_radix"] == pytest.approx(2.0)
    assert lay.max_accelerators(asic) == 8 and LAYOUT.max_accelerators(asic) == 4 * 8


def test_rack_power_binds_below_the_rack_draw(cands, asic, plans):
    need = plans[8].power.max_rack_w
    lay = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2, rack_power_w=0.9 * need,
                    route="overhead")
    p = dm.plan_domain(8, lay, cands, asic=asic)
    assert not p.closes and p.binding == "rack_power"
    assert p.utilisation["rack_power"] == pytest.approx(1 / 0.9)
    # a rack's draw: 8 accelerators at their power, and the switches with their SerDes
    acc = tp.Accelerator.gb200()
    assert need == pytest.approx(8 * acc.power_w + plans[8].power.switch_w, rel=1e-9)


def test_cables_and_copper_by_hand(plans, cands):
    d = 0.127e-3 * 92 ** ((36 - 26) / 39)
    assert dm.copper_kg_per_pair_m(26) == pytest.approx(3 * math.pi * d * d / 4 * 8960)
    assert dm.copper_kg_per_pair_m(26) == pytest.approx(3.46e-3, rel=0.01)
    p = plans[8]
    assert p.cables == 8 * 2 * 2 * 2  # links x lanes x 2 directions
    assert p.copper_kg == pytest.approx(p.report.cable_length_m * dm.copper_kg_per_pair_m(26), rel=1e-12)
    lay = dm.Layout(accelerators_per_rack=8, gpus_per_tray=4, links_per_accelerator=2, route="overhead",
                    max_cables_per_rack=p.cables - 1, max_copper_kg_per_rack=p.copper_kg / 2)
    q = dm.plan_domain(8, lay, cands, asic=tp.SwitchAsic("small", 8, 800e9, 200e-9, 30.0))
    assert not q.closes and set(q.reasons) and q.binding == "copper_mass"  # 2x over beats 1.03x
    assert q.utilisation["cables"] == pytest.approx(p.cables / (p.cables - 1))


def test_domain_steps_cost_the_differences(plans):
    rows = dm.domain_steps([plans[8], plans[16]])
    a, b = plans[8], plans[16]
    assert "step_fabric_kw" not in rows[0]
    assert rows[1]["step_fabric_kw"] == pytest.approx((b.power.total_w - a.power.total_w) / 1e3)
    assert rows[1]["step_one_way_remote_ns"] == pytest.approx(
        (b.latency_s["remote"]["one_way"] - a.latency_s["remote"]["one_way"]) * 1e9)
    # two tiers over optics cost more per accelerator and more nanoseconds than one rack
    assert rows[1]["step_w_per_accelerator"] > 0 and rows[1]["step_one_way_remote_ns"] > 100
    assert np.isfinite(rows[1]["fabric_kw"])
    assert b.to_dict()["n_accelerators"] == 16


def test_bad_domain_input(cands, asic):
    with pytest.raises(ConfigError, match="max_tiers"):
        dm.Layout(max_tiers=3)
    with pytest.raises(ConfigError, match="trays of 4"):
        dm.plan_domain(6, LAYOUT, cands, asic=asic)
    with pytest.raises(ConfigError, match="objective"):
        dm.choose_classes(np.array([1.0]), cands, objective="cost")
    with pytest.raises(ConfigError, match="candidates"):
        dm.plan_domain(8, LAYOUT, ("copper",), asic=asic)
    with pytest.raises(ConfigError, match="n_accelerators"):
        dm.plan_domain(10**6, LAYOUT, cands, asic=asic)


def test_a_domain_whose_long_cables_never_close_still_rolls_up(cands, asic):
    # passive copper alone, board hosts with the KR package (the CR host's MLSD keeps some
    # flits alive at 4.6 m): every flit fails, so the remote route never delivers; the
    # roll-up says so (infinite tails) instead of dividing by zero
    p = dm.plan_domain(16, LAYOUT, (dm.default_candidates(host="flyover")[0],), asic=asic)
    assert not p.closes and p.binding == "reach"
    assert math.isinf(p.report.loaded_s["remote"][0.3]["p99"])
