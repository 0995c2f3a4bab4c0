"""Kernels of the link layer's Monte Carlo (:func:`phy.link.retry.simulate_replay`): go-back-N
played transmission by transmission. Each stays one loop over transfers because every
attempt depends on the one before (where the sender restarts) and on the bursts drawn so
far; ``tests/test_latency.py`` holds their plain-Python references."""

import numpy as np
from numba import njit


@njit(cache=True)
def go_back_n_iid(n, F, L, turn, fer, s):  # pragma: no cover - compiled
    np.random.seed(s)
    out = np.empty(n)
    rtt = 2 * L + turn
    for m in range(n):
        k = 0
        j = 0
        while j < F:
            if np.random.random() < fer:
                k += 1  # the NAK returns after rtt; the sender restarts at flit j
            else:
                j += 1
        out[m] = k * rtt
    return out


@njit(cache=True)
def go_back_n_bursts(n, F, f_ui, L, turn, rate, cdf, s):  # pragma: no cover - compiled
    np.random.seed(s)
    out = np.empty(n)
    rtt = 2 * L + turn
    max_span = cdf.size
    t = 0.0
    nxt = np.random.exponential(1.0 / rate) if rate > 0 else np.inf
    last_end = -np.inf  # the latest UI any burst drawn so far reaches
    for m in range(n):
        start = t
        j = 0
        s0 = start  # start of the current attempt's first flit
        while j < F:
            a = s0 + j * f_ui
            b = a + f_ui
            # bursts that start before this flit ends
            while nxt < b:
                u = np.random.random()
                span = np.searchsorted(cdf, u) + 0.0
                end = np.floor(nxt) + max(span, 1.0)  # covers whole UIs [start, end)
                if end > last_end:
                    last_end = end
                nxt += np.random.exponential(1.0 / rate)
            if last_end > a:  # a burst overlaps [a, b)
                # known at a + L; the sender restarts flit j at a + rtt
                s0 = a + rtt - j * f_ui
            else:
                j += 1
        done = s0 + (F - 1) * f_ui + L
        out[m] = done - (start + (F - 1) * f_ui + L)
        t = done + rtt + 2.0 * max_span + f_ui
    return out
