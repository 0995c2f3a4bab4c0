"""The argument checks every linkmodel package shares: one place, one wording.

Each check raises ``error``, the calling package's own member of the family
(:class:`channels.ChannelError`, :class:`fec.FecError`, :class:`phy.ConfigError`), with a
message naming the value and the rule it broke. No default: each package's ``_validate``
binds its error (``functools.partial``), so a check cannot raise another package's type.
"""

from __future__ import annotations

import numpy as np


def number(value, name: str, *, positive: bool = False, nonneg: bool = False, lo=None, hi=None,
           error: type[ValueError]) -> float:
    """``value`` as a finite float, or ``error`` naming ``name`` and the rule broken."""
    if isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise error(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v):
        raise error(f"{name} must be finite, got {value!r}")
    if positive and v <= 0:
        raise error(f"{name} must be > 0, got {value!r}")
    if nonneg and v < 0:
        raise error(f"{name} must be >= 0, got {value!r}")
    if lo is not None and v < lo:
        raise error(f"{name} must be >= {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise error(f"{name} must be <= {hi}, got {value!r}")
    return v


def integer(value, name: str, lo: int | None = None, hi: int | None = None,
            *, error: type[ValueError]) -> int:
    """``value`` as an int (not a bool or a float) within ``[lo, hi]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise error(f"{name} must be an integer, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise error(f"{name} must be an integer {span}, got {value!r}")
    return int(value)


def seed(value, name: str = "seed", *, error: type[ValueError]) -> int | None:
    """A random seed: None (fresh entropy) or an integer >= 0 (numpy's ``SeedSequence``)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise error(f"{name} must be a whole number >= 0 or None, got {value!r}")
    return int(value)


def finite_vector(values, name: str, allow_scalar: bool = False, *,
                  error: type[ValueError]) -> np.ndarray:
    """``values`` as a non-empty 1-D array of finite floats."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise error(f"{name} must hold numbers, got {values!r}") from None
    if v.ndim == 0 and allow_scalar:
        v = v.reshape(1)
    if v.ndim != 1 or v.size == 0:
        raise error(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    if not np.all(np.isfinite(v)):
        raise error(f"{name} holds NaN or infinite values: {values!r}")
    return v
