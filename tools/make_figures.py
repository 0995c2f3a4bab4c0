"""Regenerate the README's figures (``docs/tour_*.png``) from the notebooks that draw them.

Each figure is the image output of one notebook cell, found by its tag
(``readme:tour_eye`` in ``02_pam4_eye``, ``readme:tour_decode`` and ``readme:validate_system`` in
``05_scale_up_rack``),
so the README shows exactly what the notebook's code draws.

    python tools/make_figures.py          # from the notebooks' stored outputs
    python tools/make_figures.py --run    # execute those notebooks first (tools/run_notebooks.py)
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURES = {  # README figure: (notebook, tag of the cell that draws it)
    "tour_eye.png": ("02_pam4_eye.ipynb", "readme:tour_eye"),
    "tour_decode.png": ("05_scale_up_rack.ipynb", "readme:tour_decode"),
    "validate_system.png": ("05_scale_up_rack.ipynb", "readme:validate_system"),
}


def extract(notebook: Path, tag: str) -> bytes:
    """The PNG the tagged cell of ``notebook`` displays (its last image)."""
    nb = json.loads(notebook.read_text())
    cells = [c for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise SystemExit(f"{notebook.name}: expected one cell tagged {tag!r}, found {len(cells)}")
    pngs = [o["data"]["image/png"] for o in cells[0].get("outputs", []) if "image/png" in o.get("data", {})]
    if not pngs:
        raise SystemExit(f"{notebook.name}: the cell tagged {tag!r} has no image output: run it first (--run)")
    data = pngs[-1]
    return base64.b64decode("".join(data) if isinstance(data, list) else data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help="execute the notebooks first (full sizes)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds allowed per cell with --run")
    args = ap.parse_args(argv)
    if args.run:
        sys.path.insert(0, str(REPO / "tools"))
        from run_notebooks import run

        for nb in sorted({n for n, _ in FIGURES.values()}):
            print(f"{nb}: {run(REPO / 'notebooks' / nb, args.timeout):.0f} s", flush=True)
    for name, (nb, tag) in FIGURES.items():
        out = REPO / "docs" / name
        out.write_bytes(extract(REPO / "notebooks" / nb, tag))
        print(f"{out.relative_to(REPO)} <- {nb} [{tag}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
