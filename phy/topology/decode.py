"""Decode speed when a model's weights stream from a memory tier, local or over the fabric.

The roofline of ../shared/REFERENCES.md ("Decode roofline"), per accelerator group of
``tp`` accelerators sharing the model::

    t_token(B) = max(2 N_active B / (tp F), (W_touched(B) + KV(B)) / (tp BW_eff)) + t_comm
    BW_eff     = min(tier bandwidth, link bandwidth x efficiency)    for a remote tier

* Mixture of experts: ``W_touched = W_shared + (1 - (1 - k/E)^B) W_experts`` (the
  REFERENCES sum over layers with the experts' bytes spread evenly over layers).
* **Balance rule**: a remote tier delivers its bandwidth only if the link matches it.
* **Prefetch**: latency is hidden when the bytes in flight reach ``BW_eff x latency``
  (900 GB/s x 2 us = 1.8 MB); with ``prefetch_bytes`` in flight the stream can go no
  faster than ``prefetch_bytes / latency`` (Little's law).
* **Collectives**: with ``tp > 1`` each layer all-reduces twice, and small all-reduces are
  latency-bound: ``t_comm = layers x 2 x alpha`` per token; prefetch cannot hide it.

Tokens per second are per sequence (``1 / t_token``) and in aggregate (``B / t_token``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .parts import Accelerator, MemoryTier

__all__ = ["DecodeResult", "Model", "decode", "latency_sweep", "over_fabric"]


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
    kv_bytes_per_token : float
        KV cache per token of context, all layers (bytes).
    experts, top_k : int, optional
        Mixture of experts: experts per layer and experts each token uses.
    expert_params : float
        Parameters in experts (all layers); the rest are shared. 0 for a dense model.
    """

    name: str
    params: float
    bytes_per_param: float = 1.0
    precision: str = "fp8"
    layers: int = 80
    kv_bytes_per_token: float = 0.0
    experts: int | None = None
    top_k: int | None = None
    expert_params: float = 0.0

    def __post_init__(self):
        number(self.params, f"Model {self.name!r} params", positive=True)
        number(self.bytes_per_param, f"Model {self.name!r} bytes_per_param", positive=True)
        integer(self.layers, f"Model {self.name!r} layers", 1)
        number(self.kv_bytes_per_token, f"Model {self.name!r} kv_bytes_per_token", nonneg=True)
        number(self.expert_params, f"Model {self.name!r} expert_params", nonneg=True, hi=self.params)
        if (self.experts is None) != (self.top_k is None):
            raise ConfigError(f"Model {self.name!r}: give both experts and top_k, or neither")
        if self.experts is not None:
            e = integer(self.experts, f"Model {self.name!r} experts", 1)
            integer(self.top_k, f"Model {self.name!r} top_k", 1, e)
            if self.expert_params <= 0:
                raise ConfigError(f"Model {self.name!r}: a mixture of experts needs expert_params > 0")
        elif self.expert_params:
            raise ConfigError(f"Model {self.name!r}: expert_params needs experts and top_k")

    @classmethod
    def dense(cls, name: str, params: float, layers: int, bytes_per_param: float = 1.0, precision: str = "fp8",
              kv_bytes_per_token: float = 0.0) -> Model:
        return cls(name, params, bytes_per_param, precision, layers, kv_bytes_per_token)

    @classmethod
    def moe(cls, name: str, params: float, active_params: float, experts: int, top_k: int, layers: int,
            bytes_per_param: float = 1.0, precision: str = "fp8", kv_bytes_per_token: float = 0.0) -> Model:
        """A mixture of experts given its total and active parameters: the experts hold
        ``(params - active) / (1 - k/E)`` of them, the rest is shared."""
        p = number(params, "params", positive=True)
        a = number(active_params, "active_params", positive=True, hi=p)
        e = integer(experts, "experts", 2)
        k = integer(top_k, "top_k", 1, e - 1)
        w_exp = (p - a) / (1 - k / e)
        if w_exp > p:
            raise ConfigError(f"active {a:g} of {p:g} parameters cannot come from top-{k} of {e} experts")
        return cls(name, p, bytes_per_param, precision, layers, kv_bytes_per_token, e, k, w_exp)

    @property
    def active_params(self) -> float:
        """Parameters one token uses."""
        if self.experts is None:
            return self.params
        return self.params - self.expert_params * (1 - self.top_k / self.experts)

    @property
    def weight_bytes(self) -> float:
        return self.params * self.bytes_per_param

    def touched_bytes(self, batch: int) -> float:
        """Weight bytes a decode step of ``batch`` sequences reads."""
        B = integer(batch, "batch", 1)
        if self.experts is None:
            return self.weight_bytes
        frac = 1.0 - (1.0 - self.top_k / self.experts) ** B
        return ((self.params - self.expert_params) + frac * self.expert_params) * self.bytes_per_param

    def to_dict(self) -> dict:
        d = asdict(self)
        d["active_params"] = self.active_params
        return d


