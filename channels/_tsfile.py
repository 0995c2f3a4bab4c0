"""Reading a Touchstone file's bytes and header, and checking what scikit-rf parsed.

The part of :func:`channels.touchstone.read_network` that is about the file rather than
the channel: the path argument (type, length, existence, permissions), the limits a file
must keep (size, line length, words, ports: each checked before the work it bounds), the
bytes (binary or text, UTF-8/UTF-16/latin-1), and the option line (fields in any order,
one of each kind, later option lines). The data themselves are checked in
:mod:`channels._tsdata`.
Every problem is a :class:`~channels.errors.ChannelError` with a one-line message that
names the file and what was expected.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._tsheader import lines_starting_with
from ._tsnumbers import float_reads, is_number
from .errors import ChannelError, shown_path

FREQ_UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
UNIT_SPELLING = {"hz": "Hz", "khz": "kHz", "mhz": "MHz", "ghz": "GHz"}
PARAMS = {"s", "y", "z"}
FORMATS = {"ma", "db", "ri"}
# Touchstone's defaults when a file has no option line (Touchstone 1.1 and 2.0 specifications)
DEFAULT_UNIT, DEFAULT_PARAM, DEFAULT_FORMAT, DEFAULT_REF = "ghz", "s", "ma", "50"


# ------------------------------------------------------------------------------ limits
# What a file may hold before it is refused, each checked before the work it bounds:
MAX_FILE_BYTES = 128 * 2**20
"""Largest file read (128 MiB), checked with ``stat`` before a byte is read. The largest real
channel files are a few MB (the 4-port 6,001-point files of ../shared/channels: 2 to 4 MB);
a 16-port at 10,000 points in full precision is about 70 MB. Reading holds the bytes and
the text at once, so this bound (with :data:`MAX_WORDS`) keeps one read under about 2 GB
of memory and a minute of time."""
MAX_PORTS = 64
"""Most ports a file may have: the largest VNAs measure 32 to 64 ports, and a link channel
uses 2, 4 or a few lanes of 4 (up to 16 here). The S matrix of N ports costs 16 N^2 bytes
a point, so the bound is checked (on the extension and ``[Number of Ports]``) before anything
is sized by it."""
MAX_LINE_CHARS = 262_144
"""Longest line (256 Ki characters): one 64-port frequency point written on a single line
(8,193 numbers at up to 32 characters) fits. Touchstone 1 writes at most four pairs a line
(about 100 characters); comment lines are sentences."""
MAX_WORDS = 10_000_000
"""Most blank-separated words (numbers, mostly) a file may hold, counted in one pass over its
bytes before any is parsed: reading costs up to about 150 bytes of memory a number at its
peak (measured: 10 million numbers in a 115 MB file, 1.6 GB and 17 s). A 16-port at 10,000
points holds 5.1 million numbers, a 32-port at 2,400 points 4.9 million."""
NEWLINE = b"\n"
HEAD_BYTES = 4096  # what is read first, to refuse binary data before reading the rest


# ------------------------------------------------------------------------------ the path
def _shown(path, keep: int = 100) -> str:
    """The path for a message: control characters escaped, shortened in the middle when it
    is very long (:func:`channels.errors.shown_path`)."""
    return shown_path(path, keep)


def as_path(value, what: str = "Touchstone file") -> Path:
    """``value`` as a :class:`~pathlib.Path`, or :class:`ChannelError` when it cannot name a file."""
    if isinstance(value, (str, bytes, os.PathLike)):
        try:
            text = os.fsdecode(os.fspath(value))
        except (TypeError, UnicodeError) as exc:
            raise ChannelError(f"{what} path {_shown(repr(value))} cannot be read as a file name: {exc}") from None
        if not text:
            raise ChannelError(f"{what} path is an empty string: expected the name of a .sNp or .ts file")
        if "\x00" in text:
            raise ChannelError(f"{what} path {_shown(text)} contains a NUL character, which no file name can")
        return Path(text)
    raise ChannelError(
        f"{what} path must be a str or os.PathLike naming a .sNp or .ts file, "
        f"got {_shown(repr(value))} ({type(value).__name__})"
    )


def _access_error(path: Path, exc: OSError, doing: str, why_denied: str) -> ChannelError:
    """A one-line ChannelError for an OSError met while ``doing`` something with ``path``."""
    shown = _shown(str(path))
    code = exc.errno
    if code == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(p)) for p in path.parts), default=0)
        return ChannelError(
            f"path too long for the operating system ({len(os.fsencode(str(path)))} bytes, its longest name "
            f"{longest} bytes; the usual limits are 255 bytes a name and 4096 in all): {shown}"
        )
    if code in (errno.ENOENT, errno.ENOTDIR):
        return ChannelError(f"Touchstone file not found: {shown}")
    if code in (errno.EACCES, errno.EPERM):
        return ChannelError(f"permission denied {doing} {shown}: {why_denied}")
    if code == errno.ELOOP:
        return ChannelError(f"too many levels of symbolic links {doing} {shown} (a link loop?)")
    if code == errno.EISDIR:
        return ChannelError(f"not a file: {shown} is a directory")
    return ChannelError(f"error {doing} {shown}: {exc.strerror or exc}")


def stat_file(path: Path) -> os.stat_result:
    """``os.stat(path)``, checked to be a regular file (not a directory, pipe or device)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _access_error(path, exc, "looking up", "a folder on its path may not be searched by this user") from None
    except ValueError as exc:  # e.g. a name the platform cannot encode
        raise ChannelError(f"invalid path {_shown(str(path))}: {exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ChannelError(f"not a file: {_shown(str(path))} is a directory")
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for t, k in ((stat.S_ISFIFO, "named pipe"), (stat.S_ISCHR, "character device"),
                                    (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")) if t(st.st_mode)),
                    "special file")
        raise ChannelError(f"not a file: {_shown(str(path))} is a {kind}, not a regular Touchstone text file")
    return st


def read_bytes(path: Path, st: os.stat_result) -> bytes:
    """The bytes of the regular file ``path`` (``st`` from :func:`stat_file`), refused before
    they are read when the file is larger than :data:`MAX_FILE_BYTES` or its first
    :data:`HEAD_BYTES` bytes are binary (:func:`binary_reason`)."""
    if st.st_size > MAX_FILE_BYTES:
        raise ChannelError(_too_large(path, f"{st.st_size:,} bytes"))
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            why = binary_reason(head)
            if why is not None:
                raise ChannelError(f"{_shown(str(path))}: binary data, not a Touchstone text file ({why})")
            fh.seek(0)  # read again from the start: one buffer, no head + rest copy
            want = min(st.st_size, MAX_FILE_BYTES) + 1  # (read(MAX_FILE_BYTES + 1) costs a 128 MiB buffer)
            raw = fh.read(want)
            if len(raw) == want <= MAX_FILE_BYTES:  # the file grew since stat: on, bounded as before
                raw += fh.read(MAX_FILE_BYTES + 1 - want)
    except OSError as exc:
        denied = f"this user may not read it (its permissions are {stat.filemode(st.st_mode)})"
        raise _access_error(path, exc, "reading", denied) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ChannelError(_too_large(path, f"more than {MAX_FILE_BYTES:,} bytes"))
    return raw


def _too_large(path: Path, size: str) -> str:
    return (f"{_shown(str(path))}: {size}, larger than the {MAX_FILE_BYTES // 2**20} MiB a Touchstone file "
            "may have here (real channel files are a few MB; a 16-port at 10,000 points is about 70 MB); the "
            "limit bounds the memory and time a read takes")


_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data: decompress it first"),
    (b"PK\x03\x04", "a zip archive: extract the Touchstone file from it"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"%PDF", "a PDF document"),
    (b"\x7fELF", "an executable"),
    (b"\x93NUMPY", "a numpy .npy array"),
)
_TEXT_CONTROL = b"\t\n\v\f\r\x1a"  # \x1a: DOS end-of-file, seen at the end of old files


def binary_reason(head: bytes) -> str | None:
    """Why the first bytes of a file are not Touchstone text (a known binary format, a NUL
    byte, many control characters), or None. UTF-16 text (with its byte-order mark) is text."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    why = next((what for magic, what in _MAGIC if head.startswith(magic)), None)
    nul = head.find(b"\x00")
    if why is None and nul >= 0:
        why = f"a NUL byte at offset {nul}"
    if why is None and head:
        control = len(head.translate(None, bytes(range(32, 256)) + _TEXT_CONTROL))
        if control > 0.01 * len(head):
            why = f"{control} control characters in its first {len(head)} bytes"
    return why


def decode_text(raw: bytes, path: Path) -> str:
    """The file's text: UTF-16 or UTF-8 (with or without byte-order mark), else latin-1.
    Binary data (a NUL byte anywhere) raise :class:`ChannelError` saying what they look like;
    so does a line longer than :data:`MAX_LINE_CHARS`."""
    head = raw[:HEAD_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ChannelError(
                f"{_shown(str(path))}: starts like UTF-16 text but does not decode: {exc.reason}"
            ) from None
        nul = text.find("\x00")
        if nul >= 0:
            raise ChannelError(f"{_shown(str(path))}: binary data, not a Touchstone text file "
                               f"(a NUL character at line {text.count(chr(10), 0, nul) + 1})")
        check_line_length(text, path)
        check_word_count(text.encode("utf-8", "replace"), path)
        return text
    why = binary_reason(head)
    if why is None:
        nul = raw.find(b"\x00")
        if nul >= 0:
            why = f"a NUL byte at offset {nul}, line {raw.count(NEWLINE, 0, nul) + 1}"
    if why is None:
        check_line_length(raw, path)
        check_word_count(raw, path)
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            high = len(head.translate(None, bytes(range(128))))
            if high > 0.3 * len(head):
                why = f"{100 * high // len(head)}% of its first {len(head)} bytes are not ASCII"
    if why is not None:
        raise ChannelError(f"{_shown(str(path))}: binary data, not a Touchstone text file ({why})")
    return raw.decode("latin-1")  # a few accented characters in the comments of an old file


def check_word_count(raw: bytes, path: Path, chunk: int = 1 << 22) -> None:
    """Refuse more than :data:`MAX_WORDS` words (runs of bytes above 32), counted a chunk at a
    time (a few MB of work memory whatever the file's size)."""
    if len(raw) <= 2 * MAX_WORDS:  # cannot hold more (a word and a blank take 2 bytes)
        return
    words, prev_blank = 0, True
    for off in range(0, len(raw), chunk):
        a = np.frombuffer(raw, np.uint8, count=min(chunk, len(raw) - off), offset=off) > 32
        words += int(np.count_nonzero(a[1:] & ~a[:-1])) + int(bool(a[0]) and prev_blank)
        prev_blank = not a[-1]
    if words > MAX_WORDS:
        raise ChannelError(
            f"{_shown(str(path))}: {words:,} words, more than the {MAX_WORDS:,} numbers a file may hold here "
            "(a 16-port at 10,000 points holds 5.1 million); the limit bounds the memory a read takes"
        )


def _every_block_ends_a_line(raw: bytes) -> bool:
    """Whether every whole block of ``MAX_LINE_CHARS // 2`` bytes (from offset 0) holds a
    LF: then no line is longer than ``MAX_LINE_CHARS`` (a longer one would hold a whole
    block), found with one ``bytes.find`` a block instead of every line end."""
    block = MAX_LINE_CHARS // 2
    return all(raw.find(NEWLINE, off, off + block) >= 0 for off in range(0, len(raw) - block + 1, block))


def check_line_length(text: str | bytes, path: Path) -> None:
    """Refuse a line longer than :data:`MAX_LINE_CHARS` (counted in bytes for undecoded data:
    at least as many as characters)."""
    if len(text) <= MAX_LINE_CHARS:
        return
    if isinstance(text, bytes) and _every_block_ends_a_line(text):
        return
    data = np.frombuffer(text, np.uint8) if isinstance(text, bytes) else None
    if data is not None:
        ends = np.concatenate(([-1], np.flatnonzero(data == 10), [data.size]))
    else:
        ends = [-1]
        pos = text.find("\n")
        while pos >= 0:
            ends.append(pos)
            pos = text.find("\n", pos + 1)
        ends = np.array(ends + [len(text)])
    lengths = np.diff(ends) - 1
    k = int(np.argmax(lengths))
    if lengths[k] > MAX_LINE_CHARS:
        cr = " (a file with CR-only line ends reads as one line: convert them to LF)" if (
            (b"\r" if data is not None else "\r") in text[:HEAD_BYTES]) else ""
        raise ChannelError(
            f"{_shown(str(path))}: line {k + 1} holds {int(lengths[k]):,} characters, more than the "
            f"{MAX_LINE_CHARS:,} a line may have (one 64-port frequency point on a single line fits){cr}"
        )


def nports_from_suffix(path: Path) -> int | None:
    """Port count the extension promises (``.s4p`` -> 4), ``None`` for ``.ts``."""
    m = re.fullmatch(r"\.s([0-9]+)p", path.suffix.lower())
    if m:
        digits = m.group(1)
        n = int(digits) if len(digits) <= 6 else MAX_PORTS + 1
        if not 1 <= n <= MAX_PORTS:
            raise ChannelError(
                f"{_shown(path.name)}: the extension says {_shown(digits, 20)} ports; expected 1 to {MAX_PORTS} "
                "(a channel file has 2, 4 or a few lanes of 4 ports)"
            )
        return n
    if path.suffix.lower() == ".ts":
        return None
    raise ChannelError(
        f"{_shown(path.name)}: unsupported extension {_shown(repr(path.suffix), 40)}; expected a Touchstone file "
        "(.s2p, .s4p, .s8p, .s12p, .s16p or .ts)"
    )


# ------------------------------------------------------------------------- the option line
@dataclass(frozen=True)
class OptionLine:
    """The fields of a Touchstone option line (lower case), or the defaults when it is absent.

    ``conflicts`` holds ``(field, first, second)`` for a field named twice with two values on
    the line; ``later`` the later option lines (line number, text) that say something else.
    """

    unit: str = DEFAULT_UNIT
    param: str = DEFAULT_PARAM
    fmt: str = DEFAULT_FORMAT
    ref: str = DEFAULT_REF
    present: bool = False
    text: str = ""
    lineno: int = 0
    conflicts: tuple = ()
    later: tuple = ()

    @property
    def mult(self) -> float:
        """Hz per unit of the file's frequency column."""
        return FREQ_UNITS[self.unit]

    @property
    def where(self) -> str:
        """How a message refers to this header."""
        if self.present:
            return f"option line {self.text!r}"
        return "no option line, so the Touchstone defaults GHz, S, MA, R 50 apply"

    def spelled(self, unit: str | None = None, fmt: str | None = None) -> str:
        """The option line written out, optionally with another unit or format."""
        return f"# {UNIT_SPELLING[unit or self.unit]} {self.param.upper()} {(fmt or self.fmt).upper()} R {self.ref}"


def _option_fields(s: str, name: str, strict: bool = True) -> dict:
    """Parse the body of one option line ``s`` (starting with ``#``) into its fields.

    Returns ``{"unit", "param", "fmt", "ref", "conflicts"}``; with ``strict`` an unknown or
    malformed field raises :class:`ChannelError`, otherwise parsing stops there."""
    body = s[1:].partition("!")[0]
    toks = body.lower().split()
    found: dict[str, str] = {}
    conflicts = []

    def put(kind: str, value: str) -> None:
        if kind in found and found[kind] != value:
            conflicts.append((kind, found[kind], value))
        found.setdefault(kind, value)

    k = 0
    while k < len(toks):
        t = toks[k]
        if t in FREQ_UNITS:
            put("unit", t)
        elif t in FORMATS:
            put("fmt", t)
        elif t in PARAMS:
            put("param", t)
        elif t == "r":
            if k + 1 >= len(toks):
                if not strict:
                    break
                raise ChannelError(f"{name}: option line {s!r} has 'R' without a resistance")
            ref = toks[k + 1]
            if not is_number(ref):
                if not strict:
                    break
                what = ("must be positive, finite and written as a Touchstone number" if float_reads(ref)
                        else "is not a number")  # (float reads nan, inf and 5_0; no Touchstone file holds them)
                raise ChannelError(
                    f"{name}: option line {shown_path(repr(s), 120)}: reference resistance {what}, got "
                    f"{shown_path(repr(ref), 40)} (expected digits with an optional sign, decimal point and exponent, "
                    "e.g. 50 or 5e1)"
                )
            r = float(ref)
            if strict and (not np.isfinite(r) or r <= 0):
                raise ChannelError(
                    f"{name}: option line {s!r}: reference resistance must be positive, got {ref}"
                )
            put("ref", ref)
            k += 1
        elif t in {"g", "h"}:
            if not strict:
                break
            raise ChannelError(f"{name}: {t.upper()}-parameter files are not supported (S, Y or Z)")
        else:
            if not strict:
                break
            raise ChannelError(
                f"{name}: option line {s!r} has an unknown field {t!r} "
                "(expected a frequency unit, S/Y/Z, MA/DB/RI and R <ohms>)"
            )
        k += 1
    return {
        "unit": found.get("unit", DEFAULT_UNIT),
        "param": found.get("param", DEFAULT_PARAM),
        "fmt": found.get("fmt", DEFAULT_FORMAT),
        "ref": found.get("ref", DEFAULT_REF),
        "conflicts": tuple(conflicts),
    }


def _option_lines(text: str) -> list[tuple[int, int, int, str]]:
    """``(start, end, line number, stripped text)`` of every line whose first non-blank
    character is ``#``."""
    return [(ln.start, ln.end, ln.number, ln.text) for ln in lines_starting_with(text, "#")]


def _defaults_position(text: str) -> int:
    """Where a missing option line belongs: before the first data or keyword line, after
    ``[Version]`` in a version 2 file (scikit-rf wants that keyword first in a .ts file)."""
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end + 1
        s = text[pos:end].strip()
        if s and not s.startswith("!"):
            return end if s.lower().startswith("[version]") else pos
        pos = end
    return 0


def parse_option_line(text: str, name: str) -> tuple[OptionLine, str]:
    """The option line (:func:`option_line_edit`) and the text to hand to scikit-rf."""
    opt, start, end, line = option_line_edit(text, name)
    return opt, text[:start] + line + text[end:]


def option_line_edit(text: str, name: str) -> tuple[OptionLine, int, int, str]:
    """Read the first option line; return it and the edit ``(start, end, line)`` that makes
    the text to hand to scikit-rf, ``text[:start] + line + text[end:]`` (not made here).

    Touchstone lets the option-line fields come in any order (``# MHz MA S R 50`` is
    legal); scikit-rf reads them positionally, so the line is rewritten in its order.
    S-parameter data are handed over as RI whatever the file's format, so that the raw
    pairs can be checked (a negative "magnitude" would otherwise vanish into the phase);
    :func:`from_raw` converts them afterwards with scikit-rf's own formula. A file
    without an option line gets one with the Touchstone defaults, written out. Later
    option lines (Touchstone ignores them, and so does scikit-rf) are listed in
    ``OptionLine.later`` when they say something else.
    """
    found = _option_lines(text)
    if not found:
        opt = OptionLine()
        at = _defaults_position(text)
        line = f"# {opt.unit} {opt.param} {parse_format(opt)} r {opt.ref}\n"
        if at and text[at - 1] != "\n":
            line = "\n" + line
        return opt, at, at, line
    (start, end, lineno, s), rest = found[0], found[1:]
    f = _option_fields(s, name)
    later = []
    for _, _, other_lineno, other_text in rest:
        other = _option_fields(other_text, name, strict=False)
        if any(other[k] != f[k] for k in ("unit", "param", "fmt", "ref")):
            later.append((other_lineno, other_text))
    opt = OptionLine(f["unit"], f["param"], f["fmt"], f["ref"], True, s, lineno, f["conflicts"], tuple(later))
    return opt, start, end, f"# {opt.unit} {opt.param} {parse_format(opt)} r {opt.ref}\n"


def parse_format(opt: OptionLine) -> str:
    """The format scikit-rf is told: RI for S-parameters (raw pairs kept), else the file's own
    (Y and Z data are converted to S inside scikit-rf, after the format)."""
    return "ri" if opt.param == "s" else opt.fmt


def from_raw(a: np.ndarray, b: np.ndarray, fmt: str) -> np.ndarray:
    """Complex S from the raw pairs ``(a, b)`` of format ``fmt``: scikit-rf's formulas, operation
    for operation, so a file reads bit for bit as scikit-rf reads it."""
    if fmt == "ri":
        return a + 1j * b
    mag = 10 ** (a / 20.0) if fmt == "db" else a
    return mag * np.exp(1j * b * np.pi / 180)
