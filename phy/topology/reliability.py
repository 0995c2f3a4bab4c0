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
a connector contact, a retimer or a fibre connector takes down its own link.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import Topology
from .parts import LinkClass

__all__ = ["COMPONENTS", "FitRates", "ReliabilityReport", "component_counts", "fabric_reliability"]

#: The component types counted (see the module docstring for the rules).
COMPONENTS = ("copper_cable", "host_connector", "retimer", "optical_module", "optical_engine", "laser",
              "fibre_connector")
HOURS_PER_DAY = 24.0
#: MIL-HDBK-217F Notice 2 section 15.1 mating/unmating factor pi_K by cycles per 1000 hours
#: (<= 0.05, 0.5, 5, 50, above), as RAMSTK transcribes it (constants/connection.py ``PI_K``).
PI_K = ((0.05, 1.0), (0.5, 1.5), (5.0, 2.0), (50.0, 3.0), (math.inf, 4.0))
DEFAULT_FRAME_BYTES = 64  # phy.Framing.ethernet(), LinkSpec's default framing
DEFAULT_PATH_CONNECTORS = 2  # OpticalClass.dsp_pluggable/lpo/cpo default: a connector at each end of the span

_SOURCES = {
    "cable_termination_fit": "MIL-HDBK-217F N2 sect. 17.1 reflow-solder connection, ground benign (via RAMSTK)",
    "cable_terminations_per_pair": "engineering estimate: 2 signal conductors and a drain per pair per end",
    "connector_contact_fit": "Telcordia SR-332 printed-board edge connector, per pin (via KSY07/temp_predict)",
    "connector_contacts_per_lane": "QSFP-DD: 76 contacts for 8 lanes",
    "mating_cycles": "assumption: installed once",
    "rated_mating_cycles": "QSFP-DD MSA host connector minimum (VIAVI, secondary)",
    "service_hours": "assumption: 5 years",
    "retimer_fit": "Siemens SN 29500-2 CMOS mixed-signal reference at Tj 70 C (TI SFFS030)",
    "optical_module_fit": "Telcordia SR-332 transceiver >= 40 Gb/s, laser excluded by assumption",
    "lpo_module_fit": "engineering estimate: the DSP module less its DSP (a retimer-class IC)",
    "optical_engine_fit": "engineering estimate: a pluggable module's electronics per 800G share",
    "laser_fit": "Telcordia SR-332 uncooled EML",
    "lasers_per_lane": "one EML or DML per lane and end",
    "cpo_laser_fit": "Telcordia SR-332 CW laser",
    "cpo_lasers_per_lane": "NVIDIA: CPO uses 25% of the lasers",
    "fibre_connector_fit": "Telcordia SR-332 optical connector, per pin (taken per fibre)",
    "fibre_mates_per_fibre": "the path's connectors plus one at each module port",
}


