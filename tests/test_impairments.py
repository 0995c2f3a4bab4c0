"""A real receiver's implementation penalties (phy.serdes.impairments): the ADC, the taps'
resolution, the sampling clock; closed forms first, then the two engines against each other."""

import numpy as np
import pytest

import phy
from channels import media
from phy.errors import ConfigError
from phy.serdes import prepare_link
from phy.serdes.impairments import AdcInput, Impairments, adc_top_v, quantise

BAUD = 106.25e9


def test_quantisation_noise_is_delta_squared_over_twelve():
    rng = np.random.default_rng(1)
    fs, enob = 0.4, 5.0
    step = 2 * fs / 2**enob
    x = rng.uniform(-fs, fs, 400_000)  # a busy signal inside the range
    e = quantise(x, step, fs) - x
    assert np.max(np.abs(e)) <= step / 2 + 1e-15
    assert np.var(e) == pytest.approx(step**2 / 12, rel=0.01)
    # 2^ENOB levels, mid-rise, and clipping to the outermost one
    levels = np.unique(quantise(np.linspace(-2 * fs, 2 * fs, 100_001), step, fs))
    assert levels.size == 2**enob
    assert levels.max() == pytest.approx(adc_top_v(step, fs)) == pytest.approx(fs - step / 2)
    assert np.allclose(np.diff(levels), step)


def test_adc_input_distribution_against_monte_carlo():
    rng = np.random.default_rng(2)
    lv = np.array([-1, -1 / 3, 1 / 3, 1.0])
    c = np.array([0.05, 0.3, 0.08, -0.03, 0.02])
    noise = 0.01
    a = AdcInput.from_cursors(c, lv, noise)
    x = rng.choice(lv, (2_000_000, c.size)) @ c + noise * rng.standard_normal(2_000_000)
    assert a.rms_v == pytest.approx(np.std(x), rel=2e-3)
    t = 0.4
    assert a.exceed_probability(t) == pytest.approx(np.mean(np.abs(x) > t), rel=0.03)
    assert a.clip_power(t) == pytest.approx(np.mean(np.clip(np.abs(x) - t, 0, None) ** 2), rel=0.05)
    assert a.exceed_probability(a.level_exceeded(1e-6)) == pytest.approx(1e-6, rel=1e-4)
    assert a.clip_power(np.inf) == 0.0


def test_tap_resolution():
    imp = Impairments(ffe_tap_bits=6, dfe_tap_bits=5)
    w = np.array([-0.113, 1.0, -0.2471, 0.0312])
    r = imp.round_ffe(w)
    step = 1.0 / 31
    assert np.allclose(r / step, np.round(r / step)) and np.max(np.abs(r - w)) <= step / 2 + 1e-12
    b = imp.round_dfe(np.array([0.4321, -0.07]))
    assert np.allclose(b, [0.4375, -0.0625])


def test_wander_is_a_first_order_low_pass():
    imp = Impairments(wander_rms_s=300e-15, wander_bandwidth_hz=50e6)
    ui = 1 / BAUD
    rng = np.random.default_rng(3)
    d, state = imp.sampling_offsets(400_000, ui, rng)
    rho = np.exp(-2 * np.pi * 50e6 * ui)
    d2, _ = imp.sampling_offsets(10, ui, np.random.default_rng(4), state)  # continues from its state
    assert np.std(d) == pytest.approx(300e-15, rel=0.1)
    assert np.corrcoef(d[:-1], d[1:])[0, 1] == pytest.approx(rho, abs=2e-4)
    assert abs(d2[0] - rho * state) < 5 * 300e-15 * np.sqrt(1 - rho * rho)


def _link(imp, **kw):
    ch = media.cascade(media.connector(), media.twinax(4.0, 26), media.connector())
    tx = phy.Transmitter(ffe=phy.TxFfe.ieee(pre=(-0.1,)))
    rx = phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=phy.Ctle.ieee_802_3ck(BAUD, -14), ffe=phy.RxFfe(3, 8),
                      dfe=phy.Dfe(1), impairments=imp)
    noise = phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18)
    return ch, tx, rx, noise


