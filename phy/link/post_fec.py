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

from ..engines.dfe_chain import dfe_transitions
from .equalise import Segment
from .spec import LinkSpec


# ----------------------------------------------------------------------------- errors
def _q_of(der: float, M: int) -> float:
    x = min(max(der, 1e-300), 0.5) / (2 * (1 - 1 / M))
    return float(np.sqrt(2.0) * special.erfcinv(2 * min(x, 0.5)))


def _model(eyes: tuple[Segment, ...], der: float, modulation: str):
    """The burst model of the segment with the most errors, at ``der`` (or None: random).

    Its DFE's error chain takes its transitions from the segment's eye, conditioned on
    the data (:func:`phy.engines.dfe_chain.dfe_transitions`): at the link's own detector
    error ratio (the segments' sum) or below the segment's, its own eye, the chain its
    detector error ratio came from; at a higher ``der`` (the margin's search), the same
    eye with white Gaussian noise added at the slicer until its error ratio with
    propagation is ``der`` (:func:`_noisier_table`), as the Gaussian chain's shape
    follows ``der``. Without such an eye (no DFE, or taps beyond (-1, 1)), the Gaussian
    chain at ``der``. A segment whose receiver detects with a 1-tap MLSD (``rx.mlsd``): its
    error events as bursts (:meth:`phy.engines.mlsd.EyeMlsd.burst_model`), their lengths
    from its own eye at any ``der`` (noisier, they grow longer: a milder shape than the
    margin's search would see)."""
    if der <= 0:
        return None
    worst = max(eyes, key=lambda e: e.der)
    if getattr(getattr(worst, "rx", None), "mlsd", False) and getattr(worst, "eye", None) is not None:
        # a 1-tap MLSD: its error events (runs of alternating one-level errors, at most
        # phy.engines.mlsd.MAX_EVENTS UI), their lengths' distribution from the segment's own eye
        bm = worst.eye.mlsd().burst_model(modulation)
        if bm is not None:
            return bm
    taps = worst.dfe[:6]
    taps = taps[np.abs(taps) < 1] if taps.size else taps
    if taps.size == 0:
        taps = np.zeros(1)  # no DFE: single errors (a precoder still doubles them)
    eye = getattr(worst, "eye", None)
    table = dfe_transitions(eye) if eye is not None and worst.ser > 0 else None
    if table is not None and table.shape[1] == 3**taps.size:
        start = worst.ser
        own = abs(der - min(0.5, sum(e.der for e in eyes))) <= 1e-9 * der or der <= worst.der
        if not own:
            # isolated errors, bursts as the eye's (a detector that errs less than its slicer,
            # an MLSD whose error ratio is below what it resolves: its first errors are der's)
            ratio = worst.ser / worst.der if worst.der > 0 else 1.0
            start = float(f"{min(der * ratio, 0.5):.3g}")
            table = _noisier_table(eye, start)
        if table is not None:
            return _dfe_model(tuple(taps), float(f"{min(start, 0.5):.4g}"), modulation, table.tobytes(),
                              table.shape[0])
    der = float(f"{min(der, 0.5):.4g}")
    return _dfe_model(tuple(np.round(taps, 6)), der, modulation)


