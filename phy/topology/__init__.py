"""``phy.topology``: scale-up domains built from evaluated links, memory tiers, decode over the
fabric, and exports to system models.

>>> from phy import topology as tp
>>> rack = tp.nvl72()                       # 72 GPUs, 18 NVLink switch ASICs, copper spine
>>> r = tp.rollup(rack)                     # links evaluated once per length bucket, then arrays
>>> r.accel_bandwidth_bytes_per_s, r.cables, r.failing
>>> print(r.latency_table())                # PHY floor, one way, remote read, under load
>>> r.collective("all_reduce", 8).time_s    # every layer, the algorithm and protocol NCCL picks

See :mod:`phy.topology.parts`, :mod:`phy.topology.fabric`, :mod:`phy.topology.builders`,
:mod:`phy.topology.multirack`, :mod:`phy.topology.rollup`, :mod:`phy.topology.power` (every watt), :mod:`phy.topology.domain`
(the domain-size trade: each cable's class, the binding constraint, the largest domain),
:mod:`phy.topology.model`, :mod:`phy.topology.decode`, :mod:`phy.topology.balance` (balance the pipe, what
latency buys), :mod:`phy.topology.export`, :mod:`phy.topology.reliability` and
:mod:`phy.topology.fit_rates` (failure rates calibrated to public field data: Llama 3's network
interruptions, Alibaba HPN's ToR crashes).

Public API
----------
The names in ``__all__`` that are not modules, reached as ``phy.topology.NAME`` (usually
``from phy import topology as tp``; ``phy.topology`` loads on first use after
``import phy``): the parts (:class:`Accelerator`, :class:`SwitchAsic`,
:class:`LinkClass`, :class:`MemoryTier`), the builders (:func:`nvl72`, :func:`nvl36x2`,
:func:`hgx8`, :func:`scale_up_copper`, :func:`two_tier`, :func:`single_tier`,
:func:`scale_out`), the roll-up (:func:`rollup`, :class:`TopologyReport`,
:class:`FabricPower`), reliability (:func:`fabric_reliability`, :class:`FitRates`), the
domain trade (:func:`plan_domain`, :func:`largest_domain`, :class:`Layout`,
:func:`cross_rack_m`), decode (:class:`Model`, :class:`Runtime`, :func:`decode`,
:func:`over_fabric`, :func:`mfu_crossing`, :func:`balance_bandwidth`,
:func:`latency_value`).

Public namespaces
-----------------
:mod:`phy.topology.export`
    the files for ASTRA-sim, Calculon, GenZ, LLMCompass and ns-3 (``astra_sim_network``,
    ``calculon_network``, ``ns3_topology``, ...), and the ring they are configured for
    (``ALGORITHM``, ``PROTOCOL``, ``step_latency_s``).
:mod:`phy.topology.calibration`
    the decode runtime's coefficients fitted to public measurements (``fit()``) and the
    rows they are judged on.

Private modules
---------------
The other modules named above (and ``layout``, ``memory``, ``runtime``, ``candidates``,
``field_data``, ``wiring``, ``_aliases``):
they hold what is re-exported here. Importing them directly still works but is not the
interface.
"""

from . import calibration, export
from .builders import hgx8, nvl36x2, nvl72, scale_up_copper
from .multirack import cross_rack_m, scale_out, single_tier, two_tier
from .balance import (
    balance_bandwidth,
    latency_value,
    reader_bytes_in_flight,
    stream_bandwidth,
)
from .decode import (
    DecodeResult,
    Model,
    decode,
    latency_sweep,
    mfu_crossing,
    over_fabric,
)
from .domain import (
    DomainPlan,
    Layout,
    default_candidates,
    domain_steps,
    largest_domain,
    plan_domain,
)
from .fabric import RACK_UNIT_M, SwitchTier, Topology
from .parts import (
    DRAM_ACCESS_S,
    SRAM_ACCESS_S,
    Accelerator,
    LinkClass,
    MemoryTier,
    SwitchAsic,
)
from .power import FabricPower
from .reliability import (
    FitRates,
    ReliabilityReport,
    component_counts,
    fabric_reliability,
)
from .rollup import UTILISATIONS, TopologyReport, collective_time_s, rollup
from .runtime import Runtime

__all__ = [
    "DRAM_ACCESS_S",
    "SRAM_ACCESS_S",
    "RACK_UNIT_M",
    "Accelerator",
    "DecodeResult",
    "DomainPlan",
    "FabricPower",
    "FitRates",
    "Layout",
    "LinkClass",
    "MemoryTier",
    "ReliabilityReport",
    "Model",
    "Runtime",
    "SwitchAsic",
    "SwitchTier",
    "Topology",
    "TopologyReport",
    "UTILISATIONS",
    "collective_time_s",
    "cross_rack_m",
    "component_counts",
    "fabric_reliability",
    "balance_bandwidth",
    "decode",
    "default_candidates",
    "domain_steps",
    "largest_domain",
    "plan_domain",
    "latency_value",
    "mfu_crossing",
    "calibration",
    "reader_bytes_in_flight",
    "stream_bandwidth",
    "export",
    "hgx8",
    "latency_sweep",
    "nvl36x2",
    "nvl72",
    "over_fabric",
    "rollup",
    "scale_up_copper",
    "scale_out",
    "single_tier",
    "two_tier",
]
