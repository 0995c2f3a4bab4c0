"""Distributions on a voltage grid, shared by the statistical eye and COM: the exact PMF of
a sum of independent discrete symbols times their cursors (in Numba), the variance its
linear splits add, convolution with a Gaussian and of two centred PMFs, and the quantile of
such a sum with a Gaussian (COM's ``A_ni``)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["convolve_centred", "discrete_pmf", "discrete_sum_pmf", "gauss_convolve", "pmf_quantile", "scale_mixture_cf", "split_variance",
           "uniform_convolve"]


@njit(cache=True)
def discrete_pmf(values, levels, v0, dv, nb):
    """PMF on the grid ``v0 + dv * i`` (``nb`` bins) of ``sum_k levels[m_k] values[k]``
    with independent, uniform ``m_k``: each cursor shifts copies of the running PMF by its
    ``M`` values (split linearly between the two nearest bins).

    The split can push mass one bin past the true support at each cursor; over thousands of
    cursors that would outgrow any grid, so mass more than three bins beyond the true
    support (products of split fractions: vanishingly small) is folded back onto the edge. Raises ValueError if the true
    support does not fit the grid (the caller sizes it), and before any index is formed if the
    grid is not finite with a positive step, 0 V is off it, or a cursor is not finite (the
    indices below are computed from these numbers: a NaN or a huge value would address memory
    far outside the arrays, which a compiled kernel does not check)."""
    if nb < 2 or not (dv > 0.0 and np.isfinite(dv) and np.isfinite(v0)):
        raise ValueError("the voltage grid must be finite, of two bins or more, with a positive step")
    x = -v0 / dv
    if not (0.0 <= x < nb - 1.0):  # NaN fails too
        raise ValueError("the voltage grid does not hold 0 V")
    pmf = np.zeros(nb)
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
            if not abs(s) < nb:  # NaN, infinite or beyond the grid: before the integer cast
                raise ValueError("the voltage grid is too narrow for the ISI")
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


def uniform_convolve(pmf: np.ndarray, widths_bins, cf=None) -> np.ndarray:
    """``pmf`` convolved with independent uniform variables of the given full widths (in
    bins), a quantiser's error at each tap of a filter, and with a variable of
    characteristic function ``cf(f)`` (``f`` in cycles per bin) if given. The
    characteristic function of a uniform of width ``a`` is ``sinc(f a)``, so all are
    applied at once in the Fourier domain (mass beyond the grid's ends is dropped)."""
    a = np.asarray(widths_bins, dtype=float)
    a = a[a > 0]
    if a.size == 0 and cf is None:
        return pmf
    n = pmf.size
    m = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfftfreq(m)
    h = np.prod(np.sinc(np.outer(a, f)), axis=0) if a.size else np.ones(f.size)
    if cf is not None:
        h = h * cf(f)
    out = np.fft.irfft(np.fft.rfft(pmf, m) * h, m)
    return np.clip(out[:n], 0, None)


def scale_mixture_cf(values: np.ndarray, probs: np.ndarray, sigmas) -> callable:
    """The characteristic function (of ``f`` in cycles per bin) of ``sum_t sigma_t S_t X_t``:
    independent Gaussian ``X_t`` each scaled by its own draw ``S_t`` of a discrete
    variable (``values`` in bins per unit, ``probs``), a Gaussian scale mixture per term:
    ``prod_t sum_j p_j exp(-2 (pi f sigma_t s_j)^2)``. Heavier-tailed than the Gaussian of
    the same variance, as jitter through a data-dependent slope is."""
    v = np.asarray(values, dtype=float)
    p = np.asarray(probs, dtype=float)
    keep = p > 1e-15
    v, p = v[keep], p[keep] / p[keep].sum()
    sig = [float(x) for x in np.atleast_1d(sigmas) if x > 0]

    def cf(f):
        out = np.ones(np.size(f))
        for st in sig:
            out *= np.exp(-2.0 * (np.pi * np.outer(np.asarray(f), st * v)) ** 2) @ p
        return out

    return cf


def convolve_centred(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PMF of the sum of two variables on the same odd-length grid centred on 0 V."""
    n = a.size
    m = 1 << int(np.ceil(np.log2(2 * n)))
    full = np.fft.irfft(np.fft.rfft(a, m) * np.fft.rfft(b, m), m)
    z = (n - 1) // 2
    return np.clip(full[z : z + n], 0, None)


def discrete_sum_pmf(values_list, lv, ystep, extra_v: float, max_bins: int = 1 << 16):
    """The grid ``y`` (odd, centred on 0 V), the PMF of the sum of the discrete terms
    ``values_list`` (each ``sum_k lv[m_k] v_k``, independent uniform ``m_k``) on it, and the
    variance (bins^2) its linear splits add: the grid spans their reach plus ``extra_v``
    (room for a Gaussian), with step ``ystep`` made coarser when that needs more than
    ``max_bins`` (a closed eye's ISI spans thousands of ``A_s``)."""
    support = sum(np.abs(v).sum() for v in values_list) + extra_v
    ystep = max(ystep, 2 * support / max_bins)
    support += 2 * ystep
    n = 2 * int(np.ceil(support / ystep)) + 1  # odd: 0 V is the middle point
    y = (np.arange(n) - n // 2) * ystep
    pmf = np.zeros(n)
    pmf[n // 2] = 1.0
    split = 0.0
    for v in values_list:
        if v.size:
            pmf = convolve_centred(pmf, discrete_pmf(v, lv, y[0], ystep, n))
            split += split_variance(v, lv, ystep)
    return y, pmf, split


def pmf_quantile(values_list, lv, sigma, der0, ystep, max_bins: int = 1 << 16):
    """``A_ni``: minus the ``der0`` quantile of the sum of the discrete terms and a Gaussian
    (:func:`discrete_sum_pmf` with room for ten sigma; the grid's split variance is taken
    off the Gaussian)."""
    y, pmf, split = discrete_sum_pmf(values_list, lv, ystep, 10 * sigma, max_bins)
    ystep = y[1] - y[0]
    cdf = np.cumsum(gauss_convolve(pmf, np.sqrt(max(sigma**2 / ystep**2 - split, 0.0))))
    cdf /= cdf[-1]
    return -float(y[int(np.searchsorted(cdf, der0))])
