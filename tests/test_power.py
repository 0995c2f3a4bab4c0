"""Every watt of a link and a fabric (phy.link.power, phy.topology.power): SerDes by reach
class at each segment's ends, retimers, modules, switch cores; NVL72 copper against optics."""

import numpy as np
import pytest

import channels
from channels import assembly
from phy import ConfigError
from phy import topology as tp
from phy.link import LinkSpec, OpticalClass, PathElement, Retry, Serdes, evaluate_link
from phy.link.latency import rate_chain
from phy.link.power import (
    REACH_CLASSES,
    SERDES_ENERGY_J_PER_BIT,
    SERDES_ENERGY_SOURCES,
    reach_class,
    serdes_energy_j_per_bit,
)

RATE = 212.5e9


@pytest.fixture(scope="module")
def sd():
    return Serdes.preset(RATE / 2, "pam4")


@pytest.fixture(scope="module")
def copper(sd):
    spec = LinkSpec(channel=assembly.cable_channel(1.0, 26, host="flyover"), lanes=2, lane_rate_bps=RATE, serdes=sd,
                    retry=Retry())
    return spec, evaluate_link(spec)


@pytest.fixture(scope="module")
def dsp():
    spec = LinkSpec(optics=OpticalClass.dsp_pluggable(length_m=10.0), lanes=2, lane_rate_bps=RATE, retry=Retry())
    return spec, evaluate_link(spec)


def test_reach_classes_at_their_budgets():
    # each class closes up to its loss budget at Nyquist and hands over to the next above it
    assert reach_class(13.0, RATE) == "xsr" and reach_class(13.01, RATE) == "vsr"
    assert reach_class(16.0, RATE) == "vsr" and reach_class(16.5, RATE) == "mr"
    assert reach_class(20.8, RATE) == "mr" and reach_class(21.0, RATE) == "lr"
    assert reach_class(60.0, RATE) == "lr"
    # 112G's LR budget is 28 dB (802.3ck), 224G's 40 dB: both LR beyond MR
    assert REACH_CLASSES["lr"] == (28.0, 40.0)
    # energy grows with reach at both lane rates, and every figure names its source
    for g in (0, 1):
        e = [SERDES_ENERGY_J_PER_BIT[c][g] for c in ("xsr", "vsr", "mr", "lr")]
        assert e == sorted(e)
    assert set(SERDES_ENERGY_SOURCES) == set(SERDES_ENERGY_J_PER_BIT)
    assert serdes_energy_j_per_bit(25.0, 106.25e9) == (4.1e-12, "lr")  # Ali et al., ISSCC 2020
    assert serdes_energy_j_per_bit(38.0, RATE) == (3.0e-12, "lr")      # Pfaff et al., ISSCC 2024
    with pytest.raises(ConfigError, match="finite"):
        reach_class(float("nan"), RATE)


def test_copper_link_spends_one_transceiver_per_line_bit_at_its_reach_class(copper):
    spec, r = copper
    il = r.segments[0].channel["il_db_nyquist"]
    e, c = serdes_energy_j_per_bit(il, RATE)
    line, _, _, payload = rate_chain(spec)
    assert r.energy_breakdown_j_per_bit["serdes"] == pytest.approx(e * line / payload, rel=1e-12)
    assert r.power_w == pytest.approx(r.energy_j_per_bit * payload * 2, rel=1e-12)
    assert any(f"{c.upper()} class" in n for n in r.notes)


def test_a_given_serdes_energy_replaces_the_class_table(copper, sd):
    spec, r = copper
    from dataclasses import replace

    r2 = evaluate_link(spec.with_(serdes=replace(sd, energy_j_per_bit=2e-12)))
    line, _, _, payload = rate_chain(spec)
    assert r2.energy_breakdown_j_per_bit["serdes"] == pytest.approx(2e-12 * line / payload, rel=1e-12)
    assert not any("SerDes energy (default)" in n for n in r2.notes)


def test_aec_energy_hosts_at_the_ends_retimers_at_the_joints(sd):
    segs = assembly.aec_segments(3.0, 26, host="flyover")
    spec = LinkSpec(channel=segs, lanes=2, lane_rate_bps=RATE, serdes=sd, retry=Retry(),
                    path=(PathElement.aec_retimer(), PathElement.aec_retimer()))
    r = evaluate_link(spec)
    assert len(r.segments) == 3
    e = [serdes_energy_j_per_bit(s.channel["il_db_nyquist"], RATE)[0] for s in r.segments]
    line, _, _, payload = rate_chain(spec)
    k = line / payload
    assert r.energy_breakdown_j_per_bit["serdes"] == pytest.approx((e[0] + e[2]) / 2 * k, rel=1e-12)
    assert r.energy_breakdown_j_per_bit["retimers"] == pytest.approx((e[0] / 2 + e[1] + e[2] / 2) * k, rel=1e-12)
    # two retimers' latency on the path, and the segments' errors add
    assert r.latency_breakdown_s["aec_retimer"] == pytest.approx(6e-9)
    assert r.pre_fec_der == pytest.approx(min(0.5, sum(s.der for s in r.segments)), rel=1e-12)


