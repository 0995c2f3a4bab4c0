"""Distributions on a voltage grid, shared by the statistical eye and COM: the exact PMF of
a sum of independent discrete symbols times their cursors (in Numba), the variance its
linear splits add, convolution with a Gaussian and of two centred PMFs."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["convolve_centred", "discrete_pmf", "gauss_convolve", "split_variance"]


@njit(cache=True)
def discrete_pmf(values, levels, v0, dv, nb):
    """PMF on the grid ``v0 + dv * i`` (``nb`` bins) of ``sum_k levels[m_k] values[k]``
    with independent, uniform ``m_k``: each cursor shifts copies of the running PMF by its
    ``M`` values (split linearly between the two nearest bins).

    The split can push mass one bin past the true support at each cursor; over thousands of
    cursors that would outgrow any grid, so mass more than three bins beyond the true
    support (products of split fractions: vanishingly small) is folded back onto the edge. Raises ValueError if the true
    support does not fit the grid (the caller sizes it)."""
    pmf = np.zeros(nb)
    x = -v0 / dv
    i0 = int(np.floor(x))
    f = x - i0
    pmf[i0] += 1 - f
    pmf[i0 + 1] += f
    lo, hi = i0, i0 + 2
    t_lo, t_hi = x, x  # the true support, in fractional bins
    lv_lo, lv_hi = levels.min(), levels.max()
    tmp = np.zeros(nb)
    M = levels.size
    w = 1.0 / M
    for k in range(values.size):
        c = values[k]
        if c == 0.0:
            continue
        for i in range(max(0, lo - 1), min(nb, hi + 1)):
            tmp[i] = 0.0
        nlo, nhi = nb, 0
        for m in range(M):
            s = levels[m] * c / dv
            si = int(np.floor(s))
            sf = s - si
            a = lo + si
            b = hi + si
            if a < 0 or b + 1 >= nb:
                raise ValueError("the voltage grid is too narrow for the ISI")
            for i in range(lo, hi):
                p = pmf[i] * w
                tmp[i + si] += p * (1 - sf)
                tmp[i + si + 1] += p * sf
            nlo = min(nlo, a)
            nhi = max(nhi, b + 1)
        t_lo += min(lv_lo * c, lv_hi * c) / dv
        t_hi += max(lv_lo * c, lv_hi * c) / dv
        c_lo = max(nlo, int(np.floor(t_lo)) - 3)
        c_hi = min(nhi, int(np.floor(t_hi)) + 5)
        for i in range(nlo, c_lo):
            tmp[c_lo] += tmp[i]
            tmp[i] = 0.0
        for i in range(c_hi, nhi):
            tmp[c_hi - 1] += tmp[i]
            tmp[i] = 0.0
        for i in range(max(0, lo - 1), min(nb, hi + 1)):
            pmf[i] = 0.0
        for i in range(c_lo, c_hi):
            pmf[i] = tmp[i]
            tmp[i] = 0.0
        lo, hi = c_lo, c_hi
    return pmf


def split_variance(values: np.ndarray, levels: np.ndarray, dv: float) -> float:
    """Variance (bins^2) that :func:`discrete_pmf`'s linear splits add to the distribution:
    each cursor's shift ``s = level c / dv`` goes to ``floor(s)`` and ``floor(s) + 1`` with
    weights ``1 - f`` and ``f``, an independent two-point error of variance ``f (1 - f)``.
    Hundreds of cursors on a coarse grid make it comparable to the noise, so the Gaussian
    convolved afterwards is reduced by it."""
    c = np.asarray(values, dtype=float)
    c = c[c != 0.0]
    if c.size == 0:
        return 0.0
    s = np.outer(c, levels) / dv
    f = s - np.floor(s)
    return float(np.sum(np.mean(f * (1.0 - f), axis=1)))


def gauss_convolve(pmf: np.ndarray, sigma_bins: float) -> np.ndarray:
    if sigma_bins <= 0:
        return pmf
    n = pmf.size
    m = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfftfreq(m)
    g = np.exp(-2 * (np.pi * f * sigma_bins) ** 2)
    out = np.fft.irfft(np.fft.rfft(pmf, m) * g, m)  # mass beyond the grid's ends is dropped
    return np.clip(out[:n], 0, None)


def convolve_centred(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PMF of the sum of two variables on the same odd-length grid centred on 0 V."""
    n = a.size
    m = 1 << int(np.ceil(np.log2(2 * n)))
    full = np.fft.irfft(np.fft.rfft(a, m) * np.fft.rfft(b, m), m)
    z = (n - 1) // 2
    return np.clip(full[z : z + n], 0, None)
