"""The Rx FFE of Annex 178A: optimised by minimum mean square error at every setting.

802.3dj's reference receiver (178A.1.6, after Healey and Hegde, "Reference receiver
framework for 200G/lane electrical interfaces and PHYs", P802.3dj, January 2024) has an
Rx FFE of ``N_w`` UI-spaced taps (``d_w`` before the cursor) and a DFE. At every Tx FFE x
CTLE setting of the grid and every sampling time of the search range, the FFE and DFE taps
minimise the mean square error at the slicer with the FFE output's cursor held at one:

    MSE = sigma_X^2 (w^T R w + 1 + b^T b - 2 w^T h_0 - 2 w^T H_b^T b),  h_0^T w = 1,

``R = H^T H + R_n / sigma_X^2`` (178A-33) with ``H`` the convolution matrix of the sampled
pulse (``H[n, i] = h[n - i]``), ``h_0`` its cursor row and ``H_b`` the DFE's rows, and
``R_n`` the autocorrelation of the noise at the FFE input per UI lag (178A-18): the Rx noise
``eta_0 |H_r H_ctf|^2`` (93A-35), the transmitter's noise white at the driver after its FFE
through the whole pulse without the Tx FFE (178A-21: ``10^(-SNR_TX/10)``, no sigma_X^2),
random and dual-Dirac jitter through the equalised pulse's slope (178A-23) and each
aggressor at its own worst phase (178A-20). The DFE taps follow ``b = H_b w`` unless one
passes its limits; then they are clipped and the FFE re-solved with them fixed. FFE taps
beyond ``rx_ffe_limit`` times the cursor tap are clipped and the taps renormalised (the
P802.3dj normalisation). The figure of merit is ``20 log10(R_LM / (L - 1) / sqrt(MSE))``.

Sums of squares over the whole record are quadratic forms in the Tx FFE taps, whose
matrices are the circular autocorrelations of the UI-sampled pulse per phase (as in the
93A search); so every setting costs a few thousand operations, in one Numba kernel
(:mod:`._mmse_kernels`).
:func:`solve_at` is the same solution written out with dense matrices and
``numpy.linalg.solve`` on the KKT system, the kernel's oracle in the tests.
"""

from __future__ import annotations

import numpy as np

from ..pmf import pmf_quantile
from ._mmse_kernels import mmse_grid

__all__ = ["mmse_grid", "phase_energy", "phase_tables", "quant_step", "solve_at"]


def phase_energy(y: np.ndarray, M: int) -> np.ndarray:
    """``e[ph] = sum_k y[ph + k M]^2`` for every phase ``ph < M`` (``y.size`` a multiple of
    ``M``): one reduction over the contiguous per-phase rows, equal bit for bit to
    ``np.sum(y[ph::M] ** 2)`` phase by phase (the same pairwise sums)."""
    return np.sum(np.ascontiguousarray(y.reshape(-1, M).T) ** 2, axis=1)


