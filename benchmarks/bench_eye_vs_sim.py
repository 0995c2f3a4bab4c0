"""The statistical eye against the time-domain simulator on every shared through channel
(issue 32).

For each through file in ``../shared/channels`` (its crosstalk files beside it, as
``channels.load(..., aggressors="auto")`` pairs them), the link's own segment
(:func:`phy.link.segments`: COM's equalisation, or the variant the roll-up's eye prefers,
COM's noise and jitter, the fixed sampling phase), its noise density ``eta_0`` scaled so
that the eye's symbol error ratio at the slicer is ``--ser`` (default 1e-3); then the
simulator on that segment for ``--n-ui`` UI (default 2e6):

* ``genie``: the DFE fed the sent symbols (``phy.simulate(..., dfe_feedback="sent")``), so
  every error is the slicer's own: the quantity :meth:`phy.StatEye.ser` computes. The eye
  is in or out of its exact (Clopper-Pearson) 95 % interval.
* ``bursts``: the real DFE, the rate bursts of errors start at, what the consistency test
  compared before (a burst start needs the previous decisions right, so it is below the
  slicer's error ratio where errors cluster, with or without propagation).
* ``DFE``: the real DFE's detector error ratio against :meth:`phy.StatEye.ser_dfe` (the
  error chain's mean burst length on the eye).

With ``--before DIR`` (a checkout of the code before issue 32, e.g.
``mkdir /tmp/before32 && git archive 3f8d520 | tar -x -C /tmp/before32``) the eye's SER of
that code at the same noise is computed in a subprocess and set beside today's.

Run: ``python benchmarks/bench_eye_vs_sim.py [--quick] [--before DIR] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "channels"
TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
from test_eye_vs_sim import THROUGHS  # noqa: E402  (the shared through channels, each at its own rate)


def segment(rel: str, rate: float, modulation: str):
    import channels
    import phy
    from phy.link import segments

    ch = channels.load(SHARED / rel, aggressors="auto")
    return ch, segments(phy.LinkSpec(channel=ch, lane_rate_bps=rate, modulation=modulation))[0]


def eye_at(seg, scale: float):
    """The segment's statistical eye with its noise density ``eta_0`` times ``scale``."""
    import phy

    noise = replace(seg.noise, rx_noise_psd_v2_per_hz=seg.noise.rx_noise_psd_v2_per_hz * scale)
    return noise, phy.statistical_eye(seg.channel, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=noise,
                                      jitter=seg.jitter, cdr=seg.cdr, columns="sampling")


def scale_for(seg, ser: float) -> float:
    """The factor on ``eta_0`` that puts the eye's SER at ``ser`` (Brent's method on the log of both, 0.1 %)."""
    from scipy import optimize

    def f(log_s):
        return math.log(max(eye_at(seg, 10**log_s)[1].ser(), 1e-300)) - math.log(ser)

    lo, hi = -2.0, 4.0
    if f(lo) > 0 or f(hi) < 0:
        raise RuntimeError(f"no eta_0 between 1e-2 and 1e4 times COM's gives SER {ser:g}")
    return 10 ** optimize.brentq(f, lo, hi, xtol=1e-4)


def _worker(spec: dict) -> dict:
    """The eye's SER with the code on sys.path (for ``--before``) at each channel's scale."""
    out = {}
    for rel, rate, mod, scale in spec["cases"]:
        try:
            _ch, seg = segment(rel, rate, mod)
            out[rel] = {"ser": eye_at(seg, scale)[1].ser(), "equalisation": seg.equalisation}
        except Exception as e:  # noqa: BLE001 - reported beside the row
            out[rel] = {"error": f"{type(e).__name__}: {e}"}
    return out


