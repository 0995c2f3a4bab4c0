"""The project's import graph, here and at a base revision side by side (issue 34).

For ``channels``, ``fec`` and ``phy``: the modules, the import edges (module level and
inside functions; ``if TYPE_CHECKING:`` blocks skipped), the cycles (strongly connected
groups of modules, one concrete path each), and the time a fresh interpreter takes to
import the package (best of ``--repeat``, the two trees in turn). ``--base REV`` (default ``main``) extracts that
revision's packages with ``git archive`` and measures them in the same run, so the two
columns are comparable. The graph is the one ``tests/test_import_cycles.py`` walks.

    python benchmarks/bench_imports.py                 # this tree against main
    python benchmarks/bench_imports.py --base HEAD~6 --repeat 5
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_cycles", ROOT / "tests" / "test_import_cycles.py")
walk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(walk)


def _extract(rev: str, into: Path) -> Path:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *walk.PACKAGES], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def _import_s(roots: list[Path], pkg: str, repeat: int) -> list[float]:
    """Best fresh-interpreter import time of ``pkg`` under each root, the roots taken in
    turn within each repeat (so load on the machine falls on both alike), after one
    untimed import each (bytecode written, Numba's cache filled)."""
    best = [float("inf")] * len(roots)
    for k in range(repeat + 1):
        for i, root in enumerate(roots):
            env = dict(os.environ, PYTHONPATH=str(root))
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", f"import {pkg}"], check=True, env=env, cwd=root)
            if k:
                best[i] = min(best[i], time.perf_counter() - t)
    return best


def _summary(root: Path) -> dict:
    graph = walk.import_graph(root)
    cycles = walk.find_cycles(graph)
    out = {}
    for pkg in walk.PACKAGES:
        mods = [m for m in graph if m.split(".")[0] == pkg]
        cyc = [c for c in cycles if c[0].split(".")[0] == pkg]
        out[pkg] = {"modules": len(mods), "edges": sum(len(graph[m]) for m in mods), "cycles": len(cyc),
                    "in_cycles": sum(len(c) for c in cyc),
                    "paths": [" -> ".join(walk._one_cycle(graph, c)) for c in cyc]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="main", help="git revision to compare with (default: main)")
    ap.add_argument("--repeat", type=int, default=3, help="fresh-interpreter imports per package (best kept)")
    a = ap.parse_args(argv)
    here = _summary(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        old = _extract(a.base, Path(tmp))
        base = _summary(old)
        for pkg in walk.PACKAGES:
            base[pkg]["import_s"], here[pkg]["import_s"] = _import_s([old, ROOT], pkg, a.repeat)
    print(f"import graph: this tree against {a.base}")
    print(f"{'package':<9}{'modules':>9}{'edges':>13}{'cycles':>10}{'in cycles':>12}{'import s':>17}{'ratio':>7}")
    for pkg in walk.PACKAGES:
        h, b = here[pkg], base[pkg]
        print(f"{pkg:<9}{b['modules']:>4} {h['modules']:>4}{b['edges']:>6} {h['edges']:>6}{b['cycles']:>5} "
              f"{h['cycles']:>4}{b['in_cycles']:>6} {h['in_cycles']:>5}{b['import_s']:>8.3f} {h['import_s']:>8.3f}"
              f"{h['import_s'] / b['import_s']:>7.2f}")
    print("(each pair: base, this tree; ratio: this tree's import time over the base's)")
    for name, s in ((a.base, base), ("this tree", here)):
        paths = [p for pkg in walk.PACKAGES for p in s[pkg]["paths"]]
        print(f"cycles at {name}: {len(paths) or 'none'}")
        for p in paths:
            print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
