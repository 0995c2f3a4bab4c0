"""The base of linkmodel's error family."""

from __future__ import annotations


class LinkmodelError(ValueError):
    """Bad input to linkmodel: the base of each package's own error.

    :class:`channels.ChannelError`, :class:`fec.FecError` and :class:`phy.ConfigError`
    derive from it, so ``except LinkmodelError`` catches any of them (the command line does
    so in one place). It is a ``ValueError``, as each of them has always been, so an
    ``except ValueError`` written against any package still catches it. Raised at the API
    boundary with a one-line message naming the bad value and what was expected.
    """
