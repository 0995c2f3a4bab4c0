"""A fast Touchstone reader that returns what scikit-rf's parser returns, bit for bit.

scikit-rf reads a Touchstone file line by line in Python (``skrf.io.touchstone.Touchstone
._parse_file``): about 90 ms for a 6,000-point four-port, most of it the numeric block.
:func:`read_text` keeps scikit-rf's own code for everything but that loop:

* The header, up to the first data line, goes through a copy of scikit-rf's loop: the same
  keyword table, the same :class:`skrf.io.touchstone.ParserState` methods for the option
  line, comments and port names, the same ``[Reference]`` continuation reading.
* The rest is read in one compiled pass (:func:`channels._tsscan.scan`, Numba) over its
  bytes: the lines whose first non-blank character is ``!``, ``#`` or ``[`` are found and
  handled in order as scikit-rf handles them (a comment, the option line, ``[End]``);
  everything from a ``!`` to the end of a line is skipped, as scikit-rf's
  ``line.partition("!")`` drops it; the numbers are read as ``float`` reads them, bit for
  bit (Clinger's fast path in the kernel, the rest as :mod:`channels._tsnumbers` reads
  them). scikit-rf
  takes a line's first number as a frequency when the numbers so far fill whole points;
  the reader checks that this agrees with reading every ``1 + numbers_per_line`` numbers
  as one point (every point starts a line, no line starts one number into a point).
* Then scikit-rf's own ``Touchstone.load_file`` (MA/DB/RI, upper/lower matrices, the
  two-port order, mixed modes, Y/Z to S, frequency units, reference impedances) and a
  copy of ``Network.read_touchstone`` build the :class:`skrf.Network`, so every attribute
  (``f``, ``s``, ``z0``, ``comments``, ``comments_after_option_line``, ``variables``,
  ``port_names``, ``s_def``, ``port_modes``, ``gamma``, ``name``) is scikit-rf's.

Where the file uses something the fast path does not read, the whole file goes to
scikit-rf's parser instead, so the result is never different from scikit-rf's: noise data
(Touchstone 2 ``[Noise Data]``, or a Touchstone 1 two-port whose frequency steps back),
HFSS ``! Gamma`` / ``! Port Impedance`` comments, a keyword other than ``[End]`` after the
first data line, data before ``[Number of Ports]`` in a ``.ts`` file, a two-port upper or
lower matrix in the 21_12 order (scikit-rf 2.2 fills its S12 and S21 from uninitialised
memory, so no reader can match it), an extension that is
neither ``.sNp`` nor ``.ts``, numbers laid out so that a point starts inside a line or a
line holds only a frequency, a token ``float`` refuses (scikit-rf then raises its own
error), non-ASCII text outside comments, and a scikit-rf version other than the ones the
reader was checked against (:data:`TESTED_SKRF`). ``enabled = False`` turns the fast path
off.
"""

from __future__ import annotations

import bisect
import io
import os
import re

import numpy as np
import skrf as rf
from skrf.frequency import Frequency
from skrf.io import touchstone as _skts


__all__ = ["TESTED_SKRF", "enabled", "read_text"]

TESTED_SKRF = ("2.2.",)  # scikit-rf versions whose parser this reader reproduces (tests check it)
enabled = rf.__version__.startswith(TESTED_SKRF)


class _Fallback(Exception):
    """The file uses something the fast path does not read: scikit-rf's parser reads it."""


def _fallback(*_args) -> None:
    raise _Fallback


class _Truncated(Exception):
    """The reader was handed the start of the text only (:func:`read_text`) and needs more."""


_WORD = re.compile(r"\w*")
_VALUE = re.compile(r"\s*(\d*\.?\d*)\s*(\w*)")  # scikit-rf's p2 (matches always, no backtracking)
_STANDARD_PORT = re.compile(r"!\s*Port\s*[ \[]\d+[ \]]\s*[\=\:]\s*(.+)")  # scikit-rf's (linear: see _sigrity)
_DIGIT_START = re.compile(r"^\s*\d")
_NON_BLANK = re.compile(r"\S+")


