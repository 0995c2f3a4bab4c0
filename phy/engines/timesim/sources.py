"""The random streams of a time-domain run, per symbol and in order, so that what happens
at UI ``g`` does not depend on how the run is cut into chunks: the transmitter's data,
sent symbols, noise and edge jitter; each aggressor's levels; the receiver's noise (a FIR
whose state is carried from chunk to chunk). All come from one seed (numpy
``SeedSequence``), spawned in a fixed order."""

from __future__ import annotations

import numpy as np

from ...serdes import Jitter, PreparedLink, Transmitter, signals
from ...serdes import _kernels as SK
from ._samples import fir_valid

__all__ = ["RxNoise", "Stream", "random_symbols", "tx_stream"]


def random_symbols(rng: np.random.Generator, n: int, order: int, out: np.ndarray | None = None) -> np.ndarray:
    """Uniform symbols 0 .. order-1 (a power of two) from the top bits of one 64-bit draw each:
    the stream does not depend on how it is cut into chunks (numpy's small-integer draws
    buffer bits within one call and drop them at its end). Written into ``out`` (int64, of
    size ``n``) when given."""
    raw = rng.bit_generator.random_raw(n)
    dst = raw if out is None else out.view(np.uint64)
    np.right_shift(raw, np.uint64(64 - int(order).bit_length() + 1), out=dst)  # below 2**63: the same as int64
    return dst.view(np.int64)


class _Source:
    """Data symbols in order, from a pattern or a random generator."""

    def __init__(self, tx: Transmitter, rng: np.random.Generator):
        self.tx = tx
        self.rng = rng
        self.pos = 0
        p = tx.pattern
        self.periodic = None
        self.prbs = None
        if p == "prbs13q":
            self.periodic = np.asarray(signals.prbs13q(), dtype=np.int64)
        elif p == "ssprq":
            self.periodic = np.asarray(signals.ssprq(), dtype=np.int64)
        elif p.startswith("prbs"):
            self.prbs = signals.Prbs(int(p[4:]))

    def take(self, out: np.ndarray) -> None:
        """The next ``out.size`` symbols, into ``out`` (int64)."""
        n = out.size
        if self.periodic is not None:
            out[...] = self.periodic[(self.pos + np.arange(n)) % self.periodic.size]
        elif self.prbs is not None:
            bits = self.prbs.bits(n * (2 if self.tx.order == 4 else 1))
            out[...] = signals.gray_pam4(bits) if self.tx.order == 4 else bits
        else:
            random_symbols(self.rng, n, self.tx.order, out)
        self.pos += n


