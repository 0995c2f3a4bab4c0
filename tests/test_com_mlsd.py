"""802.3dj's 1-tap MLSD (P802.3dj/D3.3 178A.1.10) in COM and in the statistical eye: the
error events' union bound against its closed form for Gaussian noise, against PyChOpMarg
3.4.0's ``der_mlsd``/``solve_g_an`` (skipped without it) and against a Monte Carlo Viterbi
detector; COM's added-noise step and 178A-49 by hand; the presets; COM with the MLSD on a
cable with a strong first post-cursor; the eye's MLSD, its bursts and the link's use of it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import phy
from channels import media
from phy.engines import mlsd
from phy.engines.com import ComParams, channel_margin
from phy.engines.com import mlsd as com_mlsd
from phy.engines.pmf import discrete_sum_pmf, gauss_convolve
from phy.serdes import Dfe, Noise, Receiver, RxFfe, Transmitter

LV = np.linspace(-1.0, 1.0, 4)


def _gauss(sigma: float, ystep: float, reach: float = 12.0) -> np.ndarray:
    n = 2 * int(reach * sigma / ystep) + 1
    y = (np.arange(n) - n // 2) * ystep
    p = np.exp(-0.5 * (y / sigma) ** 2)
    return p / p.sum()


def _closed_form_rates(b: float, a_s: float, sigma: float, n: int) -> np.ndarray:
    """178A-50 for white Gaussian noise: the projection on u_j is Gaussian of rms
    sigma |u_j|, so each term is ((L-1)/L)^(j-1) Q(A_s |u_j| / sigma)."""
    return np.array([(3 / 4) ** (j - 1) * stats.norm.sf(a_s * np.linalg.norm(mlsd.event_vector(b, j)) / sigma)
                     for j in range(1, n + 1)])


@pytest.mark.parametrize("b", [0.0, 0.3, 0.6, 0.85])
def test_error_events_match_the_gaussian_closed_form(b):
    a_s, sigma, ystep = 0.1, 0.025, 2e-5
    ev = mlsd.error_events(_gauss(sigma, ystep), ystep, a_s, b, [1.0], 4, rel_tol=1e-6)
    ref = _closed_form_rates(b, a_s, sigma, ev.rates.size)
    assert not ev.truncated
    np.testing.assert_allclose(ev.rates, ref, rtol=0.01)
    assert ev.der == pytest.approx(ref.sum(), rel=0.01)
    # the shortest event sets the MLSD's gain over the slicer: |u_1|^2 = 1 + b^2
    assert ev.rates[0] == pytest.approx(stats.norm.sf(a_s * np.sqrt(1 + b * b) / sigma), rel=0.01)


def test_error_events_correlated_noise_and_the_truncation_bound():
    a_s, sigma, ystep = 0.1, 0.03, 5e-5
    p = _gauss(sigma, ystep)
    # noise negatively correlated at lag 1 (an FFE's high-pass): u_1 = (1, b) sees less of it
    white = mlsd.error_events(p, ystep, a_s, 0.5, [1.0], 4)
    neg = mlsd.error_events(p, ystep, a_s, 0.5, [1.0, -0.3], 4)
    x1 = a_s * 1.25**1.5 / np.sqrt(1.25 - 2 * 0.5 * 0.3)
    assert neg.rates[0] == pytest.approx(stats.norm.sf(x1 / (sigma * np.sqrt(1.25))), rel=0.01)
    assert neg.der < white.der
    # b near 1: events barely lengthen the distance; the sum stops at the bound, and says so
    cut = mlsd.error_events(_gauss(0.06, 1e-4), 1e-4, a_s, 0.99, [1.0], 4, rel_tol=1e-12, max_events=6)
    assert cut.truncated and cut.rates.size == 6


def test_error_events_refuse_a_target_outside_zero_to_one():
    with pytest.raises(phy.ConfigError, match="0 <= b < 1"):
        mlsd.error_events(_gauss(0.02, 1e-4), 1e-4, 0.1, 1.2, [1.0], 4)


def test_error_events_match_pychopmarg():
    pcm = pytest.importorskip("pychopmarg.mlsd")
    ystep = 1e-4
    y, pmf, split = discrete_sum_pmf([np.array([0.02, -0.015, 0.01, 0.004])], LV, ystep, 0.5)
    p = gauss_convolve(pmf, np.sqrt(0.02**2 / ystep**2 - split))
    p /= p.sum()
    rho = np.zeros(mlsd.MAX_EVENTS + 1)
    rho[:4] = [1.0, -0.2, 0.05, 0.01]
    for b in (0.0, 0.3, 0.6, 0.85):
        ours = mlsd.error_events(p, ystep, 0.1, b, rho, 4)
        theirs, n = pcm.der_mlsd(p, ystep, 0.1, b, rho, 4)
        assert ours.rates.size == n
        assert ours.der == pytest.approx(theirs, rel=1e-6)


def test_added_noise_matches_pychopmarg():
    pcm = pytest.importorskip("pychopmarg.mlsd")
    ystep = 1e-4
    # ISI on the grid's own points (no split variance, which PyChOpMarg does not track)
    y, pmf, split = discrete_sum_pmf([np.array([0.03, -0.015])], LV, ystep, 0.4)
    assert split == pytest.approx(0.0, abs=1e-9)
    var_g, var_rn = 0.012**2, 0.006**2
    p0 = gauss_convolve(pmf, 0.012 / ystep)
    a_ni = com_mlsd._quantile(p0 / p0.sum(), ystep, 2e-4)
    g, pa = com_mlsd.added_noise(pmf, 0.0, ystep, var_g, var_rn, 2e-4, a_ni * 10 ** (3 / 20))
    g_ref, _ = pcm.solve_g_an(pmf, ystep, var_g, var_rn, 2e-4, 3.0)
    assert g == pytest.approx(g_ref, rel=0.01)
    assert com_mlsd._quantile(pa, ystep, 2e-4) == pytest.approx(a_ni * 10 ** (3 / 20), rel=2e-3)


def test_com_mlsd_closed_form_with_gaussian_noise():
    """Gaussian noise alone: g_an = var_g (10^(3/10) - 1) / var_rn; DER_MLSD the closed form
    above at sigma_an; and 178A-49's term is 20 log10(sigma_an Q^-1(DER_MLSD) / A_s)."""
    der0, a_s, sg, sr, b = 2e-4, 0.1, 0.02, 0.012, 0.5
    q0 = np.sqrt(2) * special.erfcinv(2 * der0)
    a_ni = sg * q0
    com_dfe = 20 * np.log10(a_s / a_ni)
    lags = mlsd.MAX_EVENTS + 1
    white = np.eye(1, lags)[0]
    r = com_mlsd.com_mlsd(com_dfe, a_s, a_ni, b, [], 4, sg**2, sr**2, (sg**2 - sr**2) * white, sr**2 * white,
                          der0, 1e-5)
    g_ref = sg**2 * (10 ** 0.3 - 1) / sr**2
    assert r["g_an"] == pytest.approx(g_ref, rel=0.01)
    s_an = np.sqrt(sg**2 + g_ref * sr**2)
    der = _closed_form_rates(b, a_s, s_an, r["events"]).sum()
    assert r["der_mlsd"] == pytest.approx(der, rel=0.02)
    delta = 20 * np.log10(s_an * stats.norm.isf(der) / a_s)
    assert r["delta_db"] == pytest.approx(delta, abs=0.02)
    assert r["com_db"] == pytest.approx(com_dfe + max(delta, 0.0), abs=0.02)
    assert r["com_db"] >= com_dfe
    # on 1 + 0 D the MLSD is a slicer: no gain, COM stays COM_DFE
    r0 = com_mlsd.com_mlsd(com_dfe, a_s, a_ni, 0.0, [], 4, sg**2, sr**2, (sg**2 - sr**2) * white, sr**2 * white,
                           der0, 1e-5)
    assert r0["delta_db"] <= 0.01 and r0["com_db"] == pytest.approx(com_dfe, abs=0.01)