def comment_variables(comments: str) -> dict:
    r"""scikit-rf's ``Touchstone.get_comment_variables`` in linear time.

    scikit-rf runs ``re.findall(r"\w* = \w*.*", comments)``: at most one match a line (``.``
    stops at the line's end), starting where the run of word characters just before the
    line's first ``" = "`` starts (any earlier start would need a word run that reaches a
    later ``" = "`` across the blank of the first). That start is found here by matching the
    word run backwards, once, instead of retrying the regex at every letter."""
    var_dict = {}
    for line in comments.split("\n"):
        j = line.find(" = ")
        if j < 0:
            continue
        k = line[j - _WORD.match(line[:j][::-1]).end():]
        try:
            var, value = k.split("=")
            var = var.rstrip()
            var_dict[var] = _VALUE.match(value).groups()
        except ValueError:
            pass
    return var_dict


def _sigrity(s: str) -> str | None:
    r"""``re.search(r"!\s*(\S+::[^:]+)", s).group(1)`` (or None) in ``O(n log n)``.

    From a ``!`` the regex skips blanks to ``q`` and takes the longest run of non-blanks from
    ``q`` that ends just before a ``::`` followed by a character other than ``:``: the last
    such ``::`` at ``r`` with ``q + 1 <= r`` and ``r + 1`` inside the run; the group runs to
    the next ``:`` or the end. The first ``!`` for which one exists gives the match. The
    regex itself retries the run from every ``!`` in it, quadratic in a run of ``!``."""
    if "!" not in s or "::" not in s:
        return None
    n = len(s)
    valid = []
    r = s.find("::")
    while r >= 0:
        if r + 2 < n and s[r + 2] != ":":
            valid.append(r)
        r = s.find("::", r + 1)
    if not valid:
        return None
    runs = [m.span() for m in _NON_BLANK.finditer(s)]
    starts = [a for a, _ in runs]
    p = s.find("!")
    while p >= 0:
        k = bisect.bisect_right(starts, p) - 1  # the run holding the "!"
        if p + 1 < runs[k][1]:
            q, e = p + 1, runs[k][1]
        elif k + 1 < len(runs):
            q, e = runs[k + 1]
        else:
            return None
        i = bisect.bisect_right(valid, e - 2) - 1
        if i >= 0 and valid[i] >= q + 1:
            end = s.find(":", valid[i] + 2)
            return s[q:end if end >= 0 else n]
        p = s.find("!", p + 1)
    return None


class _SafeTouchstone(_skts.Touchstone):
    """scikit-rf's Touchstone reader with its superlinear comment handling replaced by
    equivalents of linear cost (module docstring)."""

    def get_comments(self, ignored_comments: list[str] | None = None) -> str:
        # scikit-rf's Touchstone.get_comments, joined once instead of by repeated concatenation
        if ignored_comments is None:
            ignored_comments = ["Created with skrf"]
        if self.comments is None:
            self.comments = ""
        return "".join(line + "\n" for line in self.comments.split("\n")
                       if line and not any(ignored in line for ignored in ignored_comments))

    def get_comment_variables(self) -> dict:
        return comment_variables(self.comments)

    def _parse_port(self, fid) -> list[str]:
        # scikit-rf's Touchstone._parse_port, with the Sigrity search done by _sigrity
        fid.seek(0)
        port_style = None
        for line in fid:
            s = line.strip()
            if _STANDARD_PORT.search(s):
                port_style = "standard"
                break
            if _sigrity(s) is not None:
                port_style = "sigrity"
                break
            if _DIGIT_START.search(line):
                break
        fid.seek(0)
        port_names: list[str] = []
        for line in fid:
            s = line.strip()
            if port_style == "standard":
                m = _STANDARD_PORT.search(s)
                name = m.group(1) if m else None
            else:
                name = _sigrity(s)
            if name is not None:
                port_names.append(name)
            if _DIGIT_START.search(line):
                break
        return port_names


