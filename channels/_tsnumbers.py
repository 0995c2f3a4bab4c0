"""Whitespace-separated decimal numbers to float64, vectorised with numpy, exactly as ``float``.

The numeric block of a 6,000-point four-port Touchstone file holds about 200,000 numbers;
Python's ``float`` takes about 0.2 us each, which is most of what scikit-rf's parser spends.
:func:`parse_numbers` reads them with numpy instead, a column of characters at a time over
all the numbers at once, and gets the same doubles bit for bit:

* A number of the form ``[+-]digits[.digits][(e|E)[+-]digits]`` whose digits, read as one
  integer ``m`` with the decimal point dropped, stay below 2**53, and whose power of ten
  ``e`` (the exponent less the count of fractional digits) lies in -22..22, is
  ``m * 10**e`` or ``m / 10**-e``: both operands are exact doubles, so the one IEEE
  operation rounds the exact value correctly, which is what ``float`` (David Gay's
  correctly rounded ``strtod``) returns too (Clinger's fast path, used inside ``strtod``).
  Zero is zero whatever its exponent, with its sign.
* Where numpy's ``longdouble`` is the x87 80-bit format (64-bit significand: Linux and
  macOS on x86-64), a number with 16 to 19 digits (``m`` below 2**64, exact in it) and
  ``e`` in -27..27 (``10**e`` exact in it too) is ``m * 10**e`` rounded once to 64 bits,
  then to 53. Rounding twice gives the correctly rounded double unless the 64-bit result
  lies exactly halfway between two doubles (its 11 extra bits ``10000000000``): a
  64-bit value nearer to the exact one than that halfway point would otherwise exist.
  Those (one in 2,000) go to ``float``. Tools that write doubles in full (``repr``, 17
  significant digits) make half their numbers of this kind.
* Every other token (20 digits, ``1e-30``, a malformed one) goes to ``float`` itself if it
  is a Touchstone number (:func:`is_number`: ``[+-]digits[.digits][(e|E)[+-]digits]``, ASCII
  digits only) or spells NaN or infinity (``nan``, ``-inf``, ``Infinity``: read as ``float``
  reads them, so that the checks after parsing refuse them with the frequency they are at).
  ``float`` also takes ``1_000`` and non-ASCII digits, which no Touchstone file holds: such
  a token makes :func:`parse_numbers` return ``None``.

Touchstone files are now read by :mod:`channels._tsscan` (one compiled pass with the same
fast path); :func:`parse_numbers` stays as the reference its tests compare with, and
:func:`_wide`, the 80-bit path, finishes the scanner's 16 to 19 digit numbers.

Tokens are split as ``str.split()`` splits ASCII text (space, tab, CR, LF, VT, FF and
``\\x1c``-``\\x1f`` separate). A byte above 127 is never a separator here, so text with
non-ASCII separators reads as tokens ``float`` refuses: the caller then falls back to the
slow parser, which never returns something different.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["float_reads", "is_number", "is_integer", "is_nonfinite", "parse_numbers", "split_tokens", "STRUCTURE_TABLE",
           "wide_path"]

# A number as Touchstone writes one (the specification's integers and floating-point
# values): an optional sign, ASCII digits with an optional decimal point, an optional
# exponent. Python's float() also accepts "1_000", "nan", "inf", "infinity", non-ASCII digits
# and surrounding blanks; none of those is a Touchstone number.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMBER_B = re.compile(_NUMBER.pattern.encode())
_INTEGER = re.compile(r"\+?[0-9]+")
_NONFINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_NONFINITE_B = re.compile(_NONFINITE.pattern.encode(), re.IGNORECASE)


def is_number(token: str | bytes) -> bool:
    """Whether ``token`` is a Touchstone number (``[+-]digits[.digits][(e|E)[+-]digits]``)."""
    return (_NUMBER_B if isinstance(token, bytes) else _NUMBER).fullmatch(token) is not None


def is_nonfinite(token: str | bytes) -> bool:
    """Whether ``token`` spells NaN or infinity as ``float`` reads it (``nan``, ``-inf``,
    ``Infinity``): not a Touchstone number, but read as one so that the finite-value checks
    after parsing name where it is."""
    return (_NONFINITE_B if isinstance(token, bytes) else _NONFINITE).fullmatch(token) is not None


def float_reads(token: str) -> bool:
    """Whether Python's ``float`` reads ``token`` (Touchstone number or not)."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def is_integer(token: str) -> bool:
    """Whether ``token`` is a whole number written with ASCII digits (an optional ``+``)."""
    return _INTEGER.fullmatch(token) is not None

