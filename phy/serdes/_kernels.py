"""Numba kernels of the SerDes parts: Gaussian draws (clipped), sinusoidal jitter by a
rotating phasor, the PRBS shift register. Slow references live in the tests."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def normals(rng, out, scale, clip):
    """``out[i] = scale * N(0, 1)`` from the numpy ``Generator`` ``rng`` (numba draws the same
    stream as numpy), clipped at ``+- clip`` standard deviations when ``clip > 0``."""
    for i in range(out.size):
        v = rng.standard_normal()
        if clip > 0.0:
            v = min(max(v, -clip), clip)
        out[i] = scale * v


@njit(cache=True, fastmath=True)
def add_sine(out, k0, omega, amplitude, phase):
    """``out[i] += amplitude * sin(omega (k0 + i) + phase)`` by rotating a phasor, restarted
    exactly every 1024 samples (error below 1e-13 of the amplitude)."""
    cw = np.cos(omega)
    sw = np.sin(omega)
    c = 0.0
    s = 0.0
    for i in range(out.size):
        if i % 1024 == 0:
            ang = omega * (k0 + i) + phase
            c = np.cos(ang)
            s = np.sin(ang)
        out[i] += amplitude * s
        c, s = c * cw - s * sw, s * cw + c * sw


@njit(cache=True)
def lfsr_bits(state, mask, taps, invert, out):
    """Fill ``out`` with a Fibonacci LFSR's next bits (feedback = XOR of the register bits
    at ``taps``, shifted in at bit 0 and sent, XOR ``invert``); return the final state."""
    for i in range(out.size):
        fb = 0
        for t in taps:
            fb ^= state >> t
        fb &= 1
        out[i] = fb ^ invert
        state = ((state << 1) | fb) & mask
    return state
