"""Loss figures and the summary of a :class:`~channels.channel.Channel`.

:class:`ChannelFigures` is a base of :class:`~channels.channel.Channel`: insertion and
return loss, group delay, the propagation delay and loss trend that the grid
extensions use, the insertion-loss deviation, and the plain-JSON summary. It reads
the channel's fields (``f``, ``sdd21``, ``_reference``...) and adds none.
"""
from __future__ import annotations

from functools import cached_property
from typing import Iterable

import numpy as np

from . import _validate as check
from .errors import ChannelError
from .grid import estimate_delay, fit_loss_trend
from .ild import ILDResult, insertion_loss_deviation

__all__ = ["ChannelFigures"]


class ChannelFigures:
    """Loss figures, delay and summary of a channel (a base of :class:`~channels.channel.Channel`)."""

    # ------------------------------------------------------------------ loss figures
    def _interp_db(self, values: np.ndarray, f_hz, what: str) -> np.ndarray:
        db = -20 * np.log10(np.maximum(np.abs(values), 1e-300))
        if f_hz is None:
            return db
        f = check.frequencies(f_hz)
        lo, hi = self.f[0], self.f[-1]
        if np.any(f < lo * (1 - 1e-12)) or np.any(f > hi * (1 + 1e-12)):
            raise ChannelError(
                f"{self.name}: {what} asked at {f.min():.6g}..{f.max():.6g} Hz, outside the data "
                f"({lo:.6g}..{hi:.6g} Hz); use .uniform() to extrapolate deliberately"
            )
        out = np.interp(f, self.f, db)
        return out if np.ndim(f_hz) else out[0]

    def insertion_loss_db(self, f_hz=None):
        """Differential insertion loss ``-20 log10 |Sdd21|`` (dB) at ``f_hz`` (default: every point).

        Between points the dB values are interpolated linearly.
        """
        return self._interp_db(self.sdd21, f_hz, "insertion loss")

    def return_loss_db(self, f_hz=None, port: int = 1):
        """Differential return loss ``-20 log10 |Sddii|`` (dB) at port 1 (input) or 2 (output)."""
        if port not in (1, 2):
            raise ChannelError(f"port must be 1 or 2, got {port!r}")
        return self._interp_db(self.sdd11 if port == 1 else self.sdd22, f_hz, "return loss")

    def group_delay_s(self, f_hz=None):
        """Group delay of Sdd21, ``-d(phase)/d(omega)`` (s). Meaningless where |Sdd21| is
        at the noise floor."""
        ph = np.unwrap(np.angle(self.sdd21))
        gd = -np.gradient(ph, 2 * np.pi * self.f)
        if f_hz is None:
            return gd
        f = check.frequencies(f_hz)
        out = np.interp(f, self.f, gd)
        return out if np.ndim(f_hz) else out[0]

    @cached_property
    def delay_s(self) -> float:
        """Propagation delay (s) from the phase slope of the through (see
        :func:`channels.grid.estimate_delay`); an aggressor reports its victim's."""
        if self._reference is not None:
            return self._reference.delay_s
        return estimate_delay(self.f, self.sdd21)

    @cached_property
    def loss_trend_db(self) -> tuple[float, float]:
        """``(a1, a2)`` of the through's loss trend ``a1 sqrt(f) + a2 f`` (dB, f in Hz), used
        to extend responses above the last frequency; an aggressor uses its victim's."""
        if self._reference is not None:
            return self._reference.loss_trend_db
        return fit_loss_trend(self.f, self.sdd21)

    def ild(
        self,
        baud_hz: float | None = None,
        f_min_hz: float | None = None,
        f_max_hz: float | None = None,
        tt_s: float = 9.6e-12,
    ) -> ILDResult:
        """Insertion-loss deviation against the IEEE 802.3 fitted insertion loss.

        Parameters
        ----------
        baud_hz : float, optional
            Signalling rate; when given the fit runs up to ``f_max = baud_hz`` (as the
            IEEE COM code does) and FOM_ILD is computed.
        f_min_hz, f_max_hz : float, optional
            Fit band (default: the first non-zero point, and ``baud_hz`` or the last point).
        tt_s : float
            Rise time ``T_t`` of the FOM_ILD Tx filter (s).
        """
        return insertion_loss_deviation(self.f, self.sdd21, self.name, baud_hz, f_min_hz, f_max_hz, tt_s)

    # ------------------------------------------------------------------ reporting
    def summary(self, bauds_hz: Iterable[float] = (53.125e9, 106.25e9)) -> dict:
        """Headline figures: band, delay, loss and return loss at each Nyquist, quality."""
        f_hi = self.f[-1]
        rows = []
        for b in bauds_hz:
            nyq = b / 2
            inside = self.f[0] <= nyq <= f_hi
            rows.append(
                {
                    "baud_hz": float(b),
                    "nyquist_hz": float(nyq),
                    "insertion_loss_db": float(self.insertion_loss_db(nyq)) if inside else None,
                    "return_loss_db": float(self.return_loss_db(nyq)) if inside else None,
                }
            )
        q = self.quality
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "ports": self.nports,
            "points": int(self.f.size),
            "f_min_hz": float(self.f[0]),
            "f_max_hz": float(f_hi),
            "port_order": self.port_order.to_dict() if self.port_order else None,
            "delay_s": self.delay_s,
            "nyquist": rows,
            "quality": q.to_dict(),
            "quality_problems": q.problems(),
            "aggressors": [{"name": a.name, "kind": a.kind} for a in self._aggressors],
            "grid": self.grid.to_dict() if self.grid else None,
        }

    def to_dict(self) -> dict:
        """Plain-JSON description (the :meth:`summary`)."""
        return self.summary()
