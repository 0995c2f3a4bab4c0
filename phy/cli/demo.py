"""``linkmodel demo``: the whole chain on built-in defaults (a 212.5 Gb/s lane over 1 m of
twinax, its eyes and BER, the FEC, the link report, NVL72 built from it, its latency layer
by layer from the PHY floor to a collective, and decode over it)."""

from __future__ import annotations

import json
from pathlib import Path

import channels


# ----------------------------------------------------------------------------- demo
def run_demo(out: Path | None = None, n_ui: int = 200_000, plots: bool = True) -> dict:
    """The demo's figures (and plots in ``out``): the same library calls a user would make."""
    from .. import link as lk
    from .. import topology as tp
    from ..engines import simulate

    ch = channels.library.get("twinax_1m_26awg")
    spec = lk.LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, fec="KP4", retry=lk.Retry(),
                       name="demo: 2 x 212.5G over 1 m twinax")
    rep = lk.evaluate_link(spec)
    seg = lk.segments(spec)[0]
    sim = simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise, jitter=seg.jitter,
                   eye=plots and out is not None, seed=1)
    ui_delay = ch.delay_s / 1.0  # the cable is 1 m: its delay per metre
    cls = tp.LinkClass.from_report("twinax (demo link)", rep, ui_delay)
    rack = tp.nvl72(cls)
    rr = tp.rollup(rack)
    m70 = tp.Model.llama3_70b()
    d_local = tp.over_fabric(rr, m70, source="local")
    d_remote = tp.over_fabric(rr, m70, source="remote")
    d_tp8 = tp.over_fabric(rr, m70, source="local", tp=8)
    ar = rr.collective("all_reduce", 8.0)
    out_d = {
        "channel": {"name": ch.name, "loss_db_at_53ghz": float(ch.insertion_loss_db(53.125e9)), "delay_s": ch.delay_s},
        "equalisation": seg.equalisation, "com_db": seg.com_db,
        "stat_eye": {"ser": seg.ser, "der_with_dfe": seg.der, "heights_v_at_1e-6": seg.eye.heights_v(1e-6).tolist()},
        "time_domain": {"n_ui": sim.n_ui, "detector_errors": sim.detector_errors, "ber": sim.ber.value,
                        "ber_95": [sim.ber.low, sim.ber.high]},
        "link": rep.to_dict(),
        "nvl72": {"gpu_bandwidth_bps": rr.accel_bandwidth_bps, "aggregate_bps": rr.aggregate_bandwidth_bps,
                  "pairs": rr.cables, "spine_m": rr.cable_length_m, "phy_floor_s": rr.phy_floor_s["remote"],
                  "phy_floor_breakdown_s": rr.phy_floor_breakdown_s["remote"],
                  "one_way": rr.one_way["remote"].to_dict(), "remote_read": rr.round_trip["remote"].to_dict(),
                  "loaded_s": {str(u): q for u, q in rr.loaded_s["remote"].items()},
                  "all_reduce_8b": {"time_s": ar.time_s, "algorithm": ar.algorithm, "protocol": ar.protocol,
                                    "layers_s": ar.layer_totals()}},
        "decode_70b_fp8": {"local_hbm_tokens_per_s": d_local.tokens_per_s, "over_nvl72_tokens_per_s": d_remote.tokens_per_s,
                           "tp8_tokens_per_s": d_tp8.tokens_per_s, "tp8_comm_s": d_tp8.comm_s,
                           "remote_bytes_in_flight": d_remote.bytes_in_flight_needed},
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

    from ..engines import statistical_eye

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
    fig, ax = plt.subplots(figsize=(11, 4))
    ar = rr.collective("all_reduce", 8.0)
    bars = (("PHY floor", {"phy": rr.phy_floor_s["remote"]}), ("one way, 8 B", rr.one_way["remote"].layer_totals()),
            ("remote read, 64 B", rr.round_trip["remote"].layer_totals()),
            (f"all-reduce 8 B x {rr.n_accelerators}", ar.layer_totals()))
    colours = {}
    for y, (label, layers) in enumerate(bars):
        left = 0.0
        for k, v in layers.items():
            if v <= 0:
                continue
            c = colours.setdefault(k, f"C{len(colours)}")
            ax.barh([y], [v * 1e9], left=left, color=c, label=k if k not in ax.get_legend_handles_labels()[1] else None)
            left += v * 1e9
        ax.text(left, y, f" {left:.0f} ns", va="center", fontsize=8)
    ax.set_yticks(range(len(bars)), [b[0] for b in bars])
    ax.set_xscale("log")
    ax.set_xlabel("latency (ns), GPU to GPU in NVL72, by layer")
    ax.legend(fontsize=7, loc="lower right")
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
          f"{nv['aggregate_bps'] / 1e12:.1f} TB/s in all, {nv['pairs']} copper pairs ({nv['spine_m'] / 1e3:.2f} km)")
    print("latency      GPU to GPU, by layer (ns)")
    print(f"  PHY floor      {nv['phy_floor_s'] * 1e9:7.0f}  (links and switch ports only: "
          + ", ".join(f"{k} {v * 1e9:.0f}" for k, v in nv["phy_floor_breakdown_s"].items() if v >= 0.5e-9) + ")")
    for key, label in (("one_way", "one way, 8 B "), ("remote_read", "remote read  ")):
        st = nv[key]
        print(f"  {label}  {st['total_s'] * 1e9:7.0f}  ("
              + ", ".join(f"{k} {v * 1e9:.0f}" for k, v in st["layer_totals_s"].items() if v >= 0.5e-9) + ")")
    a = nv["all_reduce_8b"]
    print(f"  all-reduce 8 B {a['time_s'] * 1e9:7.0f}  over 72 GPUs, {a['algorithm']} {a['protocol']} ("
          + ", ".join(f"{k} {v * 1e9:.0f}" for k, v in a["layers_s"].items() if v >= 0.5e-9) + ")")
    q = nv["loaded_s"]["0.9"]
    print(f"  at 90 % switch load: one way p50 {q['p50'] * 1e9:.0f}, p99 {q['p99'] * 1e9:.0f}, "
          f"p99.99 {q['p99.99'] * 1e9:.0f}")
    dd = d["decode_70b_fp8"]
    print(f"decode       Llama 3 70B FP8 batch 1: {dd['local_hbm_tokens_per_s']:.1f} tok/s from HBM, "
          f"{dd['over_nvl72_tokens_per_s']:.1f} streamed over NVL72 ({dd['remote_bytes_in_flight'] / 1e6:.1f} MB in "
          f"flight), {dd['tp8_tokens_per_s']:.0f} tensor-parallel over 8 ({dd['tp8_comm_s'] * 1e3:.2f} ms of "
          f"all-reduces per token)")
    for f in d["plots"]:
        print(f"plot         {f}")
    for n in d.get("notes", []):
        print(f"note         {n}")
    print(f"time         {d['seconds']:.1f} s")
    return 0
