"""The calibrated decode model (issue 33): each term's physics, the fit reproducing its
coefficients from the training set alone, and the held-out measurements within 30 %."""

import math

import pytest

from phy import topology as tp
from phy.errors import ConfigError
from phy.topology import calibration as cal
from phy.topology.runtime import (FITTED_COEFFICIENTS, KERNEL_EAGER_S, KERNEL_GRAPH_S, STREAM_FRACTION,
                                  busiest_group_experts)

H200 = tp.Accelerator.h200()
M70 = tp.Model.llama3_70b()


@pytest.fixture(scope="module")
def fit():
    return cal.fit()


@pytest.fixture(scope="module")
def rows(fit):
    return cal.rows(fit)


def test_presets_carry_sourced_specs():
    h100, b200 = tp.Accelerator.h100(), tp.Accelerator.b200()
    assert h100.memory.bandwidth_bytes_per_s == 3.35e12 and h100.memory.capacity_bytes == 80e9
    assert b200.memory.bandwidth_bytes_per_s == 8e12 and b200.memory.capacity_bytes == 180e9
    assert b200.flops_at("fp4") == 2 * b200.flops_at("fp8") == 4 * b200.flops_at("bf16")
    assert h100.flops_at("fp8") == H200.flops_at("fp8")                     # same Hopper die
    assert tp.Accelerator.gb200().memory.bandwidth_bytes_per_s == 8e12       # kept working


def test_the_fit_reproduces_its_coefficients_from_the_training_set_alone(fit):
    assert set(fit["training"]) == {m["id"] for m in cal.MEASUREMENTS if m["set"] == "train"}
    for k in cal.FITTED:
        assert fit[k] == pytest.approx(FITTED_COEFFICIENTS[k], rel=2e-3), k
    assert fit["max_abs_log_residual"] < 1e-6                              # as many unknowns as rows
    # the fitted bandwidth fraction is physical: under what a STREAM triad reaches
    assert 0.6 < fit["hbm_fraction"] < STREAM_FRACTION
    # refitting without a row changes the answer: the fit uses its rows, nothing else
    fewer = cal.fit([m for m in cal.MEASUREMENTS if m["set"] == "train" and m["id"] != "trtllm-h200x1-70b"])
    assert fewer["hbm_fraction"] != pytest.approx(fit["hbm_fraction"], rel=1e-3)


def test_held_out_measurements_within_30_percent(rows):
    test = [r for r in rows if r["set"] == "test"]
    good = [r for r in test if 1 / 1.3 <= r["ratio"] <= 1.3]
    assert len(test) >= 5
    # the dense 405B and the MoE batch sweep were never fitted and land within 30 %
    for rid in ("trtllm-h200x8-405b", "sglang-h200x8-dsv3-b8", "sglang-h200x8-dsv3-b32", "sglang-h200x8-dsv3-1k"):
        r = next(r for r in rows if r["id"] == rid)
        assert 1 / 1.3 <= r["ratio"] <= 1.3, (rid, r["ratio"])
    # issue 33's target: at least 8 public measurements never fitted, within 30 %, over H100, H200 and B200,
    # dense 70B and 405B and two mixtures of experts
    assert len(good) >= 8, [(r["id"], round(r["ratio"], 2)) for r in test]
    assert {r["case"].split()[2] for r in good} >= {"h100", "h200", "b200"}
    assert {r["case"].split()[0] for r in good} >= {"llama3-70b", "llama3-405b", "deepseek-v3", "mixtral-8x7b"}
    assert all(r["ratio"] == pytest.approx(1.0, abs=1e-6) for r in rows if r["set"] == "train")


