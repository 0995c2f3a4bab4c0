"""The ``linkmodel`` command.

Subcommands (``linkmodel SUBCOMMAND --help`` for each):

* ``channel NAME_OR_FILE``: summarise a built-in channel or a Touchstone file: band,
  port order chosen, delay, insertion and return loss at each Nyquist frequency,
  insertion-loss deviation, quality warnings, the pulse response's cursors, and its
  crosstalk; ``--json`` for machine-readable output, ``--plot`` for a figure.
* ``library``: the built-in channels and their documented losses.
* ``demo``: the whole chain on built-in defaults, no files needed: a 212.5 Gb/s PAM4 lane
  over 1 m of twinax, its eye (time domain and statistical) and BER, the FEC, the link
  report, the NVL72 roll-up and decode over it; prints a report and writes plots.
* ``link SPEC.toml``: evaluate one link described in TOML (the sweep format without
  ``[grid]``/``[zip]``); a table or ``--json``.
* ``sweep SPEC.toml``: run a sweep (:mod:`phy.sweep`) into a crash-safe, locked store;
  resumes; a per-point time limit (``--point-timeout-s``).
* ``rack SPEC.toml``: a topology roll-up (:mod:`phy.topology`) and its exports.

A bad argument or file exits with status 2 and one line on stderr; Ctrl-C exits with 130
(a sweep's finished points are kept); a closed stdout (``linkmodel library --json | head``)
ends the command quietly with status 141, as a shell's SIGPIPE would.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np

import channels
from channels import ChannelError, ChannelQualityWarning

from .errors import ConfigError

__all__ = ["channel_report", "main"]


def _open(target: str, thru: str, aggressors: str | None) -> channels.Channel:
    if target in channels.library.names():
        return channels.library.get(target)
    try:
        exists = Path(target).exists()
    except (OSError, ValueError) as e:  # a name too long for the OS, a NUL in it
        from .sweep.spec import _show

        why = e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
        raise ChannelError(f"{_show(target)}: not a usable path ({why})") from None
    if not exists:
        raise ChannelError(
            f"{target!r} is neither a built-in channel ({', '.join(channels.library.names())}) nor an existing file"
        )
    return channels.load(target, thru=thru, aggressors=aggressors)


def channel_report(ch: channels.Channel, bauds_hz, samples_per_ui: int = 32) -> dict:
    """The figures ``linkmodel channel`` prints, as a plain dict (units in the keys)."""
    rep = ch.summary(bauds_hz)
    rows = []
    for row in rep["nyquist"]:
        baud = row["baud_hz"]
        entry = {
            "baud_gbd": baud / 1e9,
            "nyquist_ghz": row["nyquist_hz"] / 1e9,
            "insertion_loss_db": row["insertion_loss_db"],
            "return_loss_db": row["return_loss_db"],
        }
        if ch.f[-1] >= baud / 2:
            pr = ch.pulse_response(baud, samples_per_ui, rise_time_s=0.3 / baud, rx_bandwidth_hz=0.75 * baud)
            entry["pulse_main_cursor"] = pr.main_cursor
            entry["pulse_delay_ns"] = pr.delay_s * 1e9
            entry["cursors_pre1_to_post4"] = pr.cursors(1, 4).tolist()
            entry["crosstalk_peak"] = {a.name: float(np.max(np.abs(a.samples))) for a in pr.aggressors}
            if ch.f[-1] >= baud:
                entry["fom_ild_db"] = ch.ild(baud).fom_ild_db
        rows.append(entry)
    return {
        "name": rep["name"],
        "source": rep["source"],
        "ports": rep["ports"],
        "points": rep["points"],
        "band_ghz": [rep["f_min_hz"] / 1e9, rep["f_max_hz"] / 1e9],
        "port_order": rep["port_order"],
        "delay_ns": rep["delay_s"] * 1e9,
        "quality_problems": rep["quality_problems"],
        "aggressors": rep["aggressors"],
        "rates": rows,
    }


def _print_report(r: dict) -> None:
    print(f"channel      {r['name']}" + (f"  ({r['source']})" if r["source"] else ""))
    print(f"network      {r['ports']}-port, {r['points']} points, {r['band_ghz'][0]:.4g} to {r['band_ghz'][1]:.4g} GHz")
    if r["port_order"]:
        po = r["port_order"]
        print(f"port order   {po['name']}: input pair {tuple(po['inputs'])}, output pair {tuple(po['outputs'])}")
    print(f"delay        {r['delay_ns']:.3f} ns")
    for row in r["rates"]:
        il, rl = row["insertion_loss_db"], row["return_loss_db"]
        head = f"{row['baud_gbd']:g} GBd (Nyquist {row['nyquist_ghz']:g} GHz)"
        if il is None:
            print(f"{head}: beyond the data")
            continue
        print(f"{head}: insertion loss {il:.2f} dB, return loss {rl:.2f} dB")
        if "pulse_main_cursor" in row:
            cur = ", ".join(f"{c:+.4f}" for c in row["cursors_pre1_to_post4"])
            print(f"    pulse: main cursor {row['pulse_main_cursor']:.4f} at {row['pulse_delay_ns']:.3f} ns; "
                  f"cursors h-1..h4 [{cur}]")
        if row.get("fom_ild_db") is not None:
            print(f"    FOM_ILD {row['fom_ild_db']:.3f} dB")
        for name, peak in row.get("crosstalk_peak", {}).items():
            print(f"    crosstalk {name}: peak {peak:.5f}")
    for p in r["quality_problems"]:
        print(f"quality      {p}")
    if not r["quality_problems"]:
        print("quality      passive, reciprocal and causal (IEEE 370: good)")


def _plot(ch: channels.Channel, baud: float, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ChannelError("--plot needs matplotlib: pip install 'linkmodel[plots]'") from exc
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.plot(ch.f / 1e9, -ch.insertion_loss_db(), label="Sdd21")
    a1.plot(ch.f / 1e9, -ch.return_loss_db(), label="Sdd11")
    a1.set_xlabel("frequency (GHz)")
    a1.set_ylabel("dB")
    a1.set_ylim(bottom=max(-100.0, a1.get_ylim()[0]))
    a1.legend()
    a1.set_title(ch.name)
    pr = ch.pulse_response(baud, 32, rise_time_s=0.3 / baud, rx_bandwidth_hz=0.75 * baud)
    t = (pr.time_s - pr.delay_s) / pr.ui_s
    keep = (t > -5) & (t < 30)
    a2.plot(t[keep], pr.samples[keep], label="through")
    idx = pr.main_index + pr.samples_per_ui * np.arange(-5, 30)
    idx = idx[(idx >= 0) & (idx < pr.samples.size)]
    a2.plot((pr.time_s[idx] - pr.delay_s) / pr.ui_s, pr.samples[idx], "o", ms=3, label="cursors")
    for a in pr.aggressors:
        a2.plot(t[keep], a.samples[keep], lw=0.8, label=a.name)
    a2.set_xlabel("time from main cursor (UI)")
    a2.set_ylabel("V/V")
    a2.set_title(f"pulse response at {baud / 1e9:g} GBd")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cmd_channel(args) -> int:
    bauds = [b * 1e9 for b in args.baud_gbd]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ChannelQualityWarning)
        ch = _open(args.target, args.thru, "auto" if args.aggressors else None)
        report = channel_report(ch, bauds, args.samples_per_ui)
    report["warnings"] = [str(w.message) for w in caught if issubclass(w.category, ChannelQualityWarning)]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(report)
        for w in report["warnings"]:
            print(f"warning      {w}")
    if args.plot:
        _plot(ch, bauds[-1] if ch.f[-1] >= bauds[-1] / 2 else bauds[0], args.plot)
        if not args.json:
            print(f"plot         {args.plot}")
    return 0


def _cmd_library(args) -> int:
    rows = [channels.library.describe(n) for n in channels.library.names()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        losses = ", ".join(f"{k}: {v:.2f} dB" for k, v in r["documented_loss_db"].items())
        print(f"{r['name']:<18} {losses}\n    {r['description']}")
    return 0


# ----------------------------------------------------------------------------- demo
def run_demo(out: Path | None = None, n_ui: int = 200_000, plots: bool = True) -> dict:
    """The demo's figures (and plots in ``out``): the same library calls a user would make."""
    from . import link as lk
    from . import topology as tp
    from .engines import simulate

    ch = channels.library.get("twinax_1m_26awg")
    spec = lk.LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, fec="KP4", name="demo: 2 x 212.5G over 1 m twinax")
    rep = lk.evaluate_link(spec)
    seg = lk.segments(spec)[0]
    sim = simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise, jitter=seg.jitter,
                   eye=plots and out is not None, seed=1)
    ui_delay = ch.delay_s / 1.0  # the cable is 1 m: its delay per metre
    cls = tp.LinkClass.from_report("twinax (demo link)", rep, ui_delay)
    rack = tp.nvl72(cls)
    rr = tp.rollup(rack)
    m70 = tp.Model.dense("70B dense FP8", 70e9, 80)
    d_local = tp.over_fabric(rr, m70, source="local")
    d_remote = tp.over_fabric(rr, m70, source="remote")
    out_d = {
        "channel": {"name": ch.name, "loss_db_at_53ghz": float(ch.insertion_loss_db(53.125e9)), "delay_s": ch.delay_s},
        "equalisation": seg.equalisation, "com_db": seg.com_db,
        "stat_eye": {"ser": seg.ser, "der_with_dfe": seg.der, "heights_v_at_1e-6": seg.eye.heights_v(1e-6).tolist()},
        "time_domain": {"n_ui": sim.n_ui, "detector_errors": sim.detector_errors, "ber": sim.ber.value,
                        "ber_95": [sim.ber.low, sim.ber.high]},
        "link": rep.to_dict(),
        "nvl72": {"gpu_bandwidth_bps": rr.accel_bandwidth_bps, "aggregate_bps": rr.aggregate_bandwidth_bps,
                  "pairs": rr.cables, "spine_m": rr.cable_length_m, "gpu_to_gpu_latency_s": rr.latency_s["remote"],
                  "latency_breakdown_s": rr.latency_breakdown_s["remote"]},
        "decode_70b_fp8": {"local_hbm_tokens_per_s": d_local.tokens_per_s, "over_nvl72_tokens_per_s": d_remote.tokens_per_s},
        "plots": [],
    }
    if plots and out is not None:
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError:
            out_d["notes"] = ["plots skipped: matplotlib is not installed (pip install 'linkmodel[plots]')"]
        else:
            out_d["plots"] = _demo_plots(Path(out), sim, seg, rep, rr)
    return out_d


