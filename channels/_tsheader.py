"""Touchstone 2 keywords, checked before scikit-rf acts on them.

scikit-rf's parser trusts a file's keywords: ``[Reference]`` takes as many numbers as there
are ports from wherever it finds them, skipping any token that is not a number, so a
``[Reference] 50 50`` on a four-port takes its last two values from the next keyword line
(``[Number of Frequencies] 1221`` gives a port 1221 ohm), and at the end of the file it
waits for numbers that never come; ``[Number of Ports]`` sizes arrays before anything checks
it; values go through ``int``/``float``, which read ``0_5`` as 5. :func:`check` reads every
keyword line first and refuses, with a :class:`~channels.errors.ChannelError` naming the line
and what was expected:

* a keyword it does not know, one without ``[Version] 2.0``/``2.1`` before it, a keyword
  that appears twice, and a keyword that sets up the data (ports, references, counts,
  formats, orders) after ``[Network Data]``;
* a value that is not what the keyword takes, written as a Touchstone number (no ``_``,
  ``nan``, ``inf``, hexadecimal or non-ASCII digits);
* a port count outside 1..:data:`~channels._tsfile.MAX_PORTS` or other than the extension's;
* a ``[Reference]`` with more or fewer values than ports: its values may continue on the
  following lines (the specification allows it) but never into a keyword, option or data
  line; every reference must be finite and positive; ``[Reference]`` before the port count;
* data before ``[Network Data]`` (scikit-rf drops them) or after ``[End]``; a version 2 file
  without ``[Network Data]``; a ``[Mixed-Mode Order]`` that does not name every port once.

A file without keyword lines (Touchstone 1) passes untouched. The cost is one pass over the
text (the keyword lines are found with ``str.find``) and a line loop over the header only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._tsnumbers import is_integer, is_number
from .errors import ChannelError, shown_path

__all__ = ["Header", "check"]

# keyword -> what its value must be ("" for none); scikit-rf's table (Touchstone._parse_file)
_VALUES = {
    "[version]": "2.0 or 2.1",
    "[number of ports]": "a whole number of ports",
    "[two-port data order]": "12_21 or 21_12",
    "[number of frequencies]": "a whole number of frequency points, at least 1",
    "[number of noise frequencies]": "a whole number of noise frequency points",
    "[reference]": "one positive reference impedance (ohm) per port",
    "[matrix format]": "Full, Lower or Upper",
    "[mixed-mode order]": "one entry per port (D2,1 C2,1 S3 ...)",
    "[network data]": "",
    "[noise data]": "",
    "[end]": "",
}
_SPELLED = {k: "[" + " ".join(w if w in ("of",) else w.capitalize() for w in k[1:-1].split()) + "]" for k in _VALUES}
_SPELLED["[two-port data order]"] = "[Two-Port Data Order]"
_SPELLED["[mixed-mode order]"] = "[Mixed-Mode Order]"
# keywords that set up how the data are read: they must come before [Network Data]
_SETUP = {"[version]", "[number of ports]", "[two-port data order]", "[number of frequencies]",
          "[number of noise frequencies]", "[reference]", "[matrix format]", "[mixed-mode order]"}
_MAX_COUNT_DIGITS = 9  # a count of 10**9 frequency points would not fit the file size limit anyway
_MIXED = re.compile(r"([dc])([0-9]{1,3}),([0-9]{1,3})|s([0-9]{1,3})")


@dataclass(frozen=True)
class Header:
    """What the keywords say (None where a keyword is absent)."""

    version: str | None = None
    ports: int | None = None
    frequencies: int | None = None
    matrix: str = "full"
    reference_span: tuple | None = None  # (start, end, one-line text) of a continued [Reference]

    def joined(self, text: str) -> str:
        """``text`` with a ``[Reference]`` continued over several lines written on one (and
        blank lines for the rest, so that line numbers stay): scikit-rf's parser fails on a
        comment or blank line between its values."""
        if self.reference_span is None:
            return text
        start, end, line = self.reference_span
        return text[:start] + line + text[end:]


class _Line:
    """One line of the text, by its offsets, with its number (1-based)."""

    __slots__ = ("start", "end", "number", "text")

    def __init__(self, text: str, start: int, number: int) -> None:
        end = text.find("\n", start)
        self.end = len(text) if end < 0 else end + 1
        self.start = start
        self.number = number
        self.text = text[start:self.end].strip()


def lines_starting_with(text: str, mark: str) -> list[_Line]:
    """Every line whose first non-blank character is ``mark`` (``[`` for keywords, ``#`` for
    option lines), in order, found with ``str.find`` and numbered as it goes: linear in the
    text, however many lines (a 6,000-point file has 100,000)."""
    out = []
    pos = text.find(mark)
    last_start, last_number = 0, 1
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        if text[start:pos].strip():  # the mark inside a comment or a data line: on to the next line
            end = text.find("\n", pos)
            pos = -1 if end < 0 else text.find(mark, end)
            continue
        last_number += text.count("\n", last_start, start)
        last_start = start
        line = _Line(text, start, last_number)
        out.append(line)
        pos = text.find(mark, line.end)
    return out


def _keyword_lines(text: str) -> list[_Line]:
    """Every line whose first non-blank character is ``[``, in order."""
    return lines_starting_with(text, "[")


def _lines_from(text: str, start: int, number: int, stop: int):
    """The lines from offset ``start`` (line ``number``) up to offset ``stop``."""
    while start < stop:
        line = _Line(text, start, number)
        yield line
        start, number = line.end, number + 1


def _fail(name: str, line: _Line, what: str) -> ChannelError:
    return ChannelError(f"{name}: line {line.number}, {shown_path(repr(line.text), 80)}: {what}")


def _name_and_value(line: _Line, name: str) -> tuple[str, str]:
    """The keyword (lower case) and the text after it up to a comment."""
    low = line.text.lower()
    close = low.find("]")
    if close < 0:
        raise _fail(name, line, "a keyword line without its closing ']'")
    key = low[:close + 1]
    if key not in _VALUES:
        known = ", ".join(_SPELLED[k] for k in _VALUES)
        raise _fail(name, line, f"unknown keyword {shown_path(line.text[:close + 1], 60)} (Touchstone 2 keywords: "
                                f"{known}; [Begin Information] blocks are not read)")
    rest = line.text[close + 1:]
    if rest and not rest[0].isspace() and rest[0] != "!":
        raise _fail(name, line, f"expected a blank between {_SPELLED[key]} and its value")
    return key, rest.partition("!")[0].strip()


def _count(line: _Line, name: str, key: str, value: str, lo: int, hi: int | None = None) -> int:
    toks = value.split()
    if len(toks) != 1 or not is_integer(toks[0]) or len(toks[0].lstrip("+")) > _MAX_COUNT_DIGITS:
        raise _fail(name, line, f"{_SPELLED[key]} takes {_VALUES[key]}, written with digits")
    n = int(toks[0])
    if n < lo or (hi is not None and n > hi):
        span = f"from {lo} to {hi}" if hi is not None else f"at least {lo}"
        raise _fail(name, line, f"{_SPELLED[key]} {n}: expected {span}")
    return n


def _references(text: str, line: _Line, value: str, ports: int, name: str) -> tuple[list[float], set, tuple | None]:
    """The ``[Reference]`` values from its line and its continuation lines (numbers only,
    comments and blank lines between them), the offsets of the lines they took, and
    (for :meth:`Header.joined`) the span they cover with the same values on one line."""
    values: list[str] = value.split()
    used = set()
    nxt = line
    while len(values) < ports:
        if nxt.end >= len(text):
            raise _fail(name, line, f"[Reference] gives {len(values)} values for {ports} ports and the file ends")
        nxt = _Line(text, nxt.end, nxt.number + 1)
        body = nxt.text.partition("!")[0].split()
        if not body:
            continue
        if nxt.text[0] in "[#" or not all(is_number(t) for t in body):
            kind = {"[": "a keyword line", "#": "the option line"}.get(nxt.text[0], "a line that is not numbers")
            raise _fail(name, line, f"[Reference] gives {len(values)} values for {ports} ports before line "
                                    f"{nxt.number}, {kind} ({shown_path(repr(nxt.text), 60)}): give one reference "
                                    "impedance per port (values may continue on the next lines, never into "
                                    "another keyword)")
        values += body
        used.add(nxt.start)
    if len(values) > ports:
        raise _fail(name, line, f"[Reference] gives {len(values)} values for {ports} ports")
    refs = []
    for tok in values:
        if not is_number(tok):
            raise _fail(name, line, f"[Reference] value {shown_path(repr(tok), 40)} is not a number "
                                    "(expected e.g. 50 or 42.5)")
        r = float(tok)
        if not 0 < r < float("inf"):
            raise _fail(name, line, f"[Reference] value {tok}: a reference impedance must be finite and positive (ohm)")
        refs.append(r)
    span = None
    if nxt is not line:
        rest = text[line.start:nxt.end]
        span = (line.start, nxt.end, "[Reference] " + " ".join(values) + "\n" * rest.count("\n"))
    return refs, used, span


def _mixed_mode(line: _Line, value: str, ports: int, name: str) -> None:
    toks = value.lower().split()
    if len(toks) != ports:
        raise _fail(name, line, f"[Mixed-Mode Order] has {len(toks)} entries for {ports} ports: expected one per port")
    slots = []
    for tok in toks:
        m = _MIXED.fullmatch(tok)
        if m is None:
            raise _fail(name, line, f"[Mixed-Mode Order] entry {shown_path(repr(tok), 30)}: expected D<p>,<n>, "
                                    "C<p>,<n> or S<p> with port numbers")
        nums = [int(x) for x in m.groups()[1:] if x is not None]
        if any(not 1 <= k <= ports for k in nums):
            raise _fail(name, line, f"[Mixed-Mode Order] entry {tok} names a port outside 1..{ports}")
        if m.group(1) and nums[0] == nums[1]:
            raise _fail(name, line, f"[Mixed-Mode Order] entry {tok} pairs a port with itself")
        slots.append(min(nums) if m.group(1) == "d" else max(nums))  # scikit-rf's placement
    if sorted(slots) != list(range(1, ports + 1)):
        raise _fail(name, line, "[Mixed-Mode Order] must place every port once (each pair once as D and once as C)")


def check(text: str, name: str, ports_from_name: int | None, max_ports: int) -> Header:
    """Check the keyword lines of ``text`` (module docstring); ``ports_from_name`` is the
    extension's port count (None for ``.ts``). Returns what they say."""
    lines = _keyword_lines(text) if "[" in text else []
    if not lines:
        return Header()
    seen: dict[str, _Line] = {}
    version = None
    ports = ports_from_name
    frequencies = None
    matrix = "full"
    data_at = None  # the [Network Data] line
    end_at = None
    taken: set = set()  # offsets of [Reference] continuation lines
    reference_span = None
    for line in lines:
        key, value = _name_and_value(line, name)
        if key in seen:
            raise _fail(name, line, f"{_SPELLED[key]} appears twice (first at line {seen[key].number})")
        seen[key] = line
        if version is None and key != "[version]":
            raise _fail(name, line, f"{_SPELLED[key]} without [Version] 2.0 before it: a Touchstone 2 file starts with "
                                    "[Version] (a Touchstone 1 file has no keywords)")
        if end_at is not None:
            raise _fail(name, line, f"{_SPELLED[key]} after [End] (line {end_at.number})")
        if data_at is not None and key in _SETUP:
            raise _fail(name, line, f"{_SPELLED[key]} after [Network Data] (line {data_at.number}): it must come before "
                                    "the data")
        if _VALUES[key] == "" and value:
            raise _fail(name, line, f"{_SPELLED[key]} takes no value")
        if key == "[version]":
            if value not in ("2.0", "2.1"):
                raise _fail(name, line, f"[Version] {shown_path(value, 20)}: expected 2.0 or 2.1")
            version = value
        elif key == "[number of ports]":
            n = _count(line, name, key, value, 1, max_ports)
            if ports_from_name is not None and n != ports_from_name:
                raise _fail(name, line, f"[Number of Ports] {n} but the extension says {ports_from_name} ports")
            ports = n
        elif key == "[reference]":
            if ports is None:
                raise _fail(name, line, "[Reference] before [Number of Ports]: the number of references is not known")
            _, used, reference_span = _references(text, line, value, ports, name)
            taken |= used
        elif key == "[number of frequencies]":
            frequencies = _count(line, name, key, value, 1)
        elif key == "[number of noise frequencies]":
            _count(line, name, key, value, 0)
        elif key == "[matrix format]":
            if value.lower() not in ("full", "lower", "upper"):
                raise _fail(name, line, f"[Matrix Format] takes {_VALUES[key]}")
            matrix = value.lower()
        elif key == "[two-port data order]":
            if value not in ("12_21", "21_12"):
                raise _fail(name, line, f"[Two-Port Data Order] takes {_VALUES[key]}")
        elif key == "[mixed-mode order]":
            if ports is None:
                raise _fail(name, line, "[Mixed-Mode Order] before [Number of Ports]")
            _mixed_mode(line, value, ports, name)
        elif key == "[network data]":
            data_at = line
        elif key == "[end]":
            end_at = line
    if data_at is None:
        raise ChannelError(f"{name}: a Touchstone {version} file without [Network Data]: expected the keyword on the "
                           "line before the data")
    if ports is None:
        raise ChannelError(f"{name}: a Touchstone {version} file without [Number of Ports]")
    _no_data_between(text, 0, 1, data_at.start, taken, name, "before [Network Data] (line "
                     f"{data_at.number}): Touchstone 2 data follow that keyword")
    if end_at is not None:
        _no_data_between(text, end_at.end, end_at.number + 1, len(text), set(), name,
                         f"after [End] (line {end_at.number})")
    return Header(version, ports, frequencies, matrix, reference_span)


_PORT_DIGITS = re.compile(r"([0-9]+)\]")


def check_port_names(text: str, name: str, ports: int | None) -> None:
    """``! Port[k] = name`` comments (scikit-rf stores the name at index ``k - 1``: ``k = 0``
    would silently name the last port) must number a port from 1 to ``ports``.

    The lines ``^[^\\S\\n]*! Port\\[([0-9]+)\\]`` (multi-line) matches, found with
    ``str.find`` of ``[`` (one character: a ``memchr`` through the data, many times faster
    than a search for the whole mark): at most one a line (the mark must be its first
    non-blank text), each line looked at once."""
    if ports is None:
        return
    pos = text.find("[", 6)
    while pos >= 0:
        mark = pos - 6
        if text.startswith("! Port", mark):
            start = text.rfind("\n", 0, mark) + 1
            m = _PORT_DIGITS.match(text, pos + 1) if start == mark or text[start:mark].isspace() else None
            if m is not None:
                digits = m.group(1)
                if len(digits) > 6 or not 1 <= int(digits) <= ports:
                    lineno = text.count("\n", 0, start) + 1
                    raise ChannelError(f"{name}: line {lineno}: '! Port[{shown_path(digits, 20)}]' names a port "
                                       f"outside 1..{ports}")
            end = text.find("\n", pos)  # (one mark a line can match: the line's first non-blank text)
            pos = -1 if end < 0 else text.find("[", end + 7)
        else:
            pos = text.find("[", pos + 1)


def _no_data_between(text: str, start: int, number: int, stop: int, taken: set, name: str, where: str) -> None:
    """Refuse a line between ``start`` and ``stop`` that is neither blank, a comment, the
    option line, a keyword nor a [Reference] continuation (in ``taken``)."""
    for line in _lines_from(text, start, number, stop):
        s = line.text
        if s and s[0] not in "!#[" and line.start not in taken and s.partition("!")[0].strip():
            raise _fail(name, line, f"data {where}")
