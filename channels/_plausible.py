"""Does a Touchstone file's header tell the truth about its data?

A file whose option line names the wrong unit or format still parses: scikit-rf reads
the numbers as the header says and returns a wrong network without a word. These checks
compare the header with what the numbers look like, as a signal-integrity engineer would
on opening the file:

Frequency axis (the unit)
    A channel's data end between about 1 GHz and a few hundred GHz; no VNA or channel file
    goes above 1 THz. Last frequency above 1 THz, or below 1 MHz: an error (a file in Hz
    labelled GHz ends at 6e19 Hz; one in GHz labelled Hz ends at 60 Hz with 10 mHz steps).
    Between 1 MHz and 1 GHz with a unit smaller than GHz: a warning, since both readings
    are possible (a low-frequency measurement, or a file in GHz labelled MHz). The message
    names the unit under which the axis becomes a channel's (its last point within 1 GHz
    to 1 THz), with the axis it would give.
MA data
    Magnitudes are never negative: any negative one is an error (RI data labelled MA when
    the "angles" never exceed 1 degree; dB data when no "magnitude" is above +1 and some
    are below -3).
    Angles that never exceed 1 degree up to 1 GHz or more (1 degree at 1 GHz is 2.8 ps of
    delay, half a millimetre of board) with no negative magnitude: a warning (RI data whose
    real parts happen to be positive, or a near-ideal element).
DB data
    A passive multi-port has at least one entry far below 0 dB (a port cannot reflect and
    pass all its power at once). Every value of a 2-or-more-port above -1.5 dB is an error:
    RI data (second column never beyond +-1) or MA data (first column between 0 and 1)
    labelled DB. Mostly positive values (gain), or tiny angles as above: warnings.
RI data
    Real and imaginary parts of a passive channel's S are within +-1 (measured files reach
    1.14). An |S| above 10 (+20 dB) whose first column lies within [0, 1.5] (magnitudes) or
    never above +1 with some values below -3 (dB values) is MA or DB data labelled RI: an
    error.
Option line
    One value of each field on the line (two units, formats, parameters or resistances: an
    error, naming which one the data fit); later option lines that disagree with the first
    (Touchstone uses the first): a warning; no option line at all: the defaults GHz, S, MA,
    R 50 apply, a warning when the data are plausible under them, an error naming the
    missing line when they are not.

The thresholds are far from every real file in ../shared/channels (which load without a
new warning) and from what scikit-rf writes: real MA and DB angles span +-180 degrees,
real magnitudes are >= 0, real dB data reach -20 dB or lower in their reflections, real
axes end at 40 to 70 GHz. Y and Z files get the axis and option-line checks only (their
values are not bounded like S).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from ._tsfile import FREQ_UNITS, UNIT_SPELLING, OptionLine
from .errors import ChannelError, TouchstoneWarning

F_CEILING_HZ = 1e12  # above: no channel, no VNA
F_FLOOR_HZ = 1e6  # a channel file ending below 1 MHz has the wrong unit
F_CHANNEL_HZ = 1e9  # channel files reach at least about 1 GHz
ANGLE_TINY_DEG = 1.0  # a real angle column turns through far more
NEAR_UNITY_DB = -1.5  # every entry above this: every port reflects and passes nearly all
RI_IMPOSSIBLE = 10.0  # |S| above this (+20 dB) is no passive channel
MOSTLY = 0.5


@dataclass(frozen=True)
class Finding:
    """One disagreement between header and data: an error or a warning, with the unit or
    format that would fix it when one does."""

    error: bool
    text: str
    unit: str | None = None
    fmt: str | None = None


def fmt_hz(x: float) -> str:
    """A frequency for a message: ``60 GHz``, ``10 mHz``, ``6e+19 Hz``."""
    ax = abs(x)
    if ax == 0:
        return "0 Hz"
    if ax >= 1e12 or ax < 1e-6:
        return f"{x:.3g} Hz"
    for m, u in ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1.0, "Hz"), (1e-3, "mHz"), (1e-6, "uHz")):
        if ax >= m:
            return f"{x / m:.4g} {u}"
    return f"{x:.3g} Hz"


def _axis(f_hz: np.ndarray, scale: float = 1.0) -> str:
    step = float(np.median(np.diff(f_hz))) * scale
    return f"{fmt_hz(f_hz[0] * scale)} to {fmt_hz(f_hz[-1] * scale)} in {fmt_hz(step)} steps"


def _unit_giving(raw_last: float, unit: str, lo: float, hi: float) -> str | None:
    """Another Touchstone unit under which the last raw frequency lands in ``[lo, hi)`` Hz."""
    return next((u for u, m in FREQ_UNITS.items() if u != unit and lo <= raw_last * m < hi), None)


# ------------------------------------------------------------------------- frequency axis
def frequency_findings(f_hz: np.ndarray, opt: OptionLine) -> list[Finding]:
    """Is the axis, in the header's unit, a channel's? (module docstring, "Frequency axis")."""
    last = float(f_hz[-1])
    raw_last = last / opt.mult
    unit = UNIT_SPELLING[opt.unit]

    def other(u: str) -> str:
        return (f"read as {UNIT_SPELLING[u]} the axis runs from {_axis(f_hz, FREQ_UNITS[u] / opt.mult)}: "
                f"the unit is probably {UNIT_SPELLING[u]}, not {unit}")

    if last > F_CEILING_HZ or last < F_FLOOR_HZ:
        u = _unit_giving(raw_last, opt.unit, F_CHANNEL_HZ, F_CEILING_HZ) or _unit_giving(
            raw_last, opt.unit, F_FLOOR_HZ, F_CHANNEL_HZ)
        if last > F_CEILING_HZ:
            shown = fmt_hz(last) if opt.unit == "hz" else f"{raw_last:.6g} {unit} = {fmt_hz(last)}"
            what = f"the last frequency, {shown}, is above 1 THz, implausible for a channel"
        else:
            what = (f"the axis runs from {_axis(f_hz)}, implausible for a channel "
                    "(channel data reach GHz)")
        fix = other(u) if u else ("no Touchstone unit (Hz to GHz) makes it a channel's band: "
                                  "is the first column a frequency?")
        return [Finding(True, f"{what}; {fix}", unit=u)]
    if last < F_CHANNEL_HZ and opt.unit != "ghz":
        u = _unit_giving(raw_last, opt.unit, F_CHANNEL_HZ, F_CEILING_HZ)
        if u:
            return [Finding(False, f"the axis runs from {_axis(f_hz)}, low for a channel: if the file is in "
                                   f"{UNIT_SPELLING[u]}, it runs from {_axis(f_hz, FREQ_UNITS[u] / opt.mult)} "
                                   f"(read as {unit}, as the header says)", unit=u)]
    return []


# ---------------------------------------------------------------------------- data format
def _looks_db(first: np.ndarray) -> bool:
    """First numbers of the pairs as a passive channel's dB values are: none above +1 dB and
    some below -3 dB (outside what magnitudes or real parts can be)."""
    return bool(first.max() <= 1.0 and first.min() < -3.0)


def _tiny_angles(bmax: float, f_max: float) -> str:
    delay_ps = 1e12 / (360.0 * f_max)
    return (f"no angle exceeds {bmax:.2g} degrees up to {fmt_hz(f_max)}, where {delay_ps:.2g} ps of delay "
            "already turns the phase by 1 degree: the pairs look like RI (real, imaginary)")


def format_findings(a: np.ndarray, b: np.ndarray, f_hz: np.ndarray, fmt: str, nports: int) -> list[Finding]:
    """Do the raw S-parameter pairs ``(a, b)`` (arrays ``(points, n, n)``) look like ``fmt``?
    (module docstring, "MA data", "DB data", "RI data")."""
    fin = np.isfinite(a) & np.isfinite(b)
    # (all finite, the common case: the same values in the same C order as a[fin], without the copies)
    av, bv = (a.reshape(-1), b.reshape(-1)) if fin.all() else (a[fin], b[fin])
    if av.size == 0:
        return []
    bmax = float(np.max(np.abs(bv)))
    f_max = float(f_hz[-1])
    tiny = 0 < bmax <= ANGLE_TINY_DEG and f_max >= F_CHANNEL_HZ
    if fmt == "ma":
        neg = fin & (a < 0)
        if neg.any():
            p, i, j = np.unravel_index(int(np.argmax(neg)), a.shape)
            if bmax <= ANGLE_TINY_DEG:
                hint, sfmt = f", and no angle exceeds {bmax:.2g} degrees: these are RI (real, imaginary) pairs", "ri"
            elif _looks_db(av):
                hint, sfmt = (f", none is above {av.max():.3g} and some reach {av.min():.3g}, as dB values do: "
                              "these are DB (dB, angle) pairs"), "db"
            else:
                hint, sfmt = ": a magnitude cannot be negative, so the data are not MA or are damaged", None
            return [Finding(True, f"{int(neg.sum())} of {av.size} magnitudes are negative (the first, "
                                  f"{a[p, i, j]:.4g}, in S{i + 1}{j + 1} at {fmt_hz(f_hz[p])}){hint}", fmt=sfmt)]
        if tiny:
            return [Finding(False, _tiny_angles(bmax, f_max) + " (read as MA, as the header says)", fmt="ri")]
        return []
    if fmt == "db":
        if nports >= 2 and av.min() >= NEAR_UNITY_DB:
            with np.errstate(over="ignore"):
                power = float(np.max(np.where(fin, 10 ** (a / 10), 0.0).sum(axis=1)))
            if bmax <= ANGLE_TINY_DEG:
                hint, sfmt = (f"; the second numbers never exceed {bmax:.2g} where angles in degrees turn "
                              "through +-180: these are RI (real, imaginary) pairs"), "ri"
            elif av.min() >= 0 and av.max() <= 1.5:
                hint, sfmt = (f"; all lie between 0 and {av.max():.3g}, as magnitudes do: "
                              "these are MA (magnitude, angle) pairs"), "ma"
            else:
                hint, sfmt = "", None
            return [Finding(True, f"every value is above {NEAR_UNITY_DB:g} dB (from {av.min():.3g} to "
                                  f"{av.max():.3g} dB): each port would reflect and pass nearly all the power it "
                                  f"receives (up to {power:.2g} times it), impossible for a passive channel{hint}",
                            fmt=sfmt)]
        positive = float(np.mean(av > 0))
        if positive > MOSTLY:
            return [Finding(False, f"{positive:.0%} of the dB values are above 0 dB, gain that a passive channel "
                                   "does not have: check the format (read as DB, as the header says)")]
        if tiny:
            return [Finding(False, _tiny_angles(bmax, f_max) + " (read as DB, as the header says)", fmt="ri")]
        return []
    # RI
    smax = float(np.max(np.hypot(av, bv)))
    if smax > RI_IMPOSSIBLE:
        if av.min() >= 0 and av.max() <= 1.5:
            hint, sfmt = (f"the first numbers all lie between 0 and {av.max():.3g} and the second reach "
                          f"{bmax:.4g}, as magnitudes and angles in degrees do: these are MA pairs"), "ma"
        elif _looks_db(av):
            hint, sfmt = (f"the first numbers lie between {av.min():.3g} and {av.max():.3g} and the second reach "
                          f"{bmax:.4g}, as dB values and angles in degrees do: these are DB pairs"), "db"
        else:
            return []
        return [Finding(True, f"as real and imaginary parts the largest |S| is {smax:.4g} "
                              f"({20 * np.log10(smax):+.0f} dB), impossible for a passive channel; {hint}",
                        fmt=sfmt)]
    return []


# --------------------------------------------------------------------------- option line
def _conflict_findings(opt: OptionLine, f_hz: np.ndarray, raw, nports: int) -> list[Finding]:
    out = []
    raw_f = f_hz / opt.mult
    for field, first, second in opt.conflicts:
        if field == "unit":
            fits = [u for u in (first, second) if not any(
                x.error for x in frequency_findings(raw_f * FREQ_UNITS[u], dataclasses.replace(opt, unit=u)))]
            shown = f"{UNIT_SPELLING[first]} and {UNIT_SPELLING[second]}"
            what = f"names two frequency units, {shown}"
            if len(fits) == 1:
                what += f"; the data fit {UNIT_SPELLING[fits[0]]} ({_axis(raw_f * FREQ_UNITS[fits[0]])})"
            elif not fits:
                u = _unit_giving(float(raw_f[-1]), first, F_CHANNEL_HZ, F_CEILING_HZ)
                what += "; the data fit neither"
                if u is not None:
                    what += f", but {UNIT_SPELLING[u]} ({_axis(raw_f * FREQ_UNITS[u])})"
                    fits = [u]
            out.append(Finding(True, what, unit=fits[0] if len(fits) == 1 else None))
        elif field == "fmt":
            what = f"names two data formats, {first.upper()} and {second.upper()}"
            fits = [] if raw is None else [
                x for x in (first, second) if not any(e.error for e in format_findings(*raw, f_hz, x, nports))]
            if len(fits) == 1:
                what += f"; the data fit {fits[0].upper()}"
            out.append(Finding(True, what, fmt=fits[0] if len(fits) == 1 else None))
        elif field == "param":
            out.append(Finding(True, f"names two parameter types, {first.upper()} and {second.upper()}: "
                                     "keep the one the file was written with"))
        else:
            out.append(Finding(True, f"names two reference resistances, {first} and {second} ohm: "
                                     "keep the one the file was written with"))
    return out


def _outside_stacklevel() -> int:
    """``stacklevel`` for a warning, pointing at the first caller outside this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    return level


