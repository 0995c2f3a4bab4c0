"""Public decode measurements, the operating point each was taken at, and the fit of the
:class:`~phy.topology.runtime.Runtime` coefficients to a stated TRAINING set.

Each entry of :data:`MEASUREMENTS` is one public figure: engine, hardware, precision,
tensor and expert parallelism, batch, input/output lengths, the measured tokens/s per
sequence, its source, and its set: ``"train"`` (the fit sees it), ``"test"`` (held out:
judged, never fitted) or ``"context"`` (shown for the spread, another regime or a weak
source). :func:`fit` solves for the three fitted coefficients from the training rows
alone; :func:`fitted` caches its answer for the presets; :func:`rows` predicts every row.

The decode step is modelled at the mean context of the generation, ``ISL + OSL / 2``.
The fabric is an HGX board's (:func:`phy.topology.hgx8`): NVLink4 with four switch chips
for H100/H200, NVLink5 with two for B200.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["FITTED", "MEASUREMENTS", "fit", "fitted", "operating_point", "predict", "rows"]

#: The coefficients the fit solves for.
FITTED = ("hbm_fraction", "layer_s", "moe_expert_s_sglang", "moe_expert_s_trtllm", "step_s_vllm")

_NV_BLOG_MEDUSA = ("NVIDIA technical blog 'Low Latency Inference Chapter 1: up to 1.9x higher Llama 3.1 "
                   "performance with Medusa on HGX H200' (2024): Medusa 268 tok/s/user for 70B at >1.5x, 108 for "
                   "405B at 1.9x; without Medusa 268/1.53 and 108/1.9")

#: One public measurement per entry (tokens/s per sequence, output tokens).
MEASUREMENTS = (
    dict(id="trtllm-h200x8-70b", set="train", area="decode", engine="trtllm", gpu="h200", model="llama3-70b",
         precision="fp8", tp=8, ep=None, batch=1, isl=1000, osl=1000, measured=175.0,
         source=_NV_BLOG_MEDUSA + "; issue 33 reads ~175", note="ISL/OSL not stated; 1000/1000 assumed"),
    dict(id="trtllm-h200x1-70b", set="train", area="decode", engine="trtllm", gpu="h200", model="llama3-70b",
         precision="fp8", tp=1, ep=None, batch=1, isl=1000, osl=1000, measured=51.14,
         source="NVIDIA technical blog 'Boost Llama 3.3 70B inference throughput 3x with TensorRT-LLM speculative "
                "decoding' (Dec 2024): no draft model 51.14 tok/s on H200",
         note="one H200 (the companion 3.6x blog runs the 70B target on one GPU); ISL/OSL not stated"),
    dict(id="sglang-h200x8-dsv3-b1", set="train", area="decode", engine="sglang-2024", gpu="h200",
         model="deepseek-v3", precision="fp8", tp=8, ep=1, batch=1, isl=128, osl=256, measured=30.29,
         source="sgl-project/sglang PR 2643 (v0.4.1.post2, Dec 2024): batch 1, in 128, out 256: 30.29 token/s",
         note="8 GPUs, H200 implied: 671 GB of FP8 weights do not fit 8 x 80 GB; experts tensor-parallel"),
    dict(id="trtllm-h200x8-405b", set="test", area="decode", engine="trtllm", gpu="h200", model="llama3-405b",
         precision="fp8", tp=8, ep=None, batch=1, isl=1000, osl=1000, measured=108.0 / 1.9,
         source=_NV_BLOG_MEDUSA, note="ISL/OSL not stated; 1000/1000 assumed"),
    dict(id="sglang-h200x8-dsv3-b8", set="test", area="decode", engine="sglang-2024", gpu="h200",
         model="deepseek-v3", precision="fp8", tp=8, ep=1, batch=8, isl=128, osl=256, measured=206.32 / 8,
         source="sgl-project/sglang PR 2643: batch 8, in 128, out 256: 206.32 token/s (per sequence / 8)", note=""),
    dict(id="sglang-h200x8-dsv3-b32", set="test", area="decode", engine="sglang-2024", gpu="h200",
         model="deepseek-v3", precision="fp8", tp=8, ep=1, batch=32, isl=128, osl=256, measured=760.52 / 32,
         source="sgl-project/sglang PR 2643: batch 32, in 128, out 256: 760.52 token/s (per sequence / 32)", note=""),
    dict(id="sglang-h200x8-dsv3-1k", set="test", area="decode", engine="sglang-2024", gpu="h200",
         model="deepseek-v3", precision="fp8", tp=8, ep=1, batch=1, isl=1024, osl=1024, measured=26.0,
         source="vllm-project/vllm issue 11539 (2025-01-10, lhl): SGLang bs=1 'around 26 tok/s', random 1024/1024",
         note="AWS host (ip-10-1-1-135), 8 x H200 assumed (the model needs > 640 GB)"),
    dict(id="trtllm-b200x8-dsr1-base", set="train", area="decode", engine="trtllm", gpu="b200",
         model="deepseek-r1-nvfp4", precision="fp4", tp=8, ep=8, batch=1, isl=1024, osl=2048, measured=67.0,
         source="NVIDIA/TensorRT-LLM tech blog 1 'Pushing latency boundaries: DeepSeek-R1 on B200': baseline CUDA "
                "graph + EP8TP8, 67 TPS/user; ISL 1k, OSL 2k; NVFP4 experts, BF16 attention", note=""),
    dict(id="trtllm-b200x8-dsr1-nomtp", set="test", area="decode", engine="trtllm", gpu="b200",
         model="deepseek-r1-nvfp4", precision="fp4", tp=8, ep=4, batch=1, isl=1024, osl=2048, measured=111.0,
         source="NVIDIA/TensorRT-LLM tech blog 1: 'Without MTP' 111 TPS/user (MTP table; MTP 3 is the 253 of the "
                "EP4TP2 row)", note="optimised kernels (fused GEMMs, PDL, multi-stream)"),
    dict(id="vllm-b200x4-70b-bf16", set="test", area="decode", engine="vllm", gpu="b200", model="llama3-70b-bf16",
         precision="bf16", tp=4, ep=None, batch=1, isl=1000, osl=1000, measured=1 / 12.9e-3,
         source="issue 33: 'vLLM measures 12.9 ms per output token for 70B BF16 on B200 TP4' (the vLLM page itself "
                "was not re-located)", note="ISL/OSL not stated; 1000/1000 assumed"),
    dict(id="nim-h100x2-70b-5000-500-c1", set="test", area="decode", engine="trtllm", gpu="h100",
         model="llama3-70b", precision="fp8", tp=2, ep=None, batch=1, isl=5000, osl=500, measured=1 / 18.58e-3,
         source="NVIDIA NIM LLM benchmarking docs (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance): "
                "Llama-3.3-70b-instruct NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5000/500, concurrency 1: ITL 18.58 ms",
         note="NIM runs TensorRT-LLM"),
    dict(id="nim-h100x2-70b-500-2000-c1", set="test", area="decode", engine="trtllm", gpu="h100",
         model="llama3-70b", precision="fp8", tp=2, ep=None, batch=1, isl=500, osl=2000, measured=1 / 18.91e-3,
         source="NVIDIA NIM LLM benchmarking docs: same, 500/2000, concurrency 1: ITL 18.91 ms", note=""),
    dict(id="nim-h100x2-70b-5000-500-c5", set="test", area="decode", engine="trtllm", gpu="h100",
         model="llama3-70b", precision="fp8", tp=2, ep=None, batch=5, isl=5000, osl=500, measured=1 / 21.83e-3,
         source="NVIDIA NIM LLM benchmarking docs: same, 5000/500, concurrency 5: ITL 21.83 ms",
         note="concurrency 5 taken as batch 5; in-flight batching: the other 4 requests' prefills interleave",
         inflight=True),
    dict(id="vllm-h200x4-70b-b8", set="train", area="decode", engine="vllm", gpu="h200", model="llama3-70b-bf16",
         precision="bf16", tp=4, ep=None, batch=8, isl=32, osl=128, measured=128 / 2.07753,
         source="vLLM performance benchmark (buildkite.com/vllm/performance-benchmark/builds/9515): "
                "latency_llama70B_tp4, H200, batch 8, in 32, out 128: mean latency 2077.53 ms",
         note="end-to-end latency / 128 output tokens (the 32-token prefill included); BF16 assumed (vLLM's default)"),
    dict(id="vllm-h200x2-mixtral-b8", set="test", area="decode", engine="vllm", gpu="h200", model="mixtral-8x7b",
         precision="bf16", tp=2, ep=1, batch=8, isl=32, osl=128, measured=128 / 1.91744,
         source="vLLM performance benchmark build 9515: latency_mixtral8x7B_tp2, H200, batch 8, in 32, out 128: "
                "mean latency 1917.44 ms", note="experts tensor-parallel (vLLM's default); BF16 assumed"),
    dict(id="trtllm-h100x4-llama2-70b-prefill128", set="context", area="forward", engine="trtllm", gpu="h100",
         model="llama2-70b", precision="fp8", tp=4, ep=None, batch=128, isl=0, osl=128, measured=1 / 26e-3 * 128,
         source="NVIDIA/TensorRT-LLM docs/source/performance.md (v0.5, Oct 2023): first-token latency 26 ms, batch 1, "
                "input 128, TP4, H100 FP8",
         note="a 128-token forward pass modelled as a step of 128 rows at context 64; tokens/s = 128 / latency; "
              "2023 software"),
    dict(id="trtllm-h100x4-llama2-70b-b480", set="context", area="decode", engine="trtllm", gpu="h100",
         model="llama2-70b", precision="fp8", tp=4, ep=None, batch=480, isl=128, osl=2048, measured=1486 * 4 / 480,
         source="NVIDIA/TensorRT-LLM docs/source/performance.md (v0.6.1, Dec 2023): 1,486 out tok/s/GPU, batch 480, "
                "TP4, 128/2048, H100 FP8", note="static batching, prefill included; 2023 software"),
    dict(id="trtllm-h100x2-llama2-70b-b64", set="context", area="decode", engine="trtllm", gpu="h100",
         model="llama2-70b", precision="fp8", tp=2, ep=None, batch=64, isl=2048, osl=2048, measured=547 * 2 / 64,
         source="NVIDIA/TensorRT-LLM docs/source/performance.md (v0.6.1): 547 out tok/s/GPU, batch 64, TP2, "
                "2048/2048, H100 FP8", note="static batching, prefill included; 2023 software"),
)


def _model(name: str):
    from .model import Model

    if name == "llama3-70b":
        return Model.llama3_70b()
    if name == "llama3-70b-bf16":
        return Model.llama3_70b(bytes_per_param=2.0, precision="bf16")
    if name == "llama3-405b":
        return Model.llama3_405b()
    if name == "llama2-70b":
        # Llama 2 70B (Meta's config.json): 68.98 B parameters, 80 layers, d 8192, 64/8 heads, vocabulary 32,000
        return Model.dense("llama2-70b", 68.98e9, 80, d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128,
                           vocab=32000)
    if name == "mixtral-8x7b":
        # Mixtral 8x7B (its config.json and paper): 46.7 B parameters, 12.9 B active, 8 experts, top 2,
        # 32 layers, d 4096, 32/8 heads of 128, vocabulary 32,000; BF16
        return Model.moe("mixtral-8x7b", 46.7e9, 12.9e9, 8, 2, 32, 2.0, "bf16", d_model=4096, n_heads=32,
                         n_kv_heads=8, head_dim=128, vocab=32000, kv_bytes=2.0)
    if name == "deepseek-v3":
        return Model.deepseek_v3()
    if name == "deepseek-r1-nvfp4":
        # TensorRT-LLM's min-latency recipe: BF16 attention and shared weights, NVFP4 experts, FP8 KV cache
        return Model.deepseek_v3(bytes_per_param=2.0, precision="fp4", expert_bytes_per_param=0.5625)
    raise KeyError(name)


def _accelerator(gpu: str):
    from .parts import Accelerator

    return {"h100": Accelerator.h100, "h200": Accelerator.h200, "b200": Accelerator.b200}[gpu]()


@lru_cache(maxsize=4)
def _collectives(board: str):
    """An HGX board's collectives (rolled up once per process)."""
    from .builders import hgx8, scale_up_copper
    from .parts import Accelerator, SwitchAsic
    from .rollup import rollup

    if board == "hopper":
        topo = hgx8(scale_up_copper(2, 106.25e9), accelerator=Accelerator.h200(), asic=SwitchAsic.nvlink4(),
                    n_switches=4)
    else:
        topo = hgx8(accelerator=Accelerator.b200())
    return rollup(topo).collectives


