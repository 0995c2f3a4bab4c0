"""Optical link classes: the optical path, the electrical host channel at each end, the
modules (DSP pluggable, linear pluggable, co-packaged) with their power and latency."""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field

import channels
from channels.optical import OpticalPath

from .._validate import number
from ..errors import ConfigError
from ..serdes import Receiver, RxFfe


@dataclass(frozen=True)
class OpticalClass:
    """An optical link class: the optical path, the electrical host channel at each end,
    and the modules.

    Parameters
    ----------
    kind : {"dsp", "lpo", "lro", "cpo"}
        ``"dsp"``: a pluggable with a DSP retimer at each end: three retimed segments
        (host to module, the optics, module to host), the module's DSP equalising the
        optics. ``"lpo"`` (linear pluggable) and ``"cpo"`` (co-packaged): linear drive, one
        segment from host SerDes to host SerDes through the optics, its noise added at the
        optical receiver. ``"lro"`` (linear receive): the module's DSP retimes what the
        host sends and drives the optics; the far module passes the optical receiver's
        output linearly to its host: two segments.
    path : channels.optical.OpticalPath
    host : channels.Channel
        Electrical channel from the host's package to the module (each end).
    module_power_w, module_rate_bps : float
        A module's power and its rate per direction (full duplex).
    module_latency_s : float
        A module's one-way latency (its DSP; 0 for linear optics).
    dsp_rx : Receiver
        The module DSP's receiver for the optical segment (``"dsp"`` only).
    packages : bool, optional
        Whether COM's reference package goes on the host channel's ends (None: as
        ``Serdes.packages``); False when ``host`` already includes the package.
    module_eq_db : float
        ``"lpo"``: the peaking (dB) of the linear module driver's input equaliser, which
        restores the near host channel's loss before the laser (:meth:`driver_eq`), so the
        optical receiver's noise is not amplified by the far host's equaliser undoing the
        near channel too. The LPO MSA's modules drive the laser with a linear driver "with
        high linearity and EQ capability" (LPO MSA, REFERENCES.md); 0 for no equaliser.
    part : {"typical", "corner"}
        The optical parts (:mod:`channels.optical_parts`): a typical shipping part, or every
        value at 802.3's limit.
    """

    kind: str
    path: OpticalPath
    host: channels.Channel
    module_power_w: float
    module_rate_bps: float = 800e9
    module_latency_s: float = 0.0
    dsp_rx: Receiver = field(default_factory=lambda: Receiver(ffe=RxFfe(3, 12)))
    packages: bool | None = None
    name: str = ""
    module_eq_db: float = 0.0
    part: str = "typical"

    def __post_init__(self):
        if self.kind not in ("dsp", "lpo", "lro", "cpo"):
            raise ConfigError(f"OpticalClass.kind must be 'dsp', 'lpo', 'lro' or 'cpo', got {self.kind!r}")
        if not isinstance(self.path, OpticalPath):
            raise ConfigError(f"OpticalClass.path must be a channels.optical.OpticalPath, got {type(self.path).__name__}")
        if not isinstance(self.host, channels.Channel):
            raise ConfigError(f"OpticalClass.host must be a channels.Channel, got {type(self.host).__name__}")
        number(self.module_power_w, "OpticalClass.module_power_w", nonneg=True)
        number(self.module_rate_bps, "OpticalClass.module_rate_bps", positive=True)
        number(self.module_latency_s, "OpticalClass.module_latency_s", nonneg=True)
        if not isinstance(self.dsp_rx, Receiver):
            raise ConfigError(f"OpticalClass.dsp_rx must be a Receiver, got {type(self.dsp_rx).__name__}")
        number(self.module_eq_db, "OpticalClass.module_eq_db", nonneg=True, hi=30.0)
        if self.part not in ("typical", "corner"):
            raise ConfigError(f"OpticalClass.part must be 'typical' or 'corner', got {self.part!r}")
        if not self.name:
            object.__setattr__(self, "name", self.kind)

    def driver_eq(self, f_hz, baud_hz: float) -> channels.Channel:
        """The linear module driver's equaliser as a unilateral two-port on ``f_hz`` (Hz): the
        802.3ck CTLE shape at ``baud_hz`` (``f_z = f_p1 = f_b / 2.5``, ``f_p2 = f_b``) with
        ``module_eq_db`` of peaking, scaled to unit gain at DC (the driver's gain sets the
        OMA on the settled levels)."""
        import numpy as np
        import skrf as rf

        from ..serdes import Ctle

        f = np.asarray(f_hz, dtype=float)
        c = Ctle.ieee_802_3ck(number(baud_hz, "baud_hz", positive=True), -float(self.module_eq_db))
        h = c.response(f) / 10 ** (c.g_dc_db / 20)
        s = np.zeros((f.size, 2, 2), dtype=complex)
        s[:, 1, 0] = h
        ntwk = rf.Network(frequency=rf.Frequency.from_f(f, unit="Hz"), s=s, z0=100.0, name="driver_eq")
        return channels.Channel.from_differential(ntwk, name="lpo driver eq")

    @staticmethod
    def _path(length_m: float, baud_hz: float, connectors: int, part: str = "typical") -> OpticalPath:
        """The optical part over the span: :func:`channels.optical_parts.part_path` (a typical
        DR-class part, or the 802.3 Cl. 140 spec corner), bandwidths scaled to the baud."""
        from channels.optical_parts import part_path

        return part_path(part, length_m, baud_hz, connectors)

    @classmethod
    def dsp_pluggable(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
                      module_power_w: float = 15.0, module_latency_s: float = 50e-9,
                      part: str = "typical") -> OpticalClass:
        """An 800G DSP pluggable at each end: 14 to 16 W (REFERENCES.md, vendor slides),
        a DSP retimer's latency (:meth:`PathElement.dsp_retimer`), the built-in
        ``chip_to_module`` host channel."""
        return cls("dsp", cls._path(length_m, baud_hz, connectors, part), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, module_latency_s, name="dsp_pluggable", part=part)

    @classmethod
    def lpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 8.5, part: str = "typical", module_eq_db: float | None = None) -> OpticalClass:
        """Linear pluggable optics: 8 to 9 W per 800G (REFERENCES.md), no DSP, the host's
        ``chip_to_module`` channel at each end. The LPO MSA's 100G-DR-LPO (53.125 GBd PAM4,
        up to 500 m) builds on 802.3's 100GBASE-DR optics, so the optical parts are DR's.
        ``module_eq_db`` (None: the host channel's loss at Nyquist above its loss at 1 GHz,
        rounded to 1 dB, at most 12 dB: an assumed driver range, no public LPO driver figure
        was found) is the module driver's equaliser peaking (:meth:`driver_eq`)."""
        host = channels.library.get("chip_to_module")
        if module_eq_db is None:
            import numpy as np

            il = -20 * np.log10(np.abs(host.sdd21) + 1e-300)
            nyq = float(np.interp(baud_hz / 2, host.f, il)) - float(np.interp(1e9, host.f, il))
            module_eq_db = float(min(12.0, max(0.0, round(nyq))))
        return cls("lpo", cls._path(length_m, baud_hz, connectors, part), host, module_power_w, 800e9, 0.0,
                   name="lpo", module_eq_db=module_eq_db, part=part)

    @classmethod
    def lro(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 11.75, module_latency_s: float = 50e-9, part: str = "typical") -> OpticalClass:
        """Linear receive optics: a DSP on the transmit side only. No public power figure was
        found: 11.75 W per 800G, the LPO's 8.5 W plus half of what a DSP pluggable's 15 W adds
        to it (an estimate: the DSP's transmit half); one DSP crossing per direction
        (:meth:`dsp_pluggable`'s 50 ns); the ``chip_to_module`` host channel."""
        return cls("lro", cls._path(length_m, baud_hz, connectors, part), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, module_latency_s, name="lro", part=part)

    @classmethod
    def cpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 5.5, part: str = "typical") -> OpticalClass:
        """Co-packaged optics: about 5.5 W per 800G (REFERENCES.md), the ``cpo_short``
        package channel from the switch die to the optical engine (it holds the package
        trace, so no COM package is added)."""
        return cls("cpo", cls._path(length_m, baud_hz, connectors, part), channels.library.get("cpo_short"),
                   module_power_w, 800e9, 0.0, packages=False, name="cpo", part=part)

    @property
    def energy_j_per_bit(self) -> float:
        """A module at each end, each full duplex: ``2 P / (2 rate)`` per bit one way."""
        return self.module_power_w / self.module_rate_bps

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "path": self.path.to_dict(), "host": self.host.name,
                "module_power_w": self.module_power_w, "module_rate_bps": self.module_rate_bps,
                "module_latency_s": self.module_latency_s, "dsp_rx": self.dsp_rx.to_dict(), "packages": self.packages,
                "module_eq_db": self.module_eq_db, "part": self.part}


# The class table evaluates links, so it lives above the link roll-up in
# :mod:`phy.link.classes` (importing it here closed an import cycle through
# phy.link.report). The old names resolve there for one release, with a warning; the
# package phy.link imports phy.link.classes, so it is loaded whenever this module is.
_MOVED = ("class_table", "PUBLISHED_MODULES")


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(f"phy.link.optics.{name} moved to phy.link.classes.{name} (phy.link.{name}); "
                      "the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return getattr(sys.modules["phy.link.classes"], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
