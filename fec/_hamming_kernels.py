"""Numba kernels of the extended Hamming code (:mod:`fec.hamming`): the hard-decision
SECDED decoder and the Chase-2 soft-decision decoder, one word per loop iteration.

Conventions: a word holds the ``k`` message bits, the ``r`` parity bits of the cyclic
Hamming code, and the overall even-parity bit last; ``pm[i]`` is message bit ``i``'s
syndrome contribution (an ``r``-bit integer), parity bit ``j``'s is ``1 << (r - 1 - j)``;
``pos[s]`` is the position whose single error gives syndrome ``s`` (-1 for none). The
plain numpy decoder of :meth:`fec.HammingCode.decode_hard` is the reference the tests hold
the kernels to.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _syndrome(w, k, r, pm):
    s = 0
    for i in range(k):
        if w[i]:
            s ^= pm[i]
    for j in range(r):
        if w[k + j]:
            s ^= 1 << (r - 1 - j)
    return s


@njit(cache=True, inline="always")
def _parity(w, n):
    q = 0
    for i in range(n):
        q ^= w[i]
    return q


@njit(cache=True)
def hard_decode(words, k, r, pm, pos, out, status):
    """SECDED on every row: ``out`` the corrected words, ``status`` 0 clean, 1 corrected,
    2 a detected double error (the word left as received)."""
    n = words.shape[1]
    for c in range(words.shape[0]):
        w = words[c]
        for i in range(n):
            out[c, i] = w[i]
        s = _syndrome(w, k, r, pm)
        q = _parity(w, n)
        if s == 0 and q == 0:
            status[c] = 0
        elif q == 1:
            p = n - 1 if s == 0 else pos[s]
            out[c, p] ^= 1
            status[c] = 1
        else:
            status[c] = 2


@njit(cache=True)
def chase_decode(llr, k, r, pm, pos, n_lrp, out, status):
    """Chase-2 on every row of ``llr`` (log P(0)/P(1) per bit): the hard decisions with
    every subset of the ``n_lrp`` least reliable bits flipped, each test word decoded by
    SECDED, and the decodable one nearest the received (least sum of ``|llr|`` over the bits
    it changes) kept; none decodable: the hard decisions, ``status`` 2. ``status`` 0 when
    the kept word is the hard decision itself, 1 when bits changed."""
    n = llr.shape[1]
    y = np.zeros(n, dtype=np.uint8)
    t = np.zeros(n, dtype=np.uint8)
    rel = np.zeros(n)
    lrp = np.zeros(n_lrp, dtype=np.int64)
    for c in range(llr.shape[0]):
        for i in range(n):
            y[i] = 1 if llr[c, i] < 0 else 0
            rel[i] = abs(llr[c, i])
        # the n_lrp least reliable positions (n_lrp is small: selection by repeated minimum)
        for j in range(n_lrp):
            best, bi = np.inf, -1
            for i in range(n):
                taken = False
                for m in range(j):
                    if lrp[m] == i:
                        taken = True
                if not taken and rel[i] < best:
                    best, bi = rel[i], i
            lrp[j] = bi
        best_metric = np.inf
        for i in range(n):
            out[c, i] = y[i]
        status[c] = 2
        for pat in range(1 << n_lrp):
            for i in range(n):
                t[i] = y[i]
            for j in range(n_lrp):
                if (pat >> j) & 1:
                    t[lrp[j]] ^= 1
            s = _syndrome(t, k, r, pm)
            q = _parity(t, n)
            if q == 1:
                t[n - 1 if s == 0 else pos[s]] ^= 1
            elif s != 0:
                continue  # a detected double error: not a codeword candidate
            metric = 0.0
            for i in range(n):
                if t[i] != y[i]:
                    metric += rel[i]
            if metric < best_metric:
                best_metric = metric
                for i in range(n):
                    out[c, i] = t[i]
                status[c] = 0 if metric == 0.0 else 1


@njit(cache=True)
def encode(messages, pm, r, out):
    """``out[c]`` = message, its ``r`` parity bits (the XOR of the set message bits'
    syndromes, ``m(x) x^r mod p(x)``), then the overall parity."""
    k = messages.shape[1]
    for c in range(messages.shape[0]):
        s = 0
        q = 0
        for i in range(k):
            b = messages[c, i]
            out[c, i] = b
            if b:
                s ^= pm[i]
                q ^= 1
        for j in range(r):
            bit = (s >> (r - 1 - j)) & 1
            out[c, k + j] = bit
            q ^= bit
        out[c, k + r] = q


@njit(cache=True, inline="always")
def _logaddexp(a, b):
    m = max(a, b)
    return m + np.log1p(np.exp(min(a, b) - m))


@njit(cache=True)
def pam4_llr(y, k, out):
    """Each received PAM4 sample ``y[i]`` (levels -3, -1, 1, 3, Gray 00, 01, 11, 10) to its
    two bits' log-likelihood ratios ``out[i] = (log P(b0=0)/P(b0=1), log P(b1=0)/P(b1=1))``,
    with ``k = -1 / (2 sigma^2)`` (the plain numpy path of :func:`fec.hamming.pam4_llr` is
    the reference)."""
    for i in range(y.size):
        v = y[i]
        d0 = k * (v + 3.0) ** 2
        d1 = k * (v + 1.0) ** 2
        d2 = k * (v - 1.0) ** 2
        d3 = k * (v - 3.0) ** 2
        out[i, 0] = _logaddexp(d0, d1) - _logaddexp(d2, d3)
        out[i, 1] = _logaddexp(d0, d3) - _logaddexp(d1, d2)
