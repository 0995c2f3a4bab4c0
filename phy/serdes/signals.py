"""Test signals for the PAM4/NRZ link simulator: PRBS, Gray PAM4, the 1/(1+D) precoder,
the IEEE 802.3 PAM4 test patterns and symbol amplitudes.

Conventions
-----------
* Bits are ``uint8`` 0/1 in transmission order; PAM4 symbols are level indices
  ``0..3`` (``int8``), level 0 the lowest; one symbol is one unit interval (UI).
* Two bits make one PAM4 symbol, the first bit the MSB, by the IEEE 802.3 Gray map
  ``00 -> 0, 01 -> 1, 11 -> 2, 10 -> 3`` (:data:`fec.interleave.GRAY_PAM4`).
* The PRBS generators are the shift registers of IEEE 802.3 (Figure 49-9 for PRBS31,
  Figure 94-6 for PRBS13, Table 68-6 for PRBS9): stages ``S0 .. S(n-1)``, the feedback
  bit enters ``S0`` while ``Si`` moves to ``S(i+1)``, and the feedback bit is the
  output. A seed or :attr:`Prbs.state` is that register as an integer, ``Si`` in
  bit ``i``: the last ``n`` bits sent, the most recent in bit 0.

>>> g = Prbs(31)                        # the 802.3 PRBS31, all-ones seed
>>> a = g.bits(1000); b = g.bits(1000)  # continues bit for bit
>>> lv = gray_pam4(prbs(13, 2 * 8191))  # PRBS13 as PAM4 levels 0..3
>>> tx = precode(lv)                    # 1/(1+D) mod 4; postcode(tx) == lv
>>> volts = pam_levels("pam4")[lv]      # -1, -1/3, 1/3, 1
"""

from __future__ import annotations

import numpy as np

from fec import FecError
from fec.interleave import GRAY_PAM4, bits_per_ui

from .. import _validate as check
from ..errors import ConfigError
from . import _kernels as _k

__all__ = [
    "PRBS_POLYNOMIALS",
    "Prbs",
    "gray_pam4",
    "pam4_bits",
    "pam_levels",
    "postcode",
    "prbs",
    "prbs13q",
    "precode",
    "random_symbols",
    "ssprq",
]

# Generator polynomials as exponents, highest first; the recurrence is
# b[k] = XOR of b[k - e] over the non-zero exponents e.
PRBS_POLYNOMIALS: dict[int, tuple[int, ...]] = {
    7: (7, 6, 0),  # not in ITU-T O.150; the test sets' PRBS7 (Agilent J-BERT N4903B guide)
    9: (9, 5, 0),  # ITU-T O.150 5.1; IEEE 802.3 Table 68-6
    11: (11, 9, 0),  # ITU-T O.150 5.2; IEEE 802.3 Clause 72 training pattern
    13: (13, 12, 2, 1, 0),  # IEEE 802.3 94.2.9.1, Figure 94-6 (Clause 94/120 PRBS13)
    15: (15, 14, 0),  # ITU-T O.150 5.3
    23: (23, 18, 0),  # ITU-T O.150 5.6
    31: (31, 28, 0),  # ITU-T O.150 5.8; IEEE 802.3 49.2.8, Figure 49-9
}
_INVERTED = frozenset({31})  # IEEE 802.3 Figure 49-9: the PRBS31 generator's output is inverted

# IEEE 802.3 120.5.11.2.1: the example seed, S0..S12 = 0000010101011 (S0 written first).
_PRBS13Q_SEED = 0b1_1010_1010_0000
# IEEE 802.3 120.5.11.2.3, Table 120-2: three PRBS31 sections (seed, bits), 32768 bits.
_SSPRQ_SECTIONS = ((0x00000002, 10924), (0x34013FF7, 10922), (0x0CCCCCCC, 10922))

_FROM_GRAY = np.argsort(GRAY_PAM4).astype(np.int8)  # 2-bit value (MSB first) -> level


# ----------------------------------------------------------------------------- checks


