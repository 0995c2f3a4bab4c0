"""The Numba kernel of COM's equaliser search: the figure of merit of every Tx FFE setting
(93A-36) for one CTLE setting."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def floating_dfe(h, h0, n_fixed, groups, taps, limit, tail_start, tail_rss):
    """The floating DFE taps of the reference code (com_ieee8023_93a_450.m ``floatingDFE``,
    ``findbankloc``): ``groups`` banks of ``taps`` consecutive taps placed on the post-cursors
    ``h`` that follow the ``n_fixed`` fixed taps (``h[q]`` is post-cursor ``n_fixed + 1 + q``),
    each bank where it removes the most ISI energy, ``sum h^2 - max(0, |h| - limit h0)^2``,
    without overlapping those placed before it (the reference ranks banks by the same
    energy; its preference for a bank adjoining the previous one is not reproduced); each tap
    ``clip(h / h0, -limit, limit)``, and those from post-cursor ``tail_start`` on scaled so
    that their root sum of squares stays within ``tail_rss`` (``B_float_RSS_MAX``). Returns
    the taps (zero off the banks)."""
    L = h.size
    b = np.zeros(L)
    if L < taps or groups <= 0:
        return b
    gain = np.empty(L)
    for q in range(L):
        a = abs(h[q])
        r = max(0.0, a - limit * h0)
        gain[q] = a * a - r * r
    used = np.zeros(L, dtype=np.bool_)
    for _ in range(groups):
        best, start = -1.0, -1
        for s in range(L - taps + 1):
            ok = True
            g = 0.0
            for q in range(s, s + taps):
                if used[q]:
                    ok = False
                    break
                g += gain[q]
            if ok and g > best:
                best, start = g, s
        if start < 0:
            break
        for q in range(start, start + taps):
            used[q] = True
            b[q] = min(limit, max(-limit, h[q] / h0))
    if tail_start > 0:
        q0 = max(0, tail_start - n_fixed - 1)
        rss = 0.0
        for q in range(q0, L):
            rss += b[q] * b[q]
        rss = np.sqrt(rss)
        if rss > tail_rss:
            for q in range(q0, L):
                b[q] *= tail_rss / rss
    return b


@njit(cache=True)
def fom_search(tx_grid, y, win, base, M, r_isi, r_j, r_xt, xt_const, bmax, bmin, r_lm, levels, var_x, var_n,
               jit_var, snr_lin, tx_path, xt_worst, flt, fom, cursor):
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
    after the Tx FFE through the whole pulse (178A-17/21: ``SNR r_isi[ph, 0]``, no sigma_X^2).
    ``flt`` = (groups, taps per group, span in UI, tap limit, tail start UI, tail RSS
    limit) are the floating DFE taps (:func:`floating_dfe`; no groups: none).
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
    cc = np.empty(5)
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
        n_grp = int(flt[0])
        if n_grp > 0:  # the floating taps after the fixed ones, out to the span
            span = int(flt[2])
            hf = np.empty(max(span - nd, 0))
            for q in range(hf.size):
                v = 0.0
                for i in range(5):
                    v += c[i] * y[(idx + (1 + nd + q - (i - 3)) * M) % n]
                hf[q] = v
            bf = floating_dfe(hf, h0, nd, n_grp, int(flt[1]), flt[3], int(flt[4]), flt[5])
            for q in range(hf.size):
                if bf[q] != 0.0:
                    post2 += hf[q] * hf[q]
                    res2 += (hf[q] - bf[q] * h0) ** 2
        # the quadratic forms sum_ik c_i c_k r[|i - k|] as sum_lag cc[lag] r[lag]
        for lag in range(5):
            v = 0.0
            for i in range(5 - lag):
                v += c[i] * c[i + lag]
            cc[lag] = v if lag == 0 else 2.0 * v
        q_isi = 0.0
        q_j = 0.0
        for lag in range(5):
            q_isi += cc[lag] * r_isi[ph, lag]
            q_j += cc[lag] * r_j[ph, lag]
        var_isi = var_x * (q_isi - h0 * h0 - post2 + res2)
        var_j = jit_var * var_x * q_j
        var_xt = xt_const
        for a in range(r_xt.shape[0]):
            worst = 0.0
            mean = 0.0
            for m in range(M):
                q = 0.0
                for lag in range(5):
                    q += cc[lag] * r_xt[a, m, lag]
                worst = max(worst, q)
                mean += q / M
            var_xt += worst if xt_worst else mean
        var_xt *= var_x
        var_tx = snr_lin * r_isi[ph, 0] if tx_path else h0 * h0 * snr_lin
        fom[s] = 10.0 * np.log10(a_s * a_s / (var_tx + var_isi + var_j + var_xt + var_n))
        cursor[s] = idx
