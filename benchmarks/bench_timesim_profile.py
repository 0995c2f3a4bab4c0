"""Where the time-domain simulator's time goes outside its kernel, before and after (issue 35).

The code before (commit 862076c, extracted with ``git archive`` into a temporary folder, or
``--before PATH``) and this checkout each run in a long-lived worker process (Numba,
OpenMP and BLAS threads set to 1, both pinned to the same core where the OS allows it),
called in turn (before, now, now, before, ...) on the same seeded runs, so that the shared
machine's load falls on both alike. Times are the worker's CPU time
(``time.process_time``); each figure is the median over ``--repeat`` runs.

Every timed run is profiled by wrapping the simulator's steps (the same names in both
trees) and counting each one's own time (its wrapped callees' time taken out):

* ``kernel``: ``run_chunk`` (samples, FFE, DFE, slicer, counters, eye);
* ``tail FFT``: ``TailPlan.outputs`` (the far cursors' overlap-save, per chunk);
* ``random``: the Gaussian draws (``FastNormal.fill``: Tx noise, Tx jitter, Rx noise), the
  symbols (``random_symbols``) and the sinusoidal jitter (``add_sine``);
* ``rx noise FIR``: ``fir_valid`` (the front end's shaping of the Rx noise);
* ``symbol prep``: ``prepare_symbols``, ``edges_for``, ``_pulse_inputs``;
* ``streams``: ``Stream.window`` (the rolling windows' copies);
* ``glue``: the rest of the chunk loop (``_run``); ``setup``: the rest of ``simulate``
  (tables, tail plan, result).

The runs (the SerDes of ``bench_timesim.py``: PAM4, Tx FFE, Rx filter, 802.3ck CTLE, 8 DFE
taps, Tx and Rx noise, Tx jitter, fixed phase, 32 samples per UI, the default span):

* ``CA slicer``: the 802.3ck cable assembly ``CA_19p75dB`` (``../shared/channels``) at
  53.125 GBd, errors at the slicer (target 40 ns/UI);
* ``twinax slicer``: ``twinax_1m_26awg`` at 106.25 GBd (target 40 ns/UI);
* ``twinax eye`` and ``CA eye``: the same with the 32-column eye (target 300 ns/UI).

    python benchmarks/bench_timesim_profile.py                # about 5 minutes on a shared 2-core machine
    python benchmarks/bench_timesim_profile.py --repeat 9 --case "twinax eye" --before /tmp/before35
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _worker  # noqa: E402 - the benchmarks' shared worker

REPO = Path(__file__).resolve().parents[1]
BEFORE_COMMIT = "862076c"  # main before issue 35
CPU = sorted(os.sched_getaffinity(0))[-1] if hasattr(os, "sched_getaffinity") else 0
CASES = {"CA slicer": 1 << 21, "twinax slicer": 1 << 21, "twinax eye": 1 << 17, "CA eye": 1 << 16}
TARGET_NS = {"slicer": 40.0, "eye": 300.0}
PARTS = ("kernel", "tail FFT", "random", "rx noise FIR", "symbol prep", "streams", "glue", "setup")


def case(name: str):
    """(channel, n_ui, keyword arguments of simulate) of a case."""
    import warnings

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_timesim import case as timesim_case

    warnings.simplefilter("ignore")
    ch, kw = timesim_case("CA_19p75dB" if name.startswith("CA") else "twinax_1m_26awg", None)
    kw["eye"] = name.endswith("eye")
    return ch, CASES[name], kw


class Profile:
    """Own CPU time per part, of the wrapped functions (nested wrapped calls taken out)."""

    def __init__(self):
        self.own = dict.fromkeys(PARTS, 0.0)
        self.stack = []

    def wrap(self, owner, attr: str, part: str) -> None:
        f = getattr(owner, attr, None)
        if f is None:
            return
        prof = self

        def wrapped(*a, **k):
            prof.stack.append(0.0)
            t0 = time.process_time()
            try:
                return f(*a, **k)
            finally:
                dt = time.process_time() - t0
                inner = prof.stack.pop()
                prof.own[part] += dt - inner
                if prof.stack:
                    prof.stack[-1] += dt

        setattr(owner, attr, wrapped)

    def install(self) -> None:
        from phy.engines.timesim import _kernels as K, records as R, sources as S, tail as T
        from phy.serdes import _kernels as SK

        SM = sys.modules["phy.engines.timesim.simulate"]
        for owner, attr, part in ((K, "run_chunk", "kernel"), (T.TailPlan, "outputs", "tail FFT"),
                                  (SK.FastNormal, "fill", "random"), (S, "random_symbols", "random"),
                                  (SK, "add_sine", "random"), (S, "fir_valid", "rx noise FIR"),
                                  (SM, "prepare_symbols", "symbol prep"), (SM, "_pulse_inputs", "symbol prep"),
                                  (R, "edges_for", "symbol prep"), (S.Stream, "window", "streams"),
                                  (SM, "_run", "glue"), (SM, "simulate", "setup")):
            self.wrap(owner, attr, part)

    def reset(self) -> None:
        self.own = dict.fromkeys(PARTS, 0.0)


def worker(cpu: int | None) -> None:
    """Serve timing requests on stdin (one JSON per line), with the ``phy`` on PYTHONPATH."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    import phy
    import phy.engines.timesim.simulate  # noqa: F401  (the module, not the function)

    prof = Profile()
    prof.install()
    simulate = sys.modules["phy.engines.timesim.simulate"].simulate
    print(json.dumps({"phy": phy.__file__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        ch, n_ui, kw = case(req["case"])
        n_ui = req.get("n_ui", n_ui)
        prof.reset()
        c0 = time.process_time()
        r = simulate(ch, n_ui, **kw)
        dc = time.process_time() - c0
        out = {"cpu_s": dc, "errors": r.detector_errors, "n_ui": r.n_ui, "parts": prof.own}
        if r.eye is not None:
            out["eye_hits"] = int(r.eye.counts.sum())
        print(json.dumps(out), flush=True)


def Worker(repo: Path, cache: str | None = None):  # noqa: N802 - a worker on one checkout
    """A :class:`_worker.Worker` running this script on ``repo``, pinned to ``CPU``."""
    return _worker.Worker(__file__, repo, CPU, cache)


def before_tree(path: str | None) -> tuple[Path, str | None]:
    """The checkout of the code before (extracted from git unless given), and a folder to remove."""
    if path:
        return Path(path).resolve(), None
    tmp = tempfile.mkdtemp(prefix="bench-timesim-profile-")
    arch = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE_COMMIT], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
    return Path(tmp), tmp


def measure(workers: dict, name: str, repeat: int) -> dict:
    """Medians of ``repeat`` runs of each version in turn (ns per UI, total and per part)."""
    res = {v: w.run(name, 3_000) for v, w in workers.items()}  # untimed: tables, allocations
    res = {v: w.run(name) for v, w in workers.items()}
    if res["before"]["errors"] != res["now"]["errors"] or res["before"].get("eye_hits") != res["now"].get("eye_hits"):
        raise SystemExit(f"{name}: the two versions disagree: {res}")
    runs = {v: [] for v in workers}
    for i in range(repeat):
        for v in (("before", "now") if i % 2 == 0 else ("now", "before")):
            runs[v].append(workers[v].run(name))
    n = res["now"]["n_ui"]
    out = {"n_ui": n, "errors": res["now"]["errors"]}
    for v, rs in runs.items():
        out[v] = {"total": statistics.median(r["cpu_s"] for r in rs) / n * 1e9,
                  "min": min(r["cpu_s"] for r in rs) / n * 1e9,
                  **{p: statistics.median(r["parts"][p] for r in rs) / n * 1e9 for p in PARTS}}
    out["pair_ratio"] = statistics.median(b["cpu_s"] / a["cpu_s"] for a, b in zip(runs["before"], runs["now"]))
    return out


def table(name: str, m: dict) -> str:
    """The profile of one case, before and now, ns per UI and the ratios."""
    b, a = m["before"], m["now"]
    target = TARGET_NS["eye" if name.endswith("eye") else "slicer"]
    rows = [f"{name}: {m['n_ui']:,} UI, {m['errors']} detector errors (both)",
            f"  {'ns/UI':14s} {'before':>9s} {'now':>9s} {'now/before':>11s}"]
    for v in (a, b):
        v["total - setup"] = v["total"] - v["setup"]
    for p in ("total", "min", "total - setup") + PARTS:
        ratio = a[p] / b[p] if b[p] > 0 else float("nan")
        rows.append(f"  {p:14s} {b[p]:9.1f} {a[p]:9.1f} {ratio:11.2f}")
    rows.append(f"  pairs' median ratio {m['pair_ratio']:.2f}; target {target:.0f} ns/UI: "
                f"{'met' if a['total'] <= target else 'not met'} ({a['total']:.1f}; "
                f"{a['total - setup']:.1f} without the run's setup)")
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help=f"a checkout of the code before (default: git archive {BEFORE_COMMIT})")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case and version (median)")
    ap.add_argument("--case", action="append", choices=list(CASES), help="only these runs (default: all)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    old_repo, tmp = before_tree(args.before)
    out = {"load_before": os.getloadavg(), "cases": {}}
    workers = {}
    try:
        workers = {"before": Worker(old_repo), "now": Worker(REPO)}
        for name in args.case or CASES:
            out["cases"][name] = m = measure(workers, name, args.repeat)
            print(table(name, m), flush=True)
    finally:
        for w in workers.values():
            w.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    out["load_after"] = os.getloadavg()
    print(f"load average {out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f} (2 cores, shared)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]))
    else:
        main()
