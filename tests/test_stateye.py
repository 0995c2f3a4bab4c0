"""The statistical eye against closed forms and against the time-domain simulator."""

import numpy as np
import pytest
from scipy import stats
from test_timesim import BAUD, SPU, rect_pulse, smooth_pulse

import phy.serdes.pulse as pl
from phy.engines import simulate, statistical_eye
from phy.engines.pmf import discrete_pmf
from phy.serdes import Jitter, Noise, Receiver, Transmitter
from phy.serdes.equalisers import Dfe


def test_discrete_pmf_matches_enumeration():
    """Exact: the PMF of sum a_k c_k over all M^K symbol combinations."""
    import itertools

    c = np.array([0.11, -0.07, 0.031, 0.2])
    lv = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
    v = np.linspace(-1, 1, 2001)
    pmf = discrete_pmf(c, lv, v[0], v[1] - v[0], v.size)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    vals = np.array([np.dot(c, lv[list(m)]) for m in itertools.product(range(4), repeat=c.size)])
    assert np.dot(pmf, v) == pytest.approx(vals.mean(), abs=1e-12)
    assert np.dot(pmf, v**2) == pytest.approx(np.mean(vals**2), abs=2e-6)  # linear split adds < dv^2/4
    # the support ends at the worst-case sums
    nz = np.flatnonzero(pmf > 0)
    assert v[nz[0]] == pytest.approx(-np.abs(c).sum(), abs=v[1] - v[0])
    assert v[nz[-1]] == pytest.approx(np.abs(c).sum(), abs=v[1] - v[0])


def test_without_isi_the_error_ratio_is_the_gaussian_closed_form():
    swing, sigma = 0.4, 0.04
    se = statistical_eye(rect_pulse(), tx=Transmitter(swing_v=swing), noise=Noise(rx_noise_rms_v=sigma))
    d = swing / 3
    assert se.ser() == pytest.approx(1.5 * stats.norm.sf(d / sigma), rel=1e-3)
    assert se.ber() == pytest.approx(se.ser() / 2)
    nrz = statistical_eye(rect_pulse(), tx=Transmitter("nrz", swing_v=swing), noise=Noise(rx_noise_rms_v=0.1))
    assert nrz.ser() == pytest.approx(stats.norm.sf(swing / 0.1), rel=1e-3)


def test_without_noise_the_opening_is_the_main_cursor_minus_the_worst_isi():
    cur = [0.03, 0.6, 0.1, -0.05, 0.02]
    p = pl.from_samples(smooth_pulse(cur), BAUD, SPU)
    swing = 0.5
    se = statistical_eye(p, tx=Transmitter(swing_v=swing), n_bins=8001)
    c = se.link.cursors
    main = se.link.n_pre
    h0 = c[main] * swing
    worst = (np.abs(c).sum() - abs(c[main])) * swing
    # PAM4: adjacent levels are 2/3 h0 apart; each side loses the worst-case ISI
    expected = 2 / 3 * h0 - 2 * worst
    heights = se.heights_v(1e-15)
    dv = se.voltage_v[1] - se.voltage_v[0]
    np.testing.assert_allclose(heights, expected, atol=3 * dv)


@pytest.mark.parametrize("sigma", [0.026, 0.021, 0.018])
def test_agrees_with_monte_carlo(sigma):
    """BER from about 1e-3 to 1e-5: within a factor of 2 (here much closer), eye heights within 5 %."""
    cur = [0.05, 0.6, 0.25, -0.08, 0.04, 0.02]
    p = pl.from_samples(smooth_pulse(cur), BAUD, SPU)
    kw = {"tx": Transmitter(swing_v=0.5), "rx": Receiver(dfe=Dfe(3)),
              "noise": Noise(rx_noise_rms_v=sigma, tx_snr_db=32), "jitter": Jitter(rj_rms_s=0.01 / BAUD)}
    se = statistical_eye(p, **kw)
    n = int(min(3e6, 300 / se.ser()))
    r = simulate(p, n, eye=True, eye_bins=1024, seed=3, **kw)
    assert 5e-6 < se.ber() < 2e-3
    assert 0.5 < r.ber.value / se.ber() < 2.0
    # the remaining gap is the DFE's error propagation, which the burst model accounts for
    assert 0.8 < r.ser.value / se.ser_dfe() < 1.35
    # eye heights at 1e-3: the MC eye's band holds half the target on each side
    h_se = se.heights_v(1e-3)
    h_mc = r.eye.heights_v(2e-3)
    np.testing.assert_allclose(h_mc, h_se, rtol=0.05)


