"""Speed of the time-domain kernel with named records against the positional call it replaced.

Issue 34: ``run_chunk`` took about 70 positional arguments; it now takes named records
(``phy.engines.timesim.records``). This times both on the same runs in one invocation:
the code before (commit 028ae64, extracted with ``git archive`` into a temporary folder,
or ``--before PATH``) and the code of this checkout, each in its own long-lived worker
process (Numba, OpenMP and BLAS threads set to 1, both pinned to the same core where the
OS allows it), called in turn (old, new, old, new, ...) so that the shared machine's load
falls on both alike; each time is the median over ``--repeat`` runs, and the ratio new /
old is given three ways: of the medians, the median of each pair's (an old run and the
new run next to it, which goes first alternating: the least sensitive to the load
drifting), and of the fastest runs (target 1.00 +/- 0.05, on the pairs). Times are the
worker's CPU time (``time.process_time``): on a machine shared with other jobs the wall
clock also counts the time the worker waited for a core (it is printed too, as a ratio).

The runs (``phy.simulate`` end to end, the seed fixed, so both compute the same UIs):

* ``twinax slicer``: ``twinax_1m_26awg`` at 106.25 GBd, 32 samples per UI, its full span
  (the long-span tail by FFT), the SerDes of ``bench_timesim.py`` (Tx FFE, Rx CTLE, 8 DFE
  taps, Tx and Rx noise, Tx jitter), fixed phase, errors counted at the slicer: 2^20 UI.
* ``twinax eye``: the same with the 32-column eye (bathtub, crossings): 2^16 UI.
* ``c2m bang-bang+ADC``: ``chip_to_module`` with a bang-bang CDR, a 5-bit ADC and the
  sampling clock's jitter and wander, direct path: 2^18 UI.

and the kernels' start-up in a fresh process, ``--startup-repeat`` times each in turn:
``cold compile`` (an empty Numba cache, ``NUMBA_CACHE_DIR`` set to a new folder: the first
3,000-UI run with the eye, less the same run once compiled) and ``cache load`` (a fresh
process on that cache: the same difference).

    python benchmarks/bench_kernel_args.py                 # about 2 minutes on a shared 2-core machine
    python benchmarks/bench_kernel_args.py --repeat 9 --before /tmp/kern_old
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
BEFORE_COMMIT = "028ae64"  # the last commit with the positional run_chunk
CPU = sorted(os.sched_getaffinity(0))[-1] if hasattr(os, "sched_getaffinity") else 0  # both workers' core
CASES = {"twinax slicer": 1 << 20, "twinax eye": 1 << 16, "c2m bang-bang+ADC": 1 << 18}


def case(name: str):
    """(channel, n_ui, keyword arguments of simulate) of a case: ``bench_timesim.py``'s
    SerDes, with the CDR, ADC and sampling clock of the bang-bang case."""
    import warnings

    from bench_timesim import case as timesim_case

    import channels
    from phy.serdes import Cdr, Ctle, Dfe, Impairments, Receiver  # the package's names: both trees have them

    ch, kw = timesim_case("twinax_1m_26awg", None)
    if name.startswith("c2m"):
        baud = kw["baud_hz"]
        imp = Impairments(adc_enob=5.0, rj_rms_s=300e-15, wander_rms_s=300e-15, wander_bandwidth_hz=50e6)
        kw["rx"] = Receiver(bandwidth_hz=0.75 * baud, ctle=Ctle.ieee_802_3ck(baud, -10.0), dfe=Dfe(4), impairments=imp)
        kw["cdr"] = Cdr("bang-bang", kp_ui=2**-6, ki_ui=2**-13, update_ui=16)
        kw["tail"] = "direct"
        kw["warmup_ui"] = 2_000
        ch = channels.library.get("chip_to_module")
    kw["eye"] = name.endswith("eye")
    warnings.simplefilter("ignore")
    return ch, CASES.get(name, 3_000), kw


def worker(cpu: int | None) -> None:
    """Serve timing requests on stdin (one JSON per line), with the ``phy`` on PYTHONPATH,
    pinned to ``cpu`` where the OS allows it."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    import phy
    from phy.engines import simulate

    print(json.dumps({"phy": phy.__file__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        ch, n_ui, kw = case(req["case"])
        n_ui = req.get("n_ui", n_ui)
        t0, c0 = time.perf_counter(), time.process_time()
        r = simulate(ch, n_ui, **kw)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        print(json.dumps({"s": dt, "cpu_s": dc, "errors": r.detector_errors, "n_ui": r.n_ui}), flush=True)


def Worker(repo: Path, cache: str | None = None):  # noqa: N802 - a worker on one checkout
    """A :class:`_worker.Worker` running this script on ``repo``, pinned to ``CPU``."""
    return _worker.Worker(__file__, repo, CPU, cache)


def start_up(repo: Path, cache: str) -> float:
    """The first 3,000-UI run of a fresh process less the same run once compiled (CPU s)."""
    w = Worker(repo, cache)
    try:
        first = w.run("twinax eye", 3_000)["cpu_s"]
        again = statistics.median(w.run("twinax eye", 3_000)["cpu_s"] for _ in range(3))
    finally:
        w.close()
    return first - again


def before_tree(path: str | None) -> tuple[Path, str | None]:
    """The checkout of the code before (extracted from git unless given), and a folder to remove."""
    if path:
        return Path(path).resolve(), None
    tmp = tempfile.mkdtemp(prefix="bench-kernel-args-")
    arch = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE_COMMIT], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
    return Path(tmp), tmp


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help=f"a checkout of the code before (default: git archive {BEFORE_COMMIT})")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per case and version (median)")
    ap.add_argument("--startup-repeat", type=int, default=3, help="cold compiles and cache loads per version (median)")
    ap.add_argument("--case", action="append", choices=list(CASES), help="only these runs (default: all)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    old_repo, tmp = before_tree(args.before)
    caches = {v: tempfile.mkdtemp(prefix=f"bench-kernel-args-numba-{v}-") for v in ("old", "new")}
    repos = {"old": old_repo, "new": REPO}
    out = {"cases": {}, "startup": {}}
    try:
        # the kernels' start-up: a cold compile each (interleaved), then cache loads in turn
        colds, loads = {"old": [], "new": []}, {"old": [], "new": []}
        for _ in range(args.startup_repeat):
            for v in ("old", "new"):
                shutil.rmtree(caches[v], ignore_errors=True)
                colds[v].append(start_up(repos[v], caches[v]))
                loads[v].append(start_up(repos[v], caches[v]))
        if args.startup_repeat > 0:
            out["startup"] = {"cold compile": {v: statistics.median(x) for v, x in colds.items()},
                              "cache load": {v: statistics.median(x) for v, x in loads.items()}}
        workers = {v: Worker(repos[v], caches[v]) for v in ("old", "new")}
        try:
            for name in args.case or CASES:
                times, wall = {"old": [], "new": []}, {"old": [], "new": []}
                res = {}
                for v in ("old", "new"):  # one untimed run each (tables, first-chunk allocations)
                    res[v] = workers[v].run(name)
                if res["old"]["errors"] != res["new"]["errors"]:
                    raise SystemExit(f"{name}: the two versions disagree: {res}")
                for i in range(args.repeat):  # in turn, which goes first alternating
                    for v in (("old", "new") if i % 2 == 0 else ("new", "old")):
                        t = workers[v].run(name)
                        times[v].append(t["cpu_s"])
                        wall[v].append(t["s"])
                out["cases"][name] = {"n_ui": res["new"]["n_ui"], "errors": res["new"]["errors"],
                                      **{v: statistics.median(t) for v, t in times.items()},
                                      "pair_ratio": statistics.median(n / o for o, n in zip(times["old"], times["new"])),
                                      "min_ratio": min(times["new"]) / min(times["old"]),
                                      "wall_ratio": statistics.median(wall["new"]) / statistics.median(wall["old"]),
                                      "spread_old": [min(times["old"]), max(times["old"])],
                                      "spread_new": [min(times["new"]), max(times["new"])]}
        finally:
            for w in workers.values():
                w.close()
    finally:
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    report(out, args.repeat)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def report(out: dict, repeat: int) -> None:
    print(f"run_chunk: positional ({BEFORE_COMMIT}) vs named records (this checkout); median of {repeat}, "
          "interleaved")
    print("CPU seconds of the worker process per run; new/old: of the medians; per pair: the median ratio of "
          "runs next to each other; best: of the fastest runs; wall: of the wall-clock medians")
    print(f"{'run':<22}{'UI':>9}{'errors':>8}{'old s':>9}{'new s':>9}{'new/old':>9}{'per pair':>9}{'best':>7}"
          f"{'wall':>7}{'old M UI/s':>12}{'new M UI/s':>12}   spread old / new (s)")
    ratios = []
    for name, c in out["cases"].items():
        r = c["new"] / c["old"]
        ratios.append(c["pair_ratio"])
        print(f"{name:<22}{c['n_ui']:>9,}{c['errors']:>8}{c['old']:>9.3f}{c['new']:>9.3f}{r:>9.3f}"
              f"{c['pair_ratio']:>9.3f}{c['min_ratio']:>7.3f}{c['wall_ratio']:>7.3f}"
              f"{c['n_ui'] / c['old'] / 1e6:>12.2f}{c['n_ui'] / c['new'] / 1e6:>12.2f}   "
              f"{c['spread_old'][0]:.3f}-{c['spread_old'][1]:.3f} / {c['spread_new'][0]:.3f}-{c['spread_new'][1]:.3f}")
    for name, v in out["startup"].items():
        print(f"{name:<22}{'':>9}{'':>8}{v['old']:>9.3f}{v['new']:>9.3f}{v['new'] / v['old']:>9.3f}")
    ok = all(0.95 <= r <= 1.05 for r in ratios)
    print(f"target new/old (per pair) 1.00 +/- 0.05 on every run: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[-1]) if sys.argv[-1].isdigit() else None)
    else:
        main()