class _FastTouchstone(_SafeTouchstone):
    """scikit-rf's Touchstone reader with the numeric block read by numpy."""

    def _parse_file(self, fid: "_Source") -> _skts.ParserState:
        text = fid.text
        lines = _Lines(text, fid.complete)  # what scikit-rf's loop reads the header from (and [Reference] from)
        state = _skts.ParserState()
        extension = self.filename.split(".")[-1].lower()
        m = re.match(r"[ghsyz](\d+)p", extension)
        if m:
            state.rank = int(m.group(1))
        elif extension != "ts":
            raise _Fallback  # scikit-rf's own check of the first lines and its message
        # scikit-rf's keyword tables, in its order (Touchstone._parse_file)
        self._parse_dict = {
            "[version]": lambda x: setattr(self, "version", x.split()[1]),
            "#": lambda x: state.parse_option_line(x),
            "! gamma": _fallback,
            "! port impedance": _fallback,
            "! port": state.parse_port,
            "! terminal data exported": lambda _: setattr(state, "ansys_data_type", "terminal"),
            "! modal data exported": lambda _: setattr(state, "ansys_data_type", "modal"),
            "!": state.append_comment,
        }
        self._parse_dict_v2 = {
            "[number of ports]": lambda x: setattr(state, "rank", int(x.split()[3])),
            "[reference]": lambda x: setattr(
                state, "resistance", self._parse_n_floats(line=x, fid=lines, n=state.rank, before_comment=True)
            ),
            "[number of frequencies]": lambda x: setattr(self, "frequency_nb", int(x.split()[3])),
            "[matrix format]": lambda x: setattr(state, "matrix_format", x.split()[2].lower()),
            "[network data]": lambda _: setattr(state, "parse_network", True),
            "[noise data]": _fallback,
            "[two-port data order]": lambda x: setattr(state, "two_port_order_legacy", "21_12" in x),
            "[number of noise frequencies]": _fallback,
            "[mixed-mode order]": lambda line: setattr(state, "mixed_mode_order", line.lower().split()[2:]),
            "[end]": lambda x: None,
        }
        start = self._read_header(lines)
        if start is not None:
            if not state.parse_network or state.rank is None:
                raise _Fallback
            if state.rank == 2 and state.two_port_order_legacy and state.matrix_format != "full":
                raise _Fallback  # scikit-rf 2.2 leaves S12 = S21 as np.empty's leftovers here
            state.f, state.s = self._read_data(text, start, state, fid.tail, fid.complete)
        if not state.port_names or len(state.port_names) != state.rank:
            port_names = self._parse_port(lines)
            if len(port_names) == state.rank:
                state.port_names = {i: name for i, name in enumerate(port_names)}
        # joined by load_file below, not by scikit-rf's line-by-line list comprehension
        self._after_option, state.comments_after_option_line = state.comments_after_option_line, []
        return state

    def load_file(self, fid) -> None:
        """scikit-rf's ``load_file``, with ``comments_after_option_line`` (one comment a
        point in some files) joined in one pass: scikit-rf joins ``line.strip()[1:]`` of each;
        every line here is already stripped (the header loop and :meth:`_special_lines` strip
        them), starts with ``!`` (only such lines reach ``append_comment``) and holds no LF, so
        removing the ``!`` after each LF of ``"\n" + "\n".join(lines)`` gives the same text."""
        super().load_file(fid)
        if self._after_option:
            self.comments_after_option_line = ("\n" + "\n".join(self._after_option)).replace("\n!", "\n")[1:]

    def _read_header(self, fid: "_Lines") -> int | None:
        """scikit-rf's line loop up to the first data line; that line's offset in the text."""
        while True:
            start = fid.tell()
            line = fid.readline()
            if not line:
                return None
            line_l = line.strip()
            if not line_l:
                continue
            if line_l[0] in {"!", "#", "["}:
                for k, v in self._parse_dict.items():
                    if line_l.lower().startswith(k):
                        v(line_l)
                        break
                else:
                    k = None
                if k is not None:
                    continue
            return start

    def _read_data(self, text: str, start: int, state: _skts.ParserState, tail=None,
                   complete: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Frequencies and raw values (as ``state.f`` and ``state.s``) of the lines of ``text``
        from offset ``start`` (the first data line) on; the comment and keyword lines among
        them go to ``state``. One compiled pass (:func:`channels._tsscan.scan`) finds them
        and reads the numbers. ``tail``: ``(raw, shift, keep_from)``, the bytes ``raw[i - shift]``
        that are ``text[i]`` for ``i >= keep_from`` (:func:`read_text`), scanned without
        encoding the text again (``text`` may then be its start only: not ``complete``)."""
        from ._tsscan import finish_slow, scan_bytes  # (numba: imported on the first file read)

        if tail is not None and start >= tail[2]:
            raw, start = tail[0], start - tail[1]
        elif not complete:
            raise _Truncated
        elif text.isascii():  # (O(1) for a str) byte offsets are character offsets
            raw = text.encode("ascii")
        else:
            raw, start = text[start:].encode("utf-8"), 0
        v, first, slow, spec = scan_bytes(raw, start)
        if spec.size:
            self._special_lines(raw, start, spec, state)
        if slow.size and not finish_slow(v, raw, start, slow):
            raise _Fallback  # a token float() refuses: scikit-rf raises its own error
        per_point = state.numbers_per_line + 1
        n = v.size
        is_start = first.view(bool)  # the tokens that start a line
        if n % per_point or not is_start[0:n:per_point].all() or is_start[1:n:per_point].any():
            raise _Fallback  # scikit-rf would pair the numbers up otherwise (or fail)
        pts = v.reshape(-1, per_point)
        f = pts[:, 0]  # (views: scikit-rf's load_file copies both with np.array)
        if state.rank == 2 and self.version == "1.0" and np.any(f[1:] < f[:-1]):
            raise _Fallback  # a Touchstone 1 two-port's noise block
        return f, pts[:, 1:]

    def _special_lines(self, raw: bytes, start: int, spec: np.ndarray, state) -> None:
        """The comment and keyword lines after the first data line (``spec``: their byte
        extents from ``start`` and whether each is a bare ``!``) to :meth:`_data_keywords`."""
        lines = ["!"] * len(spec)  # a bare "!" line strips to "!"
        other = np.flatnonzero(spec[:, 2] == 0)
        for k, i, e in zip(other.tolist(), (spec[other, 0] + start).tolist(), (spec[other, 1] + start).tolist()):
            lines[k] = raw[i:e].decode("utf-8").strip()
        self._data_keywords(lines, state, other.tolist())

    def _data_keywords(self, stripped: list[str], state: _skts.ParserState, check: list[int]) -> None:
        """Comment and keyword lines after the first data line (stripped), in order, as
        scikit-rf's table handles them; the lines not in ``check`` are bare ``!``."""
        if all(s[0] == "!" and not (s[1:2] == " " and s[2:3] in "gGpPtTmM") for s in map(stripped.__getitem__, check)):
            # plain comments only (none of "! gamma", "! port...", "! terminal...", "! modal..."):
            # ParserState.append_comment for each, at once
            (state.comments_after_option_line if state.option_line_parsed else state.comments).extend(stripped)
            return
        append = state.append_comment
        for line_l in stripped:
            if line_l[0] == "!" and not (line_l[1:2] == " " and line_l[2:3] in "gGpPtTmM"):
                append(line_l)
                continue
            low = line_l.lower()
            if low.startswith("#"):
                state.parse_option_line(line_l)
            elif low.startswith("!"):
                if low.startswith(("! gamma", "! port impedance")):
                    raise _Fallback
                if low.startswith("! port"):
                    state.parse_port(line_l)
                elif low.startswith("! terminal data exported"):
                    state.ansys_data_type = "terminal"
                elif low.startswith("! modal data exported"):
                    state.ansys_data_type = "modal"
                else:
                    append(line_l)
            elif not (low.startswith("[end]") and "[end]" in self._parse_dict):
                raise _Fallback  # a keyword scikit-rf would act on, or (Touchstone 1) fail on


class _Lines:
    """The lines of a text as ``io.StringIO`` gives them (split after each LF only), without
    copying the text: what the header loop, ``_parse_n_floats`` and ``_parse_port`` read."""

    def __init__(self, text: str, complete: bool = True) -> None:
        self.text = text
        self.pos = 0
        self.complete = complete  # False: text is the start of the text only (no line past its last LF)

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int) -> int:
        self.pos = pos
        return pos

    def readline(self) -> str:
        end = self.text.find("\n", self.pos)
        if end < 0 and not self.complete:
            raise _Truncated
        end = len(self.text) if end < 0 else end + 1
        line = self.text[self.pos:end]
        self.pos = end
        return line

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class _Source(io.StringIO):
    """An empty ``io.StringIO`` (so that ``rf.Network`` reads it as a Touchstone file) that
    carries the text and the file name, without the copy ``io.StringIO(text)`` makes."""

    def __init__(self, text: str, name: str, tail=None, complete: bool = True) -> None:
        super().__init__()
        self.text = text
        self.name = name
        self.tail = tail
        self.complete = complete


