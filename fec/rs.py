"""Reed-Solomon codes over GF(2^m): systematic encoding and batch decoding.

Conventions (those of IEEE 802.3 Clause 91): a codeword of ``n`` symbols holds the
message first (``k`` symbols) and then ``2t = n - k`` parity symbols; as a polynomial
it is ``c(x) = sum_i c[i] x^(n-1-i)``; the generator is
``g(x) = prod_(i=0)^(2t-1) (x - alpha^(first_root + i))`` with ``alpha = 2``. A code with
``n < 2^m - 1`` is the shortened code (leading zero message symbols not sent).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _kernels as K
from . import _validate as check
from .errors import FecError
from .gf import GF2m

__all__ = ["RSCode", "DecodeResult", "PatternResult"]


@dataclass(frozen=True, eq=False)
class DecodeResult:
    """What :meth:`RSCode.decode` returns.

    Attributes
    ----------
    messages : ndarray (..., k)
        The corrected messages (for a failed word: its message part as received).
    n_corrected : ndarray (...)
        Symbols corrected per codeword (0 for failed words).
    failed : ndarray of bool (...)
        Words the decoder could not decode. A miscorrection is not flagged: the
        decoder cannot know; :mod:`fec.analysis` predicts how often it happens.
    """

    messages: np.ndarray
    n_corrected: np.ndarray
    failed: np.ndarray

    def to_dict(self) -> dict:
        return {
            "codewords": int(self.failed.size),
            "failed": int(self.failed.sum()),
            "symbols_corrected": int(self.n_corrected.sum()),
        }


@dataclass(frozen=True, eq=False)
class PatternResult:
    """What :meth:`RSCode.decode_errors` returns for error patterns (per codeword).

    Attributes
    ----------
    weight : ndarray
        Symbol errors in the pattern.
    failed, miscorrected : ndarray of bool
        Decoder failure (flagged); decoder success with the wrong pattern (not flagged).
    residual_symbols, residual_bits : ndarray
        Symbol and bit errors left in the message part after decoding.
    """

    weight: np.ndarray
    failed: np.ndarray
    miscorrected: np.ndarray
    residual_symbols: np.ndarray
    residual_bits: np.ndarray

    @property
    def uncorrectable(self) -> np.ndarray:
        """Codewords delivered with errors (failed or miscorrected)."""
        return self.failed | self.miscorrected

    def to_dict(self) -> dict:
        return {
            "codewords": int(self.weight.size),
            "symbol_errors_in": int(self.weight.sum()),
            "failed": int(self.failed.sum()),
            "miscorrected": int(self.miscorrected.sum()),
            "residual_symbols": int(self.residual_symbols.sum()),
            "residual_bits": int(self.residual_bits.sum()),
        }


@dataclass(frozen=True, eq=False)
class RSCode:
    """A (shortened) Reed-Solomon code RS(n, k) over GF(2^m).

    Parameters
    ----------
    n, k : int
        Codeword and message length in symbols; ``0 < k < n <= 2^m - 1`` and ``n - k`` even.
    m : int
        Symbol size in bits (default 10).
    primitive_poly : int
        Field polynomial, bit i = coefficient of x^i (default ``0x409`` = x^10 + x^3 + 1).
    first_root : int
        Exponent of the first consecutive root (802.3: 0).
    name : str, optional
        A label (default ``"RS(n,k)"``).
    """

    n: int
    k: int
    m: int = 10
    primitive_poly: int = 0x409
    first_root: int = 0
    name: str = ""
    gf: GF2m = field(init=False, repr=False)
    generator: np.ndarray = field(init=False, repr=False)
    _gtab: np.ndarray = field(init=False, repr=False)
    _slog: np.ndarray = field(init=False, repr=False)
    _steps: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n, k, m = check.integer(self.n, "n"), check.integer(self.k, "k"), check.integer(self.m, "m")
        b = check.integer(self.first_root, "first_root")
        gf = GF2m.build(m, self.primitive_poly)
        if not 0 < k < n:
            raise FecError(f"RS({n},{k}): need 0 < k < n")
        if n > gf.q - 1:
            raise FecError(f"RS({n},{k}): n = {n} exceeds 2^m - 1 = {gf.q - 1} symbols for m = {m}")
        if (n - k) % 2:
            raise FecError(f"RS({n},{k}): n - k = {n - k} must be even (2t parity symbols)")
        if b < 0:
            raise FecError(f"first_root must be >= 0, got {b}")
        g = np.array([1], dtype=np.int64)
        for i in range(n - k):
            g = gf.poly_mul(g, [1, int(gf.pow_alpha(b + i))])
        gtab = np.zeros((gf.q, n - k), dtype=np.uint16 if m <= 16 else np.int32)
        for j in range(n - k):
            gtab[:, j] = gf.mul(np.arange(gf.q), g[j + 1])
        q1 = gf.q - 1
        p = n - k
        i, j = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
        slog = (-((b + j) * (i + 1))) % q1  # syndromes from the remainder (see _kernels)
        t = p // 2
        steps = (np.arange(t + 1)[:, None] * np.arange(64)[None, :]) % q1  # Chien search blocks
        object.__setattr__(self, "gf", gf)
        object.__setattr__(self, "generator", g)
        object.__setattr__(self, "_gtab", gtab)
        object.__setattr__(self, "_slog", np.ascontiguousarray(slog, dtype=np.int64))
        object.__setattr__(self, "_steps", np.ascontiguousarray(steps, dtype=np.int64))
        if not self.name:
            object.__setattr__(self, "name", f"RS({n},{k})")

    # ------------------------------------------------------------------ properties
    @property
    def t(self) -> int:
        """Symbol errors the code corrects, ``(n - k) / 2``."""
        return (self.n - self.k) // 2

    @property
    def parity(self) -> int:
        return self.n - self.k

    @property
    def codeword_bits(self) -> int:
        return self.n * self.m

    @property
    def message_bits(self) -> int:
        return self.k * self.m

    @property
    def rate(self) -> float:
        return self.k / self.n

    def to_dict(self) -> dict:
        return {
            "name": self.name, "n": self.n, "k": self.k, "m": self.m, "t": self.t,
            "primitive_poly": self.primitive_poly, "first_root": self.first_root,
        }

    # ------------------------------------------------------------------ checks
    def _symbols(self, arr, last: int, what: str) -> np.ndarray:
        a = np.asarray(arr)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
            raise FecError(f"{what} must be an integer array of symbols, got dtype {a.dtype}")
        if a.ndim == 0 or a.shape[-1] != last:
            raise FecError(f"{what} must have shape (..., {last}) for {self.name}, got {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= self.gf.q):
            bad = a.min() if a.min() < 0 else a.max()
            raise FecError(f"{what} hold symbol {int(bad)}, outside 0 .. {self.gf.q - 1} for m = {self.m}")
        return a

    # ------------------------------------------------------------------ codec
    def encode(self, messages) -> np.ndarray:
        """Systematic codewords ``(..., n)`` for messages ``(..., k)`` (uint16)."""
        msgs = self._symbols(messages, self.k, "messages")
        flat = np.ascontiguousarray(msgs.reshape(-1, self.k), dtype=np.uint16)
        out = np.empty((flat.shape[0], self.n), dtype=np.uint16)
        K.encode_batch(flat, self._gtab, out)
        return out.reshape(msgs.shape[:-1] + (self.n,))

    def decode(self, words) -> DecodeResult:
        """Decode words ``(..., n)``: Berlekamp-Massey, Chien search and Forney.

        Error-free words cost one LFSR pass. Returns the corrected messages, the
        number of corrected symbols and which words failed.
        """
        w = self._symbols(words, self.n, "words")
        flat = np.ascontiguousarray(w.reshape(-1, self.n), dtype=np.uint16)
        nb = flat.shape[0]
        msgs = np.empty((nb, self.k), dtype=np.uint16)
        ncorr = np.empty(nb, dtype=np.int64)
        failed = np.empty(nb, dtype=np.bool_)
        K.decode_batch(flat, self.k, self.t, self.first_root, self._gtab, self._slog, self._steps,
                       self.gf.exp, self.gf.log, msgs, ncorr, failed)
        lead = w.shape[:-1]
        return DecodeResult(msgs.reshape(lead + (self.k,)), ncorr.reshape(lead),
                            failed.reshape(lead))

    def decode_errors(self, errors) -> PatternResult:
        """Decode error patterns ``(..., n)`` (the received word minus the sent one).

        By linearity the decoder's behaviour depends on the error pattern only, so a
        simulation needs no codewords: the syndromes come from the non-zero error
        symbols alone. Reports failures, miscorrections and the residual errors.
        """
        e = self._symbols(errors, self.n, "errors")
        flat = np.ascontiguousarray(e.reshape(-1, self.n), dtype=np.uint16)
        nb = flat.shape[0]
        status = np.empty(nb, dtype=np.int8)
        weight = np.empty(nb, dtype=np.int64)
        rsym = np.empty(nb, dtype=np.int64)
        rbit = np.empty(nb, dtype=np.int64)
        K.decode_error_patterns(flat, self.k, self.t, self.first_root, self._steps, self.gf.exp, self.gf.log,
                                status, weight, rsym, rbit)
        lead = e.shape[:-1]
        return PatternResult(weight.reshape(lead), (status == 1).reshape(lead), (status == 2).reshape(lead),
                             rsym.reshape(lead), rbit.reshape(lead))

    def syndromes(self, words) -> np.ndarray:
        """The 2t syndromes ``c(alpha^(b+j))`` of each word (plain numpy; for tests and inspection)."""
        w = self._symbols(words, self.n, "words").astype(np.int64)
        deg = self.n - 1 - np.arange(self.n)
        out = np.zeros(w.shape[:-1] + (self.parity,), dtype=np.int64)
        for j in range(self.parity):
            powers = self.gf.pow_alpha((self.first_root + j) * deg)
            out[..., j] = np.bitwise_xor.reduce(self.gf.mul(w, powers), axis=-1)
        return out
