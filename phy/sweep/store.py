"""The sweep store: an append-only JSON Lines file of records, fsynced as each point
ends, locked against a second run, read back as records or a ``pandas.DataFrame``."""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

from ..errors import ConfigError
from .spec import _show

try:
    import fcntl
except ModuleNotFoundError:  # Windows: no flock; stores are not locked there
    fcntl = None


# ----------------------------------------------------------------------------- store
def read_records(path) -> dict:
    """The store's records by key (the last complete line wins; a line cut short by a
    crash, or one that is not JSON, is ignored)."""
    out = {}
    p = Path(path)
    if not p.exists():
        return out
    with open(p, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # a write cut short
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "key" in rec:
                out[rec["key"]] = rec
    return out


def _owner(text: str) -> str | None:
    """Who a lock file names (see :class:`_Store`), as words; None if it names no one."""
    if not text.strip():
        return None
    try:
        d = json.loads(text)
        return f"pid {d['pid']} on host {d['host']}, started {d['started']}: {d['command']}"
    except (json.JSONDecodeError, TypeError, KeyError):
        return "a run whose lock file cannot be read"


def _oserror(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


class _Store:
    """The append-only JSON Lines store of one run, held under an exclusive lock.

    The lock is ``fcntl.flock`` on ``<store>.lock`` beside the store, taken without
    waiting: a second run on the store fails at once with :class:`phy.ConfigError`
    naming the run that holds it (pid, host, start and command, which the holder writes
    into the lock file). The kernel releases a flock when the process holding it ends,
    however it ends, so a killed run never leaves a lock that blocks: the next run takes
    it over and says so (``stale``: a clean end empties the file, a killed run leaves its
    name in it). The lock file is never deleted, since deleting it could let two runs
    lock two different files of one name. Worker processes do not inherit it.
    """

    def __init__(self, path):
        if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
            raise ConfigError(f"the store must be a path (a str or os.PathLike), got {type(path).__name__}")
        self.path = Path(path)
        self.stale: str | None = None
        self.lock = self._lock()
        try:
            self.fh = self._open()
        except OSError as e:
            self._release()
            raise ConfigError(f"store {_show(self.path)}: cannot be written ({_oserror(e)})") from None

    def _lock(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(f"{self.path}.lock", "a+", encoding="utf-8")  # noqa: SIM115 - held for the run
        except OSError as e:
            raise ConfigError(f"store {_show(self.path)}: cannot be written ({_oserror(e)})") from None
        if fcntl is None:
            return fh
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            fh.seek(0)
            owner = _owner(fh.read()) or "a run that has not written its name yet"
            fh.close()
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ConfigError(f"store {_show(self.path)}: cannot be locked ({_oserror(e)})") from None
            raise ConfigError(f"store {_show(self.path)} is being written by another sweep ({owner}); "
                              "wait for it to end, or give this run another store") from None
        fh.seek(0)
        self.stale = _owner(fh.read())
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "command": " ".join(sys.argv)[:300]}
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(me))
        fh.flush()
        os.fsync(fh.fileno())
        return fh

    def _open(self):
        # a crash can leave a partial last line: end it so the next record starts clean
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    with open(self.path, "ab") as fa:
                        fa.write(b"\n")
        return open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held for the run, closed by close()

    def append(self, rec: dict) -> None:
        self.fh.write(json.dumps(rec, default=float) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def _release(self) -> None:
        try:
            self.lock.seek(0)
            self.lock.truncate()
            self.lock.flush()
        except OSError:
            pass
        self.lock.close()  # closing the file releases the flock

    def close(self) -> None:
        self.fh.close()
        self._release()


def load(path):
    """The store as a ``pandas.DataFrame``: one row per point, its parameters, ``status``
    (``"ok"``, ``"error"`` or ``"timeout"``), ``error``, ``seconds`` (s) and the figures;
    ``retried`` and ``timeout_s`` where a record has them."""
    try:
        import pandas as pd
    except ModuleNotFoundError:
        raise ConfigError("loading a sweep as a DataFrame needs pandas: pip install pandas") from None
    rows = []
    for key, rec in read_records(path).items():
        row = {"key": key, "status": rec.get("status"), "error": rec.get("error"), "seconds": rec.get("seconds")}
        row.update({k: rec[k] for k in ("retried", "timeout_s") if k in rec})
        row.update(rec.get("params", {}))
        row.update(rec.get("row", {}))
        rows.append(row)
    return pd.DataFrame(rows)