def _demo_plots(out: Path, sim, seg, rep, rr) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .engines import statistical_eye

    out.mkdir(parents=True, exist_ok=True)
    files = []
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    sim.eye.plot(ax=ax[0])
    ax[0].set_title(f"time domain, {sim.n_ui:,} UI")
    full = statistical_eye(seg.channel, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise, jitter=seg.jitter)
    full.plot(ax=ax[1])
    ax[1].set_title("statistical eye (BER contours)")
    fig.tight_layout()
    files.append(str(out / "eye.png"))
    fig.savefig(files[-1], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for a, (title, brk) in zip(ax, (("one link", rep.latency_breakdown_s),
                                    ("GPU to GPU in NVL72", rr.latency_breakdown_s["remote"]))):
        left = 0.0
        for k, v in brk.items():
            a.barh([0], [v * 1e9], left=left, label=k)
            left += v * 1e9
        a.set_yticks([])
        a.set_xlabel("latency (ns)")
        a.set_title(title)
        a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3)
    fig.tight_layout()
    files.append(str(out / "latency.png"))
    fig.savefig(files[-1], dpi=110)
    plt.close(fig)
    return files


def _cmd_demo(args) -> int:
    import time

    t = time.perf_counter()
    d = run_demo(None if args.no_plots else Path(args.out), args.n_ui, plots=not args.no_plots)
    d["seconds"] = time.perf_counter() - t
    if args.json:
        print(json.dumps(d, indent=2, default=float))
        return 0
    lr = d["link"]
    print(f"channel      {d['channel']['name']}: {d['channel']['loss_db_at_53ghz']:.2f} dB at 53.125 GHz, "
          f"{d['channel']['delay_s'] * 1e9:.2f} ns")
    print(f"equalisation {d['equalisation']} (COM {d['com_db']:.2f} dB)")
    print(f"stat eye     SER {d['stat_eye']['ser']:.3g}, with DFE bursts {d['stat_eye']['der_with_dfe']:.3g}; "
          f"eye heights at 1e-6 " + ", ".join(f"{h * 1e3:.1f}" for h in d["stat_eye"]["heights_v_at_1e-6"]) + " mV")
    td = d["time_domain"]
    print(f"time domain  {td['n_ui']:,} UI: {td['detector_errors']} detector errors, BER {td['ber']:.3g} "
          f"(95 % up to {td['ber_95'][1]:.2g})")
    print(f"FEC          {lr['fec']}: pre-FEC BER {lr['pre_fec_ber']:.3g}, post-FEC {lr['post_fec_ber']:.3g}, "
          f"margin {lr['margin_db']:.2f} dB")
    print(f"link         {'PASS' if lr['passes'] else 'FAIL'}: {lr['usable_bandwidth_bps'] / 1e9:.1f} Gb/s per direction, "
          f"{lr['latency_s'] * 1e9:.1f} ns (" + ", ".join(f"{k} {v * 1e9:.1f}" for k, v in
                                                         lr["latency_breakdown_s"].items()) + ")")
    nv = d["nvl72"]
    print(f"NVL72        {nv['gpu_bandwidth_bps'] / 1e9:.0f} GB/s per GPU per direction, "
          f"{nv['aggregate_bps'] / 1e12:.1f} TB/s in all, {nv['pairs']} copper pairs ({nv['spine_m'] / 1e3:.2f} km), "
          f"GPU to GPU {nv['gpu_to_gpu_latency_s'] * 1e9:.0f} ns")
    dd = d["decode_70b_fp8"]
    print(f"decode       70B FP8 batch 1: {dd['local_hbm_tokens_per_s']:.1f} tok/s from HBM, "
          f"{dd['over_nvl72_tokens_per_s']:.1f} over NVL72")
    for f in d["plots"]:
        print(f"plot         {f}")
    for n in d.get("notes", []):
        print(f"note         {n}")
    print(f"time         {d['seconds']:.1f} s")
    return 0


