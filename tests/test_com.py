"""COM-style channel margin: the package model, the noise quantile, the search."""

import numpy as np
import pytest
from scipy import stats

from channels import Channel, media
from phy import ConfigError
from phy.engines.com import ComParams, channel_margin
from phy.engines.pmf import pmf_quantile as _pmf_quantile

F = np.linspace(0, 60e9, 601)


def bare(**kw):
    base = {"c_d_f": (0.0,), "l_s_h": (0.0,), "c_b_f": 0.0, "c_p_f": 0.0, "z_c_ohm": (100.0,)}
    base.update(kw)
    return ComParams.ieee_802_3ck_kr().with_(**base)


def package_sparams(f, p, lengths, receiver):
    ch = media.com_package(lengths, p.z_c_ohm, die_cap_f=p.c_d_f, series_l_h=p.l_s_h, bump_cap_f=p.c_b_f,
                           ball_cap_f=p.c_p_f, gamma0_per_mm=p.gamma0_per_mm, a1=p.a1, a2=p.a2,
                           tau_ns_per_mm=p.tau_ns_per_mm, receiver=receiver, frequency=f)
    return np.stack([np.stack([ch.parameter("sdd11"), ch.parameter("sdd12")], -1),
                     np.stack([ch.sdd21, ch.parameter("sdd22")], -1)], -2)


def test_package_reduces_to_closed_forms():
    s = package_sparams(F, bare(), (0.0,), receiver=False)  # nothing at all: a through
    np.testing.assert_allclose(s[:, 1, 0], 1.0, atol=1e-12)
    np.testing.assert_allclose(s[:, 0, 0], 0.0, atol=1e-12)
    c = 1e-13  # one shunt capacitance per leg on R_0: s11 = -j w R0 C / (2 + j w R0 C) (93A-8)
    s = package_sparams(F, bare(c_p_f=c), (0.0,), receiver=False)
    jw = 2j * np.pi * F * 50.0 * c
    np.testing.assert_allclose(s[:, 0, 0], -jw / (2 + jw), atol=1e-12)
    np.testing.assert_allclose(s[:, 1, 0], 2 / (2 + jw), atol=1e-12)
    # a matched line with only the delay term: |s21| = 1, phase -2 pi f tau z
    p = bare(gamma0_per_mm=0.0, a1=0.0, a2=0.0, tau_ns_per_mm=6e-3)
    s = package_sparams(F, p, (30e-3,), receiver=False)
    np.testing.assert_allclose(s[:, 1, 0], np.exp(-2j * np.pi * F * 6e-12 * 30), atol=1e-9)
    # the receiver's package is the transmitter's turned round
    full = ComParams.ieee_802_3ck_kr()
    tx = package_sparams(F, full, full.z_p_tx_m, receiver=False)
    rx = package_sparams(F, full, full.z_p_tx_m, receiver=True)
    np.testing.assert_allclose(rx[:, 0, 0], tx[:, 1, 1])
    assert np.all(np.abs(tx[:, 1, 0]) <= 1 + 1e-12)  # passive


def test_noise_quantile():
    lv = np.linspace(-1, 1, 4)
    assert _pmf_quantile([], lv, 1e-3, 1e-4, 1e-6) == pytest.approx(stats.norm.isf(1e-4) * 1e-3, abs=2e-6)
    # one cursor of 2 mV (PAM4) and a small Gaussian: the quantile is the outer level plus the tail
    expected = 2e-3 + stats.norm.isf(4e-4) * 1e-4
    assert _pmf_quantile([np.array([2e-3])], lv, 1e-4, 1e-4, 1e-7) == pytest.approx(expected, abs=2e-7)


@pytest.fixture(scope="module")
def short_and_long():
    # (b_min(1) = 0 here: the 802.3ck sheet's 0.3 forces a first DFE tap that a short channel
    # does not want, and would make it score below a long one)
    small = ComParams.ieee_802_3ck_kr().with_(g_dc_db=(0.0, -4.0, -8.0, -12.0), g_dc2_db=(0.0, -2.0),
                                                c_m3=(0.0,), c_m2=(0.0,), c_m1=(0.0, -0.1, -0.2), c_p1=(0.0, -0.1),
                                                dfe_min=(0.0, -0.3) + (-0.2,) * 5 + (-0.1,) * 5)
    return small, channel_margin(media.stripline(0.2), small), channel_margin(media.stripline(0.8), small)


