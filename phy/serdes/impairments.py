"""What a real ADC/DSP receiver adds to an ideal one: the ADC's quantisation and clipping,
the equalisers' tap resolution, the sampling clock's random jitter and the clock
recovery's residual wander. Both engines apply the same model.

* **ADC**: a mid-rise quantiser of ``2^ENOB`` levels across ``+-full scale``: the step is
  ``Delta = 2 FS / 2^ENOB``, a sample inside the range is off by at most ``Delta / 2``
  (a noise of ``Delta^2 / 12`` on a busy signal), and a sample beyond it is clipped to the
  outermost level. Taking the effective number of bits as the quantiser's own puts the
  ADC's thermal noise and distortion into the same ``Delta^2 / 12``. Without a full scale
  the automatic gain control sets it where the ADC's input (the data through the
  unequalised cursors, and the noise there: its exact distribution, :class:`AdcInput`)
  exceeds it with probability ``adc_clip_probability``, 1e-6 by default (or at
  ``adc_crest_factor`` times the input's rms if given). What clipping costs is the exact
  ``E[(|x| - top)^2; |x| > top]`` over that distribution.
* **Taps**: the Rx FFE's taps are rounded to ``2^(bits-1) - 1`` steps of its largest
  tap's magnitude, and the DFE's (in units of the main cursor) to steps of
  ``1 / 2^(bits-1)``; the prepared link carries the rounded taps, so every engine uses
  them.
* **Sampling clock**: each UI's sample is taken ``delta_n`` late, ``delta_n`` the sum of
  white random jitter (``rj_rms_s``) and a wander (``wander_rms_s``) that a first-order
  low pass of corner ``wander_bandwidth_hz`` leaves of white noise (an AR(1) sequence,
  ``rho = exp(-2 pi f_w UI)``). The sample moves by ``delta_n`` times the waveform's slope
  there (central difference on the fine grid). In the statistical eye each is a Gaussian
  through the cursors' slopes ``p'_k``: the white jitter moves every sample the Rx FFE
  combines by its own error, ``sigma_rj^2 E[a^2] |w|^2 sum_k p'_k^2``; the wander, slow
  against the FFE's span, moves the equalised pulse, ``sigma_w^2 E[a^2] sum_k (w *
  p')_k^2`` (the DFE's feedback comes from decisions and does not move).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.signal import fftconvolve

from _linkmodel._renamed import module_getattr

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["AdcInput", "Impairments", "adc_top_v", "quantise"]


@dataclass(frozen=True)
class Impairments:
    """A receiver's implementation penalties (None or 0: ideal).

    Parameters
    ----------
    adc_enob : float, optional
        Effective number of bits of the ADC over its full scale.
    adc_full_scale_v : float, optional
        Peak of the ADC's range (V) at its input (after the CTLE); default from
        ``adc_crest_factor`` or ``adc_clip_probability``.
    adc_crest_factor : float, optional
        The automatic gain control's back-off: full scale over the input's rms.
    adc_clip_probability : float
        Without a full scale or crest factor: the probability that the input exceeds the
        full scale. Default 1e-6, the upper end of what 802.3 contributions take for an
        ADC receiver's clipping (A. Ran, 802.3df electrical ad hoc, "clipping probability
        1e-6 or lower, often 1e-9", ieee802.org/3/df/email/elec/msg00410.html).
    ffe_tap_bits, dfe_tap_bits : int, optional
        Tap resolution, sign included.
    rj_rms_s : float
        The sampling clock's random jitter, independent from UI to UI (s rms).
    wander_rms_s : float
        The clock recovery's residual wander (s rms).
    wander_bandwidth_hz : float
        Its corner (a first-order low pass).
    name : str
    """

    adc_enob: float | None = None
    adc_full_scale_v: float | None = None
    adc_crest_factor: float | None = None
    adc_clip_probability: float = 1e-6
    ffe_tap_bits: int | None = None
    dfe_tap_bits: int | None = None
    rj_rms_s: float = 0.0
    wander_rms_s: float = 0.0
    wander_bandwidth_hz: float = 4e6
    name: str = "impairments"

    def __post_init__(self):
        if self.adc_enob is not None:
            number(self.adc_enob, "Impairments.adc_enob", lo=1.0, hi=16.0)
        if self.adc_full_scale_v is not None:
            number(self.adc_full_scale_v, "Impairments.adc_full_scale_v", positive=True)
        if self.adc_crest_factor is not None:
            number(self.adc_crest_factor, "Impairments.adc_crest_factor", lo=1.0, hi=20.0)
        number(self.adc_clip_probability, "Impairments.adc_clip_probability", lo=1e-15, hi=0.1)
        for k in ("ffe_tap_bits", "dfe_tap_bits"):
            if getattr(self, k) is not None:
                integer(getattr(self, k), f"Impairments.{k}", 2, 24)
        number(self.rj_rms_s, "Impairments.rj_rms_s", nonneg=True)
        number(self.wander_rms_s, "Impairments.wander_rms_s", nonneg=True)
        number(self.wander_bandwidth_hz, "Impairments.wander_bandwidth_hz", positive=True)
        if self.rj_rms_s > 1e-10 or self.wander_rms_s > 1e-10:
            raise ConfigError("Impairments: sampling jitter above 100 ps rms is not a receiver's; give seconds")

    @classmethod
    def adc_dsp_224g(cls) -> Impairments:
        """A 224G-class (106.25 GBd PAM4) ADC/DSP receiver, from public figures:

        * ADC ENOB 5.0: the PAM4 figure proposed for COM's ADC term in 802.3's 400G
          studies (A. Ghiasi, ieee802.org/3/ad_hoc/E4AI/email/msg00052.html, "PAM4 = 5.0
          bits"; R. Mellitz's starting values, msg00062, "ENOB 5"), at the low end of the
          "5-8 effective bits" a DesignCon 2024 review gives for 112G+ ADCs;
        * full scale where the input clips with probability 1e-6 (A. Ran, 802.3df,
          ieee802.org/3/df/email/elec/msg00410.html: "never seen anything higher than 1e-6
          in FEC-aware receivers");
        * Rx FFE taps of 6 bits (a 32 Gb/s ADC PAM4 receiver's published "6-bit FFE
          coefficient space"; no 224G figure was found, so this is conservative);
        * DFE taps unquantised, sampling jitter and CDR wander 0: no public figure was
          found for a 224G receiver's DFE resolution, sampling-clock jitter or residual
          wander, and 802.3 COM's ``sigma_RJ`` (0.01 UI) and ``A_DD`` (0.02 UI), which
          the roll-up already applies, lump the link's random and deterministic jitter.
          Set ``rj_rms_s`` / ``wander_rms_s`` to study them.
        """
        return cls(adc_enob=5.0, ffe_tap_bits=6, name="224G ADC/DSP receiver (public figures)")

    @property
    def sampling_rms_s(self) -> float:
        """The rms of the sampling instant's error, white and wander together."""
        return float(np.hypot(self.rj_rms_s, self.wander_rms_s))

    @property
    def ideal(self) -> bool:
        return (self.adc_enob is None and self.ffe_tap_bits is None and self.dfe_tap_bits is None
                and self.sampling_rms_s == 0)

    def with_(self, **changes) -> Impairments:
        from dataclasses import replace

        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)

    # ------------------------------------------------------------------ model
    def adc_range(self, adc_in: AdcInput) -> tuple[float, float]:
        """(step ``Delta``, full scale) of the ADC for its input ``adc_in``; ``(0, inf)``
        without an ADC."""
        if self.adc_enob is None:
            return 0.0, float("inf")
        if self.adc_full_scale_v is not None:
            fs = float(self.adc_full_scale_v)
        elif self.adc_crest_factor is not None:
            fs = self.adc_crest_factor * adc_in.rms_v
        else:
            fs = adc_in.level_exceeded(self.adc_clip_probability)
        if not fs > 0:
            raise ConfigError("the ADC's full scale is 0: the signal at its input has no power")
        return 2.0 * fs / 2.0**self.adc_enob, fs

    def round_ffe(self, w: np.ndarray) -> np.ndarray:
        """The Rx FFE's taps at the tap resolution."""
        if self.ffe_tap_bits is None or w.size < 2:
            return w
        step = float(np.max(np.abs(w))) / (2 ** (self.ffe_tap_bits - 1) - 1)
        return np.round(w / step) * step

    def round_dfe(self, b: np.ndarray) -> np.ndarray:
        """The DFE's taps (in units of the main cursor) at the tap resolution."""
        if self.dfe_tap_bits is None or b.size == 0:
            return b
        step = 1.0 / 2 ** (self.dfe_tap_bits - 1)
        return np.round(b / step) * step

    def sampling_offsets(self, n: int, ui_s: float, rng: np.random.Generator, state: float = 0.0
                         ) -> tuple[np.ndarray, float]:
        """``n`` successive sampling errors (s), and the wander's last value (its state)."""
        out = np.zeros(n)
        if self.rj_rms_s:
            out += rng.standard_normal(n) * self.rj_rms_s
        w = state
        if self.wander_rms_s:
            rho = float(np.exp(-2 * np.pi * self.wander_bandwidth_hz * ui_s))
            z = rng.standard_normal(n) * self.wander_rms_s * np.sqrt(1 - rho * rho)
            from scipy.signal import lfilter

            wander, _ = lfilter([1.0], [1.0, -rho], z, zi=[rho * w])
            out += wander
            w = float(wander[-1])
        return out, w


def quantise(v, step_v: float, full_scale_v: float) -> np.ndarray:
    """The ADC: ``v`` (V) on a mid-rise grid of ``step_v``, clipped to the outermost level
    inside ``+-full_scale_v`` (no quantiser when ``step_v`` is 0).

    Parameters
    ----------
    v : array_like
        Sampled voltages (V).
    step_v : float
        The ADC's step (V); 0 or less passes ``v`` through unquantised.
    full_scale_v : float
        Half the ADC's range (V): the output stays within the outermost level inside it.

    Returns
    -------
    numpy.ndarray
        The quantised voltages (V), a new array of ``v``'s shape.
    """
    x = np.asarray(v, dtype=float)
    if step_v <= 0:
        return x.copy()
    top = adc_top_v(step_v, full_scale_v)
    return np.clip((np.floor(x / step_v) + 0.5) * step_v, -top, top)


def adc_top_v(step_v: float, full_scale_v: float) -> float:
    """The outermost level of a mid-rise grid of ``step_v`` inside ``+-full_scale_v``
    (``full_scale - step / 2`` when the full scale is a whole number of half steps)."""
    if step_v <= 0:
        return float("inf")
    return float((np.floor(full_scale_v / step_v - 0.5 + 1e-12) + 0.5) * step_v)


@dataclass(frozen=True)
class AdcInput:
    """The distribution of the ADC's input at the sampling instant: the data through the
    unequalised cursors (an exact PMF on a grid, ``values_v``, ``probs``) plus Gaussian
    noise of ``noise_rms_v`` (the receiver's and the transmitter's there)."""

    values_v: np.ndarray
    probs: np.ndarray
    noise_rms_v: float

    @classmethod
    def from_cursors(cls, cursors_v: np.ndarray, levels: np.ndarray, noise_rms_v: float, bins: int = 4097
                     ) -> AdcInput:
        """``sum_k a_k c_k`` for independent, equiprobable levels ``a_k`` (each cursor's
        levels split linearly between the grid's two nearest points, which keeps the mean
        and adds at most a quarter bin squared of variance), plus the noise."""
        c = np.asarray(cursors_v, dtype=float)
        lv = np.asarray(levels, dtype=float)
        reach = (float(np.abs(c).sum() * np.abs(lv).max()) or 1.0) * (1 + 16 / bins)  # a few bins spare
        x = np.linspace(-reach, reach, bins)
        dx = x[1] - x[0]
        pmf = np.zeros(bins)
        pmf[bins // 2] = 1.0
        for ck in c[np.abs(c) > 1e-6 * reach]:
            k = np.zeros(2 * int(np.ceil(abs(ck) * lv.max() / dx)) + 3)
            z = (k.size - 1) // 2
            pos = z + ck * lv / dx
            lo = np.floor(pos).astype(int)
            np.add.at(k, lo, (1 - (pos - lo)) / lv.size)
            np.add.at(k, np.minimum(lo + 1, k.size - 1), (pos - lo) / lv.size)
            pmf = np.clip(fftconvolve(pmf, k)[z:z + bins], 0, None)
        keep = pmf > 1e-18
        return cls(x[keep], pmf[keep] / pmf[keep].sum(), float(noise_rms_v))

    @property
    def rms_v(self) -> float:
        return float(np.sqrt(np.sum(self.probs * self.values_v**2) + self.noise_rms_v**2))

    def exceed_probability(self, level_v: float) -> float:
        """``P(|x| > level)``."""
        from scipy.special import ndtr

        s = max(self.noise_rms_v, 1e-30)
        return float(np.sum(self.probs * (ndtr((self.values_v - level_v) / s) + ndtr((-level_v - self.values_v) / s))))

    def level_exceeded(self, probability: float) -> float:
        """The level ``|x|`` exceeds with ``probability`` (bisection on a monotone tail)."""
        from scipy.optimize import brentq

        hi = float(np.abs(self.values_v).max() + 40 * self.noise_rms_v) + 1e-12
        if self.exceed_probability(0.0) <= probability:
            return hi
        return float(brentq(lambda t: self.exceed_probability(t) - probability, 0.0, hi, xtol=1e-9 * hi))

    def clip_power(self, top_v: float) -> float:
        """``E[(|x| - top)^2; |x| > top]`` (V^2): what clipping to ``+-top`` takes off the
        input, in power (closed form for each Gaussian around a grid value)."""
        from scipy.special import ndtr

        if not np.isfinite(top_v):
            return 0.0
        s = max(self.noise_rms_v, 1e-30)
        out = 0.0
        for mu in (self.values_v, -self.values_v):  # the upper tail, and the lower one by symmetry of |x|
            d = mu - top_v
            z = d / s
            out += float(np.sum(self.probs * ((d * d + s * s) * ndtr(z) + d * s * np.exp(-0.5 * z * z)
                                              / np.sqrt(2 * np.pi))))
        return out


#: ``quantize``: the deprecated spelling of :func:`quantise` (warns; the same function).
__getattr__ = module_getattr(__name__, {"quantize": "quantise"})
