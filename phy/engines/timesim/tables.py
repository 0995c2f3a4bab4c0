"""The tables the time-domain kernel reads: the victim's step response around the sampling
point (edge jitter reads it at each edge's own time) and the pulse tables of the
pulse-based sources (the aggressors, and with symbol jitter the victim's own symbols),
each with room for the CDR's phase and the jitter, in fine samples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validate import integer
from ...errors import ConfigError
from ...serdes import Cdr, Jitter, PreparedLink, step_from_pulse
from ...serdes import pulse as pl
from ...serdes.limits import check_bytes

__all__ = ["Tables", "build_tables"]


def _table(values: np.ndarray, r_lo: int, r_hi: int, periodic_tail: int = 0) -> tuple[np.ndarray, int]:
    """``values`` (defined on r = 0 .. len-1) tabulated for r in ``[r_lo, r_hi]``: zero before,
    and after the end either zero or the last ``periodic_tail`` values repeated."""
    r = np.arange(r_lo, r_hi + 1)
    out = np.zeros(r.size)
    inside = (r >= 0) & (r < values.size)
    out[inside] = values[r[inside]]
    after = r >= values.size
    if periodic_tail and np.any(after):
        tail = values[values.size - periodic_tail :]
        out[after] = tail[(r[after] - values.size) % periodic_tail]
    return out, -r_lo


def _rows(S: np.ndarray, spu: int) -> tuple[np.ndarray, np.ndarray]:
    """``T0[row, col] = S[row + col spu]`` and ``T1[row, col] = S[row + col spu + 1]`` (zero
    past the end): the table read at stride ``spu`` as contiguous rows."""
    ncol = -(-S.size // spu) + 1
    flat = np.zeros(ncol * spu + 1)
    flat[: S.size] = S
    return (np.ascontiguousarray(flat[:-1].reshape(ncol, spu).T),
            np.ascontiguousarray(flat[1:].reshape(ncol, spu).T))


def _pulse_source(samples: np.ndarray, alo: int, ahi: int, base: int, v0: float, shift: float, spu: int):
    """A pulse-based source (an aggressor, or the victim's own symbols under symbol
    jitter): ``samples[alo:ahi]`` tabulated around ``base`` (the window index of the
    victim's sample for the symbol sent at j = 0), with room for ``shift`` fine samples of
    phase and jitter. Returns (table, position, jmin, jmax)."""
    half = spu // 2
    jmin = int(np.floor((-base - shift - half) / spu)) - 1
    jmax = int(np.ceil((ahi - alo - base + shift + half) / spu)) + 1
    a_lo = jmin * spu + base - int(np.ceil(shift)) - half - 2
    a_hi = jmax * spu + base + int(np.ceil(shift)) + half + 3
    tab, _ = _table(samples[alo:ahi], a_lo, a_hi)
    return tab, base + v0 - a_lo, jmin, jmax


@dataclass
class Tables:
    """The victim's step table (``S`` flat, ``T0``/``T1`` as rows, ``t0`` its offset), the
    symbols it spans (``jpre`` before and ``jpost`` after the sampled one), the sampling
    point within the window (``m0`` whole and ``v0`` fractional fine samples), the CDR's
    phase limit, and the pulse sources' tables (``agg_*``: the victim's own first when the
    jitter moves symbols)."""

    S: np.ndarray
    T0: np.ndarray
    T1: np.ndarray
    t0: int
    jpre: int
    jpost: int
    m0: int
    v0: float
    phase_lim: float
    agg_S: np.ndarray
    agg_T0: np.ndarray
    agg_T1: np.ndarray
    agg_jmin: np.ndarray
    agg_jmax: np.ndarray
    agg_pos: np.ndarray
    dropped: dict | None = None

    @property
    def pos_base(self) -> float:
        """The table position of the sampled symbol's edge (before any jitter)."""
        return float(self.m0 + self.t0 + self.v0)


def _span(samples: np.ndarray, spu: int, thr) -> tuple[int, int, dict | None]:
    """``thr = (amplitude, energy)``: above ``amplitude`` of the peak when it is given, else
    all but ``energy`` of the pulse's energy (:func:`phy.serdes.pulse.energy_span`)."""
    if thr[0] is not None:
        return (*pl.span(samples, spu, thr[0]), None)
    return pl.energy_span(samples, spu, thr[1])