class _FastNetwork(rf.Network):
    """``rf.Network`` whose ``read_touchstone`` uses :class:`_FastTouchstone`; only built by
    :func:`read_text`, which turns the instance into a plain ``rf.Network``."""

    _reader = _FastTouchstone

    def read_touchstone(self, filename, encoding=None) -> None:
        # scikit-rf 2.2's Network.read_touchstone, statement for statement, but for the
        # Touchstone class (and no noise branch: the fast reader leaves noise files to it)
        touchstoneFile = self._reader(filename, encoding=encoding)
        if touchstoneFile.noise is not None and self._reader is _FastTouchstone:
            raise _Fallback
        self.comments = touchstoneFile.get_comments()
        self.comments_after_option_line = touchstoneFile.comments_after_option_line
        self.variables = touchstoneFile.get_comment_variables()
        f, self.s = touchstoneFile.get_sparameter_arrays()
        self.port_names = touchstoneFile.port_names
        self.frequency = Frequency.from_f(f, unit="hz")
        self.frequency.unit = touchstoneFile.frequency_unit
        self.gamma = touchstoneFile.gamma
        self.z0 = touchstoneFile.z0
        self.s_def = touchstoneFile.s_def if self.s_def is None else self.s_def
        self.port_modes = touchstoneFile.port_modes
        if touchstoneFile.noise is not None:
            self._read_noise(touchstoneFile)
        if self.name is None:
            try:
                self.name = os.path.basename(os.path.splitext(filename)[0])
            except (AttributeError, TypeError):
                self.name = os.path.basename(os.path.splitext(touchstoneFile.filename)[0])

    def _read_noise(self, touchstoneFile) -> None:
        # the noise branch of scikit-rf 2.2's Network.read_touchstone (after port_modes there;
        # nothing between depends on it)
        noise_freq = touchstoneFile.noise[:, 0]
        nfmin_db = touchstoneFile.noise[:, 1]
        gamma_opt_mag = touchstoneFile.noise[:, 2]
        gamma_opt_angle = np.deg2rad(touchstoneFile.noise[:, 3])
        if touchstoneFile.version == "1.0":
            rn = touchstoneFile.noise[:, 4] * self.z0[0, 0]
        else:
            rn = touchstoneFile.noise[:, 4]
        gamma_opt = gamma_opt_mag * np.exp(1j * gamma_opt_angle)
        self.noise_freq = Frequency.from_f(noise_freq, unit="hz")
        self.noise_freq.unit = touchstoneFile.frequency_unit
        self.set_noise_a(self.noise_freq, nfmin_db, gamma_opt, rn)


