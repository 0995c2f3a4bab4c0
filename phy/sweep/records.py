"""The records of a sweep store: their shape, their checksum, and reading them back.

A store is a JSON Lines file, one record per line (:func:`phy.sweep.point.evaluate_point`
gives its fields). Each record the runner writes carries ``sha256``: the SHA-256 of the
record's canonical JSON without that field (keys sorted, no spaces, :func:`seal`).
Reading a store (a resumed run, :func:`read_records`, :func:`phy.sweep.load`) keeps the
last good record of each key; a bad record is skipped with a :class:`StoreWarning` naming
its line, and on resume its point runs again and its new record is appended (the bad line
stays, and later reads skip it again). A record is bad when its line is not JSON, its
fields do not have their types (``"key": [1, 2]``), or its checksum does not match (it was
edited or damaged). Records written before the checksum existed (no ``sha256``) are
trusted when their shape is right, with one warning per read saying how many.

The checksum finds accidental damage and hand edits; it is not a signature: whoever can
write the store can recompute it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import warnings

from ..config.files import show_path as _show
from ..errors import ConfigError

#: The record field that holds its checksum.
CHECKSUM = "sha256"
#: A record's statuses.
STATUSES = ("ok", "error", "timeout")
#: A store line longer than this (bytes) is no record the runner wrote (one is a few kB):
#: reported bad and skipped without being held in memory.
MAX_LINE_BYTES = 1 << 20
#: Bad records warned about one by one in one read; past this, one line counts the rest.
WARN_LINES = 10
_SNIFF_BYTES = 1 << 16


class StoreWarning(UserWarning):
    """A sweep store holds a record that is not trusted (see :mod:`phy.sweep.records`)."""


def _canonical(rec: dict) -> bytes:
    return json.dumps(rec, sort_keys=True, separators=(",", ":")).encode()


def checksum(rec: dict) -> str:
    """The SHA-256 (hex) of ``rec``'s canonical JSON without its ``sha256`` field."""
    return hashlib.sha256(_canonical({k: v for k, v in rec.items() if k != CHECKSUM})).hexdigest()


def seal(rec: dict) -> dict:
    """``rec`` as the store holds it: its values as JSON gives them back (numpy numbers as
    floats), and its checksum (``sha256``)."""
    plain = json.loads(json.dumps({k: v for k, v in rec.items() if k != CHECKSUM}, default=float))
    plain[CHECKSUM] = checksum(plain)
    return plain


def _scalar(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _table(v) -> bool:
    """A parameter that is a table of single values (an IBIS-AMI model's ``parameters``)."""
    return isinstance(v, dict) and all(isinstance(k, str) and _scalar(x) for k, x in v.items())


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def problem(rec) -> str | None:
    """Why ``rec`` (a parsed store line) is not a record to trust, in words; None if it is."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a record (an object)"
    if not isinstance(rec.get("key"), str) or not rec["key"]:
        return "its 'key' is not a non-empty string"
    if rec.get("status") not in STATUSES:
        return f"its 'status' is not one of {', '.join(STATUSES)}"
    for field, kind in (("params", "parameters"), *((("row", "figures"),) if rec["status"] == "ok" else ())):
        d = rec.get(field)
        if not isinstance(d, dict) or not all(isinstance(k, str) and (_scalar(v) or (field == "params" and _table(v)))
                                              for k, v in d.items()):
            return f"its '{field}' is not an object of {kind} (text keys, single values)"
    if rec["status"] != "ok" and not isinstance(rec.get("error"), str):
        return "its 'error' is not text"
    if not _number(rec.get("seconds")):
        return "its 'seconds' is not a number"
    for field, ok in (("retried", lambda v: isinstance(v, str)), ("timeout_s", _number),
                      ("worker_pid", lambda v: isinstance(v, int) and not isinstance(v, bool))):
        if field in rec and not ok(rec[field]):
            return f"its '{field}' has the wrong type"
    if CHECKSUM in rec and rec[CHECKSUM] != checksum(rec):
        return "its checksum does not match its contents (the record was edited or damaged)"
    return None


def _lines(fh):
    """``(number, bytes or None)`` for each complete line of a binary file (None: a line
    over :data:`MAX_LINE_BYTES`, skipped unread); a last line with no newline (a write in
    progress, or cut short by a crash) is left out."""
    n = 0
    while True:
        line = fh.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        n += 1
        if line.endswith(b"\n"):
            yield n, line
            continue
        if len(line) <= MAX_LINE_BYTES:
            return  # the last line, unfinished
        while line and not line.endswith(b"\n"):
            line = fh.readline(MAX_LINE_BYTES)
        if not line:
            return
        yield n, None


def _open_regular(path):
    """A store opened to read (binary), or None when there is no file; a path that is
    not a regular file (a device, a FIFO, a folder) raises :class:`phy.ConfigError`
    rather than being read (``/dev/zero`` never ends)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"store {_show(path)}: is a directory, not a sweep store") from None
    except ValueError:
        raise ConfigError(f"store {_show(path)}: not a valid path (it holds a NUL character)") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"store {_show(path)}: is not a regular file, not a sweep store")
    return os.fdopen(fd, "rb")


