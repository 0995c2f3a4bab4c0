"""Monte Carlo: real error streams through the real decoder, with confidence intervals.

Streams are generated on the lane (bit errors, or detector errors in bursts mapped
through Gray coding and the optional precoder), cut into FEC symbols with the
interleaving of :mod:`fec.interleave`, and decoded by :meth:`fec.RSCode.decode_errors`
(by linearity the outcome depends on the error pattern only). Work proceeds in chunks
so memory stays bounded. Estimates carry exact (Clopper-Pearson) 95 % intervals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from .analysis import BurstModel
from . import _validate as check
from .errors import FecError
from .interleave import bit_errors_to_patterns, bits_per_ui, ui_errors_to_bit_errors
from .rs import RSCode

__all__ = ["Estimate", "MonteCarloResult", "run_patterns", "random_stream", "burst_stream", "bit_stream"]


@dataclass(frozen=True)
class Estimate:
    """A ratio ``count / trials`` with its exact two-sided 95 % interval."""

    count: int
    trials: int
    value: float
    low: float
    high: float

    @classmethod
    def of(cls, count: int, trials: int, confidence: float = 0.95) -> "Estimate":
        a = 1 - confidence
        lo = 0.0 if count == 0 else float(stats.beta.ppf(a / 2, count, trials - count + 1))
        hi = 1.0 if count == trials else float(stats.beta.ppf(1 - a / 2, count + 1, trials - count))
        return cls(int(count), int(trials), count / trials if trials else 0.0, lo, hi)

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class MonteCarloResult:
    """Counts and estimates from decoding real error patterns.

    ``cer`` counts codewords delivered wrong (failed or miscorrected); ``ser_out`` and
    ``ber_out`` count the symbols and bits left wrong in the message parts.
    """

    code: str
    codewords: int
    pre_fec_ber: Estimate
    pre_fec_ser: Estimate
    cer: Estimate
    failures: int
    miscorrections: int
    ser_out: Estimate
    ber_out: Estimate

    def to_dict(self) -> dict:
        return {k: (v.to_dict() if isinstance(v, Estimate) else v) for k, v in self.__dict__.items()}

    def compare(self, analysis, confidence: float = 0.95) -> dict:
        """Side by side with an analytic :class:`~fec.analysis.PostFec`: for CER, SER and BER
        after the code, the analytic value, the measured one, its interval at
        ``confidence``, and whether the analytic value lies inside."""
        out = {}
        for key in ("cer", "ser_out", "ber_out"):
            est = getattr(self, key)
            ci = Estimate.of(est.count, est.trials, confidence)
            value = float(getattr(analysis, key))
            out[key] = {"analytic": value, "measured": est.value, "low": ci.low, "high": ci.high,
                        "events": est.count, "agrees": ci.contains(value)}
        return out


class _Tally:
    def __init__(self, code: RSCode):
        self.code = code
        self.cw = self.bits_in = self.sym_in = self.bad = self.fail = self.mis = self.rsym = self.rbit = 0

    def add(self, patterns: np.ndarray, bit_errors: int) -> None:
        r = self.code.decode_errors(patterns)
        self.cw += patterns.shape[0]
        self.bits_in += int(bit_errors)
        self.sym_in += int(r.weight.sum())
        self.bad += int(r.uncorrectable.sum())
        self.fail += int(r.failed.sum())
        self.mis += int(r.miscorrected.sum())
        self.rsym += int(r.residual_symbols.sum())
        self.rbit += int(r.residual_bits.sum())

    def result(self) -> MonteCarloResult:
        c = self.code
        return MonteCarloResult(
            c.name, self.cw,
            Estimate.of(self.bits_in, self.cw * c.n * c.m),
            Estimate.of(self.sym_in, self.cw * c.n),
            Estimate.of(self.bad, self.cw),
            self.fail, self.mis,
            Estimate.of(self.rsym, self.cw * c.k),
            Estimate.of(self.rbit, self.cw * c.k * c.m),
        )


def _chunks(code, n_codewords, interleave, chunk):
    """Check the arguments, then yield chunk sizes (whole interleave blocks) summing to n_codewords."""
    if not isinstance(code, RSCode):
        raise FecError(f"expected an RSCode, got {type(code).__name__}")
    n_codewords = check.integer(n_codewords, "n_codewords", 1)
    interleave = check.integer(interleave, "interleave", 1)
    chunk = check.integer(chunk, "chunk", 1)
    if n_codewords % interleave:
        raise FecError(f"n_codewords ({n_codewords}) must be a multiple of interleave ({interleave})")
    step = max(chunk - chunk % interleave, interleave)
    for done in range(0, n_codewords, step):
        yield min(step, n_codewords - done)


def run_patterns(code: RSCode, patterns, bit_errors: int | None = None) -> MonteCarloResult:
    """Decode given error patterns ``(n_codewords, n)``."""
    p = np.asarray(patterns)
    tally = _Tally(code)
    if bit_errors is None:
        bit_errors = int(np.unpackbits(p.astype(">u2").view(np.uint8)).sum()) if p.size else 0
    tally.add(p, bit_errors)
    return tally.result()


def random_stream(code: RSCode, ber: float, n_codewords: int, seed: int = 0, interleave: int = 1,
                  chunk: int = 8192) -> MonteCarloResult:
    """Independent bit errors at ``ber`` on the lane, through the decoder."""
    sizes = list(_chunks(code, n_codewords, interleave, chunk))
    ber = check.probability(ber, "ber")
    rng = np.random.default_rng(check.seed(seed))
    tally = _Tally(code)
    for nc in sizes:
        nbits = nc * code.n * code.m
        k = rng.binomial(nbits, ber)
        idx = np.unique(rng.integers(0, nbits, k))
        tally.add(bit_errors_to_patterns(idx, nc, code, interleave), idx.size)
    return tally.result()


def burst_stream(code: RSCode, model: BurstModel, n_codewords: int, der: float | None = None, seed: int = 0,
                 interleave: int = 1, precoded: bool = False, chunk: int = 8192) -> MonteCarloResult:
    """Bursts from ``model`` starting at Poisson times on the lane, through the decoder.

    ``der`` is the detector (UI) error ratio (default: the model's own start rate).
    Overlapping bursts add their level errors.
    """
    sizes = list(_chunks(code, n_codewords, interleave, chunk))
    if not isinstance(model, BurstModel):
        raise FecError(f"model must be a BurstModel, got {type(model).__name__}")
    if der is None:
        if model.start_rate is None:
            raise FecError("give der: this burst model has no start rate of its own")
        rate = model.start_rate
    else:
        rate = check.probability(der, "der") / model.mean_errors
    bpu = bits_per_ui(model.modulation)
    rng = np.random.default_rng(check.seed(seed))
    lengths = np.array([len(p) for p in model.patterns])
    cum = np.cumsum(model.probabilities)
    tally = _Tally(code)
    for nc in sizes:
        nui = nc * code.n * code.m // bpu
        nb = rng.poisson(rate * nui)
        starts = np.sort(rng.integers(0, nui, nb))
        which = np.minimum(np.searchsorted(cum, rng.random(nb) * cum[-1], side="right"), len(cum) - 1)
        if nb:
            ui = np.concatenate([s + np.arange(lengths[w]) for s, w in zip(starts, which)])
            err = np.concatenate([model.patterns[w] for w in which])
            keep = (err != 0) & (ui < nui)
            ui, err = ui[keep], err[keep]
            uniq, inv = np.unique(ui, return_inverse=True)
            tot = np.bincount(inv, weights=err).astype(np.int64)
            nz = tot != 0
            bits = ui_errors_to_bit_errors(uniq[nz], tot[nz], model.modulation, precoded, rng=rng)
            bits = bits[bits < nc * code.n * code.m]
        else:
            bits = np.zeros(0, dtype=np.int64)
        tally.add(bit_errors_to_patterns(bits, nc, code, interleave), bits.size)
    return tally.result()


def bit_stream(code: RSCode, bit_errors, n_bits: int, interleave: int = 1) -> MonteCarloResult:
    """A lane's own bit errors (indices, or a boolean array of ``n_bits``) through the decoder.

    The stream is cut into whole blocks of ``interleave`` codewords; a trailing partial
    block is dropped. This is the entry point for error streams from the SerDes simulator.
    """
    if not isinstance(code, RSCode):
        raise FecError(f"expected an RSCode, got {type(code).__name__}")
    interleave = check.integer(interleave, "interleave", 1)
    n_bits = check.integer(n_bits, "n_bits", 1)
    b = np.asarray(bit_errors)
    if b.dtype == bool:
        if b.size != n_bits:
            raise FecError(f"a boolean error stream must have n_bits = {n_bits} entries, got {b.size}")
        b = np.flatnonzero(b)
    per_block = interleave * code.n * code.m
    n_cw = (n_bits // per_block) * interleave
    if n_cw == 0:
        raise FecError(f"{n_bits} bits do not fill one block of {interleave} codewords ({per_block} bits)")
    b = b[b < n_cw * code.n * code.m].astype(np.int64)
    tally = _Tally(code)
    tally.add(bit_errors_to_patterns(b, n_cw, code, interleave), b.size)
    return tally.result()
