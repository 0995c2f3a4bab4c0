"""Exports of a rolled-up topology to the inputs of system simulators, units stated, each
configured so that the tool's own collective arithmetic reproduces ours.

The formats and their units (../shared/REFERENCES.md, "System simulators' link inputs"):

* **ASTRA-sim** analytical network YAML: per dimension ``topology`` (``Ring``,
  ``FullyConnected``, ``Switch``), ``npus_count``, ``bandwidth`` in GB/s with
  **GB = 2^30 bytes** (astra-network-analytical ``common/NetworkFunction.cpp``
  ``bw_GBps_to_Bpns``), ``latency`` in ns per hop, read as a double (``Type.h``:
  ``Latency = double``; a ``Switch`` dimension counts two hops, accelerator to switch and
  switch to accelerator: ``Switch.cpp``). Its remote-memory JSON: ``memory-type``,
  ``num-nodes``, ``num-npus-per-node``, ``remote-mem-latency`` (ns), ``remote-mem-bw``
  (bytes per ns).
* **Calculon** ``networks[]``: ``bandwidth`` (GB/s, 10^9 bytes), ``efficiency``,
  ``size``, ``latency`` (s), ``ops`` per collective ``[scalar, offset]`` (the data moved
  is ``scalar x (n + offset) / n`` of the buffer: a ring all-reduce ``[2, -1]``, an
  in-switch one ``[1, 1]``).
* **GenZ** system entry (``Systems/system_configs.py``, read by
  ``GenZ/LLM_inference/utils.py`` ``get_inference_system`` through ``GenZ/unit.py``): ``Flops``
  (TFLOPS, 10^12), ``Memory_size`` (GB read as 1024 MB of 2^20 bytes: 2^30 bytes),
  ``Memory_BW`` and ``ICN`` (GB/s with **GB = 2^30 bytes**, its ``binary_dicts``),
  ``ICN_LL`` (us), ``real_values``.
* **LLMCompass** architecture file (``design_space_exploration/dse.py``
  ``template_to_system``): top-level ``device_count`` and ``interconnect``: one physical
  ``link`` (``bandwidth_per_direction_byte``, ``bandwidth_both_directions_byte`` in B/s,
  ``latency_second``, ``flit_size_byte``, ``header_size_byte``, ``max_payload_size_byte``),
  ``link_count_per_device`` and ``topology`` (``"FC"``, anything else a ring).
* **ns-3** style topology text (HPCC's ns-3): ``nodes switches links``, the switch ids,
  then one line per link ``src dst <rate>Gbps <delay>ns <loss>``: the delay a plain decimal
  (its ``Time`` parser takes no exponent), the last column a per-packet loss probability.
* Plain JSON: :meth:`TopologyReport.to_dict`.

Bandwidths are per accelerator and per direction: what the links carry, never scaled to
make a tool agree.

**The collective the tools compute.** GenZ, LLMCompass and ASTRA-sim (its ``ring``
implementation) run an all-reduce as a ring of ``2 (n-1)`` steps, Calculon as one latency
plus the bytes; none models NCCL's protocols or an in-switch reduction. The exports
therefore configure them for one named algorithm and protocol of ours (:data:`ALGORITHM`,
:data:`PROTOCOL`: NCCL's ring with its Simple protocol, the one whose bandwidth is the
links'), and their time is compared with ``TopologyReport.collective(kind, size,
algorithm=..., protocol=...)`` (``tests/test_export_tools.py``,
``benchmarks/validate_exports.py``, which also shows the gap to the algorithm our model
would pick).

**One per-step latency** (:func:`step_latency_s`). A tool that charges a latency per ring
step gets our ring's whole latency (kernel launch, every step's hops and poll: the
all-reduce's time less its bandwidth term) less the fixed cost the tool adds by itself
(GenZ's 5 us), divided by the steps the tool charges (``2 (n-1)``). GenZ's ``ICN_LL``,
LLMCompass's ``latency_second`` and ASTRA-sim's ``latency`` (that step over its hops) are
all this one figure; Calculon, charging one latency per collective, gets the whole.
ns-3 simulates packets, not collectives: its links carry a transfer's one way (PHY, link
layer, half of each switch, half of each endpoint's controllers on the accelerator's
links), so that an accelerator-switch-accelerator path adds up to :attr:`TopologyReport.one_way`.
"""

from __future__ import annotations

import json

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import Topology
from .rollup import TopologyReport

