"""Running a sweep: the points not yet in the store, in chunks by medium, through an
executor, recorded as they end."""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field

from ..errors import ConfigError
from .plan import _chunks, _dur, _options, slowest_words
from .spec import SweepSpec, point_key, points
from .records import StoreWarning, scan, warn_lines
from .store import _Store, check_store
from .workers import _executor


# ----------------------------------------------------------------------------- runner
@dataclass
class SweepResult:
    """What a run did: points in the sweep, found already done in the store (``skipped``),
    run now (``ok``, and ``failed``: errors and timeouts), of those past the time limit
    (``timed_out``) and run again after their worker died (``retried``), seconds (s),
    the store, and notes. ``slowest``: the point of this run that took longest (None if
    none ran): ``point`` (its 1-based number in the sweep, as ``--dry-run`` lists it),
    ``of`` (the sweep's points), ``seconds`` (s, in its worker), ``status``, ``key`` and
    ``params`` (its swept parameters)."""

    total: int
    skipped: int
    ok: int
    failed: int
    seconds: float
    store: str
    notes: list = field(default_factory=list)
    timed_out: int = 0
    retried: int = 0
    slowest: dict | None = None

    @property
    def points_per_second(self) -> float:
        return (self.ok + self.failed) / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {"total": self.total, "skipped": self.skipped, "ok": self.ok, "failed": self.failed,
                "timed_out": self.timed_out, "retried": self.retried, "seconds": self.seconds,
                "points_per_second": self.points_per_second, "store": self.store, "notes": list(self.notes),
                "slowest": None if self.slowest is None else dict(self.slowest)}

    def _count(self, rec: dict) -> None:
        self.ok += rec["status"] == "ok"
        self.failed += rec["status"] != "ok"
        self.timed_out += rec["status"] == "timeout"
        self.retried += bool(rec.get("retried"))


class _Progress:
    """A progress line per point on ``stream``: points done, elapsed time, rate, time left
    and the slowest point so far (:class:`_Slowest`). On a terminal the line is rewritten
    in place as each point ends (cut to the terminal's width); elsewhere (a log file, a
    pipe) a full line is written at most every ``interval_s`` seconds. ``close`` writes the
    summary line, which names the slowest point. ``clock`` (s) is for the tests."""

    def __init__(self, total: int, stream, enabled: bool, slowest=None, *, clock=time.perf_counter,
                 interval_s: float = 10.0):
        self.total, self.stream, self.enabled = total, stream, enabled
        self.slowest = slowest
        self.clock, self.interval_s = clock, interval_s
        self.done = 0
        self.t0 = clock()
        self.last = None
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(isatty and isatty())

    def _line(self, dt: float) -> str:
        rate = self.done / dt if dt > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        w = 20
        fill = int(w * self.done / max(self.total, 1))
        line = (f"[{'#' * fill}{'.' * (w - fill)}] {self.done}/{self.total} points, {_dur(dt)} elapsed, "
                f"{rate:.2f} points/s" + ("" if self.done >= self.total else
                                          f", {'?' if left != left else _dur(left)} left"))
        if self.slowest is not None and self.slowest.best is not None:
            line += "; slowest so far " + self.slowest.words()
        return line

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = self.clock()
        if self.tty:
            import shutil

            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r" + self._line(now - self.t0)[:width].ljust(width))
        elif self.last is None or now - self.last >= self.interval_s or self.done == self.total:
            self.stream.write(self._line(now - self.t0) + "\n")
            self.last = now
        self.stream.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\n")
        dt = self.clock() - self.t0
        end = f"{self.done} of {self.total} points in {_dur(dt)}"
        if self.slowest is not None and self.slowest.best is not None:
            end += "; slowest " + self.slowest.words()
        self.stream.write(end + "\n")
        self.stream.flush()


class _Slowest:
    """The slowest record of a run so far: its time (s, in its worker), and its number in
    the sweep (1-based, by key) with its swept parameters."""

    def __init__(self, numbers: dict, of: int, swept):
        self.numbers, self.of, self.swept = numbers, of, list(swept)
        self.best: dict | None = None

    def see(self, rec: dict) -> None:
        t = rec.get("seconds")
        if not isinstance(t, (int, float)) or (self.best is not None and t <= self.best["seconds"]):
            return
        params = rec.get("params", {})
        self.best = {"point": self.numbers.get(rec.get("key")), "of": self.of, "seconds": float(t),
                     "status": rec.get("status"), "key": rec.get("key"),
                     "params": {k: params[k] for k in self.swept if k in params}}

    def words(self) -> str:
        return slowest_words(self.best)


def _by_key(spec: SweepSpec) -> dict:
    """The sweep's points by key. A point that appears twice is refused (a spec built by
    hand can have one; :func:`parse_spec` refuses it naming the file's line)."""
    out: dict = {}
    for p in points(spec):
        k = point_key(p)
        if k in out:
            params = {a: b for a, b in p.items() if not a.startswith("_")}
            raise ConfigError(f"sweep {spec.name!r}: the point {params} appears twice; give each grid value and "
                              "zip row once")
        out[k] = p
    return out


