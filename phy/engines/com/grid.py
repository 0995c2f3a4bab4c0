"""COM's DFT grid (:class:`Grid`: samples per UI, record length, the launched rectangle
through the Tx edge and the Rx Butterworth) and the checks of a channel's pulses before the
search (:func:`check_pulses`)."""

from __future__ import annotations

import numpy as np

import channels
from channels.response import rx_butterworth, tx_rise_filter

from ..._validate import integer, number
from ...errors import ConfigError
from ...serdes.limits import MAX_PULSE_PEAK, check_pulse
from .params import ComParams

__all__ = ["MAX_SAMPLES_PER_UI", "MIN_SAMPLES_PER_UI", "Grid", "check_pulses"]


def check_pulses(ch: channels.Channel, spectra, g: Grid, amps) -> None:
    """Each pulse (per volt of the transmitter) before the search, finite and within what a
    channel can give, and the through one not zero: the kernels index by the cursor's
    position and divide by the main cursor."""
    for i, (sp, amp) in enumerate(zip(spectra, amps)):
        y = np.fft.irfft(sp, g.n) / amp
        if i == 0:
            check_pulse(y, f"the pulse response of {ch.name} (packages included) at {g.fb / 1e9:.6g} GBd")
        elif not (np.all(np.isfinite(y)) and np.abs(y).max() <= MAX_PULSE_PEAK):
            raise ConfigError(f"the crosstalk pulse of {ch.aggressors[i - 1].name} holds NaN, infinite or absurd "
                              f"values (beyond {MAX_PULSE_PEAK:g} V per V): the channel data are not physical")


def check_differential(ch: channels.Channel, p: ComParams) -> None:
    """Refuse a two-port channel not referenced to the differential ``2 R_0``: COM's
    packages and terminations are differential at ``2 R_0`` (93A.1.2), and a two-port
    referenced to ``R_0`` (a 50 ohm ``.s2p``) is a single-ended line, not a differential
    channel. A four-port's differential mode is at ``2 R_0`` by construction."""
    if ch.nports == 4:
        return
    zin, zout = ch.reference_impedance_ohm
    want = 2 * p.r_0
    if not (np.isclose(zin, want, rtol=0.01) and np.isclose(zout, want, rtol=0.01)):
        raise ConfigError(
            f"{ch.name}: a two-port referenced to {zin:g}/{zout:g} ohm is not a differential channel at "
            f"2 R_0 = {want:g} ohm: a {zin:g} ohm .s2p is a single-ended line; COM needs the differential "
            f"channel (a .s4p, or a two-port of the differential mode referenced to {want:g} ohm)")


#: The fewest samples per UI COM is computed with (:func:`channel_margin`): COM places its
#: cursor on the fine grid (the Mueller-Muller point, 93A-25/26) and reads the jitter's
#: slope from neighbouring samples (178A-23); on a coarser grid both move by a sizeable part
#: of a UI and COM moves with them, not monotonically.
MIN_SAMPLES_PER_UI = 16
#: The most samples per UI (the cost grows with it; 93A's reference code uses 32).
MAX_SAMPLES_PER_UI = 256


class Grid:
    """The DFT grid of the pulses: ``n_ui`` UIs of ``M`` samples (a power of two covering
    three delays plus 200 UI by default), the spectrum of a one-UI rectangle through the Tx
    edge and the Rx Butterworth (93A-19/20/46), and the room left before the response."""

    def __init__(self, ch: channels.Channel, p: ComParams, n_ui, samples_per_ui, require_nyquist=True):
        self.fb = number(p.baud_hz, "baud_hz", positive=True)
        spu = p.samples_per_ui if samples_per_ui is None else samples_per_ui
        self.M = M = integer(spu, "samples_per_ui", 1, MAX_SAMPLES_PER_UI)
        if M < MIN_SAMPLES_PER_UI:
            raise ConfigError(f"samples_per_ui {M} is too coarse for COM: it places the cursor and the jitter's "
                              f"slope on the sample grid, and below {MIN_SAMPLES_PER_UI} per UI COM moves by tenths "
                              "of a dB (at 1 per UI by several dB); give 16 to 256 (default 32)")
        check_differential(ch, p)
        # the file's own grid must be able to give a pulse at this baud (points, span, step:
        # channels.grid's rules; past the data's end COM extends them by the loss trend)
        channels.grid.check_pulse_grid(ch.f, self.fb, ch.delay_s, ch.name, require_nyquist=require_nyquist)
        if n_ui is None:
            n_ui = max(512, 1 << int(np.ceil(np.log2(3 * ch.delay_s * self.fb + 200))))
        else:
            n_ui = integer(n_ui, "n_ui", 64, 1 << 22)
        self.n = n = n_ui * M
        self.f = f = np.fft.rfftfreq(n, 1 / (self.fb * M))
        rect = np.zeros(n)
        rect[:M] = 1.0
        self.hr = rx_butterworth(f, p.f_r * self.fb, 4)
        self.base = np.fft.rfft(rect) * tx_rise_filter(f, p.t_r_s) * self.hr
        self.df = f[1] - f[0]
        self.roll = 8 * M  # a few UI of room before the response starts
        L = p.levels
        self.var_x = (L**2 - 1) / (3 * (L - 1) ** 2)

    def pulses(self, spectra, hc) -> list:
        """The pulses of every spectrum through a CTLE response ``hc``."""
        return [np.roll(np.fft.irfft(s * hc, self.n), self.roll) for s in spectra]