def test_calibrated_decode_is_slower_than_the_roofline_and_says_why():
    ideal = tp.decode(M70, 1, accelerator=H200, runtime=tp.Runtime.ideal())
    cal_ = tp.decode(M70, 1, accelerator=H200)
    assert cal_.runtime == "trtllm" and ideal.overhead_s == 0.0
    assert ideal.memory_s == pytest.approx(M70.weight_bytes / 4.8e12, rel=1e-12)
    assert cal_.memory_s == pytest.approx(M70.weight_bytes / (FITTED_COEFFICIENTS["hbm_fraction"] * 4.8e12),
                                          rel=1e-12)
    rt = tp.Runtime.trtllm()
    assert cal_.overhead_s == pytest.approx(80 * (7 * KERNEL_GRAPH_S + rt.layer_s), rel=1e-12)
    assert cal_.time_per_token_s == pytest.approx(cal_.memory_s + cal_.overhead_s, rel=1e-12)


def test_overhead_scales_with_layers_and_kernels():
    rt = tp.Runtime("x", kernels_dense=10, layer_s=5e-6)
    assert rt.overhead_s(80, 0) == pytest.approx(2 * rt.overhead_s(40, 0))
    assert rt.with_(kernels_dense=20).overhead_s(80, 0) - rt.overhead_s(80, 0) == pytest.approx(
        80 * 10 * KERNEL_GRAPH_S)
    m405 = tp.Model.llama3_405b()
    a = tp.decode(M70, 1, accelerator=H200, runtime=rt, capacity_bytes=1e30)
    b = tp.decode(m405, 1, accelerator=H200, runtime=rt, capacity_bytes=1e30)
    assert b.overhead_s / a.overhead_s == pytest.approx(126 / 80)


def test_cuda_graphs_remove_launch_cost():
    eager, graph = tp.Runtime.trtllm(cuda_graphs=False), tp.Runtime.trtllm()
    assert KERNEL_EAGER_S > KERNEL_GRAPH_S
    e = tp.decode(M70, 1, accelerator=H200, runtime=eager)
    g = tp.decode(M70, 1, accelerator=H200, runtime=graph)
    assert e.overhead_s - g.overhead_s == pytest.approx(80 * 7 * (KERNEL_EAGER_S - KERNEL_GRAPH_S), rel=1e-12)
    assert g.tokens_per_s > e.tokens_per_s


def test_gemm_efficiency_rises_with_batch():
    rt = tp.Runtime.trtllm()
    eff = [rt.gemm_efficiency(m) for m in (1, 4, 8, 16, 17, 64, 256)]
    assert eff[0] < eff[1] < eff[2] < eff[3] == pytest.approx(rt.gemm_fraction)
    assert eff[4] < eff[3] and eff[5] == eff[6] == pytest.approx(rt.gemm_fraction)
    # a batch-1 step pays 16 rows of tensor-core work for one
    d = tp.decode(M70, 1, accelerator=H200, runtime=rt)
    mm, _ = M70.flops_per_token(0)
    assert d.compute_s == pytest.approx(16 * mm / (rt.gemm_fraction * H200.flops_at("fp8")), rel=1e-12)
    # and at large batch the step leaves the memory roof later than the bare roofline says
    ideal = tp.mfu_crossing(M70, 0.2, accelerator=H200, context_tokens=1024, runtime=tp.Runtime.ideal())
    real = tp.mfu_crossing(M70, 0.2, accelerator=H200, context_tokens=1024)
    assert ideal is not None and (real is None or real > ideal)


def test_attention_grows_with_context_and_latent_cache_is_read_whole():
    short = tp.decode(M70, 8, accelerator=H200, context_tokens=1000)
    long = tp.decode(M70, 8, accelerator=H200, context_tokens=32000)
    assert long.memory_s - short.memory_s == pytest.approx(
        8 * 31000 * M70.kv_per_token_bytes / (FITTED_COEFFICIENTS["hbm_fraction"] * 4.8e12), rel=1e-9)
    # grouped-query heads split over at most n_kv accelerators; a latent head is read by each
    col = cal._collectives("hopper")
    ds = tp.Model.deepseek_v3()
    d = tp.decode(ds, 1, accelerator=H200, tp=8, ep=1, context_tokens=4096, collectives=col)
    assert d.kv_bytes_per_accelerator == pytest.approx(4096 * 61 * 576)
    g = tp.decode(M70, 1, accelerator=H200, tp=8, context_tokens=4096, collectives=col)
    assert g.kv_bytes_per_accelerator == pytest.approx(4096 * M70.kv_per_token_bytes / 8)


