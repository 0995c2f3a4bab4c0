"""Pulse and step responses: the time-domain view of a channel.

A pulse response here is the channel's answer to one unit-amplitude symbol of
duration ``UI = 1 / baud``, sampled ``samples_per_ui`` times per UI. It is computed
without any window: the channel's voltage transfer function on a uniform grid
from DC (:mod:`channels.grid`) times the spectrum of the sampled rectangular pulse
(``samples_per_ui`` ones, an ideal zero-order hold), times the optional Tx rise-time
and Rx bandwidth filters, through ``numpy.fft.irfft``. With an ideal channel the
result is the rectangle itself (peak exactly 1), and the sum of the samples one UI
apart equals the DC gain exactly, whatever the sampling phase.

Filters, as in IEEE 802.3 Annex 93A (COM):

* Tx rise time (93A-46): ``H_t(f) = exp(-2 (pi f T_r / 1.6832)^2)``, a Gaussian
  whose step has a 20-80 % rise time ``T_r``.
* Rx bandwidth (93A-20): an ``n``-th order Butterworth low-pass with its -3 dB
  point at ``f_r`` (COM: 4th order, ``f_r = 0.75 f_b`` for 802.3ck).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import signal

from . import _validate as check
from .errors import ChannelError
from .grid import GridInfo

__all__ = ["PulseResponse", "StepResponse", "tx_rise_filter", "rx_butterworth"]


def tx_rise_filter(f_hz: np.ndarray, rise_time_s: float) -> np.ndarray:
    """Gaussian Tx filter with 20-80 % rise time ``rise_time_s`` (IEEE 802.3 93A-46)."""
    return np.exp(-2.0 * (np.pi * np.asarray(f_hz) * rise_time_s / 1.6832) ** 2)


def rx_butterworth(f_hz: np.ndarray, bandwidth_hz: float, order: int = 4) -> np.ndarray:
    """Butterworth low-pass of ``order`` with -3 dB at ``bandwidth_hz`` (IEEE 802.3 93A-20 for order 4)."""
    b, a = signal.butter(order, 1.0, analog=True)
    _, h = signal.freqs(b, a, worN=np.asarray(f_hz, dtype=float) / bandwidth_hz)
    return h


def check_filters(rise_time_s: float | None, rx_bandwidth_hz: float | None, rx_filter_order: int) -> None:
    if rise_time_s is not None:
        check.number(rise_time_s, "rise_time_s", nonneg=True)
    if rx_bandwidth_hz is not None:
        check.number(rx_bandwidth_hz, "rx_bandwidth_hz", positive=True)
    if isinstance(rx_filter_order, bool) or not isinstance(rx_filter_order, (int, np.integer)) or not (
        1 <= rx_filter_order <= 12
    ):
        raise ChannelError(f"rx_filter_order must be an integer from 1 to 12, got {rx_filter_order}")


def filter_response(
    f_hz: np.ndarray, rise_time_s: float | None, rx_bandwidth_hz: float | None, rx_filter_order: int
) -> np.ndarray:
    h = np.ones(np.shape(f_hz), dtype=complex)
    if rise_time_s:
        h = h * tx_rise_filter(f_hz, rise_time_s)
    if rx_bandwidth_hz is not None:
        h = h * rx_butterworth(f_hz, rx_bandwidth_hz, rx_filter_order)
    return h


@dataclass(frozen=True, eq=False)
class PulseResponse:
    """A channel's response to one unit symbol (a rectangle one UI long, 1 V).

    Attributes
    ----------
    samples : ndarray
        The response in volts per volt of symbol amplitude, ``samples_per_ui``
        samples per UI.
    dt_s : float
        Sample spacing, ``1 / (baud_hz * samples_per_ui)``.
    baud_hz : float
        Symbol rate.
    samples_per_ui : int
    t0_s : float
        Time of ``samples[0]``; the symbol was launched over ``[0, UI)``.
    main_index : int
        Index of the main cursor: the peak (for an aggressor, the peak of
        ``|samples|``).
    name, kind : str
        The channel's name; ``"through"``, ``"next"`` or ``"fext"``.
    grid : GridInfo
        What the frequency grid under the response extrapolated.
    aggressors : tuple of PulseResponse
        The crosstalk pulses on the same time axis (same ``t0_s`` and ``dt_s``).
    """

    samples: np.ndarray
    dt_s: float
    baud_hz: float
    samples_per_ui: int
    t0_s: float
    main_index: int
    name: str
    kind: str
    grid: GridInfo
    aggressors: tuple["PulseResponse", ...] = field(default=())

    @property
    def ui_s(self) -> float:
        """Unit interval (s)."""
        return 1.0 / self.baud_hz

    @property
    def time_s(self) -> np.ndarray:
        """Sample times (s), on the same axis for the through and its aggressors."""
        return self.t0_s + self.dt_s * np.arange(self.samples.size)

    @property
    def main_cursor(self) -> float:
        """Value at the main cursor (V/V)."""
        return float(self.samples[self.main_index])

    @property
    def delay_s(self) -> float:
        """Time of the main cursor after the start of the symbol (s)."""
        return self.t0_s + self.main_index * self.dt_s

    @property
    def area_vs(self) -> float:
        """Area under the response (V*s per V); the DC gain times one UI."""
        return float(self.samples.sum() * self.dt_s)

    def ui_sum(self, phase_index: int | None = None) -> float:
        """Sum of the samples one UI apart through ``phase_index`` (default: the main
        cursor). Equals the channel's DC gain for any phase."""
        phase = self.main_index if phase_index is None else int(phase_index)
        return float(self.samples[phase % self.samples_per_ui :: self.samples_per_ui].sum())

    def cursors(self, n_pre: int = 4, n_post: int = 32, phase_index: int | None = None) -> np.ndarray:
        """Symbol-spaced cursors ``h[-n_pre] .. h[n_post]`` around ``phase_index``.

        ``phase_index`` defaults to the main cursor; pass the through's
        ``main_index`` to sample an aggressor at the victim's phase. Cursors that
        fall outside the record are zero.
        """
        if n_pre < 0 or n_post < 0:
            raise ChannelError(f"n_pre and n_post must be >= 0, got {n_pre}, {n_post}")
        centre = self.main_index if phase_index is None else int(phase_index)
        idx = centre + self.samples_per_ui * np.arange(-n_pre, n_post + 1)
        out = np.zeros(idx.size)
        ok = (idx >= 0) & (idx < self.samples.size)
        out[ok] = self.samples[idx[ok]]
        return out

    def to_dict(self, include_samples: bool = False) -> dict:
        """Plain-JSON summary (samples only when asked: they can be long)."""
        d = {
            "name": self.name,
            "kind": self.kind,
            "baud_hz": self.baud_hz,
            "samples_per_ui": self.samples_per_ui,
            "dt_s": self.dt_s,
            "t0_s": self.t0_s,
            "n_samples": int(self.samples.size),
            "main_index": self.main_index,
            "main_cursor": self.main_cursor,
            "delay_s": self.delay_s,
            "area_vs": self.area_vs,
            "cursors": self.cursors(2, 8).tolist(),
            "grid": self.grid.to_dict(),
            "aggressors": [a.to_dict(include_samples) for a in self.aggressors],
        }
        if include_samples:
            d["samples"] = self.samples.tolist()
        return d