# ----------------------------------------------------------------------------- link, sweep
def _cmd_link(args) -> int:
    from . import sweep as sw

    spec = sw.load_spec(args.spec, sweep=False)
    p = sw.points(spec)[0]
    from .link import evaluate_link

    r = evaluate_link(sw.link_spec(p))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print(r.summary())
    return 0 if r.passes else 1


def _cmd_sweep(args) -> int:
    from . import sweep as sw

    spec = sw.load_spec(args.spec)
    store = args.store or str(Path(args.spec).with_suffix(".jsonl"))
    n = len(sw.points(spec))
    print(f"sweep {spec.name}: {n} points -> {store}", file=sys.stderr)
    r = sw.run_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                     point_timeout_s=args.point_timeout_s, progress=not args.no_progress,
                     retry_failed=args.retry_failed)
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    late = f" ({r.timed_out} past the time limit)" if r.timed_out else ""
    print(f"{r.total} points: {r.skipped} already done, {r.ok} ran, {r.failed} failed{late}, "
          f"{r.seconds:.1f} s ({r.points_per_second:.2f} points/s); store {r.store}")
    for n in r.notes:
        print(f"note: {n}")
    return 0


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
    "uplink.kind": (("dsp", "lpo", "cpo"), "dsp"),
    "uplink.lanes": (int, 2),
    "decode.params": (float, 70e9),
    "decode.layers": (int, 80),
    "decode.batch": (int, 1),
    "decode.bytes_per_param": (float, 1.0),
}


