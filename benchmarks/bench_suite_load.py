"""The test suite's wall time on this machine with a parallel load beside it (issue 31).

The suite must pass, and in about 20 minutes, on a busy 2-core machine: no test asserts a
wall-clock time, so a load can only make it slower, never red. This runs the README's test
command (``python -m pytest -q``, or the pytest arguments given after ``--``) with
``--load N`` busy processes beside it (each a pure-Python loop, one core's worth of
demand), on a private cold Numba cache (``XDG_CACHE_HOME`` in a temporary folder: CI's
state) unless ``--warm``, and prints the wall time, the suite's CPU time (its children
included), pytest's closing line and the slowest tests.

    python benchmarks/bench_suite_load.py                 # one busy process beside the suite
    python benchmarks/bench_suite_load.py --load 2 --json suite.json
    python benchmarks/bench_suite_load.py --load 0 -- tests/test_fec_codec.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOG = "while True:\n    pass\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=1, help="busy processes beside the suite (default 1)")
    ap.add_argument("--warm", action="store_true", help="use the user's Numba cache instead of a cold one")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest (default -q)")
    a = ap.parse_args(argv)
    if a.load < 0:
        ap.error("--load must be 0 or more")
    env = dict(os.environ, MPLBACKEND="Agg")
    with tempfile.TemporaryDirectory(prefix="linkmodel-suite-") as tmp:
        if not a.warm:
            env["XDG_CACHE_HOME"] = tmp
        hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(a.load)]
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "pytest", *(a.pytest_args or ["-q"]), "--durations=15"],
                                  cwd=REPO, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    closing = lines[-1] if lines else ""
    slowest = [ln for ln in lines if re.match(r"^\s*\d+\.\d+s (call|setup|teardown)", ln)]
    print(f"load: {a.load} busy process(es) on {os.cpu_count()} cores; Numba cache {'warm' if a.warm else 'cold'}")
    print(f"wall {wall:.0f} s ({wall / 60:.1f} min), suite CPU {cpu:.0f} s, exit {proc.returncode}")
    print(f"pytest: {closing}")
    print("slowest:\n" + "\n".join(slowest))
    if proc.returncode:
        print(proc.stdout[-4000:])
    if a.json:
        Path(a.json).write_text(json.dumps({"load": a.load, "cores": os.cpu_count(), "warm": a.warm, "wall_s": wall,
                                            "cpu_s": cpu, "exit": proc.returncode, "closing": closing,
                                            "slowest": slowest}, indent=1))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
