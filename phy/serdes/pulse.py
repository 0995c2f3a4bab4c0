"""Pulse responses as the SerDes sees them: filtered by the Tx and Rx analog front ends,
equalised by the Tx FFE, trimmed to the span that matters.

Filters act on the whole record of a :class:`channels.PulseResponse` through its DFT.
The record is the channel's circular response on an exact DFT grid (``n_ui`` whole UIs),
so multiplying its spectrum by ``H(f)`` equals filtering the channel before the pulse was
made: nothing is windowed or truncated.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from channels import PulseResponse
from channels.grid import GridInfo
from channels.response import filter_response

from .._plot import axes
from ..errors import ConfigError

__all__ = ["energy_span", "filtered", "from_samples", "front_end", "plot_pulse", "sampling_index", "span",
           "tx_equalised"]


def from_samples(samples, baud_hz: float, samples_per_ui: int, *, t0_s: float = 0.0, name: str = "pulse",
                 aggressors=()) -> PulseResponse:
    """A :class:`channels.PulseResponse` from samples made elsewhere (a measurement, a
    simulator, a closed form), ``samples_per_ui`` per UI starting at ``t0_s``.

    The record is treated as one period of the DFT grid, as the channel's own are; give it
    enough zero tail for the filters applied later to ring out. ``aggressors`` are arrays
    on the same time axis.
    """
    from .._validate import integer, number

    baud = number(baud_hz, "baud_hz", positive=True)
    spu = integer(samples_per_ui, "samples_per_ui", 2, 1024)
    y = np.asarray(samples, dtype=float)
    if y.ndim != 1 or y.size < 2 * spu or not np.all(np.isfinite(y)):
        raise ConfigError(f"samples must be a finite 1-D array of at least two UIs ({2 * spu} samples)")
    dt = 1.0 / (baud * spu)
    info = GridInfo(0.0, 0.5 / dt, y.size // 2 + 1, 0.0, 0.5 / dt, False, None, 0.0, (0.0, 0.0),
                    "pulse given as samples")
    aggs = []
    for i, a in enumerate(aggressors):
        a = np.asarray(a, dtype=float)
        if a.shape != y.shape or not np.all(np.isfinite(a)):
            raise ConfigError(f"aggressor {i} must be finite samples of the same length as the pulse")
        aggs.append(PulseResponse(a, dt, baud, spu, t0_s, int(np.argmax(np.abs(a))), f"{name}-agg{i}", "fext", info))
    return PulseResponse(y, dt, baud, spu, t0_s, int(np.argmax(y)), name, "through", info, tuple(aggs))


def filtered(pulse: PulseResponse, transfer) -> PulseResponse:
    """``pulse`` (and its aggressors) through the filter ``transfer(f_hz) -> H``."""
    n = pulse.samples.size
    f = np.fft.rfftfreq(n, pulse.dt_s)
    h = np.asarray(transfer(f), dtype=complex)
    if not np.all(np.isfinite(h)):
        raise ConfigError("the receive/transmit filter returned NaN or infinite values")

    def one(p: PulseResponse) -> PulseResponse:
        y = np.fft.irfft(np.fft.rfft(p.samples) * h, n)
        main = int(np.argmax(y)) if p.kind == "through" else int(np.argmax(np.abs(y)))
        return dataclasses.replace(p, samples=y, main_index=main, aggressors=())

    aggs = tuple(one(a) for a in pulse.aggressors)
    return dataclasses.replace(one(pulse), aggressors=aggs)


def front_end(rise_time_s: float | None, rx_bandwidth_hz: float | None, rx_order: int, ctle=None):
    """The analog front end's transfer function: Gaussian Tx edge (93A-46), Butterworth
    Rx filter (93A-20) and the CTLE, as one callable of frequency (Hz)."""

    def h(f):
        out = filter_response(f, rise_time_s, rx_bandwidth_hz, rx_order)
        return out * ctle.response(f) if ctle is not None else out

    return h


def tx_equalised(pulse: PulseResponse, ffe, include_aggressors: bool = True) -> PulseResponse:
    """``pulse`` through the Tx FFE (a symbol-spaced FIR on the record)."""
    spu = pulse.samples_per_ui

    def one(p: PulseResponse) -> PulseResponse:
        y = ffe.apply(p.samples, spu)
        main = int(np.argmax(y)) if p.kind == "through" else int(np.argmax(np.abs(y)))
        return dataclasses.replace(p, samples=y, main_index=main, aggressors=())

    aggs = tuple(one(a) for a in pulse.aggressors) if include_aggressors else pulse.aggressors
    return dataclasses.replace(one(pulse), aggressors=aggs)


def span(samples: np.ndarray, samples_per_ui: int, rel_threshold: float) -> tuple[int, int]:
    """Index range ``[lo, hi)`` holding every sample above ``rel_threshold`` of the peak
    magnitude, widened by one UI on each side and kept inside the record."""
    a = np.abs(np.asarray(samples))
    peak = a.max()
    if not peak > 0:
        raise ConfigError("the pulse response is zero everywhere: the channel passes no signal")
    above = np.flatnonzero(a >= rel_threshold * peak)
    lo = max(0, int(above[0]) - samples_per_ui)
    hi = min(a.size, int(above[-1]) + 1 + samples_per_ui)
    return lo, hi


def energy_span(samples: np.ndarray, samples_per_ui: int, fraction: float) -> tuple[int, int, dict]:
    """Index range ``[lo, hi)`` holding all but ``fraction`` of the pulse's energy (half of
    it dropped from each end at most), widened by one UI on each side and kept inside the
    record; and what the dropped part could do at the sampler.

    A record is longer than its channel: a Touchstone file's pulse carries a floor of
    numerical and measurement residue along its whole period (2e-5 of the peak on the
    802.3ck cable assembly ``CA_19p75dB``, 561 UI of it before the main cursor), which an
    amplitude threshold keeps and the energy does not: that floor's energy is a few 1e-7 of
    the pulse's while a reflection of 1e-3 of the peak over tens of UIs is about 1e-5. With
    ``fraction`` = 1e-6 the rms ISI the dropped part leaves at a symbol-spaced sampler is
    about 1e-3 of the main cursor (60 dB below it) on the shared 802.3ck channels.

    Returns ``(lo, hi, dropped)``, ``dropped`` holding ``energy_fraction`` (what was
    dropped, of the whole) and, relative to the peak sample, ``isi_rms`` and ``isi_peak``:
    the worst over sampling phases of the dropped samples' root sum of squares and sum of
    magnitudes at UI spacing (the rms and the peak distortion of the ISI it would add with
    unit-power symbols).
    """
    y = np.asarray(samples, dtype=float)
    spu = int(samples_per_ui)
    e = y * y
    total = float(e.sum())
    if not total > 0:
        raise ConfigError("the pulse response is zero everywhere: the channel passes no signal")
    c = np.cumsum(e) / total
    half = 0.5 * float(fraction)
    lo = int(np.searchsorted(c, half, side="right"))
    hi = int(np.searchsorted(c, 1.0 - half, side="left")) + 1
    lo, hi = max(0, lo - spu), min(y.size, max(hi, lo + 1) + spu)
    out = y.copy()
    out[lo:hi] = 0.0
    peak = float(np.abs(y).max())
    rms = max(float(np.sqrt(np.sum(out[p::spu] ** 2))) for p in range(spu)) / peak
    pk = max(float(np.sum(np.abs(out[p::spu]))) for p in range(spu)) / peak
    return lo, hi, {"energy_fraction": float(np.sum(out * out) / total), "isi_rms": rms, "isi_peak": pk}


def sampling_index(samples: np.ndarray, samples_per_ui: int, mode, dfe_limits: tuple = (0.0, 0.0)) -> float:
    """The fine-sample index at which the receiver samples the main cursor.

    ``"peak"``: the maximum. ``"mm"``: the Mueller-Mueller lock point near the peak,
    where the first pre- and post-cursor are equal. ``"mm-dfe"``: the same with the first
    post-cursor less what the DFE's first tap takes away, ``h(-1) = h(1) - b_1 h(0)`` with
    ``b_1 = h(1) / h(0)`` held within ``dfe_limits`` (IEEE 802.3 93A-25/26, where COM puts
    its cursor; with the tap within its limits, the point where ``h(-1) = 0``). Both are
    found on the fine grid within one UI of the peak, the zero of the residual nearest the
    peak (refined linearly), else its smallest magnitude. An offset in seconds is the
    caller's to add.
    """
    y = np.asarray(samples, dtype=float)
    spu = samples_per_ui
    peak = int(np.argmax(y))
    if mode == "peak":
        return float(peak)
    if mode not in ("mm", "mm-dfe"):
        raise ConfigError(f"sampling phase must be 'peak', 'mm', 'mm-dfe' or a time in seconds, got {mode!r}")
    idx = np.arange(max(spu, peak - spu), min(y.size - spu, peak + spu))
    post = y[idx + spu]
    if mode == "mm-dfe":
        lo, hi = dfe_limits
        main = y[idx]
        b1 = np.clip(np.divide(post, main, out=np.zeros_like(post), where=main > 0), lo, hi)
        post = post - b1 * main
    diff = y[idx - spu] - post  # grows as the phase moves later
    sign = np.flatnonzero(np.diff(np.sign(diff)) != 0)
    if sign.size == 0:
        return float(idx[int(np.argmin(np.abs(diff)))])
    i = sign[np.argmin(np.abs(idx[sign] - peak))]
    d0, d1 = diff[i], diff[i + 1]
    return float(idx[i] + d0 / (d0 - d1))


def plot_pulse(pulse, sampling_index: float | None = None, n_pre: int = 3, n_post: int = 12, ax=None):
    """A pulse response (mV per V against ps) with its symbol-spaced cursors marked."""
    ax = axes(ax)
    t = pulse.time_s * 1e12
    ax.plot(t, pulse.samples * 1e3, lw=1)
    m = pulse.main_index if sampling_index is None else sampling_index
    idx = m + pulse.samples_per_ui * np.arange(-n_pre, n_post + 1)
    idx = idx[(idx >= 0) & (idx < pulse.samples.size - 1)]
    ax.plot(np.interp(idx, np.arange(t.size), t), np.interp(idx, np.arange(t.size), pulse.samples) * 1e3, "o", ms=4)
    lo = max(0, int(m - (n_pre + 2) * pulse.samples_per_ui))
    hi = min(t.size - 1, int(m + (n_post + 2) * pulse.samples_per_ui))
    ax.set_xlim(t[lo], t[hi])
    ax.set_xlabel("time (ps)")
    ax.set_ylabel("pulse response (mV/V)")
    return ax


def step_from_pulse(p: np.ndarray, spu: int) -> np.ndarray:
    """``s[m] = sum_(k >= 0) p[m - k spu]``: the response to a step made of unit symbols."""
    n_ui = -(-p.size // spu)
    q = np.zeros(n_ui * spu)
    q[: p.size] = p
    return np.cumsum(q.reshape(n_ui, spu), axis=0).reshape(-1)[: p.size]


def impulse_from_pulse(samples: np.ndarray, samples_per_ui: int) -> np.ndarray:
    """The impulse response per sample ``h`` whose response to a unit symbol (``h``
    convolved with ``samples_per_ui`` ones) is ``samples``: the first difference of
    :func:`step_from_pulse`. Exact: the inverse of :func:`pulse_from_impulse` to rounding
    (what an IBIS-AMI model's ``AMI_Init`` takes, times ``1 / dt``)."""
    s = step_from_pulse(np.asarray(samples, dtype=float), int(samples_per_ui))
    return np.diff(s, prepend=0.0)


def pulse_from_impulse(h: np.ndarray, samples_per_ui: int) -> np.ndarray:
    """``h`` (per sample) convolved with ``samples_per_ui`` ones, on ``h``'s record."""
    c = np.cumsum(np.asarray(h, dtype=float))
    out = c.copy()
    out[samples_per_ui:] -= c[:-samples_per_ui]
    return out
