"""The sweep point's faster paths (issue 35) give the old results bit for bit: the
mixed-mode transform as two matrix products over all frequencies, the caches of what a
point computes from the settings alone, and a small sweep's rows as main's code gave
them."""

from __future__ import annotations

import numpy as np
import pytest
import skrf as rf

from channels import mixed_mode as mm


@pytest.mark.parametrize("n", [2, 3, 17, 1001, 12001])
@pytest.mark.parametrize("inverse", [False, True])
def test_mixed_mode_sandwich_is_batched_matmul_bit_for_bit(n, inverse):
    rng = np.random.default_rng(n)
    s = rng.standard_normal((n, 4, 4)) + 1j * rng.standard_normal((n, 4, 4))
    s[0] *= 1e-300  # tiny and huge values round the same way too
    s[-1] *= 1e300
    a = mm._M.T if inverse else mm._M
    assert np.array_equal(mm._sandwich(a, s), a @ s @ a.T)


def test_mixed_mode_round_trip_of_a_twinax_is_the_old_arithmetic():
    from channels import media

    ch = media.twinax(1.0, 30)
    se = ch._se
    got = mm.se_to_mixed_mode(se)
    assert np.array_equal(got.s, mm._M @ se.s @ mm._M.T)
    back = mm.mixed_mode_to_se(got)
    assert np.array_equal(back.s, mm._M.T @ got.s @ mm._M)
    # and it is scikit-rf's transform
    ref = se.copy()
    ref.se2gmm(p=2)
    np.testing.assert_allclose(got.s, ref.s, rtol=0, atol=1e-14)


def test_mixed_mode_other_shapes_fall_back():
    s = np.ones((3, 2, 2), dtype=complex)
    a = np.eye(2)
    assert np.array_equal(mm._sandwich(a, s), a @ s @ a.T)


# ----------------------------------------------------------------------------- a sweep's rows
FECS = ("KP4", "KR4", "LL272", "none")
#: Points whose rows main's code (862076c) gave, in tests/sweep_rows_862076c.json.
POINTS = [{"channel.kind": "twinax", "channel.length_m": L, "channel.awg": g, "link.lane_rate_gbps": 212.5,
           "link.equalisation": "preset", "link.fec": f} for L, g in ((0.5, 26), (1.25, 30), (2.5, 34)) for f in FECS]
POINTS += [
    {"channel.kind": "stripline", "channel.length_m": 0.3, "link.equalisation": "preset", "link.fec": "LL272"},
    {"channel.kind": "twinax", "channel.length_m": 1.0, "link.equalisation": "preset", "link.retry": True,
     "serdes.rx_impairments": "adc_dsp_224g", "link.precoding": True},
    {"channel.kind": "twinax", "channel.length_m": 2.0, "link.equalisation": "preset", "link.modulation": "nrz",
     "link.lane_rate_gbps": 25.78125, "link.fec": "KR4"},
]


def test_a_small_sweeps_rows_are_mains_bit_for_bit():
    import json
    from pathlib import Path

    from phy.sweep.point import evaluate_point

    pinned = json.loads((Path(__file__).parent / "sweep_rows_862076c.json").read_text())
    assert len(pinned) == len(POINTS)
    for p, want in zip(POINTS, pinned):
        r = evaluate_point(p)
        got = {"key": r["key"], "status": r["status"], "row": r.get("row"), "error": r.get("error")}
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True), p  # floats by their repr


def _spec(length_m=1.25, awg=30, fec="KP4"):
    from phy.sweep.point import link_spec

    return link_spec({"channel.kind": "twinax", "channel.length_m": length_m, "channel.awg": awg,
                      "link.lane_rate_gbps": 212.5, "link.equalisation": "preset", "link.fec": fec})


def test_report_without_erl_differs_only_there():
    import phy

    spec = _spec()
    full, lean = phy.evaluate_link(spec).to_dict(), phy.evaluate_link(spec, erl=False).to_dict()
    ch_full, ch_lean = full["segments"][0].pop("channel"), lean["segments"][0].pop("channel")
    assert full == lean
    assert ch_full["erl_db"] is not None and ch_lean["erl_db"] is None
    assert ch_lean["unavailable"]["erl_db"] == "not computed (erl=False)"
    erl_keys = {"erl_db", "erl_preset", "erl_limit_db", "erl_passes", "erl_parameters"}
    ch_lean["unavailable"].pop("erl_db")
    assert {k: v for k, v in ch_full.items() if k not in erl_keys} == {
        k: v for k, v in ch_lean.items() if k not in erl_keys}


