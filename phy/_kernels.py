"""Numba kernels of the time-domain simulator (slow references live in the tests).

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

# int64 state vector
I_PREV, I_LASTERR, I_BSTART, I_BERRS, I_NREC, I_NCOUNT, I_SYMERR, I_DATAERR, I_BITERR, I_NBURST, I_NWAVE, I_UNLOCK = (
    range(12))
N_ISTATE = 12
# float64 state vector
F_PHASE, F_INTEG, F_PREVYF, F_PREVA, F_PHSUM, F_PHSQ, F_LASTRAW, F_PHMIN, F_PHMAX = range(9)
N_FSTATE = 9
CROSS_SUB = 8  # crossing-time bins per eye column


@njit(cache=True, fastmath=True)
def scatter(out, n_lo, n_hi, k_lo, k_hi, a, b, idx, T0, T1, spu, jmin, jmax, shift):
    """``out[n - n_lo] += a_k T0[q] + b_k T1[q]`` for ``n`` in ``[n_lo, n_hi)`` and every
    symbol ``k`` in ``[k_lo, k_hi)`` with ``jmin <= n - k <= jmax``, where the flat index is
    ``q = idx[k] + (n - k) spu + shift`` and ``T[row, col]`` holds flat index ``row + col spu``.

    (Slices indexed from zero let LLVM drop negative-index checks and vectorise.)"""
    for k in range(k_lo, k_hi):
        n0 = max(n_lo, k + jmin)
        L = min(n_hi, k + jmax + 1) - n0
        if L <= 0:
            continue
        ak = a[k]
        bk = b[k]
        q0 = idx[k] + (n0 - k) * spu + shift
        row = q0 % spu
        col = q0 // spu
        dst = out[n0 - n_lo : n0 - n_lo + L]
        s0 = T0[row, col : col + L]
        s1 = T1[row, col : col + L]
        for m in range(L):
            dst[m] += ak * s0[m] + bk * s1[m]


@njit(cache=True, fastmath=True)
def scatter_cols(out, n_lo, n_hi, k_lo, k_hi, a, b, idx, S, spu, jmin, jmax, shift):
    """Like :func:`scatter` on ``out[n - n_lo, p]`` for the ``spu`` columns ``p`` (flat
    index ``q + p``), reading the flat table ``S``. Row ``n + 1`` starts ``spu`` further
    on in both ``out`` and ``S``, so each symbol's share is one contiguous run."""
    flat = out.reshape(-1)
    for k in range(k_lo, k_hi):
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


@njit(cache=True, fastmath=True)
def settled(out, n_lo, n_hi, ax, bx, idx, S, spu, jpost, shift):
    """Add the settled edges' share to ``out``: for the sample of UI ``n`` it is ``x_K``
    read at symbol ``K = n - jpost - 1``."""
    for n in range(n_lo, n_hi):
        k = n - jpost - 1
        q = idx[k] + (jpost + 1) * spu + shift
        out[n - n_lo] += ax[k] * S[q] + bx[k] * S[q + 1]


@njit(cache=True, fastmath=True)
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
def prepare_symbols(sent, levels, ffe, fmain, swing, txn, eps, pos_base, x, a, b, ax, bx, idx):
    """Per-symbol inputs of :func:`run_chunk`: the driver's amplitude ``x`` (Tx FFE on the
    levels, plus its noise), and each edge's table position ``pos_base - eps`` split into
    ``idx`` and interpolation weights (``a, b`` for the step ``d = x_k - x_(k-1)``, ``ax,
    bx`` for ``x``). The FFE needs ``len(ffe)`` symbols of margin at both ends."""
    n = sent.size
    nt = ffe.size
    for k in range(n):
        acc = 0.0
        for i in range(nt):
            j = k + fmain - i
            if 0 <= j < n:
                acc += ffe[i] * levels[sent[j]]
        x[k] = (acc + txn[k]) * swing
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


@njit(cache=True, fastmath=True)
def fir_valid(x, g, out):
    """``out[i] = sum_t g[t] x[i + len(g) - 1 - t]`` (numpy's ``convolve(x, g, "valid")``)."""
    nt = g.size
    n = out.size
    for i in range(n):
        out[i] = 0.0
    for t in range(nt):
        gt = g[nt - 1 - t]
        src = x[t : t + n]
        for i in range(n):
            out[i] += gt * src[i]