def _rack_spec(path) -> dict:
    """The rack file's settings over the defaults of ``_RACK``; :class:`phy.ConfigError`
    naming the file, line and key for anything else (a number must be finite and > 0)."""
    from .sweep.spec import _read_text, _toml_loads, _where

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
            ok = (v in kind) if isinstance(kind, tuple) else (
                not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
                and (kind is float or float(v).is_integer()) and v > 0)
            if not ok:
                want = ("one of " + ", ".join(kind)) if isinstance(kind, tuple) else (
                    f"a finite positive {'number' if kind is float else 'whole number'}")
                raise ConfigError(f"{_where(path, text, sec, k)} must be {want}, got {v!r}")
            out[full] = v
    return out


def run_rack(cfg: dict):
    from . import topology as tp
    from .sweep.point import _preset_serdes

    rate = float(cfg["link.lane_rate_gbps"]) * 1e9
    sd = _preset_serdes(rate / 2, "pam4") if cfg["link.equalization"] == "preset" else None
    fec = None if cfg["link.fec"] == "none" else cfg["link.fec"]
    copper = tp.LinkClass.copper_twinax(int(cfg["link.lanes"]), rate, float(cfg["link.awg"]), fec, sd,
                                        float(cfg["link.resolution_m"]))
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
    from .topology import export

    files = {
        "astra_sim_network.yml": lambda: export.astra_sim_network(r),
        "astra_sim_remote_memory.json": lambda: export.astra_sim_remote_memory(r),
        "calculon_network.json": lambda: json.dumps(export.calculon_network(r), indent=2),
        "genz_icn.json": lambda: json.dumps(export.genz_icn(r), indent=2),
        "llmcompass_link.json": lambda: json.dumps(export.llmcompass_link(r), indent=2),
        "ns3_topology.txt": lambda: export.ns3_topology(topo, r),
        "rollup.json": lambda: export.to_json(r),
    }
    try:
        d.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (d / name).write_text(text())
    except OSError as e:
        from .sweep.spec import _show

        raise ConfigError(f"--export {_show(d)}: cannot write there ({(e.strerror or str(e)).lower()})") from None