@dataclass(frozen=True)
class DecodeResult:
    """One decode operating point (s, B/s, bytes)."""

    model: str
    batch: int
    tier: str
    tokens_per_s: float
    aggregate_tokens_per_s: float
    time_per_token_s: float
    compute_s: float
    memory_s: float
    comm_s: float
    bound: str
    tier_bandwidth_bps: float
    link_bandwidth_bps: float | None
    effective_bandwidth_bps: float
    balanced: bool
    latency_s: float
    bytes_in_flight_needed: float
    latency_hidden: bool
    bytes_per_step: float
    memory_energy_j_per_step: float

    def to_dict(self) -> dict:
        return asdict(self)


def decode(model: Model, batch: int = 1, *, accelerator: Accelerator, tier: MemoryTier | None = None,
           link_bandwidth_bps: float | None = None, link_latency_s: float = 0.0, link_efficiency: float = 1.0,
           prefetch_bytes: float | None = None, context_tokens: int = 0, tp: int = 1, alpha_s: float = 0.0,
           capacity_bytes: float | None = None) -> DecodeResult:
    """Decode speed of ``model`` at ``batch`` with weights in ``tier`` (default: the
    accelerator's own memory).

    Parameters
    ----------
    link_bandwidth_bps, link_latency_s : float, optional
        The fabric between the accelerator and a remote tier (B/s per direction, s); None:
        the tier is local.
    link_efficiency : float
        Fraction of the link bandwidth the stream achieves.
    prefetch_bytes : float, optional
        Bytes the accelerator keeps in flight (None: enough to hide the latency).
    context_tokens : int
        Context per sequence (KV cache read each step).
    tp, alpha_s
        Tensor-parallel accelerators sharing the model, and the fabric's
        accelerator-to-accelerator latency for its per-layer all-reduces.
    capacity_bytes : float, optional
        Memory the weights may occupy (default: the tier's capacity times ``tp``).
    """
    if not isinstance(model, Model):
        raise ConfigError(f"decode needs a Model, got {type(model).__name__}")
    if not isinstance(accelerator, Accelerator):
        raise ConfigError(f"accelerator must be an Accelerator, got {type(accelerator).__name__}")
    tier = tier or accelerator.memory
    if not isinstance(tier, MemoryTier):
        raise ConfigError(f"tier must be a MemoryTier, got {type(tier).__name__}")
    B = integer(batch, "batch", 1)
    tp = integer(tp, "tp", 1)
    ctx = integer(context_tokens, "context_tokens", 0)
    eff = number(link_efficiency, "link_efficiency", positive=True, hi=1.0)
    lat = tier.latency_s + number(link_latency_s, "link_latency_s", nonneg=True)
    a = number(alpha_s, "alpha_s", nonneg=True)
    cap = tier.capacity_bytes * tp if capacity_bytes is None else number(capacity_bytes, "capacity_bytes", positive=True)
    kv = B * ctx * model.kv_bytes_per_token
    if model.weight_bytes + kv > cap:
        raise ConfigError(f"model {model.name!r} needs {(model.weight_bytes + kv) / 1e9:.4g} GB (weights and KV "
                          f"cache) but {tier.name} offers {cap / 1e9:.4g} GB: it does not fit in memory")
    bw = tier.bandwidth_bps
    link = None
    if link_bandwidth_bps is not None:
        link = number(link_bandwidth_bps, "link_bandwidth_bps", positive=True)
        bw = min(bw, link * eff)
    balanced = link is None or link * eff >= tier.bandwidth_bps
    need = bw * lat
    hidden = True
    if prefetch_bytes is not None and lat > 0:
        depth = number(prefetch_bytes, "prefetch_bytes", positive=True)
        if depth < need:
            hidden = False
            bw = depth / lat
    bytes_step = model.touched_bytes(B) + kv
    compute = 2 * model.active_params * B / (tp * accelerator.flops_at(model.precision))
    memory = bytes_step / (tp * bw)
    comm = model.layers * 2 * a if tp > 1 else 0.0
    t = max(compute, memory) + comm
    return DecodeResult(model.name, B, tier.name, 1.0 / t, B / t, t, compute, memory, comm,
                        "compute" if compute >= memory else "memory", tier.bandwidth_bps, link, bw, balanced, lat,
                        need, hidden, bytes_step, bytes_step * tier.energy_j_per_byte)