@njit(cache=True)
def run_chunk(
    g0, n, hist, block,
    a, b, ax, bx, idx, sym, data, precoded, M, levels, thresholds, gray,
    S, T0, T1, spu, jpre, jpost,
    agg_a, agg_b, agg_idx, agg_S, agg_T0, agg_T1, agg_jmin, agg_jmax,
    rxn,
    ffe, fpre, dfe, gap,
    cdr_kind, kp, ki, h0, phase_lim, lock_bound,
    warmup, eye_on, P, vlo, vstep, eye, col_err, cross,
    wave_raw, wave_z, wave_meta,
    err_pos, err_val, burst_hist,
    yring, colring, ahist, fstate, istate,
):
    """Simulate the decisions of UIs ``g0 .. g0+n-1`` (global), sampling ``fpre`` UIs ahead.

    Per-symbol arrays are local: global symbol ``g`` sits at ``g - g0 + hist``. Results
    accumulate in ``eye``, ``col_err`` (errors per eye column), ``cross`` (zero crossings
    of the ADC input by time offset, ``CROSS_SUB`` bins per column), ``wave_*``, ``err_*``,
    ``burst_hist`` and the state vectors (the CDR phase's extremes, and the first counted
    UI whose phase is beyond ``lock_bound`` fine samples); nothing is returned.
    """
    nt = ffe.size
    nd = dfe.size
    nb = eye.shape[1]
    nbh = burst_hist.size
    cap = err_pos.size
    nwave = wave_raw.shape[0]
    half = P // 2
    nagg = agg_a.shape[0]
    y = np.empty(block)
    ye = np.empty(block)
    cols = np.empty((block, P))
    zc = np.empty(P)
    for s0 in range(0, n, block):
        m = min(block, n - s0)
        # samples of UIs g0+s0+fpre .. (local n_lo .. n_hi), at the phase frozen for the block
        n_lo = hist + s0 + fpre
        n_hi = n_lo + m
        ph_int = int(np.floor(fstate[F_PHASE] + 0.5))
        want = eye_on or istate[I_NWAVE] < nwave
        use_cols = want and g0 + s0 + fpre + m + nt > warmup  # columns fill the FFE before counting
        for i in range(m):
            y[i] = 0.0
        k_lo = n_lo - jpost
        k_hi = n_hi + jpre
        if use_cols:
            for i in range(m):
                for p in range(P):
                    cols[i, p] = 0.0
            scatter_cols(cols, n_lo, n_hi, k_lo, k_hi, a, b, idx, S, spu, -jpre, jpost, ph_int - half)
            settled_cols(cols, n_lo, n_hi, ax, bx, idx, S, spu, jpost, ph_int - half)
            for g in range(nagg):
                scatter_cols(cols, n_lo, n_hi, n_lo - agg_jmax[g], n_hi - agg_jmin[g], agg_a[g], agg_b[g],
                             agg_idx[g], agg_S[g], spu, agg_jmin[g], agg_jmax[g], ph_int - half)
            for i in range(m):
                y[i] = cols[i, half]
        else:
            scatter(y, n_lo, n_hi, k_lo, k_hi, a, b, idx, T0, T1, spu, -jpre, jpost, ph_int)
            settled(y, n_lo, n_hi, ax, bx, idx, S, spu, jpost, ph_int)
            for g in range(nagg):
                scatter(y, n_lo, n_hi, n_lo - agg_jmax[g], n_hi - agg_jmin[g], agg_a[g], agg_b[g], agg_idx[g],
                        agg_T0[g], agg_T1[g], spu, agg_jmin[g], agg_jmax[g], ph_int)
        if cdr_kind == 2:  # edge samples half a UI early, for UIs g0+s0 .. (no FFE lead)
            for i in range(m):
                ye[i] = 0.0
            e_lo = n_lo - fpre
            e_hi = e_lo + m
            eshift = ph_int - spu // 2
            scatter(ye, e_lo, e_hi, e_lo - jpost, e_hi + jpre, a, b, idx, T0, T1, spu, -jpre, jpost, eshift)
            settled(ye, e_lo, e_hi, ax, bx, idx, S, spu, jpost, eshift)
            for g in range(nagg):  # the pulse-based sources reach the edge sampler too
                scatter(ye, e_lo, e_hi, e_lo - agg_jmax[g], e_hi - agg_jmin[g], agg_a[g], agg_b[g], agg_idx[g],
                        agg_T0[g], agg_T1[g], spu, agg_jmin[g], agg_jmax[g], eshift)
        for i in range(m):
            ii = s0 + i
            gdec = g0 + ii  # the UI decided now
            # ---- newest sample into the FFE delay line
            for t in range(nt - 1, 0, -1):
                yring[t] = yring[t - 1]
            yring[0] = y[i] + rxn[ii]
            if want:
                for t in range(nt - 1, 0, -1):
                    for p in range(P):
                        colring[t, p] = colring[t - 1, p]
                for p in range(P):
                    colring[0, p] = (cols[i, p] if use_cols else y[i]) + rxn[ii]
                if eye_on and use_cols and gdec >= warmup:  # zero crossings, interpolated
                    prev = fstate[F_LASTRAW]
                    for p in range(P):
                        cur = colring[0, p]
                        if (prev < 0.0) != (cur < 0.0):
                            # column units from the sampling instant, moved by half a UI so
                            # that the nominal crossing sits mid-histogram
                            u = p - 1 + prev / (prev - cur) + half
                            if u >= P:
                                u -= P
                            elif u < 0.0:
                                u += P
                            cb = min(int(u * CROSS_SUB), P * CROSS_SUB - 1)
                            cross[cb] += 1
                        prev = cur
                fstate[F_LASTRAW] = colring[0, P - 1]
            # ---- FFE, DFE, slicer
            yf = 0.0
            for t in range(nt):
                yf += ffe[t] * yring[t]
            fb = 0.0
            for t in range(nd):
                fb += dfe[t] * ahist[t]
            z = yf - fb
            idx_d = 0
            for t in range(M - 1):
                idx_d += z > thresholds[t]
            a_hat = levels[idx_d]
            loc = hist + ii
            if gdec >= warmup:
                istate[I_NCOUNT] += 1
                e = idx_d - sym[loc]
                if e != 0:
                    istate[I_SYMERR] += 1
                    if istate[I_NREC] < cap:
                        err_pos[istate[I_NREC]] = gdec
                        err_val[istate[I_NREC]] = e
                        istate[I_NREC] += 1
                    if istate[I_LASTERR] >= 0 and gdec - istate[I_LASTERR] <= gap:
                        istate[I_BERRS] += 1
                    else:
                        if istate[I_LASTERR] >= 0:
                            span = istate[I_LASTERR] - istate[I_BSTART] + 1
                            burst_hist[min(span, nbh - 1)] += 1
                            istate[I_NBURST] += 1
                        istate[I_BSTART] = gdec
                        istate[I_BERRS] = 1
                    istate[I_LASTERR] = gdec
                xd = (idx_d + istate[I_PREV]) % 4 if precoded else idx_d
                if xd != data[loc]:
                    istate[I_DATAERR] += 1
                    bits = gray[xd] ^ gray[data[loc]]
                    while bits:
                        istate[I_BITERR] += bits & 1
                        bits >>= 1
                ph = fstate[F_PHASE]
                fstate[F_PHSUM] += ph
                fstate[F_PHSQ] += ph * ph
                fstate[F_PHMIN] = min(fstate[F_PHMIN], ph)
                fstate[F_PHMAX] = max(fstate[F_PHMAX], ph)
                if istate[I_UNLOCK] < 0 and abs(ph) > lock_bound:  # the loop left the eye it locked to
                    istate[I_UNLOCK] = gdec
                # ---- eye, bathtub, waveform
                if want:
                    for p in range(P):
                        zp = 0.0
                        for t in range(nt):
                            zp += ffe[t] * colring[t, p]
                        zc[p] = zp - fb
                    if eye_on:
                        for p in range(P):
                            bi = int(np.floor((zc[p] - vlo) / vstep))
                            bi = min(max(bi, 0), nb - 1)
                            eye[p, bi] += 1
                            ip = 0
                            for t in range(M - 1):
                                ip += zc[p] > thresholds[t]
                            if ip != sym[loc]:
                                col_err[p] += 1
                    w = istate[I_NWAVE]
                    if w < nwave:
                        for p in range(P):
                            wave_raw[w, p] = colring[fpre, p]
                            wave_z[w, p] = zc[p]
                        wave_meta[w, 0] = sym[loc]
                        wave_meta[w, 1] = idx_d
                        istate[I_NWAVE] += 1
            istate[I_PREV] = idx_d
            # ---- clock recovery (positive detector output = sampling late)
            if cdr_kind != 0:
                pd = 0.0
                if cdr_kind == 1:  # Mueller-Mueller type A on the FFE output: h(-1) - h(+1)
                    pd = (fstate[F_PREVYF] * a_hat - yf * fstate[F_PREVA]) / h0
                elif a_hat != 0.0 and fstate[F_PREVA] == -a_hat:  # bang-bang, symmetric transitions
                    pd = 1.0 if (ye[i] + rxn[ii] > 0.0) == (a_hat > 0.0) else -1.0
                fstate[F_INTEG] -= ki * pd * spu
                ph = fstate[F_PHASE] - kp * pd * spu + fstate[F_INTEG]
                fstate[F_PHASE] = min(max(ph, -phase_lim), phase_lim)
            fstate[F_PREVYF] = yf
            fstate[F_PREVA] = a_hat
            for t in range(nd - 1, 0, -1):
                ahist[t] = ahist[t - 1]
            if nd > 0:
                ahist[0] = a_hat