def test_presets_and_checks():
    """Off by default and for 802.3ck; on for P802.3dj/D3.3 KR and CR (PyChOpMarg 3.4.0's
    ``com_params``: ``mlsd`` for KR and CR, dCOM_an 3 dB)."""
    assert ComParams(name="x", baud_hz=53.125e9).mlsd is False
    assert ComParams.ieee_802_3ck_kr().mlsd is False
    for p in (ComParams.ieee_802_3dj_kr(), ComParams.ieee_802_3dj_cr()):
        assert p.mlsd is True and p.mlsd_dcom_an_db == 3.0 and len(p.dfe_max) == 1
    with pytest.raises(phy.ConfigError, match="one fixed DFE tap"):
        ComParams.ieee_802_3ck_kr().with_(mlsd=True).check()
    with pytest.raises(phy.ConfigError, match="mlsd_dcom_an_db"):
        ComParams.ieee_802_3dj_kr().with_(mlsd_dcom_an_db=-1.0).check()


REDUCED = {"g_dc_db": (0.0, -4.0, -8.0), "g_dc2_db": (0.0, -3.0), "c_m3": (0.0,), "c_m2": (0.0,),
           "c_m1": (-0.1, 0.0), "c_p1": (-0.1, 0.0)}


def test_com_with_mlsd_on_a_cable_with_a_strong_first_post_cursor():
    """2 m of 26 AWG twinax at 106.25 GBd, 802.3dj CR (HL to HL), a reduced grid: COM with
    the MLSD is COM_DFE (the same setting, computed with it off) plus a gain that is
    positive and no more than the shortest error event's, ``20 log10(|u_1|^2 / sqrt(u_1' V u_1))``
    with the noise's own correlation (for Gaussian noise DER_MLSD is at least that event's
    rate, ``Q(A_s |u_1|^2 / (sigma sqrt(u_1' V u_1)))``; 10 log10(1 + b^2) when white)."""
    ch = media.cascade(media.connector(), media.twinax(2.0, 26), media.connector())
    p = ComParams.ieee_802_3dj_cr("CA-D").with_(**REDUCED)
    on = channel_margin(ch, p)
    off = channel_margin(ch, p.with_(mlsd=False))
    m = on.mlsd
    assert off.mlsd == {}
    assert m["com_dfe_db"] == pytest.approx(off.com_db, abs=1e-9)
    b = m["b"]
    assert b > 0.2  # the strong h1 the MLSD keeps
    rho1 = m["rho"][1]
    bound = 20 * np.log10((1 + b * b) / np.sqrt(1 + b * b + 2 * b * rho1))
    assert 0.2 < m["delta_db"] <= bound + 0.05
    assert on.com_db == pytest.approx(off.com_db + m["delta_db"], abs=1e-9)
    assert any("MLSD (178A.1.10)" in n for n in on.notes)
    assert not m["truncated"] and m["events"] < mlsd.MAX_EVENTS
    # COM's receiver for the link: the MLSD when COM had it
    assert on.serdes()[1].mlsd is True and off.serdes()[1].mlsd is False