class _SlowNetwork(_FastNetwork):
    """``rf.Network`` read by scikit-rf's own parser (:class:`_SafeTouchstone`: its code but
    for the three linear-cost methods)."""

    _reader = _SafeTouchstone


def read_text(text: str, name: str, before_fallback=None, tail=None, full=None) -> tuple[rf.Network, bool]:
    """The network scikit-rf's ``rf.Network(io.StringIO(text))`` returns for a file called
    ``name`` (its extension gives the port count), and whether the fast path read it.

    Exceptions are scikit-rf's: a file the fast path cannot read, or that fails in it, is
    read again by scikit-rf's parser (through :class:`_SafeTouchstone`), which raises what it
    raises. ``before_fallback``, when given, is called before that second reading (to refuse
    what scikit-rf's parser would accept and should not). With a scikit-rf version other than
    :data:`TESTED_SKRF` scikit-rf's own classes read every file. ``tail``, when given, is
    ``(raw, shift, keep_from)``: bytes with ``raw[i - shift]`` the (ASCII) character
    ``text[i]`` for every ``i >= keep_from``; the fast path scans them instead of encoding
    ``text`` when the data block starts at or after ``keep_from``. ``full``, when given, is
    a function returning the whole text of which ``text`` is the start: what the fast path
    reads when it needs more than the start and the bytes, and what scikit-rf's parser reads.
    """
    if enabled:
        try:
            try:
                ntwk = _FastNetwork(_Source(text, name, tail, full is None))
            except _Truncated:  # (only with full: the header runs past the start)
                text, full = full(), None
                ntwk = _FastNetwork(_Source(text, name, tail))
        except Exception:  # _Fallback, or a file scikit-rf will refuse with its own message
            pass
        else:
            ntwk.__class__ = rf.Network
            return ntwk, True
    if full is not None:
        text = full()
    if before_fallback is not None:
        before_fallback()
    buf = io.StringIO(text)
    buf.name = name
    if not enabled:
        return rf.Network(buf), False
    ntwk = _SlowNetwork(buf)
    ntwk.__class__ = rf.Network
    return ntwk, False
