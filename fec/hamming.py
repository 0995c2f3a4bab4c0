"""The inner code of 802.3dj's 200 Gb/s-per-lane optical PHYs: an extended Hamming code
(128,120) under the RS(544,514) outer code, decoded hard (SECDED) or soft (Chase-2).

The code (:class:`HammingCode`): the cyclic Hamming code of length ``2^r - 1`` whose
generator is a primitive polynomial ``p(x)`` of degree ``r``, systematic with the message
first and the ``r`` parity bits ``m(x) x^r mod p(x)`` after it (``c(x) = sum c[i]
x^(n-1-i)``, as :mod:`fec.rs`), then one overall even-parity bit: minimum distance 4, so it
corrects one error and detects two. :data:`SFEC` is the (128,120) code with ``p(x) = x^7 +
x^3 + 1``. 802.3dj adopted "a (128,120) extended inner code" (task-force slides, cited by a
public FEC catalogue; the clause's parity-check matrix and bit order were not found in
public sources): every primitive ``p(x)`` gives a code with the same weight distribution,
so the same error performance; bit-for-bit compatibility with the standard's mapping is
not claimed. The code is the one ``galois.BCH(127, 120)`` builds over ``GF(2^7)`` with
that polynomial, extended (tested bit for bit).

Decoders: SECDED (:meth:`HammingCode.decode_hard`) and Chase-2 with the two least reliable
bits flipped, four test patterns (:meth:`HammingCode.decode_chase`), the decoder a
DesignCon 2024 analysis of 802.3dj's inner code uses (REFERENCES.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np

from . import _hamming_kernels as K
from . import _validate as check
from .errors import FecError

__all__ = ["SFEC", "HammingCode", "InnerDecodeResult", "pam4_llr"]


@dataclass(frozen=True, eq=False)
class InnerDecodeResult:
    """What a decoder returns: ``words`` (..., n) corrected, ``status`` 0 clean, 1
    corrected, 2 detected and left as received."""

    words: np.ndarray
    status: np.ndarray

    @property
    def messages(self) -> np.ndarray:
        """The message bits of the corrected words (the first ``n - 1 - log2 n``)."""
        n = self.words.shape[-1]
        return self.words[..., : n - 1 - (n.bit_length() - 1)]


@dataclass(frozen=True, eq=False)
class HammingCode:
    """An extended Hamming code of ``r`` parity bits: ``n = 2^r`` bits, ``k = 2^r - 1 - r``.

    Parameters
    ----------
    r : int
        Parity bits of the cyclic code (7 for (128,120)).
    poly : int
        Its primitive generator polynomial, bit ``i`` the coefficient of ``x^i`` (0x89 is
        ``x^7 + x^3 + 1``).
    """

    r: int = 7
    poly: int = 0x89
    name: str = ""
    _pm: np.ndarray = field(init=False, repr=False)
    _pos: np.ndarray = field(init=False, repr=False)
    _P: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        r = check.integer(self.r, "HammingCode.r", 3)
        if r > 12:
            raise FecError(f"HammingCode.r must be at most 12 (4,096-bit words), got {r}")
        from .gf import is_primitive

        p = check.integer(self.poly, "HammingCode.poly", 1 << r)
        if p >> r != 1 or not is_primitive(p, r):
            raise FecError(f"HammingCode.poly {p:#x} is not a primitive polynomial of degree {r}")
        n0 = (1 << r) - 1
        k = n0 - r
        # the syndrome of a single error at position i of the cyclic part: x^(n0-1-i) mod p(x)
        pm = np.zeros(n0, dtype=np.int64)
        v = 1
        for e in range(n0):  # x^e mod p(x), e = 0 .. n0-1
            pm[n0 - 1 - e] = v
            v <<= 1
            if v >> r:
                v ^= p
        pos = np.full(1 << r, -1, dtype=np.int64)
        pos[pm] = np.arange(n0)
        P = ((pm[:k, None] >> np.arange(r - 1, -1, -1)) & 1).astype(np.uint8)  # message bit -> parity bits
        object.__setattr__(self, "_pm", pm[:k].copy())
        object.__setattr__(self, "_pos", pos)
        object.__setattr__(self, "_P", P)
        if not self.name:
            object.__setattr__(self, "name", f"Hamming({1 << r},{k})")

    @property
    def n(self) -> int:
        return 1 << self.r

    @property
    def k(self) -> int:
        return (1 << self.r) - 1 - self.r

    @property
    def rate(self) -> float:
        return self.k / self.n

    def encode(self, messages, *, kernel: bool = True) -> np.ndarray:
        """(..., k) bits -> (..., n): message, parity ``m(x) x^r mod p(x)``, overall parity.
        ``kernel=False``: the plain numpy encoder (a matrix product), the kernel's reference."""
        m = self._bits(messages, self.k, "messages")
        if kernel:
            flat = np.ascontiguousarray(m.reshape(-1, self.k))
            out = np.empty((flat.shape[0], self.n), dtype=np.uint8)
            K.encode(flat, self._pm, self.r, out)
            return out.reshape(*m.shape[:-1], self.n)
        par = (m.astype(np.int64) @ self._P) & 1
        body = np.concatenate([m, par.astype(np.uint8)], axis=-1)
        return np.concatenate([body, (body.sum(axis=-1, keepdims=True) & 1).astype(np.uint8)], axis=-1)

    def syndromes(self, words) -> tuple[np.ndarray, np.ndarray]:
        """(the cyclic part's syndrome as an integer, the overall parity) per word."""
        w = self._bits(words, self.n, "words")
        k, r = self.k, self.r
        bits = ((w[..., :k].astype(np.int64) @ self._P) & 1) ^ w[..., k:k + r]
        s = (bits.astype(np.int64) << np.arange(r - 1, -1, -1)).sum(axis=-1)
        return s, (w.sum(axis=-1) & 1)

    def decode_hard(self, words, *, kernel: bool = True) -> InnerDecodeResult:
        """SECDED: a single error corrected (an odd overall parity), a double one detected and
        left (even parity, non-zero syndrome). ``kernel=False``: the plain numpy decoder,
        the kernel's reference."""
        w = self._bits(words, self.n, "words")
        flat = np.ascontiguousarray(w.reshape(-1, self.n))
        if kernel:
            out = np.empty_like(flat)
            st = np.empty(flat.shape[0], dtype=np.int8)
            K.hard_decode(flat, self.k, self.r, self._pm, self._pos, out, st)
        else:
            s, q = self.syndromes(flat)
            out = flat.copy()
            st = np.where((s == 0) & (q == 0), 0, np.where(q == 1, 1, 2)).astype(np.int8)
            fix = np.flatnonzero(q == 1)
            p = np.where(s[fix] == 0, self.n - 1, self._pos[s[fix]])
            out[fix, p] ^= 1
        return InnerDecodeResult(out.reshape(w.shape), st.reshape(w.shape[:-1]))

    def decode_chase(self, llr, lrp: int = 2) -> InnerDecodeResult:
        """Chase-2: ``lrp`` least reliable bits (by ``|llr|``, ``llr = log P(0)/P(1)``)
        flipped in every combination, each test word decoded by SECDED, the candidate
        nearest the received kept (:mod:`fec._hamming_kernels`)."""
        x = np.asarray(llr, dtype=float)
        if x.shape[-1:] != (self.n,) or not np.all(np.isfinite(x)):
            raise FecError(f"llr must be finite with last axis {self.n}, got shape {x.shape}")
        m = check.integer(lrp, "lrp", 0)
        if m > 8:
            raise FecError(f"lrp must be at most 8 (256 test patterns), got {m}")
        flat = np.ascontiguousarray(x.reshape(-1, self.n))
        out = np.empty(flat.shape, dtype=np.uint8)
        st = np.empty(flat.shape[0], dtype=np.int8)
        K.chase_decode(flat, self.k, self.r, self._pm, self._pos, m, out, st)
        return InnerDecodeResult(out.reshape(x.shape), st.reshape(x.shape[:-1]))

    def hard_ber_out(self, ber: float) -> float:
        """Bit error ratio after SECDED for independent errors of ratio ``ber``: a word
        with ``w`` errors leaves 0 (``w <= 1``), ``w`` (even ``w >= 2``: detected, or an
        undetected codeword; both leave ``w``) or ``w + 1`` (odd ``w >= 3``: the decoder
        flips a bit the syndrome names, which for ``w = 3`` is never one of the three, as
        the sum of three columns of a Hamming code's check matrix is a fourth; for
        ``w >= 5`` it may be one of them, ``w - 1``, which this bound counts as ``w + 1``)."""
        p = check.probability(ber, "ber")
        n = self.n
        w = np.arange(2, n + 1)
        pw = np.array([comb(n, int(i)) for i in w], dtype=float) * p ** w * (1 - p) ** (n - w)
        return float(np.sum(pw * (w + (w % 2))) / n)

    def latency_s(self, lane_rate_bps: float, clock_hz: float = 1e9, cycles: int = 3) -> float:
        """One word's accumulation at the lane rate (``n`` bits) and ``cycles`` decoder
        clock cycles (syndrome, test patterns, selection: a stated estimate; the
        standard's interleaver, whose depth was not found, is not included) (s)."""
        rate = check.positive(lane_rate_bps, "lane_rate_bps")
        clk = check.positive(clock_hz, "clock_hz")
        return self.n / rate + check.integer(cycles, "cycles", 0) / clk

    def _bits(self, x, width: int, what: str) -> np.ndarray:
        a = np.asarray(x)
        if a.shape[-1:] != (width,):
            raise FecError(f"{what} must have last axis {width} ({self.name}), got shape {a.shape}")
        if a.size and (a.min() < 0 or a.max() > 1):
            raise FecError(f"{what} must be bits (0 or 1)")
        return a.astype(np.uint8)


