"""Port order and differential pairing of multi-port S-parameters.

Port order
----------
Four-port files pair their ports in one of three ways. The order is named by its
two through paths, 1-based as in the file:

========  ==================  ===========  ============
name      through paths       input pair   output pair
========  ==================  ===========  ============
``12_34``  1->2 and 3->4       (1, 3)       (2, 4)
``13_24``  1->3 and 2->4       (1, 2)       (3, 4)
``14_23``  1->4 and 2->3       (1, 2)       (4, 3)
========  ==================  ===========  ============

scikit-rf's ``se2gmm`` wants ``[in+, in-, out+, out-]``; :attr:`PortOrder.permutation`
gives that renumbering. ``"auto"`` picks the order whose through paths carry the
most low-frequency transmission and refuses to guess when no order stands out
(crosstalk files have no through path: they take the order of their through
sibling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import skrf as rf

from .errors import ChannelError

__all__ = ["PORT_ORDERS", "Lane", "PortOrder", "detect_port_order", "match_lanes", "pairs_from_names", "port_order"]


@dataclass(frozen=True)
class PortOrder:
    """How a four-port file pairs its ports (1-based port numbers).

    Attributes
    ----------
    name : str
        ``"12_34"``, ``"13_24"``, ``"14_23"`` or ``"custom"``.
    inputs : tuple of int
        The (positive, negative) ports of the input pair.
    outputs : tuple of int
        The (positive, negative) ports of the output pair; ``inputs[0]``
        routes to ``outputs[0]``.
    """

    name: str
    inputs: tuple[int, int]
    outputs: tuple[int, int]

    @property
    def permutation(self) -> list[int]:
        """0-based file ports in scikit-rf's mixed-mode order ``[in+, in-, out+, out-]``."""
        return [p - 1 for p in (*self.inputs, *self.outputs)]

    @property
    def description(self) -> str:
        (a, b), (c, d) = self.inputs, self.outputs
        return f"through {a}->{c} and {b}->{d}; input pair ({a},{b}), output pair ({c},{d})"

    def to_dict(self) -> dict:
        return {"name": self.name, "inputs": list(self.inputs), "outputs": list(self.outputs)}


PORT_ORDERS: dict[str, PortOrder] = {
    "12_34": PortOrder("12_34", (1, 3), (2, 4)),
    "13_24": PortOrder("13_24", (1, 2), (3, 4)),
    "14_23": PortOrder("14_23", (1, 2), (4, 3)),
}


def port_order(spec: str | PortOrder | Sequence) -> PortOrder:
    """Normalise a port-order specification.

    Accepts a name (``"12_34"``, also ``"1-2/3-4"`` style spellings), a
    :class:`PortOrder`, or ``((in+, in-), (out+, out-))`` in 1-based ports.
    """
    if isinstance(spec, PortOrder):
        return spec
    if isinstance(spec, str):
        key = re.sub(r"[^0-9]", "", spec)
        key = f"{key[:2]}_{key[2:]}" if len(key) == 4 else spec
        if key not in PORT_ORDERS:
            raise ChannelError(
                f"unknown port order {spec!r}: expected one of {sorted(PORT_ORDERS)} or 'auto'"
            )
        return PORT_ORDERS[key]
    try:
        (ip, in_), (op, on) = spec
        ports = [int(ip), int(in_), int(op), int(on)]
    except (TypeError, ValueError) as exc:
        raise ChannelError(
            f"port order {spec!r} is neither a name nor ((in+, in-), (out+, out-))"
        ) from exc
    if sorted(ports) != [1, 2, 3, 4]:
        raise ChannelError(f"port order {spec!r} must use each of the ports 1..4 once")
    return PortOrder("custom", (ports[0], ports[1]), (ports[2], ports[3]))


# ------------------------------------------------------------------ port order detection
def _low_band(f: np.ndarray) -> slice:
    """Indices of the lowest part of the band used to judge through paths (no DC point)."""
    start = 1 if f[0] == 0 else 0
    n = max(5, int(0.01 * f.size))
    return slice(start, min(f.size, start + n))


