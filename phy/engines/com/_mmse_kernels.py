"""The Numba kernel of 178A's MMSE search (:mod:`phy.engines.com.mmse`): the FFE and DFE
by MMSE at every Tx FFE setting of one CTLE setting and every sampling time, with its small
dense linear algebra (Cholesky, Woodbury) written out so that nothing is allocated per
solve."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

__all__ = ["mmse_grid"]

# The helpers below are called only from mmse_grid: as register_jitable functions they are
# compiled into it without a Python entry point of their own (Numba's overload path), which
# cuts the first run's compilation (issue 35); the machine code of mmse_grid is the same.
_helper = register_jitable(fastmath=True, error_model="numpy")


@_helper
def _chol(Q, Lm, n):
    """Cholesky factor of the ``n x n`` symmetric matrix ``Q`` into ``Lm``, its diagonal
    stored as the reciprocals (multiplies instead of divides in the factor and the solves)
    and its transpose in the upper triangle (the back substitution reads rows, not columns);
    False when ``Q`` is not positive definite."""
    for j in range(n):
        s = Q[j, j]
        for k in range(j):
            s -= Lm[j, k] * Lm[j, k]
        if s <= 0.0:
            return False
        inv = 1.0 / np.sqrt(s)
        Lm[j, j] = inv
        for i in range(j + 1, n):
            t = Q[i, j]
            for k in range(j):
                t -= Lm[i, k] * Lm[j, k]
            Lm[i, j] = t * inv
            Lm[j, i] = Lm[i, j]
    return True


@_helper
def _chol_solve(Lm, rhs, x, n):
    """``x = Q^-1 rhs`` from the Cholesky factor ``Lm`` of ``Q`` (:func:`_chol`'s, the
    diagonal's reciprocals on it)."""
    for i in range(n):
        t = rhs[i]
        for k in range(i):
            t -= Lm[i, k] * x[k]
        x[i] = t * Lm[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= Lm[i, k] * x[k]
        x[i] = t * Lm[i, i]


@_helper
def _less_low_rank(x, P, Hb, Lg, e1, e2, out, nw, nd):
    """``out = x - P G^-1 H_b x`` (Woodbury's correction; ``Lg`` the Cholesky factor of
    ``G``); ``out`` may be ``x``."""
    for q in range(nd):
        t = 0.0
        for i in range(nw):
            t += Hb[q, i] * x[i]
        e1[q] = t
    _chol_solve(Lg, e1, e2, nd)
    for i in range(nw):
        t = x[i]
        for q in range(nd):
            t -= P[i, q] * e2[q]
        out[i] = t


@_helper
def _dfe_follow(Hb, w, bmin, bmax, b_out, nw, nd):
    """The DFE taps ``clip(H_b w)`` into ``b_out``; whether one was clipped."""
    clipped = False
    for q in range(nd):
        s = 0.0
        for i in range(nw):
            s += Hb[q, i] * w[i]
        bq = min(max(s, bmin[q]), bmax[q])
        clipped |= bq != s
        b_out[q] = bq
    return clipped


@_helper
def _refit_with_dfe(h0, Hb, b, v, Lm, w_out, nw, nd, u, z, P, G, Lg, e1, e2):
    """The FFE re-solved with the DFE taps ``b`` fixed (at their limits): ``w = R^-1 (H_b^T b +
    mu h_0)`` with ``h_0^T w = 1``, ``R^-1 = (Q + H_b^T H_b)^-1`` by Woodbury from ``Q``'s
    factor ``Lm`` (``P = Q^-1 H_b^T``, ``G = I + H_b P``; ``v = Q^-1 h_0``). False when
    singular."""
    for q in range(nd):
        for i in range(nw):
            z[i] = Hb[q, i]
        _chol_solve(Lm, z, u, nw)
        for i in range(nw):
            P[i, q] = u[i]
    for q in range(nd):
        for k in range(nd):
            t = 1.0 if q == k else 0.0
            for i in range(nw):
                t += Hb[q, i] * P[i, k]
            G[q, k] = t
    if not _chol(G, Lg, nd):
        return False
    # z = R^-1 h0 = v - P G^-1 Hb v ; u = R^-1 Hb^T b = P b - P G^-1 Hb P b
    _less_low_rank(v, P, Hb, Lg, e1, e2, z, nw, nd)
    for i in range(nw):
        t = 0.0
        for q in range(nd):
            t += P[i, q] * b[q]
        u[i] = t
    _less_low_rank(u, P, Hb, Lg, e1, e2, u, nw, nd)
    hu, hz = 0.0, 0.0
    for i in range(nw):
        hu += h0[i] * u[i]
        hz += h0[i] * z[i]
    mu = (1.0 - hu) / hz
    for i in range(nw):
        w_out[i] = u[i] + mu * z[i]
    return True


@_helper
def _fom_of(r, h0, Hb, w, b, nw, nd, var_x, r_lm, levels):
    """``20 log10(R_LM / (L - 1) / sqrt(MSE))``, ``MSE = sigma_X^2 (w^T R w + 1 + b^T b -
    2 w^T h_0 - 2 w^T H_b^T b)``; -1e3 for a non-positive MSE."""
    wrw, wh0, whb, bb = 0.0, 0.0, 0.0, 0.0
    for i in range(nw):  # w^T R w by the lags of the symmetric Toeplitz R
        wrw += w[i] * w[i]
        wh0 += w[i] * h0[i]
    wrw *= r[0]
    for d in range(1, nw):
        s = 0.0
        for i in range(nw - d):
            s += w[i] * w[i + d]
        wrw += 2.0 * r[d] * s
    for q in range(nd):
        t = 0.0
        for i in range(nw):
            t += Hb[q, i] * w[i]
        whb += t * b[q]
        bb += b[q] * b[q]
    mse = var_x * (wrw + 1.0 + bb - 2.0 * wh0 - 2.0 * whb)
    if mse <= 0.0:
        return -1e3
    return 20.0 * np.log10(r_lm / (levels - 1) / np.sqrt(mse))


@_helper
def _solve_one(r, h0, Hb, nw, nd, dw, bmin, bmax, wlim, var_x, r_lm, levels, w_out, b_out, R, Q, Lm, v, u, z,
               P, G, Lg, e1, e2):
    """The constrained MMSE solution for one pulse and noise (``r``: the Toeplitz row of
    ``R``); writes the taps into ``w_out`` and ``b_out`` and returns the FOM (dB), or
    -1e3 when the system is singular. ``R .. e2`` are work arrays."""
    for i in range(nw):  # (the Cholesky factor reads Q's lower triangle only; R = r[|i - j|])
        for j in range(i + 1):
            x = r[i - j]
            for q in range(nd):
                x -= Hb[q, i] * Hb[q, j]
            Q[i, j] = x
    if not _chol(Q, Lm, nw):  # the DFE eliminated (b = H_b w): min w^T Q w with h_0^T w = 1
        return -1e3
    _chol_solve(Lm, h0, v, nw)
    lam = 0.0
    for i in range(nw):
        lam += h0[i] * v[i]
    if lam <= 0.0:
        return -1e3
    for i in range(nw):
        w_out[i] = v[i] / lam
    if _dfe_follow(Hb, w_out, bmin, bmax, b_out, nw, nd):  # the DFE at its limits
        if not _refit_with_dfe(h0, Hb, b_out, v, Lm, w_out, nw, nd, u, z, P, G, Lg, e1, e2):
            return -1e3
    lim = wlim * abs(w_out[dw])
    hit = False
    for i in range(nw):
        if i != dw and abs(w_out[i]) > lim:
            w_out[i] = lim if w_out[i] > 0 else -lim
            hit = True
    if hit:  # renormalised to a unit cursor, and the DFE follows
        s = 0.0
        for i in range(nw):
            s += h0[i] * w_out[i]
        for i in range(nw):
            w_out[i] /= s
        _dfe_follow(Hb, w_out, bmin, bmax, b_out, nw, nd)
    return _fom_of(r, h0, Hb, w_out, b_out, nw, nd, var_x, r_lm, levels)


@_helper
def _fom_at(c, cc, s_ix, Y, A, SA, rn_ph, xt, M, dw, nw, bmin, bmax, wlim, var_x, jit_var, r_lm, levels, r, h0,
            Hb, w_t, b_t, R, Q, Lm, v, u, z, hv, P, G, Lg, e1, e2):
    """The MMSE FOM of Tx FFE taps ``c`` (``cc[m + 4]``: the sums of ``c_i c_j`` over
    ``i - j = m``) with the cursor at sample ``s_ix``; ``Y``: the UI-sampled pulse per phase
    with its first ``nw + nd + 4`` UI repeated after the period."""
    nd = bmin.size
    K = Y.shape[1] - (nw + nd + 4)
    ph = s_ix % M
    dh = s_ix // M
    for lg in range(nw):
        a_s, j_s = 0.0, 0.0
        for m in range(-4, 5):
            q = abs(lg + m)
            a_s += cc[m + 4] * A[ph, q]
            j_s += cc[m + 4] * SA[ph, q]
        r[lg] = a_s + (rn_ph[ph, lg] + var_x * jit_var * j_s + xt[lg]) / var_x
    base = dh + dw - nw + 1  # h[base + k], k < nw + nd: the cursor row and the DFE rows
    # tap i reads the period's sample (base + k + 3 - i) % K: the modulo taken once, the
    # rest read from the copy of the period's start after its end (``Y`` here is
    # :func:`mmse_grid`'s extended table)
    j0 = (base - 1) % K
    for k in range(nw + nd):
        s = 0.0
        for i in range(5):
            s += c[i] * Y[ph, j0 + k + 4 - i]
        hv[k] = s
    for i in range(nw):
        h0[i] = hv[nw - 1 - i]
        for q in range(nd):
            Hb[q, i] = hv[nw + q - i]
    return _solve_one(r, h0, Hb, nw, nd, dw, bmin, bmax, wlim, var_x, r_lm, levels, w_t, b_t, R, Q, Lm, v, u, z,
                      P, G, Lg, e1, e2)


@_helper
def _setting(c, Y, A, SA, rn_ph, F, win, win_lo, M, dw, nw, bmin, bmax, wlim, var_x, jit_var, r_lm, levels, ts_lo,
             ts_hi, coarse, prune_db, best_so_far, r, h0, Hb, w_t, b_t, xt, R, Q, Lm, v, u, z, hv, P, G, Lg, e1, e2,
             cc):
    """One Tx FFE setting of :func:`mmse_grid`: (FOM, cursor sample); ``r .. cc`` are work arrays."""
    W = win.shape[1]
    na = F.shape[0]
    xt[:] = 0.0
    for m in range(-4, 5):
        s = 0.0
        for i in range(5):
            j = i - m
            if 0 <= j < 5:
                s += c[i] * c[j]
        cc[m + 4] = s
    best_w, pk = -1e300, 0
    for q in range(W):
        s = 0.0
        for i in range(5):
            s += c[i] * win[i, q]
        if s > best_w:
            best_w, pk = s, q
    pk += win_lo
    for a in range(na):
        e_best, m_best = -1.0, 0
        for m in range(M):
            e = 0.0
            for d in range(-4, 5):
                e += cc[d + 4] * F[a, m, abs(d)]
            if e > e_best:
                e_best, m_best = e, m
        for lg in range(nw):
            s = 0.0
            for d in range(-4, 5):
                s += cc[d + 4] * F[a, m_best, abs(lg + d)]
            xt[lg] += var_x * s
    best_f, best_s = -1e300, pk
    step = coarse if coarse > 1 else 1
    for ts in range(ts_lo, ts_hi + 1, step):
        f = _fom_at(c, cc, pk + ts, Y, A, SA, rn_ph, xt, M, dw, nw, bmin, bmax, wlim, var_x, jit_var, r_lm, levels,
                    r, h0, Hb, w_t, b_t, R, Q, Lm, v, u, z, hv, P, G, Lg, e1, e2)
        if f > best_f:
            best_f, best_s = f, pk + ts
    if step > 1 and best_f >= best_so_far - prune_db:
        for ts in range(ts_lo, ts_hi + 1):
            if (ts - ts_lo) % step == 0:
                continue
            f = _fom_at(c, cc, pk + ts, Y, A, SA, rn_ph, xt, M, dw, nw, bmin, bmax, wlim, var_x, jit_var, r_lm,
                        levels, r, h0, Hb, w_t, b_t, R, Q, Lm, v, u, z, hv, P, G, Lg, e1, e2)
            if f > best_f:
                best_f, best_s = f, pk + ts
    return best_f, best_s


@njit(cache=True, fastmath=True, error_model="numpy")
def mmse_grid(tx_grid, Y, A, SA, rn_ph, F, win, win_lo, M, dw, nw, bmin, bmax, wlim, var_x, jit_var, r_lm,
              levels, ts_lo, ts_hi, coarse, prune_db, best_so_far, fom_out, cursor_out):
    """The MMSE figure of merit of every Tx FFE setting (rows of ``tx_grid``, taps
    ``c(-3) .. c(1)``, tap ``i`` delaying the pulse by ``i - 3`` UI) for one CTLE setting,
    at its best sampling time among ``ts_lo .. ts_hi`` samples from the equalised pulse's
    peak (every one: with the FFE's tap limits the FOM is not unimodal in it).

    ``Y[ph, k]``: the through pulse sampled once per UI at each phase; ``A``, ``SA``: the
    circular autocorrelations per phase of the pulse and of its slope (V per UI);
    ``rn_ph[ph, l]``: the noise autocorrelation that does not depend on the Tx FFE (Rx
    noise, transmitter noise through the pulse, NEXT aggressors); ``F[a, ph, m]``: each
    FEXT aggressor's autocorrelations (its transmitter shares the victim's FFE; its worst
    phase is taken, 178A-20); ``win[i, w]``: the delayed pulses around the peak from sample
    ``win_lo``. Writes ``fom_out`` and the cursor sample ``cursor_out``.

    With ``coarse > 1`` a setting is first tried at every ``coarse``-th sampling time; only
    if its best there is within ``prune_db`` of ``best_so_far`` (the best FOM of the CTLE
    settings searched before) are the others tried. A pruned setting's ``fom_out`` is its
    coarse best, a lower bound; the best setting is found as by the full search unless some
    setting's FOM rises more than ``prune_db`` between coarse sampling times.
    """
    nd = bmin.size
    r, h0, Hb, w_t, b_t, xt = np.empty(nw), np.empty(nw), np.empty((nd, nw)), np.empty(nw), np.empty(nd), np.zeros(nw)
    R, Q, Lm = np.empty((nw, nw)), np.empty((nw, nw)), np.zeros((nw, nw))
    v, u, z, hv = np.empty(nw), np.empty(nw), np.empty(nw), np.empty(nw + nd)
    P, G, Lg, e1, e2 = np.empty((nw, nd)), np.empty((nd, nd)), np.zeros((nd, nd)), np.empty(nd), np.empty(nd)
    cc = np.empty(9)
    # the UI-sampled pulse with its first UIs repeated after the period (each setting's
    # cursor and DFE rows read from it without a modulo per sample)
    K = Y.shape[1]
    Y2 = np.empty((Y.shape[0], K + nw + nd + 4))
    for ph in range(Y.shape[0]):
        for j in range(K + nw + nd + 4):
            Y2[ph, j] = Y[ph, j % K]
    for t in range(tx_grid.shape[0]):
        f, s = _setting(tx_grid[t], Y2, A, SA, rn_ph, F, win, win_lo, M, dw, nw, bmin, bmax, wlim, var_x, jit_var,
                        r_lm, levels, ts_lo, ts_hi, coarse, prune_db, best_so_far, r, h0, Hb, w_t, b_t, xt, R, Q, Lm,
                        v, u, z, hv, P, G, Lg, e1, e2, cc)
        fom_out[t] = f
        cursor_out[t] = s