#: 802.3dj's inner code for 200G-per-lane optics: extended Hamming (128,120),
#: ``p(x) = x^7 + x^3 + 1`` (see the module docstring for what is and is not the standard's).
SFEC = HammingCode(7, 0x89, "SFEC Hamming(128,120)")

#: Gray map of PAM4 levels -3, -1, 1, 3 to (MSB, LSB): 00, 01, 11, 10.
_GRAY = np.array([[0, 0], [0, 1], [1, 1], [1, 0]], dtype=np.uint8)
_LEVELS = np.array([-3.0, -1.0, 1.0, 3.0])


def pam4_llr(bits: np.ndarray, sigma: float, rng: np.random.Generator, *, kernel: bool = True) -> np.ndarray:
    """Send ``bits`` (..., 2m) over Gray-coded PAM4 (levels -3..3) with Gaussian noise of
    ``sigma`` and return each bit's exact log-likelihood ratio ``log P(0)/P(1)``.
    ``kernel=False``: the plain numpy path, the kernel's reference (the same noise).

    Parameters
    ----------
    bits : array of 0/1, shape (..., 2m)
        The bits sent, two a PAM4 symbol (Gray-coded).
    sigma : float
        The noise's rms, on levels -3, -1, 1, 3.
    rng : numpy.random.Generator
        The noise's source.
    kernel : bool
        The Numba kernel (default) or the plain numpy path.

    Returns
    -------
    numpy.ndarray of float, the shape of ``bits``
        Each bit's LLR ``log P(0)/P(1)``: negative where a 1 is the likelier.
    """
    b = np.asarray(bits, dtype=np.uint8)
    if b.shape[-1] % 2:
        raise FecError("pam4_llr needs an even number of bits per row")
    s = check.positive(sigma, "sigma")
    pairs = b.reshape(*b.shape[:-1], -1, 2)
    idx = np.array([[0, 1], [3, 2]])[pairs[..., 0], pairs[..., 1]]
    y = _LEVELS[idx] + rng.normal(0.0, s, idx.shape)
    k = -1.0 / (2 * s * s)
    out = np.empty(pairs.shape)
    if kernel:
        K.pam4_llr(y.reshape(-1), k, out.reshape(-1, 2))
        return out.reshape(b.shape)
    d = [k * (y - lv) ** 2 for lv in _LEVELS]  # log-likelihood of each level
    for j in (0, 1):  # log of the sum over the levels whose bit j is 0, less over those where it is 1
        zero, one = np.flatnonzero(_GRAY[:, j] == 0), np.flatnonzero(_GRAY[:, j] == 1)
        out[..., j] = np.logaddexp(d[zero[0]], d[zero[1]]) - np.logaddexp(d[one[0]], d[one[1]])
    return out.reshape(b.shape)


