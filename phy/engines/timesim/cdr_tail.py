"""The far cursors' tail for a clock recovery, one filter per sampling shift the loop reads,
made when it first reads it (issue 35).

A clock recovery may sample anywhere within ``Cdr.phase_limit_ui`` of its start: with the
tail's plan of :func:`.tail.plan_tail` over that whole range (65 shifts at 32 samples per
UI) the low-rank basis holds 14 to 20 filters for the steps and as many for the jitter,
and their inverse FFTs per chunk cost 4 to 5 times the rest of the run. A loop that holds
its lock reads only a few shifts: the phase it sits at, its neighbours when the sampling
clock jitters, the bang-bang detector's edge sample half a UI earlier. :class:`LazyTail`
makes each shift's own filter (the plan's row for that shift, no decomposition: exact to
the FFT's rounding, as a fixed phase's tail is) when the loop first asks for it in a chunk.
:func:`run_chunk` calls the kernel, which stops at the first block whose shifts are not
made yet (:func:`phy.engines.timesim._kernels.run_chunk` returns the UIs it did); the
missing filters' outputs are added and the kernel goes on from that block, with its state
as it left it. The chunk's blocks keep their places, so the run is the one the kernel
would make with every shift at hand.
"""

from __future__ import annotations

import numpy as np
import scipy.fft as sfft

from . import _kernels as K
from .tail import TailPlan, _linearisation, _slope

__all__ = ["LazyTail", "lazy_tail", "run_chunk"]


