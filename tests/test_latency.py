"""phy.latency: the layers above the PHY, each against its formula or a Monte Carlo, and the
whole against public measurements of collectives and decode."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import phy
from channels import media
from phy import ConfigError
from phy import latency as lt
from phy import topology as tp
from phy.link import Retry
from phy.link.retry import replay_quantiles, simulate_replay


# ----------------------------------------------------------------------------- switch queueing
@pytest.mark.parametrize("rho", [0.3, 0.7, 0.9])
def test_md1_wait_is_pollaczek_khinchine_and_matches_lindley(rho):
    D = 2.72e-9  # a 272-byte packet on an 800 Gb/s port
    w = lt.md1_wait(rho, D)
    assert w.pmf[0] == pytest.approx(1 - rho, rel=1e-6)                        # an empty queue with 1 - rho
    assert w.mean_s == pytest.approx(rho * D / (2 * (1 - rho)), rel=1e-12)     # Pollaczek-Khinchine
    assert float(np.sum(np.arange(w.pmf.size) * w.grid_s * w.pmf)) == pytest.approx(w.mean_s, rel=1e-6)
    mc = lt.simulate_md1(rho, D, 4_000_000, seed_=3)
    assert mc.mean() == pytest.approx(w.mean_s, rel=0.03)
    q = w.quantile_s([0.5, 0.99, 0.9999])
    m = np.quantile(mc, [0.5, 0.99, 0.9999])
    assert q[0] == pytest.approx(m[0], rel=0.02, abs=D / 50)
    assert q[1] == pytest.approx(m[1], rel=0.03)
    assert q[2] == pytest.approx(m[2], rel=0.05 if rho < 0.9 else 0.12)         # the tail's autocorrelation at 0.9


def test_md1_stays_bounded_near_saturation_and_refuses_overload():
    w = lt.md1_wait(0.999, 1e-9)
    assert w.pmf.size <= 2**21  # the grid is capped, so the cost is
    assert float(np.sum(np.arange(w.pmf.size) * w.grid_s * w.pmf)) == pytest.approx(w.mean_s, rel=0.02)
    with pytest.raises(ConfigError, match="below 1"):
        lt.md1_wait(1.0, 1e-9)
    with pytest.raises(ConfigError, match="quantiles"):
        w.quantile_s(1.0)


# ----------------------------------------------------------------------------- link-level replay
def test_replay_quantiles_are_negative_binomial():
    f, t = 0.02, 70e-9
    assert replay_quantiles(f, t, 1, [0.5, 0.99, 0.9999]).tolist() == [0.0, t, 2 * t]  # P(K >= k) = f^k
    assert replay_quantiles(0.0, t, 8, [0.9999]).tolist() == [0.0]
    k = stats.nbinom.ppf(0.9999, 16, 1 - f)
    assert replay_quantiles(f, t, 16, [0.9999])[0] == pytest.approx(k * t)
    with pytest.raises(ConfigError, match="never delivers"):
        replay_quantiles(1.0, t)


def test_go_back_n_monte_carlo_matches_the_distribution_with_independent_flits():
    f, L = 0.01, 3000
    mc = simulate_replay(1_000_000, flits=4, flit_ui=512, one_way_ui=L, flit_error_ratio=f, seed_=5)
    rtt = 2 * L
    assert mc.mean() == pytest.approx(4 * f / (1 - f) * rtt, rel=0.02)
    np.testing.assert_allclose(np.quantile(mc, [0.5, 0.99, 0.9999]), replay_quantiles(f, rtt, 4, [0.5, 0.99, 0.9999]))


def _reference_go_back_n(n, F, f_ui, L, turn, rate, cdf, s):
    """Plain Python of phy.link._kernels.go_back_n_bursts, on NumPy's legacy generator (the
    one Numba's np.random mirrors, seeded alike)."""
    np.random.seed(s)
    out, rtt, t = np.empty(n), 2 * L + turn, 0.0
    nxt, last_end = np.random.exponential(1.0 / rate), -np.inf
    for m in range(n):
        start, j, s0 = t, 0, t
        while j < F:
            a = s0 + j * f_ui
            while nxt < a + f_ui:  # every burst that starts before this flit ends
                span = np.searchsorted(cdf, np.random.random()) + 0.0
                last_end = max(last_end, np.floor(nxt) + max(span, 1.0))
                nxt += np.random.exponential(1.0 / rate)
            if last_end > a:
                s0 = a + rtt - j * f_ui  # the NAK is back after a round trip: restart at flit j
            else:
                j += 1
        done = s0 + (F - 1) * f_ui + L
        out[m] = done - (start + (F - 1) * f_ui + L)
        t = done + rtt + 2.0 * cdf.size + f_ui
    return out


