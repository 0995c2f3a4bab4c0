"""The time-domain simulator against closed forms and a plain-numpy reference.

Channels here are synthetic pulses with compact support (``phy.serdes.pulse.from_samples``), so
nothing is trimmed and the reference convolution sees the same pulse as the kernel.
"""

import numpy as np
import pytest
from scipy import special, stats

import fec
import phy.serdes.pulse as pl
from phy import ConfigError
from phy.engines import simulate
from phy.serdes import Cdr, Jitter, Noise, Receiver, Transmitter
from phy.serdes.equalisers import Ctle, Dfe, RxFfe, TxFfe

BAUD = 53.125e9
SPU = 32


def smooth_pulse(cursors, rise_ui=0.25, n_ui=128, start_ui=8):
    """Sum of UI-spaced rectangles through a Gaussian edge: a pulse whose value at the
    middle of UI ``start_ui + i`` is close to ``cursors[i]``, zero outside a window."""
    t = (np.arange(n_ui * SPU) + 0.5) / SPU  # in UI
    s = rise_ui / 2.563  # 20-80 % rise of a Gaussian edge
    y = np.zeros_like(t)
    for i, c in enumerate(cursors):
        a = start_ui + i
        y += c * 0.5 * (special.erf((t - a) / (s * np.sqrt(2))) - special.erf((t - a - 1) / (s * np.sqrt(2))))
    y[np.abs(y) < 1e-14] = 0.0
    return y


def rect_pulse(n_ui=64, start_ui=5):
    y = np.zeros(n_ui * SPU)
    y[start_ui * SPU : (start_ui + 1) * SPU] = 1.0
    return pl.from_samples(y, BAUD, SPU)


def q(x):
    return stats.norm.sf(x)


# --------------------------------------------------------------------------- AWGN
@pytest.mark.parametrize("target", [1e-2, 1e-3, 1e-4])
def test_pam4_awgn_matches_closed_form(target):
    """SER = 2 (1 - 1/M) Q(d / sigma) for PAM4 with half-spacing d; BER = SER / 2 (Gray)."""
    swing = 0.4
    d = swing / 3
    sigma = d / stats.norm.isf(target / (2 * 0.75))
    n = int(400 / target)
    r = simulate(rect_pulse(), n, tx=Transmitter(swing_v=swing), noise=Noise(rx_noise_rms_v=sigma), seed=7)
    expected = 2 * 0.75 * q(d / sigma)
    assert r.ser.low < expected < r.ser.high
    assert abs(r.ser.value / expected - 1) < 0.15
    assert r.bit_errors / r.symbol_errors == pytest.approx(1.0, abs=0.02)  # Gray: a +-1 error flips one bit
    assert r.ber.value == pytest.approx(r.ser.value / 2, rel=0.05)


def test_nrz_awgn_matches_closed_form():
    sigma = 0.5 / stats.norm.isf(1e-3)
    r = simulate(rect_pulse(), 400_000, tx=Transmitter("nrz", swing_v=0.5), noise=Noise(rx_noise_rms_v=sigma), seed=3)
    assert r.ber.low < 1e-3 < r.ber.high
    assert r.bit_errors == r.symbol_errors


# --------------------------------------------------------------------------- exact ISI
def reference_samples(pulse, sampling_index, tx_levels_v, n_first, n):
    """y_n = sum_k x_k p(m_s + (n - k) spu) by plain numpy, for UIs n_first .. n_first+n-1,
    ``tx_levels_v`` indexed by global UI (a callable)."""
    c = pulse.samples[int(sampling_index) % SPU :: SPU]
    main = int(sampling_index) // SPU
    out = np.zeros(n)
    for i in range(n):
        g = n_first + i
        for j in range(c.size):  # cursor j is sampled from symbol g - (j - main)
            out[i] += tx_levels_v(g - (j - main)) * c[j]
    return out


def periodic_levels(result, tx, period):
    """The sent levels of a periodic pattern, recovered from the recorded window."""
    w = result.waveform
    pattern = np.empty(period, dtype=np.int64)
    pattern[(w.first_ui + np.arange(period)) % period] = w.sent[:period]
    assert np.array_equal(w.sent, pattern[(w.first_ui + np.arange(w.sent.size)) % period])
    lv = tx.levels * tx.swing_v
    return lambda g: lv[pattern[g % period]]