# ----------------------------------------------------------------------------- the eye's paths
def _old_ser(eye, column=None, thresholds_v=None):
    """StatEye.ser as main had it: an interpolation per threshold and level."""
    p = eye._column(column)
    M = eye.levels.size
    th = eye.thresholds_v if thresholds_v is None else np.asarray(thresholds_v, dtype=float)
    total = 0.0
    for wgt, cdf, main in eye._components():
        lv = eye.levels * main[p]
        err = 0.0
        for m in range(M):
            if m > 0:
                err += eye._F(p, th[m - 1] - lv[m], cdf)
            if m < M - 1:
                err += 1.0 - eye._F(p, th[m] - lv[m], cdf)
        total += wgt * err
    return float(total / M)


@pytest.fixture(scope="module")
def eye():
    import phy

    return phy.link.segments(_spec())[0].eye


def test_ser_is_the_old_sum(eye):
    assert len(eye.parts) > 1  # a mixture (the main cursor's jitter)
    assert eye.ser() == _old_ser(eye)
    th = eye.thresholds_v * 0.9
    assert eye.ser(thresholds_v=th) == _old_ser(eye, thresholds_v=th)
    nrz = __import__("dataclasses").replace(eye, parts=())
    assert nrz.ser() == _old_ser(nrz)


def test_main_cursor_column_is_the_full_convolution_bit_for_bit():
    from phy.engines._stateye_terms import _convolve_rows, _convolved_column

    class At:  # the fine grid as _Cursors reads it
        fine = np.arange(400)

        def at(self, arr, t):
            return np.interp(t, self.fine, arr, left=0.0, right=0.0)

    rng = np.random.default_rng(5)
    y = rng.standard_normal(400)
    t = rng.uniform(-20, 420, (7, 30))
    for w in (rng.standard_normal(16), rng.standard_normal(1), rng.standard_normal(40)):
        full = _convolve_rows(At().at(y, t), w)
        for col in (0, 5, 15, 29, 29 + w.size - 1):
            assert np.array_equal(_convolved_column(At(), y, t, w, col), full[:, col])


def _old_noisier_table(eye, ser):
    """phy.link.post_fec._noisier_table as main had it: every part's rows transformed and
    convolved on their own, the whole eye's transforms taken again at the end."""
    from dataclasses import replace

    from scipy import optimize

    from phy.engines.dfe_chain import dfe_transitions
    from phy.link.post_fec import _gauss_cdf, _spectra

    dv = float(eye.voltage_v[1] - eye.voltage_v[0])
    c = eye.centre
    column = replace(eye, time_s=eye.time_s[c : c + 1], cdf=eye.cdf[c : c + 1], main_v=eye.main_v[c : c + 1],
                     parts=tuple((w, cdf[c : c + 1], m[c : c + 1]) for w, cdf, m in eye.parts))

    def spectra(e):
        return [_spectra(e.cdf)] + [_spectra(cdf) for _w, cdf, _m in e.parts]

    def noisier(e, spec, add_v):
        own, *parts = spec
        parts = tuple((w, _gauss_cdf(sp, add_v / dv), m) for (w, _c, m), sp in zip(e.parts, parts))
        return replace(e, cdf=_gauss_cdf(own, add_v / dv), parts=parts, sigma_v={**e.sigma_v, "added": add_v})

    col_spec, sers = spectra(column), {}

    def ser_at(add_v):
        if add_v not in sers:
            sers[add_v] = noisier(column, col_spec, add_v).ser()
        return sers[add_v]

    h0 = float(eye.main_v[c])
    hi = 0.05 * h0
    while ser_at(hi) < ser and hi < 10 * h0:
        hi *= 2
    if ser_at(hi) < ser:
        return None
    add = optimize.brentq(lambda a: np.log(max(ser_at(a), 1e-300)) - np.log(ser), 0.0, hi, rtol=1e-3)
    return dfe_transitions.__wrapped__(noisier(eye, spectra(eye), add))


def test_noisier_table_is_the_old_one(eye):
    from phy.link.post_fec import _noisier_table

    for ser in (1e-5, 3e-3):
        new = _noisier_table.__wrapped__(eye, ser)
        assert np.array_equal(new, _old_noisier_table(eye, ser))