def test_go_back_n_kernels_are_their_references_bit_for_bit():
    from phy.link._kernels import go_back_n_bursts, go_back_n_iid

    cdf = np.cumsum([0.0, 0.5, 0.3, 0.2])
    np.testing.assert_array_equal(go_back_n_bursts(3000, 4, 512.0, 3000.0, 10.0, 1e-4, cdf, 12345),
                                  _reference_go_back_n(3000, 4, 512.0, 3000.0, 10.0, 1e-4, cdf, 12345))
    np.random.seed(99)
    ref = []
    for _ in range(3000):
        k, j = 0, 0
        while j < 3:
            if np.random.random() < 0.05:
                k += 1
            else:
                j += 1
        ref.append(k * 6010.0)
    np.testing.assert_array_equal(go_back_n_iid(3000, 3, 3000.0, 10.0, 0.05, 99), ref)


@pytest.fixture(scope="module")
def lossy_retry_link():
    """4.3 m of 26 AWG twinax at 212.5 Gb/s, no FEC, link-level retry: about 2 % of
    flits replayed (4.5 m until COM's transmitter noise followed 178A-21: 5 % there now)."""
    ch = media.cascade(media.connector(), media.twinax(4.3, 26), media.connector())
    spec = phy.LinkSpec(channel=ch, lanes=2, lane_rate_bps=212.5e9, fec=None, retry=Retry(), target_ber=1e-12)
    segs = phy.link.segments(spec)
    return spec, segs, phy.evaluate_link(spec, segs)


def test_link_report_carries_its_layers_and_replay_tail(lossy_retry_link):
    spec, _, r = lossy_retry_link
    ll = r.link_layer
    assert 1e-3 < ll["flit_error_ratio"] < 0.1
    assert ll["replay_s"] == pytest.approx(2 * (r.latency_s - r.latency_breakdown_s["retry_mean"]), rel=1e-12)
    lay = r.latency_layers_s
    assert set(lay["link"]) == {"flit_accumulation", "crc_check", "retry_mean"}
    assert sum(sum(v.values()) for v in lay.values()) == pytest.approx(r.latency_s, rel=1e-12)
    assert lay["link"]["retry_mean"] == pytest.approx(ll["flit_error_ratio"] / (1 - ll["flit_error_ratio"])
                                                      * ll["replay_s"], rel=1e-12)
    base = r.latency_s - lay["link"]["retry_mean"]
    q = r.latency_quantiles_s
    assert q["p50"] == pytest.approx(base) and q["p99"] == pytest.approx(base + ll["replay_s"])
    assert q["p99.99"] == pytest.approx(base + 2 * ll["replay_s"])
    # credits: the receive buffer the loop needs is the payload rate times the loop (Little)
    assert ll["credit_bytes_needed"] == pytest.approx(r.rate_chain["payload_bps"] / 8 * ll["credit_loop_s"])
    small = phy.evaluate_link(spec.with_(retry=Retry(credit_buffer_bytes=int(0.8 * ll["credit_bytes_needed"]))),
                              phy.link.segments(spec))
    assert small.link_layer["credit_efficiency"] == pytest.approx(0.8, rel=1e-3)
    assert small.usable_bandwidth_bps == pytest.approx(0.8 * r.usable_bandwidth_bps, rel=1e-3)
    assert any("credit" in n for n in small.notes)


