"""DFE error propagation in the roll-up: the Gaussian burst chain (before) and the
data-conditioned one (after) against the time-domain simulator, side by side in one run.

The roll-up's detector error ratio (DER) is the statistical eye's symbol error ratio
(first errors, past decisions right) times the mean errors per burst of the DFE's error
chain. Before: the chain of ``fec.BurstModel.dfe`` with Gaussian noise fitted to the
eye's error ratio. After: its transitions from the eye itself, conditioned on the data
and on the memory of the slicer's input (``phy.engines.dfe_chain.dfe_transitions``).

For each 26 AWG twinax cable (connector, cable, connector; 4.5, 4.75, 5 m at 212.5 Gb/s
PAM4, 106.25 GBd) it takes the segment the roll-up chooses (``phy.link.segments``;
before, with the Gaussian chain, the roll-up may choose another equalisation: that
segment is simulated too), runs ``phy.simulate`` on it (the segment's channel, Tx, Rx,
noise, jitter and sampling phase) and prints:

* the DER: roll-up before, roll-up after, simulated with its 95 % interval (bursts are
  counted as a compound Poisson process: ``DER +- 1.96 sqrt(sum L_i^2) / n_ui`` over the
  bursts' error counts ``L_i``; a binomial interval on the errors would be too narrow),
  and each ratio to the simulator;
* what the DER is made of: first errors per UI (eye SER, simulated bursts per UI) and
  errors per burst (Gaussian chain, conditioned chain, simulated);
* the cost: the conditioned chain's table per eye (ms), against the Gaussian chain's
  mean; ``evaluate_link`` on a new medium before and after.

    python benchmarks/bench_dfe_bursts.py                # 10 M UI per segment (about 5 minutes)
    python benchmarks/bench_dfe_bursts.py --seeds 1 2    # two seeds pooled (about 10 minutes)
    python benchmarks/bench_dfe_bursts.py --quick        # 2 M UI
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np

import channels
import phy
import phy.engines.dfe_chain as dfe_chain
import phy.link.post_fec as post_fec
from channels import media as m
from fec.analysis import dfe_burst_means

LENGTHS_M = (4.5, 4.75, 5.0)
LANE_RATE_BPS = 212.5e9
CONDITIONED = dfe_chain.dfe_transitions  # the model after (its cache: cleared to time it)


def twinax(length_m: float) -> channels.Channel:
    return m.cascade(m.connector(), m.twinax(length_m, 26), m.connector()).renamed(f"twinax_{length_m:g}m")


@contextlib.contextmanager
def gaussian_chain():
    """The model before: no conditioned transitions, so every caller falls back to the
    Gaussian chain (the roll-up's segments are recomputed, its memory cleared)."""
    saved = (dfe_chain.dfe_transitions, post_fec.dfe_transitions)
    dfe_chain.dfe_transitions = post_fec.dfe_transitions = lambda eye: None
    phy.link.equalise._EYES.clear()
    post_fec._dfe_model.cache_clear()
    try:
        yield
    finally:
        dfe_chain.dfe_transitions, post_fec.dfe_transitions = saved
        phy.link.equalise._EYES.clear()
        post_fec._dfe_model.cache_clear()


def burst_sizes(sim) -> np.ndarray:
    """Errors in each burst of a run (a burst ends after ``burst_gap_ui`` right decisions)."""
    pos = sim.error_ui
    if pos.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(pos) > sim.config["burst_gap_ui"]]))
    return np.diff(np.concatenate([starts, [pos.size]]))


def simulate(seg, n_ui: int, seed: int) -> dict:
    t = time.perf_counter()
    sim = phy.simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise,
                       jitter=seg.jitter, cdr=seg.cdr, seed=seed, max_errors_recorded=4 * n_ui // 100 + 1000)
    dt = time.perf_counter() - t
    if sim.errors_truncated:
        raise RuntimeError("raise max_errors_recorded: not every error was kept")
    L = burst_sizes(sim)
    der = sim.detector_errors / sim.n_ui
    half = 1.96 * np.sqrt(float(np.sum(L.astype(float) ** 2))) / sim.n_ui
    return {"n_ui": sim.n_ui, "seed": seed, "errors": int(sim.detector_errors), "bursts": int(L.size),
            "der": der, "der_95": [der - half, der + half], "bursts_per_ui": L.size / sim.n_ui,
            "errors_per_burst": float(L.mean()) if L.size else float("nan"), "seconds": dt}


