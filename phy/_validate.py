"""Argument checks of ``phy``: the checks all linkmodel packages share
(:mod:`_linkmodel._checks`), raising :class:`phy.ConfigError`, and those of the engines'
results (an error ratio, a column of an eye). A NaN compares false with everything, so an
unchecked NaN target reads as "nothing meets it" and returns zeros: refused here instead."""

from __future__ import annotations

from functools import partial

import numpy as np

from _linkmodel import _checks as _shared

from .errors import ConfigError

number = partial(_shared.number, error=ConfigError)
integer = partial(_shared.integer, error=ConfigError)
seed = partial(_shared.seed, error=ConfigError)
finite_vector = partial(_shared.finite_vector, error=ConfigError)

__all__ = ["column", "finite_vector", "integer", "number", "probability", "seed"]


def probability(value, name: str, *, zero: bool = False, one: bool = True) -> float:
    """``value`` as a float error ratio in ``(0, 1]`` (``[0, 1]`` with ``zero``; ``one``
    False leaves 1 out), refusing NaN, infinities, non-numbers and values out of range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"{name} must be an error ratio (a number), got {value!r}")
    p = float(value)
    ok = (p >= 0.0 if zero else p > 0.0) and (p <= 1.0 if one else p < 1.0)  # NaN fails both
    if not ok:
        lo, hi = ("[0" if zero else "(0"), ("1]" if one else "1)")
        raise ConfigError(f"{name} must be an error ratio in {lo}, {hi}, got {value!r}")
    return p


def column(value, n: int, name: str = "column") -> int:
    """An index of one of ``n`` time offsets (negative counts from the end, as numpy's)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be an integer index of the eye's {n} time offsets, got {value!r}")
    if not -n <= value < n:
        raise ConfigError(f"{name} must index one of the eye's {n} time offsets, got {value}")
    return int(value) % n
