"""The layered latency model against its oracles and against public measurements, in one run.

1. NVL72: the PHY floor, a small transfer's one way and a remote read, layer by layer,
   and the one way's tail at 30, 70 and 90 % switch load.
2. Switch queueing: the M/D/1 wait (Pollaczek-Khinchine by FFT) against a Monte Carlo of
   Lindley's recursion: quantile ratios and the time of each.
3. Link-level replay: the negative-binomial tail against a Monte Carlo of go-back-N played
   on the link's own DFE bursts (4.5 m of twinax, no FEC).
4. Collectives: the 8-byte all-reduce against NCCL's symmetric-kernel measurements (the fit
   of the software layer reproduced), one hop against NCCL's and ASTRA-sim's per-hop
   figures, large messages against measured bus bandwidth, 8 B to 1 GiB over 8 and 72 GPUs
   with NCCL's own choice (benchmarks/validate_collectives.py has every public figure).
5. Decode: MFU against batch, "balance the pipe" knees, remote memory against local, and
   what lower latency buys.

    python benchmarks/bench_latency.py [--json out.json] [--no-pin]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fec  # noqa: E402
import phy  # noqa: E402
from channels import media  # noqa: E402
from phy import latency as lt  # noqa: E402
from phy import topology as tp  # noqa: E402
from phy.link import Retry  # noqa: E402
from phy.link.retry import simulate_replay  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_topology import _pin, best_of  # noqa: E402 (one core, pinned; best of n)

# measured 8-byte all-reduce, NCCL 2.27 symmetric kernels
MEASURED = (("8 x B200", "b200", 8, 3.0e-6, "NVIDIA/nccl issue 1940; nccl-tests issue 333 (NVIDIA: just over 3 us)"),
            ("8 x H200", "h200", 8, 2.3e-6, "NVIDIA/nccl issue 1940"),
            ("32 GPUs of a GB200 NVL72", "nvl72", 32, 6.3e-6,
             "NCCL 2.27 announcement (system named by NVIDIA in nccl-tests issue 333)"))
# large-message bus bandwidth, measured
BUSBW = (("8 x B200, ring, 1 GiB", "b200", 8, 2**30, "ring", 830e9, "NVIDIA/nccl issue 1807 (830+)"),
         ("72 GPUs of a GB200 NVL72, 4 GiB", "nvl72", 72, 2**32, "ring", 839e9, "coreweave/nccl-tests PR 43"),
         ("8 x H100-class, ring, 1 GiB", "h200", 8, 2**30, "ring", 370e9, "nccl-tests issue 212 (sjeaugey)"),
         ("8 x H100-class, NVLink SHARP, 1 GiB", "h200", 8, 2**30, "switch", 480e9, "nccl-tests issue 212"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args(argv)
    if not a.no_pin:
        _pin()
    res: dict = {}

    print("1. NVL72, GPU to GPU, layer by layer")
    t = time.perf_counter()
    fabrics = {"nvl72": tp.rollup(tp.nvl72()), "b200": tp.rollup(tp.hgx8()),
               "h200": tp.rollup(tp.hgx8(tp.scale_up_copper(2, 106.25e9), accelerator=tp.Accelerator.h200(),
                                         asic=tp.SwitchAsic.nvlink4(), n_switches=4))}
    print(f"   (three fabrics rolled up from their links in {time.perf_counter() - t:.1f} s)")
    r = fabrics["nvl72"]
    print("   " + r.latency_table().replace("\n", "\n   "))
    res["nvl72"] = {"phy_floor_s": r.phy_floor_s["remote"], "one_way": r.one_way["remote"].to_dict(),
                    "remote_read": r.round_trip["remote"].to_dict(),
                    "loaded_s": {str(u): q for u, q in r.loaded_s["remote"].items()},
                    "one_way_over_floor": r.one_way["remote"].total_s / r.phy_floor_s["remote"],
                    "read_over_floor": r.round_trip["remote"].total_s / r.phy_floor_s["remote"]}
    print(f"   one way / PHY floor {res['nvl72']['one_way_over_floor']:.2f}, remote read / PHY floor "
          f"{res['nvl72']['read_over_floor']:.2f}")

    print("\n2. Switch output port, M/D/1: analytic (FFT) against Lindley's recursion (Monte Carlo)")
    D = 8 * 272 / 800e9
    rows = []
    for rho in (0.3, 0.7, 0.9):
        w, t_an = best_of(lambda rho=rho: lt.md1_wait(rho, D))
        mc, t_mc = best_of(lambda rho=rho: lt.simulate_md1(rho, D, 10_000_000, seed_=1), 1)
        q = w.quantile_s([0.5, 0.99, 0.9999])
        m = np.quantile(mc, [0.5, 0.99, 0.9999])
        row = {"utilisation": rho, "mean_ns": w.mean_s * 1e9, "mc_mean_ns": float(mc.mean()) * 1e9,
               "quantiles_ns": (q * 1e9).tolist(), "mc_quantiles_ns": (m * 1e9).tolist(),
               "ratio": [float(x / y) if y > 0 else float("nan") for x, y in zip(q, m)],
               "analytic_s": t_an, "monte_carlo_s": t_mc}
        rows.append(row)
        print(f"   {100 * rho:.0f} %: mean {row['mean_ns']:.3f} ns (MC {row['mc_mean_ns']:.3f}); p50/p99/p99.99 "
              + " / ".join(f"{x:.2f}" for x in row["quantiles_ns"]) + " ns, over MC "
              + " / ".join(f"{x:.3f}" for x in row["ratio"][1:]) + f"; {t_an * 1e3:.2f} ms against {t_mc:.2f} s "
              f"for 10^7 Monte Carlo packets")
    res["md1"] = rows

    print("\n3. Link-level replay: negative binomial against go-back-N played on the link's own bursts")
    ch = media.cascade(media.connector(), media.twinax(4.5, 26), media.connector())
    spec = phy.LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, fec=None, retry=Retry(), target_ber=1e-12)
    segs = phy.link.segments(spec)
    rep = phy.evaluate_link(spec, segs)
    seg = max(segs, key=lambda s: s.der)
    model = fec.BurstModel.dfe(seg.dfe[:6], rep.pre_fec_der, spec.modulation)
    base = rep.latency_s - rep.latency_breakdown_s["retry_mean"]
    ll = rep.link_layer
    replay_rows = []
    for flits in (1, 8):
        mc, t_mc = best_of(lambda flits=flits: simulate_replay(
            1_000_000, flits=flits, flit_ui=512, one_way_ui=base * spec.baud_hz,
            burst_rate=rep.pre_fec_der / model.mean_errors, span_pmf=model.length_pmf(64), seed_=3), 1)
        an = phy.link.retry.replay_quantiles(ll["flit_error_ratio"], ll["replay_s"], flits, [0.5, 0.99, 0.9999])
        mcq = np.quantile(mc, [0.5, 0.99, 0.9999]) / spec.baud_hz
        p_fail = 1 - (1 - ll["flit_error_ratio"]) ** flits
        row = {"flits": flits, "p_any_replay": p_fail, "mc_p_any_replay": float((mc > 0).mean()),
               "quantiles_ns": ((base + an) * 1e9).tolist(), "mc_quantiles_ns": ((base + mcq) * 1e9).tolist(),
               "monte_carlo_s": t_mc}
        replay_rows.append(row)
        print(f"   {flits} flit(s): P(a replay) {p_fail:.4g} (MC {row['mc_p_any_replay']:.4g}, ratio "
              f"{p_fail / row['mc_p_any_replay']:.3f}); p50/p99/p99.99 " + " / ".join(
                  f"{x:.1f}" for x in row["quantiles_ns"]) + " ns (MC " + " / ".join(
                  f"{x:.1f}" for x in row["mc_quantiles_ns"]) + f" ns); 10^6 transfers in {t_mc:.2f} s")
    res["replay"] = {"flit_error_ratio": ll["flit_error_ratio"], "replay_s": ll["replay_s"], "rows": replay_rows}

    print("\n4. Collectives against public measurements")
    # the small-message measurements ran NCCL 2.27's symmetric kernels (registered buffers)
    sym = {k: replace(f.collectives, software=f.collectives.software.with_(symmetric=True)) for k, f in fabrics.items()}
    pts = [(sym[k], p, 8, m) for _, k, p, m, _ in MEASURED]
    (sw, errs), t_fit = best_of(lambda: lt.fit_software(pts, lt.Software()), 1)
    print(f"   software fit (minimax, {t_fit:.2f} s): kernel {sw.kernel_s * 1e6:.3f} us, per peer "
          f"{sw.peer_s * 1e9:.1f} ns (defaults {lt.Software().kernel_s * 1e6:.3f} us, {lt.Software().peer_s * 1e9:.1f} ns)")
    small = []
    for (label, k, p, meas, src), e in zip(MEASURED, errs):
        ct = sym[k].time("all_reduce", 8.0, p)
        small.append({"system": label, "p": p, "model_s": ct.time_s, "measured_s": meas, "ratio": ct.time_s / meas,
                      "algorithm": ct.algorithm, "protocol": ct.protocol, "layers_s": ct.layer_totals(), "source": src})
        print(f"   {label:<26} 8 B: model {ct.time_s * 1e6:.2f} us ({ct.algorithm}, {ct.protocol}), measured "
              f"{meas * 1e6:.1f} us: ratio {ct.time_s / meas:.2f} [{src}]")
        print("      " + ", ".join(f"{n} {v * 1e9:.0f} ns" for n, v in ct.layer_totals().items() if v > 0.5e-9))
    nvls2 = fabrics["h200"].collective("all_reduce", 128.0, 2, algorithm="switch")
    print(f"   not in the fit: NVLink SHARP forced on 2 H100-class GPUs, 128 B: model {nvls2.time_s * 1e6:.2f} us, "
          f"measured about 6 us (NVIDIA/nccl issue 1259): ratio {nvls2.time_s / 6e-6:.2f}")
    c72 = r.collective("all_reduce", 8.0, 72)
    genz = 5e-6 + 2 * 71 * 0.25e-6
    nccl_nvls = 25e-6
    print(f"   72 GPUs of an NVL72, 8 B: model {c72.time_s * 1e6:.2f} us ({c72.algorithm}, NCCL's choice; symmetric "
          f"{sym['nvl72'].time('all_reduce', 8.0, 72).time_s * 1e6:.2f} us); no public measurement. "
          f"Other models: Calculon 10 us per collective, GenZ {genz * 1e6:.1f} us (5 us + 142 ring steps of 0.25 us), "
          f"NCCL's tuning model {nccl_nvls * 1e6:.0f} us for NVLS")
    hop = {k: f.alpha_s for k, f in fabrics.items()}
    print("   one step (hop and poll): " + ", ".join(f"{k} {v * 1e9:.0f} ns" for k, v in hop.items())
          + f"; NCCL's tuning model 600 ns per NVLink LL step (ratio {hop['nvl72'] / 0.6e-6:.2f}), ASTRA-sim's "
          f"validated HGX-H100 2 x 936.25 ns (ratio {hop['h200'] / 1872.5e-9:.2f})")
    large = []
    for label, k, p, size, alg, meas, src in BUSBW:
        ct = fabrics[k].collective("all_reduce", size, p, algorithm=alg)
        bb = ct.bus_bandwidth_bytes_per_s()
        large.append({"case": label, "model_busbw": bb, "measured_busbw": meas, "ratio": bb / meas, "source": src})
        print(f"   {label:<36} bus bandwidth {bb / 1e9:6.0f} GB/s, measured {meas / 1e9:.0f}: ratio {bb / meas:.2f} [{src}]")
    sizes = 8 * 4.0 ** np.arange(0, 14)
    sweep = {}
    for label, k, p in (("8 x B200", "b200", 8), ("72 GPUs of an NVL72", "nvl72", 72)):
        ts, t_one = best_of(lambda k=k, p=p: fabrics[k].collectives.sweep("all_reduce", sizes, p), 3)
        sweep[label] = [{"bytes": float(s), "time_s": x.time_s, "algorithm": x.algorithm, "protocol": x.protocol,
                         "busbw": x.bus_bandwidth_bytes_per_s()} for s, x in zip(sizes, ts)]
        print(f"   {label}: " + "; ".join(f"{s:.3g} B {x.time_s * 1e6:.3g} us {x.algorithm}" for s, x in
                                          zip(sizes[::3], ts[::3])) + f" ({t_one / len(sizes) * 1e6:.0f} us per size)")
    res["collectives"] = {"fit": {"kernel_s": sw.kernel_s, "peer_s": sw.peer_s, "errors": errs}, "small": small,
                          "nvls_2gpu_s": nvls2.time_s,
                          "hop_s": hop, "large": large, "sweep": sweep, "model_72_s": c72.time_s}

    print("\n5. Decode (Llama 3 70B, FP8, GB200)")
    acc = tp.Accelerator.gb200()
    m = tp.Model.llama3_70b()
    mfu = {}
    for ctx in (0, 2048, 8192):
        mfu[ctx] = {b: tp.decode(m, b, accelerator=acc, context_tokens=ctx).mfu for b in (1, 8, 32, 64)
                    if m.weight_bytes + b * ctx * m.kv_per_token_bytes <= acc.memory.capacity_bytes}
        cross = tp.mfu_crossing(m, accelerator=acc, context_tokens=ctx)
        mfu[ctx]["crossing_batch"] = cross
        print(f"   context {ctx:>5}: MFU " + ", ".join(f"batch {b} {100 * v:.1f} %" for b, v in mfu[ctx].items()
                                                     if b != "crossing_batch") + f"; crosses 20 % at batch {cross}")
    knees = []
    for tier in (tp.MemoryTier.sram_lpu(), acc.memory, tp.MemoryTier.lpddr5x()):
        k = tp.balance_bandwidth(m, 1, accelerator=acc, tier=tier, capacity_bytes=2 * m.weight_bytes,
                                 link_efficiency=0.9, link_round_trip_s=r.round_trip["remote"].total_s,
                                 port_bytes_per_s=r.accel_bandwidth_bytes_per_s)
        knees.append(k)
        knee = k["knee_bytes_per_s"]
        print(f"   balance the pipe, {tier.name:<8}: knee {knee / 1e12:.3f} TB/s ({knee / tier.bandwidth_bytes_per_s:.3f} "
              f"x the tier), {k['tokens_per_s_at_knee']:.1f} tok/s; ceiling: {k['ceiling']}; "
              f"{k['ports_to_balance']} port(s) to balance")
    so = tp.rollup(tp.scale_out(72, tp.LinkClass.optical("dsp", lanes=4)))
    loc = tp.over_fabric(r, m, source="local").tokens_per_s
    rem = tp.over_fabric(r, m, source="remote").tokens_per_s
    far = tp.over_fabric(so, m, source="remote").tokens_per_s
    print(f"   local HBM {loc:.1f} tok/s; remote HBM over NVLink (1.8 TB/s both ways) {rem:.2f}: {loc / rem:.2f}x behind; "
          f"over scale-out {far:.3f}: {loc / far:.1f}x behind")
    rows = tp.latency_value(m, [0.3e-6, 1e-6, 3e-6], accelerator=acc, collectives=sym["nvl72"],
                            target_tokens_per_s=200)
    for x in rows:
        print(f"   one way {x['one_way_s'] * 1e6:.1f} us: TP 8 {x['tokens_per_s'][8]:.0f} tok/s, TP 72 "
              f"{x['tokens_per_s'][72]:.0f}; for 200 tok/s: GPUs {x['tp_range']}, memory per chip "
              + (f"{x['memory_per_chip_bytes'] / 1e9:.2f} GB" if x["memory_per_chip_bytes"] else "unreachable")
              + f"; streamed instead: {x['stream_tp']} ports at {x['stream_bandwidth_bytes_per_s'] / 1e9:.0f} GB/s "
              f"({x['stream_limit']}), {x['buffer_bytes'] / 1e6:.2f} MB in flight each")
    res["decode"] = {"mfu": {str(k): v for k, v in mfu.items()}, "knees": knees,
                     "local_over_remote": loc / rem, "local_over_scale_out": loc / far, "latency_value": rows}
    if a.json:
        a.json.write_text(json.dumps(res, indent=2, default=lambda o: o if not isinstance(o, tuple) else list(o)))
        print(f"\nwritten {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
