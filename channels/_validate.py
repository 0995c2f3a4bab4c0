"""Argument checks of ``channels``: the checks all linkmodel packages share
(:mod:`_linkmodel._checks`) bound to :class:`channels.ChannelError`, and the channel's own
(frequencies, ports, ...)."""

from __future__ import annotations

from functools import partial

import numpy as np

from _linkmodel import _checks

from .errors import ChannelError

number = partial(_checks.number, error=ChannelError)
integer = partial(_checks.integer, error=ChannelError)
seed = partial(_checks.seed, error=ChannelError)
finite_vector = partial(_checks.finite_vector, error=ChannelError)


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