def test_margin_falls_with_loss(short_and_long):
    _, short, long_ = short_and_long
    # 7 dB against 29 dB at 26.56 GHz; (below about 10 dB, Tx noise, jitter and the packages'
    # reflections hold COM near 7 to 8 dB whatever the length)
    assert short.com_db > long_.com_db + 2
    assert short.com_db > 6
    for r in (short, long_):
        assert r.a_ni_v > 0 and r.a_s_v > 0
        assert r.com_db == pytest.approx(20 * np.log10(r.a_s_v / r.a_ni_v))
        assert r.settings_searched == 4 * 2 * 3 * 2 * 2  # two package cases
        assert set(r.case_com_db) == {"test 1 (12 mm)", "test 2 (31/29 mm)"}
        assert r.com_db == min(r.case_com_db.values()) and r.case_com_db[r.package_case] == r.com_db
        assert r.tx_ffe[3] == pytest.approx(1 - sum(abs(t) for i, t in enumerate(r.tx_ffe) if i != 3))
        # the noise amplitude at DER0 exceeds every single term's rms
        assert r.a_ni_v > max(r.sigmas_v.values())


def test_search_is_never_worse_than_a_fixed_setting(short_and_long):
    small, _, long_ = short_and_long
    ch = media.stripline(0.8)
    for c_m1 in small.c_m1:
        fixed = channel_margin(ch, small.with_(c_m1=(c_m1,), g_dc_db=(long_.g_dc_db,), g_dc2_db=(long_.g_dc2_db,)))
        assert long_.fom_db >= fixed.fom_db - 1e-9


def test_crosstalk_lowers_the_margin(short_and_long):
    small, _, long_ = short_and_long
    ch = media.stripline(0.8)
    se = media.stripline(0.8).single_ended.copy()
    se.s = se.s * 0.03  # a weakly coupled copy of the lane as its far-end aggressor
    agg = Channel(se, name="agg", kind="fext")
    noisy = channel_margin(ch.with_aggressors(agg), small)
    assert noisy.com_db < long_.com_db
    assert noisy.sigmas_v["crosstalk"] > 0


def test_bad_input():
    with pytest.raises(ConfigError, match="Channel"):
        channel_margin("not a channel")


def test_dj_preset_runs_at_106_gbd_with_its_rx_ffe():
    p = ComParams.ieee_802_3dj_kr().with_(g_dc_db=(0.0, -6.0, -12.0), g_dc2_db=(0.0, -3.0), c_m3=(0.0,), c_m2=(0.0,),
                                          c_m1=(0.0, -0.1, -0.2), c_p1=(0.0, -0.1))
    assert p.baud_hz == 106.25e9 and p.der0 == 2e-4 and (p.rx_ffe_pre, p.rx_ffe_post) == (6, 8)
    ch = media.stripline(0.3)  # 18 dB at 53 GHz
    r = channel_margin(ch, p)
    assert np.isfinite(r.com_db) and r.settings_searched == 3 * 2 * 3 * 2 * 2  # class A: tests 1 and 2
    # 15 fixed taps and two floating groups of 4 within 87 (Table 178-15)
    assert len(r.rx_ffe) == 87 and r.rx_ffe[6] == pytest.approx(max(r.rx_ffe, key=abs))
    floating = [i for i in range(15, 87) if r.rx_ffe[i] != 0.0]
    assert len(floating) == 8 and all(abs(r.rx_ffe[i]) <= 0.05 * r.rx_ffe[6] + 1e-12 for i in floating)
    assert max(abs(w) for i, w in enumerate(r.rx_ffe[:15]) if i != 6) <= 0.7 * abs(r.rx_ffe[6]) + 1e-12
    fixed = channel_margin(ch, p.with_(rx_ffe_float_groups=0))
    assert len(fixed.rx_ffe) == 15 and r.fom_db >= fixed.fom_db - 1e-9
    without = channel_margin(ch, p.with_(rx_ffe_pre=0, rx_ffe_post=0, rx_ffe_float_groups=0))
    assert r.com_db > without.com_db + 1  # the MMSE Rx FFE earns its keep on a lossy channel
    assert without.rx_ffe == [1.0]
    _, rx = r.serdes()
    assert rx.ffe.n_taps == 87 and rx.ffe.taps == tuple(r.rx_ffe)
    d = r.to_dict()
    assert d["params"]["baud_hz"] == 106.25e9 and set(d["breakdown_db"]) == set(r.sigmas_v)