def detect_port_order(ntwk: rf.Network) -> tuple[PortOrder, dict[str, float]]:
    """Choose a four-port file's order from its low-frequency transmission.

    Parameters
    ----------
    ntwk : skrf.Network
        The four-port network.

    Returns
    -------
    order : PortOrder
    scores : dict
        Mean low-frequency ``|S|`` of each candidate's two through paths.

    Raises
    ------
    ChannelError
        If the network is not a four-port, or no order carries a clear through
        path (crosstalk files: load them with their through sibling's order).
    """
    if ntwk.nports != 4:
        raise ChannelError(f"port-order detection needs a 4-port network, got {ntwk.nports} ports")
    band = _low_band(ntwk.f)
    mag = np.abs(ntwk.s[band]).mean(axis=0)
    mag = 0.5 * (mag + mag.T)
    scores = {}
    for key, order in PORT_ORDERS.items():
        (a, b), (c, d) = order.inputs, order.outputs
        scores[key] = 0.5 * (mag[a - 1, c - 1] + mag[b - 1, d - 1])
    ranked = sorted(scores, key=scores.get, reverse=True)
    best, second = scores[ranked[0]], scores[ranked[1]]
    if not np.abs(ntwk.s).max() >= 1e-6:  # grid.TRANSMISSION_FLOOR (grid imports nothing from here)
        raise ChannelError(
            f"{ntwk.name or 'network'}: no port transmits to any other: every |S| stays below 1e-06 "
            "(-120 dB) at every frequency (an all-zero file)"
        )
    if best < 0.3 or best < 2.0 * second:
        pretty = ", ".join(f"{k}: {v:.3f}" for k, v in scores.items())
        raise ChannelError(
            f"{ntwk.name or 'network'}: cannot tell the port order from the low-frequency "
            f"transmission (mean |S| of the through paths {pretty}); a crosstalk file has no "
            "through path: load it as an aggressor of its through file, or pass thru='12_34', "
            "'13_24' or '14_23'"
        )
    return PORT_ORDERS[ranked[0]], scores


# --------------------------------------------------------------------- multi-port files
@dataclass(frozen=True)
class Lane:
    """One differential lane of a multi-port file (0-based ports).

    ``near`` is the (p, n) pair at the input end, ``far`` the pair at the output end.
    """

    near: tuple[int, int]
    far: tuple[int, int]
    name: str = ""


_PN = re.compile(r"^(?P<base>.*?)[\s_.\-]*(?P<pol>p|n|pos|neg|\+|-|plus|minus)$", re.IGNORECASE)


def pairs_from_names(names: Sequence[str]) -> list[tuple[int, int, str]]:
    """Group port names such as ``TX1_P``/``TX1_N`` into differential pairs.

    Returns ``[(p_port, n_port, base_name), ...]`` with 0-based ports, or raises
    :class:`ChannelError` when the names do not pair up.
    """
    groups: dict[str, dict[str, int]] = {}
    for i, raw in enumerate(names):
        m = _PN.match(raw.strip())
        if not m or not m.group("base"):
            raise ChannelError(
                f"port {i + 1} name {raw!r} does not end in a polarity (P/N, +/-): "
                "cannot tell which ports form a differential pair; pass pairs=..."
            )
        pol = "p" if m.group("pol").lower() in {"p", "pos", "+", "plus"} else "n"
        base = m.group("base").strip().lower()
        if pol in groups.setdefault(base, {}):
            raise ChannelError(f"two ports are named as the {pol.upper()} side of pair {base!r}")
        groups[base][pol] = i
    pairs = []
    for base, g in groups.items():
        if set(g) != {"p", "n"}:
            raise ChannelError(f"pair {base!r} has only its {'/'.join(g).upper()} side in the port names")
        pairs.append((g["p"], g["n"], base))
    pairs.sort(key=lambda t: min(t[0], t[1]))
    return pairs


def _sdd(s: np.ndarray, a: tuple[int, int], b: tuple[int, int]) -> np.ndarray:
    """Differential transmission from pair ``b`` into pair ``a`` (single-ended S array)."""
    (ap, an), (bp, bn) = a, b
    return 0.5 * (s[..., ap, bp] - s[..., ap, bn] - s[..., an, bp] + s[..., an, bn])


def match_lanes(ntwk: rf.Network, pairs: Sequence[tuple[int, int, str]]) -> list[Lane]:
    """Match differential pairs into lanes by their low-frequency transmission.

    The end holding the lower port number is the lane's near (input) end.
    """
    band = _low_band(ntwk.f)
    s = ntwk.s[band]
    k = len(pairs)
    if k < 2 or k % 2:
        raise ChannelError(f"{k} differential pairs cannot form lanes (need an even number >= 2)")
    t = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                t[i, j] = np.abs(_sdd(s, pairs[i][:2], pairs[j][:2])).mean()
    lanes: list[Lane] = []
    free = set(range(k))
    while free:
        i, j = max(((i, j) for i in free for j in free if i < j), key=lambda ij: t[ij])
        if t[i, j] < 0.3:
            raise ChannelError(
                f"pairs {pairs[i][2]!r} and {pairs[j][2]!r} are the best remaining match but "
                f"carry only |Sdd| = {t[i, j]:.3f} at low frequency: no through path; pass pairs=..."
            )
        a, b = sorted((pairs[i], pairs[j]), key=lambda p: min(p[0], p[1]))
        lanes.append(Lane((a[0], a[1]), (b[0], b[1]), f"{a[2]}->{b[2]}"))
        free -= {i, j}
    lanes.sort(key=lambda ln: min(ln.near))
    return lanes
