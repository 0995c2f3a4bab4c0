"""How the library and the command print figures: every number with its unit and what it
is measured against, tiny probabilities as bounds, latency terms by name with their unit.

One place, so :meth:`phy.LinkReport.summary`, :meth:`phy.latency.LatencyStack.table`, the
figures' legends (:mod:`phy._plot`) and the command (the demo, ``link`` and ``rack``, through
:mod:`phy.cli._format`) print the same quantity the same way. Pure functions of numbers and
plain dicts: it imports nothing of the library, so every stage may use it.
"""

from __future__ import annotations

import math
import re

#: Probabilities below this print as ``< 1e-30``: no measurement reaches them, and the
#: models' assumptions (independent errors and bursts, Gaussian tails) are not good to
#: the printed digits far below it. JSON output keeps the computed value.
PROBABILITY_FLOOR = 1e-30

#: Names of latency terms and layers as printed (and in figures' legends).
TERM_LABELS = {
    "serdes_tx": "SerDes Tx", "serdes_rx": "SerDes Rx", "fec_accumulation": "FEC accumulation",
    "fec_decode": "FEC decode", "inner_fec": "inner FEC", "time_of_flight": "flight",
    "optical_modules": "optical modules", "flit_accumulation": "flit accumulation", "crc_check": "CRC check",
    "retry_mean": "replays (mean)", "serialization": "serialisation", "port_to_port": "port to port",
    "queueing": "queueing", "tx_controller": "Tx controller", "rx_controller": "Rx controller",
    "access": "memory access", "phy": "PHY", "link": "link layer", "switch": "switch", "endpoint": "endpoint",
    "software": "software", "memory": "memory", "path": "path", "bandwidth": "bandwidth", "kernel": "kernel",
    "poll": "polls", "peers": "peers", "wire": "wire",
}


#: What each latency layer (:data:`phy.latency.LAYERS`, and the collectives' ``software``
#: and ``bandwidth``) holds, for a figure's legend where the terms are not listed.
LAYER_LEGENDS = {
    "endpoint": "endpoint controllers", "phy": "PHY (SerDes, FEC, flight)",
    "link": "link layer (CRC, replay, serialisation)", "switch": "switch (port to port, queueing)",
    "path": "retimers in the path", "memory": "remote memory access", "software": "software (collective library)",
    "bandwidth": "payload at the link bandwidth",
}


def label(key: str) -> str:
    """The printed name of a latency term or layer."""
    return TERM_LABELS.get(key, key.replace("_", " "))


def legend(key: str) -> str:
    """A legend's name for a latency layer (what it holds, :data:`LAYER_LEGENDS`) or term
    (:func:`label`)."""
    return LAYER_LEGENDS.get(key) or label(key)


def prob(p: float, digits: int = 3) -> str:
    """A probability: ``digits`` significant figures, ``< 1e-30`` below
    :data:`PROBABILITY_FLOOR` (zero included), ``n/a`` when not a number."""
    if p is None or not isinstance(p, (int, float)) or math.isnan(p):
        return "n/a"
    if p < PROBABILITY_FLOOR:
        return f"< {PROBABILITY_FLOOR:.0e}"
    return f"{p:.{digits}g}"


def ns(seconds: float, digits: int = 1) -> str:
    """Seconds as nanoseconds with the unit."""
    return f"{seconds * 1e9:.{digits}f} ns"


def terms_ns(terms: dict, digits: int = 1, floor_s: float = 0.05e-9) -> str:
    """``name 1.2 ns, ...`` for the terms of ``terms`` (s) of at least ``floor_s``."""
    return ", ".join(f"{label(k)} {ns(v, digits)}" for k, v in terms.items() if v >= floor_s)


def bytes_per_s(x: float) -> str:
    """Bytes per second, in GB/s (10^9) or TB/s."""
    return f"{x / 1e12:.2f} TB/s" if x >= 1e12 else f"{x / 1e9:.1f} GB/s"


def size_bytes(x: float) -> str:
    """A size in bytes, in GB (10^9) or TB."""
    return f"{x / 1e12:.4g} TB" if x >= 1e12 else f"{x / 1e9:.4g} GB"


def margin_words(margin_db: float, required_db: float, required_der: float, fec: str | None,
                 target_ber: float, retry_der: float | None = None) -> str:
    """The link's margin and what it is against: the detector error ratio the FEC corrects
    to the target by itself (``retry_der``: with link-level retry, the error ratio the
    replays would stretch to, said to be outside the margin)."""
    what = f"{fec} corrects to the BER target {target_ber:.0e} by itself" if fec else \
        f"meets the BER target {target_ber:.0e} without FEC"
    retry = ("" if retry_der is None else
             f"; retry absorbs what is left, up to {retry_der:.3g}, and is not counted")
    return (f"{margin_db:.2f} dB Q-factor margin over the detector error ratio {required_der:.3g} that {what} "
            f"(needs {required_db:.2f} dB{retry})")


def com_words(com_db: float | None, seg_notes: list) -> str:
    """COM and what it is against: A_s over the noise at DER_0, passing at 3 dB."""
    if com_db is None:
        return ""
    found = (re.match(r"^COM \((.*)\) -?[\d.]+ dB", n) for n in seg_notes)
    params = next((m.group(1) for m in found if m), "")
    return (f"COM {com_db:.2f} dB{f' ({params})' if params else ''}: signal A_s over the noise and ISI at "
            "COM's DER_0, against its 3 dB pass")


def energy_words(e_j_per_bit: float, power_w: float, notes: list) -> str:
    """Energy per bit and power, or why they are not counted."""
    if e_j_per_bit > 0:
        return f"{e_j_per_bit * 1e12:.3g} pJ/bit one way, {power_w:.3g} W both directions"
    why = next((n for n in notes if "energy" in n.lower()), "no energy figure for this link's parts")
    return f"not counted ({why})"


def sig(x: float, digits: int = 3) -> str:
    """A plain number to ``digits`` significant figures."""
    return f"{x:.{digits}g}"