def models(seg) -> dict:
    """Both chains on the segment's own eye: errors per burst and DER, and their cost."""
    eye = seg.eye
    b = eye.link.dfe[:6]
    ser = eye.ser()
    t = time.perf_counter()
    gauss = dfe_burst_means(b, ser)[0]
    t_gauss = time.perf_counter() - t
    CONDITIONED.cache_clear()
    t = time.perf_counter()
    table = CONDITIONED(eye)
    t_table = time.perf_counter() - t
    cond = dfe_burst_means(b, ser, transitions=table)[0]
    return {"ser": ser, "gauss_errors_per_burst": gauss, "cond_errors_per_burst": cond,
            "gauss_der": ser * gauss, "cond_der": ser * cond, "table_rows": int(table.shape[0]),
            "table_ms": 1e3 * t_table, "gauss_ms": 1e3 * t_gauss}


def case(length_m: float, n_ui: int, seeds) -> dict:
    spec = phy.LinkSpec(channel=twinax(length_m), lane_rate_bps=LANE_RATE_BPS)
    with gaussian_chain():
        before_seg = phy.link.segments(spec)[0]
        before = phy.evaluate_link(spec, [before_seg])
    phy.link.equalise._EYES.clear()
    seg = phy.link.segments(spec)[0]
    after = phy.evaluate_link(spec, [seg])
    out = {"cable_m": length_m, "equalisation": seg.equalisation, "before_equalisation": before_seg.equalisation,
           "before_der": before.pre_fec_der, "after_der": after.pre_fec_der, "ser_dfe": seg.eye.ser_dfe(),
           "models": models(seg), "sim": [simulate(seg, n_ui, s) for s in seeds]}
    if before_seg.equalisation != seg.equalisation or before_seg.ser != seg.ser:
        out["before_models"] = models(before_seg)
        out["before_sim"] = [simulate(before_seg, n_ui, s) for s in seeds]
    return out


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def pooled(runs) -> dict:
    """Several seeds' runs as one."""
    n = sum(r["n_ui"] for r in runs)
    errs = sum(r["errors"] for r in runs)
    bursts = sum(r["bursts"] for r in runs)
    var = sum(((r["der_95"][1] - r["der"]) / 1.96 * r["n_ui"]) ** 2 for r in runs)
    der = errs / n
    half = 1.96 * np.sqrt(var) / n
    return {"n_ui": n, "errors": errs, "bursts": bursts, "der": der, "der_95": [der - half, der + half],
            "bursts_per_ui": bursts / n, "errors_per_burst": errs / bursts if bursts else float("nan")}


