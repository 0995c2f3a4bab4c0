"""linkmodel ``channels``: S-parameter channels from Touchstone files and from physics.

The first stage of the chain: differential channels as mixed-mode scikit-rf networks,
their loss, reflections, quality and crosstalk, and their pulse responses.

>>> import channels
>>> ch = channels.library.get("twinax_1m_26awg")
>>> pr = ch.pulse_response(106.25e9, samples_per_ui=32)

Units are SI throughout (Hz, s, m, ohm); names ending in ``_db`` are losses in dB.
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
    "tdecq",
    "quality",
    "read_network",
]
