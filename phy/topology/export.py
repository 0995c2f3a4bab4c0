"""Exports of a rolled-up topology to the inputs of system simulators, units stated.

The formats and their units (../shared/REFERENCES.md, "System simulators' link inputs"):

* **ASTRA-sim** analytical network YAML: per dimension ``topology`` (``Ring``,
  ``FullyConnected``, ``Switch``), ``npus_count``, ``bandwidth`` in GB/s with
  **GB = 2^30 bytes**, ``latency`` in ns per hop (a ``Switch`` dimension counts two hops:
  accelerator to switch and switch to accelerator). Its remote-memory JSON:
  ``memory-type``, ``num-nodes``, ``num-npus-per-node``, ``remote-mem-latency`` (ns),
  ``remote-mem-bw`` (bytes per ns).
* **Calculon** ``networks[]``: ``bandwidth`` (GB/s, 10^9 bytes), ``efficiency``,
  ``size``, ``latency`` (s), ``ops`` per collective ``[scalar, offset]`` (the data moved
  is ``scalar x (n + offset) / n`` of the buffer: all-reduce ``[2, -1]``).
* **GenZ** system entry (``Systems/system_configs.py``, read by
  ``GenZ/LLM_inference/utils.py`` ``get_inference_system`` through ``GenZ/unit.py``): ``Flops``
  (TFLOPS, 10^12), ``Memory_size`` (GB read as 1024 MB of 2^20 bytes: 2^30 bytes),
  ``Memory_BW`` and ``ICN`` (GB/s with **GB = 2^30 bytes**, its ``binary_dicts``),
  ``ICN_LL`` (us), ``real_values``.
* **LLMCompass**: one physical link (``bandwidth_per_direction_byte``,
  ``bandwidth_both_directions_byte`` in B/s, ``latency_second``, ``flit_size_byte``,
  ``header_size_byte``, ``max_payload_size_byte``), the device's links
  ``link_count_per_device`` (its bandwidth is the link's times that) and a ``topology``.
* **ns-3** style topology text (HPCC's ns-3): ``nodes switches links``, the switch ids,
  then one line per link ``src dst <rate>Gbps <delay>ns <loss>``: the delay a plain decimal
  (its ``Time`` parser takes no exponent) with half of each switch end's port-to-port
  latency in it (ns-3's switch adds none), the last column a per-packet loss probability.
* Plain JSON: :meth:`TopologyReport.to_dict`.

Bandwidths are per accelerator and per direction. Each export carries the latency its
consumer means, from the layered model (:mod:`phy.latency`): ASTRA-sim a network hop (the
one-way transfer of every layer below software, split over the route's hops; its system
layer adds its own software costs), its remote memory a read's round trip; Calculon a
collective's latency, charged once per collective; GenZ a ring step (a hop and the
receiver's poll; GenZ adds its own fixed 5 us per all-reduce); LLMCompass a transfer's
one way.
"""

from __future__ import annotations

import json

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import Topology
from .rollup import TopologyReport

__all__ = [
    "GIB",
    "astra_sim_network",
    "astra_sim_remote_memory",
    "calculon_network",
    "genz_icn",
    "genz_system",
    "llmcompass_link",
    "ns3_topology",
    "to_json",
]

GIB = float(2**30)


def _report(r) -> TopologyReport:
    if not isinstance(r, TopologyReport):
        raise ConfigError(f"expected a TopologyReport (phy.topology.rollup), got {type(r).__name__}")
    return r


