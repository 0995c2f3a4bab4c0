"""The time-domain simulator's samples: the Numba kernels that sum the edges' and the pulse
sources' shares (the per-UI loop that decides is :mod:`._kernels`).

The received signal at time ``t`` is built from the driver's edges: with ``d_k = x_k -
x_(k-1)`` the step between transmitted amplitudes and ``s`` the step response,
``y(t) = sum_k d_k s(t - k UI - eps_k)``. Edges older than the response's span have
settled, and their sum telescopes into ``x_(k_old) * s(...)``. The step response is
tabulated on the fine grid and read with linear interpolation at each edge's own
(jittered) position: the edge of symbol ``k`` sits ``i_k + f_k`` fine samples into the
table (integer and fraction, computed once per symbol), so its contribution to the sample
of UI ``n`` is ``(1 - f_k) S[q] + f_k S[q + 1]`` with ``q = i_k + (n - k) spu + I``, ``I``
the clock's phase in whole fine samples.

Samples are made a block of UIs at a time, scattering each symbol's contribution over the
block's samples: for a fixed symbol the table is read at stride ``spu``, so it is stored
as ``T[row, col] = S[row + col spu]`` and the inner loop runs over contiguous memory (the
eye's columns read the flat table contiguously instead).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

# Helpers called only from other kernels: as register_jitable functions they are compiled
# into their callers without a Python entry point of their own (Numba's overload path),
# which cuts the first run's compilation (issue 35); the callers' machine code is the same.
_helper = register_jitable(fastmath=True)

from .tail import add_tail, add_tail_cols

__all__ = ["fir_valid", "prepare_symbols", "sample_cols", "sample_row", "scatter", "scatter_cols", "settled",
           "settled_cols"]


@njit(cache=True, inline="always")
def _log2(v):
    """The exponent of a power of two."""
    e = 0
    while v > 1:
        v >>= 1
        e += 1
    return e


@_helper
def scatter(out, n_lo, n_hi, a, b, idx, T0, T1, spu, jmin, jmax, shift):
    """``out[n - n_lo] += a_k T0[q] + b_k T1[q]`` for ``n`` in ``[n_lo, n_hi)`` and every
    symbol ``k`` with ``jmin <= n - k <= jmax``, where the flat index is
    ``q = idx[k] + (n - k) spu + shift`` and ``T[row, col]`` holds flat index ``row + col spu``.

    (Slices indexed from zero let LLVM drop negative-index checks and vectorise; a power of
    two ``spu``, as usual, saves an integer division per symbol.)"""
    pow2 = spu & (spu - 1) == 0
    sh = _log2(spu)
    for k in range(n_lo - jmax, n_hi - jmin):
        n0 = max(n_lo, k + jmin)
        L = min(n_hi, k + jmax + 1) - n0
        if L <= 0:
            continue
        ak = a[k]
        bk = b[k]
        q0 = idx[k] + (n0 - k) * spu + shift
        if pow2:
            row = q0 & (spu - 1)
            col = q0 >> sh
        else:
            row = q0 % spu
            col = q0 // spu
        dst = out[n0 - n_lo : n0 - n_lo + L]
        s0 = T0[row, col : col + L]
        s1 = T1[row, col : col + L]
        for m in range(L):
            dst[m] += ak * s0[m] + bk * s1[m]


@_helper
def scatter_cols(out, n_lo, n_hi, a, b, idx, S, spu, jmin, jmax, shift):
    """Like :func:`scatter` on ``out[n - n_lo, p]`` for the ``spu`` columns ``p`` (flat
    index ``q + p``), reading the flat table ``S``. Row ``n + 1`` starts ``spu`` further
    on in both ``out`` and ``S``, so each symbol's share is one contiguous run."""
    flat = out.reshape(-1)
    for k in range(n_lo - jmax, n_hi - jmin):
        n0 = max(n_lo, k + jmin)
        L = (min(n_hi, k + jmax + 1) - n0) * spu
        if L <= 0:
            continue
        ak = a[k]
        bk = b[k]
        q0 = idx[k] + (n0 - k) * spu + shift
        dst = flat[(n0 - n_lo) * spu : (n0 - n_lo) * spu + L]
        s0 = S[q0 : q0 + L]
        s1 = S[q0 + 1 : q0 + 1 + L]
        for m in range(L):
            dst[m] += ak * s0[m] + bk * s1[m]


@_helper
def settled(out, n_lo, n_hi, ax, bx, idx, S, spu, jpost, shift):
    """Add the settled edges' share to ``out``: for the sample of UI ``n`` it is ``x_K``
    read at symbol ``K = n - jpost - 1``."""
    for n in range(n_lo, n_hi):
        k = n - jpost - 1
        q = idx[k] + (jpost + 1) * spu + shift
        out[n - n_lo] += ax[k] * S[q] + bx[k] * S[q + 1]


@_helper
def settled_cols(out, n_lo, n_hi, ax, bx, idx, S, spu, jpost, shift):
    """:func:`settled` for the columns ``p`` of ``out[n, p]`` (flat index ``q + p``)."""
    P = out.shape[1]
    for n in range(n_lo, n_hi):
        k = n - jpost - 1
        q = idx[k] + (jpost + 1) * spu + shift
        row = out[n - n_lo]
        src = S[q : q + P + 1]
        for p in range(P):
            row[p] += ax[k] * src[p] + bx[k] * src[p + 1]


