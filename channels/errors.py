"""Exceptions and warnings of the :mod:`channels` package."""

from __future__ import annotations


class ChannelError(ValueError):
    """A channel could not be built or used as asked.

    Raised at the API boundary with a message naming the bad value (a file, a
    port, a frequency, a length) and what was expected.
    """


class ChannelQualityWarning(UserWarning):
    """S-parameter data failed a quality check (passivity, reciprocity, causality)
    or needed a wide extrapolation; the numbers computed from it deserve caution."""
