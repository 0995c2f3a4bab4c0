"""A sweep's plan before it runs (``linkmodel sweep SPEC --dry-run``): how many points,
how they group, the first of them, what the store already holds, and a time estimate
made from points measured in this process. Nothing is written, and nothing is enumerated
past a bound: the counts are products of the grid's list lengths and the zip's rows."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field

from ..config.schema import SWEEP_SCHEMA
from ..errors import ConfigError
from .spec import (
    MEDIUM_KEYS,
    SweepSpec,
    _zip_rows,
    count_points,
    iter_points,
    medium_key,
    point_at,
    point_key,
)
from .records import read_records
from .store import check_store

#: Points listed by default.
DEFAULT_LISTED = 20
#: The most points a plan lists (``--list N``): a listing is for reading, and 10,000
#: lines take well under a second; more is refused before any work.
MAX_LISTED = 10_000
#: A sweep up to this many points is enumerated to match its points with the store's
#: records (a point's key costs about 50 us: 50,000 of them about 2.5 s); past it the
#: store is not matched and the plan says so.
MATCH_BOUND = 50_000
#: Points tried as the representative pairs of a measurement (see :func:`_samples`).
_SCAN_BOUND = 256


@dataclass(frozen=True)
class Estimate:
    """A run's time (s), estimated from points measured in this process.

    ``measured`` lists what was run: ``[{"point", "what", "seconds", "status"}]``
    (``point`` 1-based, as listed; None for the workers' start). ``startup_s``: the
    workers' start and end (measured: as many fresh interpreters as the run starts, up to
    the cores, importing the package together) and the first point's extra time (Numba
    kernels loading), which each worker pays once;
    ``medium_s``: a medium's first point on a warm worker (its channel built and
    equalised); ``point_s``: each further point on a medium already built; ``keys_s``:
    the run's keying of every point of the sweep before the first one runs (measured on
    200 points). ``builds``: media a run builds (a medium split over workers is built by
    each). ``workers``: the workers a run starts (one per chunk at most); ``parallel``:
    points running at once (no more than the cores). ``seconds``: ``keys_s + startup_s
    * ceil(workers / cores) + (builds * medium_s + (points - builds) * point_s) /
    parallel``. ``how``: the measurement and the model in words; ``caveats``: what it
    leaves out.
    """

    measured: list
    startup_s: float
    medium_s: float
    point_s: float
    keys_s: float
    points: int
    builds: int
    workers: int
    parallel: int
    seconds: float
    how: str
    caveats: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"measured": [dict(m) for m in self.measured], "startup_s": self.startup_s, "medium_s": self.medium_s,
                "point_s": self.point_s, "keys_s": self.keys_s, "points": self.points, "builds": self.builds,
                "workers": self.workers, "parallel": self.parallel, "seconds": self.seconds, "how": self.how,
                "caveats": list(self.caveats)}


@dataclass(frozen=True)
class SweepPlan:
    """What ``run_sweep`` would do (:func:`plan_sweep`).

    ``total`` points; ``swept``: each swept key with its table (``"grid"`` or ``"zip"``)
    and its number of values; ``fixed``: the file's fixed parameters; ``media``: distinct
    media (channel or optics, rate, modulation, equalisation: :func:`medium_key`), each
    built once per worker; ``chunks`` of up to ``chunk`` points of one medium;
    ``listed``: ``[(point, swept values)]`` for the first points (``point`` 1-based) and
    ``not_listed`` the rest; ``in_store``: the spec's points the store already holds,
    ``{"ok", "failed"}``, or None when it was not matched (``store_note`` says why);
    ``to_run`` points a run would evaluate; ``estimate`` or None.
    """

    name: str
    total: int
    swept: list
    fixed: dict
    media: int
    chunk: int
    chunks: int
    executor: str
    workers: int
    listed: list
    not_listed: int
    store: str
    in_store: dict | None
    store_note: str
    to_run: int
    estimate: Estimate | None

    def to_dict(self) -> dict:
        return {"name": self.name, "total": self.total, "swept": [dict(s) for s in self.swept],
                "fixed": dict(self.fixed), "media": self.media, "chunk": self.chunk, "chunks": self.chunks,
                "executor": self.executor, "workers": self.workers,
                "listed": [{"point": n, "params": dict(v)} for n, v in self.listed], "not_listed": self.not_listed,
                "store": self.store, "in_store": self.in_store, "store_note": self.store_note, "to_run": self.to_run,
                "estimate": None if self.estimate is None else self.estimate.to_dict()}


# ----------------------------------------------------------------------------- counts
def _groups(spec: SweepSpec) -> list[tuple[int, int]]:
    """The sweep's media as ``[(how many media, points in each)]``, by arithmetic: a medium
    is one combination of the medium keys of the grid and one zip row cut to its medium
    keys; the other grid keys multiply each."""
    medium_grid = math.prod(len(v) for k, v in spec.grid.items() if k in MEDIUM_KEYS)
    other_grid = math.prod(len(v) for k, v in spec.grid.items() if k not in MEDIUM_KEYS)
    zk = [k for k in spec.zipped if k in MEDIUM_KEYS]
    rows: dict = {}
    for j in range(len(_zip_rows(spec))):
        r = tuple(spec.zipped[k][j] for k in zk)
        rows[r] = rows.get(r, 0) + 1
    sizes: dict = {}
    for c in rows.values():
        sizes[other_grid * c] = sizes.get(other_grid * c, 0) + medium_grid
    return [(n, size) for size, n in sizes.items()]


def _workers(executor: str, workers, scheduler) -> tuple[int, str | None]:
    """Workers a run uses, and a caveat when that is a guess."""
    if executor == "inline":
        return 1, None
    n = workers or os.cpu_count() or 1
    if executor == "dask" and scheduler and not workers:
        return n, f"a Dask scheduler's workers are not known here: assumed {n} (--workers to say)"
    return n, None


# ----------------------------------------------------------------------------- measuring
def _samples(spec: SweepSpec, total: int) -> tuple[int, int | None, int | None]:
    """Point 0, a point on its medium (``same``) and a point on another (``other``), or None.

    Tried: each point that differs from point 0 in one grid key (that key's second value)
    or in the zip row (the first rows), and the last point: a bounded scan, whatever the
    sweep's size."""
    first = medium_key(point_at(spec, 0))
    n_rows = len(_zip_rows(spec))
    tries, stride = [], n_rows
    for vals in reversed(list(spec.grid.values())):
        if len(vals) > 1:
            tries.append(stride)
        stride *= len(vals)
    tries += list(range(1, min(n_rows, _SCAN_BOUND)))
    tries.append(total - 1)
    same = other = None
    for i in dict.fromkeys(t for t in tries if 0 < t < total):
        if medium_key(point_at(spec, i)) == first:
            same = i if same is None else same
        else:
            other = i if other is None else other
        if same is not None and other is not None:
            break
    return 0, same, other


def _measure(spec: SweepSpec, i: int, what: str, limit_s: float) -> dict:
    from .workers import _Inline

    t = time.perf_counter()
    [rec] = list(_Inline(limit_s).run([[point_at(spec, i)]]))  # run to its end: the alarm handler restored
    out = {"point": i + 1, "what": what, "seconds": time.perf_counter() - t, "status": rec["status"]}
    if rec["status"] != "ok":
        out["error"] = rec.get("error")
    return out


def _workers_start_s(n: int, limit_s: float) -> float | None:
    """Seconds ``n`` fresh worker processes take, started together as a run starts them,
    until the last says it is ready (a fresh interpreter importing the package,
    :class:`phy.sweep.workers._Worker`) and then to end when told; None if one did not
    start within ``limit_s``."""
    from multiprocessing import connection

    from .workers import _Worker

    t = time.perf_counter()
    ws = [_Worker() for _ in range(n)]
    waiting = {w.rx: w for w in ws}
    try:
        while waiting:
            left = limit_s - (time.perf_counter() - t)
            ready = connection.wait(list(waiting), timeout=max(0.0, left))
            if not ready:
                return None
            for rx in ready:
                rx.recv()
                del waiting[rx]
    except (EOFError, OSError):
        return None
    finally:
        for w in ws:
            w.end(kill=w.rx in waiting)
    return time.perf_counter() - t


def estimate(spec: SweepSpec, *, points: int, media: int, chunks: int, workers: int,
             limit_s: float, processes: bool = True, caveats=()) -> Estimate:
    """Measure here and scale (see :class:`Estimate`): with worker processes, the workers'
    start (fresh interpreters importing the package together); then up to three points in this
    process: point 1 (it carries the first point's start-up: Numba kernels loading),
    another point on its medium (a point's own cost) and a point on another medium, run
    after the first (a medium's cost on a warm worker)."""
    started = max(1, min(workers, chunks))  # workers a run starts: one per chunk at most
    cores = os.cpu_count() or 1
    spawn = _workers_start_s(min(started, cores), limit_s) if processes else 0.0
    total = count_points(spec)
    a, same, other = _samples(spec, total)
    first = _measure(spec, a, "first point (start-up and its medium)", limit_s)
    further = None if same is None else _measure(spec, same, "another point on that medium", limit_s)
    second = None if other is None else _measure(spec, other, "first point of another medium", limit_s)
    measured = [m for m in (first, further, second) if m is not None]
    notes = ["assumes each worker runs as fast as this process did alone; workers sharing cores with each "
             "other or with other work run slower", *caveats]
    if spawn is None:
        spawn = 0.0
        notes.append(f"a worker process did not start within {limit_s:g} s: its start is not counted")
    elif processes:
        measured.insert(0, {"point": None, "what": f"{min(started, cores)} worker process(es) started together "
                            "(imports) and ended", "seconds": spawn, "status": "ok"})
    if second is not None:
        medium_s = second["seconds"]
        startup_s = max(0.0, first["seconds"] - medium_s)
    else:
        medium_s, startup_s = first["seconds"], 0.0
        if media > 1:
            notes.append("no second medium found to measure: a medium's cost is the first point's, start-up "
                         "included (an upper bound)")
    if further is not None:
        point_s = further["seconds"]
    else:
        point_s = medium_s
        if points > media:
            notes.append("no second point on one medium found to measure: each point is costed as a medium's "
                         "first (an upper bound)")
    t = time.perf_counter()
    for i in range(min(total, 200)):  # the run's bookkeeping: every point's key, before its first point
        point_key(point_at(spec, i))
    key_s = (time.perf_counter() - t) / min(total, 200)
    parallel = min(started, cores)
    builds = min(points, max(media, started))
    startup_s += spawn
    keys_s = key_s * total
    seconds = (keys_s + startup_s * math.ceil(started / cores)
               + (builds * medium_s + (points - builds) * point_s) / parallel)
    if started > cores:
        notes.append(f"{started} workers on {cores} cores: the points run {cores} at a time")
    failed = [m for m in measured if m["status"] != "ok"]
    if failed:
        notes.append(f"{len(failed)} measured point(s) did not end ok ({failed[0]['status']}: "
                     f"{failed[0].get('error')}); their time counts as measured")
    n = sum(m["point"] is not None for m in measured)
    how = (f"from {n} point{'s' if n != 1 else ''} measured here{' and the workers started' if spawn else ''}: "
           f"start-up {_dur(startup_s)}, a medium's first point {_dur(medium_s)}, each further "
           f"point {_dur(point_s)}; {points:,} point{'s' if points != 1 else ''} ({builds:,} medium builds) on "
           f"{started} worker{'s' if started != 1 else ''}" + (
               f", after {_dur(keys_s)} keying {total:,} points ({_dur(key_s)} each)" if keys_s >= 1 else ""))
    return Estimate(measured, startup_s, medium_s, point_s, keys_s, points, builds, started, parallel, seconds, how,
                    notes)


# the runner's grouping and options, here so the plan counts what the runner will run
# (phy.sweep.runner imports them; the plan does not import the runner)
def _chunks(todo: list[dict], size: int) -> list[list[dict]]:
    """Points grouped by medium (:func:`phy.sweep.spec.medium_key`: the channel or optics,
    the rate and the equalisation), then cut into chunks; a process pool gives a medium's
    chunks to a worker that has built it where it can (:class:`phy.sweep.workers._Pool`)."""
    groups: dict = {}
    for p in todo:
        groups.setdefault(medium_key(p), []).append(p)
    out = []
    for g in groups.values():
        for i in range(0, len(g), size):
            out.append(g[i:i + size])
    return out


def _options(spec: SweepSpec, executor, workers, scheduler, point_timeout_s) -> tuple:
    """The run's executor, workers, scheduler and time limit (s): the arguments, else the spec's."""
    if not isinstance(spec, SweepSpec):
        raise ConfigError(f"run_sweep needs a SweepSpec, got {type(spec).__name__}")
    kind = executor or spec.executor
    nw = workers if workers is not None else spec.workers
    sched = scheduler or spec.scheduler
    limit = point_timeout_s if point_timeout_s is not None else spec.point_timeout_s
    for name, v in (("executor", kind), ("workers", nw), ("scheduler", sched), ("point_timeout_s", limit)):
        bad = None if v is None else SWEEP_SCHEMA["sweep." + name][0](v)
        if bad:
            raise ConfigError(f"run_sweep {name} must be {bad}, got {v!r}")
    return ("dask" if sched else kind), nw, sched, float(limit)


def _dur(s: float) -> str:
    """A duration in words: ``8 ms``, ``0.91 s``, ``23 s``, ``4.2 min``, ``3.1 h``."""
    if s < 1.0:
        return f"{s * 1e3:.0f} ms" if s >= 0.01 else f"{s * 1e3:.1f} ms"
    if s < 10:
        return f"{s:.2f} s"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def _value(v) -> str:
    """A parameter's value as a TOML file writes it: strings quoted, ``2`` not ``2.0``."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def params_words(params: dict) -> str:
    """Swept parameters in one line: ``channel.length_m=2 link.fec="KP4"``."""
    return " ".join(f"{k}={_value(v)}" for k, v in params.items()) or "(the fixed parameters)"


def slowest_words(s: dict) -> str:
    """A run's slowest point (:attr:`phy.sweep.SweepResult.slowest`) in words:
    ``point 17 of 40 (2.31 s): channel.length_m=2 link.fec="KP4"``."""
    bad = "" if s["status"] == "ok" else f", {s['status']}"
    return f"point {s['point']} of {s['of']} ({_dur(s['seconds'])}{bad}): {params_words(s['params'])}"


# ----------------------------------------------------------------------------- the plan
def _store_match(spec: SweepSpec, store, total: int, retry_failed: bool) -> tuple[dict | None, str, set]:
    """The spec's points the store holds (``{"ok", "failed"}``), a note, and the keys of
    the records a run would skip; None past :data:`MATCH_BOUND` points."""
    if store is not None:
        check_store(store)  # the store a run would refuse is refused here too, and never read
    records = read_records(store, then="its point counted as to run") if store is not None else {}
    if not records:
        return {"ok": 0, "failed": 0}, "the store holds no records yet", set()
    if total > MATCH_BOUND:
        return None, (f"the store holds {len(records):,} records, not matched to this sweep's points (over "
                      f"{MATCH_BOUND:,} points: the whole sweep is counted as to run)"), set()
    keys = {point_key(p) for p in iter_points(spec)}
    ok = {k for k, r in records.items() if k in keys and r.get("status") == "ok"}
    failed = {k for k, r in records.items() if k in keys and r.get("status") != "ok"}
    others = len(records) - len(ok) - len(failed)
    note = f"the store holds {len(ok):,} of these points done and {len(failed):,} failed"
    note += " (rerun with --retry-failed to run those again)" if failed and not retry_failed else ""
    note += f", and {others:,} records of points not in this sweep" if others else ""
    return {"ok": len(ok), "failed": len(failed)}, note, ok if retry_failed else ok | failed


def plan_sweep(spec: SweepSpec, store=None, *, executor: str | None = None, workers: int | None = None,
               scheduler: str | None = None, point_timeout_s: float | None = None, listed: int = DEFAULT_LISTED,
               retry_failed: bool = False, measure: bool = True) -> SweepPlan:
    """What :func:`phy.sweep.run_sweep` would do with ``spec`` and ``store``, run nowhere.

    Parameters
    ----------
    spec : SweepSpec
    store : str or os.PathLike, optional
        Read (never written, nor locked) to count the points already done; matched only
        for sweeps up to :data:`MATCH_BOUND` points.
    executor, workers, scheduler, point_timeout_s : optional
        As for :func:`run_sweep`: the workers the estimate divides by.
    listed : int
        Points to list (the first ones; all when the sweep has no more), 0 to
        :data:`MAX_LISTED`; more raises :class:`phy.ConfigError` before any work.
    retry_failed : bool
        As for :func:`run_sweep`: failed points count as to run.
    measure : bool
        Measure points here for the estimate (seconds: up to three points' time, each
        bounded by the time limit); False: no estimate.

    Returns
    -------
    SweepPlan
    """
    if isinstance(listed, bool) or not isinstance(listed, int) or not 0 <= listed <= MAX_LISTED:
        raise ConfigError(f"points to list must be a whole number from 0 to {MAX_LISTED:,}, got {listed!r}")
    kind, nw, sched, limit = _options(spec, executor, workers, scheduler, point_timeout_s)
    total = count_points(spec)
    n_workers, guess = _workers(kind, nw, sched)
    swept = [{"key": k, "table": "grid", "values": len(v)} for k, v in spec.grid.items()]
    swept += [{"key": k, "table": "zip", "values": len(v)} for k, v in spec.zipped.items()]
    keys = [s["key"] for s in swept]
    shown = []
    if listed > 0:
        for i, p in enumerate(iter_points(spec)):
            if i >= listed:
                break
            shown.append((i + 1, {k: p[k] for k in keys}))
    in_store, note, skip = _store_match(spec, store, total, retry_failed)
    groups = _groups(spec)
    media = sum(n for n, _ in groups)
    if skip:  # matched (a bounded sweep): the points to run, grouped exactly as the runner will
        todo = [p for p in iter_points(spec) if point_key(p) not in skip]
        to_run, run_media = len(todo), len({medium_key(p) for p in todo})
        chunks = len(_chunks(todo, spec.chunk))
    else:
        to_run, run_media = total, media
        chunks = sum(n * -(-size // spec.chunk) for n, size in groups)
    est = None
    if measure and to_run:
        est = estimate(spec, points=to_run, media=run_media, chunks=chunks, workers=n_workers, limit_s=limit,
                       processes=kind != "inline", caveats=[guess] if guess else [])
    return SweepPlan(spec.name, total, swept, dict(spec.base), media, spec.chunk, chunks, kind, n_workers, shown,
                     total - len(shown), str(store) if store is not None else "", in_store, note, to_run, est)