def scan(path) -> tuple[dict, list, int]:
    """Read a store: ``(records by key, bad, unsealed)``. The records are the last good one
    of each key; ``bad`` lists ``(line number, why)`` for each line skipped; ``unsealed``
    counts the good records that carry no checksum (written before it existed)."""
    out, bad, unsealed = {}, [], 0
    fh = _open_regular(path)
    if fh is None:
        return out, bad, unsealed
    with fh:
        for n, line in _lines(fh):
            if line is None:
                bad.append((n, f"longer than {MAX_LINE_BYTES >> 20} MiB, not a record"))
                continue
            if not line.strip():
                continue
            try:
                rec = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                bad.append((n, "not a JSON record (a record cut short by a crash, or an edit)"))
                continue
            why = problem(rec)
            if why:
                bad.append((n, why))
                continue
            unsealed += CHECKSUM not in rec
            out[rec["key"]] = rec
    return out, bad, unsealed


def warn_lines(path, bad: list, unsealed: int, then: str) -> list[str]:
    """One line per bad record (up to :data:`WARN_LINES`, then one for the rest) and one for
    the records with no checksum; ``then`` says what happens to a bad record's point."""
    out = [f"store {_show(path)}, line {n}: {why}; record skipped, {then}" for n, why in bad[:WARN_LINES]]
    if len(bad) > WARN_LINES:
        out.append(f"store {_show(path)}: {len(bad) - WARN_LINES} more bad records skipped (lines "
                   f"{bad[WARN_LINES][0]} to {bad[-1][0]}), {then}")
    if unsealed:
        out.append(f"store {_show(path)}: {unsealed} record(s) carry no checksum (written before records had one); "
                   "trusted as they are")
    return out


def read_records(path, *, then: str = "its point not counted as done") -> dict:
    """The store's records by key: the last good record of each key wins. A bad line
    (see the module docstring) is skipped with a :class:`StoreWarning` naming its line;
    a last line with no newline (cut short by a crash, or being written) is left out
    quietly. A path that is not a regular file raises :class:`phy.ConfigError`.

    Parameters
    ----------
    path : str or os.PathLike
        The store (JSON lines).
    then : str, optional
        What happens to a bad record's point, ending each warning (default ``"its point
        not counted as done"``).

    Returns
    -------
    dict
        Records by point key.
    """
    records, bad, unsealed = scan(path)
    for line in warn_lines(path, bad, unsealed, then):
        warnings.warn(line, StoreWarning, stacklevel=2)
    return records


def not_a_store(path) -> str | None:
    """Why the existing regular file ``path`` is no sweep store (lower case), or None: an
    empty file is one, and so is a file with a JSON record (an object with a ``key``) among
    the complete lines of its first 64 kB, or one that starts as a record does. A spec, a
    CSV or any other file is not, and a sweep is never appended to it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None
        raise OSError(e.errno, e.strerror, str(path)) from None
    if not head.strip() or head.lstrip().startswith(b'{"key"'):
        return None
    for line in head.split(b"\n")[:-1]:
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
        if isinstance(rec, dict) and "key" in rec:
            return None
    return "it holds no sweep records (no line of it is a JSON record with a 'key'): not a sweep store"
