"""Every notebook in notebooks/ runs top to bottom (at reduced sizes: LINKMODEL_QUICK=1).

The code cells run in order in one namespace, in the notebooks folder, with matplotlib's
Agg backend, as a kernel would run them; any exception fails the test and names the cell.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_tour_has_its_five_notebooks():
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setenv("LINKMODEL_QUICK", "1")
    monkeypatch.chdir(path.parent)
    nb = json.loads(path.read_text())
    ns: dict = {"__name__": "__main__"}
    figures = 0
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        try:
            exec(compile(src, f"{path.name} cell {i}", "exec"), ns)  # noqa: S102 - the notebook's own code
        except Exception as e:  # name the cell
            raise AssertionError(f"{path.name}, cell {i} failed: {type(e).__name__}: {e}") from e
        figures += len(plt.get_fignums())
        plt.close("all")
    assert figures >= 1, f"{path.name} draws no figure"
    assert os.environ["LINKMODEL_QUICK"] == "1"


@pytest.mark.parametrize("stem, call", [("04_link_budget", "plot_stacks("), ("05_scale_up_rack", "_latency_figure(r)")])
def test_latency_figures_are_the_demos(stem, call):
    """Notebooks 04 and 05 draw their latency stacks with the demo's renderer (values on the
    bars, the command's names, the path in the title), not bars of their own."""
    nb = json.loads(next(p for p in NOTEBOOKS if p.stem == stem).read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any(call in src for src in code)
    assert not any("barh(" in src for src in code)
