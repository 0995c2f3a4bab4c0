"""Named built-in channels that need no file.

Each is a cascade of :mod:`channels.media` sections with the physical parameters
listed below, on the builders' default grid (DC to 120 GHz, 10 MHz steps). The
losses quoted are the differential insertion loss ``-20 log10 |Sdd21|`` at the
Nyquist frequencies of 53.125 GBd (26.5625 GHz) and 106.25 GBd (53.125 GHz); the
test suite recomputes them and fails if they drift by more than 0.05 dB.

=====================  ====================================================  =========  ==========
name                   what                                                  IL @26.56  IL @53.125
=====================  ====================================================  =========  ==========
``twinax_1m_26awg``    92 ohm 8 mm connector, 1 m of 26 AWG foam twinax,     5.00 dB    7.74 dB
                       connector: a 200G/lane copper cable (802.3dj class)
``backplane_30db``     5 in Megtron-7-class stripline, via (0.25 mm stub),   30.30 dB   49.56 dB
                       connector, via, 21 in backplane stripline, via,
                       connector, via, 5 in stripline: an 802.3ck-class
                       backplane (about 30 dB at 26.56 GHz)
``chip_to_module``     20 mm package trace, via, 6 in stripline, via,        9.56 dB    15.78 dB
                       95 ohm 5 mm module connector: a host C2M channel
``cpo_short``          6 mm package trace, 85 ohm via, 7 mm 95 ohm           2.30 dB    3.94 dB
                       substrate trace: switch die to co-packaged optics
=====================  ====================================================  =========  ==========

Stripline: 127 um trace, Dk 3.4, Df 0.002, 0.4 um RMS copper, 100 ohm. Package:
25 um trace, Dk 3.8, Df 0.008, 87.5 ohm. Via: 1.5 mm barrel at 80 ohm unless stated.
See :mod:`channels.media` for the models and their calibration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from . import media as m
from .channel import Channel
from .errors import ChannelError

__all__ = ["Entry", "names", "get", "describe", "ENTRIES"]

_INCH = 0.0254


@dataclass(frozen=True)
class Entry:
    """A named channel: how to build it and what it is documented to lose (dB)."""

    name: str
    description: str
    build: Callable[[], Channel] = field(repr=False)
    parameters: dict = field(default_factory=dict)
    loss_db: dict = field(default_factory=dict)  # {nyquist_hz: insertion loss dB}

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
            "documented_loss_db": {f"{k / 1e9:g} GHz": v for k, v in self.loss_db.items()},
        }


def _twinax_1m() -> Channel:
    return m.cascade(m.connector(), m.twinax(1.0, 26), m.connector())


def _backplane() -> Channel:
    def v():
        return m.via(stub_length_m=0.25e-3)

    return m.cascade(
        m.stripline(5 * _INCH, name="daughtercard"), v(), m.connector(), v(),
        m.stripline(21 * _INCH, name="backplane"), v(), m.connector(), v(),
        m.stripline(5 * _INCH, name="daughtercard"),
    )


def _c2m() -> Channel:
    return m.cascade(
        m.package(20e-3), m.via(), m.stripline(6 * _INCH, name="host"), m.via(),
        m.connector(zdiff_ohm=95.0, length_m=5e-3, name="module_connector"),
    )


def _cpo() -> Channel:
    return m.cascade(
        m.package(6e-3), m.via(zdiff_ohm=85.0, length_m=0.5e-3),
        m.package(7e-3, zdiff_ohm=95.0, name="substrate"),
    )


_NYQ = (26.5625e9, 53.125e9)
ENTRIES: dict[str, Entry] = {
    e.name: e
    for e in (
        Entry(
            "twinax_1m_26awg",
            "1 m 26 AWG foam twinax with a 92 ohm connector at each end (200G/lane copper cable)",
            _twinax_1m,
            {"cable_length_m": 1.0, "awg": 26, "dk": 1.5, "df": 3e-4, "connector_zdiff_ohm": 92.0,
             "connector_length_m": 8e-3},
            dict(zip(_NYQ, (5.00, 7.74))),
        ),
        Entry(
            "backplane_30db",
            "802.3ck-class backplane: 2 x 5 in daughtercards, 21 in backplane, 2 connectors, 4 stubbed vias",
            _backplane,
            {"daughtercard_length_m": 5 * _INCH, "backplane_length_m": 21 * _INCH, "via_stub_length_m": 0.25e-3,
             "dk": 3.4, "df": 0.002, "trace_width_m": 127e-6, "roughness_rms_m": 0.4e-6},
            dict(zip(_NYQ, (30.30, 49.56))),
        ),
        Entry(
            "chip_to_module",
            "host chip-to-module channel: 20 mm package trace, 6 in stripline, vias, module connector",
            _c2m,
            {"package_length_m": 20e-3, "host_length_m": 6 * _INCH, "connector_zdiff_ohm": 95.0},
            dict(zip(_NYQ, (9.56, 15.78))),
        ),
        Entry(
            "cpo_short",
            "co-packaged optics: 13 mm of package/substrate trace from switch die to optical engine",
            _cpo,
            {"package_length_m": 6e-3, "substrate_length_m": 7e-3},
            dict(zip(_NYQ, (2.30, 3.94))),
        ),
    )
}


def names() -> list[str]:
    """The built-in channel names."""
    return list(ENTRIES)


def get(name: str) -> Channel:
    """A built-in channel by name (built once, then shared: channels are immutable)."""
    if not isinstance(name, str) or name not in ENTRIES:
        raise ChannelError(f"unknown built-in channel {name!r}: expected one of {names()}")
    return _build(name)


@lru_cache(maxsize=None)
def _build(name: str) -> Channel:
    return ENTRIES[name].build().renamed(name)


def describe(name: str) -> dict:
    """Documented parameters and losses of a built-in channel."""
    if not isinstance(name, str) or name not in ENTRIES:
        raise ChannelError(f"unknown built-in channel {name!r}: expected one of {names()}")
    return ENTRIES[name].to_dict()
