"""Checking the data scikit-rf parsed from a Touchstone file, and explaining data it could not.

The layout of the data when scikit-rf cannot parse them (a non-number, a line that does
not fit the port count, a truncated point), numbers Python's ``float`` reads and Touchstone
does not write, and the structure of the network that comes back (points, ports, a strictly
increasing axis, finite values, magnitudes a channel can have, the Touchstone 2 frequency
count). Every problem is a :class:`~channels.errors.ChannelError` with a one-line message that
names the file and what was expected.
"""

from __future__ import annotations

import re

import numpy as np
import skrf as rf

from ._tsnumbers import float_reads, is_integer, is_nonfinite, is_number
from .errors import ChannelError, shown_path

MAX_S_MAGNITUDE = 2.0
"""Largest |S_ij| a file may hold (+6 dB). A passive network's |S_ij| never exceeds 1; measured
channel data exceed it only by calibration and noise error (the largest singular value of
the real files in ../shared/channels is 1.0005; measured files reach about 1.14), which the
passivity check reports as a warning. Twice the incident wave is no measurement error: a
damaged number (a 1e200 where 0.5 was) or data that are not a channel's, which would
otherwise overflow into NaN and infinities in every later step."""


# ----------------------------------------------------------------------- the data layout
def data_lines(text: str):
    """``(line number, numeric tokens)`` of every data line (comments, option and keyword lines skipped)."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.split("!", 1)[0].strip()
        if s and s[0] not in "#[":
            yield lineno, s.split()


def expected_layout(nports: int) -> list[int]:
    """Numbers per line of one frequency point in Touchstone 1 layout: one line for 1 and 2
    ports, otherwise each matrix row on its own lines, at most four pairs per line."""
    if nports <= 2:
        return [1 + 2 * nports * nports]
    per_row = [2 * min(4, nports - 4 * k) for k in range((nports + 3) // 4)]
    layout = per_row * nports
    layout[0] += 1
    return layout


def diagnose_data(text: str, nports: int | None, name: str, matrix: str = "full") -> str:
    """Explain why data could not be parsed: a non-numeric token, lines that do not have the
    extension's layout, or a truncated last point."""
    if nports is None:
        return "the number of ports is not known (no .sNp extension and no [Number of Ports])"
    per_point = 1 + (2 * nports * nports if matrix == "full" else nports * (nports + 1))
    count = 0
    lengths = []
    for lineno, toks in data_lines(text):
        for tok in toks:
            if not is_number(tok) and not is_nonfinite(tok):
                return (f"line {lineno}: {shown_path(repr(tok), 60)} is not a number as Touchstone writes one "
                        "(expected digits with an optional sign, decimal point and exponent, e.g. -0.5 or 1.2e-3)")
        count += len(toks)
        lengths.append((lineno, len(toks)))
    if count == 0:
        return "no data lines"
    if "[version]" not in text.lower():
        found = [n for _, n in lengths]

        def fits(m: int) -> bool:
            lay = expected_layout(m)
            return all(n == lay[k % len(lay)] for k, n in enumerate(found[: 4 * len(lay)]))

        layout = expected_layout(nports)
        for k, (lineno, n) in enumerate(lengths[: 4 * len(layout)]):
            if n != layout[k % len(layout)]:
                other = next((m for m in range(1, 33) if m != nports and fits(m)), None)
                hint = f"; the lines look like a {other}-port file" if other else ""
                return (
                    f"line {lineno} holds {n} numbers where a {nports}-port file (the extension) "
                    f"has {layout[k % len(layout)]}{hint}"
                )
    if count % per_point:
        return (
            f"truncated: {count} numbers is not a whole number of frequency points "
            f"({per_point} numbers per point for {nports} ports); the last point has "
            f"{count % per_point} of {per_point}"
        )
    return (f"the data could not be parsed as {count // per_point} frequency points of {nports} ports "
            f"({per_point} numbers each, each point starting on a new line)")


def check_tokens(text: str, name: str) -> None:
    """Refuse a number Python's ``float`` reads but Touchstone does not write (``0_5``,
    non-ASCII digits; ``nan`` and ``inf`` are read, and refused after parsing with the
    frequency they are at) where scikit-rf's own parser would read it with
    ``float``: the data lines, and the numbers of HFSS ``! Gamma`` / ``! Port Impedance``
    comment blocks. (The fast reader refuses them itself; this runs before scikit-rf's
    parser.)"""
    block = False
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s:
            continue
        if s[0] == "!":
            low = s.lower()
            if low.startswith(("! gamma", "! port impedance")):
                block, toks = True, s.rpartition("!")[2].split()
            elif block:
                toks = s[1:].split()
            else:
                continue
        elif s[0] in "#[":
            block = False
            continue
        else:
            block = False
            toks = s.partition("!")[0].split()
        for tok in toks:
            if not is_number(tok) and not is_nonfinite(tok) and float_reads(tok):
                raise ChannelError(
                    f"{name}: line {lineno}: {shown_path(repr(tok), 60)} is not a number as Touchstone writes one "
                    "(expected digits with an optional sign, decimal point and exponent; Python's float reads it, "
                    "no Touchstone file holds it)")


