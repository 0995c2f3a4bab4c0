"""The system layer beside the public measurements it answers (issue 33): one table.

Each part of the system layer keeps its own comparison in ``benchmarks/validate_<part>.py``
(``decode``, ``collectives``, ``domain``, ``reliability``, ``exports``), whose ``rows()``
gives, per public measurement, its case, its source, the measured figure, ours, the unit, the
ratio ours / measured and the set it belongs to:

* ``train``: a figure a coefficient was fitted on (the fit is in the code and reproducible);
  its ratio shows the fit, not the model's truth;
* ``test``: a figure no coefficient saw: the model's judgement;
* ``check``: an exact cross-check (a system simulator's own computation on our export
  against ours, where ``measured`` is ours and ``ours`` the tool's);
* ``context``: a figure shown for the spread and not judged: another regime, a weak
  source, another reading of a measurement (NCCL with or without NVLS), or the model
  before its calibration.

This script gathers them, prints the table and, per area and set, how many rows fall within
the tolerance (30 % for measurements, 10 % for the exports' checks; context rows are not
judged), the ratios' range and
geometric mean, and the worst row. Nothing here fails a build: the spread is reported as it
is, and the README quotes it.

    python benchmarks/validate_system.py                      # every part
    python benchmarks/validate_system.py --parts decode,collectives --json system.json
    python benchmarks/validate_system.py --figure validation.png
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

PARTS = ("decode", "collectives", "domain", "reliability", "exports")
KEYS = ("area", "case", "source", "measured", "ours", "unit", "ratio", "set")
SETS = ("train", "test", "check", "context")
#: Tolerance on |ours / measured - 1| by set: the issue's 30 % against public measurements,
#: 10 % for a tool's own computation on our export.
TOLERANCE = {"train": 0.30, "test": 0.30, "check": 0.10, "context": None}


def _load(part: str):
    path = HERE / f"validate_{part}.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"validate_{part}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _clean(row: dict, part: str) -> dict:
    missing = [k for k in KEYS if k not in row]
    if missing:
        raise ValueError(f"validate_{part}.rows(): a row lacks {', '.join(missing)}: {row}")
    out = {k: row[k] for k in KEYS}
    out["measured"], out["ours"] = float(out["measured"]), float(out["ours"])
    if not (out["measured"] > 0 and math.isfinite(out["measured"]) and math.isfinite(out["ours"])):
        raise ValueError(f"validate_{part}.rows(): measured must be a positive number and ours finite: {row}")
    out["ratio"] = out["ours"] / out["measured"]  # recomputed: one definition for every part
    if out["set"] not in SETS:
        raise ValueError(f"validate_{part}.rows(): set must be one of {', '.join(SETS)}, got {out['set']!r}")
    out["part"] = part
    return out


def collect(parts=PARTS) -> tuple[list[dict], list[str]]:
    """Every part's rows, and a note for each part that has no comparison module."""
    rows, notes = [], []
    for part in parts:
        mod = _load(part)
        if mod is None or not hasattr(mod, "rows"):
            notes.append(f"no benchmarks/validate_{part}.py with rows(): {part} not compared")
            continue
        rows += [_clean(r, part) for r in mod.rows()]
    return rows, notes


def within(row: dict) -> bool | None:
    """Inside its set's tolerance (None for a context row: not judged)."""
    tol = TOLERANCE[row["set"]]
    return None if tol is None else abs(row["ratio"] - 1.0) <= tol + 1e-12


def summary(rows: list[dict]) -> list[dict]:
    """Per area and set: rows, rows within tolerance, the ratios' range and geometric mean,
    and the row farthest from 1 (in log ratio)."""
    out = []
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["area"], r["set"]), []).append(r)
    for (area, s), rs in groups.items():
        logs = [math.log(r["ratio"]) if r["ratio"] > 0 else -math.inf for r in rs]
        worst = max(rs, key=lambda r: abs(math.log(r["ratio"])) if r["ratio"] > 0 else math.inf)
        judged = TOLERANCE[s] is not None
        out.append({"area": area, "set": s, "rows": len(rs), "within": sum(bool(within(r)) for r in rs) if judged else None,
                    "tolerance": TOLERANCE[s], "ratio_min": min(r["ratio"] for r in rs),
                    "ratio_max": max(r["ratio"] for r in rs),
                    "ratio_geomean": math.exp(sum(logs) / len(logs)) if all(map(math.isfinite, logs)) else 0.0,
                    "worst": f"{worst['case']} ({worst['ratio']:.2f})"})
    return out


