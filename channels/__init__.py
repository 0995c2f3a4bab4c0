"""linkmodel ``channels``: S-parameter channels from Touchstone files and from physics.

The first stage of the chain: differential channels as mixed-mode scikit-rf networks,
their loss, reflections, quality and crosstalk, and their pulse responses.

>>> import channels
>>> ch = channels.library.get("twinax_1m_26awg")
>>> pr = ch.pulse_response(106.25e9, samples_per_ui=32)

Units are SI throughout (Hz, s, m, ohm); names ending in ``_db`` are losses in dB.

Public API
----------
The names in ``__all__`` that are not modules, reached as ``channels.NAME``: reading and
loading (:func:`load`, :func:`read_network`), :class:`Channel` and :func:`cascade`, port
order (:class:`PortOrder`, :data:`PORT_ORDERS`, :func:`detect_port_order`), responses
(:class:`PulseResponse`, :class:`StepResponse`), figures (:class:`ILDResult`,
:class:`QualityReport`, :class:`GridInfo`) and the errors and warnings
(:class:`ChannelError`, :class:`LinkmodelError`, :class:`ChannelQualityWarning`,
:class:`TouchstoneWarning`).

Public namespaces
-----------------
Submodules whose own ``__all__`` is public, reached as ``channels.SUB.NAME`` (or
``from channels import media``):

:mod:`channels.media`
    physics builders: lines, twinax, connectors, vias, packages, AC caps, terminations.
:mod:`channels.assembly`
    copper assemblies ball to ball (:func:`~channels.assembly.cable_channel`).
:mod:`channels.library`
    the named built-in channels (:func:`~channels.library.get`).
:mod:`channels.crosstalk`
    coupled-line NEXT/FEXT for synthesized channels.
:mod:`channels.icn`
    802.3's integrated crosstalk noise and the COM sheets' parameters.
:mod:`channels.optical`
    fibre, optical connectors and the IM/DD PAM link budget.
:mod:`channels.optical_parts`
    the optical link classes' spec-corner and typical parts.
:mod:`channels.feedback`
    the laser against its reflections (RIN, reflectance tolerance).
:mod:`channels.tdecq`
    802.3's TDECQ of a transmitter (:func:`channels.tdecq.tdecq`).
:mod:`channels.quality`
    IEEE 370 checks and passivity enforcement.
:mod:`channels.grid`
    frequency grids from a file's band to a uniform one from DC.
:mod:`channels.cascading`
    cascading and renormalising S-matrices on arrays.

Private modules
---------------
``channel`` (with ``channel_figures`` and ``channel_time``), ``touchstone``, ``ports``, ``response``,
``ild``, ``mixed_mode``, ``errors``, the line physics and parts behind :mod:`channels.media`
(``line_model``, ``lines``, ``discontinuities``) and every ``_name``: they hold what is re-exported above, or the machinery behind it.
Importing them directly still works but is not the interface.
"""

from . import (
    assembly,
    cascading,
    crosstalk,
    feedback,
    grid,
    icn,
    library,
    media,
    optical,
    optical_parts,
    quality,
    tdecq,
)
from _linkmodel import LinkmodelError

from .channel import Channel, ILDResult, cascade
from .errors import ChannelError, ChannelQualityWarning, TouchstoneWarning
from .grid import GridInfo
from .ports import PORT_ORDERS, PortOrder, detect_port_order
from .quality import QualityReport
from .response import PulseResponse, StepResponse
from .touchstone import load, read_network

__all__ = [
    "Channel",
    "ChannelError",
    "ChannelQualityWarning",
    "GridInfo",
    "ILDResult",
    "LinkmodelError",
    "PORT_ORDERS",
    "PortOrder",
    "PulseResponse",
    "QualityReport",
    "StepResponse",
    "TouchstoneWarning",
    "assembly",
    "cascade",
    "cascading",
    "crosstalk",
    "icn",
    "detect_port_order",
    "grid",
    "library",
    "load",
    "media",
    "feedback",
    "optical",
    "optical_parts",
    "tdecq",
    "quality",
    "read_network",
]
