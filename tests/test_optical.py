"""Optical media (channels.optical) against closed forms and independent simulations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import channels
from channels import ChannelError
from channels.optical import (
    C0,
    Fibre,
    OpticalConnector,
    OpticalPath,
    OpticalReceiver,
    OpticalTransmitter,
    bessel_thomson,
)


def test_fibre_time_of_flight_and_loss():
    f = Fibre.smf(2000.0)
    assert f.delay_s == pytest.approx(1.4677 * 2000 / C0, rel=1e-12)
    assert 4.8e-9 < f.delay_s / 2000 < 5.0e-9  # REFERENCES.md: fibre about 4.9 ns/m
    assert f.loss_db == pytest.approx(0.8)


def test_dispersion_fit_gives_the_textbook_values():
    # G.652 at 1550 nm: about 17 ps/(nm km); zero at lambda0; OM4 at 850 nm about -100
    ps_nm_km = 1e-6
    smf = Fibre.smf(1.0)
    assert smf.dispersion_s_per_m2(1550e-9) / ps_nm_km == pytest.approx(17.3, abs=0.5)
    assert smf.dispersion_s_per_m2(1312e-9) == pytest.approx(0.0, abs=1e-12)
    assert Fibre.om4(1.0).dispersion_s_per_m2(850e-9) / ps_nm_km == pytest.approx(-100.9, abs=1.0)


def test_power_fading_matches_a_field_propagation():
    # an intensity-modulated field through a dispersive fibre, propagated exactly in the
    # frequency domain, detected by |E|^2: the tone's amplitude follows cos(pi lambda^2 D L f^2 / c)
    lam = 1550e-9
    fib = Fibre.smf(10e3)
    D = fib.dispersion_s_per_m2(lam)
    beta2 = -D * lam**2 / (2 * np.pi * C0)
    n, T = 4096, 1e-9
    t = np.arange(n) * T / n
    w = 2 * np.pi * np.fft.fftfreq(n, T / n)
    for k in (5, 11, 17):
        f = k / T
        m = 1e-3
        e = np.sqrt(1 + m * np.cos(2 * np.pi * f * t))
        out = np.fft.ifft(np.fft.fft(e) * np.exp(0.5j * beta2 * w**2 * fib.length_m))
        p = np.abs(out) ** 2
        tone = 2 * np.abs(np.fft.fft(p)[k]) / n / m
        assert tone == pytest.approx(abs(fib.transfer([f], lam)[0]), abs=2e-3)


def test_modal_bandwidth_halves_the_power_transfer_at_the_length_scaled_bandwidth():
    fib = Fibre.om4(100.0)
    b = 4700e6 * 1e3 / 100.0
    assert fib.transfer([b], 850e-9, spectral_width_rms_m=0.0)[0] == pytest.approx(
        0.5 * np.cos(np.pi * (850e-9) ** 2 * fib.dispersion_s_per_m2(850e-9) * 100.0 * b**2 / C0), rel=1e-9)


def test_bessel_thomson_is_3db_down_at_its_bandwidth():
    h = bessel_thomson([0.0, 26.5625e9], 26.5625e9)
    assert abs(h[0]) == pytest.approx(1.0)
    assert abs(h[1]) ** 2 == pytest.approx(0.5, rel=1e-6)


def _path(**kw):
    tx = OpticalTransmitter(**kw.pop("tx", {}))
    rx = OpticalReceiver(**kw.pop("rx", {}))
    return OpticalPath.point_to_point(Fibre.smf(kw.pop("length_m", 500.0)), kw.pop("connectors", 2), tx, rx,
                                      kw.pop("connector", None))


def test_mpi_ratio_and_beat_noise_match_a_random_phase_simulation():
    # two connectors at -30 dB with 1 km of fibre between them, no transmitter or receiver reflection
    c = OpticalConnector(0.5, -30.0)
    path = OpticalPath(OpticalTransmitter(reflectance_db=None), (c, Fibre.smf(1000.0), c),
                       OpticalReceiver(reflectance_db=None))
    t = 10 ** (-(0.25 + 0.4 + 0.25) / 10)  # one-way transmission between the reflection planes
    eps = 1e-3 * 1e-3 * t**2
    assert path.mpi_ratio() == pytest.approx(eps, rel=1e-12)
    b = path.budget()
    # intensity of signal plus a doubly reflected copy (other symbols, mean power) at a uniform phase
    rng = np.random.default_rng(1)
    R = path.rx.responsivity_a_per_w
    i_top = b.levels_a[-1]
    i_copy = eps * np.mean(b.levels_a)
    phi = rng.uniform(0, 2 * np.pi, 400_000)
    i = np.abs(np.sqrt(i_top) + np.sqrt(i_copy) * np.exp(1j * phi)) ** 2
    assert np.std(i) == pytest.approx(b.terms_rms_a["mpi"], rel=0.01)
    assert R > 0


def test_thermal_limited_budget_is_the_closed_form():
    path = _path(tx={"rin_db_per_hz": -300.0, "reflectance_db": None}, rx={"reflectance_db": None},
                 connector=OpticalConnector(0.5, -90.0))
    b = path.budget()
    sig_th = path.rx.noise_current_density_a_per_rthz * np.sqrt(path.rx.noise_bandwidth_hz)
    assert b.terms_rms_a["thermal"] == pytest.approx(sig_th, rel=1e-12)
    # thermal plus shot at each level, nothing else (RIN and reflections off)
    want = np.sqrt(sig_th**2 + 2 * 1.602176634e-19 * np.array(b.levels_a) * path.rx.noise_bandwidth_hz)
    np.testing.assert_allclose(b.noise_rms_a, want, rtol=1e-9)
    # the received OMA: launch minus the path's loss
    assert b.received_oma_dbm == pytest.approx(path.tx.oma_outer_dbm - path.loss_db, abs=1e-9)
    # noise bandwidth of a 4th-order Bessel-Thomson: a few % above its -3 dB frequency
    assert 1.0 < path.rx.noise_bandwidth_hz / path.rx.bandwidth_hz < 1.15


def test_pam4_error_ratio_matches_monte_carlo_with_level_dependent_noise():
    # a weak link (long fibre, low OMA) so errors are countable; strong RIN and shot noise
    path = _path(tx={"oma_outer_dbm": -4.0, "rin_db_per_hz": -138.0}, length_m=10e3)
    b = path.budget()
    assert 1e-4 < b.ser < 1e-2
    rng = np.random.default_rng(7)
    n = 2_000_000
    sym = rng.integers(0, 4, n)
    lv = np.array(b.levels_a)
    x = lv[sym] + rng.standard_normal(n) * np.array(b.noise_rms_a)[sym]
    th = (lv[1:] + lv[:-1]) / 2
    dec = np.searchsorted(th, x)
    errs = int(np.count_nonzero(dec != sym))
    lo, hi = stats.beta.ppf([0.0005, 0.9995], [errs, errs + 1], [n - errs + 1, n - errs])
    assert lo <= b.ser <= hi
    # the equivalent level-independent noise gives the same SER
    d = (lv[1] - lv[0]) / 2
    assert 1.5 * stats.norm.sf(d / b.equivalent_noise_rms_a) == pytest.approx(b.ser, rel=1e-6)
    assert b.ber == pytest.approx(b.ser / 2)


def test_more_loss_means_fewer_photons_and_more_errors():
    sers = [_path(length_m=L, tx={"oma_outer_dbm": -6.0}).budget().ser for L in (500.0, 10e3, 20e3)]
    assert sers[0] < sers[1] < sers[2]


def test_optical_channel_cascades_with_copper():
    path = _path()
    ch = path.channel()
    assert ch.nports == 2
    np.testing.assert_allclose(ch.sdd21, path.transfer(ch.f), rtol=1e-12)
    assert np.all(ch.sdd11 == 0)
    host = channels.library.get("cpo_short")
    full = channels.cascade(host, path.channel(host.f), host)
    want = host.sdd21 * path.transfer(host.f) * host.sdd21  # unilateral: no reflections between
    np.testing.assert_allclose(full.sdd21, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Fibre(-1.0), "length_m"),
        (lambda: OpticalConnector(0.5, 3.0), "reflectance_db"),
        (lambda: OpticalTransmitter(extinction_ratio_db=0.0), "extinction_ratio_db"),
        (lambda: OpticalTransmitter(wavelength_m=1310.0), "wavelength_m"),
        (lambda: OpticalReceiver(responsivity_a_per_w=float("nan")), "responsivity"),
        (lambda: OpticalPath(elements=("fibre",)), "Fibre or OpticalConnector"),
        (lambda: OpticalPath.point_to_point(Fibre.smf(1.0), connectors=1.5), "whole number"),
        (lambda: _path().budget(levels=3), "levels"),
    ],
)
def test_bad_optical_input_is_named(build, match):
    with pytest.raises(ChannelError, match=match):
        build()
