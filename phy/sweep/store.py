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


#: What a sweep's table needs and where it comes from: ``pip install 'linkmodel[sweeps]'``.
SWEEPS_EXTRA = "pip install 'linkmodel[sweeps]'"
#: Table formats by file suffix: the packages each needs.
EXPORT_FORMATS = {".csv": ("pandas",), ".parquet": ("pandas", "pyarrow")}


def _need(what: str, packages) -> None:
    """Import ``packages`` or raise :class:`phy.ConfigError` in one line naming the extra."""
    import importlib

    for name in packages:
        try:
            importlib.import_module(name)
        except ImportError:
            raise ConfigError(f"{what} needs {name}, which is not installed: {SWEEPS_EXTRA}") from None


def load(path):
    """The store as a ``pandas.DataFrame``: one row per point, its parameters, ``status``
    (``"ok"``, ``"error"`` or ``"timeout"``), ``error``, ``seconds`` (s) and the figures;
    ``retried`` and ``timeout_s`` where a record has them. Columns: ``key``, ``status``,
    ``error``, ``seconds``, then the parameters (``"section.name"``, as the spec spells
    them, in the order first met) and the figures (:func:`phy.sweep.point._flat`: units in
    the names). Text columns (``key``, ``status``, ``error``, and any parameter or figure
    that is text) are strings or missing, never numbers; a figure no point has is a column of
    NaN; a yes/no figure (``passes``) that a failed point lacks is pandas' nullable
    ``boolean``. Needs pandas (the ``sweeps`` extra)."""
    _need("loading a sweep as a DataFrame", ("pandas",))
    import pandas as pd

    rows = []
    for key, rec in read_records(path).items():
        row = {"key": key, "status": rec.get("status"), "error": rec.get("error"), "seconds": rec.get("seconds")}
        row.update({k: rec[k] for k in ("retried", "timeout_s") if k in rec})
        row.update(rec.get("params", {}))
        row.update(rec.get("row", {}))
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(dict.fromkeys(["key", "status", "error", "seconds",
                                                          *(k for r in rows for k in r)])))
    # a figure or numeric parameter that no point has (COM's figure on preset points, a default
    # left None) is a column of NaN, not of None: one dtype whether or not a point has it
    # (a missing value is None or NaN in an object column); a yes/no figure that a failed point
    # lacks is pandas' nullable boolean
    def only(k, kinds, no=()):
        return df[k].dtype == object and k not in _TEXT and all(
            v is None or v != v or (isinstance(v, kinds) and not isinstance(v, no)) for v in df[k])

    types = {k: float for k in df.columns if only(k, (int, float), bool)}
    types.update({k: "boolean" for k in df.columns if k not in types and only(k, bool) and df[k].notna().any()})
    return df.astype(types) if types else df


#: Columns that hold text even when every point has them missing.
_TEXT = frozenset({"key", "status", "error", "reasons", "equalisation", "equalisation_choice", "equalization",
                   "channel.kind", "channel.name", "channel.file", "channel.thru", "channel.host", "optics.kind",
                   "link.modulation", "link.fec", "link.equalization", "serdes.rx_impairments"})


def export_format(path) -> str:
    """The table format of ``path`` by its suffix (``"csv"`` or ``"parquet"``), its
    packages checked: :class:`phy.ConfigError` in one line for another suffix, or for a
    package that is missing (naming the ``sweeps`` extra)."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"an export path must be a path (a str or os.PathLike), got {type(path).__name__}")
    suffix = Path(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        raise ConfigError(f"export {_show(path)}: the suffix {suffix or '(none)'!r} names no table format; "
                          f"use {' or '.join(EXPORT_FORMATS)}")
    _need(f"exporting a sweep to {suffix[1:].upper()}", EXPORT_FORMATS[suffix])
    return suffix[1:]


def export(store, path) -> int:
    """Write the store's records as a table, one row per point (the columns of
    :func:`load`), in the format ``path``'s suffix names: ``.csv`` (pandas) or
    ``.parquet`` (pandas and pyarrow; the column types kept). The file is written whole
    beside its destination and then renamed over it, so a failed export leaves no half
    file. Returns the rows written.

    Raises :class:`phy.ConfigError` for another suffix, a missing package (naming
    ``pip install 'linkmodel[sweeps]'``), a store that does not exist, or a destination
    that cannot be written.
    """
    fmt = export_format(path)
    if not Path(store).is_file():
        raise ConfigError(f"store {_show(store)}: no such file (run the sweep first)")
    df = load(store)
    dest = Path(path)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        if fmt == "csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        os.replace(tmp, dest)
    except OSError as e:
        raise ConfigError(f"export {_show(path)}: cannot be written ({_oserror(e)})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return len(df)