class Stream:
    """Per-symbol quantities for global UI indices ``[start, end)``, generated in order.

    Each quantity lives in one buffer reused from window to window: the kept part moves to
    its front and the new symbols are written after it (no concatenation per chunk): by
    ``make.fill`` straight into the buffers when the source has it (a dict of the new
    symbols' views), else copied from ``make(n)``."""

    def __init__(self, start: int, make):
        self.start = start
        self.end = start
        self.make = make  # make(n) -> dict of arrays of length n
        self.buf: dict[str, np.ndarray] = {}

    def window(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        if lo < self.start:
            raise AssertionError("stream window moved backwards")
        if self.buf and lo <= self.end and hasattr(self.make, "fill"):
            return self._fill_window(lo, hi)
        new = self.make(hi - self.end) if hi > self.end else {}
        have = self.end - self.start
        skip = min(lo - self.start, have)
        end = max(hi, self.end)
        for k in set(self.buf) | set(new):
            b = self.buf.get(k)
            v = new.get(k)
            if v is not None and lo > self.end:
                v = v[lo - self.end :]
            kept = have - skip if b is not None else 0
            size = kept + (0 if v is None else v.size)
            if b is None or b.size < size:
                nb = np.empty(max(size, 0 if b is None else 2 * b.size), dtype=(v if b is None else b).dtype)
                if kept:
                    nb[:kept] = b[skip:have]
                self.buf[k] = b = nb
            elif kept and skip:
                b[:kept] = b[skip:have].copy()  # overlapping: through a copy
            if v is not None:
                b[kept:size] = v
        self.start, self.end = lo, end
        return {k: b[: hi - lo] for k, b in self.buf.items()}

    def _fill_window(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        """:meth:`window` with the new symbols written by the source into the buffers (the
        same values: the source draws ``hi - end`` symbols in one call either way)."""
        have = self.end - self.start
        skip = lo - self.start
        kept = have - skip
        n_new = max(hi - self.end, 0)
        size = kept + n_new
        for k, b in self.buf.items():
            if b.size < size:
                nb = np.empty(max(size, 2 * b.size), dtype=b.dtype)
                nb[:kept] = b[skip:have]
                self.buf[k] = nb
            elif kept and skip:
                b[:kept] = b[skip:have].copy()  # overlapping: through a copy
        if n_new:
            self.make.fill({k: b[kept:size] for k, b in self.buf.items()})
        self.start, self.end = lo, max(hi, self.end)
        return {k: b[: hi - lo] for k, b in self.buf.items()}


class _TxSymbols:
    """Per-symbol transmitter quantities in order: data, sent symbol (after the precoder),
    noise, and edge (or symbol) jitter in fine samples."""

    def __init__(self, first: int, tx: Transmitter, lk: PreparedLink, jitter: Jitter, r_sym, r_txn, r_jit):
        self.k = first  # global index of the next symbol
        self.prev = 0  # last precoder output
        self.source = _Source(tx, r_sym)
        self.tx, self.lk, self.jitter = tx, lk, jitter
        # Gaussian draws in the kernel (the ziggurat on xoshiro256++), each stream seeded by its own
        # generator: the same seed gives the same run
        self.r_txn, self.r_jit = SK.FastNormal(r_txn), SK.FastNormal(r_jit)
        self.ui, self.dt = 1.0 / lk.analog.baud_hz, lk.analog.dt_s

    def __call__(self, n):
        out = {"data": np.empty(n, dtype=np.int64), "sent": np.empty(n, dtype=np.int64), "txn": np.empty(n),
               "eps": np.empty(n)}
        self.fill(out)
        return out

    def fill(self, out: dict) -> None:
        """The next symbols' quantities, written into the arrays of ``out`` (all of one size)."""
        data, sent, txn, eps = out["data"], out["sent"], out["txn"], out["eps"]
        n = data.size
        self.source.take(data)
        if self.tx.precoder:
            sent[...] = signals.precode(data, self.prev)
            self.prev = int(sent[-1])
        else:
            sent[...] = data
        if self.lk.tx_noise_rms:
            self.r_txn.fill(txn, self.lk.tx_noise_rms)
        else:
            txn[...] = 0.0
        if self.jitter.has_tx:
            np.divide(self.jitter.tx_edges(self.k, n, self.ui, self.r_jit), self.dt, out=eps)
        else:
            eps[...] = 0.0
        self.k += n


def tx_stream(first: int, tx: Transmitter, lk: PreparedLink, jitter: Jitter, r_sym, r_txn, r_jit) -> Stream:
    """The transmitter's stream, starting at global UI ``first``."""
    return Stream(first, _TxSymbols(first, tx, lk, jitter, r_sym, r_txn, r_jit))


def aggressor_stream(first: int, rng: np.random.Generator, tx: Transmitter) -> Stream:
    """An aggressor's levels (independent random data at the victim's swing)."""
    return Stream(first, lambda n: {"lv": tx.levels[random_symbols(rng, n, tx.order)] * tx.swing_v})


class RxNoise:
    """The receiver's noise at the ADC, chunk after chunk: unit white noise through the
    front end's shaping FIR (its last samples carried over), plus white noise."""

    def __init__(self, lk: PreparedLink, rng: np.random.Generator):
        self.g = lk.rx_noise_fir
        self.white = lk.white_noise_rms_v
        self.rng = SK.FastNormal(rng)
        self.tail = np.zeros(self.g.size - 1)
        self._wn, self._rxn = np.empty(0), np.empty(0)  # buffers reused from chunk to chunk

    def take(self, n: int) -> np.ndarray:
        """The next ``n`` samples of the noise (an array of the source's, valid until the next call)."""
        if self.g.size > 1:
            nt = self.tail.size
            if self._wn.size < nt + n:
                self._wn, self._rxn = np.empty(nt + n), np.empty(n)
            wn, rxn = self._wn[: nt + n], self._rxn[:n]
            wn[:nt] = self.tail
            self.rng.fill(wn[nt:], 1.0)
            fir_valid(wn, self.g, rxn)
            self.tail = wn[wn.size - nt :].copy()
        else:
            rxn = np.zeros(n)
        if self.white:
            extra = np.empty(n)
            self.rng.fill(extra, self.white)
            rxn += extra
        return rxn