__all__ = [
    "ALGORITHM",
    "GENZ_FIXED_S",
    "GIB",
    "PROTOCOL",
    "astra_sim_network",
    "astra_sim_remote_memory",
    "calculon_network",
    "genz_icn",
    "genz_system",
    "llmcompass_link",
    "llmcompass_system",
    "ns3_topology",
    "step_latency_s",
    "to_json",
]

GIB = float(2**30)
#: The all-reduce algorithm and protocol of ours the ring-stepping tools are configured for.
ALGORITHM = "ring"
PROTOCOL = "simple"
#: GenZ's fixed start latency per collective (``GenZ/collective_times.py``, ``get_AR_time``,
#: ``get_AG_time``, ``get_A2A_time``: ``5e-6`` s; genz-llm 0.0.x).
GENZ_FIXED_S = 5e-6
#: The buffer (bytes) at which the bandwidth term is read off our model (Calculon's
#: efficiency and op scalars): large enough that the packet overhead has settled.
_LARGE = float(2**30)


def _report(r) -> TopologyReport:
    if not isinstance(r, TopologyReport):
        raise ConfigError(f"expected a TopologyReport (phy.topology.rollup), got {type(r).__name__}")
    return r


def _collectives(r: TopologyReport, path: str):
    if path not in r.one_way:
        raise ConfigError(f"no route {path!r} in the report; it has {', '.join(r.one_way)}")
    if path == "remote":
        return r.collectives
    return r.collectives.at_latency(r.one_way[path].total_s)


def step_latency_s(report: TopologyReport, *, p: int | None = None, steps: int | None = None,
                   fixed_s: float = 0.0, protocol: str = PROTOCOL, path: str = "remote") -> float:
    """The per-step latency every ring-stepping export carries (s).

    Our ring all-reduce's latency over ``p`` accelerators (default: all) on route ``path``
    with ``protocol`` (:meth:`phy.latency.Collectives.time`, its time less its bandwidth
    term: the kernel launch, every step's hops and poll), less ``fixed_s`` (the latency
    the tool adds by itself per collective), over ``steps`` (default ``2 (p-1)``, the
    ring's). Never below zero: when the tool's own fixed cost exceeds our whole latency,
    the tool overestimates by the excess.
    """
    r = _report(report)
    p = integer(p if p is not None else r.n_accelerators, "p", 2)
    steps = integer(steps if steps is not None else 2 * (p - 1), "steps", 1)
    fixed = number(fixed_s, "fixed_s", nonneg=True)
    lat = _collectives(r, path).time("all_reduce", 8.0, p, algorithm="ring", protocol=protocol).latency_s
    return max(0.0, (lat - fixed) / steps)


def astra_sim_network(report: TopologyReport, dims: list[tuple[str, int, str]] | None = None, *,
                      protocol: str = PROTOCOL) -> str:
    """ASTRA-sim's analytical network YAML.

    ``dims``: ``(topology, npus_count, path)`` per dimension, ``path`` naming the report's
    route the dimension runs over (default: one ``Switch`` dimension over all accelerators
    on the ``remote`` route). Each dimension's bandwidth is the accelerator's bandwidth per
    direction in GiB/s; its latency per hop is the per-step latency
    (:func:`step_latency_s` over the dimension's ``npus_count``) over the hops a ring step
    crosses in it (2 for ``Switch``, 1 otherwise), in ns. ASTRA-sim's ring all-reduce
    (``system/astraccl/native_collectives/collective_algorithm/Ring.cc``: ``2 (n-1)``
    sends of ``data / n``) over its congestion-unaware backend (``BasicTopology.cpp``
    ``compute_communication_delay``: ``hops x latency + bytes / bandwidth``) then takes our
    ring's time.
    """
    r = _report(report)
    dims = dims or [("Switch", r.n_accelerators, "remote")]
    topo, npus, bw, lat = [], [], [], []
    for kind, count, path in dims:
        if kind not in ("Ring", "FullyConnected", "Switch"):
            raise ConfigError(f"ASTRA-sim dimension topology must be Ring, FullyConnected or Switch, got {kind!r}")
        count = integer(count, "npus_count", 1)
        _collectives(r, path)
        hops = 2 if kind == "Switch" else 1
        topo.append(kind)
        npus.append(count)
        bw.append(r.accel_bandwidth_bytes_per_s / GIB)
        step = step_latency_s(r, p=count, protocol=protocol, path=path) if count > 1 else 0.0
        lat.append(round(step * 1e9 / hops, 3))

    def row(xs):
        return "[ " + ", ".join(x if isinstance(x, str) else repr(float(x)) if isinstance(x, float) else str(x)
                                for x in xs) + " ]"

    return (f"# {r.name}: linkmodel roll-up; bandwidth in GB/s (2^30 bytes) per NPU per direction, "
            f"latency in ns per hop: a {ALGORITHM} step's ({protocol} protocol) over its hops\n"
            f"topology: {row(topo)}\nnpus_count: {row(npus)}\nbandwidth: {row(bw)}\nlatency: {row(lat)}\n")


