"""The Numba kernel of COM's equaliser search: the figure of merit of every Tx FFE setting
(93A-36) for one CTLE setting."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

# The lane searches are called only from fom_search: as register_jitable functions they
# compile into it alone (no entry point and cache entry of their own: a cheaper cold first
# run); called from Python (the tests) they run as the plain functions.


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
    the taps (zero off the banks); :func:`floating_dfe_into` with its work arrays."""
    L = h.size
    b = np.zeros(L)
    floating_dfe_into(h, L, h0, n_fixed, groups, taps, limit, tail_start, tail_rss, b, np.empty(L), np.empty(L))
    return b


@njit(cache=True)
def floating_dfe_into(h, L, h0, n_fixed, groups, taps, limit, tail_start, tail_rss, b, gain, energy):
    """:func:`floating_dfe` of ``h[:L]`` into ``b[:L]`` (zeroed here), with the work arrays
    ``gain`` and ``energy`` (at least ``L`` long): nothing allocated, for the search's
    every setting. Each bank's energy is summed once; a bank is free when it overlaps none
    placed before (the same choices as trying every tap of it per group)."""
    for q in range(L):
        b[q] = 0.0
    if L < taps or groups <= 0:
        return
    n_s = L - taps + 1
    for q in range(L):
        a = abs(h[q])
        r = max(0.0, a - limit * h0)
        gain[q] = a * a - r * r
    # each bank's energy (summed from 0 in tap order, as when it is tried), once: the
    # energies do not change between groups; a bank overlapping one placed before gets
    # -inf, which never passes the threshold of -1 (the energies are >= 0 or NaN, never chosen)
    if taps == 3:  # (the 802.3 value: the same sums, as one vectorised loop)
        for s in range(n_s):
            energy[s] = 0.0 + gain[s] + gain[s + 1] + gain[s + 2]
    else:
        for s in range(n_s):
            g = 0.0
            for q in range(s, s + taps):
                g += gain[q]
            energy[s] = g
    for _ in range(groups):
        start = first_max_above(energy, n_s, -1.0)
        if start < 0:
            break
        for q in range(start, start + taps):
            b[q] = min(limit, max(-limit, h[q] / h0))
        for s in range(max(0, start - taps + 1), min(n_s, start + taps)):
            energy[s] = -np.inf
    if tail_start > 0:
        q0 = max(0, tail_start - n_fixed - 1)
        rss = 0.0
        for q in range(q0, L):
            rss += b[q] * b[q]
        rss = np.sqrt(rss)
        if rss > tail_rss:
            for q in range(q0, L):
                b[q] *= tail_rss / rss


@register_jitable
def first_max_above(x, n, floor):
    """The first index of the largest of ``x[:n]`` as a running ``if x[s] > best`` from
    ``best = floor`` finds it, or -1 when none is above ``floor`` (NaN never chosen)."""
    m0 = m1 = m2 = m3 = floor
    n4 = n - n % 4
    for s in range(0, n4, 4):
        if x[s] > m0:
            m0 = x[s]
        if x[s + 1] > m1:
            m1 = x[s + 1]
        if x[s + 2] > m2:
            m2 = x[s + 2]
        if x[s + 3] > m3:
            m3 = x[s + 3]
    m = m0
    for v in (m1, m2, m3):
        if v > m:
            m = v
    for s in range(n4, n):
        if x[s] > m:
            m = x[s]
    if not m > floor:
        return -1
    for s in range(n):
        if x[s] == m:
            return s
    return -1


