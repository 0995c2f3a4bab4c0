"""Where a sweep's points run: worker processes on two pipes (a time limit per point,
workers killed and replaced, dying with their parent), in this process, or on Dask."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from multiprocessing import connection as _mpc

from .._procs import _PACKAGE_ROOT, _die_with_parent, _exit_reason
from .._procs import _child_paths as _worker_paths
from ..errors import ConfigError
from .point import evaluate_point
from .spec import medium_key, point_key


# ----------------------------------------------------------------------------- workers
def _failure(p: dict, status: str, error: str, seconds: float = 0.0, **extra) -> dict:
    """The record of a point that gave no row, in the shape :func:`evaluate_point` gives."""
    params = {k: v for k, v in p.items() if not k.startswith("_")}
    return {"key": point_key(p), "params": params, "status": status, "error": error, "seconds": seconds, **extra}


def _timed_out(p: dict, limit_s: float, seconds: float, how: str) -> dict:
    return _failure(p, "timeout", f"no result within the time limit of {limit_s:g} s (point_timeout_s); {how}",
                    seconds, timeout_s=limit_s)


def _serve(rfd: int, wfd: int, parent: int) -> None:
    """A worker process's loop: say ``"ready"``, then take chunks of points from the
    parent's pipe and send back each point's record as soon as it is done."""
    _die_with_parent(parent)
    _site_hook()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the parent's to handle
    rx, tx = _mpc.Connection(rfd, writable=False), _mpc.Connection(wfd, readable=False)
    try:
        tx.send("ready")
        while True:
            for p in rx.recv():
                tx.send(evaluate_point(p))
    except (EOFError, OSError):  # the parent is done, or gone
        return


def _site_hook() -> None:
    """Run a ``sitecustomize`` that lies on the worker's explicit path (:func:`_worker_paths`)
    and that the isolated interpreter's start did not find (it looked before the path was
    set), as a plain ``python`` started with that ``PYTHONPATH`` would: coverage and
    profilers hook subprocesses this way. One already run at start is not run again."""
    import importlib
    import importlib.util

    if "sitecustomize" not in sys.modules and importlib.util.find_spec("sitecustomize") is not None:
        importlib.import_module("sitecustomize")


def _worker_argv(rfd: int, wfd: int, parent: int) -> list[str]:
    """The command of a worker process: an isolated interpreter (``-I``: no current folder
    or script folder on ``sys.path``, no ``PYTHON*`` variables, no user site-packages), so a
    ``skrf.py`` or ``numpy.py`` in the folder a sweep is started from is never imported by
    its workers; the folders of :func:`_worker_paths` are put on its path by the command
    itself (``-P`` would keep ``PYTHONPATH`` but needs Python 3.11)."""
    code = (f"import sys; sys.path[:0] = {_worker_paths()!r}; "
            f"from phy.sweep.workers import _serve; _serve({rfd}, {wfd}, {parent})")
    return [sys.executable, "-I", "-c", code]


#: A worker remembers the media of its last chunks (its channel cache holds 32,
#: :func:`phy.sweep.point._channel`), and a free worker looks that far into the queue for
#: one of them.
MEDIA_REMEMBERED = 32
MEDIA_SCAN = 256

#: One thread per worker for the BLAS and OpenMP pools unless the environment says
#: otherwise (Dask's workers have the same): the workers are the parallelism, and threads
#: under them oversubscribe the cores. Measured on 2 cores, 96 preset points on 2 workers:
#: 13 to 15 s with these, 20 s without.
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class _Worker:
    """One worker process (``python -I -c`` running :func:`_serve`) and the points it holds.

    A fresh interpreter rather than a fork: nothing of the parent's threads, locks or
    open files (the store's lock) comes along, and it works inside a daemonic Dask
    worker. An isolated one (:func:`_worker_argv`): it imports this same ``phy`` and the
    absolute folders of ``PYTHONPATH``, never a module in the current folder; with one
    BLAS thread (``_ONE_THREAD``).
    """

    def __init__(self):
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        env = {**_ONE_THREAD, **os.environ}
        try:
            self.proc = subprocess.Popen(_worker_argv(down_r, up_w, os.getpid()), pass_fds=(down_r, up_w),
                                         stdin=subprocess.DEVNULL, env=env)
        except BaseException:
            os.close(down_w)
            os.close(up_r)
            raise
        finally:
            os.close(down_r)
            os.close(up_w)
        self.tx = _mpc.Connection(down_w, readable=False)
        self.rx = _mpc.Connection(up_r, writable=False)
        self.todo: list[dict] = []  # the points given and not yet reported, in order
        self.media: deque = deque(maxlen=MEDIA_REMEMBERED)  # the media of its recent chunks (medium_key)
        self.ready = False
        self.since: float | None = None  # when the point in hand (todo[0]) started (time.perf_counter, s)

    def give(self, pts: list[dict]) -> None:
        self.todo = list(pts)
        for k in dict.fromkeys(medium_key(p) for p in pts):
            if k in self.media:
                self.media.remove(k)
            self.media.append(k)
        if self.ready:
            self.send()

    def send(self) -> None:
        try:
            self.tx.send(self.todo)
        except OSError:
            pass  # it died: its pipe's EOF reports that
        self.since = time.perf_counter()

    def end(self, kill: bool) -> int:
        """Stop it (kill now, or close its pipe so it ends when idle) and reap it."""
        if kill:
            self.proc.kill()
        self.tx.close()
        try:
            code = self.proc.wait(timeout=None if kill else 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.rx.close()
        return code


class _Pool:
    """Worker processes that run chunks of points under a per-point time limit.

    Each worker reports every point as it finishes, so the pool knows which point each
    worker is on and since when. A point past ``timeout_s`` (s; None: no limit) is
    recorded as ``"timeout"`` and its worker is killed (SIGKILL, which no kernel or C
    call can ignore) and replaced; the rest of its chunk goes back to the queue. A
    worker that dies costs the point it was on one retry: that point and the rest of
    its chunk go back to the front of the queue for a fresh worker, and the point's
    record then says ``retried``; if it dies with that point a second time the point
    records ``"error"``, ``worker died: ...``, and the rest go on. Two workers in a row
    that die before they are ready (a broken installation) stop the run with
    :class:`phy.ConfigError`, rather than restarting forever. A fresh worker's clock
    starts when it is ready (its imports done, about 1 s), not when it is started.
    """

    def __init__(self, workers: int, timeout_s: float | None):
        self.n, self.timeout_s = int(workers), timeout_s
        self.workers: list[_Worker] = []
        self.deaths: dict[str, str] = {}  # point key -> how the worker running it died the first time
        self.failed_starts = 0

    def run(self, chunks):
        """Yield each point's record as it comes (in no particular order)."""
        queue = deque(list(c) for c in chunks if c)
        try:
            while queue or any(w.todo for w in self.workers):
                self._dispatch(queue)
                busy = [w for w in self.workers if w.todo]
                readable = _mpc.wait([w.rx for w in busy], timeout=self._wait_s(busy))
                for w in busy:
                    if w.rx in readable:
                        yield from self._receive(w, queue)
                    elif self._overdue(w):
                        yield self._stop(w, queue)
        except BaseException:
            self.close(kill=True)
            raise

    def _dispatch(self, queue: deque) -> None:
        for w in self.workers:
            if queue and w.ready and not w.todo:
                w.give(self._next_for(w, queue))
        while queue and len(self.workers) < self.n:
            w = _Worker()
            w.give(self._next_for(w, queue))
            self.workers.append(w)

    def _next_for(self, w: _Worker, queue: deque) -> list[dict]:
        """The chunk a free worker takes: the first in the queue on a medium it has built
        recently (its channel and eye are in its caches), else the first on a medium no
        other worker has built recently (a fresh worker does not take the second half of
        a medium another one is building), else the first. It looks at most
        :data:`MEDIA_SCAN` chunks deep."""
        others = set()
        for o in self.workers:
            if o is not w:
                others.update(o.media)
        fallback = None
        for i, chunk in enumerate(queue):
            if i >= MEDIA_SCAN:
                break
            k = medium_key(chunk[0])
            if k in w.media:
                del queue[i]
                return chunk
            if fallback is None and k not in others:
                fallback = i
        if fallback is None or fallback == 0:
            return queue.popleft()
        chunk = queue[fallback]
        del queue[fallback]
        return chunk

    def _wait_s(self, busy) -> float | None:
        ends = [w.since + self.timeout_s for w in busy if w.since is not None] if self.timeout_s else []
        return max(0.0, min(ends) - time.perf_counter()) if ends else None

    def _overdue(self, w: _Worker) -> bool:
        return bool(self.timeout_s) and w.since is not None and time.perf_counter() - w.since >= self.timeout_s

    def _receive(self, w: _Worker, queue: deque):
        try:
            msg = w.rx.recv()
        except (EOFError, OSError):
            yield from self._died(w, queue)
            return
        if msg == "ready":
            w.ready, self.failed_starts = True, 0
            w.send()
            return
        w.todo.pop(0)
        w.since = time.perf_counter() if w.todo else None
        first = self.deaths.pop(msg["key"], None)
        if first:
            msg["retried"] = f"worker died: {first} while running this point; it ran again in a fresh worker"
        yield msg

    def _died(self, w: _Worker, queue: deque):
        reason = _exit_reason(w.end(kill=True)) + ("" if w.ready else " before it was ready")
        self.workers.remove(w)
        if not w.ready:
            self.failed_starts += 1
            if self.failed_starts >= 2:
                raise ConfigError(f"sweep worker processes end before they are ready ({reason}, twice in a row); "
                                  "run the sweep with executor = 'inline' to see why")
        if not w.todo:
            return  # it died idle: nothing lost
        p, k = w.todo[0], point_key(w.todo[0])
        if k not in self.deaths:
            self.deaths[k] = reason
            queue.appendleft(w.todo)
            return
        first = self.deaths.pop(k)
        yield _failure(p, "error", f"worker died: {reason} while running this point, after its first worker had "
                                   f"died too ({first}); not retried again")
        if w.todo[1:]:
            queue.appendleft(w.todo[1:])

    def _stop(self, w: _Worker, queue: deque) -> dict:
        p, took = w.todo[0], time.perf_counter() - w.since
        w.end(kill=True)
        self.workers.remove(w)
        if w.todo[1:]:
            queue.appendleft(w.todo[1:])
        self.deaths.pop(point_key(p), None)
        return _timed_out(p, self.timeout_s, took, "its worker was killed and replaced, and the sweep went on")

    def close(self, kill: bool = False) -> None:
        """End every worker: at once (``kill``), or by closing its pipe when it is idle."""
        for w in self.workers:
            w.end(kill)
        self.workers = []


# ----------------------------------------------------------------------------- executors
class _PointTimeout(BaseException):
    """The inline executor's alarm: a point ran past its time limit. Not an
    ``Exception``, so no ``except Exception`` in the code under the point swallows it."""


class _Inline:
    """Runs the points in this process, one after another, each recorded as it finishes.

    Its time limit is SIGALRM (``setitimer``): the alarm stops a point at the next Python
    bytecode past the limit, so it cannot cut short a Numba kernel or a long C call,
    which run to their end first; the point is then recorded as ``"timeout"`` with the
    time it really took. Signals need the main thread and a free alarm timer; without
    them the limit is not enforced and the run says so in its notes. Use ``processes``
    for a limit that holds whatever the point is doing.
    """

    def __init__(self, timeout_s: float | None):
        self.timeout_s = timeout_s
        self.notes: list[str] = []

    def _alarm_free(self) -> bool:
        if self.timeout_s is None:
            return False
        if (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
                and signal.getitimer(signal.ITIMER_REAL)[0] == 0):
            return True
        self.notes.append("the time limit was not enforced: the inline executor needs the main thread and a free "
                          "SIGALRM timer (use executor = 'processes')")
        return False

    def run(self, chunks):
        alarm = self._alarm_free()
        armed = [False]

        def ring(signum, frame):
            if armed[0]:
                raise _PointTimeout

        old = signal.signal(signal.SIGALRM, ring) if alarm else None
        try:
            for p in (q for c in chunks for q in c):
                t = time.perf_counter()
                try:
                    if alarm:
                        armed[0] = True
                        signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
                    rec = evaluate_point(p)
                except _PointTimeout:
                    rec = _timed_out(p, self.timeout_s, time.perf_counter() - t, "the point was interrupted")
                finally:
                    armed[0] = False
                    if alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                yield rec
        finally:
            if alarm:
                signal.signal(signal.SIGALRM, old)

    def close(self, kill: bool = False) -> None:
        pass


class _Processes(_Pool):
    """A pool of this run's own worker processes (see :class:`_Pool`)."""

    def __init__(self, workers: int | None, timeout_s: float | None):
        super().__init__(workers or os.cpu_count() or 1, timeout_s)
        self.notes: list[str] = []


_DASK_LOCAL = threading.local()


def _dask_chunk(chunk: list[dict], timeout_s: float | None) -> list[dict]:
    """A Dask task: one chunk through the calling Dask worker thread's own worker process
    (a :class:`_Pool` of one, kept between tasks), so that the time limit and a worker's
    death are handled on the Dask worker as they are in a process pool."""
    pool = getattr(_DASK_LOCAL, "pool", None)
    if pool is None or pool.timeout_s != timeout_s:
        if pool is not None:
            pool.close()
        pool = _DASK_LOCAL.pool = _Pool(1, timeout_s)
    return list(pool.run([chunk]))


class _Dask:
    """Chunks as Dask tasks, each run by :func:`_dask_chunk` in a worker process of the
    Dask worker. With a local cluster, its workers end with this process (``distributed``
    ends a worker whose parent's pipe closes) and their worker processes with them. A
    remote cluster's workers are not this run's: if the run dies they finish the task in
    hand (bounded by the time limit) and keep their idle worker process for the next."""

    def __init__(self, workers: int | None, scheduler: str | None, timeout_s: float | None):
        try:
            from distributed import Client, LocalCluster
        except ModuleNotFoundError:
            raise ConfigError("the dask executor needs dask.distributed: pip install 'dask[distributed]'") from None
        self.timeout_s = timeout_s
        self.notes: list[str] = []
        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler)
            except (OSError, TimeoutError) as e:  # its form was checked: it did not answer
                first = (str(e).splitlines() or [""])[0][:200]
                raise ConfigError(f"the Dask scheduler {scheduler!r} could not be reached ({type(e).__name__}: "
                                  f"{first})") from None
        else:
            import dask

            # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers; with it glibc
            # hands memory back so eagerly that every point's arrays are re-mapped, and a
            # point took twice as long as in a process pool. Keep the one-thread settings.
            env = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
                   if k != "MALLOC_TRIM_THRESHOLD_"}
            with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
                self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                            processes=True, dashboard_address=None)
            self.client = Client(self.cluster)

    def run(self, chunks):
        from distributed import as_completed

        futs = [self.client.submit(_dask_chunk, c, self.timeout_s, pure=False) for c in chunks]
        chunk_of = {f.key: c for f, c in zip(futs, chunks)}
        for f in as_completed(futs):
            try:
                recs = f.result()
            except Exception as e:  # noqa: BLE001 - a lost task fails its chunk's points, not the run
                what = "worker died" if type(e).__name__ == "KilledWorker" else "the Dask task failed"
                recs = [_failure(p, "error", f"{what}: {type(e).__name__}: {e}") for p in chunk_of[f.key]]
            yield from recs

    def close(self, kill: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _executor(kind: str, workers, scheduler, timeout_s):
    if kind == "inline":
        return _Inline(timeout_s)
    if kind == "processes":
        return _Processes(workers, timeout_s)
    if kind == "dask":
        return _Dask(workers, scheduler, timeout_s)
    raise ConfigError(f"executor must be 'inline', 'processes' or 'dask', got {kind!r}")


