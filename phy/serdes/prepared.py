"""The prepared link: a SerDes configuration made concrete on one channel, the one input
of the time-domain simulator and of the statistical eye.

:func:`prepare_link` takes the channel (or a pulse response), the transmitter, the
receiver, the noise and the sampling phase, and returns a :class:`PreparedLink`: the
pulse through the analog front end (Tx edge filter, Rx filter, CTLE) and through the Tx
FFE, the sampling point, the symbol-spaced cursors there, the noise at the ADC, the Rx
FFE taps (given or MMSE) and the DFE taps (given or zero forcing), the main cursor at the
slicer and its thresholds. In order:

1. the pulse response of the channel at the baud rate (or the one given);
2. through the front end, then the Tx FFE;
3. the sampling point: the peak, a Mueller-Muller point, or an offset from the peak;
4. the cursors there;
5. the noise at the ADC (receiver density shaped by the front end, white noise, and with
   ``Noise(tx_model="cursor")`` the transmitter's on the main cursor), and the ADC's step
   and full scale when the receiver has :class:`~phy.serdes.impairments.Impairments`;
6. the Rx FFE and the DFE taps (at the taps' resolution), the main cursor and the slicer
   thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import channels
from _linkmodel._recent import Recent

from .._validate import integer, number
from ..errors import ConfigError
from . import pulse as pl
from .pulse import step_from_pulse
from .equalisers import solve_ffe_dfe
from .impairments import AdcInput, Impairments, adc_top_v
from .limits import MAX_PULSE_PEAK, MAX_SLICER_V, check_pulse
from .noise import Noise, shaped_noise_filter
from .transceiver import Cdr, Receiver, Transmitter

__all__ = ["PreparedLink", "prepare_link", "step_from_pulse"]


@dataclass(frozen=True, eq=False)
class PreparedLink:
    """Everything the engines derive from a configuration before they run: the equalised
    pulse, the sampling point, the taps and the slicer.

    Attributes
    ----------
    pulse : channels.PulseResponse
        Through the front end (Tx edge filter, Rx filter, CTLE) and the Tx FFE.
    analog : channels.PulseResponse
        Through the front end only (the simulator applies the Tx FFE to the symbols; the
        transmitter's noise and edges see the pulse without it).
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
    impairments : Impairments
        The receiver's (ideal when it has none).
    adc_step_v, adc_full_scale_v : float
        The ADC's step and full scale (0 and inf without an ADC).
    adc_input_rms_v : float
        Rms of the ADC's input (signal and noise), the automatic gain control's reference.
    adc_clip_v2 : float
        What clipping takes off the ADC's input in power, ``E[(|x| - top)^2; |x| > top]``
        (V^2) over the input's exact distribution.
    through : channels.PulseResponse or None
        With an IBIS-AMI transmitter (whose ``AMI_Init`` response is in ``analog``): the
        pulse through the front end without it, the path the transmitter's noise crosses
        (:attr:`tx_noise_pulse`); None otherwise.
    """

    pulse: channels.PulseResponse
    analog: channels.PulseResponse
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
    impairments: Impairments = Impairments()
    adc_step_v: float = 0.0
    adc_full_scale_v: float = float("inf")
    adc_input_rms_v: float = 0.0
    adc_clip_v2: float = 0.0
    through: channels.PulseResponse | None = None

    @property
    def tx_noise_pulse(self) -> channels.PulseResponse:
        """The pulse the transmitter's noise crosses (added after its FFE, at the driver)."""
        return self.analog if self.through is None else self.through

    @property
    def adc_top_v(self) -> float:
        """The ADC's outermost level (inf without one)."""
        return adc_top_v(self.adc_step_v, self.adc_full_scale_v)

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
            "impairments": self.impairments.to_dict(),
            "adc_step_v": self.adc_step_v,
            "adc_full_scale_v": self.adc_full_scale_v,
            "adc_input_rms_v": self.adc_input_rms_v,
            "adc_clip_v2": self.adc_clip_v2,
        }


