"""Exceptions and warnings of the :mod:`channels` package."""

from __future__ import annotations

from _linkmodel.errors import LinkmodelError


class ChannelError(LinkmodelError):
    """A channel could not be built or used as asked (a :class:`LinkmodelError`, so a
    ``ValueError``).

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


def shown_path(path, keep: int | None = 100) -> str:
    """A file name or path as a message may show it: every character that would not print
    as itself (control characters such as newline, escape or backspace, format characters,
    and the surrogates that stand for undecodable bytes) written as a Python escape
    (``\\n``, ``\\x1b``, ``\\udcff``), so that a hostile name cannot break a message's line or
    drive the terminal; a very long one shortened in the middle, with its length.

    >>> shown_path("a\\nb\\x1b[31m.s4p")
    'a\\\\nb\\\\x1b[31m.s4p'
    """
    text = str(path) if not isinstance(path, bytes) else path.decode("utf-8", "backslashreplace")
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if keep is not None and len(text) > keep:
        text = f"{text[:60]}...{text[-30:]} ({len(text)} characters)"
    return text