@lru_cache(maxsize=64)
def _noisier_table(eye, ser: float):
    """The conditioned transitions of ``eye`` with white Gaussian noise added at the slicer
    (to every column, its own and its parts') until its symbol error ratio is ``ser``
    (Brent's method in the added rms, to 0.1 %); None if no added noise reaches it. The
    search reads the sampling column alone (all :meth:`StatEye.ser` reads), so it
    convolves that column only, its transform taken once; the table comes from the whole
    noisier eye."""
    from dataclasses import replace

    from scipy import optimize

    dv = float(eye.voltage_v[1] - eye.voltage_v[0])
    c = eye.centre
    rows = _Shared(lambda cdf: cdf[c : c + 1])
    column = replace(eye, time_s=eye.time_s[c : c + 1], cdf=eye.cdf[c : c + 1], main_v=eye.main_v[c : c + 1],
                     parts=tuple((w, rows(cdf), m[c : c + 1]) for w, cdf, m in eye.parts))

    def spectra(e):  # each row's PMF and its transform, taken once for every added rms
        once = _Shared(_spectra)  # the parts share their distribution (the main cursor's jitter moves the levels)
        return [_spectra(e.cdf)] + [once(cdf) for _w, cdf, _m in e.parts]

    def noisier(e, spec, add_v: float):
        own, *parts = spec
        once = _Shared(lambda sp: _gauss_cdf(sp, add_v / dv))
        parts = tuple((w, once(sp), m) for (w, _c, m), sp in zip(e.parts, parts))
        return replace(e, cdf=_gauss_cdf(own, add_v / dv), parts=parts, sigma_v={**e.sigma_v, "added": add_v})

    col_spec, sers = spectra(column), {}

    def ser_at(add_v: float) -> float:
        if add_v not in sers:
            sers[add_v] = noisier(column, col_spec, add_v).ser()
        return sers[add_v]

    h0 = float(eye.main_v[c])
    hi = 0.05 * h0
    while ser_at(hi) < ser and hi < 10 * h0:
        hi *= 2
    if ser_at(hi) < ser:
        return None
    add = optimize.brentq(lambda a: np.log(max(ser_at(a), 1e-300)) - np.log(ser), 0.0, hi, rtol=1e-3)
    # an eye of its sampling column alone (a segment's) is that column: its transforms are the column's
    return dfe_transitions(noisier(eye, col_spec if eye.cdf.shape[0] == 1 else spectra(eye), add))


class _Shared:
    """``f(x)`` once per distinct object ``x`` (by identity, the objects held while it
    lives): the parts of an eye share one distribution array, whose rows are then read,
    transformed and convolved once, the same arithmetic as for each."""

    def __init__(self, f):
        self.f, self.memo = f, {}

    def __call__(self, x):
        k = id(x)
        if k not in self.memo:
            self.memo[k] = (x, self.f(x))
        return self.memo[k][1]


def _spectra(cdf: np.ndarray) -> tuple:
    """The rows' PMFs of a distribution function and their transforms on the grid that
    :func:`phy.engines.pmf.gauss_convolve` takes (twice the rows' length, a power of two)."""
    pmf = np.diff(cdf, axis=1, prepend=0.0)
    m = 1 << int(np.ceil(np.log2(2 * pmf.shape[1])))
    return pmf, np.fft.rfft(pmf, m, axis=1), np.fft.rfftfreq(m), m


def _gauss_cdf(spectra: tuple, sigma_bins: float) -> np.ndarray:
    """Each row convolved with a Gaussian of ``sigma_bins`` (the arithmetic of
    :func:`phy.engines.pmf.gauss_convolve`, the transform reused) and summed back into a
    distribution function."""
    pmf, F, f, m = spectra
    out = pmf
    if sigma_bins > 0:
        out = np.clip(np.fft.irfft(F * np.exp(-2 * (np.pi * f * sigma_bins) ** 2), m, axis=1)[:, : pmf.shape[1]], 0,
                      None)
    return np.clip(np.cumsum(out, axis=1) / out.sum(axis=1, keepdims=True), 0.0, 1.0)


@lru_cache(maxsize=64)
def _dfe_model(taps: tuple, der: float, modulation: str, table: bytes | None = None, rows: int = 0):
    """The DFE burst model, bounded at any error ratio (:meth:`fec.BurstModel.dfe`), with
    the transitions ``table`` (its bytes and rows, for the cache) when given."""
    transitions = None
    if table is not None:
        transitions = np.frombuffer(table, dtype=float).reshape(rows, 3 ** len(taps), 3)
    return fec.BurstModel.dfe(np.array(taps), der, modulation, transitions=transitions)


def _needs_model(spec: LinkSpec) -> bool:
    """Whether the bursts' shape matters: an RS code (its symbol errors) or a link layer
    (its flits); a bare link's delivered BER is the detector's, one bit per level error."""
    return spec.fec is not None or spec.retry is not None


