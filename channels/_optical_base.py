"""The pieces of an optical path that the laser-feedback model (:mod:`channels.feedback`)
needs without the path itself: dB conversions and the connector. :mod:`channels.optical`
re-exports them (``channels.optical.OpticalConnector``); keeping them here lets
:mod:`channels.optical` use :mod:`channels.feedback` without an import cycle."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import _validate as check

__all__ = ["OpticalConnector", "db_to_lin", "dbm_to_w"]


def db_to_lin(db: float) -> float:
    """A power ratio in dB as a linear ratio."""
    return 10.0 ** (db / 10.0)


def dbm_to_w(dbm: float) -> float:
    """A power in dBm in W."""
    return 1e-3 * 10.0 ** (dbm / 10.0)


@dataclass(frozen=True)
class OpticalConnector:
    """A mated connector or splice: insertion loss and reflectance (both dB; reflectance
    negative, e.g. -35 dB for a PC connector at 802.3's discrete-reflectance limit,
    about -55 dB for an angled one)."""

    insertion_loss_db: float = 0.5
    reflectance_db: float = -35.0
    name: str = "connector"

    def __post_init__(self):
        check.number(self.insertion_loss_db, "OpticalConnector.insertion_loss_db", nonneg=True)
        check.number(self.reflectance_db, "OpticalConnector.reflectance_db", hi=0.0)

    def to_dict(self) -> dict:
        return asdict(self)
