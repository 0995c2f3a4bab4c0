"""Reliability of a fabric: the parts each link is made of, their failure rates (FIT,
failures per 1e9 device-hours), the domain's expected link-down events, and the frames the
FEC cannot correct and the link layer replays (:func:`fabric_reliability`).

Counting rules (per link; ``L`` its lanes per direction, ``m`` a module's lanes,
``LinkClass.lanes_per_module``; the figures are expected values, so a module shared by
links is counted as the fraction each link uses, ``L / m`` at each end):

* passive copper: one cable assembly, two host connector mated pairs (one per end).
* AEC: the same and two retimer ICs (one in each plug).
* DSP and linear pluggables: ``2 L / m`` modules (one at each end), as many host connector
  mated pairs (the module's), ``2 L`` lasers times the lasers per lane (each end transmits
  on every lane), ``2 L`` fibres (parallel single-mode, one fibre per lane and direction,
  as DR-type modules; a WDM module would need fewer), each through the path's fibre
  connectors plus one mated pair at each module's port.
* CPO: ``2 L / m`` optical-engine shares, the external laser sources' lasers
  (``2 L`` lanes times the CPO lasers per lane), the fibres as above (the engine's fibre
  attach at each end), no pluggable host connector.

A failure is one link-down event. A module, an optical engine, or a laser feeding several
lanes takes down every link that shares it (``max(1, lanes served / L)`` links); a cable,
a connector contact, a retimer or a fibre connector takes down its own link. A switch ASIC
failure takes all its links down; the report counts those apart and adds them in
``interruptions_per_day``.

The rates (:class:`FitRates`, :mod:`phy.topology.fit_rates`): the optical parts are handbook
rates scaled by a field factor fitted to Alibaba HPN's link failures (checked against Llama
3's network interruptions), switches are HPN's field ToR crash rate, copper is a handbook
derivation without field basis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._validate import integer
from ..errors import ConfigError
from .fabric import Topology
from .field_data import HOURS_PER_DAY
from .fit_rates import HANDBOOK, OPTICAL_FIELD_FACTOR, PI_K, FitRates, per_link_units
from .parts import LinkClass

__all__ = ["COMPONENTS", "PI_K", "FitRates", "ReliabilityReport", "component_counts", "fabric_reliability"]

#: The component types counted (see the module docstring for the rules).
COMPONENTS = ("copper_cable", "host_connector", "retimer", "optical_module", "optical_engine", "laser",
              "fibre_connector")
DEFAULT_FRAME_BYTES = 64  # phy.Framing.ethernet(), LinkSpec's default framing
DEFAULT_PATH_CONNECTORS = 2  # OpticalClass.dsp_pluggable/lpo/cpo default: a connector at each end of the span
_per_link = per_link_units


_FACTS: dict = {}  # per link class: (the class, frame bytes, path connectors) from its spec


def _spec_facts(cls: LinkClass, bucket: float, report, need_frame: bool, need_path: bool
                ) -> tuple[int | None, int | None]:
    """The frame size (bytes) and the optical path's connectors of ``cls``, where needed:
    from the report when it carries them, else from ``cls.spec`` once per class (a copper
    class builds its channel: about 0.3 s, once); None for what neither gives."""
    fb = getattr(report, "frame_bytes", None) if need_frame else None
    pc = getattr(report, "fibre_connectors", None) if need_path else None
    if cls.spec is None or ((fb is not None or not need_frame) and (pc is not None or not need_path)):
        return fb, pc
    hit = _FACTS.get(id(cls))
    if hit is None or hit[0] is not cls:
        from channels.optical import OpticalConnector

        spec = cls.spec(bucket)
        path = None if spec.optics is None else spec.optics.path
        conns = None if path is None else sum(isinstance(e, OpticalConnector) for e in path.elements)
        hit = (cls, int(spec.framing.frame_bytes), conns)
        _FACTS[id(cls)] = hit
        if len(_FACTS) > 256:
            _FACTS.pop(next(iter(_FACTS)))
    return (hit[1] if need_frame and fb is None else fb), (hit[2] if need_path and pc is None else pc)


def _groups(topo: Topology):
    """Each link class's links grouped by length bucket: (class, bucket, links, report),
    the class evaluated once per bucket. A class made from a fixed report is one group:
    only its time of flight follows the length, and nothing here depends on it."""
    for c, cls in enumerate(topo.classes):
        sel = topo.link_class == c
        n = int(np.count_nonzero(sel))
        if not n:
            continue
        lengths = topo.length_m[sel]
        if cls.fixed is not None:
            L = float(lengths[0])
            yield cls, cls.bucket(L), n, cls.report(L)
            continue
        r = cls.resolution_m  # LinkClass.bucket's rounding, vectorised
        ub, k = np.unique(np.round(np.ceil(lengths / r - 1e-9) * r, 9), return_counts=True)
        for b, m in zip(ub.tolist(), k.tolist()):
            bucket = cls.bucket(b)
            yield cls, bucket, int(m), cls.report(bucket)


def _check_topology(topo) -> None:
    if not isinstance(topo, Topology):
        raise ConfigError(f"fabric reliability needs a phy.topology.Topology, got {type(topo).__name__}")


def component_counts(topo: Topology, fits: FitRates | None = None) -> dict:
    """Counts of each component (:data:`COMPONENTS`) in ``topo``, per link class and in
    total, by the rules of the module docstring: ``{"by_class": {name: {"kind", "links",
    "lanes", "lanes_per_module", "fibre_mates_per_fibre", component: count}}, "total":
    {component: count}}``. Module, engine and connector shares are fractional where links
    do not fill a module (expected values). ``fits`` supplies the lasers per lane and the
    fibre connectors (default :class:`FitRates`).

    Parameters
    ----------
    topo : Topology
        The fabric counted.
    fits : FitRates, optional
        Lasers per lane and fibre connectors (None: ``FitRates()``).

    Returns
    -------
    dict
        ``{"by_class": {...}, "total": {...}}`` as above.
    """
    _check_topology(topo)
    f = _fits(fits)
    return _count(topo, f, need_frame=False)[0]


def _fits(fits) -> FitRates:
    if fits is None:
        return FitRates()
    if not isinstance(fits, FitRates):
        raise ConfigError(f"fits must be a FitRates, got {type(fits).__name__}")
    return fits


def _count(topo: Topology, f: FitRates, need_frame: bool):
    """Counts, and per group the figures the reliability report needs."""
    by_class, total, groups = {}, dict.fromkeys(COMPONENTS, 0.0), []
    for cls, bucket, n, rep in _groups(topo):
        lanes, lpm = int(rep.lanes), int(cls.lanes_per_module)
        need_path = f.fibre_mates_per_fibre is None and cls.medium == "optical"
        fb, pc = _spec_facts(cls, bucket, rep, need_frame, need_path)
        mates = f.fibre_mates_per_fibre
        if mates is None:
            mates = (DEFAULT_PATH_CONNECTORS if pc is None else int(pc)) + 2
        per, blast = _per_link(cls.kind, lanes, lpm, f, mates)
        row = by_class.setdefault(cls.name, {"kind": cls.kind, "links": 0, "lanes": lanes, "lanes_per_module": lpm,
                                             "fibre_mates_per_fibre": mates if cls.medium == "optical" else 0,
                                             **dict.fromkeys(COMPONENTS, 0.0)})
        row["links"] += n
        for k, v in per.items():
            row[k] += v * n
            total[k] += v * n
        groups.append((cls, bucket, n, rep, per, blast, fb))
    return {"by_class": by_class, "total": total}, groups


@dataclass(frozen=True)
class ReliabilityReport:
    """A fabric's reliability (:func:`fabric_reliability`).

    Attributes
    ----------
    counts, counts_by_class : dict
        Components in the fabric (:func:`component_counts`).
    unit_fit_by_class : dict
        FIT of one unit of each component, per class (:meth:`FitRates.unit_fits`).
    fit_by_component, fit_by_class : dict
        Summed FIT (failures per 1e9 h); ``fit_total`` all of it.
    link_down_events_per_day : float
        Expected component failures per day, each taking one or more links down
        (``fit_total x 24 / 1e9``); ``links_down_per_day`` counts the links they take
        down; ``mtbf_hours`` the mean time between events, ``1e9 / fit_total`` (inf without
        parts that fail).
    uncorrectable_frames_per_s : float
        Frames the FEC leaves wrong, per direction (one direction of every link, summed;
        both directions carry twice this): frame loss ratio x payload / (8 x frame bytes);
        ``_per_day`` the same per day, ``uncorrectable_by_class`` per class.
    replays_per_s : float
        Link-level replays per direction (flit retry ratio x flits per second), from the
        classes with a link layer; ``replays_per_day``, ``replays_by_class``.
    switches, switch_failures_per_day : int, float
        The switch ASICs of the topology's tiers and their expected hard failures a day
        (``switches x FitRates.switch_fit x 24 / 1e9``), each taking all its links down.
    interruptions_per_day : float
        Hard failures a day of any part of the fabric, links' parts and switches:
        ``link_down_events_per_day + switch_failures_per_day``: an upper bound on the
        interruptions of a synchronous job spanning the whole fabric, reached when no
        failure is routed around. On Llama 3's job fabric it is 1.7 times the 35 network
        interruptions in 54 days (:mod:`phy.topology.fit_rates`): about 0.6 of its redundant
        uplinks' failures stopped the job. Link flaps that retrain are not failures and are
        not counted.
    """

    name: str
    links: int
    counts: dict
    counts_by_class: dict
    unit_fit_by_class: dict
    fit_by_component: dict
    fit_by_class: dict
    fit_total: float
    link_down_events_per_day: float
    links_down_per_day: float
    links_down_by_class: dict
    mtbf_hours: float
    uncorrectable_frames_per_s: float
    uncorrectable_frames_per_day: float
    uncorrectable_by_class: dict
    replays_per_s: float
    replays_per_day: float
    replays_by_class: dict
    switches: int
    switch_failures_per_day: float
    interruptions_per_day: float
    fits: FitRates
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        from ..link.report import plain_json

        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["fits"] = self.fits.to_dict()
        d["mtbf_hours"] = None if math.isinf(self.mtbf_hours) else self.mtbf_hours
        return plain_json(d)


def fabric_reliability(topo: Topology, report=None, fits: FitRates | None = None, *,
                       frame_bytes: int | dict | None = None) -> ReliabilityReport:
    """Component failure rates, link-down events and post-FEC error events of ``topo``.

    Each link class is evaluated once per length bucket (its cached
    :class:`phy.LinkReport`); everything after is arithmetic per (class, bucket) group.
    ``report``: the topology's :class:`TopologyReport` (optional), checked to be this
    topology's roll-up; nothing is recomputed either way (the link reports are the
    classes' cached ones), and links that miss their target are named in the notes from
    the link reports themselves. ``fits``: the failure rates (default :class:`FitRates`).
    ``frame_bytes``: the frame size for the frame error rate, one for all classes or a
    dict by class name; by default the LinkSpec's framing (``cls.spec`` called once per
    class), 64 bytes (:meth:`phy.Framing.ethernet`, the default) for a class made from a
    fixed report.

    Parameters
    ----------
    topo : Topology
        The fabric.
    report : TopologyReport, optional
        The topology's roll-up, checked against it (None: not checked).
    fits : FitRates, optional
        The component failure rates, FIT (None: ``FitRates()``).
    frame_bytes : int or dict, optional
        Frame size, bytes, for all classes or by class name (None: each class's framing).

    Returns
    -------
    ReliabilityReport
        Failure rates (FIT) by component and class, link-down, uncorrectable-frame and
        replay events, MTBF and notes.

    Raises
    ------
    ConfigError
        When ``report`` is not this topology's roll-up.
    """
    _check_topology(topo)
    f = _fits(fits)
    if report is not None:
        _check_report(topo, report)
    if frame_bytes is not None and not isinstance(frame_bytes, dict):
        integer(frame_bytes, "frame_bytes", 1, 2**20)
    counts, groups = _count(topo, f, need_frame=frame_bytes is None)
    notes = [f"{topo.name}: {topo.n_links} links; FIT defaults used: " + "; ".join(f.defaults_used())]
    t = _tally(groups, f, frame_bytes)
    total = float(sum(t.fit_k.values()))
    switches = int(sum(tier.count for tier in topo.tiers))
    sw_day = switches * f.switch_fit * HOURS_PER_DAY / 1e9
    notes.append(_field_note(f))
    notes.extend(sorted(t.unc_notes))
    notes.extend(f"{k} misses its BER target at {', '.join(v)} m: its error figures there describe links that "
                 "would not carry traffic" for k, v in t.failing.items())
    notes.append("expected values: module, engine and connector shares are fractional where links do not fill a "
                 "module; a module, an engine or a shared laser takes down every link it serves")
    unc_s, rep_s = float(sum(t.unc_c.values())), float(sum(t.rep_c.values()))
    return ReliabilityReport(
        name=topo.name, links=topo.n_links, counts=counts["total"], counts_by_class=counts["by_class"],
        unit_fit_by_class=t.unit, fit_by_component=t.fit_k, fit_by_class=t.fit_c, fit_total=total,
        link_down_events_per_day=total * HOURS_PER_DAY / 1e9, links_down_per_day=float(sum(t.down_c.values())),
        links_down_by_class=t.down_c, mtbf_hours=1e9 / total if total > 0 else math.inf,
        uncorrectable_frames_per_s=unc_s, uncorrectable_frames_per_day=unc_s * 86400.0,
        uncorrectable_by_class=t.unc_c, replays_per_s=rep_s, replays_per_day=rep_s * 86400.0,
        replays_by_class=t.rep_c, switches=switches, switch_failures_per_day=sw_day,
        interruptions_per_day=total * HOURS_PER_DAY / 1e9 + sw_day, fits=f, notes=notes)


def _check_report(topo, report) -> None:
    """``report`` must be ``topo``'s roll-up (a :class:`TopologyReport` of its name and links)."""
    from .rollup import TopologyReport

    if not isinstance(report, TopologyReport):
        raise ConfigError(f"report must be the TopologyReport of the topology, got {type(report).__name__}")
    if report.links != topo.n_links or report.name != topo.name:
        raise ConfigError(f"report {report.name!r} has {report.links} links, the topology {topo.name!r} "
                          f"{topo.n_links}: not its roll-up")


class _Tally(NamedTuple):
    """What :func:`_tally` sums over a fabric's link groups, by class (by component for
    ``fit_k``)."""

    unit: dict
    fit_k: dict
    fit_c: dict
    down_c: dict
    unc_c: dict
    rep_c: dict
    unc_notes: set
    failing: dict


def _tally(groups, f: FitRates, frame_bytes) -> _Tally:
    """Sum the groups of links (:func:`_count`): each class's unit FITs, the FIT by component
    and by class, the links down a day (each failure times the links it takes down), the
    uncorrectable frames and replays a second, and the lengths where a class fails."""
    fit_c, fit_k, unit, down_c = {}, dict.fromkeys(COMPONENTS, 0.0), {}, {}
    unc_c, rep_c, unc_notes, failing = {}, {}, set(), {}
    for cls, bucket, n, rep, per, blast, fb in groups:
        u = f.unit_fits(cls.kind, int(rep.lanes), int(cls.lanes_per_module))
        unit[cls.name] = u
        for k, v in per.items():
            fit = n * v * u[k]
            fit_k[k] += fit
            fit_c[cls.name] = fit_c.get(cls.name, 0.0) + fit
            down_c[cls.name] = down_c.get(cls.name, 0.0) + fit * blast[k] * HOURS_PER_DAY / 1e9
        unc, rp = _error_events(rep, _frame_bytes(frame_bytes, cls, fb, unc_notes), unc_notes, cls.name)
        unc_c[cls.name] = unc_c.get(cls.name, 0.0) + n * unc
        rep_c[cls.name] = rep_c.get(cls.name, 0.0) + n * rp
        if not rep.passes:
            failing.setdefault(cls.name, []).append(f"{bucket:g}")
    return _Tally(unit, fit_k, fit_c, down_c, unc_c, rep_c, unc_notes, failing)


def _field_note(f: FitRates) -> str:
    """Which rates are field-calibrated and from which source, which are not."""
    base = FitRates()
    optical = [n for n in HANDBOOK if getattr(f, n) == getattr(base, n)]
    parts = []
    if optical:
        parts.append(f"optical rates ({', '.join(optical)}) are Telcordia SR-332 handbook rates x "
                     f"{OPTICAL_FIELD_FACTOR:.3f}, the field factor fitted to Alibaba HPN's 0.057 % of NIC-ToR "
                     "links failing a month (SIGCOMM 2024; fit in phy.topology.fit_rates; checked against "
                     "Llama 3's 35 network interruptions in 54 days, arXiv 2407.21783 Table 5, and Meta's "
                     "ECOC 2025 module MTBFs)")
    if f.switch_fit == base.switch_fit:
        parts.append("switch_fit is Alibaba HPN's field rate of ToR crashes (0.051 % a month, SIGCOMM 2024)")
    parts.append("copper (cable terminations, connector contacts, retimers) has no field basis: MIL-HDBK-217F "
                 "and Telcordia SR-332 handbook derivation")
    parts.append("hard failures only: link flaps that retrain are not counted")
    return "field calibration: " + "; ".join(parts)


def _frame_bytes(given, cls: LinkClass, from_spec: int | None, notes: set) -> int:
    if given is None:
        if from_spec is None:
            notes.add(f"{cls.name}: frame size {DEFAULT_FRAME_BYTES} B (LinkSpec's default Ethernet framing; "
                      "the class's report does not carry its framing)")
            return DEFAULT_FRAME_BYTES
        return int(from_spec)
    if isinstance(given, dict):
        if cls.name not in given:
            raise ConfigError(f"frame_bytes has no entry for link class {cls.name!r}; it has {', '.join(given)}")
        return integer(given[cls.name], f"frame_bytes[{cls.name!r}]", 1, 2**20)
    return integer(given, "frame_bytes", 1, 2**20)


def _error_events(rep, frame_bytes: int, notes: set, name: str) -> tuple[float, float]:
    """Per link and direction: uncorrectable frames and replays per second."""
    payload = float(rep.rate_chain["payload_bps"])
    flr = rep.frame_loss_ratio
    if flr is None:  # no FEC: a frame fails when any of its bits does
        flr = -math.expm1(8 * frame_bytes * math.log1p(-min(float(rep.post_fec_ber), 0.5)))
        notes.add(f"{name}: no FEC; a frame is lost when any of its bits is (the delivered BER)")
    unc = float(flr) * payload / (8 * frame_bytes)
    replays = 0.0
    if rep.link_layer is not None and rep.flit_retry_ratio is not None:
        replays = float(rep.flit_retry_ratio) / float(rep.link_layer["flit_s"])
    return unc, replays