def astra_sim_remote_memory(report: TopologyReport, *, memory_type: str = "PER_NPU_MEMORY_EXPANSION",
                            num_nodes: int = 1, npus_per_node: int | None = None,
                            memory_latency_s: float | None = None) -> str:
    """ASTRA-sim's remote-memory JSON for weights over this fabric: latency a remote read's
    round trip on the farthest route (:attr:`TopologyReport.round_trip`, the memory's own
    access included; ``memory_latency_s`` replaces that access), in whole ns (ASTRA-sim's
    latencies are integers: rounded); bandwidth the accelerator's per direction (bytes per
    ns). ``PER_NPU_MEMORY_EXPANSION`` (default) gives every NPU its own port of that
    bandwidth; ``PER_NODE_MEMORY_EXPANSION`` would make the node's ``npus_per_node`` NPUs
    share one."""
    r = _report(report)
    d = {
        "memory-type": str(memory_type),
        "num-nodes": integer(num_nodes, "num_nodes", 1),
        "num-npus-per-node": integer(npus_per_node or r.n_accelerators, "npus_per_node", 1),
        "remote-mem-latency": int(round(_read_s(r, memory_latency_s) * 1e9)),
        "remote-mem-bw": r.accel_bandwidth_bytes_per_s / 1e9,
    }
    return json.dumps(d, indent=2)


def _read_s(r: TopologyReport, memory_latency_s) -> float:
    rt = r.round_trip["remote"] if "remote" in r.round_trip else next(iter(r.round_trip.values()))
    if memory_latency_s is None:
        return rt.total_s
    return rt.total_s - rt.layer_totals()["memory"] + number(memory_latency_s, "memory_latency_s", nonneg=True)


#: Calculon's op offset for the volume each of our all-reduce algorithms moves:
#: ``(n + offset) / n`` of the buffer, the scalar taking the rest.
_CALCULON_OFFSET = {"ring": -1, "two_shot": -1, "switch": 1, "tree": 0, "one_shot": 0}


def calculon_network(report: TopologyReport, efficiency: float | None = None, *, algorithm: str = ALGORITHM,
                     protocol: str = PROTOCOL) -> dict:
    """One entry of Calculon's ``networks`` list, for our all-reduce ``algorithm`` with
    ``protocol``.

    Calculon (``calculon/network.py``, ``Network.time``) charges ``latency + scalar x
    (n + offset) / n x size / (bandwidth x efficiency)`` once per collective: ``latency``
    is our all-reduce's whole latency with that algorithm (kernel, hops, polls);
    ``efficiency`` (default) the payload per byte of bandwidth of our ring (the packet
    headers, the protocol's flags), read off the model at 1 GiB; the all-reduce's
    ``[scalar, offset]`` the algorithm's volume (``ring`` ``[2, -1]``; ``switch``, an
    in-switch reduction, ``[1, 1]`` over the switch's reduction efficiency; others by the
    same reading), so its time is ours at every size. A given ``efficiency`` is taken as
    meant and the ops keep their nominal scalars. Reduce-scatter and all-gather move
    ``(n-1)/n`` of the buffer at the same latency (Calculon has one per network, so these
    overestimate a small one's). ``must_be_filled`` and ``processor_usage`` are Calculon's
    other fields (as in its example systems), False and 0.
    """
    r = _report(report)
    n = r.n_accelerators
    if algorithm not in _CALCULON_OFFSET:
        raise ConfigError(f"Calculon export: algorithm one of {', '.join(_CALCULON_OFFSET)}, got {algorithm!r}")
    B = r.accel_bandwidth_bytes_per_s
    small = r.collective("all_reduce", 8.0, algorithm=algorithm, protocol=protocol)
    offset = _CALCULON_OFFSET[algorithm]
    nominal = {"ring": 2.0, "two_shot": 2.0, "switch": 1.0, "tree": 2.0, "one_shot": float(n - 1)}[algorithm]
    if efficiency is None:
        ring = r.collective("all_reduce", _LARGE, algorithm="ring", protocol=protocol)
        eff = 2 * (n - 1) / n * _LARGE / (B * (ring.time_s - ring.latency_s))
        large = r.collective("all_reduce", _LARGE, algorithm=algorithm, protocol=protocol)
        scalar = (large.time_s - large.latency_s) * B * eff / ((n + offset) / n * _LARGE)
        eff = min(1.0, eff)
    else:
        eff = number(efficiency, "efficiency", positive=True, hi=1.0)
        scalar = nominal
    return {
        "bandwidth": B / 1e9,
        "efficiency": eff,
        "size": n,
        "latency": small.latency_s,
        "ops": {"p2p": [1.0, None], "reduce_scatter": [1.0, -1], "all_gather": [1.0, -1],
                "all_reduce": [float(f"{scalar:.9g}"), offset]},
        "must_be_filled": False,
        "processor_usage": 0.0,
    }


