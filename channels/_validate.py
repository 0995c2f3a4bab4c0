"""Argument checks shared by the whole package: one place, one wording."""

from __future__ import annotations

import numpy as np

from .errors import ChannelError


def number(value, name: str, *, positive: bool = False, nonneg: bool = False, lo=None, hi=None) -> float:
    """``value`` as a finite float, or :class:`ChannelError` naming ``name`` and the rule broken."""
    if isinstance(value, (bool, np.bool_)):
        raise ChannelError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ChannelError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v):
        raise ChannelError(f"{name} must be finite, got {value!r}")
    if positive and v <= 0:
        raise ChannelError(f"{name} must be > 0, got {value!r}")
    if nonneg and v < 0:
        raise ChannelError(f"{name} must be >= 0, got {value!r}")
    if lo is not None and v < lo:
        raise ChannelError(f"{name} must be >= {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ChannelError(f"{name} must be <= {hi}, got {value!r}")
    return v


def frequencies(values, name: str = "f_hz", *, increasing: bool = False, min_points: int = 1) -> np.ndarray:
    """``values`` as a 1-D float array of finite, non-negative frequencies (Hz)."""
    try:
        f = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        raise ChannelError(f"{name} must hold numbers (Hz), got {values!r}") from None
    if f.ndim != 1:
        raise ChannelError(f"{name} must be one-dimensional, got shape {f.shape}")
    if f.size < min_points:
        raise ChannelError(f"{name} needs at least {min_points} values, got {f.size}")
    if not np.all(np.isfinite(f)):
        raise ChannelError(f"{name} holds NaN or infinite values")
    if np.any(f < 0):
        raise ChannelError(f"{name} must be non-negative, got {f.min()} Hz")
    if increasing and np.any(np.diff(f) <= 0):
        i = int(np.argmax(np.diff(f) <= 0))
        raise ChannelError(f"{name} must be strictly increasing: {f[i]:.6g} Hz is followed by {f[i + 1]:.6g} Hz")
    return f
