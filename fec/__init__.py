"""linkmodel ``fec``: a fast Reed-Solomon codec and the post-FEC error and latency analysis.

>>> import fec
>>> words = fec.KP4.encode(messages)          # (..., 514) symbols -> (..., 544)
>>> res = fec.KP4.decode(words)               # corrected messages, counts, failures
>>> fec.random_errors(fec.KP4, 2.4e-4).cer    # about 8.15e-13
>>> fec.latency(fec.KP4, 106.25e9).total_s    # accumulation 51.2 ns + decoder logic
>>> fec.SFEC.decode_chase(llr)                 # 802.3dj's inner Hamming(128,120), Chase-2

Imports numpy, numba and scipy (exact binomial tails, Clopper-Pearson intervals) and
nothing of the project's other packages (../shared/DESIGN.md).

Public API
----------
The names in ``__all__`` that are not modules, reached as ``fec.NAME``: the codes
(:class:`RSCode`, :data:`KP4`, :data:`KR4`, :data:`LL272`, :data:`NAMED`, :class:`GF2m`,
:func:`is_primitive`) and their results (:class:`DecodeResult`, :class:`PatternResult`);
the post-FEC analysis (:func:`random_errors`, :func:`burst_errors`, :func:`required_ber`,
:class:`BurstModel`, :class:`PostFec`); the latency (:func:`latency`,
:class:`LatencyBreakdown`, :data:`DECODER_CLOCK_HZ`); 802.3dj's inner code
(:data:`SFEC`, :class:`HammingCode`, :func:`pam4_llr`, :func:`failure_profile`,
:func:`outer_cer`, :func:`concatenated_threshold`); the errors (:class:`FecError`,
:class:`LinkmodelError`).

Public namespaces
-----------------
Submodules whose own ``__all__`` is public, reached as ``fec.SUB.NAME``:

:mod:`fec.montecarlo`
    the Monte Carlo harness through the real decoder (``random_stream``,
    ``burst_stream``, ``bit_stream``, ``run_patterns``) and its ``Estimate``.
:mod:`fec.hamming`
    the inner code's less common tools (``inner_point``, ``hard_failure_profile``).
:mod:`fec.analysis`
    the analysis's building blocks (``symbol_error_ratio``, ``frame_loss_ratio``,
    ``miscorrection_probability``).
:mod:`fec.interleave`
    symbol interleaving, the Gray PAM4 map and the mapping of a lane's errors to FEC
    symbols.

Private modules
---------------
``gf``, ``rs``, ``codes``, ``dfe``, ``latency``, ``postfec``, ``errors`` and every ``_name``: they hold
what is re-exported above, or the kernels behind it. Importing them directly still works
but is not the interface.
"""

from . import (
    _numba_setup,  # noqa: F401  (first: a cache folder for the kernels, read-only installs too)
    analysis,
    hamming,
    interleave,
    montecarlo,
)
from _linkmodel import LinkmodelError

from .analysis import BurstModel, PostFec, burst_errors, random_errors, required_ber
from .codes import KP4, KR4, LL272, NAMED
from .errors import FecError
from .gf import GF2m, is_primitive
from .hamming import SFEC, HammingCode, concatenated_threshold, failure_profile, outer_cer, pam4_llr
from .latency import DECODER_CLOCK_HZ, LatencyBreakdown, latency
from .rs import DecodeResult, PatternResult, RSCode

__all__ = [
    "BurstModel",
    "DecodeResult",
    "LatencyBreakdown",
    "PostFec",
    "analysis",
    "burst_errors",
    "interleave",
    "latency",
    "DECODER_CLOCK_HZ",
    "montecarlo",
    "random_errors",
    "required_ber",
    "FecError",
    "LinkmodelError",
    "GF2m",
    "HammingCode",
    "SFEC",
    "concatenated_threshold",
    "failure_profile",
    "hamming",
    "outer_cer",
    "pam4_llr",
    "KP4",
    "KR4",
    "LL272",
    "NAMED",
    "PatternResult",
    "RSCode",
    "is_primitive",
]
