"""The link layer over the PHY: flits protected by a CRC, go-back-N link-level replay and
credit flow control; what each costs in latency (the mean and the distribution) and in
bandwidth.

**Replay.** A flit whose CRC fails is replayed from the sender's replay buffer: the
receiver's NAK crosses the link back, the sender restarts at that flit and resends every
flit after it (go-back-N). On an otherwise idle link each failure delays delivery by one
link round trip, ``replay_s = 2 L + turnaround`` (``L`` the link's one-way latency before
retry: the NAK is a flit too, accumulated and decoded like any other). Flits fail
independently with the flit error ratio ``f`` (from the codeword error ratio with an FEC,
from the DFE bursts that overlap a flit without one), so the failures before ``F`` flits
are through are negative binomial, ``P(K = k) = C(F + k - 1, k) (1 - f)^F f^k``, and the
added delay is ``K replay_s``: its mean ``F f / (1 - f) replay_s`` and its quantiles are
exact (:func:`replay_quantiles`). :func:`simulate_replay` plays the protocol itself
against a Poisson process of error bursts on the line, an independent check.

**Bandwidth.** On a busy link a failure also wastes the flits in flight,
``ceil(rtt / t_flit) + 1``, so the efficiency is ``1 / (1 + f n_rt)``. A CRC of ``c`` bits
lets a bad flit through with probability ``2^-c``.

**Credits.** The sender may only send into buffer the receiver has granted; a credit
returns one link round trip after its flit left, so a receive buffer smaller than
``payload rate x (rtt + t_flit)`` (Little's law) caps the link at ``buffer / (rtt +
t_flit)``. Without a buffer size the buffer is taken to be sized to the loop, and the
report gives the bytes that takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

import fec

from .._validate import integer, number, seed
from ..errors import ConfigError
from ._kernels import go_back_n_bursts, go_back_n_iid
from .spec import LinkSpec

__all__ = ["LinkLayerTerms", "replay_quantiles", "simulate_replay"]

#: The most steps (flit transmissions and bursts drawn, expected) :func:`simulate_replay`
#: plays: a few seconds in its kernels.
MAX_REPLAY_STEPS = 2e9


def _check_work(steps: float, why: str) -> None:
    if not steps <= MAX_REPLAY_STEPS:
        raise ConfigError(f"the replay Monte Carlo would play about {steps:.3g} transmissions with {why}, beyond "
                          f"its {MAX_REPLAY_STEPS:.0e}: fewer messages or flits, or a lower error ratio")

QUANTILES = {"p50": 0.5, "p99": 0.99, "p99.99": 0.9999}


@dataclass(frozen=True)
class LinkLayerTerms:
    """The link layer of one link (s, B, per direction).

    Attributes
    ----------
    flit_error_ratio : float
        Probability that one transmission of a flit fails its CRC.
    efficiency : float
        Payload fraction left after replays and credit stalls on a busy link.
    mean_added_s : float
        Mean replay delay of one flit on an idle link.
    undetected : float
        Fraction of bad flits the CRC lets through.
    replay_s : float
        Delay one failure adds (the link round trip).
    flit_s : float
        One flit's time at the payload rate.
    credit_loop_s : float
        From a flit leaving to its credit returning.
    credit_bytes_needed : float
        Receive buffer that keeps the link busy over the credit loop.
    credit_efficiency : float
        ``min(1, buffer / needed)``; 1 when no buffer size is given.
    """

    flit_error_ratio: float
    efficiency: float
    mean_added_s: float
    undetected: float
    replay_s: float
    flit_s: float
    credit_loop_s: float
    credit_bytes_needed: float
    credit_efficiency: float

    def quantiles_s(self, flits: int = 1) -> dict:
        """Replay delay added to a transfer of ``flits`` flits, by quantile name."""
        v = replay_quantiles(self.flit_error_ratio, self.replay_s, flits, list(QUANTILES.values()))
        return dict(zip(QUANTILES, v.tolist()))


def flit_bits(spec: LinkSpec) -> int:
    """The flit the link layer checks and replays (bits)."""
    return 8 * (spec.framing.flit_bytes or spec.retry.flit_bytes)


def flit_accumulation_s(spec: LinkSpec, fec_accumulation_s: float | None) -> float:
    """What the receiver waits for a whole flit beyond the FEC's own accumulation: the flit
    at the line rate without an FEC; with one, the codewords a flit spans beyond the first
    (a flit inside one codeword's payload costs nothing more)."""
    fb = flit_bits(spec)
    if spec.fec is None or fec_accumulation_s is None:
        return fb / (spec.lanes * spec.lane_rate_bps)
    per_flit = math.ceil(fb / spec.fec.message_bits)
    return (per_flit - 1) * fec_accumulation_s


def link_layer_terms(spec: LinkSpec, der: float, cer, model, one_way_s: float, payload_bps: float
                     ) -> LinkLayerTerms:
    """The link layer's terms for a link of one-way latency ``one_way_s`` (before retry)."""
    r = spec.retry
    fb = flit_bits(spec)
    if spec.fec is not None:
        fer = fec.analysis.frame_loss_ratio(spec.fec, cer, fb) if cer else 0.0
    elif model is None:
        fer = 0.0
    else:
        rate = der / model.mean_errors  # bursts per UI
        flit_ui = fb / spec.bits_per_symbol / spec.lanes
        fer = float(-np.expm1(-rate * (flit_ui + model.mean_span - 1)))
    t_flit = fb / payload_bps
    rtt = 2 * one_way_s + r.turnaround_s
    n_rt = math.ceil(rtt / t_flit) + 1
    eff = 1.0 / (1.0 + fer * n_rt) if fer < 1 else 0.0
    added = fer / (1 - fer) * rtt if fer < 1 else float("inf")
    loop = rtt + t_flit
    need = payload_bps / 8 * loop
    c_eff = 1.0 if r.credit_buffer_bytes is None else min(1.0, r.credit_buffer_bytes / need)
    return LinkLayerTerms(float(fer), eff * c_eff, added, 2.0 ** -r.crc_bits, rtt, t_flit, loop, need, c_eff)


def replay_quantiles(flit_error_ratio: float, replay_s: float, flits: int = 1, q=(0.5, 0.99, 0.9999)
                     ) -> np.ndarray:
    """Replay delay (s) a transfer of ``flits`` flits sees at each quantile ``q``: ``K
    replay_s`` with ``K`` the failures before ``flits`` successes (negative binomial)."""
    f = number(flit_error_ratio, "flit_error_ratio", nonneg=True)
    if f >= 1:
        raise ConfigError(f"a flit error ratio of {f:g} never delivers: replays do not converge")
    t = number(replay_s, "replay_s", nonneg=True)
    n = integer(flits, "flits", 1, 10**12)
    qs = np.atleast_1d(np.asarray(q, dtype=float))
    if np.any(~np.isfinite(qs)) or np.any((qs < 0) | (qs >= 1)):
        raise ConfigError(f"quantiles must lie in [0, 1), got {q!r}")
    if f == 0:
        return np.zeros(qs.size)
    k = stats.nbinom.ppf(qs, n, 1.0 - f)
    return np.asarray(k, dtype=float) * t


def simulate_replay(n_messages: int, *, flits: int, flit_ui: float, one_way_ui: float, turnaround_ui: float = 0.0,
                    flit_error_ratio: float | None = None, burst_rate: float | None = None, span_pmf=None,
                    seed_=None) -> np.ndarray:
    """Monte Carlo of go-back-N on an idle link: the replay delay (UI) each of
    ``n_messages`` transfers of ``flits`` flits sees.

    The sender starts the transfer's flits back to back, ``flit_ui`` apart; a flit is
    delivered ``one_way_ui`` after its first bit leaves; a failed flit is known then, and
    its NAK reaches the sender ``one_way_ui + turnaround_ui`` later, when the sender aborts
    what it is sending and restarts at the failed flit. Errors come either from
    ``flit_error_ratio`` (each transmission fails independently) or from error bursts on
    the line: bursts start as a Poisson process of ``burst_rate`` per UI, each spanning
    ``L`` UI with probability ``span_pmf[L]``, and a flit fails when a burst overlaps it
    (a burst that straddles two flits hits both). Transfers follow one another on one
    time line with idle gaps longer than any burst. Times are whole UIs (``flit_ui``,
    ``one_way_ui`` and ``turnaround_ui`` are rounded), bursts cover whole UIs from the one
    they start in, so a flit of ``f`` UI fails with probability ``1 - exp(-rate (f +
    E[L] - 1))``.
    """
    n = integer(n_messages, "n_messages", 1, 10**8)
    F = integer(flits, "flits", 1, 10**6)
    f_ui = float(max(1, round(number(flit_ui, "flit_ui", positive=True))))
    L = float(round(number(one_way_ui, "one_way_ui", nonneg=True)))
    turn = float(round(number(turnaround_ui, "turnaround_ui", nonneg=True)))
    if (flit_error_ratio is None) == (burst_rate is None):
        raise ConfigError("give flit_error_ratio (independent flits) or burst_rate with span_pmf (bursts)")
    rng = np.random.default_rng(seed(seed_, "seed"))
    if flit_error_ratio is not None:
        fer = number(flit_error_ratio, "flit_error_ratio", nonneg=True)
        if fer >= 1:
            raise ConfigError(f"a flit error ratio of {fer:g} never delivers")
        _check_work(n * F / (1.0 - fer), f"flit_error_ratio {fer:g}")
        return go_back_n_iid(n, F, L, turn, fer, rng.integers(2**32))
    rate = number(burst_rate, "burst_rate", nonneg=True)
    pmf = np.asarray(span_pmf, dtype=float)
    if pmf.ndim != 1 or pmf.size < 2 or np.any(pmf < 0) or not np.isfinite(pmf).all() or pmf.sum() <= 0:
        raise ConfigError("span_pmf must be a non-negative vector over spans 0, 1, 2, ... UI with some mass")
    cdf = np.cumsum(pmf / pmf.sum())
    mean_span = float(np.sum(np.arange(pmf.size) * pmf) / pmf.sum())
    # each flit is sent exp(rate (f + E[L] - 1)) times on average (see above), each attempt
    # drawing the bursts of its span
    attempts = float(np.exp(min(rate * (f_ui + max(mean_span, 1.0) - 1.0), 700.0)))
    _check_work(n * F * attempts * (1.0 + rate * (f_ui + 2 * L + turn + 2 * pmf.size)), f"burst_rate {rate:g} per UI")
    return go_back_n_bursts(n, F, f_ui, L, turn, rate, cdf, rng.integers(2**32))
