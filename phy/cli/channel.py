"""``linkmodel channel`` and ``linkmodel library``: a channel's band, port order, delay,
losses, quality, pulse response and effective return loss of each port (text, JSON or a
plot), and the built-in channels."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

import channels
from channels import ChannelError, ChannelQualityWarning

from ..engines.com.erl import ErlParams, effective_return_loss, preset_for_baud
from ..errors import ConfigError


def _open(target: str, thru: str, aggressors: str | None) -> channels.Channel:
    if target in channels.library.names():
        return channels.library.get(target)
    try:
        exists = Path(target).exists()
    except (OSError, ValueError) as e:  # a name too long for the OS, a NUL in it
        from ..config.files import show_path as _show

        why = e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
        raise ChannelError(f"{_show(target)}: not a usable path ({why})") from None
    if not exists:
        raise ChannelError(
            f"{target!r} is neither a built-in channel ({', '.join(channels.library.names())}) nor an existing file"
        )
    return channels.load(target, thru=thru, aggressors=aggressors)


def erl_sets(bauds_hz, preset: str = "auto") -> list[ErlParams]:
    """The ERL parameter sets ``linkmodel channel`` uses: ``"auto"``, at each rate the CR
    preset of its family (:func:`phy.engines.com.erl.preset_for_baud`, the rule the link
    report follows); ``"none"``; or one named preset (``802.3ck_kr`` ...) at its own rate."""
    if preset == "none":
        return []
    if preset == "auto":
        return [preset_for_baud(b) for b in bauds_hz]
    return [ErlParams.preset(preset)]


def erl_report(ch: channels.Channel, p: ErlParams) -> dict:
    """ERL of both ports for one parameter set, as a plain dict (the reason when the data
    cannot give it)."""
    entry = {"preset": p.name, "baud_gbd": p.baud_hz / 1e9, "limit_db": p.limit_db, "source": p.source, "ports": []}
    try:
        res = effective_return_loss(ch, p)
    except ConfigError as e:
        entry["unavailable"] = str(e)
        return entry
    entry["ports"] = [{"port": r.port, "erl_db": r.erl_db, "passes": r.passes} for r in res]
    entry["notes"] = sorted({n for r in res for n in r.notes[1:]})
    return entry


def channel_report(ch: channels.Channel, bauds_hz, samples_per_ui: int = 32, erl: str = "auto") -> dict:
    """The figures ``linkmodel channel`` prints, as a plain dict (units in the keys); ``erl``
    chooses the ERL sets (:func:`erl_sets`)."""
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
        "erl": [erl_report(ch, p) for p in erl_sets(bauds_hz, erl)],
    }


def _print_report(r: dict) -> None:
    print(f"channel      {r['name']}" + (f"  ({r['source']})" if r["source"] else ""))
    print(f"network      {r['ports']}-port, {r['points']} points, {r['band_ghz'][0]:.4g} to {r['band_ghz'][1]:.4g} GHz")
    if r["port_order"]:
        po = r["port_order"]
        print(f"port order   {po['name']}: input pair {tuple(po['inputs'])}, output pair {tuple(po['outputs'])}")
    print(f"delay        {r['delay_ns']:.3f} ns (the through's time of flight)")
    for row in r["rates"]:
        il, rl = row["insertion_loss_db"], row["return_loss_db"]
        head = f"{row['baud_gbd']:g} GBd (Nyquist {row['nyquist_ghz']:g} GHz)"
        if il is None:
            print(f"{head}: beyond the data")
            continue
        print(f"{head}: insertion loss {il:.2f} dB, return loss {rl:.2f} dB")
        if "pulse_main_cursor" in row:
            cur = ", ".join(f"{c:+.4f}" for c in row["cursors_pre1_to_post4"])
            print(f"    pulse: main cursor {row['pulse_main_cursor']:.4f} of the launched pulse's height, at "
                  f"{row['pulse_delay_ns']:.3f} ns; cursors h-1..h4 [{cur}]")
        if row.get("fom_ild_db") is not None:
            print(f"    FOM_ILD {row['fom_ild_db']:.3f} dB")
        for name, peak in row.get("crosstalk_peak", {}).items():
            print(f"    crosstalk {name}: peak {peak:.5f} of the launched pulse's height")
    for e in r.get("erl", []):
        _print_erl(e)
    for p in r["quality_problems"]:
        print(f"quality      {p}")
    if not r["quality_problems"]:
        print("quality      passive, reciprocal and causal (IEEE 370: good)")


def _print_erl(e: dict) -> None:
    head = f"ERL ({e['preset']})"
    if not e["ports"]:
        print(f"{head}  unavailable: {e['unavailable']}")
        return
    ports = ", ".join(f"port {x['port']} {x['erl_db']:.2f} dB" for x in e["ports"])
    verdict = ""
    if e["limit_db"] is not None:
        failing = [str(x["port"]) for x in e["ports"] if not x["passes"]]
        verdict = f" (limit {e['limit_db']:g} dB: " + ("pass)" if not failing else f"fail at port {', '.join(failing)})")
    print(f"{head}  {ports}{verdict}")
    for n in e.get("notes", []):
        print(f"    {n}")


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
    try:
        from ._args import save_figure

        save_figure(fig, path, dpi=110)
    finally:
        plt.close(fig)


def _cmd_channel(args) -> int:
    from ._args import output_file

    if args.plot:  # before the work: a missing or unwritable folder is refused now, not after it
        output_file(args.plot, "--plot")
    bauds = [b * 1e9 for b in args.baud_gbd]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ChannelQualityWarning)
        ch = _open(args.target, args.thru, "auto" if args.aggressors else None)
        report = channel_report(ch, bauds, args.samples_per_ui, args.erl_preset)
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
