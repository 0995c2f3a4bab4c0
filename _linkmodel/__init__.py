"""The lowest layer of linkmodel: what ``channels``, ``fec`` and ``phy`` all share and none of
them may own, since ``channels`` and ``fec`` import neither each other nor ``phy``.

It holds the base of the error family, :class:`LinkmodelError` (re-exported as
``channels.LinkmodelError``, ``fec.LinkmodelError`` and ``phy.LinkmodelError``; catch it
there), and the argument checks every package binds to its own error (:mod:`._checks`). It
imports only numpy, and nothing of linkmodel imports into it.
"""

from __future__ import annotations

from .errors import LinkmodelError

__all__ = ["LinkmodelError"]
