"""Post-FEC error analysis: random errors, burst errors, miscorrection, frame loss.

Random errors (IEEE 802.3 practice; formulas in ../shared/REFERENCES.md)
-----------------------------------------------------------------------
With independent bit errors of probability ``p_b`` and ``m``-bit symbols,
``p_s = 1 - (1 - p_b)^m``; a codeword fails when more than ``t`` of its ``n``
symbols are wrong: ``CER = sum_(i>t) C(n,i) p_s^i (1-p_s)^(n-i)``; the symbols
delivered wrong ``SER_out = sum_(i>t) (i/n) C(n,i) ...``; ``BER_out = SER_out p_b / p_s``.

Burst errors
------------
A :class:`BurstModel` is a distribution of detector error *patterns* (level errors at
consecutive UIs): geometric (802.3 studies, continuation probability ``a``) or driven
by DFE taps (error propagation: a wrong decision feeds back the wrong ISI). Bursts
start at random UIs as a Poisson process; each pattern, at every alignment against
the FEC symbols and the interleave, puts ``h`` symbol errors into a given codeword.
The codeword's total is compound Poisson (Panjer recursion), whence CER, SER, BER
after the code. Bursts overlapping on one symbol are counted twice (conservative).

The random-error figures live in :mod:`fec.postfec` and are re-exported here, as are the
DFE chain's :func:`dfe_burst_means` and :func:`dfe_transitions` (:mod:`fec.dfe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import _validate as check
from ._burst_kernels import panjer_poisson, pattern_hits
from .dfe import MAX_CHAIN_STATES, dfe_burst_means, dfe_transitions  # noqa: F401 (part of this API)
from .errors import FecError
from .interleave import bits_per_ui
from .postfec import (
    PostFec,
    check_code,
    frame_loss_ratio,
    miscorrection_probability,
    random_errors,
    required_ber,
    symbol_error_ratio,
)
from .rs import RSCode

__all__ = [
    "symbol_error_ratio",
    "PostFec",
    "random_errors",
    "required_ber",
    "miscorrection_probability",
    "frame_loss_ratio",
    "BurstModel",
    "burst_errors",
    "dfe_burst_means",
    "dfe_transitions",
]


# ------------------------------------------------------------------------- bursts
@dataclass(frozen=True, eq=False)
class BurstModel:
    """A distribution of detector error patterns (one per burst).

    Attributes
    ----------
    patterns : tuple of ndarray
        Level errors at consecutive UIs, first and last non-zero.
    probabilities : ndarray
        Probability of each pattern given that the burst is one of ``patterns`` (sums
        to 1).
    truncated : float
        Probability that a burst is none of ``patterns`` (the mass the model does not
        list one by one). :func:`burst_errors` never drops it: where ``tail_spans`` says
        how long those bursts are, each counts as hitting every FEC symbol its span can
        touch; the rest count as bursts no code survives.
    name : str
    start_rate : float or None
        Bursts per UI, when the model knows it (DFE model: the isolated-error ratio).
    modulation : str
    tail_spans : ndarray or None
        ``tail_spans[L]``: probability that a burst is not listed and spans ``L`` UI.
    exact_mean_errors, exact_mean_span : float or None
        Mean errors and span per burst over all bursts, listed or not (the DFE model
        solves its Markov chain for them).
    """

    patterns: tuple
    probabilities: np.ndarray
    truncated: float
    name: str
    start_rate: float | None = None
    modulation: str = "pam4"
    tail_spans: np.ndarray | None = None
    exact_mean_errors: float | None = None
    exact_mean_span: float | None = None

    @property
    def mean_errors(self) -> float:
        """Mean detector errors (UIs in error) per burst."""
        if self.exact_mean_errors is not None:
            return self.exact_mean_errors
        return float(sum(p * np.count_nonzero(x) for x, p in zip(self.patterns, self.probabilities)))

    @property
    def mean_span(self) -> float:
        """Mean span in UI from the first to the last error."""
        if self.exact_mean_span is not None:
            return self.exact_mean_span
        return float(sum(p * len(x) for x, p in zip(self.patterns, self.probabilities)))

    def length_pmf(self, max_len: int = 64) -> np.ndarray:
        """P(span = L) for L = 0 .. max_len, over all bursts (the listed patterns weighted
        by ``1 - truncated``, plus ``tail_spans``)."""
        out = np.zeros(max_len + 1)
        for x, p in zip(self.patterns, self.probabilities):
            if len(x) <= max_len:
                out[len(x)] += p
        out *= 1.0 - self.truncated
        if self.tail_spans is not None:
            k = min(max_len + 1, self.tail_spans.size)
            out[:k] += self.tail_spans[:k]
        return out

    @classmethod
    def geometric(cls, a: float = 0.75, alternating: bool = True, tail: float = 1e-15,
                  modulation: str = "pam4") -> "BurstModel":
        """Bursts of ``L`` consecutive errors with ``P(L) = (1 - a) a^(L-1)`` (802.3 studies use
        ``a = 0.75``); the errors alternate in sign (as a DFE with a positive first tap makes
        them) unless ``alternating=False``."""
        a = check.probability(a, "a", hi=0.999)
        bits_per_ui(modulation)
        lmax = 1 if a == 0 else max(1, int(np.ceil(np.log(tail) / np.log(a))) + 1)
        lengths = np.arange(1, lmax + 1)
        probs = (1 - a) * a ** (lengths - 1)
        pats = tuple(
            (np.where(np.arange(L) % 2 == 0, 1, -1) if alternating else np.ones(L, dtype=np.int64)).astype(np.int64)
            for L in lengths
        )
        total = probs.sum()
        return cls(pats, probs / total, float(1 - total), f"geometric(a={a:g})", None, str(modulation).lower())

    @classmethod
    def dfe(cls, taps, der0: float, modulation: str = "pam4", tail: float = 1e-15, max_span: int = 256,
            max_patterns: int = 4096, max_nodes: int = 1_000_000, transitions=None) -> "BurstModel":
        """Error propagation through a DFE with ``taps`` (normalised to the main cursor).

        A decision error of ``e`` levels makes the DFE subtract the wrong ISI: the next
        samples are offset by ``-2 sum_i b_i e_(t-i)`` half-level-spacings. With Gaussian
        noise set so that an undisturbed decision errs with probability ``der0`` (the
        detector error ratio without propagation, COM's DER0), a decision errs by +1
        level with probability ``(M-1)/M Q((1 - delta)/sigma)`` and by -1 with
        ``(M-1)/M Q((1 + delta)/sigma)``. A burst ends with ``len(taps)`` correct
        decisions in a row: the errors form a Markov chain on the last ``N = len(taps)``
        errors (``3^N`` states).

        Bounded at any ``der0``:

        * the mean errors and span per burst are exact, from the chain's linear equations
          (:func:`dfe_burst_means`);
        * bursts are enumerated exactly (depth first, in Numba) except a branch less likely
          than ``tail``, longer than ``max_span`` or met after ``max_nodes`` expansions (a
          walk that runs out of nodes is repeated with ``tail`` 1,000 times coarser, up to
          1e-3, so that the budget goes to the likeliest bursts);
          the mass of those branches is carried through the chain to the end of each
          burst, so its distribution of spans is exact (:attr:`tail_spans`); mass still in
          flight after 4,096 UI counts as bursts no code survives;
        * the ``max_patterns`` likeliest complete bursts are listed; the others join
          ``tail_spans`` with their exact spans.

        Nothing is dropped: :attr:`truncated` is the probability of the bursts not
        listed, and :func:`burst_errors` bounds their damage from their spans (it reports
        how much mass that bound covered). Cost: two walks of at most ``max_nodes``
        nodes and one of ``4,096 x 3^N`` steps (``4,096 x P x 3^N`` with ``P`` rows of
        ``transitions``).

        ``transitions`` replaces the Gaussian's probabilities by given ones (the real
        distribution at the slicer, conditioned on the data: :func:`phy.engines.stateye.
        dfe_transitions`): an array ``(P, 3^N, 3)`` (or ``(3^N, 3)`` for ``P = 1``), row
        ``p`` the probabilities that the decision ``p + 1`` UI after the burst's first
        error is right, ``+1`` or ``-1`` level off, from each state of the last ``N``
        errors (base 3, digit ``i`` the error ``i + 1`` UI ago plus 1, as
        :func:`dfe_transitions` orders them); the last row holds from then on. Bursts
        start with ``+1`` or ``-1`` equally likely (a symmetric eye), ``der0`` is then
        only their start rate. The chain runs on ``(position, state)``, ``P x 3^N``
        states (at most 16,384), with the same bounds as above; the Gaussian's own table
        (:func:`dfe_transitions`) gives this model bit for bit.
        """
        from .dfe import dfe_bursts

        return cls(*dfe_bursts(taps, der0, modulation, tail, max_span, max_patterns, max_nodes, transitions))


def _hits(pattern: np.ndarray, code: RSCode, interleave: int, precoded: bool, modulation: str):
    """Symbol errors one burst puts into one codeword, over all alignments.

    Returns (h values, weights, bit errors) for every (UI phase, interleave phase),
    read-only: they are cached, as the same patterns recur across error ratios.
    """
    key = np.ascontiguousarray(pattern, dtype=np.int64).tobytes()
    return _hits_cached(key, code.m, int(interleave), bool(precoded), modulation)


@lru_cache(maxsize=1 << 16)
def _hits_cached(key: bytes, m: int, interleave: int, precoded: bool, modulation: str):
    pattern = np.frombuffer(key, dtype=np.int64)
    hs, bs = _hits_of((pattern,), m, interleave, precoded, modulation)
    out = (hs[0], np.full(hs.shape[1], 1.0 / hs.shape[1]), bs[0])
    for a in out:
        a.flags.writeable = False
    return out


def _hits_of(patterns, m: int, interleave: int, precoded: bool, modulation: str):
    """``(hits, bits)``, one row per pattern and a column per (UI phase, interleave phase):
    every UI offset of the burst against the ``m``-bit symbols, the errors' symbols (a
    symbol counted once) that are this codeword's, and their flipped bits
    (:func:`fec._burst_kernels.pattern_hits`)."""
    bpu = bits_per_ui(modulation)
    upsym = m // bpu  # UIs per FEC symbol
    flat = np.concatenate([np.asarray(x, dtype=np.int64) for x in patterns])
    starts = np.concatenate([[0], np.cumsum([len(x) for x in patterns])]).astype(np.int64)
    hs = np.empty((len(patterns), upsym * interleave), dtype=np.int64)
    bs = np.empty(hs.shape)
    pattern_hits(flat, starts, upsym, interleave, precoded, bpu == 2, hs, bs)
    return hs, bs


def burst_errors(
    code: RSCode,
    model: BurstModel,
    der: float | None = None,
    interleave: int = 1,
    precoded: bool = False,
    frame_bits: float | None = None,
) -> PostFec:
    """Post-FEC ratios when detector errors come in bursts drawn from ``model``.

    Parameters
    ----------
    code : RSCode
        The Reed-Solomon code.
    model : BurstModel
        The distribution of detector error patterns.
    der : float, optional
        Detector (UI) error ratio including the bursts; bursts start at rate
        ``der / model.mean_errors`` per UI. Default: the model's own start rate (DFE model).
    interleave : int
        Symbol interleaving depth.
    precoded : bool
        Whether the 1/(1+D) mod 4 precoder is on (PAM4).
    frame_bits : float, optional
        Payload bits per frame for the frame loss ratio (None: not computed).

    Returns
    -------
    PostFec
        The post-FEC ratios, as :func:`random_errors`.
    """
    code = check_code(code)
    if not isinstance(model, BurstModel):
        raise FecError(f"model must be a BurstModel, got {type(model).__name__}")
    interleave = check.integer(interleave, "interleave", 1)
    if der is None:
        if model.start_rate is None:
            raise FecError("give der (the detector error ratio): this burst model has no start rate of its own")
        rate = model.start_rate
        der = rate * model.mean_errors
    else:
        der = check.probability(der, "der")
        rate = der / model.mean_errors
    bpu = bits_per_ui(model.modulation)
    ui_per_block = interleave * code.n * code.m // bpu
    mu = rate * ui_per_block  # bursts per interleaved block
    n, t = code.n, code.t
    sev, bits_total, hits_total = _severity(model, code, interleave, bool(precoded))
    # compound Poisson by Panjer recursion on the non-zero severities
    p0 = sev[0]
    lam = mu * (1 - p0)
    fpos = sev / (1 - p0) if p0 < 1 else np.zeros_like(sev)
    fpos[0] = 0.0
    g = np.zeros(n + 1)
    h = np.arange(n + 1)
    hs = np.flatnonzero(fpos)
    panjer_poisson(float(lam), hs, hs * fpos[hs], g)
    # pre-FEC ratios: bits_total and hits_total are per burst and per codeword (averaged
    # over the interleave phase), so a burst holds interleave * bits_total bit errors
    pre_ber = rate * bits_total * interleave / bpu
    pre_ser = mu * hits_total / n
    # g holds up to n symbol errors; what it misses (more than n hits, or exp(-lam) lost to
    # underflow when bursts are many) are codewords far beyond t: they fail, and their
    # symbols arrive about as wrong as they went in
    beyond = min(1.0, max(0.0, 1.0 - float(g.sum())))
    if beyond < 1e-9 and g[0] > 0:
        beyond = 0.0  # rounding, not mass
    cer = float(min(1.0, g[t + 1 :].sum() + beyond))
    ser_out = float(np.dot(h[t + 1 :] / n, g[t + 1 :])) + beyond * min(1.0, pre_ser)
    bits_per_hit = bits_total / hits_total if hits_total > 0 else 1.0
    ber_out = ser_out * bits_per_hit / code.m
    flr = frame_loss_ratio(code, cer, frame_bits) if frame_bits is not None else None
    return PostFec(code.name, float(pre_ber), float(pre_ser), cer, ser_out, float(ber_out),
                   miscorrection_probability(code), flr, model.name + (" precoded" if precoded else ""),
                   float(mu * model.truncated))


@lru_cache(maxsize=256)
def _severity(model: BurstModel, code: RSCode, interleave: int, precoded: bool):
    """What one burst does to one codeword, whatever the error ratio: the distribution of
    its symbol hits (``sev[h]``, averaged over alignments), and its mean bit errors and
    symbol hits. Remembered per model (by identity), code and configuration, so that a
    search over error ratios walks the patterns once."""
    n = code.n
    hs, w, bs = _listed_hits(model, code.m, int(interleave), bool(precoded))
    sev = np.bincount(np.minimum(hs, n), w, n + 1) if hs.size else np.zeros(n + 1)
    bits_total = float(w @ bs)
    hits_total = float(w @ hs)
    hs, mass = _tail_hits(model, code, interleave, precoded)
    np.add.at(sev, hs, mass)
    hits_total += float(np.dot(hs, mass))
    bits_total += float(np.dot(hs, mass)) * code.m
    sev.flags.writeable = False
    return sev, bits_total, hits_total


@lru_cache(maxsize=64)
def _listed_hits(model: BurstModel, m: int, interleave: int, precoded: bool):
    """The listed patterns' symbol hits and bit errors at every alignment (:func:`_hits_of`),
    flattened pattern by pattern, with each alignment's probability (the pattern's, times
    the listed share, times the alignment's weight): the same for every code of ``m``-bit
    symbols, so the codes of one sweep point walk a model's patterns once."""
    if not model.patterns:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    hs, bs = _hits_of(model.patterns, m, interleave, precoded, model.modulation)
    listed = 1.0 - model.truncated
    w = (listed * np.asarray(model.probabilities, dtype=float))[:, None] * np.full(hs.shape[1], 1.0 / hs.shape[1])
    out = (hs.ravel(), w.ravel(), bs.ravel())
    for a in out:
        a.flags.writeable = False
    return out


def _tail_hits(model: BurstModel, code: RSCode, interleave: int, precoded: bool):
    """(symbol hits, probability) for the bursts a model does not list: a burst spanning
    ``L`` UI (``L + 1`` after the postcoder) touches at most ``floor((L + u - 2) / u) + 1``
    FEC symbols of ``u`` UI, and a codeword holds at most every ``interleave``-th of them
    (rounded up); bursts without a known span count as hitting all ``n`` symbols."""
    n = code.n
    hs, mass = [], []
    known = 0.0
    if model.tail_spans is not None and model.tail_spans.size > 1:
        spans = np.flatnonzero(model.tail_spans[1:] > 0) + 1
        u = code.m // bits_per_ui(model.modulation)
        L = spans + (1 if precoded else 0)
        k = (L + u - 2) // u + 1
        hs.append(np.minimum(n, -(-k // interleave)))
        mass.append(model.tail_spans[spans])
        known = float(mass[0].sum())
    rest = max(0.0, model.truncated - known)
    if rest > 0:
        hs.append(np.array([n]))
        mass.append(np.array([rest]))
    if not hs:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(hs).astype(np.int64), np.concatenate(mass)
