"""Pulse and step responses of a :class:`~channels.channel.Channel`.

:class:`ChannelTimeDomain` is a base of :class:`~channels.channel.Channel`: the
responses in time, computed from the channel's frequency data (``f``, ``sdd21``,
``delay_s``, ``loss_trend_db``, the aggressors).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _validate as check
from .errors import ChannelError
from .grid import check_pulse_grid, check_transmits, resample_response
from .response import PulseResponse, StepResponse, check_filters, filter_response

if TYPE_CHECKING:
    from .channel import Channel

__all__ = ["ChannelTimeDomain"]


class ChannelTimeDomain:
    """Pulse and step responses of a channel (a base of :class:`~channels.channel.Channel`)."""

    # ------------------------------------------------------------------ time domain
    def _spectrum(self, values: np.ndarray, f_new: np.ndarray) -> np.ndarray:
        return resample_response(self.f, values, f_new, self.delay_s, self.loss_trend_db, self.name)

    def pulse_response(
        self,
        baud_hz: float,
        samples_per_ui: int = 32,
        *,
        rise_time_s: float | None = None,
        rx_bandwidth_hz: float | None = None,
        rx_filter_order: int = 4,
        n_ui: int | None = None,
        require_nyquist: bool = True,
    ) -> PulseResponse:
        """Response to one unit symbol, with the aggressors' on the same time axis.

        Parameters
        ----------
        baud_hz : float
            Symbol rate (Bd); the UI is ``1 / baud_hz``.
        samples_per_ui : int
            Samples per UI (2 to 1024).
        rise_time_s : float, optional
            20-80 % rise time of a Gaussian Tx filter (IEEE 802.3 93A-46).
        rx_bandwidth_hz : float, optional
            -3 dB frequency of a Butterworth Rx filter (93A-20 uses 4th order at 0.75 baud).
        rx_filter_order : int
            Order of that Butterworth.
        n_ui : int, optional
            Record length in UI (default: a power of two covering three times the delay,
            where the first echo of the two ends arrives, plus 200 UI; at least 256).
        require_nyquist : bool
            Refuse (default) when the data stop below the Nyquist frequency ``baud / 2``.

        Raises
        ------
        ChannelError
            Bad parameters, or a grid that cannot give the response
            (:func:`channels.grid.check_pulse_grid`): fewer than 16 points, data that stop
            below Nyquist (below a quarter of it with ``require_nyquist=False``), or a
            frequency step too coarse: the data's time span ``1 / df`` (``df`` the largest
            step up to Nyquist) must hold the delay plus 64 UI, and 256 UI. (A delay longer
            than ``1 / (2 df)`` aliases in the data themselves and cannot be seen in them;
            the 256 UI floor refuses the grids where that is likely.) A through that
            transmits nothing (:func:`channels.grid.check_transmits`).
        """
        baud = check.number(baud_hz, "baud_hz", positive=True)
        if not isinstance(samples_per_ui, (int, np.integer)) or not 2 <= samples_per_ui <= 1024:
            raise ChannelError(f"samples_per_ui must be an integer from 2 to 1024, got {samples_per_ui!r}")
        check_filters(rise_time_s, rx_bandwidth_hz, rx_filter_order)
        if self.kind == "through":
            check_transmits(self.sdd21, self.name)
        tau = self.delay_s
        check_pulse_grid(self.f, baud, tau, self.name, require_nyquist=require_nyquist,
                         f_data_max_hz=self.grid.source_f_max_hz if self.grid else None)
        spu = int(samples_per_ui)
        need_ui = max(tau * baud + 64, 256)
        if n_ui is None:  # room for the triple-transit echo (3 delays) and 200 UI of tail
            n_ui = max(256, 1 << int(np.ceil(np.log2(3 * tau * baud + 200))))
        elif isinstance(n_ui, bool) or not isinstance(n_ui, (int, np.integer)) or n_ui < need_ui:
            raise ChannelError(
                f"n_ui must be an integer >= {int(np.ceil(need_ui))} (delay + 64 UI, at least 256), got {n_ui!r}"
            )
        n_fft = int(n_ui) * spu
        dt = 1.0 / (baud * spu)
        fgrid = np.fft.rfftfreq(n_fft, dt)
        rect = np.zeros(n_fft)
        rect[:spu] = 1.0
        shaping = np.fft.rfft(rect) * filter_response(fgrid, rise_time_s, rx_bandwidth_hz, rx_filter_order)
        n_roll = min(8, int(n_ui) // 16) * spu
        info = self._grid_info(fgrid)

        def one(ch: Channel, kind: str) -> PulseResponse:
            y = np.fft.irfft(ch._spectrum(ch.voltage_transfer(), fgrid) * shaping, n_fft)
            y = np.roll(y, n_roll)
            main = int(np.argmax(y)) if kind == "through" else int(np.argmax(np.abs(y)))
            return PulseResponse(y, dt, baud, spu, -n_roll * dt, main, ch.name, kind, info)

        aggs = tuple(one(a, a.kind) for a in self._aggressors)
        victim = one(self, self.kind)
        return PulseResponse(
            victim.samples, dt, baud, spu, victim.t0_s, victim.main_index, self.name, self.kind, info, aggs
        )

    def step_response(
        self,
        parameter: str = "sdd21",
        *,
        dt_s: float = 1e-12,
        duration_s: float | None = None,
        rise_time_s: float | None = None,
    ) -> StepResponse:
        """Response of a mixed-mode parameter to a unit step (``"sdd11"`` gives a TDR).

        Parameters
        ----------
        parameter : str
            ``"sdd21"``, ``"sdd11"``, ``"sdd22"``, ``"scd21"``...
        dt_s : float
            Sample spacing (s); the grid reaches ``1 / (2 dt)``.
        duration_s : float, optional
            Record length (s), the first sixteenth of it before the step; default 1.25x
            the round-trip delay plus 2 ns.
        rise_time_s : float, optional
            20-80 % rise time of a Gaussian filter on the step.
        """
        dt = check.number(dt_s, "dt_s", positive=True)
        check_filters(rise_time_s, None, 4)
        values = self.parameter(parameter)
        zref = self.reference_impedance_ohm[0 if parameter[-1] == "1" else 1]
        if duration_s is None:
            duration_s = 2.5 * self.delay_s + 2e-9
        duration_s = check.number(duration_s, "duration_s", positive=True)
        n = int(np.ceil(duration_s / dt))
        n += n % 2
        step = float(np.median(np.diff(self.f)))
        if 1.0 / step < duration_s:
            raise ChannelError(
                f"{self.name}: frequency step {step / 1e6:.4g} MHz spans only {1e9 / step:.4g} ns, "
                f"shorter than the requested {duration_s * 1e9:.4g} ns"
            )
        fgrid = np.fft.rfftfreq(n, dt)
        h = self._spectrum(values, fgrid) * filter_response(fgrid, rise_time_s, None, 4)
        n_roll = n // 16  # a pre-roll, so that a filtered (non-causal) edge starts from zero
        impulse = np.roll(np.fft.irfft(h, n), n_roll)
        return StepResponse(np.cumsum(impulse), dt, -n_roll * dt, parameter.lower(), zref, self._grid_info(fgrid))
