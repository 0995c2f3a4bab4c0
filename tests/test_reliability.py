"""phy.topology.reliability: component counts, FIT sums, link-down events, connector wear,
and the post-FEC error events of a fabric."""

from __future__ import annotations

import itertools
import json
import math
from conftest import cpu_seconds_at_most
from dataclasses import replace

import numpy as np
import pytest

import phy
from phy import ConfigError
from phy import topology as tp
from phy.link import LinkSpec, Retry, Serdes
from phy.topology.fit_rates import OPTICAL_FIELD_FACTOR
from phy.topology.reliability import (
    COMPONENTS,
    PI_K,
    FitRates,
    ReliabilityReport,
    component_counts,
    fabric_reliability,
)


@pytest.fixture(scope="module")
def copper_report():
    """One short copper link (0.5 m of 26 AWG, bare assembly), 2 x 212.5 Gb/s, KP4, with a
    link layer, equalised by the sweep's fixed preset: evaluated once for the module."""
    from channels import assembly
    
    ch = assembly.cable_channel(0.5, 26, host=None)
    spec = LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, serdes=Serdes.preset(106.25e9, "pam4"),
                    fec="KP4", retry=Retry())
    return phy.evaluate_link(spec)


@pytest.fixture(scope="module")
def noisy_report(copper_report):
    """The same link with frame and flit error ratios large enough to count by hand."""
    return replace(copper_report, frame_loss_ratio=2.5e-10,
                   flit_retry_ratio=4e-9, link_layer={**copper_report.link_layer, "flit_error_ratio": 4e-9})


def _classes(rep):
    mk = tp.LinkClass.from_report
    cu = mk("cu", rep, 4.1e-9)
    aec = mk("aec", rep, 4.1e-9, kind="aec")
    dsp = mk("dsp", rep, 4.9e-9, medium="optical", kind="dsp_optics")
    cpo = mk("cpo", rep, 4.9e-9, medium="optical", kind="cpo")
    cpo.lanes_per_module = 8
    lpo = mk("lpo", rep, 4.9e-9, medium="optical", kind="lpo")
    return cu, aec, dsp, cpo, lpo


def _hand_topology(rep):
    """4 accelerators on one switch: 2 copper links, 1 AEC, 3 DSP-optics links (4-lane
    modules), 2 CPO links (8-lane engines), 1 LPO link; each link 2 lanes per direction."""
    classes = _classes(rep)
    cls = np.array([0, 0, 1, 2, 2, 2, 3, 3, 4])
    n = cls.size
    src = np.arange(n) % 4
    dst = np.full(n, 4)
    length = np.array([0.5, 0.7, 1.5, 10.0, 20.0, 30.0, 5.0, 5.0, 12.0])
    return tp.Topology("hand", tp.Accelerator.gb200(), 4,
                       (tp.SwitchTier("sw", tp.SwitchAsic("sw", 16, 800e9), 1),), classes,
                       src, dst, length, cls, np.zeros(n, dtype=int),
                       {"local": ((0, 0), (0,)), "remote": ((0, 0), (0,))})


# ----------------------------------------------------------------------------- counts
def test_counts_equal_hand_counts(copper_report):
    topo = _hand_topology(copper_report)
    c = component_counts(topo)
    # lanes L = 2 per link; fibres 2 L = 4 per link; each fibre crosses 2 path connectors + 2 module ports
    hand = {
        "cu": {"copper_cable": 2, "host_connector": 4},
        "aec": {"copper_cable": 1, "host_connector": 2, "retimer": 2},
        "dsp": {"optical_module": 3 * 2 * 2 / 4, "host_connector": 3 * 2 * 2 / 4, "laser": 3 * 2 * 2,
                "fibre_connector": 3 * 4 * 4},
        "cpo": {"optical_engine": 2 * 2 * 2 / 8, "laser": 2 * 2 * 2 * 0.25, "fibre_connector": 2 * 4 * 4},
        "lpo": {"optical_module": 1.0, "host_connector": 1.0, "laser": 4, "fibre_connector": 16},
    }
    for name, want in hand.items():
        got = c["by_class"][name]
        for comp in COMPONENTS:
            assert got[comp] == pytest.approx(want.get(comp, 0.0), abs=1e-12), (name, comp)
    assert [c["by_class"][k]["links"] for k in hand] == [2, 1, 3, 2, 1]
    total = {k: sum(v.get(k, 0.0) for v in hand.values()) for k in COMPONENTS}
    assert c["total"] == pytest.approx(total)
    assert c["total"]["laser"] == 18 and c["total"]["fibre_connector"] == 96
    # five fibre mated pairs per fibre when told so
    c5 = component_counts(topo, FitRates(fibre_mates_per_fibre=5))
    assert c5["by_class"]["dsp"]["fibre_connector"] == 3 * 4 * 5