def _cmd_rack(args) -> int:
    cfg = _rack_spec(args.spec)
    topo, r, dec = run_rack(cfg)
    if args.export:
        _write_exports(Path(args.export), topo, r)
    if args.json:
        d = r.to_dict()
        d["decode_tokens_per_s"] = dec
        print(json.dumps(d, indent=2))
        return 0
    print(f"{r.name}: {r.n_accelerators} accelerators, switches {r.n_switches}")
    print(f"  per accelerator {r.accel_bandwidth_bps / 1e9:.1f} GB/s per direction; aggregate "
          f"{r.aggregate_bandwidth_bps / 1e12:.2f} TB/s; bisection {r.bisection_bandwidth_bps / 1e12:.2f} TB/s")
    print(f"  {r.cables} cables, {r.cable_length_m / 1e3:.2f} km; link power {r.link_power_w / 1e3:.2f} kW")
    for k, v in r.latency_s.items():
        print(f"  latency {k}: {v * 1e9:.1f} ns (" + ", ".join(
            f"{a} {b * 1e9:.1f}" for a, b in r.latency_breakdown_s[k].items()) + ")")
    for f in r.failing:
        print(f"  FAILING: {f['cables']} cables of {f['class']} at {f['length_m']:g} m: {'; '.join(f['reasons'])}")
    print(f"  decode batch {cfg['decode.batch']}: {dec['local']:.2f} tok/s from local memory, "
          f"{dec['remote']:.2f} over the fabric")
    if args.export:
        print(f"  exports in {args.export}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="linkmodel", description="Physical-layer link and SerDes modeler.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("channel", help="summarise a built-in channel or a Touchstone file",
                       description="Loss, return loss, port order, quality and pulse response of a channel.")
    c.add_argument("target", help="a built-in channel name (see 'linkmodel library') or a .s2p/.s4p/.sNp file")
    c.add_argument("--baud-gbd", type=float, nargs="+", default=[53.125, 106.25],
                   help="symbol rates in GBd (default: 53.125 106.25)")
    c.add_argument("--samples-per-ui", type=int, default=32, help="pulse-response samples per UI (default 32)")
    c.add_argument("--thru", default="auto", help="4-port order: auto (default), 12_34, 13_24 or 14_23")
    c.add_argument("--aggressors", action="store_true",
                   help="also load the crosstalk files beside a through file (names sharing the part before 'thru')")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    c.add_argument("--plot", metavar="PNG", help="write loss and pulse-response plots to this file")
    c.set_defaults(func=_cmd_channel)
    lib = sub.add_parser("library", help="list the built-in channels", description="The built-in channels.")
    lib.add_argument("--json", action="store_true", help="print JSON instead of text")
    lib.set_defaults(func=_cmd_library)
    d = sub.add_parser("demo", help="the whole chain on built-in defaults",
                       description="A 212.5 Gb/s PAM4 lane over 1 m of twinax: eye, BER, FEC, link report, "
                                   "NVL72 roll-up and decode; prints a report and writes plots.")
    d.add_argument("--out", default="linkmodel-demo", help="folder for the plots (default linkmodel-demo)")
    d.add_argument("--n-ui", type=int, default=200_000, help="UIs of the time-domain run (default 200000)")
    d.add_argument("--no-plots", action="store_true", help="skip the plots (and matplotlib)")
    d.add_argument("--json", action="store_true", help="print JSON instead of text")
    d.set_defaults(func=_cmd_demo)
    lk = sub.add_parser("link", help="evaluate a link described in a TOML file",
                        description="Evaluate one link: [channel] or [optics], and [link] (see phy.sweep).")
    lk.add_argument("spec", help="TOML file")
    lk.add_argument("--json", action="store_true", help="print JSON instead of text")
    lk.set_defaults(func=_cmd_link)
    s = sub.add_parser("sweep", help="run a sweep from a TOML file (resumes; crash-safe store)",
                       description="Run every point of a sweep ([grid] and [zip]) into a JSON Lines store.")
    s.add_argument("spec", help="TOML file")
    s.add_argument("--store", help="JSON Lines store (default: the spec's name with .jsonl)")
    s.add_argument("--executor", choices=("inline", "processes", "dask"), help="default: the spec's, else processes")
    s.add_argument("--workers", type=int, help="worker processes")
    s.add_argument("--point-timeout-s", type=float, metavar="S",
                   help="time limit of one point in seconds (default: the spec's point_timeout_s, else 60)")
    s.add_argument("--scheduler", help="a Dask scheduler address (implies --executor dask)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--retry-failed", action="store_true", help="rerun points whose record is an error or a timeout")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=_cmd_sweep)
    r = sub.add_parser("rack", help="roll up a rack or domain from a TOML file",
                       description="Topology roll-up: [rack] builder, [link] copper, [uplink] optics, [decode].")
    r.add_argument("spec", help="TOML file")
    r.add_argument("--export", metavar="DIR", help="write ASTRA-sim, Calculon, GenZ, LLMCompass, ns-3 and JSON files")
    r.add_argument("--json", action="store_true", help="print JSON instead of text")
    r.set_defaults(func=_cmd_rack)
    return p


def main(argv=None) -> int:
    """Entry point of the ``linkmodel`` console script: the command's status, 2 with one
    line on stderr for bad input, 130 on Ctrl-C, 141 when stdout is closed early."""
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored ..."
        return code
    except (ChannelError, ConfigError) as exc:
        print(f"linkmodel: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader left (``| head``): nothing more to say. Point stdout at /dev/null so
        # the interpreter's last flush at exit does not fail again.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
    except KeyboardInterrupt:
        print("linkmodel: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
