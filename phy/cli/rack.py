"""``linkmodel rack``: a topology from a TOML rack file (its keys, their defaults and
units in :data:`phy.config.RACK_SCHEMA`, rendered in ``docs/toml_reference.md``; with no file, every
key at its default: the NVL72 rack the demo rolls up), its roll-up, decode over it and
the system simulators' files. The whole file is checked (:func:`check_rack`) before any
link is evaluated."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import load_rack, rack_defaults
from ..errors import ConfigError
from . import _format as fm

# ----------------------------------------------------------------------------- building
def _serdes(cfg: dict):
    """The SerDes of the file's ``link.equalisation``: COM-proposed or the preset."""
    from ..config import serdes_of

    return serdes_of(cfg["link.equalisation"], float(cfg["link.lane_rate_gbps"]) * 1e9, "pam4")


def run_domain(cfg: dict) -> tuple:
    """The domain-size trade of a rack file's ``[domain]`` section: (the largest plan that
    closes or None, every plan), :func:`phy.topology.domain.largest_domain` over
    ``domain.sizes`` or, with ``search = "largest"``, over whole racks; the candidate
    classes equalised as ``link.equalisation`` says."""
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
        from ..config.files import show_path as _show

        raise ConfigError(f"--export {_show(d)}: cannot write there ({(e.strerror or str(e)).lower()})") from None


# ----------------------------------------------------------------------------- the command
def rack_json(cfg: dict, r, dec: dict, best, plans) -> dict:
    """The roll-up's dict with the decode and the domain trade."""
    d = r.to_dict()
    d["decode_tokens_per_s"] = dec
    d["decode_model"] = decode_model(cfg).name
    d["equalisation"] = cfg["link.equalisation"]
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
           f"{'COM-proposed' if cfg['link.equalisation'] == 'com' else 'preset'}",
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
    cfg = rack_defaults() if spec is None else load_rack(spec)
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