def _runtime(engine: str, coef: dict):
    from .runtime import Runtime

    base = {"trtllm": (7, 13, coef["moe_expert_s_trtllm"], 0.0),
            "vllm": (10, 22, coef["moe_expert_s_trtllm"], coef["step_s_vllm"]),
            "sglang-2024": (10, 22, coef["moe_expert_s_sglang"], 0.0)}
    kd, km, moe, step = base[engine]
    return Runtime(engine, coef["hbm_fraction"], 0.7, 16, kd, km, True, coef["layer_s"], moe, step)


def operating_point(m: dict, coef: dict) -> dict:
    """The :func:`phy.topology.decode` arguments of measurement ``m`` under ``coef``."""
    model = _model(m["model"])
    acc = _accelerator(m["gpu"])
    ctx = int(m["isl"] + m["osl"] / 2) if m["area"] == "decode" else m["osl"] // 2
    kw = dict(model=model, batch=m["batch"], accelerator=acc, tp=m["tp"], context_tokens=ctx,
              runtime=_runtime(m["engine"], coef), capacity_bytes=1e30)
    if m["ep"] is not None:
        kw["ep"] = m["ep"]
    if m["tp"] > 1 or (model.experts is not None and (m["ep"] or m["tp"]) > 1):
        kw["collectives"] = _collectives("blackwell" if m["gpu"] == "b200" else "hopper")
    return kw


