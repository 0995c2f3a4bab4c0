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

from .tail import add_tail, add_tail_cols

# int64 state vector
I_PREV, I_LASTERR, I_BSTART, I_BERRS, I_NREC, I_NCOUNT, I_SYMERR, I_DATAERR, I_BITERR, I_NBURST, I_NWAVE, I_UNLOCK = (
    range(12))
N_ISTATE = 12
# float64 state vector
F_PHASE, F_INTEG, F_PREVYF, F_PREVA, F_PHSUM, F_PHSQ, F_LASTRAW, F_PHMIN, F_PHMAX = range(9)
N_FSTATE = 9
CROSS_SUB = 8  # crossing-time bins per eye column


@njit(cache=True, inline="always")
def _log2(v):
    """The exponent of a power of two."""
    e = 0
    while v > 1:
        v >>= 1
        e += 1
    return e


@njit(cache=True, fastmath=True)
def scatter(out, n_lo, n_hi, k_lo, k_hi, a, b, idx, T0, T1, spu, jmin, jmax, shift):
    """``out[n - n_lo] += a_k T0[q] + b_k T1[q]`` for ``n`` in ``[n_lo, n_hi)`` and every
    symbol ``k`` in ``[k_lo, k_hi)`` with ``jmin <= n - k <= jmax``, where the flat index is
    ``q = idx[k] + (n - k) spu + shift`` and ``T[row, col]`` holds flat index ``row + col spu``.

    (Slices indexed from zero let LLVM drop negative-index checks and vectorise; a power of
    two ``spu``, as usual, saves an integer division per symbol.)"""
    pow2 = spu & (spu - 1) == 0
    sh = _log2(spu)
    for k in range(k_lo, k_hi):
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
def prepare_symbols(sent, levels, ffe, fmain, swing, txn, eps, pos_base, x, a, b, ax, bx, idx, dd, uu):
    """Per-symbol inputs of :func:`run_chunk`: the driver's amplitude ``x`` (Tx FFE on the
    levels, plus its noise), and each edge's table position ``pos_base - eps`` split into
    ``idx`` and interpolation weights (``a, b`` for the step ``d = x_k - x_(k-1)``, ``ax,
    bx`` for ``x``); and, when ``dd`` (and ``uu``) are as long as ``sent``, the tail's inputs
    ``d`` (and ``d eps``). The FFE needs ``len(ffe)`` symbols of margin at both ends.
    Returns the largest ``|d|`` and ``|d eps|`` written."""
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


@njit(cache=True, fastmath=True)
def sample_row(y, n_lo, n_hi, a, b, ax, bx, idx, S, T0, T1, spu, hpre, hpost, jpost,
               agg_a, agg_b, agg_idx, agg_T0, agg_T1, agg_jmin, agg_jmax, shift):
    """The samples of UIs ``[n_lo, n_hi)`` at the fine offset ``shift``: the share of every
    edge within the head's lags ``[-hpre, hpost]``, the settled edges' (older than
    ``jpost``), and the pulse-based sources'. The lags between the head and ``jpost`` are
    the tail's (:func:`add_tail`; none when ``hpost == jpost``)."""
    m = n_hi - n_lo
    for i in range(m):
        y[i] = 0.0
    scatter(y, n_lo, n_hi, n_lo - hpost, n_hi + hpre, a, b, idx, T0, T1, spu, -hpre, hpost, shift)
    settled(y, n_lo, n_hi, ax, bx, idx, S, spu, jpost, shift)
    for g in range(agg_a.shape[0]):
        scatter(y, n_lo, n_hi, n_lo - agg_jmax[g], n_hi - agg_jmin[g], agg_a[g], agg_b[g], agg_idx[g],
                agg_T0[g], agg_T1[g], spu, agg_jmin[g], agg_jmax[g], shift)


@njit(cache=True, inline="always")
def adc(v, step, top):
    """The ADC: a mid-rise grid of ``step``, clipped to ``+-top`` (none when ``step`` is 0)."""
    if step <= 0.0:
        return v
    x = (np.floor(v / step) + 0.5) * step
    return min(max(x, -top), top)


