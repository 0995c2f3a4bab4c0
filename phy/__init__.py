"""linkmodel ``phy``: the SerDes simulator, link roll-up, topology and the command line.

The time-domain simulator (:func:`simulate`) takes a :class:`channels.Channel` or a
:class:`channels.PulseResponse` and a SerDes described by :class:`Transmitter`,
:class:`Receiver`, :class:`Noise`, :class:`Jitter` and :class:`Cdr`::

    import channels, phy
    ch = channels.library.get("chip_to_module")
    rx = phy.Receiver(bandwidth_hz=0.75 * 106.25e9, ctle=phy.Ctle.ieee_802_3ck(106.25e9, -10), dfe=phy.Dfe(8))
    r = phy.simulate(ch, 10**6, baud_hz=106.25e9, tx=phy.Transmitter(ffe=phy.TxFfe.ieee(pre=(-0.1,))),
                     rx=rx, noise=phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18), eye=True, seed=1)
    r.ber, r.eye.heights_v(), r.burst_model()

Modules: :mod:`phy.signals` (PRBS, PAM4 patterns, precoder), :mod:`phy.equalizers`,
:mod:`phy.noise`, :mod:`phy.pulse`, :mod:`phy.serdes`, :mod:`phy.timesim`, :mod:`phy.eye`,
:mod:`phy.stateye` (:func:`statistical_eye`), :mod:`phy.com` (:func:`channel_margin`, COM).
The link roll-up is :mod:`phy.link` (:func:`evaluate_link`, :func:`search_link`); the
topology stage arrives with its own issue.
"""

from fec import _numba_setup  # noqa: F401  (first: a cache folder for the kernels, read-only installs too)
from . import signals
from .com import ComParams, MarginResult, channel_margin
from .equalizers import Ctle, Dfe, RxFfe, TxFfe
from .errors import CdrLockWarning, ConfigError
from .eye import EyeDiagram, Waveform
from .link import (
    DEFAULT_TARGET_BER, Framing, LinkReport, LinkSearch, LinkSpec, OpticalClass, PathElement, Retry,
    Segment, SegmentReport, Serdes, evaluate_link, search_link,
)
from .noise import Jitter, Noise
from .serdes import Cdr, Receiver, Transmitter
from .stateye import StatEye, statistical_eye
from .timesim import Link, SimulationResult, simulate

__all__ = [
    "DEFAULT_TARGET_BER",
    "Framing",
    "LinkReport",
    "LinkSearch",
    "LinkSpec",
    "OpticalClass",
    "PathElement",
    "Retry",
    "Segment",
    "SegmentReport",
    "Serdes",
    "evaluate_link",
    "search_link",
    "Cdr",
    "CdrLockWarning",
    "ComParams",
    "ConfigError",
    "Ctle",
    "Dfe",
    "EyeDiagram",
    "Jitter",
    "Link",
    "MarginResult",
    "Noise",
    "Receiver",
    "RxFfe",
    "SimulationResult",
    "StatEye",
    "Transmitter",
    "TxFfe",
    "Waveform",
    "channel_margin",
    "signals",
    "simulate",
    "statistical_eye",
]
