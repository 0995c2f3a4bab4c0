"""The calibrated decode model against public measurements, in one run (issue 33).

1. The fit: the coefficients :func:`phy.topology.calibration.fit` solves for from the
   TRAINING rows, beside the figures the presets carry.
2. Every public measurement (``rows()``): engine, hardware, batch and lengths, measured and
   our tokens/s per sequence, the ratio, and its set (train: fitted; test: held out;
   context: another regime or a weak source, shown for the spread).
3. The issue's headline cases, the bare roofline beside the calibrated model, and where
   the time goes.
4. The MFU crossing (the smallest batch reaching 20 % of peak FLOP/s) restated with the
   calibrated model.

    python benchmarks/validate_decode.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phy import topology as tp  # noqa: E402
from phy.topology import calibration as cal  # noqa: E402
from phy.topology.runtime import FITTED_COEFFICIENTS  # noqa: E402

KEYS = ("area", "case", "source", "measured", "ours", "unit", "ratio", "set")


def rows() -> list[dict]:
    """One dict per public measurement: area, case, source, measured, ours, unit, ratio
    (ours / measured) and set (train / test / context)."""
    return [{k: r[k] for k in KEYS} for r in cal.rows(FITTED_COEFFICIENTS)]


def _short(src: str, n: int = 60) -> str:
    return src if len(src) <= n else src[: n - 3] + "..."


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out: dict = {}

    print("1. The fit on the training rows (phy.topology.calibration.fit)")
    f = cal.fit()
    for k in cal.FITTED:
        print(f"   {k:22s} fitted {f[k]:.6g}   preset {FITTED_COEFFICIENTS[k]:.6g}")
    print(f"   training: {', '.join(f['training'])}")
    out["fit"] = {k: float(f[k]) for k in cal.FITTED}

    print("\n2. Public measurements (tokens/s per sequence; ratio = ours / measured)")
    full = cal.rows(FITTED_COEFFICIENTS)
    print(f"   {'set':5s} {'case':58s} {'measured':>9s} {'ours':>9s} {'ratio':>6s}  source")
    for r in full:
        print(f"   {r['set']:5s} {r['case']:58s} {r['measured']:9.2f} {r['ours']:9.2f} {r['ratio']:6.2f}  "
              f"{_short(r['source'])}")
    test = [r for r in full if r["set"] == "test"]
    inside = [r for r in test if 1 / 1.3 <= r["ratio"] <= 1.3]
    print(f"   held out: {len(inside)} of {len(test)} within 30 %; outside: "
          + ", ".join(f"{r['id']} {r['ratio']:.2f}" for r in test if r not in inside))
    print("   notes: " + "; ".join(f"{r['id']}: {r['note']}" for r in full if r["note"]))
    out["rows"] = rows()

    print("\n3. The issue's cases: bare roofline against the calibrated model")
    hop = cal._collectives("hopper")
    h200 = tp.Accelerator.h200()
    cases = [("llama3-70b fp8, 8 x H200, batch 1", tp.Model.llama3_70b(), dict(tp=8)),
             ("deepseek-v3 fp8, 8 x H200, batch 1 (TP experts)", tp.Model.deepseek_v3(), dict(tp=8, ep=1))]
    out["cases"] = []
    for name, m, kw in cases:
        ideal = tp.decode(m, 1, accelerator=h200, collectives=hop, runtime=tp.Runtime.ideal(), **kw)
        rt = tp.Runtime.sglang_2024() if m.experts else tp.Runtime.trtllm()
        real = tp.decode(m, 1, accelerator=h200, collectives=hop, runtime=rt, **kw)
        print(f"   {name}: roofline {ideal.tokens_per_s:.0f} tok/s, {rt.name} {real.tokens_per_s:.1f} tok/s; "
              f"step {real.time_per_token_s * 1e3:.2f} ms = memory {real.memory_s * 1e3:.2f} + kernels/layers "
              f"{real.overhead_s * 1e3:.2f} + collectives {real.comm_s * 1e3:.2f}")
        out["cases"].append({"case": name, "roofline": ideal.tokens_per_s, "calibrated": real.tokens_per_s,
                             "memory_s": real.memory_s, "overhead_s": real.overhead_s, "comm_s": real.comm_s})

    print("\n4. MFU crossing: smallest batch at 20 % of peak FLOP/s, context 2048, Llama 3 70B FP8")
    out["mfu_crossing"] = []
    for label, acc, n in (("1 x H200", h200, 1), ("8 x H200", h200, 8), ("1 x B200", tp.Accelerator.b200(), 1),
                          ("1 x GB200", tp.Accelerator.gb200(), 1)):
        kw = dict(accelerator=acc, context_tokens=2048, tp=n)
        if n > 1:
            kw["collectives"] = hop
        a = tp.mfu_crossing(tp.Model.llama3_70b(), 0.2, runtime=tp.Runtime.ideal(), **kw)
        b = tp.mfu_crossing(tp.Model.llama3_70b(), 0.2, **kw)
        print(f"   {label:10s} roofline: batch {a}   calibrated (trtllm): batch {b}")
        out["mfu_crossing"].append({"case": label, "roofline": a, "calibrated": b})
    print(f"\n   ran in {time.perf_counter() - t0:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=float))
    return out


if __name__ == "__main__":
    main()