def test_replay_tail_against_a_monte_carlo_of_the_links_own_bursts(lossy_retry_link):
    """The protocol played against a Poisson process of the link's own DFE bursts: the
    flit error ratio and the tail the report states."""
    spec, segs, r = lossy_retry_link
    model = phy.link.post_fec._model(tuple(segs), r.pre_fec_der, spec.modulation)  # the roll-up's own bursts
    rate = r.pre_fec_der / model.mean_errors
    baud = spec.baud_hz
    one_way_ui = (r.latency_s - r.latency_breakdown_s["retry_mean"]) * baud
    flit_ui = 8 * 256 / spec.bits_per_symbol / spec.lanes
    mc = simulate_replay(400_000, flits=1, flit_ui=flit_ui, one_way_ui=one_way_ui, burst_rate=rate,
                         span_pmf=model.length_pmf(64), seed_=7)
    fer = r.link_layer["flit_error_ratio"]
    assert (mc > 0).mean() == pytest.approx(fer, rel=0.05)
    rtt_ui = round(2 * one_way_ui)
    base = r.latency_s - r.latency_breakdown_s["retry_mean"]
    for name, q in lt.QUANTILES.items():
        assert base + np.quantile(mc, q) / baud == pytest.approx(r.latency_quantiles_s[name], rel=0.02,
                                                                abs=2 / baud), name
    assert np.quantile(mc, 0.9999) == pytest.approx(2 * rtt_ui, abs=2)


# ----------------------------------------------------------------------------- the stack
def test_one_way_and_round_trip_add_up_and_their_tails_convolve(lossy_retry_link):
    _, _, link = lossy_retry_link
    sw = tp.SwitchAsic.nvlink5()
    ep = lt.Endpoint.nvlink()
    ow = lt.one_way([link, link], [sw], ep, payload_bytes=256, utilisation=0.7)
    t = ow.layer_totals()
    assert ow.total_s == pytest.approx(sum(t.values()), rel=1e-12)
    assert t["endpoint"] == pytest.approx(ep.tx_s + ep.rx_s)
    assert ow.layers["link"]["serialization"] == pytest.approx(8 * (256 + 16) / link.rate_chain["payload_bps"])
    q = lt.md1_wait(0.7, 8 * (256 + 16) / sw.port_rate_bps)
    assert ow.layers["switch"] == pytest.approx({"port_to_port": 200e-9, "queueing": q.mean_s})
    # Monte Carlo of the random parts: two links' replays (2 flits each) and the port's wait
    f, rep = link.link_layer["flit_error_ratio"], link.link_layer["replay_s"]
    rng = np.random.default_rng(11)
    n = 1_000_000
    waits = lt.simulate_md1(0.7, q.service_s, 3 * n, seed_=12)[::2][:n]
    draws = (rng.negative_binomial(2, 1 - f, n) + rng.negative_binomial(2, 1 - f, n)) * rep + waits
    fixed = ow.total_s - 2 * 2 * f / (1 - f) * rep - q.mean_s
    for name, p in lt.QUANTILES.items():
        assert ow.quantiles_s[name] == pytest.approx(fixed + np.quantile(draws, p), rel=0.01), name
    rt = lt.round_trip([link, link], [sw], ep, memory=tp.MemoryTier.hbm3e(), read_bytes=64)
    assert rt.layers["memory"] == {"access": pytest.approx(tp.DRAM_ACCESS_S)}
    assert rt.layer_totals()["switch"] == pytest.approx(400e-9)
    assert lt.bytes_in_flight(900e9, 2e-6) == pytest.approx(1.8e6)
    assert "quantiles" in ow.table()