def prepare_link(
    link,
    *,
    baud_hz: float | None = None,
    tx: Transmitter | None = None,
    rx: Receiver | None = None,
    noise: Noise | None = None,
    cdr: Cdr | None = None,
    samples_per_ui: int = 32,
) -> PreparedLink:
    """The :class:`PreparedLink` the engines run (see the module docstring).

    Parameters
    ----------
    link : channels.Channel or channels.PulseResponse
        The channel, or a pulse response without the transceiver's filters.
    baud_hz : float, optional
        Symbol rate, Bd (needed for a Channel).
    tx, rx, noise, cdr : optional
        The SerDes (:mod:`phy.serdes`); None: ``Transmitter()``, ``Receiver()``,
        ``Noise()``, ``Cdr()``.
    samples_per_ui : int, optional
        Fine samples per UI of the pulse (default 32).

    Returns
    -------
    PreparedLink
        The pulse through the front end and Tx FFE, the sampling point and cursors
        there, the noise at the ADC, and the Rx FFE and DFE taps.
    """
    tx = tx or Transmitter()
    rx = rx or Receiver()
    noise = noise or Noise()
    cdr = cdr or Cdr()
    raw = _raw_pulse(link, baud_hz, samples_per_ui)
    analog, eq, through = _through_front_end(raw, tx, rx)
    check_pulse(eq.samples, "the pulse response through the front end and the Tx FFE")
    m_s = _sampling_point(eq, cdr, rx)
    cursors, n_pre = _cursors(eq.samples, m_s, raw.samples_per_ui, rx)
    sym_power = float(np.mean(tx.levels**2))
    g, R, white2, tx_sigma = _adc_noise(noise, tx, rx, cursors[n_pre], sym_power, raw.baud_hz, raw.samples_per_ui)
    imp = rx.impairments or Impairments()
    w = imp.round_ffe(_rx_ffe_taps(rx, cursors, n_pre, R, tx, tx_sigma, sym_power))
    comb = np.convolve(cursors, w)
    main_c = n_pre + rx.ffe.n_pre
    h0 = float(comb[main_c])
    if h0 <= 0:
        raise ConfigError("the Rx FFE leaves a main cursor <= 0")
    b = imp.round_dfe(_dfe_taps(rx, comb, main_c, h0))
    h0_v = h0 * tx.swing_v
    _check_slicer(comb, tx.swing_v, R)
    lv = tx.levels
    # the ADC's input: the signal, the receiver's noise and the transmitter's through the path
    path = through or analog
    tx_v2 = (tx_sigma * tx.swing_v) ** 2 * float(np.sum(np.interp(
        m_s + raw.samples_per_ui * np.arange(-n_pre, cursors.size - n_pre), np.arange(path.samples.size),
        path.samples) ** 2))
    noise_in = float(np.sqrt(R[0] + tx_v2))
    step, fs, clip = 0.0, float("inf"), 0.0
    in_rms = float(np.sqrt(sym_power * tx.swing_v**2 * np.sum(cursors**2) + noise_in**2))
    if imp.adc_enob is not None:
        adc_in = AdcInput.from_cursors(cursors * tx.swing_v, lv, noise_in)
        step, fs = imp.adc_range(adc_in)
        clip = adc_in.clip_power(adc_top_v(step, fs))
    return PreparedLink(
        pulse=eq, analog=analog, sampling_index=float(m_s), cursors=cursors, n_pre=n_pre, rx_ffe=w, dfe=b,
        h0_v=h0_v, thresholds_v=h0_v * 0.5 * (lv[1:] + lv[:-1]), rx_noise_rms_v=float(np.sqrt(R[0])),
        tx_noise_rms=tx_sigma, rx_noise_fir=g, white_noise_rms_v=float(np.sqrt(white2)),
        impairments=imp, adc_step_v=step, adc_full_scale_v=fs, adc_input_rms_v=in_rms, adc_clip_v2=clip,
        through=through,
    )


_FRONT = Recent(4)  # the last pulses through the front end: the eye's sampling phases read one pulse


def _through_front_end(raw: channels.PulseResponse, tx: Transmitter, rx: Receiver) -> tuple:
    """``(analog, eq, through)``: the pulse ``raw`` through the front end (Tx edge, Rx filter, CTLE),
    then through the Tx FFE; remembered for the last 4 pulse objects and the settings they
    depend on (a link prepared at several sampling phases filters its pulse once).

    With IBIS-AMI models (``tx.ami``, ``rx.ami``) their ``AMI_Init`` takes the place of the
    Tx FFE and of the CTLE, in IBIS-AMI's order (the transmitter's on the channel, the
    receiver's on what it returns); ``analog`` is then the pulse with the transmitter's
    model in it (the simulator sends plain symbols: ``tx.ffe`` is one tap), and ``through``
    the pulse without it (the transmitter's noise path; None without a Tx model)."""

    def make():
        analog = pl.filtered(raw, pl.front_end(tx.rise_time_s, rx.bandwidth_hz, rx.filter_order, rx.ctle))
        if tx.ami is not None:
            eq = tx.ami.equalise(analog)
            if rx.ami is not None:
                eq, analog = rx.ami.equalise(eq), rx.ami.equalise(analog)
            return raw, eq, eq, analog
        if rx.ami is not None:
            analog = rx.ami.equalise(analog)
        return raw, analog, pl.tx_equalised(analog, tx.ffe), None

    key = (id(raw), tx.rise_time_s, rx.bandwidth_hz, rx.filter_order, rx.ctle, tx.ffe, tx.ami, rx.ami)
    try:
        hash(key)
    except TypeError:  # a CTLE or FFE holding something unhashable: no memory
        return make()[1:]
    return _FRONT.remember(key, make, lambda h: h[0] is raw)[1:]