_POW10 = np.array([10.0**k for k in range(23)])  # 1e0 .. 1e22, all exact doubles
_MAX_MANTISSA_DIGITS = 19  # 10**19 < 2**64: the uint64 accumulation of at most 19 digits is exact
_MAX_EXPONENT_DIGITS = 4
_X87 = np.finfo(np.longdouble).nmant == 63  # numpy's longdouble is the 80-bit extended format
if _X87:
    _POW10_X87 = np.ones(28, np.longdouble)  # 1e0 .. 1e27: 5**27 < 2**64, all exact in it
    for _k in range(1, 28):
        _POW10_X87[_k] = _POW10_X87[_k - 1] * np.longdouble(10)
    _TWO64 = np.longdouble(2) ** 64

# Python's ASCII whitespace (str.split / str.strip) -> space, except LF; other control
# bytes and DEL -> DEL, never a separator and never part of a number.
_ws = b"\t\x0b\x0c\r\x1c\x1d\x1e\x1f"
_ctl = bytes(b for b in list(range(32)) + [127] if b not in _ws and b != 10)
STRUCTURE_TABLE = bytes.maketrans(_ws + _ctl, b" " * len(_ws) + b"\x7f" * len(_ctl))


def split_tokens(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) byte offsets of the tokens of ``b`` (uint8, already through
    :data:`STRUCTURE_TABLE`, so that exactly the bytes <= 32 separate)."""
    if b.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    nw = b > 32
    edges = np.flatnonzero(nw[1:] != nw[:-1]) + 1
    if nw[0]:
        edges = np.concatenate((np.zeros(1, np.int64), edges))
    if nw[-1]:
        edges = np.concatenate((edges, np.array([b.size], np.int64)))
    return edges[0::2], edges[1::2]


_U1, _U9 = np.uint8(1), np.uint8(9)


def _scan(bp: np.ndarray, st: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    """Read every token of ``bp`` (padded with ``width`` zero bytes) a character column at a
    time: the mantissa digits as one integer (uint64; exact for the 19 digits allowed), the
    exponent, the counts of digits, and whether the token breaks the grammar.

    Returns ``(m, x, nman, nfrac, nexp, has_e, xneg, bad)`` per token; flags are 0/1 bytes.
    Every operation is on arrays of one small dtype (numpy's mixed-dtype loops are several
    times slower). Going on with only the tokens not yet ended costs as much as it saves."""
    n = st.size
    idx = st.copy()
    m = np.zeros(n, np.uint64)
    x = np.zeros(n, np.uint16)
    nman, nfrac, nexp, has_dot, has_e, prev_e, xneg, bad = (np.zeros(n, np.uint8) for _ in range(8))
    live = np.ones(n, np.uint8)
    for j in range(width):
        c = bp[idx]
        idx += 1
        live &= c > 32
        c *= live  # 0 past the token's end
        d = c - np.uint8(48)
        isd = (d < 10).view(np.uint8)
        isdot = (c == 46).view(np.uint8)
        ise = ((c | 32) == 101).view(np.uint8)
        minus = (c == 45).view(np.uint8)
        issign = minus | (c == 43).view(np.uint8)
        if j == 0:
            bad |= ise  # a leading exponent
        else:
            bad |= issign & (prev_e ^ _U1)  # a sign neither first nor right after the e
            xneg |= minus & prev_e
        bad |= (c != 0).view(np.uint8) & ((isd | isdot | ise | issign) ^ _U1)
        bad |= isdot & (has_dot | has_e)
        bad |= ise & (has_e | (nman == 0).view(np.uint8))
        mant = isd & (has_e ^ _U1)
        expd = isd & has_e
        nman += mant
        nfrac += mant & has_dot
        nexp += expd
        # m = 10 m + d where a mantissa digit, unchanged elsewhere; two columns at a time in
        # uint8 (a factor 1, 10 or 100 and a value below 100), then once into uint64
        if j % 2 == 0:
            gmul, gdig = mant * _U9 + _U1, d * mant
        else:
            mul = mant * _U9 + _U1
            gmul *= mul
            gdig *= mul
            gdig += d * mant
        if j % 2 == 1 or j + 1 == width:
            m *= gmul.astype(np.uint64)
            m += gdig.astype(np.uint64)
        if expd.any():
            x *= (expd * _U9 + _U1).astype(np.uint16)
            x += (d * expd).astype(np.uint16)
        has_dot |= isdot
        has_e |= ise
        prev_e = ise
    return m, x, nman, nfrac, nexp, has_e, xneg, bad


def _wide(m: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``m * 10**e`` (``m`` uint64, ``|e| <= 27``) via the 80-bit format, and where that is the
    correctly rounded double (not where the 80-bit value is a halfway point between doubles)."""
    ml = m.astype(np.longdouble)  # exact: 64-bit significand
    x = np.empty(m.size, np.longdouble)
    up = e >= 0
    x[up] = ml[up] * _POW10_X87[e[up]]
    down = ~up
    x[down] = ml[down] / _POW10_X87[-e[down]]
    mant, _ = np.frexp(x)  # x = mant * 2**k, 0.5 <= mant < 1: mant * 2**64 is the significand
    low = (mant * _TWO64).astype(np.uint64) & np.uint64(0x7FF)
    return x.astype(np.float64), low != np.uint64(0x400)


