"""Numba kernels of the Reed-Solomon codec (batch loops over codewords) and of the DFE
burst model (the error chain's tables, the bounded enumeration of its bursts, the span of
the mass it leaves out).

Conventions (as :mod:`fec.rs`): a codeword ``c[0..n-1]`` is the polynomial
``sum c[i] x^(n-1-i)`` (highest degree first), message first; the code's roots are
``alpha^(b .. b+2t-1)``. ``gtab[f, j] = f * g_(j+1)`` for the monic generator
``g(x) = x^2t + g_1 x^(2t-1) + ... + g_2t``.

The decoder's first step is the encoder's LFSR run over the whole word: it leaves
``c(x) x^2t mod g(x)``, zero exactly for codewords (``g(0) != 0``), so error-free
words cost one pass and nothing more. Otherwise the syndromes come from that
2t-symbol remainder, then Berlekamp-Massey, Chien search over the shortened
positions only, and Forney.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# ----------------------------------------------------------------------------- helpers


@njit(cache=True, inline="always")
def _mul(a, b, exp, log):
    if a == 0 or b == 0:
        return 0
    return exp[log[a] + log[b]]


@njit(cache=True, inline="always")
def _mul_log(a, lb, exp, log):
    """a * alpha^lb for 0 <= lb < q - 1."""
    if a == 0:
        return 0
    return exp[log[a] + lb]


@njit(cache=True)
def remainders(words, stop, gtab, rem):
    """rem[c] = words[c, :stop](x) x^2t mod g(x) for every row: the division LFSR.

    Four words advance together so that each one's table lookups overlap the others'
    (the LFSR is latency-bound): about 2.7 us per KP4 word on one core here, twice as
    fast as one word at a time.
    """
    nb = words.shape[0]
    p = gtab.shape[1]
    r = np.zeros((4, p), dtype=gtab.dtype)
    c0 = 0
    while c0 + 4 <= nb:
        r[:, :] = 0
        for i in range(stop):
            for w in range(4):
                f = words[c0 + w, i] ^ r[w, 0]
                for j in range(p - 1):
                    r[w, j] = r[w, j + 1] ^ gtab[f, j]
                r[w, p - 1] = gtab[f, p - 1]
        for w in range(4):
            for j in range(p):
                rem[c0 + w, j] = r[w, j]
        c0 += 4
    for c in range(c0, nb):
        r[0, :] = 0
        for i in range(stop):
            f = words[c, i] ^ r[0, 0]
            for j in range(p - 1):
                r[0, j] = r[0, j + 1] ^ gtab[f, j]
            r[0, p - 1] = gtab[f, p - 1]
        for j in range(p):
            rem[c, j] = r[0, j]


@njit(cache=True)
def encode_batch(msgs, gtab, out):
    """Systematic encoding: out[:, :k] = msgs, out[:, k:] = msgs(x) x^2t mod g(x)."""
    nb, k = msgs.shape
    p = gtab.shape[1]
    rem = np.empty((nb, p), dtype=gtab.dtype)
    remainders(msgs, k, gtab, rem)
    for c in range(nb):
        for i in range(k):
            out[c, i] = msgs[c, i]
        for j in range(p):
            out[c, k + j] = rem[c, j]


@njit(cache=True)
def _syndromes_from_remainder(r, slog, exp, log, synd):
    """S_j = c(alpha^(b+j)) from R(x) = c(x) x^2t mod g(x) = sum_i r_i x^(2t-1-i):
    S_j = R(alpha^(b+j)) alpha^(-2t(b+j)) = sum_i r_i alpha^(-(b+j)(i+1)), with
    slog[i, j] = -(b+j)(i+1) mod (q-1) precomputed."""
    p = r.size
    synd[:] = 0
    for i in range(p):
        if r[i] != 0:
            lr = log[r[i]]
            row = slog[i]
            for j in range(p):
                synd[j] ^= exp[lr + row[j]]


@njit(cache=True)
def _berlekamp_massey(synd, exp, log, q1, lam, bb, tmp):
    """Error-locator polynomial lam (lam[0] = 1, ascending powers); returns its degree L."""
    p = synd.size
    lam[:] = 0
    lam[0] = 1
    bb[:] = 0
    bb[0] = 1
    big_l = 0
    m = 1
    bval = 1
    for r in range(p):
        d = synd[r]
        for i in range(1, big_l + 1):
            d ^= _mul(lam[i], synd[r - i], exp, log)
        if d == 0:
            m += 1
            continue
        lcoef = (log[d] - log[bval]) % q1  # log(d / b)
        if 2 * big_l <= r:
            tmp[:] = lam
            for i in range(m, p + 1):
                lam[i] ^= _mul_log(bb[i - m], lcoef, exp, log)
            big_l = r + 1 - big_l
            bb[:] = tmp
            bval = d
            m = 1
        else:
            for i in range(m, p + 1):
                lam[i] ^= _mul_log(bb[i - m], lcoef, exp, log)
            m += 1
    return big_l


@njit(cache=True)
def _solve(synd, n, b, t, exp, log, q1, steps, lam, bb, tmp, terms, nzi, acc, omega, pos, val):
    """From syndromes to error positions (array indices) and values.

    Returns the number of errors found, or -1 when the word is not decodable
    (locator degree above t, too few roots in the shortened range, zero values).
    """
    p = synd.size
    big_l = _berlekamp_massey(synd, exp, log, q1, lam, bb, tmp)
    if big_l > t or big_l == 0:
        return -1
    # Chien search over degree positions 0..n-1 (the shortened code's positions only), in
    # blocks of W positions: for each non-zero lam_i (log l_i), lam_i alpha^(-i deg) is
    # exp[l_i - i deg mod (q-1)]; steps[i, w] = i w mod (q-1) makes each block a vectorisable
    # gather-and-XOR.
    W = steps.shape[1]
    nt = 0
    for i in range(1, big_l + 1):
        if lam[i] != 0:
            nzi[nt] = i
            terms[nt] = log[lam[i]]
            nt += 1
    found = 0
    for d0 in range(0, n, W):
        acc[:] = 1  # lam_0
        for kk in range(nt):
            i = nzi[kk]
            base = terms[kk] + q1
            st = steps[i]
            for w in range(W):
                acc[w] ^= exp[base - st[w]]
            nb = terms[kk] - st[W - 1] - i
            while nb < 0:
                nb += q1
            terms[kk] = nb
        for w in range(W):
            if acc[w] == 0 and d0 + w < n:
                if found < pos.size:
                    pos[found] = d0 + w
                found += 1
        if found >= big_l:
            break
    if found != big_l:
        return -1
    # Forney: e = X^(1-b) Omega(X^-1) / Lambda'(X^-1), X = alpha^deg, Omega = S Lambda mod x^2t
    for kk in range(p):
        acc = 0
        for i in range(min(kk, big_l) + 1):
            acc ^= _mul(synd[kk - i], lam[i], exp, log)
        omega[kk] = acc
    for e in range(found):
        deg = pos[e]
        xinv = (q1 - deg % q1) % q1  # log of X^-1
        num = 0
        for kk in range(p - 1, -1, -1):  # Omega(X^-1) by Horner
            num = _mul_log(num, xinv, exp, log) ^ omega[kk]
        den = 0
        for i in range(1, big_l + 1, 2):  # Lambda'(x) = sum over odd i of lam_i x^(i-1)
            if lam[i] != 0:
                den ^= _mul_log(lam[i], (xinv * (i - 1)) % q1, exp, log)
        if num == 0 or den == 0:
            return -1
        lv = (log[num] - log[den] + ((1 - b) * deg) % q1) % q1
        val[e] = exp[lv]
        pos[e] = n - 1 - deg  # array index
    return found


@njit(cache=True)
def _workspace(p, w):
    """Scratch arrays of the decoder for 2t = p parity symbols and Chien blocks of w."""
    return (
        np.zeros(p, dtype=np.int32),  # syndromes
        np.zeros(p + 1, dtype=np.int32),  # error locator
        np.zeros(p + 1, dtype=np.int32),  # BM's previous locator
        np.zeros(p + 1, dtype=np.int32),  # BM scratch
        np.zeros(p + 1, dtype=np.int64),  # Chien terms (logs)
        np.zeros(p + 1, dtype=np.int64),  # Chien non-zero term indices
        np.zeros(w, dtype=np.int32),  # Chien block accumulator
        np.zeros(p, dtype=np.int32),  # error evaluator
        np.zeros(p, dtype=np.int64),  # error positions
        np.zeros(p, dtype=np.int32),  # error values
    )


@njit(cache=True)
def decode_batch(words, k, t, b, gtab, slog, steps, exp, log, out_msgs, n_corr, failed):
    """Decode a batch of words (nb, n) into messages; flags undecodable words."""
    nb, n = words.shape
    p = gtab.shape[1]
    q1 = log.size - 1
    rem = np.empty((nb, p), dtype=gtab.dtype)
    remainders(words, n, gtab, rem)
    synd, lam, bb, tmp, terms, nzi, acc, omega, pos, val = _workspace(p, steps.shape[1])
    for c in range(nb):
        r = rem[c]
        for i in range(k):
            out_msgs[c, i] = words[c, i]
        clean = True
        for j in range(p):
            if r[j] != 0:
                clean = False
                break
        if clean:
            n_corr[c] = 0
            failed[c] = False
            continue
        _syndromes_from_remainder(r, slog, exp, log, synd)
        nerr = _solve(synd, n, b, t, exp, log, q1, steps, lam, bb, tmp, terms, nzi, acc, omega, pos, val)
        if nerr < 0:
            n_corr[c] = 0
            failed[c] = True
            continue
        for e in range(nerr):
            if pos[e] < k:
                out_msgs[c, pos[e]] ^= val[e]
        n_corr[c] = nerr
        failed[c] = False


@njit(cache=True)
def decode_error_patterns(errors, k, t, b, steps, exp, log, status, weight, residual_symbols, residual_bits):
    """Decode error patterns (nb, n) directly: syndromes from the non-zero symbols only.

    status: 0 corrected (or clean), 1 decoder failure, 2 miscorrection. The residual
    counts are the symbol and bit errors left in the message part.
    """
    nb, n = errors.shape
    p = 2 * t
    q1 = log.size - 1
    synd, lam, bb, tmp, terms, nzi, acc, omega, pos, val = _workspace(p, steps.shape[1])
    fix = np.zeros(n, dtype=np.int32)
    for c in range(nb):
        synd[:] = 0
        w = 0
        for i in range(n):
            v = errors[c, i]
            if v != 0:
                w += 1
                lv = log[v]
                deg = n - 1 - i
                for j in range(p):
                    synd[j] ^= exp[(lv + ((b + j) * deg) % q1) % q1]
        weight[c] = w
        if w == 0:
            status[c] = 0
            residual_symbols[c] = 0
            residual_bits[c] = 0
            continue
        nerr = _solve(synd, n, b, t, exp, log, q1, steps, lam, bb, tmp, terms, nzi, acc, omega, pos, val)
        rs_ = 0
        rb = 0
        if nerr < 0:
            status[c] = 1
            for i in range(k):
                v = errors[c, i]
                if v != 0:
                    rs_ += 1
                    while v:
                        rb += v & 1
                        v >>= 1
        else:
            for e in range(nerr):
                fix[pos[e]] ^= val[e]
            same = True
            for i in range(n):
                d = errors[c, i] ^ fix[i]
                if d != 0:
                    same = False
                    if i < k:
                        rs_ += 1
                        while d:
                            rb += d & 1
                            d >>= 1
            for e in range(nerr):
                fix[pos[e]] = 0
            status[c] = 0 if same else 2
        residual_symbols[c] = rs_
        residual_bits[c] = rb


# ----------------------------------------------------------------------------- DFE bursts
# The DFE error chain (fec.analysis.BurstModel.dfe): the state is the last N decision
# errors e in {-1, 0, +1}, digit i (base 3, value e + 1) holding the error i + 1 UIs ago;
# state ZERO = sum 3^i (N correct decisions in a row) ends a burst.


@njit(cache=True)
def dfe_chain(b, sigma, w, succ, prob):
    """Transition tables: from state s the next error is ``(0, +1, -1)[j]`` with
    probability ``prob[s, j]``, leading to ``succ[s, j]``. The DFE subtracts the wrong ISI
    ``delta = -2 sum_i b_i e_i`` (half level spacings), so a decision errs up with
    ``w Q((1 - delta) / sigma)`` and down with ``w Q((1 + delta) / sigma)``."""
    n = b.size
    top = 3 ** (n - 1)
    r2 = math.sqrt(2.0)
    for s in range(succ.shape[0]):
        x = s
        d = 0.0
        for i in range(n):
            d += b[i] * (x % 3 - 1)
            x //= 3
        delta = -2.0 * d
        pu = w * 0.5 * math.erfc((1.0 - delta) / (sigma * r2))
        pd = w * 0.5 * math.erfc((1.0 + delta) / (sigma * r2))
        prob[s, 0] = max(0.0, 1.0 - pu - pd)
        prob[s, 1] = pu
        prob[s, 2] = pd
        low = 3 * (s % top)
        succ[s, 0] = 1 + low
        succ[s, 1] = 2 + low
        succ[s, 2] = low


@njit(cache=True)
def dfe_enumerate(succ, prob, zero, n_taps, tail, max_nodes, max_len, p_keep, max_keep,
                  hist, pat_buf, pat_len, pat_p, spans, pruned):
    """Depth-first enumeration of the bursts that start with an error of +-1 (probability
    1/2 each), exact and deterministic, so that two passes walk the same tree.

    A burst is complete when its state reaches ``zero``; its span is its length less the
    ``n_taps`` closing zeros. A branch less likely than ``tail``, longer than ``max_len``
    decisions, or met after ``max_nodes`` nodes have been expanded is not followed: its
    mass goes to ``pruned[state, length]`` for :func:`dfe_tail_spans`. Complete bursts at
    least ``p_keep`` likely are kept (up to ``max_keep``: errors in ``pat_buf``, length in
    ``pat_len``, probability in ``pat_p``); the others add their mass to ``spans[span]``.
    ``hist[k]`` counts complete bursts by ``floor(-10 log10 p)`` (the first pass uses it to
    choose ``p_keep``). Returns (kept, complete, nodes expanded)."""
    errs = np.zeros(max_len + 1, dtype=np.int64)
    st = np.zeros(max_len + 1, dtype=np.int64)
    pp = np.zeros(max_len + 1)
    nxt = np.zeros(max_len + 1, dtype=np.int64)
    nodes = 0
    kept = 0
    complete = 0
    nh = hist.size
    for root in range(2):
        e0 = 1 if root == 0 else -1
        d = 0
        errs[0] = e0
        st[0] = zero + e0
        pp[0] = 0.5
        nxt[0] = 0
        while d >= 0:
            if nxt[d] == 0:
                nodes += 1
            j = nxt[d]
            if j == 3:
                d -= 1
                continue
            nxt[d] = j + 1
            s = st[d]
            q = pp[d] * prob[s, j]
            if q <= 0.0:
                continue
            s2 = succ[s, j]
            length = d + 2  # decisions from the first error to this one
            if s2 == zero:
                span = length - n_taps
                complete += 1
                k = int(-10.0 * math.log10(q))
                hist[min(max(k, 0), nh - 1)] += 1
                if q >= p_keep and kept < max_keep:
                    for i in range(span):
                        pat_buf[kept, i] = errs[i]
                    pat_len[kept] = span
                    pat_p[kept] = q
                    kept += 1
                else:
                    spans[span] += q
                continue
            if q < tail or length > max_len or nodes >= max_nodes:
                pruned[s2, min(length, max_len + 1)] += q
                continue
            d += 1
            errs[d] = 0 if j == 0 else (1 if j == 1 else -1)
            st[d] = s2
            pp[d] = q
            nxt[d] = 0
    return kept, complete, nodes


@njit(cache=True)
def dfe_tail_spans(succ, prob, zero, n_taps, pruned, spans, floor):
    """Carry the pruned mass of :func:`dfe_enumerate` forward through the chain until its
    bursts end, adding each to ``spans[span]``. Mass still in flight after
    ``spans.size + n_taps`` decisions, or once below ``floor`` in all, is returned (the
    caller counts it as bursts too long to survive any code)."""
    S = succ.shape[0]
    v = np.zeros(S)
    nv = np.zeros(S)
    n_inj = pruned.shape[1]
    max_steps = spans.size - 1 + n_taps
    L = 0
    while True:
        if L < n_inj:
            for s in range(S):
                v[s] += pruned[s, L]
        total = 0.0
        for s in range(S):
            total += v[s]
        if (L >= n_inj and total < floor) or L >= max_steps:
            return total
        for s in range(S):
            nv[s] = 0.0
        for s in range(S):
            m = v[s]
            if m == 0.0:
                continue
            for j in range(3):
                q = m * prob[s, j]
                s2 = succ[s, j]
                if s2 == zero:
                    spans[L + 1 - n_taps] += q
                else:
                    nv[s2] += q
        for s in range(S):
            v[s] = nv[s]
        L += 1
