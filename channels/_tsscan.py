"""One compiled pass over a Touchstone file's data block: lines, comments, tokens, numbers.

:func:`scan` reads the bytes from a file's first data line on (``np.frombuffer(data,
np.uint8)``, the text's UTF-8 or ASCII bytes) once, as :class:`channels._tsread`'s numpy
reader read them in several passes (:func:`channels._tsnumbers.parse_numbers` and the
comment blanking of ``_tsread``), with the same results:

* Lines end at LF. A line whose first non-blank byte is ``!``, ``#`` or ``[`` is a
  *special* line (a comment or keyword that scikit-rf's table handles): its extent from that
  byte to the line's end is returned, with whether it is a bare ``!`` (nothing but blanks
  after it), and none of its bytes is a token. On any other line everything from the first
  ``!`` on is a comment and ignored.
* Blanks are the bytes ``str.split`` separates ASCII text at (space, tab, VT, FF, CR and
  ``\\x1c``-``\\x1f``; LF ends a line). Every other byte, control characters and bytes
  above 127 included, belongs to a token (and makes it a token that is not a number).
* A token of the form ``[+-]digits[.digits][(e|E)[+-]digits]`` with at most 19 mantissa
  digits (read as one integer ``m``, the decimal point dropped) and at most 4 exponent
  digits, whose ``m`` is below 2**53 and whose power of ten ``e`` (the exponent less the
  fractional digits) lies in -22..22, or whose ``m`` is 0, is ``m * 10**e`` or
  ``m / 10**-e`` in one IEEE operation, negated for a leading ``-``: Clinger's fast path,
  exactly ``float(token)`` (:mod:`channels._tsnumbers` explains why). The others are
  returned by index with ``m`` and ``e`` for the caller to finish as before: code 1 (in
  the grammar, at most 19 digits, ``|e| <= 27``: the 80-bit path where there is one), code
  2 (anything else: ``float`` after the grammar check).

The kernel has one signature (a C-contiguous uint8 array) and is compiled once into Numba's
cache (:mod:`fec._numba_setup` places it with the project's other kernels). Its cost is
linear in the bytes.
"""

from __future__ import annotations

import numpy as np
from fec import _numba_setup  # noqa: F401  (first: the cache folder for the kernel below)
from numba import njit

from . import _tsnumbers
from ._tsnumbers import _NONFINITE_B, _NUMBER_B

__all__ = ["finish_slow", "scan", "scan_bytes"]

_POW10 = np.array([10.0**k for k in range(23)])  # 1e0 .. 1e22, all exact doubles


@njit(cache=True, nogil=True)
def _blank(c) -> bool:
    """A byte ``str.split`` separates at, other than LF."""
    return c == 32 or (c >= 9 and c <= 13 and c != 10) or (c >= 28 and c <= 31)


@njit(cache=True, nogil=True)
def _special_line(b, j, n, spec, nspec):
    """Record the special line from ``b[j]`` to its end; returns (end, nspec)."""
    k = j + 1
    bare = 1 if b[j] == 33 else 0
    while k < n and b[k] != 10:
        if not _blank(b[k]):
            bare = 0
        k += 1
    spec[nspec, 0] = j
    spec[nspec, 1] = k
    spec[nspec, 2] = bare
    return k, nspec + 1


