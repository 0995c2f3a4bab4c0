"""``linkmodel rack``: a topology from a TOML rack file (its keys, their defaults and
units in :data:`RACK_SCHEMA`, rendered in ``docs/toml_reference.md``; with no file, every
key at its default: the NVL72 rack the demo rolls up), its roll-up, decode over it and
the system simulators' files. The whole file is checked (:func:`check_rack`) before any
link is evaluated."""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path

from ..errors import ConfigError
from . import _format as fm

#: The one default equalisation of every command (``link``, ``sweep``, ``rack``): COM
#: proposes, the statistical eye decides, as :class:`phy.LinkSpec` does with no ``serdes``.
DEFAULT_EQUALIZATION = "com"

_CLASSES = ("passive_copper", "aec", "lpo", "cpo", "dsp_optics")

#: Every key of a rack file: "section.name" -> (kind, default, description with its unit).
#: A kind is ``int`` or ``float`` (finite and > 0), a tuple of choices, or ``[kind]`` (a
#: non-empty list of them).
RACK_SCHEMA = {
    "rack.builder": (("nvl72", "nvl36x2", "two_tier", "single_tier", "scale_out"), "nvl72",
                     "the topology: NVL72, two NVL36 racks, racks of NVL72 under a second optical tier, "
                     "one switch tier, or a scale-out fat tree"),
    "rack.accelerators": (int, 1024, "accelerators of single_tier and scale_out"),
    "rack.racks": (int, 8, "racks of two_tier"),
    "link.lanes": (int, 2, "lanes per direction of a copper link"),
    "link.lane_rate_gbps": (float, 212.5, "line rate per lane (Gb/s)"),
    "link.awg": (float, 26, "twinax wire gauge (AWG)"),
    "link.fec": (("KP4", "KR4", "LL272", "none"), "KP4", "FEC code or none"),
    "link.equalization": (("com", "preset"), DEFAULT_EQUALIZATION,
                          "COM-proposed (the eye decides; about 1 s per link length) or a fixed preset (fast); "
                          "also spelled equalisation"),
    "link.resolution_m": (float, 0.25, "cable lengths are evaluated in buckets of this size (m)"),
    # an NVL72-class tray takes its lanes to the rear connectors on flyover cables, not
    # host board: 802.3dj's cabled host class HL (a stated assumption)
    "link.host": (("HL", "HN", "HH", "flyover", "pcb", "none"), "HL",
                  "what joins the die to the cable at each end: an 802.3dj CR host class (Table 179-23: HL cabled, "
                  "HN and HH board hosts) with the CR reference receiver, or flyover cables, 125 mm of host board "
                  "or nothing in the channel with COM's KR package"),
    "link.flyover_m": (float, 0.2, "with a CR host class: the tray's flyover cable at each end, near-chip "
                       "connector to rear connector (m)"),
    "uplink.kind": (("dsp", "lpo", "cpo"), "dsp", "optics of two_tier's second tier and of scale_out"),
    "uplink.lanes": (int, 2, "lanes per direction of an optical uplink"),
    "decode.params": (float, 70e9, "parameters of the dense model decoded over the fabric"),
    "decode.layers": (int, 80, "its layers"),
    "decode.batch": (int, 1, "sequences decoded together"),
    "decode.bytes_per_param": (float, 1.0, "bytes per parameter (1: FP8)"),
    # the domain-size trade (phy.topology.domain): "sizes" plans each of domain.sizes,
    # "largest" searches whole racks up to what the switch radix allows
    "domain.search": (("none", "sizes", "largest"), "none",
                      "the domain-size trade: none, each of sizes, or the largest whole-rack domain"),
    "domain.sizes": ([int], [72, 144, 288, 576], "accelerators of each domain planned (search = sizes)"),
    "domain.classes": ([_CLASSES], list(_CLASSES), "link classes a cable may take"),
    "domain.objective": (("power", "latency"), "power", "each cable's class: the least power or latency"),
    "domain.accelerators_per_rack": (int, 72, "accelerators per rack"),
    "domain.links_per_accelerator": (int, 18, "links from each accelerator to the fabric"),
    "domain.rack_power_kw": (float, 132.0, "the power a rack may draw with its accelerators (kW)"),
    "domain.max_tiers": (int, 2, "switch tiers allowed (1 or 2)"),
    "domain.max_cables_per_rack": (int, None, "pairs and fibres a rack may terminate (default: no limit)"),
    "domain.max_copper_kg_per_rack": (float, None, "copper a rack may carry (kg; default: no limit)"),
    "domain.rack_pitch_m": (float, 0.6, "rack pitch in a row (m)"),
    "domain.overhead_m": (float, 4.0, "a cable between racks runs this much up, along and down (m; route = overhead, "
                          "and a one-tier row)"),
    "domain.route": (("laid_out", "overhead"), "laid_out",
                     "cables between racks: neighbours through the side walls, others over the top (laid_out), or "
                     "the distance plus overhead_m (overhead)"),
    "domain.rack_units": (int, 48, "rack units a rack offers"),
    "domain.max_link_down_per_day": (float, None, "link-down events per day the domain may see (default: no budget)"),
}
#: Ranges of keys narrower than "> 0" (inclusive), checked with the file's line: the
#: limits of :class:`phy.topology.Layout`, :class:`phy.LinkSpec` and the link classes.
RACK_LIMITS = {"link.lanes": (1, 1024), "link.awg": (18, 40), "uplink.lanes": (1, 1024),
               "domain.max_tiers": (1, 2), "domain.accelerators_per_rack": (1, 4096),
               "domain.links_per_accelerator": (1, 256), "domain.sizes": (1, 8192)}
