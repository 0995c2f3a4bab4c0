"""A transformer as decode sees it: parameters and their bytes, the attention shape, the KV
cache, and the FLOPs of one token (:class:`Model`, with presets from the models' own
configuration files)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["Model"]


@dataclass(frozen=True)
class Model:
    """A transformer's decode footprint.

    Parameters
    ----------
    name : str
    params : float
        All parameters.
    bytes_per_param : float
        1 for FP8, 0.5 for FP4, 2 for BF16.
    precision : str
        The accelerator's FLOP/s to use (``"fp8"``, ``"fp4"``, ``"bf16"``).
    layers : int
    kv_bytes_per_token : float, optional
        KV cache per token of context, all layers (bytes); default from the attention
        shape, ``2 layers n_kv_heads head_dim kv_bytes``.
    experts, top_k : int, optional
        Mixture of experts: experts per layer and experts each token uses.
    expert_params : float
        Parameters in experts (all layers); the rest are shared. 0 for a dense model.
    d_model, n_heads, n_kv_heads, head_dim, vocab : int, optional
        The attention shape (for attention FLOPs, the KV cache and the all-reduce size).
    kv_bytes, act_bytes : float
        Bytes per KV-cache element and per activation exchanged by the collectives.
    expert_bytes_per_param : float, optional
        Bytes per expert parameter when the experts are stored in another precision than
        the rest (e.g. NVFP4 experts, 4 bits and an FP8 scale per 16: 0.5625, beside BF16
        attention); default ``bytes_per_param``.
    first_dense_layers : int
        Layers of a mixture of experts whose feed-forward is dense (DeepSeek-V3: the first
        3 of 61); they launch a dense layer's kernels, not the routed experts'.
    """

    name: str
    params: float
    bytes_per_param: float = 1.0
    precision: str = "fp8"
    layers: int = 80
    kv_bytes_per_token: float | None = None
    experts: int | None = None
    top_k: int | None = None
    expert_params: float = 0.0
    d_model: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = None
    head_dim: int | None = None
    vocab: int | None = None
    kv_bytes: float = 1.0
    act_bytes: float = 2.0
    expert_bytes_per_param: float | None = None
    first_dense_layers: int = 0

    def __post_init__(self):
        number(self.params, f"Model {self.name!r} params", positive=True)
        number(self.bytes_per_param, f"Model {self.name!r} bytes_per_param", positive=True)
        integer(self.layers, f"Model {self.name!r} layers", 1)
        if self.kv_bytes_per_token is not None:
            number(self.kv_bytes_per_token, f"Model {self.name!r} kv_bytes_per_token", nonneg=True)
        number(self.expert_params, f"Model {self.name!r} expert_params", nonneg=True, hi=self.params)
        for k in ("d_model", "n_heads", "n_kv_heads", "head_dim", "vocab"):
            if getattr(self, k) is not None:
                integer(getattr(self, k), f"Model {self.name!r} {k}", 1)
        number(self.kv_bytes, f"Model {self.name!r} kv_bytes", positive=True)
        number(self.act_bytes, f"Model {self.name!r} act_bytes", positive=True)
        if self.expert_bytes_per_param is not None:
            number(self.expert_bytes_per_param, f"Model {self.name!r} expert_bytes_per_param", positive=True)
        integer(self.first_dense_layers, f"Model {self.name!r} first_dense_layers", 0,
                self.layers - (1 if self.experts is not None else 0))
        if (self.experts is None) != (self.top_k is None):
            raise ConfigError(f"Model {self.name!r}: give both experts and top_k, or neither")
        if self.experts is not None:
            e = integer(self.experts, f"Model {self.name!r} experts", 1)
            integer(self.top_k, f"Model {self.name!r} top_k", 1, e)
            if self.expert_params <= 0:
                raise ConfigError(f"Model {self.name!r}: a mixture of experts needs expert_params > 0")
        elif self.expert_params:
            raise ConfigError(f"Model {self.name!r}: expert_params needs experts and top_k")

    # ------------------------------------------------------------------ presets
    @classmethod
    def dense(cls, name: str, params: float, layers: int, bytes_per_param: float = 1.0, precision: str = "fp8",
              kv_bytes_per_token: float | None = None, **shape) -> Model:
        return cls(name, params, bytes_per_param, precision, layers, kv_bytes_per_token, **shape)

    @classmethod
    def moe(cls, name: str, params: float, active_params: float, experts: int, top_k: int, layers: int,
            bytes_per_param: float = 1.0, precision: str = "fp8", kv_bytes_per_token: float | None = None,
            **shape) -> Model:
        """A mixture of experts given its total and active parameters: the experts hold
        ``(params - active) / (1 - k/E)`` of them, the rest is shared."""
        p = number(params, "params", positive=True)
        a = number(active_params, "active_params", positive=True, hi=p)
        e = integer(experts, "experts", 2)
        k = integer(top_k, "top_k", 1, e - 1)
        w_exp = (p - a) / (1 - k / e)
        if w_exp > p:
            raise ConfigError(f"active {a:g} of {p:g} parameters cannot come from top-{k} of {e} experts")
        return cls(name, p, bytes_per_param, precision, layers, kv_bytes_per_token, e, k, w_exp, **shape)

    @classmethod
    def llama3_70b(cls, bytes_per_param: float = 1.0, precision: str = "fp8") -> Model:
        """Llama 3 70B: 70.6 B parameters, 80 layers, d_model 8192, 64 query and 8 KV heads
        of 128, vocabulary 128,256 (Meta's ``config.json`` on Hugging Face); FP8 weights and
        KV cache, BF16 activations."""
        return cls("llama3-70b", 70.6e9, bytes_per_param, precision, 80, None, d_model=8192, n_heads=64,
                   n_kv_heads=8, head_dim=128, vocab=128256, kv_bytes=bytes_per_param)

    @classmethod
    def llama3_405b(cls, bytes_per_param: float = 1.0, precision: str = "fp8") -> Model:
        """Llama 3.1 405B: 126 layers, d_model 16384, 128 query and 8 KV heads of 128,
        vocabulary 128,256 (Meta's ``config.json``)."""
        return cls("llama3-405b", 405.9e9, bytes_per_param, precision, 126, None, d_model=16384, n_heads=128,
                   n_kv_heads=8, head_dim=128, vocab=128256, kv_bytes=bytes_per_param)

    @classmethod
    def deepseek_v3(cls, bytes_per_param: float = 1.0, precision: str = "fp8",
                    expert_bytes_per_param: float | None = None, kv_bytes: float = 1.0) -> Model:
        """DeepSeek-V3 (and R1, the same network): 671 B parameters, 37 B active, 61 layers
        of which the first 3 are dense, d_model 7168, 256 routed experts of which 8 are used
        (and one shared), 128 heads; its multi-head latent attention caches 512 + 64
        elements per token and layer, one latent head shared by all query heads (arXiv
        2412.19437 and its ``config.json``); FP8 weights and cache by default.
        ``expert_bytes_per_param`` stores the experts apart (NVFP4: 0.5625)."""
        m = cls.moe("deepseek-v3", 671e9, 37e9, 256, 8, 61, bytes_per_param, precision,
                    kv_bytes_per_token=61 * 576 * kv_bytes, d_model=7168, n_heads=128, head_dim=128, vocab=129280,
                    kv_bytes=kv_bytes, expert_bytes_per_param=expert_bytes_per_param, first_dense_layers=3)
        return m

    # ------------------------------------------------------------------ footprint
    @property
    def active_params(self) -> float:
        """Parameters one token uses."""
        if self.experts is None:
            return self.params
        return self.params - self.expert_params * (1 - self.top_k / self.experts)

    @property
    def expert_bpp(self) -> float:
        """Bytes per expert parameter."""
        return self.bytes_per_param if self.expert_bytes_per_param is None else float(self.expert_bytes_per_param)

    @property
    def weight_bytes(self) -> float:
        return (self.params - self.expert_params) * self.bytes_per_param + self.expert_params * self.expert_bpp

    @property
    def moe_layers(self) -> int:
        """Layers with routed experts (0 for a dense model)."""
        return 0 if self.experts is None else self.layers - self.first_dense_layers

    @property
    def expert_bytes(self) -> float:
        """One expert of one layer (bytes): the expert parameters spread over the MoE layers."""
        if self.experts is None:
            return 0.0
        return self.expert_params * self.expert_bpp / (self.moe_layers * self.experts)

    @property
    def shared_bytes(self) -> float:
        """Weights every token reads: all but the routed experts (bytes)."""
        return (self.params - self.expert_params) * self.bytes_per_param

    @property
    def kv_per_token_bytes(self) -> float:
        """KV cache per token of context, all layers (bytes)."""
        if self.kv_bytes_per_token is not None:
            return float(self.kv_bytes_per_token)
        if self.n_kv_heads is None or self.head_dim is None:
            return 0.0
        return 2.0 * self.layers * self.n_kv_heads * self.head_dim * self.kv_bytes

    def touched_bytes(self, batch: int) -> float:
        """Weight bytes a decode step of ``batch`` sequences reads."""
        B = integer(batch, "batch", 1)
        if self.experts is None:
            return self.weight_bytes
        frac = 1.0 - (1.0 - self.top_k / self.experts) ** B
        return self.shared_bytes + frac * self.expert_params * self.expert_bpp

    def flops_per_token(self, context_tokens: int = 0) -> tuple[float, float]:
        """(matrix-product FLOPs, attention FLOPs) of one token at ``context_tokens``."""
        c = integer(context_tokens, "context_tokens", 0)
        embed = self.vocab * self.d_model if self.vocab and self.d_model else 0.0
        mm = 2.0 * (self.active_params - embed)
        att = 4.0 * self.layers * self.n_heads * self.head_dim * c if self.n_heads and self.head_dim else 0.0
        return mm, att

    def to_dict(self) -> dict:
        d = asdict(self)
        d["active_params"] = self.active_params
        d["kv_per_token_bytes"] = self.kv_per_token_bytes
        return d
