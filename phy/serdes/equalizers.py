"""Deprecated spelling of :mod:`phy.serdes.equalisers` (issue 34: one spelling per word).

Importing it warns with :class:`DeprecationWarning` and gives the very objects of
:mod:`phy.serdes.equalisers` (``from phy.serdes.equalizers import Dfe`` is
``phy.serdes.equalisers.Dfe``); it goes in a later release.
"""

from _linkmodel._renamed import warn_renamed

from .equalisers import Ctle, Dfe, RxFfe, TxFfe, __all__, solve_ffe_dfe  # noqa: F401

warn_renamed("phy.serdes.equalizers", "phy.serdes.equalisers")
