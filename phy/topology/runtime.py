"""What an inference engine adds to the decode roofline: the HBM bandwidth its weight
stream achieves, the kernels each layer launches and what each costs, small-batch GEMM
efficiency, and a mixture of experts' routing and expert imbalance (:class:`Runtime`).

One decode step on one accelerator of a group of ``tp`` (:func:`phy.topology.decode`):

* **Weights and KV cache**: ``bytes / (f_bw BW)``, ``f_bw`` the fraction of the peak HBM
  bandwidth a weight-streaming GEMV and the attention kernel achieve (fitted,
  :mod:`phy.topology.calibration`; a STREAM triad reaches 0.92-0.95, the bound the fit
  must stay under, :data:`STREAM_FRACTION`). A multi-head latent attention cache (one
  latent head) is read whole by every accelerator; grouped-query attention splits its
  ``n_kv`` heads over at most ``n_kv`` of them.
* **Matrix products**: ``FLOPs (M_pad / M) / (f_gemm F)``: a tensor-core MMA works on
  at least ``m_tile`` rows (PTX ``mma.sync`` m16n8k*: 16), so a GEMM of ``M`` tokens costs
  what ``M_pad = ceil(M / m_tile) m_tile`` cost: efficiency rises with the batch, to
  ``f_gemm`` of the peak.
* **Kernels**: each layer launches ``kernels`` kernels (counted from the engine's layer:
  norms, GEMMs, attention, activation; the collectives are timed apart), each at least
  :data:`KERNEL_GRAPH_S` when replayed from a CUDA graph, :data:`KERNEL_EAGER_S` when
  launched one by one; plus ``layer_s`` per layer, what a real layer loses beyond the
  bare kernels (dependent-kernel gaps, partial waves; fitted).
* **Mixture of experts**: the routed experts a step touches, ``E (1 - (1 - k/E)^B)``,
  spread over ``ep`` expert groups: the busiest group sets the time (the expected
  maximum of the groups' binomial loads, :func:`busiest_group_experts`); plus
  ``moe_expert_s`` per expert and MoE layer: routing over ``E`` experts, sorting and
  padding the tokens to each expert's block, and a grouped GEMM whose launch grid spans
  every expert's padded block (vLLM/SGLang ``moe_align_block_size`` pads to
  ``E (BLOCK_M - 1)`` rows), all of which grow with ``E``, not with the bytes (fitted per
  engine where a public measurement exists).
* **Why DeepSeek-V3 decodes at 30 tok/s, not 700, at batch 1** (SGLang, 8 x H200): its
  bytes take 1.1 ms a step; SGLang's own batch 8 and 32 steps (PR 2643) grow by what the
  extra experts' bytes cost, so the other ~31 ms are fixed per step: 58 MoE layers of
  routing and grouped-GEMM machinery over 256 experts (1.9 us per expert and layer,
  fitted), beside 61 layers of ~22 kernels. The held-out batch 8 and 32 rows land within
  6 % of SGLang's figures on the expert-touch physics alone.
* **Host**: ``step_s`` per step, what the engine's scheduler and sampler add between GPU
  steps when it does not overlap them (vLLM's, fitted; 0 for TensorRT-LLM's C++ runtime
  and SGLang's overlap scheduler).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["FITTED_COEFFICIENTS", "KERNEL_EAGER_S", "KERNEL_GRAPH_S", "STREAM_FRACTION", "Runtime",
           "busiest_group_experts"]

#: A small kernel's floor on an H200, back to back: 1.31 us inside a CUDA graph, 2.46 us
#: launched one by one (RRZE-HPC/gpu-benches ``gpu-small-kernels/h200_graph.txt`` and
#: ``h200.txt``: 10,000 SCALE kernels of 64 kB reach 49 and 26 GB/s; 64 kB / 49 GB/s and
#: 64 kB / 26 GB/s).
KERNEL_GRAPH_S = 64e3 / 49e9
KERNEL_EAGER_S = 64e3 / 26e9

#: The fraction of peak HBM bandwidth a STREAM triad reaches: 0.92 on H100 PCIe
#: (1,832 of 2,000 GB/s) and 0.95 on GH200 (3,783 of 4,000 GB/s) (RRZE-HPC/gpu-benches
#: ``gpu-stream/h100_pcie.txt``, ``gh200.txt``, full occupancy). No engine's weight stream
#: can beat it.
STREAM_FRACTION = 0.95

#: What :func:`phy.topology.calibration.fit` returns on its training rows (4 public
#: measurements: TensorRT-LLM Llama 3 70B FP8 on 8 and on 1 H200, SGLang DeepSeek-V3
#: batch 1 on 8 H200, TensorRT-LLM DeepSeek-R1 on 8 B200), kept here so a decode does not
#: refit; ``tests/test_decode_calibration.py`` refits and checks them.
FITTED_COEFFICIENTS = {"hbm_fraction": 0.9030, "layer_s": 30.97e-6, "moe_expert_s_sglang": 1.886e-6,
                       "moe_expert_s_trtllm": 0.7036e-6, "step_s_vllm": 4.051e-3}


@dataclass(frozen=True)
class Runtime:
    """An inference engine's costs on top of the roofline (see the module docstring).

    Parameters
    ----------
    name : str
    hbm_fraction : float
        Fraction of the peak HBM bandwidth the weight and KV stream achieves (0-1].
    gemm_fraction : float
        Fraction of the peak FLOP/s a large GEMM reaches (0-1].
    m_tile : int
        Rows an MMA instruction works on; a GEMM's rows are padded to it.
    kernels_dense, kernels_moe : int
        Kernels a dense layer and a mixture-of-experts layer launch (collectives apart).
    cuda_graphs : bool
        Kernels replayed from a CUDA graph (:data:`KERNEL_GRAPH_S` each) or launched one
        by one (:data:`KERNEL_EAGER_S`).
    layer_s : float
        Time each layer loses beyond its bare kernels (s).
    moe_expert_s : float
        Routing, sorting and grouped-GEMM fixed cost per expert and MoE layer (s).
    step_s : float
        Host time per step not overlapped with the GPU (s).
    custom_all_reduce : bool
        The engine runs its tensor-parallel all-reduces as its own one-shot and two-shot
        kernels over peer-registered buffers (TensorRT-LLM's ``customAllReduceKernels``,
        vLLM's ``custom_all_reduce.cuh``, which SGLang reuses), the class of NCCL 2.27's
        symmetric-memory kernels: the collectives run with ``Software.symmetric``. False:
        NCCL's default path (ring LL at a decode's sizes, about 13 us on 8 GPUs).
    source : str
        Where the figures come from.
    """

    name: str
    hbm_fraction: float = 1.0
    gemm_fraction: float = 1.0
    m_tile: int = 1
    kernels_dense: int = 0
    kernels_moe: int = 0
    cuda_graphs: bool = True
    layer_s: float = 0.0
    moe_expert_s: float = 0.0
    step_s: float = 0.0
    source: str = ""
    custom_all_reduce: bool = True

    def __post_init__(self):
        number(self.hbm_fraction, f"Runtime {self.name!r} hbm_fraction", positive=True, hi=1.0)
        number(self.gemm_fraction, f"Runtime {self.name!r} gemm_fraction", positive=True, hi=1.0)
        integer(self.m_tile, f"Runtime {self.name!r} m_tile", 1, 4096)
        integer(self.kernels_dense, f"Runtime {self.name!r} kernels_dense", 0, 10_000)
        integer(self.kernels_moe, f"Runtime {self.name!r} kernels_moe", 0, 10_000)
        if not isinstance(self.cuda_graphs, bool):
            raise ConfigError(f"Runtime {self.name!r} cuda_graphs must be True or False, got {self.cuda_graphs!r}")
        number(self.layer_s, f"Runtime {self.name!r} layer_s", nonneg=True, hi=1.0)
        number(self.moe_expert_s, f"Runtime {self.name!r} moe_expert_s", nonneg=True, hi=1.0)
        number(self.step_s, f"Runtime {self.name!r} step_s", nonneg=True, hi=10.0)
        if not isinstance(self.custom_all_reduce, bool):
            raise ConfigError(f"Runtime {self.name!r} custom_all_reduce must be True or False, "
                              f"got {self.custom_all_reduce!r}")

    # ------------------------------------------------------------------ presets
    @classmethod
    def ideal(cls) -> Runtime:
        """The bare roofline: peak bandwidth and FLOP/s, no kernel or launch cost."""
        return cls("ideal", source="roofline: peak HBM bandwidth and FLOP/s, no kernel cost")

    @classmethod
    def trtllm(cls, cuda_graphs: bool = True) -> Runtime:
        """TensorRT-LLM's decode (the default). A dense Llama layer launches 7 kernels:
        fused RMSNorm+quantise, QKV GEMM, RoPE and KV-cache write, attention, O GEMM,
        gate-up GEMM with SwiGLU fused, down GEMM (its FP8 fused gated-MLP plugin; the
        all-reduce fuses the residual add and the next norm). A DeepSeek MoE layer
        launches 13 (the TensorRT-LLM DeepSeek-R1 min-latency blog's module list: fused A
        GEMM, 2 RMSNorms, UQ_QR GEMM, UK BGEMM, RoPE+cache, attention, UV GEMM, O GEMM,
        router GEMM and top-k, shared expert, grouped GEMM pair). ``hbm_fraction`` and
        ``layer_s`` are fitted (:func:`phy.topology.calibration.fit`), ``moe_expert_s`` to its
        B200 DeepSeek-R1 baseline (67 tok/s/user); ``gemm_fraction``
        0.7: cuBLAS-class FP8/BF16 GEMMs on Hopper reach about 70 % of the dense peak
        (the fraction is an assumption, not fitted: no training point is compute-bound)."""
        c = FITTED_COEFFICIENTS
        return cls("trtllm", c["hbm_fraction"], 0.7, 16, 7, 13, bool(cuda_graphs), c["layer_s"], c["moe_expert_s_trtllm"], 0.0,
                   "kernel counts from TensorRT-LLM's layers; hbm_fraction, layer_s fitted "
                   "(phy.topology.calibration)")

    @classmethod
    def vllm(cls, cuda_graphs: bool = True) -> Runtime:
        """vLLM's decode: the same fitted bandwidth and per-layer losses as :meth:`trtllm`,
        the kernels its Llama layer launches unfused: RMSNorm (fused with the residual
        add), QKV GEMM, RoPE, KV-cache write, attention, O GEMM, RMSNorm, gate-up GEMM,
        SiLU-and-multiply, down GEMM: 10 (vLLM ``model_executor/models/llama.py``), the
        MoE cost per expert of :meth:`trtllm`, and ``step_s`` fitted to vLLM's own H200
        Llama 3 70B latency benchmark (its scheduler and sampler run between steps)."""
        c = FITTED_COEFFICIENTS
        return cls("vllm", c["hbm_fraction"], 0.7, 16, 10, 22, bool(cuda_graphs), c["layer_s"], c["moe_expert_s_trtllm"],
                   c["step_s_vllm"],
                   "kernel counts from vLLM's Llama layer; hbm_fraction, layer_s fitted (phy.topology.calibration)")

    @classmethod
    def sglang_2024(cls) -> Runtime:
        """SGLang v0.4.1 (December 2024) on DeepSeek-V3 with tensor-parallel experts: the
        dense costs of :meth:`vllm` (its layers are vLLM's), 22 kernels per MoE layer
        (MLA: 2 GEMMs and a norm for q, 1 GEMM and a norm for the latent, 2 absorbed BMMs,
        RoPE, attention, O GEMM; MoE: router GEMM, grouped top-k, token alignment, 2
        per-token-group FP8 quantisations, 2 fused-MoE GEMMs, SiLU-and-multiply, sum,
        shared expert's 2 GEMMs and activation), and ``moe_expert_s`` fitted to SGLang's
        own batch-1 measurement (PR 2643)."""
        c = FITTED_COEFFICIENTS
        return cls("sglang-2024", c["hbm_fraction"], 0.7, 16, 10, 22, True, c["layer_s"], c["moe_expert_s_sglang"],
                   0.0, "SGLang v0.4.1 DeepSeek-V3 layers; moe_expert_s fitted to sgl-project/sglang PR 2643 batch 1")

    def with_(self, **changes) -> Runtime:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)

    # ------------------------------------------------------------------ terms
    @property
    def kernel_s(self) -> float:
        """One kernel's floor (s): graph replay or eager launch."""
        if self.kernels_dense == 0 and self.kernels_moe == 0:
            return 0.0
        return KERNEL_GRAPH_S if self.cuda_graphs else KERNEL_EAGER_S

    def gemm_efficiency(self, rows: int) -> float:
        """Fraction of the peak FLOP/s a GEMM of ``rows`` tokens reaches:
        ``gemm_fraction rows / M_pad``."""
        m = integer(rows, "rows", 1)
        pad = math.ceil(m / self.m_tile) * self.m_tile
        return self.gemm_fraction * m / pad

    def overhead_s(self, dense_layers: int, moe_layers: int = 0, experts: int = 0) -> float:
        """Kernel floors, per-layer and per-expert losses and host time of one step (s)."""
        k = self.kernel_s
        return (dense_layers * (self.kernels_dense * k + self.layer_s)
                + moe_layers * (self.kernels_moe * k + self.layer_s + experts * self.moe_expert_s) + self.step_s)


@lru_cache(maxsize=4096)
def busiest_group_experts(experts: int, top_k: int, batch: int, groups: int) -> float:
    """Expected routed experts in the busiest of ``groups`` equal expert groups when a
    step of ``batch`` tokens each picks ``top_k`` of ``experts`` (each expert touched with
    probability ``p = 1 - (1 - k/E)^B``, independently; a group of ``n = E/groups``
    holds Binomial(n, p) of them; the expected maximum of ``groups`` such loads is
    ``sum_m (1 - F(m - 1)^groups)``). One group: the expected touched count ``E p``."""
    E = integer(experts, "experts", 1)
    k = integer(top_k, "top_k", 1, E)
    B = integer(batch, "batch", 1)
    g = integer(groups, "groups", 1, E)
    p = 1.0 - (1.0 - k / E) ** B
    n = E // g
    if g == 1:
        return E * p
    from scipy.stats import binom

    m = np.arange(n + 1)
    cdf = binom.cdf(m, n, p)
    return float(np.sum(1.0 - cdf[:-1] ** g))