@dataclass(frozen=True)
class FitRates:
    """Failure rates of a link's parts, FIT (failures per 1e9 device-hours), and the
    connector's mating history. Sources (P primary, S secondary, EST our estimate):

    Parameters
    ----------
    cable_termination_fit : float
        A copper cable assembly's conductor soldered to its plug's paddle card: 0.069 FIT,
        MIL-HDBK-217F Notice 2 section 17.1, "reflow solder" connection, ground-benign
        environment, pi_Q = pi_E = 1 (0.000069 failures per 1e6 h, as RAMSTK's
        ``PART_STRESS_LAMBDA_B`` transcribes it; P, old). 217F gives wire itself no failure
        rate, only its terminations. No public FIT of a DAC or twinax assembly was found;
        a hand-soldered termination is 2.6 FIT (same table), the upper bound.
    cable_terminations_per_pair : float
        Terminations per differential pair per end: 3, two signal conductors and a drain
        (EST). A cable's FIT is ``2 ends x 2 L pairs x this x cable_termination_fit``.
    connector_contact_fit : float
        A host connector (cable or module to host) per contact: 0.13 FIT, Telcordia SR-332
        "printed board, edge" generic rate per pin (sigma 0.088), as the public
        KSY07/temp_predict transcription gives it (P via S). Cross-check: MIL-HDBK-217F N2
        parts count, PCB edge connector, ground benign, 0.0054 per 1e6 h x pi_Q 2
        (commercial) = 10.8 FIT a connector, against 76 x 0.13 = 9.9 FIT for a QSFP-DD.
    connector_contacts_per_lane : float
        9.5: a QSFP-DD's 76 contacts (module datasheets: "a 76 contact edge type
        connector") over its 8 lanes, grounds, power and management included. A connector
        mated pair carrying ``n`` lanes is ``n x 9.5`` contacts.
    mating_cycles, rated_mating_cycles : float
        Mate/unmate cycles the host connector has seen over ``service_hours`` (default 1,
        installed once: an assumption) and its rating: 100, the QSFP-DD MSA's minimum for
        the host connector (50 for the module side; VIAVI blog citing the MSA, S; OSFP's
        figure not found). Wear model: the contact FIT times MIL-HDBK-217F's pi_K for the
        cycling rate (:data:`PI_K`: 1 to 4 by cycles per 1000 h; P), times
        ``max(1, cycles / rated)`` beyond the rating. The second factor is our stated
        assumption (the rating is the durability test's count; no public model of the
        failure rate beyond it was found): past it, plating wear-through is taken to raise
        the rate in proportion to the cycles.
    service_hours : float
        The hours the cycles are spread over: 5 years, 43,830 h (assumption).
    retimer_fit : float
        A retimer IC (AEC plug): 70 FIT, Siemens SN 29500-2 reference rate for CMOS
        digital, analog or mixed ICs at a 70 C junction, as TI's functional-safety FIT
        report for its DP83TG720 Ethernet PHYs quotes it (TI SFFS030, 2024; P). Telcordia
        SR-332's generic CMOS rate at 40 C, ``exp(0.55 + 0.0549 ln G + 0.00227 ln^2 G)``,
        gives 8 to 10 FIT for 1e7 to 1e8 gates (the low end). No retimer vendor FIT found.
    optical_module_fit : float
        A DSP pluggable's electronics, lasers excluded: 250 FIT, Telcordia SR-332's
        generic rate for an SFP transceiver of 40 Gb/s and above (sigma 170; via the same
        transcription). That figure includes its one laser while an 8-lane module holds
        more electronics; the two are taken to cancel (assumption). Cross-check: an 800G
        DR8 module (8 lanes of 100G, the generation of that field data) is 250 + 8 x
        ``laser_fit`` = 1,130 FIT, inside the 1,000 to 2,000 FIT (0.5 to 1 M device-hours
        MTBF) Meta's ECOC 2025 field data gave pluggables (S).
    lpo_module_fit : float
        A linear pluggable: 180 FIT, the DSP module less its DSP taken at ``retimer_fit``
        (EST; no public figure separates them).
    optical_engine_fit : float
        A CPO optical engine, per share of ``lanes_per_module`` lanes (800G): 250 FIT, the
        pluggable's electronics without a host connector (EST). Cross-check: with the one
        external laser its 4 lanes share at ``cpo_laser_fit``, 400 FIT per 800G, against
        385 FIT (2.6 M device-hours MTBF) Meta's ECOC 2025 data gave CPO (S).
    laser_fit, lasers_per_lane : float
        A pluggable's laser: 110 FIT, Telcordia SR-332 "EML, uncooled" (DFB 100, cooled EML
        300; sigma 89), one per lane and end (EML or DML). SR-332 rates are at 40 C; its
        temperature curve 7 (0.4 eV) multiplies them by 3.7 at 70 C (give a higher FIT for
        hot modules).
    cpo_laser_fit, cpo_lasers_per_lane : float
        A CPO external laser source's laser: 150 FIT, Telcordia SR-332 "CW laser"; 0.25
        lasers per lane, NVIDIA's statement that its CPO switches use 25 % of the lasers of
        pluggables (NVIDIA / TechInsights, P). One laser then feeds 4 lanes.
    fibre_connector_fit : float
        A fibre connector mated pair, per fibre: 30 FIT, Telcordia SR-332 "optical"
        connector per pin (sigma 9.5), a pin taken as one fibre position (assumption).
    fibre_mates_per_fibre : int or None
        Mated pairs a fibre crosses. None: the optical path's connectors (from the class's
        spec; 2 when it has none: the default of phy.OpticalClass) plus one at each
        module or engine port.
    """

    cable_termination_fit: float = 0.069
    cable_terminations_per_pair: float = 3.0
    connector_contact_fit: float = 0.13
    connector_contacts_per_lane: float = 76 / 8
    mating_cycles: float = 1.0
    rated_mating_cycles: float = 100.0
    service_hours: float = 5 * 8766.0
    retimer_fit: float = 70.0
    optical_module_fit: float = 250.0
    lpo_module_fit: float = 180.0
    optical_engine_fit: float = 250.0
    laser_fit: float = 110.0
    lasers_per_lane: float = 1.0
    cpo_laser_fit: float = 150.0
    cpo_lasers_per_lane: float = 0.25
    fibre_connector_fit: float = 30.0
    fibre_mates_per_fibre: int | None = None

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "fibre_mates_per_fibre":
                if v is not None:
                    integer(v, "FitRates.fibre_mates_per_fibre", 0, 64)
                continue
            strict = f.name in ("connector_contacts_per_lane", "rated_mating_cycles", "service_hours",
                                "lasers_per_lane", "cpo_lasers_per_lane")
            x = number(v, f"FitRates.{f.name}", positive=strict, nonneg=not strict)
            if f.name.endswith("_fit") and x > 1e9:
                raise ConfigError(f"FitRates.{f.name} = {x:g} FIT is more than one failure per device-hour")
            object.__setattr__(self, f.name, x)
        if self.mating_cycles > 1e9:
            raise ConfigError(f"FitRates.mating_cycles must be at most 1e9, got {self.mating_cycles:g}")

    @property
    def pi_k(self) -> float:
        """MIL-HDBK-217F's mating factor for ``mating_cycles`` over ``service_hours``."""
        rate = self.mating_cycles / self.service_hours * 1000.0
        return next(k for top, k in PI_K if rate <= top)

    @property
    def connector_wear(self) -> float:
        """The factor on the connector's FIT: ``pi_K x max(1, cycles / rated)``."""
        return self.pi_k * max(1.0, self.mating_cycles / self.rated_mating_cycles)

    def unit_fits(self, kind: str, lanes: int, lanes_per_module: int) -> dict:
        """FIT of one unit of each component a link of ``kind`` with ``lanes`` lanes per
        direction holds (a cable, a connector mated pair, a module, a laser, a fibre
        through one mated pair; the module's and its connector's for ``lanes_per_module``)."""
        contact = self.connector_contact_fit * self.connector_contacts_per_lane * self.connector_wear
        if kind in ("passive_copper", "aec"):
            out = {"copper_cable": 2 * 2 * lanes * self.cable_terminations_per_pair * self.cable_termination_fit,
                   "host_connector": contact * lanes}
            if kind == "aec":
                out["retimer"] = self.retimer_fit
            return out
        if kind == "cpo":
            return {"optical_engine": self.optical_engine_fit, "laser": self.cpo_laser_fit,
                    "fibre_connector": self.fibre_connector_fit}
        module = self.lpo_module_fit if kind == "lpo" else self.optical_module_fit
        return {"optical_module": module, "host_connector": contact * lanes_per_module, "laser": self.laser_fit,
                "fibre_connector": self.fibre_connector_fit}

    def defaults_used(self) -> list:
        """The fields left at their defaults, each with its source in short."""
        base = FitRates()
        return [f"{f.name} = {getattr(self, f.name)!r} ({_SOURCES[f.name]})" for f in fields(self)
                if getattr(self, f.name) == getattr(base, f.name)]

    def with_(self, **changes) -> FitRates:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