def _viterbi(y: np.ndarray, b: float) -> np.ndarray:
    """Viterbi on 1 + b D for PAM4, rows independent, the symbol before each row ``LV[0]``:
    states the previous symbol, squared Euclidean branch metrics, full traceback."""
    K, T = y.shape
    ref = LV[None, :] + b * LV[:, None]  # [previous, current]
    cost = (y[:, 0, None] - ref[0][None, :]) ** 2
    back = np.zeros((K, T, 4), dtype=np.int8)
    for t in range(1, T):
        tot = cost[:, :, None] + (y[:, t, None, None] - ref[None]) ** 2
        back[:, t] = np.argmin(tot, axis=1)
        cost = np.min(tot, axis=1)
    est = np.zeros((K, T), dtype=np.int64)
    s = np.argmin(cost, axis=1)
    for t in range(T - 1, -1, -1):
        est[:, t] = s
        if t:
            s = back[np.arange(K), t, s]
    return est


def test_eye_mlsd_against_a_monte_carlo_viterbi():
    """2 m of twinax, a 9-tap Rx FFE and one DFE tap (b about 0.44), white receiver noise
    through the FFE: the eye's MLSD symbol error ratio (union bound over the error events,
    the eye's own PMF and correlation) within 25 % of a Viterbi detector on 1 + b D run on
    the same cursors with that noise (600,000 symbols, about 350 errors: a 1-sigma of about
    8 % with the errors' bursts; the union bound reads a few % high at this ratio)."""
    ch = media.cascade(media.connector(), media.twinax(2.0, 26), media.connector())
    fb, sig = 106.25e9, 0.013
    rx = Receiver(bandwidth_hz=0.55 * fb, ffe=RxFfe(2, 6), dfe=Dfe(1))
    eye = phy.statistical_eye(ch, baud_hz=fb, tx=Transmitter("pam4", swing_v=0.4), rx=rx,
                              noise=Noise(rx_noise_rms_v=sig), columns="sampling")
    ml = eye.mlsd()
    lk = eye.link
    b = float(lk.dfe[0])
    assert 0.3 < b < 0.6
    mc_ = lk.n_pre + rx.ffe.n_pre
    cur = eye.isi_v.copy()
    h0 = float(eye.main_v[eye.centre])
    cur[mc_] = h0
    cur[mc_ + 1] += b * lk.h0_v  # the DFE's share back: the MLSD's target keeps it
    rng = np.random.default_rng(7)
    K, T = 2000, 300
    a = rng.integers(0, 4, (K, T + cur.size - 1))
    y = np.array([np.convolve(row, cur, "valid") for row in LV[a]])
    w = lk.rx_ffe
    y += np.array([np.convolve(row, w, "valid") for row in sig * rng.standard_normal((K, y.shape[1] + w.size - 1))])
    sym = a[:, cur.size - 1 - mc_ : cur.size - 1 - mc_ + y.shape[1]]
    err = (_viterbi(y / h0, b) != sym)[:, 20:-20]
    ser_mc = err.mean()
    assert err.sum() > 200
    assert ml.ser == pytest.approx(ser_mc, rel=0.25)
    assert eye.ser_mlsd() == pytest.approx(ml.ser)
    assert ml.ser < 0.6 * eye.ser_dfe() and ser_mc < 0.6 * eye.ser_dfe()  # what the MLSD buys here
    # its bursts: alternating runs, as long on average as its errors per event
    bm = ml.burst_model()
    assert bm.mean_errors == pytest.approx(ml.ser / ml.event_rate)
    assert all(np.array_equal(x, np.where(np.arange(len(x)) % 2 == 0, 1, -1)) for x in bm.patterns)
    assert bm.probabilities.sum() == pytest.approx(1.0) and 1.0 < bm.mean_errors < 5.0


