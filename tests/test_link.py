"""Link roll-up (phy.link): rate chain, latency terms, energy, errors, search, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import channels
import fec
import phy
from channels import media as m
from channels.optical import C0
from phy import (
    ConfigError,
    Framing,
    LinkSpec,
    OpticalClass,
    PathElement,
    Retry,
    evaluate_link,
    search_link,
)


def _twinax(length_m: float) -> channels.Channel:
    return m.cascade(m.connector(), m.twinax(length_m, 26), m.connector())


@pytest.fixture(scope="module")
def cu200():
    """2 x 212.5 Gb/s PAM4 over 1 m of twinax, KP4, an NVLink5-class link."""
    spec = LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=2, lane_rate_bps=212.5e9, name="cu200")
    return spec, evaluate_link(spec)


@pytest.fixture(scope="module")
def cu100():
    spec = LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=1, lane_rate_bps=106.25e9)
    return spec, evaluate_link(spec)


@pytest.fixture(scope="module")
def dsp():
    spec = LinkSpec(optics=OpticalClass.dsp_pluggable(length_m=100.0), lanes=2, lane_rate_bps=212.5e9)
    return spec, evaluate_link(spec)


# ----------------------------------------------------------------------------- rate chain
def test_rate_chain_is_exact():
    # REFERENCES.md: 106.25 = 100 x 66/64 x 257/264 x 544/514; 212.5 for 200G per lane
    eth = Framing.ethernet()
    for line, payload in ((106.25e9, 100e9), (212.5e9, 200e9)):
        got = line * fec.KP4.k / fec.KP4.n * eth.efficiency(fec.KP4.message_bits)
        assert got == pytest.approx(payload, rel=1e-12)
    assert 100e9 * 66 / 64 * 257 / 264 * 544 / 514 == pytest.approx(106.25e9, rel=1e-12)
    # UALink: one 640-byte flit per KP4 codeword's 5,140 message bits
    assert Framing.ualink().efficiency(fec.KP4.message_bits) == pytest.approx(5120 / 5140, rel=1e-12)
    assert Framing.ualink(flit_overhead_bytes=8).efficiency(fec.KP4.message_bits) == pytest.approx(
        (5120 - 64) / 5140, rel=1e-12)


def test_nvlink5_port_carries_900_gbytes_per_direction(cu200):
    _spec, r = cu200
    assert r.passes
    assert r.rate_chain["payload_bps"] == pytest.approx(400e9, rel=1e-12)
    assert r.usable_bandwidth_bps == pytest.approx(400e9, rel=1e-12)
    assert 18 * r.usable_bandwidth_bps / 8 == pytest.approx(900e9, rel=1e-12)


# ----------------------------------------------------------------------------- latency
def test_kp4_accumulation_at_106g_is_51_2_ns(cu100):
    spec, r = cu100
    assert spec.baud_hz == pytest.approx(53.125e9)
    assert r.latency_breakdown_s["fec_accumulation"] == pytest.approx(51.2e-9, rel=1e-12)


def test_every_latency_term_is_its_formula(cu200):
    spec, r = cu200
    lat = r.latency_breakdown_s
    baud = 106.25e9
    assert lat["serdes_tx"] == pytest.approx(564 / baud, rel=1e-12)
    assert lat["serdes_rx"] == pytest.approx(513.5 / baud, rel=1e-12)
    # a KP4 codeword striped over 2 lanes of 212.5 Gb/s
    assert lat["fec_accumulation"] == pytest.approx(5440 / (2 * 212.5e9), rel=1e-12)
    # 3 + 31 + 3 cycles of decode logic at a public 400G core's 350 MHz (fec.latency defaults)
    assert spec.fec_clock_hz == fec.DECODER_CLOCK_HZ == 350e6
    assert lat["fec_decode"] == pytest.approx(37 / 350e6, rel=1e-12)
    assert r.latency_layers_s["phy"] == lat and r.latency_layers_s["link"] == {} == r.latency_layers_s["path"]
    assert set(r.latency_quantiles_s.values()) == {r.latency_s}  # no link layer: no spread
    # time of flight: the die-to-die channel's own phase delay (packages included)
    p = phy.ComParams.ieee_802_3dj_kr()
    ch = spec.channel
    d2d = channels.cascade(p.package(ch.f, "tx"), ch, p.package(ch.f, "rx"))
    assert lat["time_of_flight"] == pytest.approx(d2d.delay_s, rel=1e-9)
    assert r.latency_s == pytest.approx(sum(lat.values()), rel=1e-12)


def test_path_elements_add_exactly_their_latency_and_energy(cu200):
    spec, r = cu200
    s2 = spec.with_(path=(PathElement.switch_port(), PathElement.aec_retimer(energy_j_per_bit=2e-12)))
    r2 = evaluate_link(s2, phy.link.segments(s2))
    assert r2.latency_s - r.latency_s == pytest.approx(203e-9, rel=1e-9)
    assert r2.energy_j_per_bit - r.energy_j_per_bit == pytest.approx(2e-12, rel=1e-12)
    assert r2.latency_breakdown_s["switch_port"] == 200e-9


def test_time_of_flight_follows_cable_length():
    # foam twinax: about 4.0 to 4.3 ns/m (REFERENCES.md); the roll-up takes it from the channel
    d1, d3 = _twinax(1.0).delay_s, _twinax(3.0).delay_s
    per_m = (d3 - d1) / 2.0
    assert 4.0e-9 < per_m < 4.3e-9


def test_optical_link_latency_and_energy(dsp):
    _spec, r = dsp
    assert [s.name for s in r.segments] == ["host_to_module", "optics", "module_to_host"]
    lat = r.latency_breakdown_s
    assert lat["optical_modules"] == pytest.approx(100e-9)
    host = r.segments[0].delay_s
    assert lat["time_of_flight"] == pytest.approx(2 * host + 1.4677 * 100.0 / C0, rel=1e-9)
    assert 480e-9 < lat["time_of_flight"] < 520e-9  # 100 m of fibre at about 4.9 ns/m
    # a 15 W 800G DSP pluggable at each end: 18.75 pJ per bit one way
    assert r.energy_breakdown_j_per_bit["optical_modules"] == pytest.approx(18.75e-12, rel=1e-12)


def test_nvl72_in_dsp_pluggables_would_burn_about_19_4_kw(dsp):
    # 5,184 lanes (72 GPUs x 18 links x 2 lanes x 2 directions) of 200 Gb/s at 18.75 pJ/bit
    spec, r = dsp
    links = 72 * 18
    assert links * spec.lanes * 2 == 5184
    modules_w = links * r.energy_breakdown_j_per_bit["optical_modules"] * r.rate_chain["payload_bps"] * 2
    assert modules_w == pytest.approx(5184 * 200e9 * 18.75e-12, rel=1e-12)
    assert modules_w == pytest.approx(19.44e3, rel=1e-9)
    # the hosts' SerDes on top, per line bit: one transceiver per segment end pair
    serdes_w = links * r.energy_breakdown_j_per_bit["serdes"] * r.rate_chain["payload_bps"] * 2
    assert links * r.power_w == pytest.approx(modules_w + serdes_w, rel=1e-12)


def test_energy_per_bit_of_the_optical_classes():
    assert OpticalClass.lpo().energy_j_per_bit == pytest.approx(8.5 / 800e9)
    assert OpticalClass.cpo().energy_j_per_bit == pytest.approx(5.5 / 800e9)
    assert OpticalClass.cpo().energy_j_per_bit < OpticalClass.lpo().energy_j_per_bit < (
        OpticalClass.dsp_pluggable().energy_j_per_bit)


# ----------------------------------------------------------------------------- errors
def test_post_fec_follows_the_fec_analysis(cu200):
    _spec, r = cu200
    seg = r.segments[0]
    assert r.pre_fec_der == pytest.approx(seg.der)
    assert r.pre_fec_ber == pytest.approx(seg.der / 2)
    model = fec.BurstModel.dfe(np.array(seg.dfe_taps[:6]), seg.der, tail=1e-9)
    pf = fec.burst_errors(fec.KP4, model, der=seg.der, frame_bits=8 * 64)
    assert r.post_fec_ber == pytest.approx(pf.ber_out, rel=1e-3)
    assert r.codeword_error_ratio == pytest.approx(pf.cer, rel=1e-3)
    assert r.margin_db > 0
    assert r.required_der > r.pre_fec_der


def test_a_closed_eye_fails_with_reasons_and_no_bandwidth():
    spec = LinkSpec(channel=channels.library.get("backplane_30db"), lanes=1)
    r = evaluate_link(spec)
    assert not r.passes
    assert any("closed" in x for x in r.reasons)
    assert r.usable_bandwidth_bps == 0.0
    assert r.post_fec_ber > spec.target_ber
    assert r.margin_db < 0
    assert "FAIL" in r.summary()


@pytest.mark.parametrize("length_m, rate_bps", [(30.0, 212.5e9), (100.0, 106.25e9)])
def test_a_hopeless_cable_fails_fast(length_m, rate_bps):
    """A closed eye's interference spans thousands of COM's A_s: COM's distribution grid is
    bounded (it took 31 s at 30 m and 196 s at 100 m), and the link fails with its reason.
    The kernels are compiled first (on a 1 m cable), so the bound is the evaluation's own."""
    from conftest import cpu_seconds_at_most

    evaluate_link(LinkSpec(channel=_twinax(1.0), lane_rate_bps=rate_bps))
    with cpu_seconds_at_most(20):
        r = evaluate_link(LinkSpec(channel=_twinax(length_m), lane_rate_bps=rate_bps))
    assert not r.passes and any("closed" in x for x in r.reasons)
    assert r.segments[0].com_db < -10 and r.usable_bandwidth_bps == 0.0