@dataclass(frozen=True, eq=False)
class StepResponse:
    """Response to a unit step launched at t = 0 (for a reflection parameter, a TDR).

    Attributes
    ----------
    samples : ndarray
        Volts per volt of step.
    dt_s, t0_s : float
        Sample spacing and time of ``samples[0]`` (s).
    parameter : str
        Which mixed-mode parameter (``"sdd21"``, ``"sdd11"``, ...).
    reference_ohm : float
        Port reference impedance of that parameter (for a TDR's impedance).
    grid : GridInfo
    """

    samples: np.ndarray
    dt_s: float
    t0_s: float
    parameter: str
    reference_ohm: float
    grid: GridInfo

    @property
    def time_s(self) -> np.ndarray:
        return self.t0_s + self.dt_s * np.arange(self.samples.size)

    def impedance_ohm(self) -> np.ndarray:
        """For a reflection parameter: the TDR impedance ``Z_ref (1 + rho) / (1 - rho)``."""
        if self.parameter[-2] != self.parameter[-1]:
            raise ChannelError(f"impedance_ohm needs a reflection parameter, not {self.parameter}")
        rho = np.clip(self.samples, -0.999999, 0.999999)
        return self.reference_ohm * (1 + rho) / (1 - rho)

    def to_dict(self, include_samples: bool = False) -> dict:
        d = {
            "parameter": self.parameter,
            "dt_s": self.dt_s,
            "t0_s": self.t0_s,
            "n_samples": int(self.samples.size),
            "final_value": float(self.samples[-1]),
            "reference_ohm": self.reference_ohm,
            "grid": self.grid.to_dict(),
        }
        if include_samples:
            d["samples"] = self.samples.tolist()
        return d
