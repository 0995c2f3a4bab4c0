"""From the detector error ratio to what the link delivers: the DFE burst model, the FEC
analysis (codeword, bit and frame error ratios), and the detector error ratio that just
meets the target (the margin's reference); the link layer's replay is
:mod:`phy.link.retry`."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

import fec

from .equalise import Segment
from .spec import LinkSpec


# ----------------------------------------------------------------------------- errors
def _q_of(der: float, M: int) -> float:
    x = min(max(der, 1e-300), 0.5) / (2 * (1 - 1 / M))
    return float(np.sqrt(2.0) * special.erfcinv(2 * min(x, 0.5)))


def _model(eyes: tuple[Segment, ...], der: float, modulation: str):
    """The burst model of the segment with the most errors, at ``der`` (or None: random)."""
    if der <= 0:
        return None
    worst = max(eyes, key=lambda e: e.der)
    taps = worst.dfe[:6]
    taps = taps[np.abs(taps) < 1] if taps.size else taps
    if taps.size == 0:
        taps = np.zeros(1)  # no DFE: single errors (a precoder still doubles them)
    der = float(f"{min(der, 0.5):.4g}")
    return _dfe_model(tuple(np.round(taps, 6)), der, modulation)


@lru_cache(maxsize=64)
def _dfe_model(taps: tuple, der: float, modulation: str):
    """The DFE burst model, bounded at any error ratio (:meth:`fec.BurstModel.dfe`)."""
    return fec.BurstModel.dfe(np.array(taps), der, modulation)


def _post_fec(spec: LinkSpec, der: float, eyes, shape_der: float | None = None
              ) -> tuple[float, float | None, float | None, object]:
    """(delivered BER before retry, CER, FLR, model) for a detector error ratio ``der``,
    with the bursts' shape taken at ``shape_der`` (default ``der``)."""
    bpu = spec.bits_per_symbol
    code = spec.fec
    model = _model(eyes, der if shape_der is None else shape_der, spec.modulation) if der > 0 else None
    if code is None:
        if model is None:
            return 0.0, None, None, None
        # one bit per level error (Gray); a precoder doubles isolated errors
        factor = 2.0 if spec.precoding else 1.0
        return min(0.5, der * factor / bpu), None, None, model
    if model is None:
        return 0.0, 0.0, 0.0, None
    pf = fec.burst_errors(code, model, der=der, interleave=spec.interleave, precoded=spec.precoding,
                          frame_bits=8 * spec.framing.frame_bytes)
    return pf.ber_out, pf.cer, pf.frame_loss_ratio, model


def _delivered(spec, der, eyes, shape_der):
    ber = _post_fec(spec, der, eyes, shape_der)[0]
    return ber * 2.0 ** -spec.retry.crc_bits if spec.retry is not None else ber


def _required_der(spec: LinkSpec, eyes) -> float:
    """Detector error ratio at which the delivered BER equals the target: a bisection in
    log10 (to 0.01 decade) with the bursts' shape fixed, taken first at DER 1e-4, then
    again at the answer if that is more than half a decade away."""
    shape = 1e-4
    for _ in range(2):
        lo, hi = -30.0, math.log10(0.3)
        if _delivered(spec, 10**hi, eyes, shape) <= spec.target_ber:
            return 10**hi
        if _delivered(spec, 10**lo, eyes, shape) > spec.target_ber:
            return 10**lo
        while hi - lo > 1e-2:
            mid = (lo + hi) / 2
            if _delivered(spec, 10**mid, eyes, shape) <= spec.target_ber:
                lo = mid
            else:
                hi = mid
        if abs(lo - math.log10(shape)) < 0.5:
            break
        shape = min(10**lo, 1e-2)
    return 10**lo
