"""Annex 178A's Rx FFE by MMSE at every setting, and 93A's package test cases."""

from pathlib import Path

import numpy as np
import pytest

import channels
import channels.crosstalk
from channels import media
from phy.engines.com import ComParams, channel_margin, mmse
from phy.engines.com import margin as mg
from phy.engines.com.params import PackageCase, PackageLine

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "channels" / "ieee802.3ck"
VAR_X = 5 / 9  # PAM4's sigma_X^2


def test_mmse_of_a_pulse_without_isi_is_the_noise_over_the_cursor():
    """A lone cursor ``a`` in white noise of variance s^2: the FFE is ``1/a`` at its main tap,
    the DFE has nothing to cancel, and MSE = s^2 / a^2 (R = (a^2 + s^2/sigma_X^2) I)."""
    a, s2, nw, dw = 0.2, 1e-4, 9, 3
    h = np.zeros(40)
    h[10] = a
    r_n = np.zeros(nw)
    r_n[0] = s2
    w, b, fom = mmse.solve_at(h, 10, r_n, dw, nw, 1, np.array([-1.0]), np.array([1.0]), np.inf, VAR_X, 1.0, 4)
    expected = np.zeros(nw)
    expected[dw] = 1 / a
    np.testing.assert_allclose(w, expected, atol=1e-12)
    assert b == pytest.approx([0.0], abs=1e-12)
    assert fom == pytest.approx(20 * np.log10(1 / 3 / np.sqrt(s2 / a**2)), abs=1e-9)


def test_dfe_limit_is_respected_and_costs_mse():
    """A post-cursor of 0.95 the cursor with the DFE limited to 0.5: the DFE tap sits at its
    limit and the FFE takes the rest, at a higher MSE than with the limit at 1."""
    h = np.zeros(40)
    h[10], h[11] = 0.2, 0.19
    r_n = np.zeros(7)
    r_n[0] = 1e-5
    _, b_free, f_free = mmse.solve_at(h, 10, r_n, 2, 7, 1, np.array([0.0]), np.array([1.0]), np.inf, VAR_X, 1, 4)
    _, b_lim, f_lim = mmse.solve_at(h, 10, r_n, 2, 7, 1, np.array([0.0]), np.array([0.5]), np.inf, VAR_X, 1, 4)
    assert b_free[0] == pytest.approx(0.95, abs=0.01)
    assert b_lim[0] == 0.5 and f_lim < f_free - 1


@pytest.fixture(scope="module")
def dj_pulses():
    """The pulses of a lossy stripline with one NEXT and one FEXT aggressor at one CTLE
    setting of the D3.3 KR set."""
    p = ComParams.ieee_802_3dj_kr().with_(package_cases=())
    thru = media.stripline(0.25)
    nxt, fxt = channels.crosstalk.connector_crosstalk(media.stripline(0.02), next_db=-40.0, fext_db=-45.0)
    ch = thru.with_aggressors(nxt, fxt)
    g = mg.Grid(ch, p, None, None)
    chans = [(ch, "through", p.a_v)] + [(x, x.kind, p.a_ne if x.kind == "next" else p.a_fe) for x in ch.aggressors]
    spectra = [g.base * mg._terminated_transfer(c, g.f, p, kind, {}) * amp for c, kind, amp in chans]
    hc = mg._ctle(p, -6.0, -2.0).response(g.f)
    return p, g, hc, g.pulses(spectra, hc), [k for _, k, _ in chans]


def test_kernel_equals_the_dense_kkt_solution(dj_pulses):
    """Every setting's FOM from the kernel (quadratic forms in the Tx taps, Cholesky and
    Woodbury) equals the KKT system solved by numpy at that setting's cursor, with the
    noise written out directly; over settings where the DFE and the FFE limits bind and
    where they do not. (To 1e-5 dB: the kernel's autocorrelations are the record's circular
    ones, the dense ``H^T H`` the linear one; they differ by the record's tails.)"""
    p, g, hc, pulses, kinds = dj_pulses
    tx = p._tx_grid()[::97]
    for lim in (0.7, np.inf):
        q = p.with_(rx_ffe_limit=lim)
        fom, cur = mmse.grid_foms(q, pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, tx)
        M, nw = g.M, q.rx_ffe_pre + 1 + q.rx_ffe_post
        for t in range(tx.shape[0]):
            taps, s = tx[t], int(cur[t])
            thru = sum(c * np.roll(pulses[0], (i - 3) * M) for i, c in enumerate(taps))
            r_n = mmse.noise_at(q, pulses, kinds, g.hr * hc, g.f, M, g.var_x, taps, s)
            _, _, f = mmse.solve_at(thru[s % M :: M], s // M, r_n, q.rx_ffe_pre, nw, 1, np.array(q.dfe_min),
                                    np.array(q.dfe_max), lim, g.var_x, q.r_lm, q.levels)
            assert fom[t] == pytest.approx(f, abs=1e-5)