def test_the_stack_prints_readable_names_with_units(lossy_retry_link):
    """``LatencyStack.table()`` names layers and terms as the command does, each with ns."""
    from phy import _format as fm

    _, _, link = lossy_retry_link
    ow = lt.one_way([link, link], [tp.SwitchAsic.nvlink5()], lt.Endpoint.nvlink(), payload_bytes=256,
                    utilisation=0.7)
    text = ow.table()
    assert "_" not in text  # no snake_case identifiers
    shown = 0
    for layer, terms in ow.layers.items():
        for t, v in terms.items():
            if v >= 0.05e-9:
                assert f"{fm.label(t)} {v * 1e9:.1f} ns" in text, t
                shown += 1
    assert shown >= 10
    assert re.search(r"^  PHY +\d+\.\d ns +\d+\.\d %   SerDes Tx \d+\.\d ns, SerDes Rx ", text, re.M)
    assert re.search(r"^  link layer +\d+\.\d ns .*replays \(mean\) \d+\.\d ns", text, re.M)
    assert re.search(r"^  switch +\d+\.\d ns .*port to port 200\.0 ns, queueing \d+\.\d ns", text, re.M)
    assert re.search(r"^  quantiles +p50 \d+\.\d ns, p99 \d+\.\d ns, p99\.99 \d+\.\d ns", text, re.M)


def test_headers_cost_small_transfers_their_bandwidth():
    ep = lt.Endpoint.nvlink()
    assert ep.wire_bytes(8) == 24 and ep.efficiency(8) == pytest.approx(1 / 3)
    assert ep.wire_bytes(256) == 272 and ep.wire_bytes(257) == 257 + 32
    assert ep.efficiency(1e6) == pytest.approx(256 / 272, rel=1e-3)


# ----------------------------------------------------------------------------- collectives
@pytest.fixture(scope="module")
def fabrics():
    """B200 and H200 boards of 8 and the NVL72 rack, rolled up from their links."""
    b200 = tp.rollup(tp.hgx8())
    h200 = tp.rollup(tp.hgx8(tp.scale_up_copper(2, 106.25e9), accelerator=tp.Accelerator.h200(),
                             asic=tp.SwitchAsic.nvlink4(), n_switches=4))
    nvl = tp.rollup(tp.nvl72())
    return {"b200": b200, "h200": h200, "nvl72": nvl}


def test_each_algorithm_is_its_formula(fabrics):
    col = fabrics["nvl72"].collectives
    sw, ep = col.software, col.endpoint
    hop, B, S, p = col.hop_s, col.bandwidth_bytes_per_s, 1e6, 72
    ring = col.time("all_reduce", S, p, algorithm="ring", protocol="ll")
    nc, nt = col.tuner.channels("all_reduce", "ring", "ll", S, p)  # NCCL runs 3 of its 16 channels here
    assert (nc, nt) == (3, 512) and ring.channels == 3
    assert ring.time_s == pytest.approx(sw.kernel_s + 142 * (hop + sw.poll_s)
                                        + ep.wire_bytes(2 * 71 / 72 * S) / (B * sw.ll_efficiency * 3 / 16), rel=1e-12)
    simple = col.time("all_reduce", S, p, algorithm="ring", protocol="simple")
    assert simple.hops == 4 * 142                          # data, write ack (a round trip), flag
    sym = replace(col, software=sw.with_(symmetric=True))
    one = sym.time("all_reduce", 8, p, algorithm="one_shot", protocol="ll")
    assert one.time_s == pytest.approx(sw.kernel_s + hop + sw.poll_s + 71 * sw.peer_s
                                       + ep.wire_bytes(71 * 8) / (B * 0.5), rel=1e-12)
    nvls = col.time("all_reduce", S, p, algorithm="nvls")
    assert nvls.time_s == pytest.approx(sw.kernel_s + 3 * hop + 2 * sw.poll_s + col.read.total_s + 2 * 72 * sw.atomic_s
                                        + ep.wire_bytes((1 + 1 / 72) * S) / (B * sw.switch_efficiency * 31 / 32),
                                        rel=1e-12)
    a2a = col.time("all_to_all", S, p)
    assert a2a.algorithm == "direct" and a2a.peers == 71
    # every layer's share adds up, and the time is NCCL's choice
    for t in (ring, simple, one, nvls, a2a):
        assert sum(t.layer_totals().values()) == pytest.approx(t.time_s, rel=1e-12)
    best = col.time("all_reduce", 8, p)
    assert (best.algorithm, best.protocol) == col.tuner.pick("all_reduce", 8, p)
    assert col.time("all_reduce", 1e6, 1).time_s == 0.0
    with pytest.raises(ConfigError, match="algorithms"):
        col.time("all_reduce", 8, 8, algorithm="butterfly")
    with pytest.raises(ConfigError, match="Simple"):
        col.time("all_reduce", 8, 8, algorithm="nvls", protocol="ll")