def prefill_s(model, accelerator, tp: int, isl: int, runtime) -> float:
    """One request's prefill of ``isl`` tokens (s): its matrix products and causal
    attention at the runtime's large-GEMM fraction of the peak, or its weights read once,
    whichever is longer."""
    mm, _ = model.flops_per_token(0)
    att = 4.0 * model.layers * (model.n_heads or 0) * (model.head_dim or 0) * isl / 2
    flops = isl * (mm + att)
    return max(flops / (tp * runtime.gemm_fraction * accelerator.flops_at(model.precision)),
               model.weight_bytes / (tp * runtime.hbm_fraction * accelerator.memory.bandwidth_bytes_per_s))


def predict(m: dict, coef: dict) -> float:
    """Our tokens/s per sequence (a forward row: tokens/s of the pass) at ``m``'s point.
    Under in-flight batching (``inflight``), a request's steps also carry the other
    ``batch - 1`` requests' prefills, each once per ``osl`` steps: ``(B - 1) / osl``
    prefills per step."""
    from .decode import decode

    kw = operating_point(m, coef)
    model, B = kw.pop("model"), kw.pop("batch")
    r = decode(model, B, **kw)
    if m["area"] != "decode":
        return r.aggregate_tokens_per_s
    t = r.time_per_token_s
    if m.get("inflight"):
        t += (B - 1) / m["osl"] * prefill_s(model, kw["accelerator"], m["tp"], m["isl"], kw["runtime"])
    return 1.0 / t


