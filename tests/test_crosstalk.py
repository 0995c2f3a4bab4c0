"""Crosstalk of synthesised channels against exact coupled-line solutions, and ICN against its formula."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import skrf as rf
from scipy.special import sici

import channels
from channels import ChannelError, media
from channels import crosstalk as xt
from channels import icn

C0 = 299_792_458.0
Z0 = 50.0
V = C0 / np.sqrt(3.4)


def _mode_lines(f, length, k_l, k_c, r_ohm_per_m=0.0, tand=0.0):
    """Exact even- and odd-mode lines of a symmetric coupled pair on Z0 ports (scikit-rf).

    Per metre: L = Z0 / v, C = 1 / (Z0 v); even mode L (1 + k_L), C (1 - k_C); odd mode
    L (1 - k_L), C (1 + k_C); series R and shunt G = omega C tan(delta) on each.
    """
    freq = rf.Frequency.from_f(f, unit="hz")
    w = 2 * np.pi * f
    ll, cc = Z0 / V, 1 / (Z0 * V)
    out = []
    for sign in (1, -1, 0):  # even, odd, uncoupled
        zp = r_ohm_per_m + 1j * w * ll * (1 + sign * k_l)
        yp = (w * cc * tand + 1j * w * cc) * (1 - sign * k_c)
        gamma, zc = np.sqrt(zp * yp), np.sqrt(zp / yp)
        out.append(rf.media.DefinedGammaZ0(freq, z0_port=Z0, z0=zc, gamma=gamma).line(length, "m"))
    return out


def exact_crosstalk(f, length, k_l, k_c, **loss):
    """(NEXT, FEXT, uncoupled line) of the exact solution: (S11e - S11o)/2 and (S21e - S21o)/2."""
    even, odd, plain = _mode_lines(f, length, k_l, k_c, **loss)
    return (even.s[:, 0, 0] - odd.s[:, 0, 0]) / 2, (even.s[:, 1, 0] - odd.s[:, 1, 0]) / 2, plain


def closed_form(f, length, k_l, k_c, plain):
    """The weak-coupling closed form fed with the uncoupled line's own propagation."""
    return xt.weak_coupling(f, plain.s[:, 1, 0], length / V, xt.Coupling(k_l, k_c))


F = np.linspace(10e6, 20e9, 400)


@pytest.mark.parametrize("loss", [{}, {"r_ohm_per_m": 20.0, "tand": 0.002}])
def test_weak_coupling_matches_the_exact_even_odd_solution(loss):
    """k ~ 0.01, and omega T_d |K_f| <= 0.08 up to 20 GHz: errors of order k and (omega T_d K_f)^2."""
    k_l, k_c, length = 0.012, 0.008, 0.05
    nx, fx, plain = exact_crosstalk(F, length, k_l, k_c, **loss)
    nx_a, fx_a = closed_form(F, length, k_l, k_c, plain)
    kb = (k_l + k_c) / 4
    assert np.max(np.abs(nx_a - nx)) < 0.03 * kb  # NEXT has nulls: compare against its scale
    hi = F >= 2e9  # the closed form is for low-loss lines: omega L > 50 R (R = 20 ohm/m) above 2 GHz
    np.testing.assert_allclose(fx_a[hi], fx[hi], rtol=0.03)  # complex: sign and phase too
    if not loss:
        np.testing.assert_allclose(fx_a, fx, rtol=0.03)
    # FEXT is negative imaginary times the through where inductive coupling dominates
    assert np.all(np.real(fx_a[F < 1e9] / (-1j * plain.s[F < 1e9, 1, 0])) > 0)


def test_line_crosstalk_takes_loss_and_delay_from_the_victim_channel():
    """Through a Channel (propagation from its ABCD, delay from its phase) the result is the same."""
    k_l, k_c, length = 0.012, 0.008, 0.05
    f = np.linspace(50e6, 20e9, 400)
    nx, fx, plain = exact_crosstalk(f, length, k_l, k_c, r_ohm_per_m=20.0, tand=0.002)
    victim = channels.Channel.from_differential(plain)
    assert victim.delay_s == pytest.approx(length / V, rel=2e-3)
    n_ch, f_ch = xt.line_crosstalk(victim, xt.Coupling(k_l, k_c))
    assert (n_ch.kind, f_ch.kind) == ("next", "fext")
    assert np.max(np.abs(n_ch.sdd21 - nx)) < 0.03 * (k_l + k_c) / 4
    hi = f >= 2e9
    np.testing.assert_allclose(f_ch.sdd21[hi], fx[hi], rtol=0.03)


