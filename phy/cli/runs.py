"""``linkmodel link`` and ``linkmodel sweep``: one link from TOML, and a sweep into its
locked, crash-safe store (named after the spec file: ``reach.toml`` -> ``reach.jsonl``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: What ``link.equalization = "preset"`` is (:func:`phy.sweep.point._preset_serdes`), as printed.
PRESET_WORDS = ("preset: no Tx FFE, a 0.58-baud Butterworth front end, a 16-tap MMSE Rx FFE (5 pre) "
                "and one DFE tap (the 802.3dj KR receiver's structure)")


# ----------------------------------------------------------------------------- link
def link_text(r, equalization: str | None = None) -> str:
    """A :class:`phy.LinkReport` for a terminal: :meth:`phy.LinkReport.summary`'s renderer
    (:func:`phy.link._text.report_text`), with the preset named when ``equalization`` (the
    spec's choice, "com" or "preset") is "preset"."""
    from ..link._text import report_text

    return report_text(r.to_dict(), PRESET_WORDS if equalization == "preset" else None)


def _cmd_link(args) -> int:
    from .. import sweep as sw

    spec = sw.load_spec(args.spec, sweep=False)
    p = sw.points(spec)[0]
    from ..link import evaluate_link

    r = evaluate_link(sw.link_spec(p))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print(link_text(r, p.get("link.equalization", sw.SCHEMA["link.equalization"][1])))
    return 0 if r.passes else 1


# ----------------------------------------------------------------------------- sweep
def _cmd_sweep(args) -> int:
    from .. import sweep as sw

    spec = sw.load_spec(args.spec)
    store = args.store or str(Path(args.spec).with_suffix(".jsonl"))
    n = len(sw.points(spec))
    print(f"sweep {spec.name}: {n} points -> {store}", file=sys.stderr)
    r = sw.run_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                     point_timeout_s=args.point_timeout_s, progress=not args.no_progress,
                     retry_failed=args.retry_failed)
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    late = f" ({r.timed_out} past the time limit)" if r.timed_out else ""
    print(f"{r.total} points: {r.skipped} already done, {r.ok} ran, {r.failed} failed{late}, "
          f"{r.seconds:.1f} s ({r.points_per_second:.2f} points/s); store {r.store}")
    for n in r.notes:
        print(f"note: {n}")
    return 0
