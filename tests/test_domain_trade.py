"""The domain trade from a physical layout (issue 33): racks of NVL72's build in a row, cables
routed between them (the rack-to-rack run plus the in-rack runs), each cable the cheapest
class that closes at its length, and the constraint that binds derived from the layout.

On copper alone at 212.5 Gb/s per lane the domain stops at one rack: 576 does not close
(reach: the cables between racks are longer than copper closes), 72 does. With optics,
144 to 576 close; what binds is whichever of the layout's limits is nearest, and it moves
when the layout does."""

import math

import numpy as np
import pytest

from phy import topology as tp
from phy.topology import domain as dm
from phy.topology.multirack import cross_rack_m
from phy.topology.fabric import RACK_UNIT_M


#: The default candidates with copper evaluated in 1.5 m buckets (lengths rounded up: a class
#: that closes at its bucket closes at the length), so that a 576-GPU plan evaluates a handful
#: of lengths: passive copper closes at 1.5 m (every cable inside an NVL72 rack, 1.25 m at
#: most) and not at 3 m; benchmarks/bench_domain.py plans the same at 0.25 m.
RES = 1.5


@pytest.fixture(scope="module")
def cands():
    c = dm.default_candidates(resolution_m=RES)
    return (c[0], c[3])                                               # passive copper and CPO


@pytest.fixture(scope="module")
def copper_576(cands):
    return dm.plan_domain(576, None, cands[:1])


@pytest.fixture(scope="module")
def optics(cands):
    return {n: dm.plan_domain(n, None, cands) for n in (144, 576)}


def test_a_576_copper_domain_does_not_close_on_reach(copper_576, cands):
    p = copper_576
    assert not p.closes and p.binding == "reach"
    assert p.reasons[0].startswith(f"{sum(f['cables'] for f in p.report.failing)} links close with no candidate")
    copper = cands[0]
    # every cable inside a rack closes on copper; the ones that do not run between racks
    assert all(copper.report(c["length_m"]).passes for c in p.choices if c["level"] == 0)
    failing = [c for c in p.choices if not copper.report(c["length_m"]).passes]
    assert failing and {c["level"] for c in failing} == {1}
    # every cable between racks that are not neighbours runs over the top: past copper
    topo = p.report_topology
    lvl1 = topo.length_m[topo.level == 1]
    lay = Layout()
    assert lvl1.min() >= lay.rack_pitch_m + 2 * lay.tray_run_m - 1e-12
    assert (lvl1 > 2 * lay.rack_pitch_m).sum() >= 576 * 18 // 2 and not copper.report(float(lvl1.max())).passes


def Layout(**kw):
    return dm.Layout(**kw)


def test_72_closes_on_copper_and_copper_only_stops_there(cands, copper_576):
    best, plans = dm.largest_domain(dm.Layout(), cands[:1], sizes=(72, 144, 288, 576))
    assert best is not None and best.n_accelerators == 72 and best.closes
    assert [q.n_accelerators for q in plans] == [72, 144, 288, 576]            # planned from 576 down
    for q in plans:
        if q.n_accelerators > 72:
            assert not q.closes and q.binding == "reach"
    assert best.tiers == 1 and best.racks == 1 and best.optical_links == 0
    assert best.utilisation["switch_radix"] == pytest.approx(1.0)   # 72 ports: the next size needs a tier
    # NVL72's build: 18 compute trays, 9 switch trays, 8 power shelves, 2 management switches
    assert best.rack_units == [18 + 9 + 8 + 2]
    assert best.cables == 5184


def test_a_denser_rack_does_not_fit_its_power_and_units(cands):
    """144 in one rack (a copper spine to every GPU): its GPUs alone draw past the 132 kW
    envelope and its trays take more than 48 RU; both follow from the parts."""
    lay = dm.Layout(accelerators_per_rack=144)
    p = dm.plan_domain(144, lay, cands)
    acc = tp.Accelerator.gb200()
    assert not p.closes
    assert p.utilisation["rack_power"] > 144 * acc.power_w / lay.rack_power_w > 1
    n_l1 = 144 * 18 // 36
    assert max(p.rack_units) == lay.units(144, n_l1) == 36 + 36 + 8 + 2
    assert p.binding == max(("rack_power", "rack_units"), key=lambda k: p.utilisation[k])


def test_with_optics_every_size_closes_at_a_cost(optics):
    a, b = optics[144], optics[576]
    for p in (a, b):
        assert p.closes and p.tiers == 2
        names = {c["class"] for c in p.choices if c["level"] == 1}
        assert any(n.startswith("optical") for n in names)
        assert p.optical_links > 0 and p.optical_modules >= p.optical_links
    assert b.optical_links > 4 * a.optical_links                     # further racks: more of them optical
    assert b.reliability.link_down_events_per_day > a.reliability.link_down_events_per_day
    assert b.power.per_accelerator_w > a.power.per_accelerator_w
    assert b.racks == 8 + math.ceil(576 * 18 / 72 / 18)             # 8 GPU racks and the spine racks


def test_the_binding_constraint_is_derived_and_moves_with_the_layout(optics, cands):
    p = optics[576]
    # default layout: each GPU rack holds 18 compute trays and 18 switch trays of its 36
    # first-tier ASICs: 46 of 48 RU, nearer its limit than the 132 kW power envelope
    units = p.utilisation["rack_units"]
    assert units == pytest.approx((18 + 18 + 8 + 2) / 48)
    assert p.binding == "rack_units" and units > p.utilisation["rack_power"]
    assert optics[144].binding == "rack_units"                      # the same racks at 144
    # the GPU rack's draw: its GPUs, its 36 first-tier ASICs and its ends of the optics
    acc = tp.Accelerator.gb200()
    assert p.power.max_rack_w > 72 * acc.power_w + 36 * tp.SwitchAsic.nvlink5().core_power_w
    # a taller rack: the power envelope is the nearest limit
    tall = dm.plan_domain(576, dm.Layout(rack_units=56), cands)
    assert tall.closes and tall.binding == "rack_power"
    assert tall.utilisation["rack_power"] == pytest.approx(p.utilisation["rack_power"])
    # a 100 kW envelope: the racks' own draw stops it
    low = dm.plan_domain(576, dm.Layout(rack_power_w=100e3), cands)
    assert not low.closes and low.binding == "rack_power"
    assert low.utilisation["rack_power"] == pytest.approx(p.power.max_rack_w / 100e3)
    # a budget of link-down events: the optics' failures stop 576 and not 144
    budget = 2 * optics[144].reliability.link_down_events_per_day
    tight = dm.plan_domain(576, dm.Layout(max_link_down_per_day=budget), cands)
    assert not tight.closes and tight.binding == "link_down"
    assert dm.plan_domain(144, dm.Layout(max_link_down_per_day=budget), cands).closes


def test_the_route_between_racks_by_hand():
    pitch, H, rise, run = 0.6, 48 * RACK_UNIT_M, 0.3, 0.1
    y1, y2 = 0.5, 0.9
    side = cross_rack_m(pitch, y1, y2, pitch, H, rise, run)
    assert side == pytest.approx(pitch + 0.4 + 0.2)
    far = cross_rack_m(3 * pitch, y1, y2, pitch, H, rise, run)
    assert far == pytest.approx((H - y1) + (H - y2) + 2 * rise + 3 * pitch + 0.2)
    # the old fixed route is kept when asked for
    old = tp.two_tier(2, rack_pitch_m=pitch, overhead_m=4.0)
    lv = old.level == 1
    assert np.all(old.length_m[lv] >= 4.0)
    assert dm.Layout(route="overhead").route == "overhead"
