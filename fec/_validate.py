"""Argument checks of the :mod:`fec` package: the checks all linkmodel packages share
(:mod:`_linkmodel._checks`: ``integer``, ``seed``) bound to :class:`fec.FecError`, and fec's
own (a probability, a positive number)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from _linkmodel import _checks

from .errors import FecError

integer = partial(_checks.integer, error=FecError)
seed = partial(_checks.seed, error=FecError)


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
