"""A long-lived benchmark worker: a Python process running a benchmark script's ``--worker
CPU`` mode on one checkout (``PYTHONPATH`` set to it), fed one JSON request per line on its
stdin and answering one JSON line each (used by bench_kernel_args.py and
bench_timesim_profile.py, so the code before and after can take turns in one run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


class Worker:
    """The worker of ``script`` on the checkout ``repo``, pinned to ``cpu`` by the script;
    ``cache`` its private Numba cache (``NUMBA_CACHE_DIR``), if any. Its first line names
    where it imported ``phy`` from, which must be ``repo``."""

    def __init__(self, script: str, repo: Path, cpu: int, cache: str | None = None):
        env = dict(os.environ, PYTHONPATH=str(repo))
        if cache is not None:
            env["NUMBA_CACHE_DIR"] = cache
        self.p = subprocess.Popen([sys.executable, str(Path(script).resolve()), "--worker", str(cpu)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
        self.phy = json.loads(self.p.stdout.readline())["phy"]
        if not self.phy.startswith(str(repo)):
            raise SystemExit(f"the worker on {repo} imported {self.phy}")

    def run(self, name: str, n_ui: int | None = None) -> dict:
        """Run case ``name`` (over ``n_ui`` UI when given); the worker's answer."""
        req = {"case": name} if n_ui is None else {"case": name, "n_ui": n_ui}
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit(f"a worker stopped (phy at {self.phy})")
        return json.loads(line)

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()