def test_dj_presets_carry_the_d3p3_tables():
    kr = ComParams.ieee_802_3dj_kr()
    # Table 178-15: 1,308 Tx FFE settings with c(0) >= 0.54, 21 x 7 CTLE settings
    assert kr.n_tx_settings == 1308 and kr.n_ctle_settings == 147
    assert (kr.r_0, kr.r_d, kr.a_v, kr.a_ne, kr.snr_tx_db, kr.f_r) == (46.25, 46.25, 0.385, 0.481, 33.5, 0.55)
    assert [c.name for c in kr.package_cases] == ["class A test 1", "class A test 2"]
    assert len(ComParams.ieee_802_3dj_kr("AB").package_cases) == 4
    b1 = ComParams.ieee_802_3dj_kr("B").package_cases[0]
    assert (b1.tx.lengths_m, b1.rx.lengths_m) == ((45e-3, 2e-3, 1.3e-3, 1.5e-3), (44e-3, 2e-3, 1.3e-3, 1.5e-3))
    assert b1.tx.z_c_ohm == (87.5, 95.0, 100.0, 78.0)
    # Table 179-21: the host-class pairs each cable class allows
    assert [c.name for c in ComParams.ieee_802_3dj_cr("CA-D").package_cases] == ["HL to HL"]
    assert len(ComParams.ieee_802_3dj_cr("CA-A").package_cases) == 8
    with pytest.raises(ValueError, match="package_class"):
        ComParams.ieee_802_3dj_kr("C")
    with pytest.raises(ValueError, match="cable_class"):
        ComParams.ieee_802_3dj_cr("CA-E")


def test_full_ck_grid_size():
    p = ComParams.ieee_802_3ck_kr()
    assert p.n_ctle_settings == 21 * 7
    # c(-3) 4 values x c(-2) 7 x c(-1) 18 x c(1) 11, less those leaving c(0) below 0.54
    assert p.n_tx_settings == 4345


def test_result_drives_the_simulator(short_and_long):
    """The chosen equalisation, simulated on the same channel: the eye is open."""
    from phy.engines import statistical_eye

    _, short, _ = short_and_long
    tx, rx = short.serdes()
    assert tx.ffe.coefficients[3] == pytest.approx(short.tx_ffe[3])
    # the fixed DFE taps, then the floating ones COM placed, each within its COM value
    assert rx.ctle.g_dc_db == short.g_dc_db and rx.dfe.n_taps == max([len(short.dfe), *short.dfe_floating])
    assert all(rx.dfe.tap_limits[k - 1] == pytest.approx(abs(v)) for k, v in short.dfe_floating.items())
    from phy.serdes import Cdr

    se = statistical_eye(media.stripline(0.2), baud_hz=53.125e9, tx=tx, rx=rx, cdr=Cdr(phase="mm"))
    assert se.ser() < 1e-12


def _reference_cursor(y, M, bmax1):
    """The reference code's rule, written out (com_ieee8023_93a_450.m, cursor_sample_index):
    the last upward crossing of 1 % of the peak within 4 UI before it, then the least
    |h(t - T) - max(h(t + T) - b_max(1) h(t), 0)| over the 2 UI after it (first on ties)."""
    peak = int(np.argmax(y))
    s = np.sign(y[peak - 4 * M:peak + 1] - 0.01 * y[peak])
    zx = np.flatnonzero(np.diff(s) >= 1)
    z = peak - 4 * M + int(zx[-1])
    t = z + np.arange(2 * M + 1)
    metric = np.abs(y[t - M] - np.maximum(y[t + M] - bmax1 * y[t], 0.0))
    return int(t[np.argmin(metric)])


def _cursor_of(y, p):
    from phy.engines.com.margin import _fom_grid

    nd = len(p.dfe_max)
    _fom, cur = _fom_grid(np.array([[0.0, 0.0, 0.0, 1.0, 0.0]]), y, 32, nd, np.array(p.dfe_max),
                          np.array(p.dfe_min), p, 1.0, 1e-12, [])
    return int(cur[0])


def test_cursor_is_where_the_mueller_muller_residual_is_least():
    """A two-sided Gaussian pulse (rise width s1, fall width s2, no DFE): h(t - T) = h(t + T)
    exactly at t = t0 + T (s2 - s1) / (s1 + s2), after the peak; at a few mV every sample
    near the peak is within the old absolute 1 mV tolerance, which took the last one before
    the peak."""
    M, n = 32, 4096
    t = np.arange(n, dtype=float)
    t0, s1, s2 = 1000.0, 20.0, 44.0
    y = 3e-3 * np.where(t < t0, np.exp(-(((t - t0) / s1) ** 2)), np.exp(-(((t - t0) / s2) ** 2)))
    p = ComParams.ieee_802_3ck_kr().with_(dfe_max=(0.0,), dfe_min=(0.0,))
    exact = t0 + M * (s2 - s1) / (s1 + s2)  # 1012
    assert _cursor_of(y, p) == round(exact) == _reference_cursor(y, M, 0.0)
    # a DFE that takes the whole first post-cursor: the cursor is where h(t - T) is least
    p1 = ComParams.ieee_802_3ck_kr().with_(dfe_max=(1.0,), dfe_min=(0.0,))
    assert _cursor_of(y, p1) == _reference_cursor(y, M, 1.0)


