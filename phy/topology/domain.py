"""The domain-size trade: a domain of N accelerators laid out in racks, each cable given the
cheapest link class that closes at its length, and what binds first as N grows (reach,
rack power, switch radix, cable count, copper mass).

:func:`plan_domain` builds the domain (one rack while it holds N and a switch's radix
covers N; the racks of a row on one tier while the radix covers N; else two tiers), lets
every length choose among the candidate classes (:func:`choose_classes`), rolls it up and
reports power, cables, copper, latency and the constraints; :func:`largest_domain`
searches the sizes a layout allows; :func:`domain_steps` tabulates sizes and the watts
and nanoseconds each step costs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .builders import nvl72, single_tier, two_tier
from .fabric import Topology
from .parts import Accelerator, LinkClass, SwitchAsic
from .rollup import MAX_EVALUATIONS, TopologyReport, rollup

__all__ = ["CONSTRAINTS", "DomainPlan", "Layout", "choose_classes", "copper_kg_per_pair_m", "default_candidates",
           "domain_steps", "largest_domain", "plan_domain", "search_sizes"]

#: What can stop a domain from growing, in the order the report lists them.
CONSTRAINTS = ("reach", "switch_radix", "rack_power", "cables", "copper_mass")
#: Copper's density (kg/m^3).
COPPER_DENSITY = 8960.0
#: Largest domain :func:`plan_domain` builds and :func:`largest_domain` considers (a bound on
#: the cost of one plan: a 8,192-GPU two-tier domain has about 300,000 links).
MAX_SEARCH_ACCELERATORS = 8192
#: The most sizes :func:`largest_domain` may plan in one call (a bound on its cost: each
#: plan is a roll-up, a second or less once the candidates' lengths are evaluated).
MAX_PLANS = 64


def copper_kg_per_pair_m(awg: float) -> float:
    """Copper in one metre of a shielded twinax pair (kg): its two conductors and a drain wire
    of the same gauge, solid (:func:`channels.media.awg_diameter_m`); the shield foil,
    insulation and jacket are not copper conductors and are left out (no public per-metre
    mass of twinax was found: NVL72's spine, about 27 to 30 kg with its cartridges and
    connectors over about 3.2 km of pairs, bounds a pair at 8 to 9 g/m)."""
    from channels.media import awg_diameter_m

    d = awg_diameter_m(awg)
    return 3 * math.pi * d * d / 4 * COPPER_DENSITY


@dataclass(frozen=True)
class Layout:
    """How a domain is built and what it may not exceed.

    Parameters
    ----------
    accelerators_per_rack : int
        72: NVL72's 18 compute trays of 4.
    gpus_per_tray : int
    links_per_accelerator : int
        18 NVLink5 links per GPU.
    rack_pitch_m, overhead_m, tray_run_m : float
        Racks in a row at ``rack_pitch_m``; a cable between racks runs ``overhead_m`` up,
        along and down besides the distance; ``tray_run_m`` from a tray to the rack's spine
        (:mod:`phy.topology.fabric`).
    rack_power_w : float
        The power a rack may draw with its accelerators: 132 kW, a GB200 rack's 8 power
        shelves of 33 kW (NVIDIA BCM documentation) with half of them redundant (an
        assumption: N+N). NVL72 draws about 120 kW (secondary).
    max_tiers : int
        Switch tiers allowed (1 or 2).
    max_cables_per_rack : int, optional
        Copper pairs plus fibres a rack may terminate (None: no limit). NVL72's spine is
        5,184 pairs.
    max_copper_kg_per_rack : float, optional
        Copper conductor mass a rack may carry (:func:`copper_kg_per_pair_m`; None: no
        limit).
    oversubscription : float
        Down to up ports of a first-tier switch (1: non-blocking).
    """

    accelerators_per_rack: int = 72
    gpus_per_tray: int = 4
    links_per_accelerator: int = 18
    rack_pitch_m: float = 0.6
    overhead_m: float = 4.0
    tray_run_m: float = 0.1
    rack_power_w: float = 132e3
    max_tiers: int = 2
    max_cables_per_rack: int | None = None
    max_copper_kg_per_rack: float | None = None
    oversubscription: float = 1.0

    def __post_init__(self):
        integer(self.accelerators_per_rack, "Layout.accelerators_per_rack", 1, 4096)
        integer(self.gpus_per_tray, "Layout.gpus_per_tray", 1, self.accelerators_per_rack)
        integer(self.links_per_accelerator, "Layout.links_per_accelerator", 1, 256)
        number(self.rack_pitch_m, "Layout.rack_pitch_m", positive=True)
        number(self.overhead_m, "Layout.overhead_m", nonneg=True)
        number(self.tray_run_m, "Layout.tray_run_m", nonneg=True)
        number(self.rack_power_w, "Layout.rack_power_w", positive=True)
        integer(self.max_tiers, "Layout.max_tiers", 1, 2)
        if self.max_cables_per_rack is not None:
            integer(self.max_cables_per_rack, "Layout.max_cables_per_rack", 1)
        if self.max_copper_kg_per_rack is not None:
            number(self.max_copper_kg_per_rack, "Layout.max_copper_kg_per_rack", positive=True)
        number(self.oversubscription, "Layout.oversubscription", positive=True)

    def max_accelerators(self, asic: SwitchAsic, tiers: int | None = None) -> int:
        """The most accelerators the switch radix allows on ``tiers`` tiers (default
        ``max_tiers``): one tier, a port per accelerator on each switch (``radix``); two, a
        plane per accelerator link, each a folded Clos whose first-tier switches give
        ``down`` ports to accelerators and reach every second-tier switch once
        (``down x radix``)."""
        t = self.max_tiers if tiers is None else integer(tiers, "tiers", 1, 2)
        if t == 1:
            return asic.radix
        down = round(asic.radix * self.oversubscription / (1 + self.oversubscription))
        return down * asic.radix

    def to_dict(self) -> dict:
        return asdict(self)


def default_candidates(lanes: int = 2, lane_rate_bps: float = 212.5e9, fec="KP4", serdes=None,
                       host: str | None = "HL") -> tuple:
    """The five link classes a cable may be: passive copper (26 AWG twinax, host ``host``),
    an active electrical cable (the same, a retimer in each plug), LPO, CPO and DSP
    pluggable optics, all ``lanes`` x ``lane_rate_bps`` with KP4 and the link layer; the
    copper ones with the sweeps' preset equalisation (``serdes``, default the 802.3dj KR
    receiver's structure, :func:`phy.sweep.point._preset_serdes`) so that a plan costs
    seconds.

    Without ``serdes`` the same arguments give the same classes (the last eight kept), so
    that plans made one after another share their link evaluations (each class caches its
    reports by length): the default candidates' in-rack lengths cost tens of seconds once,
    not once per plan."""
    if serdes is None:
        try:
            return _default_candidates(lanes, lane_rate_bps, fec, host)
        except TypeError:  # an unhashable argument: let the checks below name it
            pass
    return _make_candidates(lanes, lane_rate_bps, fec, serdes, host)


@functools.lru_cache(maxsize=8)
def _default_candidates(lanes, lane_rate_bps, fec, host) -> tuple:
    return _make_candidates(lanes, lane_rate_bps, fec, None, host)


def _make_candidates(lanes, lane_rate_bps, fec, serdes, host) -> tuple:
    from ..link import Retry
    from ..sweep.point import _preset_serdes

    sd = serdes or _preset_serdes(lane_rate_bps / 2, "pam4")
    from .builders import tray_flyover_m

    fly = tray_flyover_m(host)
    return (LinkClass.copper_twinax(lanes, lane_rate_bps, 26, fec, sd, 0.25, retry=Retry(), host=host, flyover_m=fly),
            LinkClass.aec(lanes, lane_rate_bps, 26, fec, sd, 0.5, retry=Retry(), host=host),
            LinkClass.optical("lpo", lanes, lane_rate_bps, fec), LinkClass.optical("cpo", lanes, lane_rate_bps, fec),
            LinkClass.optical("dsp", lanes, lane_rate_bps, fec))


@dataclass
class _Choice:
    length_m: float
    chosen: int
    options: list = field(default_factory=list)  # [class name, passes, power W, latency s, margin dB or None]


def choose_classes(lengths_m: np.ndarray, candidates: tuple, objective: str = "power") -> tuple[np.ndarray, list]:
    """For each length, the index of the candidate that closes (its report passes) at the
    least power per link (``objective="latency"``: the least one-way latency), ties to the
    other figure; a length no candidate closes gets the candidate with the best margin
    and is reported. Each candidate is evaluated once per length bucket, and a candidate
    that fails at a length is taken to fail at every longer one (loss grows with length),
    which bounds the cost: at most :data:`phy.topology.rollup.MAX_EVALUATIONS` evaluations
    not already cached, else :class:`phy.ConfigError` (coarsen the candidates'
    ``resolution_m``). Returns (index per length, one :class:`_Choice` per distinct
    length)."""
    if objective not in ("power", "latency"):
        raise ConfigError(f"objective must be 'power' or 'latency', got {objective!r}")
    if not candidates:
        raise ConfigError("choose_classes needs at least one candidate link class")
    L = np.asarray(lengths_m, dtype=float)
    fine = min(c.resolution_m for c in candidates)
    keys = np.round(np.ceil(L / fine - 1e-9) * fine, 9)
    uniq, inv = np.unique(keys, return_inverse=True)
    failed_at = [math.inf] * len(candidates)
    choices = []
    fresh = 0
    for u in uniq:
        opts = []
        for k, c in enumerate(candidates):
            if u >= failed_at[k]:
                opts.append([c.name, False, math.inf, math.inf, None])
                continue
            if c.fixed is None and c.bucket(float(u)) not in c._cache:
                fresh += 1
                if fresh > MAX_EVALUATIONS:
                    raise ConfigError(f"choosing classes for {uniq.size} distinct lengths needs more than "
                                      f"{MAX_EVALUATIONS} link evaluations; coarsen the candidates' resolution_m")
            r = c.report(float(u))
            if not r.passes:
                failed_at[k] = min(failed_at[k], c.bucket(float(u)))
            opts.append([c.name, bool(r.passes), float(r.power_w), float(r.latency_s), float(r.margin_db)])
        ok = [k for k, o in enumerate(opts) if o[1]]
        if ok:
            a, b = (2, 3) if objective == "power" else (3, 2)
            best = min(ok, key=lambda k: (opts[k][a], opts[k][b]))
        else:
            best = max(range(len(opts)), key=lambda k: -math.inf if opts[k][4] is None else opts[k][4])
        choices.append(_Choice(float(u), best, opts))
    return np.array([choices[i].chosen for i in inv], dtype=np.int64), choices


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
        second tier); the others, the fullest rack's value over its limit (0 without one).
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
                "copper_kg": self.copper_kg, "one_way_local_ns": self.latency_s["local"]["one_way"] * 1e9,
                "one_way_remote_ns": self.latency_s["remote"]["one_way"] * 1e9,
                "link_down_per_day": self.reliability.link_down_events_per_day,
                "uncorrectable_frames_per_day": self.reliability.uncorrectable_frames_per_day}

    def to_dict(self) -> dict:
        from ..link.report import _plain

        d = {k: getattr(self, k) for k in self.__dataclass_fields__
             if k not in ("report", "power", "report_topology", "reliability")}
        d["power"] = self.power.to_dict()
        d["reliability"] = self.reliability.to_dict()
        return _plain(d)


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
    return two_tier(n // apr, lc, lc, accelerator=acc, asic=asic, gpus_per_rack=apr, links_per_gpu=lpa,
                    oversubscription=layout.oversubscription, rack_pitch_m=layout.rack_pitch_m,
                    overhead_m=layout.overhead_m, tray_run_m=layout.tray_run_m, name=f"domain_{n}"), 2


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
    allowed is still planned on two tiers, and ``switch_radix`` binds."""
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
    util = {"reach": math.inf if unclosed else 0.0,
            "switch_radix": n / lay.max_accelerators(sw, min(tiers, lay.max_tiers)),
            "rack_power": rep.power.max_rack_w / lay.rack_power_w,
            "cables": float(cables_rack.max()) / lay.max_cables_per_rack if lay.max_cables_per_rack else 0.0,
            "copper_mass": float(kg_rack.max()) / lay.max_copper_kg_per_rack if lay.max_copper_kg_per_rack else 0.0}
    words = {"reach": f"{unclosed} links close with no candidate class (lengths "
                      + ", ".join(f"{f['length_m']:g} m" for f in rep.failing) + ")",
             "switch_radix": (f"{n} accelerators need more than {lay.max_tiers} tier(s) of {sw.radix}-port switches "
                              f"(at most {lay.max_accelerators(sw)})"),
             "rack_power": f"the fullest rack draws {rep.power.max_rack_w / 1e3:.1f} kW of {lay.rack_power_w / 1e3:g} kW",
             "cables": f"a rack terminates {int(cables_rack.max())} pairs and fibres of {lay.max_cables_per_rack}",
             "copper_mass": f"a rack carries {kg_rack.max():.1f} kg of copper of {lay.max_copper_kg_per_rack}"}
    over = [k for k in CONSTRAINTS if util[k] > 1 or (k == "reach" and unclosed)]
    binding = max(over, key=lambda k: util[k]) if over else max(CONSTRAINTS, key=lambda k: util[k])
    lat = {p: {"one_way": rep.one_way[p].total_s, "phy_floor": rep.phy_floor_s[p]} for p in rep.one_way}
    from .reliability import fabric_reliability

    rel = fabric_reliability(topo, rep)
    notes = [f"each cable's class: the least {'power per link' if objective == 'power' else 'one-way latency'} "
             "among the candidates that close at its length", *rep.power.notes, *rel.notes]
    return DomainPlan(n, topo.name, tiers, not over, binding, util, [words[k] for k in over], choices,
                      int(pairs.sum()), int(cables_rack.max()), float(kg.sum()), float(kg_rack.max()), rep.power,
                      lat, rep, notes, topo, rel)


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
    (353 s, 1.9 GB)."""
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
    (remote route)."""
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