def test_report_is_plain_json(cu200):
    spec, r = cu200
    d = json.loads(json.dumps(r.to_dict()))
    assert d["usable_bandwidth_bps"] == pytest.approx(400e9)
    assert set(d["latency_breakdown_s"]) >= {"serdes_tx", "fec_accumulation", "time_of_flight"}
    json.dumps(spec.to_dict())


# ----------------------------------------------------------------------------- retry
def test_retry_terms_follow_go_back_n(cu200):
    spec, _r = cu200
    s2 = spec.with_(fec=None, retry=Retry(crc_bits=32, flit_bytes=256))
    r2 = evaluate_link(s2, phy.link.segments(s2))
    assert r2.latency_breakdown_s["flit_accumulation"] == pytest.approx(2048 / (2 * 212.5e9), rel=1e-12)
    fer = r2.flit_retry_ratio
    one_way = r2.latency_s - r2.latency_breakdown_s["retry_mean"]
    t_flit = 2048 / r2.rate_chain["payload_bps"]
    n_rt = math.ceil(2 * one_way / t_flit) + 1
    assert r2.rate_chain["retry_efficiency"] == pytest.approx(1 / (1 + fer * n_rt), rel=1e-12)
    assert r2.post_fec_ber == pytest.approx(r2.pre_fec_ber * 2.0**-32, rel=1e-9)