def test_cursor_rule_against_the_reference_on_random_pulses():
    rng = np.random.default_rng(3)
    M, n = 32, 4096
    t = np.arange(n, dtype=float)
    p = ComParams.ieee_802_3ck_kr()
    for _ in range(20):
        t0, s1, s2 = 1500.0, rng.uniform(15, 40), rng.uniform(30, 90)
        y = np.where(t < t0, np.exp(-(((t - t0) / s1) ** 2)), np.exp(-(((t - t0) / s2) ** 2)))
        y += 0.05 * np.exp(-(((t - t0 - rng.uniform(60, 200)) / 30) ** 2)) * rng.choice([-1, 1])  # a reflection
        y *= rng.uniform(2e-3, 0.3)
        assert _cursor_of(y, p) == _reference_cursor(y, M, p.dfe_max[0])


def test_fom_crosstalk_at_the_worst_phase_or_averaged_over_phases():
    """93A-33/34 take each aggressor at its worst sampling phase; averaged over its phases
    (newer reference code) the crosstalk term is never larger, so the FOM never lower, and
    the result says which was used."""
    from phy.engines.com.margin import _fom_grid

    rng = np.random.default_rng(5)
    M, n = 32, 2048
    t = np.arange(n, dtype=float)
    y = np.exp(-(((t - 600) / 30) ** 2))
    xt = [(0.05 * np.sin(2 * np.pi * t / (2 * M) + 0.3) * np.exp(-(((t - 700) / 300) ** 2)), "fext"),
          (0.03 * rng.standard_normal(n) * np.exp(-(((t - 650) / 200) ** 2)), "next")]
    grid = np.array([[0.0, 0.0, -0.1, 0.9, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0]])
    p = ComParams.ieee_802_3ck_kr()
    args = (grid, y, M, len(p.dfe_max), np.array(p.dfe_max), np.array(p.dfe_min))
    worst, cw = _fom_grid(*args, p, 1.0, 1e-9, xt)
    avg, ca = _fom_grid(*args, p.with_(fom_xt_phase="average"), 1.0, 1e-9, xt)
    assert np.all(avg > worst) and np.array_equal(cw, ca)
    # by hand for the second setting (no Tx FFE): the FEXT's and NEXT's sums of squares per phase
    quiet, _ = _fom_grid(*args, p, 1.0, 1e-9, [])
    per_phase = [sum(float(np.sum(x[m::M] ** 2)) for x, _k in xt[:1]) for m in range(M)]
    per_phase_n = [float(np.sum(xt[1][0][m::M] ** 2)) for m in range(M)]
    noise_quiet = 10 ** (-quiet[1] / 10)  # FOM = -10 log10(noise / A_s^2), A_s^2 folded in
    noise_worst = 10 ** (-worst[1] / 10)
    noise_avg = 10 ** (-avg[1] / 10)
    ratio = (noise_worst - noise_quiet) / (noise_avg - noise_quiet)
    assert ratio == pytest.approx((max(per_phase) + max(per_phase_n)) / (np.mean(per_phase) + np.mean(per_phase_n)),
                                  rel=1e-9)
    ch = media.stripline(0.3)
    se = ch.single_ended.copy()
    se.s = se.s * 0.03
    noisy = ch.with_aggressors(Channel(se, name="agg", kind="fext"))
    small = ComParams.ieee_802_3ck_kr().with_(g_dc_db=(0.0, -6.0), g_dc2_db=(0.0,), c_m3=(0.0,), c_m2=(0.0,),
                                               c_m1=(0.0, -0.1), c_p1=(0.0,))
    assert any("worst sampling phase" in x for x in channel_margin(noisy, small).notes)
    assert any("averaged over its sampling phases" in x
               for x in channel_margin(noisy, small.with_(fom_xt_phase="average")).notes)
    with pytest.raises(ConfigError, match="fom_xt_phase"):
        channel_margin(noisy, small.with_(fom_xt_phase="best"))