# ----------------------------------------------------------------------------- inner and outer
@dataclass(frozen=True)
class InnerPoint:
    """One Monte Carlo point through encoder, PAM4 channel and inner decoder: ``sigma``
    (noise rms, PAM4 levels at -3..3), the raw and the decoded bit error ratios with their
    95 % intervals (:class:`fec.montecarlo.Estimate`)."""

    sigma: float
    decoder: str
    raw_ber: object
    ber_out: object

    def to_dict(self) -> dict:
        return {"sigma": self.sigma, "decoder": self.decoder, "raw_ber": self.raw_ber.to_dict(),
                "ber_out": self.ber_out.to_dict()}


def _through(code: HammingCode, sigma: float, words: int, decoder: str, rng, lrp: int):
    """``words`` random messages encoded, sent over Gray PAM4 with noise ``sigma`` and
    decoded: (the codewords, the hard decisions, the decoder's result)."""
    c = code.encode(rng.integers(0, 2, (words, code.k), dtype=np.uint8))
    llr = pam4_llr(c, sigma, rng)
    hard = (llr < 0).astype(np.uint8)
    return c, hard, code.decode_hard(hard) if decoder == "hard" else code.decode_chase(llr, lrp)


def inner_point(code: HammingCode, sigma: float, words: int, decoder: str = "chase", seed: int | None = 0,
                lrp: int = 2, chunk: int = 50_000) -> InnerPoint:
    """``words`` random messages encoded, sent over Gray PAM4 with Gaussian noise ``sigma``,
    decoded (``"hard"``: SECDED on the hard decisions; ``"chase"``: Chase-2 on the exact
    LLRs), in chunks of ``chunk`` words; the bit error ratios counted over every coded bit."""
    from .montecarlo import Estimate

    if decoder not in ("hard", "chase"):
        raise FecError(f"decoder must be 'hard' or 'chase', got {decoder!r}")
    nw = check.integer(words, "words", 1)
    if nw > 10**8:
        raise FecError(f"words must be at most 1e8 (a bounded run), got {nw}")
    rng = np.random.default_rng(check.seed(seed))
    raw = out = 0
    left = nw
    while left:
        b = min(left, check.integer(chunk, "chunk", 1))
        c, hard, dec = _through(code, sigma, b, decoder, rng, lrp)
        raw += int(np.count_nonzero(hard != c))
        out += int(np.count_nonzero(dec.words != c))
        left -= b
    bits = nw * code.n
    return InnerPoint(float(sigma), decoder, Estimate.of(raw, bits), Estimate.of(out, bits))