def genz_icn(report: TopologyReport, *, protocol: str = PROTOCOL) -> dict:
    """GenZ's interconnect: ``ICN`` per direction in its GB/s of 2^30 bytes (900 GB/s is
    838.19) and ``ICN_LL`` (us), the latency GenZ charges per ring step
    (``GenZ/collective_times.py`` ``get_AR_time``: ``5 us + 2 (N-1) ICN_LL + 2 (N-1)/N
    bytes / ICN``): :func:`step_latency_s` with GenZ's 5 us taken out, so that its
    all-reduce over the whole domain is our ring's (``protocol``) at every size, less the
    packet headers GenZ does not count (6 % on NVLink's 16 bytes per 256)."""
    r = _report(report)
    return {"ICN": r.accel_bandwidth_bytes_per_s / GIB,
            "ICN_LL": step_latency_s(r, fixed_s=GENZ_FIXED_S, protocol=protocol) * 1e6}


def genz_system(report: TopologyReport, precision: str = "bf16", *, protocol: str = PROTOCOL) -> dict:
    """A complete GenZ system entry for one accelerator of this fabric: ``Flops`` (dense
    TFLOPS at ``precision``, GenZ's ``bf16`` reference: its ``compute_multiplier`` scales
    other precisions), ``Memory_size`` (2^30 bytes), ``Memory_BW`` (2^30 B/s), the
    interconnect of :func:`genz_icn` and ``real_values`` (the flag ``get_inference_system``
    reads the values under). Hand it to ``get_inference_system`` as it is."""
    r = _report(report)
    acc = r.accelerator
    return {"Flops": acc.flops_at(precision) / 1e12, "Memory_size": acc.memory.capacity_bytes / GIB,
            "Memory_BW": acc.memory.bandwidth_bytes_per_s / GIB, **genz_icn(r, protocol=protocol),
            "real_values": True}


def llmcompass_link(report: TopologyReport, *, flit_size_byte: int | None = None, header_size_byte: int | None = None,
                    max_payload_size_byte: int | None = None, topology: str | None = None,
                    protocol: str = PROTOCOL) -> dict:
    """The ``interconnect`` block of an LLMCompass architecture file, as its
    ``design_space_exploration/dse.py`` ``template_to_system`` reads it: one physical
    ``link`` (B/s, s: the accelerator's bandwidth over its
    :attr:`TopologyReport.links_per_accelerator` links), ``link_count_per_device`` and
    ``topology``.

    ``topology`` defaults to ``"RING"`` for a switched fabric (every accelerator reaches
    the others through the switches at its whole bandwidth, which LLMCompass's ring
    formula charges: ``software_model/communication_primitives.py``
    ``AllReduceMultiPCB.simulate``, ``2 (n-1)`` steps of ``link_latency + bytes / (link x
    link_count_per_device)``) and ``"FC"`` for a fabric without switches (its full mesh
    divides the device's links among the ``n-1`` others). ``latency_second`` is
    :func:`step_latency_s` (for ``"FC"``: our ring's latency over FC's ``n-1`` steps). The
    packet format is the endpoint's (NVLink: a 16-byte header per 256-byte payload,
    :class:`phy.latency.Endpoint`), the flit the header's size so that LLMCompass's
    rounding of the header to whole flits leaves it as it is.
    """
    r = _report(report)
    n = r.n_accelerators
    ep = r.collectives.endpoint
    h = integer(ep.response_header_bytes if header_size_byte is None else header_size_byte, "header_size_byte", 0)
    f = integer(flit_size_byte if flit_size_byte is not None else max(h, 1), "flit_size_byte", 1)
    pay = integer(ep.max_payload_bytes if max_payload_size_byte is None else max_payload_size_byte,
                  "max_payload_size_byte", 1)
    switched = sum(r.n_switches.values()) > 0
    topo = ("RING" if switched else "FC") if topology is None else str(topology)
    links = max(1, int(r.links_per_accelerator))
    per = r.accel_bandwidth_bytes_per_s / links
    if n < 2:
        lat = 0.0
    elif topo == "FC":
        lat = step_latency_s(r, steps=n - 1, protocol=protocol)
    else:
        lat = step_latency_s(r, protocol=protocol)
    return {
        "link": {
            "bandwidth_per_direction_byte": per,
            "bandwidth_both_directions_byte": 2 * per,
            "latency_second": lat,
            "flit_size_byte": f,
            "header_size_byte": h,
            "max_payload_size_byte": pay,
        },
        "link_count_per_device": links,
        "topology": topo,
    }