# ----------------------------------------------------------------------------- FIT sums
def test_link_down_events_equal_count_times_fit_by_hand(copper_report):
    topo = _hand_topology(copper_report)
    f = FitRates(cable_termination_fit=0.5, cable_terminations_per_pair=3, connector_contact_fit=0.2,
                 connector_contacts_per_lane=10, retimer_fit=40, optical_module_fit=300, lpo_module_fit=200,
                 optical_engine_fit=500, laser_fit=100, cpo_laser_fit=160, fibre_connector_fit=20)
    r = fabric_reliability(topo, fits=f)
    # per-unit FIT by hand (L = 2 lanes; connector: 10 contacts per lane at 0.2 FIT, one mating)
    cable = 2 * 2 * 2 * 3 * 0.5          # 2 ends x 2L pairs x 3 terminations x 0.5 FIT = 12
    conn = 0.2 * 10 * 2                  # a copper plug's connector carries the link's 2 lanes
    mod_conn = 0.2 * 10 * 4              # a module's connector carries its 4 lanes
    fit = {
        "cu": 2 * cable + 4 * conn,
        "aec": cable + 2 * conn + 2 * 40,
        "dsp": 3 * 300 + 3 * mod_conn + 12 * 100 + 48 * 20,
        "cpo": 1 * 500 + 2 * 160 + 32 * 20,
        "lpo": 1 * 200 + 1 * mod_conn + 4 * 100 + 16 * 20,
    }
    assert r.fit_by_class == pytest.approx(fit)
    total = sum(fit.values())
    assert r.fit_total == pytest.approx(total)
    assert r.link_down_events_per_day == pytest.approx(total * 24 / 1e9)
    assert r.mtbf_hours == pytest.approx(1e9 / total)
    # links taken down: a 4-lane module serves 2 links, an 8-lane engine 4, a CPO laser 4 lanes = 2 links
    down = (fit["cu"] + fit["aec"] + (fit["dsp"] + 3 * 300) + (fit["lpo"] + 200)
            + (fit["cpo"] + 3 * 500 + 2 * 160)) * 24 / 1e9
    assert r.links_down_per_day == pytest.approx(down)
    assert r.links_down_per_day > r.link_down_events_per_day
    assert sum(r.fit_by_component.values()) == pytest.approx(total)
    assert r.unit_fit_by_class["dsp"]["host_connector"] == pytest.approx(mod_conn)