def test_moe_expert_touch_and_busiest_group():
    # one group: the expected number of experts touched
    assert busiest_group_experts(256, 8, 1, 1) == pytest.approx(8.0)
    assert busiest_group_experts(256, 8, 32, 1) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 32))
    # eight groups at batch 1: the busiest holds more than the mean of one, and at most 8
    b = busiest_group_experts(256, 8, 1, 8)
    assert 1.0 < b < 8.0
    # exact for a tiny case: 2 experts, 2 groups of one, p = 1/2: E[max] = 3/4
    assert busiest_group_experts(2, 1, 1, 2) == pytest.approx(0.75)
    ds = tp.Model.deepseek_v3()
    col = cal._collectives("hopper")
    kw = dict(accelerator=H200, tp=8, collectives=col, runtime=tp.Runtime.ideal())
    w = [tp.decode(ds, B, ep=1, **kw).weight_bytes_per_accelerator for B in (1, 8, 32)]
    assert w[0] < w[1] < w[2]                                               # more experts touched
    ep8 = tp.decode(ds, 1, ep=8, **kw).weight_bytes_per_accelerator
    assert ep8 > w[0]                                                       # whole experts, unevenly placed
    assert ep8 - ds.shared_bytes / 8 == pytest.approx(ds.moe_layers * b * ds.expert_bytes, rel=1e-9)


def test_moe_layers_pay_the_fitted_routing_cost():
    ds = tp.Model.deepseek_v3()
    col = cal._collectives("hopper")
    s = tp.decode(ds, 1, accelerator=H200, tp=8, ep=1, collectives=col, runtime=tp.Runtime.sglang_2024())
    i = tp.decode(ds, 1, accelerator=H200, tp=8, ep=1, collectives=col, runtime=tp.Runtime.ideal())
    assert s.overhead_s >= 58 * 256 * FITTED_COEFFICIENTS["moe_expert_s_sglang"]
    # the routing cost grows with the experts a layer routes over, not with the bytes
    rt = tp.Runtime.sglang_2024()
    assert rt.overhead_s(0, 58, 256) - rt.overhead_s(0, 58, 8) == pytest.approx(58 * 248 * rt.moe_expert_s)
    assert s.tokens_per_s < i.tokens_per_s / 10                             # software, not bytes, sets it
    # the batch-1 step's bytes alone would give over 10x the measured 30 tok/s
    assert 1 / (i.memory_s + i.comm_s) > 10 * 30.29


def test_vllm_pays_its_host_step_once_per_step():
    v = tp.Runtime.vllm()
    assert v.step_s == FITTED_COEFFICIENTS["step_s_vllm"] and tp.Runtime.trtllm().step_s == 0.0
    assert v.overhead_s(80) - v.with_(step_s=0.0).overhead_s(80) == pytest.approx(v.step_s)
    a = tp.decode(M70, 1, accelerator=H200, runtime=v)
    b = tp.decode(M70, 1, accelerator=H200, runtime=v.with_(step_s=0.0))
    assert a.time_per_token_s - b.time_per_token_s == pytest.approx(v.step_s, rel=1e-9)


def test_runtime_validation():
    with pytest.raises(ConfigError, match="hbm_fraction"):
        tp.Runtime("x", hbm_fraction=1.5)
    with pytest.raises(ConfigError, match="runtime"):
        tp.decode(M70, 1, accelerator=H200, runtime="trtllm")
    with pytest.raises(ConfigError, match="cuda_graphs"):
        tp.Runtime("x", cuda_graphs=1)
    assert math.isfinite(tp.decode(M70, 1, accelerator=H200, runtime=tp.Runtime.vllm(False)).tokens_per_s)
