"""Argument checks shared by :mod:`phy`: one place, one wording."""

from __future__ import annotations

import numpy as np

from .errors import ConfigError


def number(value, name: str, *, positive: bool = False, nonneg: bool = False, lo=None, hi=None) -> float:
    """``value`` as a finite float, or :class:`ConfigError` naming ``name`` and the rule broken."""
    if isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v):
        raise ConfigError(f"{name} must be finite, got {value!r}")
    if positive and v <= 0:
        raise ConfigError(f"{name} must be > 0, got {value!r}")
    if nonneg and v < 0:
        raise ConfigError(f"{name} must be >= 0, got {value!r}")
    if lo is not None and v < lo:
        raise ConfigError(f"{name} must be >= {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ConfigError(f"{name} must be <= {hi}, got {value!r}")
    return v


def integer(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int (not a bool or a float) within ``[lo, hi]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{name} must be an integer {span}, got {value!r}")
    return int(value)


def seed(value, name: str = "seed") -> int | None:
    """A random seed: None (fresh entropy) or an integer >= 0 (numpy's ``SeedSequence``)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ConfigError(f"{name} must be a whole number >= 0 or None, got {value!r}")
    return int(value)


def finite_vector(values, name: str, allow_scalar: bool = False) -> np.ndarray:
    """``values`` as a non-empty 1-D array of finite floats."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must hold numbers, got {values!r}") from None
    if v.ndim == 0 and allow_scalar:
        v = v.reshape(1)
    if v.ndim != 1 or v.size == 0:
        raise ConfigError(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    if not np.all(np.isfinite(v)):
        raise ConfigError(f"{name} holds NaN or infinite values: {values!r}")
    return v