def test_nvl72_optics_go_down_more_often_than_copper(copper_report):
    """With the sourced defaults a passive copper link is two connector mated pairs (38
    contacts at SR-332's 0.13 FIT) and a cable's 24 solder terminations (217F's 0.069
    FIT): about 7 FIT (handbook; copper has no field figure). An optical link holds a
    module share (SR-332's 250 FIT for a >=40G transceiver), four lasers (110 FIT each,
    SR-332 EML) and 16 fibre mated pairs (30 FIT each, SR-332 optical connector), each
    times the field factor fitted to Alibaba HPN's link failures (about 0.55): about 650
    FIT, so the same NVL72 fabric in optics sees some 100 times the link-down events
    (Huang's "orders of magnitude"). AECs add two 70 FIT retimers per link and land in
    between; CPO drops the pluggable's host connector and shares each laser over 4 lanes
    but keeps the fibres. The 18 switch ASICs, at HPN's ToR crash rate (698 FIT each), fail
    more often than all the copper links together."""
    cu, aec, dsp, cpo, lpo = _classes(copper_report)
    rel = {c.name: fabric_reliability(tp.nvl72(c)) for c in (cu, aec, dsp, cpo, lpo)}
    assert rel["cu"].links == 1296
    assert rel["dsp"].link_down_events_per_day > 80 * rel["cu"].link_down_events_per_day
    assert rel["cu"].switches == 18 and rel["cu"].switch_failures_per_day > rel["cu"].link_down_events_per_day
    assert rel["cu"].link_down_events_per_day < rel["aec"].link_down_events_per_day \
        < rel["cpo"].link_down_events_per_day < rel["dsp"].link_down_events_per_day
    assert rel["lpo"].link_down_events_per_day < rel["dsp"].link_down_events_per_day
    # copper: a link-down event every few years or more; DSP optics: every few weeks
    assert rel["cu"].mtbf_hours > 3 * 8766
    assert 24 * 7 < rel["dsp"].mtbf_hours < 24 * 90
    assert rel["cu"].fit_by_component["laser"] == 0 and rel["dsp"].fit_by_component["copper_cable"] == 0


# ----------------------------------------------------------------------------- connector wear
def test_mating_cycles_beyond_the_rating_raise_the_rate_monotonically(copper_report):
    cu = _classes(copper_report)[0]
    topo = tp.nvl72(cu)
    cycles = [0, 1, 10, 50, 100, 150, 200, 400, 800, 1600]
    rates = [fabric_reliability(topo, fits=FitRates(mating_cycles=n)).link_down_events_per_day for n in cycles]
    assert all(b >= a for a, b in itertools.pairwise(rates))                 # never falls
    beyond = [r for n, r in zip(cycles, rates) if n >= 100]
    assert all(b > a for a, b in itertools.pairwise(beyond))                # strictly rises past the 100 rated
    # the connector's share: pi_K (217F, by cycles per 1000 h) x cycles / rated beyond the rating
    f = FitRates(mating_cycles=400)
    per_1000h = 400 / f.service_hours * 1000
    pk = next(k for top, k in PI_K if per_1000h <= top)
    assert pk == 3.0 and f.connector_wear == pytest.approx(3.0 * 4.0)
    assert FitRates(mating_cycles=1).connector_wear == 1.0
    base = fabric_reliability(topo)
    worn = fabric_reliability(topo, fits=f)
    assert worn.fit_by_component["host_connector"] == pytest.approx(12 * base.fit_by_component["host_connector"])
    assert worn.fit_by_component["copper_cable"] == pytest.approx(base.fit_by_component["copper_cable"])


# ----------------------------------------------------------------------------- post-FEC events
def test_uncorrectable_frames_and_replays_by_hand(noisy_report):
    cu = tp.LinkClass.from_report("cu", noisy_report, 4.1e-9)
    topo = tp.nvl72(cu)
    r = fabric_reliability(topo)
    payload = noisy_report.rate_chain["payload_bps"]
    assert payload == pytest.approx(400e9)
    frames = payload / (8 * 64)                           # 64-byte Ethernet frames, one direction
    assert r.uncorrectable_frames_per_s == pytest.approx(1296 * 2.5e-10 * frames)
    assert r.uncorrectable_frames_per_day == pytest.approx(86400 * 1296 * 2.5e-10 * frames)
    flits = payload / (8 * 256)                           # Retry's 256-byte flit
    assert noisy_report.link_layer["flit_s"] == pytest.approx(1 / flits)
    assert r.replays_per_s == pytest.approx(1296 * 4e-9 * flits)
    assert noisy_report.frame_bytes == 64  # the report carries its framing's frame size: no default taken
    assert not any("frame size 64 B" in n for n in r.notes)
    # a larger frame: fewer frames per second, the same frame loss ratio
    r2 = fabric_reliability(topo, frame_bytes={"cu": 640})
    assert r2.uncorrectable_frames_per_s == pytest.approx(r.uncorrectable_frames_per_s / 10)
    no_retry = replace(noisy_report, link_layer=None, flit_retry_ratio=None, retry=False)
    r3 = fabric_reliability(tp.nvl72(tp.LinkClass.from_report("plain", no_retry, 4.1e-9)))
    assert r3.replays_per_s == 0 and r3.uncorrectable_frames_per_s == pytest.approx(r.uncorrectable_frames_per_s)


