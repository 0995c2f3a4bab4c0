"""``phy.topology``: scale-up domains built from evaluated links, memory tiers, decode over the
fabric, and exports to system models.

>>> from phy import topology as tp
>>> rack = tp.nvl72()                       # 72 GPUs, 18 NVLink switch ASICs, copper spine
>>> r = tp.rollup(rack)                     # links evaluated once per length bucket, then arrays
>>> r.accel_bandwidth_bps, r.latency_s["remote"], r.cables, r.failing

See :mod:`phy.topology.parts`, :mod:`phy.topology.fabric`, :mod:`phy.topology.builders`,
:mod:`phy.topology.rollup`, :mod:`phy.topology.decode` and :mod:`phy.topology.export`.
"""

from . import export
from .builders import nvl36x2, nvl72, scale_out, single_tier, two_tier
from .decode import DecodeResult, Model, decode, latency_sweep, over_fabric
from .fabric import RACK_UNIT_M, SwitchTier, Topology
from .parts import Accelerator, LinkClass, MemoryTier, SwitchAsic
from .rollup import TopologyReport, collective_time_s, rollup

__all__ = [
    "RACK_UNIT_M",
    "Accelerator",
    "DecodeResult",
    "LinkClass",
    "MemoryTier",
    "Model",
    "SwitchAsic",
    "SwitchTier",
    "Topology",
    "TopologyReport",
    "collective_time_s",
    "decode",
    "export",
    "latency_sweep",
    "nvl36x2",
    "nvl72",
    "over_fabric",
    "rollup",
    "scale_out",
    "single_tier",
    "two_tier",
]