def astra_sim_network(report: TopologyReport, dims: list[tuple[str, int, str]] | None = None) -> str:
    """ASTRA-sim's analytical network YAML.

    ``dims``: ``(topology, npus_count, path)`` per dimension, ``path`` naming the report's
    route whose latency the dimension carries (default: one ``Switch`` dimension over all
    accelerators on the ``remote`` route). Each dimension's bandwidth is the accelerator's
    bandwidth per direction in GiB/s; its latency per hop is the route's one-way transfer
    (every layer up to the endpoints, :attr:`TopologyReport.one_way`) divided by its hops
    (2 for ``Switch``, 1 otherwise), rounded to whole ns (ASTRA-sim reads integers).
    """
    r = _report(report)
    dims = dims or [("Switch", r.n_accelerators, "remote")]
    topo, npus, bw, lat = [], [], [], []
    for kind, count, path in dims:
        if kind not in ("Ring", "FullyConnected", "Switch"):
            raise ConfigError(f"ASTRA-sim dimension topology must be Ring, FullyConnected or Switch, got {kind!r}")
        integer(count, "npus_count", 1)
        if path not in r.one_way:
            raise ConfigError(f"no route {path!r} in the report; it has {', '.join(r.one_way)}")
        hops = 2 if kind == "Switch" else 1
        topo.append(kind)
        npus.append(int(count))
        bw.append(r.accel_bandwidth_bytes_per_s / GIB)
        lat.append(int(round(r.one_way[path].total_s * 1e9 / hops)))

    def row(xs):
        return "[ " + ", ".join(x if isinstance(x, str) else repr(float(x)) if isinstance(x, float) else str(x)
                                for x in xs) + " ]"

    return (f"# {r.name}: linkmodel roll-up; bandwidth in GB/s (2^30 bytes) per NPU per direction, "
            f"latency in whole ns per hop (rounded)\n"
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


def calculon_network(report: TopologyReport, efficiency: float = 1.0) -> dict:
    """One entry of Calculon's ``networks`` list. Calculon charges ``latency`` once per
    collective (its ``network.py``: ``latency + size / (bandwidth x efficiency)``): it is
    the latency part of a small all-reduce over the whole domain (the model's fastest
    algorithm, every layer and software). ``must_be_filled`` and ``processor_usage`` are
    Calculon's other fields (as in its example systems), set to False and 0."""
    r = _report(report)
    return {
        "bandwidth": r.accel_bandwidth_bytes_per_s / 1e9,
        "efficiency": number(efficiency, "efficiency", positive=True, hi=1.0),
        "size": r.n_accelerators,
        "latency": r.collective("all_reduce", 8.0).latency_s,
        "ops": {"p2p": [1.0, None], "reduce_scatter": [1.0, -1], "all_gather": [1.0, -1], "all_reduce": [2.0, -1]},
        "must_be_filled": False,
        "processor_usage": 0.0,
    }


def genz_icn(report: TopologyReport) -> dict:
    """GenZ's interconnect: ``ICN`` per direction in its GB/s of 2^30 bytes (900 GB/s is
    838.19) and ``ICN_LL`` (us), the latency GenZ charges per ring step
    (``GenZ/collective_times.py``: ``5 us + 2 (N-1) ICN_LL + ...`` per all-reduce): one hop
    and the receiver's poll (:attr:`TopologyReport.alpha_s`)."""
    r = _report(report)
    return {"ICN": r.accel_bandwidth_bytes_per_s / GIB, "ICN_LL": r.alpha_s * 1e6}


def genz_system(report: TopologyReport, precision: str = "bf16") -> dict:
    """A complete GenZ system entry for one accelerator of this fabric: ``Flops`` (dense
    TFLOPS at ``precision``, GenZ's ``bf16`` reference: its ``compute_multiplier`` scales
    other precisions), ``Memory_size`` (2^30 bytes), ``Memory_BW`` (2^30 B/s), the
    interconnect of :func:`genz_icn` and ``real_values`` (the flag ``get_inference_system`` reads
    the values under)."""
    r = _report(report)
    acc = r.accelerator
    return {"Flops": acc.flops_at(precision) / 1e12, "Memory_size": acc.memory.capacity_bytes / GIB,
            "Memory_BW": acc.memory.bandwidth_bytes_per_s / GIB, **genz_icn(r), "real_values": True}


def llmcompass_link(report: TopologyReport, *, flit_size_byte: int = 640, header_size_byte: int = 0,
                    max_payload_size_byte: int | None = None, topology: str = "FC") -> dict:
    """The ``interconnect`` block of an LLMCompass architecture file, as its
    ``design_space_exploration/dse.py`` ``read_architecture_template`` reads it: one
    physical ``link`` (bytes, seconds: an accelerator's bandwidth over its
    :attr:`TopologyReport.links_per_accelerator` links; the latency a transfer's one way on
    the farthest route), ``link_count_per_device`` and ``topology`` (``"FC"``; anything else
    is read as a ring). Its all-reduce (``software_model/communication_primitives.py``)
    gives each of the other ``device_count - 1`` devices ``link x link_count_per_device /
    (device_count - 1)``, so a device's total is the accelerator's bandwidth, as a
    single-switch domain's. Flit sizes default to UALink's 640-byte flit (REFERENCES.md)
    with the header you give (LLMCompass rounds the header up to whole flits)."""
    r = _report(report)
    f = integer(flit_size_byte, "flit_size_byte", 1)
    h = integer(header_size_byte, "header_size_byte", 0, f - 1)
    links = max(1, int(r.links_per_accelerator))
    per = r.accel_bandwidth_bytes_per_s / links
    return {
        "link": {
            "bandwidth_per_direction_byte": per,
            "bandwidth_both_directions_byte": 2 * per,
            "latency_second": r.one_way["remote"].total_s if "remote" in r.one_way else r.alpha_s,
            "flit_size_byte": f,
            "header_size_byte": h,
            "max_payload_size_byte": integer(max_payload_size_byte or f - h, "max_payload_size_byte", 1, f - h),
        },
        "link_count_per_device": links,
        "topology": str(topology),
    }


def ns3_topology(topology: Topology, report: TopologyReport, packet_bytes: int = 1000) -> str:
    """ns-3 style topology text (HPCC's ns-3): every link with its usable rate (Gb/s), its
    one-way latency with half the port-to-port latency of each switch at its ends (ns-3's
    switch adds none, so accelerator to switch to accelerator carries the switch once), in
    ns as a plain decimal, and the probability that a ``packet_bytes`` packet is lost
    (``1 - (1 - BER)^(8 packet_bytes)``, the link's delivered BER), which is what HPCC
    reads in that column."""
    if not isinstance(topology, Topology):
        raise ConfigError(f"expected a Topology, got {type(topology).__name__}")
    _report(report)
    n = topology.n_accelerators
    pb = integer(packet_bytes, "packet_bytes", 1, 2**20)
    half = np.zeros(topology.n_nodes)  # half of each switch's port-to-port latency (s)
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