def _raw_pulse(link, baud_hz, samples_per_ui) -> channels.PulseResponse:
    """The channel's pulse response at the baud rate, or the pulse response given."""
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
    what = f"the pulse response of {raw.name or 'the channel'} at {raw.baud_hz / 1e9:.6g} GBd"
    check_pulse(raw.samples, what)
    for a in raw.aggressors:  # crosstalk may be zero; never non-finite nor absurd
        y = np.asarray(a.samples, dtype=float)
        if not np.all(np.isfinite(y)) or np.abs(y).max(initial=0.0) > MAX_PULSE_PEAK:
            raise ConfigError(f"the crosstalk pulse of {a.name or 'an aggressor'} holds NaN, infinite or absurd "
                              f"values (beyond {MAX_PULSE_PEAK:g} V per V): the channel data are not physical")
    return raw


def _check_slicer(comb: np.ndarray, swing_v: float, R) -> None:
    """The slicer's worst-case input (every cursor at the outer level, after the Rx FFE) and
    the noise there, finite and within :data:`MAX_SLICER_V`: the engines size their voltage
    grids and bins from them."""
    reach = float(np.sum(np.abs(comb))) * swing_v
    noise = float(np.sqrt(max(float(R[0]), 0.0)))
    if not (np.isfinite(reach) and np.isfinite(noise)) or reach > MAX_SLICER_V or noise > MAX_SLICER_V:
        raise ConfigError(f"the slicer's input would reach {reach:.3g} V (noise {noise:.3g} V rms) with this "
                          f"transmitter and receiver, beyond the {MAX_SLICER_V:g} V bound: check the swing and "
                          "the FFE taps")


def _first_tap_range(dfe) -> tuple[float, float]:
    """The values the DFE's first tap can take: its fixed value, or within its limit."""
    if dfe.n_taps == 0:
        return 0.0, 0.0
    if dfe.taps is not None:
        return float(dfe.taps[0]), float(dfe.taps[0])
    lim = float(np.atleast_1d(dfe.tap_limits)[0])
    return -lim, lim


def _sampling_point(eq: channels.PulseResponse, cdr: Cdr, rx: Receiver) -> float:
    """The fine-sample index of the main cursor: a named phase, or an offset from the peak."""
    y = eq.samples
    if cdr.phase in ("peak", "mm", "mm-dfe"):
        return pl.sampling_index(y, eq.samples_per_ui, cdr.phase, _first_tap_range(rx.dfe))
    m = float(np.argmax(y)) + float(cdr.phase) / eq.dt_s
    if not 0.0 <= m <= y.size - 1:
        rec = y.size * eq.dt_s
        raise ConfigError(f"Cdr.phase {float(cdr.phase):g} s puts the sampling point outside the pulse record "
                          f"({rec * 1e9:.4g} ns, the peak at {float(np.argmax(y)) * eq.dt_s * 1e9:.4g} ns): give an "
                          "offset from the peak within the record")
    return m


