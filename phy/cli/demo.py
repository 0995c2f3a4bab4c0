"""``linkmodel demo``: the whole chain on built-in defaults (a 212.5 Gb/s lane over 1 m of
twinax, its eyes and BER, the FEC, the link report, NVL72 and decode over it)."""

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
