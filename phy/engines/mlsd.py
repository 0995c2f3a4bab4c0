"""The 1-tap MLSD (maximum-likelihood sequence detector, a Viterbi detector on the target
``1 + b D``) of 802.3dj's reference receivers (P802.3dj/D3.3 178A.1.10), for COM
(:mod:`phy.engines.com.mlsd`) and for the statistical eye (:func:`eye_mlsd`).

The detector sees the equalised samples ``y_n = h0 (a_n + b a_(n-1)) + r_n``: the first
post-cursor ``b h0`` (what a one-tap DFE would cancel, ``b`` its tap) is kept as signal, and
``r_n`` is the noise and residual interference. Its errors are error events: sequences of
``j`` consecutive one-level symbol errors of alternating sign (the closest pairs of paths
when ``0 < b < 1``), whose output difference is ``2 A_s u_j`` with

    u_j = e_j * (1, b) = (1, -(1 - b), (1 - b), ..., (-1)^(j-1) (1 - b), (-1)^(j+1) b)

(178A-51; ``A_s`` is half the spacing of adjacent levels). A Euclidean-metric Viterbi
detector prefers the wrong path when the noise projected on ``u_j`` passes half the
distance, ``u_j . r > A_s |u_j|^2``. With ``r`` of marginal PMF ``p`` and normalised
autocorrelation ``rho`` at whole-UI lags, the projection's PMF is taken as that of
``sum_i u_i r_i`` for independent ``r_i`` (the convolution of ``p`` scaled by each
``u_i``, 178A-54/55), its spread corrected for the correlation by comparing it with
``A_s |u_j|^3 / sqrt(u_j' V u_j)``, ``V`` the Toeplitz matrix of ``rho``. The error-event
rate is the union bound (178A-50)

    DER_MLSD = sum_j ((L - 1) / L)^(j - 1) P_j(-A_s |u_j|^3 / sqrt(u_j' V u_j)),

``((L - 1) / L)^(j - 1)`` the chance that the data allow each further error of the event.
Each event of length ``j`` is ``j`` symbol errors in a row (a burst; what the FEC sees).

Sources: P802.3dj/D3.3 178A.1.10 (equations 178A-49 to 178A-56) as PyChOpMarg 3.4.0
transcribes it (``pychopmarg/mlsd.py``: ``der_mlsd``, ``scale_pmf``, ``cdf_at``;
``pychopmarg/com.py``: ``COM.calc_mlsd``), which follows MATLAB COM's ``MLSD``/``MLSE``
switch and ``CDF_ev``; the sum stops, as there, once a term adds less than ``rel_tol``
of the sum, or at ``max_events`` (the tested truncation bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..errors import ConfigError

__all__ = ["EyeMlsd", "MlsdEvents", "cdf_at", "error_events", "eye_mlsd", "scale_pmf"]

#: The longest error event summed (the truncation bound; the terms fall about
#: geometrically, by ``(L-1)/L`` and the growing distance, so the default tolerance stops the
#: sum well before it on any channel we measured: 3 to 12 events).
MAX_EVENTS = 48


def scale_pmf(p: np.ndarray, a: float) -> np.ndarray:
    """PMF of ``a Y`` on the same odd-length grid centred on 0 as ``p`` (the PMF of ``Y``):
    the distribution function of ``Y``, linear within each bin, read at the bin edges over
    ``a`` (a PMF again, its mass conserved)."""
    n = p.size
    if a == 0.0:
        out = np.zeros(n)
        out[n // 2] = 1.0
        return out
    if a < 0.0:
        p, a = p[::-1], -a
    edges = np.arange(n + 1) - n / 2.0  # in bins; bin k spans edges k .. k+1, 0 V at the middle
    cdf = np.concatenate([[0.0], np.cumsum(p)])
    out = np.diff(np.interp(edges / a, edges, cdf, left=0.0, right=cdf[-1]))
    return out / out.sum()


def cdf_at(p: np.ndarray, ystep: float, y: float, interpolate: bool = False) -> float:
    """``P(Y <= y)`` for the PMF ``p`` on an odd-length grid of step ``ystep`` centred on 0:
    the distribution function at the first grid point at or above ``y`` (MATLAB COM's
    ``CDF_ev`` as PyChOpMarg's ``cdf_at`` reads it), or with ``interpolate`` linear between
    the two grid points around ``y`` (as the statistical eye reads its own distribution;
    on a coarse grid the first reads a steep tail up to a bin high)."""
    x = y / ystep + p.size // 2
    if interpolate:
        return float(np.interp(x, np.arange(p.size), np.cumsum(p), left=0.0, right=1.0))
    k = int(np.ceil(x - 1e-9))
    if k < 0:
        return 0.0
    if k >= p.size:
        return 1.0
    return float(np.sum(p[: k + 1]))


#: Bins below this share of a PMF's peak are the FFT's rounding (about 1e-16 of the peak
#: per transform, summed over thousands of bins) and are set to 0, so the error ratios
#: resolved reach about 1e-13; below that the MLSD's are not resolved (nor a slicer's).
ROUNDING = 1e-14


#: The smallest error ratio the MLSD's sums resolve with :data:`ROUNDING`: below it a
#: statistical eye's MLSD claims no gain (:meth:`phy.StatEye.ser_mlsd`), as COM keeps
#: COM_DFE (:data:`phy.engines.com.mlsd.DER_FLOOR`).
RESOLVED = 1e-13


def _floor(p: np.ndarray) -> np.ndarray:
    out = np.where(p < ROUNDING * p.max(), 0.0, p)
    return out / out.sum()


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full convolution of two centred odd-length PMFs (centred, odd), the FFT's rounding
    taken off (:data:`ROUNDING`) and its empty tails trimmed symmetrically."""
    n = a.size + b.size - 1
    m = 1 << int(np.ceil(np.log2(n)))
    out = _floor(np.fft.irfft(np.fft.rfft(a, m) * np.fft.rfft(b, m), m)[:n])
    c = np.cumsum(out)
    lo = int(np.searchsorted(c, 1e-30))
    hi = int(np.searchsorted(c[-1] - c[::-1], 1e-30))
    k = min(lo, hi, (n - 1) // 2)
    return out[k : n - k] if k else out


def event_vector(b: float, j: int) -> np.ndarray:
    """``u_j`` (178A-51): ``j`` alternating one-level errors through the target ``1 + b D``."""
    return np.convolve(np.where(np.arange(j) % 2 == 0, 1.0, -1.0), [1.0, b])


@dataclass(frozen=True)
class MlsdEvents:
    """The error events of a 1-tap MLSD summed (178A-50).

    Attributes
    ----------
    b : float
        The target's first post-cursor, ``1 + b D`` (the first DFE tap, normalised to h0).
    rates : ndarray
        Rate (per UI) of the error events of length 1, 2, ... (each of that many symbol
        errors in a row), the terms of 178A-50.
    der : float
        ``DER_MLSD``: the error-event rate, the sum of ``rates`` (178A-50).
    truncated : bool
        The sum reached ``max_events`` before its tolerance.
    """

    b: float
    rates: np.ndarray
    der: float
    truncated: bool = False

    @property
    def ser(self) -> float:
        """Symbol errors per UI: each event of length ``j`` is ``j`` errors."""
        return float(np.sum(np.arange(1, self.rates.size + 1) * self.rates))

    @property
    def mean_errors(self) -> float:
        """Mean symbol errors per event (the burst length)."""
        return self.ser / self.der if self.der > 0 else 1.0

    def to_dict(self) -> dict:
        return {"b": self.b, "rates": self.rates.tolist(), "der": self.der, "ser": self.ser,
                "mean_errors": self.mean_errors, "truncated": self.truncated}


def error_events(p: np.ndarray, ystep: float, a_s: float, b: float, rho, levels: int, *, rel_tol: float = 1e-4,
                 max_events: int = MAX_EVENTS, interpolate: bool = False, stop_above: float = np.inf
                 ) -> MlsdEvents:
    """The error events of a 1-tap MLSD (178A-50..55), summed until a term adds less than
    ``rel_tol`` of the sum or ``max_events`` events.

    Parameters
    ----------
    p : ndarray
        PMF of the noise and residual interference at the detector (odd length, centred
        on 0 V, step ``ystep`` V).
    a_s : float
        Half the spacing of adjacent levels at the detector (V).
    b : float
        The target's first post-cursor (``1 + b D``), normalised to the cursor.
    rho : array_like
        Normalised autocorrelation of the noise and residual interference at lags 0, 1, ...
        UI (``rho[0] = 1``); lags beyond it are taken as 0.
    levels : int
        Modulation levels ``L``.
    interpolate : bool
        Read each projection's distribution function linearly between grid points
        (:func:`cdf_at`); COM reads it as 178A does, at the next grid point.
    stop_above : float
        Stop once the sum passes this (COM: the slicer's error ratio, past which the MLSD
        gains nothing whatever the rest adds; ``der`` is then a lower bound).
    """
    if not (np.isfinite(b) and 0.0 <= b < 1.0):
        raise ConfigError(f"the MLSD's target 1 + b D needs 0 <= b < 1, got b = {b}")
    if a_s <= 0 or ystep <= 0:
        raise ConfigError(f"the MLSD needs a positive signal and grid step, got A_s {a_s} V, step {ystep} V")
    rho = np.asarray(rho, dtype=float)
    r = np.zeros(max_events + 1)
    r[: min(rho.size, r.size)] = rho[: r.size]
    r[0] = 1.0
    p = _floor(np.clip(np.asarray(p, dtype=float), 0.0, None))
    prefix = p  # the projection on u_j's entries but the last: 1, -(1-b), (1-b), ...
    rates = []
    truncated = True
    for j in range(1, max_events + 1):
        u = event_vector(b, j)
        pj = _conv(prefix, scale_pmf(p, u[-1]))  # 178A-54/55
        lag = np.abs(np.subtract.outer(np.arange(j + 1), np.arange(j + 1)))
        uvu = float(u @ r[lag] @ u)
        x = a_s * float(u @ u) ** 1.5 / np.sqrt(max(uvu, 1e-300))
        rates.append(((levels - 1) / levels) ** (j - 1) * cdf_at(pj, ystep, -x, interpolate))
        if rates[-1] <= rel_tol * sum(rates) or sum(rates) > stop_above:
            truncated = False
            break
        prefix = _conv(prefix, scale_pmf(p, (-1.0) ** j * (1.0 - b)))  # u_(j+1)'s entry j
    rates = np.array(rates)
    return MlsdEvents(float(b), rates, float(rates.sum()), truncated)


# ----------------------------------------------------------------------------- the eye
@dataclass(frozen=True)
class EyeMlsd:
    """A statistical eye's 1-tap MLSD at its sampling point (:func:`eye_mlsd`).

    Attributes
    ----------
    events : MlsdEvents
    a_s_v : float
        Half the spacing of adjacent levels (V).
    rho : ndarray
        Normalised autocorrelation of the noise and residual interference, lags 0, 1, ...
    notes : list of str
    """

    events: MlsdEvents
    a_s_v: float
    rho: np.ndarray
    notes: list = field(default_factory=list)

    levels: int = 4

    @property
    def event_rate(self) -> float:
        """Error events per UI, either sign: ``2 (L - 1) / L`` times ``DER_MLSD`` (whose
        terms count one sign from a level that has a neighbour there, as COM's ``DER_0``;
        so the MLSD's error ratio on ``1 + 0 D`` is a slicer's)."""
        return 2.0 * (self.levels - 1) / self.levels * self.events.der

    @property
    def ser(self) -> float:
        """Symbol error ratio of the MLSD: every error of every event."""
        return 2.0 * (self.levels - 1) / self.levels * self.events.ser

    def burst_model(self, modulation: str = "pam4"):
        """The MLSD's error bursts as a :class:`fec.BurstModel`: an event of length ``j`` is
        ``j`` one-level errors of alternating sign in a row, with the probability of its
        term in 178A-50; bursts start at the event rate ``DER_MLSD``."""
        from fec import BurstModel

        ev = self.events
        if ev.der <= 0:
            return None
        pats = tuple(np.where(np.arange(j) % 2 == 0, 1, -1).astype(np.int64) for j in range(1, ev.rates.size + 1))
        probs = ev.rates / ev.der
        return BurstModel(pats, probs, 0.0, f"MLSD(1+{ev.b:.3g}D)", self.event_rate, modulation, None,
                          ev.mean_errors, ev.mean_errors)

    def to_dict(self) -> dict:
        return {"events": self.events.to_dict(), "ser": self.ser, "event_rate": self.event_rate, "a_s_v": self.a_s_v,
                "rho": self.rho.tolist(), "notes": list(self.notes)}


def eye_mlsd(eye, *, rel_tol: float = 1e-4, max_events: int = MAX_EVENTS) -> EyeMlsd:
    """The 1-tap MLSD at a statistical eye's sampling point: its target ``1 + b D`` with
    ``b`` the eye's first DFE tap (the DFE's further taps, if any, cancel the rest as
    before), the noise and interference PMF the eye's own at its sampling point (the
    mixture, with duty-cycle distortion), and its autocorrelation from the eye's residual
    interference cursors, the receiver noise through the Rx FFE (its UI-to-UI
    correlation) and the rest of the eye's variance taken as white (transmitter noise,
    jitter, crosstalk, the ADC). Without a DFE tap (or ``b`` outside [0, 1)) the MLSD is a
    slicer and this is the eye's own symbol error ratio."""
    from ._stateye_terms import rx_noise_acf

    lk = eye.link
    c = eye.centre
    M = eye.levels.size
    b = float(lk.dfe[0]) if lk.dfe.size else 0.0
    a_s = 0.5 * float(eye.main_v[c]) * float(eye.levels[1] - eye.levels[0])
    notes = []
    v = eye.voltage_v
    dv = float(v[1] - v[0])
    p = np.diff(np.concatenate([[0.0], eye.cdf[c]]))
    p = np.clip(p, 0.0, None)
    p /= p.sum()
    if not 0.0 <= b < 1.0:
        notes.append(f"first DFE tap {b:.3g} outside [0, 1): no 1-tap MLSD target; the slicer's error ratio")
        b = 0.0
    # autocorrelation at whole-UI lags: residual interference, Rx noise through the FFE, white rest
    lags = max_events + 1
    var_x = float(np.mean(eye.levels**2))
    acf = np.zeros(lags)
    isi = getattr(eye, "isi_v", None)
    if isi is not None and isi.size:
        full = np.correlate(isi, isi, "full")[isi.size - 1 :]
        acf[: min(lags, full.size)] += var_x * full[:lags]
    r_rx = rx_noise_acf(lk, lk.rx_ffe, lags)
    acf += r_rx
    total = float(np.sum(p * v**2))
    acf[0] = max(total, acf[0])  # the rest of the eye's variance, white
    rho = acf / acf[0] if acf[0] > 0 else np.eye(1, lags)[0]
    ev = error_events(p, dv, a_s, b, rho, M, rel_tol=rel_tol, max_events=max_events, interpolate=True)
    if ev.truncated:
        notes.append(f"error events summed to {max_events} UI (the bound) before the tolerance")
    return EyeMlsd(ev, a_s, rho, notes, M)


@lru_cache(maxsize=32)
def eye_mlsd_cached(eye) -> EyeMlsd:
    """:func:`eye_mlsd` with its defaults, remembered per eye (an eye is immutable and
    hashed by identity): the link's decision and its FEC analysis read it again."""
    return eye_mlsd(eye)