def _per_link(kind: str, lanes: int, lpm: int, fits: FitRates, mates: int) -> tuple[dict, dict]:
    """(units of each component per link, links one unit's failure takes down)."""
    if kind in ("passive_copper", "aec"):
        n = {"copper_cable": 1.0, "host_connector": 2.0}
        if kind == "aec":
            n["retimer"] = 2.0
        return n, dict.fromkeys(n, 1.0)
    share = 2.0 * lanes / lpm
    shared = max(1.0, lpm / lanes)
    fibres = 2.0 * lanes
    if kind == "cpo":
        lpl = fits.cpo_lasers_per_lane
        n = {"optical_engine": share, "laser": 2.0 * lanes * lpl, "fibre_connector": fibres * mates}
        return n, {"optical_engine": shared, "laser": max(1.0, 1.0 / lpl / lanes), "fibre_connector": 1.0}
    lpl = fits.lasers_per_lane
    n = {"optical_module": share, "host_connector": share, "laser": 2.0 * lanes * lpl,
         "fibre_connector": fibres * mates}
    return n, {"optical_module": shared, "host_connector": 1.0, "laser": max(1.0, 1.0 / lpl / lanes),
               "fibre_connector": 1.0}


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
    fibre connectors (default :class:`FitRates`)."""
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
    fits: FitRates
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        from ..link.report import _plain

        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["fits"] = self.fits.to_dict()
        d["mtbf_hours"] = None if math.isinf(self.mtbf_hours) else self.mtbf_hours
        return _plain(d)


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
    """
    _check_topology(topo)
    f = _fits(fits)
    if report is not None:
        from .rollup import TopologyReport

        if not isinstance(report, TopologyReport):
            raise ConfigError(f"report must be the TopologyReport of the topology, got {type(report).__name__}")
        if report.links != topo.n_links or report.name != topo.name:
            raise ConfigError(f"report {report.name!r} has {report.links} links, the topology {topo.name!r} "
                              f"{topo.n_links}: not its roll-up")
    if frame_bytes is not None and not isinstance(frame_bytes, dict):
        integer(frame_bytes, "frame_bytes", 1, 2**20)
    counts, groups = _count(topo, f, need_frame=frame_bytes is None)
    notes = [f"{topo.name}: {topo.n_links} links; FIT defaults used: " + "; ".join(f.defaults_used())]
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
    total = float(sum(fit_k.values()))
    notes.extend(sorted(unc_notes))
    notes.extend(f"{k} misses its BER target at {', '.join(v)} m: its error figures there describe links that "
                 "would not carry traffic" for k, v in failing.items())
    notes.append("expected values: module, engine and connector shares are fractional where links do not fill a "
                 "module; a module, an engine or a shared laser takes down every link it serves")
    unc_s, rep_s = float(sum(unc_c.values())), float(sum(rep_c.values()))
    return ReliabilityReport(
        name=topo.name, links=topo.n_links, counts=counts["total"], counts_by_class=counts["by_class"],
        unit_fit_by_class=unit, fit_by_component=fit_k, fit_by_class=fit_c, fit_total=total,
        link_down_events_per_day=total * HOURS_PER_DAY / 1e9, links_down_per_day=float(sum(down_c.values())),
        links_down_by_class=down_c, mtbf_hours=1e9 / total if total > 0 else math.inf,
        uncorrectable_frames_per_s=unc_s, uncorrectable_frames_per_day=unc_s * 86400.0,
        uncorrectable_by_class=unc_c, replays_per_s=rep_s, replays_per_day=rep_s * 86400.0,
        replays_by_class=rep_c, fits=f, notes=notes)


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
