"""TDECQ, the transmitter and dispersion eye closure (quaternary) that 802.3 measures PAM4
optical transmitters by, computed from a path's transmitter and fibre.

The measurement as public implementations of 802.3's definition state it (Keysight FlexDCA
documentation and others, ../shared/REFERENCES.md; the standard's text was not read): the
transmitter's signal, through the fibre, is received by a reference receiver (a
4th-order Bessel-Thomson at half the baud), equalised by a 5-tap T-spaced FFE whose taps sum
to 1, and sampled at two instants 0.45 and 0.55 UI into the eye; ``sigma_G`` is the largest
Gaussian noise that can be added so that the symbol error ratio at each instant stays at or
below ``4.8e-4``; then

``TDECQ = 10 log10( (OMA_outer / (6 Q_t)) / sigma_G )``, ``Q_t = 3.414``,

the dB an ideal eye (whose ``sigma_G`` is ``OMA_outer / (6 Q_t)``: ``1.5 Q(3.414) = 4.8e-4``)
has over this one. Here the histograms' ±0.02 UI windows are single instants, the
thresholds sit midway between the equalised levels, the scope's own noise is 0, and the
FFE is the one that minimises the equalised ISI's power with the sum of its taps held at 1
(not searched for the largest ``sigma_G``): a bound, TDECQ no lower than the measurement's
optimum. ``C_eq`` is the FFE's noise enhancement (the sum of its squared taps), the
``10 log10(C_eq)`` 802.3 subtracts in its limit on ``TDECQ - 10 log10(C_eq)``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize, special

from . import _validate as check
from .errors import ChannelError
from .optical import OpticalPath, bessel_thomson

__all__ = ["Q_T", "SER_TARGET", "Tdecq", "tdecq"]

#: The symbol error ratio TDECQ's noise is found at, and the Q it means for an ideal eye.
SER_TARGET = 4.8e-4
Q_T = 3.414


@dataclass(frozen=True)
class Tdecq:
    """What :func:`tdecq` found: ``tdecq_db``, ``ceq_db`` (``10 log10 C_eq``), ``sigma_g``
    relative to the OMA, the FFE's taps, and the error ratio at each sampling instant."""

    tdecq_db: float
    ceq_db: float
    sigma_g_rel: float
    taps: tuple
    ser_at: dict

    def to_dict(self) -> dict:
        return asdict(self)


def _pulse(path: OpticalPath, baud: float, ref_bw: float | None, spu: int, span: int) -> np.ndarray:
    """One symbol's response, ``spu`` samples per UI over ``span`` UI (the transmitter,
    the fibre, the reference receiver), peak normalised to its DC gain."""
    n = spu * span
    dt = 1 / (baud * spu)
    f = np.fft.rfftfreq(n, dt)
    h = np.ones(f.shape, dtype=complex)
    if path.tx.bandwidth_hz is not None:
        h *= bessel_thomson(f, path.tx.bandwidth_hz)
    for fib in path.fibres:
        h *= fib.transfer(f, path.tx.wavelength_m, path.tx.spectral_width_rms_m)
    if ref_bw is not None:
        h *= bessel_thomson(f, ref_bw)
    sym = np.zeros(n)
    sym[:spu] = 1.0
    return np.fft.irfft(np.fft.rfft(sym) * h, n)