def test_sinusoidal_jitter_closes_the_eye_horizontally():
    p = pl.from_samples(smooth_pulse([0.05, 0.6, 0.1], rise_ui=0.4), BAUD, SPU)
    kw = {"tx": Transmitter(swing_v=0.5), "rx": Receiver(dfe=Dfe(1)), "noise": Noise(rx_noise_rms_v=0.01)}
    a = statistical_eye(p, **kw)
    b = statistical_eye(p, jitter=Jitter(sj_amplitude_s=0.1 / BAUD, sj_frequency_hz=1e6), **kw)
    wa, wb = a.widths_s(1e-6)[1], b.widths_s(1e-6)[1]
    assert wb < wa
    assert (wa - wb) * BAUD == pytest.approx(0.2, abs=2.0 / SPU)  # peak to peak of the SJ
    _t, s = b.horizontal_bathtub()
    assert s[b.centre] < s[0] and s[b.centre] < s[-1]


def test_crosstalk_widens_the_distribution():
    y = smooth_pulse([0.05, 0.5, 0.2])
    agg = 0.1 * smooth_pulse([0.3, 1.0, -0.5, 0.2])
    kw = {"tx": Transmitter(swing_v=0.5), "noise": Noise(rx_noise_rms_v=0.02)}
    quiet = statistical_eye(pl.from_samples(y, BAUD, SPU), **kw)
    avg = statistical_eye(pl.from_samples(y, BAUD, SPU, aggressors=[agg]), **kw)
    worst = statistical_eye(pl.from_samples(y, BAUD, SPU, aggressors=[agg]), crosstalk="worst", **kw)
    assert quiet.ser() < avg.ser() <= worst.ser() * 1.0001


def test_plot_draws():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    se = statistical_eye(pl.from_samples(smooth_pulse([0.05, 0.6, 0.1]), BAUD, SPU),
                         tx=Transmitter(swing_v=0.5), noise=Noise(rx_noise_rms_v=0.02))
    assert se.plot() is not None
    d = se.to_dict()
    assert d["ser"] == se.ser() and len(d["heights_v"]) == 3


def test_sampling_columns_give_the_full_eye_at_the_sampling_point():
    import channels
    import phy

    ch = channels.library.get("chip_to_module")
    kw = dict(baud_hz=106.25e9, tx=phy.Transmitter(),
              rx=phy.Receiver(bandwidth_hz=0.58 * 106.25e9, ffe=phy.RxFfe(5, 10), dfe=phy.Dfe(1)),
              noise=phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=6e-18),
              jitter=phy.Jitter(rj_rms_s=1e-13, dcd_s=4e-13, sj_amplitude_s=5e-13, sj_frequency_hz=1e8))
    full = phy.statistical_eye(ch, **kw)
    part = phy.statistical_eye(ch, columns="sampling", **kw)
    assert part.time_s.size < full.time_s.size
    assert part.ser() == pytest.approx(full.ser(), rel=1e-9)
    assert part.ser_dfe() == pytest.approx(full.ser_dfe(), rel=1e-9)
    np.testing.assert_allclose(part.heights_v(1e-6), full.heights_v(1e-6), rtol=1e-9)
    with pytest.raises(phy.ConfigError, match="columns"):
        phy.statistical_eye(ch, columns="some", **kw)


def test_duty_cycle_distortion_moves_alternate_edges_as_the_simulator_does():
    # DCD on the driver's edges, through a strong Tx FFE and CTLE: the statistical eye's
    # per-parity cursors against the simulator's first errors (a whole-eye shift, the
    # earlier model, was 8x low here)
    from dataclasses import replace

    import channels
    import phy

    ch = channels.library.get("chip_to_module")
    p = phy.Serdes().com_params(106.25e9)  # the link's 802.3dj set: 15 Rx FFE taps, 100 ohm terminations
    tx, rx = phy.channel_margin(ch, p).serdes()
    rx = replace(rx, ffe=phy.RxFfe(rx.ffe.n_pre, rx.ffe.n_post))
    d2d = channels.cascade(p.package(ch.f, "tx"), ch, p.package(ch.f, "rx"))
    kw = dict(baud_hz=p.baud_hz, tx=tx, rx=rx, jitter=phy.Jitter(dcd_s=2 * p.a_dd_ui / p.baud_hz),
              noise=phy.Noise(tx_snr_db=p.snr_tx_db, rx_noise_psd_v2_per_hz=18 * p.eta0_v2_per_hz))
    se = phy.statistical_eye(d2d, columns="sampling", **kw)
    assert len(se.parts) == 2
    n = 1_000_000
    sim = phy.simulate(d2d, n, seed=1, **kw)
    starts = sim.detector_errors / sim.burst_model().mean_errors / n
    assert starts > 4e-4  # enough bursts (hundreds) to compare
    # (35 % apart before the grid's split variance was taken off the Gaussian; 1 % now)
    assert se.ser() == pytest.approx(starts, rel=0.15)


