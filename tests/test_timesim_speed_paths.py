"""The time-domain simulator's faster paths outside its kernel and in the eye (issue 35) give
the results of the code before them bit for bit: fixed-seed runs pinned to the figures the
code of main 862076c computed (error counts and positions, burst spans, the eye's
histogram, bathtub and crossings, the recorded waveform), and each rewritten piece against
the plain computation it replaced (and against a library oracle within a stated bound)."""

import hashlib
import warnings

import numpy as np
import pytest
from numba import njit

import channels
from phy.engines import simulate
from phy.engines.timesim import _samples as KS
from phy.engines.timesim import records as R
from phy.engines.timesim import tail as T
from phy.engines.timesim.sources import random_symbols
from phy.serdes import Cdr, Ctle, Dfe, Impairments, Jitter, Noise, Receiver, Transmitter
from phy.serdes.equalisers import TxFfe

B1, B2 = 106.25e9, 53.125e9


def _h(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def _kw(baud, snr=33.0, dfe=8, rx=None, **extra):
    """The SerDes of benchmarks/bench_timesim.py (seed 7), Tx SNR ``snr`` dB."""
    ui = 1 / baud
    kw = {"baud_hz": baud, "samples_per_ui": 32, "seed": 7,
          "tx": Transmitter(swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12, ffe=TxFfe.ieee(pre=(-0.1,))),
          "rx": rx or Receiver(bandwidth_hz=0.75 * baud, ctle=Ctle.ieee_802_3ck(baud, -10.0), dfe=Dfe(dfe)),
          "noise": Noise(tx_snr_db=snr, rx_noise_psd_v2_per_hz=8.2e-18),
          "jitter": Jitter(rj_rms_s=0.01 * ui, dcd_s=0.02 * ui, sj_amplitude_s=0.05 * ui, sj_frequency_hz=baud / 1000)}
    kw.update(extra)
    return kw


def _case(name):
    if name.startswith("CA"):
        from conftest import shared_file

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = channels.load(shared_file("ieee802.3ck/CA_19p75dB_thru.s4p"))
    else:
        ch = channels.library.get("chip_to_module" if name.startswith("c2m") else "twinax_1m_26awg")
    if name == "twinax slicer noisy":
        return ch, 200_000, _kw(B1, snr=19.0)
    if name == "twinax slicer chunks":  # short chunks, the last one partial: the buffers reused and regrown
        return ch, 30_000, _kw(B1, snr=19.0, chunk_ui=4096)
    if name == "CA slicer":
        return ch, 200_000, _kw(B2)
    if name == "twinax eye":
        return ch, 30_000, _kw(B1, snr=21.0, eye=True, waveform_ui=64)
    if name == "CA eye":
        return ch, 20_000, _kw(B2, eye=True, waveform_ui=16, chunk_ui=7000)
    imp = Impairments(adc_enob=5.0, rj_rms_s=300e-15, wander_rms_s=300e-15, wander_bandwidth_hz=50e6)
    rx = Receiver(bandwidth_hz=0.75 * B1, ctle=Ctle.ieee_802_3ck(B1, -10.0), dfe=Dfe(4), impairments=imp)
    return ch, 20_000, _kw(B1, snr=24.0, rx=rx, cdr=Cdr("bang-bang", kp_ui=2**-6, ki_ui=2**-13, update_ui=16),
                           warmup_ui=2000, eye=True, tail="fft")


# computed by the code of main 862076c (the same runs, digested as in _digest); the eye runs'
# recorded waveforms ("adc", "slc") since the tail's outputs two to a complex inverse FFT
# (the last bits move; within 1e-13 V of 862076c's, tests/test_timesim_tail_pairs.py)
PINNED = {
    "twinax slicer noisy": {"sym": 90, "det": 90, "bit": 90, "err_ui": "958ef4ff38daeb9a",
                            "err_lv": "7dff606c58376e4c", "bursts": "a82f2e70f3a74141", "ph": [0.0, 0.0]},
    "twinax slicer chunks": {"sym": 18, "det": 18, "bit": 18, "err_ui": "87433db4f5652ee5",
                             "err_lv": "895423b14c534b2f", "bursts": "15d1849c076223c8", "ph": [0.0, 0.0]},
    "CA slicer": {"sym": 48, "det": 48, "bit": 48, "err_ui": "2c1a61e700eed862", "err_lv": "9f417f0f297c5f4d",
                  "bursts": "1c17637ff916edd8", "ph": [0.0, 0.0]},
    "twinax eye": {"sym": 1, "det": 1, "bit": 1, "err_ui": "7c0c647e53208fa6", "err_lv": "4bf5122f344554c5",
                   "bursts": "086705266137fc94", "ph": [0.0, 0.0], "eye": "802772d9e6fa64ea",
                   "col": "7a87fb36cffdc34d", "cross": "9a9ab7ff5517f11c", "eye_sum": 960000,
                   "adc": "870ae452f1220892", "slc": "996c20a1beedd141"},
    "CA eye": {"sym": 2, "det": 2, "bit": 2, "err_ui": "21b5023c3986c5db", "err_lv": "ca2fd00fa0011907",
               "bursts": "81f0112c9aa4dcdf", "ph": [0.0, 0.0], "eye": "2b1fb6e15724879e", "col": "eec4a675d71e9b18",
               "cross": "b6c3b8f6b2d13dc9", "eye_sum": 640000, "adc": "f6f1f7060f6a899b", "slc": "6762b48a0e3676c6"},
    "c2m bang-bang adc eye": {"sym": 176, "det": 176, "bit": 176, "err_ui": "801db4e871bcc51d",
                              "err_lv": "15d16ca0596cd092", "bursts": "8b1ecc5a88f27916",
                              "ph": [1.6226005284926473e-13, 4.610061787384162e-13], "eye": "ab26ffea6ef8632c",
                              "col": "3fd59a25cd306867", "cross": "ebf4c3a3e9f09779", "eye_sum": 640000},
}


def _digest(r) -> dict:
    d = {"sym": r.symbol_errors, "det": r.detector_errors, "bit": r.bit_errors, "err_ui": _h(r.error_ui),
         "err_lv": _h(r.error_levels), "bursts": _h(r.burst_span_counts), "ph": [r.cdr_phase_mean_s, r.cdr_phase_rms_s]}
    if r.eye is not None:
        d.update(eye=_h(r.eye.counts), col=_h(r.eye.column_errors), cross=_h(r.eye.crossings),
                 eye_sum=int(r.eye.counts.sum()))
    if r.waveform is not None:
        d.update(adc=_h(r.waveform.adc_v), slc=_h(r.waveform.slicer_v))
    return d


@pytest.mark.parametrize("name", list(PINNED))
def test_fixed_seed_runs_are_those_of_the_code_before(name):
    ch, n, kw = _case(name)
    r = simulate(ch, n, **kw)
    assert r.eye is None or r.eye.counts.dtype == np.int64
    assert _digest(r) == PINNED[name]


def _outputs_before(plan, d, u):
    """TailPlan.outputs as main 862076c computed it (fresh arrays, then the valid columns)."""
    import scipy.fft as sfft

    L = plan.kd.shape[1]
    nfft, step = plan.nfft, plan.nfft - L + 1
    n_valid = d.size - L + 1
    nb = -(-n_valid // step)
    out = np.empty((plan.n_out, nb * step))

    def spectra(x):
        pad = np.zeros((nb - 1) * step + nfft)
        pad[: x.size] = x
        return sfft.rfft(np.lib.stride_tricks.sliding_window_view(pad, nfft)[::step], axis=1)

    D = spectra(d)
    U = spectra(u) if (u is not None and np.any(plan._ku_on)) else None
    for o in range(plan.n_out):
        z = 0.0
        if plan._kd_on[o]:
            z = D * plan._kd_hat[o]
        if U is not None and plan._ku_on[o]:
            z = z - U * plan._ku_hat[o]
        out[o] = sfft.irfft(z, nfft, axis=1)[:, L - 1 :].reshape(-1)
    return np.ascontiguousarray(out[:, :n_valid])


@pytest.fixture(scope="module")
def plans():
    """The tail plans of a twinax run at the slicer (one output per filter pair) and with the
    eye (the decomposition's basis: rows of kd only, then of ku only)."""
    sm = __import__("phy.engines.timesim.simulate", fromlist=["plan_tail"])
    got = []
    orig = sm.plan_tail

    def spy(*a):
        got.append(orig(*a))
        return got[-1]

    sm.plan_tail = spy
    try:
        ch = channels.library.get("twinax_1m_26awg")
        simulate(ch, 300, **_kw(B1))
        simulate(ch, 300, **_kw(B1, eye=True))
    finally:
        sm.plan_tail = orig
    assert got[0].n_out == 1 and got[1].n_out > 4
    return got


@pytest.mark.parametrize("which", [0])  # 1 (a basis: two outputs per complex FFT): test_timesim_tail_pairs.py
def test_tail_outputs_are_the_plain_overlap_save_bit_for_bit(plans, which):
    plan = plans[which]
    rng = np.random.default_rng(5)
    L = plan.kd.shape[1]
    for n in (40_000, 9_000, 61_234):  # the plan's buffers grown, reused smaller, regrown
        d = rng.standard_normal(n + L - 1) * 0.2
        u = d * rng.standard_normal(d.size) * 0.5
        got = plan.outputs(d, u)
        assert got.flags.c_contiguous and got.shape[0] == plan.n_out and got.shape[1] >= n
        np.testing.assert_array_equal(got[:, :n], _outputs_before(plan, d, u))
        if plan._kd_on.all():  # without the jitter's input (a run has none only when no row reads it)
            got0 = plan.outputs(d, None)
            np.testing.assert_array_equal(got0[:, :n], _outputs_before(plan, d, None))


def test_tail_outputs_are_the_direct_convolution_within_1e_12(plans):
    """Against numpy's direct convolution: every output within 1e-12 of the sum of its terms'
    magnitudes (the FFT's rounding is a few 1e-16 of it)."""
    plan = plans[1]
    rng = np.random.default_rng(6)
    L = plan.kd.shape[1]
    n = 20_000
    d = rng.standard_normal(n + L - 1) * 0.2
    u = d * rng.standard_normal(d.size) * 0.5
    got = plan.outputs(d, u)[:, :n]
    for o in range(plan.n_out):
        ref = np.convolve(d, plan.kd[o], "valid") - np.convolve(u, plan.ku[o], "valid")
        scale = (np.convolve(np.abs(d), np.abs(plan.kd[o]), "valid")
                 + np.convolve(np.abs(u), np.abs(plan.ku[o]), "valid"))
        assert np.all(np.abs(got[o] - ref) <= 1e-12 * scale + 1e-300)


@njit(cache=False, fastmath=True)
def _add_tail_cols_before(cols, n_lo, n_hi, tail, shift0):
    """add_tail_cols of main 862076c: a row at a time, every output in turn."""
    tb, tc, t_base, t_smin = tail.out, tail.coef, tail.base, tail.s_min
    no = tc.shape[0]
    P = cols.shape[1]
    s0 = shift0 - t_smin
    for i in range(n_hi - n_lo):
        row = cols[i]
        for o in range(no):
            v = tb[o, n_lo + i - t_base]
            w = tc[o, s0 : s0 + P]
            for p in range(P):
                row[p] += w[p] * v


@njit(cache=False, fastmath=True)
def _add_tail_cols_now(cols, n_lo, n_hi, tail, shift0):
    """add_tail_cols as the kernels compile it (a register_jitable helper: called from
    Python it would run as plain Python)."""
    T.add_tail_cols(cols, n_lo, n_hi, tail, shift0)


def test_tail_columns_are_the_row_by_row_sum_bit_for_bit():
    rng = np.random.default_rng(7)
    tail = R.Tail(rng.standard_normal((17, 5000)), rng.standard_normal((17, 40)), 100, -20)
    for m, P in ((1000, 32), (77, 32), (130, 16)):  # whole blocks and a partial last one
        c0 = rng.standard_normal((m, P))
        a, b = c0.copy(), c0.copy()
        _add_tail_cols_now(a, 300, 300 + m, tail, -P // 2)
        _add_tail_cols_before(b, 300, 300 + m, tail, -P // 2)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c0)


@njit(cache=False, fastmath=True)
def _fir_valid_before(x, g, out):
    """fir_valid of main 862076c: every tap over the whole output."""
    nt = g.size
    n = out.size
    for i in range(n):
        out[i] = 0.0
    for t in range(nt):
        gt = g[nt - 1 - t]
        src = x[t : t + n]
        for i in range(n):
            out[i] += gt * src[i]


def test_rx_noise_fir_is_the_plain_loop_and_numpy_convolve():
    rng = np.random.default_rng(8)
    for n, nt in ((10_000, 17), (4096, 5), (333, 1)):
        g = rng.standard_normal(nt)
        x = rng.standard_normal(n + nt - 1)
        a, b = np.empty(n), np.empty(n)
        KS.fir_valid(x, g, a)
        _fir_valid_before(x, g, b)
        np.testing.assert_array_equal(a, b)
        scale = np.convolve(np.abs(x), np.abs(g), "valid")
        assert np.all(np.abs(a - np.convolve(x, g, "valid")) <= 1e-14 * scale)


@pytest.mark.parametrize("order", [2, 4])
def test_random_symbols_are_the_top_bits_as_before(order):
    a = random_symbols(np.random.default_rng(9), 50_001, order)
    raw = np.random.default_rng(9).bit_generator.random_raw(50_001)
    b = (raw >> np.uint64(64 - order.bit_length() + 1)).astype(np.int64)
    assert a.dtype == np.int64 and a.flags.c_contiguous
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == set(range(order))


def test_edges_from_reused_buffers_are_fresh_edges():
    rng = np.random.default_rng(10)
    bufs = {}
    for n in (5000, 3000, 7000):
        sent = rng.integers(0, 4, n)
        e1 = R.edges_for(sent, sent, True, True, bufs)
        e2 = R.edges_for(sent, sent, True, False)
        assert e1.x.size == e1.d.size == e1.u.size == n and e2.u.size == 0
        drv = R.Driver(np.array([-1.0, -1 / 3, 1 / 3, 1.0]), np.array([-0.1, 0.9]), 1, 0.4)
        eps = rng.standard_normal(n) * 0.3
        txn = rng.standard_normal(n) * 1e-3
        KS.prepare_symbols(e1, drv, txn, eps, 100.0)
        KS.prepare_symbols(e2, drv, txn, eps, 100.0)
        for f in ("x", "a", "b", "ax", "bx", "idx", "d"):
            np.testing.assert_array_equal(getattr(e1, f), getattr(e2, f))


def test_gaussian_draws_are_the_state_in_memory_draws_bit_for_bit():
    """fast_normals (the state in locals) against the ziggurat drawn through the state array
    (main 862076c's loop), clipped and not, over several calls."""
    from phy.serdes import _kernels as SK

    @njit(cache=False)
    def before(s, out, scale, clip, zx, zr):
        for i in range(out.size):
            while True:
                b = SK._next(s)
                layer = np.int64(b & np.uint64(0xFF))
                u = 2.0 * (((b >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) - 1.0
                if abs(u) < zr[layer]:
                    v = u * zx[layer]
                    break
                if layer == 0:
                    while True:
                        xt = np.log(((SK._next(s) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) / zx[1]
                        yt = np.log(((SK._next(s) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0))
                        if -2.0 * yt >= xt * xt:
                            break
                    v = xt - zx[1] if u < 0 else zx[1] - xt
                    break
                v = u * zx[layer]
                f0 = np.exp(-0.5 * (zx[layer] * zx[layer] - v * v))
                f1 = np.exp(-0.5 * (zx[layer + 1] * zx[layer + 1] - v * v))
                if f1 + (((SK._next(s) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) * (f0 - f1) < 1.0:
                    break
            if clip > 0.0:
                v = min(max(v, -clip), clip)
            out[i] = scale * v

    sa = np.array([1, 2, 3, 4], dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    sb = sa.copy()
    for n, clip in ((100_000, 0.0), (77_777, 3.0), (1, 0.0), (250_000, 8.0)):
        a, b = np.empty(n), np.empty(n)
        SK.fast_normals(sa, a, 0.7, clip, SK._ZX, SK._ZR)
        before(sb, b, 0.7, clip, SK._ZX, SK._ZR)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(sa, sb)
    assert np.min(a) == -0.7 * 8.0 or np.min(a) > -0.7 * 8.0


@pytest.mark.parametrize("pattern, precoder", [("random", False), ("prbs13q", False), ("prbs31", True),
                                                ("ssprq", True)])
def test_transmitter_stream_filled_in_place_is_the_copied_stream(pattern, precoder):
    """The transmitter's stream written by its source into the window's buffers against the
    same stream through ``make(n)`` and copies, over windows that overlap, grow and jump."""
    from phy.engines.timesim.sources import tx_stream
    from phy.serdes import prepare_link

    class Copied:  # the source without ``fill``: the copying path
        def __init__(self, f):
            self.f = f

        def __call__(self, n):
            return self.f(n)

    tx = Transmitter(pattern=pattern, precoder=precoder)
    lk = prepare_link(channels.library.get("twinax_1m_26awg"), baud_hz=B2, tx=tx, noise=Noise(tx_snr_db=30.0),
                      samples_per_ui=16)
    jit = Jitter(rj_rms_s=1e-13, dcd_s=2e-13, sj_amplitude_s=5e-13, sj_frequency_hz=1e8)
    a, b = (tx_stream(-100, tx, lk, jit, *(np.random.default_rng(s) for s in (1, 2, 3))) for _ in range(2))
    b.make = Copied(b.make)
    for lo, hi in ((-50, 300), (100, 1300), (1200, 1300), (1250, 5000), (4900, 5100)):
        wa, wb = a.window(lo, hi), b.window(lo, hi)
        assert set(wa) == set(wb) == {"data", "sent", "txn", "eps"}
        for k in wb:
            assert wa[k].dtype == wb[k].dtype
            np.testing.assert_array_equal(wa[k], wb[k])
    assert np.any(wa["txn"]) and np.any(wa["eps"])


def test_rx_noise_from_reused_buffers_does_not_depend_on_the_chunks():
    """The receiver's noise (its FIR's state carried, its buffers reused and regrown) in
    chunks of changing size is the noise in one chunk, and the FIR of its white draws."""
    from phy.engines.timesim.sources import RxNoise
    from phy.serdes import _kernels as SK
    from phy.serdes import prepare_link

    lk = prepare_link(channels.library.get("twinax_1m_26awg"), baud_hz=B1, rx=Receiver(bandwidth_hz=0.75 * B1),
                      noise=Noise(rx_noise_psd_v2_per_hz=8.2e-18), samples_per_ui=32)
    assert lk.rx_noise_fir.size > 1
    whole = RxNoise(lk, np.random.default_rng(11)).take(20_000).copy()
    cut = RxNoise(lk, np.random.default_rng(11))
    parts = [cut.take(n).copy() for n in (3000, 9000, 1000, 7000)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    g = lk.rx_noise_fir
    w = np.concatenate([np.zeros(g.size - 1), np.empty(20_000)])
    SK.FastNormal(np.random.default_rng(11)).fill(w[g.size - 1 :], 1.0)
    ref = np.convolve(w, g, "valid") + 0.0
    assert np.max(np.abs(whole - ref)) <= 1e-13 * np.max(np.abs(ref))
