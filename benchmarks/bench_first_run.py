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
installed package's own cache is neither read nor disturbed. ``--before DIR`` adds the
same three cases (cold without a warm-up, which that code has not, and warm) for the
checkout in ``DIR`` (its sources first on ``sys.path``), for a before/after in one run.

    python benchmarks/bench_first_run.py                      # about 3 minutes on 2 cores
    python benchmarks/bench_first_run.py --before /tmp/before23 --json first_run.json

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
    a = ap.parse_args(argv)
    rows, load0 = [], os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as tmp:
        cache = Path(tmp)
        cases = []
        if a.before is not None:
            cases += [("before: cold, one process", [], True, a.before), ("before: warm", [], False, a.before)]
        cases += [("now: cold, one process (--no-warmup)", ["--no-warmup"], True, None),
                  ("now: cold, warm-up first", [], True, None), ("now: warm", [], False, None)]
        for name, args, cold, src in cases:
            if cold:
                shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir()
            u0 = os.times().children_user
            wall, u1, said = _run(args, cache, src)
            rows.append({"case": name, "wall_s": wall, "cpu_s": u1 - u0, "demo_says": said})
            print(f"{name:<40} {wall:6.1f} s wall, {u1 - u0:6.1f} s CPU   {said}", flush=True)
    base = rows[0]["wall_s"]
    print("\ncase                                       wall (s)   CPU (s)   wall / first row")
    for r in rows:
        print(f"{r['case']:<40} {r['wall_s']:9.1f} {r['cpu_s']:9.1f}   {r['wall_s'] / base:8.2f}")
    print(f"\n{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores, "
          f"load average {load0:.2f} before the run, {os.getloadavg()[0]:.2f} after")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
