"""Queueing at a switch's output port: the M/D/1 queue (Poisson arrivals, one fixed-size
packet served per ``D``), its waiting-time distribution and a Monte Carlo of it.

The waiting time of an M/G/1 queue is the Pollaczek-Khinchine geometric sum
(Kleinrock, *Queueing Systems* vol. 1, 1975, section 5.10): ``W = R_1 + ... + R_K`` with
``P(K = k) = (1 - rho) rho^k`` and the ``R_i`` drawn from the service's equilibrium
residual, which for a fixed service ``D`` is uniform on ``(0, D)``. Its transform,
``(1 - rho) / (1 - rho U(s))``, is evaluated once on a grid by FFT: every term is
positive, so unlike Erlang's alternating sum for the M/D/1 CDF it does not cancel at high
load. The mean is the Pollaczek-Khinchine ``rho D / (2 (1 - rho))``.

:func:`simulate_md1` draws the queue by Lindley's recursion, ``W_{n+1} = max(0, W_n + D -
A_n)``, an independent check of the distribution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import integer, number, seed
from ..errors import ConfigError

__all__ = ["QueueWait", "md1_wait", "simulate_md1"]

_MAX_POINTS = 2**21


@dataclass(frozen=True)
class QueueWait:
    """The waiting time before service of an M/D/1 queue (s), on a grid.

    Attributes
    ----------
    utilisation : float
    service_s : float
        ``D``, one packet's time on the port.
    grid_s : float
        The grid's step.
    pmf : ndarray
        ``pmf[i]``: probability that the wait is ``i grid_s`` (``pmf[0] = 1 - rho``).
    """

    utilisation: float
    service_s: float
    grid_s: float
    pmf: np.ndarray

    @property
    def mean_s(self) -> float:
        """Pollaczek-Khinchine: ``rho D / (2 (1 - rho))``."""
        rho = self.utilisation
        return rho * self.service_s / (2 * (1 - rho))

    def quantile_s(self, q) -> np.ndarray:
        """The wait not exceeded with probability ``q`` (each of an array)."""
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        if np.any(~np.isfinite(qs)) or np.any((qs < 0) | (qs >= 1)):
            raise ConfigError(f"quantiles must lie in [0, 1), got {q!r}")
        cdf = np.cumsum(self.pmf)
        idx = np.searchsorted(cdf, qs - 1e-15)
        return np.minimum(idx, self.pmf.size - 1) * self.grid_s


def md1_wait(utilisation: float, service_s: float, *, points_per_service: int = 256) -> QueueWait:
    """The M/D/1 waiting time at ``utilisation`` (0 <= rho < 1) for a service of
    ``service_s``.

    The residuals are put on the midpoints of ``points_per_service`` bins of ``D`` (a
    half-bin grid keeps every sum on it), so the mean is exact and a quantile is off by
    about ``sqrt(K) D / points_per_service`` for ``K`` residuals. The grid reaches where
    the Cramer-Lundberg tail ``exp(-gamma t)``, ``rho (e^{gamma D} - 1) = gamma D``, falls
    below 1e-16 of the mass, with at most 2^21 points (the bins widen at loads near 1).

    Parameters
    ----------
    utilisation : float
        The server's load rho, in [0, 1).
    service_s : float
        The deterministic service time D, s.
    points_per_service : int, optional
        Grid bins per service time (default 256).

    Returns
    -------
    QueueWait
        The waiting-time distribution on its grid (mean, quantiles).
    """
    rho = number(utilisation, "utilisation", nonneg=True)
    if rho >= 1:
        raise ConfigError(f"utilisation must be below 1 for a stable queue, got {rho:g}")
    D = number(service_s, "service_s", positive=True)
    m = integer(points_per_service, "points_per_service", 2, 4096)
    if rho == 0:
        return QueueWait(0.0, D, D / (2 * m), np.ones(1))
    y = _decay_rate(rho)  # gamma D
    span = (37.0 + math.log(1 / (1 - rho))) / y + 2.0  # in units of D
    while 2 * m * span > _MAX_POINTS and m > 2:
        m //= 2
    n = 1 << math.ceil(math.log2(max(2 * m * span, 2 * m + 2)))
    u = np.zeros(n)
    u[1:2 * m:2] = 1.0 / m  # residual uniform on (0, D): bin midpoints, half-bin grid
    spec = (1 - rho) / (1 - rho * np.fft.rfft(u))
    pmf = np.fft.irfft(spec, n)
    pmf = np.clip(pmf, 0.0, None)
    pmf /= pmf.sum()
    return QueueWait(rho, D, D / (2 * m), pmf)


def _decay_rate(rho: float) -> float:
    """``y = gamma D`` > 0 with ``rho (e^y - 1) = y`` (the tail's decay), by Newton from
    above."""
    y = max(2 * (1 - rho) / rho, 1e-12) * 2 + 1.0
    for _ in range(200):
        f = rho * math.expm1(y) - y
        df = rho * math.exp(y) - 1
        step = f / df
        y -= step
        if abs(step) < 1e-14 * y:
            break
    return max(y, 1e-12)


#: The most waits :func:`simulate_md1` draws: its four arrays of ``1.1 n`` floats take about
#: 35 bytes a wait, so 2 x 10^7 is about 0.7 GB (10^9, the old bound, was about 35 GB).
MAX_SIMULATED_WAITS = 20_000_000


def simulate_md1(utilisation: float, service_s: float, n: int = 1_000_000, *, seed_=None) -> np.ndarray:
    """``n`` (at most :data:`MAX_SIMULATED_WAITS`) successive waits of an M/D/1 queue by
    Lindley's recursion (s), the first ``n // 10`` discarded as warm-up. ``W_n = S_n - min(0, min_{k<=n} S_k)`` for the
    random walk ``S`` of ``D - A``: one cumulative sum and a running minimum.

    Parameters
    ----------
    utilisation : float
        The server's load rho, in [0, 1).
    service_s : float
        The deterministic service time D, s.
    n : int, optional
        Waits drawn, warm-up included (10 to :data:`MAX_SIMULATED_WAITS`; default 1e6).
    seed_ : int, optional
        Seed of the random generator (None: fresh entropy).

    Returns
    -------
    numpy.ndarray
        The ``n - n // 10`` waits after warm-up, s.
    """
    rho = number(utilisation, "utilisation", nonneg=True)
    if rho >= 1:
        raise ConfigError(f"utilisation must be below 1 for a stable queue, got {rho:g}")
    D = number(service_s, "service_s", positive=True)
    n = integer(n, "n", 10, MAX_SIMULATED_WAITS)
    rng = np.random.default_rng(seed(seed_, "seed") if seed_ is not None else None)
    warm = n // 10
    if rho == 0:
        return np.zeros(n - warm)
    steps = D - rng.exponential(D / rho, n + warm)
    s = np.concatenate(([0.0], np.cumsum(steps)))
    w = s - np.minimum.accumulate(np.minimum(s, 0.0))
    return w[1 + 2 * warm - warm:][: n - warm] if False else w[warm + 1: warm + 1 + n - warm]
