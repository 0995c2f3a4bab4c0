"""The laser against what an optical path reflects back: the return loss it faces, the
feedback into its cavity and the regime that puts it in, its RIN, and the worst connector
reflectance a link's noise budget takes.

* **Return loss** (:func:`return_loss_db`): ``-10 log10 sum_i r_i T_i^2`` over every
  reflector past the laser (connectors, the receiver), ``T_i`` the one-way transmission
  from the laser to it.
* **Feedback** (:func:`feedback_db`): that, less the loss on the way back into the cavity
  (:func:`back_loss_db`: an isolator and the coupling into the laser's mode; by default
  what the laser's RIN specification implies).
* **RIN** (:func:`laser_rin_db_per_hz`): 802.3 specifies a transmitter's ``RIN_xOMA`` with
  the laser facing a return loss of ``x`` dB. The specified RIN holds at that return loss
  and below its feedback; above, it grows as ``10 log10(1 + (f / f_c)^2)``, ``f`` the
  feedback and ``f_c`` the coherence-collapse onset (about -40 dB, Schunk and Petermann,
  IEEE J. Quantum Electron. 1988): flat far below the onset, 3 dB up at it, 20 dB per
  decade of feedback beyond. The onset is published; the growth past it is a stated model
  (no public RIN-against-feedback curve of these lasers was found).
* **Tolerance** (:func:`reflectance_tolerance_db`): the worst connector reflectance at
  which the noise-only error ratio stays under a threshold (multipath interference and RIN
  both grow with it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from . import _validate as check
from .errors import ChannelError
from ._optical_base import OpticalConnector, db_to_lin

if TYPE_CHECKING:  # channels.optical imports this module (OpticalPath.budget's RIN)
    from .optical import OpticalPath, OpticalTransmitter

__all__ = ["back_loss_db", "feedback_db", "feedback_regime", "laser_rin_db_per_hz", "reflectance_tolerance_db",
           "return_loss_db", "with_reflectance"]


def back_loss_db(tx: OpticalTransmitter) -> float:
    """The loss between the fibre and the laser's cavity for returning light (dB):
    ``tx.isolation_db``, or the least that keeps the feedback at the specified return loss
    10 dB below coherence collapse (the weak-feedback regime, where the RIN is what was
    measured); 0 without ``tx.rin_orl_db``."""
    if tx.isolation_db is not None:
        return tx.isolation_db
    if tx.rin_orl_db is None:
        return 0.0
    return max(0.0, -tx.rin_orl_db - (tx.coherence_collapse_db - 10.0))


def return_loss_db(path: OpticalPath) -> float:
    """The optical return loss the laser faces (dB); infinite with no reflector past it."""
    refl = path._reflectors()[1 if path.tx.reflectance_db is not None else 0:]  # not the laser's own facet
    back = sum(r * db_to_lin(-2 * pos) for pos, r in refl)
    return float(-10 * np.log10(back)) if back > 0 else float("inf")


def feedback_db(path: OpticalPath) -> float:
    """Power returned into the laser's cavity over power emitted (dB)."""
    return -return_loss_db(path) - back_loss_db(path.tx)


def feedback_regime(path: OpticalPath) -> str:
    """``"weak"`` (more than 10 dB below coherence collapse: the RIN as specified),
    ``"onset"`` (within 10 dB below it) or ``"coherence collapse"`` (at or above it)."""
    f, c = feedback_db(path), path.tx.coherence_collapse_db
    return "coherence collapse" if f >= c else "onset" if f >= c - 10 else "weak"


def laser_rin_db_per_hz(path: OpticalPath) -> float:
    """The laser's RIN (OMA-referred, dB/Hz) facing ``path``'s reflections (see the module
    docstring); ``tx.rin_db_per_hz`` when ``tx.rin_orl_db`` is None."""
    tx = path.tx
    if tx.rin_orl_db is None:
        return tx.rin_db_per_hz
    fc = db_to_lin(tx.coherence_collapse_db)

    def growth(f_db: float) -> float:
        return float(10 * np.log10(1 + (db_to_lin(f_db) / fc) ** 2))

    spec = -tx.rin_orl_db - back_loss_db(tx)
    return tx.rin_db_per_hz + max(0.0, growth(feedback_db(path)) - growth(spec))


def with_reflectance(path: OpticalPath, reflectance_db: float) -> OpticalPath:
    """``path`` with every connector's reflectance ``reflectance_db``."""
    r = check.number(reflectance_db, "reflectance_db", hi=0.0)
    els = tuple(replace(e, reflectance_db=r) if isinstance(e, OpticalConnector) else e for e in path.elements)
    return replace(path, elements=els)


def reflectance_tolerance_db(path: OpticalPath, max_ber: float, lo_db: float = -80.0, hi_db: float = -6.0) -> float:
    """The worst connector reflectance (dB, the least negative) at which the noise-only
    error ratio of :meth:`OpticalPath.budget` stays at or below ``max_ber`` (e.g. the FEC's
    threshold), every connector at that reflectance. The ratio rises monotonically with
    it, so a bisection (to 0.01 dB) finds it; ISI is not in it (the link's eye adds it).
    ``lo_db`` if even that fails, ``hi_db`` if that still passes."""
    lim = check.number(max_ber, "max_ber", positive=True, hi=0.5)
    if not any(isinstance(e, OpticalConnector) for e in path.elements):
        raise ChannelError("reflectance_tolerance_db needs a path with connectors")

    def ok(r: float) -> bool:
        return with_reflectance(path, r).budget().ber <= lim

    if ok(hi_db):
        return float(hi_db)
    if not ok(lo_db):
        return float(lo_db)
    a, b = lo_db, hi_db
    while b - a > 0.01:
        m = (a + b) / 2
        a, b = (m, b) if ok(m) else (a, m)
    return float(a)
