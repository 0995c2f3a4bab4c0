"""A topology rolled up: each link class evaluated once per length bucket, then the
bandwidth (per accelerator, aggregate, bisection), power, cables and failing links, and the
latency layer by layer (:class:`TopologyReport`): the PHY floor, a small transfer's one
way, a remote read's round trip, both under load, and the collectives on the fabric
(:mod:`phy.latency`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._procs import fork_map
from .._validate import number
from ..errors import ConfigError
from ..latency import (
    Collectives,
    bytes_in_flight,
    collective_time_s,
    one_way,
    round_trip,
)
from ._aliases import add_aliases, with_key_aliases
from .fabric import Topology
from .parts import Accelerator, LinkClass
from .power import FabricPower, fabric_power

__all__ = ["UTILISATIONS", "TopologyReport", "collective_time_s", "rollup"]

#: The switch loads the report's tail latencies are given at.
UTILISATIONS = (0.3, 0.7, 0.9)
#: The most switch loads one roll-up takes (each costs a loaded one-way stack per route).
MAX_UTILISATIONS = 64
#: The most link evaluations (:func:`phy.evaluate_link`, up to seconds each) one roll-up
#: may need beyond those its classes have cached: a topology whose lengths fall in more
#: buckets is refused before any is evaluated (coarsen the classes' ``resolution_m``).
MAX_EVALUATIONS = 256


@dataclass(frozen=True)
class TopologyReport:
    """A topology rolled up (bytes/s per direction unless named otherwise).

    Attributes
    ----------
    accel_bandwidth_bytes_per_s : float
        Per accelerator, per direction, through its links to the fabric, in bytes/s
        (minimum over accelerators; ``accel_bandwidth_mean_bytes_per_s`` the mean).
    aggregate_bandwidth_bytes_per_s : float
        All accelerators, both directions (bytes/s).
    bisection_bandwidth_bytes_per_s : float
        Per direction across the worst cut into two halves of accelerators (bytes/s).
    cables : int
        Differential pairs (copper) or fibres: links x lanes x 2 directions.
    cable_length_m : float
        Their total length.
    link_power_w : float
    phy_floor_s : dict
        Per path (``local``, ``remote``): the links' one-way latency and the switches'
        port-to-port latency of the typical route, nothing above the links (the floor no
        application sees); ``phy_floor_breakdown_s`` its terms, ``worst_phy_floor_s`` the
        farthest route's.
    one_way : dict
        Per path: a small transfer (8 bytes) from one accelerator's core to another's
        memory, every layer (:func:`phy.latency.one_way`).
    round_trip : dict
        Per path: a 64-byte read of the remote accelerator's memory
        (:func:`phy.latency.round_trip`).
    loaded_s : dict
        Per path and switch utilisation (:data:`UTILISATIONS`): the one-way transfer's
        mean and quantiles with every switch port an M/D/1 queue at that load.
    collectives : phy.latency.Collectives
        Collectives on the ``remote`` route (:meth:`collective`), NCCL's tuner counting the
        accelerators' links.
    failing : list
        Link classes and lengths that miss their BER target, with the reason.
    power : FabricPower
        Every watt of the fabric (:mod:`phy.topology.power`): SerDes at both ends, retimers,
        modules, switch cores; per accelerator, per rack, each rack with its accelerators.
        ``link_power_w`` is the links' part (the switch cores excluded).
    links_per_accelerator : int
        The fewest links an accelerator has to the fabric (its level-0 links).

    The four bandwidths' old names ending ``_bps`` (``accel_bandwidth_bps``, ...) are
    deprecated aliases, kept one release: they hold bytes/s, and ``_bps`` means bits/s.
    """

    name: str
    accelerator: Accelerator
    n_accelerators: int
    n_switches: dict
    accel_bandwidth_bytes_per_s: float
    accel_bandwidth_mean_bytes_per_s: float
    aggregate_bandwidth_bytes_per_s: float
    bisection_bandwidth_bytes_per_s: float
    links: int
    cables: int
    cable_length_m: float
    cables_by_class: dict
    link_power_w: float
    phy_floor_s: dict
    phy_floor_breakdown_s: dict
    worst_phy_floor_s: dict
    one_way: dict
    round_trip: dict
    loaded_s: dict
    collectives: Collectives
    failing: list
    link_reports: dict
    notes: list = field(default_factory=list)
    power: FabricPower | None = None
    links_per_accelerator: int = 0

    @property
    def alpha_s(self) -> float:
        """The per-step latency of a collective on the farthest route: a small transfer
        every layer up, and the receiver's poll (:attr:`phy.latency.Collectives.alpha_s`)."""
        return self.collectives.alpha_s

    def collective(self, kind: str, size_bytes: float, p: int | None = None, **kw):
        """:meth:`phy.latency.Collectives.time` on this fabric (all accelerators by
        default): the algorithm and protocol NCCL picks (or those given), with each layer's
        share."""
        return self.collectives.time(kind, size_bytes, p or self.n_accelerators, **kw)

    def collective_s(self, kind: str, size_bytes: float, p: int | None = None, **kw) -> float:
        """The seconds of :meth:`collective`."""
        return self.collective(kind, size_bytes, p, **kw).time_s

    def bytes_in_flight(self, path: str = "remote", bandwidth_bytes_per_s: float | None = None) -> float:
        """What an accelerator must keep requested and not yet received to stream another's
        memory at ``bandwidth_bytes_per_s`` (default: its full link bandwidth) over
        ``path``: bandwidth x the read's round trip (Little's law), the latency tolerance
        its outstanding requests (its occupancy) must provide."""
        if path not in self.round_trip:
            raise ConfigError(f"no route {path!r}; the report has {', '.join(self.round_trip)}")
        bw = self.accel_bandwidth_bytes_per_s if bandwidth_bytes_per_s is None else bandwidth_bytes_per_s
        return bytes_in_flight(bw, self.round_trip[path].total_s)

    def latency_table(self, path: str = "remote") -> str:
        """The PHY floor, the one-way transfer and the remote read of ``path``, layer by
        layer, for a terminal."""
        if path not in self.one_way:
            raise ConfigError(f"no route {path!r}; the report has {', '.join(self.one_way)}")
        ow, rt = self.one_way[path], self.round_trip[path]
        small = self.collective("all_reduce", 8.0)
        rows = [f"{self.name} {path}: PHY floor {self.phy_floor_s[path] * 1e9:.1f} ns, one way "
                f"{ow.total_s * 1e9:.1f} ns, remote read {rt.total_s * 1e9:.1f} ns, 8-byte all-reduce over "
                f"{self.n_accelerators} {small.time_s * 1e6:.2f} us ({small.algorithm}, {small.protocol})",
                ow.table(), rt.table(),
                f"  streaming {self.accel_bandwidth_bytes_per_s / 1e9:.1f} GB/s from remote memory keeps "
                f"{self.bytes_in_flight(path) / 1e6:.2f} MB in flight (bandwidth x read round trip)"]
        for u, d in self.loaded_s[path].items():
            rows.append(f"  one way at {100 * u:.0f} % switch load: mean {d['mean'] * 1e9:.1f} ns, "
                        + ", ".join(f"{k} {v * 1e9:.1f}" for k, v in d.items() if k != "mean") + " ns")
        return "\n".join(rows)

    def to_dict(self) -> dict:
        from ..link.report import plain_json

        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["accelerator"] = self.accelerator.to_dict()
        d["one_way"] = {k: v.to_dict() for k, v in self.one_way.items()}
        d["round_trip"] = {k: v.to_dict() for k, v in self.round_trip.items()}
        d["loaded_s"] = {k: {str(u): q for u, q in v.items()} for k, v in self.loaded_s.items()}
        d["collectives"] = self.collectives.to_dict()
        d["alpha_s"] = self.alpha_s
        d["power"] = None if self.power is None else self.power.to_dict()
        return plain_json(with_key_aliases(d, _BPS_ALIASES))


