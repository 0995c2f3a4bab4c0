"""The domain-size trade: a domain of N accelerators laid out in racks (:class:`Layout`), each
cable given the cheapest link class that closes at its length, and what binds first as N
grows (reach, switch radix, rack power and cooling, rack units, cable count, copper mass,
link-down events), each derived from the layout, none typed in.

:func:`plan_domain` builds the domain (one rack while it holds N and a switch's radix
covers N; the racks of a row on one tier while the radix covers N; else two tiers), lets
every length choose among the candidate classes (:func:`choose_classes`), rolls it up and
reports power, cables, copper, latency and the constraints; :func:`largest_domain`
searches the sizes a layout allows; :func:`domain_steps` tabulates sizes and the watts
and nanoseconds each step costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .._validate import integer
from ..errors import ConfigError
from .builders import nvl72
from .candidates import choose_classes, default_candidates
from .multirack import single_tier, two_tier
from .fabric import Topology
from .layout import COPPER_DENSITY, Layout, copper_kg_per_pair_m
from .parts import Accelerator, LinkClass, SwitchAsic
from .rollup import TopologyReport, rollup

__all__ = ["CONSTRAINTS", "COPPER_DENSITY", "DomainPlan", "Layout", "choose_classes", "copper_kg_per_pair_m", "default_candidates",
           "domain_steps", "largest_domain", "plan_domain", "search_sizes"]

#: What can stop a domain from growing, in the order the report lists them.
CONSTRAINTS = ("reach", "switch_radix", "rack_power", "rack_units", "cables", "copper_mass", "link_down")
#: Largest domain :func:`plan_domain` builds and :func:`largest_domain` considers (a bound on
#: the cost of one plan: a 8,192-GPU two-tier domain has about 300,000 links).
MAX_SEARCH_ACCELERATORS = 8192
#: The most sizes :func:`largest_domain` may plan in one call (a bound on its cost: each
#: plan is a roll-up, a second or less once the candidates' lengths are evaluated).
MAX_PLANS = 64


@dataclass(frozen=True)
class DomainPlan:
    """A domain of ``n_accelerators`` as :func:`plan_domain` built it.

    Attributes
    ----------
    closes : bool
        Every constraint met.
    binding : str
        The constraint that stops it (one of :data:`CONSTRAINTS`), or, when it closes, the
        tightest (the highest ``utilisation``).
    utilisation : dict
        Per constraint, the used share of its limit: reach, infinite when a link closes with
        no candidate (0 allowed), else 0; switch radix, the accelerators over the most the
        tiers in use allow (1 at 72 on one tier of 72-port switches: the next size needs a
        second tier); rack power (and cooling), rack units, cables and copper mass, the
        fullest rack's value over its limit (:class:`Layout`; 0 without one); link down, the
        domain's link-down events per day over ``Layout.max_link_down_per_day`` (0 without a
        budget).
    choices : list of dict
        Per link level and distinct length: the class chosen and every candidate's verdict,
        power (W per link) and latency.
    cables, cables_per_rack_max : int
    copper_kg, copper_kg_per_rack_max : float
    power : FabricPower
    latency_s : dict
        ``local`` and ``remote``: the one-way small transfer (every layer) and the PHY floor.
    report : TopologyReport
    report_topology : Topology
        The domain with each cable's chosen class.
    reliability : ReliabilityReport
        Its parts' failure rates, link-down events per day, uncorrectable frames and
        replays (:func:`phy.topology.reliability.fabric_reliability`, default rates).
    racks : int
        Racks the domain takes (accelerator and spine racks).
    rack_units : list of int
        Rack units each rack takes (:meth:`Layout.units`).
    optical_links, optical_modules : int, float
        Links on an optical class, and the optical modules (pluggables, or co-packaged
        engines' shares) at their ends (:func:`phy.topology.reliability.component_counts`).
    """

    n_accelerators: int
    topology: str
    tiers: int
    closes: bool
    binding: str
    utilisation: dict
    reasons: list
    choices: list
    cables: int
    cables_per_rack_max: int
    copper_kg: float
    copper_kg_per_rack_max: float
    power: object
    latency_s: dict
    report: TopologyReport
    notes: list
    report_topology: Topology | None = None
    reliability: object = None
    racks: int = 0
    rack_units: list = field(default_factory=list)
    optical_links: int = 0
    optical_modules: float = 0.0

    def row(self) -> dict:
        """The plan's line in :func:`domain_steps`' table."""
        classes: dict = {}
        for c in self.choices:
            classes.setdefault(c["class"], []).append(c["length_m"])
        return {"n_accelerators": self.n_accelerators, "topology": self.topology, "tiers": self.tiers,
                "closes": self.closes, "binding": self.binding,
                "classes": {k: [min(v), max(v)] for k, v in classes.items()},
                "fabric_kw": self.power.total_w / 1e3, "fabric_w_per_accelerator": self.power.per_accelerator_w,
                "max_rack_kw": self.power.max_rack_w / 1e3, "cables": self.cables,
                "copper_kg": self.copper_kg, "racks": self.racks,
                "rack_units_max": max(self.rack_units) if self.rack_units else 0,
                "optical_links": self.optical_links, "optical_modules": self.optical_modules,
                "one_way_local_ns": self.latency_s["local"]["one_way"] * 1e9,
                "one_way_remote_ns": self.latency_s["remote"]["one_way"] * 1e9,
                "link_down_per_day": self.reliability.link_down_events_per_day,
                "uncorrectable_frames_per_day": self.reliability.uncorrectable_frames_per_day}

    def to_dict(self) -> dict:
        from ..link.report import plain_json

        d = {k: getattr(self, k) for k in self.__dataclass_fields__
             if k not in ("report", "power", "report_topology", "reliability")}
        d["power"] = self.power.to_dict()
        d["reliability"] = self.reliability.to_dict()
        return plain_json(d)


def _geometry(n: int, layout: Layout, asic: SwitchAsic, acc: Accelerator, lc: LinkClass) -> tuple[Topology, int]:
    """The domain's nodes and cables (every link of class ``lc`` for now) and its tiers."""
    apr, lpa = layout.accelerators_per_rack, layout.links_per_accelerator
    _check_shape(n, layout, asic)
    if n <= apr and n <= asic.radix:
        trays = n // layout.gpus_per_tray
        sw_trays = math.ceil(lpa / 2)
        order = ("C" * 10 + "S" * 9 + "C" * 8 if (trays, sw_trays) == (18, 9)
                 else "C" * math.ceil(trays / 2) + "S" * sw_trays + "C" * (trays // 2))
        return nvl72(lc, accelerator=acc, asic=asic, links_per_gpu=lpa, tray_order=order,
                     gpus_per_tray=layout.gpus_per_tray, tray_run_m=layout.tray_run_m, name=f"domain_{n}"), 1
    if n <= asic.radix:  # one tier over a row: the switches in a rack in the middle
        return single_tier(n, lc, accelerator=acc, asic=asic, links_per_accel=lpa, accels_per_rack=apr,
                           rack_pitch_m=layout.rack_pitch_m, overhead_m=layout.overhead_m, name=f"domain_{n}"), 1
    laid = layout.route == "laid_out"
    return two_tier(n // apr, lc, lc, accelerator=acc, asic=asic, gpus_per_rack=apr, links_per_gpu=lpa,
                    oversubscription=layout.oversubscription, rack_pitch_m=layout.rack_pitch_m,
                    overhead_m=layout.overhead_m, tray_run_m=layout.tray_run_m, name=f"domain_{n}",
                    rack_height_m=layout.rack_height_m if laid else None, rise_m=layout.rise_m), 2


def _check_shape(n: int, layout: Layout, asic: SwitchAsic) -> None:
    """:class:`phy.ConfigError` when :func:`_geometry` cannot lay ``n`` accelerators out
    (checked for every size before any is planned)."""
    if n % layout.gpus_per_tray:
        raise ConfigError(f"{n} accelerators do not fill trays of {layout.gpus_per_tray}")
    if n > asic.radix and n % layout.accelerators_per_rack:
        raise ConfigError(f"a two-tier domain fills whole racks: {n} is not a multiple of "
                          f"{layout.accelerators_per_rack} per rack")


def _per_rack(topo: Topology, per_link: np.ndarray) -> np.ndarray:
    """``per_link`` summed per rack, a link between two racks counted in both."""
    ra, rb = topo.rack_of[topo.src], topo.rack_of[topo.dst]
    out = np.bincount(ra, weights=per_link, minlength=topo.n_racks)
    return out + np.bincount(rb, weights=np.where(ra != rb, per_link, 0.0), minlength=topo.n_racks)


def plan_domain(n_accelerators: int, layout: Layout | None = None, candidates: tuple | None = None, *,
                asic: SwitchAsic | None = None, accelerator: Accelerator | None = None,
                objective: str = "power") -> DomainPlan:
    """A domain of ``n_accelerators`` in ``layout``: the geometry (one rack, one tier over a
    row, or two tiers), each cable's class chosen among ``candidates`` (default
    :func:`default_candidates`) by :func:`choose_classes`, the roll-up, and every
    constraint of :data:`CONSTRAINTS`. A size the switch radix cannot build on the tiers
    allowed is still planned on two tiers, and ``switch_radix`` binds.

    Parameters
    ----------
    n_accelerators : int
        Accelerators in the domain (1 to :data:`MAX_SEARCH_ACCELERATORS`).
    layout : Layout, optional
        The racks and limits (None: ``Layout()``).
    candidates : tuple of LinkClass, optional
        The classes a cable may be (None: :func:`default_candidates`).
    asic : SwitchAsic, optional
        The switch ASIC (None: :meth:`SwitchAsic.nvlink5`).
    accelerator : Accelerator, optional
        The accelerator (None: :meth:`Accelerator.gb200`).
    objective : str, optional
        What each cable's class minimises among those that close: ``"power"`` (default)
        or ``"latency"``.

    Returns
    -------
    DomainPlan
        The topology, each cable's choice, the roll-up and the constraints checked.
    """
    lay = layout or Layout()
    if not isinstance(lay, Layout):
        raise ConfigError(f"layout must be a Layout, got {type(lay).__name__}")
    n = integer(n_accelerators, "n_accelerators", 1, MAX_SEARCH_ACCELERATORS)
    cands = tuple(candidates) if candidates is not None else default_candidates()
    if not cands or not all(isinstance(c, LinkClass) for c in cands):
        raise ConfigError("candidates must be one or more LinkClass")
    sw = asic or SwitchAsic.nvlink5()
    acc = accelerator or Accelerator.gb200()
    geo, tiers = _geometry(n, lay, sw, acc, cands[0])
    idx = np.zeros(geo.n_links, dtype=np.int64)
    choices = []
    for lv in np.unique(geo.level):
        sel = np.flatnonzero(geo.level == lv)
        idx[sel], ch = choose_classes(geo.length_m[sel], cands, objective)
        choices += [{"level": int(lv), "length_m": c.length_m, "class": cands[c.chosen].name,
                     "options": c.options} for c in ch]
    used = np.unique(idx)
    remap = np.zeros(len(cands), dtype=np.int64)
    remap[used] = np.arange(used.size)
    topo = replace(geo, classes=tuple(cands[i] for i in used), link_class=remap[idx])
    rep = rollup(topo)
    return _assess(n, topo, tiers, rep, lay, sw, choices, objective)


def _assess(n: int, topo: Topology, tiers: int, rep: TopologyReport, lay: Layout, sw: SwitchAsic,
            choices: list, objective: str) -> DomainPlan:
    lanes = np.zeros(topo.n_links)
    kg = np.zeros(topo.n_links)
    for c, cls in enumerate(topo.classes):
        sel = topo.link_class == c
        lanes[sel] = cls.report(float(topo.length_m[sel][0])).lanes if sel.any() else 0
        if cls.medium == "copper" and sel.any():
            kg[sel] = copper_kg_per_pair_m(cls.awg or 26) * topo.length_m[sel]
    pairs = 2 * lanes  # copper pairs or fibres: lanes x 2 directions
    kg = kg * pairs
    cables_rack = _per_rack(topo, pairs)
    kg_rack = _per_rack(topo, kg)
    unclosed = sum(f["cables"] for f in rep.failing)
    units = _units_per_rack(topo, lay)
    from .reliability import fabric_reliability

    rel = fabric_reliability(topo, rep)
    down = rel.link_down_events_per_day
    util = {"reach": math.inf if unclosed else 0.0,
            "switch_radix": n / lay.max_accelerators(sw, min(tiers, lay.max_tiers)),
            "rack_power": rep.power.max_rack_w / lay.rack_power_w,
            "rack_units": int(units.max()) / lay.rack_units,
            "cables": float(cables_rack.max()) / lay.max_cables_per_rack if lay.max_cables_per_rack else 0.0,
            "copper_mass": float(kg_rack.max()) / lay.max_copper_kg_per_rack if lay.max_copper_kg_per_rack else 0.0,
            "link_down": down / lay.max_link_down_per_day if lay.max_link_down_per_day else 0.0}
    words = {"reach": f"{unclosed} links close with no candidate class (lengths "
                      + ", ".join(f"{f['length_m']:g} m" for f in rep.failing) + ")",
             "switch_radix": (f"{n} accelerators need more than {lay.max_tiers} tier(s) of {sw.radix}-port switches "
                              f"(at most {lay.max_accelerators(sw)})"),
             "rack_power": f"the fullest rack draws {rep.power.max_rack_w / 1e3:.1f} kW of {lay.rack_power_w / 1e3:g} kW",
             "rack_units": (f"the fullest rack needs {int(units.max())} RU (compute and switch trays, "
                            f"{lay.power_shelves} power shelves, {lay.other_units} other) of {lay.rack_units}"),
             "link_down": f"{down:.3g} link-down events per day against a budget of {lay.max_link_down_per_day}",
             "cables": f"a rack terminates {int(cables_rack.max())} pairs and fibres of {lay.max_cables_per_rack}",
             "copper_mass": f"a rack carries {kg_rack.max():.1f} kg of copper of {lay.max_copper_kg_per_rack}"}
    over = [k for k in CONSTRAINTS if util[k] > 1 or (k == "reach" and unclosed)]
    binding = max(over, key=lambda k: util[k]) if over else max(CONSTRAINTS, key=lambda k: util[k])
    lat = {p: {"one_way": rep.one_way[p].total_s, "phy_floor": rep.phy_floor_s[p]} for p in rep.one_way}
    notes = [f"each cable's class: the least {'power per link' if objective == 'power' else 'one-way latency'} "
             "among the candidates that close at its length", *rep.power.notes, *rel.notes]
    optical = np.array([cls.medium == "optical" for cls in topo.classes])[topo.link_class]
    return DomainPlan(n, topo.name, tiers, not over, binding, util, [words[k] for k in over], choices,
                      int(pairs.sum()), int(cables_rack.max()), float(kg.sum()), float(kg_rack.max()), rep.power,
                      lat, rep, notes, topo, rel, topo.n_racks, units.tolist(), int(optical.sum()),
                      float(rel.counts.get("optical_module", 0.0) + rel.counts.get("optical_engine", 0.0)))


def _units_per_rack(topo: Topology, lay: Layout) -> np.ndarray:
    """Rack units each rack of ``topo`` takes (:meth:`Layout.units`): its accelerators' compute
    trays, its switch ASICs' trays, the power shelves and other units."""
    n = topo.n_accelerators
    acc = np.bincount(topo.rack_of[:n], minlength=topo.n_racks)
    asics = np.bincount(topo.rack_of[n:], minlength=topo.n_racks)
    return np.array([lay.units(int(a), int(b)) for a, b in zip(acc, asics)], dtype=np.int64)


def search_sizes(layout: Layout, sizes=None, *, asic: SwitchAsic | None = None, every: bool = False) -> list:
    """The sizes :func:`largest_domain` would plan (smallest first), every one checked
    (range, whole trays, whole racks past the radix) and their number bounded by
    :data:`MAX_PLANS`: :class:`phy.ConfigError` otherwise, before any plan (``linkmodel
    rack`` calls it to check a file's ``[domain]`` before any link is evaluated)."""
    lay = Layout() if layout is None else layout
    if not isinstance(lay, Layout):
        raise ConfigError(f"layout must be a Layout, got {type(lay).__name__}")
    sw = asic or SwitchAsic.nvlink5()
    if not isinstance(sw, SwitchAsic):
        raise ConfigError(f"asic must be a SwitchAsic, got {type(sw).__name__}")
    top = min(lay.max_accelerators(sw), MAX_SEARCH_ACCELERATORS)
    if sizes is None:
        apr = lay.accelerators_per_rack
        ns = list(range(apr, max(top, apr) + 1, apr))
    else:
        if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
            raise ConfigError(f"sizes must be a sequence of accelerator counts, got {sizes!r}")
        ns = []
        for k, s in enumerate(sizes):
            if k >= MAX_SEARCH_ACCELERATORS:
                raise ConfigError(f"sizes holds more than {MAX_SEARCH_ACCELERATORS} values")
            ns.append(integer(s, "size", 1, MAX_SEARCH_ACCELERATORS))
        ns = sorted(set(ns))
    if not ns:
        raise ConfigError("largest_domain needs at least one size")
    for n in ns:
        _check_shape(n, lay, sw)
    # a size the radix cannot build on max_tiers tiers cannot close; when none can, the
    # smallest is planned to say why
    todo = ns if every else ([n for n in ns if n <= top] or ns[:1])
    if len(todo) > MAX_PLANS:
        raise ConfigError(f"largest_domain would plan {len(todo)} sizes, more than {MAX_PLANS} (MAX_PLANS); give "
                          "fewer sizes or larger racks (refused before any plan)")
    return todo


def largest_domain(layout: Layout | None = None, candidates: tuple | None = None, *, sizes=None,
                   asic: SwitchAsic | None = None, accelerator: Accelerator | None = None,
                   objective: str = "power", every: bool = False) -> tuple[DomainPlan | None, list]:
    """The largest domain that closes, with the plans made to find it (smallest first).

    ``sizes`` (default: whole racks, one rack at a time, up to what the switch radix allows
    on ``layout.max_tiers`` tiers, at most :data:`MAX_SEARCH_ACCELERATORS`; sizes below a
    rack in whole trays are not tried) are planned from the largest down, and the search
    stops at the first that closes: the same answer as planning every size (a larger size
    can close where a smaller does not, two tiers where one rack's power binds, so the
    sizes are not bisected). A size above :meth:`Layout.max_accelerators` cannot close
    (``switch_radix`` binds), so it is not planned unless ``every`` (or none is below it:
    then the smallest is planned, to say why); with ``every`` every
    size is planned (a table of the trade, as ``linkmodel rack``'s ``search = "sizes"``).

    Bounded cost: every size is checked (range, whole trays and racks) before any is
    planned, at most :data:`MAX_PLANS` plans are made (more sizes are refused before any
    work), and the candidates (default :func:`default_candidates`) are made once, so
    every plan shares their link evaluations. ``largest_domain(Layout(max_tiers=1))``
    plans one size, 72, where it used to plan 36 and evaluate every candidate 36 times
    (353 s, 1.9 GB).

    Parameters
    ----------
    layout : Layout, optional
        The racks and limits (None: ``Layout()``).
    candidates : tuple of LinkClass, optional
        The classes a cable may be (None: :func:`default_candidates`).
    sizes : iterable of int, optional
        Domain sizes to try (None: whole racks, as above).
    asic : SwitchAsic, optional
        The switch ASIC (None: :meth:`SwitchAsic.nvlink5`).
    accelerator : Accelerator, optional
        The accelerator (None: :meth:`Accelerator.gb200`).
    objective : str, optional
        ``"power"`` (default) or ``"latency"``, as :func:`plan_domain`.
    every : bool, optional
        Plan every size rather than stop at the largest that closes (default False).

    Returns
    -------
    tuple of (DomainPlan or None, list of DomainPlan)
        The largest plan that closes (None if none does) and the plans made, smallest first.
    """
    lay = layout or Layout()
    sw = asic or SwitchAsic.nvlink5()
    todo = search_sizes(lay, sizes, asic=sw, every=every)
    if objective not in ("power", "latency"):
        raise ConfigError(f"objective must be 'power' or 'latency', got {objective!r}")
    cands = tuple(candidates) if candidates is not None else default_candidates()
    if not cands or not all(isinstance(c, LinkClass) for c in cands):
        raise ConfigError("candidates must be one or more LinkClass")
    plans, best = [], None
    for n in reversed(todo):
        p = plan_domain(n, lay, cands, asic=sw, accelerator=accelerator, objective=objective)
        plans.append(p)
        if p.closes:
            best = best or p
            if not every:
                break
    return best, plans[::-1]


def domain_steps(plans: list) -> list:
    """:meth:`DomainPlan.row` for each plan, with what each step from the previous one
    costs: fabric watts in all and per accelerator, and nanoseconds of one-way latency
    (remote route).

    Parameters
    ----------
    plans : list of DomainPlan
        Plans in order of size (e.g. :func:`largest_domain`'s second result).

    Returns
    -------
    list of dict
        One row per plan; from the second on, with ``step_fabric_kw``,
        ``step_w_per_accelerator`` and ``step_one_way_remote_ns``.
    """
    rows = []
    for i, p in enumerate(plans):
        r = p.row()
        if i:
            q = plans[i - 1]
            r["step_fabric_kw"] = (p.power.total_w - q.power.total_w) / 1e3
            r["step_w_per_accelerator"] = p.power.per_accelerator_w - q.power.per_accelerator_w
            r["step_one_way_remote_ns"] = (p.latency_s["remote"]["one_way"] - q.latency_s["remote"]["one_way"]) * 1e9
        rows.append(r)
    return rows
