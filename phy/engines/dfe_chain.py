"""The DFE's error chain as the slicer sees it: transitions conditioned on the data, from a
statistical eye's own distribution (:func:`dfe_transitions`), for
:meth:`fec.BurstModel.dfe` and :func:`fec.analysis.dfe_burst_means`.

A burst's first error is a tail event of a sample that shares its symbols with the next
ones through the pre-cursors, and the slicer's noise and far ISI are correlated from UI to
UI; the chain therefore follows the last errors together with the symbols from the
previous one to the pre-cursors ahead (exact feedback offsets and residual post-cursor),
the rest of the ISI exactly, and a Gaussian of the variance the eye leaves, shifted by its
correlation with the first error's value; calibrated so that, over the data, each offset
and level errs as the eye says.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from _linkmodel._recent import Recent

from ._chain_kernels import (
    chain_advance,
    chain_shift,
    chain_step,
    mixture_tails,
    slicer_probs,
    tail_means,
)
from .pmf import discrete_pmf, gauss_convolve, split_variance

if TYPE_CHECKING:  # stateye imports this module (StatEye.der); only the annotations need StatEye
    from .stateye import StatEye

#: Bounds of the conditioned DFE error chain (:func:`dfe_transitions`): the (error state,
#: symbol window) pairs it follows, the pre-cursors it holds explicitly, its rows, the
#: bins of the first error's sample.
DFE_WINDOW_STATES = 1 << 18
DFE_MAX_PRECURSORS = 8
DFE_MAX_ROWS = 16
DFE_MEMORY_BINS = 8


@lru_cache(maxsize=64)
def dfe_transitions(eye: StatEye) -> np.ndarray | None:
    """Transitions of the DFE's error chain from this eye's distribution at the slicer,
    conditioned on the data: the table that :meth:`fec.BurstModel.dfe` and
    :func:`fec.analysis.dfe_burst_means` take as ``transitions``, shape ``(P, 3^N, 3)``
    (None without a DFE whose first six taps lie in (-1, 1)).

    A wrong decision makes the DFE subtract the wrong ISI: the next samples move by
    ``delta = -h0 sum_i b_i (a^_(t-i) - a_(t-i))`` (level amplitudes; the first tap's from
    the two levels themselves, the older ones' from the mean level spacing). Whether the
    next decision errs, and which way, depends on more than ``delta``:

    * its own level: an outer level errs one way only, so a burst of alternating errors
      ends at the first symbol on the level it cannot leave;
    * the data the samples share: the first error is a tail event, so it selects the
      ``K`` next symbols, which reach its sample through the pre-cursors (the burst goes
      on while they avoid the blocked levels), and the previous symbol reaches the next
      sample through the residual first post-cursor; these are held exactly, in a window
      ``(a_(t-1), a_t, .. a_(t+K))``;
    * the rest of the sample, ``X_t`` (the other ISI exactly, the other terms as a
      Gaussian of the variance the eye leaves them), is not independent from UI to UI:
      the receiver noise through the Rx FFE and the far ISI (shared symbols) are
      correlated, ``rho(L)`` at lag ``L`` (:func:`_memory`). The first error's ``X``,
      drawn as its error selects it (``DFE_MEMORY_BINS`` bins of equal probability),
      shifts the sample ``L`` UI later by ``rho(L) x`` and narrows the rest by
      ``sqrt(1 - rho(L)^2)`` (the Gaussian conditional, taken for the distribution of
      ``X``), averaged over the bins (the same for every state and window).

    The probability of each error is ``P_eye(u) P(X > u - s_w) / E_w P(X > u - s_w)``
    (lower tails alike), ``u`` the threshold less ``a_t h0 + delta`` and ``s_w`` the
    window's ISI, so that averaged over the data it is the eye's own error ratio at that
    offset and level, exactly. A forward pass over (last ``N`` errors, window) from the
    burst's first error (a ``+1``; ``-1`` mirrors it, the eye being symmetric) gives row
    ``p``: the probabilities of a right, ``+1`` and ``-1`` decision ``p + 1`` UI after
    the first error, from each state of the last errors; states the pass never reaches
    take the unconditioned data's.

    Bounded: ``K`` is the largest with ``3^N M^(K+2) <= DFE_WINDOW_STATES`` (at most
    ``DFE_MAX_PRECURSORS``), at most ``DFE_MAX_ROWS`` rows (and
    :data:`fec.analysis.MAX_CHAIN_STATES` chain states); the last row, without memory,
    holds from then on. Where the link's cursors do not reproduce the eye's variance
    (:func:`_slicer_isi`) the window holds the levels only, ``X`` is the eye's column and
    only the receiver noise's correlation is kept. Remembered per eye (64 eyes).
    """
    lk = eye.link
    b = np.asarray(lk.dfe[:6], dtype=float)
    if b.size == 0 or not np.all(np.abs(b) < 1):
        return None
    from fec.analysis import MAX_CHAIN_STATES

    chain = _SlicerChain(eye, b)
    table = chain.table(max(1, min(DFE_MAX_ROWS, MAX_CHAIN_STATES // chain.S)))
    table.flags.writeable = False
    return table


def _slicer_isi(eye: StatEye):
    """``(cursors, main index, variance)``: the ISI at the slicer at the sampling point (V
    per unit level; the main cursor and what the DFE cancels taken out) and the eye
    column's variance (V^2); or None. The prepared link holds the cursors and the Rx FFE
    but not which combined cursor is the main: it is the one whose ISI, with the eye's
    Gaussian terms, leaves the eye's variance (any other puts the main cursor in the ISI,
    far beyond it); what remains (dual Dirac, crosstalk) is at least 0."""
    lk = eye.link
    comb = np.convolve(lk.cursors, lk.rx_ffe)
    nd = lk.dfe.size
    v = eye.voltage_v
    pmf = np.diff(eye.cdf[eye.centre], prepend=0.0)
    var_eye = float(pmf @ (v - pmf @ v) ** 2)
    var_g = float(sum(x**2 for x in eye.sigma_v.values()))
    p2 = float(np.mean(eye.levels**2))
    # every candidate main cursor i at once: |res_i|^2 with res_i = comb h0 / comb[i], its
    # own entry 0 and the DFE's taps off the next nd, is r^2 (|comb|^2 - comb[i]^2) less
    # 2 r h0 sum_j comb[i+1+j] b_j plus h0^2 |b|^2 (r = h0 / comb[i])
    cand = np.flatnonzero(comb > 0)
    cand = cand[cand + nd < comb.size]
    if cand.size == 0:
        return None
    h0, b = lk.h0_v, lk.dfe
    r = h0 / comb[cand]
    cross = sum(comb[cand + 1 + j] * b[j] for j in range(nd)) if nd else 0.0
    norm2 = r**2 * (float(comb @ comb) - comb[cand] ** 2) - 2 * r * h0 * cross + h0**2 * float(b @ b)
    gap = var_eye - var_g - p2 * norm2
    ok = gap >= -0.02 * var_eye
    if not ok.any():
        return None
    i = int(cand[np.argmin(np.where(ok, np.abs(gap), np.inf))])  # the first of the closest
    res = comb * (h0 / comb[i])
    res[i] = 0.0
    res[i + 1 : i + 1 + nd] -= b * h0
    return res, i, var_eye


def _memory(eye: StatEye, rest, n: int) -> np.ndarray:
    """Autocovariance (V^2) at lags ``0 .. n`` of what the slicer sees besides the explicit
    cursors: the receiver noise through its shaping FIR and the Rx FFE, the transmitter's
    noise through the whole path, and the ISI of the cursors ``rest`` (V per unit level,
    independent uniform symbols). Jitter, quantisation and the dual Dirac count as white."""
    lk = eye.link
    w = lk.rx_ffe

    def acov(h):
        r = np.correlate(h, h, "full")[h.size - 1 :]
        out = np.zeros(n + 1)
        out[: min(n + 1, r.size)] = r[: n + 1]
        return out

    white = lk.white_noise_rms_v if lk.rx_noise_fir.size > 1 else lk.rx_noise_rms_v
    out = white**2 * acov(w)
    if lk.rx_noise_fir.size > 1:
        out += acov(np.convolve(lk.rx_noise_fir, w))
    if rest is not None:
        out += float(np.mean(eye.levels**2)) * acov(rest)
        spu = lk.analog.samples_per_ui
        t0 = lk.sampling_index + spu * np.arange(-lk.n_pre, lk.cursors.size - lk.n_pre)
        path = lk.tx_noise_pulse.samples
        q = np.convolve(np.interp(t0, np.arange(path.size), path, left=0.0, right=0.0), w)
        sig_tx = eye.sigma_v.get("tx", 0.0)
        if sig_tx > 0 and np.any(q):
            out += sig_tx**2 * acov(q) / float(q @ q)
    return out


_REST_PMFS = Recent(16)  # recent PMFs of the rest's ISI: an eye and its noisier copies (phy.link.post_fec) share one


def _rest_pmf(rest: np.ndarray, lv: np.ndarray, v0: float, dv: float, nv: int) -> np.ndarray:
    """:func:`discrete_pmf` of ``rest`` on the grid, remembered (read-only) for the last 16
    cursors, levels and grids by their exact values."""

    def make():
        pmf = discrete_pmf(rest, lv, v0, dv, nv)
        pmf.flags.writeable = False
        return pmf

    key = (np.ascontiguousarray(rest, dtype=float).tobytes(), np.asarray(lv, dtype=float).tobytes(), v0, dv, nv)
    return _REST_PMFS.remember(key, make)


class _SlicerChain:
    """What :func:`dfe_transitions` computes once per eye: the rest ``X`` of the sample
    (its tails on the eye's grid, its memory ``rho``), the window of explicit symbols and
    its ISI, each state's offset, and per direction of error the calibration and where on
    the grid each (state, window) reads ``X``'s tail."""

    def __init__(self, eye: StatEye, b: np.ndarray):
        M, N = eye.levels.size, b.size
        self.M, self.N, self.S = M, N, 3**N
        self.zero = (self.S - 1) // 2
        lv = eye.levels
        h0 = float(eye.main_v[eye.centre])
        v = eye.voltage_v
        self.v0, self.dv, self.nv = float(v[0]), float(v[1] - v[0]), v.size
        cdf_e = eye.cdf[eye.centre]
        isi = _slicer_isi(eye)
        K, K_cap = 0, (min(DFE_MAX_PRECURSORS, isi[1]) if isi is not None else 0)
        while K < K_cap and self.S * M ** (K + 3) <= DFE_WINDOW_STATES:
            K += 1
        if isi is None:
            pre, r1, px, rest, var_x = np.zeros(0), 0.0, np.diff(cdf_e, prepend=0.0), None, None
        else:
            res, mc, var_eye = isi
            pre, r1 = res[mc - K : mc][::-1], float(res[mc + 1])  # c_(-1) .. c_(-K); the residual c_1
            rest = res.copy()
            rest[mc - K : mc] = 0.0
            rest[mc + 1] = 0.0
            var_other = max(var_eye - float(np.mean(lv**2)) * float(res @ res), 0.0)
            px = _rest_pmf(rest, lv, self.v0, self.dv, self.nv)
            px = gauss_convolve(px, np.sqrt(max(var_other / self.dv**2 - split_variance(rest, lv, self.dv), 0.0)))
            var_x = var_other + float(np.mean(lv**2)) * float(rest @ rest)
        px = np.clip(px, 0.0, None) / px.sum()
        # distribution functions at the grid's points, each bin's mass centred on its point
        # (half of it on either side), the upper tail summed from the top (exact far out)
        self.cdf_x = np.cumsum(px) - 0.5 * px
        self.sf_x = np.concatenate([np.cumsum(px[::-1])[::-1][1:], [0.0]]) + 0.5 * px
        self.px = px
        cdf_e = cdf_e - 0.5 * np.diff(cdf_e, prepend=0.0)  # the eye's, alike
        cov = _memory(eye, rest, DFE_MAX_ROWS)
        var_x = var_x if var_x is not None else float(px @ (v - px @ v) ** 2)
        self.rho = np.clip(cov[1:] / var_x, -0.999, 0.999) if var_x > 0 else np.zeros(DFE_MAX_ROWS)
        self.K = K
        MW = M ** (K + 2)
        self.MW, self.q = MW, MW // M
        # a window (a_(t-1), a_t, a_(t+1) .. a_(t+K)), a_(t-1) slowest: its explicit ISI
        # depends on a_(t-1) and the next K, s_w = r1 a_(t-1) + s_pre(a_(t+1) .. a_(t+K))
        s_pre = pre @ lv[np.indices((M,) * K).reshape(K, -1)] if K else np.zeros(1)
        s_ex = (r1 * lv[:, None] + s_pre[None, :]).ravel()  # over (a_(t-1), a_(t+1) .. a_(t+K))
        self.d_w = (s_ex / self.dv).reshape(M, -1)  # in bins, by (a_(t-1), the next K)
        d_ex = np.sort(self.d_w.ravel())  # ascending (tail_means reads them in runs)
        e = (np.arange(self.S)[:, None] // 3 ** np.arange(N)) % 3 - 1  # (S, N): the error i + 1 UI ago
        a = np.arange(M)
        nxt = a[None, :] + e[:, :1]
        ok = (nxt >= 0) & (nxt < M)  # a state that the previous symbol's level allows
        spacing = (lv[-1] - lv[0]) / (M - 1)
        delta = -h0 * (b[0] * (lv[np.clip(nxt, 0, M - 1)] - lv[a][None, :]) + spacing * (e[:, 1:] @ b[1:])[:, None])
        self.ok_prev = ok  # (state, a_(t-1)): whether the window's previous symbol allows the state
        self.rows = np.flatnonzero(np.arange(self.S) != self.zero)  # the states a burst can be in
        self.dirs = []
        for sign in (1, -1):
            has = (a < M - 1) if sign > 0 else (a > 0)
            thr = eye.thresholds_v[np.clip(a if sign > 0 else a - 1, 0, M - 2)]
            u = thr[None, None, :] - h0 * lv[a][None, None, :] - delta[:, :, None]  # (state, a_(t-1), a_t)
            eye_tail = 1.0 - self._at(cdf_e, u) if sign > 0 else self._at(cdf_e, u)
            cu = (u - self.v0) / self.dv  # the offsets in bins of the grid
            norm = np.empty(u.size)
            tail_means(self.sf_x if sign > 0 else self.cdf_x, cu.ravel(), d_ex, np.concatenate([[0.0], np.cumsum(d_ex)]),
                       norm)
            norm = norm.reshape(u.shape)
            scale = np.divide(eye_tail, norm, out=np.zeros_like(u), where=norm > 0) * (has[None, None, :] & ok[:, :, None])
            # per (state, (a_(t-1), a_t)): the calibration and the offset the window's ISI moves
            self.dirs.append((sign, scale.reshape(self.S, M * M), np.ascontiguousarray(cu.reshape(self.S, M * M))))

    def _at(self, y, x):
        """``y`` (on the eye's grid) at ``x``, linearly, held beyond the grid's ends."""
        fi = np.clip((x - self.v0) / self.dv, 0.0, self.nv - 1.000001)
        i0 = fi.astype(np.int64)
        return y[i0] + (y[i0 + 1] - y[i0]) * (fi - i0)

    def probs(self, cdf, sf):
        """(up, down) per (state, window) for a rest of these tails
        (:func:`phy.engines._chain_kernels.slicer_probs`)."""
        (_s, sc_up, c_up), (_s, sc_dn, c_dn) = self.dirs
        up, dn = np.empty((self.S, self.MW)), np.empty((self.S, self.MW))
        slicer_probs(sf, cdf, sc_up, c_up, sc_dn, c_dn, self.d_w, np.arange(self.S), up, dn)
        return up, dn

    def bins(self, state: int) -> np.ndarray:
        """Where (fractional bins of the grid, held inside it) the ``+1`` error's tail is
        read for each window from ``state`` (what :func:`slicer_probs` reads)."""
        c = self.dirs[0][2][state].reshape(self.M, self.M)
        return np.clip(c[:, :, None] - self.d_w[:, None, :], 0.0, self.nv - 1.000001).reshape(-1)

    def first_error(self, up=None):
        """The mass over (state, next window less its newest symbol) one UI after a ``+1``
        first error, and the bins of the first error's ``X`` (centres, weights); ``up``:
        the unconditioned :meth:`probs`' first, when already at hand."""
        scale = self.dirs[0][1]
        if up is None:
            up, _dn = self.probs(self.cdf_x, self.sf_x)
        z = self.zero
        y = np.zeros((self.S, self.q))
        y[3 * (z % 3 ** (self.N - 1)) + 2] = up[z].reshape(self.M, self.q).sum(axis=0)
        # X at the first error: its density times the windows' weight with their threshold at
        # or below it (a grid point j: the windows read at ceil(bin) <= j)
        wz = np.repeat(scale[z] / self.MW, self.MW // scale.shape[1])
        below = np.bincount(np.ceil(self.bins(z)).astype(np.int64), wz, self.nv)
        post = self.px * np.cumsum(below)
        if not y.sum() > 0 or not post.sum() > 0:  # no error the grid can hold: nothing to condition on
            return None, None, None
        cum = np.cumsum(post) / post.sum()
        lab = np.minimum((cum * DFE_MEMORY_BINS).astype(int), DFE_MEMORY_BINS - 1)
        x = self.v0 + self.dv * np.arange(self.nv)
        wb = np.bincount(lab, post, DFE_MEMORY_BINS)
        xb = np.bincount(lab, post * x, DFE_MEMORY_BINS) / np.maximum(wb, 1e-300)
        return y / y.sum(), xb, wb / wb.sum()

    def tails_at(self, L: int, xb, wb):
        """(cdf, sf) of ``X`` ``L`` UI after the first error: ``rho x0 + sqrt(1 - rho^2) X``
        over the first error's bins ``x0``."""
        r = self.rho[L - 1] if L <= self.rho.size else 0.0
        if r == 0.0:
            return self.cdf_x, self.sf_x
        out = np.empty((2, self.nv))
        mixture_tails(self.cdf_x, self.sf_x, xb, wb, r, self.v0, self.dv, out)
        return out[0], out[1]

    def table(self, max_rows: int) -> np.ndarray:
        """Rows ``(P, 3^N, 3)``: a forward pass from a ``+1`` first error, mirrored for a
        ``-1``; after each decision the window moves on by a symbol drawn uniformly, so
        the mass is held over (state, window less its newest symbol)."""
        S, M, q, zero = self.S, self.M, self.q, self.zero
        up0, dn0 = self.probs(self.cdf_x, self.sf_x)
        # unconditioned data: the windows whose previous symbol allows the state, equally likely
        w = self.ok_prev.astype(float)
        n_ok = np.maximum(w.sum(axis=1) * (self.MW // M), 1.0)
        base = np.zeros((S, 3))
        base[:, 1] = (up0.reshape(S, M, -1).sum(axis=2) * w).sum(axis=1) / n_ok
        base[:, 2] = (dn0.reshape(S, M, -1).sum(axis=2) * w).sum(axis=1) / n_ok
        keep = np.arange(S) != zero  # the states a burst can be in
        Y, xb, wb = self.first_error(up0)
        if Y is None:
            base[:, 0] = np.maximum(1.0 - base[:, 1] - base[:, 2], 0.0)
            return base[None]
        digits = (np.arange(S)[:, None] // 3 ** np.arange(self.N)) % 3
        mirror = ((2 - digits) * 3 ** np.arange(self.N)).sum(axis=1)
        rows = []
        alive = 1.0
        up0k, dn0k = np.ascontiguousarray(up0[keep]), np.ascontiguousarray(dn0[keep])
        gk_up, gk_dn = np.empty((S - 1, q)), np.empty((S - 1, q))
        rowmap = np.cumsum(keep) - 1
        rowmap[zero] = -1
        Y_next = np.empty((S, q))
        (_s, sc_up, c_up), (_s, sc_dn, c_dn) = self.dirs
        for p in range(max_rows):
            memory = p < max_rows - 1 and p < self.rho.size and abs(self.rho[p]) > 1e-4
            Yk = np.ascontiguousarray(Y[keep])
            if memory:  # the rest's tails moved by the first error's: the probabilities afresh
                cdf_t, sf_t = self.tails_at(p + 1, xb, wb)
                chain_step(sf_t, cdf_t, sc_up, c_up, sc_dn, c_dn, self.d_w, self.rows, Yk, M, gk_up, gk_dn)
            else:
                chain_advance(Yk, up0k, dn0k, M, gk_up, gk_dn)
            mass, f_up, f_dn = Y.sum(axis=1), np.zeros(S), np.zeros(S)
            f_up[keep], f_dn[keep] = gk_up.sum(axis=1), gk_dn.sum(axis=1)
            m2 = mass + mass[mirror]
            row = base.copy()
            seen = m2 > 0
            row[seen, 1] = (f_up + f_dn[mirror])[seen] / m2[seen]
            row[seen, 2] = (f_dn + f_up[mirror])[seen] / m2[seen]
            row[:, 0] = np.clip(1.0 - row[:, 1] - row[:, 2], 0.0, 1.0)
            rows.append(row)
            chain_shift(Y, gk_up, gk_dn, rowmap, M, S // 3, Y_next)  # the oldest error leaves the state
            Y, Y_next = Y_next, Y
            Y[zero] = 0.0  # N right decisions: the burst is over
            left = Y.sum()
            alive *= left
            if left <= 0 or alive < 1e-12:
                break
            Y /= left
        out = np.array(rows)
        out[:, :, 0] = np.maximum(1.0 - out[:, :, 1] - out[:, :, 2], 0.0)
        return out