def check_magnitudes(ntwk: rf.Network, name: str) -> None:
    """Refuse an |S_ij| above :data:`MAX_S_MAGNITUDE`, naming the first (frequency, entry)."""
    s = ntwk.s
    mag = np.abs(s)
    over = mag > MAX_S_MAGNITUDE
    if not over.any():
        return
    p, i, j = np.unravel_index(int(np.argmax(over)), s.shape)
    n = s.shape[1]
    entry = f"S{i + 1}{j + 1}" if n < 10 else f"S({i + 1},{j + 1})"
    value = float(mag[p, i, j])
    f = float(ntwk.f[p])
    raise ChannelError(
        f"{name}: |{entry}| = {value:.4g} ({20 * np.log10(value):+.1f} dB) at {f / 1e9:.6g} GHz "
        f"({int(over.sum())} values above {MAX_S_MAGNITUDE:g}): no channel's S-parameter reaches that. A passive "
        f"network's never exceeds 1 and measured data reach about 1.14 (calibration error); above "
        f"{MAX_S_MAGNITUDE:g} (+6 dB) a number is damaged or the data are not a channel's"
    )


def check_two_port_noise(text: str, name: str) -> None:
    """Touchstone 1 two-port files start their noise block where the frequency steps back.
    Real noise lines hold 5 numbers; a 9-number line after the step is network data on a
    broken frequency axis, which scikit-rf would silently drop."""
    last_f = None
    in_noise = False
    for lineno, toks in data_lines(text):
        if not is_number(toks[0]):
            return
        freq = float(toks[0])
        if len(toks) == 9:
            if in_noise or (last_f is not None and freq <= last_f):
                raise ChannelError(
                    f"{name}: the frequency axis is not strictly increasing at line {lineno} "
                    f"({freq:.6g} after {last_f:.6g}, in the file's unit)"
                )
            last_f = freq
        elif len(toks) == 5 and last_f is not None and freq <= last_f:
            in_noise = True


def check_keywords(text: str, ntwk: rf.Network, name: str) -> None:
    """Touchstone 2 keywords that state what the data hold must agree with the data."""
    if "[" not in text:
        return  # a Touchstone 1 file: no keywords
    m = next((m for m in re.finditer(r"\[number of frequencies\][ \t]*(\S+)", text, re.IGNORECASE)
              if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip()), None)  # a keyword line, not a comment
    if m is None:
        return
    if not is_integer(m.group(1)) or len(m.group(1)) > 12:
        raise ChannelError(f"{name}: [Number of Frequencies] {shown_path(repr(m.group(1)), 40)} is not a whole number")
    stated = int(m.group(1))
    held = ntwk.f.size
    if stated != held:
        why = "the file is truncated or the keyword is wrong" if held < stated else "the keyword is wrong"
        raise ChannelError(
            f"{name}: [Number of Frequencies] says {stated} but the [Network Data] hold {held} points: {why}"
        )


def check_network(ntwk: rf.Network, name: str, nports: int | None) -> None:
    """Structure of the parsed network: points, ports, a strictly increasing axis, finite values."""
    f = np.asarray(ntwk.f, dtype=float)
    s = ntwk.s
    if f.size == 0:
        raise ChannelError(f"{name}: no frequency points")
    if nports is not None and ntwk.nports != nports:
        raise ChannelError(f"{name}: the extension says {nports} ports but the data hold {ntwk.nports}")
    if f.size < 2:
        raise ChannelError(f"{name}: only {f.size} frequency point; a channel needs at least 2")
    if not np.all(np.isfinite(f)):
        raise ChannelError(f"{name}: the frequency axis holds NaN or infinite values")
    if f[0] < 0:
        raise ChannelError(f"{name}: negative frequency {f[0]} Hz")
    step = np.diff(f)
    if np.any(step <= 0):
        i = int(np.argmax(step <= 0))
        raise ChannelError(
            f"{name}: the frequency axis is not strictly increasing at point {i + 1} "
            f"({f[i]:.6g} Hz followed by {f[i + 1]:.6g} Hz)"
        )
    bad = ~np.isfinite(s).all(axis=(1, 2))
    if bad.any():
        i = int(np.argmax(bad))
        raise ChannelError(
            f"{name}: NaN or infinite S-parameters at {int(bad.sum())} frequency points, "
            f"first at {f[i]:.6g} Hz"
        )
