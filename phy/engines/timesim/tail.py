"""The pulse's far cursors as a block convolution (the long-span path of the simulator).

The exact kernel reads the step response at every edge's own jittered time, for every
symbol the pulse spans: its cost per UI grows with the span, and a real channel's span is
hundreds to thousands of UIs (a cable's reflections, a package's ringing). The head of the
pulse (the cursors the DFE, the Rx FFE and the jitter act on most) stays in that kernel;
its tail, the lags ``j`` outside ``[-head_pre, head_post]``, is a linear filter of the
symbol stream and is done here, a chunk at a time, by FFT overlap-save
(:func:`scipy.fft.rfft`):

``tail_s(n) = sum_j d_(n-j) L(x_j,s) - sum_j d_(n-j) eps_(n-j) L'(x_j,s)``

with ``d_k = x_k - x_(k-1)`` the driver's steps, ``L`` the step table read by linear
interpolation (as the kernel reads it) at ``x_j,s = pos + j spu + s`` for the sampling
shift ``s`` (fine samples), and ``L'`` the step's derivative there (central differences,
interpolated): the edge jitter ``eps_k`` to first order. Without jitter the tail is exact (to the FFT's
rounding); with it, the neglected term is bounded by ``max|d| sum_j max_|e|<=e_max |L(x -
e) - L(x) + e L'(x)|`` over the tail's lags, ``e_max`` the jitter's hard bound
(:meth:`phy.serdes.Jitter.max_tx_s`, Gaussians cut at 8 sigma).

Every sampling shift the run reads (the sampling phase, its neighbours for the sampling
clock's jitter, the eye's columns, the bang-bang detector's edge sampler, the CDR's range)
has its own tail filter; when there are more than a few, they are the rows of a matrix
whose singular value decomposition gives a few basis filters that reproduce every row
within ``rank_tol`` of the pulse's peak (in the l1 norm, which bounds the error of every
sample): one inverse FFT per two basis filters (a complex one: its real and imaginary
parts), and the kernel combines them per shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.fft as sfft
from numba.extending import register_jitable

# Helpers called only from other kernels: as register_jitable functions they are compiled
# into their callers without a Python entry point of their own (Numba's overload path),
# which cuts the first run's compilation (issue 35); the callers' machine code is the same.
_helper = register_jitable(fastmath=True)

__all__ = ["TailPlan", "add_tail", "add_tail_cols", "plan_tail"]

IDENTITY_MAX = 4  # up to this many shifts, one filter each (no decomposition)


@dataclass
class TailPlan:
    """The tail's filters and what the kernel reads.

    ``kd``/``ku``: the filters (rows, over lags ``-jpre .. jpost``) applied to the steps
    ``d`` and to ``d eps``; output ``o`` is ``d * kd[o] - (d eps) * ku[o]`` (a zero row is
    skipped). ``coef[o, s - s_min]``: the weight of output ``o`` in the tail at shift ``s``.
    ``err_d``, ``err_u``: the l1 error of the decomposition per unit ``d`` and ``d eps``;
    ``lin``: the jitter's first-order error per unit ``d`` (worst shift), and ``lin2`` the
    sum over the tail's lags of its square (worst shift), for the rms bound.
    """

    head_pre: int
    head_post: int
    jpre: int
    jpost: int
    s_min: int
    coef: np.ndarray
    kd: np.ndarray
    ku: np.ndarray
    rank: int
    err_d: float
    err_u: float
    lin: float
    lin2: float
    nfft: int

    @property
    def n_out(self) -> int:
        return self.coef.shape[0]

    def outputs(self, d: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """The tail outputs over a window of steps ``d`` (and ``u = d eps``): column ``i`` of
        the result (shape ``(n_out, m)`` with ``m >= len(d) - L + 1``, C-contiguous like the
        direct path's placeholder, so the kernel has one signature) is at window index ``i +
        jpost``; the columns past ``len(d) - L`` are padding. The result is a buffer of the
        plan's, overwritten by the next call.

        One forward FFT of each input's blocks. With one output (a fixed phase), one inverse
        real FFT, the buffers reused from call to call: bit for bit a plain overlap-save.
        With more (the basis of a decomposition), two outputs ``a, b`` share one complex
        inverse FFT (:meth:`_pair`): it costs about 0.7 of two real ones; the outputs differ
        from the plain overlap-save's by the FFTs' rounding (a few 1e-16 of the sum of the
        terms' magnitudes, tested within 1e-12)."""
        L = self.kd.shape[1]
        nfft, step = self.nfft, self.nfft - L + 1
        nb = -(-(d.size - L + 1) // step)
        out = self._buffer("out", (self.n_out, nb * step), np.float64)
        D = self._spectra(d, nb, step, "pad_d")
        U = self._spectra(u, nb, step, "pad_u") if (u is not None and np.any(self._ku_on)) else None
        z = self._buffer("z", D.shape, D.dtype)
        t = self._buffer("t", D.shape, D.dtype)
        n_single = self.n_out if self.n_out < 2 else self.n_out % 2
        for o in range(self.n_out - n_single, self.n_out):
            kd_on, ku_on = self._kd_on[o], U is not None and self._ku_on[o]
            if kd_on:
                np.multiply(D, self._kd_hat[o], out=z)
            if ku_on:
                np.multiply(U, self._ku_hat[o], out=t)
                np.subtract(z if kd_on else 0.0, t, out=z)
            elif not kd_on:
                z.fill(0.0)
            y = sfft.irfft(z, nfft, axis=1)
            out[o].reshape(nb, step)[...] = y[:, L - 1 :]
        for o in range(0, self.n_out - n_single, 2):
            self._pair(o, D, U, out, nb, step)
        return out

    def _pair(self, o: int, D: np.ndarray, U: np.ndarray | None, out: np.ndarray, nb: int, step: int) -> None:
        """Outputs ``o`` and ``o + 1`` (``a``, ``b``) by one complex inverse FFT: with
        ``Za = D kd_a - U ku_a`` and ``Zb`` the half spectra, the full spectrum ``F[k] = Za[k]
        + i Zb[k]`` for ``k <= nfft/2`` and ``F[nfft - k] = conj(Za[k] - i Zb[k])`` is that of
        ``a + i b``; both halves come from the packed filters ``kd_a +/- i kd_b`` (and
        ``ku``'s, negated), so a pair costs the products of one output each."""
        nfft, L, H = self.nfft, self.kd.shape[1], self.nfft // 2 + 1
        F = self._buffer("F", (nb, nfft), np.complex128)
        t = self._buffer("t", D.shape, D.dtype)
        q = self._buffer("q", (nb, nfft - H), D.dtype)
        pd, pu = self._packed[o // 2]
        for half, dst, cols in ((0, F[:, :H], slice(0, H)), (1, q, slice(1, nfft - H + 1))):
            on = False
            if pd is not None:
                np.multiply(D[:, cols], pd[half][cols], out=dst)
                on = True
            if U is not None and pu is not None:
                if on:
                    np.multiply(U[:, cols], pu[half][cols], out=t[:, : dst.shape[1]])
                    np.add(dst, t[:, : dst.shape[1]], out=dst)
                else:
                    np.multiply(U[:, cols], pu[half][cols], out=dst)
                on = True
            if not on:
                dst.fill(0.0)
        np.conjugate(q[:, ::-1], out=F[:, H:])
        y = sfft.ifft(F, axis=1, overwrite_x=True)
        out[o].reshape(nb, step)[...] = y.real[:, L - 1 :]
        out[o + 1].reshape(nb, step)[...] = y.imag[:, L - 1 :]

    def _buffer(self, key: str, shape: tuple, dtype) -> np.ndarray:
        """A scratch array of the plan's, of ``shape`` (reallocated when it grows)."""
        bufs = self.__dict__.setdefault("_bufs", {})
        size = int(np.prod(shape))
        b = bufs.get(key)
        if b is None or b.size < size:
            bufs[key] = b = np.empty(size, dtype=dtype)
        return b[:size].reshape(shape)

    def _spectra(self, x: np.ndarray, nb: int, step: int, key: str) -> np.ndarray:
        """The spectra of the ``nb`` overlapping blocks of ``x`` (``nfft`` samples each,
        ``step`` apart, zero-padded at the end)."""
        nfft = self.nfft
        pad = self._buffer(key, ((nb - 1) * step + nfft,), np.float64)
        pad[: x.size] = x
        pad[x.size :] = 0.0
        blocks = np.lib.stride_tricks.sliding_window_view(pad, nfft)[::step]
        return sfft.rfft(blocks, axis=1)

    def prepare(self) -> TailPlan:
        """The filters' spectra on the overlap-save grid (once per run)."""
        self._kd_on = np.any(self.kd != 0, axis=1)
        self._ku_on = np.any(self.ku != 0, axis=1)
        self._kd_hat = self._rfft_rows(self.kd, self._kd_on)
        self._ku_hat = self._rfft_rows(self.ku, self._ku_on)
        self._packed = []  # per pair of outputs (a, b): (kd_a + i kd_b, kd_a - i kd_b), and -ku's
        for o in range(0, self.n_out - 1, 2):
            sl = slice(o, o + 2)
            pd = self._pack(self._kd_hat[o], self._kd_hat[o + 1]) if self._kd_on[sl].any() else None
            pu = self._pack(-self._ku_hat[o], -self._ku_hat[o + 1]) if self._ku_on[sl].any() else None
            self._packed.append((pd, pu))
        return self

    def _rfft_rows(self, k: np.ndarray, on: np.ndarray) -> np.ndarray:
        """The spectra of the filters ``k`` on the overlap-save grid: those of the nonzero rows
        (``on``), zeros for the others (a basis' steps' rows have no jitter's part and the
        jitter's rows no steps' part)."""
        hat = np.zeros((k.shape[0], self.nfft // 2 + 1), dtype=np.complex128)
        if on.all():
            hat[...] = sfft.rfft(k, self.nfft, axis=1)
        elif on.any():
            hat[on] = sfft.rfft(k[on], self.nfft, axis=1)
        return hat

    @staticmethod
    def _pack(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The spectra ``a + i b`` and ``a - i b`` (``a``, ``b`` those of real filters)."""
        ib = 1j * b
        return a + ib, a - ib

    def bound_v(self, d_max: float, u_max: float) -> float:
        """The bound on the tail's error at one sample (V), for steps up to ``d_max`` and
        ``|d eps|`` up to ``u_max``."""
        return d_max * (self.err_d + self.lin) + u_max * self.err_u

    def rms_bound_v(self, d_max: float, u_max: float, sum_abs_rd: float) -> float:
        """A bound on the rms of the tail's error (V) when the steps are a stationary
        sequence independent of the jitter with ``sum_l |E[d_k d_(k+l)]| = sum_abs_rd``
        (random data): the jitter's term is ``sum_j d_(n-j) r_j`` with ``|r_j|`` below its
        worst case, so its variance is at most ``sum_abs_rd sum_j max r_j^2``; the
        decomposition's error is added at its worst."""
        return float(np.sqrt(sum_abs_rd * self.lin2)) + d_max * self.err_d + u_max * self.err_u

    def to_dict(self) -> dict:
        return {"head_ui": [-self.head_pre, self.head_post], "span_ui": [-self.jpre, self.jpost],
                "filters": self.n_out, "rank": self.rank, "shifts": int(self.coef.shape[1]), "fft_size": self.nfft}


def _lowrank(G: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, int, float]:
    """``G ~ C @ V`` with the fewest rows of ``V`` keeping every row's l1 error within
    ``tol``: (C, V, rank, the error reached)."""
    if G.shape[0] <= IDENTITY_MAX or not np.any(G):
        return np.eye(G.shape[0]), G.copy(), G.shape[0], 0.0
    U, sv, Vt = np.linalg.svd(G, full_matrices=False)
    approx = np.zeros_like(G)
    tmp = np.empty_like(G)  # the terms and the residuals, in place (the same values as fresh arrays)
    err = float(np.abs(G).sum(axis=1).max())
    r = 0
    while r < sv.size and err > tol:
        np.multiply((U[:, r] * sv[r])[:, None], Vt[r][None, :], out=tmp)  # np.outer's products
        approx += tmp
        r += 1
        np.subtract(G, approx, out=tmp)
        err = float(np.abs(tmp, out=tmp).sum(axis=1).max())
    return U[:, :r] * sv[:r], Vt[:r].copy(), r, err


def _slope(S: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """The step's derivative at ``x0`` (per fine sample): the central differences of ``S``
    interpolated linearly, so that it is continuous where the interpolated step has kinks."""
    i0 = np.floor(x0).astype(np.int64)
    f0 = x0 - i0
    c0 = 0.5 * (S[i0 + 1] - S[i0 - 1])
    c1 = 0.5 * (S[i0 + 2] - S[i0])
    return (1 - f0) * c0 + f0 * c1


def _linearisation(S: np.ndarray, x0: np.ndarray, slope: np.ndarray, e_max: float) -> np.ndarray:
    """``max_|e|<=e_max |L(x0 - e) - L(x0) + e slope|`` for each position ``x0`` (fine
    samples into ``S``), ``L`` the linear interpolation of ``S`` (as the exact kernel reads
    it). The error is piecewise linear in ``e``: its largest magnitude is at a grid point or
    at an end of the range."""
    i0 = np.floor(x0).astype(np.int64)
    f0 = x0 - i0
    g = (1 - f0) * S[i0] + f0 * S[i0 + 1]

    def interp(x):
        i = np.clip(np.floor(x).astype(np.int64), 0, S.size - 2)
        f = x - i
        return (1 - f) * S[i] + f * S[i + 1]

    worst = np.zeros_like(x0)
    for e in (-e_max, e_max):
        worst = np.maximum(worst, np.abs(interp(x0 - e) - g + e * slope))
    for k in range(-int(np.ceil(e_max)) - 1, int(np.ceil(e_max)) + 2):
        if k > e_max + 1 or k < -e_max:  # |f0 - k| > e_max for every f0 in [0, 1)
            continue
        e = f0 - k  # x0 - e is the grid point i0 + k
        ok = np.abs(e) <= e_max
        q = np.clip(i0 + k, 0, S.size - 1)
        worst = np.where(ok, np.maximum(worst, np.abs(S[q] - g + e * slope)), worst)
    return worst


def plan_tail(S: np.ndarray, pos_base: float, spu: int, jpre: int, jpost: int, head: tuple[int, int],
              shifts: np.ndarray, e_max: float, rank_tol: float) -> TailPlan:
    """The tail's plan for the step table ``S`` read at ``pos_base + j spu + s`` (lag ``j``,
    shift ``s`` among ``shifts``, consecutive integers), the head ``(pre, post)`` lags left
    to the exact kernel, the jitter's bound ``e_max`` (fine samples; 0 without edge jitter)
    and the decomposition's tolerances ``rank_tol`` (of the pulse's peak, per unit step, for
    the steps' filters and for the jitter's)."""
    hpre, hpost = min(head[0], jpre), min(head[1], jpost)
    lags = np.arange(-jpre, jpost + 1)
    tail = (lags < -hpre) | (lags > hpost)
    s_min = int(shifts[0])
    x0 = pos_base + lags[None, :] * spu + shifts[:, None]
    i0 = np.floor(x0).astype(np.int64)
    f0 = x0 - i0
    G = np.where(tail, (1 - f0) * S[i0] + f0 * S[i0 + 1], 0.0)
    peak = float(np.max(np.abs(S[spu:] - S[:-spu])))
    C, V, r, err_d = _lowrank(G, rank_tol[0] * peak)
    if e_max > 0:
        slope = _slope(S, x0)
        Gp = np.where(tail, slope, 0.0)
        Cp, Vp, rp, err_u = _lowrank(Gp, rank_tol[1] * peak)
        res = np.where(tail, _linearisation(S, x0, slope, e_max), 0.0)
        lin, lin2 = float(np.max(res.sum(axis=1))), float(np.max((res * res).sum(axis=1)))
    else:
        Cp, Vp, rp, err_u, lin, lin2 = np.zeros((shifts.size, 0)), np.zeros((0, lags.size)), 0, 0.0, 0.0, 0.0
    L = lags.size
    nfft = sfft.next_fast_len(max(8 * L, 8192), real=True)
    if shifts.size <= IDENTITY_MAX:
        # one output per shift: its steps' and its jitter's filters share one inverse FFT
        kd, ku, coef = V, (Vp if rp else np.zeros_like(V)), np.eye(shifts.size)
    else:  # the steps' basis filters, then the jitter's (outputs -(d eps) * Vp)
        kd = np.vstack([V, np.zeros_like(Vp)])
        ku = np.vstack([np.zeros_like(V), Vp])
        coef = np.hstack([C, Cp])
    return TailPlan(hpre, hpost, jpre, jpost, s_min, np.ascontiguousarray(coef.T), kd, ku, max(r, rp),
                    err_d, err_u, lin, lin2, nfft).prepare()


@_helper
def add_tail(y, n_lo, n_hi, tail, shift):
    """``y[n - n_lo] += sum_o tc[o, shift - t_smin] tb[o, n - t_base]``: the tail's share at
    one sampling shift (its outputs ``tb = tail.out`` per UI, their weights ``tc =
    tail.coef`` per shift; ``t_base, t_smin = tail.base, tail.s_min``, :class:`.records.Tail`)."""
    tb, tc, t_base, t_smin = tail.out, tail.coef, tail.base, tail.s_min
    no = tc.shape[0]
    si = shift - t_smin
    for o in range(no):
        w = tc[o, si]
        r = tb[o, n_lo - t_base : n_hi - t_base]
        for i in range(n_hi - n_lo):
            y[i] += w * r[i]


@_helper
def add_tail_cols(cols, n_lo, n_hi, tail, shift0):
    """:func:`add_tail` for the columns ``p`` of ``cols[n - n_lo, p]`` (shift ``shift0 + p``).

    The outputs are added in order to every element (as one row at a time would), a block
    of rows per output: each row's additions are then independent of the previous
    output's, instead of a chain through memory."""
    tb, tc, t_base, t_smin = tail.out, tail.coef, tail.base, tail.s_min
    no = tc.shape[0]
    P = cols.shape[1]
    s0 = shift0 - t_smin
    j0 = n_lo - t_base
    m = n_hi - n_lo
    for b0 in range(0, m, 64):
        nbk = min(64, m - b0)
        for o in range(no):
            w = tc[o, s0 : s0 + P]
            src = tb[o, j0 + b0 : j0 + b0 + nbk]
            blk = cols[b0 : b0 + nbk]
            for i in range(nbk):
                v = src[i]
                row = blk[i]
                for p in range(P):
                    row[p] += w[p] * v
