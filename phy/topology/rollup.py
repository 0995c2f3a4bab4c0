"""A topology rolled up: each link class evaluated once per length bucket, then the
bandwidth (per accelerator, aggregate, bisection), latency (typical and worst, by term),
power, cables and failing links (:class:`TopologyReport`), and the alpha-beta time of
collectives."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import Topology
from .parts import Accelerator, LinkClass

__all__ = ["TopologyReport", "collective_time_s", "rollup"]


def collective_time_s(kind: str, size_bytes: float, p: int, alpha_s: float, bandwidth_bps: float) -> float:
    """Alpha-beta time of a collective among ``p`` accelerators (s).

    ``size_bytes`` is each accelerator's buffer, ``alpha_s`` the accelerator-to-accelerator
    latency, ``bandwidth_bps`` each accelerator's bandwidth per direction (B/s). Formulas
    (Thakur, Rabenseifner and Gropp 2005 for ring and binomial tree):

    * ``ring`` all-reduce: ``2 (p-1) alpha + 2 (p-1)/p S/B``
    * ``tree`` all-reduce (binomial reduce then broadcast): ``2 ceil(log2 p) (alpha + S/B)``
    * ``switch`` all-reduce (reduction in the switch): ``alpha + S/B``
    * ``all_to_all`` (switched, full bisection): ``alpha + (p-1)/p S/B``
    * ``all_gather`` / ``reduce_scatter`` (ring): ``(p-1) alpha + (p-1)/p S/B``
    """
    S = number(size_bytes, "size_bytes", nonneg=True)
    p = integer(p, "p", 1)
    a = number(alpha_s, "alpha_s", nonneg=True)
    B = number(bandwidth_bps, "bandwidth_bps", positive=True)
    if p == 1:
        return 0.0
    if kind == "ring":
        return 2 * (p - 1) * a + 2 * (p - 1) / p * S / B
    if kind == "tree":
        return 2 * math.ceil(math.log2(p)) * (a + S / B)
    if kind == "switch":
        return a + S / B
    if kind == "all_to_all":
        return a + (p - 1) / p * S / B
    if kind in ("all_gather", "reduce_scatter"):
        return (p - 1) * a + (p - 1) / p * S / B
    raise ConfigError(f"unknown collective {kind!r}: ring, tree, switch, all_to_all, all_gather, reduce_scatter")


@dataclass(frozen=True)
class TopologyReport:
    """A topology rolled up (bytes/s per direction unless named otherwise).

    Attributes
    ----------
    accel_bandwidth_bps : float
        Per accelerator, per direction, through its links to the fabric (minimum over
        accelerators; ``accel_bandwidth_mean_bps`` the mean).
    aggregate_bandwidth_bps : float
        All accelerators, both directions.
    bisection_bandwidth_bps : float
        Per direction across the worst cut into two halves of accelerators.
    cables : int
        Differential pairs (copper) or fibres: links x lanes x 2 directions.
    cable_length_m : float
        Their total length.
    link_power_w : float
    latency_s : dict
        Per path (``local``, ``remote``): one-way accelerator-to-accelerator latency of the
        typical route; ``latency_breakdown_s`` its terms.
    failing : list
        Link classes and lengths that miss their BER target, with the reason.
    """

    name: str
    accelerator: Accelerator
    n_accelerators: int
    n_switches: dict
    accel_bandwidth_bps: float
    accel_bandwidth_mean_bps: float
    aggregate_bandwidth_bps: float
    bisection_bandwidth_bps: float
    links: int
    cables: int
    cable_length_m: float
    cables_by_class: dict
    link_power_w: float
    latency_s: dict
    latency_breakdown_s: dict
    worst_latency_s: dict
    failing: list
    link_reports: dict
    notes: list = field(default_factory=list)

    @property
    def alpha_s(self) -> float:
        """The accelerator-to-accelerator latency of the farthest route (collectives' alpha)."""
        return self.latency_s["remote"]

    def collective_s(self, kind: str, size_bytes: float, p: int | None = None) -> float:
        """:func:`collective_time_s` on this fabric (all accelerators by default)."""
        return collective_time_s(kind, size_bytes, p or self.n_accelerators, self.alpha_s, self.accel_bandwidth_bps)

    def to_dict(self) -> dict:
        from ..link.report import _plain

        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["accelerator"] = self.accelerator.to_dict()
        d["alpha_s"] = self.alpha_s
        return _plain(d)


def _buckets(cls: LinkClass, lengths: np.ndarray) -> np.ndarray:
    if cls.fixed is not None:
        return np.round(lengths, 9)
    r = cls.resolution_m
    return np.round(np.ceil(lengths / r - 1e-9) * r, 9)


def rollup(topo: Topology) -> TopologyReport:
    """Bandwidth, latency, power, cables and failing links of ``topo``."""
    if not isinstance(topo, Topology):
        raise ConfigError(f"rollup needs a Topology, got {type(topo).__name__}")
    n = topo.n_accelerators
    ev = _Evaluated(topo)
    _check_port_rates(topo, ev.payload)
    acc_end = np.where(topo.src < n, topo.src, topo.dst)
    lvl0 = topo.level == 0
    per_acc = np.bincount(acc_end[lvl0], weights=ev.usable[lvl0], minlength=n)
    # bisection: half the accelerators' bandwidth, or half of what crosses above level 0
    bis = float(np.sort(per_acc)[: n // 2].sum()) if n > 1 else 0.0
    if (~lvl0).any():
        bis = min(bis, float(ev.usable[~lvl0].sum()) / 2)
    cables = ev.lanes * 2
    lat, brk, worst = {}, {}, {}
    for name, (levels, tiers) in topo.paths.items():
        lat[name], brk[name] = _route(topo, ev, levels, tiers, _median)
        worst[name], _ = _route(topo, ev, levels, tiers, lambda x: int(np.argmax(x)))
    notes = list(topo.notes)
    if ev.failing:
        notes.append("links that miss their target carry no bandwidth in these figures")
    return TopologyReport(
        name=topo.name, accelerator=topo.accelerator, n_accelerators=n, n_switches={t.name: t.count for t in topo.tiers},
        accel_bandwidth_bps=float(per_acc.min()), accel_bandwidth_mean_bps=float(per_acc.mean()),
        aggregate_bandwidth_bps=float(per_acc.sum() * 2), bisection_bandwidth_bps=bis,
        links=topo.n_links, cables=int(cables.sum()), cable_length_m=float((cables * topo.length_m).sum()),
        cables_by_class=_cables_by_class(topo, cables), link_power_w=float(ev.power.sum()), latency_s=lat,
        latency_breakdown_s=brk, worst_latency_s=worst, failing=ev.failing, link_reports=ev.reports, notes=notes,
    )


class _Evaluated:
    """Each link's figures, from its class evaluated once per length bucket: usable and
    payload bandwidth per direction (B/s), latency, power, lanes, and its report."""

    def __init__(self, topo: Topology):
        L = topo.n_links
        self.usable, self.payload = np.zeros(L), np.zeros(L)
        self.latency, self.power, self.lanes = np.zeros(L), np.zeros(L), np.zeros(L)
        self.rep_index = np.zeros(L, dtype=np.int64)
        self.rep_list, self.reports, self.failing = [], {}, []
        for c, cls in enumerate(topo.classes):
            sel = np.flatnonzero(topo.link_class == c)
            if not sel.size:
                continue
            ub, inv = np.unique(_buckets(cls, topo.length_m[sel]), return_inverse=True)
            for k, length in enumerate(ub):
                self._add(cls, float(length), sel[inv == k])

    def _add(self, cls: LinkClass, length: float, idx: np.ndarray) -> None:
        r = cls.report(length)
        self.rep_index[idx] = len(self.rep_list)
        self.rep_list.append(r)
        self.reports[f"{cls.name} {length:g} m"] = {"passes": r.passes, "latency_s": r.latency_s,
                                                    "usable_bps": r.usable_bandwidth_bps, "power_w": r.power_w}
        self.usable[idx] = r.usable_bandwidth_bps / 8
        self.payload[idx] = r.rate_chain["payload_bps"] / 8
        self.latency[idx] = r.latency_s
        self.power[idx] = r.power_w
        self.lanes[idx] = r.lanes
        if not r.passes:
            self.failing.append({"class": cls.name, "length_m": length, "cables": int(idx.size),
                                 "reasons": list(r.reasons)})


def _check_port_rates(topo: Topology, payload: np.ndarray) -> None:
    """A link may not carry more than its switch ports."""
    n = topo.n_accelerators
    off = n
    for t in topo.tiers:
        on = ((topo.src >= off) & (topo.src < off + t.count)) | ((topo.dst >= off) & (topo.dst < off + t.count))
        if np.any(payload[on] * 8 > t.asic.port_rate_bps * (1 + 1e-9)):
            worst = float(payload[on].max() * 8)
            raise ConfigError(f"a link carries {worst / 1e9:g} Gb/s per direction into a {t.asic.name} port of "
                              f"{t.asic.port_rate_bps / 1e9:g} Gb/s")
        off += t.count


def _cables_by_class(topo: Topology, cables: np.ndarray) -> dict:
    by_class = {}
    for c, cls in enumerate(topo.classes):
        sel = topo.link_class == c
        if sel.any():
            by_class[cls.name] = {"links": int(sel.sum()), "cables": int(cables[sel].sum()),
                                  "length_m": float((cables[sel] * topo.length_m[sel]).sum()),
                                  "min_length_m": float(topo.length_m[sel].min()),
                                  "max_length_m": float(topo.length_m[sel].max())}
    return by_class


def _median(x: np.ndarray) -> int:
    return int(np.argsort(x)[x.size // 2])


def _route(topo: Topology, ev: _Evaluated, levels, tiers, pick) -> tuple[float, dict]:
    """Latency (s) of a path crossing a link of each of ``levels`` (the one ``pick`` chooses
    among them by latency) and a switch of each of ``tiers``, with its breakdown."""
    total = 0.0
    parts: dict = {}
    for lv in levels:
        sel = np.flatnonzero(topo.level == lv)
        if not sel.size:
            raise ConfigError(f"route crosses level {lv}, which has no links")
        i = sel[pick(ev.latency[sel])]
        r = ev.rep_list[ev.rep_index[i]]
        for k, v in r.latency_breakdown_s.items():
            parts[k] = parts.get(k, 0.0) + v
        total += r.latency_s
    for t in tiers:
        parts["switch"] = parts.get("switch", 0.0) + topo.tiers[t].asic.latency_s
        total += topo.tiers[t].asic.latency_s
    return total, parts