def _window(lk: PreparedLink, thr, span_ui) -> tuple[int, int, dict | None]:
    """The part of the pulse that matters (:func:`_span`), or ``span_ui`` UIs; and what the
    default span dropped."""
    spu = lk.analog.samples_per_ui
    if span_ui is None:
        return _span(lk.analog.samples, spu, thr)
    if not (isinstance(span_ui, (tuple, list)) and len(span_ui) == 2):
        raise ConfigError(f"span_ui must be (UIs before, UIs after) the main cursor, got {span_ui!r}")
    before = integer(span_ui[0], "span_ui[0]", 0, 4096)
    after = integer(span_ui[1], "span_ui[1]", 1, 65536)
    centre = int(np.floor(lk.sampling_index))
    return (max(0, centre - before * spu - spu // 2), min(lk.analog.samples.size, centre + after * spu + spu // 2),
            None)


def build_tables(lk: PreparedLink, jitter: Jitter, cdr: Cdr, thr, span_ui, r_agg) -> Tables:
    """Every table of a run (``thr``: see :func:`_span`); ``r_agg`` draws each aggressor's
    symbol phase (asynchronous, in fine samples)."""
    spu, dt = lk.analog.samples_per_ui, lk.analog.dt_s
    half = spu // 2
    m_s = lk.sampling_index
    lo, hi, dropped = _window(lk, thr, span_ui)
    m0 = int(np.floor(m_s)) - lo
    v0 = m_s - np.floor(m_s)
    phase_lim = cdr.phase_limit_ui * spu if cdr.kind != "fixed" else 0.0
    # largest |phase - edge jitter| any table read can see, in fine samples
    shift = (phase_lim + 1 + v0 + jitter.max_tx_s() / dt + (spu / 2 + 1 if cdr.kind == "bang-bang" else 0) + 2
             + (1 if lk.impairments.sampling_rms_s > 0 else 0))  # the sampling slope's neighbours
    step = step_from_pulse(lk.analog.samples[lo:hi], spu)
    jpre = int(np.ceil((m0 + shift) / spu)) + 1
    jpost = int(np.ceil((hi - lo - m0 + shift) / spu)) + 1
    r_lo = -jpre * spu + m0 - int(np.ceil(shift)) - half - 2
    r_hi = (jpost + 1) * spu + m0 + int(np.ceil(shift)) + half + 3
    n_sources = len(lk.pulse.aggressors) + (jitter.model == "symbol")
    # the step table S and its rows T0, T1 (and each pulse source's, about as long), and the
    # index array _table builds: 32 bytes per sample each
    check_bytes(32.0 * (r_hi - r_lo + 1) * (1 + n_sources),
                f"the simulator's step and pulse tables ({hi - lo} samples of pulse, {shift:.4g} samples of "
                f"jitter and clock phase either side, {1 + n_sources} tables)")
    S, t0 = _table(step, r_lo, r_hi, periodic_tail=spu)
    T0, T1 = _rows(S, spu)
    sources = []  # (table, position of the victim's j = 0 sample, jmin, jmax)
    if jitter.model == "symbol":
        vlo, vhi = _span(lk.pulse.samples, spu, thr)[:2] if span_ui is None else (lo, hi)
        sources.append(_pulse_source(lk.pulse.samples, vlo, vhi, m0 + lo - vlo, v0, shift, spu))
    for a in lk.pulse.aggressors:
        alo, ahi = _span(a.samples, spu, thr)[:2] if np.any(a.samples) else (0, 1)
        theta = int(r_agg.integers(spu))  # asynchronous symbol phase (fine samples)
        sources.append(_pulse_source(a.samples, alo, ahi, m0 + lo - alo - theta, v0, shift, spu))
    A = len(sources)
    width = max([t.size for t, *_ in sources], default=2 * spu)
    agg_S = np.stack([np.pad(t, (0, width - t.size)) for t, *_ in sources]) if A else np.zeros((0, width))
    rows = [_rows(t, spu) for t in agg_S]
    return Tables(
        S, T0, T1, t0, jpre, jpost, m0, float(v0), float(phase_lim), agg_S,
        np.stack([r[0] for r in rows]) if A else np.zeros((0, spu, 2)),
        np.stack([r[1] for r in rows]) if A else np.zeros((0, spu, 2)),
        np.array([src[2] for src in sources], dtype=np.int64), np.array([src[3] for src in sources], dtype=np.int64),
        np.array([src[1] for src in sources]), dropped,
    )