def _post_fec(spec: LinkSpec, der: float, eyes, shape_der: float | None = None
              ) -> tuple[float, float | None, float | None, object]:
    """(delivered BER before retry, CER, FLR, model) for a detector error ratio ``der``,
    with the bursts' shape taken at ``shape_der`` (default ``der``); the model is None
    where nothing needs it (no errors, or neither a code nor a link layer)."""
    if spec.inner_fec is not None:
        return _inner_post_fec(spec, der, eyes)
    model = None
    if der > 0 and _needs_model(spec):
        model = _model(eyes, der if shape_der is None else shape_der, spec.modulation)
    return _errors(spec, der, model)


def _errors(spec: LinkSpec, der: float, model) -> tuple[float, float | None, float | None, object]:
    """:func:`_post_fec` with the burst model given (None: no errors, or no code and no
    link layer)."""
    code = spec.fec
    if code is None:
        if der <= 0:
            return 0.0, None, None, None
        # one bit per level error (Gray); a precoder doubles isolated errors
        factor = 2.0 if spec.precoding else 1.0
        return min(0.5, der * factor / spec.bits_per_symbol), None, None, model
    if model is None:
        return 0.0, 0.0, 0.0, None
    pf = fec.burst_errors(code, model, der=der, interleave=spec.interleave, precoded=spec.precoding,
                          frame_bits=8 * spec.framing.frame_bytes)
    return pf.ber_out, pf.cer, pf.frame_loss_ratio, model


#: A link layer that replays more than this share of its flits fails (its efficiency,
#: replays and credit stalls together, below one half).
MIN_RETRY_EFFICIENCY = 0.5


def _delivered(spec, der, eyes, shape_der, one_way_s=None, payload_bps=None, model=False):
    """The delivered BER at ``der``; with a link layer and its one-way latency given, a
    link whose replays take its efficiency below :data:`MIN_RETRY_EFFICIENCY` counts as
    delivering nothing (1.0), so that the error ratio the target allows is one the link
    layer also survives. ``model``: the burst model at ``shape_der`` when already built
    (:func:`_shape_model`), else it is built here."""
    if model is False or spec.inner_fec is not None:
        ber, cer, _flr, model = _post_fec(spec, der, eyes, shape_der)
    else:
        ber, cer, _flr, model = _errors(spec, der, model if der > 0 else None)
    if spec.retry is None:
        return ber
    if one_way_s is not None:
        from .retry import link_layer_terms

        if link_layer_terms(spec, der, cer, model, one_way_s, payload_bps).efficiency < MIN_RETRY_EFFICIENCY:
            return 1.0
    return ber * 2.0 ** -spec.retry.crc_bits


def _shape_model(spec: LinkSpec, eyes, shape_der: float):
    """The burst model :func:`_post_fec` takes at ``shape_der`` for every ``der > 0``
    (False with an inner code, whose analysis has none)."""
    if spec.inner_fec is not None:
        return False
    return _model(eyes, shape_der, spec.modulation) if _needs_model(spec) else None


#: The required detector error ratio's search: its range (log10 of the error ratio), its
#: tolerance (decades) and the shapes it takes the bursts at (see :func:`_required_der`).
REQUIRED_RANGE = (-30.0, math.log10(0.3))
REQUIRED_TOL = 1e-2


def _required_der(spec: LinkSpec, eyes, one_way_s: float | None = None, payload_bps: float | None = None
                  ) -> float:
    """Detector error ratio at which the delivered BER equals the target (and, with a
    link layer and ``one_way_s``, its replays leave it at least half its bandwidth), to
    :data:`REQUIRED_TOL` decade below the exact one, with the bursts' shape fixed, taken
    first at DER 1e-4, then again at the answer if that is more than half a decade away.

    With the shape fixed the burst model is built once and the delivered BER rises with
    the error ratio: Brent's method on its logarithm against log10 of the error ratio
    (:func:`_feasible_log10`) takes a few FEC analyses where a bisection took 14."""
    shape = 1e-4
    for _ in range(2):
        model = _shape_model(spec, eyes, shape)

        def delivered(x: float) -> float:
            return _delivered(spec, 10**x, eyes, shape, one_way_s, payload_bps, model=model)

        lo, end = _feasible_log10(delivered, spec.target_ber, *REQUIRED_RANGE, REQUIRED_TOL)
        if end or abs(lo - math.log10(shape)) < 0.5:
            break
        shape = min(10**lo, 1e-2)
    return 10**lo


