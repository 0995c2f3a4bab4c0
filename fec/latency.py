"""FEC latency: what a codeword costs between its first bit in and its first bit out.

The breakdown of a hardware decoder (all in seconds):

* ``accumulation``: the whole (interleaved) codeword block must arrive before it can
  be corrected, ``I n m / (lanes * lane_rate)`` (one KP4 codeword at 106.25 Gb/s:
  544 x 10 / 106.25e9 = 51.2 ns; REFERENCES.md).
* ``syndrome``: syndromes are computed as symbols arrive; what remains after the last
  symbol is the pipeline tail, ``syndrome_cycles`` clock cycles.
* ``key_equation``: Berlekamp-Massey (or an equivalent), one iteration per clock, ``2t + 1``
  cycles by default.
* ``chien_forney``: with a parallel search the first corrected symbol leaves after the
  pipeline, ``chien_cycles``; with ``streaming=False`` the whole search
  ``ceil(n / symbols_per_clock)`` cycles comes first.

The cycle counts follow an 802.3dj study's budget of 3 + 31 + 3 cycles of logic
(secondary source, REFERENCES.md). The clock defaults to :data:`DECODER_CLOCK_HZ`, what a
public 400G RS(544,514) core runs at, not the 1 GHz of that study: at 350 MHz the 37
cycles take 106 ns, in line with the 37 cycles and about 115 ns Xilinx publishes for its
CMAC RS(528,514) decoder (REFERENCES.md). ``correct=False`` models a decoder that only
detects (bypass), leaving accumulation and the syndrome tail.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from _linkmodel._renamed import renamed_keyword

from . import _validate as check
from .errors import FecError
from .rs import RSCode

__all__ = ["DECODER_CLOCK_HZ", "LatencyBreakdown", "latency"]

#: A public 400G RS(544,514) decoder's clock: Xelic's XCO5BSFEC core moves "a 1280-bit
#: data bus operating at a nominal frequency of 350 MHz" (xelic.com/core/XCO5BSFEC).
DECODER_CLOCK_HZ = 350e6


@dataclass(frozen=True)
class LatencyBreakdown:
    """One decoder's latency, term by term (s)."""

    code: str
    lane_rate_bps: float
    lanes: int
    interleave: int
    clock_hz: float
    accumulation_s: float
    syndrome_s: float
    key_equation_s: float
    chien_forney_s: float
    total_s: float

    def to_dict(self) -> dict:
        return asdict(self)


def latency(
    code: RSCode,
    lane_rate_bps: float | None = None,
    lanes: int = 1,
    interleave: int = 1,
    *,
    clock_hz: float = DECODER_CLOCK_HZ,
    symbols_per_clock: int = 32,
    syndrome_cycles: int = 3,
    key_equation_cycles: int | None = None,
    chien_cycles: int = 3,
    streaming: bool = True,
    correct: bool = True,
    lane_rate: float | None = None,
) -> LatencyBreakdown:
    """Latency breakdown of decoding ``code`` on ``lanes`` lanes of ``lane_rate_bps`` bit/s.

    Parameters
    ----------
    code : RSCode
        The Reed-Solomon code decoded.
    lane_rate_bps : float
        Line rate of one lane (bit/s), e.g. 106.25e9. (``lane_rate``, its old name without
        a unit, is accepted for one release as a deprecated keyword.)
    lanes, interleave : int
        Lanes the codeword is striped over; codewords interleaved per block.
    clock_hz : float
        Decoder clock (Hz); default :data:`DECODER_CLOCK_HZ` (350 MHz).
    symbols_per_clock : int
        Datapath parallelism of the Chien search when not streaming.
    syndrome_cycles, chien_cycles : int
        Pipeline tails (cycles) after the last symbol and before the first output.
    key_equation_cycles : int, optional
        Default ``2 t + 1`` (one Berlekamp-Massey iteration per cycle).
    streaming : bool
        Corrections applied as the search proceeds (True) or after the full search.
    correct : bool
        False: detection only (correction bypassed).
    lane_rate : float, optional
        Deprecated name of ``lane_rate_bps`` (bit/s); give one or the other.

    Returns
    -------
    LatencyBreakdown
        Accumulation, syndrome, key-equation and Chien/correction times (s) and their total.
    """
    if not isinstance(code, RSCode):
        raise FecError(f"expected an RSCode, got {type(code).__name__}")
    lane_rate_bps = renamed_keyword(lane_rate_bps, lane_rate, "lane_rate", "lane_rate_bps", "fec.latency", FecError,
                                    "a rate needs its unit: bit/s")
    if lane_rate_bps is None:
        raise FecError("fec.latency needs lane_rate_bps, one lane's line rate in bit/s")
    rate = check.positive(lane_rate_bps, "lane_rate_bps")
    lanes = check.integer(lanes, "lanes", 1)
    interleave = check.integer(interleave, "interleave", 1)
    clk = check.positive(clock_hz, "clock_hz")
    par = check.integer(symbols_per_clock, "symbols_per_clock", 1)
    syn = check.integer(syndrome_cycles, "syndrome_cycles", 0)
    chien = check.integer(chien_cycles, "chien_cycles", 0)
    key = 2 * code.t + 1 if key_equation_cycles is None else check.integer(key_equation_cycles, "key_equation_cycles", 0)
    acc = interleave * code.n * code.m / (lanes * rate)
    syn_s = syn / clk
    key_s = key / clk if correct else 0.0
    if not correct:
        cf = 0.0
    elif streaming:
        cf = chien / clk
    else:
        cf = (math.ceil(code.n / par) + chien) / clk
    return LatencyBreakdown(code.name, rate, lanes, interleave, clk, acc, syn_s, key_s, cf, acc + syn_s + key_s + cf)