def over_fabric(report, model: Model, batch: int = 1, *, source: str = "remote", tier: MemoryTier | None = None,
                prefetch_bytes: float | None = None, link_efficiency: float = 1.0, context_tokens: int = 0,
                tp: int = 1) -> DecodeResult:
    """:func:`decode` on a rolled-up topology (:class:`phy.topology.TopologyReport`).

    ``source``: ``"local"`` (the accelerator's own memory), ``"remote"`` (the other
    accelerators' memory, over the fabric: each accelerator's bandwidth per direction and
    the farthest route's latency), or ``"pooled"`` (``tier``, e.g. pooled LPDDR, over the
    fabric). The topology's accelerator and its ``alpha_s`` are used.
    """
    from .rollup import TopologyReport

    if not isinstance(report, TopologyReport):
        raise ConfigError(f"over_fabric needs a TopologyReport, got {type(report).__name__}")
    acc = report.accelerator
    kw = {"accelerator": acc, "prefetch_bytes": prefetch_bytes, "context_tokens": context_tokens, "tp": tp,
              "alpha_s": report.alpha_s}
    if source == "local":
        return decode(model, batch, tier=tier or acc.memory, **kw)
    if source == "remote":
        mem = tier or acc.memory
        cap = mem.capacity_bytes * max(1, report.n_accelerators - 1)
        return decode(model, batch, tier=mem, link_bandwidth_bps=report.accel_bandwidth_bps,
                      link_latency_s=report.alpha_s, link_efficiency=link_efficiency, capacity_bytes=cap, **kw)
    if source == "pooled":
        if tier is None:
            raise ConfigError("source='pooled' needs the pooled tier (e.g. MemoryTier.lpddr5x())")
        return decode(model, batch, tier=tier, link_bandwidth_bps=report.accel_bandwidth_bps,
                      link_latency_s=report.alpha_s, link_efficiency=link_efficiency, **kw)
    raise ConfigError(f"source must be 'local', 'remote' or 'pooled', got {source!r}")


def latency_sweep(model: Model, latencies_s, batch: int = 1, **kwargs) -> np.ndarray:
    """Tokens per second (per sequence) against the fabric's latency, all else as
    :func:`decode`: each latency is the remote stream's (``link_latency_s``) and, with
    ``tp > 1``, the per-layer all-reduces' alpha. Give ``prefetch_bytes`` to see the
    stream's latency bite; with ``tp > 1`` the collectives bite regardless."""
    lats = np.atleast_1d(np.asarray(latencies_s, dtype=float))
    out = np.empty(lats.size)
    for i, x in enumerate(lats):
        kw = dict(kwargs)
        kw["link_latency_s"] = x
        if kw.get("tp", 1) > 1:
            kw["alpha_s"] = x
        out[i] = decode(model, batch, **kw).tokens_per_s
    return out