def test_the_grid_s_splits_add_exactly_the_variance_the_eye_takes_off_its_gaussian():
    """Splitting each shifted copy between two bins is mean-preserving and adds an
    independent two-point error per cursor: the PMF's variance is the true one plus
    :func:`phy.engines.pmf.split_variance` (up to the vanishing mass folded back from beyond
    three bins of the true support)."""
    import itertools

    from phy.engines.pmf import split_variance

    rng = np.random.default_rng(4)
    lv = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
    for _ in range(5):
        c = rng.normal(0, 0.05, 6)
        v = np.linspace(-1, 1, 801)
        dv = v[1] - v[0]
        pmf = discrete_pmf(c, lv, v[0], dv, v.size)
        vals = np.array([np.dot(c, lv[list(mm)]) for mm in itertools.product(range(4), repeat=c.size)])
        true_var = np.var(vals)
        got = np.dot(pmf, v**2) - np.dot(pmf, v) ** 2
        assert got == pytest.approx(true_var + split_variance(c, lv, dv) * dv**2, rel=1e-7)


def test_the_error_ratio_does_not_depend_on_the_voltage_grid():
    """Hundreds of cursors on a 4096-bin grid added as much variance as the noise itself
    (23 % more errors on a 12 dB chip-to-chip channel than a 16384-bin grid); with the
    splits' variance taken off the Gaussian the grid no longer matters."""
    import channels
    import phy

    ch = channels.cascade(channels.media.connector(), channels.media.twinax(3.0, 26), channels.media.connector())
    baud = 53.125e9
    kw = {"baud_hz": baud, "tx": Transmitter(swing_v=0.4), "columns": "sampling",
          "rx": Receiver(bandwidth_hz=0.6 * baud, ctle=phy.Ctle.ieee_802_3ck(baud, g_dc_db=-9), dfe=Dfe(4)),
          "noise": Noise(tx_snr_db=30, rx_noise_psd_v2_per_hz=3e-17)}
    coarse = statistical_eye(ch, n_bins=2048, **kw)
    fine = statistical_eye(ch, n_bins=16384, **kw)
    assert coarse.link.cursors.size > 300
    assert 1e-6 < fine.ser() < 1e-3
    assert coarse.ser() == pytest.approx(fine.ser(), rel=0.02)


_JITTER_KW = {"tx": Transmitter(swing_v=0.5, ffe=__import__("phy").TxFfe.ieee(pre=(-0.05,))), "rx": Receiver(dfe=Dfe(2)),
              "noise": Noise(rx_noise_rms_v=0.018, tx_snr_db=30), "cdr": __import__("phy").Cdr(phase="mm-dfe")}


@pytest.mark.parametrize("jitter", [Jitter(rj_rms_s=0.03 / BAUD, model="symbol"),
                                    Jitter(rj_rms_s=0.01 / BAUD, dd_s=0.03 / BAUD, model="symbol"),
                                    Jitter(dd_s=0.02 / BAUD, dcd_s=0.04 / BAUD, model="symbol")])
def test_symbol_jitter_as_com_models_it_agrees_with_the_simulator(jitter):
    """802.3 COM's jitter (each symbol's equalised pulse moves: RJ through its slope, A_DD
    as a dual Dirac per symbol, DCD by parity) in the statistical eye and in the
    time-domain simulator, sampled on the pulse's rising edge where jitter matters."""
    from fec.montecarlo import Estimate

    p = pl.from_samples(smooth_pulse([0.02, 0.5, 0.2, 0.05, 0.02], rise_ui=0.8), BAUD, SPU)
    se = statistical_eye(p, jitter=jitter, columns="sampling", **_JITTER_KW)
    still = statistical_eye(p, columns="sampling", **_JITTER_KW)
    r = simulate(p, 10**6, jitter=jitter, seed=5, **_JITTER_KW)
    starts = Estimate.of(r.n_bursts, r.n_ui, 0.999)
    assert 1e-3 < se.ser() < 1e-2 and se.ser() > 1.2 * still.ser()  # the jitter counts
    assert starts.low <= se.ser() <= starts.high, (se.ser(), starts)
    # edge jitter of the same size is other physics, and the simulator tells them apart
    if jitter.dd_s == 0 and jitter.dcd_s == 0:
        edge = statistical_eye(p, jitter=Jitter(rj_rms_s=jitter.rj_rms_s), columns="sampling", **_JITTER_KW)
        assert not starts.low <= edge.ser() <= starts.high


def test_transmitter_noise_on_the_main_cursor_as_93a_30_writes_it():
    cur = [0.04, 0.5, 0.3, 0.12, 0.05, 0.02]
    p = pl.from_samples(smooth_pulse(cur), BAUD, SPU)
    tx = Transmitter(swing_v=0.5)
    path = statistical_eye(p, tx=tx, noise=Noise(tx_snr_db=25), columns="sampling")
    cursor = statistical_eye(p, tx=tx, noise=Noise(tx_snr_db=25, tx_model="cursor"), columns="sampling")
    h0 = cursor.link.h0_v
    assert cursor.link.white_noise_rms_v == pytest.approx(h0 * 10 ** (-25 / 20), rel=1e-12)
    assert cursor.sigma_v["rx"] == pytest.approx(h0 * 10 ** (-25 / 20), rel=1e-12)
    # through the whole pulse the same SNR costs more (the ISI's energy carries noise too)
    assert path.sigma_v["tx"] > cursor.sigma_v["rx"] * np.sqrt(5 / 9)
