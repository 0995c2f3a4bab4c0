"""``phy.latency``: latency from the wire to the application, one layer at a time.

The layers, in the order a byte meets them, and where each is computed:

1. **PHY**: SerDes datapaths, FEC accumulation and decode (at the decoder's clock,
   :data:`fec.DECODER_CLOCK_HZ`), time of flight, optical modules
   (:mod:`phy.link.latency`, per link).
2. **Link layer**: flit accumulation, CRC check, go-back-N replay with its distribution,
   credit flow control (:mod:`phy.link.retry`, per link).
3. **Switch**: port-to-port latency and the output port's M/D/1 queueing at a load
   (:mod:`phy.latency.queueing`; :class:`phy.topology.SwitchAsic`).
4. **Endpoint**: the accelerator's link controller and transaction layer, packet headers,
   and the remote memory's own access latency (:class:`Endpoint`,
   :class:`phy.topology.MemoryTier`).
5. **Software and collectives**: kernel and protocol costs, per-algorithm steps, NCCL's
   own choice of algorithm, protocol and channels (:class:`Software`,
   :class:`Collectives`, :class:`NcclTuner`).

:func:`one_way` and :func:`round_trip` stack the first four for a route;
:class:`Collectives` builds the fifth on them. :class:`phy.topology.TopologyReport` keeps
them apart: ``phy_floor_s`` (PHY and switch ports only), ``one_way`` (a small transfer,
every layer), ``round_trip`` (a remote read) and ``collectives``.

>>> from phy import topology as tp
>>> r = tp.rollup(tp.nvl72())
>>> print(r.one_way["remote"].table())
>>> r.collectives.time("all_reduce", 8, 72).time_s

Public API
----------
The names in ``__all__``, reached as ``phy.latency.NAME`` (``phy.latency`` loads on first
use after ``import phy``): the stack (:func:`one_way`, :func:`round_trip`,
:class:`LatencyStack`, :func:`bytes_in_flight`), its parts (:class:`Endpoint`,
:class:`Software`), the switch's queueing (:func:`md1_wait`, :func:`simulate_md1`,
:class:`QueueWait`) and the collectives (:class:`Collectives`, :class:`NcclTuner`,
:func:`collective_time_s`, :func:`fit_software`).

Public namespaces
-----------------
None.

Private modules
---------------
``collectives``, ``nccl``, ``parts``, ``queueing``, ``stack`` and ``measured`` (the public
measurements the collectives are judged on): they hold what is re-exported here.
Importing them directly still works but is not the interface.
"""

from .collectives import (
    ALGORITHMS,
    PROTOCOLS,
    Collectives,
    CollectiveTime,
    collective_time_s,
    fit_software,
)
from .nccl import NcclTuner
from .parts import GPU_L2_HIT_S, Endpoint, Software
from .queueing import QueueWait, md1_wait, simulate_md1
from .stack import LAYERS, QUANTILES, LatencyStack, bytes_in_flight, one_way, round_trip

__all__ = [
    "ALGORITHMS",
    "GPU_L2_HIT_S",
    "LAYERS",
    "PROTOCOLS",
    "QUANTILES",
    "CollectiveTime",
    "Collectives",
    "Endpoint",
    "LatencyStack",
    "NcclTuner",
    "QueueWait",
    "Software",
    "bytes_in_flight",
    "collective_time_s",
    "fit_software",
    "md1_wait",
    "one_way",
    "round_trip",
    "simulate_md1",
]