def test_linkspec_rejects_a_bad_segment_list():
    with pytest.raises(ConfigError, match="retimed segments"):
        LinkSpec(channel=(channels.library.get("chip_to_module"), "cable"))
    with pytest.raises(ConfigError, match="retimed segments"):
        LinkSpec(channel=())


def test_switch_core_is_its_power_less_its_rated_serdes():
    a = tp.SwitchAsic.nvlink5()
    assert a.serdes_power_w == pytest.approx(72 * 2 * RATE * SERDES_ENERGY_J_PER_BIT["lr"][1])
    assert a.core_power_w == pytest.approx(a.power_w - a.serdes_power_w)
    with pytest.raises(ConfigError, match="serdes_reach"):
        tp.SwitchAsic("x", 8, 800e9, serdes_reach="long")


def _nvl72(report, kind="passive_copper", medium="copper"):
    lc = tp.LinkClass.from_report(kind, report, 4.3e-9, medium=medium, kind=kind, awg=26 if medium == "copper" else None)
    return tp.rollup(tp.nvl72(lc))


def test_nvl72_fabric_power_term_by_term(copper):
    spec, r = copper
    rep = _nvl72(r)
    p = rep.power
    links = 72 * 18
    serdes = links * r.energy_breakdown_j_per_bit["serdes"] * r.rate_chain["payload_bps"] * 2
    asic = tp.SwitchAsic.nvlink5()
    assert p.terms_w["accelerator_serdes"] == pytest.approx(serdes / 2, rel=1e-12)
    assert p.terms_w["switch_serdes"] == pytest.approx(serdes / 2, rel=1e-12)
    assert p.terms_w["switch_core"] == pytest.approx(18 * asic.core_power_w, rel=1e-12)
    assert p.total_w == pytest.approx(serdes + 18 * asic.core_power_w, rel=1e-12)
    assert p.switch_w == pytest.approx(serdes / 2 + 18 * asic.core_power_w, rel=1e-12)
    assert p.per_accelerator_w == pytest.approx(p.total_w / 72)
    assert p.n_racks == 1 and p.per_rack_w == pytest.approx(p.total_w)
    # the rack: 72 GPUs (their SerDes inside their own power) and the switches with theirs
    acc = tp.Accelerator.gb200()
    assert p.rack_w[0] == pytest.approx(72 * acc.power_w + p.switch_w, rel=1e-12)
    assert rep.link_power_w == pytest.approx(serdes, rel=1e-12)
    assert rep.to_dict()["power"]["total_w"] == pytest.approx(p.total_w)


def test_nvl72_in_dsp_optics_costs_about_20_kw_more_than_copper(copper, dsp):
    # NVIDIA: the copper spine saved about 20 kW against optics (REFERENCES.md, secondary).
    # With both hosts' SerDes LR class (the pluggable's host channel is ~27.6 dB die to module),
    # the difference is the modules: 5,184 lane ends x a quarter of a 15 W 800G module = 19.44 kW
    _, rc = copper
    _, ro = dsp
    pc, po = _nvl72(rc).power, _nvl72(ro, "dsp_optics", "optical").power
    assert po.terms_w["optical_modules"] == pytest.approx(5184 * 15.0 / 4, rel=1e-9)
    assert rc.segments[0].channel["il_db_nyquist"] > REACH_CLASSES["mr"][1]
    assert po.total_w - pc.total_w == pytest.approx(19.44e3, rel=0.01)
    assert po.terms_w["switch_core"] == pc.terms_w["switch_core"]


def test_fabric_power_per_rack_in_two_racks(copper):
    _, r = copper
    lc = tp.LinkClass.from_report("cu", r, 4.3e-9)
    rep = tp.rollup(tp.nvl36x2(lc))
    p = rep.power
    assert p.n_racks == 2 and len(p.rack_w) == 2
    acc = tp.Accelerator.gb200()
    # every watt lands in a rack: the racks hold the fabric less the GPUs' own SerDes, plus the GPUs
    assert sum(p.rack_w) == pytest.approx(p.total_w - p.terms_w["accelerator_serdes"] + 72 * acc.power_w, rel=1e-12)
    assert np.isclose(p.rack_w[0], p.rack_w[1])
