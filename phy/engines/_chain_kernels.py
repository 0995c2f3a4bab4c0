"""Numba kernels of the DFE's conditioned error chain (:mod:`phy.engines.dfe_chain`); their
slow plain-numpy references, the arithmetic the chain ran before them, live in the tests.

All read a distribution's tail ``t`` tabulated on the eye's voltage grid linearly: a
point ``x`` (V) sits ``fi = (x - v0) / dv`` bins in, held within ``[0, nv - 1.000001]``,
and reads ``t[i] + (t[i + 1] - t[i]) (fi - i)`` with ``i = floor(fi)``. A point ``u - s``
(an offset less a window's ISI) is read at ``c - d`` with ``c = (u - v0) / dv`` and
``d = s / dv``, both precomputed.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable


# called only from tail_means: compiled into it without a Python entry point of its own
# (Numba's overload path), which cuts the first run's compilation (issue 35)
@register_jitable
def _count_at_most(d, x):
    """How many of the ascending ``d`` are ``<= x`` (a binary search)."""
    lo, hi = 0, d.size
    while lo < hi:
        mid = (lo + hi) // 2
        if d[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def tail_means(t, cs, d, csum, out):
    """``out[i]``: the mean over ``j`` of ``t`` read at ``cs[i] - d_j`` bins (each offset's
    tail averaged over the explicit windows' ISI), given ``d`` ascending and its running
    sums ``csum`` (``csum[j]`` the sum of the first ``j``).

    The reads fall in runs: the ``s_j`` that put ``u - s_j`` in grid bin ``k`` are
    consecutive in ``d``, and their linear reads sum to ``n_k t[k] + (t[k+1] - t[k])
    (n_k (c - k) - sum d_j)`` with ``c = cs[i]``; reads held at the grid's ends
    take its end values. A bin at a time over the span of ``d``, not a read per ``j``."""
    nv = t.size
    hi = nv - 1.000001
    n = d.size
    top = t[nv - 2] + (t[nv - 1] - t[nv - 2]) * (hi - (nv - 2))  # a read held at the top
    for i in range(cs.size):
        c = cs[i]
        if not np.isfinite(c):  # no bin to read: before any index is formed from it
            out[i] = np.nan
            continue
        j_top = _count_at_most(d, c - hi)  # d_j <= c - hi: read at or past the top
        j_in = _count_at_most(d, c)  # d_j <= c: read at 0 or above; the rest read t[0]
        acc = j_top * top + (n - j_in) * t[0]
        k_lo = max(0, int(np.floor(c - d[n - 1])))
        k_hi = min(nv - 2, int(np.floor(c - d[0])))
        for k in range(k_lo, k_hi + 1):
            j1 = min(_count_at_most(d, c - k), j_in)  # read at k or above
            j0 = j_top if k == nv - 2 else max(_count_at_most(d, c - k - 1), j_top)  # at k + 1 or above
            if j1 > j0:
                m = j1 - j0
                acc += m * t[k] + (t[k + 1] - t[k]) * (m * (c - k) - (csum[j1] - csum[j0]))
        out[i] = acc / n


@njit(cache=True, inline="always")
def _read(t, fi, hi):
    """``t`` read linearly at ``fi`` bins, held inside ``[0, hi]`` (NaN reads bin 0: the
    comparison, not ``max``, decides, so no NaN reaches the integer cast)."""
    fi = fi if fi > 0.0 else 0.0
    fi = fi if fi < hi else hi
    k = int(fi)
    return (t[k + 1] - t[k]) * (fi - k) + t[k]


@njit(cache=True)
def slicer_probs(t_up, t_dn, sc_up, c_up, sc_dn, c_dn, d_w, rows, up, dn):
    """The probabilities of a ``+1`` and a ``-1`` error per (state ``rows[r]``, window
    ``w``), into ``up[r, w]`` and ``dn[r, w]``. A window ``w = c M^K + m`` is the previous
    and the sampled symbol (``c = a_(t-1) M + a_t``) and the next ``K`` (``m``): the tails
    ``t_up`` (upper) and ``t_dn`` (lower) are read at ``c[state, c] - d_w[a_(t-1), m]``
    bins, times the calibration ``sc[state, c]``, at most 1, and the ``-1`` error at most
    what the ``+1`` leaves."""
    hi = t_up.size - 1.000001
    n_c = c_up.shape[1]
    M = d_w.shape[0]
    mk = d_w.shape[1]
    for r in range(rows.size):
        s = rows[r]
        for c in range(n_c):
            a = c // M
            su, sd = sc_up[s, c], sc_dn[s, c]
            cu, cd = c_up[s, c], c_dn[s, c]
            base = c * mk
            for m in range(mk):
                x = min(_read(t_up, cu - d_w[a, m], hi) * su, 1.0)
                up[r, base + m] = x
                dn[r, base + m] = min(min(_read(t_dn, cd - d_w[a, m], hi) * sd, 1.0), 1.0 - x)


@njit(cache=True)
def mixture_tails(cdf, sf, xb, wb, r, v0, dv, out):
    """``out[0]``, ``out[1]``: the tails ``cdf`` and ``sf`` of ``rho x0 + sqrt(1 - rho^2) X``
    on the grid, a mixture over the bins ``x0 = xb`` (weights ``wb``) of ``X``'s own read
    at ``(v - r x0) / sqrt(1 - r^2)``."""
    hi = cdf.size - 1.000001
    sq = np.sqrt(1.0 - r * r)
    out[:] = 0.0
    for b in range(xb.size):
        for j in range(cdf.size):
            fi = (((v0 + dv * j) - r * xb[b]) / sq - v0) / dv
            fi = fi if fi > 0.0 else 0.0  # NaN-safe clamp before the integer cast
            fi = fi if fi < hi else hi
            k = int(fi)
            f = fi - k
            out[0, j] += wb[b] * (cdf[k] + (cdf[k + 1] - cdf[k]) * f)
            out[1, j] += wb[b] * (sf[k] + (sf[k + 1] - sf[k]) * f)


@njit(cache=True)
def chain_advance(Y, up, dn, M, g_up, g_dn):
    """One decision of the chain, for each state ``r``: the mass ``Y[r, a q' + m]`` over
    (oldest symbol ``a``, the next ones ``m``; ``q'`` of them), its window completed by a
    uniform newest symbol ``k`` (window ``(a q' + m) M + k``), into the mass that errs up
    and down over the window less its oldest symbol, ``g[r, m M + k]``."""
    q = Y.shape[1]
    qm = q // M
    g_up[:] = 0.0
    g_dn[:] = 0.0
    for r in range(Y.shape[0]):
        for a in range(M):
            for m in range(qm):
                y = Y[r, a * qm + m] / M
                if y == 0.0:
                    continue
                w = (a * qm + m) * M
                o = m * M
                for k in range(M):
                    g_up[r, o + k] += y * up[r, w + k]
                    g_dn[r, o + k] += y * dn[r, w + k]


@njit(cache=True)
def chain_step(t_up, t_dn, sc_up, c_up, sc_dn, c_dn, d_w, rows, Y, M, g_up, g_dn):
    """:func:`slicer_probs` for the states ``rows`` and :func:`chain_advance` on them in
    one pass, the probabilities never stored: ``Y[r]`` is the mass of state ``rows[r]``
    over the window less its newest symbol; ``g_up[r]``, ``g_dn[r]`` what errs up and down
    over the window less its oldest. Loops nested by symbol (no index divisions)."""
    hi = t_up.size - 1.000001
    mk = d_w.shape[1]
    mq = mk // M
    g_up[:] = 0.0
    g_dn[:] = 0.0
    for r in range(rows.size):
        s = rows[r]
        for a in range(M):  # a_(t-1), which leaves the window
            for b in range(M):  # a_t
                c = a * M + b
                su, sd = sc_up[s, c], sc_dn[s, c]
                cu, cd = c_up[s, c], c_dn[s, c]
                for mm in range(mq):  # the next K less the newest
                    y = Y[r, c * mq + mm] / M  # the newest symbol is uniform
                    if y == 0.0:
                        continue
                    for k in range(M):  # the newest
                        m = mm * M + k
                        x = min(_read(t_up, cu - d_w[a, m], hi) * su, 1.0)
                        z = min(min(_read(t_dn, cd - d_w[a, m], hi) * sd, 1.0), 1.0 - x)
                        o = b * mk + m  # the window less its oldest symbol
                        g_up[r, o] += y * x
                        g_dn[r, o] += y * z


@njit(cache=True)
def chain_shift(Y, g_up, g_dn, rowmap, M, top, out):
    """The chain's mass one decision on, into ``out`` (state, window less its newest
    symbol): from state ``s`` (its oldest error ``s // top``, the rest ``s % top``) the
    decision adds the error digit ``1`` (right), ``2`` (``+1``) or ``0`` (``-1``) and the
    oldest leaves, ``s' = 3 (s % top) + digit``; what errs is ``g_up`` and ``g_dn`` (row
    ``rowmap[s]``, -1 for the state that ends a burst: nothing errs from it), the rest of
    the mass, ``Y`` summed over its oldest symbol (``g_all``), stays right. A state with
    no mass and nothing erring (all its ``ga``, ``g_up``, ``g_dn`` zero) would add only
    ``+0.0`` to ``out`` (which never holds ``-0.0``): it is skipped, the same bits."""
    S, q = Y.shape
    qm = q // M
    out[:] = 0.0
    ga = np.empty(qm)
    for s in range(S):
        live = False
        for m in range(qm):
            acc = 0.0
            for a in range(M):
                acc += Y[s, a * qm + m] / M
            ga[m] = acc
            live = live or acc != 0.0
        r = rowmap[s]
        if not live and r >= 0:
            for j in range(q):
                if g_up[r, j] != 0.0 or g_dn[r, j] != 0.0:
                    live = True
                    break
        if not live:
            continue
        rest = s % top
        for j in range(q):
            g = ga[j // M]
            if r >= 0:
                u, d = g_up[r, j], g_dn[r, j]
                out[3 * rest + 1, j] += g - u - d
                out[3 * rest + 2, j] += u
                out[3 * rest, j] += d
            else:
                out[3 * rest + 1, j] += g

