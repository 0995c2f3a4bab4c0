"""Issue 14 in figures: the roll-up's bounded cost, its agreement with COM, the simulator
against the statistical eye on the roll-up's segments.

1. **DFE burst model, old against new, side by side.** The previous enumeration (depth
   first in Python with a probability cut only, reproduced here as ``_old_dfe``) against
   :meth:`fec.BurstModel.dfe` (exact chain means, a node budget, the pruned mass carried
   to the end of each burst), on the six leading DFE taps of a real 802.3ck segment, from
   DER 1e-4 to 0.5, with the cut ``StatEye.ser_dfe`` used (1e-9). The old one is stopped
   after ``--old-limit`` seconds.
2. **evaluate_link on every 802.3ck channel** in ../shared/channels at 106.25 and
   212.5 Gb/s (COM's default equalisation): seconds, COM, the detector error ratio of
   COM's own equalisation at COM's cursor (one-sided, against DER0), the roll-up's choice,
   its verdict; and synthesised twinax across COM = 0 dB; and cables too long to close
   (30 m, 100 m) that used to take 31 s and 196 s.
3. **The simulator against the roll-up's eye** on two of its segments: the eye's error
   ratio at the slicer against the simulator's burst-start ratio (99.9 % interval), and
   the detector error ratio with DFE propagation against the simulator's.

    python benchmarks/bench_reliability.py            # about 3 minutes on one core
    python benchmarks/bench_reliability.py --quick    # fewer points, shorter simulations
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _p in (REPO, REPO / "benchmarks"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_link import _pin, twinax  # noqa: I001 (one core, pinned; 26 AWG twinax between connectors)
from scipy import stats

import channels
import fec
import phy
from fec.montecarlo import Estimate
from phy.link import COM_CHOICE, segments

SHARED = REPO.parent / "shared" / "channels" / "ieee802.3ck"
CK = ["C2C_PCB_SYSVIA_12dB_thru.s4p", "CA_19p75dB_thru.s4p", "DPO_4in_Meg7_THRU.s4p", "DPO_10in_Meg7_THRU.s4p",
      "DPO_14in_Meg7_THRU.s4p", "Tp0_Tp5_28p5db_FQSFP_thru.s4p"]
#: DPO_4in at 106.25 Gb/s, COM's CTLE without its Tx FFE, sampled at the peak: the candidate
#: whose SER of 0.26 hung the roll-up (its first six DFE taps)
TAPS = [0.405, 0.202, 0.084, 0.062, 0.022, 0.018]


class _Stop(Exception):
    pass


def _old_dfe(taps, der0: float, tail: float, limit_s: float):
    """The previous BurstModel.dfe: depth first over the error tree, a branch dropped when
    less likely than ``tail``, nothing else bounding it. Returns (patterns, dropped mass)
    or raises _Stop after ``limit_s`` seconds."""
    b = list(taps)
    w = 0.75
    sigma = 1.0 / stats.norm.isf(der0 / (2 * w))
    r2 = math.sqrt(2.0)
    n, found, dropped = len(b), 0, 0.0
    stack = [([1], 0.5, 0), ([-1], 0.5, 0)]
    t0 = time.perf_counter()
    steps = 0
    while stack:
        errs, p, zeros = stack.pop()
        steps += 1
        if steps % 20000 == 0 and time.perf_counter() - t0 > limit_s:
            raise _Stop
        if zeros >= n:
            found += 1
            continue
        if len(errs) >= 256:
            dropped += p
            continue
        recent = errs[::-1][:n]
        delta = -2.0 * sum(bi * e for bi, e in zip(b, recent))
        pu = w * 0.5 * math.erfc((1 - delta) / (sigma * r2))
        pd = w * 0.5 * math.erfc((1 + delta) / (sigma * r2))
        for e, pe in ((0, max(0.0, 1 - pu - pd)), (1, pu), (-1, pd)):
            q = p * pe
            if q < tail:
                dropped += q
            else:
                stack.append((errs + [e], q, zeros + 1 if e == 0 else 0))
    return found, dropped


def bench_burst_model(ders, old_limit: float) -> list[dict]:
    rows = []
    fec.BurstModel.dfe(TAPS, 1e-3)  # compile the kernels
    for der0 in ders:
        t = time.perf_counter()
        new = fec.BurstModel.dfe(TAPS, der0)
        t_new = time.perf_counter() - t
        tail = 1e-9  # what StatEye.ser_dfe used at any error ratio (the roll-up's eye choice called it)
        t = time.perf_counter()
        try:
            found, dropped = _old_dfe(TAPS, der0, tail, old_limit)
            t_old, old = time.perf_counter() - t, f"{found} patterns, dropped {dropped:.2g}"
        except _Stop:
            t_old, old = float("inf"), f"stopped after {old_limit:g} s"
        rows.append({"der0": der0, "new_s": t_new, "new_patterns": len(new.patterns), "new_unlisted": new.truncated,
                     "new_mean_errors": new.mean_errors, "old_s": t_old, "old": old})
    return rows


def bench_com_agreement(quick: bool) -> list[dict]:
    rows = []
    cases = []
    if SHARED.is_dir():
        cases += [(f, channels.load(SHARED / f, aggressors="auto")) for f in (CK[:3] if quick else CK)]
    cases += [(f"twinax {L:g} m", twinax(L)) for L in ((3.5, 4.0) if quick else (2.5, 3.0, 3.5, 3.75, 4.0, 4.5))]
    for name, ch in cases:
        for rate in (106.25e9, 212.5e9):
            if name.startswith("twinax") and rate == 106.25e9 and not name.endswith(("3.5 m", "4.5 m")):
                continue
            t = time.perf_counter()
            r = phy.evaluate_link(phy.LinkSpec(channel=ch, lane_rate_bps=rate))
            took = time.perf_counter() - t
            seg = r.segments[0]
            der0 = phy.Serdes().com_params(rate / 2).der0
            com = [c for c in seg.candidates if c[0] == COM_CHOICE][0]
            one = com[1] / 1.5
            agree = "n/a (within 0.5 dB)" if abs(seg.com_db) <= 0.5 else (
                "yes" if (one < der0) == (seg.com_db > 0) else "NO")
            rows.append({"channel": name, "rate_gbps": rate / 1e9, "seconds": took, "com_db": seg.com_db,
                         "com_choice_one_sided_over_der0": one / der0, "agrees": agree, "rollup_der": seg.der,
                         "rollup_choice": seg.equalisation, "passes": r.passes})
    for L, rate in ((30.0, 212.5e9), (100.0, 212.5e9)):
        t = time.perf_counter()
        r = phy.evaluate_link(phy.LinkSpec(channel=twinax(L), lane_rate_bps=rate))
        rows.append({"channel": f"twinax {L:g} m (closed)", "rate_gbps": rate / 1e9,
                     "seconds": time.perf_counter() - t, "com_db": r.segments[0].com_db,
                     "com_choice_one_sided_over_der0": float("nan"), "agrees": "-", "rollup_der": r.pre_fec_der,
                     "rollup_choice": r.segments[0].equalisation, "passes": r.passes})
    return rows


def bench_simulator(quick: bool) -> list[dict]:
    rows = []
    cases = [("twinax 5 m", twinax(5.0), 10**6 if quick else 4 * 10**6)]
    if SHARED.is_dir():
        cases.append(("C2C_PCB_SYSVIA_12dB", channels.load(SHARED / CK[0], aggressors="auto"),
                      4 * 10**6 if quick else 2 * 10**7))
    for name, ch, n in cases:
        seg = segments(phy.LinkSpec(channel=ch, lane_rate_bps=212.5e9))[0]
        t = time.perf_counter()
        r = phy.simulate(seg.channel, n, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=seg.noise,
                         jitter=seg.jitter, cdr=seg.cdr, seed=1)
        took = time.perf_counter() - t
        starts = Estimate.of(r.n_bursts, r.n_ui, 0.999)
        det = Estimate.of(r.detector_errors, r.n_ui, 0.999)
        rows.append({"segment": f"{name} at 212.5 Gb/s ({seg.equalisation})", "n_ui": r.n_ui, "sim_s": took,
                     "eye_ser": seg.ser, "sim_starts": starts.value, "sim_starts_low": starts.low,
                     "sim_starts_high": starts.high, "within": starts.low <= seg.ser <= starts.high,
                     "eye_der": seg.der, "sim_der": det.value, "der_ratio_sim_over_eye": det.value / seg.der})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--old-limit", type=float, default=60.0, help="seconds before the old enumeration is stopped")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    _pin()
    out = {}
    print("1. DFE burst model, six taps of a real 802.3ck segment: old enumeration vs the bounded model")
    ders = (1e-4, 1e-3, 1e-2, 0.05) if args.quick else (1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5)
    out["burst_model"] = bench_burst_model(ders, args.old_limit)
    print(f"{'DER0':>7} {'new s':>7} {'listed':>7} {'unlisted mass':>13} {'mean errors':>11} {'old s':>8}  old")
    for r in out["burst_model"]:
        ratio = r["old_s"] / r["new_s"] if math.isfinite(r["old_s"]) else float("inf")
        print(f"{r['der0']:>7.0e} {r['new_s']:>7.3f} {r['new_patterns']:>7} {r['new_unlisted']:>13.3g} "
              f"{r['new_mean_errors']:>11.4f} {r['old_s']:>8.2f}  {r['old']} (old/new {ratio:.0f}x)")
    print("\n2. evaluate_link with COM's default equalisation; COM's own choice against DER0")
    out["com"] = bench_com_agreement(args.quick)
    print(f"{'channel':<32} {'Gb/s':>6} {'s':>5} {'COM dB':>7} {'COM choice/DER0':>15} {'agrees':>7} "
          f"{'roll-up DER':>11}  pass")
    for r in out["com"]:
        print(f"{r['channel']:<32} {r['rate_gbps']:>6.2f} {r['seconds']:>5.2f} {r['com_db']:>7.2f} "
              f"{r['com_choice_one_sided_over_der0']:>15.3g} {r['agrees']:>7} {r['rollup_der']:>11.3g}  "
              f"{'yes' if r['passes'] else 'no'}")
    print(f"slowest evaluate_link: {max(r['seconds'] for r in out['com']):.2f} s (target: about 10 s)")
    print("\n3. the simulator on the roll-up's segments (COM's impairments, symbol jitter)")
    out["simulator"] = bench_simulator(args.quick)
    for r in out["simulator"]:
        print(f"{r['segment']}\n   {r['n_ui']:.3g} UI in {r['sim_s']:.1f} s: eye SER {r['eye_ser']:.3g}, simulated "
              f"burst starts {r['sim_starts']:.3g} [{r['sim_starts_low']:.3g}, {r['sim_starts_high']:.3g}] "
              f"({'within' if r['within'] else 'OUTSIDE'}); DER with DFE propagation: eye {r['eye_der']:.3g}, "
              f"simulated {r['sim_der']:.3g} (x{r['der_ratio_sim_over_eye']:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