def _ser(cursors: np.ndarray, main: int, sigma: float, bins: int = 2048) -> float:
    """PAM4 symbol error ratio, symbols -3, -1, 1, 3 scaled to an outer amplitude of 1 at
    the main cursor (levels -1/2 .. 1/2 of the OMA), thresholds midway, the ISI's exact
    distribution (binned) and Gaussian noise ``sigma`` (relative to the OMA)."""
    scale = 1 / (6 * cursors[main])  # symbol value 1 -> OMA / 6 at the main cursor
    isi = np.delete(cursors, main) * scale
    span = 3 * np.abs(isi).sum() + 1e-12
    grid = np.linspace(-span, span, bins)
    step = grid[1] - grid[0]
    pmf = np.zeros(bins)
    pmf[bins // 2] = 1.0
    for c in isi:
        if abs(c) < 1e-9:
            continue
        shifted = np.zeros(bins)
        for a in (-3, -1, 1, 3):
            k = int(round(a * c / step))
            if k >= 0:
                shifted[k:] += 0.25 * pmf[: bins - k]
            else:
                shifted[:k] += 0.25 * pmf[-k:]
        pmf = shifted
    d = 1 / 6  # half the level spacing (OMA / 3) over the OMA
    q = 0.5 * special.erfc((d + grid) / (np.sqrt(2) * sigma))  # an error across one threshold
    q2 = 0.5 * special.erfc((d - grid) / (np.sqrt(2) * sigma))
    # inner levels err either way, outer ones one way: 3/4 of (q + q2) on average
    return float(np.sum(pmf * 0.75 * (q + q2)))


def tdecq(path: OpticalPath, baud_hz: float, *, reference_bandwidth_hz: float | None = None,
          taps: int = 5, spu: int = 32, span_ui: int = 64) -> Tdecq:
    """TDECQ of ``path``'s transmitter through its fibre at ``baud_hz`` (see the module
    docstring); ``reference_bandwidth_hz`` default half the baud (None is taken as that;
    give ``float("inf")`` for an ideal receiver)."""
    baud = check.number(baud_hz, "baud_hz", positive=True)
    ntap = int(check.number(taps, "taps", positive=True))
    if ntap % 2 == 0 or ntap > 15:
        raise ChannelError(f"taps must be odd and at most 15, got {taps!r}")
    ref = 0.5 * baud if reference_bandwidth_hz is None else float(reference_bandwidth_hz)
    p = _pulse(path, baud, None if np.isinf(ref) else ref, spu, span_ui)
    peak = int(np.argmax(p))
    cur = {}
    for name, off in (("0.45", -0.05), ("0.55", 0.05)):
        idx = peak + off * spu + spu * np.arange(-(peak // spu), (p.size - 1 - peak) // spu)
        idx = idx[(idx >= 0) & (idx <= p.size - 1)]
        cur[name] = (np.interp(idx, np.arange(p.size), p), int(np.argmin(np.abs(idx - peak - off * spu))))
    # the FFE: least equalised ISI power at the centre, taps summing to 1 (one reference tap, the rest around it)
    c, m = np.interp(peak + spu * np.arange(-(peak // spu), (p.size - 1 - peak) // spu), np.arange(p.size), p), \
        peak // spu
    pre = (ntap - 1) // 4
    A = np.array([np.roll(np.pad(c, (0, ntap)), k)[: c.size + ntap] for k in range(ntap)]).T  # convolution matrix
    target = np.zeros(A.shape[0])
    target[m + pre] = c[m]
    kkt = np.block([[2 * A.T @ A, np.ones((ntap, 1))], [np.ones((1, ntap)), np.zeros((1, 1))]])
    w = np.linalg.solve(kkt, np.concatenate([2 * A.T @ target, [1.0]]))[:ntap]
    eq = {k: (np.convolve(v[0], w), v[1] + pre) for k, v in cur.items()}

    def worst(sig: float) -> float:
        return max(_ser(e, mi, sig) for e, mi in eq.values())

    if worst(1e-6) > SER_TARGET:
        return Tdecq(float("inf"), float(10 * np.log10(np.sum(w**2))), 0.0, tuple(w.tolist()),
                     {k: 1.0 for k in eq})
    s = optimize.brentq(lambda x: np.log(max(worst(np.exp(x)), 1e-300)) - np.log(SER_TARGET), np.log(1e-6),
                        np.log(1.0), xtol=1e-6)
    sigma = float(np.exp(s))
    return Tdecq(float(10 * np.log10((1 / (6 * Q_T)) / sigma)), float(10 * np.log10(np.sum(w**2))), sigma,
                 tuple(w.tolist()), {k: _ser(e, mi, sigma) for k, (e, mi) in eq.items()})
