"""The Numba kernel of COM's equaliser search: the figure of merit of every Tx FFE setting
(93A-36) for one CTLE setting."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def fom_search(tx_grid, y, win, base, M, r_isi, r_j, r_xt, xt_const, bmax, bmin, r_lm, levels, var_x, var_n,
               jit_var, snr_lin, tx_path, xt_worst, fom, cursor):
    """The 802.3 figure of merit (93A-36) of every Tx FFE setting (rows of ``tx_grid``,
    taps ``c(-3) .. c(1)``).

    ``y``: the through pulse (one DFT period; tap ``i`` delays it by ``(i - 3)`` UI,
    circularly); ``win[i, w]``: those delayed copies around the peak, ``w`` from sample
    ``base``. Sums of squares over all UI are quadratic forms in the taps whose matrices are
    Toeplitz in the circular autocorrelations per sampling phase, ``r_isi[ph, lag]`` (of the
    pulse) and ``r_j`` (of its slope); ``r_xt[a, ph, lag]`` for each FEXT aggressor (its
    worst phase is taken with ``xt_worst``, 93A-33/34, else the mean over its phases),
    ``xt_const`` the NEXT aggressors' sum of squares taken the same way.
    The cursor follows the Mueller-Muller criterion with the first DFE tap (93A-25/26) as
    the reference code applies it: its least residual over the 2 UI after the pulse's last
    rise through 1 % of its peak (no absolute tolerance, which scales badly with amplitude);
    a pulse with no such rise within 4 UI of its peak, whose setting the reference skips, is
    searched over +-1 UI around its peak.
    The transmitter's noise is on the main cursor (93A-30), or with ``tx_path`` white
    after the Tx FFE through the whole pulse (178A-17: ``var_x SNR r_isi[ph, 0]``).
    Writes ``fom`` and ``cursor``.

    One function on purpose: it runs 4,345 settings per CTLE setting (638,715 for the
    802.3ck grid), and each setting's peak, cursor search, DFE and quadratic forms reuse
    the same few arrays in cache; helpers would pass them per setting.
    """
    T = tx_grid.shape[0]
    W = win.shape[1]
    n = y.size
    nd = bmax.size
    yw = np.empty(W)
    for s in range(T):
        c = tx_grid[s]
        best_w = 0
        for w in range(W):
            acc = 0.0
            for i in range(5):
                acc += c[i] * win[i, w]
            yw[w] = acc
            if acc > yw[best_w]:
                best_w = w
        # the cursor as the reference code places it (com_ieee8023_93a_450.m,
        # cursor_sample_index): the last upward crossing of 1 % of the peak within 4 UI
        # before it, then the sample of least Mueller-Muller residual with the first DFE
        # tap at its limit (93A-25/26) over the 2 UI after that crossing
        thr = 0.01 * yw[best_w]
        zxi = -1
        for i in range(max(0, best_w - 4 * M), best_w):
            if np.sign(yw[i + 1] - thr) - np.sign(yw[i] - thr) >= 1:
                zxi = i
        # (a pulse still above 1 % of its peak 4 UI before it, whose setting the reference
        # code skips, is searched over +-1 UI around its peak instead)
        start = zxi if zxi >= 0 else best_w - M
        pick = -1
        res_min = np.inf
        b1 = bmax[0] if nd > 0 else 0.0
        for ix in range(max(M, start), min(W - M, start + 2 * M + 1)):
            res = abs(yw[ix - M] - max(yw[ix + M] - b1 * yw[ix], 0.0))
            if res < res_min:
                res_min = res
                pick = ix
        if pick < 0 or yw[pick] <= 0:
            fom[s] = -np.inf
            cursor[s] = -1
            continue
        idx = base + pick
        ph = idx % M
        h0 = yw[pick]
        a_s = r_lm * h0 / (levels - 1)
        post2 = 0.0
        res2 = 0.0
        for j in range(nd):
            hp = 0.0
            for i in range(5):
                hp += c[i] * y[(idx + (1 + j - (i - 3)) * M) % n]
            b = min(bmax[j], max(bmin[j], hp / h0))
            post2 += hp * hp
            res2 += (hp - b * h0) ** 2
        q_isi = 0.0
        q_j = 0.0
        for i in range(5):
            for k in range(5):
                lag = abs(i - k)
                q_isi += c[i] * c[k] * r_isi[ph, lag]
                q_j += c[i] * c[k] * r_j[ph, lag]
        var_isi = var_x * (q_isi - h0 * h0 - post2 + res2)
        var_j = jit_var * var_x * q_j
        var_xt = xt_const
        for a in range(r_xt.shape[0]):
            worst = 0.0
            mean = 0.0
            for m in range(M):
                q = 0.0
                for i in range(5):
                    for k in range(5):
                        q += c[i] * c[k] * r_xt[a, m, abs(i - k)]
                worst = max(worst, q)
                mean += q / M
            var_xt += worst if xt_worst else mean
        var_xt *= var_x
        var_tx = var_x * snr_lin * r_isi[ph, 0] if tx_path else h0 * h0 * snr_lin
        fom[s] = 10.0 * np.log10(a_s * a_s / (var_tx + var_isi + var_j + var_xt + var_n))
        cursor[s] = idx
