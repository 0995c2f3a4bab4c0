"""A link's one-way latency, term by term, and its rate chain: Tx and Rx SerDes datapaths,
FEC accumulation and decode (:func:`fec.latency`), time of flight (each segment's own
phase delay, the fibre's ``n_g L / c``), optical module DSPs, every path element, flit
accumulation without an FEC (the mean cost of retries is added by the report)."""

from __future__ import annotations

import fec

from .equalise import Segment
from .post_fec import _flit_bits
from .spec import LinkSpec

__all__ = ["latency_terms", "rate_chain"]


def rate_chain(spec: LinkSpec) -> tuple[float, float, float, float]:
    """(line rate of all lanes, FEC rate k/n, framing efficiency, payload rate), bit/s:
    ``106.25 Gb/s x 514/544 x 256/257 = 100 Gb/s`` for an 802.3 lane."""
    code = spec.fec
    line = spec.lanes * spec.lane_rate_bps
    fec_rate = code.k / code.n if code is not None else 1.0
    f_eff = spec.framing.efficiency(code.message_bits if code is not None else None)
    return line, fec_rate, f_eff, line * fec_rate * f_eff


def latency_terms(spec: LinkSpec, eyes: tuple[Segment, ...]) -> dict:
    """The one-way latency terms (s) before retry, by name."""
    baud = spec.baud_hz
    code = spec.fec
    lat = {
        "serdes_tx": spec.serdes.tx_latency_ui / baud,
        "serdes_rx": spec.serdes.rx_latency_ui / baud,
    }
    if code is not None:
        fl = fec.latency(code, spec.lane_rate_bps, spec.lanes, spec.interleave, clock_hz=spec.fec_clock_hz)
        lat["fec_accumulation"] = fl.accumulation_s
        lat["fec_decode"] = fl.total_s - fl.accumulation_s
    elif spec.retry is not None:
        lat["flit_accumulation"] = _flit_bits(spec) / (spec.lanes * spec.lane_rate_bps)
    lat["time_of_flight"] = float(sum(e.delay_s for e in eyes))
    if spec.optics is not None and spec.optics.module_latency_s:
        lat["optical_modules"] = 2 * spec.optics.module_latency_s
    for e in spec.path:
        lat[e.name] = lat.get(e.name, 0.0) + e.latency_s
    return lat
