"""The simulator's long-span path (``tail="fft"``: the head by the exact edge-jitter kernel, the
tail by FFT overlap-save) against the direct path, and the default span by the pulse's energy."""

import warnings

import numpy as np
import pytest

import channels
import phy.serdes.pulse as pl
from phy import ConfigError
from phy.engines import simulate
from phy.engines.timesim.tail import _linearisation
from phy.serdes import Cdr, Jitter, Noise, Receiver, Transmitter
from phy.serdes.equalisers import Ctle, Dfe, TxFfe

BAUD = 106.25e9
UI = 1 / BAUD


def c2m_kw(**extra):
    """chip_to_module at 106.25 GBd with the benchmark's SerDes (Tx FFE, CTLE, 8 DFE taps)."""
    kw = {"baud_hz": BAUD, "samples_per_ui": 32, "seed": 1,
          "tx": Transmitter(swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12, ffe=TxFfe.ieee(pre=(-0.1,))),
          "rx": Receiver(bandwidth_hz=0.75 * BAUD, ctle=Ctle.ieee_802_3ck(BAUD, -10.0), dfe=Dfe(8))}
    kw.update(extra)
    return kw


@pytest.fixture(scope="module")
def c2m():
    return channels.library.get("chip_to_module")


JITTER = Jitter(rj_rms_s=0.01 * UI, dcd_s=0.02 * UI, sj_amplitude_s=0.05 * UI, sj_frequency_hz=BAUD / 1000)


def both(ch, n, **kw):
    return {t: simulate(ch, n, tail=t, **kw) for t in ("direct", "fft")}


def test_without_jitter_the_tail_is_the_direct_sum(c2m):
    r = both(c2m, 3000, waveform_ui=3000, **c2m_kw())
    tail = r["fft"].config["tail"]
    assert r["direct"].config["tail"] is None and tail["filters"] >= 2  # the 32 columns, decomposed
    assert tail["span_ui"][1] - tail["head_ui"][1] > 100
    h0 = r["direct"].link.h0_v
    for key in ("adc_v", "slicer_v"):
        diff = np.abs(getattr(r["fft"].waveform, key) - getattr(r["direct"].waveform, key)).max()
        assert diff < 1e-6 * h0
        assert diff <= tail["bound_slicer_v"] * 1.001 + 1e-15
    assert np.array_equal(r["fft"].waveform.decided, r["direct"].waveform.decided)


def test_with_edge_jitter_the_difference_is_within_the_stated_bounds(c2m):
    r = both(c2m, 4000, waveform_ui=4000, jitter=JITTER, **c2m_kw())
    tail = r["fft"].config["tail"]
    d = (r["fft"].waveform.adc_v - r["direct"].waveform.adc_v)[500:]
    assert np.abs(d).max() <= tail["bound_slicer_v"]
    assert np.sqrt(np.mean(d**2)) <= tail["rms_bound_slicer_v"]
    # and the difference is small where it matters: a few 1e-3 of the main cursor at most
    assert np.abs(d).max() < 1e-2 * r["direct"].link.h0_v
    assert tail["jitter_first_order_error_v"] > 0


def test_the_linearisation_bound_is_the_worst_case_over_the_jitter():
    rng = np.random.default_rng(3)
    S = np.cumsum(rng.normal(size=400))
    x0 = rng.uniform(20, 380, size=50)
    i0 = np.floor(x0).astype(int)
    slope = S[i0 + 1] - S[i0]
    e_max = 3.3
    bound = _linearisation(S, x0, slope, e_max)
    for e in np.linspace(-e_max, e_max, 2001):
        err = np.abs(np.interp(x0 - e, np.arange(S.size), S) - np.interp(x0, np.arange(S.size), S) + e * slope)
        assert np.all(err <= bound + 1e-12)
    # and it is reached (the grid of e above comes within its resolution)
    worst = np.max([np.abs(np.interp(x0 - e, np.arange(S.size), S) - np.interp(x0, np.arange(S.size), S) + e * slope)
                    for e in np.linspace(-e_max, e_max, 20001)], axis=0)
    np.testing.assert_allclose(worst, bound, rtol=1e-3, atol=1e-9)


def test_eye_and_error_counts_agree_between_the_paths(c2m):
    kw = c2m_kw(noise=Noise(tx_snr_db=30.0, rx_noise_rms_v=0.003), jitter=JITTER)
    r = both(c2m, 60_000, eye=True, **kw)
    a, b = r["direct"], r["fft"]
    assert a.detector_errors > 0
    assert abs(a.detector_errors - b.detector_errors) <= max(3, 0.1 * a.detector_errors)
    # the eye's histograms: the same hits, moved by at most a few bins here and there
    ca, cb = a.eye.counts.astype(float), b.eye.counts.astype(float)
    assert np.abs(ca - cb).sum() / ca.sum() < 0.05
    heights = a.eye.heights_v(1e-2)
    assert np.all(heights > 5e-3)  # three open eyes
    np.testing.assert_allclose(b.eye.heights_v(1e-2), heights, atol=2 * np.diff(a.eye.voltage_edges_v)[0])
    assert b.eye.width_s(1e-2) == pytest.approx(a.eye.width_s(1e-2), abs=2 * (a.eye.time_s[1] - a.eye.time_s[0]))