# ----------------------------------------------------------------------------- search
def test_search_on_a_short_cable_takes_the_lightest_fec(cu200):
    """1 m at 212.5 Gb/s: the detector errs about 1e-16, 1 dB of margin over the 2e-13 a
    bare link needs; replay does not relax that (issue 32), so the lowest-latency passing
    choice is the low-latency RS(272,257+1)."""
    spec, _ = cu200
    s = search_link(spec, interleaves=(1,), precoding=(False,))
    best = s.best_report
    assert best.passes and best.fec == fec.LL272.name
    bare = [p for p in s.points if p.fec is None]
    assert len(bare) == 2 and not any(p.passes for p in bare)
    assert bare[0].margin_db == bare[1].margin_db < 3.0
    assert all(best.latency_s <= p.latency_s for p in s.points if p.passes)
    assert s.best in s.pareto or any(
        s.points[i].latency_s == best.latency_s for i in s.pareto)
    assert "none" in s.table() and "LL RS(272,257+1)" in s.table()


def test_search_on_a_long_cable_needs_kp4_and_beats_every_fixed_choice():
    spec = LinkSpec(channel=_twinax(3.0), lanes=1)
    codes = (None, "LL272", "KP4")
    s = search_link(spec, fec_codes=codes, interleaves=(1,), precoding=(False,), retry=(None,))
    by_code = {p.fec: p for p in s.points}
    assert not by_code[None].passes and not by_code[fec.LL272.name].passes
    assert s.best_report.fec == fec.KP4.name
    # each fixed choice evaluated on its own agrees with the search's point, and none beats the best
    for code in codes:
        r = evaluate_link(spec.with_(fec=code))
        p = by_code[None if code is None else fec.NAMED[code].name]
        assert r.latency_s == pytest.approx(p.latency_s, rel=1e-12)
        assert r.post_fec_ber == pytest.approx(p.post_fec_ber, rel=1e-6, abs=1e-300)
        if r.passes:
            assert s.best_report.latency_s <= r.latency_s


