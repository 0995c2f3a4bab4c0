"""The time-domain simulator's per-UI loop in Numba: FFE, DFE, slicer, counters, eye and
CDR (the samples it decides on are :mod:`._samples`'; slow references live in the tests).

:func:`run_chunk` reads and writes named records (:mod:`.records`), one per concept: the
edges of the chunk, the step table, the pulse sources, the tail, the front end, the
slicer, the equaliser, the clock, the eye's and the counters' outputs, and the state
carried from chunk to chunk (the vectors indexed by ``I_*`` and ``F_*`` below).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._samples import sample_cols, sample_row

# int64 state vector
I_PREV, I_LASTERR, I_BSTART, I_BERRS, I_NREC, I_NCOUNT, I_SYMERR, I_DATAERR, I_BITERR, I_NBURST, I_NWAVE, I_UNLOCK = (
    range(12))
N_ISTATE = 12
# float64 state vector
F_PHASE, F_INTEG, F_PREVYF, F_PREVA, F_PHSUM, F_PHSQ, F_LASTRAW, F_PHMIN, F_PHMAX = range(9)
N_FSTATE = 9
CROSS_SUB = 8  # crossing-time bins per eye column


@njit(cache=True, inline="always")
def adc(v, step, top):
    """The ADC: a mid-rise grid of ``step``, clipped to ``+-top`` (none when ``step`` is 0)."""
    if step <= 0.0:
        return v
    x = (np.floor(v / step) + 0.5) * step
    return min(max(x, -top), top)


@njit(cache=True, inline="always")
def _detector(kind, prev, preva, a, yf, z, h0, edge):
    """The phase detector's output for the decision ``a`` (positive: sampling late): Mueller-
    Muller type A on the slicer input ``z`` (kind 1) or the FFE output ``yf`` (kind 3) with
    ``prev``, ``preva`` the last UI's sample and decision; bang-bang (kind 2) from the edge
    sample ``edge`` on symmetric transitions."""
    if kind == 1:
        return (prev * a - z * preva) / h0
    if kind == 3:
        return (prev * a - yf * preva) / h0
    if a != 0.0 and preva == -a:
        return 1.0 if (edge > 0.0) == (a > 0.0) else -1.0
    return 0.0


@njit(cache=True, inline="always")
def _tail_missing(coef, si, jit_on, edge, spu, cols):
    """Whether a tail made per sampling shift (:mod:`.cdr_tail`: NaN weights for the shifts
    not made) lacks one a block at shift index ``si`` reads: the sample's, its neighbours
    with the sampling clock's jitter, the bang-bang edge sample's, the eye's columns'."""
    if coef.shape[0] == 0:
        return False
    c = coef[0]
    miss = np.isnan(c[si])
    if jit_on:
        miss = miss or np.isnan(c[si - 1]) or np.isnan(c[si + 1])
    if edge:
        miss = miss or np.isnan(c[si - spu // 2])
    if cols:
        for p in range(spu):
            miss = miss or np.isnan(c[si - spu // 2 + p])
    return miss


@njit(cache=True)
def run_chunk(g0, n, hist, edges, step, src, tail, front, slicer, eq, clock, eye_out, errors, state):
    """Simulate the decisions of UIs ``g0 .. g0+n-1`` (global), sampling ``eq.pre`` UIs ahead.

    The arguments past ``hist`` are the records of :mod:`.records`. Per-symbol arrays are
    local: global symbol ``g`` sits at ``g - g0 + hist``. The edges within the head's lags
    ``[-hpre, hpost]`` of a sample are read from the step table at their own jittered
    times; the lags beyond, to ``[-jpre, jpost]``, come from the tail's outputs. The ADC
    quantises each sample; with the sampling clock's jitter on, each UI's sample is taken
    ``front.clock_offset`` fine samples late, through the waveform's slope there (central
    difference). Results accumulate in the eye's record (counts, errors per eye column,
    zero crossings of the ADC input by time offset, ``CROSS_SUB`` bins per column, the
    waveform), the counters' record and the state (the CDR phase's extremes, and the first
    counted UI whose phase is beyond ``clock.lock_bound`` fine samples). Returns the UIs
    done: ``n``, or fewer when the tail is made per sampling shift (:mod:`.cdr_tail`) and a
    block reads a shift not made yet (the run goes on from that block). With ``eq.genie``
    the DFE feeds back the sent symbols instead of the decisions (no error propagation: the
    error ratio at the slicer the statistical eye computes).

    One long function on purpose: the per-UI loop (FFE, DFE, slicer, counters, eye, CDR)
    carries its state in local variables from one UI to the next (loaded from the state
    vectors at the start, stored at the end), and a helper for each step would pass that
    state in and out on every UI of a billion-UI run; its steps are marked by comments
    instead (the samples, per block, are :mod:`._samples`' kernels).
    """
    # the fields the loop reads, as locals
    sym, data = edges.sent, edges.data
    spu = step.spu
    rxn, rxj, jit_on = front.noise, front.clock_offset, front.jitter_on
    adc_step, adc_top = front.adc_step, front.adc_top
    M, levels, thresholds, gray, precoded = slicer.order, slicer.levels, slicer.thresholds, slicer.gray, slicer.precoded
    ffe, fpre, dfe, genie = eq.ffe, eq.pre, eq.dfe, eq.genie
    cdr_kind, kp, ki, h0, block = clock.kind, clock.kp, clock.ki, clock.h0, clock.block
    phase_lim, lock_bound = clock.phase_lim, clock.lock_bound
    eye_on, vlo, vstep, eye, col_err, cross = (eye_out.on, eye_out.vlo, eye_out.vstep, eye_out.counts, eye_out.col_err,
                                               eye_out.cross)
    wave_raw, wave_z, wave_meta = eye_out.wave_raw, eye_out.wave_z, eye_out.wave_meta
    warmup, gap, err_pos, err_val, burst_hist = errors.warmup, errors.gap, errors.pos, errors.val, errors.burst_hist
    yring, colring, ahist, fstate, istate = state.yring, state.colring, state.ahist, state.fstate, state.istate
    P = spu  # the eye's columns: one per fine sample of a UI
    nt = ffe.size
    nd = dfe.size
    nb = eye.shape[1]
    nbh = burst_hist.size
    cap = err_pos.size
    nwave = wave_raw.shape[0]
    half = P // 2
    y = np.empty(block)
    ym = np.empty(block)
    yp = np.empty(block)
    ye = np.empty(block)
    zrow = np.empty(P)
    cols = np.empty((block, P))
    zc = np.empty(P)
    bins = np.empty(P, dtype=np.int64)
    ipc = np.empty(P, dtype=np.int64)
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
    done = n
    for s0 in range(0, n, block):
        m = min(block, n - s0)
        # samples of UIs g0+s0+fpre .. (local n_lo .. n_hi), at the phase frozen for the block
        n_lo = hist + s0 + fpre
        n_hi = n_lo + m
        ph_int = int(np.floor(phase + 0.5))
        want = eye_on or nw < nwave
        use_cols = want and g0 + s0 + fpre + m + nt > warmup  # columns fill the FFE before counting
        if cdr_kind != 0 and _tail_missing(tail.coef, ph_int - tail.s_min, jit_on, cdr_kind == 2, spu, use_cols):
            done = s0  # a tail made per shift (.cdr_tail) lacks one this block reads: stop before it
            break
        if use_cols:
            sample_cols(cols, n_lo, n_hi, edges, step, src, tail, ph_int - half)
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
            sample_row(y, n_lo, n_hi, edges, step, src, tail, ph_int)
            if jit_on:
                sample_row(ym, n_lo, n_hi, edges, step, src, tail, ph_int - 1)
                sample_row(yp, n_lo, n_hi, edges, step, src, tail, ph_int + 1)
                for i in range(m):
                    y[i] += rxj[s0 + i] * 0.5 * (yp[i] - ym[i])
        if cdr_kind == 2:  # edge samples half a UI early, for UIs g0+s0 .. (no FFE lead)
            e_lo = n_lo - fpre
            sample_row(ye, e_lo, e_lo + m, edges, step, src, tail, ph_int - spu // 2)
        if not want:  # the slicer alone (no eye, no waveform): the loop of decisions and the clock's only
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
                if cdr_kind != 0:  # the clock recovery, as in the loop below
                    ph_ui[i] = phase
                    a_d = levels[idx_d]
                    pd = _detector(cdr_kind, prevyf, preva, a_d, yf, z, h0, ye[i] + rxn[ii] if cdr_kind == 2 else 0.0)
                    integ -= ki * pd * spu
                    ph = phase - kp * pd * spu + integ
                    phase = min(max(ph, -phase_lim), phase_lim)
                    prevyf = z if cdr_kind == 1 else yf
                    preva = a_d
                else:
                    prevyf = yf
            if cdr_kind == 0:
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
                rn = rxn[ii]
                if use_cols:
                    for p in range(P):
                        colring[0, p] = adc(cols[i, p] + rn, adc_step, adc_top)
                else:
                    v0 = adc(y[i] + rn, adc_step, adc_top)
                    for p in range(P):
                        colring[0, p] = v0
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
                if want:  # the Rx FFE tap by tap over the columns (each column's sum in tap order)
                    for p in range(P):
                        zc[p] = 0.0
                    for t in range(nt):
                        w = ffe[t]
                        for p in range(P):
                            zc[p] += w * colring[t, p]
                    for p in range(P):
                        zc[p] -= fb
                    if eye_on:  # the columns' bins and decisions first (loops without stores to share)
                        sl = sym[loc]
                        for p in range(P):
                            u = (zc[p] - vlo) * inv_vstep  # clamped before the cast: floor of a non-negative
                            u = u if u > 0.0 else 0.0  # NaN-safe clamp before the cast
                            bins[p] = int(u if u < nb - 1.0 else nb - 1.0)
                            ipc[p] = 0
                        for t in range(M - 1):
                            th = thresholds[t]
                            for p in range(P):
                                ipc[p] += zc[p] > th
                        for p in range(P):
                            eye[p, bins[p]] += 1
                            col_err[p] += ipc[p] != sl
                    if nw < nwave:
                        for p in range(P):
                            wave_raw[nw, p] = colring[fpre, p]
                            wave_z[nw, p] = zc[p]
                        wave_meta[nw, 0] = sym[loc]
                        wave_meta[nw, 1] = idx_d
                        nw += 1
            # ---- clock recovery (positive detector output = sampling late)
            if cdr_kind != 0:
                pd = _detector(cdr_kind, prevyf, preva, a_hat, yf, z, h0, ye[i] + rxn[ii] if cdr_kind == 2 else 0.0)
                integ -= ki * pd * spu
                ph = phase - kp * pd * spu + integ
                phase = min(max(ph, -phase_lim), phase_lim)
            prevyf = z if cdr_kind == 1 else yf  # what the MM detector correlates
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
    return done
