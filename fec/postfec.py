"""Post-FEC figures of independent (random) errors: symbol error ratio, CER, SER and BER
after the code, miscorrection, frame loss, and the input BER a target needs.

Random errors (IEEE 802.3 practice; formulas in ../shared/REFERENCES.md)
-----------------------------------------------------------------------
With independent bit errors of probability ``p_b`` and ``m``-bit symbols,
``p_s = 1 - (1 - p_b)^m``; a codeword fails when more than ``t`` of its ``n``
symbols are wrong: ``CER = sum_(i>t) C(n,i) p_s^i (1-p_s)^(n-i)``; the symbols
delivered wrong ``SER_out = sum_(i>t) (i/n) C(n,i) ...``; ``BER_out = SER_out p_b / p_s``.

"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from . import _validate as check
from .errors import FecError
from .rs import RSCode

__all__ = ["PostFec", "check_code", "frame_loss_ratio", "miscorrection_probability", "random_errors",
           "required_ber", "symbol_error_ratio"]


def check_code(code) -> RSCode:
    """``code`` itself if it is an :class:`~fec.rs.RSCode`, else :class:`FecError`."""
    if not isinstance(code, RSCode):
        raise FecError(f"expected an RSCode, got {type(code).__name__}")
    return code


def symbol_error_ratio(ber: float, m: int = 10) -> float:
    """Probability that an ``m``-bit symbol holds at least one of independent bit errors."""
    ber = check.probability(ber, "ber")
    return float(-np.expm1(m * np.log1p(-ber)))


@dataclass(frozen=True)
class PostFec:
    """Error ratios after the code (all probabilities, per codeword, symbol or bit).

    Attributes
    ----------
    code : str
    pre_fec_ber : float
        Bit error ratio into the decoder.
    pre_fec_ser : float
        FEC symbol error ratio into the decoder.
    cer : float
        Codeword error ratio: codewords with more than t symbol errors.
    ser_out, ber_out : float
        Symbol and bit error ratios delivered.
    miscorrection : float
        Probability that a codeword with more than t errors is miscorrected (not flagged).
    frame_loss_ratio : float or None
        When a frame size was given.
    model : str
        ``"random"`` or the burst model's name.
    bounded : float
        Bursts per codeword block whose damage is bounded from their span rather than
        counted pattern by pattern (:attr:`BurstModel.truncated` times the bursts per
        block): CER is overstated by at most this much, never understated.
    """

    code: str
    pre_fec_ber: float
    pre_fec_ser: float
    cer: float
    ser_out: float
    ber_out: float
    miscorrection: float
    frame_loss_ratio: float | None
    model: str
    bounded: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def miscorrection_probability(code: RSCode) -> float:
    """Probability that a word with more than t errors decodes to a wrong codeword.

    ``sum_(i<=t) C(n,i) (q-1)^i / q^(2t)`` (the fraction of the space covered by the
    decoding spheres; REFERENCES.md), with n the (shortened) length.
    """
    return _miscorrection(check_code(code))


@lru_cache(maxsize=64)
def _miscorrection(code: RSCode) -> float:
    """:func:`miscorrection_probability`, remembered per code (every FEC analysis reports it)."""
    q = code.gf.q
    i = np.arange(code.t + 1)
    log_terms = special.gammaln(code.n + 1) - special.gammaln(i + 1) - special.gammaln(code.n - i + 1)
    log_terms = log_terms + i * np.log(q - 1) - 2 * code.t * np.log(q)
    return float(np.exp(special.logsumexp(log_terms)))


def frame_loss_ratio(code: RSCode, cer: float, frame_bits: float) -> float:
    """Probability that a frame of ``frame_bits`` payload bits meets a failed codeword.

    A frame at a random offset overlaps on average ``1 + (L - 1) / K`` codewords of
    ``K`` message bits: ``FLR = 1 - (1 - CER)^(1 + (L - 1)/K)``.
    """
    code = check_code(code)
    cer = check.probability(cer, "cer", hi=1.0)
    try:
        L = float(frame_bits)
    except (TypeError, ValueError):
        raise FecError(f"frame_bits must be a number, got {frame_bits!r}") from None
    if not np.isfinite(L) or L < 1:
        raise FecError(f"frame_bits must be >= 1, got {frame_bits!r}")
    spans = 1 + (L - 1) / code.message_bits
    return float(-np.expm1(spans * np.log1p(-cer))) if cer < 1 else 1.0


def random_errors(code: RSCode, ber: float, frame_bits: float | None = None) -> PostFec:
    """Post-FEC ratios for independent bit errors at ``ber`` (see the module docstring).

    Parameters
    ----------
    code : RSCode
        The Reed-Solomon code.
    ber : float
        Pre-FEC bit error ratio, in [0, 1].
    frame_bits : float, optional
        Payload bits per frame for the frame loss ratio (None: not computed).

    Returns
    -------
    PostFec
        Symbol error ratio in, codeword error ratio, post-FEC symbol and bit error ratios,
        miscorrection probability and frame loss ratio.
    """
    code = check_code(code)
    ber = check.probability(ber, "ber")
    ps = symbol_error_ratio(ber, code.m)
    n, t = code.n, code.t
    cer = float(stats.binom.sf(t, n, ps))
    i = np.arange(t + 1, n + 1)
    ser_out = float(np.sum(i / n * stats.binom.pmf(i, n, ps)))
    ber_out = ser_out * ber / ps if ps > 0 else 0.0
    flr = frame_loss_ratio(code, cer, frame_bits) if frame_bits is not None else None
    return PostFec(code.name, ber, ps, cer, ser_out, ber_out, miscorrection_probability(code), flr, "random")


def required_ber(code: RSCode, target: float, metric: str = "cer") -> float:
    """Largest pre-FEC BER (independent errors) meeting ``target`` for ``metric``
    (``"cer"`` or ``"ber_out"``).

    Parameters
    ----------
    code : RSCode
        The Reed-Solomon code.
    target : float
        The ratio to meet, in (0, 1].
    metric : str, optional
        ``"cer"`` (codeword error ratio, default) or ``"ber_out"`` (post-FEC BER).

    Returns
    -------
    float
        The pre-FEC BER, searched between 1e-12 and 0.5 (0.5 when even that meets it).

    Raises
    ------
    FecError
        When the target is not met even at BER 1e-12, or on a bad ``metric``.
    """
    code = check_code(code)
    target = check.probability(target, "target", hi=1.0)
    if metric not in ("cer", "ber_out"):
        raise FecError(f"metric must be 'cer' or 'ber_out', got {metric!r}")
    if target <= 0:
        raise FecError("target must be > 0")

    def f(logb):
        return np.log(getattr(random_errors(code, float(np.exp(logb))), metric) + 1e-320) - np.log(target)

    lo, hi = np.log(1e-12), np.log(0.5)
    if f(hi) < 0:
        return 0.5
    if f(lo) > 0:
        raise FecError(f"target {target:g} is below what {code.name} reaches even at BER 1e-12")
    return float(np.exp(optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-10)))