def table(rows: list[dict]) -> str:
    head = f"{'area':<12} {'set':<7} {'case':<52} {'measured':>11} {'ours':>11} {'unit':<10} {'ratio':>6}  source"
    lines = [head, "-" * len(head)]
    for r in rows:
        mark = "  *" if within(r) is False else ""
        lines.append(f"{r['area']:<12} {r['set']:<7} {r['case'][:52]:<52} {r['measured']:>11.4g} {r['ours']:>11.4g} "
                     f"{r['unit'][:10]:<10} {r['ratio']:>6.2f}  {r['source']}{mark}")
    return "\n".join(lines)


def summary_table(summ: list[dict]) -> str:
    head = f"{'area':<12} {'set':<7} {'rows':>4} {'within':>7} {'tol':>5} {'min':>6} {'max':>6} {'geomean':>8}  worst"
    lines = [head, "-" * len(head)]
    for s in summ:
        w, tol = ("-", "-") if s["tolerance"] is None else (s["within"], f"{s['tolerance']:.0%}")
        lines.append(f"{s['area']:<12} {s['set']:<7} {s['rows']:>4} {w:>7} {tol:>5} "
                     f"{s['ratio_min']:>6.2f} {s['ratio_max']:>6.2f} {s['ratio_geomean']:>8.2f}  {s['worst']}")
    return "\n".join(lines)


def figure(rows: list[dict], ax=None):
    """Every row's ratio on a log axis, one line per area, the tolerance bands shaded;
    filled markers are held-out measurements, open circles the training set, crosses the
    exports' checks, open diamonds context rows (not judged). Returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.6 + 0.45 * max(1, len({r["area"] for r in rows}))))
    areas = list(dict.fromkeys(r["area"] for r in rows))
    style = {"test": dict(marker="o", facecolors="tab:blue", edgecolors="tab:blue"),
             "train": dict(marker="o", facecolors="none", edgecolors="tab:gray"),
             "check": dict(marker="x", color="tab:green"),
             "context": dict(marker="d", facecolors="none", edgecolors="tab:orange")}
    ax.axvspan(1 / 1.3, 1.3, color="tab:blue", alpha=0.08, lw=0)
    ax.axvspan(0.9, 1.1, color="tab:green", alpha=0.10, lw=0)
    ax.axvline(1.0, color="k", lw=0.8)
    judged = [r["ratio"] for r in rows if r["set"] != "context" and r["ratio"] > 0]
    span = max([1.5] + [max(x, 1 / x) * 1.25 for x in judged])
    if any(r["set"] == "context" for r in rows):
        span = max(span, 4.5)
    lo, hi = 1 / span, span
    for s in SETS:
        pts = [(r["ratio"], areas.index(r["area"])) for r in rows if r["set"] == s and r["ratio"] > 0]
        if pts:
            x, y = zip(*pts)
            xs = [min(max(v, lo * 1.05), hi / 1.05) for v in x]  # context rows past the axis sit at its edge
            ys = [v + {"train": -0.15, "test": 0.0, "check": 0.15, "context": 0.3}[s] for v in y]
            ax.scatter(xs, ys, s=22, label=s, **style[s])
            clipped = [(v, xv, yv) for v, xv, yv in zip(x, xs, ys) if xv != v]
            for i, (v, xv, yv) in enumerate(sorted(clipped)):
                ax.annotate(f"{v:.2g}", (xv, yv), textcoords="offset points", xytext=(-6 if v > 1 else 6, 4 - 8 * i),
                            ha="right" if v > 1 else "left", va="center", fontsize=7, color="tab:orange")
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    grid = (0.5, 0.77, 1.0, 1.3, 2.0) if span < 3 else (0.25, 0.5, 1.0, 2.0, 4.0)
    ticks = [t for t in grid if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(range(len(areas)), areas)
    ax.invert_yaxis()
    ax.set_xlabel("ours / public measurement (shaded: within 30 %, and 10 % for the exports' checks)")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return ax


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--json", help="write rows and summary here")
    ap.add_argument("--figure", help="write the ratio figure here (PNG)")
    a = ap.parse_args(argv)
    parts = [p.strip() for p in a.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part {bad[0]!r}; one of {', '.join(PARTS)}")
    rows, notes = collect(parts)
    print(table(rows))
    print()
    summ = summary(rows)
    print(summary_table(summ))
    for n in notes:
        print(n)
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "summary": summ, "notes": notes}, indent=1))
    if a.figure:
        import matplotlib

        matplotlib.use("Agg")
        ax = figure(rows)
        ax.figure.tight_layout()
        ax.figure.savefig(a.figure, dpi=130)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