#: Input spellings taken for a key (the outputs spell "equalisation").
RACK_SPELLINGS = {"link.equalisation": "link.equalization"}
_RACK = RACK_SCHEMA  # the old name


def rack_defaults() -> dict:
    """Every key of :data:`RACK_SCHEMA` at its default: ``linkmodel rack`` on an empty file."""
    return {k: v[1] for k, v in RACK_SCHEMA.items()}


def _near(word: str, options) -> str:
    near = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _rack_spec(path) -> dict:
    """The rack file's settings over the defaults of :data:`RACK_SCHEMA`;
    :class:`phy.ConfigError` naming the file, line and key for anything else (a number
    must be finite and > 0), with the keys it knows and the nearest one."""
    from ..sweep.spec import _read_text, _toml_loads, _where

    path, text = _read_text(path, "rack file")
    try:
        doc = _toml_loads(text)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    out = rack_defaults()
    sections = list(dict.fromkeys(k.split(".")[0] for k in RACK_SCHEMA))
    for sec, body in doc.items():
        if sec not in sections:
            raise ConfigError(f"{_where(path, text, sec, '')}: unknown section [{sec}]{_near(sec, sections)}; "
                              f"sections: {', '.join(sections)}")
        if not isinstance(body, dict):
            raise ConfigError(f"{path}: '{sec}' must be a [section]")
        seen = {}
        for k, v in body.items():
            full = RACK_SPELLINGS.get(f"{sec}.{k}", f"{sec}.{k}")
            if full not in RACK_SCHEMA:
                keys = [x.split(".", 1)[1] for x in RACK_SCHEMA if x.startswith(sec + ".")]
                raise ConfigError(f"{_where(path, text, sec, k)}: unknown key {k!r}{_near(k, keys)}; "
                                  f"[{sec}] keys: {', '.join(keys)}")
            if full in seen:
                raise ConfigError(f"{_where(path, text, sec, k)}: {full!r} is given twice ({seen[full]!r} and {k!r})")
            seen[full] = k
            kind = RACK_SCHEMA[full][0]
            if isinstance(kind, list):  # a non-empty list of values of kind[0]
                ok = isinstance(v, list) and bool(v) and all(_fits(x, kind[0]) for x in v)
                want = "a non-empty list, each " + _want(kind[0])
            else:
                ok, want = _fits(v, kind), _want(kind)
            if not ok:
                raise ConfigError(f"{_where(path, text, sec, k)} must be {want}, got {v!r}")
            if full in RACK_LIMITS:
                lo, hi = RACK_LIMITS[full]
                if not all(lo <= x <= hi for x in (v if isinstance(v, list) else [v])):
                    raise ConfigError(f"{_where(path, text, sec, k)} must be from {lo:g} to {hi:g}"
                                      f"{' each' if isinstance(v, list) else ''}, got {v!r}")
            out[full] = v
    return out


def _fits(v, kind) -> bool:
    if isinstance(kind, tuple):
        return v in kind
    return (not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            and (kind is float or float(v).is_integer()) and v > 0)


def _want(kind) -> str:
    if isinstance(kind, tuple):
        return "one of " + ", ".join(kind)
    return f"a finite positive {'number' if kind is float else 'whole number'}"


# ----------------------------------------------------------------------------- building
def _serdes(cfg: dict):
    """The SerDes of the file's ``link.equalization``: COM-proposed or the sweep's preset."""
    from ..link import Serdes
    from ..sweep.point import _preset_serdes

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    return _preset_serdes(rate / 2, "pam4") if cfg["link.equalization"] == "preset" else Serdes()