def _feasible_log10(delivered, target: float, lo: float, hi: float, tol: float) -> tuple[float, bool]:
    """``(x, at an end)``: the largest ``x`` in ``[lo, hi]`` with ``delivered(x) <= target``
    for a ``delivered`` that rises with ``x`` (log10 of the error ratio), less at most
    ``tol``. ``hi`` if it meets the target, ``lo`` if even it does not (``at an end``);
    else Brent's method on ``log(delivered) - log(target)`` to ``tol / 2``: its final
    bracket, less than ``tol / 2`` wide, holds the threshold, and its answer less
    ``tol / 2`` lies below it by at most ``tol`` (as a bisection to ``tol`` would)."""
    from scipy import optimize

    memo: dict = {}

    def excess(x: float) -> float:  # > 0 exactly where the target is missed
        if x not in memo:
            d = delivered(x)
            e = math.log(max(d, 1e-300)) - math.log(target)
            memo[x] = max(e, 1e-300) if d > target else min(e, 0.0)
        return memo[x]

    if excess(hi) <= 0:
        return hi, True
    if excess(lo) > 0:
        return lo, True
    xtol, rtol = tol / 2, 1e-12
    x = optimize.brentq(excess, lo, hi, xtol=xtol, rtol=rtol)
    return max(lo, x - xtol - rtol * abs(x)), False


# ----------------------------------------------------------------------------- an inner code
def covered(spec: LinkSpec, eyes) -> list:
    """Which segments the inner code covers: a DSP pluggable's optical span (its module
    decodes it), a linear-receive link's optics into the host (the host decodes it), else
    every segment (the host decodes it)."""
    if spec.optics is not None and spec.optics.kind == "dsp":
        return [e.equalisation == "module DSP" for e in eyes]
    if spec.optics is not None and spec.optics.kind == "lro":
        return [e.name != "host_to_module" for e in eyes]
    return [True] * len(eyes)


#: The noise grid (PAM4 levels at -3..3) of the Chase-2 profiles the roll-up interpolates
#: (raw BER about 9e-4 to 4e-2); each point simulated in chunks of :data:`CHASE_WORDS` words
#: until it has seen :data:`MIN_FAILURES` failed inner words or :data:`CHASE_MAX_WORDS`.
CHASE_SIGMAS = (0.33, 0.345, 0.36, 0.39, 0.42, 0.46, 0.50, 0.55, 0.62)
CHASE_WORDS = 30_000
CHASE_MAX_WORDS = 600_000
MIN_FAILURES = 30