def run_sweep(spec: SweepSpec, store, *, executor: str | None = None, workers: int | None = None,
              scheduler: str | None = None, point_timeout_s: float | None = None, progress: bool = True,
              retry_failed: bool = False, stream=None) -> SweepResult:
    """Run the points of ``spec`` not yet in ``store`` and append their records as they finish.

    Parameters
    ----------
    spec : SweepSpec
        The sweep (:func:`load_spec`).
    store : str or os.PathLike
        The JSON Lines store: an existing store, or a new name in an existing folder
        (anything else, such as a device, a folder or a file that is not a store, is
        refused with :class:`phy.ConfigError` before any work, and nothing is created).
        The run holds it under a lock on the file itself: a second run on it, through any
        of its names, raises :class:`phy.ConfigError` at once, naming the run that holds
        it. Resuming, the store's last good record of each point counts as done; a bad
        record (not JSON, fields of the wrong type, or a checksum that does not match: it
        was edited or damaged, :mod:`phy.sweep.records`) is skipped with a
        :class:`phy.sweep.records.StoreWarning` naming its line, its point runs again
        and the new record is appended. Records from before checksums (no ``sha256``)
        are trusted, with one warning. A record that cannot be written (a full disk)
        raises ``OSError`` naming the store; the records before it are kept.
    executor, workers, scheduler : optional
        ``"inline"``, ``"processes"`` or ``"dask"``, the worker count and a Dask scheduler
        address; default the spec's (a scheduler implies Dask).
    point_timeout_s : float, optional
        The time limit of one point (s); default the spec's ``[sweep] point_timeout_s``,
        else :data:`DEFAULT_POINT_TIMEOUT_S` = 60 s. A point normally takes a few ms to 3 s
        (with preset equalisation about 0.2 s for a channel's first point, a few ms for the
        others on it; COM's equalisation seconds), :func:`phy.evaluate_link` is bounded at about 10 s on any accepted input, and the
        first point of a fresh worker adds a few seconds (Numba's cached kernels load, or
        compile when the cache is cold: about 2 s here); two or three times slower on a
        machine running more workers than cores still ends well inside 60 s. Past that a
        point is stuck, and 60 s bounds what one stuck point costs. Processes and Dask
        enforce it by killing the worker; ``inline`` by SIGALRM, which waits for a Numba
        kernel or C call to return (see :class:`_Inline`).
    progress, stream : optional
        A progress line per point on ``stream`` (default ``sys.stderr``): points done,
        elapsed time, rate, time left and the slowest point so far, rewritten in place on a
        terminal, a line every 10 s elsewhere; at the end a summary line naming the slowest
        point (also in the result's ``slowest``).
    retry_failed : bool
        Also rerun points recorded as ``"error"`` or ``"timeout"``.

    Returns
    -------
    SweepResult
        ``skipped`` counts only points found in the store; ``notes`` say what went wrong
        and what the run did about it (a lock taken over, timeouts, worker deaths).
    """
    kind, nw, sched, limit = _options(spec, executor, workers, scheduler, point_timeout_s)
    check_store(store)  # before the points are keyed: a bad store is refused before any work
    allp = _by_key(spec)
    st = _Store(store)
    try:
        done, bad, unsealed = scan(store)
        for line in warn_lines(store, bad, unsealed, "its point is not counted as done"):
            warnings.warn(line, StoreWarning, stacklevel=2)
        keep = {k for k, r in done.items() if r.get("status") == "ok" or not retry_failed}
        todo = [p for k, p in allp.items() if k not in keep]
        res = SweepResult(len(allp), len(allp) - len(todo), 0, 0, 0.0, str(store))
        if bad:
            res.notes.append(f"{len(bad)} bad record(s) in the store (line {', '.join(str(n) for n, _ in bad[:5])}"
                             f"{', ...' if len(bad) > 5 else ''}) not trusted: a point with no good record ran "
                             "again, its new record appended")
        if st.stale:
            res.notes.append(f"took over the store's lock from a run that ended without releasing it ({st.stale}); "
                             "its finished points are kept")
        if todo:
            slow = _Slowest({k: i for i, k in enumerate(allp, 1)}, len(allp), [*spec.grid, *spec.zipped])
            _execute(_executor(kind, nw, sched, limit), _chunks(todo, spec.chunk), st, res,
                     _Progress(len(todo), stream or sys.stderr, progress, slow), slow)
    finally:
        st.close()
    if res.timed_out:
        res.notes.append(f"{res.timed_out} point(s) ran past the time limit of {limit:g} s: status 'timeout' "
                         "(rerun with retry_failed and a longer point_timeout_s to try them again)")
    if res.retried:
        res.notes.append(f"{res.retried} point(s) ran again in a fresh worker after their worker died "
                         "(their records say how, under 'retried')")
    return res


def _execute(ex, chunks: list[list[dict]], st: _Store, res: SweepResult, bar: _Progress, slow: _Slowest) -> None:
    """Run the chunks on an executor, appending and counting each record as it comes."""
    t0 = time.perf_counter()
    clean = False
    try:
        for rec in ex.run(chunks):
            st.append(rec)
            res._count(rec)
            slow.see(rec)
            bar.update(1)
        clean = True
    finally:
        res.slowest = slow.best
        bar.close()
        ex.close(kill=not clean)
        res.notes.extend(ex.notes)
        res.seconds = time.perf_counter() - t0