def phase_tables(y: np.ndarray, M: int, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """The UI-sampled record at each phase, ``Y[ph, k] = y[ph + k M]``, and its circular
    autocorrelation ``A[ph, m] = sum_k Y[ph, k] Y[ph, k + m]`` for ``m < lags``."""
    K = y.size // M
    Y = np.ascontiguousarray(y[: K * M].reshape(K, M).T)
    F = np.fft.rfft(Y, axis=1)
    A = np.fft.irfft(np.abs(F) ** 2, K, axis=1)[:, :lags]
    return Y, np.ascontiguousarray(A)


def _system(h: np.ndarray, k0: int, r_n: np.ndarray, dw: int, nw: int, nd: int, var_x: float):
    """``R = H^T H + R_n / sigma_X^2`` over ``nw`` FFE taps (``H[n, i] = h[n - i]``: its
    Gram matrix is Toeplitz in the pulse's linear autocorrelation), the cursor's row
    ``h_0`` and the DFE's rows ``H_b`` of the convolution."""
    h = np.asarray(h, dtype=float)
    lags = np.arange(nw)
    r_hh = np.array([h[: h.size - k] @ h[k:] if k < h.size else 0.0 for k in lags])
    R = (r_hh + np.asarray(r_n, dtype=float)[:nw] / var_x)[np.abs(np.subtract.outer(lags, lags))]
    d = k0 + dw

    def row(n):
        k = n - lags
        return np.where((k >= 0) & (k < h.size), h[np.clip(k, 0, h.size - 1)], 0.0)

    return R, row(d), np.array([row(d + 1 + q) for q in range(nd)]).reshape(nd, nw)


def _solve(R, h0, Hb, main: int, lim, bmin, bmax, var_x: float, r_lm: float, levels: int):
    """The KKT system of 178A-33..36 solved by ``numpy.linalg.solve``, then the DFE and the
    FFE limits (``lim`` per tap, relative to the cursor tap ``main``). (taps, DFE, FOM)."""
    n, nd = h0.size, Hb.shape[0]
    A = np.block([[R, -Hb.T, -h0[:, None]], [-Hb, np.eye(nd), np.zeros((nd, 1))],
                  [h0[None, :], np.zeros((1, nd)), np.zeros((1, 1))]])
    x = np.linalg.solve(A, np.concatenate([h0, np.zeros(nd), [1.0]]))
    w, b = x[:n], x[n : n + nd]
    b_lim = np.clip(b, bmin, bmax)
    if not np.array_equal(b_lim, b):
        A2 = np.block([[R, -h0[:, None]], [h0[None, :], np.zeros((1, 1))]])
        w = np.linalg.solve(A2, np.concatenate([Hb.T @ b_lim, [1.0]]))[:n]
    b = b_lim
    lim = lim * abs(w[main])
    wl = w.copy()
    others = np.arange(n) != main
    wl[others] = np.clip(w[others], -lim[others], lim[others])
    if not np.array_equal(wl, w):
        wl /= h0 @ wl
        b = np.clip(Hb @ wl, bmin, bmax)
    mse = var_x * (wl @ R @ wl + 1 + b @ b - 2 * wl @ h0 - 2 * wl @ Hb.T @ b)
    return wl, b, float(20 * np.log10(r_lm / (levels - 1) / np.sqrt(mse)))


def solve_at(h: np.ndarray, k0: int, r_n: np.ndarray, dw: int, nw: int, nd: int, bmin, bmax, wlim,
             var_x: float, r_lm: float, levels: int, cols=None) -> tuple[np.ndarray, np.ndarray, float]:
    """The same MMSE solution for one sampled pulse ``h`` (cursor at ``h[k0]``) and noise
    autocorrelation ``r_n`` (per UI lag, ``nw`` lags), written out with dense matrices:
    the pulse's linear autocorrelation (not the kernel's circular quadratic forms) and the
    KKT system of 178A-33..36 solved by ``numpy.linalg.solve``. ``cols``: the FFE tap
    positions in use out of ``nw`` (default all; floating taps, 178A.1.8.1), ``wlim`` one
    limit for every tap or one per position. Returns the FFE taps (zero off ``cols``), the
    DFE taps and the FOM (dB)."""
    R, h0, Hb = _system(h, k0, r_n, dw, nw, nd, var_x)
    cols = np.arange(nw) if cols is None else np.asarray(cols)
    lim = np.broadcast_to(np.asarray(wlim, dtype=float), (nw,))
    w, b, fom = _solve(R[np.ix_(cols, cols)], h0[cols], Hb[:, cols], int(np.flatnonzero(cols == dw)[0]), lim[cols],
                       bmin, bmax, var_x, r_lm, levels)
    full = np.zeros(nw)
    full[cols] = w
    return full, b, fom


def floating_taps(h: np.ndarray, k0: int, r_n: np.ndarray, p, var_x: float):
    """The Rx FFE with floating taps (178A.1.8.1): the ``rx_ffe_pre + 1 + rx_ffe_post``
    fixed taps, then ``rx_ffe_float_groups`` groups of ``rx_ffe_float_taps`` contiguous
    taps placed one group at a time where, with those placed before, they give the best
    MMSE FOM, anywhere up to ``rx_ffe_span_ui`` taps (each within ``rx_ffe_float_limit``
    of the cursor tap; the fixed ones within ``rx_ffe_limit``). ``r_n`` holds the noise
    autocorrelation for every lag of the span. Returns (taps over the span, DFE, FOM)."""
    dw, nfix, span = p.rx_ffe_pre, p.rx_ffe_pre + 1 + p.rx_ffe_post, p.rx_ffe_span_ui
    nd, nf = len(p.dfe_max), p.rx_ffe_float_taps
    wlim = np.full(span, float(p.rx_ffe_float_limit))
    wlim[:nfix] = p.rx_ffe_limit
    bmin, bmax = np.asarray(p.dfe_min, dtype=float), np.asarray(p.dfe_max, dtype=float)
    R, h0, Hb = _system(h, k0, r_n, dw, span, nd, var_x)

    def at(cols):
        c = np.asarray(cols)
        return _solve(R[np.ix_(c, c)], h0[c], Hb[:, c], dw, wlim[c], bmin, bmax, var_x, p.r_lm, p.levels), c

    chosen = list(range(nfix))
    best = at(chosen)
    for _ in range(p.rx_ffe_float_groups):
        trial = None
        for start in range(nfix, span - nf + 1):
            grp = list(range(start, start + nf))
            if any(c in chosen for c in grp):
                continue
            r = at(sorted(chosen + grp))
            if trial is None or r[0][2] > trial[0][0][2]:
                trial = (r, grp)
        if trial is None:
            break
        best, grp = trial
        chosen = sorted(chosen + grp)
    (w, b, fom), cols = best
    full = np.zeros(span)
    full[cols] = w
    return full, b, fom


def rx_noise_autocorr(eta0: float, h_rx: np.ndarray, f: np.ndarray, M: int, nw: int) -> np.ndarray:
    """The Rx noise's autocorrelation at UI lags ``0 .. nw - 1``: ``eta_0 sum_{f > 0} |H_r
    H_ctf|^2 cos(2 pi f l UI) df`` (93A-35 per lag) on the record's DFT grid (``f = k df``,
    ``n = 2 (f.size - 1)`` samples, ``M`` per UI), by one inverse DFT."""
    x = np.abs(h_rx) ** 2
    n = 2 * (f.size - 1)
    m = M * np.arange(nw)
    c = np.cos(np.pi * m)  # the Nyquist bin's cosine
    full = n * np.fft.irfft(x, n)[m % n]
    return eta0 * (f[1] - f[0]) * ((full - x[0] - x[-1] * c) / 2 + x[-1] * c)


def _tables(p, pulses, kinds, h_rx, f, M: int, var_x: float, nw: int):
    """The per-CTLE tables of :func:`mmse_grid` (see there) from the pulses at the FFE's
    input (victim first, no Tx FFE applied) and the Rx path's response ``h_rx``."""
    lags = nw + 5
    y = pulses[0]
    Y, A = phase_tables(y, M, lags)
    slope = (np.roll(y, -1) - np.roll(y, 1)) / (2 / M)
    _, SA = phase_tables(slope, M, lags)
    r_rx = rx_noise_autocorr(p.eta0_v2_per_hz, h_rx, f, M, nw)
    rn_ph = r_rx[None, :] + 10 ** (-p.snr_tx_db / 10) * A[:, :nw]  # 178A-21: no sigma_X^2
    fext = []
    for x, kind in zip(pulses[1:], kinds[1:]):
        _, Ax = phase_tables(x, M, lags)
        if kind == "fext":
            fext.append(Ax)
        else:  # NEXT: no FFE of ours; its worst phase (178A-20)
            rn_ph = rn_ph + var_x * Ax[int(np.argmax(Ax[:, 0])), :nw][None, :]
    F = np.ascontiguousarray(np.stack(fext)) if fext else np.zeros((0, M, lags))
    return Y, A, SA, np.ascontiguousarray(rn_ph), F


def grid_foms(p, pulses, kinds, h_rx, f, M: int, var_x: float, tx_grid: np.ndarray, best_so_far: float = -1e300):
    """The MMSE FOM and cursor sample of every Tx FFE setting for one CTLE setting's
    pulses (:func:`mmse_grid`; with ``p.ts_search == "pruned"`` a setting more than
    ``p.ts_prune_db`` below ``best_so_far`` after every fourth sampling time is not tried at
    the others)."""
    nw = p.rx_ffe_pre + 1 + p.rx_ffe_post
    Y, A, SA, rn_ph, F = _tables(p, pulses, kinds, h_rx, f, M, var_x, nw)
    y = pulses[0]
    n = y.size
    peak0 = int(np.argmax(y))
    lo = peak0 - 2 * M  # the Tx FFE moves the peak by well under a UI
    w = np.arange(lo, peak0 + 2 * M + 1)
    win = np.ascontiguousarray(np.stack([y[(w - (i - 3) * M) % n] for i in range(5)]))
    ts_lo, ts_hi = p.ts_range_samples if p.ts_range_samples is not None else (-(M // 2), M // 2)
    fom = np.empty(tx_grid.shape[0])
    cur = np.empty(tx_grid.shape[0], dtype=np.int64)
    mmse_grid(np.ascontiguousarray(tx_grid, dtype=float), Y, A, SA, rn_ph, F, win, lo, M, p.rx_ffe_pre, nw,
              np.asarray(p.dfe_min, dtype=float), np.asarray(p.dfe_max, dtype=float), float(p.rx_ffe_limit), var_x,
              p.a_dd_ui**2 + p.sigma_rj_ui**2, p.r_lm, p.levels, int(ts_lo), int(ts_hi),
              4 if p.ts_search == "pruned" else 1, float(p.ts_prune_db), float(best_so_far), fom, cur)
    return fom, cur % n


def noise_at(p, pulses, kinds, h_rx, f, M: int, var_x: float, taps, s_ix: int, nw: int | None = None) -> np.ndarray:
    """The noise autocorrelation at the FFE input per UI lag for Tx FFE ``taps`` with the
    cursor at sample ``s_ix``, written out directly (the kernel's ``r`` minus the pulse's
    own autocorrelation): Rx noise, transmitter noise, jitter through the equalised
    pulse's slope, every aggressor at its worst phase."""
    nw = p.rx_ffe_pre + 1 + p.rx_ffe_post if nw is None else nw
    ph = s_ix % M

    def ac(x):  # circular, as the record is one period: sum_k x[k] x[k + lag]
        return np.fft.irfft(np.abs(np.fft.rfft(x)) ** 2, x.size)[:nw]

    def ffe(x):
        return sum(c * np.roll(x, (i - 3) * M) for i, c in enumerate(taps))

    r = rx_noise_autocorr(p.eta0_v2_per_hz, h_rx, f, M, nw) + 10 ** (-p.snr_tx_db / 10) * ac(pulses[0][ph::M])
    thru = ffe(pulses[0])
    slope = (np.roll(thru, -1) - np.roll(thru, 1)) / (2 / M)
    r = r + (p.a_dd_ui**2 + p.sigma_rj_ui**2) * var_x * ac(slope[ph::M])
    for x, kind in zip(pulses[1:], kinds[1:]):
        y = ffe(x) if kind == "fext" else x
        m = int(np.argmax(phase_energy(y, M)))
        r = r + var_x * ac(y[m::M])
    return r


def quant_step(p, h: np.ndarray, var_noise: float) -> float:
    """178A-29/30: the quantiser's step ``2 V_qc / (2^N_qb - 1)``, ``V_qc`` where the signal
    at the quantiser (the pulse sampled once per UI at the cursor's phase, every UI, with
    PAM symbols) plus a Gaussian of ``var_noise`` falls below ``-V_qc`` with probability
    ``P_qc / 2``. Cursors under 1 % of the largest join the Gaussian by their variance."""
    lv = np.linspace(-1, 1, p.levels)
    small = np.abs(h) < 0.01 * np.max(np.abs(h))  # the many small cursors: their variance, as a Gaussian
    var = var_noise + (p.levels**2 - 1) / (3 * (p.levels - 1) ** 2) * float(np.sum(h[small] ** 2))
    big = h[~small]
    v_qc = pmf_quantile([big], lv, np.sqrt(var), p.adc_clip_probability / 2, float(np.sum(np.abs(big))) / 4000)
    return 2 * v_qc / (2**p.adc_bits - 1)
