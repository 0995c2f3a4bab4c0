"""Pulse and step responses: exact peak and area, DC gain, filters, alignment, reference."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import channels
from channels import media
from channels.response import rx_butterworth, tx_rise_filter

from conftest import shared_file

C0 = 299_792_458.0


def _ideal(length=0.0, frequency=None):
    return media.diff_line(length, 100, dk=1.0, df=0, zcomm_ohm=25, frequency=frequency)


def test_ideal_channel_returns_the_rectangle_exactly():
    """No window: peak 1, area one UI, the rectangle where it was launched."""
    pr = _ideal().pulse_response(53.125e9, 16)
    ones = np.flatnonzero(pr.samples > 0.5)
    assert ones.size == 16
    np.testing.assert_allclose(pr.samples[ones], 1.0, atol=1e-6)
    np.testing.assert_allclose(np.delete(pr.samples, ones), 0.0, atol=1e-6)
    assert pr.time_s[ones[0]] == pytest.approx(0.0, abs=1e-15)
    assert pr.area_vs == pytest.approx(1 / 53.125e9, rel=1e-6)
    assert pr.main_cursor == pytest.approx(1.0, abs=1e-6)


@settings(max_examples=10, deadline=None)
@given(length=st.floats(0.05, 2.0), awg=st.sampled_from([24, 26, 30]), phase=st.integers(0, 31))
def test_symbol_spaced_sum_equals_dc_gain_at_any_phase(length, awg, phase):
    ch = media.twinax(length, awg, frequency=np.arange(0, 6001) * 10e6)
    pr = ch.pulse_response(106.25e9, 32, rise_time_s=5e-12)
    assert pr.ui_sum(phase) == pytest.approx(ch.sdd21[0].real, rel=1e-9)
    assert pr.area_vs == pytest.approx(ch.sdd21[0].real / 106.25e9, rel=1e-9)


def test_pulse_is_delayed_by_the_line():
    tau = 0.3 * np.sqrt(3.0) / C0
    ch = media.diff_line(0.3, 100, dk=3.0, df=0, zcomm_ohm=25)
    pr = ch.pulse_response(53.125e9, 32, rise_time_s=8e-12)
    # the peak of a symmetric smoothed rectangle sits half a UI after the delay
    assert pr.delay_s == pytest.approx(tau + 0.5 / 53.125e9, abs=1.5 * pr.dt_s)


def test_rise_time_filter_has_the_stated_20_80_rise_time():
    tr = 12e-12
    ch = _ideal(frequency=np.arange(0, 20001) * 10e6)
    step = ch.step_response("sdd21", dt_s=0.1e-12, duration_s=1e-9, rise_time_s=tr)
    y, t = step.samples, step.time_s
    assert t[0] < -3 * tr and abs(y[0]) < 1e-9  # the record starts before the step
    half = y.size // 2
    t20 = np.interp(0.2, y[:half], t[:half])
    t80 = np.interp(0.8, y[:half], t[:half])
    assert (t20 + t80) / 2 == pytest.approx(0.0, abs=0.2e-12)  # centred on the launch
    assert t80 - t20 == pytest.approx(tr, rel=0.01)
    assert abs(tx_rise_filter(np.array([0.0]), tr)[0] - 1) < 1e-15


def test_butterworth_is_3db_at_its_bandwidth():
    h = rx_butterworth(np.array([0.0, 40e9, 400e9]), 40e9, 4)
    assert abs(h[0]) == pytest.approx(1.0)
    assert abs(h[1]) == pytest.approx(1 / np.sqrt(2), rel=1e-9)
    assert abs(h[2]) == pytest.approx(1e-4, rel=1e-6)  # 80 dB per decade
    # IEEE 802.3 93A-20 writes the 4th-order form out: compare
    x = 0.6
    com = 1 / (1 - 3.414214 * x**2 + x**4 + 2j * 1.613126 * 0 + 1j * 2.613126 * (x - x**3))
    assert rx_butterworth(np.array([0.6 * 40e9]), 40e9, 4)[0] == pytest.approx(com, rel=1e-5)


def test_pulse_from_the_default_grid_matches_one_built_on_the_full_grid():
    """The grid machinery (resampling to the pulse grid and extending past 120 GHz) against
    the same physics evaluated directly on the pulse's own frequency grid."""
    baud, spu, n_ui = 106.25e9, 16, 512
    full = np.fft.rfftfreq(n_ui * spu, 1 / (baud * spu))
    coarse = media.twinax(1.0)  # DC..120 GHz, 10 MHz steps
    exact = media.twinax(1.0, frequency=full)
    kw = dict(rise_time_s=6e-12, rx_bandwidth_hz=0.75 * baud, n_ui=n_ui)
    a = coarse.pulse_response(baud, spu, **kw)
    b = exact.pulse_response(baud, spu, **kw)
    assert a.main_index == b.main_index
    assert np.max(np.abs(a.samples - b.samples)) < 2e-3 * b.main_cursor


