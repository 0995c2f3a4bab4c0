"""A link's one-way latency, term by term and layer by layer, and its rate chain.

* ``phy``: Tx and Rx SerDes datapaths, FEC accumulation and decode (:func:`fec.latency`,
  at the link's decoder clock), time of flight (each segment's own phase delay, the
  fibre's ``n_g L / c``), optical module DSPs;
* ``link`` (with a :class:`Retry`): the flit the receiver must hold beyond the FEC's own
  accumulation, its CRC check, and the mean cost of replays (added by the report,
  :mod:`phy.link.retry`);
* ``path``: every element of the path (retimers, switch ports).
"""

from __future__ import annotations

import fec

from .equalise import Segment
from .retry import flit_accumulation_s
from .spec import LinkSpec

__all__ = ["LAYERS", "latency_layers", "latency_terms", "rate_chain"]

LAYERS = ("phy", "link", "path")


def rate_chain(spec: LinkSpec) -> tuple[float, float, float, float]:
    """(line rate of all lanes, FEC rate k/n, framing efficiency, payload rate), bit/s:
    ``106.25 Gb/s x 514/544 x 256/257 = 100 Gb/s`` for an 802.3 lane."""
    code = spec.fec
    line = spec.lanes * spec.lane_rate_bps
    fec_rate = code.k / code.n if code is not None else 1.0
    f_eff = spec.framing.efficiency(code.message_bits if code is not None else None)
    return line, fec_rate, f_eff, line * fec_rate * f_eff


def latency_terms(spec: LinkSpec, eyes: tuple[Segment, ...]) -> dict:
    """The one-way latency terms (s) before retry, by name (:func:`latency_layers` groups
    them)."""
    baud = spec.baud_hz
    code = spec.fec
    lat = {
        "serdes_tx": spec.serdes.tx_latency_ui / baud,
        "serdes_rx": spec.serdes.rx_latency_ui / baud,
    }
    acc = None
    if code is not None:
        fl = fec.latency(code, spec.lane_rate_bps, spec.lanes, spec.interleave, clock_hz=spec.fec_clock_hz)
        acc = fl.accumulation_s
        lat["fec_accumulation"] = fl.accumulation_s
        lat["fec_decode"] = fl.total_s - fl.accumulation_s
    if spec.inner_fec is not None:  # one inner word's accumulation and 3 decoder cycles
        lat["inner_fec"] = spec.inner_fec.latency_s(spec.lane_rate_bps, spec.fec_clock_hz)
    lat["time_of_flight"] = float(sum(e.delay_s for e in eyes))
    if spec.optics is not None and spec.optics.module_latency_s:  # DSPs crossed: both modules', or the sender's
        lat["optical_modules"] = (1 if spec.optics.kind == "lro" else 2) * spec.optics.module_latency_s
    if spec.retry is not None:
        extra = flit_accumulation_s(spec, acc)
        if extra or code is None:
            lat["flit_accumulation"] = extra
        lat["crc_check"] = spec.retry.crc_check_s
    for e in spec.path:
        lat[e.name] = lat.get(e.name, 0.0) + e.latency_s
    return lat


_LINK_TERMS = ("flit_accumulation", "crc_check", "retry_mean")


def latency_layers(spec: LinkSpec, terms: dict) -> dict:
    """``terms`` grouped by layer: ``{"phy": {...}, "link": {...}, "path": {...}}``."""
    path = {e.name for e in spec.path}
    out: dict = {k: {} for k in LAYERS}
    for k, v in terms.items():
        layer = "path" if k in path else "link" if k in _LINK_TERMS else "phy"
        out[layer][k] = v
    return out