def concatenated_threshold(code: HammingCode = None, outer=None, target: float = 1e-13, decoder: str = "hard",
                           *, interleave: int = 1, words: int = 200_000, seed: int | None = 0) -> dict:
    """The pre-FEC (raw, channel) bit error ratio the inner code under ``outer`` (default
    KP4, ``interleave`` codewords symbol-interleaved) tolerates for a codeword error ratio
    ``target``: where :func:`outer_cer` over the inner words' failures meets it.
    ``"hard"``: SECDED's closed-form profile (:func:`hard_failure_profile`); ``"chase"``:
    Monte Carlo profiles (:func:`failure_profile`, ``words`` each, Gray PAM4 with Gaussian
    noise) at noise levels bracketing it, the CER log-log interpolated in the raw BER.
    Returns it beside the outer code's own threshold for independent errors and the gain;
    ``independent_threshold_ber`` is SECDED's threshold were its output's errors
    independent (its closed-form output BER at the outer code's threshold): what an
    analysis ignoring whole inner-word failures would give.

    Parameters
    ----------
    code : HammingCode, optional
        The inner code (default :data:`SFEC`).
    outer : RSCode, optional
        The outer code (default KP4).
    target : float
        The outer codeword error ratio to meet.
    decoder : {"hard", "chase"}
        SECDED's closed form or Chase-2 by Monte Carlo.
    interleave : int
        Outer codewords symbol-interleaved.
    words : int
        Inner words per Monte Carlo point (``"chase"``).
    seed : int or None
        The Monte Carlo's seed.

    Returns
    -------
    dict
        ``threshold_ber`` (the raw BER tolerated), ``outer_threshold_ber`` (the outer
        code's alone), ``gain``, ``independent_threshold_ber``, the codes, the decoder and
        the Monte Carlo ``points``.
    """
    from scipy import optimize

    from .analysis import required_ber
    from .codes import KP4

    code = code or SFEC
    outer = outer or KP4
    ways = check.integer(interleave, "interleave", 1)
    need = required_ber(outer, target)
    indep = float(np.exp(optimize.brentq(lambda x: np.log(code.hard_ber_out(float(np.exp(x)))) - np.log(need),
                                         np.log(need), np.log(0.05), xtol=1e-10)))
    pts = []
    if decoder == "hard":
        def f(x):
            return np.log(max(outer_cer(hard_failure_profile(code, float(np.exp(x))), outer, ways, code.k),
                              1e-300)) - np.log(target)
        raw = float(np.exp(optimize.brentq(f, np.log(1e-5), np.log(0.05), xtol=1e-8)))
    elif decoder == "chase":
        for sg in np.arange(0.30, 0.50, 0.015):
            q, rb = failure_profile(code, float(sg), words, "chase", seed)
            pts.append((rb, outer_cer(q, outer, ways, code.k), 1 - q[0]))
            if pts[-1][1] > target and len(pts) > 1 and pts[-2][1] > 0:
                break
        x = np.log([p[0] for p in pts])
        y = np.log([max(p[1], 1e-300) for p in pts])
        ok = [i for i in range(len(pts)) if pts[i][1] > 0]
        if len(ok) < 2 or not (y[ok[0]] < np.log(target) < y[-1]):
            raise FecError("the Monte Carlo points do not bracket the target: give more words")
        raw = float(np.exp(np.interp(np.log(target), y[ok], x[ok])))
    else:
        raise FecError(f"decoder must be 'hard' or 'chase', got {decoder!r}")
    return {"inner": code.name, "outer": outer.name, "decoder": decoder, "interleave": ways, "target_cer": target,
            "outer_threshold_ber": need, "threshold_ber": raw, "gain": raw / need,
            "independent_threshold_ber": indep,
            "points": [{"raw_ber": p[0], "cer": p[1], "word_failures": p[2]} for p in pts]}


