"""Symbol interleaving and the mapping from a lane's errors to FEC symbol errors.

Interleaving
------------
With ``I``-way symbol interleaving (802.3: ``I = 1``, 2 for Clause 161 / 119, 4 for some
optics), the lane carries the FEC symbols of ``I`` codewords in turn: stream symbol
``s`` of a block of ``I n`` symbols belongs to codeword ``s mod I``, position ``s // I``.
A burst of ``b`` consecutive symbol errors so puts about ``ceil(b / I)`` errors into
each codeword.

From the lane to FEC symbols
----------------------------
The lane carries ``bits_per_ui`` bits per unit interval (2 for PAM4, 1 for NRZ), the
bits of one FEC symbol in consecutive UIs (``m / bits_per_ui`` UIs per symbol). A
detector error of ``d`` levels at one UI flips the bits Gray coding says: one bit for
``d = +-1``, two for ``d = +-2`` (PAM4 Gray map 0, 1, 3, 2). With the 1/(1+D) mod 4
precoder, the receiver's postcoder ``x_k = (y_k + y_(k-1)) mod 4`` turns detector errors
``e_k`` into output errors ``(e_k + e_(k-1)) mod 4``: an isolated error becomes two, and
a DFE burst whose errors alternate in sign becomes two (its entry and its exit).
"""

from __future__ import annotations

import numpy as np

from . import _validate as check
from .errors import FecError

__all__ = [
    "interleave",
    "deinterleave",
    "GRAY_PAM4",
    "gray_bits",
    "postcoder_errors",
    "ui_errors_to_bit_errors",
    "bit_errors_to_patterns",
    "bits_per_ui",
]

GRAY_PAM4 = np.array([0b00, 0b01, 0b11, 0b10])  # level 0..3 -> 2 bits (IEEE 802.3 PAM4 Gray map)


def bits_per_ui(modulation: str) -> int:
    """Bits carried per UI: 2 for ``"pam4"``, 1 for ``"nrz"``."""
    mod = str(modulation).lower()
    if mod not in ("pam4", "nrz"):
        raise FecError(f"modulation must be 'pam4' or 'nrz', got {modulation!r}")
    return 2 if mod == "pam4" else 1


def interleave(codewords) -> np.ndarray:
    """Stream order of ``I`` codewords ``(..., I, n)`` -> ``(..., I n)``: symbol j of codeword i
    goes to stream position ``j I + i``."""
    c = np.asarray(codewords)
    if c.ndim < 2:
        raise FecError(f"interleave needs codewords of shape (..., I, n), got {c.shape}")
    return np.swapaxes(c, -1, -2).reshape(c.shape[:-2] + (c.shape[-2] * c.shape[-1],))


def deinterleave(stream, ways: int) -> np.ndarray:
    """Inverse of :func:`interleave`: ``(..., I n)`` -> ``(..., I, n)``."""
    ways = check.integer(ways, "interleave", 1)
    s = np.asarray(stream)
    if s.shape[-1] % ways:
        raise FecError(f"a stream of {s.shape[-1]} symbols does not split into {ways} codewords")
    n = s.shape[-1] // ways
    return np.swapaxes(s.reshape(s.shape[:-1] + (n, ways)), -1, -2)


def gray_bits(level_error) -> np.ndarray:
    """Bits flipped by a PAM4 detector error of ``d`` levels (mod 4), averaged over the
    sent level: 0 for 0, 1 for +-1, 2 for +-2."""
    d = np.mod(np.asarray(level_error), 4)
    return np.where(d == 0, 0, np.where(d == 2, 2, 1))


def postcoder_errors(ui_index, level_error) -> tuple[np.ndarray, np.ndarray]:
    """Errors after the 1/(1+D) mod 4 postcoder, from detector errors at sorted UI indices.

    Output error at UI k is ``(e_k + e_(k-1)) mod 4``; returns the UI indices and level
    errors (mod 4, non-zero) after the postcoder.
    """
    u = np.asarray(ui_index, dtype=np.int64)
    e = np.asarray(level_error, dtype=np.int64)
    if u.size == 0:
        return u, e
    if np.any(np.diff(u) <= 0):
        raise FecError("postcoder_errors needs strictly increasing UI indices")
    cand = np.union1d(u, u + 1)
    val = np.zeros(cand.size, dtype=np.int64)
    val[np.searchsorted(cand, u)] += e
    val[np.searchsorted(cand, u + 1)] += e
    val = np.mod(val, 4)
    keep = val != 0
    return cand[keep], val[keep]


def ui_errors_to_bit_errors(
    ui_index, level_error, modulation: str = "pam4", precoded: bool = False, tx_levels=None, rng=None
) -> np.ndarray:
    """Lane bit indices in error for detector errors at ``ui_index`` of ``level_error`` levels.

    With ``tx_levels`` (the sent PAM4 data levels, indexed by UI; with the precoder, the
    levels before it) the flipped bits are exactly those Gray coding gives; without, a +-1 error flips the MSB or LSB at random (each
    equally likely, as over uniform data) and a +-2 error both.
    """
    nbits = bits_per_ui(modulation)
    u = np.asarray(ui_index, dtype=np.int64)
    e = np.asarray(level_error, dtype=np.int64)
    if precoded:
        if nbits != 2:
            raise FecError("the 1/(1+D) mod 4 precoder applies to PAM4 only")
        u, e = postcoder_errors(u, e)
    if nbits == 1:
        return u[e % 2 != 0]
    if tx_levels is not None:
        lv = np.asarray(tx_levels, dtype=np.int64)[u]
        flips = GRAY_PAM4[lv] ^ GRAY_PAM4[np.mod(lv + e, 4)]
    else:
        rng = np.random.default_rng() if rng is None else rng
        one = np.where(rng.random(u.size) < 0.5, 0b01, 0b10)
        flips = np.where(np.mod(e, 4) == 2, 0b11, np.where(np.mod(e, 4) == 0, 0, one))
    msb = (flips >> 1) & 1
    lsb = flips & 1
    bits = np.concatenate([2 * u[msb == 1], 2 * u[lsb == 1] + 1])
    return np.sort(bits)


def bit_errors_to_patterns(bit_index, n_codewords: int, code, interleave: int = 1) -> np.ndarray:
    """FEC error patterns ``(n_codewords, n)`` from the lane's bit error indices.

    The lane carries ``n_codewords`` codewords (a multiple of ``interleave``) as blocks of
    ``interleave`` codewords, symbol-interleaved; bit b is bit ``b mod m`` (MSB first) of
    stream symbol ``b // m``. The pattern holds each symbol's error value (XOR of its
    flipped bits), as the decoder sees it.
    """
    ways = check.integer(interleave, "interleave", 1)
    if n_codewords % ways:
        raise FecError(f"{n_codewords} codewords do not fill blocks of {ways}")
    m, n = code.m, code.n
    b = np.asarray(bit_index, dtype=np.int64)
    total = n_codewords * n * m
    if b.size and (b.min() < 0 or b.max() >= total):
        raise FecError(f"bit indices must lie in 0 .. {total - 1} for {n_codewords} codewords")
    sym = b // m
    mask = (1 << (m - 1 - (b % m))).astype(np.int64)
    block, within = np.divmod(sym, ways * n)
    cw = block * ways + within % ways
    pos = within // ways
    patterns = np.zeros((n_codewords, n), dtype=np.int64)
    np.bitwise_xor.at(patterns, (cw, pos), mask)
    return patterns.astype(np.uint16)
