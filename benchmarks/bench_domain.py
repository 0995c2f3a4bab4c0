"""Issue 19 in figures: every watt and every failure of a scale-up fabric, and what stops a
domain at 72.

1. **NVL72 three ways**: the rack on passive copper, on DSP pluggables and on CPO (2 x
   212.5 Gb/s links, KP4, link layer): fabric power term by term (SerDes at the GPUs and
   at the switches, switch cores, modules), per GPU and per rack, the rack with its GPUs,
   link-down events per day; the difference against NVIDIA's "about 20 kW".
2. **The domain-size trade** for 72, 144, 288 and 576 GPUs (default layout: racks of 72
   of NVL72's build, 48 RU, 132 kW, 0.6 m pitch, cables between racks laid out: neighbours
   through the side walls, others over the top): classes chosen per length, power, cables,
   copper, latency, failures per day, the binding constraint, and each step's cost; then
   (2b) racks, rack units, optical links and modules, link-down events per day and the
   binding constraint's utilisation; (2c) the same on passive copper alone (72 closes,
   144 and up stop on reach); (2d) 576 under other layouts: the binding constraint moves.
3. **The largest domain** under three sets of constraints: copper only (passive and
   active), one switch tier, a 60 kW rack.
4. **Cost**: the plans' seconds (link evaluations, then cached) and a 576-GPU roll-up's.

    python benchmarks/bench_domain.py           # about a minute and a half on one core
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from phy import topology as tp  # noqa: E402
from phy.cli.rack import domain_table  # noqa: E402
from phy.topology import domain as dm  # noqa: E402


def nvl72_three_ways(cands) -> dict:
    copper, _aec, _lpo, cpo, dsp = cands
    out = {}
    for lc in (copper, dsp, cpo):
        r = tp.rollup(tp.nvl72(lc))
        rel = tp.fabric_reliability(tp.nvl72(lc), r)
        p = r.power
        out[lc.name] = {"closes": not r.failing, "terms_kw": {k: v / 1e3 for k, v in p.terms_w.items()},
                        "fabric_kw": p.total_w / 1e3, "w_per_gpu": p.per_accelerator_w, "rack_kw": p.max_rack_w / 1e3,
                        "link_down_per_day": rel.link_down_events_per_day, "mtbf_days": rel.mtbf_hours / 24,
                        "failing": [f["reasons"][0] for f in r.failing][:1]}
    out["dsp_minus_copper_kw"] = out[dsp.name]["fabric_kw"] - out[copper.name]["fabric_kw"]
    out["cpo_minus_copper_kw"] = out[cpo.name]["fabric_kw"] - out[copper.name]["fabric_kw"]
    return out


def trade_table(plans) -> str:
    """Sizes, racks, rack units, tiers, classes, fabric W per GPU, cables, optics, link-down
    events per day, latency and the binding constraint with its utilisation."""
    head = (f"  {'GPUs':>5} {'racks':>5} {'RU max':>6} {'tiers':>5} {'W/GPU':>6} {'cables':>7} {'optical':>7} "
            f"{'modules':>8} {'down/day':>9} {'remote ns':>9}  closes binding (utilisation); classes (m)")
    lines = [head]
    for p in plans:
        r = p.row()
        cl = ", ".join(f"{k} {v[0]:g}-{v[1]:g}" for k, v in r["classes"].items())
        lines.append(f"  {p.n_accelerators:>5} {r['racks']:>5} {r['rack_units_max']:>6} {p.tiers:>5} "
                     f"{r['fabric_w_per_accelerator']:>6.0f} {r['cables']:>7} {r['optical_links']:>7} "
                     f"{r['optical_modules']:>8.0f} {r['link_down_per_day']:>9.3g} {r['one_way_remote_ns']:>9.0f}  "
                     f"{'yes' if p.closes else 'no ':<6} {p.binding} ({p.utilisation[p.binding]:.3g}); {cl}")
    return "\n".join(lines)


def main() -> None:
    t0 = time.perf_counter()
    cands = dm.default_candidates()
    three = nvl72_three_ways(cands)
    t1 = time.perf_counter()
    print("1. NVL72 three ways (fabric power in kW, both directions)")
    for k, v in three.items():
        print(f"  {k}: {json.dumps(v, default=lambda x: round(x, 4)) if isinstance(v, dict) else round(v, 2)}")
    print(f"  NVIDIA: about 20 kW saved by the copper spine; the model: DSP optics cost {three['dsp_minus_copper_kw']:.2f} kW "
          f"more ({three['dsp_minus_copper_kw'] / 20:.3f} of 20), CPO {three['cpo_minus_copper_kw']:.2f} kW more")
    t = time.perf_counter()
    plans = [dm.plan_domain(n, None, cands) for n in (72, 144, 288, 576)]
    t_plans = time.perf_counter()
    print("\n2. the domain-size trade (default layout)")
    print(domain_table(plans))
    for p in plans:
        print(f"  {p.n_accelerators}: utilisation " + ", ".join(f"{k} {v:.3g}" for k, v in p.utilisation.items())
              + f"; links down per day {p.reliability.links_down_per_day:.3g}, "
              f"uncorrectable frames per day {p.reliability.uncorrectable_frames_per_day:.3g}")
    print("\n2b. the trade from the physical layout (racks of NVL72's build, cables laid out between racks)")
    print(trade_table(plans))
    tc = time.perf_counter()
    copper = [dm.plan_domain(n, None, cands[:1]) for n in (72, 144, 288, 576)]
    print("\n2c. copper only at 212.5 Gb/s per lane (passive twinax, HL hosts with the tray flyover)")
    print(trade_table(copper))
    for p in copper:
        if not p.closes:
            print(f"  {p.n_accelerators}: {p.reasons[0][:150]}")
    print("\n2d. the binding constraint moves with the layout (576 GPUs, every candidate)")
    for label, lay in (("default (48 RU, 132 kW)", dm.Layout()), ("56 RU racks", dm.Layout(rack_units=56)),
                       ("100 kW racks", dm.Layout(rack_power_w=100e3)),
                       ("a budget of 0.1 link-down events per day", dm.Layout(max_link_down_per_day=0.1)),
                       ("the fixed 4 m overhead route", dm.Layout(route="overhead"))):
        p = dm.plan_domain(576, lay, cands)
        print(f"  {label:<42} closes {'yes' if p.closes else 'no ':<3} binding {p.binding:<12} "
              + ", ".join(f"{k} {v:.3g}" for k, v in p.utilisation.items() if v))
    print(f"  ({time.perf_counter() - tc:.1f} s for 2c and 2d)")
    t2 = time.perf_counter()
    print("\n3. the largest domain that closes")
    for label, lay, cs in (
            ("copper only (passive, AEC)", dm.Layout(), cands[:2]),
            ("one switch tier", dm.Layout(max_tiers=1), cands),
            ("60 kW racks of 36", dm.Layout(accelerators_per_rack=36, rack_power_w=60e3), cands),
            ("60 kW racks of 72", dm.Layout(rack_power_w=60e3), cands)):
        best, ps = dm.largest_domain(lay, cs, sizes=(36, 72, 144, 288, 576) if lay.accelerators_per_rack == 36
                                     else (72, 144, 288, 576), every=True)
        stop = next((p for p in ps if not p.closes), None)
        print(f"  {label}: largest {best.n_accelerators if best else 'none'}"
              + (f"; {stop.n_accelerators} stops on {stop.binding}: {stop.reasons[0]}" if stop else ""))
    t3 = time.perf_counter()
    big = plans[-1].report_topology
    r0 = time.perf_counter()
    tp.rollup(big)
    r1 = time.perf_counter()
    print(f"\n4. cost: NVL72 three ways {t1 - t0:.1f} s; the four plans {t_plans - t:.1f} s (link evaluations, cached after); "
          f"section 3 {t3 - t2:.1f} s; a 576-GPU roll-up with every link report cached {1e3 * (r1 - r0):.0f} ms")


if __name__ == "__main__":
    main()
