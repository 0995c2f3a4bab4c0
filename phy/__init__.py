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
  :mod:`phy.config.reference`).

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

Public API
----------
The names in ``__all__``, reached as ``phy.NAME``: the SerDes parts (:class:`Transmitter`,
:class:`Receiver`, :class:`TxFfe`, :class:`Ctle`, :class:`RxFfe`, :class:`Dfe`,
:class:`Noise`, :class:`Jitter`, :class:`Cdr`, :class:`Impairments`, :func:`prepare_link`,
:class:`PreparedLink`, the :mod:`phy.signals` namespace), the engines and their results
(:func:`simulate`, :func:`statistical_eye`, :func:`channel_margin`,
:func:`effective_return_loss`, :class:`ComParams`, :class:`PackageCase`,
:class:`PackageLine`, :class:`ErlParams`, ...), the link roll-up (:class:`LinkSpec`,
:func:`evaluate_link`, :func:`search_link`, :class:`Serdes`, :class:`OpticalClass`,
:class:`PathElement`, :class:`Framing`, :class:`Retry`, ...), the errors
(:class:`ConfigError`, :class:`LinkmodelError`, :class:`CdrLockWarning`) and
``__version__``.

Public namespaces
-----------------
Subpackages, each with its own ``__all__`` and a "Public API" section of its own:

:mod:`phy.serdes`
    every SerDes part, and :mod:`phy.serdes.signals`.
:mod:`phy.engines`
    the three engines and their results.
:mod:`phy.link`
    the roll-up, and what only it offers: :func:`phy.link.class_table` (which optical
    classes close), :func:`phy.link.segments` (a link's equalised segments).
:mod:`phy.latency`
    the layers above the link (loaded on first use: ``phy.latency.one_way`` after a bare
    ``import phy``).
:mod:`phy.topology`
    racks, domains, decode and exports (loaded on first use: ``phy.topology.nvl72()``
    after a bare ``import phy``).
:mod:`phy.ami`
    IBIS-AMI models: ``.ibs`` and ``.ami`` files read, a vendor's library run in a
    process of its own, :class:`phy.ami.AmiModel` for ``Transmitter(ami=...)`` and
    ``Receiver(ami=...)`` (loaded on first use).
:mod:`phy.config`
    the input layer: link, sweep and rack files read and checked, a file or a dict to a
    :class:`phy.LinkSpec` (loaded on first use).
:mod:`phy.sweep`
    batch sweeps (loaded on first use).
:mod:`phy.signals`
    PRBS, Gray PAM4, the precoder, PRBS13Q and SSPRQ (the same module as
    :mod:`phy.serdes.signals`).

``phy.serdes``, ``phy.engines`` and ``phy.link`` load with ``import phy``;
``phy.ami``, ``phy.config``, ``phy.latency``, ``phy.topology`` and ``phy.sweep`` are attributes of ``phy`` that load
when first touched (PEP 562), so ``import phy`` stays light.

Private modules
---------------
``errors``, ``warmup`` and every ``_name``; :mod:`phy.cli` is the ``linkmodel`` command
(``linkmodel``; ``docs/toml_reference.md`` is rendered by :mod:`phy.config.reference`), not a library
interface. Importing them directly still works but is not the interface.
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
_LAZY_SUBPACKAGES = ("ami", "config", "latency", "sweep", "topology")


def __getattr__(name: str):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBPACKAGES))