def test_each_setting_takes_its_best_sampling_time(dj_pulses):
    """The search's FOM at a setting is the best of the dense solutions over the sampling
    range, and a narrower range never does better; pruning keeps the best setting."""
    p, g, hc, pulses, kinds = dj_pulses
    tx = p._tx_grid()[::211]
    wide, cur = mmse.grid_foms(p, pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, tx)
    narrow, _ = mmse.grid_foms(p.with_(ts_range_samples=(6, 16)), pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, tx)
    assert np.all(narrow <= wide + 1e-12) and np.any(narrow < wide - 1e-6)
    pruned, _ = mmse.grid_foms(p.with_(ts_search="pruned"), pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, tx)
    assert np.all(pruned <= wide + 1e-12) and pruned.max() == wide.max()


def test_package_cases_give_the_lowest_com():
    ch = media.stripline(0.2)
    p = ComParams.ieee_802_3ck_kr().with_(g_dc_db=(0.0, -6.0), g_dc2_db=(0.0,), c_m3=(0.0,), c_m2=(0.0,),
                                          c_m1=(0.0, -0.1), c_p1=(0.0,))
    r = channel_margin(ch, p)
    alone = {c.name: channel_margin(ch, p.with_(package_cases=(c,))).com_db for c in p.package_cases}
    assert r.case_com_db == pytest.approx(alone)
    assert r.com_db == min(alone.values()) and r.package_case == min(alone, key=alone.get)
    assert any(r.package_case in n for n in r.notes)
    # a longer package at every end loses margin
    longer = PackageCase("80 mm", *(PackageLine((80e-3, 1.8e-3), (87.5, 92.5), 1e-7, 9.909e-4, 2.772e-4),) * 4)
    r2 = channel_margin(ch, p.with_(package_cases=p.package_cases + (longer,)))
    assert r2.package_case == "80 mm" and r2.com_db < r.com_db


def test_a_host_channel_adds_its_loss():
    f = np.linspace(0, 60e9, 601)
    p = ComParams.ieee_802_3dj_cr("CA-D").cases()[0][1]
    with_host = p.package(f, "rx")
    no_host = p.with_(lines=tuple(PackageLine(ln.lengths_m, ln.z_c_ohm, ln.gamma0_per_mm, ln.a1, ln.a2)
                                  for ln in p.lines)).package(f, "rx")
    k = np.searchsorted(f, 53.125e9)
    assert with_host.insertion_loss_db(f)[k] > no_host.insertion_loss_db(f)[k] + 0.5