def _values(x, name: str, m: int) -> np.ndarray:
    """``x`` as an integer array of values in ``0 .. m-1``."""
    a = np.asarray(x)
    if a.dtype.kind not in "biu":
        raise ConfigError(f"{name} must hold integers, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= m):
        raise ConfigError(f"{name} must lie in 0 .. {m - 1}, got values from {a.min()} to {a.max()}")
    return a.astype(np.int64)


def _levels_count(modulation: str) -> int:
    try:
        return 2 ** bits_per_ui(modulation)
    except FecError as e:
        raise ConfigError(str(e)) from None


# ----------------------------------------------------------------------------- PRBS


class Prbs:
    """A PRBS generator that carries its state from one call to the next.

    Parameters
    ----------
    order : int
        One of the keys of :data:`PRBS_POLYNOMIALS` (7, 9, 11, 13, 15, 23, 31).
    seed : int, optional
        Initial register, ``Si`` in bit ``i``, in ``1 .. 2**order - 1``; default all
        ones. Zero would lock the register and raises :class:`phy.ConfigError`.

    Notes
    -----
    The output of order 31 is inverted, as IEEE 802.3 Figure 49-9 specifies (and as
    PRBS31Q and SSPRQ need); the other orders are not. Test sets that invert other
    orders too (ITU-T O.150 inverts some) send ``1 - bits``.
    ``Prbs(order, seed=g.state)`` continues where ``g`` stopped.
    """

    def __init__(self, order: int, seed: int | None = None):
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order not in PRBS_POLYNOMIALS:
            raise ConfigError(f"PRBS order must be one of {sorted(PRBS_POLYNOMIALS)}, got {order!r}")
        self.order = int(order)
        self._mask = (1 << self.order) - 1
        seed = self._mask if seed is None else seed
        self._state = check.integer(seed, f"PRBS{order} seed (0 locks the register)", 1, self._mask)
        self._taps = np.array([e - 1 for e in PRBS_POLYNOMIALS[self.order] if e], dtype=np.int64)
        self._invert = int(self.order in _INVERTED)

    @property
    def period(self) -> int:
        """Length of the sequence before it repeats, bits: ``2**order - 1``."""
        return self._mask

    @property
    def state(self) -> int:
        """The register now, ``Si`` in bit ``i`` (a valid seed)."""
        return self._state

    def bits(self, n: int) -> np.ndarray:
        """The next ``n`` bits (``uint8`` 0/1, transmission order)."""
        out = np.empty(check.integer(n, "n", 0), dtype=np.uint8)
        self._state = int(_k.lfsr_bits(self._state, self._mask, self._taps, self._invert, out))
        return out


def prbs(order: int, n: int, seed: int | None = None) -> np.ndarray:
    """The first ``n`` bits (``uint8``) of ``Prbs(order, seed)``."""
    return Prbs(order, seed).bits(n)


# ----------------------------------------------------------------------------- Gray PAM4


def gray_pam4(bits) -> np.ndarray:
    """PAM4 levels from pairs of bits, first bit the MSB, by the 802.3 Gray map.

    Parameters
    ----------
    bits : array_like of 0/1, shape (..., 2m)
        Bits in transmission order along the last axis.

    Returns
    -------
    numpy.ndarray of int8, shape (..., m)
        Level indices ``0..3``: ``00 -> 0, 01 -> 1, 11 -> 2, 10 -> 3``
        (IEEE 802.3 120.5.7, :data:`fec.interleave.GRAY_PAM4`), one per UI.
    """
    b = _values(bits, "bits", 2)
    if b.ndim == 0 or b.shape[-1] % 2:
        raise ConfigError(f"gray_pam4 needs an even number of bits along the last axis, got shape {b.shape}")
    pairs = b.reshape(b.shape[:-1] + (-1, 2))
    return _FROM_GRAY[2 * pairs[..., 0] + pairs[..., 1]]


def pam4_bits(levels) -> np.ndarray:
    """Inverse of :func:`gray_pam4`: levels ``0..3`` (..., m) -> bits ``uint8`` (..., 2m)."""
    v = GRAY_PAM4[_values(levels, "PAM4 levels", 4)]
    return np.stack([v >> 1, v & 1], axis=-1).reshape(v.shape[:-1] + (-1,)).astype(np.uint8)


# ----------------------------------------------------------------------------- precoder


def precode(levels, initial=0) -> np.ndarray:
    """The transmitter's 1/(1+D) mod 4 precoder: ``y_k = (x_k - y_(k-1)) mod 4``.

    IEEE 802.3 precoding (120.5.7.2, 135.5.7.2): the receiver's :func:`postcode`
    undoes it, and a single detector error then becomes two errors instead of a burst.

    Parameters
    ----------
    levels : array_like of int in 0..3, shape (..., n)
        Data levels ``x`` along the last axis, one per UI.
    initial : int or array_like of int in 0..3
        ``y_(-1)``, the previous output symbol (0 at the start of a stream; for the
        next chunk of a stream, the last symbol this function returned). Broadcast
        against ``levels.shape[:-1]``.

    Returns
    -------
    numpy.ndarray of int8, shape (..., n)
        Precoded levels ``y``.
    """
    x = _values(levels, "levels", 4)
    y0 = _values(initial, "initial", 4)[..., None]
    # Unrolled: y_k = (-1)^k (sum_{j<=k} (-1)^j x_j - y_(-1)).
    sign = 1 - 2 * (np.arange(x.shape[-1]) % 2)
    return np.mod(sign * (np.cumsum(sign * x, axis=-1) - y0), 4).astype(np.int8)


def postcode(levels, initial=0) -> np.ndarray:
    """The receiver's inverse of :func:`precode`: ``x_k = (y_k + y_(k-1)) mod 4``.

    Parameters
    ----------
    levels : array_like of int in 0..3, shape (..., n)
        Detected levels ``y`` along the last axis, one per UI.
    initial : int or array_like of int in 0..3
        ``y_(-1)``, the symbol received before ``levels[..., 0]`` (the precoder's
        ``initial``; for the next chunk, the last symbol of this one).

    Returns
    -------
    numpy.ndarray of int8, shape (..., n)
        Data levels ``x``.
    """
    y = _values(levels, "levels", 4)
    y0 = np.broadcast_to(_values(initial, "initial", 4)[..., None], y.shape[:-1] + (1,))
    return np.mod(y + np.concatenate([y0, y[..., :-1]], axis=-1), 4).astype(np.int8)


# ----------------------------------------------------------------------------- 802.3 patterns


def prbs13q(seed: int | None = None) -> np.ndarray:
    """One period of PRBS13Q (IEEE 802.3 120.5.11.2.1): 8191 PAM4 levels (int8, 0..3).

    Two periods of PRBS13 (16382 bits; 8191 is odd, so the pairs of the second period
    fall on the other bit phase), Gray coded. ``seed`` is the PRBS13 register as in
    :class:`Prbs`; the default is the clause's example seed, S0..S12 = 0000010101011.
    """
    return gray_pam4(prbs(13, 2 * 8191, _PRBS13Q_SEED if seed is None else seed))


def ssprq() -> np.ndarray:
    """One period of SSPRQ (IEEE 802.3 120.5.11.2.3): 65535 PAM4 levels (int8, 0..3).

    The three PRBS31 sections of Table 120-2 (each from its seed, the PRBS31 generator
    of Figure 49-9 with its inverted output) make a 32768-bit sequence ``A``. The bits
    sent are ``A, A, A`` without its first bit, ``A`` without its last (131070 bits),
    Gray coded; the symbols of the second and fourth repetitions are inverted
    (``3 - level``).
    """
    a = np.concatenate([prbs(31, n, seed) for seed, n in _SSPRQ_SECTIONS])
    lv = gray_pam4(np.concatenate([a, a, a[1:], a[:-1]]))
    q = a.size // 2  # symbols per repetition: 16384, then 16383 and 16384 in the second pair
    for lo, hi in ((q, 2 * q), (3 * q - 1, lv.size)):
        lv[lo:hi] = 3 - lv[lo:hi]
    return lv


# ----------------------------------------------------------------------------- symbols


def pam_levels(modulation: str, level_mismatch: float = 1.0) -> np.ndarray:
    """Normalised symbol amplitudes, lowest first (dimensionless; outer levels +-1).

    Parameters
    ----------
    modulation : {"pam4", "nrz"}
    level_mismatch : float in (0, 1]
        PAM4 inner levels at ``+-level_mismatch / 3``; 1 spaces the levels equally.
        For this symmetric compression it equals the level separation mismatch ratio
        R_LM of IEEE 802.3 120D.3.1.2, ``min(3 ES1, 3 ES2, 2 - 3 ES1, 2 - 3 ES2)``
        (above 1 that formula would fall again, so values above 1 are refused).
        NRZ has no inner levels and ignores it.

    Returns
    -------
    numpy.ndarray of float64
        ``[-1, -r/3, r/3, 1]`` for PAM4, ``[-1, 1]`` for NRZ; index with the levels.
    """
    m = _levels_count(modulation)
    r = check.number(level_mismatch, "level_mismatch (R_LM)", positive=True, hi=1)
    return np.array([-1.0, 1.0]) if m == 2 else np.array([-1.0, -r / 3, r / 3, 1.0])


def random_symbols(n: int, modulation: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent, uniform symbol indices (int8): 0..3 for PAM4, 0..1 for NRZ."""
    m = _levels_count(modulation)
    if not isinstance(rng, np.random.Generator):
        raise ConfigError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng.integers(0, m, size=check.integer(n, "n", 0), dtype=np.int8)
