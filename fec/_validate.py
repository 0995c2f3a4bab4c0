"""Argument checks shared by the :mod:`fec` package: one place, one wording."""

from __future__ import annotations

import math

import numpy as np

from .errors import FecError


def probability(x, name: str, hi: float = 0.5) -> float:
    """``x`` as a float in ``[0, hi]`` (a BER lies in [0, 0.5])."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise FecError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(v) or v < 0 or v > hi:
        raise FecError(f"{name} must lie in [0, {hi}], got {x!r}")
    return v


def positive(x, name: str) -> float:
    """``x`` as a finite float > 0."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise FecError(f"{name} must be a number, got {x!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise FecError(f"{name} must be a finite value > 0, got {x!r}")
    return v


def integer(x, name: str, lo: int | None = None) -> int:
    """``x`` as an int (not a bool, not a float), at least ``lo`` when given."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise FecError(f"{name} must be an integer, got {x!r}")
    if lo is not None and x < lo:
        raise FecError(f"{name} must be an integer >= {lo}, got {x!r}")
    return int(x)


def seed(x, name: str = "seed") -> int | None:
    """A random seed: None (fresh entropy) or an integer >= 0 (numpy's ``SeedSequence``)."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < 0:
        raise FecError(f"{name} must be a whole number >= 0 or None, got {x!r}")
    return int(x)