def test_propagation_is_exp_minus_gamma_l_even_on_a_mismatched_line():
    f = np.linspace(0, 50e9, 501)
    freq = rf.Frequency.from_f(f, unit="hz")
    gamma = 2 + 1e-5 * np.sqrt(f) + 2j * np.pi * f / V
    line = rf.media.DefinedGammaZ0(freq, z0_port=100.0, z0=80.0, gamma=gamma).line(0.2, "m")
    ch = channels.Channel.from_differential(line)
    np.testing.assert_allclose(xt.propagation(ch), np.exp(-gamma * 0.2), rtol=1e-9)
    assert np.max(np.abs(ch.sdd21 - np.exp(-gamma * 0.2))) > 1e-3  # Sdd21 carries the mismatch
    four = media.diff_line(0.1, 92.0, dk=3.0, df=0.0, frequency=f)  # 92 ohm on 100 ohm ports
    np.testing.assert_allclose(xt.propagation(four), np.exp(-2j * np.pi * f * 0.1 * np.sqrt(3.0) / C0), atol=1e-9)


def test_next_saturates_at_k_b_on_long_lossy_lines():
    k_l, k_c = 0.01, 0.006
    f = np.array([15e9, 20e9])
    nx, _, plain = exact_crosstalk(f, 3.0, k_l, k_c, r_ohm_per_m=20.0, tand=0.002)
    nx_a, _ = closed_form(f, 3.0, k_l, k_c, plain)
    np.testing.assert_allclose(np.abs(nx), (k_l + k_c) / 4, rtol=0.02)
    np.testing.assert_allclose(np.abs(nx_a), (k_l + k_c) / 4, rtol=0.01)
    # a lossy synthesised line: NEXT at high frequency is K_b, whatever the length
    freq = np.linspace(0, 60e9, 3001)
    c = xt.Coupling(0.02, 0.02)
    for length in (0.5, 1.0):
        n_ch, _ = xt.line_crosstalk(media.stripline(length, frequency=freq), c)
        assert abs(n_ch.sdd21[-1]) == pytest.approx(c.k_b, rel=1e-3)


def test_fext_grows_in_proportion_to_length_and_frequency_at_low_frequency():
    k_l, k_c = 0.012, 0.004
    f = np.array([100e6, 200e6])
    fx1 = exact_crosstalk(f, 0.1, k_l, k_c)[1]
    fx2 = exact_crosstalk(f, 0.2, k_l, k_c)[1]
    np.testing.assert_allclose(np.abs(fx2 / fx1), 2.0, rtol=1e-3)
    assert abs(fx1[1] / fx1[0]) == pytest.approx(2.0, rel=1e-3)
    # and the closed form's magnitude is omega T_d |K_f|
    assert abs(fx1[0]) == pytest.approx(2 * np.pi * 100e6 * 0.1 / V * (k_l - k_c) / 2, rel=1e-3)


def test_homogeneous_stripline_has_no_fext():
    c = xt.stripline_coupling(200e-6)
    assert c.k_l == c.k_c and c.k_f == 0.0 and c.k_b > 0
    nx, fx, _ = exact_crosstalk(F, 0.2, c.k_l, c.k_c)  # equal even/odd velocities: exactly none
    assert np.max(np.abs(fx)) < 1e-9 < np.max(np.abs(nx))
    ch = xt.stripline_pair(0.05, 200e-6, frequency=np.linspace(0, 40e9, 401))
    fext = next(a for a in ch.aggressors if a.kind == "fext")
    assert np.max(np.abs(fext.sdd21)) == 0.0
    assert np.max(np.abs(next(a for a in ch.aggressors if a.kind == "next").sdd21)) > 0