# ----------------------------------------------------------------------------- caches
def test_rest_pmf_cache_is_discrete_pmf_and_follows_its_inputs():
    from phy.engines import dfe_chain
    from phy.engines.pmf import discrete_pmf

    rng = np.random.default_rng(2)
    rest = rng.standard_normal(50) * 1e-3
    lv = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
    a = dfe_chain._rest_pmf(rest, lv, -0.2, 1e-4, 4001)
    assert np.array_equal(a, discrete_pmf(rest, lv, -0.2, 1e-4, 4001)) and not a.flags.writeable
    assert dfe_chain._rest_pmf(rest.copy(), lv, -0.2, 1e-4, 4001) is a  # the same values: remembered
    other = rest.copy()
    other[7] = np.nextafter(other[7], 1.0)  # one cursor one ulp off: computed afresh
    b = dfe_chain._rest_pmf(other, lv, -0.2, 1e-4, 4001)
    assert b is not a and np.array_equal(b, discrete_pmf(other, lv, -0.2, 1e-4, 4001))
    c = dfe_chain._rest_pmf(rest, lv, -0.2, 1.1e-4, 4001)  # another grid
    assert np.array_equal(c, discrete_pmf(rest, lv, -0.2, 1.1e-4, 4001))
    for i in range(20):  # bounded
        dfe_chain._rest_pmf(rest * (1 + 0.01 * i), lv, -0.2, 1e-4, 4001)
    assert len(dfe_chain._REST_PMFS) <= 16


def test_receiver_noise_filter_cache_follows_its_settings():
    from dataclasses import replace

    from phy.serdes import Noise, Receiver, Transmitter, pulse as pl
    from phy.serdes.noise import shaped_noise_filter
    from phy.serdes.prepared import _rx_noise_filter, prepare_link

    rx = Receiver(bandwidth_hz=80e9)
    for psd, bw, baud in ((1e-18, 80e9, 106.25e9), (2e-18, 80e9, 106.25e9), (1e-18, 60e9, 106.25e9),
                          (1e-18, 80e9, 53.125e9)):
        r = replace(rx, bandwidth_hz=bw)
        g, R = _rx_noise_filter(psd, baud, bw, r.filter_order, r.ctle)
        g0, R0 = shaped_noise_filter(psd, baud, pl.front_end(None, bw, r.filter_order, r.ctle))
        assert np.array_equal(g, g0) and np.array_equal(R, R0)
    # what a prepared link holds is its own copy
    from channels import media

    ch = media.twinax(1.0, 30)
    noise = Noise(rx_noise_psd_v2_per_hz=1e-18)
    lk = prepare_link(ch, baud_hz=106.25e9, tx=Transmitter(), rx=rx, noise=noise)
    keep = lk.rx_noise_fir.copy()
    lk.rx_noise_fir[:] = 0.0
    lk2 = prepare_link(ch, baud_hz=106.25e9, tx=Transmitter(), rx=rx, noise=noise)
    assert np.array_equal(lk2.rx_noise_fir, keep)


# ----------------------------------------------------------------------------- the cascade
def _pairwise(*parts):
    from channels.channel import cascade_pair

    out = parts[0]
    for p in parts[1:]:
        out = cascade_pair(out, p)
    return out


def _same_channel(a, b):
    assert type(a) is type(b)
    for k in ("name", "kind", "port_order", "source", "grid"):
        assert getattr(a, k) == getattr(b, k), k
    for x, y in ((a._se, b._se), (a._mm, b._mm)):
        assert np.array_equal(x.s, y.s) and np.array_equal(x.z0, y.z0) and x.name == y.name
    assert np.array_equal(a.f, b.f) and a.aggressors == b.aggressors == ()


def test_cascade_of_three_or_more_is_the_pairwise_one_bit_for_bit():
    import channels
    from channels import media

    c, t, s = media.connector(), media.twinax(1.3, 30), media.stripline(0.2)
    _same_channel(channels.cascade(c, t, c), _pairwise(c, t, c))
    _same_channel(channels.cascade(c, s, t, c), _pairwise(c, s, t, c))
    # a part at other reference impedances: renormalised on the way, as in pairs
    se45 = c._se.copy()
    se45.renormalize(45.0)
    c45 = channels.Channel(se45, name="c45")
    _same_channel(channels.cascade(c, c45, t), _pairwise(c, c45, t))
    _same_channel(channels.cascade(c45, t, c), _pairwise(c45, t, c))


