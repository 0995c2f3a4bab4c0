"""Effective return loss (phy.engines.com.erl, IEEE 802.3 93A.5): closed forms on lossless
lines, the gating and weighting, ports and reversal, the real 802.3ck channels against an
independent re-implementation written here, and the report and command-line output."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import skrf as rf
from conftest import shared_file

import channels
from phy import ConfigError, cli
from phy.engines.com import ComParams, ErlParams, effective_return_loss

Z0 = 100.0
F = np.arange(25001) * 10e6  # to 250 GHz: the 10 ps Gaussian edge is 1e-18 there, no extension needed


# ----------------------------------------------------------------------------- lossless networks
def _line(f, z, tau):
    th = 2 * np.pi * f * tau
    return np.stack([np.stack([np.cos(th), 1j * z * np.sin(th)], -1),
                     np.stack([1j * np.sin(th) / z, np.cos(th)], -1)], -2)


def _shunt(f, y):
    y = np.broadcast_to(y, f.shape).astype(complex)
    one, zero = np.ones(f.size, complex), np.zeros(f.size, complex)
    return np.stack([np.stack([one, zero], -1), np.stack([y, one], -1)], -2)


def _channel(f, *abcds, z0=Z0, name="lossless"):
    """A differential two-port from a chain of ABCD matrices, ports at ``z0``."""
    m = abcds[0]
    for x in abcds[1:]:
        m = m @ x
    a, b, c, d = m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1]
    den = a + b / z0 + c * z0 + d
    s = np.stack([np.stack([(a + b / z0 - c * z0 - d) / den, 2 * (a * d - b * c) / den], -1),
                  np.stack([2 / den, (-a + b / z0 - c * z0 + d) / den], -1)], -2)
    return channels.Channel(differential=rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=z0),
                            name=name)


def _mismatch(tau_s, r_ohm=500.0):
    """A matched line of delay ``tau_s`` into a shunt ``r_ohm`` in front of port 2 (100 ohm):
    the load is ``R || 100``."""
    zl = r_ohm * Z0 / (r_ohm + Z0)
    return _channel(F, _line(F, Z0, tau_s), _shunt(F, 1 / r_ohm)), (zl - Z0) / (zl + Z0)


NO_RING = ErlParams.ieee_802_3ck_kr().with_(f_r=None)  # Gaussian edge only: a monotone step


def test_one_mismatch_closed_form():
    """A lossless 100 ohm line of delay tau into a load Z_L = R || 100 ohm. Its reflection is
    Gamma e^{-j 2 w tau} with Gamma = (Z_L - Z0) / (Z_L + Z0), so the TDR is Gamma times the
    edge delayed by 2 tau and settles at Gamma. The PTDR is Gamma (E(t) - E(t - T_b)), E the
    edge's step; with a monotone edge (Gaussian, no Butterworth) its samples one UI apart
    all have the sign of Gamma and add up to Gamma (the sum telescopes to E(inf) - E(-inf)),
    and only three of them exceed 1e-6 Gamma. The worst case of three PAM4 terms, all
    symbols at the extreme, has probability 4^-3 > DER_0 = 1e-4, so the DER_0 quantile is
    that worst case, R = |Gamma|, and ERL = -20 log10 |Gamma|. At 2 tau = 0.8 ns (42.5 UI)
    the reflection lies past the 802.3ck KR ramp (22 UI), where w = 1."""
    ch, gamma = _mismatch(0.4e-9)
    r = effective_return_loss(ch, NO_RING, port=1)
    assert r.erl_db == pytest.approx(-20 * np.log10(abs(gamma)), abs=0.01)
    settled = (r.time_s > 1.0e-9) & (r.time_s < 5e-9)
    assert np.allclose(r.tdr[settled], gamma, atol=1e-6 * abs(gamma))
    assert np.allclose(r.impedance_ohm()[settled], 500 * Z0 / 600, rtol=1e-5)
    # the 802.3ck filters (Butterworth at 0.75 f_b, raised cosine to f_b) have unit DC gain:
    # the settled TDR is Gamma whatever they do to the edge
    full = effective_return_loss(ch, ErlParams.ieee_802_3ck_kr(), port=1)
    later = (full.time_s > 2e-9) & (full.time_s < 5e-9)  # the Butterworth rings for a few hundred ps
    assert np.allclose(full.tdr[later], gamma, atol=1e-5 * abs(gamma))
    assert abs(full.erl_db - r.erl_db) < 0.1  # their ringing adds little to one reflection


def test_a_long_impedance_step_settles_at_its_reflection_coefficient():
    """A 100 ohm line, then 40 ns of 120 ohm line (its far end at 80.8 ns, past the 66 ns
    PTDR): the TDR settles at (120 - 100) / (120 + 100) and ERL = -20 log10 of it (as above).
    The frequency step is 1 MHz so that the far-end echo is resolved, not aliased."""
    f = np.arange(250001) * 1e6
    ch = _channel(f, _line(f, Z0, 0.4e-9), _line(f, 120.0, 40e-9))
    gamma = 20 / 220
    r = effective_return_loss(ch, NO_RING, port=1)
    mid = (r.time_s > 2e-9) & (r.time_s < 60e-9)
    assert np.allclose(r.tdr[mid], gamma, atol=1e-4 * gamma)
    assert r.erl_db == pytest.approx(-20 * np.log10(gamma), abs=0.01)


@pytest.mark.parametrize("tau_ui", [1.0, 5.0, 8.0])
def test_the_weighting_ramp(tau_ui):
    """A reflection inside the ramp: its PTDR is centred half a UI after 2 tau, at x UI after
    T_fx = 0, where w = rho_x (1 + rho_x) exp(-((x - N_bx - 1) / (N_bx + 1))^2) (G_rr,
    beta_x = 0); w changes little over the pulse, so R = |Gamma| w(x)."""
    p = NO_RING
    tb = 1 / p.baud_hz
    ch, gamma = _mismatch(tau_ui * tb)
    x, k = 2 * tau_ui + 0.5, p.n_bx + 1
    w = p.rho_x * (1 + p.rho_x) * np.exp(-(((x - k) / k) ** 2))
    r = effective_return_loss(ch, p, port=1)
    assert r.erl_db == pytest.approx(-20 * np.log10(abs(gamma) * w), abs=0.02)
    assert r.weight[np.searchsorted(r.time_s, 0.0)] == pytest.approx(p.rho_x * (1 + p.rho_x) * np.exp(-1), rel=1e-9)


def test_beta_x_lowers_the_early_weights():
    """G_loss = 10^(beta_x (t - t_k) / 20): a reflection 11 UI before t_k is weighted
    10^(-beta_x 11 T_b / 20) less, ERL rises by beta_x 11 T_b dB."""
    p = NO_RING
    tb = 1 / p.baud_hz
    ch, _ = _mismatch(5.25 * tb)  # centred at x = 11
    beta = 0.2 / tb  # 0.2 dB per UI
    a = effective_return_loss(ch, p, port=1).erl_db
    b = effective_return_loss(ch, p.with_(beta_x_db_per_s=beta), port=1).erl_db
    assert b - a == pytest.approx(0.2 * 11, abs=0.05)


def test_a_reflection_before_t_fx_is_gated_out():
    p = ErlParams.ieee_802_3ck_cr().with_(f_r=None)  # T_fx = 0.3 ns
    ch, _ = _mismatch(0.05e-9)  # at 0.1 ns
    assert effective_return_loss(ch, p, port=1).erl_db > 200
    with_filters = effective_return_loss(ch, ErlParams.ieee_802_3ck_cr(), port=1).erl_db
    assert with_filters > 60  # only the Butterworth's ringing crosses T_fx


def test_a_matched_channel_has_a_very_large_erl():
    ch = _channel(F, _line(F, Z0, 1e-9))
    r1, r2 = effective_return_loss(ch)
    assert r1.erl_db > 200 and r2.erl_db > 200
    assert r1.passes and r2.passes


def test_the_tdr_reference_is_renormalised_to_2_z_t():
    """A 100 ohm line seen from an 85 ohm TDR (Z_t = 42.5 ohm, the far end also 85 ohm): the
    TDR reads (100 - 85) / (100 + 85) until the far end at 2 tau."""
    ch = _channel(F, _line(F, Z0, 1e-9))
    r = effective_return_loss(ch, NO_RING.with_(z_t_ohm=42.5), port=1)
    inside = (r.time_s > 0.2e-9) & (r.time_s < 1.8e-9)
    assert np.allclose(r.tdr[inside], 15 / 185, atol=1e-6)
    assert np.allclose(r.impedance_ohm()[inside], 100.0, rtol=1e-5)


def test_ports_differ_and_reversal_swaps_them():
    """A 20 fF capacitance 50 ps from port 1 and a 5 fF one 50 ps from port 2, a line between
    them with 10 dB of flat loss: each port's TDR sees its own end's capacitance undimmed and
    the other's 20 dB down, so port 1 reflects more; the same structure turned round
    (``Channel.reversed``) swaps the two."""
    y = lambda c: 2j * np.pi * F * c  # noqa: E731
    gl = 10 / 8.686 + 2j * np.pi * F * 1e-9
    lossy = np.stack([np.stack([np.cosh(gl), Z0 * np.sinh(gl)], -1), np.stack([np.sinh(gl) / Z0, np.cosh(gl)], -1)], -2)
    ch = _channel(F, _line(F, Z0, 50e-12), _shunt(F, y(20e-15)), lossy, _shunt(F, y(5e-15)), _line(F, Z0, 50e-12))
    p1, p2 = effective_return_loss(ch)
    assert p1.erl_db < p2.erl_db - 6
    q1, q2 = effective_return_loss(ch.reversed())
    assert q1.erl_db == pytest.approx(p2.erl_db, abs=1e-6)
    assert q2.erl_db == pytest.approx(p1.erl_db, abs=1e-6)


# ----------------------------------------------------------------------------- real channels
def _oracle(path, port, p: ErlParams, bin_v=1e-4):
    """ERL written out step by step as the reference COM code does it, sharing nothing with
    the module: scikit-rf reads the file; the differential reflection by hand (the shared
    files route 1->2 and 3->4); an inverse DFT on the file's own grid, zero above it, to
    M f_b / 2; the edge delayed 500 ps; the filters' formulas written again; the PTDR as a
    running sum of the impulse; the weights one time at a time; the phase of largest norm;
    the distribution by nearest-bin convolution of each term's PAM4 values, terms below
    one bin dropped (as the code's ``get_pdf_from_sampled_signal``)."""
    n = rf.Network(str(path))
    s = n.s[:, [0, 2, 1, 3]][:, :, [0, 2, 1, 3]]
    i, j = (0, 1) if port == 1 else (2, 3)
    gamma = 0.5 * (s[:, i, i] - s[:, i, j] - s[:, j, i] + s[:, j, j])
    f = n.f
    assert f[0] == 0
    fb, M = p.baud_hz, p.samples_per_ui
    df = f[1] - f[0]
    nf = int(round(M * fb / 2 / df)) + 1
    fo = np.arange(nf) * df
    g = np.zeros(nf, complex)
    g[: f.size] = gamma
    pre = 500e-12
    sb = 1j * fo / (p.f_r * fb)
    fr = p.f_r * fb
    win = np.where(fo < fr, 1.0, np.where(fo > fb, 0.0, 0.5 * np.cos(2 * np.pi * (fo - fb) / (2 * (fb - fr)) - np.pi) + 0.5))
    h = (g * np.exp(-2 * (np.pi * fo * p.t_r_s / 1.6832) ** 2) * np.exp(-2j * np.pi * fo * pre) * win
         / (sb**4 + 2.613126 * sb**3 + 3.414214 * sb**2 + 2.613126 * sb + 1))
    h[0], h[-1] = h[0].real, h[-1].real
    ir = np.fft.irfft(h, 2 * (nf - 1))
    t = np.arange(ir.size) / (2 * (nf - 1) * df) - pre
    pulse = np.convolve(ir, np.ones(M))[: ir.size]
    ui, t_fx, k = 1 / fb, p.t_fx_s[port - 1], p.n_bx + 1

    def w(tt):
        x = (tt - t_fx) / ui
        if x < 0 or x > p.n_ui:
            return 0.0
        return p.rho_x * (1 + p.rho_x) * np.exp(-((x - k) ** 2) / k**2) if x <= k else 1.0

    sel = (t >= 0) & (t <= t_fx + (p.n_ui + 1) * ui)
    r = pulse[sel] * np.array([w(x) for x in t[sel]])
    best = max((r[ph::M] for ph in range(M)), key=lambda x: float(np.sqrt(np.sum(x * x))))
    terms = [np.round(abs(v) * np.linspace(-1, 1, 4) / bin_v).astype(int) for v in best if abs(v) > bin_v]
    half = int(sum(np.abs(q).max() for q in terms)) + 2
    pmf = np.zeros(2 * half + 1)
    pmf[half] = 1.0
    for q in terms:
        new = np.zeros_like(pmf)
        for sh in q:
            if sh >= 0:
                new[sh:] += pmf[: pmf.size - sh]
            else:
                new[:sh] += pmf[-sh:]
        pmf = new / 4
    first = int(np.argmax(np.cumsum(pmf) >= p.der0))
    return -20 * np.log10((half - first) * bin_v)


@pytest.mark.parametrize("name, preset", [("CA_19p75dB_thru.s4p", "802.3ck_cr"), ("CA_19p75dB_thru.s4p", "802.3ck_kr"),
                                          ("DPO_4in_Meg7_THRU.s4p", "802.3ck_kr")])
def test_real_channels_against_an_independent_reimplementation(name, preset):
    """No published ERL of these files was found (PyChOpMarg has no ERL): the oracle is
    :func:`_oracle`, the reference code's steps written again. They agree within 0.03 dB (the
    module lumps terms below 0.1 % of the largest as a Gaussian where the oracle drops those
    below 1e-4, and interpolates where the oracle reads the file's grid)."""
    path = shared_file(f"ieee802.3ck/{name}")
    p = ErlParams.preset(preset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(path)
    ours = effective_return_loss(ch, p)
    for r in ours:
        assert r.erl_db == pytest.approx(_oracle(path, r.port, p), abs=0.03)
        assert r.limit_db == p.limit_db and r.passes == (r.erl_db >= p.limit_db)
        assert not any("cut" in n or "extended" in n for n in r.notes)


def test_a_real_channel_turned_round_swaps_its_ports():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(shared_file("ieee802.3ck/CA_19p75dB_thru.s4p"))
    a, b = effective_return_loss(ch, ErlParams.ieee_802_3ck_cr())
    c, d = effective_return_loss(ch.reversed(), ErlParams.ieee_802_3ck_cr())
    assert c.erl_db == pytest.approx(b.erl_db, abs=1e-9) and d.erl_db == pytest.approx(a.erl_db, abs=1e-9)
    assert abs(a.erl_db - b.erl_db) > 0.3  # the two ends of this cable assembly differ


# ----------------------------------------------------------------------------- parameters and input
def test_presets_carry_the_sheet_values():
    kr, cr, dj = ErlParams.ieee_802_3ck_kr(), ErlParams.ieee_802_3ck_cr(), ErlParams.ieee_802_3dj_kr()
    assert (kr.n_ui, kr.n_bx, kr.t_fx_s, kr.limit_db) == (3500, 21, (0.0, 0.0), 9.7)
    assert (cr.n_ui, cr.n_bx, cr.t_fx_s, cr.limit_db) == (4500, 0, (0.3e-9, 0.3e-9), 8.25)
    assert (dj.baud_hz, dj.n_ui, dj.n_bx, dj.limit_db) == (106.25e9, 1000, 24, 10.0)
    for p in (kr, cr, dj, ErlParams.ieee_802_3dj_cr()):
        assert (p.t_r_s, p.f_r, p.rho_x, p.beta_x_db_per_s, p.der0, p.z_t_ohm) == (10e-12, 0.75, 0.618, 0.0, 1e-4, 50.0)
        assert "sheet" in p.source
    com = ComParams.ieee_802_3dj_kr()
    e = ErlParams.from_com(com)
    assert (e.baud_hz, e.f_r, e.der0, e.z_t_ohm, e.n_bx) == (com.baud_hz, com.f_r, com.der0, com.r_0, 24)
    assert ErlParams(name="x", baud_hz=53.125e9, t_fx_s=1e-10).t_fx_s == (1e-10, 1e-10)


@pytest.mark.parametrize("bad", [dict(port=3), dict(port="1"), dict(port=True), dict(params="802.3ck_kr")])
def test_bad_arguments_raise_config_error(bad):
    ch, _ = _mismatch(0.4e-9)
    with pytest.raises(ConfigError):
        effective_return_loss(ch, **bad)


@pytest.mark.parametrize("bad", [dict(n_ui=0), dict(t_fx_s=(0, 1, 2)), dict(rho_x=1.5), dict(levels=1),
                                 dict(f_r=0.0), dict(der0=0.0), dict(t_fx_s=-1e-9), dict(baud_hz=float("nan"))])
def test_bad_parameters_raise_config_error(bad):
    with pytest.raises(ConfigError):
        ErlParams.ieee_802_3ck_kr().with_(**bad)


def test_unusable_channels_are_refused_or_noted():
    with pytest.raises(ConfigError, match="Channel"):
        effective_return_loss("a.s4p")
    f = np.arange(2001) * 10e6  # to 20 GHz, below the 26.6 GHz Nyquist
    short = _channel(f, _line(f, Z0, 1e-9), _shunt(f, 1 / 500))
    with pytest.raises(ConfigError, match="Nyquist"):
        effective_return_loss(short)
    r = effective_return_loss(short, require_nyquist=False, port=1)
    assert r.extrapolated_above_hz == pytest.approx(20e9) and any("extended" in n for n in r.notes)
    coarse = np.arange(61) * 1e9  # 1 GHz steps: 1 ns of time span
    r = effective_return_loss(_channel(coarse, _line(coarse, Z0, 0.2e-9), _shunt(coarse, 1 / 500)), port=1)
    assert any("cut at 1 ns" in n for n in r.notes) and np.isfinite(r.erl_db)
    with pytest.raises(ConfigError, match="too long"):
        effective_return_loss(_mismatch(0.4e-9)[0], ErlParams.ieee_802_3ck_kr().with_(n_ui=100_000, samples_per_ui=64))


# ----------------------------------------------------------------------------- report and command line
def test_channel_command_prints_erl_per_port(capsys):
    path = shared_file("ieee802.3ck/CA_19p75dB_thru.s4p")
    assert cli.main(["channel", str(path), "--baud-gbd", "53.125", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (erl,) = out["erl"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(path)
    want = effective_return_loss(ch, ErlParams.ieee_802_3ck_cr())
    assert erl["preset"] == "802.3ck CR" and erl["limit_db"] == 8.25
    assert [x["erl_db"] for x in erl["ports"]] == pytest.approx([r.erl_db for r in want], abs=1e-9)
    assert cli.main(["channel", str(path), "--erl-preset", "802.3ck_kr"]) == 0
    text = capsys.readouterr().out
    kr = effective_return_loss(ch, ErlParams.ieee_802_3ck_kr())
    assert f"ERL (802.3ck KR)  port 1 {kr[0].erl_db:.2f} dB, port 2 {kr[1].erl_db:.2f} dB" in text
    assert "limit 9.7 dB: pass" in text


def test_channel_command_erl_options(capsys):
    assert cli.main(["channel", "twinax_1m_26awg", "--erl-preset", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["erl"] == []
    assert cli.main(["channel", "twinax_1m_26awg", "--erl-preset", "bogus"]) == 2
    assert "unknown ERL preset" in capsys.readouterr().err


def test_link_report_carries_erl_per_port():
    from phy import LinkSpec, evaluate_link

    ch = channels.library.get("twinax_1m_26awg")
    rep = evaluate_link(LinkSpec(channel=ch, lane_rate_bps=106.25e9, modulation="pam4"))
    c = rep.segments[0].channel
    want = effective_return_loss(ch, ErlParams.ieee_802_3ck_cr())
    assert c["erl_preset"] == "802.3ck CR"
    assert [c["erl_db"]["port1"], c["erl_db"]["port2"]] == pytest.approx([r.erl_db for r in want], abs=1e-9)
    assert "ERL" in rep.summary()
