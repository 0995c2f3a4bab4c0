"""``linkmodel link`` and ``linkmodel sweep``: one link from TOML, and a sweep into its
locked, crash-safe store (named after the spec file: ``reach.toml`` -> ``reach.jsonl``):
its plan without running (``--dry-run``), its progress naming the slowest point, and
its store as CSV or Parquet (``--export``, ``--no-run``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: What ``link.equalisation = "preset"`` is (:meth:`phy.Serdes.preset`), as printed.
PRESET_WORDS = ("preset: no Tx FFE, a 0.58-baud Butterworth front end, a 16-tap MMSE Rx FFE (5 pre) "
                "and one DFE tap (the 802.3dj KR receiver's structure)")


# ----------------------------------------------------------------------------- link
def link_text(r, equalisation: str | None = None) -> str:
    """A :class:`phy.LinkReport` for a terminal: :meth:`phy.LinkReport.summary`'s renderer
    (:func:`phy.link._text.report_text`), with the preset named when ``equalisation`` (the
    file's choice, "com" or "preset") is "preset"."""
    from ..link._text import report_text

    return report_text(r.to_dict(), PRESET_WORDS if equalisation == "preset" else None)


def _cmd_link(args) -> int:
    """One link from its file (:func:`phy.config.load_link`): no sweep machinery."""
    from ..config import link_spec_from, load_link
    from ..config.link import value
    from ..link import evaluate_link

    p = load_link(args.spec)
    r = evaluate_link(link_spec_from(p))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print(link_text(r, value(p, "link.equalisation")))
    return 0 if r.passes else 1


# ----------------------------------------------------------------------------- sweep
def plan_text(plan, spec_path: str = "") -> str:
    """A :class:`phy.sweep.plan.SweepPlan` for a terminal: the counts, the groups, the
    first points and the estimate with how it was made."""
    from ..sweep.plan import _dur, params_words

    d = plan.to_dict()
    where = f" ({spec_path})" if spec_path else ""
    lines = [f"sweep {d['name']}{where}: {d['total']:,} points; dry run: nothing run, nothing written"]
    parts = [f"[grid] {s['key']} ({s['values']} values)" for s in d["swept"] if s["table"] == "grid"]
    zipped = [s for s in d["swept"] if s["table"] == "zip"]
    if zipped:
        parts.append(f"[zip] {zipped[0]['values']} rows of " + ", ".join(s["key"] for s in zipped))
    lines.append("  swept      " + (" x ".join(parts) or "nothing: one point"))
    if d["fixed"]:
        lines.append("  fixed      " + params_words(d["fixed"]))
    per = d["total"] / d["media"] if d["media"] else 0
    each = f"{per:,.0f}" if per >= 100 else f"{per:.3g}"
    lines.append(f"  groups     {d['media']:,} media (channel or optics, rate, modulation, equalisation: each built "
                 f"and equalised once per worker), {each} points each on average; {d['chunks']:,} chunks of up to "
                 f"{d['chunk']} points of one medium")
    lines.append(f"  run on     {d['executor']}, {d['workers']} worker{'s' if d['workers'] != 1 else ''}")
    lines.append(f"  store      {d['store']}: {d['store_note']}; {d['to_run']:,} points to run")
    if d["listed"]:
        more = f"the first {len(d['listed'])} of {d['total']:,}; --list N for more" if d["not_listed"] else "all"
        lines.append(f"  points     ({more})")
        width = len(str(d["listed"][-1]["point"]))
        for row in d["listed"]:
            lines.append(f"    {row['point']:>{width}}  {params_words(row['params'])}")
        if d["not_listed"]:
            lines.append(f"    ... and {d['not_listed']:,} more")
    e = d["estimate"]
    if e is None:
        lines.append("  estimate   none" + (" (nothing to run)" if not d["to_run"] else ""))
    else:
        lines.append(f"  estimate   about {_dur(e['seconds'])}, {e['how']}")
        lines += [f"             ({c})" for c in e["caveats"]]
    return "\n".join(lines)


def _store_path(args) -> str:
    """The run's store: ``--store``, else the spec's name with ``.jsonl``; never the spec
    itself (``reach.jsonl`` as a spec would append into itself), nor the export."""
    from ..errors import ConfigError
    from ..config.files import show_path as _show
    from ..sweep.store import _same_file, check_store

    store = args.store or str(Path(args.spec).with_suffix(".jsonl"))
    if _same_file(store, args.spec):
        how = "--store names the spec" if args.store else "the default store (the spec's name with .jsonl) is the spec"
        raise ConfigError(f"store {_show(store)}: {how} itself; give the sweep its own store with --store FILE.jsonl")
    if args.export and _same_file(args.export, args.spec):
        raise ConfigError(f"export {_show(args.export)}: is the spec itself; export to another file")
    if args.export and _same_file(args.export, store):
        raise ConfigError(f"export {_show(args.export)}: is the store itself; export to another file")
    if not args.no_run:
        check_store(store)  # a device, a folder, a file that is not a store: refused before any work
    return store


def _one_line_warnings() -> None:
    """Show a store's warnings (:class:`phy.sweep.StoreWarning`) as one line each on
    stderr, ``linkmodel: warning: ...``, every time; other warnings as Python shows them.
    Call inside ``warnings.catch_warnings()``."""
    import warnings

    from ..sweep.records import StoreWarning

    shown = warnings.showwarning

    def show(message, category, *a, **k):
        if issubclass(category, StoreWarning):
            print(f"linkmodel: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, *a, **k)

    warnings.simplefilter("always", StoreWarning)
    warnings.showwarning = show


def _cmd_sweep(args) -> int:
    import warnings

    with warnings.catch_warnings():
        _one_line_warnings()
        return _sweep(args)


def _sweep(args) -> int:
    from .. import sweep as sw
    from ..errors import ConfigError
    from ..config.schema import scheduler_address as _scheduler

    if args.dry_run and (args.export or args.no_run):
        raise ConfigError("--dry-run runs and writes nothing: leave out --export and --no-run (or --dry-run)")
    if args.no_run and not args.export:
        raise ConfigError("--no-run runs nothing: give --export FILE to write the store as a table")
    if args.list is not None and not 0 <= args.list <= sw.plan.MAX_LISTED:
        raise ConfigError(f"--list must be a count of points from 0 to {sw.plan.MAX_LISTED:,} (the most a dry run "
                          f"lists), got {args.list:,}")
    if args.scheduler is not None and _scheduler(args.scheduler):
        raise ConfigError(f"--scheduler must be {_scheduler(args.scheduler)}, got {args.scheduler!r}")
    if args.export:
        sw.export_format(args.export)  # a bad suffix, a missing package or folder, before any work
    spec = sw.load_spec(args.spec)
    store = _store_path(args)
    if args.dry_run:
        plan = sw.plan_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                             point_timeout_s=args.point_timeout_s, retry_failed=args.retry_failed,
                             listed=sw.plan.DEFAULT_LISTED if args.list is None else args.list)
        print(json.dumps(plan.to_dict(), indent=2) if args.json else plan_text(plan, args.spec))
        return 0
    if args.no_run:
        n = sw.export(store, args.export)
        print(json.dumps({"store": store, "export": args.export, "rows": n}) if args.json
              else f"{n} rows of {store} -> {args.export}")
        return 0
    n = sw.count_points(spec)
    print(f"sweep {spec.name}: {n:,} points -> {store}", file=sys.stderr)
    r = sw.run_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                     point_timeout_s=args.point_timeout_s, progress=not args.no_progress and not args.json,
                     retry_failed=args.retry_failed)
    rows = sw.export(store, args.export) if args.export else None
    if args.json:
        d = r.to_dict()
        if args.export:
            d["export"] = {"path": args.export, "rows": rows}
        print(json.dumps(d, indent=2))
        return 0
    late = f" ({r.timed_out} past the time limit)" if r.timed_out else ""
    print(f"{r.total} points: {r.skipped} already done, {r.ok} ran, {r.failed} failed{late}, "
          f"{r.seconds:.1f} s ({r.points_per_second:.2f} points/s); store {r.store}")
    if r.slowest:
        print("slowest " + sw.plan.slowest_words(r.slowest))
    if args.export:
        print(f"exported {rows} rows of {store} -> {args.export}")
    for n in r.notes:
        print(f"note: {n}")
    return 0
