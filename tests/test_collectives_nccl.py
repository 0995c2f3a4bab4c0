"""Collectives as NCCL does them (issue 33, part 2): NCCL's own tuner and its choices, NVLS
latency growing with the GPU count, bandwidth ramping with size to the measured level,
point-to-point, and the held-out public measurements within 30 %.

The fabrics are rolled up from their links (an H100/H200-class HGX board and an HGX B200
board); the NVL72 rack's figures are in ``benchmarks/validate_collectives.py``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from phy import ConfigError
from phy import topology as tp
from phy.latency.measured import H100_CROSSOVER, MEASUREMENTS
from phy.latency.nccl import NcclTuner


@pytest.fixture(scope="module")
def cols():
    h100 = tp.hgx8(tp.scale_up_copper(2, 106.25e9), accelerator=tp.Accelerator.h200(),
                   asic=tp.SwitchAsic.nvlink4(), n_switches=4)
    return {"h100": tp.rollup(h100).collectives, "b200": tp.rollup(tp.hgx8()).collectives}


# ----------------------------------------------------------------------------- NCCL's tuner
def test_tuner_is_nccls_tuning_model():
    """tuning.cc for 8 Hopper GPUs of one node: ring LL 6.6 + 14 x 0.6 us at llMaxBw 141 GB/s
    (bus) x 8/14; NVLS 25 us at 16 channels of 20 GB/s x 0.85 x 7/8 x 2; ring Simple
    8.4 + 14 x 3.4 us; the tree inside a node is a chain: 6.8 + 2 x 7 x 0.6 us."""
    t = NcclTuner("hopper").table("all_reduce", 8)
    assert t[("ring", "ll")] == pytest.approx((6.6 + 14 * 0.6, 141.0 * 8 / 14))
    assert t[("nvls", "simple")] == pytest.approx((25.0, 16 * 20 * 0.85 * 7 / 8 * 2 * 8 / 14))
    assert t[("ring", "simple")] == pytest.approx((8.4 + 14 * 3.4, 320 * 8 / 14))
    assert t[("tree", "ll")][0] == pytest.approx(6.8 + 2 * 7 * 0.6)
    b = NcclTuner("blackwell").table("all_reduce", 8)
    assert b[("ring", "ll")][1] == pytest.approx(282.0 * 8 / 14)           # Blackwell's llMaxBw
    assert b[("nvls", "simple")][1] == pytest.approx(16 * 45 * 0.74 * 7 / 8 * 2 * 8 / 14)
    assert NcclTuner("hopper").ring_bw == 20.0 and NcclTuner("blackwell").ring_bw == 45.0
    assert ("nvls", "simple") not in NcclTuner("hopper", nvls=False).table("all_reduce", 8)
    with pytest.raises(ConfigError, match="generation"):
        NcclTuner("volta")


def test_channels_and_threads_are_nccls():
    """enqueue.cc: channels drop while bytes < channels x threads x threshold (the ring LL's
    threshold 8 x nRanks per thread), then threads halve; NVLS keeps its 16 / 24."""
    t = NcclTuner("hopper")
    assert t.channels("all_reduce", "ring", "ll", 8, 8) == (1, 64)
    assert t.channels("all_reduce", "ring", "ll", 2**16, 8) == (2, 512)
    assert t.channels("all_reduce", "ring", "ll", 2**20, 8) == (16, 512)
    assert t.channels("all_reduce", "ring", "simple", 2**20, 8) == (16, 512)
    assert t.channels("all_reduce", "nvls", "simple", 8, 8)[0] == 16
    assert NcclTuner("blackwell").channels("all_reduce", "nvls", "simple", 8, 72)[0] == 24
    assert t.p2p(1024) == ("ll", 1) and t.p2p(2**30) == ("simple", 16)


def test_selection_matches_nccls_logged_crossover(cols):
    """8 x H100: ring LL from 8 B to 1 MB, NVLS Simple from 2 MB (NCCL's log, nccl-tests
    issue 309); on 2 GPUs NVLS never wins (its 1/2 head share), the ring does."""
    h = cols["h100"]
    for s in (8, 1024, 2**16, 2**19, H100_CROSSOVER["ring_ll_up_to"]):
        assert h.choice("all_reduce", s, 8) == ("ring", "ll"), s
        assert h.time("all_reduce", s, 8).algorithm == "ring"
    for s in (H100_CROSSOVER["nvls_from"], 2**24, 2**30, 2**32):
        assert h.time("all_reduce", s, 8).algorithm == "nvls", s
    assert {h.choice("all_reduce", s, 2)[0] for s in (8, 2**20, 2**30)} == {"ring"}
    # without NVLink SHARP, NCCL's large-message choice is the ring with Simple
    off = replace(h, software=h.software.with_(switch_reduction=False))
    assert off.choice("all_reduce", 2**30, 8) == ("ring", "simple")
    # symmetric kernels (registered buffers) are a separate path: one-shot for 8 bytes
    sym = replace(h, software=h.software.with_(symmetric=True))
    assert sym.time("all_reduce", 8, 8).algorithm == "one_shot"
    assert "one_shot" not in {c.algorithm for c in h.candidates("all_reduce", 8, 8)}


# ----------------------------------------------------------------------------- NVLS latency
def test_nvls_latency_grows_with_gpu_count(cols):
    """NVIDIA/nccl issue 1259: NVLS on 2 H100s takes about 5.6 us for 128 B, and more on 8.
    The growth is the barriers: p arrivals on one flag, serialised at its L2 slice."""
    h, b = cols["h100"], cols["b200"]
    ts = [h.time("all_reduce", 128, p, algorithm="nvls") for p in (2, 4, 8)]
    assert ts[0].time_s == pytest.approx(5.56e-6, rel=0.3)
    assert ts[0].time_s < ts[1].time_s < ts[2].time_s
    assert ts[2].time_s - ts[0].time_s > 1e-6
    for t in ts:
        assert t.layers["software"]["barrier"] == pytest.approx(2 * t.p * h.software.atomic_s)
        assert sum(t.layer_totals().values()) == pytest.approx(t.time_s, rel=1e-12)
    assert b.time("all_reduce", 128, 72, algorithm="nvls").time_s > 2 * b.time("all_reduce", 128, 8,
                                                                                 algorithm="nvls").time_s
    # the old alias still names it
    assert h.time("all_reduce", 128, 8, algorithm="switch").algorithm == "nvls"


# ----------------------------------------------------------------------------- bandwidth
def test_bus_bandwidth_ramps_with_size_and_saturates_at_the_measured_level(cols):
    """Few channels at small and mid sizes, so bus bandwidth ramps; at 1-4 GiB NVLS on 8
    H100/H200 lands on the measured ~480 GB/s (nccl-tests issues 212, 272)."""
    h = cols["h100"]
    sizes = [8 * 4**k for k in range(16)]
    bb = [h.time("all_reduce", s, 8).bus_bandwidth_bytes_per_s() for s in sizes]
    assert all(b2 >= b1 for b1, b2 in zip(bb, bb[1:]))
    assert bb[-1] == pytest.approx(480e9, rel=0.3) and bb[-1] == pytest.approx(475e9, rel=0.3)
    small = h.time("all_reduce", 2**16, 8)
    assert small.channels == 2 and small.layer_totals()["bandwidth"] > 2 * (
        h.endpoint.wire_bytes(2 * 7 / 8 * 2**16) / (h.bandwidth_bytes_per_s * 0.5))
    # the ring's per-step latency makes 72 GPUs slow to saturate: a 142-step ring
    ring = cols["b200"].time("all_reduce", 2**29, 72, algorithm="ring", protocol="simple")
    assert ring.latency_s > 200e-6


# ----------------------------------------------------------------------------- send / recv
def test_send_recv(cols):
    """Point-to-point: LL up to 16 KiB per channel (one hop and a poll), Simple beyond (four
    hops), over up to 16 channels; 1 GiB at the ~370 GB/s NCCL reaches over NVLink4
    (nccl-tests issue 212)."""
    h = cols["h100"]
    sw = h.software
    small = h.send_recv(1024)
    assert (small.algorithm, small.protocol, small.hops, small.channels) == ("p2p", "ll", 1, 1)
    assert small.time_s == pytest.approx(sw.kernel_s + h.hop_s + sw.poll_s + h.endpoint.wire_bytes(1024) / (
        h.bandwidth_bytes_per_s * sw.ll_efficiency / 16), rel=1e-12)
    big = h.send_recv(2**30)
    assert big.protocol == "simple" and big.hops == 4 and big.channels == 16
    assert big.bus_bandwidth_bytes_per_s() == pytest.approx(370e9, rel=0.3)
    assert h.time("send_recv", 2**30, 2).time_s == big.time_s
    a2a = h.time("all_to_all", 8 * 2**20, 8)
    assert a2a.algorithm == "direct" and a2a.peers == 7


# ----------------------------------------------------------------------------- held out
def test_held_out_measurements_within_30_percent(cols):
    """Every held-out public figure on the HGX boards (the NVL72's need its 30-s roll-up:
    benchmarks/validate_collectives.py) within 30 %, with the algorithm the run used."""
    n = 0
    for m in MEASUREMENTS:
        if m["set"] != "test" or m["fabric"] not in cols:
            continue
        col = cols[m["fabric"]]
        kw = {"algorithm": m["algorithm"]} if m["algorithm"] else {}
        t = col.time(m["area"], m["size"], m["p"], **kw)
        ours = t.bus_bandwidth_bytes_per_s() if m["quantity"] == "busbw" else t.time_s
        assert ours == pytest.approx(m["value"], rel=0.3), (m["source"], ours, m["value"])
        n += 1
    assert n >= 10