#: The deprecated names (bytes/s under a bits/s suffix) and their replacements.
_BPS_ALIASES = {"accel_bandwidth_bps": "accel_bandwidth_bytes_per_s",
                "accel_bandwidth_mean_bps": "accel_bandwidth_mean_bytes_per_s",
                "aggregate_bandwidth_bps": "aggregate_bandwidth_bytes_per_s",
                "bisection_bandwidth_bps": "bisection_bandwidth_bytes_per_s"}
add_aliases(TopologyReport, _BPS_ALIASES)


def _buckets(cls: LinkClass, lengths: np.ndarray) -> np.ndarray:
    if cls.fixed is not None:
        return np.round(lengths, 9)
    r = cls.resolution_m
    return np.round(np.ceil(lengths / r - 1e-9) * r, 9)


def rollup(topo: Topology, *, utilisations=UTILISATIONS, workers: int | None = 1) -> TopologyReport:
    """Bandwidth, latency (layer by layer, and at each switch load of ``utilisations``),
    power, cables and failing links of ``topo``.

    Each link class is evaluated once per length bucket (at most :data:`MAX_EVALUATIONS`
    not yet cached, checked before the first); ``workers`` evaluates the buckets
    in that many forked processes (None: one per core; :func:`phy._procs.fork_map`), with
    the same reports as one process (``linkmodel rack`` and the demo use every core). Keep 1
    inside threads (forking a threaded process can deadlock) and inside sweep workers.

    Parameters
    ----------
    topo : Topology
        The fabric rolled up.
    utilisations : float or sequence of float, optional
        Switch loads, each in [0, 0.999], at which the loaded latency is given (default
        :data:`UTILISATIONS`; at most :data:`MAX_UTILISATIONS`).
    workers : int or None, optional
        Processes evaluating the link buckets (default 1; None: one per core).

    Returns
    -------
    TopologyReport
        Bandwidth (bytes/s), latency, power, cables, failing links and collectives.
    """
    if not isinstance(topo, Topology):
        raise ConfigError(f"rollup needs a Topology, got {type(topo).__name__}")
    loads = tuple(utilisations) if not isinstance(utilisations, (int, float)) else (utilisations,)
    if len(loads) > MAX_UTILISATIONS:
        raise ConfigError(f"rollup takes at most {MAX_UTILISATIONS} utilisations, got {len(loads)}")
    loads = tuple(number(u, "utilisation", nonneg=True, hi=0.999) for u in loads)
    n = topo.n_accelerators
    ev = _Evaluated(topo, workers)
    _check_port_rates(topo, ev.payload)
    acc_end = np.where(topo.src < n, topo.src, topo.dst)
    lvl0 = topo.level == 0
    per_acc = np.bincount(acc_end[lvl0], weights=ev.usable[lvl0], minlength=n)
    # bisection: half the accelerators' bandwidth, or half of what crosses above level 0
    bis = float(np.sort(per_acc)[: n // 2].sum()) if n > 1 else 0.0
    if (~lvl0).any():
        bis = min(bis, float(ev.usable[~lvl0].sum()) / 2)
    cables = ev.lanes * 2
    acc = topo.accelerator
    floor, brk, worst, ow, rt, loaded = {}, {}, {}, {}, {}, {}
    for name, (levels, tiers) in topo.paths.items():
        floor[name], brk[name], reports, asics = _route(topo, ev, levels, tiers, _median)
        worst[name] = _route(topo, ev, levels, tiers, lambda x: int(np.argmax(x)))[0]
        ow[name] = one_way(reports, asics, acc.endpoint, name=f"{topo.name} {name}: one way, 8 B")
        rt[name] = round_trip(reports, asics, acc.endpoint, memory=acc.memory,
                              name=f"{topo.name} {name}: remote read, 64 B from {acc.memory.name}")
        loaded[name] = {}
        for u in loads:
            st = one_way(reports, asics, acc.endpoint, utilisation=u)
            loaded[name][u] = {"mean": st.total_s, **st.quantiles_s}
    notes = list(topo.notes)
    if ev.failing:
        notes.append("links that miss their target carry no bandwidth in these figures")
    notes.append(f"endpoint {acc.endpoint.name!r} and software {acc.software.name!r} of the {acc.name}: "
                 "phy.latency.Endpoint and Software give their sources (the software's two constants are fitted)")
    power = fabric_power(topo, ev)
    notes.extend(power.notes)
    path = "remote" if "remote" in ow else next(iter(ow))
    col = Collectives(ow[path], float(per_acc.min()) if per_acc.min() > 0 else float(per_acc.max() or 1.0),
                      acc.endpoint, acc.software, rt[path], name=topo.name,
                      links=max(1, min(64, int(np.bincount(acc_end[lvl0], minlength=n).min()))))
    return TopologyReport(
        name=topo.name, accelerator=acc, n_accelerators=n, n_switches={t.name: t.count for t in topo.tiers},
        accel_bandwidth_bytes_per_s=float(per_acc.min()), accel_bandwidth_mean_bytes_per_s=float(per_acc.mean()),
        aggregate_bandwidth_bytes_per_s=float(per_acc.sum() * 2), bisection_bandwidth_bytes_per_s=bis,
        links=topo.n_links, cables=int(cables.sum()), cable_length_m=float((cables * topo.length_m).sum()),
        cables_by_class=_cables_by_class(topo, cables), link_power_w=float(ev.power.sum()), phy_floor_s=floor,
        phy_floor_breakdown_s=brk, worst_phy_floor_s=worst, one_way=ow, round_trip=rt, loaded_s=loaded,
        collectives=col, failing=ev.failing, link_reports=ev.reports, notes=notes, power=power,
        links_per_accelerator=int(np.bincount(acc_end[lvl0], minlength=n).min()),
    )


class _Evaluated:
    """Each link's figures, from its class evaluated once per length bucket: usable and
    payload bandwidth per direction (B/s), latency, power, lanes, and its report."""

    def __init__(self, topo: Topology, workers: int | None = 1):
        L = topo.n_links
        self.usable, self.payload = np.zeros(L), np.zeros(L)
        self.latency, self.power, self.lanes = np.zeros(L), np.zeros(L), np.zeros(L)
        self.rep_index = np.zeros(L, dtype=np.int64)
        self.rep_list, self.reports, self.failing = [], {}, []
        todo = []
        for c, cls in enumerate(topo.classes):
            sel = np.flatnonzero(topo.link_class == c)
            if not sel.size:
                continue
            ub, inv = np.unique(_buckets(cls, topo.length_m[sel]), return_inverse=True)
            order = np.argsort(inv, kind="stable")  # each bucket's links, in one pass
            groups = np.split(sel[order], np.cumsum(np.bincount(inv, minlength=ub.size))[:-1])
            todo += [(cls, float(length), idx) for length, idx in zip(ub, groups)]
        # the buckets not yet evaluated, on several cores (each class keeps its reports)
        pending = list({(id(cls), cls.bucket(length)): (cls, length) for cls, length, _ in todo
                        if cls.fixed is None and cls.bucket(length) not in cls._cache}.values())
        if len(pending) > MAX_EVALUATIONS:
            names = sorted({cls.name for cls, _ in pending})
            raise ConfigError(f"{topo.name}: its cable lengths need {len(pending)} link evaluations "
                              f"({', '.join(names)}), over the {MAX_EVALUATIONS} a roll-up may run; coarsen the "
                              "link classes' resolution_m (refused before any evaluation)")
        if workers != 1 and len(pending) > 1:
            for (cls, length), rep in zip(pending, fork_map(lambda job: job[0].report(job[1]), pending, workers)):
                cls._cache[cls.bucket(length)] = rep
        for cls, length, idx in todo:
            self._add(cls, length, idx)

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


def _route(topo: Topology, ev: _Evaluated, levels, tiers, pick) -> tuple[float, dict, list, list]:
    """PHY floor (s) of a path crossing a link of each of ``levels`` (the one ``pick``
    chooses among them by latency) and a switch of each of ``tiers``, its breakdown, and
    the link reports and switch ASICs crossed."""
    total = 0.0
    parts: dict = {}
    reports, asics = [], []
    for lv in levels:
        sel = np.flatnonzero(topo.level == lv)
        if not sel.size:
            raise ConfigError(f"route crosses level {lv}, which has no links")
        i = sel[pick(ev.latency[sel])]
        r = ev.rep_list[ev.rep_index[i]]
        reports.append(r)
        for k, v in r.latency_breakdown_s.items():
            parts[k] = parts.get(k, 0.0) + v
        total += r.latency_s
    for t in tiers:
        a = topo.tiers[t].asic
        asics.append(a)
        parts["switch"] = parts.get("switch", 0.0) + a.latency_s
        total += a.latency_s
    return total, parts, reports, asics
