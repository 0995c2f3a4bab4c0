"""Finite fields GF(2^m): log and antilog tables, checked primitive polynomials.

Elements are integers ``0 .. 2^m - 1`` (bit i is the coefficient of x^i of the
polynomial basis); ``alpha = 2`` (the polynomial ``x``) is the primitive element
when the field polynomial is primitive, as in IEEE 802.3 Clause 91
(``x^10 + x^3 + 1`` = ``0x409``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import FecError

__all__ = ["GF2m", "is_primitive"]


def _order_of_x(poly: int, m: int) -> int:
    """Multiplicative order of x modulo ``poly`` (0 if x is not invertible or never returns to 1)."""
    q = 1 << m
    x = 1
    for k in range(1, q):
        x <<= 1
        if x & q:
            x ^= poly
        if x == 1:
            return k
    return 0


def is_primitive(poly: int, m: int) -> bool:
    """True when ``poly`` (degree ``m``, bit i = coefficient of x^i) is primitive over GF(2):
    irreducible, and x generates all ``2^m - 1`` non-zero elements.

    Parameters
    ----------
    poly : int
        The polynomial, bit i the coefficient of x^i.
    m : int
        Its degree (below 2: False).

    Returns
    -------
    bool
        Whether ``poly`` is primitive of degree ``m``.
    """
    if m < 2 or poly >> m != 1 or not poly & 1:
        return False
    return _order_of_x(poly, m) == (1 << m) - 1


@dataclass(frozen=True, eq=False)
class GF2m:
    """GF(2^m) defined by a primitive polynomial, with ``exp``/``log`` tables.

    ``exp`` has ``2 (q - 1)`` entries so that ``exp[log a + log b]`` needs no modulo;
    ``log[0]`` is unused (set to 0).
    """

    m: int
    poly: int
    exp: np.ndarray = field(repr=False)
    log: np.ndarray = field(repr=False)

    @classmethod
    def build(cls, m: int, poly: int) -> "GF2m":
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or not 2 <= m <= 16:
            raise FecError(f"symbol size m must be an integer from 2 to 16 bits, got {m!r}")
        if not isinstance(poly, (int, np.integer)) or isinstance(poly, bool):
            raise FecError(f"primitive_poly must be an integer, got {poly!r}")
        if poly >> m != 1:
            raise FecError(f"primitive_poly 0x{int(poly):x} does not have degree m = {m}")
        if not is_primitive(int(poly), int(m)):
            raise FecError(f"polynomial 0x{int(poly):x} is not primitive over GF(2) for m = {m}")
        q = 1 << m
        exp = np.zeros(2 * (q - 1), dtype=np.int32)
        log = np.zeros(q, dtype=np.int32)
        x = 1
        for i in range(q - 1):
            exp[i] = x
            log[x] = i
            x <<= 1
            if x & q:
                x ^= poly
        exp[q - 1 :] = exp[: q - 1]
        return cls(int(m), int(poly), exp, log)

    @property
    def q(self) -> int:
        """Number of field elements, ``2^m``."""
        return 1 << self.m

    def mul(self, a, b):
        """Elementwise product (numpy arrays or ints)."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        out = self.exp[(self.log[a] + self.log[b]) % (self.q - 1)]
        return np.where((a == 0) | (b == 0), 0, out)

    def pow_alpha(self, e):
        """``alpha^e`` for any integer exponent(s)."""
        return self.exp[np.asarray(e, dtype=np.int64) % (self.q - 1)]

    def inv(self, a):
        a = np.asarray(a, dtype=np.int64)
        if np.any(a == 0):
            raise FecError("0 has no inverse")
        return self.exp[(self.q - 1 - self.log[a]) % (self.q - 1)]

    def poly_mul(self, p, r) -> np.ndarray:
        """Product of two polynomials given highest degree first."""
        out = np.zeros(len(p) + len(r) - 1, dtype=np.int64)
        for i, a in enumerate(p):
            if a:
                out[i : i + len(r)] ^= self.mul(a, np.asarray(r))
        return out