@njit(cache=True)
def run_chunk(
    g0, n, hist, block,
    a, b, ax, bx, idx, sym, data, precoded, M, levels, thresholds, gray,
    S, T0, T1, spu, jpre, jpost, hpre, hpost, tb, tc, t_base, t_smin,
    agg_a, agg_b, agg_idx, agg_S, agg_T0, agg_T1, agg_jmin, agg_jmax,
    rxn, adc_step, adc_top, rxj, jit_on,
    ffe, fpre, dfe, gap, genie,
    cdr_kind, kp, ki, h0, phase_lim, lock_bound,
    warmup, eye_on, P, vlo, vstep, eye, col_err, cross,
    wave_raw, wave_z, wave_meta,
    err_pos, err_val, burst_hist,
    yring, colring, ahist, fstate, istate,
):
    """Simulate the decisions of UIs ``g0 .. g0+n-1`` (global), sampling ``fpre`` UIs ahead.

    Per-symbol arrays are local: global symbol ``g`` sits at ``g - g0 + hist``. The edges
    within the head's lags ``[-hpre, hpost]`` of a sample are read from the step table at
    their own jittered times; the lags beyond, to ``[-jpre, jpost]``, come from the tail's
    outputs ``tb`` (column ``n - t_base`` for local UI ``n``) weighted per sampling shift by
    ``tc`` (column ``shift - t_smin``; no rows without a tail). The ADC quantises each
    sample (``adc_step``, ``adc_top``); with ``jit_on`` each UI's sample is taken ``rxj``
    fine samples late, through the waveform's slope there (central difference). Results
    accumulate in ``eye``, ``col_err`` (errors per eye column), ``cross`` (zero crossings
    of the ADC input by time offset, ``CROSS_SUB`` bins per column), ``wave_*``, ``err_*``,
    ``burst_hist`` and the state vectors (the CDR phase's extremes, and the first counted
    UI whose phase is beyond ``lock_bound`` fine samples); nothing is returned. With
    ``genie`` the DFE feeds back the sent symbols instead of the decisions (no error
    propagation: the error ratio at the slicer the statistical eye computes).

    One long function on purpose: the per-UI loop (FFE, DFE, slicer, counters, eye, CDR)
    carries its state in local variables from one UI to the next (loaded from the state
    vectors at the start, stored at the end), and a helper for each step would pass that
    state in and out on every UI of a billion-UI run; its steps are marked by comments
    instead (the scatter, settle and tail steps, per block, are their own kernels).
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
    ym = np.empty(block)
    yp = np.empty(block)
    ye = np.empty(block)
    zrow = np.empty(P)
    cols = np.empty((block, P))
    zc = np.empty(P)
    dec = np.empty(block, dtype=np.int64)
    ph_ui = np.empty(block)
    # the state, in registers for the loop
    d0 = dfe[0] if nd > 0 else 0.0
    a_prev = ahist[0] if nd > 0 else 0.0
    inv_vstep = 1.0 / vstep
    prev_d = istate[I_PREV]
    lasterr = istate[I_LASTERR]
    bstart = istate[I_BSTART]
    berrs = istate[I_BERRS]
    nrec = istate[I_NREC]
    ncount = istate[I_NCOUNT]
    symerr = istate[I_SYMERR]
    dataerr = istate[I_DATAERR]
    biterr = istate[I_BITERR]
    nburst = istate[I_NBURST]
    nw = istate[I_NWAVE]
    unlock = istate[I_UNLOCK]
    phase = fstate[F_PHASE]
    integ = fstate[F_INTEG]
    prevyf = fstate[F_PREVYF]
    preva = fstate[F_PREVA]
    phsum = fstate[F_PHSUM]
    phsq = fstate[F_PHSQ]
    lastraw = fstate[F_LASTRAW]
    phmin = fstate[F_PHMIN]
    phmax = fstate[F_PHMAX]
    for s0 in range(0, n, block):
        m = min(block, n - s0)
        # samples of UIs g0+s0+fpre .. (local n_lo .. n_hi), at the phase frozen for the block
        n_lo = hist + s0 + fpre
        n_hi = n_lo + m
        ph_int = int(np.floor(phase + 0.5))
        want = eye_on or nw < nwave
        use_cols = want and g0 + s0 + fpre + m + nt > warmup  # columns fill the FFE before counting
        for i in range(m):
            y[i] = 0.0
        if use_cols:
            for i in range(m):
                for p in range(P):
                    cols[i, p] = 0.0
            scatter_cols(cols, n_lo, n_hi, n_lo - hpost, n_hi + hpre, a, b, idx, S, spu, -hpre, hpost,
                         ph_int - half)
            settled_cols(cols, n_lo, n_hi, ax, bx, idx, S, spu, jpost, ph_int - half)
            add_tail_cols(cols, n_lo, n_hi, tb, tc, t_base, t_smin, ph_int - half)
            for g in range(nagg):
                scatter_cols(cols, n_lo, n_hi, n_lo - agg_jmax[g], n_hi - agg_jmin[g], agg_a[g], agg_b[g],
                             agg_idx[g], agg_S[g], spu, agg_jmin[g], agg_jmax[g], ph_int - half)
            if jit_on:  # every column moved by its UI's sampling error, through its slope
                for i in range(m):
                    d = rxj[s0 + i]
                    for p in range(P):
                        lo_p = max(p - 1, 0)
                        hi_p = min(p + 1, P - 1)
                        zrow[p] = cols[i, p] + d * (cols[i, hi_p] - cols[i, lo_p]) / (hi_p - lo_p)
                    for p in range(P):
                        cols[i, p] = zrow[p]
            for i in range(m):
                y[i] = cols[i, half]
        else:
            sample_row(y, n_lo, n_hi, a, b, ax, bx, idx, S, T0, T1, spu, hpre, hpost, jpost,
                       agg_a, agg_b, agg_idx, agg_T0, agg_T1, agg_jmin, agg_jmax, ph_int)
            add_tail(y, n_lo, n_hi, tb, tc, t_base, t_smin, ph_int)
            if jit_on:
                sample_row(ym, n_lo, n_hi, a, b, ax, bx, idx, S, T0, T1, spu, hpre, hpost, jpost,
                           agg_a, agg_b, agg_idx, agg_T0, agg_T1, agg_jmin, agg_jmax, ph_int - 1)
                add_tail(ym, n_lo, n_hi, tb, tc, t_base, t_smin, ph_int - 1)
                sample_row(yp, n_lo, n_hi, a, b, ax, bx, idx, S, T0, T1, spu, hpre, hpost, jpost,
                           agg_a, agg_b, agg_idx, agg_T0, agg_T1, agg_jmin, agg_jmax, ph_int + 1)
                add_tail(yp, n_lo, n_hi, tb, tc, t_base, t_smin, ph_int + 1)
                for i in range(m):
                    y[i] += rxj[s0 + i] * 0.5 * (yp[i] - ym[i])
        if cdr_kind == 2:  # edge samples half a UI early, for UIs g0+s0 .. (no FFE lead)
            e_lo = n_lo - fpre
            e_hi = e_lo + m
            eshift = ph_int - spu // 2
            sample_row(ye, e_lo, e_hi, a, b, ax, bx, idx, S, T0, T1, spu, hpre, hpost, jpost,
                       agg_a, agg_b, agg_idx, agg_T0, agg_T1, agg_jmin, agg_jmax, eshift)
            add_tail(ye, e_lo, e_hi, tb, tc, t_base, t_smin, eshift)
        if not want and cdr_kind == 0:  # the slicer alone at a fixed phase: the loop of decisions only
            for i in range(m):
                ii = s0 + i
                for t in range(nt - 1, 0, -1):
                    yring[t] = yring[t - 1]
                yring[0] = adc(y[i] + rxn[ii], adc_step, adc_top)
                yf = 0.0
                for t in range(nt):
                    yf += ffe[t] * yring[t]
                fb = 0.0
                for t in range(nd - 1, 0, -1):
                    fb += dfe[t] * ahist[t]
                z = (yf - fb) - d0 * a_prev
                idx_d = 0
                for t in range(M - 1):
                    idx_d += z > thresholds[t]
                a_hat = levels[sym[hist + ii]] if genie else levels[idx_d]  # what the DFE feeds back
                dec[i] = idx_d
                for t in range(nd - 1, 0, -1):
                    ahist[t] = ahist[t - 1]
                if nd > 0:
                    ahist[0] = a_hat
                a_prev = a_hat
                prevyf = yf
            preva = a_prev
            m_loop = 0
        else:
            m_loop = m
        for i in range(m_loop):
            ii = s0 + i
            gdec = g0 + ii  # the UI decided now
            # ---- newest sample into the FFE delay line
            for t in range(nt - 1, 0, -1):
                yring[t] = yring[t - 1]
            yring[0] = adc(y[i] + rxn[ii], adc_step, adc_top)
            if want:
                for t in range(nt - 1, 0, -1):
                    for p in range(P):
                        colring[t, p] = colring[t - 1, p]
                for p in range(P):
                    colring[0, p] = adc((cols[i, p] if use_cols else y[i]) + rxn[ii], adc_step, adc_top)
                if eye_on and use_cols and gdec >= warmup:  # zero crossings, interpolated
                    prev = lastraw
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
                            if 0.0 <= u < P:  # NaN-safe: no index from a non-finite sample
                                cross[min(int(u * CROSS_SUB), P * CROSS_SUB - 1)] += 1
                        prev = cur
                lastraw = colring[0, P - 1]
            # ---- FFE, DFE, slicer
            yf = 0.0
            for t in range(nt):
                yf += ffe[t] * yring[t]
            # the older decisions' feedback first, the newest's last: the loop's critical path
            # (decision, feedback, next decision) is then one multiply and one subtraction
            fb = 0.0
            for t in range(nd - 1, 0, -1):
                fb += dfe[t] * ahist[t]
            z = (yf - fb) - d0 * a_prev
            fb += d0 * a_prev
            idx_d = 0
            for t in range(M - 1):
                idx_d += z > thresholds[t]
            a_hat = levels[idx_d]
            loc = hist + ii
            dec[i] = idx_d
            if cdr_kind != 0:
                ph_ui[i] = phase
            if gdec >= warmup:
                # ---- eye, bathtub, waveform
                if want:
                    for p in range(P):
                        zp = 0.0
                        for t in range(nt):
                            zp += ffe[t] * colring[t, p]
                        zc[p] = zp - fb
                    if eye_on:
                        sl = sym[loc]
                        for p in range(P):
                            u = (zc[p] - vlo) * inv_vstep  # clamped before the cast: floor of a non-negative
                            u = u if u > 0.0 else 0.0  # NaN-safe clamp before the cast
                            bi = int(u if u < nb - 1.0 else nb - 1.0)
                            eye[p, bi] += 1
                            ip = 0
                            for t in range(M - 1):
                                ip += zc[p] > thresholds[t]
                            col_err[p] += ip != sl
                    if nw < nwave:
                        for p in range(P):
                            wave_raw[nw, p] = colring[fpre, p]
                            wave_z[nw, p] = zc[p]
                        wave_meta[nw, 0] = sym[loc]
                        wave_meta[nw, 1] = idx_d
                        nw += 1
            # ---- clock recovery (positive detector output = sampling late)
            if cdr_kind != 0:
                pd = 0.0
                if cdr_kind == 1:  # Mueller-Mueller type A on the FFE output: h(-1) - h(+1)
                    pd = (prevyf * a_hat - yf * preva) / h0
                elif a_hat != 0.0 and preva == -a_hat:  # bang-bang, symmetric transitions
                    pd = 1.0 if (ye[i] + rxn[ii] > 0.0) == (a_hat > 0.0) else -1.0
                integ -= ki * pd * spu
                ph = phase - kp * pd * spu + integ
                phase = min(max(ph, -phase_lim), phase_lim)
            prevyf = yf
            preva = a_hat
            a_fb = levels[sym[loc]] if genie else a_hat  # what the DFE feeds back
            for t in range(nd - 1, 0, -1):
                ahist[t] = ahist[t - 1]
            if nd > 0:
                ahist[0] = a_fb
            a_prev = a_fb
        # ---- the block's decisions counted against the sent symbols and the data (in order)
        for i in range(m):
            ii = s0 + i
            gdec = g0 + ii
            idx_d = dec[i]
            loc = hist + ii
            if gdec >= warmup:
                ncount += 1
                e = idx_d - sym[loc]
                if e != 0:
                    symerr += 1
                    if nrec < cap:
                        err_pos[nrec] = gdec
                        err_val[nrec] = e
                        nrec += 1
                    if lasterr >= 0 and gdec - lasterr <= gap:
                        berrs += 1
                    else:
                        if lasterr >= 0:
                            span = lasterr - bstart + 1
                            burst_hist[min(span, nbh - 1)] += 1
                            nburst += 1
                        bstart = gdec
                        berrs = 1
                    lasterr = gdec
                xd = (idx_d + prev_d) % 4 if precoded else idx_d
                if xd != data[loc]:
                    dataerr += 1
                    bits = gray[xd] ^ gray[data[loc]]
                    while bits:
                        biterr += bits & 1
                        bits >>= 1
                if cdr_kind != 0:  # a fixed phase's statistics are added after the loop
                    ph = ph_ui[i]
                    phsum += ph
                    phsq += ph * ph
                    phmin = min(phmin, ph)
                    phmax = max(phmax, ph)
                    if unlock < 0 and abs(ph) > lock_bound:  # the loop left the eye it locked to
                        unlock = gdec
            prev_d = idx_d
    if cdr_kind == 0:  # the fixed phase, over the UIs this chunk counted
        c = ncount - istate[I_NCOUNT]
        if c > 0:
            phsum += phase * c
            phsq += phase * phase * c
            phmin = min(phmin, phase)
            phmax = max(phmax, phase)
    istate[I_PREV] = prev_d
    istate[I_LASTERR] = lasterr
    istate[I_BSTART] = bstart
    istate[I_BERRS] = berrs
    istate[I_NREC] = nrec
    istate[I_NCOUNT] = ncount
    istate[I_SYMERR] = symerr
    istate[I_DATAERR] = dataerr
    istate[I_BITERR] = biterr
    istate[I_NBURST] = nburst
    istate[I_NWAVE] = nw
    istate[I_UNLOCK] = unlock
    fstate[F_PHASE] = phase
    fstate[F_INTEG] = integ
    fstate[F_PREVYF] = prevyf
    fstate[F_PREVA] = preva
    fstate[F_PHSUM] = phsum
    fstate[F_PHSQ] = phsq
    fstate[F_LASTRAW] = lastraw
    fstate[F_PHMIN] = phmin
    fstate[F_PHMAX] = phmax