def test_cpo_with_a_quieter_laser_passes_sooner_and_cheaper_than_dsp_pluggables(dsp):
    from dataclasses import replace

    _spec, r_dsp = dsp
    oc = OpticalClass.cpo(length_m=100.0)
    oc = replace(oc, path=replace(oc.path, tx=replace(oc.path.tx, rin_db_per_hz=-145.0)))
    r = evaluate_link(LinkSpec(optics=oc, lanes=2))
    assert r.passes
    m, m_dsp = r.energy_breakdown_j_per_bit, r_dsp.energy_breakdown_j_per_bit
    assert m["optical_modules"] == pytest.approx(m_dsp["optical_modules"] * 5.5 / 15.0)
    # the CPO host SerDes drives the short package channel: XSR class, less than the
    # pluggable host's chip-to-module channel needs
    assert m["serdes"] < m_dsp["serdes"]
    assert r.energy_j_per_bit < r_dsp.energy_j_per_bit
    # no module DSPs (2 x 50 ns) and a shorter electrical path
    assert r.latency_s < r_dsp.latency_s - 100e-9


def test_linear_optics_at_the_rin_limit_fail_and_say_where():
    # LPO at 212.5 Gb/s without the inner code: one linear segment, short of what KP4 takes
    r = evaluate_link(LinkSpec(optics=OpticalClass.lpo(), lanes=2))
    assert not r.passes
    assert [s.name for s in r.segments] == ["host_optics_host"]
    assert any("detector error ratio" in x for x in r.reasons)
    assert any("optical budget" in n for n in r.notes)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lanes": 0}, "lanes"),
        ({"lane_rate_bps": -1.0}, "lane_rate_bps"),
        ({"lane_rate_bps": float("nan")}, "lane_rate_bps"),
        ({"modulation": "pam5"}, "modulation"),
        ({"fec": "RS(255,223)"}, "unknown FEC"),
        ({"fec": None, "interleave": 2}, "interleave needs an FEC"),
        ({"modulation": "nrz", "precoding": True}, "PAM4 only"),
        ({"target_ber": 0.0}, "target_ber"),
        ({"path": ("switch",)}, "PathElement"),
        ({"channel": None}, "exactly one medium"),
    ],
)
def test_bad_specifications_are_named(kwargs, match):
    base = {"channel": channels.library.get("cpo_short")}
    base.update(kwargs)
    with pytest.raises(ConfigError, match=match):
        LinkSpec(**base)


def test_a_rate_the_channel_data_cannot_carry_is_refused():
    spec = LinkSpec(channel=channels.library.get("cpo_short"), lane_rate_bps=425e9, modulation="nrz")
    with pytest.raises(ConfigError, match="Nyquist"):
        evaluate_link(spec)


def test_bad_parts_are_named():
    with pytest.raises(ConfigError, match="both tx and rx"):
        phy.Serdes(tx=phy.Transmitter())
    with pytest.raises(ConfigError, match="kind"):
        OpticalClass("aoc", OpticalClass.cpo().path, channels.library.get("cpo_short"), 1.0)
    with pytest.raises(ConfigError, match="latency_s"):
        PathElement("retimer", -1e-9)
    with pytest.raises(ConfigError, match="flit_overhead_bytes"):
        Framing(flit_bytes=64, flit_overhead_bytes=64)
    with pytest.raises(ConfigError, match="LinkSpec"):
        evaluate_link("twinax")
