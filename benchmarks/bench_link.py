"""Link roll-up (``phy.link``): the reference figures, two oracles and the speed.

1. **Reference figures, exact**: the 802.3 rate chain (106.25 and 212.5 Gb/s lanes carry
   100 and 200 Gb/s through KP4 and 256b/257b), an NVLink5-class port (18 links x 2
   lanes x 200G = 900 GB/s per direction), KP4 accumulation at 106.25 Gb/s (51.2 ns), and
   NVL72's 5,184 lanes in DSP pluggables (about 19.4 kW).
2. **Oracle: the time-domain simulator.** The roll-up's pre-FEC detector error ratio
   comes from the statistical eye of each segment; here the same segment (channel with
   packages, the transmitter and receiver the roll-up chose, noise, jitter) runs through
   ``phy.simulate`` and the two error ratios are compared, with the simulator's 95 %
   interval, on twinax cables long enough for errors to be counted.
3. **Oracle: Monte Carlo of the optical budget.** PAM4 levels and their level-dependent
   noise drawn at random against ``OpticalPath.budget``'s closed form.
4. **Speed**: ``evaluate_link`` for copper at 53.125 and 106.25 GBd and for the three
   optical classes, ``search_link`` (points per second), and one more FEC choice on
   precomputed segments. No peer tool rolls a link up, so there is no ratio to a peer.
5. **The search against cable length**: the lowest-latency choice that meets 1e-13, per
   twinax length.

    python benchmarks/bench_link.py              # about 3 minutes on one core
    python benchmarks/bench_link.py --quick      # smaller simulations
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
from scipy import stats

import channels
import fec
import phy
from channels import media as m
from channels.optical import Fibre, OpticalPath, OpticalTransmitter


def _pin() -> None:
    try:
        os.sched_setaffinity(0, {0})
    except (AttributeError, OSError):
        pass


def twinax(length_m: float) -> channels.Channel:
    return m.cascade(m.connector(), m.twinax(length_m, 26), m.connector()).renamed(f"twinax_{length_m:g}m")


def timed(fn, repeat: int = 3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def reference_figures() -> dict:
    eth = phy.Framing.ethernet()
    out = {}
    for line in (106.25e9, 212.5e9):
        out[f"payload of a {line / 1e9:g} Gb/s KP4 lane (Gb/s)"] = (
            line * fec.KP4.k / fec.KP4.n * eth.efficiency(fec.KP4.message_bits) / 1e9)
    spec = phy.LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=2, lane_rate_bps=212.5e9)
    r = phy.evaluate_link(spec)
    out["NVLink5-class port, 18 links x 2 lanes (GB/s per direction)"] = 18 * r.usable_bandwidth_bps / 8 / 1e9
    r100 = phy.evaluate_link(spec.with_(lanes=1, lane_rate_bps=106.25e9))
    out["KP4 accumulation at 106.25 Gb/s (ns)"] = r100.latency_breakdown_s["fec_accumulation"] * 1e9
    dsp = phy.evaluate_link(phy.LinkSpec(optics=phy.OpticalClass.dsp_pluggable(), lanes=2))
    out["NVL72 in DSP pluggables, 1,296 links x 2 lanes (kW)"] = 72 * 18 * dsp.power_w / 1e3
    out["  energy per bit, a 15 W 800G module at each end (pJ/bit)"] = dsp.energy_j_per_bit * 1e12
    return out


def oracle_simulator(lengths, n_ui: int) -> list[dict]:
    rows = []
    for L in lengths:
        spec = phy.LinkSpec(channel=twinax(L), lanes=1, lane_rate_bps=212.5e9)
        seg = phy.link.segments(spec)[0]
        t = time.perf_counter()
        sim = phy.simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise,
                           jitter=seg.jitter, cdr=seg.cdr, seed=1)
        dt = time.perf_counter() - t
        errs = int(sim.detector_errors)
        lo, hi = stats.beta.ppf([0.025, 0.975], [max(errs, 1e-9), errs + 1], [n_ui - errs + 1, n_ui - errs])
        bm = sim.burst_model() if errs else None
        model = fec.BurstModel.dfe(seg.dfe[:6], seg.ser, tail=1e-9) if seg.dfe.size and seg.ser > 0 else None
        rows.append({"cable_m": L, "equalisation": seg.equalisation, "stateye_der": seg.der,
                     "stateye_ser": seg.ser, "sim_der": errs / n_ui, "sim_95": [float(lo), float(hi)],
                     "sim_bursts_per_ui": (errs / bm.mean_errors / n_ui) if bm else 0.0,
                     "sim_errors_per_burst": bm.mean_errors if bm else float("nan"),
                     "model_errors_per_burst": model.mean_errors if model else 1.0,
                     "errors": errs, "ratio": (errs / n_ui) / seg.der if seg.der > 0 else float("nan"),
                     "sim_seconds": dt})
    return rows


def oracle_optics(n: int) -> dict:
    path = OpticalPath.point_to_point(Fibre.smf(10e3), 2, OpticalTransmitter(oma_outer_dbm=-4.0,
                                                                             rin_db_per_hz=-138.0))
    b = path.budget()
    rng = np.random.default_rng(3)
    sym = rng.integers(0, 4, n)
    lv = np.array(b.levels_a)
    x = lv[sym] + rng.standard_normal(n) * np.array(b.noise_rms_a)[sym]
    dec = np.searchsorted((lv[1:] + lv[:-1]) / 2, x)
    errs = int(np.count_nonzero(dec != sym))
    lo, hi = stats.beta.ppf([0.025, 0.975], [errs, errs + 1], [n - errs + 1, n - errs])
    return {"closed_form_ser": b.ser, "monte_carlo_ser": errs / n, "mc_95": [float(lo), float(hi)], "errors": errs,
            "ratio": errs / n / b.ser, "terms_rms_a": b.terms_rms_a}


def speed() -> dict:
    out = {}
    cu = phy.LinkSpec(channel=channels.library.get("twinax_1m_26awg"), lanes=2)
    cases = {
        "copper 1 m, 53.125 GBd (802.3ck COM, 12 DFE taps)": cu.with_(lanes=1, lane_rate_bps=106.25e9),
        "copper 1 m, 106.25 GBd (802.3dj COM, Rx FFE)": cu,
        "DSP pluggable, 100 m (3 segments)": phy.LinkSpec(optics=phy.OpticalClass.dsp_pluggable(), lanes=2),
        "LPO, 100 m": phy.LinkSpec(optics=phy.OpticalClass.lpo(), lanes=2),
        "CPO, 100 m": phy.LinkSpec(optics=phy.OpticalClass.cpo(), lanes=2),
    }
    def fresh(fn):
        # phy.link remembers equalised segments per channel object; time a new medium
        def run():
            phy.link.equalise._EYES.clear()
            return fn()
        return run

    for name, spec in cases.items():
        r, dt = timed(fresh(lambda s=spec: phy.evaluate_link(s)), repeat=2)
        out[name] = {"seconds": dt, "passes": r.passes, "latency_ns": r.latency_s * 1e9,
                     "energy_pj_per_bit": r.energy_j_per_bit * 1e12, "pre_fec_ber": r.pre_fec_ber,
                     "margin_db": r.margin_db}
    segs = phy.link.segments(cu)
    _, dt = timed(lambda: phy.evaluate_link(cu.with_(fec="KR4"), segs), repeat=3)
    out["one more FEC choice on precomputed segments"] = {"seconds": dt}
    s, dt = timed(fresh(lambda: phy.search_link(cu)), repeat=1)
    out["search_link, copper 1 m (4 codes x 2 interleaves x precoding x retry)"] = {
        "seconds": dt, "points": len(s.points), "points_per_second": len(s.points) / dt}
    return out


def search_vs_length(lengths) -> list[dict]:
    rows = []
    for L in lengths:
        s = phy.search_link(phy.LinkSpec(channel=twinax(L), lanes=1), interleaves=(1, 2), precoding=(False, True),
                            retry=(None,))
        b = s.best_report
        rows.append({"cable_m": L, "il_db_at_53ghz": float(twinax(L).insertion_loss_db(53.125e9)),
                     "pre_fec_ber": s.points[0].pre_fec_ber,
                     "best": None if b is None else f"{b.fec or 'none'} I={b.interleave}"
                                                     f"{' precoded' if b.precoding else ''}",
                     "latency_ns": None if b is None else b.latency_s * 1e9,
                     "usable_gbps": None if b is None else b.usable_bandwidth_bps / 1e9,
                     "pareto": len(s.pareto)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller simulations")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args(argv)
    if not a.no_pin:
        _pin()
    res = {}
    print("1. Reference figures")
    res["reference"] = reference_figures()
    for k, v in res["reference"].items():
        print(f"   {k:<66} {v:.6g}")

    print("\n2. Oracle: statistical eye in the roll-up against the time-domain simulator (212.5 Gb/s PAM4, twinax)")
    n_ui = 2_000_000 if a.quick else 10_000_000
    res["oracle_simulator"] = oracle_simulator((4.5, 4.75, 5.0), n_ui)
    print(f"   {'cable':>6} {'stat-eye DER':>13} {'simulated DER':>14} {'95 % interval':>24} {'errors':>7} "
          f"{'ratio':>6} {'sim s':>6}  equalisation")
    for r in res["oracle_simulator"]:
        print(f"   {r['cable_m']:>5g}m {r['stateye_der']:>13.3g} {r['sim_der']:>14.3g} "
              f"{r['sim_95'][0]:>11.3g}..{r['sim_95'][1]:<11.3g} {r['errors']:>7d} {r['ratio']:>6.2f} "
              f"{r['sim_seconds']:>6.1f}  {r['equalisation']}")
        print(f"   {'':>6} first errors: stat eye {r['stateye_ser']:.3g}/UI, simulated {r['sim_bursts_per_ui']:.3g}/UI;"
              f" errors per burst: DFE model {r['model_errors_per_burst']:.2f}, simulated "
              f"{r['sim_errors_per_burst']:.2f}")

    print("\n3. Oracle: optical PAM4 budget against Monte Carlo with level-dependent noise")
    res["oracle_optics"] = oracle_optics(1_000_000 if a.quick else 4_000_000)
    o = res["oracle_optics"]
    print(f"   closed form {o['closed_form_ser']:.4g}, Monte Carlo {o['monte_carlo_ser']:.4g} "
          f"[{o['mc_95'][0]:.4g}, {o['mc_95'][1]:.4g}] ({o['errors']} errors), ratio {o['ratio']:.3f}")

    print("\n4. Speed (one core)")
    res["speed"] = speed()
    for k, v in res["speed"].items():
        extra = ""
        if "latency_ns" in v:
            extra = (f"  {'pass' if v['passes'] else 'FAIL'}, {v['latency_ns']:.1f} ns, "
                     f"{v['energy_pj_per_bit']:.3g} pJ/bit, pre-FEC BER {v['pre_fec_ber']:.2g}, "
                     f"margin {v['margin_db']:.2f} dB")
        if "points" in v:
            extra = f"  {v['points']} points, {v['points_per_second']:.1f} points/s"
        print(f"   {k:<70} {v['seconds']:7.3f} s{extra}")

    print("\n5. Lowest latency meeting 1e-13, against twinax length (212.5 Gb/s, one lane)")
    res["search_vs_length"] = search_vs_length((1.0, 2.0, 3.0, 3.5, 4.0, 4.5))
    print(f"   {'cable':>6} {'IL@53GHz':>9} {'pre-FEC BER':>12} {'best':>26} {'latency ns':>11} {'Gb/s':>8}")
    for r in res["search_vs_length"]:
        print(f"   {r['cable_m']:>5g}m {r['il_db_at_53ghz']:>8.1f}  {r['pre_fec_ber']:>12.3g} {r['best']!s:>26} "
              f"{(r['latency_ns'] or float('nan')):>11.2f} {(r['usable_gbps'] or 0):>8.2f}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
