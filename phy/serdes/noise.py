"""Noise and jitter: what the transmitter and receiver add to the signal.

Jitter is applied where it happens. Transmitter jitter moves the *edges* of the driver's
waveform (or, in 802.3 COM's model, each symbol's pulse: :class:`Jitter` ``model``): the
transition into symbol ``k`` happens at ``k UI + eps_k`` with::

    eps_k = N(0, rj_rms_s) + (+dcd_s/2 if k even else -dcd_s/2)
            + sj_amplitude_s * sin(2 pi sj_frequency_hz k UI + sj_phase_rad)

and the receiver sees the channel's response to those moved edges (no linearisation).
The receiver's own clock moves only as its clock recovery moves it.

Noise: the transmitter adds white Gaussian noise to each symbol (after its FFE) at
``tx_snr_db`` below the mean symbol power (802.3's ``SNR_TX``); it goes through the
channel and the CTLE like the signal. The receiver adds noise at the sampler, either
white per UI (``rx_noise_rms_v``) or from an input-referred one-sided spectral density
``rx_noise_psd_v2_per_hz`` (802.3's ``eta_0``, in V^2/Hz) shaped by the Rx filter and
the CTLE: variance ``eta_0 * integral_0^inf |H_rx(f) H_ctle(f)|^2 df`` (93A-35), with
the UI-to-UI correlation that shaping gives.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._validate import number
from ..errors import ConfigError
from . import _kernels as _k

__all__ = ["Jitter", "Noise", "shaped_noise_filter"]


@dataclass(frozen=True)
class Jitter:
    """Transmit jitter (all times in seconds, peak for SJ and DD, peak-to-peak for DCD).

    Parameters
    ----------
    rj_rms_s : float
        Random jitter, Gaussian, independent from one edge (or symbol) to the next.
    dcd_s : float
        Duty-cycle distortion: alternate edges (or symbols) early and late by ``dcd_s / 2``.
    sj_amplitude_s, sj_frequency_hz, sj_phase_rad : float
        Sinusoidal jitter.
    dd_s : float
        Dual-Dirac deterministic jitter: each symbol moves by ``+dd_s`` or ``-dd_s``, equally
        likely and independent (802.3's ``A_DD``, 93A-40); needs ``model="symbol"``.
    model : {"edge", "symbol"}
        What moves. ``"edge"`` (physical): each transition of the driver's output, so the
        receiver sees ``sum_k (x_k - x_(k-1)) s(t - k UI - eps_k)`` (``s`` the step
        response). ``"symbol"``: each symbol's equalised pulse moves as a whole,
        ``sum_k a_k p(t - k UI - eps_k)`` (``p`` the pulse through the Tx FFE, the
        transmitter's noise unmoved): the model behind 802.3's ``sigma_RJ`` and ``A_DD``
        in COM (93A-31, 93A-32, 93A-40), where the jitter acts through the pulse's slope
        ``h_J``. Through a smooth (lossy) response the two differ a lot: ``p' = s'(t) -
        s'(t - UI)`` nearly cancels where ``s'`` is smooth, so COM's parameters applied as
        edge jitter over-count their effect (3x in rms on a 14-inch backplane).

    The engines refuse a jitter whose :meth:`max_tx_s` exceeds
    :data:`phy.serdes.limits.MAX_JITTER_UI` (64 UI) at their baud rate, before sizing any
    table from it (``rj_rms_s=1``, one second, once asked the simulator for 396 TiB).
    """

    rj_rms_s: float = 0.0
    dcd_s: float = 0.0
    sj_amplitude_s: float = 0.0
    sj_frequency_hz: float = 0.0
    sj_phase_rad: float = 0.0
    dd_s: float = 0.0
    model: str = "edge"

    def __post_init__(self):
        for name in ("rj_rms_s", "dcd_s", "sj_amplitude_s", "sj_frequency_hz", "dd_s"):
            number(getattr(self, name), f"Jitter.{name}", nonneg=True)
        number(self.sj_phase_rad, "Jitter.sj_phase_rad")
        if self.sj_amplitude_s > 0 and self.sj_frequency_hz <= 0:
            raise ConfigError("Jitter.sj_frequency_hz must be > 0 when sj_amplitude_s is set")
        if self.model not in ("edge", "symbol"):
            raise ConfigError(f"Jitter.model must be 'edge' or 'symbol', got {self.model!r}")
        if self.dd_s and self.model != "symbol":
            raise ConfigError("Jitter.dd_s (dual-Dirac per symbol, 802.3's A_DD) needs model='symbol'; "
                              "for edges that alternate early and late use dcd_s")

    @property
    def has_tx(self) -> bool:
        return bool(self.rj_rms_s or self.dcd_s or self.sj_amplitude_s or self.dd_s)

    def max_tx_s(self, n_sigma: float = 8.0) -> float:
        """A bound on ``|eps_k|`` (Gaussian tails cut at ``n_sigma``)."""
        return self.dcd_s / 2 + self.sj_amplitude_s + self.dd_s + n_sigma * self.rj_rms_s

    @classmethod
    def com(cls, sigma_rj_ui: float, a_dd_ui: float, baud_hz: float) -> Jitter:
        """802.3 COM's transmitter jitter, ``sigma_RJ`` and ``A_DD`` in UI, as COM models
        it (``model="symbol"``)."""
        ui = 1.0 / number(baud_hz, "baud_hz", positive=True)
        return cls(rj_rms_s=sigma_rj_ui * ui, dd_s=a_dd_ui * ui, model="symbol")

    def tx_edges(self, k0: int, n: int, ui_s: float, rng: np.random.Generator) -> np.ndarray:
        """Displacements ``eps_k`` (s) of edges (or symbols) ``k0 .. k0+n-1``; Gaussian values
        are clipped at 8 sigma (a probability of 1e-15) so that bounds hold. ``rng``: a numpy
        ``Generator`` or a :class:`phy.serdes._kernels.FastNormal` (the simulator's). The dual Dirac
        draws its signs after the Gaussian values (none when ``dd_s`` is 0)."""
        eps = np.zeros(n)
        if self.rj_rms_s:
            _k.gaussian(rng, eps, self.rj_rms_s, 8.0)
        if self.dcd_s:
            first = 0.5 if k0 % 2 == 0 else -0.5
            eps[0::2] += first * self.dcd_s
            eps[1::2] -= first * self.dcd_s
        if self.sj_amplitude_s:
            _k.add_sine(eps, k0, 2 * np.pi * self.sj_frequency_hz * ui_s, self.sj_amplitude_s, self.sj_phase_rad)
        if self.dd_s:
            gen = rng.generator if isinstance(rng, _k.FastNormal) else rng
            eps += self.dd_s * (2.0 * gen.integers(0, 2, n) - 1.0)
        return eps

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Noise:
    """Transmitter and receiver noise.

    Parameters
    ----------
    tx_snr_db : float, optional
        Transmitter SNR (dB) against the mean symbol power; ``None`` for none.
    rx_noise_rms_v : float
        White noise at the sampler, rms volts per UI.
    rx_noise_psd_v2_per_hz : float
        Input-referred one-sided density ``eta_0`` (V^2/Hz), shaped by the Rx filter and
        CTLE (needs an Rx bandwidth).
    input_psd : tuple of (tuple, tuple), optional
        A second input-referred noise with its own spectrum, ``(f_hz, psd_v2_per_hz)`` as
        tuples (one-sided density at each frequency, linear between them, 0 beyond the
        last), shaped by the Rx filter and CTLE as ``rx_noise_psd_v2_per_hz`` is: an optical
        receiver's noise that crosses a host channel before the SerDes.
    tx_model : {"path", "cursor"}
        Where the transmitter's noise acts. ``"path"`` (physical, and 802.3's 178A-17): white
        per symbol at the driver after its FFE, at ``tx_snr_db`` below the mean symbol
        power, through the whole channel. ``"cursor"`` (802.3's 93A-30, COM without an Rx
        FFE): white at the sampler with variance ``h0^2 10^(-SNR_TX/10)``, ``h0`` the main
        cursor of a full-swing symbol before the Rx FFE.
    """

    tx_snr_db: float | None = None
    rx_noise_rms_v: float = 0.0
    rx_noise_psd_v2_per_hz: float = 0.0
    tx_model: str = "path"
    input_psd: tuple | None = None

    def __post_init__(self):
        if self.tx_snr_db is not None:
            number(self.tx_snr_db, "Noise.tx_snr_db")
        number(self.rx_noise_rms_v, "Noise.rx_noise_rms_v", nonneg=True)
        number(self.rx_noise_psd_v2_per_hz, "Noise.rx_noise_psd_v2_per_hz", nonneg=True)
        if self.tx_model not in ("path", "cursor"):
            raise ConfigError(f"Noise.tx_model must be 'path' or 'cursor', got {self.tx_model!r}")
        if self.input_psd is not None:
            try:
                f, d = (np.asarray(x, dtype=float) for x in self.input_psd)
            except (TypeError, ValueError):
                raise ConfigError("Noise.input_psd must be (frequencies in Hz, densities in V^2/Hz)") from None
            if f.ndim != 1 or f.shape != d.shape or f.size < 2 or np.any(np.diff(f) <= 0) or np.any(d < 0) \
                    or not (np.all(np.isfinite(f)) and np.all(np.isfinite(d))):
                raise ConfigError("Noise.input_psd needs increasing frequencies and finite densities >= 0 of one length")
            object.__setattr__(self, "input_psd", (tuple(f.tolist()), tuple(d.tolist())))

    def input_psd_at(self, f_hz) -> np.ndarray:
        """The shaped input noise's density at ``f_hz`` (V^2/Hz; 0 without one)."""
        if self.input_psd is None:
            return np.zeros(np.shape(f_hz))
        f, d = self.input_psd
        return np.interp(f_hz, f, d, right=0.0)

    def tx_sigma(self, mean_symbol_power: float) -> float:
        """Rms of the noise added to each transmitted symbol (in symbol units)."""
        if self.tx_snr_db is None:
            return 0.0
        return float(np.sqrt(mean_symbol_power * 10 ** (-self.tx_snr_db / 10)))

    def to_dict(self) -> dict:
        return asdict(self)


def shaped_noise_filter(
    psd_v2_per_hz: float, baud_hz: float, transfer, f_max_hz: float | None = None, n_taps: int = 17,
    extra_psd=None,
) -> tuple[np.ndarray, np.ndarray]:
    """A symbol-spaced FIR that turns unit white noise into the sampled receiver noise.

    The noise ``n(t)`` has one-sided density ``psd * |transfer(f)|^2``. Sampled once per
    UI its autocorrelation is ``R[k] = psd * integral_0^inf |H|^2 cos(2 pi f k UI) df``.
    Returns ``(g, R)``: a zero-phase FIR ``g`` (``n_taps``, odd) with ``g * g = R``
    (the spectral factor of the aliased spectrum, truncated and rescaled so that the
    variance ``R[0]`` is exact) and ``R[0 .. n_taps // 2]``. ``extra_psd``: a function of
    frequency adding a shaped density to ``psd`` before the transfer
    (:attr:`Noise.input_psd`).
    """
    psd = number(psd_v2_per_hz, "rx_noise_psd_v2_per_hz", nonneg=True)
    fb = number(baud_hz, "baud_hz", positive=True)
    f_max = 40 * fb if f_max_hz is None else f_max_hz
    half = n_taps // 2
    f = np.linspace(0.0, f_max, 40_001)
    s = (psd + (0.0 if extra_psd is None else extra_psd(f))) * np.abs(transfer(f)) ** 2
    tail = s[-1] / max(s.max(), 1e-300)
    if tail > 1e-6:
        raise ConfigError(
            f"the receiver noise density does not fall off by {f_max / 1e9:.4g} GHz "
            f"(|H|^2 is still {tail:.2g} of its peak): give the receiver a bandwidth limit"
        )
    lags = np.arange(half + 1)
    R = np.trapezoid(s[None, :] * np.cos(2 * np.pi * np.outer(lags / fb, f)), f, axis=1)
    # Zero-phase spectral factor on a long circular grid, then truncate.
    n = 16 * (half + 1)
    Rfull = np.zeros(n)
    Rfull[: half + 1] = R
    Rfull[-half:] = R[1:][::-1]
    spec = np.clip(np.fft.fft(Rfull).real, 0, None)
    g = np.fft.ifft(np.sqrt(spec)).real
    g = np.concatenate([g[-half:], g[: half + 1]])
    g *= np.sqrt(R[0] / np.sum(g**2)) if R[0] > 0 else 0.0
    return g, R
