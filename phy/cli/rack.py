"""``linkmodel rack``: a topology from a TOML rack file (its keys, their defaults and
units below in ``_RACK``), its roll-up, decode over it and the system simulators' files."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import ConfigError

# ----------------------------------------------------------------------------- rack
_RACK = {
    "rack.builder": (("nvl72", "nvl36x2", "two_tier", "single_tier", "scale_out"), "nvl72"),
    "rack.accelerators": (int, 1024),
    "rack.racks": (int, 8),
    "link.lanes": (int, 2),
    "link.lane_rate_gbps": (float, 212.5),
    "link.awg": (float, 26),
    "link.fec": (("KP4", "KR4", "LL272", "none"), "KP4"),
    "link.equalization": (("com", "preset"), "preset"),
    "link.resolution_m": (float, 0.25),
    # an NVL72-class tray takes its lanes to the rear connectors on flyover cables, not
    # host board (a stated assumption; with 125 mm of host board, the preset receiver does
    # not close 1 m at 212.5 Gb/s with COM's 3 dB in this model)
    "link.host": (("flyover", "pcb", "none"), "flyover"),
    "uplink.kind": (("dsp", "lpo", "cpo"), "dsp"),
    "uplink.lanes": (int, 2),
    "decode.params": (float, 70e9),
    "decode.layers": (int, 80),
    "decode.batch": (int, 1),
    "decode.bytes_per_param": (float, 1.0),
    # the domain-size trade (phy.topology.domain): "sizes" plans each of domain.sizes,
    # "largest" searches whole racks up to what the switch radix allows
    "domain.search": (("none", "sizes", "largest"), "none"),
    "domain.sizes": ([int], [72, 144, 288, 576]),
    "domain.classes": ([("passive_copper", "aec", "lpo", "cpo", "dsp_optics")],
                       ["passive_copper", "aec", "lpo", "cpo", "dsp_optics"]),
    "domain.objective": (("power", "latency"), "power"),
    "domain.accelerators_per_rack": (int, 72),
    "domain.links_per_accelerator": (int, 18),
    "domain.rack_power_kw": (float, 132.0),
    "domain.max_tiers": (int, 2),
    "domain.max_cables_per_rack": (int, None),
    "domain.max_copper_kg_per_rack": (float, None),
    "domain.rack_pitch_m": (float, 0.6),
    "domain.overhead_m": (float, 4.0),
}


def _rack_spec(path) -> dict:
    """The rack file's settings over the defaults of ``_RACK``; :class:`phy.ConfigError`
    naming the file, line and key for anything else (a number must be finite and > 0)."""
    from ..sweep.spec import _read_text, _toml_loads, _where

    path, text = _read_text(path, "rack file")
    try:
        doc = _toml_loads(text)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    out = {k: v[1] for k, v in _RACK.items()}
    for sec, body in doc.items():
        if not isinstance(body, dict) or sec not in {k.split(".")[0] for k in _RACK}:
            raise ConfigError(f"{_where(path, text, sec, '')}: unknown section [{sec}]")
        for k, v in body.items():
            full = f"{sec}.{k}"
            if full not in _RACK:
                raise ConfigError(f"{_where(path, text, sec, k)}: unknown parameter {full!r}")
            kind = _RACK[full][0]
            if isinstance(kind, list):  # a non-empty list of values of kind[0]
                ok = isinstance(v, list) and bool(v) and all(_fits(x, kind[0]) for x in v)
                want = "a non-empty list, each " + _want(kind[0])
            else:
                ok, want = _fits(v, kind), _want(kind)
            if not ok:
                raise ConfigError(f"{_where(path, text, sec, k)} must be {want}, got {v!r}")
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


def run_domain(cfg: dict) -> tuple:
    """The domain-size trade of a rack file's ``[domain]`` section: (the largest plan that
    closes or None, every plan), :func:`phy.topology.domain.largest_domain` over
    ``domain.sizes`` or, with ``search = "largest"``, over whole racks."""
    from .. import topology as tp

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    fec = None if cfg["link.fec"] == "none" else cfg["link.fec"]
    host = None if cfg["link.host"] == "none" else cfg["link.host"]
    kinds = list(dict.fromkeys(cfg["domain.classes"]))
    cands = tuple(c for c in tp.default_candidates(int(cfg["link.lanes"]), rate, fec, host=host) if c.kind in kinds)
    lay = tp.Layout(accelerators_per_rack=int(cfg["domain.accelerators_per_rack"]),
                    links_per_accelerator=int(cfg["domain.links_per_accelerator"]),
                    rack_pitch_m=float(cfg["domain.rack_pitch_m"]), overhead_m=float(cfg["domain.overhead_m"]),
                    rack_power_w=float(cfg["domain.rack_power_kw"]) * 1e3, max_tiers=int(cfg["domain.max_tiers"]),
                    max_cables_per_rack=cfg["domain.max_cables_per_rack"],
                    max_copper_kg_per_rack=cfg["domain.max_copper_kg_per_rack"])
    sizes = None if cfg["domain.search"] == "largest" else cfg["domain.sizes"]
    return tp.largest_domain(lay, cands, sizes=sizes, objective=cfg["domain.objective"])


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
                   f"{r['copper_kg']:>6.1f} {r['one_way_remote_ns']:>9.0f} {r.get('step_fabric_kw', 0):>8.1f} "
                   f"{r.get('step_one_way_remote_ns', 0):>8.0f} {r['link_down_per_day']:>8.3g}  "
                   f"{'yes' if r['closes'] else 'NO ':<6}  "
                   f"{r['binding']}; {cl}")
    return "\n".join(out)


def run_rack(cfg: dict):
    from .. import topology as tp
    from ..sweep.point import _preset_serdes

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    sd = _preset_serdes(rate / 2, "pam4") if cfg["link.equalization"] == "preset" else None
    fec = None if cfg["link.fec"] == "none" else cfg["link.fec"]
    from ..link import Retry

    host = None if cfg["link.host"] == "none" else cfg["link.host"]
    copper = tp.LinkClass.copper_twinax(int(cfg["link.lanes"]), rate, float(cfg["link.awg"]), fec, sd,
                                        float(cfg["link.resolution_m"]), retry=Retry(), host=host)
    up = tp.LinkClass.optical(cfg["uplink.kind"], int(cfg["uplink.lanes"]), rate, fec)
    b = cfg["rack.builder"]
    topo = {"nvl72": lambda: tp.nvl72(copper), "nvl36x2": lambda: tp.nvl36x2(copper),
            "two_tier": lambda: tp.two_tier(int(cfg["rack.racks"]), copper, up),
            "single_tier": lambda: tp.single_tier(int(cfg["rack.accelerators"]), copper),
            "scale_out": lambda: tp.scale_out(int(cfg["rack.accelerators"]),
                                              tp.LinkClass.optical(cfg["uplink.kind"], 4, rate, fec))}[b]()
    r = tp.rollup(topo)
    m = tp.Model.dense("model", float(cfg["decode.params"]), int(cfg["decode.layers"]),
                       float(cfg["decode.bytes_per_param"]))
    dec = {s: tp.over_fabric(r, m, int(cfg["decode.batch"]), source=s).tokens_per_s for s in ("local", "remote")}
    return topo, r, dec


def _write_exports(d: Path, topo, r) -> None:
    """The system simulators' files of a roll-up, in folder ``d``."""
    from ..topology import export

    files = {
        "astra_sim_network.yml": lambda: export.astra_sim_network(r),
        "astra_sim_remote_memory.json": lambda: export.astra_sim_remote_memory(r),
        "calculon_network.json": lambda: json.dumps(export.calculon_network(r), indent=2),
        "genz_icn.json": lambda: json.dumps(export.genz_icn(r), indent=2),
        "genz_system.json": lambda: json.dumps({r.name: export.genz_system(r)}, indent=2),
        "llmcompass_link.json": lambda: json.dumps(export.llmcompass_link(r), indent=2),
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


def _cmd_rack(args) -> int:
    cfg = _rack_spec(args.spec)
    topo, r, dec = run_rack(cfg)
    if args.export:
        _write_exports(Path(args.export), topo, r)
    best, plans = run_domain(cfg) if cfg["domain.search"] != "none" else (None, [])
    if args.json:
        d = r.to_dict()
        d["decode_tokens_per_s"] = dec
        if plans:
            from ..topology import domain_steps

            d["domain"] = {"largest_closing": None if best is None else best.n_accelerators,
                           "plans": [p.to_dict() for p in plans], "table": domain_steps(plans)}
        print(json.dumps(d, indent=2))
        return 0
    print(f"{r.name}: {r.n_accelerators} accelerators, switches {r.n_switches}")
    print(f"  per accelerator {r.accel_bandwidth_bps / 1e9:.1f} GB/s per direction; aggregate "
          f"{r.aggregate_bandwidth_bps / 1e12:.2f} TB/s; bisection {r.bisection_bandwidth_bps / 1e12:.2f} TB/s")
    print(f"  {r.cables} cables, {r.cable_length_m / 1e3:.2f} km; link power {r.link_power_w / 1e3:.2f} kW")
    print("  " + r.power.table())
    for line in r.latency_table("remote").splitlines():
        print("  " + line)
    for f in r.failing:
        print(f"  FAILING: {f['cables']} cables of {f['class']} at {f['length_m']:g} m: {'; '.join(f['reasons'])}")
    print(f"  decode batch {cfg['decode.batch']}: {dec['local']:.2f} tok/s from local memory, "
          f"{dec['remote']:.2f} over the fabric")
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