def test_cascade_with_aggressors_or_other_grids_goes_pairwise():
    import channels
    from channels import cascading, media

    c, t = media.connector(), media.twinax(1.0, 28)
    assert cascading.cascade_chain((c, t)) is None  # two parts: the pair itself
    t2 = t.resample(np.linspace(0, 100e9, 5001))
    assert cascading.cascade_chain((c, t2, c)) is None
    with pytest.raises(channels.ChannelError):
        channels.cascade(c, t2, c)
    victim = t._replace(aggressors=[channels.Channel(c._se, name="next_1", kind="next")])
    assert cascading.cascade_chain((c, victim, c)) is None
    out = channels.cascade(c, victim, c)
    assert [a.name for a in out.aggressors] == ["next_1"]


def test_mode_line_is_scikit_rfs_a2s_with_a_number():
    from channels import line_model as lm
    from channels.lines import frequency_grid

    freq = frequency_grid(None)
    f = freq.f
    rng = np.random.default_rng(7)
    for z_mode, z_port in ((50.0, 100.0), (14.0, 25), (60.0, 50.0)):
        eps = (3.2 - 0.01j) * np.ones(f.size)
        z_series = (1 + 1j) * rng.uniform(0.5, 2.0) * np.sqrt(f / 1e9)
        got = lm.mode_line(freq, 1.7, z_mode, eps, 3.2, z_series, z_port)
        # main's arithmetic: the ABCD matrix of the docstring, a2s given the number
        w = 2 * np.pi * f
        l_ext = z_mode * np.sqrt(3.2) / lm.C0
        c_ref = np.sqrt(3.2) / (lm.C0 * z_mode)
        zp, yp = 1j * w * l_ext + z_series, 1j * w * c_ref * eps / 3.2
        gl = np.sqrt(zp * yp) * 1.7
        small = np.abs(gl) < 1e-6
        sinhc = np.where(small, 1 + gl * gl / 6, np.sinh(np.where(small, 1.0, gl)) / np.where(small, 1.0, gl))
        abcd = np.empty((f.size, 2, 2), dtype=complex)
        abcd[:, 0, 0] = abcd[:, 1, 1] = np.cosh(gl)
        abcd[:, 0, 1] = zp * 1.7 * sinhc
        abcd[:, 1, 0] = yp * 1.7 * sinhc
        assert np.array_equal(got.s, rf.network.a2s(abcd, z_port))


def test_front_end_memo_gives_the_fresh_prepared_link():
    from dataclasses import fields, replace

    from channels import media
    from phy.serdes import Cdr, Noise, Receiver, Transmitter, TxFfe
    from phy.serdes import prepared as P

    pulse = media.twinax(1.2, 30).pulse_response(106.25e9, 32)
    tx, rx, noise = Transmitter(), Receiver(bandwidth_hz=80e9), Noise(rx_noise_psd_v2_per_hz=1e-18)

    def fresh(**kw):
        P._FRONT.clear()
        return P.prepare_link(pulse, **kw)

    def same(a, b):
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if hasattr(x, "samples"):
                assert np.array_equal(x.samples, y.samples) and x.main_index == y.main_index
            elif isinstance(x, np.ndarray):
                assert np.array_equal(x, y), f.name
            else:
                assert x == y, f.name

    variants = [dict(tx=tx, rx=rx, noise=noise, cdr=Cdr(phase=ph)) for ph in ("mm-dfe", "peak")]
    variants += [dict(tx=replace(tx, rise_time_s=12e-12), rx=rx, noise=noise),
                 dict(tx=Transmitter(ffe=TxFfe([-0.1, 0.8, -0.1], main=1)), rx=rx, noise=noise),
                 dict(tx=tx, rx=replace(rx, bandwidth_hz=60e9), noise=noise)]
    P._FRONT.clear()
    got = [P.prepare_link(pulse, **kw) for kw in variants]  # one after another through the memo
    assert P._FRONT and all(v[0] is pulse for v in P._FRONT.values())
    for kw, g in zip(variants, got):
        same(g, fresh(**kw))
    assert len(P._FRONT) <= 4
