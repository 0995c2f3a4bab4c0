"""Numba kernels of the burst-error analysis (:func:`fec.analysis.burst_errors`): the
compound Poisson distribution of a codeword's symbol errors, and what each listed burst
pattern does to a codeword at every alignment. Their plain-numpy references (the loops
they replaced) live in the tests.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def panjer_poisson(lam, hs, hf, g):
    """Compound Poisson distribution by Panjer's recursion, into ``g[0 .. n]``:
    ``g[0] = exp(-lam)``, ``g[s] = lam / s sum_j hf[j] g[s - hs[j]]`` over the non-zero
    severities ``hs[j] <= s`` (ascending), ``hf[j] = hs[j] f[hs[j]]``."""
    g[0] = math.exp(-lam)
    for s in range(1, g.size):
        acc = 0.0
        for j in range(hs.size):
            h = hs[j]
            if h > s:
                break
            acc += hf[j] * g[s - h]
        g[s] = lam / s * acc


@njit(cache=True)
def pattern_hits(flat, starts, upsym, interleave, precoded, pam4, hs, bs):
    """Each burst pattern ``flat[starts[i]:starts[i + 1]]`` (level errors at consecutive
    UIs) at every (UI phase ``o``, interleave phase ``p``), into row ``i`` of ``hs`` and
    ``bs`` at ``o * interleave + p``: the FEC symbols of ``upsym`` UI it hits in the
    codeword of that phase (a symbol once) and the bits it flips there.

    With ``precoded`` the errors are the 1/(1+D) mod 4 postcoder's, ``(e_k + e_(k-1)) mod 4``
    over the pattern and one UI past it; PAM4 flips one bit (Gray) for an error of 1 or 3
    levels (mod 4) and two for 2, NRZ one for an odd error."""
    for i in range(starts.size - 1):
        a, b = starts[i], starts[i + 1]
        n = b - a + (1 if precoded else 0)
        for o in range(upsym):
            for p in range(interleave):
                h = 0
                bits = 0
                last = -1
                for k in range(n):
                    e = flat[a + k] if k < b - a else 0
                    if precoded:
                        e = (e + (flat[a + k - 1] if k > 0 else 0)) % 4
                    if e == 0:
                        continue
                    sym = (k + o) // upsym
                    if (sym + p) % interleave == 0:
                        if sym != last:
                            h += 1
                        if pam4:
                            d = e % 4
                            bits += 2 if d == 2 else 1
                        elif e % 2 != 0:
                            bits += 1
                    last = sym
                hs[i, o * interleave + p] = h
                bs[i, o * interleave + p] = bits