@pytest.mark.skipif(not SHARED.exists(), reason="shared channels absent")
def test_matches_pychopmarg_on_its_matlab_comparison_sheet():
    """PyChOpMarg 3.4.0 on C2C_PCB_SYSVIA_12dB_thru with its repository's
    config_com_ieee8023dj_PyChOpMarg_vs_MATLAB.xls (``benchmarks/bench_com_dj.py``, part A:
    ``peer_pychopmarg.py --preset dj-vs-matlab``): COM 0.256 dB, FOM 11.120 dB."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from peer_configs import vs_matlab_params
    ch = channels.load(SHARED / "C2C_PCB_SYSVIA_12dB_thru.s4p")
    r = channel_margin(ch, vs_matlab_params())
    assert r.com_db == pytest.approx(0.256, abs=0.1)
    assert r.fom_db == pytest.approx(11.120, abs=0.1)


def test_floating_dfe_banks_sit_on_the_reflections():
    """Two echoes at 18-20 UI and 31-32 UI after the cursor (post-cursors beyond the 12 fixed
    taps): three banks of three cover them, each tap h/h0 clipped to 0.05, the rest zero;
    then the tail from 25 UI is held to an RSS of 0.02."""
    from phy.engines.com._kernels import floating_dfe
    h0, nd = 1.0, 12
    h = np.zeros(40 - nd)  # post-cursors 13 .. 40
    for ui, v in {18: 0.03, 19: 0.06, 20: 0.02, 31: -0.04, 32: -0.01}.items():
        h[ui - nd - 1] = v
    b = floating_dfe(h, h0, nd, 3, 3, 0.05, 0, np.inf)
    taps = {nd + 1 + q: v for q, v in enumerate(b) if v != 0}
    assert taps == pytest.approx({18: 0.03, 19: 0.05, 20: 0.02, 31: -0.04, 32: -0.01})
    assert np.count_nonzero(b) <= 9
    bt = floating_dfe(h, h0, nd, 3, 3, 0.05, 25, 0.02)
    tail = [v for q, v in enumerate(bt) if nd + 1 + q >= 25]
    assert np.sqrt(np.sum(np.square(tail))) == pytest.approx(0.02)
    assert bt[19 - nd - 1] == b[19 - nd - 1]  # before the tail: untouched


def test_floating_dfe_raises_com_on_a_channel_with_a_reflection():
    """A 30 mm section at 70 ohm between two lines: its echo (twice its 0.18 ns) lands about
    20 UI after the cursor, out of reach of the 12 fixed taps; the floating banks take part of it, in the
    search (the FOM) and in COM."""
    line = media.stripline(0.15)
    echo = channels.cascade(line, media.stripline(0.03, 70.0), line)
    p = ComParams.ieee_802_3ck_kr().with_(package_cases=(), g_dc_db=(0.0, -4.0), g_dc2_db=(0.0,), c_m3=(0.0,),
                                          c_m2=(0.0,), c_m1=(0.0, -0.1), c_p1=(0.0, -0.1))
    with_f = channel_margin(echo, p)
    without = channel_margin(echo, p.with_(dfe_float_groups=0))
    assert with_f.dfe_floating and all(abs(v) <= 0.05 + 1e-12 for v in with_f.dfe_floating.values())
    assert all(nd > 12 for nd in with_f.dfe_floating)
    assert with_f.fom_db > without.fom_db and with_f.com_db > without.com_db


def test_quantiser_step_and_its_noise():
    """178A-29/30 on a lone cursor ``a``: the PAM signal reaches -a with probability 1/4, so
    V_qc = a and the step is 2a / (2^N_qb - 1); a 6-bit quantiser's noise lowers COM."""
    p = ComParams.ieee_802_3dj_kr()
    h = np.zeros(64)
    h[10] = 0.2
    assert mmse.quant_step(p, h, 1e-12) == pytest.approx(2 * 0.2 / 63, rel=2e-3)
    ch = media.stripline(0.2)
    q = p.with_(package_cases=(), g_dc_db=(0.0, -6.0), g_dc2_db=(0.0,), c_m2=(0.0,), c_m1=(0.0, -0.1), c_p1=(0.0,),
                rx_ffe_float_groups=0)
    with_q = channel_margin(ch, q.with_(adc_bits=4))
    without = channel_margin(ch, q.with_(adc_bits=0))
    assert with_q.com_db < without.com_db and with_q.sigmas_v["rx"] > without.sigmas_v["rx"]
    assert any("quantisation" in n for n in with_q.notes)


def test_rx_noise_autocorrelation_is_the_cosine_sum(dj_pulses):
    """93A-35 per UI lag, ``eta_0 sum_{f>0} |H|^2 cos(2 pi f l UI) df``, as one inverse DFT."""
    p, g, hc, _, _ = dj_pulses
    h = g.hr * hc
    direct = [p.eta0_v2_per_hz * np.sum(np.abs(h[1:]) ** 2 * np.cos(2 * np.pi * g.f[1:] * lag / g.fb)) * g.df
              for lag in range(20)]
    np.testing.assert_allclose(mmse.rx_noise_autocorr(p.eta0_v2_per_hz, h, g.f, g.M, 20), direct, rtol=1e-9,
                               atol=1e-12 * abs(direct[0]))


def test_search_sizes_beyond_a_reference_receiver_are_refused():
    from phy.errors import ConfigError

    ch = media.stripline(0.1)
    p = ComParams.ieee_802_3dj_kr()
    for bad, match in ((dict(rx_ffe_span_ui=10_000), "rx_ffe_span_ui"), (dict(rx_ffe_post=500), "rx_ffe_post"),
                       (dict(adc_bits=40), "adc_bits"), (dict(ts_range_samples=(5, -5)), "ts_range_samples"),
                       (dict(ts_range_samples=(-1000, 0)), "ts_range_samples"), (dict(mmse_candidates=0), "mmse"),
                       (dict(rx_ffe_search="all"), "rx_ffe_search")):
        with pytest.raises(ConfigError, match=match):
            channel_margin(ch, p.with_(**bad))
    with pytest.raises(ConfigError, match="dfe_float_span_ui"):
        channel_margin(ch, ComParams.ieee_802_3ck_kr().with_(dfe_float_span_ui=5))
