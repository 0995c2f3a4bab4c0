"""Balance the pipe (phy.topology.balance): the balance point comes from the latency, the bytes
the reader keeps in flight and the port (Little's law), never from handing the tier's
bandwidth back, and no per-chip stream exceeds what a port carries."""

import math

import pytest

from phy import ConfigError
from phy import topology as tp

ACC = tp.Accelerator.gb200()
M = tp.Model.llama3_70b()
CAP = 2 * M.weight_bytes
#: The bare roofline: Little's law is exact on it (the calibrated engine adds kernel time that no
#: stream touches, diluting the proportions; the knee itself does not move, checked below)
IDEAL = tp.Runtime.ideal()


def _tokens(link, tier, rtt, d, eff=1.0, runtime=IDEAL):
    return tp.decode(model=M, batch=1, accelerator=ACC, tier=tier, capacity_bytes=CAP, link_bandwidth_bytes_per_s=link,
                     link_round_trip_s=rtt, link_efficiency=eff, prefetch_bytes=d, runtime=runtime).tokens_per_s


def test_the_default_reader_is_littles_law_on_local_memory():
    d = tp.reader_bytes_in_flight(ACC)
    assert d == pytest.approx(8e12 * tp.DRAM_ACCESS_S)                      # 3.19 MB
    assert 3.1e6 < d < 3.3e6


@pytest.mark.parametrize("rtt, d", [(1e-6, 2e6), (2e-6, 2e6), (1e-6, 4e6), (4e-6, 1e6)])
def test_the_knee_is_bytes_in_flight_over_the_round_trip(rtt, d):
    """With a fast tier and a wide port, the stream is D / R: the knee sits there (over the
    efficiency), the link stops being the limit past it and is the limit below it."""
    sram = tp.MemoryTier.sram_lpu()
    k = tp.balance_bandwidth(M, 1, accelerator=ACC, tier=sram, capacity_bytes=CAP, port_bytes_per_s=1e15,
                             link_round_trip_s=rtt, link_efficiency=0.9, bytes_in_flight=d, runtime=IDEAL)
    cal = tp.balance_bandwidth(M, 1, accelerator=ACC, tier=sram, capacity_bytes=CAP, port_bytes_per_s=1e15,
                               link_round_trip_s=rtt, link_efficiency=0.9, bytes_in_flight=d)
    assert cal["knee_bytes_per_s"] == k["knee_bytes_per_s"]  # the engine's kernels do not move the knee
    assert _tokens(10 * k["knee_bytes_per_s"], sram, rtt, d, 0.9, None) == pytest.approx(
        cal["tokens_per_s_at_knee"], rel=1e-9)
    R = rtt + sram.latency_s
    assert k["round_trip_s"] == pytest.approx(R)
    assert k["knee_bytes_per_s"] == pytest.approx(d / R / 0.9, rel=1e-12)
    assert k["ceiling"] == "bytes in flight over the round trip" and k["balanced"]
    at = _tokens(k["knee_bytes_per_s"], sram, rtt, d, 0.9)
    assert at == pytest.approx(k["tokens_per_s_at_knee"], rel=1e-12)
    assert _tokens(10 * k["knee_bytes_per_s"], sram, rtt, d, 0.9) == pytest.approx(at, rel=1e-9)   # no gain past it
    assert _tokens(0.8 * k["knee_bytes_per_s"], sram, rtt, d, 0.9) < 0.81 * at                      # the link limits


def test_the_knee_moves_as_littles_law_says():
    sram = tp.MemoryTier.sram_lpu()

    def knee(rtt, d):
        return tp.balance_bandwidth(M, 1, accelerator=ACC, tier=sram, capacity_bytes=CAP, port_bytes_per_s=1e15,
                                    link_round_trip_s=rtt, bytes_in_flight=d)["knee_bytes_per_s"]

    base = knee(1e-6, 2e6)
    R1, R2 = 1e-6 + sram.latency_s, 3e-6 + sram.latency_s
    assert knee(3e-6, 2e6) / base == pytest.approx(R1 / R2, rel=1e-12)       # more latency, lower knee
    assert knee(1e-6, 4e6) / base == pytest.approx(2.0, rel=1e-12)           # twice the bytes in flight, twice
    # and not the old answer, the tier's bandwidth handed back (0.99 x tier / efficiency)
    assert base < 0.05 * sram.bandwidth_bytes_per_s


@pytest.mark.parametrize("tier", [tp.MemoryTier.sram_lpu(), tp.MemoryTier.hbm3e(), tp.MemoryTier.lpddr5x()],
                         ids=lambda t: t.name)
@pytest.mark.parametrize("rtt", [0.0, 1.2e-6, 5e-6])
def test_never_above_the_port(tier, rtt):
    port = 900e9
    k = tp.balance_bandwidth(M, 1, accelerator=ACC, tier=tier, capacity_bytes=CAP, port_bytes_per_s=port,
                             link_round_trip_s=rtt, link_efficiency=0.9)
    assert k["knee_bytes_per_s"] <= port * (1 + 1e-12)
    assert k["stream_bytes_per_s"] <= 0.9 * port * (1 + 1e-12)
    R = rtt + tier.latency_s
    useful = min(tier.bandwidth_bytes_per_s, k["bytes_in_flight"] / R)
    assert k["balanced"] == (useful / 0.9 <= port)
    if not k["balanced"]:
        assert k["ceiling"] == "the port"
        assert k["ports_to_balance"] == math.ceil(useful / (0.9 * port))
        assert k["ports_to_balance"] >= 2
    assert k["bytes_in_flight_to_balance"] == pytest.approx(0.9 * port * R)