def run_before(before: Path | None, cases: list) -> dict:
    if before is None:
        return {}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps({"cases": cases})]
    env = {**__import__("os").environ, "PYTHONPATH": str(before)}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(before))
    if r.returncode:
        return {"error": r.stderr[-500:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def interval(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, "exact")
    return float(ci.low), float(ci.high)


def measure(rel: str, rate: float, mod: str, ser: float, n_ui: int, seed: int) -> dict:
    import phy

    t0 = time.perf_counter()
    ch, seg = segment(rel, rate, mod)
    scale = scale_for(seg, ser)
    noise, eye = eye_at(seg, scale)
    t1 = time.perf_counter()
    runs = {}
    for fb in ("sent", "decisions"):
        runs[fb] = phy.simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx, noise=noise,
                                jitter=seg.jitter, cdr=seg.cdr, dfe_feedback=fb, seed=seed)
    g, d = runs["sent"], runs["decisions"]
    return {"channel": rel, "rate_gbps": rate / 1e9, "modulation": mod, "aggressors": len(ch.aggressors),
            "equalisation": seg.equalisation, "eta0_scale": scale, "eye_ser": eye.ser(), "eye_ser_dfe": eye.ser_dfe(),
            "n_ui": n_ui, "genie_errors": g.detector_errors, "genie_ci": interval(g.detector_errors, g.n_ui),
            "bursts": d.n_bursts, "bursts_ci": interval(d.n_bursts, d.n_ui),
            "dfe_errors": d.detector_errors, "dfe_ci": interval(d.detector_errors, d.n_ui),
            "eye_s": t1 - t0, "sim_s": time.perf_counter() - t1}


def _cell(eye: float, k: int, n: int, ci) -> str:
    ok = "in " if ci[0] <= eye <= ci[1] else "OUT"
    return f"{k / n:9.4g} {ci[0]:9.4g}..{ci[1]:<9.4g} {eye * n / max(k, 1):6.3f} {ok}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ser", type=float, default=1e-3)
    ap.add_argument("--n-ui", type=float, default=2e6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="SER 1e-2 over 2e5 UI (the test's setting)")
    ap.add_argument("--before", type=Path)
    ap.add_argument("--json")
    ap.add_argument("--worker")
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(_worker(json.loads(a.worker))))
        return 0
    if not SHARED.is_dir():
        print(f"the shared channels are not at {SHARED}")
        return 1
    ser, n_ui = (1e-2, 200_000) if a.quick else (a.ser, int(a.n_ui))
    print(f"Statistical eye vs simulator at eye SER {ser:g}, {n_ui:.3g} UI per run, seed {a.seed}: each column "
          "'ratio' is eye / simulator; in = the eye inside the simulator's 95 % interval")
    rows = [measure(rel, rate, mod, ser, n_ui, a.seed) for rel, rate, mod in THROUGHS if (SHARED / rel).exists()]
    before = run_before(a.before, [[r["channel"], r["rate_gbps"] * 1e9, r["modulation"], r["eta0_scale"]] for r in rows])
    hdr = f"{'SER':>9} {'95 % interval':>20} {'ratio':>6}    "
    print(f"\n{'channel':<38} {'xt':>2} {'eta0 x':>7} {'eye SER':>9} | genie: {hdr}| bursts: {hdr}")
    for r in rows:
        name = r["channel"].split("/")[-1].removesuffix(".s4p")
        print(f"{name:<38} {r['aggressors']:>2} {r['eta0_scale']:7.3g} {r['eye_ser']:9.4g} | genie: "
              f"{_cell(r['eye_ser'], r['genie_errors'], n_ui, r['genie_ci'])} | bursts: "
              f"{_cell(r['eye_ser'], r['bursts'], n_ui, r['bursts_ci'])}")
    print(f"\n{'channel':<38} {'equalisation':<58} {'eye ser_dfe':>11} | real DFE: {hdr}| eye s  sim s")
    for r in rows:
        name = r["channel"].split("/")[-1].removesuffix(".s4p")
        print(f"{name:<38} {r['equalisation'][:58]:<58} {r['eye_ser_dfe']:11.4g} | real DFE: "
              f"{_cell(r['eye_ser_dfe'], r['dfe_errors'], n_ui, r['dfe_ci'])}| {r['eye_s']:5.1f} {r['sim_s']:5.1f}")
    if a.before:
        print(f"\nBefore ({a.before}): that code's eye at the same noise, against the same runs")
        if "error" in before:
            print("   not run:", before["error"])
        for r in rows:
            name = r["channel"].split("/")[-1].removesuffix(".s4p")
            b = before.get(r["channel"], {})
            if "ser" not in b:
                print(f"{name:<38} {b.get('error', 'not run')}")
                continue
            r["before_eye_ser"] = b["ser"]
            same = "" if b["equalisation"] == r["equalisation"] else f"  (it chose: {b['equalisation']})"
            print(f"{name:<38} eye SER {b['ser']:9.4g} (now {r['eye_ser']:9.4g}) | genie: "
                  f"{_cell(b['ser'], r['genie_errors'], n_ui, r['genie_ci'])} | bursts: "
                  f"{_cell(b['ser'], r['bursts'], n_ui, r['bursts_ci'])}{same}")
    if a.json:
        Path(a.json).write_text(json.dumps({"ser": ser, "n_ui": n_ui, "seed": a.seed, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
