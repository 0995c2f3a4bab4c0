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
        if not self.name:
            object.__setattr__(self, "name", self.kind)

    @staticmethod
    def _path(length_m: float, baud_hz: float, connectors: int) -> OpticalPath:
        """A 400GBASE-DR4-class transmitter (OMA_outer mid-range of its -0.8 to 4.2 dBm at
        1.0 dBm, ER 3.5 dB, RIN_OMA -136 dB/Hz at 53.125 GBd, reflectances -26 dB: a
        vendor's restatement of 802.3 Cl.124), scaled to the baud: bandwidths 0.75 baud
        (driver) and 0.5 baud (receiver), and the RIN limit lowered by ``10 log10(baud /
        53.125 GBd)`` dB so that the RIN integrated over the receiver's band stays what
        DR4 allows (-139 dB/Hz at 106.25 GBd; derived: 802.3dj's 200G/lane PMD figures
        were not found in public sources). TIA 12.5 pA/sqrt(Hz) (a 42 GHz SiGe TIA,
        journal), responsivity 0.85 A/W (quantum efficiency 0.8 at 1311 nm), G.652 fibre
        and PC connectors at 0.5 dB / -35 dB. The RIN holds at DR4's 21.4 dB optical return
        loss (``RIN21.4OMA``), and grows with worse return loss
        (:meth:`channels.optical.OpticalPath.rin_db_per_hz`)."""
        from channels.optical import (
            Fiber,
            OpticalConnector,
            OpticalReceiver,
            OpticalTransmitter,
        )

        rin = -136.0 - 10 * math.log10(baud_hz / 53.125e9)  # the same integrated RIN over the band
        tx = OpticalTransmitter(1.0, 3.5, rin, 1311e-9, 0.75 * baud_hz, 0.0, -26.0, rin_orl_db=21.4)
        rx = OpticalReceiver(0.85, 12.5e-12, 0.5 * baud_hz, -26.0)
        return OpticalPath.point_to_point(Fiber.smf(length_m), connectors, tx, rx, OpticalConnector(0.5, -35.0))

    @classmethod
    def dsp_pluggable(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
                      module_power_w: float = 15.0, module_latency_s: float = 50e-9) -> OpticalClass:
        """An 800G DSP pluggable at each end: 14 to 16 W (REFERENCES.md, vendor slides),
        a DSP retimer's latency (:meth:`PathElement.dsp_retimer`), the built-in
        ``chip_to_module`` host channel."""
        return cls("dsp", cls._path(length_m, baud_hz, connectors), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, module_latency_s, name="dsp_pluggable")

    @classmethod
    def lpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 8.5) -> OpticalClass:
        """Linear pluggable optics: 8 to 9 W per 800G (REFERENCES.md), no DSP, the host's
        ``chip_to_module`` channel at each end."""
        return cls("lpo", cls._path(length_m, baud_hz, connectors), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, 0.0, name="lpo")

    @classmethod
    def lro(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 11.75, module_latency_s: float = 50e-9) -> OpticalClass:
        """Linear receive optics: a DSP on the transmit side only. No public power figure was
        found: 11.75 W per 800G, the LPO's 8.5 W plus half of what a DSP pluggable's 15 W adds
        to it (an estimate: the DSP's transmit half); one DSP crossing per direction
        (:meth:`dsp_pluggable`'s 50 ns); the ``chip_to_module`` host channel."""
        return cls("lro", cls._path(length_m, baud_hz, connectors), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, module_latency_s, name="lro")

    @classmethod
    def cpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 5.5) -> OpticalClass:
        """Co-packaged optics: about 5.5 W per 800G (REFERENCES.md), the ``cpo_short``
        package channel from the switch die to the optical engine (it holds the package
        trace, so no COM package is added)."""
        return cls("cpo", cls._path(length_m, baud_hz, connectors), channels.library.get("cpo_short"),
                   module_power_w, 800e9, 0.0, packages=False, name="cpo")

    @property
    def energy_j_per_bit(self) -> float:
        """A module at each end, each full duplex: ``2 P / (2 rate)`` per bit one way."""
        return self.module_power_w / self.module_rate_bps

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "path": self.path.to_dict(), "host": self.host.name,
                "module_power_w": self.module_power_w, "module_rate_bps": self.module_rate_bps,
                "module_latency_s": self.module_latency_s, "dsp_rx": self.dsp_rx.to_dict(), "packages": self.packages}


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
                lanes: int = 4, inner: dict | None = None) -> list:
    """Which optical classes close, at each lane rate: one :func:`phy.evaluate_link` per
    class and rate over ``length_m`` of fibre, ``lanes`` lanes, KP4, and at 212.5 Gb/s the
    802.3dj inner code (``inner``: lane rate to (code, decoder), default
    ``{212.5e9: ("SFEC", "chase")}``). Each row: the verdict and margin, the pre-FEC BER
    against what the FEC takes, latency, energy per bit and its terms, the published module
    figure, the transmitter's TDECQ through the span (:func:`channels.tdecq.tdecq`), and for
    a class that does not close, by how much and which impairment
    decides (:func:`_what_decides`: the optical noise, or ISI and loss)."""
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
            oc = makers[kind](length_m=length_m, baud_hz=rate / 2)
            code, dec = inner.get(rate, (None, "chase"))
            r = evaluate_link(LinkSpec(optics=oc, lanes=lanes, lane_rate_bps=rate, inner_fec=code, inner_decoder=dec,
                                       name=f"{kind} {rate / 1e9:g}G"))
            from channels.tdecq import tdecq

            tq = tdecq(oc.path, rate / 2)
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
                         "short_by": why, "decides": decides, "reasons": list(r.reasons)})
    return rows
