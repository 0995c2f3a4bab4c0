"""Optical link classes: the optical path, the electrical host channel at each end, the
modules (DSP pluggable, linear pluggable, co-packaged) with their power and latency."""

from __future__ import annotations

import math
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


#: Published module figures the class table quotes beside its own (all secondary:
#: ../shared/REFERENCES.md, "Optics"; none found for LRO).
PUBLISHED_MODULES = {
    "dsp": "800G DSP pluggable 14-16 W (vendor slides), 13-18 W (trade press)",
    "lpo": "800G LPO 8-9 W (trade press); LPO MSA 100G-DR-LPO: 53.125 GBd PAM4, up to 500 m",
    "lro": "no public figure found",
    "cpo": "5.5 W per 800G (Broadcom Bailly); 9 W per 1.6T port (NVIDIA)",
}


def _what_decides(oc: OpticalClass, r, lanes: int, rate: float, code, dec) -> str:
    """Why a class does not close: the same link with a quiet laser and no reflections
    (RIN -175 dB/Hz, every reflectance -90 dB) and, if it then closes, the optical noise
    decides (its largest term named); else ISI and loss do (the worst segment's insertion
    loss at Nyquist)."""
    from dataclasses import replace

    from .report import evaluate_link
    from .spec import LinkSpec

    terms = dict(oc.path.budget(4).terms_rms_a)
    p = oc.path
    quiet = replace(p, tx=replace(p.tx, rin_db_per_hz=-175.0, reflectance_db=-90.0),
                    rx=replace(p.rx, reflectance_db=-90.0),
                    elements=tuple(replace(e, reflectance_db=-90.0) if hasattr(e, "reflectance_db") else e
                                   for e in p.elements))
    rq = evaluate_link(LinkSpec(optics=replace(oc, path=quiet), lanes=lanes, lane_rate_bps=rate, inner_fec=code,
                                inner_decoder=dec))
    noise = ", ".join(f"{k} {v * 1e6:.2f} uA" for k, v in terms.items())
    if rq.passes:
        return (f"the optical noise: with a quiet laser and no reflections it closes ({rq.margin_db:.2f} dB); "
                f"{max(terms, key=terms.get)} is its largest term ({noise} at the top level)")
    il = max((s.channel.get("il_db_nyquist") or 0.0) for s in r.segments if s.channel)
    return (f"ISI and loss: even with a quiet laser and no reflections it misses (margin {rq.margin_db:.2f} dB); "
            f"the worst electrical path has {il:.1f} dB at Nyquist")


def class_table(lane_rates_bps=(106.25e9, 212.5e9), kinds=("dsp", "lpo", "lro", "cpo"), *, length_m: float = 100.0,
                lanes: int = 4, inner: dict | None = None, part: str = "typical") -> list:
    """Which optical classes close, at each lane rate: one :func:`phy.evaluate_link` per
    class and rate over ``length_m`` of fibre, ``lanes`` lanes, KP4, and at 212.5 Gb/s the
    802.3dj inner code (``inner``: lane rate to (code, decoder), default
    ``{212.5e9: ("SFEC", "chase")}``). Each row: the verdict and margin, the pre-FEC BER
    against what the FEC takes, latency, energy per bit and its terms, the published module
    figure, the transmitter's TDECQ through the span (:func:`channels.tdecq.tdecq`), and for
    a class that does not close, by how much and which impairment
    decides (:func:`_what_decides`: the optical noise, or ISI and loss). ``part``: the
    optical parts, ``"typical"`` or ``"corner"`` (:mod:`channels.optical_parts`); each row
    names the largest optical noise term (``dominant_noise``) and the module driver's
    equaliser (``module_eq_db``)."""
    from .report import evaluate_link
    from .spec import LinkSpec

    inner = {212.5e9: ("SFEC", "chase")} if inner is None else inner
    makers = {"dsp": OpticalClass.dsp_pluggable, "lpo": OpticalClass.lpo, "lro": OpticalClass.lro,
              "cpo": OpticalClass.cpo}
    rows = []
    for rate in lane_rates_bps:
        for kind in kinds:
            if kind not in makers:
                raise ConfigError(f"kind must be one of {', '.join(makers)}, got {kind!r}")
            oc = makers[kind](length_m=length_m, baud_hz=rate / 2, part=part)
            code, dec = inner.get(rate, (None, "chase"))
            r = evaluate_link(LinkSpec(optics=oc, lanes=lanes, lane_rate_bps=rate, inner_fec=code, inner_decoder=dec,
                                       name=f"{kind} {rate / 1e9:g}G"))
            from channels.tdecq import tdecq

            tq = tdecq(oc.path, rate / 2)
            terms = oc.path.budget(4).terms_rms_a
            why = None if r.passes else (f"short by {r.required_margin_db - r.margin_db:.2f} dB of margin"
                                         if math.isfinite(r.margin_db) else "an eye closes")
            decides = None if r.passes else _what_decides(oc, r, lanes, rate, code, dec)
            rows.append({"lane_rate_bps": rate, "kind": kind, "passes": r.passes, "margin_db": r.margin_db,
                         "required_margin_db": r.required_margin_db, "pre_fec_ber": r.pre_fec_ber,
                         "required_pre_fec_ber": r.required_der / 2, "inner_fec": code, "inner_decoder": dec if code else None,
                         "latency_ns": r.latency_s * 1e9, "energy_pj_per_bit": r.energy_j_per_bit * 1e12,
                         "energy_terms_pj_per_bit": {k: v * 1e12 for k, v in r.energy_breakdown_j_per_bit.items()},
                         "module_power_w": oc.module_power_w, "published": PUBLISHED_MODULES[kind],
                         "tdecq_db": tq.tdecq_db, "tdecq_ceq_db": tq.ceq_db,
                         "short_by": why, "decides": decides, "reasons": list(r.reasons), "part": part,
                         "length_m": length_m, "module_eq_db": oc.module_eq_db,
                         "noise_terms_ua": {k: v * 1e6 for k, v in terms.items()},
                         "dominant_noise": max(terms, key=terms.get)})
    return rows