def _cursors(y: np.ndarray, m_s: float, spu: int, rx: Receiver) -> tuple[np.ndarray, int]:
    """Symbol-spaced samples at the sampling phase (linear interpolation on the fine
    grid), up to 64 before the main cursor and 512 after, and the count before."""
    n_pre = int(min(m_s // spu, 64))
    n_post = int(min((y.size - 1 - m_s) // spu, 512))
    cursors = np.interp(m_s + spu * np.arange(-n_pre, n_post + 1), np.arange(y.size), y)
    if cursors[n_pre] <= 0:
        raise ConfigError("the main cursor at the sampling phase is not positive: the channel does not pass the signal")
    if rx.dfe.n_taps > n_post:
        raise ConfigError(f"the DFE has {rx.dfe.n_taps} taps but the pulse response holds only {n_post} post-cursors")
    return cursors, n_pre


def _adc_noise(noise: Noise, tx: Transmitter, rx: Receiver, main: float, sym_power: float, baud: float,
               spu: int):
    """(shaping FIR, autocorrelation per UI lag, white variance, Tx noise per symbol) at
    the ADC. With ``tx_model="cursor"`` the transmitter's noise is white at the sampler
    on the main cursor (93A-30) instead of per symbol at the driver."""
    tx_sigma = noise.tx_sigma(sym_power)
    white2 = noise.rx_noise_rms_v**2
    if noise.tx_model == "cursor":
        if noise.tx_snr_db is not None:
            white2 += (main * tx.swing_v) ** 2 * 10 ** (-noise.tx_snr_db / 10)
        tx_sigma = 0.0
    if noise.rx_noise_psd_v2_per_hz > 0 or noise.input_psd is not None:
        if rx.bandwidth_hz is None:
            raise ConfigError("a receiver noise density (rx_noise_psd_v2_per_hz, input_psd) needs Receiver.bandwidth_hz")
        if noise.input_psd is None and rx.ami is None:
            g, R = _rx_noise_filter(noise.rx_noise_psd_v2_per_hz, baud, rx.bandwidth_hz, rx.filter_order, rx.ctle)
        else:
            rx_h = pl.front_end(None, rx.bandwidth_hz, rx.filter_order, rx.ctle)
            if rx.ami is not None:
                rx_h = _times(rx_h, _ami_transfer(rx.ami, baud, spu))
            g, R = shaped_noise_filter(noise.rx_noise_psd_v2_per_hz, baud, rx_h, extra_psd=noise.input_psd_at)
        g, R = g.copy(), R.copy()
        R[0] += white2
        return g, R, white2, tx_sigma
    return np.zeros(1), np.array([white2]), white2, tx_sigma


_AMI_H = Recent(4)  # the last AMI receivers' own responses: a sweep prepares one model on many channels


def _ami_transfer(model, baud: float, spu: int):
    """The AMI receiver's own transfer function, a callable of frequency (Hz): its
    ``AMI_Init`` response to a unit impulse (:meth:`phy.ami.AmiModel.impulse_response`, 256
    UIs at the simulation's sampling) on a fine frequency grid, interpolated; zero above the
    sampling's Nyquist frequency, which the model never sees."""

    def make():
        dt = 1.0 / (baud * spu)
        g, n0 = model.impulse_response(dt, 1.0 / baud, 256 * spu)
        n_fft = 8 * g.size
        f = np.fft.rfftfreq(n_fft, dt)
        spec = np.fft.rfft(g, n_fft) * np.exp(2j * np.pi * f * n0 * dt)
        return model, f, spec

    _, f, spec = _AMI_H.remember((id(model), baud, spu), make, lambda h: h[0] is model)

    def h(f_hz):
        x = np.asarray(f_hz, dtype=float)
        return np.interp(x, f, spec.real, right=0.0) + 1j * np.interp(x, f, spec.imag, right=0.0)

    return h


def _times(a, b):
    """The product of two transfer functions."""
    return lambda f: a(f) * b(f)


def _rx_noise_filter(psd: float, baud: float, bandwidth_hz: float, order: int, ctle) -> tuple:
    """:func:`shaped_noise_filter` of a flat receiver density through the front end
    (``(g, R)``), remembered for the last 16 settings it depends on: a sweep's channels
    share them (it integrates 40,001 frequencies per lag). Copy what you change."""
    try:
        return _rx_noise_filter_cached(psd, baud, bandwidth_hz, order, ctle)
    except TypeError:  # a CTLE holding something unhashable: no memory
        return shaped_noise_filter(psd, baud, pl.front_end(None, bandwidth_hz, order, ctle))


@lru_cache(maxsize=16)
def _rx_noise_filter_cached(psd: float, baud: float, bandwidth_hz: float, order: int, ctle) -> tuple:
    return shaped_noise_filter(psd, baud, pl.front_end(None, bandwidth_hz, order, ctle))


def _rx_ffe_taps(rx: Receiver, cursors, n_pre: int, R, tx: Transmitter, tx_sigma: float, sym_power: float):
    """The Rx FFE: none, the taps given, or MMSE against the cursors and the noise (the
    transmitter's through the whole pulse), within the DFE's limits."""
    if rx.ffe.n_taps == 1 and rx.ffe.taps is None:
        return np.array([1.0])
    if rx.ffe.taps is not None:
        return np.asarray(rx.ffe.taps, dtype=float)
    n = rx.ffe.n_taps
    ac = R / (tx.swing_v**2)  # noise relative to the symbol scale
    tx_ac = np.zeros(1)
    if tx_sigma:
        c = cursors
        tx_ac = tx_sigma**2 * np.array([np.dot(c[: c.size - k], c[k:]) for k in range(n)])
    ac = np.pad(ac, (0, max(0, n - ac.size)))[:n]
    ac[: tx_ac.size] += tx_ac[:n]
    return solve_ffe_dfe(cursors, n_pre, rx.ffe.n_pre, rx.ffe.n_post, rx.dfe.n_taps, ac, sym_power,
                         rx.dfe.tap_limits)


def _dfe_taps(rx: Receiver, comb, main_c: int, h0: float) -> np.ndarray:
    """The DFE taps given, or the post-cursors they face (zero forcing) within their limits."""
    if rx.dfe.taps is not None:
        return np.asarray(rx.dfe.taps, dtype=float)
    post = comb[main_c + 1 : main_c + 1 + rx.dfe.n_taps] / h0
    return np.clip(post, -rx.dfe.tap_limits, rx.dfe.tap_limits)
