"""Decode over the fabric: what a token costs in FLOPs, bytes and collectives, and what the
interconnect's bandwidth and latency do to it.

One decode step of ``B`` sequences at a context of ``c`` tokens, on a group of ``tp``
accelerators sharing the model (tensor parallel; ``ep`` of them sharing the experts):

* **FLOPs** (:meth:`phy.topology.model.Model.flops_per_token`): ``2 (N_active - V d)`` for the matrix
  products (the input embedding is a lookup, not a product) and ``4 L n_heads d_head c``
  for attention (``QK^T`` and ``AV``), per sequence.
* **Bytes**: the weights the step touches (a mixture of experts touches
  ``W_shared + (1 - (1 - k/E)^B) W_experts``), the KV cache read, ``B c`` tokens of
  ``2 L n_kv d_head`` elements (:attr:`Model.kv_bytes_per_token`).
* **Time**: ``max(FLOPs / (tp F eff(B)), bytes / (tp f_bw BW_eff)) + t_kernels + t_comm``
  under an engine's :class:`~phy.topology.runtime.Runtime` (default
  :meth:`Runtime.trtllm`, calibrated to public measurements in
  :mod:`phy.topology.calibration`; :meth:`Runtime.ideal` is the bare roofline): the
  achieved HBM fraction ``f_bw``, GEMM efficiency against the batch, each layer's kernels
  and losses, a mixture of experts' busiest expert group. The collectives sit on the
  critical path between layers, so nothing hides them.
* **Collectives** (:class:`phy.latency.Collectives`, every layer and the fastest
  algorithm): a dense layer all-reduces its ``B d`` activations twice (after attention and
  after the MLP); a mixture-of-experts layer all-reduces once (attention) and, with
  ``ep > 1``, dispatches and combines its tokens with two all-to-alls of
  ``B k d / ep`` activations per accelerator; with ``ep = 1`` (experts sliced
  tensor-parallel) it all-reduces twice, as a dense layer.
* **Remote weights**: ``BW_eff = min(tier, link x efficiency, in flight / round trip)``:
  a stream from a remote tier delivers its bandwidth only if the link matches it and the
  reader keeps ``BW x round trip`` bytes in flight (Little's law; the round trip is the
  fabric's, :attr:`TopologyReport.round_trip`, with the tier's own access).
* **MFU**: the model's FLOPs over the step's time, as a fraction of the group's peak.

:func:`mfu_crossing`, :func:`balance_bandwidth` and :func:`latency_value` answer the
system architect's three questions: where decode leaves the memory roof, how much link
bandwidth a remote tier can use, and what lower fabric latency buys.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from ..latency import Collectives, bytes_in_flight
from ._aliases import add_aliases, keyword_alias, with_key_aliases
from .model import Model
from .memory import MemoryTier
from .parts import Accelerator
from .runtime import Runtime, busiest_group_experts

__all__ = ["DecodeResult", "Model", "Runtime", "decode", "latency_sweep", "mfu_crossing", "over_fabric"]


@dataclass(frozen=True)
class DecodeResult:
    """One decode operating point (s, bytes/s, bytes, FLOPs). ``memory_s`` is the busiest
    accelerator's weights and KV cache (``weight_bytes_per_accelerator``,
    ``kv_bytes_per_accelerator``) at the achieved bandwidth, ``compute_s`` its FLOPs at the
    batch's GEMM efficiency, ``overhead_s`` the engine's kernels, per-layer and per-expert
    losses and host step (``runtime`` names the engine); ``weight_bytes_per_step`` and
    ``kv_bytes_per_step`` are the whole group's. The old names of the three bandwidths,
    ending ``_bps`` (``tier_bandwidth_bps``, ...), are deprecated aliases kept one release:
    they hold bytes/s, and ``_bps`` means bits/s."""

    model: str
    batch: int
    context_tokens: int
    tp: int
    tier: str
    tokens_per_s: float
    aggregate_tokens_per_s: float
    time_per_token_s: float
    compute_s: float
    memory_s: float
    comm_s: float
    comm: dict
    bound: str
    flops_per_step: float
    attention_flops_per_step: float
    mfu: float
    weight_bytes_per_step: float
    kv_bytes_per_step: float
    bytes_per_step: float
    tier_bandwidth_bytes_per_s: float
    link_bandwidth_bytes_per_s: float | None
    effective_bandwidth_bytes_per_s: float
    balanced: bool
    latency_s: float
    bytes_in_flight_needed: float
    latency_hidden: bool
    memory_energy_j_per_step: float
    overhead_s: float = 0.0
    runtime: str = "ideal"
    weight_bytes_per_accelerator: float = 0.0
    kv_bytes_per_accelerator: float = 0.0

    def to_dict(self) -> dict:
        return with_key_aliases(asdict(self), _DECODE_ALIASES)


_DECODE_ALIASES = {"tier_bandwidth_bps": "tier_bandwidth_bytes_per_s",
                   "link_bandwidth_bps": "link_bandwidth_bytes_per_s",
                   "effective_bandwidth_bps": "effective_bandwidth_bytes_per_s"}
add_aliases(DecodeResult, _DECODE_ALIASES)


def decode(model: Model, batch: int = 1, *, accelerator: Accelerator, tier: MemoryTier | None = None,
           link_bandwidth_bytes_per_s: float | None = None, link_round_trip_s: float = 0.0,
           link_efficiency: float = 1.0, prefetch_bytes: float | None = None, context_tokens: int = 0, tp: int = 1,
           ep: int | None = None, collectives: Collectives | None = None, capacity_bytes: float | None = None,
           runtime: Runtime | None = None, **deprecated) -> DecodeResult:
    """Decode speed of ``model`` at ``batch`` with weights in ``tier`` (default: the
    accelerator's own memory), on ``tp`` accelerators.

    Parameters
    ----------
    model : Model
        The model decoded.
    batch : int, optional
        Sequences decoded together (default 1).
    accelerator : Accelerator
        The accelerator each shard runs on.
    tier : MemoryTier, optional
        Where the weights and KV cache live (None: the accelerator's own memory).
    link_bandwidth_bytes_per_s, link_round_trip_s : float, optional
        The fabric between the accelerator and a remote tier: bytes/s per direction and a
        read's round trip over it, the tier's access excluded (s); no bandwidth: the tier
        is local. (``link_bandwidth_bps``, its old name, is a deprecated alias.)
    link_efficiency : float
        Fraction of the link bandwidth the stream achieves.
    prefetch_bytes : float, optional
        Bytes the reader keeps in flight (None: enough to hide the latency).
    context_tokens : int
        Context per sequence (its KV cache is read each step, its attention computed).
    tp, ep : int
        Accelerators sharing the model, and sharing the experts (default ``tp``).
    collectives : phy.latency.Collectives, optional
        The fabric the group's collectives run on (:attr:`TopologyReport.collectives`);
        needed when ``tp > 1``.
    capacity_bytes : float, optional
        Memory the weights and KV cache may occupy (default: the tier's capacity times
        ``tp``).
    runtime : Runtime, optional
        The engine's costs (default :meth:`Runtime.trtllm`, calibrated;
        :meth:`Runtime.ideal` for the bare roofline). Its achieved HBM fraction applies to
        the accelerator's own memory; a remote tier's stream takes ``link_efficiency``.
    **deprecated
        ``link_bandwidth_bps`` only (the old name of ``link_bandwidth_bytes_per_s``).

    Returns
    -------
    DecodeResult
        Tokens per second, the step's memory, compute and collective times, MFU and the
        bandwidths behind them.

    Notes
    -----
    Each accelerator reads its share of the weights: the shared ones over ``tp``, and the
    routed experts of its expert group (``ep`` groups, each expert sliced over ``tp/ep``),
    the busiest group setting the time. A KV cache with ``n_kv_heads`` is split over at
    most that many accelerators; one given per token without heads (multi-head latent
    attention) is one latent head, read whole by each.
    """
    if deprecated:
        link_bandwidth_bytes_per_s = _renamed_link_bandwidth(link_bandwidth_bytes_per_s, deprecated)
    ins = _decode_inputs(model, batch, accelerator, tier, link_round_trip_s, link_efficiency, context_tokens, tp,
                         ep, collectives, capacity_bytes, runtime)
    tier, B, tp, ep, ctx, rt, kv = ins.tier, ins.batch, ins.tp, ins.ep, ins.context_tokens, ins.runtime, ins.kv_bytes
    bw, link, balanced, rtt, need, hidden = _stream(tier, link_bandwidth_bytes_per_s, ins.link_efficiency,
                                                    ins.round_trip_s, prefetch_bytes)
    w_bytes = model.touched_bytes(B)
    w_acc, kv_acc = _per_accelerator(model, B, tp, ep, kv)
    mm, att = model.flops_per_token(ctx)
    flops = B * (mm + att)
    peak = accelerator.flops_at(model.precision)
    compute = B * (mm / rt.gemm_efficiency(B) + att / rt.gemm_fraction) / (tp * peak)
    f_bw = rt.hbm_fraction if tier == accelerator.memory else 1.0
    memory = (w_acc + kv_acc) / (f_bw * bw)
    overhead = rt.overhead_s(model.layers - model.moe_layers, model.moe_layers, model.experts or 0)
    comm_s, comm = _comm(model, B, tp, ep, _engine_collectives(collectives, rt))
    t = max(compute, memory) + overhead + comm_s
    return DecodeResult(model.name, B, ctx, tp, tier.name, 1.0 / t, B / t, t, compute, memory, comm_s, comm,
                        "compute" if compute >= memory else "memory", flops, B * att, flops / (t * tp * peak),
                        w_bytes, kv, w_bytes + kv, tier.bandwidth_bytes_per_s, link, bw, balanced, rtt, need, hidden,
                        (w_bytes + kv) * tier.energy_j_per_byte, overhead, rt.name, w_acc, kv_acc)


def _renamed_link_bandwidth(link_bandwidth_bytes_per_s, deprecated: dict):
    """``link_bandwidth_bytes_per_s`` given under its old name ``link_bandwidth_bps`` (with a
    deprecation warning); any other extra keyword is refused as Python would."""
    extra = set(deprecated) - {"link_bandwidth_bps"}
    if extra:
        raise TypeError(f"decode() got an unexpected keyword argument {sorted(extra)[0]!r}")
    return keyword_alias(
        {"link_bandwidth_bytes_per_s": link_bandwidth_bytes_per_s, **deprecated}, "link_bandwidth_bps",
        "link_bandwidth_bytes_per_s", "decode")["link_bandwidth_bytes_per_s"]


class _DecodeInputs(NamedTuple):
    """:func:`decode`'s arguments checked, defaults filled in."""

    tier: MemoryTier
    batch: int
    tp: int
    ep: int
    context_tokens: int
    link_efficiency: float
    round_trip_s: float
    runtime: Runtime
    kv_bytes: float


def _decode_inputs(model, batch, accelerator, tier, link_round_trip_s, link_efficiency, context_tokens, tp, ep,
                   collectives, capacity_bytes, runtime) -> _DecodeInputs:
    """The checks of :func:`decode`'s arguments, in its order, and that the weights and the
    KV cache fit in the memory offered."""
    if not isinstance(model, Model):
        raise ConfigError(f"decode needs a Model, got {type(model).__name__}")
    if not isinstance(accelerator, Accelerator):
        raise ConfigError(f"accelerator must be an Accelerator, got {type(accelerator).__name__}")
    tier = tier or accelerator.memory
    if not isinstance(tier, MemoryTier):
        raise ConfigError(f"tier must be a MemoryTier, got {type(tier).__name__}")
    B = integer(batch, "batch", 1)
    tp = integer(tp, "tp", 1)
    ep = tp if ep is None else integer(ep, "ep", 1)
    ctx = integer(context_tokens, "context_tokens", 0)
    eff = number(link_efficiency, "link_efficiency", positive=True, hi=1.0)
    rtt = tier.latency_s + number(link_round_trip_s, "link_round_trip_s", nonneg=True)
    if (tp > 1 or (model.experts is not None and ep > 1)) and collectives is None:
        raise ConfigError("tp or ep > 1 needs the fabric's collectives (a TopologyReport's .collectives)")
    rt = Runtime.trtllm() if runtime is None else runtime
    if not isinstance(rt, Runtime):
        raise ConfigError(f"runtime must be a phy.topology.Runtime, got {type(rt).__name__}")
    if model.experts is not None and ep > model.experts:
        raise ConfigError(f"ep={ep} exceeds the model's {model.experts} experts")
    if collectives is not None and not isinstance(collectives, Collectives):
        raise ConfigError(f"collectives must be a phy.latency.Collectives, got {type(collectives).__name__}")
    cap = tier.capacity_bytes * tp if capacity_bytes is None else number(capacity_bytes, "capacity_bytes", positive=True)
    kv = B * ctx * model.kv_per_token_bytes
    if model.weight_bytes + kv > cap:
        raise ConfigError(f"model {model.name!r} needs {(model.weight_bytes + kv) / 1e9:.4g} GB (weights and KV "
                          f"cache) but {tier.name} offers {cap / 1e9:.4g} GB: it does not fit in memory")
    return _DecodeInputs(tier, B, tp, ep, ctx, eff, rtt, rt, kv)


def _stream(tier: MemoryTier, link_bandwidth_bytes_per_s, eff: float, rtt: float, prefetch_bytes) -> tuple:
    """The weight stream from ``tier``: ``(bytes/s achieved, the link's bytes/s or None,
    whether the link keeps up with the tier, the round trip (s), the bytes in flight that
    hide it, whether the prefetch depth holds that many)``."""
    bw = tier.bandwidth_bytes_per_s
    link = None
    if link_bandwidth_bytes_per_s is not None:
        link = number(link_bandwidth_bytes_per_s, "link_bandwidth_bytes_per_s", positive=True)
        bw = min(bw, link * eff)
    balanced = link is None or link * eff >= tier.bandwidth_bytes_per_s
    need = bytes_in_flight(bw, rtt)
    hidden = True
    if prefetch_bytes is not None and rtt > 0:
        depth = number(prefetch_bytes, "prefetch_bytes", positive=True)
        if depth < need:
            hidden = False
            bw = depth / rtt
    return bw, link, balanced, rtt, need, hidden


def _engine_collectives(collectives: Collectives | None, rt: Runtime) -> Collectives | None:
    """The fabric's collectives as the engine runs them: with its own all-reduce kernels
    (``rt.custom_all_reduce``) on symmetric memory."""
    col = collectives
    if col is not None and rt.custom_all_reduce and not col.software.symmetric:
        col = replace(col, software=col.software.with_(symmetric=True))  # the engine's own kernels
    return col


def _per_accelerator(model: Model, B: int, tp: int, ep: int, kv: float) -> tuple[float, float]:
    """Weight and KV-cache bytes the busiest accelerator reads in one step."""
    if model.experts is None:
        w = model.weight_bytes / tp
    else:
        groups = min(ep, model.experts)
        busiest = busiest_group_experts(model.experts, model.top_k, B, groups)
        w = model.shared_bytes / tp + model.moe_layers * busiest * model.expert_bytes * groups / max(tp, groups)
    if model.n_kv_heads is not None:
        shards = min(tp, model.n_kv_heads)
    elif model.kv_bytes_per_token is not None:
        shards = 1                      # one latent head (MLA): every accelerator reads it whole
    else:
        shards = tp
    return w, kv / shards


def _comm(model: Model, B: int, tp: int, ep: int, col: Collectives | None) -> tuple[float, dict]:
    """Seconds of collectives per step and what they are."""
    out: dict = {}
    total = 0.0
    if col is None:
        return 0.0, out
    d = model.d_model
    if d is None and (tp > 1 or ep > 1):
        raise ConfigError(f"model {model.name!r} needs d_model for the size of its collectives")
    if tp > 1:
        n = model.layers * (2 if model.experts is None or ep == 1 else 1)
        ct = col.time("all_reduce", B * d * model.act_bytes, tp)
        out["all_reduce"] = {"count": n, "size_bytes": ct.size_bytes, "each_s": ct.time_s,
                             "algorithm": ct.algorithm, "protocol": ct.protocol}
        total += n * ct.time_s
    if model.experts is not None and ep > 1:
        n = 2 * model.layers
        ct = col.time("all_to_all", B * model.top_k * d * model.act_bytes / ep, ep)
        out["all_to_all"] = {"count": n, "size_bytes": ct.size_bytes, "each_s": ct.time_s,
                             "algorithm": ct.algorithm, "protocol": ct.protocol}
        total += n * ct.time_s
    return total, out


def over_fabric(report, model: Model, batch: int = 1, *, source: str = "remote", tier: MemoryTier | None = None,
                prefetch_bytes: float | None = None, link_efficiency: float = 1.0, context_tokens: int = 0,
                tp: int = 1, ep: int | None = None, runtime: Runtime | None = None) -> DecodeResult:
    """:func:`decode` on a rolled-up topology (:class:`phy.topology.TopologyReport`).

    ``source``: ``"local"`` (the accelerator's own memory), ``"remote"`` (the other
    accelerators' memory, over the fabric: each accelerator's bandwidth per direction and
    the farthest route's read round trip), or ``"pooled"`` (``tier``, e.g. pooled LPDDR,
    over the fabric). Collectives run on the report's fabric; ``runtime`` as :func:`decode`.

    Parameters
    ----------
    report : TopologyReport
        The rolled-up topology (its accelerator, per-accelerator bandwidth, round trips
        and collectives).
    model : Model
        The model decoded.
    batch : int, optional
        Sequences decoded together (default 1).
    source : str, optional
        ``"local"``, ``"remote"`` (default) or ``"pooled"``, as above.
    tier : MemoryTier, optional
        The tier read (None: the accelerator's own memory; required with ``"pooled"``).
        With ``"remote"`` its capacity counts once for each other accelerator.
    prefetch_bytes : float, optional
        Bytes the reader keeps in flight (None: enough to hide the latency).
    link_efficiency : float, optional
        Fraction of the fabric bandwidth the stream achieves (default 1.0).
    context_tokens : int, optional
        Context per sequence (default 0).
    tp, ep : int, optional
        Accelerators sharing the model (default 1), and sharing the experts (default ``tp``).
    runtime : Runtime, optional
        The engine's costs, as :func:`decode`.

    Returns
    -------
    DecodeResult
        :func:`decode`'s result for that source.

    Raises
    ------
    ConfigError
        On a ``report`` that is not a TopologyReport, a bad ``source`` or ``"pooled"``
        without ``tier``.
    """
    from .rollup import TopologyReport

    if not isinstance(report, TopologyReport):
        raise ConfigError(f"over_fabric needs a TopologyReport, got {type(report).__name__}")
    acc = report.accelerator
    kw = {"accelerator": acc, "prefetch_bytes": prefetch_bytes, "context_tokens": context_tokens, "tp": tp, "ep": ep,
          "collectives": report.collectives, "runtime": runtime}
    rt = report.round_trip["remote"] if "remote" in report.round_trip else next(iter(report.round_trip.values()))
    fabric_rt = rt.total_s - rt.layer_totals().get("memory", 0.0)
    if source == "local":
        return decode(model, batch, tier=tier or acc.memory, **kw)
    if source == "remote":
        mem = tier or acc.memory
        cap = mem.capacity_bytes * max(1, report.n_accelerators - 1)
        return decode(model, batch, tier=mem, link_bandwidth_bytes_per_s=report.accel_bandwidth_bytes_per_s,
                      link_round_trip_s=fabric_rt, link_efficiency=link_efficiency, capacity_bytes=cap, **kw)
    if source == "pooled":
        if tier is None:
            raise ConfigError("source='pooled' needs the pooled tier (e.g. MemoryTier.lpddr5x())")
        return decode(model, batch, tier=tier, link_bandwidth_bytes_per_s=report.accel_bandwidth_bytes_per_s,
                      link_round_trip_s=fabric_rt, link_efficiency=link_efficiency, **kw)
    raise ConfigError(f"source must be 'local', 'remote' or 'pooled', got {source!r}")


def latency_sweep(model: Model, latencies_s, batch: int = 1, *, collectives: Collectives | None = None,
                  **kwargs) -> np.ndarray:
    """Tokens per second (per sequence) against the fabric's one-way latency, all else as
    :func:`decode`: at each latency the collectives' hops are scaled to it
    (:meth:`phy.latency.Collectives.at_latency`) and a remote stream's round trip is two
    of them. Give ``prefetch_bytes`` to see the stream's latency bite; with ``tp > 1`` the
    collectives bite regardless.

    Parameters
    ----------
    model : Model
        The model decoded.
    latencies_s : float or array_like
        One-way fabric latencies, s.
    batch : int, optional
        Sequences decoded together (default 1).
    collectives : phy.latency.Collectives, optional
        The fabric's collectives, rescaled to each latency (None: no collectives).
    **kwargs
        The other arguments of :func:`decode` (``accelerator`` is needed); with
        ``link_bandwidth_bytes_per_s`` the round trip is set to twice each latency.

    Returns
    -------
    numpy.ndarray
        Tokens per second per sequence, one per latency.
    """
    lats = np.atleast_1d(np.asarray(latencies_s, dtype=float))
    out = np.empty(lats.size)
    kwargs = keyword_alias(kwargs, "link_bandwidth_bps", "link_bandwidth_bytes_per_s", "latency_sweep")
    for i, x in enumerate(lats):
        kw = dict(kwargs)
        if kw.get("link_bandwidth_bytes_per_s") is not None:
            kw["link_round_trip_s"] = 2 * x
        col = collectives.at_latency(x) if collectives is not None else None
        out[i] = decode(model, batch, collectives=col, **kw).tokens_per_s
    return out


def mfu_crossing(model: Model, threshold: float = 0.2, *, max_batch: int = 4096, **kwargs) -> int | None:
    """The smallest batch whose decode step reaches ``threshold`` of the peak FLOPs
    (:func:`decode`'s ``mfu``), or None if no batch up to ``max_batch`` (and that fits in
    memory with its KV cache) does. MFU grows with the batch while the step is
    memory-bound, so the batch is bisected.

    Parameters
    ----------
    model : Model
        The model decoded.
    threshold : float, optional
        The MFU to reach, a fraction in (0, 1] (default 0.2).
    max_batch : int, optional
        Largest batch tried (default 4096).
    **kwargs
        The other arguments of :func:`decode` (``accelerator`` is needed).

    Returns
    -------
    int or None
        The smallest batch reaching ``threshold``, or None.
    """
    th = number(threshold, "threshold", positive=True, hi=1.0)
    hi = integer(max_batch, "max_batch", 1, 10**7)

    def mfu(b):
        try:
            return decode(model, b, **kwargs).mfu
        except ConfigError as e:
            if "does not fit" in str(e):
                return -1.0
            raise

    if mfu(hi) < 0:  # the largest batch does not fit: find the largest that does
        lo_fit, hi_fit = 1, hi
        if mfu(1) < 0:
            return None
        while hi_fit - lo_fit > 1:
            mid = (lo_fit + hi_fit) // 2
            if mfu(mid) >= 0:
                lo_fit = mid
            else:
                hi_fit = mid
        hi = lo_fit
    if mfu(hi) < th:
        return None
    lo = 1
    if mfu(lo) >= th:
        return 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mfu(mid) >= th:
            hi = mid
        else:
            lo = mid
    return hi
