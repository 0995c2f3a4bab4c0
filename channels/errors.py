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


class TouchstoneWarning(UserWarning):
    """A Touchstone file's header and its data disagree in a way that has two plausible
    readings (a frequency unit or a data format that may be mislabelled, a missing or
    repeated option line). The file was read as its header says; the message names the
    other reading. Distinct from :class:`ChannelQualityWarning`, so that silencing the
    quality checks of known-imperfect measurements does not hide a wrong header."""
