"""Execute the notebooks in ``notebooks/`` in place with nbclient, so their stored outputs
are what the code gives today (``pip install -e '.[dev]'``).

    python tools/run_notebooks.py                  # every notebooks/0*.ipynb, full sizes
    python tools/run_notebooks.py notebooks/02_pam4_eye.ipynb --timeout 900
    python tools/run_notebooks.py --quick          # LINKMODEL_QUICK=1: the reduced sizes

Each notebook runs top to bottom in a fresh kernel started in the notebooks folder, with a
timeout per cell. A notebook that fails is left as it was (its error is printed) and the
others still run; the exit status is 1 if any failed. Cell timings are not recorded, so a
rerun changes only what the code prints and draws.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"


def run(path: Path, timeout: int = 600, quick: bool = False, kernel: str = "python3") -> float:
    """Execute one notebook in place; the seconds it took (raises on a failing cell)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb = nbformat.from_dict(nbformat.validator.normalize(nb)[1])  # cell ids where missing
    env = dict(os.environ)
    if quick:
        os.environ["LINKMODEL_QUICK"] = "1"  # the kernel inherits this process's environment
    else:
        os.environ.pop("LINKMODEL_QUICK", None)
    t = time.perf_counter()
    try:
        NotebookClient(nb, timeout=timeout, kernel_name=kernel, record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env)
    nbformat.write(nb, path)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/0*.ipynb)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell (default 600)")
    ap.add_argument("--quick", action="store_true", help="run at the reduced sizes (LINKMODEL_QUICK=1)")
    ap.add_argument("--kernel", default="python3", help="Jupyter kernel name (default python3)")
    args = ap.parse_args(argv)
    paths = args.paths or sorted(NOTEBOOKS.glob("0*.ipynb"))
    failed = []
    for p in paths:
        print(f"{p.name}: running", flush=True)
        try:
            s = run(p.resolve(), args.timeout, args.quick, args.kernel)
        except Exception as e:  # report and go on with the others
            failed.append(p.name)
            msg = str(e).strip().splitlines()
            print(f"{p.name}: FAILED ({type(e).__name__}), left unchanged:\n  " + "\n  ".join(msg[-12:]), flush=True)
        else:
            print(f"{p.name}: ok, {s:.0f} s", flush=True)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