def cost(length_m: float) -> dict:
    """``evaluate_link`` on a new medium (equalisation, eyes, FEC), before and after."""
    spec = phy.LinkSpec(channel=twinax(length_m), lane_rate_bps=LANE_RATE_BPS)
    out = {}
    for label in ("before", "after"):
        ctx = gaussian_chain() if label == "before" else contextlib.nullcontext()
        with ctx:
            best = float("inf")
            for _ in range(2):
                phy.link.equalise._EYES.clear()
                CONDITIONED.cache_clear()
                post_fec._dfe_model.cache_clear()
                post_fec._noisier_table.cache_clear()
                t = time.perf_counter()
                phy.evaluate_link(spec)
                best = min(best, time.perf_counter() - t)
        out[label] = best
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 M UI per segment instead of 10 M")
    ap.add_argument("--n-ui", type=float, help="UI per segment and seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args(argv)
    n_ui = int(a.n_ui) if a.n_ui else (2_000_000 if a.quick else 10_000_000)
    try:
        os.sched_setaffinity(0, {0})
    except (AttributeError, OSError):
        pass
    print(f"DFE bursts: roll-up before (Gaussian chain) and after (conditioned chain) against phy.simulate, "
          f"{n_ui / 1e6:g} M UI x seeds {a.seeds}, 26 AWG twinax at {LANE_RATE_BPS / 1e9:g} Gb/s PAM4\n")
    rows = [case(L, n_ui, a.seeds) for L in LENGTHS_M]
    print(f"  {'cable':>6}  {'DER before':>11} {'DER after':>11} {'simulated':>11} {'sim 95 % interval':>23} "
          f"{'before/sim':>10} {'after/sim':>9}  equalisation (after)")
    for r in rows:
        s = pooled(r["sim"])
        if "before_sim" in r:
            sb = pooled(r["before_sim"])
            print(f"  {r['cable_m']:>5g}m  {r['before_der']:>11.4g} {'':>11} {sb['der']:>11.4g} "
                  f"{sb['der_95'][0]:>11.4g}..{sb['der_95'][1]:<11.4g} {ratio(r['before_der'], sb['der']):>10.3f} "
                  f"{'':>9}  before's own segment: {r['before_equalisation']}")
            print(f"  {'':>6}  {'':>11} {r['after_der']:>11.4g} {s['der']:>11.4g} "
                  f"{s['der_95'][0]:>11.4g}..{s['der_95'][1]:<11.4g} {'':>10} {ratio(r['after_der'], s['der']):>9.3f}  "
                  f"{r['equalisation']}")
        else:
            print(f"  {r['cable_m']:>5g}m  {r['before_der']:>11.4g} {r['after_der']:>11.4g} {s['der']:>11.4g} "
                  f"{s['der_95'][0]:>11.4g}..{s['der_95'][1]:<11.4g} {ratio(r['before_der'], s['der']):>10.3f} "
                  f"{ratio(r['after_der'], s['der']):>9.3f}  {r['equalisation']}")
    print("\n  what it is made of, on the roll-up's segment (after): first errors per UI and errors per burst")
    print(f"  {'cable':>6}  {'eye SER':>10} {'sim bursts/UI':>13}  {'Gaussian':>8} {'conditioned':>11} {'simulated':>9}"
          f"  {'StatEye.ser_dfe':>15} {'bursts':>7}")
    for r in rows:
        s, md = pooled(r["sim"]), r["models"]
        print(f"  {r['cable_m']:>5g}m  {md['ser']:>10.4g} {s['bursts_per_ui']:>13.4g}  "
              f"{md['gauss_errors_per_burst']:>8.3f} {md['cond_errors_per_burst']:>11.3f} {s['errors_per_burst']:>9.3f}"
              f"  {r['ser_dfe']:>15.4g} {s['bursts']:>7d}")
        if "before_sim" in r:
            sb, mb = pooled(r["before_sim"]), r["before_models"]
            print(f"  {'':>6}  {mb['ser']:>10.4g} {sb['bursts_per_ui']:>13.4g}  {mb['gauss_errors_per_burst']:>8.3f} "
                  f"{mb['cond_errors_per_burst']:>11.3f} {sb['errors_per_burst']:>9.3f}  {'':>15} {sb['bursts']:>7d}"
                  f"  (before's own segment)")
    print("\n  cost")
    for r in rows:
        md = r["models"]
        print(f"  {r['cable_m']:>5g}m  conditioned table {md['table_ms']:.1f} ms ({md['table_rows']} rows), "
              f"Gaussian chain's mean {md['gauss_ms']:.2f} ms; simulator {sum(x['seconds'] for x in r['sim']):.1f} s")
    c = cost(LENGTHS_M[-1])
    print(f"  evaluate_link on a new {LENGTHS_M[-1]:g} m medium: before {c['before']:.2f} s, after {c['after']:.2f} s "
          f"({c['after'] / c['before']:.2f}x)")
    if a.json:
        a.json.write_text(json.dumps({"cases": rows, "evaluate_link_s": c}, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