@njit(cache=True)
def normals(rng, out, scale, clip):
    """``out[i] = scale * N(0, 1)`` from the numpy ``Generator`` ``rng`` (numba draws the same
    stream as numpy), clipped at ``+- clip`` standard deviations when ``clip > 0``."""
    for i in range(out.size):
        v = rng.standard_normal()
        if clip > 0.0:
            v = min(max(v, -clip), clip)
        out[i] = scale * v


@njit(cache=True, fastmath=True)
def add_sine(out, k0, omega, amplitude, phase):
    """``out[i] += amplitude * sin(omega (k0 + i) + phase)`` by rotating a phasor, restarted
    exactly every 1024 samples (error below 1e-13 of the amplitude)."""
    cw = np.cos(omega)
    sw = np.sin(omega)
    c = 0.0
    s = 0.0
    for i in range(out.size):
        if i % 1024 == 0:
            ang = omega * (k0 + i) + phase
            c = np.cos(ang)
            s = np.sin(ang)
        out[i] += amplitude * s
        c, s = c * cw - s * sw, s * cw + c * sw


@njit(cache=True)
def lfsr_bits(state, mask, taps, invert, out):
    """Fill ``out`` with a Fibonacci LFSR's next bits (feedback = XOR of the register bits
    at ``taps``, shifted in at bit 0 and sent, XOR ``invert``); return the final state."""
    for i in range(out.size):
        fb = 0
        for t in taps:
            fb ^= state >> t
        fb &= 1
        out[i] = fb ^ invert
        state = ((state << 1) | fb) & mask
    return state