def run_domain(cfg: dict) -> tuple:
    """The domain-size trade of a rack file's ``[domain]`` section: (the largest plan that
    closes or None, every plan), :func:`phy.topology.domain.largest_domain` over
    ``domain.sizes`` or, with ``search = "largest"``, over whole racks; the candidate
    classes equalised as ``link.equalization`` says."""
    from .. import topology as tp

    lay, cands, sizes = _domain_inputs(cfg)
    return tp.largest_domain(lay, cands, sizes=sizes, objective=cfg["domain.objective"],
                             every=cfg["domain.search"] == "sizes")


def _domain_inputs(cfg: dict, where: str = "rack file") -> tuple:
    """The ``[domain]`` section's layout, candidate classes and sizes (None: whole racks),
    checked as a whole, none of the classes evaluated yet."""
    from .. import topology as tp

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    fec = None if cfg["link.fec"] == "none" else cfg["link.fec"]
    host = None if cfg["link.host"] == "none" else cfg["link.host"]
    kinds = list(dict.fromkeys(cfg["domain.classes"]))
    try:
        cands = tuple(c for c in tp.default_candidates(int(cfg["link.lanes"]), rate, fec, serdes=_serdes(cfg),
                                                       host=host) if c.kind in kinds)
        lay = tp.Layout(accelerators_per_rack=int(cfg["domain.accelerators_per_rack"]),
                        links_per_accelerator=int(cfg["domain.links_per_accelerator"]),
                        rack_pitch_m=float(cfg["domain.rack_pitch_m"]), overhead_m=float(cfg["domain.overhead_m"]),
                        rack_power_w=float(cfg["domain.rack_power_kw"]) * 1e3,
                        max_tiers=int(cfg["domain.max_tiers"]),
                        max_cables_per_rack=cfg["domain.max_cables_per_rack"],
                        max_copper_kg_per_rack=cfg["domain.max_copper_kg_per_rack"], route=cfg["domain.route"],
                        rack_units=int(cfg["domain.rack_units"]),
                        max_link_down_per_day=cfg["domain.max_link_down_per_day"])
    except ConfigError as e:
        raise ConfigError(f"{where}: [domain] {e}") from None
    return lay, cands, None if cfg["domain.search"] == "largest" else cfg["domain.sizes"]


def check_rack(cfg: dict, where: str = "rack file"):
    """Check a rack file's settings as a whole before any work, and return its topology
    (built, bounded by :data:`phy.topology.fabric.MAX_TOPOLOGY_BYTES`, no link evaluated):
    the builder's counts, each link class's spec at its shortest length (lanes, rate, FEC),
    the ``[decode]`` model's fit (:func:`check_fits`) and, with a ``[domain]`` search, its
    layout and every size (:func:`phy.topology.domain.search_sizes`).
    :class:`phy.ConfigError` naming ``where`` and the section otherwise."""
    from ..topology.domain import search_sizes

    try:
        topo = build_topology(cfg)
        for c, cls in enumerate(topo.classes):
            sel = topo.link_class == c
            if cls.spec is not None and sel.any():
                cls.spec(cls.bucket(float(topo.length_m[sel].min())))  # a LinkSpec checks itself
    except ConfigError as e:
        raise ConfigError(f"{where}: [rack] builder = {cfg['rack.builder']!r}: {e}") from None
    check_fits(cfg, topo, where)
    if cfg["domain.search"] != "none":
        lay, _cands, sizes = _domain_inputs(cfg, where)
        try:
            search_sizes(lay, sizes, every=cfg["domain.search"] == "sizes")
        except ConfigError as e:
            raise ConfigError(f"{where}: [domain] {e}") from None
    return topo


def domain_table(plans: list) -> str:
    """The plans as a terminal table: size, tiers, classes by length, power, cables, copper,
    one-way latency, what binds, and what each step costs."""
    from ..topology import domain_steps

    rows = domain_steps(plans)
    head = (f"{'GPUs':>6} {'tiers':>5} {'fabric kW':>9} {'W/GPU':>6} {'rack kW':>7} {'cables':>7} {'Cu kg':>6} "
            f"{'remote ns':>9} {'step kW':>8} {'step ns':>8} {'down/day':>8}  closes  binding; classes (m)")
    out = [head]
    for r in rows:
        cl = ", ".join(f"{k} {a:g}-{b:g}" for k, (a, b) in r["classes"].items())
        out.append(f"{r['n_accelerators']:>6} {r['tiers']:>5} {r['fabric_kw']:>9.1f} "
                   f"{r['fabric_w_per_accelerator']:>6.0f} {r['max_rack_kw']:>7.1f} {r['cables']:>7} "
                   f"{r['copper_kg']:>6.1f} {r['one_way_remote_ns']:>9.1f} {r.get('step_fabric_kw', 0):>8.1f} "
                   f"{r.get('step_one_way_remote_ns', 0):>8.1f} {r['link_down_per_day']:>8.3g}  "
                   f"{'yes' if r['closes'] else 'NO ':<6}  "
                   f"{r['binding']}; {cl}")
    return "\n".join(out)


