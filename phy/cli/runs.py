"""``linkmodel link`` and ``linkmodel sweep``: one link from TOML, and a sweep into its
locked, crash-safe store."""

from __future__ import annotations

import json
import sys
from pathlib import Path


# ----------------------------------------------------------------------------- link, sweep
def _cmd_link(args) -> int:
    from .. import sweep as sw

    spec = sw.load_spec(args.spec, sweep=False)
    p = sw.points(spec)[0]
    from ..link import evaluate_link

    r = evaluate_link(sw.link_spec(p))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print(r.summary())
    return 0 if r.passes else 1


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
