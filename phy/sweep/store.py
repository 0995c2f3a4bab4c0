"""The sweep store: an append-only JSON Lines file of checksummed records
(:mod:`phy.sweep.records`), fsynced as each point ends, locked against a second run
through any of its names, read back as records or a ``pandas.DataFrame``."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
import time
from pathlib import Path

from ..config.files import show_path as _show
from ..config.schema import SPELLINGS
from ..errors import ConfigError
from .records import not_a_store, read_records, seal

try:
    import fcntl
except ModuleNotFoundError:  # Windows: no flock; stores are not locked there
    fcntl = None

__all__ = ["export", "export_format", "load", "read_records"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


# ----------------------------------------------------------------------------- store
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


def _named(e: OSError, path) -> OSError:
    """``e`` (its errno and words) naming ``path``: an ``OSError`` of the errno's own
    subclass (``PermissionError``, ...), for ``linkmodel``'s "could not read or write a file"."""
    return OSError(e.errno, e.strerror or str(e), str(path))


def check_store(path) -> os.stat_result | None:
    """A store path, checked before any work: its ``stat`` if it exists (then a regular
    file that is a sweep store, through symbolic links), None if it is a new name in an
    existing folder. Anything else raises :class:`phy.ConfigError` in one line and
    creates nothing: not a path, a folder, a device (``/dev/null``), a FIFO or socket, a
    symbolic link to nothing, a folder that does not exist, or a file that is not a
    store (:func:`phy.sweep.records.not_a_store`: a spec, a CSV)."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"the store must be a path (a str or os.PathLike), got {type(path).__name__}")
    name = os.fsdecode(os.fspath(path))
    try:
        st = os.stat(name)
    except FileNotFoundError:
        if os.path.islink(name):
            raise ConfigError(f"store {_show(name)}: a symbolic link to nothing ({_show(os.readlink(name))}); "
                              "a store is a file or a new name in an existing folder") from None
        folder = os.path.dirname(os.path.abspath(name))
        if not os.path.isdir(folder):
            raise ConfigError(f"store {_show(name)}: its folder {_show(folder)} does not exist") from None
        return None
    except ValueError:
        raise ConfigError(f"store {_show(name)}: not a valid path (it holds a NUL character)") from None
    except OSError as e:
        raise ConfigError(f"store {_show(name)}: cannot be written ({_oserror(e)})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"store {_show(name)}: cannot be written (is a directory)")
    if not stat.S_ISREG(st.st_mode):
        kind = next((w for test, w in _KINDS if test(st.st_mode)), "not a regular file")
        raise ConfigError(f"store {_show(name)}: cannot be written (is {kind}, not a regular file); "
                          "a store is a file or a new name in an existing folder")
    bad = not_a_store(name)
    if bad:
        raise ConfigError(f"store {_show(name)}: {bad}; give the sweep its own store (--store NEW.jsonl)")
    return st


def _flock_holder(st: os.stat_result) -> int | None:
    """The pid holding a flock on the file ``st`` describes, from ``/proc/locks`` (Linux), or None."""
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                f = line.split()
                if len(f) >= 6 and f[1] == "FLOCK" and f[5] == want and f[4].isdigit():
                    return int(f[4])
    except OSError:
        pass
    return None


class _Store:
    """The append-only JSON Lines store of one run, held under an exclusive lock.

    The store is checked first (:func:`check_store`: nothing is created for a path that
    is refused). The lock is ``fcntl.flock`` on the store file itself, taken without
    waiting: it belongs to the file (its inode), so a second run on the same store is
    refused through any of its names (a symbolic link, a hard link), at once, with
    :class:`phy.ConfigError` naming the run that holds it. That run's name (pid, host,
    start and command) is in ``<store>.lock`` beside the store's real path (symbolic links
    resolved; a run through a hard link of another name is named by its pid, from
    ``/proc/locks``). The kernel releases a flock when the process holding it ends,
    however it ends, so a killed run never leaves a lock that blocks: the next run takes
    it over and says so (``stale``: a clean end empties the name file, a killed run leaves
    its name in it). Worker processes do not inherit it. A record that cannot be written
    (a full disk) raises ``OSError`` naming the store, and what was written of it is cut
    off again, so the store ends with the last whole record.
    """

    def __init__(self, path):
        st = check_store(path)
        self.path = Path(path)
        self.stale: str | None = None
        self.fd = self._open(st)
        try:
            self.lock = self._lock()
            self._end_cut_line()
        except BaseException:
            os.close(self.fd)
            raise

    def _open(self, st) -> int:
        name = str(self.path)
        flags = os.O_RDWR | os.O_APPEND | os.O_NONBLOCK | _CLOEXEC
        try:
            # a new store is created only where nothing is (no symbolic link is followed)
            fd = os.open(name, flags) if st is not None else os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return self._open(check_store(name))
        except OSError as e:
            raise _named(e, name) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since it was checked
            os.close(fd)
            check_store(name)
            raise ConfigError(f"store {_show(name)}: cannot be written (not a regular file)")
        os.set_blocking(fd, True)
        return fd

    def _name_file(self, write: bool):
        """``<real store>.lock``, opened without following a symbolic link at that name."""
        name = os.path.realpath(self.path) + ".lock"
        flags = (os.O_RDWR | os.O_CREAT if write else os.O_RDONLY) | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
        try:
            fd = os.open(name, flags, 0o666)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ConfigError(f"store {_show(self.path)}: its lock file {_show(name)} is a symbolic link; "
                                  "remove it") from None
            raise _named(e, name) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ConfigError(f"store {_show(self.path)}: its lock file {_show(name)} is not a regular file")
        return os.fdopen(fd, "r+" if write else "r", encoding="utf-8", errors="replace")

    def _lock(self):
        if fcntl is None:
            return None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ConfigError(f"store {_show(self.path)}: cannot be locked ({_oserror(e)})") from None
            fh = self._name_file(write=False)
            owner = None
            if fh is not None:
                with fh:
                    owner = _owner(fh.read(4096))
            if owner is None:
                pid = _flock_holder(os.fstat(self.fd))
                owner = (f"pid {pid}, through another name of this file" if pid is not None
                         else "a run that has not written its name yet")
            raise ConfigError(f"store {_show(self.path)} is being written by another sweep ({owner}); "
                              "wait for it to end, or give this run another store") from None
        fh = self._name_file(write=True)
        try:
            self.stale = _owner(fh.read(4096))
            me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                  "command": " ".join(sys.argv)[:300]}
            fh.seek(0)
            fh.truncate()
            fh.write(json.dumps(me))
            fh.flush()
            os.fsync(fh.fileno())
        except OSError as e:
            fh.close()
            raise _named(e, fh.name) from None
        except BaseException:
            fh.close()
            raise
        return fh

    def _end_cut_line(self) -> None:
        """A crash can leave a partial last line: end it, so the next record starts clean
        (the cut line is then a bad record that reading skips)."""
        size = os.fstat(self.fd).st_size
        if size and os.pread(self.fd, 1, size - 1) != b"\n":
            self._write(b"\n")

    def _write(self, data: bytes) -> None:
        start = os.fstat(self.fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            os.fsync(self.fd)
        except OSError as e:
            try:
                os.ftruncate(self.fd, start)  # no half record left behind
            except OSError:
                pass
            raise _named(e, self.path) from None

    def append(self, rec: dict) -> None:
        """Write ``rec`` (sealed with its checksum, :func:`phy.sweep.records.seal`) as one
        line and fsync it; ``OSError`` naming the store when it cannot be written."""
        self._write((json.dumps(seal(rec)) + "\n").encode())

    def _release(self) -> None:
        if self.lock is None:
            return
        try:
            self.lock.seek(0)
            self.lock.truncate()
            self.lock.flush()
        except OSError:
            pass
        self.lock.close()

    def close(self) -> None:
        self._release()
        os.close(self.fd)  # closing the store releases the flock


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
    ``boolean``. A bad record (not JSON, fields of the wrong type, a checksum that does not
    match: :mod:`phy.sweep.records`) is left out with a :class:`phy.sweep.records.StoreWarning` naming its
    line. Needs pandas (the ``sweeps`` extra).

    Parameters
    ----------
    path : str or os.PathLike
        The store.

    Returns
    -------
    pandas.DataFrame
        One row per point, the columns above.
    """
    _need("loading a sweep as a DataFrame", ("pandas",))
    import pandas as pd

    rows = []
    for key, rec in read_records(path, then="left out of the table").items():
        row = {"key": key, "status": rec.get("status"), "error": rec.get("error"), "seconds": rec.get("seconds")}
        row.update({k: rec[k] for k in ("retried", "timeout_s") if k in rec})
        # a store written before a key was respelt holds the old spelling: one column per key
        row.update({SPELLINGS.get(k, k): v for k, v in rec.get("params", {}).items()})
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
                   "link.modulation", "link.fec", "link.equalisation", "serdes.rx_impairments"})