def test_stripline_coupling_falls_off_as_exp_minus_pi_spacing_over_plane_spacing():
    b = 300e-6
    k = [xt.stripline_coupling(s, plane_spacing_m=b).k_l for s in (600e-6, 700e-6)]
    assert k[1] / k[0] == pytest.approx(np.exp(-np.pi * 100e-6 / b), rel=2e-3)
    ks = [xt.stripline_coupling(s).k_l for s in (100e-6, 200e-6, 400e-6, 800e-6)]
    assert all(a > b_ > 0 for a, b_ in itertools.pairwise(ks))
    z = float(xt.stripline_coupling(400e-6).source.split("Zdiff ")[1].split(" ohm")[0])
    assert z == pytest.approx(100.0, abs=1.0)  # the defaults describe a 100 ohm pair


def test_microstrip_fext_is_negative_and_vanishes_in_air():
    c = xt.microstrip_coupling(254e-6)
    assert 0 < c.k_c < c.k_l and c.k_f < 0
    air = xt.microstrip_coupling(254e-6, dk=1.0)  # homogeneous (air): k_C = k_L
    assert air.k_c == pytest.approx(air.k_l, rel=1e-9)
    near, far = xt.microstrip_coupling(508e-6), xt.microstrip_coupling(1016e-6)
    assert far.k_l < near.k_l / 4  # pair-to-pair coupling falls faster than the single-trace (h/x)^2


def test_section_crosstalk_is_referred_and_combined_coherently():
    f = np.linspace(0, 60e9, 601)
    conn = media.connector(frequency=f)
    conn = xt.with_crosstalk(conn, xt.connector_crosstalk(conn))
    line = xt.stripline_pair(0.05, 150e-6, n_next=1, n_fext=1, frequency=f)
    raw = channels.cascade(conn, line)
    assert [a.name for a in raw.aggressors] == ["next1", "fext1", "next1", "fext1"]
    combined = xt.cascade_coherent(conn, line)
    assert [(a.kind, a.name) for a in combined.aggressors] == [("next", "next1"), ("fext", "fext1")]
    for kind in ("next", "fext"):
        parts = [a.sdd21 for a in raw.aggressors if a.kind == kind]
        got = next(a for a in combined.aggressors if a.kind == kind)
        np.testing.assert_allclose(got.sdd21, parts[0] + parts[1], rtol=1e-9, atol=1e-15)
    # the connector's FEXT reaches the receiver through the line: |FEXT| |thru_line|
    conn_fext = next(a for a in conn.aggressors if a.kind == "fext")
    fext_conn_referred = next(a for a in raw.aggressors if a.kind == "fext")
    np.testing.assert_allclose(np.abs(fext_conn_referred.sdd21[1:]),
                               np.abs(conn_fext.sdd21[1:] * line.sdd21[1:]), rtol=2e-3)
    # four-port crosstalk survives terminate()
    assert media.terminate(combined, 90.0, 90.0).aggressors[0].nports == 4


def test_cable_channel_reproduces_the_public_802_3dj_ch01_figures():
    """kocsis_3dj_02_2305 CH01 (8 dB host + 1 m 26 AWG + 8 dB host) at 53.125 GHz: FEXT -53 dB
    against a -30.75 dB through (22.25 dB below it), NEXT -75 dB. The FEXT ratio is the
    calibration; the NEXT level follows from the 802.3ck connector figure (-65 dB at 26.56 GHz)."""
    f = np.arange(3001) * 20e6
    ch = xt.host_cable_channel(frequency=f)
    nyq = 53.125e9
    nx, fx = ch.aggressors
    assert ch.insertion_loss_db(nyq) == pytest.approx(16 + 7.74, abs=0.1)  # hosts + library cable assembly
    assert fx.insertion_loss_db(nyq) - ch.insertion_loss_db(nyq) == pytest.approx(53 - 30.75, abs=0.5)
    band = (f > 50e9) & (f < 56e9)  # NEXT ripples: two connectors' contributions beat
    assert 10 * np.log10(np.mean(np.abs(nx.sdd21[band]) ** 2)) == pytest.approx(-75.0, abs=1.5)
    conn = xt.connector_crosstalk(media.connector(frequency=f))[0]
    assert conn.insertion_loss_db(26.5625e9) == pytest.approx(65.0, abs=0.3)


