"""Reading the TOML files a person writes (link, sweep and rack files): the path and the
bytes checked, the text parsed, and every message naming the file, the line and the key
(``reach.toml, line 3: [link] fec``)."""

from __future__ import annotations

import difflib
import errno
import os
import re
import stat
from pathlib import Path

from ..errors import ConfigError

def did_you_mean(name: str, known) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or nothing."""
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def line_of(text: str, section: str, key: str) -> int | None:
    """Line number (1-based) of ``key`` in ``[section]`` of a TOML text, if it can be found."""
    lines = text.splitlines()
    in_sec = section == ""
    pat = re.compile(r'^\s*(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")\s*=")
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if s.startswith("[") and not s.startswith("[["):
            in_sec = s.strip("[] ") == section
            if in_sec and key == "":
                return i
            continue
        if in_sec and pat.match(ln):
            return i
    return None


def where(path, text, section, key) -> str:
    ln = line_of(text, section, key) if text else None
    return f"{path or 'spec'}{f', line {ln}' if ln else ''}: [{section}] {key}"


try:
    import tomllib as _toml
except ModuleNotFoundError:  # Python 3.10
    import tomli as _toml


def loads(text: str) -> dict:
    """TOML to a dict; :class:`phy.ConfigError` with the parser's line and column."""
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as e:
        raise ConfigError(f"not valid TOML: {e}") from None


MAX_TOML_BYTES = 16 * 2**20  # a sweep or rack file is text a person writes; 16 MiB is far past any


def show_path(path, n: int = 80) -> str:
    """A path for a one-line message: quoted, and cut in the middle when longer than ``n``."""
    s = str(path)
    return repr(s) if len(s) <= n else f"{s[:40] + '...' + s[-30:]!r} ({len(s)} characters)"


def file_problem(path: str) -> str | None:
    """Why ``path`` is not a regular file this process can read (lower case), or None."""
    try:
        st = os.stat(path)
    except OSError as e:
        return "no such file" if e.errno == errno.ENOENT else (e.strerror or str(e)).lower()
    except ValueError:  # an embedded NUL
        return "not a valid path (it holds a NUL character)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def read_text(path, what: str = "spec file") -> tuple[str, str]:
    """``(name, text)`` of a UTF-8 TOML file a user named.

    Anything else (``None`` or a number for a path, a name too long for the OS, a
    directory, a file that cannot be read, a binary or non-UTF-8 file, one over 16 MiB)
    raises :class:`phy.ConfigError` saying in one line what ``what`` is wrong.
    """
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        got = repr(path) if len(repr(path)) <= 60 else type(path).__name__
        raise ConfigError(f"{what} must be a path (a str or os.PathLike), got {got}")
    name = os.fsdecode(os.fspath(path))
    bad = file_problem(name)
    if bad:
        raise ConfigError(f"{what} {show_path(name)}: {bad}")
    try:
        with open(name, "rb") as fh:
            data = fh.read(MAX_TOML_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{what} {show_path(name)}: {(e.strerror or str(e)).lower()}") from None
    if len(data) > MAX_TOML_BYTES:
        raise ConfigError(f"{what} {show_path(name)}: over {MAX_TOML_BYTES >> 20} MiB, not a TOML file a person wrote")
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{what} {show_path(name)}: a binary file (a NUL byte at offset {nul}), not TOML text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{what} {show_path(name)}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                          "TOML files are UTF-8") from None
    return name, text.removeprefix("\ufeff")


def parse_named(text, path=None, what: str = "spec") -> tuple:
    """``(document, folder)`` of TOML ``text`` from file ``path`` (None: typed in; its
    relative files are then read from the working directory); :class:`phy.ConfigError`
    naming the file (or ``what``) for text that is not a str or not TOML."""
    if not isinstance(text, str):
        raise ConfigError(f"a {what} must be TOML text (str), got {type(text).__name__}")
    try:
        doc = loads(text)
    except ConfigError as e:
        raise ConfigError(f"{path or what}: {e}") from None
    return doc, str(Path(path).resolve().parent) if path else os.getcwd()


def read_toml(path, what: str = "file") -> tuple:
    """A TOML file a person wrote: ``(name, text, document)``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What it is, for messages (``"rack file"``).

    Returns
    -------
    tuple
        The path as a str, the text, and the parsed document (a dict).
    """
    name, text = read_text(path, what)
    return name, text, parse_named(text, name, what)[0]