def test_frame_size_comes_from_the_link_spec(copper_report):
    """A class with a spec: the frame size is its LinkSpec's framing (UALink's 640 B flit)."""
    from channels import assembly
    from phy.link import Framing
    
    sd = Serdes.preset(106.25e9, "pam4")

    def spec(length_m):
        return LinkSpec(channel=assembly.cable_channel(length_m, 26, host=None), lanes=2, lane_rate_bps=212.5e9,
                        serdes=sd, fec="KP4", framing=Framing.ualink())

    cls = tp.LinkClass("ualink_cu", spec, resolution_m=2.0)
    topo = tp.nvl72(cls)
    r = fabric_reliability(topo)
    rep = cls.report(2.0)
    want = 1296 * rep.frame_loss_ratio * rep.rate_chain["payload_bps"] / (8 * 640)
    assert r.uncorrectable_frames_per_s == pytest.approx(want, rel=1e-9)
    assert not any("frame size 64 B" in n for n in r.notes)


# ----------------------------------------------------------------------------- bounds, errors, export
def test_ten_thousand_accelerators_with_bounded_cost(copper_report):
    cu, _, dsp, *_ = _classes(copper_report)
    topo = tp.two_tier(140, cu, dsp)
    assert topo.n_accelerators == 10080
    fabric_reliability(topo)
    with cpu_seconds_at_most(2.0):  # milliseconds (benchmarks/bench_topology.py); a per-link walk would not be
        r = fabric_reliability(topo)
    assert r.links == topo.n_links
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    # the optical defaults are the handbook's times the field factor fitted to Llama 3 (phy.topology.fit_rates)
    assert isinstance(r, ReliabilityReport) and d["fits"]["laser_fit"] == pytest.approx(110.0 * OPTICAL_FIELD_FACTOR)


def test_bad_input_is_named(copper_report):
    topo = tp.nvl72(_classes(copper_report)[0])
    with pytest.raises(ConfigError, match="mating_cycles"):
        FitRates(mating_cycles=-1)
    with pytest.raises(ConfigError, match="laser_fit"):
        FitRates(laser_fit="a lot")
    with pytest.raises(ConfigError, match="rated_mating_cycles"):
        FitRates(rated_mating_cycles=0)
    with pytest.raises(ConfigError, match="retimer_fit"):
        FitRates(retimer_fit=True)
    with pytest.raises(ConfigError, match="fibre_mates_per_fibre"):
        FitRates(fibre_mates_per_fibre=2.5)
    with pytest.raises(ConfigError, match="Topology"):
        fabric_reliability("nvl72")
    with pytest.raises(ConfigError, match="FitRates"):
        fabric_reliability(topo, fits={"laser_fit": 1})
    with pytest.raises(ConfigError, match="frame_bytes"):
        fabric_reliability(topo, frame_bytes=0)
    with pytest.raises(ConfigError, match="no entry"):
        fabric_reliability(topo, frame_bytes={"other": 64})
    with pytest.raises(ConfigError, match="TopologyReport"):
        fabric_reliability(topo, report=object())
    assert math.isinf(fabric_reliability(topo, fits=FitRates(cable_termination_fit=0, connector_contact_fit=0))
                      .mtbf_hours)
