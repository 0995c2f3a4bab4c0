"""The exception of the :mod:`fec` package."""

from __future__ import annotations

from _linkmodel.errors import LinkmodelError


class FecError(LinkmodelError):
    """An impossible code, symbols out of range, wrong shapes or dtypes, or a BER outside [0, 0.5]
    (a :class:`LinkmodelError`, so a ``ValueError``)."""