def check(opt: OptionLine, f_hz: np.ndarray, raw, nports: int, name: str) -> None:
    """Raise :class:`ChannelError` for the header's lies, warn with :class:`TouchstoneWarning`
    where both readings are plausible; ``raw`` is ``(a, b)`` for S-parameter data, else None."""
    findings = _conflict_findings(opt, f_hz, raw, nports)
    fields = {c[0] for c in opt.conflicts}
    if "unit" not in fields:  # else the conflict's own finding says which unit fits
        findings += frequency_findings(f_hz, opt)
    if raw is not None and "fmt" not in fields:
        findings += format_findings(*raw, f_hz, opt.fmt, nports)
    for lineno, text in opt.later:
        findings.append(Finding(False, f"line {lineno} holds another option line, {text!r}, which Touchstone "
                                       "ignores: only the first applies"))
    errors = [x for x in findings if x.error]
    chosen = errors or [x for x in findings if not x.error]
    unit = next((x.unit for x in chosen if x.unit), None)
    fmt = next((x.fmt for x in chosen if x.fmt), None)
    fix = f"; if so, write the option line {opt.spelled(unit, fmt)!r}" if (unit or fmt) else ""
    if errors:
        if not opt.present and not fix:
            fix = "; add the option line the file was written with"
        raise ChannelError(f"{name}: {opt.where}: " + "; ".join(x.text for x in errors) + fix)
    if not opt.present and not chosen:
        chosen.append(Finding(False, f"the data are plausible under them ({_axis(f_hz)}) but nothing "
                                     f"confirms it: add the option line, e.g. {opt.spelled()!r}"))
    if chosen:
        warnings.warn(f"{name}: {opt.where}: " + "; ".join(x.text for x in chosen) + fix,
                      TouchstoneWarning, stacklevel=_outside_stacklevel())
