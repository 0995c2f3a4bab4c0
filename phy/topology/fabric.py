"""Topologies built from links: nodes and links as arrays, and the rack geometry their
cable lengths come from (the builders are :mod:`phy.topology.builders`, the roll-up
:mod:`phy.topology.rollup`).

A :class:`Topology` is a set of nodes (accelerators first, then the switch ASICs of
each tier) and links held as arrays (ends, length, link class, level), so that a
10,000-accelerator domain rolls up in array arithmetic. Each link class is evaluated by
:func:`phy.evaluate_link` once per length bucket; :func:`rollup` then gives the
bandwidth, latency, power, cable and collective figures (:class:`TopologyReport`).

Geometry: trays sit in a rack at 1U pitch (44.45 mm, EIA-310); a cable runs from the
tray's connector to the rack's spine (``tray_run_m`` at each end, an assumption) plus the
vertical distance between the two trays. Racks stand in a row at ``rack_pitch_m``
(600 mm racks); a cable between racks runs up to an overhead tray, along it and down
(``overhead_m`` in all, an assumption).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import integer
from ..errors import ConfigError
from .parts import Accelerator, LinkClass, SwitchAsic

__all__ = ["BYTES_FIXED", "BYTES_PER_LINK", "BYTES_PER_NODE", "MAX_TOPOLOGY_BYTES", "RACK_UNIT_M", "SwitchTier",
           "Topology", "check_size", "estimate_bytes"]

RACK_UNIT_M = 0.04445  # EIA-310

#: Bytes one link costs at the peak of building and rolling up a topology: its five arrays
#: here (40 B), the builders' temporaries, the roll-up's per-link figures, power terms and
#: masks. Measured (tracemalloc) 0.2 to 0.6 kB beyond the fixed part on scale-out networks
#: of 10,000 to 100,000 accelerators; 1 kB leaves a margin.
BYTES_PER_LINK = 1024
#: Bytes one node (accelerator, switch ASIC or rack) costs: its port count, rack, power
#: and bandwidth sums, rounded up.
BYTES_PER_NODE = 128
#: Bytes a roll-up takes whatever the size: the latency distributions under load (measured
#: 24 MB), rounded up.
BYTES_FIXED = 32 * 2**20
#: The most memory a topology may take to build and roll up (bytes): 2 GiB, about two
#: million links (a 10,000-GPU two-tier domain has about 360,000). Every builder counts its
#: links and nodes in closed form and refuses a larger domain before allocating anything
#: (:func:`check_size`), so no accepted input runs away.
MAX_TOPOLOGY_BYTES = 2 * 2**30


def estimate_bytes(links: int, nodes: int) -> int:
    """The memory (bytes) building and rolling up ``links`` links and ``nodes`` nodes takes
    at most: :data:`BYTES_FIXED` plus :data:`BYTES_PER_LINK` and :data:`BYTES_PER_NODE`
    each."""
    return BYTES_FIXED + int(links) * BYTES_PER_LINK + int(nodes) * BYTES_PER_NODE


def check_size(what: str, links: int, nodes: int) -> None:
    """:class:`phy.ConfigError` when ``links`` links and ``nodes`` nodes (counted before any
    array is made) would take more than :data:`MAX_TOPOLOGY_BYTES` to build and roll up
    (:func:`estimate_bytes`); ``what`` names the call."""
    need = estimate_bytes(links, nodes)
    if need > MAX_TOPOLOGY_BYTES:
        raise ConfigError(
            f"{what}: {int(links):,} links and {int(nodes):,} nodes would take about {_gib(need)} to build and roll "
            f"up, over the {_gib(MAX_TOPOLOGY_BYTES)} limit (phy.topology.fabric.MAX_TOPOLOGY_BYTES, about "
            f"{(MAX_TOPOLOGY_BYTES - BYTES_FIXED) // BYTES_PER_LINK:,} links); refused before any work")


def _gib(b: int) -> str:
    g = b / 2**30
    return f"{g:,.0f} GiB" if g >= 10 else f"{g:.2g} GiB"


@dataclass(frozen=True)
class SwitchTier:
    """``count`` switch ASICs of one tier."""

    name: str
    asic: SwitchAsic
    count: int

    def __post_init__(self):
        if not isinstance(self.asic, SwitchAsic):
            raise ConfigError(f"SwitchTier {self.name!r} asic must be a SwitchAsic")
        integer(self.count, f"SwitchTier {self.name!r} count", 1)


@dataclass(frozen=True, eq=False)
class Topology:
    """Nodes and links of a domain.

    Node ids: accelerators ``0 .. n_accelerators - 1``, then each tier's switches in
    order. Links are arrays of equal length: ``src`` and ``dst`` (node ids), ``length_m``,
    ``link_class`` (index into ``classes``) and ``level`` (0: accelerator to its first
    switch; 1, 2: between tiers, or between peer switches). ``paths`` names the routes an
    accelerator's traffic takes, each as (levels of the links crossed, tiers of the
    switches crossed): ``"local"`` (nearest) and ``"remote"`` (farthest).

    A topology larger than :data:`MAX_TOPOLOGY_BYTES` takes to roll up (about two million
    links) is refused (:func:`check_size`), so a roll-up of any accepted one is bounded.
    """

    name: str
    accelerator: Accelerator
    n_accelerators: int
    tiers: tuple
    classes: tuple
    src: np.ndarray
    dst: np.ndarray
    length_m: np.ndarray
    link_class: np.ndarray
    level: np.ndarray
    paths: dict
    notes: tuple = ()
    rack_of: np.ndarray | None = None

    def __post_init__(self):
        n = integer(self.n_accelerators, "n_accelerators", 1)
        for t in self.tiers:
            if not isinstance(t, SwitchTier):
                raise ConfigError(f"Topology tiers must be SwitchTier, got {type(t).__name__}")
        nodes = n + sum(t.count for t in self.tiers)
        check_size(f"Topology {self.name!r}", np.size(self.src), nodes)
        racks = np.zeros(nodes, dtype=np.int64) if self.rack_of is None else np.asarray(self.rack_of)
        if (racks.shape != (nodes,) or racks.dtype.kind not in "iu"
                or (racks.size and (racks.min() < 0 or racks.max() >= nodes))):
            raise ConfigError(f"Topology.rack_of must give a rack index from 0 to {nodes - 1} (at most a rack per "
                              f"node) for each of the {nodes} nodes")
        object.__setattr__(self, "rack_of", racks.astype(np.int64))
        if not isinstance(self.accelerator, Accelerator):
            raise ConfigError("Topology.accelerator must be an Accelerator")
        for c in self.classes:
            if not isinstance(c, LinkClass):
                raise ConfigError(f"Topology classes must be LinkClass, got {type(c).__name__}")
        arrays = [np.asarray(getattr(self, k)) for k in ("src", "dst", "length_m", "link_class", "level")]
        if len({a.size for a in arrays}) != 1:
            raise ConfigError("Topology link arrays must have one length")
        if np.any(~np.isfinite(self.length_m)) or np.any(self.length_m <= 0):
            raise ConfigError("every cable needs a positive, finite length")
        nodes = n + sum(t.count for t in self.tiers)
        if arrays[0].size and (min(arrays[0].min(), arrays[1].min()) < 0 or max(arrays[0].max(), arrays[1].max()) >= nodes):
            raise ConfigError("a link names a node that does not exist")
        # ports: every link takes one port at each switch end
        use = np.bincount(np.concatenate([self.src, self.dst]), minlength=nodes)
        off = n
        for t in self.tiers:
            u = use[off:off + t.count]
            if u.size and u.max() > t.asic.radix:
                i = int(np.argmax(u))
                raise ConfigError(
                    f"more links than switch ports: {t.name} switch {i} has {int(u.max())} links, "
                    f"its {t.asic.name} has {t.asic.radix} ports")
            off += t.count

    @property
    def n_nodes(self) -> int:
        return self.n_accelerators + sum(t.count for t in self.tiers)

    @property
    def n_racks(self) -> int:
        """Racks holding at least one node, counted as ``max(rack_of) + 1``."""
        return int(self.rack_of.max()) + 1 if self.rack_of.size else 1

    @property
    def n_links(self) -> int:
        return int(self.src.size)

    def tier_of(self, node: int) -> int:
        """-1 for an accelerator, else the index of the node's switch tier."""
        if node < self.n_accelerators:
            return -1
        off = self.n_accelerators
        for i, t in enumerate(self.tiers):
            if node < off + t.count:
                return i
            off += t.count
        raise ConfigError(f"node {node} does not exist")
