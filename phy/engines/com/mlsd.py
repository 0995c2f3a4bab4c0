"""COM with 802.3dj's MLSD reference receiver (P802.3dj/D3.3 178A.1.10): the DFE-based COM
with one DFE tap (``COM_DFE``) plus the advantage of a 1-tap MLSD (a Viterbi detector on
``1 + b D``, ``b`` the DFE tap) over the slicer, evaluated where the receiver's noise is
raised until ``COM_DFE`` falls by ``dCOM_an`` (3 dB: the draft's minimum COM).

1. **Added noise** (178A.1.10.1, 178A-53): the noise-and-interference PMF ``p_an`` is
   COM_DFE's with the Gaussian variance ``sigma_G^2 + g_an sigma_rn^2`` (``sigma_rn^2`` the
   receiver noise at the Rx FFE output), ``g_an`` found so that its ``DER_0`` quantile is
   ``10^(dCOM_an/20)`` times ``A_ni``.
2. **Error events** (178A-50..55, :func:`phy.engines.mlsd.error_events`): ``DER_MLSD``
   from ``p_an``, ``A_s``, ``b`` and the normalised autocorrelation of the noise and
   residual interference at the FFE output at whole-UI lags (178A-56: the noise terms
   through the Rx FFE, the added noise, the residual ISI).
3. **COM** (178A-49): ``COM = COM_DFE + 20 log10(-P_an^-1(DER_MLSD) / A_s)``, the
   quantile of ``p_an`` at ``DER_MLSD`` against ``A_s``; never below ``COM_DFE`` (an MLSD
   can fall back to slicing).

The gain is bounded by the shortest error event's (for Gaussian noise DER_MLSD is at least
its rate): ``20 log10(|u_1|^2 / sqrt(u_1' V u_1))``, ``10 log10(1 + b^2)`` (at most 2.3 dB for
``b <= 0.85``) with white noise, more where the FFE leaves the noise negatively correlated
from UI to UI; not by ``dCOM_an``, which only sets where it is evaluated. Sources as :mod:`phy.engines.mlsd` (PyChOpMarg 3.4.0's ``COM.calc_mlsd`` and
``solve_g_an``; its ``ieee_8023dj_d3p3.com_params`` sets ``mlsd`` for KR and CR, not for
C2C and C2M, with ``dCOM_an`` 3 dB).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from ..mlsd import MAX_EVENTS, RESOLVED, cdf_at, error_events
from ..pmf import discrete_sum_pmf, gauss_convolve

__all__ = ["DER_FLOOR", "added_noise", "com_mlsd", "noise_acf"]

#: The smallest ``DER_MLSD`` the voltage grid resolves (:data:`phy.engines.mlsd.RESOLVED`):
#: below it the PMFs' tails are the FFT's rounding, and no MLSD gain is claimed.
DER_FLOOR = RESOLVED


def _acf(x: np.ndarray, lags: int) -> np.ndarray:
    """``sum_k x_k x_(k+l)`` for ``l = 0 .. lags - 1``."""
    x = np.asarray(x, dtype=float)
    out = np.zeros(lags)
    if x.size:
        full = np.correlate(x, x, "full")[x.size - 1 :]
        out[: min(lags, full.size)] = full[:lags]
    return out


def noise_acf(var_x: float, isi: np.ndarray, slope: np.ndarray, jitter_ui2: float, crosstalk, tx_seq, tx_var: float,
              f_hz: np.ndarray, df_hz: float, rx_h2: np.ndarray, eta0: float, baud_hz: float, w_rx: np.ndarray,
              q_var: float, lags: int = MAX_EVENTS + 1) -> tuple[np.ndarray, np.ndarray]:
    """Autocorrelation (V^2) at the Rx FFE output of COM's noise and residual interference
    at lags 0 .. ``lags - 1`` UI (178A-56 without the added noise), and that of the receiver
    noise alone (what ``g_an`` scales).

    ``isi``: the residual ISI samples at the cursor's phase (the DFE's share taken off);
    ``slope``: ``h_J`` (V/UI), with ``jitter_ui2`` the jitter's variance (UI^2);
    ``crosstalk``: each aggressor's samples at its phase; ``tx_seq``: the samples the
    transmitter's noise reaches the detector through, of variance ``tx_var`` each (None:
    ``tx_var`` white, 93A-30); ``rx_h2``: ``|H_r H_ctle H_ffe|^2`` on ``f_hz`` with density
    ``eta0`` (V^2/Hz, one-sided, as COM's ``sigma_N^2``); ``q_var``: the quantiser's white
    noise at the FFE input through ``w_rx``."""
    acf = var_x * (_acf(isi, lags) + jitter_ui2 * _acf(slope, lags))
    for s in crosstalk:
        acf += var_x * _acf(s, lags)
    if tx_seq is None:
        acf[0] += tx_var
    else:
        acf += tx_var * _acf(tx_seq, lags)
    cos = np.cos(2 * np.pi * np.outer(np.arange(lags), f_hz[1:]) / baud_hz)
    rn = eta0 * df_hz * (cos @ rx_h2[1:])
    acf += rn + q_var * _acf(w_rx, lags)
    return acf, rn


def _quantile(p: np.ndarray, ystep: float, q: float) -> float:
    """Minus the ``q`` quantile of the PMF ``p`` (odd length, centred on 0, step ``ystep``)."""
    c = np.cumsum(p)
    return -float((int(np.searchsorted(c, q * c[-1])) - p.size // 2) * ystep)


def added_noise(pmf: np.ndarray, split: float, ystep: float, var_g: float, var_rn: float, der0: float,
                target: float) -> tuple[float, np.ndarray]:
    """``g_an`` and ``p_an`` (178A.1.10.1): the scale of the receiver noise ``var_rn`` (V^2)
    added to the Gaussian ``var_g`` at which the ``der0`` quantile of the discrete terms'
    PMF ``pmf`` (split variance ``split`` bins^2, grid step ``ystep``) with that Gaussian
    reaches ``-target`` (V): the bracket doubled from 1 (at most 60 times: a ``g_an``
    beyond ``2^60`` is not sought), then Brent's method to 1e-5 of ``g_an``. The PMF's
    transform is taken once; each trial multiplies it by the Gaussian's (the arithmetic of
    :func:`phy.engines.pmf.gauss_convolve`)."""
    n = pmf.size
    m = 1 << int(np.ceil(np.log2(2 * n)))
    F, f2 = np.fft.rfft(pmf, m), -2.0 * (np.pi * np.fft.rfftfreq(m)) ** 2

    def p_an(g: float) -> np.ndarray:
        s2 = max((var_g + g * var_rn) / ystep**2 - split, 0.0)
        p = np.clip(np.fft.irfft(F * np.exp(f2 * s2), m)[:n], 0.0, None)
        return p / p.sum()

    def short(g: float) -> float:  # > 0 while the quantile falls short of the target
        return target - _quantile(p_an(g), ystep, der0)

    g_lo, g_hi = 0.0, 1.0
    for _ in range(60):
        if short(g_hi) <= 0:
            break
        g_lo, g_hi = g_hi, 2.0 * g_hi
    if short(g_hi) < 0 < short(g_lo):
        tol = 1e-5 * g_hi
        g = optimize.brentq(short, g_lo, g_hi, xtol=tol)
        # the quantile moves in grid steps: the side of the step that reaches the target
        g_hi = g if short(g) <= 0 else min(g + 2 * tol, g_hi)
    return g_hi, p_an(g_hi)


def com_mlsd(com_dfe_db: float, a_s: float, a_ni: float, b: float, values, levels: int, var_g: float,
             var_rn: float, acf: np.ndarray, acf_rn: np.ndarray, der0: float, ystep: float,
             dcom_an_db: float = 3.0) -> dict:
    """COM with the MLSD (178A-49) from COM_DFE's terms at its chosen setting.

    Parameters
    ----------
    com_dfe_db, a_s, a_ni : float
        COM_DFE (dB), its signal and its ``DER_0`` interference-and-noise amplitude (V).
    b : float
        The DFE tap (normalised), the MLSD's target ``1 + b D``.
    values : list of ndarray
        COM_DFE's discrete terms (residual ISI, dual-Dirac jitter, crosstalk; V).
    var_g, var_rn : float
        COM_DFE's Gaussian variance and the receiver noise's share of it (V^2).
    acf, acf_rn : ndarray
        :func:`noise_acf`.

    Returns
    -------
    dict
        ``com_db`` (COM with the MLSD, at least ``com_dfe_db``), ``com_dfe_db``,
        ``delta_db`` (178A-49's term; when negative, at most that: the sum stops once past
        the slicer's error ratio), ``der_mlsd``, ``g_an``, ``b``, ``event_rates`` (the
        terms of 178A-50), ``events`` (how many summed), ``truncated``, ``note``.
    """
    out = {"com_dfe_db": float(com_dfe_db), "b": float(b), "dcom_an_db": float(dcom_an_db)}
    if var_rn <= 0 or not 0.0 <= b < 1.0 or a_ni <= 0:
        why = "no receiver noise to add" if var_rn <= 0 else ("no interference" if a_ni <= 0 else
                                                              f"DFE tap {b:.3g} outside [0, 1)")
        return {**out, "com_db": float(com_dfe_db), "delta_db": 0.0, "der_mlsd": None, "g_an": None,
                "event_rates": [], "events": 0, "truncated": False, "note": f"MLSD not evaluated: {why}"}
    target = a_ni * 10 ** (dcom_an_db / 20)
    # the grid holds the discrete terms and the largest Gaussian the search can need: one whose
    # own DER_0 quantile alone is twice the target
    q0 = float(np.sqrt(2.0) * special.erfcinv(2 * der0))
    sig_max = max(np.sqrt(var_g), 2.0 * target / q0)
    # COM's step (at most 10 uV) or A_s / 4000, the coarser: the gain to about 0.005 dB, the
    # searches' transforms several times shorter
    ystep = max(ystep, a_s / 4000)
    y, pmf, split = discrete_sum_pmf(values, np.linspace(-1, 1, levels), ystep, 10 * sig_max)
    ystep = float(y[1] - y[0])
    g_an, pa = added_noise(pmf, split, ystep, var_g, var_rn, der0, target)
    r = acf + g_an * acf_rn  # 178A-56
    # past the slicer's own error ratio at A_s the MLSD gains nothing: the sum stops there
    ev = error_events(pa, ystep, a_s, b, r / r[0], levels, stop_above=cdf_at(pa, ystep, -a_s))
    note, qa = "", _quantile(pa, ystep, min(ev.der, 1.0))
    if ev.der < DER_FLOOR:  # the PMF's tails are FFT rounding there: no gain claimed
        delta, note = 0.0, (f"MLSD: DER_MLSD {ev.der:.2g} below the grid's resolution ({DER_FLOOR:g}); "
                            "COM_DFE kept")
    elif qa <= 0:  # a closed eye: the union bound passes one half, no gain
        delta, note = 0.0, f"MLSD: DER_MLSD {ev.der:.3g} (a closed eye); COM_DFE kept"
    else:
        delta = 20 * np.log10(qa / a_s)
    return {**out, "com_db": float(com_dfe_db + max(delta, 0.0)), "delta_db": float(delta), "der_mlsd": ev.der,
            "g_an": float(g_an), "event_rates": ev.rates.tolist(), "events": int(ev.rates.size),
            "rho": (r[:4] / r[0]).tolist(), "truncated": bool(ev.truncated), "note": note}
