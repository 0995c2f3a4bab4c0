"""The optical class table: which optical link classes (:class:`OpticalClass`: DSP
pluggable, linear pluggable, linear receive, co-packaged) close at each lane rate, and for
one that does not, by how much and what decides.

An application of the link roll-up (one :func:`phy.link.evaluate_link` per class and
rate), so it sits above :mod:`.report`; :mod:`.optics` holds the parts."""

from __future__ import annotations

import math
from dataclasses import replace

from channels.tdecq import tdecq

from ..errors import ConfigError
from .optics import OpticalClass
from .report import evaluate_link
from .spec import LinkSpec

__all__ = ["PUBLISHED_MODULES", "class_table"]


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
    equaliser (``module_eq_db``).

    Parameters
    ----------
    lane_rates_bps : sequence of float, optional
        Lane line rates, bit/s (default 106.25e9 and 212.5e9).
    kinds : sequence of str, optional
        Optical classes: ``"dsp"``, ``"lpo"``, ``"lro"``, ``"cpo"`` (default all four).
    length_m : float, optional
        Fibre length, m (default 100.0).
    lanes : int, optional
        Lanes per link (default 4).
    inner : dict, optional
        Lane rate (bit/s) to inner (code, decoder), as above.
    part : str, optional
        ``"typical"`` (default) or ``"corner"`` optical parts.

    Returns
    -------
    list of dict
        One row per rate and class.
    """
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