def build_topology(cfg: dict):
    """The rack file's topology, its links not yet evaluated (that is the roll-up's work)."""
    from .. import topology as tp
    from ..link import Retry

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    fec = None if cfg["link.fec"] == "none" else cfg["link.fec"]
    host = None if cfg["link.host"] == "none" else cfg["link.host"]
    from ..engines.com.params import CR_HOST_CLASSES

    fly = float(cfg["link.flyover_m"]) if host in CR_HOST_CLASSES else None
    copper = tp.LinkClass.copper_twinax(int(cfg["link.lanes"]), rate, float(cfg["link.awg"]), fec, _serdes(cfg),
                                        float(cfg["link.resolution_m"]), retry=Retry(), host=host, flyover_m=fly)
    up = tp.LinkClass.optical(cfg["uplink.kind"], int(cfg["uplink.lanes"]), rate, fec)
    b = cfg["rack.builder"]
    return {"nvl72": lambda: tp.nvl72(copper), "nvl36x2": lambda: tp.nvl36x2(copper),
            "two_tier": lambda: tp.two_tier(int(cfg["rack.racks"]), copper, up),
            "single_tier": lambda: tp.single_tier(int(cfg["rack.accelerators"]), copper),
            "scale_out": lambda: tp.scale_out(int(cfg["rack.accelerators"]),
                                              tp.LinkClass.optical(cfg["uplink.kind"], 4, rate, fec))}[b]()


def decode_model(cfg: dict):
    """The ``[decode]`` section's dense model."""
    from .. import topology as tp

    p, bpp = float(cfg["decode.params"]), float(cfg["decode.bytes_per_param"])
    return tp.Model.dense(f"dense {p / 1e9:g}B at {bpp:g} byte/param", p, int(cfg["decode.layers"]), bpp)


def check_fits(cfg: dict, topo, where: str = "rack file") -> dict:
    """Before any work: where the ``[decode]`` model fits. ``{"local": bool, "remote": bool}``
    (one accelerator's memory; the others' memories over the fabric, as
    :func:`phy.topology.over_fabric` counts them); :class:`phy.ConfigError` naming
    ``where`` and the keys when it fits in neither."""
    m = decode_model(cfg)
    mem = topo.accelerator.memory
    need = m.weight_bytes  # the rack command decodes at no context: no KV cache
    remote = mem.capacity_bytes * max(1, topo.n_accelerators - 1)
    fits = {"local": need <= mem.capacity_bytes, "remote": need <= remote}
    if not any(fits.values()):
        raise ConfigError(f"{where}: [decode] params = {cfg['decode.params']:g} at bytes_per_param = "
                          f"{cfg['decode.bytes_per_param']:g} needs {fm.size_bytes(need)} of weights: it does not "
                          f"fit in memory, neither in one {topo.accelerator.name}'s {fm.size_bytes(mem.capacity_bytes)} "
                          f"of {mem.name} nor in the other {topo.n_accelerators - 1} accelerators' "
                          f"{fm.size_bytes(remote)} (checked before the roll-up; nothing was run or written)")
    return fits


def run_rack(cfg: dict, where: str = "rack file", workers: int | None = None):
    """``(topology, its roll-up, decode tokens/s by source)`` of a rack file's settings; a
    source the model does not fit in gives None. The fit is checked before the roll-up
    (:func:`check_fits`; ``where`` names the file in its message). The links' length
    buckets are evaluated on ``workers`` cores (default all, :func:`phy.topology.rollup`)."""
    from .. import topology as tp

    topo = build_topology(cfg)
    fits = check_fits(cfg, topo, where)
    r = tp.rollup(topo, workers=workers)
    m = decode_model(cfg)
    dec = {s: tp.over_fabric(r, m, int(cfg["decode.batch"]), source=s).tokens_per_s if fits[s] else None
           for s in ("local", "remote")}
    return topo, r, dec