def llmcompass_system(report: TopologyReport, **kw) -> dict:
    """The top-level keys an LLMCompass architecture file takes from this fabric:
    ``device_count`` (the accelerators) and ``interconnect`` (:func:`llmcompass_link`,
    keywords passed on). Merge it into an architecture file (its ``device`` block is the
    accelerator's micro-architecture, not modelled here): ``arch.update(...)``."""
    r = _report(report)
    return {"device_count": r.n_accelerators, "interconnect": llmcompass_link(r, **kw)}


def ns3_topology(topology: Topology, report: TopologyReport, packet_bytes: int = 1000) -> str:
    """ns-3 style topology text (HPCC's ns-3, ``simulation/scratch/third.cc`` reads ``src
    dst rate delay error_rate`` per link): every link with its usable rate (Gb/s), its
    one-way latency (PHY and link layer) with half the port-to-port latency of each switch
    at its ends and half of the endpoint's controllers (transmit and receive,
    :class:`phy.latency.Endpoint`) on each accelerator's link (ns-3's switch and host add
    none, so accelerator to switch to accelerator adds up to the one-way transfer), in ns
    as a plain decimal, and the probability that a ``packet_bytes`` packet is lost (``1 -
    (1 - BER)^(8 packet_bytes)``, the link's delivered BER), which is what HPCC reads in
    that column."""
    if not isinstance(topology, Topology):
        raise ConfigError(f"expected a Topology, got {type(topology).__name__}")
    r = _report(report)
    n = topology.n_accelerators
    pb = integer(packet_bytes, "packet_bytes", 1, 2**20)
    ep = r.collectives.endpoint
    half = np.zeros(topology.n_nodes)  # half of each node's own latency (s): switches, endpoints
    half[:n] = (ep.tx_s + ep.rx_s) / 2
    off = n
    for t in topology.tiers:
        half[off:off + t.count] = t.asic.latency_s / 2
        off += t.count
    lines = [f"{topology.n_nodes} {topology.n_nodes - n} {topology.n_links}",
             " ".join(str(i) for i in range(n, topology.n_nodes))]
    rate = np.zeros(topology.n_links)
    delay = np.zeros(topology.n_links)
    ber = np.zeros(topology.n_links)
    for c, cls in enumerate(topology.classes):
        sel = np.flatnonzero(topology.link_class == c)
        for i in sel:
            rep = cls.report(float(topology.length_m[i]))
            rate[i] = rep.usable_bandwidth_bps / 1e9
            delay[i] = (rep.latency_s + half[topology.src[i]] + half[topology.dst[i]]) * 1e9
            ber[i] = -np.expm1(8 * pb * np.log1p(-min(rep.post_fec_ber, 0.5)))
    for s, d, g, t, e in zip(topology.src, topology.dst, rate, delay, ber):
        lines.append(f"{s} {d} {g:.3f}Gbps {t:.3f}ns {e:.6g}")
    return "\n".join(lines) + "\n"


def to_json(report: TopologyReport) -> str:
    return json.dumps(_report(report).to_dict(), indent=2)
