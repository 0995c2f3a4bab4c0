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
  digits after its leading zeros (read as one integer ``m``, the decimal point dropped) and at most 4 exponent
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

from ._tsnumbers import is_nonfinite, is_number, wide_path

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

    Returns ``(v, first, slow, spec)``: per token its value (fast path; 0 for the others)
    and whether it is the first on its line (0/1); ``slow`` a ``(k, 6)`` int64 array of
    (token index, code, m as int64 bits, e, start, end) for the tokens not read here (byte
    offsets, the end exclusive); ``spec`` an ``(s, 3)`` int64 array of (start, end, bare) of
    the special lines, in order.
    """
    n = b.size
    cap = n // 16 + 64  # grown below when short: Touchstone numbers take 8 to 20 bytes
    v = np.empty(cap, np.float64)
    first = np.empty(cap, np.uint8)
    slow = np.empty((64, 6), np.int64)
    spec = np.empty((64, 3), np.int64)
    i = 0
    nt = 0
    ns = 0
    nspec = 0
    while True:  # (the arrays grow here, outside the byte loop, which never reassigns them)
        i, nt, ns, nspec, full = _scan_from(b, i, nt, ns, nspec, v, first, slow, spec)
        if full == 0:
            break
        if full == 1:
            slow = np.concatenate((slow, np.empty_like(slow)))
        elif full == 2:
            spec = np.concatenate((spec, np.empty_like(spec)))
        else:
            v = np.concatenate((v, np.empty_like(v)))
            first = np.concatenate((first, np.empty_like(first)))
    return v[:nt], first[:nt], slow[:ns], spec[:nspec]


@njit(cache=True, nogil=True)
def _scan_from(b, i, nt, ns, nspec, v, first, slow, spec):
    """:func:`scan` from the line starting at ``i`` with the counts so far; returns the
    counts and 0 at the end, or the line to resume at (its counts) and 1, 2 or 3 when
    ``slow``, ``spec`` or the token arrays are full.

    One loop over the bytes, kept whole for speed (longer than DESIGN's 80 lines): a
    token's state stays in registers through it (the number's grammar split out as a kernel
    of its own measured 1.29x the time on the 802.3ck through, 1.15x inlined in Numba's IR,
    with the same results). The arrays it fills are arguments, never
    reassigned inside it (:func:`scan` grows them between calls): reassigning them in the
    loop made Numba count references at every step, three times slower."""
    n = b.size
    two53 = np.uint64(1) << np.uint64(53)
    zero = np.uint64(0)
    while i < n:
        j = i
        while j < n and _blank(b[j]):
            j += 1
        if j < n and (b[j] == 33 or b[j] == 35 or b[j] == 91):
            if nspec == spec.shape[0]:
                return i, nt, ns, nspec, 2
            j, nspec = _special_line(b, j, n, spec, nspec)
            i = j + 1
            continue
        nt0 = nt
        ns0 = ns
        line_first = 1
        while j < n and b[j] != 10:
            c = b[j]
            if c == 32:  # runs of spaces (right-aligned columns): a tight loop
                j += 1
                while j < n and b[j] == 32:
                    j += 1
                continue
            if _blank(c):
                j += 1
                continue
            if c == 33:  # a comment to the line's end
                while j < n and b[j] != 10:
                    j += 1
                break
            if nt == v.size:
                return i, nt0, ns0, nspec, 3
            ts = j
            m = zero
            nman = 0
            nsig = 0  # digits from the first non-zero one: m's digits
            nfrac = 0
            nexp = 0
            x = 0
            if c == 43 or c == 45:  # the grammar, a part at a time: [+-]
                j += 1
            while j < n and b[j] >= 48 and b[j] <= 57:  # digits
                nman += 1
                if m != zero or b[j] != 48:  # (leading zeros add nothing to m)
                    nsig += 1
                    if nsig <= 19:
                        m = m * np.uint64(10) + np.uint64(b[j] - 48)
                j += 1
            if j < n and b[j] == 46:  # [.digits]
                j += 1
                while j < n and b[j] >= 48 and b[j] <= 57:
                    nman += 1
                    nfrac += 1
                    if m != zero or b[j] != 48:
                        nsig += 1
                        if nsig <= 19:
                            m = m * np.uint64(10) + np.uint64(b[j] - 48)
                    j += 1
            bad = nman == 0
            xneg = False
            if not bad and j < n and (b[j] == 101 or b[j] == 69):  # [(e|E)[+-]digits]
                j += 1
                if j < n and (b[j] == 43 or b[j] == 45):
                    xneg = b[j] == 45
                    j += 1
                while j < n and b[j] >= 48 and b[j] <= 57:
                    nexp += 1
                    if nexp <= 4:
                        x = x * 10 + (b[j] - 48)
                    j += 1
                bad = nexp == 0
            while j < n:  # the token's end: anything more breaks the grammar
                c = b[j]
                if c == 10 or c == 33 or _blank(c):
                    break
                bad = True
                j += 1
            first[nt] = line_first
            line_first = 0
            bad = bad or nsig > 19 or nexp > 4
            e10 = (-x if xneg else x) - nfrac
            ae = -e10 if e10 < 0 else e10
            if not bad and (m == zero or (m < two53 and ae <= 22)):
                fm = np.float64(np.int64(m))  # exact: m < 2**53
                if ae > 22:
                    ae = 22
                r = fm * _POW10[ae] if e10 >= 0 else fm / _POW10[ae]
                v[nt] = -r if b[ts] == 45 else r
            else:
                if ns == slow.shape[0]:
                    return i, nt0, ns0, nspec, 1
                v[nt] = 0.0
                slow[ns, 0] = nt
                slow[ns, 1] = 1 if (not bad and ae <= 27) else 2
                slow[ns, 2] = np.int64(m)
                slow[ns, 3] = e10
                slow[ns, 4] = ts
                slow[ns, 5] = j
                ns += 1
            nt += 1
        i = j + 1
    return i, nt, ns, nspec, 0


def scan_bytes(raw: bytes, start: int = 0):
    """:func:`scan` of ``raw[start:]`` (without copying it); offsets are from ``start``."""
    return scan(np.frombuffer(raw, np.uint8)[start:])


def finish_slow(v: np.ndarray, raw: bytes, start: int, slow: np.ndarray) -> bool:
    """Fill in ``v`` the tokens :func:`scan` left (``slow``), as
    :func:`channels._tsnumbers.parse_numbers` reads them: the 80-bit path for code 1 where
    it gives the correctly rounded double, ``float`` for the others when they are Touchstone
    numbers or spell NaN or infinity. False (``v`` then partly filled) when a token is
    neither, as ``parse_numbers`` returns None."""
    idx, code = slow[:, 0], slow[:, 1]
    done = np.zeros(idx.size, bool)
    w = np.flatnonzero(code == 1)
    res = wide_path(slow[w, 2].view(np.uint64), slow[w, 3]) if w.size else None
    if res is not None:
        vw, exact = res
        neg = np.frombuffer(raw, np.uint8)[slow[w, 4] + start] == 45
        v[idx[w]] = np.where(neg, -vw, vw)
        done[w] = exact
    rest = np.flatnonzero(~done)
    if rest.size:
        tokens = [raw[i:k] for i, k in zip((slow[rest, 4] + start).tolist(), (slow[rest, 5] + start).tolist())]
        if not all(is_number(t) or is_nonfinite(t) for t in tokens):
            return False
        v[idx[rest]] = [float(t) for t in tokens]
    return True