def _write_exports(d: Path, topo, r) -> None:
    """The system simulators' files of a roll-up, in folder ``d``."""
    from ..topology import export

    files = {
        "astra_sim_network.yml": lambda: export.astra_sim_network(r),
        "astra_sim_remote_memory.json": lambda: export.astra_sim_remote_memory(r),
        "calculon_network.json": lambda: json.dumps(export.calculon_network(r), indent=2),
        "genz_icn.json": lambda: json.dumps(export.genz_icn(r), indent=2),
        "genz_system.json": lambda: json.dumps(export.genz_system(r), indent=2),
        "llmcompass_link.json": lambda: json.dumps(export.llmcompass_system(r), indent=2),
        "ns3_topology.txt": lambda: export.ns3_topology(topo, r),
        "rollup.json": lambda: export.to_json(r),
    }
    try:
        d.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (d / name).write_text(text())
    except OSError as e:
        from ..sweep.spec import _show

        raise ConfigError(f"--export {_show(d)}: cannot write there ({(e.strerror or str(e)).lower()})") from None


# ----------------------------------------------------------------------------- the command
def rack_json(cfg: dict, r, dec: dict, best, plans) -> dict:
    """The roll-up's dict with the decode and the domain trade."""
    d = r.to_dict()
    d["decode_tokens_per_s"] = dec
    d["decode_model"] = decode_model(cfg).name
    d["equalisation"] = cfg["link.equalization"]
    if plans:
        from ..topology import domain_steps

        d["domain"] = {"largest_closing": None if best is None else best.n_accelerators,
                       "plans": [p.to_dict() for p in plans], "table": domain_steps(plans)}
    return d


def rack_text(cfg: dict, r, dec: dict) -> list[str]:
    """The roll-up's lines for a terminal: every figure with its unit."""
    from ._fabric import fabric_figures, fabric_lines

    sw = ", ".join(f"{n} {k}" for k, n in r.n_switches.items())
    out = [f"{r.name}: {r.n_accelerators} accelerators, switch ASICs {sw}; links equalised: "
           f"{'COM-proposed' if cfg['link.equalization'] == 'com' else 'preset'}",
           f"  bandwidth    per accelerator {fm.bytes_per_s(r.accel_bandwidth_bytes_per_s)} per direction; "
           f"aggregate {fm.bytes_per_s(r.aggregate_bandwidth_bytes_per_s)} (all accelerators, both directions); "
           f"bisection {fm.bytes_per_s(r.bisection_bandwidth_bytes_per_s)} per direction",
           f"  cables       {r.cables} (pairs or fibres, both directions), {r.cable_length_m / 1e3:.2f} km in all; "
           f"link power {r.link_power_w / 1e3:.2f} kW",
           "  power        " + r.power.table()]
    out += ["  " + x for x in fabric_lines(fabric_figures(r), detail=True)]
    for f in r.failing:
        out.append(f"  FAILING: {f['cables']} cables of {f['class']} at {f['length_m']:g} m: {'; '.join(f['reasons'])}")
    out.append("  " + decode_line(cfg, r, dec))
    return out


def decode_line(cfg: dict, r, dec: dict) -> str:
    mem = r.accelerator.memory
    local = (f"{dec['local']:.2f} tok/s from local {mem.name}" if dec["local"] is not None else
             f"does not fit in one accelerator's {mem.capacity_bytes / 1e9:.4g} GB of {mem.name}")
    return (f"decode       {decode_model(cfg).name}, batch {cfg['decode.batch']}: {local}, "
            f"{dec['remote']:.2f} tok/s streamed from the others' memory over the fabric")


def _cmd_rack(args) -> int:
    """``linkmodel rack [SPEC.toml]``: with no file, every key at its default
    (:func:`rack_defaults`, the demo's NVL72)."""
    spec = getattr(args, "spec", None)
    cfg = rack_defaults() if spec is None else _rack_spec(spec)
    where = "rack defaults" if spec is None else str(spec)
    check_rack(cfg, where)
    topo, r, dec = run_rack(cfg, where)
    if args.export:
        _write_exports(Path(args.export), topo, r)
    best, plans = run_domain(cfg) if cfg["domain.search"] != "none" else (None, [])
    if args.json:
        print(json.dumps(rack_json(cfg, r, dec, best, plans), indent=2))
        return 0
    for line in rack_text(cfg, r, dec):
        print(line)
    if args.export:
        print(f"  exports in {args.export}")
    if plans:
        print(f"domain trade ({cfg['domain.search']}): largest that closes "
              f"{'none' if best is None else best.n_accelerators}")
        for line in domain_table(plans).splitlines():
            print("  " + line)
        for p in plans:
            for why in p.reasons:
                print(f"  {p.n_accelerators}: {why}")
    return 0
