"""Time-domain Monte Carlo of a SerDes link, symbol by symbol, in Numba.

:func:`simulate` drives the kernel of :mod:`phy._kernels` chunk by chunk, so memory stays
bounded whatever the number of UIs: every per-symbol quantity (symbols, transmit noise,
edge jitter) lives in a rolling window a few hundred UIs longer than a chunk, and the
receiver's state (FFE delay line, DFE decisions, CDR loop, burst tracker, postcoder) is
carried from chunk to chunk. The same seed gives the same result bit for bit.

What one UI does, in order:

1. The transmitter maps data symbols to levels (Gray, optional 1/(1+D) precoder), runs
   its FFE, adds its noise, and moves each edge by its jitter.
2. The receiver's ADC samples the analog signal (channel, Tx edge filter, Rx filter,
   CTLE, crosstalk) at the CDR's phase plus its clock jitter, and adds its noise.
3. The Rx FFE, the DFE and the slicer decide; errors are counted against the sent
   symbols (detector errors) and, after the postcoder, against the data (symbol and bit
   errors); bursts of detector errors are tracked (a burst ends after as many correct
   decisions in a row as the DFE has taps, at least one).
4. The CDR updates its phase. With an eye diagram, the same is done on a grid of
   ``samples_per_ui`` time offsets around the sampling instant, after the Rx FFE and the
   DFE's correction, and each offset's decisions give the horizontal bathtub.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import channels
from fec.analysis import BurstModel
from fec.interleave import GRAY_PAM4
from fec.montecarlo import Estimate

from . import _kernels as K
from . import pulse as pl
from . import signals
from ._validate import integer, number
from ._validate import seed as check_seed
from .equalizers import solve_ffe_dfe
from .errors import CdrLockWarning, ConfigError
from .eye import EyeDiagram, Waveform
from .noise import Jitter, Noise, shaped_noise_filter
from .serdes import Cdr, Receiver, Transmitter

__all__ = ["Link", "SimulationResult", "simulate"]


@dataclass(frozen=True, eq=False)
class Link:
    """Everything :func:`simulate` derived from the configuration before running: the
    equalised pulse, the sampling point, the taps and the slicer.

    Attributes
    ----------
    pulse : channels.PulseResponse
        Through the front end (Tx edge filter, Rx filter, CTLE) and the Tx FFE.
    sampling_index : float
        Fine-sample index of the main cursor in ``pulse`` (the fixed or starting phase).
    cursors : ndarray
        Symbol-spaced cursors of ``pulse`` at the sampling phase, ``n_pre`` before the main.
    n_pre : int
    rx_ffe : ndarray
        Rx FFE taps used (``[1.0]`` without an FFE).
    dfe : ndarray
        DFE taps used, normalised to ``h0``.
    h0_v : float
        Main cursor at the slicer (V) for a full-swing symbol, after the Rx FFE.
    thresholds_v : ndarray
        Slicer thresholds (V).
    rx_noise_rms_v : float
        Rms receiver noise at the ADC (V).
    tx_noise_rms : float
        Rms transmit noise per symbol, in units of the swing.
    rx_noise_fir : ndarray
        Symbol-spaced FIR shaping unit white noise into the receiver's density noise
        (``[0]`` without one).
    white_noise_rms_v : float
        Rms of the white noise at the ADC, per UI (V): the receiver's ``rx_noise_rms_v``
        and, with ``Noise(tx_model="cursor")``, the transmitter's noise.
    """

    pulse: channels.PulseResponse
    sampling_index: float
    cursors: np.ndarray
    n_pre: int
    rx_ffe: np.ndarray
    dfe: np.ndarray
    h0_v: float
    thresholds_v: np.ndarray
    rx_noise_rms_v: float
    tx_noise_rms: float
    rx_noise_fir: np.ndarray
    white_noise_rms_v: float = 0.0

    def to_dict(self) -> dict:
        return {
            "sampling_index": self.sampling_index,
            "sampling_time_s": self.pulse.t0_s + self.sampling_index * self.pulse.dt_s,
            "cursors": self.cursors.tolist(),
            "n_pre": self.n_pre,
            "rx_ffe": self.rx_ffe.tolist(),
            "dfe": self.dfe.tolist(),
            "h0_v": self.h0_v,
            "thresholds_v": self.thresholds_v.tolist(),
            "rx_noise_rms_v": self.rx_noise_rms_v,
            "tx_noise_rms": self.tx_noise_rms,
            "white_noise_rms_v": self.white_noise_rms_v,
        }


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """What a run measured.

    Attributes
    ----------
    n_ui : int
        UIs counted (after the warm-up).
    modulation : str
    symbol_errors : int
        Data symbols wrong (after the postcoder when precoded).
    detector_errors : int
        Decisions at the slicer that differ from the sent symbol.
    bit_errors : int
        Data bits wrong (Gray map for PAM4).
    ber, ser : fec.montecarlo.Estimate
        Bit and symbol error ratios with exact 95 % intervals.
    error_ui : ndarray of int64
        UI index of each detector error (up to ``max_errors_recorded``).
    error_levels : ndarray of int8
        Its level error (decided minus sent symbol index).
    errors_truncated : bool
        More detector errors happened than were recorded.
    burst_span_counts : ndarray
        Bursts by span in UI (index = span; the last bin collects longer ones).
    n_bursts : int
    eye : EyeDiagram or None
    waveform : Waveform or None
    cdr_phase_mean_s, cdr_phase_rms_s : float
        Mean and rms of the CDR phase (relative to the starting phase) over the counted UIs.
    link : Link
    config : dict
    cdr_locked : bool or None
        Whether the clock recovery stayed within ``Cdr.lock_bound_ui`` of its start (None
        for a fixed phase). When it did not, ``ber`` and ``ser`` hold NaN (the counts are
        kept) and a :class:`phy.errors.CdrLockWarning` says so.
    cdr_phase_min_s, cdr_phase_max_s : float
        The CDR phase's extremes over the counted UIs (s, from its start).
    cdr_unlocked_at_ui : int or None
        The first counted UI beyond the lock bound.
    """

    n_ui: int
    modulation: str
    symbol_errors: int
    detector_errors: int
    bit_errors: int
    ber: Estimate
    ser: Estimate
    error_ui: np.ndarray
    error_levels: np.ndarray
    errors_truncated: bool
    burst_span_counts: np.ndarray
    n_bursts: int
    eye: EyeDiagram | None
    waveform: Waveform | None
    cdr_phase_mean_s: float
    cdr_phase_rms_s: float
    link: Link
    config: dict = field(default_factory=dict)
    cdr_locked: bool | None = None
    cdr_phase_min_s: float = 0.0
    cdr_phase_max_s: float = 0.0
    cdr_unlocked_at_ui: int | None = None

    @property
    def bits_per_symbol(self) -> int:
        return 2 if self.modulation == "pam4" else 1

    def burst_model(self, max_span: int = 256) -> BurstModel:
        """The measured bursts of detector errors as a :class:`fec.BurstModel` (each
        distinct level-error pattern with its frequency), for :func:`fec.burst_errors`.

        A burst ends after ``gap`` correct decisions in a row, the same rule the run used.
        Needs every error recorded (``errors_truncated`` False)."""
        if self.errors_truncated:
            raise ConfigError("not every error was recorded: raise max_errors_recorded to build a burst model")
        if self.error_ui.size == 0:
            raise ConfigError("the run saw no errors: there are no bursts to model")
        gap = self.config["burst_gap_ui"]
        pos, val = self.error_ui, self.error_levels.astype(np.int64)
        starts = np.flatnonzero(np.concatenate([[True], np.diff(pos) > gap]))
        ends = np.concatenate([starts[1:], [pos.size]])
        counts: dict[tuple, int] = {}
        for s, e in zip(starts, ends):
            span = int(pos[e - 1] - pos[s] + 1)
            if span > max_span:
                continue
            pat = np.zeros(span, dtype=np.int64)
            pat[pos[s:e] - pos[s]] = val[s:e]
            counts[tuple(pat)] = counts.get(tuple(pat), 0) + 1
        pats = tuple(np.array(k, dtype=np.int64) for k in counts)
        n = np.array(list(counts.values()), dtype=float)
        rate = starts.size / self.n_ui
        return BurstModel(pats, n / n.sum(), float(1 - n.sum() / starts.size), "measured", rate, self.modulation)

    def to_dict(self) -> dict:
        return {
            "n_ui": self.n_ui,
            "modulation": self.modulation,
            "symbol_errors": self.symbol_errors,
            "detector_errors": self.detector_errors,
            "bit_errors": self.bit_errors,
            "ber": self.ber.to_dict(),
            "ser": self.ser.to_dict(),
            "errors_recorded": int(self.error_ui.size),
            "errors_truncated": self.errors_truncated,
            "n_bursts": self.n_bursts,
            "burst_span_counts": self.burst_span_counts.tolist(),
            "cdr_phase_mean_s": self.cdr_phase_mean_s,
            "cdr_phase_rms_s": self.cdr_phase_rms_s,
            "cdr_locked": self.cdr_locked,
            "cdr_phase_min_s": self.cdr_phase_min_s,
            "cdr_phase_max_s": self.cdr_phase_max_s,
            "cdr_unlocked_at_ui": self.cdr_unlocked_at_ui,
            "eye": None if self.eye is None else self.eye.to_dict(),
            "link": self.link.to_dict(),
            "config": self.config,
        }


# ---------------------------------------------------------------------------- sources
def _random_symbols(rng: np.random.Generator, n: int, order: int) -> np.ndarray:
    """Uniform symbols 0 .. order-1 (a power of two) from the top bits of one 64-bit draw each:
    the stream does not depend on how it is cut into chunks (numpy's small-integer draws
    buffer bits within one call and drop them at its end)."""
    shift = np.uint64(64 - int(order).bit_length() + 1)
    return (rng.bit_generator.random_raw(n) >> shift).astype(np.int64)


class _Source:
    """Data symbols in order, from a pattern or a random generator."""

    def __init__(self, tx: Transmitter, rng: np.random.Generator):
        self.tx = tx
        self.rng = rng
        self.pos = 0
        p = tx.pattern
        self.periodic = None
        self.prbs = None
        if p == "prbs13q":
            self.periodic = np.asarray(signals.prbs13q(), dtype=np.int64)
        elif p == "ssprq":
            self.periodic = np.asarray(signals.ssprq(), dtype=np.int64)
        elif p.startswith("prbs"):
            self.prbs = signals.Prbs(int(p[4:]))

    def take(self, n: int) -> np.ndarray:
        if self.periodic is not None:
            idx = (self.pos + np.arange(n)) % self.periodic.size
            out = self.periodic[idx]
        elif self.prbs is not None:
            bits = self.prbs.bits(n * (2 if self.tx.order == 4 else 1))
            out = np.asarray(signals.gray_pam4(bits) if self.tx.order == 4 else bits, dtype=np.int64)
        else:
            out = _random_symbols(self.rng, n, self.tx.order)
        self.pos += n
        return out


class _Stream:
    """Per-symbol quantities for global UI indices ``[start, end)``, generated in order."""

    def __init__(self, start: int, make):
        self.start = start
        self.end = start
        self.make = make  # make(n) -> dict of arrays of length n
        self.data: dict[str, np.ndarray] = {}

    def window(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        if hi > self.end:
            new = self.make(hi - self.end)
            self.data = {k: np.concatenate([self.data[k], v]) if self.data else v for k, v in new.items()}
            self.end = hi
        if lo < self.start:
            raise AssertionError("stream window moved backwards")
        drop = lo - self.start
        if drop:
            self.data = {k: v[drop:] for k, v in self.data.items()}
            self.start = lo
        return {k: v[: hi - lo] for k, v in self.data.items()}


# ---------------------------------------------------------------------------- tables
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
    """A pulse-based source of :func:`simulate` (an aggressor, or the victim's own symbols
    under symbol jitter): ``samples[alo:ahi]`` tabulated around ``base`` (the window index of
    the victim's sample for the symbol sent at j = 0), with room for ``shift`` fine samples
    of phase and jitter. Returns (table, position, jmin, jmax)."""
    half = spu // 2
    jmin = int(np.floor((-base - shift - half) / spu)) - 1
    jmax = int(np.ceil((ahi - alo - base + shift + half) / spu)) + 1
    a_lo = jmin * spu + base - int(np.ceil(shift)) - half - 2
    a_hi = jmax * spu + base + int(np.ceil(shift)) + half + 3
    tab, _ = _table(samples[alo:ahi], a_lo, a_hi)
    return tab, base + v0 - a_lo, jmin, jmax


def step_from_pulse(p: np.ndarray, spu: int) -> np.ndarray:
    """``s[m] = sum_(k >= 0) p[m - k spu]``: the response to a step made of unit symbols."""
    n_ui = -(-p.size // spu)
    q = np.zeros(n_ui * spu)
    q[: p.size] = p
    return np.cumsum(q.reshape(n_ui, spu), axis=0).reshape(-1)[: p.size]


# ---------------------------------------------------------------------------- simulate
def _first_tap_range(dfe) -> tuple[float, float]:
    """The values the DFE's first tap can take: its fixed value, or within its limit."""
    if dfe.n_taps == 0:
        return 0.0, 0.0
    if dfe.taps is not None:
        return float(dfe.taps[0]), float(dfe.taps[0])
    lim = float(np.atleast_1d(dfe.tap_limits)[0])
    return -lim, lim


def prepare(
    link,
    *,
    baud_hz: float | None = None,
    tx: Transmitter | None = None,
    rx: Receiver | None = None,
    noise: Noise | None = None,
    cdr: Cdr | None = None,
    samples_per_ui: int = 32,
) -> tuple[Link, channels.PulseResponse]:
    """The :class:`Link` :func:`simulate` would run, and the front-end-filtered pulse
    before the Tx FFE (the simulator applies the FFE to the symbols)."""
    tx = tx or Transmitter()
    rx = rx or Receiver()
    noise = noise or Noise()
    cdr = cdr or Cdr()
    if isinstance(link, channels.Channel):
        if baud_hz is None:
            raise ConfigError("baud_hz is needed to simulate a Channel")
        baud = number(baud_hz, "baud_hz", positive=True)
        spu = integer(samples_per_ui, "samples_per_ui", 4, 256)
        raw = link.pulse_response(baud, spu)
    elif isinstance(link, channels.PulseResponse):
        raw = link
        if baud_hz is not None and not np.isclose(number(baud_hz, "baud_hz", positive=True), raw.baud_hz):
            raise ConfigError(f"baud_hz {baud_hz:g} differs from the pulse response's {raw.baud_hz:g}")
        if raw.samples_per_ui < 4:
            raise ConfigError(f"the pulse response needs at least 4 samples per UI, got {raw.samples_per_ui}")
    else:
        raise ConfigError(f"simulate needs a channels.Channel or channels.PulseResponse, got {type(link).__name__}")
    baud, spu = raw.baud_hz, raw.samples_per_ui
    if not np.all(np.isfinite(raw.samples)):
        raise ConfigError("the pulse response holds NaN or infinite values")
    front = pl.front_end(tx.rise_time_s, rx.bandwidth_hz, rx.filter_order, rx.ctle)
    analog = pl.filtered(raw, front)
    eq = pl.tx_equalised(analog, tx.ffe)
    y = eq.samples
    if cdr.phase in ("peak", "mm", "mm-dfe"):
        m_s = pl.sampling_index(y, spu, cdr.phase, _first_tap_range(rx.dfe))
    else:
        m_s = float(np.argmax(y)) + float(cdr.phase) / eq.dt_s
    # cursors at the sampling phase (linear interpolation on the fine grid)
    n_ffe_pre, n_ffe_post, n_dfe = rx.ffe.n_pre, rx.ffe.n_post, rx.dfe.n_taps
    n_pre_c = int(min(m_s // spu, 64))
    n_post_c = int(min((y.size - 1 - m_s) // spu, 512))
    t = m_s + spu * np.arange(-n_pre_c, n_post_c + 1)
    cursors = np.interp(t, np.arange(y.size), y)
    if cursors[n_pre_c] <= 0:
        raise ConfigError("the main cursor at the sampling phase is not positive: the channel does not pass the signal")
    if n_dfe > n_post_c:
        raise ConfigError(f"the DFE has {n_dfe} taps but the pulse response holds only {n_post_c} post-cursors")
    lv = tx.levels
    sym_power = float(np.mean(lv**2))
    tx_sigma = noise.tx_sigma(sym_power)
    white2 = noise.rx_noise_rms_v**2
    if noise.tx_model == "cursor":  # 93A-30: the transmitter's noise on the main cursor, at the sampler
        if noise.tx_snr_db is not None:
            white2 += (cursors[n_pre_c] * tx.swing_v) ** 2 * 10 ** (-noise.tx_snr_db / 10)
        tx_sigma = 0.0
    # receiver noise at the ADC
    if noise.rx_noise_psd_v2_per_hz > 0:
        if rx.bandwidth_hz is None:
            raise ConfigError("a receiver noise density (rx_noise_psd_v2_per_hz) needs Receiver.bandwidth_hz")
        rx_h = pl.front_end(None, rx.bandwidth_hz, rx.filter_order, rx.ctle)
        g, R = shaped_noise_filter(noise.rx_noise_psd_v2_per_hz, baud, rx_h)
        R = R.copy()
        R[0] += white2
    else:
        g = np.zeros(1)
        R = np.array([white2])
    # Rx FFE
    if rx.ffe.n_taps == 1 and rx.ffe.taps is None:
        w = np.array([1.0])
    elif rx.ffe.taps is not None:
        w = np.asarray(rx.ffe.taps, dtype=float)
    else:
        ac = R / (tx.swing_v**2)  # noise relative to the symbol scale
        tx_ac = np.zeros(1)
        if tx_sigma:
            # transmit noise reaches the ADC through the whole pulse: add its autocorrelation
            c = cursors
            tx_ac = tx_sigma**2 * np.array([np.dot(c[: c.size - k], c[k:]) for k in range(rx.ffe.n_taps)])
        ac = np.pad(ac, (0, max(0, rx.ffe.n_taps - ac.size)))[: rx.ffe.n_taps]
        ac[: tx_ac.size] += tx_ac[: rx.ffe.n_taps]
        w = solve_ffe_dfe(cursors, n_pre_c, n_ffe_pre, n_ffe_post, n_dfe, ac, sym_power, rx.dfe.tap_limits)
    comb = np.convolve(cursors, w)
    main_c = n_pre_c + n_ffe_pre
    h0 = float(comb[main_c])
    if h0 <= 0:
        raise ConfigError("the Rx FFE leaves a main cursor <= 0")
    if rx.dfe.taps is not None:
        b = np.asarray(rx.dfe.taps, dtype=float)
    else:
        post = comb[main_c + 1 : main_c + 1 + n_dfe] / h0
        b = np.clip(post, -rx.dfe.tap_limits, rx.dfe.tap_limits)
    h0_v = h0 * tx.swing_v
    thresholds = h0_v * 0.5 * (lv[1:] + lv[:-1])
    link_info = Link(
        pulse=eq,
        sampling_index=float(m_s),
        cursors=cursors,
        n_pre=n_pre_c,
        rx_ffe=w,
        dfe=b,
        h0_v=h0_v,
        thresholds_v=thresholds,
        rx_noise_rms_v=float(np.sqrt(R[0])),
        tx_noise_rms=tx_sigma,
        rx_noise_fir=g,
        white_noise_rms_v=float(np.sqrt(white2)),
    )
    return link_info, analog


def simulate(
    link,
    n_ui: int,
    *,
    baud_hz: float | None = None,
    tx: Transmitter | None = None,
    rx: Receiver | None = None,
    noise: Noise | None = None,
    jitter: Jitter | None = None,
    cdr: Cdr | None = None,
    samples_per_ui: int = 32,
    eye: bool = False,
    eye_bins: int = 256,
    waveform_ui: int = 0,
    warmup_ui: int | None = None,
    chunk_ui: int = 1 << 17,
    max_errors_recorded: int = 1_000_000,
    span_threshold: float = 1e-5,
    span_ui: tuple[int, int] | None = None,
    seed: int | None = None,
) -> SimulationResult:
    """Simulate ``n_ui`` unit intervals of a link.

    Parameters
    ----------
    link : channels.Channel or channels.PulseResponse
        The channel (its pulse response is taken at ``baud_hz`` with ``samples_per_ui``),
        or a pulse response without the transceiver's filters (they are applied here).
        Aggressors of the channel become crosstalk with independent random data at a
        random (seeded) symbol phase.
    n_ui : int
        UIs to count (after ``warmup_ui``).
    baud_hz : float
        Symbol rate (Bd), for a Channel.
    tx, rx, noise, jitter, cdr
        The SerDes (:mod:`phy.serdes`, :mod:`phy.noise`); defaults: PAM4, 0.5 V, no
        equalisation, no noise, no jitter, fixed phase at the pulse peak.
    samples_per_ui : int
        Time resolution of the simulation and of the eye (fine samples per UI).
    eye : bool
        Build the eye diagram (``samples_per_ui`` columns x ``eye_bins`` voltage bins)
        and the horizontal bathtub.
    waveform_ui : int
        Record the first this many UIs (after warm-up): the ADC input and the slicer input
        on the fine grid, with the sent and decided symbols.
    warmup_ui : int, optional
        UIs run before counting (FFE/DFE history, CDR lock); default 256, plus 20,000
        with a CDR.
    chunk_ui : int
        UIs per kernel call (memory is a few dozen bytes per UI of a chunk).
    max_errors_recorded : int
        Cap on the stored error positions (counts are always exact).
    span_threshold : float
        The pulse is trimmed where it stays below this fraction of its peak.
    span_ui : (int, int), optional
        Keep exactly this many UIs before and after the main cursor instead (the ISI
        beyond is ignored: a deliberate truncation, e.g. to drop late reflections).
    seed : int, optional
        Seed of every random stream (symbols, noises, jitters, crosstalk phases).

    Returns
    -------
    SimulationResult
    """
    tx = tx or Transmitter()
    rx = rx or Receiver()
    noise = noise or Noise()
    jitter = jitter or Jitter()
    cdr = cdr or Cdr()
    for name, obj, cls in (("tx", tx, Transmitter), ("rx", rx, Receiver), ("noise", noise, Noise),
                           ("jitter", jitter, Jitter), ("cdr", cdr, Cdr)):
        if not isinstance(obj, cls):
            raise ConfigError(f"{name} must be a {cls.__name__}, got {type(obj).__name__}")
    n_ui = integer(n_ui, "n_ui", 1)
    chunk_ui = integer(chunk_ui, "chunk_ui", 64, 1 << 24)
    eye_bins = integer(eye_bins, "eye_bins", 8, 4096)
    waveform_ui = integer(waveform_ui, "waveform_ui", 0, 1 << 20)
    max_err = integer(max_errors_recorded, "max_errors_recorded", 0)
    thr = number(span_threshold, "span_threshold", positive=True, hi=0.1)
    warmup = (256 + (20_000 if cdr.kind != "fixed" else 0)) if warmup_ui is None else integer(warmup_ui, "warmup_ui", 0)

    lk, analog = prepare(link, baud_hz=baud_hz, tx=tx, rx=rx, noise=noise, cdr=cdr, samples_per_ui=samples_per_ui)
    baud, spu, dt = analog.baud_hz, analog.samples_per_ui, analog.dt_s
    ui = 1.0 / baud
    M = tx.order
    levels = tx.levels
    P = spu
    half = P // 2

    # ---- phase bookkeeping (fine samples)
    m_s = lk.sampling_index
    if span_ui is None:
        lo, hi = pl.span(analog.samples, spu, thr)
    else:
        if not (isinstance(span_ui, (tuple, list)) and len(span_ui) == 2):
            raise ConfigError(f"span_ui must be (UIs before, UIs after) the main cursor, got {span_ui!r}")
        before = integer(span_ui[0], "span_ui[0]", 0, 4096)
        after = integer(span_ui[1], "span_ui[1]", 1, 65536)
        centre = int(np.floor(m_s))
        lo = max(0, centre - before * spu - spu // 2)
        hi = min(analog.samples.size, centre + after * spu + spu // 2)
    m0 = int(np.floor(m_s)) - lo
    v0 = m_s - np.floor(m_s)
    phase_lim = cdr.phase_limit_ui * spu if cdr.kind != "fixed" else 0.0
    # largest |phase - edge jitter| any table read can see, in fine samples
    shift = phase_lim + 1 + v0 + jitter.max_tx_s() / dt + (spu / 2 + 1 if cdr.kind == "bang-bang" else 0) + 2
    W = hi - lo
    step = step_from_pulse(analog.samples[lo:hi], spu)
    jpre = int(np.ceil((m0 + shift) / spu)) + 1
    jpost = int(np.ceil((W - m0 + shift) / spu)) + 1
    r_lo = -jpre * spu + m0 - int(np.ceil(shift)) - half - 2
    r_hi = (jpost + 1) * spu + m0 + int(np.ceil(shift)) + half + 3
    S, t0 = _table(step, r_lo, r_hi, periodic_tail=spu)
    T0, T1 = _rows(S, spu)

    # ---- pulse-based sources: the aggressors (no jitter), and with symbol jitter the victim's
    # own symbols, each moving its equalised pulse (the step-based source then carries only
    # the transmitter's noise)
    aggs = pl.tx_equalised(analog, tx.ffe).aggressors
    symbol_jitter = jitter.model == "symbol"
    ss = np.random.SeedSequence(check_seed(seed))
    r_sym, r_txn, r_jit, r_rxn, r_agg = (np.random.default_rng(s) for s in ss.spawn(5))
    agg_rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(int(r_agg.integers(2**63))).spawn(
        max(len(aggs), 1))]
    sources = []  # (table, position of the victim's j = 0 sample, jmin, jmax)
    if symbol_jitter:
        vlo, vhi = pl.span(lk.pulse.samples, spu, thr) if span_ui is None else (lo, hi)
        sources.append(_pulse_source(lk.pulse.samples, vlo, vhi, m0 + lo - vlo, v0, shift, spu))
    for a in aggs:
        alo, ahi = pl.span(a.samples, spu, thr) if np.any(a.samples) else (0, 1)
        theta = int(r_agg.integers(spu))  # asynchronous symbol phase (fine samples)
        sources.append(_pulse_source(a.samples, alo, ahi, m0 + lo - alo - theta, v0, shift, spu))
    A = len(sources)
    width = max([t.size for t, *_ in sources], default=2 * spu)
    agg_S = np.stack([np.pad(t, (0, width - t.size)) for t, *_ in sources]) if A else np.zeros((0, width))
    rows = [_rows(t, spu) for t in agg_S]
    agg_T0 = np.stack([r[0] for r in rows]) if A else np.zeros((0, spu, 2))
    agg_T1 = np.stack([r[1] for r in rows]) if A else np.zeros((0, spu, 2))
    agg_jmin = np.array([src[2] for src in sources], dtype=np.int64)
    agg_jmax = np.array([src[3] for src in sources], dtype=np.int64)
    agg_pos = np.array([src[1] for src in sources])

    # ---- rolling windows of per-symbol quantities
    c = tx.ffe.coefficients
    fmain = tx.ffe.main
    nffe = lk.rx_ffe.size
    fpre = rx.ffe.n_pre
    reach_back = max([jpost + 2] + [int(j) + 2 for j in agg_jmax])
    reach_fwd = max([jpre + 2] + [2 - int(j) for j in agg_jmin]) + fpre
    HB = reach_back + c.size + 1
    HA = reach_fwd + c.size + 1
    source = _Source(tx, r_sym)
    # every stream starts at the same global UI whatever the pulse's span, so that the symbols,
    # noises and jitter of UI g do not depend on the channel (for spans up to 4096 UI)
    first = -4096 * (1 + HB // 4096)

    class _TxSymbols:
        """Per-symbol transmitter quantities in order: data, sent symbol, noise, edge jitter."""

        k = first  # global index of the next symbol
        prev = 0  # last precoder output

        def __call__(self, n):
            data = source.take(n)
            if tx.precoder:
                sent = np.asarray(signals.precode(data, self.prev), dtype=np.int64)
                self.prev = int(sent[-1])
            else:
                sent = data
            txn = np.zeros(n)
            if lk.tx_noise_rms:
                K.normals(r_txn, txn, lk.tx_noise_rms, 0.0)
            eps = jitter.tx_edges(self.k, n, ui, r_jit) / dt if jitter.has_tx else np.zeros(n)
            self.k += n
            return {"data": data, "sent": sent, "txn": txn, "eps": eps}

    stream = _Stream(first, _TxSymbols())
    def aggressor_symbols(rg):
        return lambda n: {"lv": levels[_random_symbols(rg, n, M)] * tx.swing_v}

    agg_streams = [_Stream(first, aggressor_symbols(rg)) for rg in agg_rngs[:len(aggs)]]
    step_levels = np.zeros_like(levels) if symbol_jitter else levels  # the step source: noise only

    # ---- receiver noise: white, or shaped by the front end (FIR with carried state)
    gfir = lk.rx_noise_fir
    white_rms = lk.white_noise_rms_v
    noise_tail = np.zeros(gfir.size - 1)

    # ---- state and outputs
    total = warmup + n_ui
    yring = np.zeros(nffe)
    colring = np.zeros((nffe, P))
    ahist = np.zeros(lk.dfe.size)
    fstate = np.zeros(K.N_FSTATE)
    istate = np.zeros(K.N_ISTATE, dtype=np.int64)
    istate[K.I_LASTERR] = -1
    istate[K.I_UNLOCK] = -1
    lock_bound = cdr.lock_bound_ui * spu if cdr.kind != "fixed" else np.inf
    eye_hist = np.zeros((P, eye_bins), dtype=np.int64)
    col_err = np.zeros(P, dtype=np.int64)
    cross = np.zeros(P * K.CROSS_SUB, dtype=np.int64)
    comb = np.convolve(lk.cursors, lk.rx_ffe)
    resid = np.abs(np.delete(comb, np.arange(lk.n_pre + fpre, lk.n_pre + fpre + lk.dfe.size + 1)))
    vmax = 1.2 * (lk.h0_v + tx.swing_v * resid.sum()) + 6 * lk.rx_noise_rms_v
    vlo, vstep = -vmax, 2 * vmax / eye_bins
    wave_raw = np.zeros((waveform_ui, P))
    wave_z = np.zeros((waveform_ui, P))
    wave_meta = np.zeros((waveform_ui, 2), dtype=np.int64)
    err_pos = np.zeros(max_err, dtype=np.int64)
    err_val = np.zeros(max_err, dtype=np.int8)
    burst_hist = np.zeros(65, dtype=np.int64)
    gap = max(1, lk.dfe.size)
    gray = GRAY_PAM4.astype(np.int64) if M == 4 else np.array([0, 1], dtype=np.int64)
    dfe_v = lk.dfe * lk.h0_v
    pos_base = float(m0 + t0 + v0)
    block = cdr.update_ui if cdr.kind != "fixed" else 1024

    g0 = 0
    while g0 < total:
        n = min(chunk_ui, total - g0)
        win = stream.window(g0 - HB, g0 + n + HA)
        sent = win["sent"]
        x, a_, b_, ax, bx = (np.empty(sent.size) for _ in range(5))
        idx = np.empty(sent.size, dtype=np.int64)
        eps = win["eps"]
        K.prepare_symbols(sent, step_levels, c, fmain, tx.swing_v, win["txn"], 0.0 * eps if symbol_jitter else eps,
                          pos_base, x, a_, b_, ax, bx, idx)
        if A:
            alv = [s.window(g0 - HB, g0 + n + HA)["lv"] for s in agg_streams]
            pos = np.repeat(agg_pos[:, None], x.size, axis=1)
            if symbol_jitter:  # the victim's symbols, each at its own (jittered) position
                alv.insert(0, levels[sent] * tx.swing_v)
                pos[0] -= eps
            alv = np.stack(alv)
            agg_idx = np.floor(pos).astype(np.int64)
            frac = pos - agg_idx
            agg_a = np.ascontiguousarray(alv * (1 - frac))
            agg_b = np.ascontiguousarray(alv * frac)
        else:
            agg_a = agg_b = np.zeros((0, x.size))
            agg_idx = np.zeros((0, x.size), dtype=np.int64)
        if gfir.size > 1:
            wn = np.empty(noise_tail.size + n)
            wn[: noise_tail.size] = noise_tail
            K.normals(r_rxn, wn[noise_tail.size :], 1.0, 0.0)
            rxn = np.empty(n)
            K.fir_valid(wn, gfir, rxn)
            noise_tail = wn[wn.size - (gfir.size - 1):]
        else:
            rxn = np.zeros(n)
        if white_rms:
            extra = np.empty(n)
            K.normals(r_rxn, extra, white_rms, 0.0)
            rxn += extra
        K.run_chunk(
            g0, n, HB, block,
            a_, b_, ax, bx, idx, win["sent"], win["data"], tx.precoder, M, levels, lk.thresholds_v, gray,
            S, T0, T1, spu, jpre, jpost,
            agg_a, agg_b, agg_idx, agg_S, agg_T0, agg_T1, agg_jmin, agg_jmax,
            rxn,
            lk.rx_ffe, fpre, dfe_v, gap,
            cdr.code, cdr.kp_ui, cdr.ki_ui, lk.h0_v, float(phase_lim), float(lock_bound),
            warmup, eye, P, vlo, vstep, eye_hist, col_err, cross,
            wave_raw, wave_z, wave_meta,
            err_pos, err_val, burst_hist,
            yring, colring, ahist, fstate, istate,
        )
        g0 += n
    if istate[K.I_LASTERR] >= 0:  # close the last burst
        span = istate[K.I_LASTERR] - istate[K.I_BSTART] + 1
        burst_hist[min(span, burst_hist.size - 1)] += 1
        istate[K.I_NBURST] += 1

    counted = int(istate[K.I_NCOUNT])
    bps = 2 if M == 4 else 1
    nrec = int(istate[K.I_NREC])
    ph_mean = fstate[K.F_PHSUM] / max(counted, 1)
    ph_rms = np.sqrt(max(fstate[K.F_PHSQ] / max(counted, 1) - ph_mean**2, 0.0))
    times = (np.arange(P) - half) * dt
    eye_obj = None
    if eye:
        eye_obj = EyeDiagram(eye_hist, times, vlo + vstep * np.arange(eye_bins + 1), lk.thresholds_v,
                             lk.h0_v * levels, col_err, cross, counted, ui, tx.modulation)
    wave = None
    if waveform_ui:
        nw = int(istate[K.I_NWAVE])
        wave = Waveform(wave_raw[:nw], wave_z[:nw], wave_meta[:nw, 0], wave_meta[:nw, 1], dt, warmup)
    config = {
        "baud_hz": baud, "samples_per_ui": spu, "n_ui": n_ui, "warmup_ui": warmup, "seed": seed,
        "tx": tx.to_dict(), "rx": rx.to_dict(), "noise": noise.to_dict(), "jitter": jitter.to_dict(),
        "cdr": cdr.to_dict(), "span_ui": [-jpre, jpost], "burst_gap_ui": gap, "aggressors": A,
    }
    ber = Estimate.of(int(istate[K.I_BITERR]), counted * bps)
    ser = Estimate.of(int(istate[K.I_DATAERR]), counted)
    locked, lost_at = None, None
    if cdr.kind != "fixed":
        locked = bool(istate[K.I_UNLOCK] < 0)
        if not locked:
            lost_at = int(istate[K.I_UNLOCK])
            swing = max(abs(fstate[K.F_PHMIN]), abs(fstate[K.F_PHMAX])) / spu
            warnings.warn(CdrLockWarning(
                f"the {cdr.kind} clock recovery lost lock: its phase moved {swing:.2f} UI from where it started "
                f"(bound {cdr.lock_bound_ui:g} UI), first at UI {lost_at}; the symbol error ratio of this run "
                f"({ser.value:.3g}) is that of a receiver that slipped, not of the link: it is reported as NaN. "
                "Lower the loop gains (kp_ui, ki_ui), or compare with a fixed phase"), stacklevel=2)
            ber = Estimate(ber.count, ber.trials, float("nan"), float("nan"), float("nan"))
            ser = Estimate(ser.count, ser.trials, float("nan"), float("nan"), float("nan"))
    return SimulationResult(
        n_ui=counted,
        modulation=tx.modulation,
        symbol_errors=int(istate[K.I_DATAERR]),
        detector_errors=int(istate[K.I_SYMERR]),
        bit_errors=int(istate[K.I_BITERR]),
        ber=ber,
        ser=ser,
        error_ui=err_pos[:nrec].copy(),
        error_levels=err_val[:nrec].copy(),
        errors_truncated=bool(istate[K.I_SYMERR] > nrec),
        burst_span_counts=burst_hist,
        n_bursts=int(istate[K.I_NBURST]),
        eye=eye_obj,
        waveform=wave,
        cdr_phase_mean_s=float(ph_mean * dt),
        cdr_phase_rms_s=float(ph_rms * dt),
        link=lk,
        config=config,
        cdr_locked=locked,
        cdr_phase_min_s=float(fstate[K.F_PHMIN] * dt),
        cdr_phase_max_s=float(fstate[K.F_PHMAX] * dt),
        cdr_unlocked_at_ui=lost_at,
    )