@njit(cache=True, nogil=True)
def scan(b):
    """Tokens and special lines of ``b`` (uint8, C-contiguous); see the module docstring.

    Returns ``(v, start, end, first, slow, spec)``: per token its value (fast path; 0 for
    the others), start and end byte offsets and whether it is the first on its line (0/1);
    ``slow`` an ``(k, 4)`` int64 array of (token index, code, m as int64 bits, e) for the
    tokens not read here; ``spec`` an ``(s, 3)`` int64 array of (start, end, bare) of the
    special lines, in order.
    """
    n = b.size
    cap = n // 2 + 1
    v = np.empty(cap, np.float64)
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    first = np.empty(cap, np.uint8)
    slow = np.empty((16, 4), np.int64)
    spec = np.empty((16, 3), np.int64)
    nt = 0
    ns = 0
    nspec = 0
    two53 = np.uint64(1) << np.uint64(53)
    i = 0
    while i < n:
        j = i
        while j < n and _blank(b[j]):
            j += 1
        if j < n and (b[j] == 33 or b[j] == 35 or b[j] == 91):
            if nspec == spec.shape[0]:
                spec = _grow(spec)
            j, nspec = _special_line(b, j, n, spec, nspec)
            i = j + 1
            continue
        line_first = 1
        while j < n and b[j] != 10:
            c = b[j]
            if _blank(c):
                j += 1
                continue
            if c == 33:  # a comment to the line's end
                while j < n and b[j] != 10:
                    j += 1
                break
            ts = j
            m = np.uint64(0)
            nman = 0
            nfrac = 0
            nexp = 0
            x = 0
            has_dot = False
            has_e = False
            prev_e = False
            xneg = False
            bad = False
            while j < n:
                c = b[j]
                if c == 10 or c == 33 or _blank(c):
                    break
                if c >= 48 and c <= 57:
                    if has_e:
                        nexp += 1
                        if nexp <= 4:
                            x = x * 10 + (c - 48)
                    else:
                        nman += 1
                        if nman <= 19:
                            m = m * np.uint64(10) + np.uint64(c - 48)
                        if has_dot:
                            nfrac += 1
                    prev_e = False
                elif c == 46:
                    if has_dot or has_e:
                        bad = True
                    has_dot = True
                    prev_e = False
                elif c == 101 or c == 69:
                    if j == ts or has_e or nman == 0:
                        bad = True
                    has_e = True
                    prev_e = True
                elif c == 43 or c == 45:
                    if prev_e:
                        if c == 45:
                            xneg = True
                    elif j != ts:
                        bad = True
                    prev_e = False
                else:
                    bad = True
                    prev_e = False
                j += 1
            if nt == cap:  # (never: a token and its blank take two bytes)
                break
            start[nt] = ts
            end[nt] = j
            first[nt] = line_first
            line_first = 0
            bad = bad or nman == 0 or (has_e and nexp == 0) or nman > 19 or nexp > 4
            e10 = (-x if xneg else x) - nfrac
            ae = -e10 if e10 < 0 else e10
            if not bad and (m == 0 or (m < two53 and ae <= 22)):
                fm = np.float64(m)
                if ae > 22:
                    ae = 22
                r = fm * _POW10[ae] if e10 >= 0 else fm / _POW10[ae]
                v[nt] = -r if b[ts] == 45 else r
            else:
                v[nt] = 0.0
                if ns == slow.shape[0]:
                    slow = _grow(slow)
                slow[ns, 0] = nt
                slow[ns, 1] = 1 if (not bad and ae <= 27) else 2
                slow[ns, 2] = np.int64(m)
                slow[ns, 3] = e10
                ns += 1
            nt += 1
        i = j + 1
    return (v[:nt].copy(), start[:nt].copy(), end[:nt].copy(), first[:nt].copy(),
            slow[:ns].copy(), spec[:nspec].copy())


@njit(cache=True, nogil=True)
def _grow(a):
    out = np.empty((a.shape[0] * 2, a.shape[1]), a.dtype)
    out[:a.shape[0]] = a
    return out


def scan_bytes(raw: bytes, start: int = 0):
    """:func:`scan` of ``raw[start:]`` (without copying it); offsets are from ``start``."""
    return scan(np.frombuffer(raw, np.uint8)[start:])


def finish_slow(v: np.ndarray, raw: bytes, start: int, st: np.ndarray, en: np.ndarray, slow: np.ndarray) -> bool:
    """Fill in ``v`` the tokens :func:`scan` left (``slow``), as
    :func:`channels._tsnumbers.parse_numbers` reads them: the 80-bit path for code 1 where
    it gives the correctly rounded double, ``float`` for the others when they are Touchstone
    numbers or spell NaN or infinity. False (``v`` then partly filled) when a token is
    neither, as ``parse_numbers`` returns None."""
    idx, code = slow[:, 0], slow[:, 1]
    done = np.zeros(idx.size, bool)
    if _tsnumbers._X87:
        w = np.flatnonzero(code == 1)
        if w.size:
            vw, exact = _tsnumbers._wide(slow[w, 2].view(np.uint64), slow[w, 3])
            neg = np.frombuffer(raw, np.uint8)[st[idx[w]] + start] == 45
            v[idx[w]] = np.where(neg, -vw, vw)
            done[w] = exact
    rest = idx[~done]
    if rest.size:
        tokens = [raw[i:k] for i, k in zip((st[rest] + start).tolist(), (en[rest] + start).tolist())]
        if not all(_NUMBER_B.fullmatch(t) or _NONFINITE_B.fullmatch(t) for t in tokens):
            return False
        v[rest] = [float(t) for t in tokens]
    return True
