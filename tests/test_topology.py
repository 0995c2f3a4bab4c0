"""phy.topology: NVL72 facts, other builders, collectives, decode over the fabric, exports."""

from __future__ import annotations

import itertools
import json
import math
import re
import tracemalloc

from dataclasses import replace

import numpy as np
import pytest
import yaml

import phy.link
from phy import ConfigError
from phy import topology as tp
from phy.topology import export
from phy.topology.fabric import estimate_bytes


@pytest.fixture(scope="module")
def nvl72():
    topo = tp.nvl72()
    return topo, tp.rollup(topo)


@pytest.fixture(scope="module")
def fast_copper(nvl72):
    """The NVL72 rack's 1 m copper link, at every length (time of flight 4.1 ns/m)."""
    topo, _ = nvl72
    return tp.LinkClass.from_report("copper_fixed", topo.classes[0].report(1.0), 4.1e-9)


@pytest.fixture(scope="module")
def optics():
    return tp.LinkClass.optical("dsp", lanes=4)


# ----------------------------------------------------------------------------- NVL72
def test_nvl72_facts_exactly(nvl72):
    topo, r = nvl72
    assert r.n_accelerators == 72
    assert r.n_switches == {"nvswitch": 18}
    assert topo.tiers[0].asic.radix == 72
    # every ASIC has one port per GPU, all 72 in use
    ports = np.bincount(topo.dst - 72, minlength=18)
    assert np.all(ports == 72)
    assert r.accel_bandwidth_bytes_per_s == pytest.approx(900e9, rel=1e-12)          # per GPU per direction
    assert 2 * r.accel_bandwidth_bytes_per_s == pytest.approx(1.8e12, rel=1e-12)     # both ways
    assert r.aggregate_bandwidth_bytes_per_s == pytest.approx(129.6e12, rel=1e-12)
    assert r.cables == 5184                                                  # copper differential pairs
    assert r.bisection_bandwidth_bytes_per_s == pytest.approx(36 * 900e9, rel=1e-12)
    assert not r.failing


def test_nvl72_spine_length_is_about_two_miles(nvl72):
    _, r = nvl72
    miles = r.cable_length_m / 1609.344
    assert 1.5 < miles < 2.5
    c = r.cables_by_class["copper_26awg_HL_flyover"]
    assert 0.2 < c["min_length_m"] < c["max_length_m"] < 1.25


