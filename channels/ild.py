"""Insertion-loss deviation against the IEEE 802.3 fitted insertion loss (Annex 93A):
:func:`insertion_loss_deviation` on a channel's ``Sdd21``, :class:`ILDResult` its figures
(``Channel.ild`` calls it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .errors import ChannelError

__all__ = ["ILDResult", "insertion_loss_deviation"]


@dataclass(frozen=True, eq=False)
class ILDResult:
    """Insertion-loss deviation against the IEEE 802.3 fitted insertion loss.

    ``IL_fit(f) = a0 + a1 sqrt(f) + a2 f + a4 f^2`` (f in GHz, IL in dB), a
    least-squares fit weighted by ``|Sdd21|`` per point as the IEEE COM code does
    (802.3 Annex 93A), over ``f_min_hz .. f_max_hz``. ``ILD = IL - IL_fit``.

    Attributes
    ----------
    f_hz, il_db, fit_db, ild_db : ndarray
        On the channel's points inside the fit band.
    coefficients : tuple of float
        ``(a0 [dB], a1 [dB/sqrt(GHz)], a2 [dB/GHz], a4 [dB/GHz^2])``.
    rms_ild_db : float
        Unweighted RMS of the ILD over the band.
    fom_ild_db : float or None
        802.3 FOM_ILD (93A-54) when a baud rate was given: the RMS of the ILD weighted
        by ``sinc^2(f/f_b) / (1 + (f/f_t)^4) / (1 + (f/f_r)^8)``, ``f_t = 0.2365 / T_t``,
        ``f_r = 0.75 f_b``.
    """

    f_hz: np.ndarray
    il_db: np.ndarray
    fit_db: np.ndarray
    ild_db: np.ndarray
    coefficients: tuple[float, float, float, float]
    rms_ild_db: float
    fom_ild_db: float | None

    def fitted_il_db(self, f_hz) -> np.ndarray:
        """The fitted insertion loss (dB) at any frequency (Hz)."""
        g = np.asarray(f_hz, dtype=float) / 1e9
        a0, a1, a2, a4 = self.coefficients
        return a0 + a1 * np.sqrt(g) + a2 * g + a4 * g * g

    def to_dict(self) -> dict:
        return {
            "f_min_hz": float(self.f_hz[0]),
            "f_max_hz": float(self.f_hz[-1]),
            "coefficients": list(self.coefficients),
            "rms_ild_db": self.rms_ild_db,
            "fom_ild_db": self.fom_ild_db,
        }


def insertion_loss_deviation(f_hz, sdd21, name: str, baud_hz: float | None = None, f_min_hz: float | None = None,
                             f_max_hz: float | None = None, tt_s: float = 9.6e-12) -> ILDResult:
    """The ILD of a channel whose ``Sdd21`` is given at ``f_hz`` (Hz); ``name`` for messages;
    the other arguments as :meth:`channels.Channel.ild`."""
    f_all = np.asarray(f_hz, dtype=float)
    lo = f_min_hz if f_min_hz is not None else f_all[f_all > 0][0]
    hi = f_max_hz if f_max_hz is not None else (baud_hz if baud_hz is not None else f_all[-1])
    if baud_hz is not None:
        baud_hz = check.number(baud_hz, "baud_hz", positive=True)
    lo, hi = float(lo), float(hi)
    if not (0 <= lo < hi):
        raise ChannelError(f"ILD band must satisfy 0 <= f_min < f_max, got {lo}..{hi} Hz")
    if hi > f_all[-1] * (1 + 1e-9):
        raise ChannelError(
            f"{name}: ILD band reaches {hi / 1e9:.4g} GHz, beyond the data ({f_all[-1] / 1e9:.4g} GHz)"
        )
    sel = (f_all >= lo) & (f_all <= hi) & (f_all > 0)
    if sel.sum() < 5:
        raise ChannelError(f"{name}: fewer than 5 points in the ILD band {lo}..{hi} Hz")
    f = f_all[sel]
    h = np.abs(sdd21[sel])
    il = -20 * np.log10(np.maximum(h, 1e-300))
    g = f / 1e9
    a = np.vstack([np.ones_like(g), np.sqrt(g), g, g * g]).T
    w = h  # IEEE COM weights each row by |S21|
    coef, *_ = np.linalg.lstsq(a * w[:, None], il * w, rcond=None)
    fit = a @ coef
    ild = il - fit
    fom = None
    if baud_hz is not None:
        ft = 0.2365 / tt_s
        fr = 0.75 * baud_hz
        wt = np.sinc(f / baud_hz) ** 2 / (1 + (f / ft) ** 4) / (1 + (f / fr) ** 8)
        fom = float(np.sqrt(np.mean(wt * ild**2)))
    return ILDResult(f, il, fit, ild, tuple(float(c) for c in coef), float(np.sqrt(np.mean(ild**2))), fom)