def test_sampling_jitter_through_the_slope():
    """The eye's clock term: white jitter on every sample the FFE combines, sigma^2 E[a^2]
    |w|^2 sum_k p'_k^2, against a direct Monte Carlo of the sampled pulse."""
    imp = Impairments(rj_rms_s=500e-15)
    ch, tx, rx, noise = _link(imp)
    e = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, columns="sampling")
    lk = prepare_link(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise)
    p, dt, spu = lk.pulse.samples, lk.pulse.dt_s, lk.pulse.samples_per_ui
    rng = np.random.default_rng(5)
    n, K = 20_000, lk.n_pre + 40
    t0 = lk.sampling_index + spu * np.arange(-lk.n_pre, K - lk.n_pre)
    w = lk.rx_ffe
    idx = np.arange(p.size)
    base = np.interp(t0, idx, p)
    out = np.zeros(n)
    for t in range(w.size):  # every sample the FFE combines has its own error
        d = rng.normal(0, 500e-15, (n, 1)) / dt
        a = rng.choice(tx.levels, (n, K))
        out += w[t] * np.sum(a * (np.interp(t0 + d, idx, p) - base), axis=1)
    assert e.sigma_v["clock"] == pytest.approx(np.std(out) * tx.swing_v, rel=0.05)


@pytest.mark.parametrize("imp, tol", [
    (Impairments(adc_enob=4.0), 1.3),
    (Impairments(rj_rms_s=700e-15), 1.5),
    (Impairments(adc_enob=4.5, ffe_tap_bits=5, rj_rms_s=400e-15, wander_rms_s=400e-15), 1.5),
])
def test_eye_and_simulator_agree_with_impairments(imp, tol):
    ch, tx, rx, noise = _link(imp)
    e = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, columns="sampling")
    r = phy.simulate(ch, 1_000_000, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, seed=5)
    ideal = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx.with_(impairments=None), noise=noise,
                                columns="sampling")
    assert e.ser() > 3 * ideal.ser()  # each penalty matters on this link
    assert 1 / tol < r.ser.value / e.ser() < tol
    assert r.ser.low * 0.8 < e.ser() < r.ser.high * 1.25


def test_224g_preset_clips_at_one_in_a_million():
    imp = Impairments.adc_dsp_224g()
    ch, tx, rx, noise = _link(imp)
    lk = prepare_link(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise)
    assert lk.adc_step_v == pytest.approx(2 * lk.adc_full_scale_v / 32)
    # the full scale sits where the input exceeds it once in 1e6 samples
    assert 2.0 < lk.adc_full_scale_v / lk.adc_input_rms_v < 5.0  # a bounded signal: below a Gaussian's 4.9
    assert lk.adc_clip_v2 < 1e-6 * lk.adc_input_rms_v**2
    # 4 m of 26 AWG at 212.5 Gb/s: an ideal receiver sees about 1e-16, this one a few 1e-6
    e = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, columns="sampling")
    ideal = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx.with_(impairments=None), noise=noise,
                                columns="sampling")
    assert ideal.ser() < 1e-12 and 1e-7 < e.ser() < 1e-4
    assert e.sigma_v["adc"] > e.sigma_v["rx"]  # the ADC's noise dominates the receiver's


@pytest.mark.parametrize("kw", [dict(adc_enob=0.5), dict(rj_rms_s=1e-9), dict(wander_rms_s=-1.0),
                                dict(ffe_tap_bits=1), dict(adc_clip_probability=0.5), dict(adc_full_scale_v=0.0)])
def test_bad_impairments(kw):
    with pytest.raises(ConfigError):
        Impairments(**kw)


def test_receiver_refuses_other_types():
    with pytest.raises(ConfigError, match="impairments"):
        phy.Receiver(impairments={"adc_enob": 5})
