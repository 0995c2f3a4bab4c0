"""The exception of the :mod:`fec` package."""

from __future__ import annotations


class FecError(ValueError):
    """An impossible code, symbols out of range, wrong shapes or dtypes, or a BER outside [0, 0.5]."""