def test_noiseless_isi_is_the_superposition_of_cursors():
    y = smooth_pulse([0.05, 0.6, 0.3, -0.1, 0.08, 0.02, -0.03])
    p = pl.from_samples(y, BAUD, SPU)
    tx = Transmitter(pattern="prbs7", swing_v=0.5)
    r = simulate(p, 2000, tx=tx, waveform_ui=2000, warmup_ui=300, seed=1)
    m_s = r.link.sampling_index
    # the pattern repeats every 127 symbols, and it starts at a global index the test does not know:
    # align by the recorded symbols
    lv = periodic_levels(r, tx, 127)
    ref = reference_samples(p, m_s, lv, r.waveform.first_ui, 2000)
    got = r.waveform.adc_v[:, SPU // 2]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    # the eye is closed without equalisation: the decisions are those of the reference samples
    assert r.symbol_errors > 0
    expected = (ref[:, None] > r.link.thresholds_v[None, :]).sum(axis=1)
    assert np.array_equal(r.waveform.decided, expected)


def test_tx_ffe_on_symbols_equals_ffe_on_the_pulse():
    y = smooth_pulse([0.1, 0.5, 0.35, 0.15, 0.05])
    p = pl.from_samples(y, BAUD, SPU)
    ffe = TxFfe.ieee(pre=(-0.1,), post=(-0.15,))
    tx = Transmitter(pattern="prbs7", swing_v=0.4, ffe=ffe)
    r = simulate(p, 1000, tx=tx, waveform_ui=1000, warmup_ui=300, seed=1)
    lv = periodic_levels(r, tx, 127)
    ref = reference_samples(pl.tx_equalised(p, ffe), r.link.sampling_index, lv, r.waveform.first_ui, 1000)
    np.testing.assert_allclose(r.waveform.adc_v[:, SPU // 2], ref, atol=1e-12)


def test_dfe_cancels_the_post_cursors_it_covers():
    cur = [0.02, 0.5, 0.3, 0.15, 0.1, 0.04, 0.02]
    p = pl.from_samples(smooth_pulse(cur), BAUD, SPU)
    tx = Transmitter(pattern="prbs7", swing_v=0.5)
    r = simulate(p, 1000, tx=tx, rx=Receiver(dfe=Dfe(3)), waveform_ui=1000, warmup_ui=300, seed=1)
    assert r.symbol_errors == 0
    c = p.samples[int(r.link.sampling_index) % SPU :: SPU]
    main = int(r.link.sampling_index) // SPU
    np.testing.assert_allclose(r.link.dfe, c[main + 1 : main + 4] / c[main], atol=1e-12)
    cut = c.copy()
    cut[main + 1 : main + 4] = 0.0  # what remains at the slicer
    lv = periodic_levels(r, tx, 127)
    ref = np.array([sum(lv(g - (j - main)) * cut[j] for j in range(cut.size))
                    for g in r.waveform.first_ui + np.arange(1000)])
    np.testing.assert_allclose(r.waveform.slicer_v[:, SPU // 2], ref, atol=1e-12)


def test_edge_jitter_matches_a_numpy_reference():
    """Sinusoidal jitter moves each transmitted edge; the reference sums the step response
    (linearly interpolated on the fine grid) at every edge's own time."""
    y = smooth_pulse([0.05, 0.55, 0.3, -0.08, 0.04])
    p = pl.from_samples(y, BAUD, SPU)
    tx = Transmitter(pattern="prbs7", swing_v=0.5)
    ui = 1 / BAUD
    jit = Jitter(sj_amplitude_s=0.15 * ui, sj_frequency_hz=BAUD / 37.3, sj_phase_rad=0.4)
    r = simulate(p, 600, tx=tx, jitter=jit, waveform_ui=600, warmup_ui=300, seed=1)
    lv = periodic_levels(r, tx, 127)
    step = np.cumsum(np.pad(y, (0, (-y.size) % SPU)).reshape(-1, SPU), axis=0).reshape(-1)[: y.size]
    fine = np.arange(step.size)
    m_s = r.link.sampling_index
    dt = ui / SPU

    def edge(k):  # the edge that starts symbol k, in fine samples from UI 0's launch
        return k * SPU + jit.sj_amplitude_s * np.sin(2 * np.pi * jit.sj_frequency_hz * ui * k + jit.sj_phase_rad) / dt

    out = []
    for g in r.waveform.first_ui + np.arange(600):
        t = g * SPU + m_s  # the sampling instant
        val = 0.0
        for k in range(g - 40, g + 10):  # each symbol: the step up at its edge, down at the next
            val += lv(k) * (np.interp(t - edge(k), fine, step, left=0.0)
                            - np.interp(t - edge(k + 1), fine, step, left=0.0))
        out.append(val)
    np.testing.assert_allclose(r.waveform.adc_v[:, SPU // 2], out, atol=1e-12)


# --------------------------------------------------------------------------- bursts
def dfe_link(b1, der0, precoder=False, n=1_500_000, seed=11):
    """PAM4 over cursors [1, b1] (scaled), a one-tap DFE, noise set for ``der0``."""
    p = pl.from_samples(smooth_pulse([0.0, 0.5, 0.5 * b1], rise_ui=0.05), BAUD, SPU)
    swing = 0.5
    d = 0.5 * swing / 3
    sigma = d / stats.norm.isf(der0 / 1.5)
    return simulate(p, n, tx=Transmitter(swing_v=swing, precoder=precoder), rx=Receiver(dfe=Dfe(1)),
                    noise=Noise(rx_noise_rms_v=sigma), seed=seed)


def test_dfe_bursts_follow_the_burst_model():
    b1, der0 = 0.7, 3e-3
    r = dfe_link(b1, der0)
    assert r.link.dfe[0] == pytest.approx(b1, abs=2e-3)
    model = fec.BurstModel.dfe([r.link.dfe[0]], der0)
    counts = r.burst_span_counts[1:8].astype(float)
    pmf = model.length_pmf(7)[1:8]
    total = r.n_bursts
    assert total > 2000
    for L in range(3):  # spans 1, 2, 3 carry most of the mass
        sd = np.sqrt(total * pmf[L] * (1 - pmf[L]))
        assert abs(counts[L] - total * pmf[L]) < 4 * sd + 5, (L + 1, counts[L], total * pmf[L])
    assert r.detector_errors / r.n_bursts == pytest.approx(model.mean_errors, rel=0.08)
    # the measured bursts become a fec model
    m = r.burst_model()
    assert m.probabilities.sum() == pytest.approx(1.0)
    assert m.mean_errors == pytest.approx(r.detector_errors / r.n_bursts, rel=0.02)


def test_precoder_turns_a_burst_into_two_errors():
    r = dfe_link(0.7, 3e-3, precoder=True, n=800_000)
    plain = dfe_link(0.7, 3e-3, precoder=False, n=800_000)
    assert plain.symbol_errors / plain.n_bursts > 1.5  # long alternating bursts without it
    assert r.symbol_errors / r.n_bursts == pytest.approx(2.0, abs=0.15)


# --------------------------------------------------------------------------- jitter in the eye
def crossing_extent(r):
    return r.eye.crossing_stats()["peak_to_peak_s"] * BAUD


@pytest.mark.parametrize("amp_ui", [0.1, 0.25])
def test_sinusoidal_jitter_shows_its_amplitude_in_the_crossings(amp_ui):
    p = pl.from_samples(smooth_pulse([1.0], rise_ui=0.3), BAUD, SPU)
    tx = Transmitter("nrz", swing_v=0.5)
    base = simulate(p, 20_000, tx=tx, eye=True, seed=2)
    jit = Jitter(sj_amplitude_s=amp_ui / BAUD, sj_frequency_hz=BAUD / 997)
    r = simulate(p, 20_000, tx=tx, jitter=jit, eye=True, seed=2)
    spread0 = crossing_extent(base)
    assert spread0 <= 1.0 / SPU  # without jitter every crossing falls at the same time
    assert crossing_extent(r) == pytest.approx(2 * amp_ui, abs=1.0 / SPU)
    # an arcsine distribution: its rms is the amplitude / sqrt(2)
    assert r.eye.crossing_stats()["rms_s"] * BAUD == pytest.approx(amp_ui / np.sqrt(2), rel=0.05)


# --------------------------------------------------------------------------- CDR
@pytest.mark.parametrize("kind", ["mm", "bang-bang"])
def test_cdr_locks_from_an_offset(kind):
    """A symmetric pulse: both detectors lock at its peak; start 0.2 UI late."""
    p = pl.from_samples(smooth_pulse([0.05, 0.6, 0.05], rise_ui=0.4), BAUD, SPU)
    cdr = Cdr(kind, phase=0.2 / BAUD, kp_ui=2**-5, ki_ui=2**-12, update_ui=8)
    r = simulate(p, 30_000, tx=Transmitter(swing_v=0.5), cdr=cdr, warmup_ui=5000,
                 noise=Noise(rx_noise_rms_v=0.003), seed=4)
    # the phase is relative to the start: it must come back by about 0.2 UI
    assert r.cdr_phase_mean_s * BAUD == pytest.approx(-0.2, abs=0.06)
    assert r.symbol_errors == 0


def test_a_cdr_that_slips_a_whole_ui_is_reported_as_lost_not_as_an_error_ratio():
    """Heavy noise drives the Mueller-Muller loop on the FFE output a whole UI away (the
    issue: a symbol error ratio of 0.7 where the fixed phase gives 3e-2): the run says the
    CDR lost lock, when, and reports NaN ratios instead of a meaningless one; the counts
    stay. (On the slicer input, ``"mm"``, the loop holds this eye: issue 35.)"""
    import channels
    import phy

    ch = channels.library.get("chip_to_module")
    baud = 106.25e9
    kw = {"baud_hz": baud, "tx": Transmitter("pam4", swing_v=0.4, ffe=phy.TxFfe.ieee(pre=(-0.1,))),
          "rx": Receiver(bandwidth_hz=0.75 * baud, ctle=phy.Ctle.ieee_802_3ck(baud, g_dc_db=-10), dfe=Dfe(4)),
          "seed": 2}
    noisy = Noise(tx_snr_db=33, rx_noise_rms_v=0.010)
    fixed = simulate(ch, 200_000, noise=noisy, cdr=Cdr("fixed", phase="mm"), **kw)
    assert fixed.cdr_locked is None and 1e-3 < fixed.ser.value < 0.1
    with pytest.warns(phy.CdrLockWarning, match=r"lost lock: its phase moved 1.00 UI .*bound 0.5 UI.*reported as NaN"):
        slipped = simulate(ch, 200_000, noise=noisy, cdr=Cdr("mm-ffe", phase="mm"), **kw)
    assert slipped.cdr_locked is False and slipped.cdr_unlocked_at_ui is not None
    assert np.isnan(slipped.ser.value) and np.isnan(slipped.ber.value)
    assert slipped.symbol_errors > 0.3 * slipped.n_ui  # what actually happened is kept
    assert max(abs(slipped.cdr_phase_min_s), abs(slipped.cdr_phase_max_s)) * baud > 0.5
    assert slipped.to_dict()["cdr_locked"] is False
    # with less noise the same loop holds its eye and its error ratio is the link's
    calm = simulate(ch, 200_000, noise=Noise(tx_snr_db=33, rx_noise_rms_v=0.006), cdr=Cdr("mm-ffe", phase="mm"),
                    **kw)
    assert calm.cdr_locked is True and np.isfinite(calm.ser.value)
    assert max(abs(calm.cdr_phase_min_s), abs(calm.cdr_phase_max_s)) * baud < 0.5
    held = simulate(ch, 200_000, noise=noisy, cdr=Cdr("mm", phase="mm"), **kw)
    assert held.cdr_locked is True and held.ser.value < 3 * fixed.ser.value


# --------------------------------------------------------------------------- engineering
def test_chunking_and_seed_give_identical_results():
    y = smooth_pulse([0.05, 0.5, 0.3, 0.1])
    p = pl.from_samples(y, BAUD, SPU)
    kw = {"tx": Transmitter(swing_v=0.4), "rx": Receiver(dfe=Dfe(2)), "noise": Noise(rx_noise_rms_v=0.02, tx_snr_db=30),
              "jitter": Jitter(rj_rms_s=0.02 / BAUD, sj_amplitude_s=0.05 / BAUD, sj_frequency_hz=BAUD / 500), "seed": 5}
    a = simulate(p, 50_000, chunk_ui=4096, **kw)
    b = simulate(p, 50_000, chunk_ui=50_000 + 256, **kw)
    c = simulate(p, 50_000, chunk_ui=777, **kw)
    assert a.detector_errors > 50
    for x in (b, c):
        assert x.detector_errors == a.detector_errors
        assert x.bit_errors == a.bit_errors
        assert np.array_equal(x.error_ui, a.error_ui)
    d = simulate(p, 50_000, **{**kw, "seed": 6})
    assert not np.array_equal(d.error_ui, a.error_ui)


def test_rx_ffe_mmse_opens_a_closed_eye():
    cur = [0.2, 0.6, 0.25, 0.1, 0.05]
    p = pl.from_samples(smooth_pulse(cur), BAUD, SPU)
    tx = Transmitter(swing_v=0.5)
    none = simulate(p, 20_000, tx=tx, noise=Noise(rx_noise_rms_v=0.002), seed=1)
    eq = simulate(p, 20_000, tx=tx, rx=Receiver(ffe=RxFfe(2, 4), dfe=Dfe(2)), noise=Noise(rx_noise_rms_v=0.002),
                  seed=1)
    assert none.ser.value > 0.01
    assert eq.symbol_errors == 0
    assert eq.link.rx_ffe.size == 7
    comb = np.convolve(eq.link.cursors, eq.link.rx_ffe)
    main = eq.link.n_pre + 2
    assert comb[main] == pytest.approx(eq.link.cursors[eq.link.n_pre])  # the main cursor is kept
    # a DFE limit binds: the tap sits at the limit and the FFE works around it
    lim = simulate(p, 20_000, tx=tx, rx=Receiver(ffe=RxFfe(2, 4), dfe=Dfe(2, limits=0.6)),
                   noise=Noise(rx_noise_rms_v=0.002), seed=1)
    assert lim.link.dfe[0] == pytest.approx(0.6)
    assert lim.symbol_errors == 0


def test_front_end_noise_density_sets_the_noise():
    """eta_0 through a 4th-order Butterworth: variance eta_0 * f3dB * pi/(2 n sin(pi/(2n)))."""
    baud = BAUD
    r = simulate(rect_pulse(), 1000, rx=Receiver(bandwidth_hz=0.75 * baud), noise=Noise(rx_noise_psd_v2_per_hz=1e-17),
                 seed=1)
    n = 4
    enbw = 0.75 * baud * (np.pi / (2 * n)) / np.sin(np.pi / (2 * n))
    assert r.link.rx_noise_rms_v == pytest.approx(np.sqrt(1e-17 * enbw), rel=1e-3)


def test_ctle_and_crosstalk_run_on_a_real_channel():
    import channels

    ch = channels.library.get("chip_to_module")
    rx = Receiver(bandwidth_hz=0.75 * 106.25e9, ctle=Ctle.ieee_802_3ck(106.25e9, -9), dfe=Dfe(4))
    r = simulate(ch, 20_000, baud_hz=106.25e9, rx=rx, noise=Noise(rx_noise_psd_v2_per_hz=8.2e-18, tx_snr_db=33),
                 eye=True, seed=1)
    assert 0 <= r.ser.value < 0.05
    assert r.eye.heights_v().size == 3
    d = r.to_dict()
    assert d["n_ui"] == 20_000 and d["link"]["h0_v"] > 0


def test_crosstalk_adds_noise():
    y = smooth_pulse([0.05, 0.5, 0.2])
    agg = 0.08 * smooth_pulse([0.3, 1.0, -0.5, 0.2])
    p = pl.from_samples(y, BAUD, SPU, aggressors=[agg])
    quiet = pl.from_samples(y, BAUD, SPU)
    kw = {"tx": Transmitter(swing_v=0.5), "rx": Receiver(dfe=Dfe(1)), "eye": True, "seed": 3}
    a = simulate(p, 20_000, **kw)
    b = simulate(quiet, 20_000, **kw)
    assert a.eye.heights_v()[1] < b.eye.heights_v()[1] - 0.01


# --------------------------------------------------------------------------- bad configurations
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: {"n_ui": 0}, "n_ui"),
        (lambda: {"rx": Receiver(dfe=Dfe(200))}, "n_taps"),
        (lambda: {"noise": Noise(rx_noise_rms_v=-1)}, "rx_noise_rms_v"),
        (lambda: {"jitter": Jitter(rj_rms_s=float("nan"))}, "rj_rms_s"),
        (lambda: {"tx": Transmitter("pam8")}, "modulation"),
        (lambda: {"tx": Transmitter(swing_v=-0.1)}, "swing_v"),
        (lambda: {"rx": Receiver(ffe=RxFfe(1, 1, taps=(1.0, 0.5)))}, "3 taps"),
        (lambda: {"rx": Receiver(ctle=Ctle(g_dc_db=3))}, "g_dc_db"),
        (lambda: {"noise": Noise(rx_noise_psd_v2_per_hz=1e-17)}, "bandwidth"),
        (lambda: {"cdr": Cdr("pll")}, "Cdr.kind"),
        (lambda: {"span_ui": (2,)}, "span_ui"),
        (lambda: {"jitter": Jitter(sj_amplitude_s=1e-12)}, "sj_frequency_hz"),
        (lambda: {"tx": Transmitter("nrz", precoder=True)}, "precoder"),
        (lambda: {"tx": TxFfe()}, "Transmitter"),
    ],
)
def test_bad_configurations_raise_config_error(make, match):
    with pytest.raises(ConfigError, match=match):
        kwargs = make()
        n = kwargs.pop("n_ui", 10)
        simulate(rect_pulse(), n, **kwargs)


def test_pulse_shorter_than_the_dfe_is_refused():
    y = np.zeros(12 * SPU)
    y[2 * SPU : 3 * SPU] = 1
    with pytest.raises(ConfigError, match="post-cursors"):
        simulate(pl.from_samples(y, BAUD, SPU), 10, rx=Receiver(dfe=Dfe(20)))


def test_plots_draw():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from phy.serdes.pulse import plot_pulse

    r = simulate(pl.from_samples(smooth_pulse([0.1, 0.6, 0.2]), BAUD, SPU), 5000, eye=True, waveform_ui=20,
                 noise=Noise(rx_noise_rms_v=0.01), seed=1)
    assert r.eye.plot() is not None
    assert r.eye.plot_bathtub() is not None
    assert r.waveform.plot() is not None
    assert plot_pulse(r.link.pulse, r.link.sampling_index) is not None


def test_real_cable_with_crosstalk():
    """An 802.3ck cable assembly with its NEXT and FEXT files: crosstalk adds errors."""
    import warnings

    from conftest import shared_file

    import channels

    path = shared_file("ieee802.3ck/CA_19p75dB_thru.s4p")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", channels.ChannelQualityWarning)
        ch = channels.load(path, aggressors="auto")
        quiet = channels.load(path)
    assert len(ch.aggressors) == 2 and not quiet.aggressors
    baud = 53.125e9
    rx = Receiver(bandwidth_hz=0.75 * baud, ctle=Ctle.ieee_802_3ck(baud, -8), dfe=Dfe(8))
    kw = {"baud_hz": baud, "rx": rx, "waveform_ui": 20_000, "seed": 2}
    with_xt = simulate(ch, 20_000, **kw)
    without = simulate(quiet, 20_000, **kw)
    assert with_xt.config["aggressors"] == 2 and without.config["aggressors"] == 0

    w1, w0 = with_xt.waveform, without.waveform
    diff = w1.adc_v[:, SPU // 2] - w0.adc_v[:, SPU // 2]  # the crosstalk alone (same victim data)
    # expected: independent uniform PAM4 aggressors at a random symbol phase, through the front end
    front = pl.front_end(None, rx.bandwidth_hz, rx.filter_order, rx.ctle)
    aggs = pl.filtered(ch.pulse_response(baud, SPU), front).aggressors
    ms = sum(np.mean([np.sum(a.samples[t::SPU] ** 2) for t in range(SPU)]) for a in aggs)
    predicted = np.sqrt(ms * np.mean(Transmitter().levels ** 2)) * Transmitter().swing_v
    assert np.sqrt(np.mean(diff**2)) == pytest.approx(predicted, rel=0.35)


def test_memory_does_not_grow_with_the_run():
    import tracemalloc

    p = pl.from_samples(smooth_pulse([0.05, 0.5, 0.2]), BAUD, SPU)
    kw = {"noise": Noise(rx_noise_rms_v=0.05), "chunk_ui": 8192, "seed": 1}
    simulate(p, 1000, **kw)
    peaks = []
    for n in (20_000, 400_000):
        tracemalloc.start()
        simulate(p, n, **kw)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.3 * peaks[0]


def test_shaped_noise_filter_reproduces_the_autocorrelation():
    """The FIR's autocorrelation equals the sampled noise's, R[k] = eta_0 int |H|^2 cos(2 pi f k T) df."""
    from phy.serdes.noise import shaped_noise_filter

    h = pl.front_end(None, 0.75 * BAUD, 4, Ctle.ieee_802_3ck(BAUD, -10))
    g, R = shaped_noise_filter(8.2e-18, BAUD, h)
    ac = np.correlate(g, g, "full")[g.size - 1 :]
    np.testing.assert_allclose(ac[:5], R[:5], atol=1e-3 * R[0])
    assert R[1] < -0.2 * R[0]  # the CTLE's peaking makes neighbouring samples anti-correlated
    # the simulator's noise: same record with and without it, the difference is the noise
    rx = Receiver(bandwidth_hz=0.75 * BAUD, ctle=Ctle.ieee_802_3ck(BAUD, -10))
    kw = {"rx": rx, "waveform_ui": 50_000, "seed": 1}
    quiet = simulate(rect_pulse(), 50_000, **kw)
    noisy = simulate(rect_pulse(), 50_000, noise=Noise(rx_noise_psd_v2_per_hz=8.2e-18), **kw)
    d = noisy.waveform.adc_v[:, SPU // 2] - quiet.waveform.adc_v[:, SPU // 2]
    assert np.std(d) == pytest.approx(np.sqrt(R[0]), rel=0.02)
    assert np.mean(d[1:] * d[:-1]) / np.var(d) == pytest.approx(R[1] / R[0], abs=0.02)


# --------------------------------------------------------------------------- the eye's voltage range
def _outside_the_eye_range(r):
    """Per eye column: slicer-input samples beyond the histogram's voltage range (they would
    pile into its edge bins), counted on the recorded waveform (every UI of the run)."""
    e, z = r.eye.voltage_edges_v, r.waveform.slicer_v
    return ((z < e[0]) | (z > e[-1])).sum(axis=0)


@pytest.mark.parametrize("case", ["dfe_post_cursors", "demo_lane"])
def test_the_eye_range_holds_every_column(case):
    """The eye's voltage bins cover the slicer input at every time offset, not only at the
    sampling phase: off the sampling instant the DFE (fitted there) leaves the post-cursors
    it cancels, and the range used to be set from the sampling column alone. With that range
    the synthetic pulse put samples beyond it in 17 of the 32 columns, and the demo's lane
    (the README's eye: 212.5 Gb/s over 1 m of twinax) in 18 of 32 (0.26 % of its samples,
    the bright lines along the eye's top and bottom)."""
    n = 20_000
    if case == "dfe_post_cursors":
        p = pl.from_samples(smooth_pulse([0.05, 0.5, 0.45, 0.3, 0.15], rise_ui=0.6), BAUD, SPU)
        r = simulate(p, n, tx=Transmitter(swing_v=0.4), rx=Receiver(dfe=Dfe(3)), noise=Noise(rx_noise_rms_v=1e-3),
                     eye=True, waveform_ui=n, seed=1)
    else:
        import channels
        from phy import link as lk

        spec = lk.LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=1, lane_rate_bps=212.5e9,
                           fec="KP4")
        s = lk.segments(spec)[0]
        r = simulate(s.channel, n, baud_hz=s.baud_hz, tx=s.tx, rx=s.rx, noise=s.noise, jitter=s.jitter, eye=True,
                     waveform_ui=n, seed=1)
    assert r.waveform.slicer_v.shape == (n, SPU)
    assert _outside_the_eye_range(r).sum() == 0
    assert r.eye.counts[:, 0].sum() == r.eye.counts[:, -1].sum() == 0  # nothing clipped into the edge bins
    # and the range is fitted, not padded without bound: the samples reach past half of it
    e = r.eye.voltage_edges_v
    assert np.abs(r.waveform.slicer_v).max() > 0.5 * e[-1]