def test_tail_with_a_clock_recovery_and_sampling_jitter(c2m):
    from phy.serdes import Impairments

    rx = Receiver(bandwidth_hz=0.75 * BAUD, ctle=Ctle.ieee_802_3ck(BAUD, -10.0), dfe=Dfe(8),
                  impairments=Impairments(rj_rms_s=0.005 * UI))
    for cdr in (Cdr("mm"), Cdr("bang-bang")):
        r = both(c2m, 3000, waveform_ui=3000, warmup_ui=3000, cdr=cdr, **c2m_kw(rx=rx))
        tail = r["fft"].config["tail"]
        assert tail["shifts"] > 32  # the loop's range of phases
        d = np.abs(r["fft"].waveform.adc_v - r["direct"].waveform.adc_v).max()
        assert d < 1e-6 * r["direct"].link.h0_v
        assert r["fft"].symbol_errors == r["direct"].symbol_errors


def test_tail_runs_do_not_depend_on_the_chunk_size(c2m):
    kw = c2m_kw(noise=Noise(rx_noise_rms_v=0.012, tx_snr_db=30), jitter=JITTER, tail="fft")
    a = simulate(c2m, 40_000, chunk_ui=4096, **kw)
    b = simulate(c2m, 40_000, chunk_ui=40_000 + 256, **kw)
    c = simulate(c2m, 40_000, chunk_ui=5000, **kw)
    assert a.detector_errors > 20
    for x in (b, c):
        assert x.detector_errors == a.detector_errors
        assert np.array_equal(x.error_ui, a.error_ui)


def test_the_path_is_chosen_by_the_span(c2m):
    short = simulate(c2m, 500, span_ui=(8, 55), **c2m_kw())
    assert short.config["tail"] is None  # 35 UIs beyond the head: the direct sum is cheaper
    full = simulate(c2m, 500, **c2m_kw())
    assert full.config["tail"] is not None and full.config["tail"]["filters"] == 1  # one phase, slicer only
    sym = simulate(c2m, 500, jitter=Jitter(rj_rms_s=0.01 * UI, model="symbol"), **c2m_kw())
    assert sym.config["tail"] is None
    with pytest.raises(ConfigError, match="symbol"):
        simulate(c2m, 10, tail="fft", jitter=Jitter(rj_rms_s=0.01 * UI, model="symbol"), **c2m_kw())
    with pytest.raises(ConfigError, match="tail"):
        simulate(c2m, 10, tail="overlap", **c2m_kw())
    with pytest.raises(ConfigError, match="head_ui"):
        simulate(c2m, 10, tail="fft", head_ui=(4,), **c2m_kw())


# --------------------------------------------------------------------------- the span by energy
def test_energy_span_drops_a_record_floor_and_keeps_a_reflection():
    spu, n_ui = 32, 2048
    t = np.arange(n_ui * spu) / spu
    main = 600.0
    y = np.exp(-0.5 * ((t - main) / 0.4) ** 2)  # the main pulse
    y += 1e-3 * np.exp(-0.5 * ((t - main - 300) / 0.4) ** 2)  # a reflection 300 UI later
    y += 2e-5 * np.random.default_rng(0).standard_normal(t.size)  # a floor along the whole record
    lo, hi, dropped = pl.energy_span(y, spu, 1e-6)
    assert (main * spu - lo) / spu < 40  # the floor before the pulse is gone
    assert (hi - main * spu) / spu > 300  # the reflection stays
    assert dropped["isi_rms"] < 2e-3 and dropped["energy_fraction"] <= 1e-6
    alo, ahi = pl.span(y, spu, 1e-5)
    assert (main * spu - alo) / spu > 500  # the amplitude rule keeps the floor


def test_default_span_of_the_cable_assembly_is_the_channel_not_the_record():
    from conftest import shared_file

    path = shared_file("ieee802.3ck/CA_19p75dB_thru.s4p")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", channels.ChannelQualityWarning)
        ch = channels.load(path)
    baud = 53.125e9
    rx = Receiver(bandwidth_hz=0.75 * baud, dfe=Dfe(8))
    r = simulate(ch, 200, baud_hz=baud, rx=rx)
    pre, post = -r.config["span_ui"][0], r.config["span_ui"][1]
    assert pre < 40 and post > 900  # 561 UI of pre-cursor record before; the cable's long tail kept
    assert r.config["span_dropped"]["isi_rms"] < 2e-3
    old = simulate(ch, 200, baud_hz=baud, rx=rx, span_threshold=1e-5)
    assert -old.config["span_ui"][0] > 500 and old.config["span_dropped"] is None
