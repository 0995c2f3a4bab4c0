"""The demo's first run and its warm run, side by side in one run (issue 23).

Each case runs ``linkmodel demo`` as a user would, in a subprocess of this interpreter,
with the plots, and times it from the command's start to its exit (imports included):

- **cold, one process**: an empty Numba cache, ``--no-warmup``: every kernel compiles
  where the run first calls it, one after the other (Numba compiles one function at a time
  per process), which is how the demo ran before the warm-up;
- **cold, warm-up first**: an empty Numba cache, the default: the kernel groups of
  :mod:`phy.warmup` compile first, one group per core, and the roll-up's cable lengths are
  evaluated on every core;
- **warm**: the cache the previous case left; every kernel is loaded.

The cache is a private folder (``NUMBA_CACHE_DIR``), emptied before each cold case, so the
installed package's own cache is neither read nor disturbed. ``--before DIR`` adds two
cases, cold (its default run: with the warm-up when that code has one, issue 23 on) and
warm, for the checkout in ``DIR`` (its sources first on ``sys.path``), for a before/after
in one run.

    python benchmarks/bench_first_run.py                      # about 3 minutes on 2 cores
    python benchmarks/bench_first_run.py --before /tmp/before23 --json first_run.json
    python benchmarks/bench_first_run.py --before /tmp/before35 --profile 2   # + the compile table

``--profile N`` adds, for the code before and now alternately (N times each, medians), the
demo without plots in one process on one core from an empty cache
(``benchmarks/_compile_profile.py``): its CPU time, and each kernel's compiles and the CPU
seconds in them (``self``: without the kernels it calls, which Numba compiles separately
and then again into each caller), with the signatures each kernel holds at the end.

Ratios are against the first row. The machine should be quiet: the cold cases are mostly
compilation, which any other load on the cores stretches.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(args: list[str], cache: Path, src: Path | None) -> tuple[float, float, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    if src is not None:
        env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
    out = Path(tempfile.mkdtemp(prefix="demo-out-"))
    cmd = [sys.executable, "-c", "import sys; from phy.cli import main; sys.exit(main(sys.argv[1:]))",
           "demo", "--out", str(out), *args]
    t = time.perf_counter()
    # run from the output folder: a "-c" program puts its working folder first on sys.path
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=out)
    wall = time.perf_counter() - t
    shutil.rmtree(out, ignore_errors=True)
    if r.returncode != 0:
        raise SystemExit(f"demo failed ({r.returncode}):\n{r.stderr[-3000:]}")
    said = [ln for ln in r.stdout.splitlines() if ln.startswith("time")]
    return wall, os.times().children_user, said[-1] if said else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="a checkout of the code before, run the same way")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="add the per-kernel compile table, N cold one-core runs each of before and now")
    ap.add_argument("--skip-demo", action="store_true", help="only the compile table")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each demo case (medians)")
    a = ap.parse_args(argv)
    if a.skip_demo:
        prof = _profiles(a.before, a.profile)
        if a.json:
            a.json.write_text(json.dumps({"profile": prof}, indent=2))
        return 0
    rows, load0 = [], os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as tmp:
        caches = {"before": Path(tmp) / "before", "now": Path(tmp) / "now"}
        # before and now alternate, each with its own cache, so that a load that comes and goes
        # falls on both; a warm case reads the cache its side's cold case left
        cases = []
        if a.before is not None:
            # the code before issue 23 had no warm-up: its default run is then "one process"
            cases += [("before: cold, default run", [], True, "before")]
        cases += [("now: cold, warm-up first (default)", [], True, "now")]
        if a.before is not None:
            cases += [("before: warm", [], False, "before")]
        cases += [("now: warm", [], False, "now"),
                  ("now: cold, one process (--no-warmup)", ["--no-warmup"], True, "now")]
        for rep in range(a.repeat):
            for name, args, cold, side in cases:
                if cold:
                    shutil.rmtree(caches[side], ignore_errors=True)
                    caches[side].mkdir()
                u0 = os.times().children_user
                wall, u1, said = _run(args, caches[side], a.before if side == "before" else None)
                rows.append({"case": name, "repeat": rep, "wall_s": wall, "cpu_s": u1 - u0, "demo_says": said})
                print(f"{name:<40} {wall:6.1f} s wall, {u1 - u0:6.1f} s CPU   {said}", flush=True)
    import statistics

    names = list(dict.fromkeys(r["case"] for r in rows))
    med = {n: statistics.median(r["cpu_s"] for r in rows if r["case"] == n) for n in names}
    print(f"\ncase (median of {a.repeat})                     wall (s)   CPU (s)   CPU / its side's warm")
    for n in names:
        warm = med["before: warm" if n.startswith("before") else "now: warm"]
        wall = statistics.median(r["wall_s"] for r in rows if r["case"] == n)
        print(f"{n:<40} {wall:9.1f} {med[n]:9.1f}   {med[n] / warm:8.2f}")
    print(f"\n{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores, "
          f"load average {load0:.2f} before the run, {os.getloadavg()[0]:.2f} after")
    prof = _profiles(a.before, a.profile) if a.profile else None
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "profile": prof}, indent=2))
    return 0


def _profile_once(src: Path | None) -> dict:
    """One cold demo (no plots, one process, one core) under ``_compile_profile.py``."""
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="numba-prof-") as cache, tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        env["PYTHONPATH"] = str(src if src is not None else here.parent) + os.pathsep + env.get("PYTHONPATH", "")
        out = Path(tmp) / "p.json"
        cpu0 = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        pin = (lambda: os.sched_setaffinity(0, {max(cpu0)})) if cpu0 else None
        r = subprocess.run([sys.executable, str(here / "_compile_profile.py"), str(out), "demo", "--no-warmup",
                            "--no-plots"], env=env, capture_output=True, text=True, cwd=tmp, preexec_fn=pin)
        if r.returncode != 0:
            raise SystemExit(f"profile failed ({r.returncode}):\n{r.stderr[-3000:]}")
        return json.loads(out.read_text())


def _profiles(before: Path | None, n: int) -> dict:
    """The compile table: ``n`` cold runs each of before (if given) and now, alternately;
    per kernel the median self CPU seconds and its compiles and signatures."""
    import statistics

    runs: dict = {"before": [], "now": []}
    for _ in range(n):
        for side, src in (("before", before), ("now", None)):
            if side == "before" and before is None:
                continue
            runs[side].append(_profile_once(src))
            print(f"profile {side}: {runs[side][-1]['cpu_s']:.1f} s CPU", flush=True)
    sides = [s for s in runs if runs[s]]
    table: dict = {}
    for side in sides:
        keys = set().union(*(r["kernels"] for r in runs[side]))
        for k in keys:
            ks = [r["kernels"].get(k, {}) for r in runs[side]]
            table.setdefault(k, {})[side] = {
                "self_cpu_s": statistics.median(x.get("self_cpu_s", 0.0) for x in ks),
                "compiles": max(x.get("compiles", 0) for x in ks),
                "signatures": max(len(x.get("signatures", [])) for x in ks)}
    total = {s: statistics.median(r["cpu_s"] for r in runs[s]) for s in sides}
    comp = {s: statistics.median(sum(v["self_cpu_s"] for v in r["kernels"].values()) for r in runs[s])
            for s in sides}
    print("\ncold demo, no plots, one process on one core (median of", n, "each): CPU s, of which compiling")
    for s in sides:
        print(f"  {s:<7} {total[s]:7.2f} s CPU, {comp[s]:6.2f} s in compiles")
    if len(sides) == 2:
        print(f"  now / before: {total['now'] / total['before']:.3f} (all), {comp['now'] / comp['before']:.3f} "
              "(compiles)")
    print("\nkernel (self CPU s in its compiles; compiles / signatures held)   " + "   ".join(sides))
    for k, v in sorted(table.items(), key=lambda kv: -max(x["self_cpu_s"] for x in kv[1].values())):
        if max(x["self_cpu_s"] for x in v.values()) < 0.05 and all(x["compiles"] == 0 for x in v.values()):
            continue
        cells = "   ".join(f"{v[s]['self_cpu_s']:6.2f} {v[s]['compiles']:2d}/{v[s]['signatures']}" if s in v
                           else "     -     " for s in sides)
        print(f"{k:<62} {cells}")
    return {"cpu_s": total, "compile_cpu_s": comp, "kernels": table}


if __name__ == "__main__":
    sys.exit(main())
