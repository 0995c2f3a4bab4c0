"""linkmodel ``phy``: the SerDes, its three engines, the link roll-up, the topology and the
applications, one package per stage, the imports flowing one way:

* :mod:`phy.serdes`: what a SerDes is (signals, equalisers, noise and jitter, transmitter,
  receiver, clock recovery, the front end) and the prepared link
  (:func:`phy.serdes.prepare_link`), the one input of the engines;
* :mod:`phy.engines`: the time-domain simulator (:func:`simulate`), the statistical eye
  (:func:`statistical_eye`) and COM (:func:`channel_margin`, with the effective return
  loss :func:`effective_return_loss`);
* :mod:`phy.link`: the link roll-up (:func:`evaluate_link`, :func:`search_link`), its
  PHY and link-layer latency;
* :mod:`phy.latency`: the layers above the link (switch queueing, endpoints, software and
  collectives), stacked into a transfer's one way and a read's round trip;
* :mod:`phy.topology`: racks and domains built from those links, and decode over them;
* :mod:`phy.sweep` and :mod:`phy.cli`: batch sweeps and the ``linkmodel`` command (its
  TOML formats in ``docs/toml_reference.md``, rendered from the schemas by
  :mod:`phy.cli.reference`).

``phy.__version__`` is the installed distribution's version (``linkmodel --version``).

The time-domain simulator takes a :class:`channels.Channel` or a
:class:`channels.PulseResponse` and a SerDes described by :class:`Transmitter`,
:class:`Receiver`, :class:`Noise`, :class:`Jitter` and :class:`Cdr`::

    import channels, phy
    ch = channels.library.get("chip_to_module")
    rx = phy.Receiver(bandwidth_hz=0.75 * 106.25e9, ctle=phy.Ctle.ieee_802_3ck(106.25e9, -10), dfe=phy.Dfe(8))
    r = phy.simulate(ch, 10**6, baud_hz=106.25e9, tx=phy.Transmitter(ffe=phy.TxFfe.ieee(pre=(-0.1,))),
                     rx=rx, noise=phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18), eye=True, seed=1)
    r.ber, r.eye.heights_v(), r.burst_model()
"""

from fec import _numba_setup  # noqa: F401  (first: a cache folder for the kernels, read-only installs too)

from _linkmodel import LinkmodelError

from .engines import (
    ComParams, EyeDiagram, MarginResult, SimulationResult, StatEye, Waveform, channel_margin, simulate,
    statistical_eye,
)
from .engines.com import ErlParams, ErlResult, PackageCase, PackageLine, effective_return_loss
from .errors import CdrLockWarning, ConfigError
from .link import (
    DEFAULT_TARGET_BER, Framing, LinkReport, LinkSearch, LinkSpec, OpticalClass, PathElement, Retry,
    Segment, SegmentReport, Serdes, evaluate_link, search_link,
)
from .serdes import (
    Cdr, Ctle, Dfe, Impairments, Jitter, Noise, PreparedLink, Receiver, RxFfe, Transmitter, TxFfe, prepare_link,
    signals,
)

try:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _dist_version

    __version__: str = _dist_version("linkmodel")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
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
    "Impairments",
    "ComParams",
    "PackageCase",
    "PackageLine",
    "ConfigError",
    "LinkmodelError",
    "ErlParams",
    "ErlResult",
    "Ctle",
    "Dfe",
    "EyeDiagram",
    "Jitter",
    "PreparedLink",
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
    "effective_return_loss",
    "prepare_link",
    "signals",
    "simulate",
    "statistical_eye",
]

#: Subpackages reached as attributes of ``phy`` without importing them up front
#: (``phy.topology.nvl72()`` after a bare ``import phy``): the system layer, the layered
#: latency model and sweeps load only when first touched (PEP 562).
_LAZY_SUBPACKAGES = ("latency", "sweep", "topology")


def __getattr__(name: str):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBPACKAGES))