def test_large_messages_follow_bandwidth(fabrics):
    """At 1 GiB the ring's bus bandwidth is the link's payload rate net of packet headers;
    against measured ring bus bandwidth: B200 "830+" GB/s (NVIDIA/nccl issue 1807), a GB200
    NVL72 of 72 GPUs 839 GB/s at 4 GiB (coreweave/nccl-tests PR 43), H100 370 GB/s
    (NVIDIA's sjeaugey, nccl-tests issue 212)."""
    for name, measured, size in (("b200", 830e9, 2**30), ("nvl72", 839e9, 2**32), ("h200", 370e9, 2**30)):
        r = fabrics[name]
        ring = r.collective("all_reduce", size, 8 if name != "nvl72" else 72, algorithm="ring", protocol="simple")
        assert ring.layer_totals()["bandwidth"] > 0.8 * ring.time_s
        assert ring.bus_bandwidth_bytes_per_s() == pytest.approx(measured, rel=0.2), name
    # NVLink SHARP on an H100-class board: about 480 GB/s (nccl-tests issue 212)
    nvls = fabrics["h200"].collective("all_reduce", 2**30, 8, algorithm="switch")
    assert nvls.bus_bandwidth_bytes_per_s() == pytest.approx(480e9, rel=0.2)


# measured 8-byte all-reduce, NCCL 2.27 symmetric kernels: (fabric, GPUs, seconds, source)
MEASURED = [("b200", 8, 3.0e-6, "NVIDIA/nccl issue 1940; nccl-tests issue 333"),
            ("h200", 8, 2.3e-6, "NVIDIA/nccl issue 1940"),
            ("nvl72", 32, 6.3e-6, "NCCL 2.27 announcement, a GB200 NVL72 domain (nccl-tests issue 333)")]


def _symmetric(col):
    """The fabric with NCCL 2.27's symmetric kernels (registered buffers), as measured."""
    return replace(col, software=col.software.with_(symmetric=True))


def test_small_all_reduce_lands_within_30_percent_of_measurements(fabrics):
    for name, p, measured, source in MEASURED:
        t = _symmetric(fabrics[name].collectives).time("all_reduce", 8, p)
        assert t.time_s == pytest.approx(measured, rel=0.3), f"{name} x {p}: {t.time_s * 1e6:.2f} us ({source})"
        # and says where each nanosecond is: the fabric's layers are a real part of it
        share = t.layer_totals()
        assert share["phy"] > 0.04 * t.time_s and share["software"] < t.time_s
        hop = fabrics[name].collectives.hop.layer_totals()
        assert share["endpoint"] >= t.hops * hop["endpoint"] * (1 - 1e-12)
    # not in the fit: NVLink SHARP forced on 2 H100s, 128 B, about 6 us (NVIDIA/nccl issue 1259)
    nvls = fabrics["h200"].collective("all_reduce", 128, 2, algorithm="switch")
    assert nvls.time_s == pytest.approx(6e-6, rel=0.3) and nvls.layer_totals()["memory"] > 0
    # one hop lies between NCCL's 0.6 us per NVLink step and ASTRA-sim's validated 2 x 936 ns
    for r in fabrics.values():
        assert 0.6e-6 <= r.alpha_s <= 2 * 936.25e-9


def test_software_defaults_are_the_stated_fit(fabrics):
    pts = [(_symmetric(fabrics[n].collectives), p, 8, m) for n, p, m, _ in MEASURED]
    sw, errors = lt.fit_software(pts, lt.Software())
    assert sw.kernel_s == pytest.approx(lt.Software().kernel_s, rel=0.05)
    assert sw.peer_s == pytest.approx(lt.Software().peer_s, rel=0.1)
    assert max(abs(e) for e in errors) < 0.25


