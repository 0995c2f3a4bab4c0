"""The bounds the engines hold their inputs to before any kernel runs: a pulse response that
is finite, that transmits something and that a channel could give, and arrays sized by a
parameter (jitter, bins, record lengths) within a stated memory bound.

The Numba kernels index arrays with integers computed from these numbers (a voltage over a
bin width, a time over a sample step); a non-finite or absurd value there is an index far
outside the array, which a compiled kernel does not check. So the engines refuse such inputs
at their boundary with a :class:`phy.ConfigError` that names the value and the bound.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

__all__ = ["MAX_ARRAY_BYTES", "MAX_JITTER_UI", "MAX_PULSE_PEAK", "MAX_SLICER_V", "MIN_PULSE_PEAK", "check_bytes",
           "check_gain", "check_jitter", "check_pulse"]

#: The largest magnitude (V per V of the transmitted symbol) a pulse response may reach. A
#: passive channel's pulse stays below about 1.1 (its gain is at most 1; the rectangle's
#: overshoot through a sharp band edge is 9 %), measured data that are not quite passive
#: (singular values to 1.14 in the shared files) a little above: 100 (40 dB of gain) leaves
#: room for any active redriver and refuses data that are not a channel's (one S21 entry of
#: 1e200 gives a pulse of 1e194).
MAX_PULSE_PEAK = 100.0
#: A pulse whose largest magnitude is at or below this (V per V, -180 dB) transmits
#: nothing: an open or all-zero channel.
MIN_PULSE_PEAK = 1e-9
#: The largest voltage (V) the slicer's input may reach in the worst case (every cursor at
#: the outer level, after the Rx FFE): a SerDes works in millivolts to volts.
MAX_SLICER_V = 1e3
#: The largest array (bytes) an engine allocates from a parameter (jitter, the number of
#: voltage bins and columns, a record length, stored errors or waveform): 1 GiB.
MAX_ARRAY_BYTES = 1 << 30
#: The largest displacement of an edge (or symbol) the engines take from a
#: :class:`phy.Jitter`, in UI: :meth:`phy.Jitter.max_tx_s` (random jitter to 8 sigma, half
#: the duty-cycle distortion, the sinusoid's amplitude, the dual Dirac). Jitter-tolerance
#: masks ask a few UI of low-frequency sinusoidal jitter (802.3's reach 5 UI peak to peak);
#: the simulator's tables and its tail's bound grow with this figure.
MAX_JITTER_UI = 64.0


def check_pulse(samples, what: str = "the pulse response") -> float:
    """The largest magnitude of ``samples`` (V per V), after refusing a pulse that holds NaN
    or infinite values, reaches beyond :data:`MAX_PULSE_PEAK`, or transmits nothing (at
    most :data:`MIN_PULSE_PEAK`)."""
    y = np.asarray(samples, dtype=float)
    if y.size == 0 or not np.all(np.isfinite(y)):
        raise ConfigError(f"{what} holds NaN or infinite values: the channel data are not a channel's")
    peak = float(np.max(np.abs(y)))
    if peak > MAX_PULSE_PEAK:
        raise ConfigError(f"{what} reaches {peak:.3g} V per V of the symbol, beyond the {MAX_PULSE_PEAK:g} "
                          "any channel can give (a passive one stays near 1): the channel data are not physical")
    if peak <= MIN_PULSE_PEAK:
        raise ConfigError(f"{what} is zero everywhere (largest magnitude {peak:.3g} V per V): the channel "
                          "transmits nothing (an open or all-zero S21)")
    return peak


def check_gain(ch, what: str | None = None) -> None:
    """Refuse a channel (a :class:`channels.Channel`) whose differential through ``|Sdd21|``
    is not finite or exceeds :data:`MAX_PULSE_PEAK` anywhere (40 dB of gain): its own pulse
    would be absurd even where a cascade with packages hides it (a huge ``S21`` divides out
    of the star product with its own reflections)."""
    h = np.abs(np.asarray(ch.sdd21))
    what = what or f"channel {ch.name!r}"
    if h.size == 0 or not np.all(np.isfinite(h)):
        raise ConfigError(f"{what}: its Sdd21 holds NaN or infinite values: the channel data are not physical")
    i = int(np.argmax(h))
    if h[i] > MAX_PULSE_PEAK:
        raise ConfigError(f"{what}: |Sdd21| reaches {h[i]:.3g} at {ch.f[i] / 1e9:.6g} GHz, a gain of "
                          f"{20 * np.log10(h[i]):.3g} dB, beyond the {20 * np.log10(MAX_PULSE_PEAK):g} dB any channel "
                          "can give (a passive one has at most 0 dB): the channel data are not physical")


def check_jitter(jitter, baud_hz: float) -> None:
    """Refuse a :class:`phy.Jitter` that moves an edge by more than :data:`MAX_JITTER_UI` UI
    at ``baud_hz`` (Bd), before any table is sized from it."""
    ui = 1.0 / float(baud_hz)
    peak = float(jitter.max_tx_s())
    if not peak <= MAX_JITTER_UI * ui:
        raise ConfigError(f"the jitter moves an edge by up to {peak:.3g} s = {peak / ui:.3g} UI at "
                          f"{baud_hz / 1e9:.6g} GBd (rj_rms_s to 8 sigma, dcd_s / 2, sj_amplitude_s, dd_s), beyond "
                          f"the {MAX_JITTER_UI:g} UI the engines model: give seconds (rj_rms_s=1e-13 is 0.1 ps)")


def check_bytes(n_bytes: float, what: str) -> None:
    """Refuse an allocation of ``n_bytes`` beyond :data:`MAX_ARRAY_BYTES`, naming ``what``
    sizes it and the figure, before it is made."""
    if not n_bytes <= MAX_ARRAY_BYTES:  # NaN too
        raise ConfigError(f"{what} needs {_size(n_bytes)} of memory, beyond the {_size(MAX_ARRAY_BYTES)} "
                          "an engine allocates for one array")


def _size(n: float) -> str:
    if not np.isfinite(n):
        return "unbounded"
    for unit, k in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.3g} {unit}"
    return f"{n:.0f} B"