# ----------------------------------------------------------------------------- the outer code over the inner
def failure_profile(code: HammingCode, sigma: float, words: int, decoder: str = "chase", seed: int | None = 0,
                    lrp: int = 2, symbol_bits: int = 10) -> tuple[np.ndarray, float]:
    """(pmf of the outer-code symbols an inner word delivers wrong, index = symbols; the raw
    bit error ratio) from ``words`` words through Gray PAM4 with Gaussian noise ``sigma``
    and the decoder (:func:`inner_point`'s channel). The word's ``k`` message bits are
    ``k / symbol_bits`` whole outer symbols (120 bits, 12 symbols of KP4's 10 bits: the
    words stay aligned to the symbols).

    Parameters
    ----------
    code : HammingCode
        The inner code.
    sigma : float
        The noise's rms on PAM4 levels -3..3.
    words : int
        Inner words simulated, 1 to 1e7.
    decoder : {"chase", "hard"}
        Chase-2 on the LLRs or SECDED on hard decisions.
    seed : int or None
        The noise's seed.
    lrp : int
        Chase's least reliable positions.
    symbol_bits : int
        Bits of an outer symbol (10 for KP4).

    Returns
    -------
    tuple of (numpy.ndarray, float)
        The pmf of wrong outer symbols per inner word (index = symbols) and the raw bit
        error ratio.
    """
    sb = check.integer(symbol_bits, "symbol_bits", 1)
    if code.k % sb:
        raise FecError(f"{code.name}'s {code.k} message bits are not whole {sb}-bit symbols")
    nw = check.integer(words, "words", 1)
    if nw > 10**7:
        raise FecError(f"words must be at most 1e7, got {nw}")
    c, hard, dec = _through(code, sigma, nw, decoder, np.random.default_rng(check.seed(seed)), lrp)
    bad = (dec.words[:, : code.k] != c[:, : code.k]).reshape(nw, code.k // sb, sb).any(axis=2)
    return (np.bincount(bad.sum(axis=1), minlength=code.k // sb + 1) / nw,
            float(np.count_nonzero(hard != c)) / (nw * code.n))


def hard_failure_profile(code: HammingCode, ber: float) -> np.ndarray:
    """The pmf of message-bit errors per word after SECDED for independent raw errors of
    ratio ``ber`` (the rules of :meth:`HammingCode.hard_ber_out`), each of the word's
    erroneous bits a message bit with probability ``k / n``; each taken in an outer symbol
    of its own by :func:`outer_cer` (a bound)."""
    p = check.probability(ber, "ber")
    n, k = code.n, code.k
    w = np.arange(n + 1)
    pw = np.array([float(comb(n, int(i))) for i in w]) * p ** w * (1 - p) ** (n - w)
    left = np.where(w <= 1, 0, w + (w % 2) * (w >= 3))
    out = np.zeros(n + 2)
    for e, pe in zip(left, pw):
        if pe < 1e-300:
            continue
        j = np.arange(e + 1)
        out[: e + 1] += pe * np.array([float(comb(int(e), int(x))) for x in j]) * (k / n) ** j * (1 - k / n) ** (e - j)
    return out[: k + 1] / out.sum()


def outer_cer(profile, outer=None, interleave: int = 1, inner_k: int = 120) -> float:
    """The outer code's codeword error ratio over an inner code whose words deliver
    ``profile[j]`` probability of ``j`` outer symbols in error (:func:`failure_profile`),
    independent from word to word: an outer codeword of ``n m`` bits spans ``I n m /
    inner_k`` inner words with ``I = interleave`` outer codewords symbol-interleaved, and
    each of a word's symbols lands in a given codeword with probability ``1 / I``.
    ``P(more than t symbol errors)`` by convolving the per-word pmf.

    Parameters
    ----------
    profile : array of float
        ``profile[j]``: the probability that an inner word leaves ``j`` outer symbols
        wrong (a pmf: non-negative, summing to 1).
    outer : RSCode, optional
        The outer code (default KP4).
    interleave : int
        Outer codewords symbol-interleaved.
    inner_k : int
        The inner code's message bits per word.

    Returns
    -------
    float
        The outer codeword error ratio.
    """
    from .codes import KP4

    outer = outer or KP4
    q = np.asarray(profile, dtype=float)
    if q.ndim != 1 or q.size < 1 or np.any(q < 0) or not np.isclose(q.sum(), 1.0):
        raise FecError("profile must be a pmf of errors per inner word (non-negative, summing to 1)")
    ways = check.integer(interleave, "interleave", 1)
    if ways > 64:
        raise FecError(f"interleave must be at most 64, got {ways}")
    j = np.arange(q.size)
    per = np.zeros(q.size)
    for jj, pj in zip(j, q):  # a word's contribution to one codeword: Binomial(j, 1/I)
        x = np.arange(jj + 1)
        per[: jj + 1] += pj * np.array([float(comb(int(jj), int(c))) for c in x]) * (1 / ways) ** x * (1 - 1 / ways) ** (jj - x)
    words = ways * outer.n * outer.m / check.integer(inner_k, "inner_k", 1)
    full, frac = int(words), words - int(words)
    t = outer.t
    tot = np.ones(1)
    over = 0.0  # the mass past t symbol errors: it never comes back, so it is the CER, to full precision
    steps = [per] * full + ([(1 - frac) * np.eye(1, per.size)[0] + frac * per] if frac else [])
    for step in steps:
        c = np.convolve(tot, step)
        over += float(c[t + 1:].sum())
        tot = c[: t + 1]
    return float(min(1.0, over))