def test_cable_aggressors_mirror_an_asymmetric_plug_and_keep_the_fext_ratio():
    f = np.arange(3001) * 20e6
    plug = channels.cascade(media.connector(frequency=f), media.stripline(0.025, frequency=f, name="paddle"))
    ca = xt.cable_aggressors(plug, 1.0, 26)
    assert [a.name for a in ca.aggressors] == ["next1", "next2", "fext1", "fext2", "fext3"]
    far = channels.cascade(media.stripline(0.025, frequency=f), media.connector(frequency=f))
    np.testing.assert_allclose(ca.sdd21, channels.cascade(plug, media.twinax(1.0, 26, frequency=f), far).sdd21,
                               rtol=1e-9, atol=1e-12)
    nyq = 53.125e9
    fext = next(a for a in ca.aggressors if a.name == "fext1")
    assert fext.insertion_loss_db(nyq) - ca.insertion_loss_db(nyq) == pytest.approx(22.25, abs=0.5)
    with pytest.raises(ChannelError, match="grid"):
        xt.cable_aggressors(plug, 1.0, frequency=np.arange(1001) * 20e6)


# ----------------------------------------------------------------------------- ICN
def _flat_channel(f, mags, kinds):
    """A lossless through with aggressors of flat, known magnitude (a delay as phase)."""
    victim = media.diff_line(0.1, 100.0, dk=2.0, df=0.0, frequency=f)
    freq = rf.Frequency.from_f(f, unit="hz")
    aggs = []
    for i, (m, kind) in enumerate(zip(mags, kinds)):
        s = np.zeros((f.size, 2, 2), dtype=complex)
        s[:, 1, 0] = s[:, 0, 1] = m * np.exp(-2j * np.pi * f * 0.5e-9)
        aggs.append(channels.Channel.from_differential(rf.Network(frequency=freq, s=s, z0=100.0), kind=kind,
                                                       name=f"{kind}{i}"))
    return victim.with_aggressors(*aggs)


def test_icn_of_a_flat_fext_has_the_closed_form_integral():
    fb = 50e9
    f = np.linspace(0, fb, 4001)
    c, a = 10 ** (-40 / 20), 0.5
    ch = _flat_channel(f, [c], ["fext"])
    r = icn.icn(ch, fb, a_ft_v=a, a_nt_v=a, f_f=1e6, f_n=1e6, f_2_hz=fb, f_r=1e6)  # PWF = sinc^2
    # 2/f_b * integral_0^f_b sinc^2(f/f_b) df = 2 (Si(2 pi)/pi - sin^2(pi)/pi^2)
    expected = a * c * np.sqrt(2 * (sici(2 * np.pi)[0] / np.pi))
    assert r.fx_v == pytest.approx(expected, rel=1e-3)
    assert r.nx_v == 0.0 and r.total_v == r.fx_v and (r.n_next, r.n_fext) == (0, 1)
    assert r.icr_db == pytest.approx(40.0, abs=1e-6)


def test_icn_matches_the_com_formula_term_by_term():
    fb, f2 = 106.25e9, 79.6875e9
    f = np.arange(0, 9001) * 10e6  # to 90 GHz
    rng = np.random.default_rng(7)
    mags = [10 ** (rng.uniform(-60, -40) / 20) for _ in range(3)]
    ch = _flat_channel(f, mags, ["next", "fext", "fext"])
    r = icn.icn_preset(ch, "802.3dj_200g")
    last = int(np.argmax(f >= f2))  # COM: up to the first point at or above f_2
    assert f[last] > f2  # (79.6875 GHz is not on this 10 MHz grid)
    sel = np.arange(f.size) <= last
    fs = f[sel]
    x = np.pi * fs / fb
    sinc2 = np.ones_like(fs)
    sinc2[1:] = (np.sin(x[1:]) / x[1:]) ** 2
    ft = 0.2365 / 8e-12
    pwf = sinc2 / (1 + (fs / ft) ** 4) / (1 + (fs / (0.75 * fb)) ** 8)
    fx = np.sqrt(2 * 10e6 / f2 * np.sum(0.45**2 * pwf * (mags[1] ** 2 + mags[2] ** 2)))
    nx = np.sqrt(2 * 10e6 / f2 * np.sum(0.45**2 * pwf * mags[0] ** 2))
    assert r.fx_v == pytest.approx(fx, rel=1e-9)
    assert r.nx_v == pytest.approx(nx, rel=1e-9)
    assert r.total_v == pytest.approx(np.hypot(nx, fx), rel=1e-12)
    assert r.f_last_hz == f[last]
    json.dumps(r.to_dict())