def test_eye_mlsd_without_a_dfe_tap_is_the_slicer():
    ch = media.cascade(media.connector(), media.twinax(1.0, 26), media.connector())
    fb = 106.25e9
    eye = phy.statistical_eye(ch, baud_hz=fb, tx=Transmitter("pam4", swing_v=0.4),
                              rx=Receiver(bandwidth_hz=0.55 * fb, ffe=RxFfe(2, 6)),
                              noise=Noise(rx_noise_rms_v=0.012), columns="sampling", n_bins=16384)
    ml = eye.mlsd()
    assert ml.events.b == 0.0
    # the slicer's error ratio: the eye counts each bin's mass on one side of a threshold,
    # the MLSD reads its distribution between bins; a fine grid makes the two agree
    assert ml.ser == pytest.approx(eye.ser(), rel=0.03)


def test_receiver_mlsd_option_and_the_links_decision():
    with pytest.raises(phy.ConfigError, match="Receiver.mlsd"):
        Receiver(mlsd="yes")
    assert Receiver(mlsd=True).to_dict()["mlsd"] is True
    from phy.link.equalise import _equalise
    from phy.link.parts import Serdes
    from phy.link.spec import LinkSpec

    ch = media.cascade(media.connector(), media.twinax(2.0, 26), media.connector())
    fb = 106.25e9
    tx = Transmitter("pam4", swing_v=0.4)
    rx = Receiver(bandwidth_hz=0.55 * fb, ffe=RxFfe(2, 6), dfe=Dfe(1), mlsd=True)
    s = Serdes(tx=tx, rx=rx, noise=Noise(rx_noise_rms_v=0.013), packages=False, cdr=phy.serdes.Cdr(phase="peak"))
    seg = _equalise("cable", ch, LinkSpec(channel=ch, lane_rate_bps=2 * fb, serdes=s), 0.0, None)
    assert seg.der == pytest.approx(seg.eye.ser_mlsd()) and seg.der < seg.eye.ser_dfe()
    # the FEC sees the MLSD's error events as its bursts
    from phy.link.post_fec import _model

    bm = _model((seg,), seg.der, "pam4")
    assert bm.name.startswith("MLSD") and bm.mean_errors == pytest.approx(seg.eye.mlsd().events.mean_errors)


def test_eye_mlsd_claims_no_gain_below_its_resolution():
    """A clean eye (slicer error ratio far below 1e-13): the MLSD's sums do not resolve it,
    and the link's error ratio with the MLSD is the DFE's."""
    ch = media.cascade(media.connector(), media.twinax(1.0, 26), media.connector())
    fb = 106.25e9
    eye = phy.statistical_eye(ch, baud_hz=fb, tx=Transmitter("pam4", swing_v=0.4),
                              rx=Receiver(bandwidth_hz=0.55 * fb, ffe=RxFfe(2, 6), dfe=Dfe(1)),
                              noise=Noise(rx_noise_rms_v=0.004), columns="sampling")
    assert eye.ser() < mlsd.RESOLVED
    assert eye.ser_mlsd() == eye.ser_dfe()


def test_an_unresolved_mlsd_error_ratio_is_never_zero():
    """1 m of twinax on CR hosts HL at 212.5 Gb/s: some candidates' slicers err about 1e-8,
    where the MLSD's sums cut their tails (about 1e-13). Their MLSD error ratio is reported at
    that resolution, never 0: a 0 won the choice and gave an 18 dB margin."""
    import channels
    from phy import link as lk

    spec = lk.LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=2, lane_rate_bps=212.5e9,
                       fec="KP4", retry=lk.Retry(), serdes=lk.Serdes.cr("HL"))
    seg = lk.segments(spec)[0]
    assert seg.rx.mlsd
    assert all(der > 0 for _what, ser, der in seg.candidates if ser > 0)
    assert any(ser > 1e-12 for _what, ser, _der in seg.candidates)  # the case is exercised
    r = lk.evaluate_link(spec, (seg,))
    assert r.passes and r.margin_db < 12.0