@register_jitable
def first_max(x, n):
    """The first index of the largest of ``x[:n]`` as a running ``if x[w] > x[best]`` finds
    it (NaN never chosen unless ``x[0]`` is NaN, then 0): the maximum over eight
    independent lanes (no chain of dependent comparisons), then its first occurrence."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = x[0]
    n8 = n - n % 8
    for w in range(0, n8, 8):
        if x[w] > m0:
            m0 = x[w]
        if x[w + 1] > m1:
            m1 = x[w + 1]
        if x[w + 2] > m2:
            m2 = x[w + 2]
        if x[w + 3] > m3:
            m3 = x[w + 3]
        if x[w + 4] > m4:
            m4 = x[w + 4]
        if x[w + 5] > m5:
            m5 = x[w + 5]
        if x[w + 6] > m6:
            m6 = x[w + 6]
        if x[w + 7] > m7:
            m7 = x[w + 7]
    m = m0
    for v in (m1, m2, m3, m4, m5, m6, m7):
        if v > m:
            m = v
    for w in range(n8, n):
        if x[w] > m:
            m = x[w]
    for w in range(n):
        if x[w] == m:
            return w
    return 0


@register_jitable
def first_min_below_inf(x, n):
    """The first index of the least of ``x[:n]`` as a running ``if x[i] < least`` from
    ``least = inf`` finds it, or -1 when none is below infinity (all infinite or NaN); in
    eight lanes as :func:`first_max`."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = np.inf
    n8 = n - n % 8
    for w in range(0, n8, 8):
        if x[w] < m0:
            m0 = x[w]
        if x[w + 1] < m1:
            m1 = x[w + 1]
        if x[w + 2] < m2:
            m2 = x[w + 2]
        if x[w + 3] < m3:
            m3 = x[w + 3]
        if x[w + 4] < m4:
            m4 = x[w + 4]
        if x[w + 5] < m5:
            m5 = x[w + 5]
        if x[w + 6] < m6:
            m6 = x[w + 6]
        if x[w + 7] < m7:
            m7 = x[w + 7]
    m = m0
    for v in (m1, m2, m3, m4, m5, m6, m7):
        if v < m:
            m = v
    for w in range(n8, n):
        if x[w] < m:
            m = x[w]
    if not m < np.inf:
        return -1
    for w in range(n):
        if x[w] == m:
            return w
    return -1


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
    n_grp = int(flt[0])
    nf = max(int(flt[2]) - nd, 0) if n_grp > 0 else 0
    # the pulse from sample ``base`` on, unwrapped once (``ext[k] = y[(base + k) % n]``), so
    # that a setting reads its post-cursors without a modulo; ``u`` the UI-spaced samples
    # from the cursor (``u[k] = ext[pick + k M]``): tap ``i`` puts ``u[4 + j - i]`` on
    # post-cursor ``j + 1``
    n_u = nd + nf + 4
    ext = np.empty(W + n_u * M)
    for k in range(ext.size):
        ext[k] = y[(base + k) % n]
    u = np.empty(n_u)
    yw = np.empty(W)
    part = np.empty(W)
    p0 = p1 = p2 = 0.0
    res = np.empty(2 * M + 1)
    cc = np.empty(5)
    hf = np.empty(nf)
    bf = np.empty(nf)
    gain = np.empty(nf)
    energy = np.empty(nf)
    for s in range(T):
        c = tx_grid[s]
        # the equalised pulse around the peak (each sum in the order i = 0 .. 4), then its
        # first maximum: two loops, the first vectorised. The sum of the first three taps is
        # kept while they stay the same (the grid varies c(0) and c(1) fastest); a tap of
        # -0.0 for 0.0 changes nothing, a zero product's sign being lost in 0.0 + it
        c0, c1, c2, c3, c4 = c[0], c[1], c[2], c[3], c[4]
        if s == 0 or not (c0 == p0 and c1 == p1 and c2 == p2):
            for w in range(W):
                part[w] = 0.0 + c0 * win[0, w] + c1 * win[1, w] + c2 * win[2, w]
            p0, p1, p2 = c0, c1, c2
        for w in range(W):
            yw[w] = part[w] + c3 * win[3, w] + c4 * win[4, w]
        best_w = first_max(yw, W)
        peak = yw[best_w]
        # the cursor as the reference code places it (com_ieee8023_93a_450.m,
        # cursor_sample_index): the last upward crossing of 1 % of the peak within 4 UI
        # before it (sign(yw[i + 1] - thr) - sign(yw[i] - thr) >= 1), then the sample of least
        # Mueller-Muller residual with the first DFE tap at its limit (93A-25/26) over the
        # 2 UI after that crossing
        thr = 0.01 * peak
        zxi = -1
        i = best_w - 1
        lo = max(0, best_w - 4 * M)
        while i >= lo:
            b = yw[i] - thr
            if b <= 0.0:  # (with b > 0 there is no crossing at i)
                a = yw[i + 1] - thr
                if (a > 0.0 and b <= 0.0) or (a == 0.0 and b < 0.0):
                    zxi = i
                    break
            i -= 1
        # (a pulse still above 1 % of its peak 4 UI before it, whose setting the reference
        # code skips, is searched over +-1 UI around its peak instead)
        start = zxi if zxi >= 0 else best_w - M
        b1 = bmax[0] if nd > 0 else 0.0
        i0, i1 = max(M, start), min(W - M, start + 2 * M + 1)
        for ix in range(i0, i1):
            res[ix - i0] = abs(yw[ix - M] - max(yw[ix + M] - b1 * yw[ix], 0.0))
        pick = first_min_below_inf(res, max(i1 - i0, 0))
        if pick >= 0:
            pick += i0
        if pick < 0 or yw[pick] <= 0:
            fom[s] = -np.inf
            cursor[s] = -1
            continue
        idx = base + pick
        ph = idx % M
        h0 = yw[pick]
        a_s = r_lm * h0 / (levels - 1)
        for k in range(n_u):
            u[k] = ext[pick + k * M]
        post2 = 0.0
        res2 = 0.0
        for j in range(nd):
            hp = 0.0
            for i in range(5):
                hp += c[i] * u[4 + j - i]
            b = min(bmax[j], max(bmin[j], hp / h0))
            post2 += hp * hp
            res2 += (hp - b * h0) ** 2
        if nf > 0:  # the floating taps after the fixed ones, out to the span
            for q in range(nf):
                v = 0.0
                for i in range(5):
                    v += c[i] * u[4 + nd + q - i]
                hf[q] = v
            floating_dfe_into(hf, nf, h0, nd, n_grp, int(flt[1]), flt[3], int(flt[4]), flt[5], bf, gain, energy)
            for q in range(nf):  # (adding +0.0 off the banks leaves the sums as they are)
                on = bf[q] != 0.0
                post2 += hf[q] * hf[q] if on else 0.0
                res2 += (hf[q] - bf[q] * h0) ** 2 if on else 0.0
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
                if xt_worst:
                    worst = max(worst, q)
                else:
                    mean += q / M
            var_xt += worst if xt_worst else mean
        var_xt *= var_x
        var_tx = snr_lin * r_isi[ph, 0] if tx_path else h0 * h0 * snr_lin
        fom[s] = 10.0 * np.log10(a_s * a_s / (var_tx + var_isi + var_j + var_xt + var_n))
        cursor[s] = idx