class LazyTail(TailPlan):
    """A :class:`.tail.TailPlan` whose outputs are made per sampling shift on demand, each
    from its own filter (the rows of :func:`.tail.plan_tail`'s matrices, made when first
    read); ``coef`` (per chunk) maps each made shift to its output row (weight 1) and holds
    NaN for the shifts not made, which the kernel reads as "stop here". ``kd``, ``ku`` are
    placeholders (``ku`` nonzero when the edges jitter). The jitter's first-order error
    (``lin``, ``lin2``) is the worst over the shifts made."""

    def setup(self, S, pos_base, spu, lags, tail, e_max, offsets) -> LazyTail:
        self._S, self._pos, self._spu, self._lags, self._tail, self._emax = S, pos_base, spu, lags, tail, e_max
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.active = set(int(o) for o in self.offsets)  # the start phase's shifts
        self.most = 1
        self._filters = {}
        self.coef = np.full((1, self.coef.shape[1]), np.nan)
        self._ku_any = e_max > 0
        return self

    def prepare(self) -> LazyTail:
        return self

    @property
    def n_out(self) -> int:
        return 1  # the chunk's length is the fixed phase's (a locked loop reads a few shifts)

    def _filter(self, s: int) -> tuple:
        """Shift ``s``'s filters' spectra, as :func:`.tail.plan_tail` and
        :meth:`TailPlan.prepare` make an identity plan's (bit for bit)."""
        if s not in self._filters:
            S, x0 = self._S, self._pos + self._lags[None, :] * self._spu + np.array([s])[:, None]
            i0 = np.floor(x0).astype(np.int64)
            f0 = x0 - i0
            kd = np.where(self._tail, (1 - f0) * S[i0] + f0 * S[i0 + 1], 0.0)
            ku_hat = None
            if self._emax > 0:
                slope = _slope(S, x0)
                ku = np.where(self._tail, slope, 0.0)
                res = np.where(self._tail, _linearisation(S, x0, slope, self._emax), 0.0)
                self.lin = max(self.lin, float(res.sum()))
                self.lin2 = max(self.lin2, float((res * res).sum()))
                if np.any(ku):
                    ku_hat = sfft.rfft(ku, self.nfft, axis=1)[0]
            self._filters[s] = (sfft.rfft(kd, self.nfft, axis=1)[0], ku_hat)
        return self._filters[s]

    def _row(self, s: int, out: np.ndarray, b0: int = 0) -> None:
        """The tail's outputs at shift ``s`` into ``out``, from the FFT block ``b0`` on (NaN
        before it: the kernel has passed those UIs); as :meth:`TailPlan.outputs` makes an
        identity plan's row, the same arithmetic bit for bit."""
        kd_hat, ku_hat = self._filter(s)
        z = np.multiply(self._D[b0:], kd_hat, out=self._z[b0:])  # in place: the same values as D * kd_hat
        if self._U is not None and ku_hat is not None:
            z -= np.multiply(self._U[b0:], ku_hat, out=self._t[b0:])
        c0 = b0 * self._step
        out[:c0] = np.nan
        out[c0:] = sfft.irfft(z, self.nfft, axis=1)[:, self._lags.size - 1 :].reshape(-1)[: out.size - c0]

    def outputs(self, d: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """A new chunk: the steps' (and ``d eps``'s) spectra, and the outputs of the shifts
        the loop read when the last chunk ended."""
        L = self._lags.size
        self._step = step = self.nfft - L + 1
        n_valid = d.size - L + 1
        nb = -(-n_valid // step)
        self._D = self._spectra(d, nb, step, "pad_d")
        self._U = self._spectra(u, nb, step, "pad_u") if (u is not None and self._ku_any) else None
        if getattr(self, "_z", None) is None or self._z.shape != self._D.shape:  # the products' room
            self._z, self._t = np.empty_like(self._D), np.empty_like(self._D)
        self._shifts = []
        self._store = np.empty((max(4, len(self.active)), n_valid))
        return self.add(sorted(self.active))

    def add(self, shifts, col: int = 0) -> np.ndarray:
        """Make the outputs of ``shifts`` (those not made yet in this chunk) for the
        chunk's columns from ``col`` on; returns the chunk's outputs (a C-contiguous view,
        row ``k`` the ``k``-th shift made), and ``coef`` maps every made shift to its row."""
        new = [int(s) for s in shifts if int(s) not in self._shifts]
        if not new:
            return self._store[: len(self._shifts)]
        k = len(self._shifts)
        if k + len(new) > self._store.shape[0]:  # room for twice as many
            grown = np.empty((2 * (k + len(new)), self._store.shape[1]))
            grown[:k] = self._store[:k]
            self._store = grown
        for i, s in enumerate(new):
            self._row(s, self._store[k + i], max(col, 0) // self._step)
        self._shifts += new
        self.most = max(self.most, len(self._shifts))
        cols = [s - self.s_min for s in self._shifts]
        coef = np.full((len(self._shifts), self.coef.shape[1]), np.nan)
        coef[:, cols] = 0.0
        coef[np.arange(len(cols)), cols] = 1.0
        self.coef = coef
        return self._store[: len(self._shifts)]

    def needed(self, phase: float) -> list:
        """The shifts the kernel reads at the CDR phase ``phase`` (fine samples)."""
        return [int(np.floor(phase + 0.5)) + int(o) for o in self.offsets]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "filters": self.most, "rank": self.most, "per_shift": True}


def lazy_tail(S: np.ndarray, pos_base: float, spu: int, jpre: int, jpost: int, head: tuple[int, int],
              shifts: np.ndarray, e_max: float, offsets) -> LazyTail:
    """The tail of :func:`.tail.plan_tail` (same arguments, no tolerance: every shift's
    filter is kept whole) for a clock recovery reading ``offsets`` around its phase."""
    hpre, hpost = min(head[0], jpre), min(head[1], jpost)
    lags = np.arange(-jpre, jpost + 1)
    tail = (lags < -hpre) | (lags > hpost)
    nfft = sfft.next_fast_len(max(8 * lags.size, 8192), real=True)
    ku = np.ones((1, lags.size)) if e_max > 0 else np.zeros((1, lags.size))
    plan = LazyTail(hpre, hpost, jpre, jpost, int(shifts[0]), np.zeros((1, shifts.size)), np.zeros((1, lags.size)),
                    ku, 0, 0.0, 0.0, 0.0, 0.0, nfft)
    return plan.setup(S, pos_base, spu, lags, tail, e_max, offsets)


def run_chunk(tp, g0: int, n: int, hist: int, edges, run, src, tail, front) -> None:
    """The kernel over UIs ``g0 .. g0+n-1`` (:func:`phy.engines.timesim._kernels.run_chunk`);
    with a :class:`LazyTail`, again from each block whose shifts were missing, once they
    are made (the UIs before it are done: the local positions move on by as many)."""
    lazy = isinstance(tp, LazyTail)
    if lazy:
        tail = tail._replace(coef=tp.coef)
    done = K.run_chunk(g0, n, hist, edges, run.step, src, tail, front, run.slicer, run.eq, run.clock, run.eye,
                       run.errors, run.state)
    while done < n:  # only a lazy tail stops early
        g0, n, hist = g0 + done, n - done, hist + done
        made = len(tp._shifts)
        # the kernel reads columns from hist - base on (sample n at column n - base)
        tail = tail._replace(out=tp.add(tp.needed(run.state.fstate[K.F_PHASE]), hist - tail.base), coef=tp.coef)
        if len(tp._shifts) == made:  # the kernel and needed() disagree on the shifts a block reads
            raise RuntimeError(f"the simulator's kernel stopped at UI {g0} for a tail shift already made")
        rxj = front.clock_offset[done:] if front.jitter_on else front.clock_offset
        front = front._replace(noise=front.noise[done:], clock_offset=rxj)
        done = K.run_chunk(g0, n, hist, edges, run.step, src, tail, front, run.slicer, run.eq, run.clock, run.eye,
                           run.errors, run.state)
    if lazy:  # the next chunk starts with the shifts this one ended on
        tp.active = set(tp.needed(run.state.fstate[K.F_PHASE]))