def wide_path(m: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``m * 10**e`` by the 80-bit path (:func:`_wide`: the values, and where each is the
    correctly rounded double), or None where there is no such path (module docstring)."""
    return _wide(m, e) if _X87 else None


def _x87_works() -> bool:
    """Whether the 80-bit path gives ``float``'s doubles here (an FPU left in a lower
    precision by some library would not): a few values, halfway points among them."""
    cases = [(2**53 + 1, 0), (2**53 + 3, 0), (9127562810000001, -17), (12345678901234567891, -19),
             (2**63 + 2**10, 0), (9999999999999999999, 27), (18446744073709551615, -27)]
    m = np.array([c[0] for c in cases], np.uint64)
    v, exact = _wide(m, np.array([c[1] for c in cases]))
    return all(not ok or x == float(f"{c[0]}e{c[1]}") for x, ok, c in zip(v.tolist(), exact.tolist(), cases))


if _X87:
    _X87 = _x87_works()


def parse_numbers(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The numbers in the bytes ``b`` (a uint8 array) as float64, each equal to
    ``float(token)``, with the tokens' start and end byte offsets; ``None`` when a token is
    not a number ``float`` accepts.

    ``b`` must already be through :data:`STRUCTURE_TABLE` (bytes <= 32 other than space
    and LF would otherwise read as separators where ``str.split`` sees none).
    """
    st, en = split_tokens(b)
    if st.size == 0:
        return np.zeros(0), st, en
    width = int((en - st).max())
    width = min(width, 2 + _MAX_MANTISSA_DIGITS + 3 + _MAX_EXPONENT_DIGITS)  # longer ones are read by float
    bp = np.concatenate((b, np.zeros(width + 1, np.uint8)))
    mi, x, nman, nfrac, nexp, has_e, xneg, bad = _scan(bp, st, width)
    x = x.astype(np.int64)
    e10 = np.where(xneg.view(bool), -x, x) - nfrac
    bad = (bad.view(bool) | ((en - st) > width) | (nman == 0) | (has_e.view(bool) & (nexp == 0))
           | (nman > _MAX_MANTISSA_DIGITS) | (nexp > _MAX_EXPONENT_DIGITS))
    fast = ~bad & (((mi < np.uint64(2**53)) & (np.abs(e10) <= 22)) | (mi == 0))
    m = mi.astype(np.float64)  # exact where fast
    k = np.minimum(np.abs(e10), 22).astype(np.intp)
    p = _POW10[k]
    v = np.where(e10 >= 0, m * p, m / p)
    if _X87:
        wide = np.flatnonzero(~bad & ~fast & (np.abs(e10) <= 27))
        if wide.size:
            vw, exact = _wide(mi[wide], e10[wide])
            v[wide] = vw
            fast[wide] = exact
    np.negative(v, out=v, where=bp[st] == 45)
    slow = np.flatnonzero(~fast)
    if slow.size:
        tokens = [b[i:k].tobytes() for i, k in zip(st[slow].tolist(), en[slow].tolist())]
        if not all(_NUMBER_B.fullmatch(t) or _NONFINITE_B.fullmatch(t) for t in tokens):
            return None
        v[slow] = [float(t) for t in tokens]
    return v, st, en
