"""The DFE's error chain (:meth:`fec.BurstModel.dfe`): a decision error feeds back the
wrong ISI, so the next decisions err more often; the errors form a Markov chain on the
last ``N`` errors (``3^N`` states), with Gaussian transitions at a detector error ratio
``der0`` or a given transition table (the real distribution at the slicer, conditioned on
the data). The means per burst are exact (one sparse solve); the bursts are enumerated in
Numba with a node budget, and what is not listed keeps its exact spans."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import sparse, stats
from scipy.sparse.linalg import splu

from . import _kernels as _k
from . import _validate as check
from .errors import FecError
from .interleave import bits_per_ui

__all__ = ["MAX_CHAIN_STATES", "dfe_burst_means", "dfe_bursts", "dfe_transitions"]


def dfe_bursts(taps, der0: float, modulation: str, tail: float, max_span: int, max_patterns: int, max_nodes: int,
               transitions=None) -> tuple:
    """The fields of :meth:`fec.BurstModel.dfe` (patterns, probabilities, truncated mass,
    name, start rate, modulation, tail spans, mean errors and span), as that method
    documents them."""
    b = _dfe_taps(taps)
    der0 = check.probability(der0, "der0", hi=0.5)
    if der0 <= 0:
        raise FecError("der0 must be > 0")
    tail = check.probability(tail, "tail", hi=1.0)
    max_span = check.integer(max_span, "max_span", 1)
    max_patterns = check.integer(max_patterns, "max_patterns", 1)
    max_nodes = check.integer(max_nodes, "max_nodes", 1)
    if transitions is None:
        sigma, w = _dfe_sigma(der0, modulation)
        succ, prob, zero = _dfe_tables(tuple(b), sigma, w)
        mean_err, mean_span = _dfe_means(tuple(b), sigma, w)
        conditioned = ""
    else:
        T = _transition_table(transitions, b.size)
        succ, prob, zero = _chain_tables(b.size, T.tobytes(), T.shape[0])
        mean_err, mean_span = _conditioned_means(b.size, T.tobytes(), T.shape[0])
        conditioned = f", conditioned, {T.shape[0]} rows"
    patterns, probs, truncated, spans = _enumerate(succ, prob, zero, b.size, tail, max_span, max_patterns, max_nodes)
    name = f"dfe(taps={list(np.round(b, 4))}, der0={der0:g}{conditioned})"
    return patterns, probs, truncated, name, der0, str(modulation).lower(), spans, mean_err, mean_span


def _enumerate(succ, prob, zero: int, N: int, tail: float, max_span: int, max_patterns: int, max_nodes: int):
    """The chain's bursts: the ``max_patterns`` likeliest listed (patterns and their
    probabilities among the listed), the mass of the others and its spans."""
    S = succ.shape[0]
    n_spans = max(4096, max_span) + 1
    hist = np.zeros(400, dtype=np.int64)

    def walk(cut: float, p_keep: float, keep: int):
        hist[:] = 0
        buf = np.zeros((keep, max_span), dtype=np.int8)
        lens = np.zeros(keep, dtype=np.int64)
        ps = np.zeros(keep)
        spans = np.zeros(n_spans)
        pruned = np.zeros((S, max_span + 2))
        kept, _complete, nodes = _k.dfe_enumerate(succ, prob, zero, N, cut, max_nodes, max_span, p_keep, keep,
                                                  hist, buf, lens, ps, spans, pruned)
        return nodes, kept, buf, lens, ps, spans, pruned

    # first walk: how likely the max_patterns-th likeliest complete burst is. A walk that
    # runs out of nodes has followed one deep corner of the tree: walk again with a
    # coarser cut (1000 times), so the budget is spent on the likeliest bursts
    cut = tail
    while walk(cut, 2.0, 0)[0] >= max_nodes and cut < 1e-3:
        cut = min(1e-3, cut * 1e3)
    cum = np.cumsum(hist)
    if cum[-1] <= max_patterns:
        p_keep = 0.0
    else:
        k = int(np.searchsorted(cum, max_patterns, side="right"))  # bins 0..k-1 fit
        p_keep = 10.0 ** (-k / 10.0)
    _nodes, kept, buf, lens, ps, spans, pruned = walk(cut, p_keep, max_patterns)
    beyond = _k.dfe_tail_spans(succ, prob, zero, N, pruned, spans, 1e-40)
    patterns = tuple(buf[i, : lens[i]].astype(np.int64) for i in range(kept))
    listed = float(ps[:kept].sum())
    truncated = float(spans.sum() + beyond)
    spans = spans[: int(np.flatnonzero(spans)[-1]) + 1 if spans.any() else 1]
    return patterns, (ps[:kept] / listed if listed > 0 else ps[:kept]), truncated, spans


def _dfe_taps(taps) -> np.ndarray:
    try:
        b = np.atleast_1d(np.asarray(taps, dtype=float))
    except (TypeError, ValueError):
        raise FecError(f"taps must be 1 to 6 finite values, got {taps!r}") from None
    if b.ndim != 1 or b.size == 0 or b.size > 6 or not np.all(np.isfinite(b)):
        raise FecError(f"taps must be 1 to 6 finite values, got {taps!r}")
    if np.any(np.abs(b) >= 1):
        raise FecError(f"DFE taps are normalised to the main cursor and must lie in (-1, 1), got {taps!r}")
    return b


def _dfe_sigma(der0: float, modulation: str) -> tuple[float, float]:
    """Noise in half level spacings for an isolated-error ratio ``der0``, and ``(M-1)/M``."""
    M = 4 if bits_per_ui(modulation) == 2 else 2
    w = (M - 1) / M
    return float(1.0 / stats.norm.isf(der0 / (2 * w))), w


@lru_cache(maxsize=512)
def _dfe_tables(taps: tuple, sigma: float, w: float):
    S = 3 ** len(taps)
    succ = np.empty((S, 3), dtype=np.int64)
    prob = np.empty((S, 3))
    _k.dfe_chain(np.array(taps), sigma, w, succ, prob)
    for a in (succ, prob):
        a.flags.writeable = False
    return succ, prob, (S - 1) // 2


@lru_cache(maxsize=512)
def _dfe_means(taps: tuple, sigma: float, w: float) -> tuple[float, float]:
    """Mean errors and span per burst of the Gaussian chain (:func:`_chain_means`)."""
    succ, prob, zero = _dfe_tables(taps, sigma, w)
    return _chain_means(succ, prob, zero, len(taps))


def _chain_means(succ: np.ndarray, prob: np.ndarray, zero: int, n_taps: int) -> tuple[float, float]:
    """Mean errors and span per burst: ``x = (I - Q)^-1 r`` on the chain's transient states
    (``r`` the probability of an error, or 1 for the decisions made); ``Q`` has three
    entries a row, so a sparse LU solves it in milliseconds."""
    S = succ.shape[0]
    keep = np.arange(S) != zero
    pos = np.cumsum(keep) - 1
    rows, cols, vals = np.repeat(np.arange(S), 3), succ.ravel(), prob.ravel()
    inner = keep[rows] & keep[cols]
    Q = sparse.csc_matrix((vals[inner], (pos[rows[inner]], pos[cols[inner]])), shape=(S - 1, S - 1))
    A = (sparse.identity(S - 1, format="csc") - Q).tocsc()
    x = splu(A).solve(np.column_stack([prob[keep, 1] + prob[keep, 2], np.ones(S - 1)]))
    first = (pos[zero + 1], pos[zero - 1])  # the burst's first error, +1 or -1
    errors = 1.0 + 0.5 * float(x[first[0], 0] + x[first[1], 0])
    decisions = 0.5 * float(x[first[0], 1] + x[first[1], 1])  # after the first, closing zeros included
    return errors, 1.0 + decisions - n_taps


#: Most states (rows of a transition table times ``3^N``) a conditioned DFE chain may have.
MAX_CHAIN_STATES = 16_384


def dfe_transitions(taps, der0: float, modulation: str = "pam4") -> np.ndarray:
    """The Gaussian chain's transition table of :meth:`BurstModel.dfe`, shape ``(1, 3^N, 3)``:
    from each state of the last ``N`` errors (base 3, digit ``i`` the error ``i + 1`` UI
    ago plus 1; state ``(3^N - 1) / 2`` is ``N`` right decisions), the probabilities that
    the next decision is right, ``+1`` or ``-1`` level off. A conditioned table (the same
    layout, one row per position in the burst) goes to ``BurstModel.dfe(transitions=)``."""
    b = _dfe_taps(taps)
    der0 = check.probability(der0, "der0", hi=0.5)
    if der0 <= 0:
        raise FecError("der0 must be > 0")
    return _dfe_tables(tuple(b), *_dfe_sigma(der0, modulation))[1][None].copy()


def _transition_table(transitions, n_taps: int) -> np.ndarray:
    """``transitions`` checked: ``(P, 3^N, 3)`` probabilities whose rows sum to 1."""
    S = 3**n_taps
    try:
        T = np.array(transitions, dtype=float)
    except (TypeError, ValueError):
        raise FecError(f"transitions must be an array of probabilities (P, {S}, 3), got {type(transitions).__name__}"
                       ) from None
    if T.ndim == 2:
        T = T[None]
    if T.ndim != 3 or T.shape[0] < 1 or T.shape[1:] != (S, 3):
        raise FecError(f"transitions must have shape (P, {S}, 3) for {n_taps} taps, got {np.shape(transitions)}")
    if T.shape[0] * S > MAX_CHAIN_STATES:
        raise FecError(f"transitions has {T.shape[0]} rows of {S} states: at most {MAX_CHAIN_STATES} states in all")
    if not np.all(np.isfinite(T)) or T.min() < 0 or T.max() > 1 or np.abs(T.sum(axis=2) - 1).max() > 1e-9:
        raise FecError("transitions must hold probabilities in [0, 1] whose rows (right, +1, -1) sum to 1")
    return np.ascontiguousarray(T)


@lru_cache(maxsize=128)
def _chain_tables(n_taps: int, table: bytes, rows: int):
    """The chain on (position in the burst, state of the last ``n_taps`` errors) for a
    transition table of ``rows`` rows (its bytes, for the cache): state ``p 3^N + s``;
    position ``rows - 1`` is kept from then on. The end of a burst, wherever it comes, is
    one state, numbered as the Gaussian chain's (``(3^N - 1) / 2``, unreachable as a state
    of position 0), so the bursts' first errors are its neighbours there too. One row
    gives the Gaussian chain's tables exactly."""
    S = 3**n_taps
    T = np.frombuffer(table, dtype=float).reshape(rows, S, 3)
    zero = (S - 1) // 2
    low = 3 * (np.arange(S) % 3 ** (n_taps - 1))
    base = np.stack([1 + low, 2 + low, low], axis=1).astype(np.int64)
    nxt = np.minimum(np.arange(rows) + 1, rows - 1)
    succ = nxt[:, None, None] * S + base[None]
    succ[:, base == zero] = zero
    succ = succ.reshape(rows * S, 3)
    prob = T.reshape(rows * S, 3).copy()
    for a in (succ, prob):
        a.flags.writeable = False
    return succ, prob, zero


def dfe_burst_means(taps, der0: float, modulation: str = "pam4", transitions=None) -> tuple[float, float]:
    """Mean detector errors and mean span (UI) per burst of DFE error propagation, exactly
    (the Markov chain of :meth:`BurstModel.dfe`, no enumeration): ``der0`` times the first
    is the detector error ratio with propagation. ``transitions``: a conditioned table, as
    for :meth:`BurstModel.dfe` (default: the Gaussian's at ``der0``). Cost: one sparse solve
    of ``3^N - 1`` unknowns (N <= 6 taps), ``P 3^N - 1`` with ``P`` rows of
    ``transitions``."""
    b = _dfe_taps(taps)
    der0 = check.probability(der0, "der0", hi=0.5)
    if der0 <= 0:
        raise FecError("der0 must be > 0")
    if transitions is None:
        return _dfe_means(tuple(b), *_dfe_sigma(der0, modulation))
    T = _transition_table(transitions, b.size)
    return _conditioned_means(b.size, T.tobytes(), T.shape[0])


@lru_cache(maxsize=128)
def _conditioned_means(n_taps: int, table: bytes, rows: int) -> tuple[float, float]:
    return _chain_means(*_chain_tables(n_taps, table, rows), n_taps)