@njit(cache=True, fastmath=True)
def prepare_symbols(e, drv, txn, eps, pos_base):
    """Fill the per-symbol fields of the edges ``e`` (:class:`.records.Edges`) from their
    symbols ``e.sent``: the driver's amplitude ``x`` (the Tx FFE of ``drv`` on the levels,
    plus its noise ``txn``), and each edge's table position ``pos_base - eps`` split into
    ``idx`` and interpolation weights (``a, b`` for the step ``d = x_k - x_(k-1)``, ``ax,
    bx`` for ``x``); and, when ``e.d`` (and ``e.u``) are as long as ``sent``, the tail's
    inputs ``d`` (and ``d eps``). The FFE needs ``len(ffe)`` symbols of margin at both ends.
    Returns the largest ``|d|`` and ``|d eps|`` written."""
    sent, levels, ffe, fmain, swing = e.sent, drv.levels, drv.ffe, drv.main, drv.swing
    x, a, b, ax, bx, idx, dd, uu = e.x, e.a, e.b, e.ax, e.bx, e.idx, e.d, e.u
    n = sent.size
    nt = ffe.size
    for k in range(n):
        acc = 0.0
        for i in range(nt):
            j = k + fmain - i
            if 0 <= j < n:
                acc += ffe[i] * levels[sent[j]]
        x[k] = (acc + txn[k]) * swing
    tail = dd.size == n
    jit = uu.size == n
    d_max = 0.0
    u_max = 0.0
    for k in range(n):
        pos = pos_base - eps[k]
        i = int(np.floor(pos))
        f = pos - i
        idx[k] = i
        d = x[k] - x[k - 1] if k > 0 else 0.0
        a[k] = d * (1.0 - f)
        b[k] = d * f
        ax[k] = x[k] * (1.0 - f)
        bx[k] = x[k] * f
        if tail:
            dd[k] = d
            d_max = max(d_max, abs(d))
            if jit:
                uu[k] = d * eps[k]
                u_max = max(u_max, abs(d * eps[k]))
    return d_max, u_max


@njit(cache=True, fastmath=True)
def fir_valid(x, g, out):
    """``out[i] = sum_t g[t] x[i + len(g) - 1 - t]`` (numpy's ``convolve(x, g, "valid")``): each
    output's terms added in the order of ``t`` descending, a block of outputs at a time (the
    block stays in the L1 cache while every tap passes over it)."""
    nt = g.size
    n = out.size
    for i0 in range(0, n, 2048):
        i1 = min(i0 + 2048, n)
        dst = out[i0:i1]
        for i in range(i1 - i0):
            dst[i] = 0.0
        for t in range(nt):
            gt = g[nt - 1 - t]
            src = x[i0 + t : i1 + t]
            for i in range(i1 - i0):
                dst[i] += gt * src[i]


@njit(cache=True, fastmath=True)
def sample_row(y, n_lo, n_hi, e, st, src, tail, shift):
    """The samples of UIs ``[n_lo, n_hi)`` at the fine offset ``shift``: the share of every
    edge of ``e`` within the head's lags ``[-hpre, hpost]`` of the step table ``st``, the
    settled edges' (older than ``jpost``), the pulse-based sources' ``src``, and the tail's
    (the lags between the head and ``jpost``; none when ``hpost == jpost``)."""
    m = n_hi - n_lo
    for i in range(m):
        y[i] = 0.0
    scatter(y, n_lo, n_hi, e.a, e.b, e.idx, st.T0, st.T1, st.spu, -st.hpre, st.hpost, shift)
    settled(y, n_lo, n_hi, e.ax, e.bx, e.idx, st.S, st.spu, st.jpost, shift)
    for g in range(src.a.shape[0]):
        scatter(y, n_lo, n_hi, src.a[g], src.b[g], src.idx[g], src.T0[g], src.T1[g], st.spu, src.jmin[g],
                src.jmax[g], shift)
    add_tail(y, n_lo, n_hi, tail, shift)


@njit(cache=True, fastmath=True)
def sample_cols(cols, n_lo, n_hi, e, st, src, tail, shift0):
    """:func:`sample_row` for the columns ``p`` of ``cols[n - n_lo, p]`` (shift ``shift0 + p``),
    reading the flat tables."""
    m = n_hi - n_lo
    P = cols.shape[1]
    for i in range(m):
        for p in range(P):
            cols[i, p] = 0.0
    scatter_cols(cols, n_lo, n_hi, e.a, e.b, e.idx, st.S, st.spu, -st.hpre, st.hpost, shift0)
    settled_cols(cols, n_lo, n_hi, e.ax, e.bx, e.idx, st.S, st.spu, st.jpost, shift0)
    add_tail_cols(cols, n_lo, n_hi, tail, shift0)
    for g in range(src.a.shape[0]):
        scatter_cols(cols, n_lo, n_hi, src.a[g], src.b[g], src.idx[g], src.S[g], st.spu, src.jmin[g], src.jmax[g],
                     shift0)