def test_icn_grows_as_sqrt_of_the_number_of_equal_aggressors():
    f = np.arange(0, 4001) * 20e6
    one = icn.icn_preset(xt.host_cable_channel(n_next=1, n_fext=1, frequency=f), "802.3dj_200g")
    many = icn.icn_preset(xt.host_cable_channel(n_next=2, n_fext=3, frequency=f), "802.3dj_200g")
    assert many.nx_v == pytest.approx(np.sqrt(2) * one.nx_v, rel=1e-9)
    assert many.fx_v == pytest.approx(np.sqrt(3) * one.fx_v, rel=1e-9)
    assert many.fx_v > many.nx_v > 0  # cable channels: FEXT dominates


def test_icn_presets_are_the_com_sheet_values():
    ck, dj = icn.ICN_PRESETS["802.3ck_cr"], icn.ICN_PRESETS["802.3dj_200g"]
    assert ck.f_f == pytest.approx(0.59356862745098038, rel=1e-12) and ck.f_n == ck.f_f
    assert dj.f_f == pytest.approx(0.27823529411764708, rel=1e-12) and dj.f_n == dj.f_f
    assert (ck.a_ft_v, ck.a_nt_v, ck.f_2_hz, ck.baud_hz) == (0.6, 0.6, 40e9, 53.125e9)
    assert (dj.a_ft_v, dj.a_nt_v, dj.f_2_hz, dj.baud_hz) == (0.45, 0.45, 79.6875e9, 106.25e9)
    assert icn.ICN_802_3DJ == dj.kwargs() and icn.ICN_802_3CK == ck.kwargs()
    json.dumps(dj.to_dict())


# ----------------------------------------------------------------------------- bad input
def test_bad_input_raises_channel_error():
    f = np.linspace(0, 40e9, 401)
    with pytest.raises(ChannelError, match="length_m"):
        xt.stripline_pair(-0.1, 200e-6, frequency=f)
    with pytest.raises(ChannelError, match="spacing_m"):
        xt.stripline_coupling(-1e-4)
    with pytest.raises(ChannelError, match="spacing_m"):
        xt.microstrip_coupling(0.0)
    with pytest.raises(ChannelError, match="weak-coupling"):
        xt.Coupling(0.5, 0.1)
    with pytest.raises(ChannelError, match="shield_coupling_db"):
        xt.twinax_coupling(-3.0)
    victim = media.stripline(0.05, frequency=f)
    other = xt.line_crosstalk(media.stripline(0.05, frequency=np.linspace(0, 40e9, 201)), xt.Coupling(0.01, 0.01))
    with pytest.raises(ChannelError, match="different frequency grid"):
        xt.with_crosstalk(victim, other)
    with pytest.raises(ChannelError, match="n_next"):
        xt.with_crosstalk(victim, xt.line_crosstalk(victim, xt.Coupling(0.01, 0.01)), n_next=-1)
    with pytest.raises(ChannelError, match="transmission"):
        xt.weak_coupling(f, np.ones(3), 1e-9, xt.Coupling(0.01, 0.01))
    with pytest.raises(ChannelError, match="f_2"):  # data stop below f_2
        icn.icn_preset(xt.stripline_pair(0.05, 200e-6, frequency=f), "802.3dj_200g")
    uneven = np.concatenate([np.linspace(0, 30e9, 301), np.linspace(30.2e9, 90e9, 300)])
    with pytest.raises(ChannelError, match="uniformly spaced"):
        icn.icn_preset(xt.stripline_pair(0.05, 200e-6, frequency=uneven), "802.3dj_200g")
    with pytest.raises(ChannelError, match="preset"):
        icn.icn_preset(victim, "802.3xx")
    with pytest.raises(ChannelError, match="-6 dB"):  # beyond the weak-coupling model
        xt.line_crosstalk(media.diff_line(2.0, df=0.0, frequency=f), xt.Coupling(0.3, -0.3))
