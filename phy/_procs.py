"""Independent calls on several cores: :func:`fork_map`.

Used where a command has a few independent pieces of seconds each (the kernel groups of
:mod:`phy.warmup`, the length buckets of a roll-up, the demo's lane beside its rack) and a
process's start-up is worth it. The children are forked, so the function and its items need not pickle (a link
class's ``spec`` is a closure); only the results travel back. Where the platform cannot
fork, or with one worker or one item, the calls run here, in order. Sweeps have their own
executors (:mod:`phy.sweep.workers`: time limits, Dask, a store).

Also what every started (not forked) child interpreter of ``phy`` shares, the sweep's
workers and the AMI model hosts (:mod:`phy.ami.runner`): the folders it imports from
(:func:`_child_paths`), its death with its parent (:func:`_die_with_parent`; started by
:func:`_spawn` it dies with the process, not with the thread that asked for it) and how it
ended, in words (:func:`_exit_reason`). This module imports the standard library only, so
such a child may import it without loading ``phy``'s engines.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

__all__ = ["cores", "fork_call", "fork_map"]

_TASK: tuple = ()  # (fn, items) of the running fork_map, inherited by its children

#: The folder that holds this ``phy`` package (a checkout, or site-packages).
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _call(i: int):
    fn, items = _TASK
    return fn(items[i])


def fork_map(fn, items, workers: int | None = None, on_result=None) -> list:
    """``[fn(x) for x in items]``, in up to ``workers`` forked processes (default: one per
    core, at most one per item). ``on_result(i, result)`` is called as each result arrives,
    in order. An exception in a call is raised here."""
    global _TASK
    items = list(items)
    workers = cores() if workers is None else int(workers)
    workers = max(1, min(workers, len(items)))
    if workers == 1 or not sys.platform.startswith("linux"):
        out = []
        for i, x in enumerate(items):
            out.append(fn(x))
            if on_result is not None:
                on_result(i, out[-1])
        return out
    _TASK = (fn, items)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            out = []
            for i, r in enumerate(pool.map(_call, range(len(items)))):
                out.append(r)
                if on_result is not None:
                    on_result(i, r)
            return out
    finally:
        _TASK = ()


class _Here:
    """A call run where its result is asked for (no fork)."""

    def __init__(self, fn):
        self._fn = fn

    def result(self):
        return self._fn()


class _Forked:
    """A call running in a forked process; :meth:`result` waits for it and returns its
    result or raises its exception."""

    def __init__(self, fn):
        ctx = multiprocessing.get_context("fork")
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_send_result, args=(fn, send), daemon=True)
        self._proc.start()
        send.close()

    def result(self):
        try:
            ok, value = self._recv.recv()
        except EOFError:
            self._proc.join()
            raise RuntimeError(f"the forked call ended without a result (exit code {self._proc.exitcode})") from None
        finally:
            self._recv.close()
        self._proc.join()
        if not ok:
            raise value
        return value


def _send_result(fn, send) -> None:
    try:
        out = (True, fn())
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        out = (False, exc)
    send.send(out)
    send.close()


def fork_call(fn):
    """Start ``fn()`` in a forked process now, while this one goes on; the handle's
    ``result()`` waits for it (its exception is raised there). No thread is started here,
    so this process may fork again meanwhile (:func:`fork_map`). With one core, or where the
    platform cannot fork, ``fn`` runs when ``result()`` is called."""
    if cores() < 2 or not sys.platform.startswith("linux"):
        return _Here(fn)
    return _Forked(fn)


def _child_paths() -> list[str]:
    """The folders a started child interpreter imports from, ahead of the interpreter's
    own (its standard library and site-packages): this package's own folder, so the child runs this same
    ``phy`` (an editable install, a plain install or a checkout on ``PYTHONPATH``), then
    the absolute folders of ``PYTHONPATH`` in their order. Relative and empty entries
    (the current folder, wherever the run is started) are left out."""
    extra = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return list(dict.fromkeys([_PACKAGE_ROOT, *(p for p in extra if p and os.path.isabs(p))]))


def _exit_reason(code: int | None) -> str:
    """How a child process ended, from its return code (negative: the signal)."""
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _die_with_parent(parent: int) -> None:
    """Make this child process end when the process that started it dies, even mid-call.

    On Linux the kernel sends SIGKILL to the child when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``), which ends a child stuck in compiled code too. (The
    kernel means the parent *thread* that started it: the runner starts workers from the
    thread that runs the sweep, which outlives them; :class:`phy.ami.runner.AmiProcess`
    starts its hosts with :func:`_spawn`, from a thread that lives as long as the process.) Elsewhere a child ends at its next
    read or write of the parent's pipe (EOF or EPIPE), that is when its call is done.
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(0)


_SPAWNS: queue.SimpleQueue = queue.SimpleQueue()  # (args, kwargs, answer) for the spawning thread
_SPAWNER: list[threading.Thread] = []
_SPAWNER_LOCK = threading.Lock()


def _spawner_after_fork() -> None:
    """A forked child has no spawning thread, and maybe a lock held by a thread of its
    parent's: it starts afresh."""
    global _SPAWNS, _SPAWNER_LOCK
    _SPAWNS, _SPAWNER_LOCK = queue.SimpleQueue(), threading.Lock()
    _SPAWNER.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_spawner_after_fork)


def _spawner_loop() -> None:
    while True:
        args, kwargs, answer = _SPAWNS.get()
        try:
            answer.put((True, subprocess.Popen(*args, **kwargs)))
        except BaseException as exc:  # noqa: BLE001 - raised in the thread that asked
            answer.put((False, exc))


def _spawn(*args, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(*args, **kwargs)``, started from one daemon thread that lives as
    long as this process, so a child that calls :func:`_die_with_parent` dies with this
    process and not when the thread that asked for it ends (the kernel's parent-death
    signal follows the starting *thread*: an object made in a short-lived thread and used
    after it would otherwise find its child killed)."""
    with _SPAWNER_LOCK:
        if not (_SPAWNER and _SPAWNER[0].is_alive()):
            _SPAWNER[:] = [threading.Thread(target=_spawner_loop, name="phy-spawner", daemon=True)]
            _SPAWNER[0].start()
    answer: queue.SimpleQueue = queue.SimpleQueue()
    _SPAWNS.put((args, kwargs, answer))
    ok, value = answer.get()
    if not ok:
        raise value
    return value