def test_lpddr_balances_below_an_nvlink_port_and_hbm_does_not():
    """Over NVL72's fabric: 500 GB/s of LPDDR fits in one 900 GB/s port at 0.9, so the knee
    is the tier over the efficiency; remote HBM (8 TB/s) would fill several ports, so the
    port binds; and at 5 us of round trip the reader's 3.2 MB, not the port, limits HBM."""
    lp = tp.balance_bandwidth(M, 1, accelerator=ACC, tier=tp.MemoryTier.lpddr5x(), capacity_bytes=CAP,
                              port_bytes_per_s=900e9, link_round_trip_s=1.2e-6, link_efficiency=0.9)
    assert lp["balanced"] and lp["knee_bytes_per_s"] == pytest.approx(500e9 / 0.9)
    hb = tp.balance_bandwidth(M, 1, accelerator=ACC, capacity_bytes=CAP, port_bytes_per_s=900e9,
                              link_round_trip_s=1.2e-6, link_efficiency=0.9)
    assert not hb["balanced"] and hb["knee_bytes_per_s"] == 900e9
    far = tp.balance_bandwidth(M, 1, accelerator=ACC, capacity_bytes=CAP, port_bytes_per_s=900e9,
                               link_round_trip_s=5e-6, link_efficiency=0.9)
    R = 5e-6 + tp.DRAM_ACCESS_S
    assert far["balanced"] and far["ceiling"] == "bytes in flight over the round trip"
    assert far["knee_bytes_per_s"] == pytest.approx(tp.reader_bytes_in_flight(ACC) / R / 0.9)


def test_a_compute_bound_step_balances_where_memory_meets_compute():
    big = 4096
    k = tp.balance_bandwidth(M, big, accelerator=ACC, tier=tp.MemoryTier.sram_lpu(), capacity_bytes=CAP,
                             port_bytes_per_s=1e16, link_round_trip_s=0.0, bytes_in_flight=1e12)
    assert k["ceiling"] == "compute"
    r = tp.decode(model=M, batch=big, accelerator=ACC, tier=tp.MemoryTier.sram_lpu(), capacity_bytes=CAP,
                  link_bandwidth_bytes_per_s=k["knee_bytes_per_s"])
    assert r.memory_s == pytest.approx(r.compute_s, rel=1e-9)


def test_the_port_is_required():
    with pytest.raises(ConfigError, match="port"):
        tp.balance_bandwidth(M, 1, accelerator=ACC, capacity_bytes=CAP)
    with pytest.raises(ConfigError, match="derives"):
        tp.balance_bandwidth(M, 1, accelerator=ACC, capacity_bytes=CAP, port_bytes_per_s=1e12,
                             link_bandwidth_bytes_per_s=1e12)


@pytest.fixture(scope="module")
def fabric():
    return tp.rollup(tp.nvl72())


def test_latency_value_never_streams_above_a_port(fabric):
    port = fabric.accel_bandwidth_bytes_per_s
    rows = tp.latency_value(M, [0.3e-6, 1e-6, 3e-6], accelerator=ACC, collectives=fabric.collectives,
                            target_tokens_per_s=200)
    for r in rows:
        total = M.touched_bytes(1) * 200
        assert r["stream_total_bytes_per_s"] == pytest.approx(total)        # 14 TB/s in all
        assert r["stream_bandwidth_bytes_per_s"] <= port * (1 + 1e-12)     # was the 42 TB/s through one port
        assert r["stream_bandwidth_bytes_per_s"] <= r["stream_per_port_bytes_per_s"] * (1 + 1e-12)
        n = r["stream_tp"]
        assert n * r["stream_per_port_bytes_per_s"] >= total * (1 - 1e-12) > (n - 1) * r["stream_per_port_bytes_per_s"]
        assert r["buffer_bytes"] == pytest.approx(r["stream_bandwidth_bytes_per_s"] * r["round_trip_s"])
        d = tp.reader_bytes_in_flight(ACC)
        assert r["stream_per_port_bytes_per_s"] == pytest.approx(min(port, d / r["round_trip_s"]))
    # low latency: the port limits, 16 ports; 3 us one way: the reader's bytes in flight
    # over a 6.4 us round trip limit each port to 0.5 TB/s, so more chips are needed
    assert rows[0]["stream_limit"] == "port" and rows[0]["stream_tp"] == math.ceil(M.touched_bytes(1) * 200 / port)
    assert rows[2]["stream_limit"] == "bytes_in_flight" and rows[2]["stream_tp"] > rows[0]["stream_tp"]


def test_latency_value_says_when_the_stream_is_out_of_reach(fabric):
    rows = tp.latency_value(M, [0.3e-6, 3e-6], accelerator=ACC, collectives=fabric.collectives,
                            target_tokens_per_s=200)
    for r in rows:
        lo, hi = r["tp_range"]
        assert r["stream_in_reach"] == (lo <= r["stream_tp"] <= hi)
    far = tp.latency_value(M, [0.3e-6], accelerator=ACC, collectives=fabric.collectives, target_tokens_per_s=200,
                           port_bytes_per_s=10e9)
    assert far[0]["stream_tp"] > 72 and not far[0]["stream_in_reach"]
