"""Frequency grids: the deliberate path from a file's band to a uniform grid from DC.

Time-domain work (pulse responses, TDR) needs S-parameters on a uniform grid that
starts at 0 Hz and reaches far beyond most files' last frequency. This module does
that in three documented steps, applied identically to every S-parameter of a
network (the steps are linear, so they commute with the mixed-mode transform):

1. **De-rotation.** Each S-parameter is multiplied by ``exp(+j 2 pi f tau)``, where
   ``tau`` is the through path's propagation delay (a least-squares fit of its
   unwrapped phase, :func:`estimate_delay`). The through becomes slowly varying and
   reflections rotate at most half as fast, so interpolation is accurate.
2. **DC and interpolation.** If the data start above 0 Hz, the DC value is the real
   part of the linear extrapolation of the de-rotated data from the first two points
   (S-parameters are real at DC). Between points, a cubic spline of the de-rotated
   complex data.
3. **Extension above the last frequency.** Each S-parameter keeps its last de-rotated
   value (so its phase keeps rotating with the through delay) and is attenuated by the
   increase of the through's fitted loss trend ``a1 sqrt(f) + a2 f`` (dB, with
   ``a1, a2 >= 0``: skin effect and dielectric loss, :func:`fit_loss_trend`). A lossless
   channel is continued flat; a lossy one keeps rolling off as its physics says.

:class:`GridInfo` records what was extrapolated so results can say so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import lsq_linear

from . import _validate as check
from .errors import ChannelError

__all__ = ["GridInfo", "MIN_BAND_FRACTION", "MIN_POINTS", "TRANSMISSION_FLOOR", "check_pulse_grid",
           "check_transmits", "estimate_delay", "fit_loss_trend", "resample_response", "uniform_frequencies"]

MIN_POINTS = 16
"""Fewest frequency points S-parameters may have to be moved onto another grid (and so to
give a pulse or step response, or a COM). The delay fit, the loss-trend fit and the spline
need a band of points; with two, a spline is a straight line and both fits give up
(zero delay, a flat extension), which is how a two-point file got a COM. Real files have
hundreds to thousands of points."""
MIN_BAND_FRACTION = 0.25
"""With ``require_nyquist=False`` a pulse response still needs data up to this fraction of
the Nyquist frequency: the loss-trend extension continues a measured band, it does not
replace one (a file to 10 MHz says nothing about 53 GHz)."""
TRANSMISSION_FLOOR = 1e-6
"""A through whose |Sdd21| stays below this (-120 dB, the numerical floor of the loss-trend
fit) at every frequency transmits nothing: an open, or an all-zero file."""


def check_points(f: np.ndarray, what: str = "the data") -> None:
    """Refuse fewer than :data:`MIN_POINTS` frequency points (``what`` names the data)."""
    if f.size < MIN_POINTS:
        span = f" ({f[0] / 1e9:.4g} to {f[-1] / 1e9:.4g} GHz)" if f.size else ""
        raise ChannelError(
            f"{what}: {f.size} frequency points{span}; moving S-parameters onto another grid (for a pulse or step "
            f"response, a COM, a resample) needs at least {MIN_POINTS}: the delay fit, the loss-trend fit and the "
            "spline between points need a band of points"
        )


def check_pulse_grid(f: np.ndarray, baud_hz: float, delay_s: float, what: str, *,
                     f_data_max_hz: float | None = None, require_nyquist: bool = True) -> None:
    """Refuse a grid that cannot give a pulse response at ``baud_hz``, stating the rule broken.

    The rules (frequencies ``f`` in Hz; ``f_data_max_hz``, default ``f[-1]``, is where the
    measured data end when ``f`` was already extended):

    * points: at least :data:`MIN_POINTS`;
    * span: data up to the Nyquist frequency ``baud / 2`` (with ``require_nyquist=False``,
      up to :data:`MIN_BAND_FRACTION` of it, the rest extended by the loss trend);
    * step: the largest step up to the Nyquist frequency ``df`` must give a time span
      ``1 / df`` that holds the delay plus 64 UI, and 256 UI (a longer delay than ``1 / (2 df)``
      aliases in the data themselves and cannot be seen in them).
    """
    f = np.asarray(f, dtype=float)
    check_points(f, what)
    nyq = baud_hz / 2
    f_hi = float(f[-1]) if f_data_max_hz is None else float(f_data_max_hz)
    if require_nyquist and f_hi < nyq * (1 - 1e-9):
        raise ChannelError(
            f"{what}: the data end at {f_hi / 1e9:.4g} GHz, below the Nyquist frequency of {baud_hz / 1e9:.6g} GBd "
            f"({nyq / 1e9:.4g} GHz); pass require_nyquist=False to extend it by the loss trend"
        )
    if f_hi < MIN_BAND_FRACTION * nyq:
        raise ChannelError(
            f"{what}: the data end at {f_hi / 1e9:.4g} GHz; a pulse response at {baud_hz / 1e9:.6g} GBd needs data "
            f"to at least {MIN_BAND_FRACTION:g} of its Nyquist frequency ({MIN_BAND_FRACTION * nyq / 1e9:.4g} GHz) "
            "even when the rest is extended by the loss trend"
        )
    need_ui = max(delay_s * baud_hz + 64, 256)
    top = min(int(np.searchsorted(f, min(f_hi, nyq))), f.size - 1)
    step = float(np.max(np.diff(f[:top + 1]))) if top >= 1 else float(f[1] - f[0])
    if 1.0 / step < need_ui / baud_hz:
        raise ChannelError(
            f"{what}: frequency step {step / 1e6:.4g} MHz is too coarse for a pulse response at "
            f"{baud_hz / 1e9:.6g} GBd: its time span 1/df = {1e9 / step:.4g} ns is shorter than the delay "
            f"plus 64 UI and than 256 UI ({need_ui / baud_hz * 1e9:.4g} ns): a step of at most "
            f"{baud_hz / need_ui / 1e6:.4g} MHz up to the Nyquist frequency is needed"
        )


def check_transmits(h: np.ndarray, what: str) -> None:
    """Refuse a through whose transfer ``h`` stays below :data:`TRANSMISSION_FLOOR`."""
    peak = float(np.max(np.abs(h))) if np.size(h) else 0.0
    if not peak >= TRANSMISSION_FLOOR:
        raise ChannelError(
            f"{what}: the channel transmits nothing: |Sdd21| stays below {TRANSMISSION_FLOOR:g} "
            f"({20 * np.log10(TRANSMISSION_FLOOR):.0f} dB) at every frequency (largest {peak:.3g}): an open or "
            "all-zero through has no pulse response (crosstalk files load with kind='next' or 'fext')"
        )


@dataclass(frozen=True)
class GridInfo:
    """What a move onto a new grid did (units: Hz, s, dB).

    Attributes
    ----------
    f_min_hz, f_max_hz, n_points : float, float, int
        The new grid.
    source_f_min_hz, source_f_max_hz : float
        The band the data really cover.
    dc_extrapolated : bool
        True when the data started above 0 Hz and the grid reaches below it.
    extrapolated_above_hz : float or None
        The frequency above which values are an extension (None: none needed).
    reference_delay_s : float
        Delay removed before interpolation and restored after.
    loss_trend_db : tuple of float
        ``(a1, a2)`` of the extension's loss trend ``a1 sqrt(f) + a2 f`` in dB, f in Hz.
    method : str
        A one-line description.
    """

    f_min_hz: float
    f_max_hz: float
    n_points: int
    source_f_min_hz: float
    source_f_max_hz: float
    dc_extrapolated: bool
    extrapolated_above_hz: float | None
    reference_delay_s: float
    loss_trend_db: tuple[float, float]
    method: str = (
        "de-rotated by the through delay; DC by linear extrapolation (real part); cubic spline "
        "inside the band; above it the last value attenuated by the fitted loss trend"
    )

    def to_dict(self) -> dict:
        d = asdict(self)
        d["loss_trend_db"] = list(self.loss_trend_db)
        return d


def estimate_delay(f: np.ndarray, h: np.ndarray, floor: float = 0.03) -> float:
    """Propagation delay (s) of a transfer function from its phase slope.

    Least-squares fit of the unwrapped phase ``-2 pi f tau + phi0`` over the band
    from the first point up to where ``|h|`` first falls below ``floor`` (default
    -30 dB, below which the phase of measured data turns to noise). Returns 0.0
    when fewer than three points qualify (crosstalk, or no transmission).
    """
    f = np.asarray(f, dtype=float)
    h = np.asarray(h)
    mag = np.abs(h)
    keep = mag >= floor
    if keep.size and not keep[0]:
        return 0.0
    stop = int(np.argmin(keep)) if not keep.all() else keep.size
    if stop < 3:
        return 0.0
    ph = np.unwrap(np.angle(h[:stop]))
    ff = f[:stop]
    a = np.vstack([ff, np.ones_like(ff)]).T
    slope = np.linalg.lstsq(a, ph, rcond=None)[0][0]
    return float(max(0.0, -slope / (2 * np.pi)))


def fit_loss_trend(f: np.ndarray, h: np.ndarray) -> tuple[float, float]:
    """Fit ``IL(f) = a0 + a1 sqrt(f) + a2 f`` (dB) with ``a1, a2 >= 0`` to a through.

    Used only to continue a response above its last frequency. Points at DC and
    below -120 dB (numerical floor) are ignored. Returns ``(a1, a2)`` in dB/sqrt(Hz)
    and dB/Hz.
    """
    f = np.asarray(f, dtype=float)
    mag = np.abs(np.asarray(h))
    keep = (f > 0) & (mag > 1e-6)
    if keep.sum() < 3:
        return (0.0, 0.0)
    ff, il = f[keep], -20 * np.log10(mag[keep])
    scale = ff[-1]
    a = np.vstack([np.ones_like(ff), np.sqrt(ff / scale), ff / scale]).T
    sol = lsq_linear(a, il, bounds=([-np.inf, 0.0, 0.0], [np.inf, np.inf, np.inf]))
    _, b1, b2 = sol.x
    return (float(b1 / np.sqrt(scale)), float(b2 / scale))


def uniform_frequencies(f_max_hz: float, df_hz: float) -> np.ndarray:
    """A uniform grid ``0, df, ..., f_max`` (f_max rounded to a whole number of steps)."""
    f_max_hz = check.number(f_max_hz, "f_max_hz", positive=True)
    df_hz = check.number(df_hz, "df_hz", positive=True)
    n = int(round(f_max_hz / df_hz))
    if n < 2:
        raise ChannelError(f"a grid to {f_max_hz} Hz in steps of {df_hz} Hz has fewer than 3 points")
    if n > 50_000_000:
        raise ChannelError(f"a grid of {n} points (f_max={f_max_hz} Hz, df={df_hz} Hz) is too large")
    return np.arange(n + 1) * df_hz


def resample_response(
    f: np.ndarray,
    s: np.ndarray,
    f_new: np.ndarray,
    delay_s: float,
    loss_trend_db: tuple[float, float],
    what: str = "the channel data",
) -> np.ndarray:
    """Move S-parameters ``s`` (shape ``(F, ...)``) from ``f`` onto ``f_new``.

    See the module docstring for the three steps. ``f_new`` may start at DC and run
    past ``f[-1]``; it must not be negative. ``f`` must hold at least :data:`MIN_POINTS`
    points (:class:`ChannelError` otherwise, naming ``what``).
    """
    f = np.asarray(f, dtype=float)
    f_new = np.asarray(f_new, dtype=float)
    check_points(f, what)
    if np.any(f_new < 0):
        raise ChannelError("frequencies must not be negative")
    shape = (-1,) + (1,) * (s.ndim - 1)
    x = s * np.exp(2j * np.pi * f * delay_s).reshape(shape)
    if f[0] > 0:
        slope = (x[1] - x[0]) / (f[1] - f[0])
        x_dc = (x[0] - f[0] * slope).real.astype(complex)
        f = np.concatenate([[0.0], f])
        x = np.concatenate([x_dc[None], x], axis=0)
    out = np.empty((f_new.size,) + s.shape[1:], dtype=complex)
    inside = f_new <= f[-1]
    if inside.any():
        out[inside] = CubicSpline(f, x, axis=0)(f_new[inside])
    above = ~inside
    if above.any():
        a1, a2 = loss_trend_db
        fa = f_new[above]
        extra_db = a1 * (np.sqrt(fa) - np.sqrt(f[-1])) + a2 * (fa - f[-1])
        out[above] = x[-1][None] * (10.0 ** (-extra_db / 20.0)).reshape(shape)
    out *= np.exp(-2j * np.pi * f_new * delay_s).reshape(shape)
    dc = f_new == 0
    if dc.any():
        out[dc] = out[dc].real
    return out