def test_at_latency_scales_every_hop(fabrics):
    col = fabrics["nvl72"].collectives
    fast = col.at_latency(0.3e-6)
    assert fast.hop_s == pytest.approx(0.3e-6)
    assert fast.read.layers["memory"] == col.read.layers["memory"]
    assert fast.time("all_reduce", 8, 72).time_s < col.time("all_reduce", 8, 72).time_s


# ----------------------------------------------------------------------------- decode
def test_dense_70b_decode_stays_under_a_fifth_of_peak_to_batch_64():
    acc = tp.Accelerator.gb200()
    m = tp.Model.llama3_70b()
    assert m.kv_per_token_bytes == 2 * 80 * 8 * 128                        # FP8 KV cache, GQA
    mm, att = m.flops_per_token(2048)
    assert mm == pytest.approx(2 * (70.6e9 - 128256 * 8192)) and att == pytest.approx(4 * 80 * 64 * 128 * 2048)
    for b in (1, 8, 16, 32, 64):
        r = tp.decode(m, b, accelerator=acc, context_tokens=2048)
        assert r.mfu < 0.2 and r.bound == "memory"
        assert r.mfu == pytest.approx(r.flops_per_step / (r.time_per_token_s * 5e15), rel=1e-12)
    cross = tp.mfu_crossing(m, accelerator=acc, context_tokens=2048)
    assert cross is not None and cross > 64
    assert tp.decode(m, cross, accelerator=acc, context_tokens=2048).mfu >= 0.2
    assert tp.decode(m, cross - 1, accelerator=acc, context_tokens=2048).mfu < 0.2


def test_balance_the_pipe_knee_is_where_the_link_meets_the_tier():
    # issue 33: the knee comes from the tier, the reader's bytes in flight over the round
    # trip and the port (tests/test_balance.py); with a reader deep enough and a port wide
    # enough it is the tier's bandwidth over the efficiency
    acc = tp.Accelerator.gb200()
    m = tp.Model.llama3_70b()
    for tier in (tp.MemoryTier.sram_lpu(), tp.MemoryTier.hbm3e(), tp.MemoryTier.lpddr5x()):
        k = tp.balance_bandwidth(m, 1, accelerator=acc, tier=tier, capacity_bytes=2 * m.weight_bytes,
                                 link_efficiency=0.9, port_bytes_per_s=1e15, bytes_in_flight=1e9)
        assert k["knee_bytes_per_s"] == pytest.approx(tier.bandwidth_bytes_per_s / 0.9, rel=1e-12)
        assert k["ceiling"].startswith(f"the {tier.name}")
        more = tp.decode(m, 1, accelerator=acc, tier=tier, capacity_bytes=2 * m.weight_bytes,
                         link_bandwidth_bytes_per_s=4 * k["knee_bytes_per_s"], link_efficiency=0.9).tokens_per_s
        assert more <= k["tokens_per_s_at_knee"] * (1 + 1e-9)


def test_remote_memory_is_only_as_fast_as_the_interconnect(fabrics):
    m = tp.Model.llama3_70b()
    nvl = fabrics["nvl72"]
    ideal = tp.Runtime.ideal()  # the bandwidths alone; the engine's kernel time dilutes the ratios
    local = tp.over_fabric(nvl, m, source="local", runtime=ideal).tokens_per_s
    remote = tp.over_fabric(nvl, m, source="remote", runtime=ideal).tokens_per_s
    assert 2 * nvl.accel_bandwidth_bytes_per_s == pytest.approx(1.8e12)     # NVLink-class, both ways
    assert local / remote == pytest.approx(8e12 / 900e9, rel=1e-6)
    out = tp.rollup(tp.scale_out(72, tp.LinkClass.optical("dsp", lanes=4)))
    far = tp.over_fabric(out, m, source="remote", runtime=ideal).tokens_per_s
    assert local / far == pytest.approx(80.0, rel=1e-6)                     # scale-out: 80x behind
    cal = [tp.over_fabric(f, m, source=s).tokens_per_s for f, s in ((nvl, "local"), (nvl, "remote"), (out, "remote"))]
    assert 1 < cal[0] / cal[1] < local / remote and 10 < cal[0] / cal[2] < local / far