def test_cursors_are_symbol_spaced_samples_around_the_main_one():
    ch = channels.library.get("chip_to_module")
    pr = ch.pulse_response(106.25e9, 32)
    c = pr.cursors(n_pre=3, n_post=12)
    assert c.size == 16 and c[3] == pr.main_cursor
    assert c[3] == max(c)
    np.testing.assert_array_equal(c[4:], pr.samples[pr.main_index + 32 : pr.main_index + 32 * 13 : 32])
    far = pr.cursors(0, pr.samples.size)  # beyond the record: zeros
    assert far[-1] == 0.0


def test_slow_plain_numpy_reference():
    """Direct evaluation of the continuous-time pulse, sum_k H(f_k) P(f_k) e^{j2 pi f_k t},
    at the cursor times, against the FFT path."""
    baud, spu = 53.125e9, 4  # the pulse grid then ends at 106 GHz, inside the channel's data
    ch = media.stripline(0.1, frequency=np.arange(0, 12001) * 10e6)
    pr = ch.pulse_response(baud, spu, n_ui=256)
    n = pr.samples.size
    f = np.fft.rfftfreq(n, pr.dt_s)
    assert f[-1] <= ch.f[-1]
    h = np.interp(f, ch.f, ch.sdd21.real) + 1j * np.interp(f, ch.f, ch.sdd21.imag)
    k = np.arange(n)[:, None]
    rect = np.exp(-2j * np.pi * f[None, :] * k * pr.dt_s)[:spu].sum(axis=0)
    idx = pr.main_index + spu * np.arange(-2, 6)
    t = pr.time_s[idx]
    w = np.full(f.size, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    ref = (w[None, :] * h[None, :] * rect[None, :] * np.exp(2j * np.pi * f[None, :] * t[:, None])).real.sum(axis=1) / n
    # the only difference: linear vs cubic interpolation of a slowly varying channel
    np.testing.assert_allclose(pr.samples[idx], ref, atol=2e-3 * pr.main_cursor)


def test_aggressor_pulses_share_the_time_axis_and_scale():
    thru = media.stripline(0.2)
    xt = thru.single_ended.copy()
    xt.s = xt.s * 0.01
    ch = thru.with_aggressors(channels.Channel(xt, name="fx", kind="fext"))
    pr = ch.pulse_response(53.125e9, 16)
    (a,) = pr.aggressors
    np.testing.assert_allclose(a.samples, 0.01 * pr.samples, atol=1e-12)
    assert a.t0_s == pr.t0_s and a.dt_s == pr.dt_s and a.kind == "fext"
    np.testing.assert_allclose(a.cursors(1, 3, phase_index=pr.main_index), 0.01 * pr.cursors(1, 3), atol=1e-12)


def test_data_below_nyquist_are_refused_unless_asked():
    ch = media.stripline(0.05, frequency=np.linspace(0, 40e9, 4001))
    with pytest.raises(channels.ChannelError, match="Nyquist"):
        ch.pulse_response(106.25e9)
    pr = ch.pulse_response(106.25e9, require_nyquist=False)
    assert pr.grid.extrapolated_above_hz == pytest.approx(40e9)


def test_pulse_grid_reports_extrapolation():
    pr = channels.library.get("twinax_1m_26awg").pulse_response(106.25e9, 32)
    assert pr.grid.extrapolated_above_hz == pytest.approx(120e9)
    assert pr.grid.f_max_hz == pytest.approx(106.25e9 * 32 / 2)


def test_tdr_shows_the_connector_impedance():
    ch = channels.cascade(media.stripline(0.05), media.connector(zdiff_ohm=85, length_m=10e-3),
                          media.stripline(0.05))
    step = ch.step_response("sdd11", dt_s=0.5e-12, rise_time_s=10e-12, duration_s=2e-9)
    z = step.impedance_ohm()
    t_conn = 2 * 0.05 * np.sqrt(3.4) / C0 + 10e-3 * np.sqrt(3.6) / C0  # middle of the connector echo
    assert np.interp(t_conn, step.time_s, z) == pytest.approx(85, abs=3)
    assert np.interp(0.2e-9, step.time_s, z) == pytest.approx(100, abs=2)


def test_real_file_load_and_pulse():
    """The 14 in backplane to its pulse response (its speed, about 0.15 s, is measured in
    benchmarks/bench_channels.py)."""
    path = shared_file("ieee802.3ck/DPO_14in_Meg7_THRU.s4p")
    ch = channels.load(path)
    pr = ch.pulse_response(106.25e9, 32)
    assert pr.main_cursor > 0.05


def test_mueller_muller_points_sit_where_their_residual_is_exactly_zero():
    """A Gaussian pulse, exp(-((t - t0) / w)^2), sampled on the fine grid: the plain MM point
    (h(-1) = h(1)) is its peak, and with the first DFE tap held at 0.5 (its limit) the
    93A-25 point solves h(t - UI) = h(t + UI) - 0.5 h(t), found here by root finding on
    the closed form; the sampling index lands within the linear interpolation's error."""
    from scipy.optimize import brentq

    from phy.serdes.pulse import sampling_index

    spu, w, t0 = 32, 1.1, 40.3  # in UI
    t = np.arange(128 * spu) / spu

    def h(x):
        return np.exp(-(((x - t0) / w) ** 2))

    y = h(t)
    assert sampling_index(y, spu, "mm") / spu == pytest.approx(t0, abs=1e-6)
    # h(t0 + 1) / h(t0) = exp(-1/w^2) = 0.44 < 0.5 near the peak, above it earlier: the tap clips
    root = brentq(lambda x: h(x - 1) - (h(x + 1) - min(0.5, h(x + 1) / h(x)) * h(x)), t0 - 1, t0)
    got = sampling_index(y, spu, "mm-dfe", dfe_limits=(-0.5, 0.5)) / spu
    assert got == pytest.approx(root, abs=2e-3)
    assert got < t0  # the DFE takes the post-cursor: the lock point moves early
    # with no DFE the two criteria are one
    assert sampling_index(y, spu, "mm-dfe") == sampling_index(y, spu, "mm")


def test_jitter_and_noise_models_are_checked():
    import phy
    from phy import ConfigError

    with pytest.raises(ConfigError, match="dd_s .*needs model='symbol'"):
        phy.Jitter(dd_s=1e-13)
    with pytest.raises(ConfigError, match="Jitter.model must be 'edge' or 'symbol'"):
        phy.Jitter(model="clock")
    with pytest.raises(ConfigError, match="Noise.tx_model must be 'path' or 'cursor'"):
        phy.Noise(tx_model="rx")
    with pytest.raises(ConfigError, match="Cdr.phase must be 'peak', 'mm', 'mm-dfe'"):
        phy.Cdr(phase="late")
    j = phy.Jitter.com(0.01, 0.02, 53.125e9)
    assert j.model == "symbol" and j.dd_s == pytest.approx(0.02 / 53.125e9)
