"""``linkmodel demo``: the whole chain on built-in defaults (a 212.5 Gb/s lane over 1 m of
twinax, its eyes and BER, the FEC, the link report, NVL72 as ``linkmodel rack`` rolls it up
with its defaults, its latency layer by layer from the PHY floor to a collective, and
decode over it), every figure with its unit and what it is measured against."""

from __future__ import annotations

import json
from pathlib import Path

import channels

from .._procs import fork_call

# ----------------------------------------------------------------------------- demo
#: The deprecated keys of the demo's ``nvl72`` dict (bytes/s under a bits/s suffix).
#: UIs of the time-domain run behind the demo's eye figure (the error count runs ``n_ui``).
EYE_FIGURE_UI = 20_000
#: The most UIs the demo's time-domain run takes (``--n-ui``): about two minutes at the
#: simulator's 10 M UI/s on one core.
MAX_DEMO_UI = 10**9
_NVL72_ALIASES = {"gpu_bandwidth_bps": "gpu_bandwidth_bytes_per_s", "aggregate_bps": "aggregate_bandwidth_bytes_per_s"}


def run_demo(out: Path | None = None, n_ui: int = 200_000, plots: bool = True) -> dict:
    """The demo's figures (and plots in ``out``): the same library calls a user would make.

    The NVL72 part is ``linkmodel rack`` with its defaults (:func:`phy.cli.rack.run_rack`),
    so the two print the same figures. ``n_ui`` from 1 to :data:`MAX_DEMO_UI`; ``out`` a
    folder (made if missing) checked before the work when plots are written."""
    from .._validate import integer

    n_ui = integer(n_ui, "n_ui", 1, MAX_DEMO_UI)
    if plots and out is not None:
        from ._args import output_dir

        out = output_dir(str(out), "out")
    from .. import link as lk
    from .. import topology as tp
    from ..engines import simulate
    from ..topology._aliases import with_key_aliases
    from ._fabric import fabric_figures
    from .rack import rack_defaults, run_rack

    ch = channels.library.get("twinax_1m_26awg")
    # the cable assembly between two cabled hosts: 802.3dj CR host class HL at each end with
    # the CR reference receiver (an NVL72-class tray's flyover cables to its rear connectors)
    spec = lk.LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, fec="KP4", retry=lk.Retry(), serdes=lk.Serdes.cr("HL"),
                       name="demo: 2 x 212.5G over 1 m twinax")
    figures = plots and out is not None

    def lane():
        rep = lk.evaluate_link(spec)
        seg = lk.segments(spec)[0]
        run = dict(baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise, jitter=seg.jitter)
        sim = simulate(seg.channel, n_ui, eye=False, seed=1, **run)  # the error count: decisions only
        # The eye figure's own, shorter run: its histogram of 32 columns per UI costs about
        # 20x the decisions on this channel's 1,000-UI pulse, and 20,000 UI fill it.
        eye_sim = simulate(seg.channel, min(n_ui, EYE_FIGURE_UI), eye=True, seed=2, **run) if figures else None
        return rep, seg, sim, eye_sim, _full_eye(seg) if figures else None

    # the lane in a second process while the rack's cable lengths take every core here: the
    # same calls, the same results (phy._procs)
    lane_run = fork_call(lane)
    cfg = rack_defaults()
    _, rr, _ = run_rack(cfg)
    rep, seg, sim, eye_sim, full = lane_run.result()
    m70 = tp.Model.llama3_70b()
    d_local = tp.over_fabric(rr, m70, source="local")
    d_remote = tp.over_fabric(rr, m70, source="remote")
    d_tp8 = tp.over_fabric(rr, m70, source="local", tp=8)
    nvl72 = {"built_from": f"linkmodel rack's defaults: {next(iter(rr.cables_by_class), 'copper')}, each length "
                           f"evaluated, equalisation {cfg['link.equalisation']}",
             "gpu_bandwidth_bytes_per_s": rr.accel_bandwidth_bytes_per_s,
             "aggregate_bandwidth_bytes_per_s": rr.aggregate_bandwidth_bytes_per_s,
             "pairs": rr.cables, "spine_m": rr.cable_length_m, **fabric_figures(rr)}
    out_d = {
        "channel": {"name": ch.name, "loss_db_at_53ghz": float(ch.insertion_loss_db(53.125e9)), "delay_s": ch.delay_s},
        "equalisation": seg.equalisation, "com_db": seg.com_db,
        "stat_eye": {"ser": seg.ser, "der_with_dfe": seg.der, "heights_v_at_1e-6": seg.eye.heights_v(1e-6).tolist()},
        "time_domain": {"n_ui": sim.n_ui, "detector_errors": sim.detector_errors, "ber": sim.ber.value,
                        "ber_95": [sim.ber.low, sim.ber.high]},
        "link": rep.to_dict(),
        "nvl72": with_key_aliases(nvl72, _NVL72_ALIASES),
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
            out_d["plots"] = _demo_plots(Path(out), eye_sim, seg, rep, rr, full)
    return out_d


def _full_eye(seg):
    """The statistical eye of a segment at every time offset (the figure's right panel)."""
    from ..engines import statistical_eye

    return statistical_eye(seg.channel, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise, jitter=seg.jitter)


def _demo_plots(out: Path, sim, seg, rep, rr, full=None) -> list[str]:
    """Write the demo's two figures in ``out`` (PNG): the eyes, and the latency by layer (a
    failure to write is an ``OSError`` naming the file)."""
    from ._args import save_figure

    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, fig in (("eye.png", _eye_figure(sim, seg, rep, full)), ("latency.png", _latency_figure(rr))):
        files.append(str(out / name))
        save_figure(fig, files[-1], dpi=110)
    return files


def _eye_figure(sim, seg, rep, full=None):
    """The time-domain and the statistical eye of the demo's lane, side by side on one time
    span and one voltage scale (a matplotlib Figure, no pyplot state); ``full`` is the
    segment's statistical eye at every time offset (computed when not given)."""
    from matplotlib.figure import Figure

    from .._plot import share_limits

    fig = Figure(figsize=(12, 4.4), layout="constrained")
    ax = fig.subplots(1, 2)
    sim.eye.plot(ax=ax[0])
    ax[0].set_title(f"time domain, {sim.n_ui:,} UI")
    full = _full_eye(seg) if full is None else full
    full.plot(ax=ax[1])
    ax[1].set_title("statistical eye, BER contours")
    lims = [a.get_ylim() for a in ax]
    union = max(hi for _, hi in lims) - min(lo for lo, _ in lims)
    if all(union <= 1.4 * (hi - lo) for lo, hi in lims):  # one scale when it still fits each eye
        share_limits(ax, "y")
    fig.suptitle(f"{rep.name}: {seg.baud_hz / 1e9:.2f} GBd PAM4 at the slicer, one UI "
                 f"({1e12 / seg.baud_hz:.2f} ps)", fontsize=11)
    return fig


def _latency_figure(rr):
    """The latency from one GPU to the farthest in the rack, layer by layer (a Figure)."""
    from matplotlib.figure import Figure

    from .._plot import latency_bars

    names = {"nvswitch": "NVSwitch", "nvl72": "NVL72"}
    acc, sw = rr.accelerator.name.upper(), names.get(next(iter(rr.n_switches), ""), "switch")
    grouped: dict = {}
    for k, v in rr.phy_floor_breakdown_s["remote"].items():  # the floor's terms, by layer
        layer = "switch" if k == "switch" else "link" if k in ("crc_check", "retry_mean") else "phy"
        grouped[layer] = grouped.get(layer, 0.0) + v
    ar = rr.collective("all_reduce", 8.0)
    rows = (("PHY floor (links and switch only)", grouped),
            ("one-way transfer, 8 B", rr.one_way["remote"].layer_totals()),
            ("remote read, 64 B (round trip)", rr.round_trip["remote"].layer_totals()))
    collective = ((f"all-reduce, 8 B over {rr.n_accelerators} GPUs\n({ar.algorithm}, {ar.protocol} protocol, "
                   "as NCCL picks)", ar.layer_totals()),)
    # the collective on its own axis: tens of microseconds beside transfers of hundreds of ns
    fig = Figure(figsize=(12, 5.2), layout="constrained")
    ax, ax2 = fig.subplots(2, 1, height_ratios=(3, 1.25))
    colours: dict = {}
    latency_bars(ax, rows, colours=colours)
    latency_bars(ax2, collective, colours=colours)
    ax.set_xlabel("latency (ns); segment values in ns")
    ax2.set_xlabel("latency (ns), its own scale")
    ax.set_title(f"{names.get(rr.name, rr.name)}: {acc} \u2192 copper link \u2192 {sw} \u2192 copper link \u2192 {acc} "
                 "(the farthest pair), latency by layer")
    handles = {}
    for a in (ax, ax2):
        for h, lab in zip(*a.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    ax.legend(handles.values(), handles.keys(), fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              title="layer", title_fontsize=8)
    return fig


def _cmd_demo(args) -> int:
    import time

    from ._args import output_dir

    if not args.no_plots:  # before the warm-up and the run: an existing file or an unwritable place
        output_dir(args.out, "--out")
    t = time.perf_counter()
    compile_s = 0.0 if args.no_warmup else _warm_up_if_cold()
    d = run_demo(None if args.no_plots else Path(args.out), args.n_ui, plots=not args.no_plots)
    d["seconds"] = time.perf_counter() - t
    d["compile_seconds"] = compile_s
    if args.json:
        print(json.dumps(d, indent=2, default=float))
        return 0
    for line in demo_text(d):
        print(line)
    return 0


def _warm_up_if_cold() -> float:
    """On a cold Numba cache, compile the kernels first, one group per core
    (:mod:`phy.warmup`); one line on stderr says so. Returns the seconds it took (0 when
    the cache was warm, or when Numba cannot cache here, where it would be lost)."""
    import sys
    import time

    from fec import _numba_setup

    from .. import warmup

    cold = [] if _numba_setup.state == "off" else warmup.cold_groups(warmup.DEMO_GROUPS)
    if not cold:
        return 0.0
    print(f"first run: compiling the kernels once ({', '.join(cold)}), in parallel; "
          "later runs load them from Numba's cache", file=sys.stderr, flush=True)
    t = time.perf_counter()
    warmup.warm_up(cold)
    return time.perf_counter() - t


def demo_text(d: dict) -> list[str]:
    """The demo's report for a terminal: every figure with its unit and what it is against."""
    from . import _format as fm
    from ._fabric import fabric_lines

    lr, c = d["link"], d["channel"]
    seg = lr["segments"][0]
    die = seg["channel"].get("il_db_nyquist")
    out = [f"channel      {c['name']}: insertion loss {c['loss_db_at_53ghz']:.2f} dB at 53.125 GHz (the cable alone"
           + (f"; {die:.2f} dB die to die with the packages" if die is not None else "")
           + f"), delay {c['delay_s'] * 1e9:.2f} ns"]
    out.append("equalisation " + ("COM-proposed, the statistical eye decides: " if d["com_db"] is not None else "")
               + d["equalisation"])
    if d["com_db"] is not None:
        out.append("             " + fm.com_words(d["com_db"], seg["notes"]))
    se = d["stat_eye"]
    out.append(f"stat eye     SER {fm.prob(se['ser'])} at the slicer, {fm.prob(se['der_with_dfe'])} with DFE error "
               f"bursts; eye heights " + ", ".join(f"{h * 1e3:.1f}" for h in se["heights_v_at_1e-6"])
               + " mV (the three eyes, at 1e-6)")
    td = d["time_domain"]
    ber = (f"BER 0 measured (95 % upper bound {td['ber_95'][1]:.2g})" if td["detector_errors"] == 0 else
           f"BER {td['ber']:.3g} (95 % interval {td['ber_95'][0]:.2g} to {td['ber_95'][1]:.2g})")
    out.append(f"time domain  {td['n_ui']:,} UI: {td['detector_errors']} detector errors, {ber}")
    out.append(f"FEC          {lr['fec']}: pre-FEC BER {fm.prob(lr['pre_fec_ber'])}, post-FEC BER "
               f"{fm.prob(lr['post_fec_ber'])} (target {lr['target_ber']:.0e})")
    out.append("margin       " + fm.margin_words(lr["margin_db"], lr["required_margin_db"], lr["required_der"],
                                                lr["fec"], lr["target_ber"], lr.get("retry_required_der")))
    out.append(f"link         {'PASS' if lr['passes'] else 'FAIL'}: {lr['usable_bandwidth_bps'] / 1e9:.1f} Gb/s per "
               f"direction usable; {fm.ns(lr['latency_s'])} one way ({fm.terms_ns(lr['latency_breakdown_s'])})")
    out.append("energy       " + fm.energy_words(lr["energy_j_per_bit"], lr["power_w"], lr["notes"]))
    nv = d["nvl72"]
    out.append(f"NVL72        {fm.bytes_per_s(nv['gpu_bandwidth_bytes_per_s'])} per GPU per direction, "
               f"{fm.bytes_per_s(nv['aggregate_bandwidth_bytes_per_s'])} in all (both directions), {nv['pairs']} "
               f"copper pairs ({nv['spine_m'] / 1e3:.2f} km); built as {nv['built_from']}")
    out += fabric_lines(nv, ends="GPU to GPU")
    dd = d["decode_70b_fp8"]
    out.append(f"decode       Llama 3 70B FP8 batch 1: {dd['local_hbm_tokens_per_s']:.1f} tok/s from HBM, "
               f"{dd['over_nvl72_tokens_per_s']:.1f} tok/s streamed over NVL72 ({dd['remote_bytes_in_flight'] / 1e6:.2f} MB "
               f"in flight), {dd['tp8_tokens_per_s']:.0f} tok/s tensor-parallel over 8 GPUs ({dd['tp8_comm_s'] * 1e3:.2f} "
               f"ms of all-reduces per token)")
    out += [f"plot         {f}" for f in d["plots"]]
    out += [f"note         {n}" for n in d.get("notes", [])]
    cs = d.get("compile_seconds", 0.0)
    out.append(f"time         {d['seconds']:.1f} s"
               + (f", of which {cs:.1f} s compiling the kernels (once: later runs load them)" if cs > 0 else ""))
    return out