def test_lower_latency_buys_tokens_and_smaller_memories(fabrics):
    acc = tp.Accelerator.gb200()
    m = tp.Model.llama3_70b()
    # decode's all-reduce as inference engines run it on NVLink: one-shot / two-shot kernels on
    # registered buffers (NCCL 2.27 symmetric kernels; NCCL's default path is slower)
    lats = [0.3e-6, 1e-6, 3e-6]
    col = _symmetric(fabrics["nvl72"].collectives)
    rows = tp.latency_value(m, lats, accelerator=acc, collectives=col, target_tokens_per_s=200)
    for t in (8, 72):
        speeds = [r["tokens_per_s"][t] for r in rows]
        assert speeds[0] > speeds[1] > speeds[2]
    # on the roofline TP 72 is latency-bound: 0.3 us hops against 3 us buy about a quarter more
    # tokens (the one-shot kernel's 71 peer posts, software, are the rest of each all-reduce)
    bare = tp.latency_value(m, lats, accelerator=acc, collectives=col, runtime=tp.Runtime.ideal())
    assert bare[0]["tokens_per_s"][72] > 1.2 * bare[2]["tokens_per_s"][72]
    # the engine's kernels add the same time at every latency: the time per token latency saves
    # is the roofline's, and the gain in tokens is diluted
    for t in (8, 72):
        saved = 1 / rows[2]["tokens_per_s"][t] - 1 / rows[0]["tokens_per_s"][t]
        assert saved == pytest.approx(1 / bare[2]["tokens_per_s"][t] - 1 / bare[0]["tokens_per_s"][t], rel=1e-9)
    assert 1.03 < rows[0]["tokens_per_s"][72] / rows[2]["tokens_per_s"][72] < 1.2
    bufs = [r["buffer_bytes"] for r in rows]
    assert bufs == pytest.approx([r["stream_bandwidth_bytes_per_s"] * r["round_trip_s"] for r in rows])
    assert bufs[0] < bufs[1] < bufs[2]
    assert all(r["stream_bandwidth_bytes_per_s"] <= fabrics["nvl72"].accel_bandwidth_bytes_per_s for r in rows)
    mem = [r["memory_per_chip_bytes"] for r in rows]
    assert mem[0] <= mem[1] < mem[2]                                        # a slow fabric caps the spread
    assert rows[2]["tp_range"][1] < rows[0]["tp_range"][1]


def test_moe_decode_pays_its_all_to_alls(fabrics):
    m = tp.Model.deepseek_v3()
    nvl = fabrics["nvl72"]
    d = tp.over_fabric(nvl, m, 8, source="local", tp=8, context_tokens=1024)
    a2a = nvl.collective("all_to_all", 8 * 8 * 7168 * 2 / 8, 8)
    assert d.comm["all_to_all"]["count"] == 2 * 61
    assert d.comm["all_to_all"]["each_s"] == pytest.approx(a2a.time_s, rel=1e-12)
    assert d.comm["all_reduce"]["count"] == 61
    assert d.kv_bytes_per_step == pytest.approx(8 * 1024 * 61 * 576)
    assert d.weight_bytes_per_step == pytest.approx(m.touched_bytes(8))


def test_bad_inputs_are_named():
    with pytest.raises(ConfigError, match="at least one link"):
        lt.one_way([], [])
    with pytest.raises(ConfigError, match="flit_error_ratio"):
        simulate_replay(10, flits=1, flit_ui=512, one_way_ui=10)
    with pytest.raises(ConfigError, match="Collectives.hop"):
        lt.Collectives("x", 1e9, lt.Endpoint(), lt.Software())
    with pytest.raises(ConfigError, match="kernel_s"):
        lt.Software(kernel_s=-1.0)
    assert math.isfinite(lt.md1_wait(0.5, 1e-9).mean_s)
