"""What the README's examples print, checked against their comments (tests/test_readme.py).

:data:`CHECKS` maps a piece of a statement's code (unique in the README) to a function of
(the statement's value, its group's namespace, what it printed) that asserts each figure
the statement's comments state; :func:`shows` compares a value with a figure as printed.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest


def shows(value: float, text: str) -> bool:
    """``value`` printed to the significant digits of ``text`` reads ``text`` (2.08e-4, 51.2, 0.037)."""
    mant = text.lower().split("e")[0].lstrip("-")
    digits = len(mant.replace(".", "").lstrip("0"))
    return float(f"{float(value):.{max(digits, 1)}g}") == float(text)


def _il(v, ns, out):
    assert shows(v, "19.7")  # the file's name says 19.75 dB
    ch = ns["ch"]
    f = ch.network.f
    i = int(np.argmin(abs(f - 26.5625e9)))
    assert abs(f[i] - 26.5625e9) < 10e6  # the file's grid has the frequency
    assert v == pytest.approx(-20 * np.log10(abs(ch.network.s[i, 1, 0])), abs=0.02)


def _network(v, ns, out):
    assert v.nports == 4
    np.testing.assert_allclose(v.z0[0].real, [100, 100, 25, 25])  # differential, differential, common, common


def _ui_sum(v, ns, out):
    link = ns["link"]
    assert abs(link.network.s[0, 1, 0]) < 1e-12  # the AC cap: no gain at DC
    assert v == pytest.approx(0.0, abs=1e-9 * ns["pr"].samples.max())
    # and at any other phase the same: every sample one UI apart, summed
    pr = ns["pr"]
    spu = pr.samples_per_ui
    assert [abs(pr.samples[k::spu].sum()) < 1e-9 * pr.samples.max() for k in (0, spu // 3)] == [True, True]


def _wide(v, ns, out):
    f = ns["wide"].network.f
    assert f[0] == 0.0 and f[-1] == pytest.approx(200e9)
    assert ns["wide"].grid.extrapolated_above_hz == pytest.approx(ns["ch"].network.f[-1])  # the file's 60 GHz


def _encode(v, ns, out):
    words, msgs = ns["words"], ns["msgs"]
    assert words.shape == (1000, 544) and np.array_equal(words[:, :514], msgs)


def _decode(v, ns, out):
    res = ns["res"]
    assert np.array_equal(res.messages, ns["msgs"]) and not res.failed.any() and not res.n_corrected.any()


def _random(v, ns, out):
    assert shows(v.cer, "8.15e-13") and shows(v.ber_out, "2.41e-15")


def _burst(v, ns, out):
    import fec

    plain = fec.burst_errors(fec.KP4, ns["dfe"], precoded=False)
    assert v.cer < plain.cer / 100  # the bursts, two errors each after the precoder, cost far less


def _compare(v, ns, out):
    assert [v[k]["agrees"] for k in ("cer", "ser_out", "ber_out")] == [True, True, True]
    assert "codewords" in v["ser_out"]["per"]


def _latency(v, ns, out):
    assert shows(v.accumulation_s * 1e9, "51.2")
    assert v.total_s == pytest.approx(v.accumulation_s + v.syndrome_s + v.key_equation_s + v.chien_forney_s)


def _inner_code(v, ns, out):
    import fec

    assert (fec.SFEC.n, fec.SFEC.k) == (128, 120)  # the comment heading the example


def _inner_words(v, ns, out):
    assert ns["bits"].shape == (10_000, 120)


def _coded(v, ns, out):
    assert ns["coded"].shape == (10_000, 128)


def _llr(v, ns, out):
    assert ns["llr"].shape == (10_000, 128) and np.all(np.isfinite(ns["llr"]))


def _chase(v, ns, out):
    raw, after = v
    assert shows(raw, "3.2e-3") and shows(after, "1.7e-4")


def _threshold(v, ns, out):
    assert shows(v["threshold_ber"], "1.7e-3") and v["outer"].startswith("KP4")


def _eta0(v, ns, out):
    assert ns["noise"].rx_noise_psd_v2_per_hz * 1e9 == pytest.approx(8.2e-9)  # V^2/Hz to V^2/GHz


def _simulate(v, ns, out):
    r = ns["r"]
    assert r.n_ui == 10**7 and r.cdr_locked is True


def _ser(v, ns, out):
    from fec.montecarlo import Estimate

    ber, ser = v
    for est in (ber, ser):
        exact = Estimate.of(est.count, est.trials)
        assert (est.low, est.high) == pytest.approx((exact.low, exact.high))  # exact (Clopper-Pearson) 95 %
    assert shows(ser.value, "6.4e-6") and shows(ser.low, "4.9e-6") and shows(ser.high, "8.2e-6")


def _cdr(v, ns, out):
    locked, rms_ui = v
    assert locked is True and shows(rms_ui, "0.048")


def _bursts(v, ns, out):
    counts, model = v
    r = ns["r"]
    assert counts.sum() == r.n_bursts and model.start_rate == pytest.approx(r.n_bursts / r.n_ui)
    # the bursts' symbol errors, per UI, are the run's symbol error ratio
    per_burst = sum(p * np.count_nonzero(pat) for pat, p in zip(model.patterns, model.probabilities))
    assert model.start_rate * per_burst == pytest.approx(r.ser.value)


def _eye(v, ns, out):
    heights, width, crossings = v
    assert [shows(h * 1e3, s) for h, s in zip(heights, ("6.9", "3.9", "6.9"))] == [True] * 3
    assert shows(width * 1e12, "1.8") and crossings["n"] > 0


def _axes(v, ns, out):
    assert v is not None and v.has_data()


def _se_ser(v, ns, out):
    ser, ser_dfe = v
    assert 0 < ser <= ser_dfe


def _thru(v, ns, out):
    names = sorted(a.name for a in ns["thru"].aggressors)
    assert len(names) == 2 and any("NE" in n for n in names) and any("FE" in n for n in names)


def _margin(v, ns, out):
    import phy

    assert callable(phy.ComParams.ieee_802_3dj_kr)  # the alternative the comment names


def _com(v, ns, out):
    assert shows(v[0], "1.81") and "31/29 mm" in ns["m"].package_case


def _passes(v, ns, out):
    passes, reasons = v
    assert passes is True and reasons == [] and ns["spec"].target_ber == 1e-13


def _usable(v, ns, out):
    assert v[0] == 400e9 == pytest.approx(2 * 212.5e9 * 514 / 544 * 256 / 257)


def _impairments(v, ns, out):
    imp = ns["real"].rx_impairments
    assert (imp.adc_enob, imp.adc_clip_probability, imp.ffe_tap_bits) == (5, 1e-6, 6)


def _nvl72(v, ns, out):
    rack = ns["rack"]
    assert rack.n_accelerators == 18 * 4 and [t.count for t in rack.tiers] == [9 * 2]


def _gpu_bw(v, ns, out):
    assert v == 900e9 and ns["r"].n_switches == {"nvswitch": 9 * 2}


def _aggregate(v, ns, out):
    assert v == (129.6e12, 5184) and shows(ns["r"].cable_length_m / 1e3, "3.1")


def _two_tier(v, ns, out):
    assert ns["dom"].n_accelerators == 576


def _decode_speed(v, ns, out):
    from phy import topology as tp

    assert shows(v, "11.1")
    m = tp.Model.llama3_70b()
    assert shows(tp.over_fabric(ns["r"], m, source="local").tokens_per_s, "77.0")
    ideal = tp.Runtime.ideal()  # the roofline the comment quotes beside it
    assert shows(tp.over_fabric(ns["r"], m, source="remote", runtime=ideal).tokens_per_s, "12.7")
    assert shows(tp.over_fabric(ns["r"], m, source="local", runtime=ideal).tokens_per_s, "113")


def _power(v, ns, out):
    figs = re.findall(r"(\d+\.\d+) kW", v)
    assert figs[:4] == ["4.98", "1.51", "1.51", "1.95"], v


@functools.lru_cache(maxsize=1)
def _nvl72_on_dsp_optics():
    """(the rack, its roll-up) on DSP pluggables, as the power example builds it."""
    from phy import topology as tp

    rack = tp.nvl72(tp.LinkClass.optical("dsp", 2))
    return rack, tp.rollup(rack)


def _optical_power(v, ns, out):
    assert shows(v / 1e3, "24.7")
    assert _nvl72_on_dsp_optics()[1].power.total_w == v
    assert "optical modules 19.44 kW" in _nvl72_on_dsp_optics()[1].power.table()


def _reliability(v, ns, out):
    from phy import topology as tp

    assert shows(v, "2e-4")
    dsp = tp.fabric_reliability(*_nvl72_on_dsp_optics())
    assert shows(dsp.link_down_events_per_day, "0.020")  # optics at field-calibrated rates (Alibaba HPN)
    assert shows(dsp.switch_failures_per_day, "3e-4")


def _plan(v, ns, out):
    plan = ns["plan"]
    assert plan.closes and len(plan.report_topology.tiers) == 2
    inside = [c for c in plan.choices if c["level"] == 0]
    between = [c for c in plan.choices if c["level"] == 1]
    assert {c["class"] for c in inside} == {"copper_26awg_HL_flyover"}
    optical = [c for c in between if c["class"] == "optical_cpo"]
    copper = [c for c in between if c["class"] == "copper_26awg_HL_flyover"]
    assert len(optical) + len(copper) == len(between) and optical and copper
    assert min(c["length_m"] for c in optical) == 4.5 and max(c["length_m"] for c in copper) == 1.75
    shortest = min(optical, key=lambda c: c["length_m"])
    assert [o[1] for o in shortest["options"] if o[0].startswith(("copper", "aec"))] == [False, False]
    assert plan.binding == "rack_units" and plan.racks == 4


def _largest(v, ns, out):
    best, plans = ns["best"], ns["plans"]
    assert best.n_accelerators == 72 and best.closes and plans[-1] is best
    # past 72 the radix binds: no larger size is planned, and planning one says so
    tp = ns["tp"]
    assert tp.Layout(max_tiers=1).max_accelerators(tp.SwitchAsic.nvlink5()) == 72
    assert tp.plan_domain(144, tp.Layout(max_tiers=1)).binding == "switch_radix"


def _latency_table(v, ns, out):
    r = ns["r"]
    first = out.splitlines()[0]
    assert first.startswith("nvl72 remote: PHY floor 472.4 ns, one way 618.1 ns, remote read 1635.8 ns, "
                            "8-byte all-reduce over 72 25.77 us (nvls, simple)"), first
    one = r.one_way["remote"]
    layer = {k: x * 1e9 for k, x in one.layer_totals().items()}
    assert [shows(layer[k], s) for k, s in (("endpoint", "145"), ("phy", "268"), ("link", "4.5"), ("switch", "200"))] \
        == [True] * 4, layer
    assert set(one.layers["endpoint"]) == {"tx_controller", "rx_controller"}
    assert {k for k, x in one.layers["link"].items() if x > 1e-12} == {"crc_check", "serialization"}
    phy_ns = {k: x * 1e9 for k, x in one.layers["phy"].items()}
    assert shows(phy_ns["serdes_tx"] + phy_ns["serdes_rx"], "20")
    assert shows(phy_ns["fec_accumulation"] + phy_ns["fec_decode"], "237") and shows(phy_ns["time_of_flight"], "11")
    read = r.round_trip["remote"].layer_totals()
    assert shows(read["memory"] * 1e9, "399") and read["phy"] == pytest.approx(2 * one.layer_totals()["phy"])
    tails = r.loaded_s["remote"]
    assert [shows(tails[u]["p99.99"] * 1e9, s) for u, s in ((0.3, "629"), (0.7, "654"), (0.9, "738"))] == [True] * 3
    assert re.findall(r"at (\d+) % switch load", out) == ["30", "70", "90"]


def _collective(v, ns, out):
    assert shows(v.time_s * 1e6, "25.77") and (v.algorithm, v.protocol) == ("nvls", "simple")  # the table's


#: Checks of what statements print, by a piece of the statement's code (unique in the README).
#: Each takes (the statement's value, the group's namespace, what it printed).
def _ami_eye(v, ns, out):
    ser, heights = v
    assert shows(ser, "3.4e-09")
    assert all(shows(h * 1e3, "4.8") for h in heights)


def _ami_sim(v, ns, out):
    ser, clock = v
    assert clock == "model"  # the receiver model's clock times
    assert ser.trials == 200_000 and ser.count <= 2  # the eye's 3.4e-9: none expected


def _ami_report(v, ns, out):
    """The report through the oracle models is the report of the native SerDes they implement."""
    from dataclasses import replace

    import phy

    margin, passes = v
    spec = ns["spec"]
    native = replace(spec.serdes, tx=replace(ns["tx"], ami=None, ffe=phy.TxFfe((-0.1, 0.75, -0.15), 1, False)),
                     rx=replace(ns["rx"], ami=None, ctle=phy.Ctle.ieee_802_3ck(ns["baud"], -12.0)))
    ref = phy.evaluate_link(replace(spec, serdes=native))
    # the edge jitter moves the stimulus's edges, before the Tx model (IBIS-AMI's way), not
    # the FFE's output edges: a thousandth of a dB here
    assert margin == pytest.approx(ref.margin_db, abs=1e-3) and passes == ref.passes


CHECKS = {
    "eye.ser(), eye.heights_v(1e-6)": _ami_eye,
    "sim.ser, sim.config[\"clock\"]": _ami_sim,
    "rep.margin_db, rep.passes": _ami_report,
    "ch.insertion_loss_db(26.5625e9)": _il,
    "ch.network": _network,
    "pr.ui_sum()": _ui_sum,
    "wide = ch.uniform(f_max_hz=200e9)": _wide,
    "ch.quality.problems()": lambda v, ns, out: isinstance(v, list),
    "words = fec.KP4.encode(msgs)": _encode,
    "res = fec.KP4.decode(words)": _decode,
    "fec.random_errors(fec.KP4, 2.4e-4)": _random,
    "fec.required_ber(fec.KP4, 1e-13)": lambda v, ns, out: shows(v, "2.08e-4"),
    "fec.burst_errors(fec.KP4, dfe, precoded=True)": _burst,
    "fec.montecarlo.random_stream(fec.KR4, 1e-3, 20_000).compare(": _compare,
    "fec.latency(fec.KP4, 106.25e9)": _latency,
    "rng = np.random.default_rng(1)": _inner_code,
    "bits = rng.integers(0, 2, (10_000, 120)": _inner_words,
    "coded = fec.SFEC.encode(bits)": _coded,
    "llr = fec.pam4_llr(coded, 0.38, rng)": _llr,
    "((llr < 0) != coded).mean()": _chase,
    'fec.concatenated_threshold(decoder="chase", interleave=4)': _threshold,
    "noise = phy.Noise(tx_snr_db=33": _eta0,
    "r = phy.simulate(ch, 10**7": _simulate,
    "r.ber, r.ser": _ser,
    "r.cdr_locked, r.cdr_phase_rms_s * baud": _cdr,
    "r.burst_span_counts, r.burst_model()": _bursts,
    "r.eye.heights_v(1e-4), r.eye.width_s(1e-4), r.eye.crossing_stats()": _eye,
    "r.eye.plot()": _axes,
    "r.eye.plot_bathtub()": _axes,
    "se.ser(), se.ser_dfe()": _se_ser,
    "se.plot()": _axes,
    "thru = channels.load(": _thru,
    "m = phy.channel_margin(thru, phy.ComParams.ieee_802_3ck_kr())": _margin,
    "m.com_db, m.breakdown_db()": _com,
    "r.passes, r.reasons": _passes,
    "r.usable_bandwidth_bps, r.rate_chain": _usable,
    "real = phy.Serdes(": _impairments,
    "rack = tp.nvl72()": _nvl72,
    "r.accel_bandwidth_bytes_per_s": _gpu_bw,
    "r.aggregate_bandwidth_bytes_per_s, r.cables": _aggregate,
    "dom = tp.two_tier(8, rack.classes[0]": _two_tier,
    'tp.over_fabric(r, tp.Model.llama3_70b(), source="remote").tokens_per_s': _decode_speed,
    "r.power.table()": _power,
    'tp.rollup(tp.nvl72(tp.LinkClass.optical("dsp", 2))).power.total_w': _optical_power,
    "tp.fabric_reliability(rack, r).link_down_events_per_day": _reliability,
    "plan = tp.plan_domain(144)": _plan,
    "best, plans = tp.largest_domain(": _largest,
    "print(r.latency_table())": _latency_table,
    'r.collective("all_reduce", 8)': _collective,
}