def export_format(path) -> str:
    """The table format of ``path`` by its suffix (``"csv"`` or ``"parquet"``), its
    packages and its folder checked: :class:`phy.ConfigError` in one line for another
    suffix, a package that is missing (naming the ``sweeps`` extra), a folder that does
    not exist or a path that is a folder.

    Parameters
    ----------
    path : str or os.PathLike
        The destination table.

    Returns
    -------
    str
        ``"csv"`` or ``"parquet"``.
    """
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"an export path must be a path (a str or os.PathLike), got {type(path).__name__}")
    suffix = Path(path).suffix.lower()
    if suffix not in EXPORT_FORMATS:
        raise ConfigError(f"export {_show(path)}: the suffix {suffix or '(none)'!r} names no table format; "
                          f"use {' or '.join(EXPORT_FORMATS)}")
    _need(f"exporting a sweep to {suffix[1:].upper()}", EXPORT_FORMATS[suffix])
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"export {_show(path)}: its folder {_show(folder)} does not exist")
    if os.path.isdir(path):
        raise ConfigError(f"export {_show(path)}: is a directory")
    return suffix[1:]


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.abspath(a) == os.path.abspath(b)


def _umask() -> int:
    """This process's umask, read without changing it where Linux says it (``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    u = os.umask(0o022)
    os.umask(u)
    return u


def export(store, path) -> int:
    """Write the store's records as a table, one row per point (the columns of
    :func:`load`), in the format ``path``'s suffix names: ``.csv`` (pandas) or
    ``.parquet`` (pandas and pyarrow; the column types kept). The file is written whole
    into a new temporary file of a random name beside its destination (``mkstemp``:
    created exclusively, so no file or symbolic link planted there is written through)
    and then renamed over it, so a failed export leaves no half file. Returns the rows
    written.

    Raises :class:`phy.ConfigError` for another suffix, a missing package (naming
    ``pip install 'linkmodel[sweeps]'``), a store that does not exist, a destination in
    a folder that does not exist or that is the store itself; ``OSError`` naming the
    destination when it cannot be written (permission, a full disk).

    Parameters
    ----------
    store : str or os.PathLike
        The sweep store read.
    path : str or os.PathLike
        The destination, ``.csv`` or ``.parquet``.

    Returns
    -------
    int
        The rows written.
    """
    import tempfile

    fmt = export_format(path)
    if not Path(store).is_file():
        raise ConfigError(f"store {_show(store)}: no such file (run the sweep first)")
    check_store(store)
    if _same_file(store, path):
        raise ConfigError(f"export {_show(path)}: is the store itself; export to another file")
    df = load(store)
    dest = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    except OSError as e:
        raise _named(e, path) from None
    fh = None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as an ordinary new file (mkstemp makes it 0600)
        fh = os.fdopen(fd, "w", encoding="utf-8", newline="") if fmt == "csv" else os.fdopen(fd, "wb")
        with fh:
            if fmt == "csv":
                df.to_csv(fh, index=False)
            else:
                df.to_parquet(fh, index=False, engine="pyarrow")
        os.replace(tmp, dest)
    except OSError as e:
        raise _named(e, path) from None
    finally:
        if fh is None:
            os.close(fd)
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return len(df)
