"""linkmodel ``fec``: a fast Reed-Solomon codec and the post-FEC error and latency analysis.

>>> import fec
>>> words = fec.KP4.encode(messages)          # (..., 514) symbols -> (..., 544)
>>> res = fec.KP4.decode(words)               # corrected messages, counts, failures
>>> fec.random_errors(fec.KP4, 2.4e-4).cer    # about 8.15e-13
>>> fec.latency(fec.KP4, 106.25e9).total_s    # accumulation 51.2 ns + decoder logic
>>> fec.SFEC.decode_chase(llr)                 # 802.3dj's inner Hamming(128,120), Chase-2

Imports numpy, numba and scipy (exact binomial tails, Clopper-Pearson intervals) and
nothing of the project's other packages (../shared/DESIGN.md).
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
from .hamming import SFEC, HammingCode
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
    "hamming",
    "KP4",
    "KR4",
    "LL272",
    "NAMED",
    "PatternResult",
    "RSCode",
    "is_primitive",
]
