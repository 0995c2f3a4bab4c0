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


# --------------------------------------------------------------------------- fast Gaussian draws
# The ziggurat of Marsaglia and Tsang ("The ziggurat method for generating random variables",
# J. Stat. Softw. 5(8), 2000), 256 layers, in Doornik's form ("An improved ziggurat method to
# generate normal random samples", 2005: the layer from bits the value does not use), on
# xoshiro256++ (Blackman and Vigna, "Scrambled linear pseudorandom number generators", ACM
# TOMS 47(4), 2021), both inside the kernel: no call through numpy's bit generator per draw.
ZIG_R = 3.6541528853610088  # the base strip's edge for 256 layers of area ZIG_V
ZIG_V = 0.00492867323399


def ziggurat_tables(n: int = 256, r: float = ZIG_R, v: float = ZIG_V) -> tuple[np.ndarray, np.ndarray]:
    """``(x, ratio)``: the layers' right edges ``x[0..n]`` (``x[0] = v / f(r)``, ``x[1] = r``,
    ``x[n] = 0``) and ``ratio[i] = x[i + 1] / x[i]`` (a uniform inside it is accepted at once)."""
    x = np.zeros(n + 1)
    f = np.exp(-0.5 * r * r)
    x[0], x[1] = v / f, r
    for i in range(2, n):
        x[i] = np.sqrt(-2.0 * np.log(v / x[i - 1] + f))
        f = np.exp(-0.5 * x[i] * x[i])
    return x, x[1:] / x[:-1]


_ZX, _ZR = ziggurat_tables()


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, inline="always")
def _step(s0, s1, s2, s3):
    """xoshiro256++ on a state held in four locals: (the next 64-bit output, the state
    advanced)."""
    out = _rotl(s0 + s3, 23) + s0
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return out, s0, s1, s2, s3


@njit(cache=True, inline="always")
def _next(s):
    """xoshiro256++: the next 64-bit output, the state ``s`` (4 x uint64) advanced."""
    out, s[0], s[1], s[2], s[3] = _step(s[0], s[1], s[2], s[3])
    return out


@njit(cache=True)
def _next_py(s):
    """:func:`_next` callable from Python (for its test)."""
    return _next(s)


@njit(cache=True)
def fast_normals(s, out, scale, clip, zx, zr):
    """``out[i] = scale * N(0, 1)`` by the ziggurat on the xoshiro256++ state ``s``, clipped
    at ``+- clip`` standard deviations when ``clip > 0``; the draws follow each other, so the
    values do not depend on how a stream is cut into calls. (The state is held in locals
    during the call and stored back at its end.)"""
    s0, s1, s2, s3 = s[0], s[1], s[2], s[3]
    for i in range(out.size):
        while True:
            b, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
            layer = np.int64(b & np.uint64(0xFF))
            u = 2.0 * (((b >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) - 1.0
            if abs(u) < zr[layer]:  # inside the layer's rectangle (99 % of draws)
                v = u * zx[layer]
                break
            if layer == 0:  # the tail beyond R (Marsaglia 1964)
                while True:
                    r1, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
                    xt = np.log(((r1 >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) / zx[1]
                    r2, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
                    yt = np.log(((r2 >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0))
                    if -2.0 * yt >= xt * xt:
                        break
                v = xt - zx[1] if u < 0 else zx[1] - xt
                break
            v = u * zx[layer]  # the wedge between the rectangle and the curve
            f0 = np.exp(-0.5 * (zx[layer] * zx[layer] - v * v))
            f1 = np.exp(-0.5 * (zx[layer + 1] * zx[layer + 1] - v * v))
            r3, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
            if f1 + (((r3 >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)) * (f0 - f1) < 1.0:
                break
        if clip > 0.0:
            v = min(max(v, -clip), clip)
        out[i] = scale * v
    s[0], s[1], s[2], s[3] = s0, s1, s2, s3


class FastNormal:
    """A stream of Gaussian draws by :func:`fast_normals`, seeded from a numpy ``Generator``
    (four 64-bit words of its stream, so that a seed fixes it), with :meth:`fill` in the
    place of :func:`normals`."""

    def __init__(self, rng: np.random.Generator):
        self.generator = rng  # for the draws that are not Gaussian
        self.state = rng.bit_generator.random_raw(4).astype(np.uint64)
        if not self.state.any():
            self.state[0] = 1

    def fill(self, out: np.ndarray, scale: float, clip: float = 0.0) -> None:
        fast_normals(self.state, out, float(scale), float(clip), _ZX, _ZR)


def gaussian(source, out: np.ndarray, scale: float, clip: float = 0.0) -> None:
    """``out = scale * N(0, 1)`` (clipped at ``clip`` sigma when > 0) from a numpy
    ``Generator`` (:func:`normals`: numpy's own stream) or a :class:`FastNormal`."""
    if isinstance(source, FastNormal):
        source.fill(out, scale, clip)
    else:
        normals(source, out, scale, clip)