def fit(training=None) -> dict:
    """Solve for :data:`FITTED` from the training rows (default: every ``"train"`` row of
    :data:`MEASUREMENTS`): least squares on the log of our time over the measured time,
    bounded (``hbm_fraction`` in [0.3, 1], per-layer and per-expert costs in [0, 1 ms],
    the host step in [0, 100 ms]). Returns the coefficients
    and the training residuals."""
    from scipy.optimize import least_squares

    train = [m for m in MEASUREMENTS if m["set"] == "train"] if training is None else list(training)
    if not train:
        raise ValueError("fit needs at least one training measurement")

    def coef_of(x):
        return {"hbm_fraction": x[0], "layer_s": x[1] * 1e-6, "moe_expert_s_sglang": x[2] * 1e-6,
                "moe_expert_s_trtllm": x[3] * 1e-6, "step_s_vllm": x[4] * 1e-6}

    def resid(x):
        c = coef_of(x)
        return np.array([np.log(predict(m, c) / m["measured"]) for m in train])

    sol = least_squares(resid, x0=[0.8, 20.0, 1.0, 1.0, 1000.0],
                        bounds=([0.3, 0, 0, 0, 0], [1.0, 1000.0, 1000.0, 1000.0, 100000.0]),
                        xtol=1e-12, ftol=1e-12, gtol=1e-12)
    out = coef_of(sol.x)
    out["training"] = tuple(m["id"] for m in train)
    out["max_abs_log_residual"] = float(np.max(np.abs(sol.fun)))
    return out


@lru_cache(maxsize=1)
def fitted() -> dict:
    """:func:`fit` on the training rows, once per process."""
    return fit()


def rows(coef: dict | None = None) -> list[dict]:
    """Every measurement with our figure (``ours``, ``ratio`` = ours / measured)."""
    c = fitted() if coef is None else coef
    out = []
    for m in MEASUREMENTS:
        ours = predict(m, c)
        out.append({"area": m["area"], "case": f"{m['model']} {m['precision']} {m['gpu']} x{m['tp']} "
                                              f"{m['engine']} b{m['batch']} {m['isl']}/{m['osl']}",
                    "source": m["source"], "measured": float(m["measured"]), "ours": float(ours),
                    "unit": "tok/s/seq" if m["area"] == "decode" else "tok/s", "ratio": float(ours / m["measured"]),
                    "set": m["set"], "id": m["id"], "note": m["note"]})
    return out