@lru_cache(maxsize=4)
def _chase_table(code) -> tuple:
    """The Chase-2 failure profiles on :data:`CHASE_SIGMAS` (:func:`fec.hamming.failure_profile`,
    fixed seeds: the same every run), with their raw BERs and failure counts."""
    from fec.hamming import failure_profile

    profs, raws, fails = [], [], []
    for k, sg in enumerate(CHASE_SIGMAS):
        q_sum, raw_sum, words = 0.0, 0.0, 0
        while words < CHASE_MAX_WORDS:
            q, raw = failure_profile(code, float(sg), CHASE_WORDS, "chase", seed=20260 + 1000 * k + words // CHASE_WORDS)
            q_sum = q * CHASE_WORDS + q_sum
            raw_sum += raw * CHASE_WORDS
            words += CHASE_WORDS
            if (words - q_sum[0]) >= MIN_FAILURES:
                break
        profs.append(q_sum / words)
        raws.append(raw_sum / words)
        fails.append(words - q_sum[0])
    width = max(q.size for q in profs)
    return (np.array(raws), np.array([np.pad(q, (0, width - q.size)) for q in profs]), np.array(fails))


def _inner_profile(spec: LinkSpec, raw_ber: float) -> tuple[np.ndarray, str]:
    """Outer-symbol errors per inner word at a covered raw BER: SECDED's closed form, or
    the Chase-2 profiles interpolated in the raw BER (log). Below the grid's least noisy
    resolved point, that point's profile with its failures scaled as the raw BER to the
    power ``d R`` (minimum distance 4 times the rate: a soft decoder's word errors against
    the raw BER on a Gaussian channel, the union bound's asymptote; the grid's two least
    noisy points fall with a slope of about 3.8), or SECDED's closed form (a bound: Chase-2
    includes its test pattern) where that is lower."""
    from fec.hamming import hard_failure_profile

    code = spec.inner_fec
    hard = hard_failure_profile(code, min(raw_ber, 0.5))
    if spec.inner_decoder == "hard" or raw_ber <= 0:
        return hard, "SECDED, closed form"
    raws, profs, fails = _chase_table(code)
    if raw_ber > raws[-1]:
        return profs[-1], "Chase-2, beyond its Monte Carlo grid: the noisiest point's profile"
    ok = np.flatnonzero(fails >= MIN_FAILURES)
    i0 = int(ok[0]) if ok.size else len(raws) - 1
    i = int(np.searchsorted(raws, raw_ber))
    if i <= i0:
        q = profs[i0].copy()
        q[1:] *= (raw_ber / raws[i0]) ** (4 * code.rate)
        q[0] = 1 - q[1:].sum()
        if 1 - hard[0] < 1 - q[0]:
            return hard, "Chase-2 below its Monte Carlo's resolved range: SECDED's closed form, a bound"
        return q, "Chase-2 below its Monte Carlo's resolved range: failures scaled as the raw BER to the power d R"
    w = (np.log(raw_ber) - np.log(raws[i - 1])) / (np.log(raws[i]) - np.log(raws[i - 1]))
    q = (1 - w) * profs[i - 1] + w * profs[i]
    return q / q.sum(), "Chase-2, Monte Carlo profiles interpolated"


def _covered_share(spec: LinkSpec, eyes) -> float:
    """The share of the link's detector errors in the segments the inner code covers."""
    total = sum(e.der for e in eyes)
    return 1.0 if total <= 0 else sum(e.der for e, c in zip(eyes, covered(spec, eyes)) if c) / total


def _inner_post_fec(spec: LinkSpec, der: float, eyes) -> tuple[float, float, float, None]:
    """(delivered BER, CER, FLR, None) with the inner code: the covered segments' share of
    ``der`` as raw bit errors (Gray: one bit per level error) through the inner decoder, the
    others' errors as independent symbol errors in the same inner words, into the outer
    code (:func:`fec.hamming.outer_cer`); the delivered BER takes one bit per symbol the
    outer code leaves wrong, ``t + 1`` symbols per failed codeword."""
    from math import comb

    from fec.hamming import outer_cer

    code, outer = spec.inner_fec, spec.fec
    share = _covered_share(spec, eyes)
    raw = min(0.5, der * share / spec.bits_per_symbol)
    prof, _how = _inner_profile(spec, raw)
    rest = min(0.5, der * (1 - share) / spec.bits_per_symbol)
    if rest > 0:
        sym = code.k // outer.m
        ps = 1 - (1 - rest) ** outer.m
        add = np.array([comb(sym, j) * ps**j * (1 - ps) ** (sym - j) for j in range(sym + 1)])
        prof = np.convolve(prof, add)
    prof = prof[: code.k // outer.m + 1]
    cer = outer_cer(prof / prof.sum(), outer, spec.interleave, code.k)
    flr = fec.analysis.frame_loss_ratio(outer, cer, 8 * spec.framing.frame_bytes) if cer else 0.0
    ber_out = cer * (outer.t + 1) / (outer.n * outer.m)
    return float(ber_out), float(cer), float(flr), None


def inner_note(spec: LinkSpec, der: float, eyes) -> str:
    """The report's words on the inner code at the link's detector error ratio."""
    raw = min(0.5, der * _covered_share(spec, eyes) / spec.bits_per_symbol)
    _prof, how = _inner_profile(spec, raw)
    names = ", ".join(e.name for e, c in zip(eyes, covered(spec, eyes)) if c)
    return (f"inner code {spec.inner_fec.name} over {names} ({how}): raw BER {raw:.3g} into it, "
            f"the outer {spec.fec.name} over whole inner-word failures (fec.hamming.outer_cer)")