@njit(cache=True)
def fom_search(tx_grid, y, win, base, M, r_isi, r_j, r_xt, xt_const, bmax, bmin, r_lm, levels, var_x, var_n,
               jit_var, snr_lin, tx_path, fom, cursor):
    """The 802.3 figure of merit (93A-36) of every Tx FFE setting (rows of ``tx_grid``,
    taps ``c(-3) .. c(1)``).

    ``y``: the through pulse (one DFT period; tap ``i`` delays it by ``(i - 3)`` UI,
    circularly); ``win[i, w]``: those delayed copies around the peak, ``w`` from sample
    ``base``. Sums of squares over all UI are quadratic forms in the taps whose matrices are
    Toeplitz in the circular autocorrelations per sampling phase, ``r_isi[ph, lag]`` (of the
    pulse) and ``r_j`` (of its slope); ``r_xt[a, ph, lag]`` for each FEXT aggressor (its
    worst phase is taken), ``xt_const`` the NEXT aggressors' worst-phase sum of squares.
    The cursor follows the Mueller-Muller criterion with the first DFE tap (93A-25/26)
    within one UI of the peak, preferring an exact solution (residual < 1e-3) before it.
    The transmitter's noise is on the main cursor (93A-30), or with ``tx_path`` white
    after the Tx FFE through the whole pulse (178A-17: ``var_x SNR r_isi[ph, 0]``).
    Writes ``fom`` and ``cursor``.
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
        lo = max(M, best_w - M)
        hi = min(W - M - 1, best_w + M)
        pick = -1
        first_exact = -1
        last_pre = -1
        res_min = 1e300
        for ix in range(lo, hi + 1):
            if yw[ix] <= 0:
                continue
            b1 = min(bmax[0], max(bmin[0], yw[ix + M] / yw[ix]))
            res = abs(yw[ix - M] - (yw[ix + M] - b1 * yw[ix]))
            if res < 1e-3:
                if ix <= best_w:
                    last_pre = ix
                elif first_exact < 0:
                    first_exact = ix
            elif res < res_min:
                res_min = res
                pick = ix
        if last_pre >= 0:
            pick = last_pre
        elif first_exact >= 0:
            pick = first_exact
        if pick < 0:
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
            for m in range(M):
                q = 0.0
                for i in range(5):
                    for k in range(5):
                        q += c[i] * c[k] * r_xt[a, m, abs(i - k)]
                worst = max(worst, q)
            var_xt += worst
        var_xt *= var_x
        var_tx = var_x * snr_lin * r_isi[ph, 0] if tx_path else h0 * h0 * snr_lin
        fom[s] = 10.0 * np.log10(a_s * a_s / (var_tx + var_isi + var_j + var_xt + var_n))
        cursor[s] = idx