def test_nvl72_phy_floor_is_two_links_and_a_switch(nvl72):
    topo, r = nvl72
    lat = r.phy_floor_s["remote"]
    brk = r.phy_floor_breakdown_s["remote"]
    assert lat == pytest.approx(sum(brk.values()), rel=1e-12)
    assert brk["switch"] == pytest.approx(200e-9)
    # two links of the median length's bucket
    lengths = np.sort(topo.length_m)
    link = topo.classes[0].report(float(lengths[lengths.size // 2]))
    assert lat == pytest.approx(2 * link.latency_s + 200e-9, rel=1e-9)
    assert brk["fec_accumulation"] == pytest.approx(2 * 5440 / (2 * 212.5e9), rel=1e-12)
    assert brk["fec_decode"] == pytest.approx(2 * 37 / 350e6, rel=1e-12)  # a 350 MHz decoder, twice
    assert brk["crc_check"] == pytest.approx(2 * 2e-9)                    # the link layer's CRC, twice


def test_nvl72_one_way_and_read_stack_every_layer(nvl72):
    topo, r = nvl72
    ow, rt = r.one_way["remote"], r.round_trip["remote"]
    acc = r.accelerator
    t = ow.layer_totals()
    assert t["switch"] == pytest.approx(200e-9) and t["endpoint"] == pytest.approx(acc.endpoint.tx_s + acc.endpoint.rx_s)
    # the PHY floor is inside the one way: links and switch ports, and nothing above them
    assert t["phy"] + t["link"] + t["switch"] - ow.layers["link"]["serialization"] == pytest.approx(
        r.phy_floor_s["remote"], rel=1e-9)
    assert ow.total_s > r.phy_floor_s["remote"] + 100e-9
    # a read: request and response over the same route, and the remote HBM's access
    assert rt.layers["memory"]["access"] == pytest.approx(acc.memory.latency_s) and acc.memory.latency_s > 300e-9
    assert rt.total_s == pytest.approx(2 * ow.total_s + acc.memory.latency_s
                                       + rt.layers["link"]["serialization"] - 2 * ow.layers["link"]["serialization"],
                                       rel=1e-9)
    # under load the mean and tails grow with the switch's M/D/1 wait; unloaded there is no spread
    assert list(ow.quantiles_s.values()) == pytest.approx([ow.total_s] * 3, rel=1e-9)
    loads = r.loaded_s["remote"]
    assert list(loads) == [0.3, 0.7, 0.9]
    means = [loads[u]["mean"] for u in loads]
    tails = [loads[u]["p99.99"] for u in loads]
    assert ow.total_s < means[0] < means[1] < means[2] and tails[0] < tails[1] < tails[2]
    assert all(loads[u]["p50"] <= loads[u]["p99"] <= loads[u]["p99.99"] for u in loads)
    assert "one way" in r.latency_table() and "remote read" in r.latency_table()
    assert r.bytes_in_flight() == pytest.approx(900e9 * rt.total_s, rel=1e-12)            # Little's law
    assert r.bytes_in_flight(bandwidth_bytes_per_s=100e9) == pytest.approx(100e9 * rt.total_s, rel=1e-12)


def test_a_second_rollup_evaluates_no_link_and_asks_once_per_bucket(nvl72, monkeypatch):
    """Once its lengths are evaluated a roll-up is array arithmetic: no link evaluated again,
    and the class asked for one report per length bucket, not per link (its speed, a few
    milliseconds, is measured in benchmarks/bench_topology.py)."""
    topo, first = nvl72
    cls = topo.classes[0]
    cached = dict(cls._cache)

    def no_evaluation(spec):
        raise AssertionError("a link was evaluated again")

    monkeypatch.setattr(phy.link, "evaluate_link", no_evaluation)
    asked = []
    report = cls.report
    monkeypatch.setattr(cls, "report", lambda length_m: asked.append(length_m) or report(length_m))
    r = tp.rollup(topo)
    assert cls._cache == cached
    assert 0 < len(asked) <= len(cached) < 10 and topo.n_links == 1296
    assert r.cables == first.cables and r.phy_floor_s == first.phy_floor_s


# ----------------------------------------------------------------------------- other builders
def test_nvl36x2_counts(fast_copper):
    r = tp.rollup(tp.nvl36x2(fast_copper))
    assert r.n_accelerators == 72
    assert r.n_switches == {"nvswitch": 36}
    assert r.accel_bandwidth_bytes_per_s == pytest.approx(900e9)
    assert r.cables == 5184 + 18 * 36 * 2 * 2  # plus the cross-rack links between twin ASICs
    assert r.phy_floor_s["remote"] > r.phy_floor_s["local"] + 200e-9  # a second switch and a rack crossing
    assert r.one_way["remote"].total_s > r.one_way["local"].total_s + 200e-9


def test_two_tier_576(fast_copper, optics):
    topo = tp.two_tier(8, fast_copper, optics)
    r = tp.rollup(topo)
    assert r.n_accelerators == 576
    assert r.n_switches == {"l1": 8 * 36, "l2": 144}
    assert r.accel_bandwidth_bytes_per_s == pytest.approx(900e9)
    up = optics.report(float(topo.length_m[topo.level == 1].max())).usable_bandwidth_bps / 8
    assert r.bisection_bandwidth_bytes_per_s == pytest.approx(min(288 * 900e9, 288 * 36 * up / 2), rel=1e-9)
    # remote: copper, L1, optics, L2, optics, L1, copper
    assert r.phy_floor_breakdown_s["remote"]["switch"] == pytest.approx(600e-9)
    assert r.phy_floor_s["remote"] > r.phy_floor_s["local"]
    assert r.one_way["remote"].layer_totals()["switch"] == pytest.approx(600e-9)
    assert r.link_power_w > 0  # the optical tier costs power; passive copper does not


def test_oversubscription_halves_the_uplinks(fast_copper, optics):
    full = tp.two_tier(2, fast_copper, optics)
    over = tp.two_tier(2, fast_copper, optics, oversubscription=2.0)
    assert np.count_nonzero(over.level == 1) < np.count_nonzero(full.level == 1)


def test_scale_out_is_80_times_behind_hbm(optics):
    r = tp.rollup(tp.scale_out(72, optics))
    assert r.accel_bandwidth_bytes_per_s == pytest.approx(100e9, rel=1e-12)  # one 800 Gb/s NIC
    assert tp.Accelerator.gb200().memory.bandwidth_bytes_per_s / r.accel_bandwidth_bytes_per_s == pytest.approx(80.0)


def test_ten_thousand_accelerators_cost_per_bucket_not_per_link(optics, monkeypatch):
    """30,000 links roll up with one report per distinct length and within the memory the
    size limit assumes per link (the seconds are in benchmarks/bench_topology.py)."""
    nic = tp.LinkClass.from_report("nic", optics.report(10.0), 4.9e-9, "optical")
    topo = tp.scale_out(10_000, nic)
    asked = []
    report = nic.report
    monkeypatch.setattr(nic, "report", lambda length_m: asked.append(length_m) or report(length_m))
    tracemalloc.start()
    try:
        r = tp.rollup(topo)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(asked) == np.unique(np.round(topo.length_m, 9)).size < 100 < topo.n_links
    assert peak < estimate_bytes(topo.n_links, topo.n_nodes)
    assert r.n_accelerators == 10_000
    assert r.n_switches["core"] > 0 and len(r.n_switches) == 3
    assert r.bisection_bandwidth_bytes_per_s == pytest.approx(5_000 * 100e9, rel=1e-9)


def test_long_copper_cables_are_named_when_they_fail():
    lc = tp.LinkClass.copper_twinax(resolution_m=2.0, host="pcb")
    r = tp.rollup(tp.single_tier(64, lc, links_per_accel=2, accels_per_rack=8, overhead_m=3.0))
    assert r.failing
    # with 125 mm of host board at each end, 4 m of 26 AWG no longer closes at 212.5 Gb/s
    assert all(f["class"] == "copper_26awg_pcb" and f["length_m"] >= 4.0 for f in r.failing)
    assert {f["length_m"] for f in r.failing} >= {4.0, 6.0}
    assert any("closed" in x or "above the target" in x for f in r.failing for x in f["reasons"])
    assert r.accel_bandwidth_bytes_per_s < 2 * 400e9 / 8


# ----------------------------------------------------------------------------- collectives
def test_collective_formulas():
    S, p, a, B = 1e6, 72, 1e-6, 900e9
    assert tp.collective_time_s("ring", S, p, a, B) == pytest.approx(2 * 71 * a + 2 * 71 / 72 * S / B)
    assert tp.collective_time_s("tree", S, p, a, B) == pytest.approx(2 * 7 * (a + S / B))
    assert tp.collective_time_s("switch", S, p, a, B) == pytest.approx(a + S / B)
    assert tp.collective_time_s("all_to_all", S, p, a, B) == pytest.approx(a + 71 / 72 * S / B)
    assert tp.collective_time_s("ring", S, 1, a, B) == 0.0
    # small messages: latency-bound, the in-switch reduction wins; huge ones: the ring's
    # bandwidth term approaches the in-switch one's twice
    assert tp.collective_time_s("switch", 1e3, p, a, B) < tp.collective_time_s("ring", 1e3, p, a, B) / 50
    with pytest.raises(ConfigError, match="unknown collective"):
        tp.collective_time_s("butterfly", S, p, a, B)


def test_report_collectives_use_the_fabric(nvl72):
    _, r = nvl72
    col = r.collectives
    assert col.hop is r.one_way["remote"] and col.bandwidth_bytes_per_s == pytest.approx(900e9)
    assert r.alpha_s == pytest.approx(r.one_way["remote"].total_s + r.accelerator.software.poll_s)
    ring = r.collective("all_reduce", 1e9, algorithm="ring", protocol="simple")
    assert ring.steps == 142 and ring.hops == 4 * 142
    assert r.collective_s("all_reduce", 1e9, algorithm="ring", protocol="simple") == ring.time_s


# ----------------------------------------------------------------------------- decode
def test_batch1_fp8_decode_from_hbm_and_over_the_fabric(nvl72):
    _, r = nvl72
    m70 = tp.Model.dense("70b", 70e9, 80)
    m405 = tp.Model.dense("405b", 405e9, 126)
    ideal = tp.Runtime.ideal()                                         # the roofline REFERENCES states
    local = tp.over_fabric(r, m70, source="local", runtime=ideal)
    remote = tp.over_fabric(r, m70, source="remote", runtime=ideal)
    assert local.tokens_per_s == pytest.approx(114.3, abs=0.1)           # REFERENCES: about 114
    assert remote.tokens_per_s == pytest.approx(12.86, abs=0.01)        # about 13 over 900 GB/s
    assert not remote.balanced and remote.effective_bandwidth_bytes_per_s == pytest.approx(900e9)
    # the remote stream waits a read's round trip: Little's law gives what it keeps in flight
    assert remote.latency_s == pytest.approx(r.round_trip["remote"].total_s, rel=1e-9)
    assert remote.bytes_in_flight_needed == pytest.approx(900e9 * r.round_trip["remote"].total_s, rel=1e-9)
    acc = tp.Accelerator.gb200()
    slow = tp.decode(m70, accelerator=acc, link_bandwidth_bytes_per_s=0.1e12, runtime=ideal)
    assert slow.tokens_per_s == pytest.approx(1.43, abs=0.01)
    big = tp.MemoryTier("hbm_pool", 8e12, 1e12)
    assert tp.decode(m405, accelerator=acc, tier=big, runtime=ideal).tokens_per_s == pytest.approx(19.75, abs=0.05)
    assert tp.decode(m405, accelerator=acc, tier=big, link_bandwidth_bytes_per_s=0.9e12,
                     runtime=ideal).tokens_per_s == pytest.approx(
        2.22, abs=0.01)


def test_prefetch_depth_hides_or_exposes_latency():
    acc = tp.Accelerator.gb200()
    m = tp.Model.dense("70b", 70e9, 80)
    pool = tp.MemoryTier("pool", 8e12, 1e12, latency_s=0.4e-6)
    kw = {"accelerator": acc, "tier": pool, "link_bandwidth_bytes_per_s": 900e9}
    deep = tp.decode(m, prefetch_bytes=1.8e6, link_round_trip_s=1.6e-6, **kw)
    shallow = tp.decode(m, prefetch_bytes=0.9e6, link_round_trip_s=1.6e-6, **kw)
    assert deep.latency_s == pytest.approx(2e-6)                             # fabric and the tier's access
    assert deep.bytes_in_flight_needed == pytest.approx(1.8e6)              # 900 GB/s x 2 us
    assert deep.latency_hidden and deep.effective_bandwidth_bytes_per_s == pytest.approx(900e9)
    assert not shallow.latency_hidden and shallow.effective_bandwidth_bytes_per_s == pytest.approx(450e9)
    # the stream's tokens/s then fall with latency; without a limit on depth they do not
    lat = [0.25e-6, 1e-6, 4e-6]
    limited = tp.latency_sweep(m, lat, prefetch_bytes=0.9e6, **kw)
    free = tp.latency_sweep(m, lat, **kw)
    assert limited[0] > limited[1] > limited[2]
    assert np.allclose(free, free[0])
    # the stream's time at 4 us, plus the engine's kernels (latency does not touch them)
    assert limited[2] == pytest.approx(1 / (70e9 / (0.9e6 / (2 * 4e-6 + 0.4e-6)) + deep.overhead_s), rel=1e-9)


def test_tensor_parallel_decode_pays_its_all_reduces(nvl72):
    _, r = nvl72
    acc = tp.Accelerator.gb200()
    m = tp.Model.llama3_70b()
    d = tp.decode(m, accelerator=acc, tp=8, collectives=r.collectives, runtime=tp.Runtime.ideal())
    # the engine's own one-shot/two-shot kernels (Runtime.custom_all_reduce), not NCCL's default ring
    col = r.collectives
    sym = replace(col, software=col.software.with_(symmetric=True))
    ar = sym.time("all_reduce", 8192 * 2.0, 8)                              # one token's activations, BF16
    assert d.comm["all_reduce"]["count"] == 160 and d.comm["all_reduce"]["size_bytes"] == 16384
    assert d.comm_s == pytest.approx(160 * ar.time_s, rel=1e-12)
    nccl = tp.decode(m, accelerator=acc, tp=8, collectives=col, runtime=tp.Runtime.ideal().with_(custom_all_reduce=False))
    assert nccl.comm_s == pytest.approx(160 * r.collective("all_reduce", 16384, 8).time_s, rel=1e-12)
    assert nccl.comm_s > 2 * d.comm_s  # NCCL's ring LL at 16 KiB against a one-shot kernel
    assert d.memory_s == pytest.approx(m.weight_bytes / (8 * 8e12), rel=1e-12)
    assert d.time_per_token_s == pytest.approx(max(d.memory_s, d.compute_s) + d.comm_s, rel=1e-12)
    slow = tp.latency_sweep(m, [0.3e-6, 3e-6], accelerator=acc, tp=8, collectives=r.collectives,
                            runtime=tp.Runtime.ideal())
    assert slow[1] < slow[0] * 0.85  # 2.7 us more per hop costs tokens, and nothing hides it
    real = tp.latency_sweep(m, [0.3e-6, 3e-6], accelerator=acc, tp=8, collectives=r.collectives)
    assert real[1] < real[0] * 0.95  # the engine's kernels dilute it, but it still costs
    with pytest.raises(ConfigError, match="collectives"):
        tp.decode(m, accelerator=acc, tp=8)


def test_cxl_tier_and_memory_energy():
    dram = tp.MemoryTier("ddr5", 300e9, 512e9, latency_s=100e-9, energy_j_per_byte=20e-12)
    cxl = tp.MemoryTier.cxl(dram, 128e9, 1e12, latency_factor=3.0)
    assert cxl.latency_s == pytest.approx(300e-9)
    with pytest.raises(ConfigError, match="latency_factor"):
        tp.MemoryTier.cxl(dram, 128e9, 1e12, latency_factor=8.0)
    m = tp.Model.dense("8b", 8e9, 32)
    r = tp.decode(m, accelerator=tp.Accelerator.gb200(), tier=cxl, runtime=tp.Runtime.ideal())
    assert r.latency_s == pytest.approx(300e-9) and r.bytes_in_flight_needed == pytest.approx(128e9 * 300e-9)
    assert r.memory_energy_j_per_step == pytest.approx(8e9 * 20e-12)
    assert r.tokens_per_s == pytest.approx(128e9 / 8e9)


def test_mixture_of_experts_touches_more_weights_as_the_batch_grows():
    m = tp.Model.moe("moe", params=600e9, active_params=40e9, experts=256, top_k=8, layers=60)
    assert m.active_params == pytest.approx(40e9)
    assert m.touched_bytes(1) == pytest.approx(40e9)
    touched = [m.touched_bytes(b) for b in (1, 8, 64, 1024)]
    assert all(x < y for x, y in itertools.pairwise(touched))
    assert touched[-1] == pytest.approx(600e9, rel=1e-3)
    shared = 600e9 - m.expert_params
    assert m.touched_bytes(8) == pytest.approx(shared + (1 - (1 - 8 / 256) ** 8) * m.expert_params)


# ----------------------------------------------------------------------------- exports
def _genz_reads(entry: dict) -> dict:
    """What GenZ makes of a system entry, as ``GenZ/LLM_inference/utils.py``
    ``get_inference_system`` and ``GenZ/unit.py`` do (its own code runs in the next test): ``System(flops=Flops, off_chip_mem_size=Memory_size * 1024,
    offchip_mem_bw=Memory_BW, interchip_link_bw=ICN, interchip_link_latency=ICN_LL)`` with
    the default ``Unit`` (Tflops: 1e12; MB: 2^20 bytes; GBsec: 2^30 bytes/s; us)."""
    assert entry.get("real_values") is True  # else get_configs ignores the values
    return {"flops": entry["Flops"] * 1e12, "memory_bytes": entry["Memory_size"] * 1024 * 2**20,
            "memory_bw": entry["Memory_BW"] * 2**30, "link_bw": entry["ICN"] * 2**30,
            "link_latency_s": entry["ICN_LL"] * 1e-6}


_NS3_TIME = re.compile(r"^(\d+(?:\.\d+)?)(s|ms|us|ns)$")  # a number then its unit: no exponent (HPCC's ns-3)


def _ns3_seconds(text: str) -> float:
    m = _NS3_TIME.match(text)
    assert m, f"ns-3 cannot read the time {text!r}"
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[m.group(2)]


def test_exports_read_back_as_their_tools_read_them(nvl72):
    topo, r = nvl72
    a = yaml.safe_load(export.astra_sim_network(r))
    assert a["topology"] == ["Switch"] and a["npus_count"] == [72]
    assert a["bandwidth"][0] * 2**30 == pytest.approx(900e9, rel=1e-12)     # GB = 2^30 bytes
    assert isinstance(a["latency"][0], float)                                # a double (its Type.h)
    assert 2 * a["latency"][0] * 1e-9 == pytest.approx(export.step_latency_s(r), abs=2e-12)  # a step: two hops
    mem = json.loads(export.astra_sim_remote_memory(r))
    assert mem["memory-type"] == "PER_NPU_MEMORY_EXPANSION"                 # each GPU its own 900 GB/s port
    assert mem["remote-mem-bw"] == pytest.approx(900.0)                      # bytes per ns
    assert mem["remote-mem-latency"] == round(r.round_trip["remote"].total_s * 1e9)
    c = export.calculon_network(r)
    small = r.collective("all_reduce", 8.0, algorithm=export.ALGORITHM, protocol=export.PROTOCOL)
    assert c["bandwidth"] * 1e9 == pytest.approx(900e9) and c["latency"] == pytest.approx(small.latency_s)
    assert c["size"] == 72 and c["ops"]["all_reduce"] == [2.0, -1]
    g = _genz_reads(export.genz_system(r))
    assert g["link_bw"] == pytest.approx(900e9, rel=1e-12)                   # not 966 GB/s
    assert g["link_latency_s"] == pytest.approx(export.step_latency_s(r, fixed_s=export.GENZ_FIXED_S))
    assert g["flops"] == pytest.approx(2.5e15) and g["memory_bw"] == pytest.approx(8e12)
    assert g["memory_bytes"] == pytest.approx(192e9)
    assert export.genz_icn(r)["ICN"] == pytest.approx(838.19, abs=0.01)
    ll = export.llmcompass_system(r)
    # LLMCompass (design_space_exploration/dse.py template_to_system) reads device_count and
    # interconnect at the top level: the link, link_count_per_device and topology, "RING" for
    # a switched rack (each device reaches the next at its whole bandwidth: 18 x 50 GB/s)
    assert ll["device_count"] == 72 and set(ll["interconnect"]) == {"link", "link_count_per_device", "topology"}
    ic = ll["interconnect"]
    assert ic["topology"] == "RING"
    assert set(ic["link"]) >= {"bandwidth_per_direction_byte", "bandwidth_both_directions_byte", "latency_second",
                               "flit_size_byte", "max_payload_size_byte", "header_size_byte"}
    assert ic["link_count_per_device"] == 18
    assert ic["link"]["bandwidth_per_direction_byte"] * ic["link_count_per_device"] == pytest.approx(900e9)
    assert (ic["link"]["header_size_byte"], ic["link"]["max_payload_size_byte"]) == (16, 256)  # NVLink's packet
    assert export.llmcompass_link(r, header_size_byte=16, flit_size_byte=640)["link"]["flit_size_byte"] == 640
    text = export.ns3_topology(topo, r).splitlines()
    assert text[0].split() == ["90", "18", "1296"]
    assert text[1].split() == [str(i) for i in range(72, 90)]
    rows = [line.split() for line in text[2:]]
    i = 0
    src, dst, rate, delay, loss = rows[i]
    assert (int(src), int(dst)) == (int(topo.src[i]), int(topo.dst[i]))
    rep = topo.classes[0].report(float(topo.length_m[i]))
    assert float(rate.removesuffix("Gbps")) * 1e9 == pytest.approx(rep.usable_bandwidth_bps, rel=1e-6)
    # GPU to switch to GPU over two links carries the switch's 200 ns and the endpoint's 145 ns once
    two = _ns3_seconds(rows[0][3]) + _ns3_seconds(rows[1][3])
    ep = r.collectives.endpoint
    assert ep.tx_s + ep.rx_s == pytest.approx(145e-9, abs=1e-9)
    assert two == pytest.approx(2 * rep.latency_s + 200e-9 + ep.tx_s + ep.rx_s, abs=2e-12)
    assert float(loss) == pytest.approx(-np.expm1(8000 * np.log1p(-rep.post_fec_ber)), rel=1e-5)
    assert all(_ns3_seconds(row[3]) > 0 for row in rows)
    d = json.loads(export.to_json(r))
    assert d["accel_bandwidth_bytes_per_s"] == pytest.approx(900e9)


def test_genz_reads_the_export_through_its_own_code(nvl72):
    genz = pytest.importorskip("GenZ.LLM_inference.utils")
    from GenZ.collective_times import get_AR_time

    _topo, r = nvl72
    s = genz.get_inference_system(export.genz_system(r))
    assert s.interchip_link_bw == pytest.approx(900e9, rel=1e-12)
    assert s.interchip_link_latency == pytest.approx(export.step_latency_s(r, fixed_s=5e-6), rel=1e-12)
    assert s.offchip_mem_bw == pytest.approx(8e12) and s.off_chip_mem_size == pytest.approx(192e9)
    assert s.flops == pytest.approx(2.5e15)
    # its all-reduce (GenZ/collective_times.py, ms): 5 us, one ICN_LL per ring step, the ring's bytes:
    # our ring's latency (tests/test_export_tools.py compares the whole curve)
    n, size = 72, 2.0**30
    ring = r.collective("all_reduce", 8.0, algorithm="ring", protocol="simple").latency_s
    want = ring + 2 * (n - 1) * (size / n) / 900e9
    assert get_AR_time(size, n, s) * 1e-3 == pytest.approx(want, rel=1e-9)


# ----------------------------------------------------------------------------- bad input
def test_impossible_configurations_are_named(fast_copper):
    with pytest.raises(ConfigError, match="more links than switch ports"):
        tp.single_tier(2000, fast_copper)
    acc = tp.Accelerator.gb200()
    with pytest.raises(ConfigError, match="does not fit"):
        tp.decode(tp.Model.dense("2t", 2e12, 120), accelerator=acc)
    with pytest.raises(ConfigError, match="Gb/s"):
        tp.rollup(tp.nvl72(fast_copper, asic=tp.SwitchAsic("slow", 72, 100e9)))
    with pytest.raises(ConfigError, match="links per GPU"):
        tp.nvl72(fast_copper, links_per_gpu=19)
    with pytest.raises(ConfigError, match="tray_order"):
        tp.nvl72(fast_copper, tray_order="CSX")
    with pytest.raises(ConfigError, match="experts"):
        tp.Model("bad", 1e9, experts=8)
    with pytest.raises(ConfigError, match="exactly one"):
        tp.LinkClass("none")
    with pytest.raises(ConfigError, match="bandwidth_bytes_per_s"):
        tp.MemoryTier("x", -1.0, 1e9)
    with pytest.raises(ConfigError, match="fp16"):
        tp.decode(tp.Model.dense("m", 1e9, 10, precision="fp16"), accelerator=acc)
    with pytest.raises(ConfigError, match="Switch"):
        export.astra_sim_network(tp.rollup(tp.nvl72(fast_copper)), dims=[("Torus", 72, "remote")])
    assert math.isfinite(tp.rollup(tp.nvl72(fast_copper)).phy_floor_s["remote"])


def test_the_default_hgx8_board_carries_b200_gpus_as_its_docs_say():
    """``tp.hgx8()`` is an HGX B200 board: its GPUs are B200s (1,000 W, 180 GB), not the
    GB200 superchip's (1,410 W with half a Grace, 192 GB) it took before issue 34."""
    t = tp.hgx8()
    assert t.accelerator == tp.Accelerator.b200()
    p = tp.rollup(t).to_dict()["power"]
    assert p["rack_w"][0] == pytest.approx(8 * 1000.0 + p["switch_w"])
