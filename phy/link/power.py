"""A link's energy per payload bit, term by term: the SerDes at each segment's ends by the
reach class of the segment's loss, the retimers of a retimed copper link, the optical
modules (a module at each end, each full duplex) and the path elements; the report turns
it into watts for both directions of all lanes.

A segment (an electrical hop between two SerDes) spends, per bit one way, its transmitter's
and its receiver's energy: one transceiver's worth (``E``, the pJ/bit a transceiver paper
quotes: Tx plus Rx power over the lane rate) of the reach class its insertion loss at
Nyquist falls in (:func:`reach_class`). A host's ends are the ``serdes`` term, a retimer's
the ``retimers`` term; a DSP pluggable's module ends are inside the module's power.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from .spec import LinkSpec

__all__ = ["REACH_CLASSES", "SERDES_ENERGY_J_PER_BIT", "SERDES_ENERGY_SOURCES", "energy_terms", "reach_class",
           "serdes_energy_j_per_bit"]

#: The electrical reach classes, and the insertion loss at Nyquist (dB, die to die) each
#: closes, at 112G and 224G per lane:
#:
#: * XSR (die to die, die to optical engine): 13 dB, OIF CEI-112G-XSR+ (OIF release, Jan
#:   2024: "up to 13 dB" bump to bump); the same at 224G (no CEI-224G-XSR figure found).
#: * VSR (chip to module): 16 dB, CEI-112G-VSR's total channel loss (MathWorks CEI-112G-VSR
#:   kit, secondary); the same at 224G.
#: * MR: 20.8 dB, the channel of a 112G medium-reach transceiver (Ye et al., ISSCC 2022);
#:   the same at 224G (the CEI-224G-MR budget was not found).
#: * LR: 28 dB at 112G (802.3ck backplane, about 28 dB at 26.56 GHz) and 40 dB at 224G
#:   (802.3dj, about 40 dB die to die at 53.125 GHz, trend figure); beyond it the class is
#:   still LR (the link's verdict says whether it closes).
REACH_CLASSES = {"xsr": (13.0, 13.0), "vsr": (16.0, 16.0), "mr": (20.8, 20.8), "lr": (28.0, 40.0)}

#: Transceiver (Tx plus Rx) energy per line bit (J), by reach class, at 112G and 224G per lane:
SERDES_ENERGY_J_PER_BIT = {
    "xsr": (1.1e-12, 1.1e-12),
    "vsr": (2.29e-12, 2.69e-12),
    "mr": (2.29e-12, 2.69e-12),
    "lr": (4.1e-12, 3.0e-12),
}
#: Where each figure of :data:`SERDES_ENERGY_J_PER_BIT` comes from (the report's notes
#: quote it).
SERDES_ENERGY_SOURCES = {
    "xsr": "113G PAM4 XSR chiplet link under 1.1 pJ/b in 5 nm (IBM, IEEE SSC-L vol. 8, 2025); taken at 224G too",
    "vsr": ("112G: the 2.29 pJ/b MR transceiver (Ye et al., ISSCC 2022) as a bound for VSR's lower loss; 224G: "
            "2.69 pJ/b, a 212G DSP transceiver for optical modules in 5 nm (Marvell, ISSCC 2024, 7.1)"),
    "mr": "112G: 2.29 pJ/b at 20.8 dB (Ye et al., ISSCC 2022); 224G: 2.69 pJ/b (Marvell, ISSCC 2024, 7.1)",
    "lr": ("112G: 460 mW for a 112 Gb/s DSP-based transceiver in 7 nm, 4.1 pJ/b (Ali et al., Broadcom, ISSCC 2020); "
           "224G: 3 pJ/b at 40 dB insertion loss in 3 nm (Pfaff et al., ISSCC 2024, 7.3)"),
}


def serdes_generation(lane_rate_bps: float) -> int:
    """0 for a 112G-class lane (up to 150 Gb/s), 1 for 224G-class."""
    return 0 if lane_rate_bps <= 150e9 else 1


def reach_class(il_db: float, lane_rate_bps: float) -> str:
    """The least reach class whose loss budget (:data:`REACH_CLASSES`) covers ``il_db``
    (insertion loss at Nyquist, dB, die to die) at ``lane_rate_bps``; ``"lr"`` beyond."""
    if not math.isfinite(il_db):
        raise ConfigError(f"the insertion loss must be finite to choose a reach class, got {il_db!r}")
    g = serdes_generation(lane_rate_bps)
    for name, limits in REACH_CLASSES.items():
        if il_db <= limits[g]:
            return name
    return "lr"


def serdes_energy_j_per_bit(il_db: float, lane_rate_bps: float) -> tuple[float, str]:
    """(a transceiver's energy per line bit (J), its reach class) for a segment of
    ``il_db`` at Nyquist (:data:`SERDES_ENERGY_J_PER_BIT`)."""
    c = reach_class(il_db, lane_rate_bps)
    return SERDES_ENERGY_J_PER_BIT[c][serdes_generation(lane_rate_bps)], c


def _segment_loss_db(spec: LinkSpec, seg) -> float:
    """The segment's electrical loss at Nyquist (dB, packages included): a linear optical
    segment's without its optical span."""
    nyq = spec.baud_hz / 2
    il = float(seg.channel.insertion_loss_db(nyq))
    if spec.optics is not None and spec.optics.kind != "dsp" and seg.name != "host_to_module":
        il += 20 * np.log10(max(abs(complex(spec.optics.path.transfer(np.array([nyq]))[0])), 1e-300))
    return il


def energy_terms(spec: LinkSpec, notes: list, eyes=()) -> dict:
    """Energy per payload bit one way (J), by name, with a note on every default used.

    ``eyes``: the link's equalised segments (:func:`phy.link.segments`), whose losses set
    the SerDes's reach class; without them (or with ``Serdes.energy_j_per_bit`` given) the
    given figure is used for every segment.
    """
    line_per_payload = _line_per_payload(spec)
    given = spec.serdes.energy_j_per_bit
    ends = _segment_ends(spec, len(eyes))
    energy = {"serdes": 0.0}
    used = {}
    for seg, (a, b) in zip(eyes, ends):
        if seg is None or (a is None and b is None):
            continue
        if given is not None:
            e = given
        else:
            il = _segment_loss_db(spec, seg)
            e, c = serdes_energy_j_per_bit(il, spec.lane_rate_bps)
            used.setdefault(c, []).append(f"{seg.name} {il:.1f} dB")
        for end in (a, b):
            if end is not None:
                energy[end] = energy.get(end, 0.0) + 0.5 * e * line_per_payload
    if given is None and not eyes:
        notes.append("SerDes energy: no segments to choose a reach class from; counted as 0")
    for c, segs in used.items():
        g = serdes_generation(spec.lane_rate_bps)
        notes.append(f"SerDes energy (default): {c.upper()} class, {SERDES_ENERGY_J_PER_BIT[c][g] * 1e12:.3g} pJ/bit "
                     f"per transceiver for {', '.join(segs)} at Nyquist ({SERDES_ENERGY_SOURCES[c]})")
    if spec.optics is not None:
        energy["optical_modules"] = spec.optics.energy_j_per_bit
        notes.append(f"optical modules: {spec.optics.module_power_w:g} W per {spec.optics.module_rate_bps / 1e9:g}G "
                     f"module at each end ({spec.optics.name}'s figure, phy.OpticalClass gives its source)")
    for e in spec.path:
        energy[e.name] = energy.get(e.name, 0.0) + e.energy_j_per_bit
    return energy


def _line_per_payload(spec: LinkSpec) -> float:
    from .latency import rate_chain

    line, _, _, payload = rate_chain(spec)
    return line / payload


def _segment_ends(spec: LinkSpec, n: int) -> list:
    """Who spends each segment's Tx and Rx energy: ``"serdes"`` (a host), ``"retimers"``
    (a retimed copper link's joints) or None (inside an optical module's power, or the
    optical span itself)."""
    if spec.channel is not None:
        return [("serdes" if i == 0 else "retimers", "serdes" if i == n - 1 else "retimers") for i in range(n)]
    if spec.optics.kind == "dsp":  # host to module, the optics, module to host
        return [("serdes", None), (None, None), (None, "serdes")][:n]
    if spec.optics.kind == "lro":  # host to module; the module's DSP drives the optics into the far host
        return [("serdes", None), (None, "serdes")][:n]
    return [("serdes", "serdes")] * n
