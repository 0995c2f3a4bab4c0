"""Balance the pipe: how much of a remote tier's bandwidth a reader can use, derived from the
latency, the bytes the reader keeps in flight and the accelerator's port; and what lower
fabric latency buys (:func:`latency_value`).

A reader that keeps ``D`` bytes of requests outstanding over a round trip ``R`` streams at
most ``D / R`` (Little's law). Through a port of ``P`` bytes/s at an efficiency ``e`` from a
tier of ``T`` bytes/s, a stream gets

    ``S = min(T, P e, D / R)``                                      (:func:`stream_bandwidth`)

The link stops being the limit where ``P e`` reaches ``min(T, D / R)`` (and, in decode, the
bandwidth at which the step turns compute-bound): that is the balance point
(:func:`balance_bandwidth`). It moves with ``D / R``: twice the latency halves it, twice the
bytes in flight doubles it, and it never exceeds what the accelerator's port carries: past
the port, the port is the limit, and the answer says how many ports the tier would fill.

Default bytes in flight (:func:`reader_bytes_in_flight`): what the accelerator keeps in
flight to its own memory when it streams it at full bandwidth, ``HBM bandwidth x DRAM
access`` (Little's law on its local figures, :data:`phy.topology.parts.DRAM_ACCESS_S`): a
GB200 reaches about 8 TB/s at 399 ns, so its loads hold at least 3.2 MB outstanding. A reader
with deeper queues (copy engines, TMA bulk loads) takes ``bytes_in_flight``.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from ..latency import Collectives
from ._aliases import with_key_aliases
from .decode import decode
from .model import Model
from .memory import MemoryTier
from .parts import Accelerator

__all__ = ["balance_bandwidth", "latency_value", "reader_bytes_in_flight", "stream_bandwidth"]


def reader_bytes_in_flight(accelerator: Accelerator) -> float:
    """Bytes ``accelerator`` keeps outstanding when it streams its own memory at full
    bandwidth: ``memory bandwidth x memory access latency`` (Little's law on its local
    figures; a GB200: 8 TB/s x 399 ns = 3.19 MB). A lower bound on what its loads can hold
    in flight to a remote tier.

    Parameters
    ----------
    accelerator : Accelerator
        The reader; its local memory's bandwidth (bytes/s) and access latency (s).

    Returns
    -------
    float
        Bytes in flight.
    """
    if not isinstance(accelerator, Accelerator):
        raise ConfigError(f"accelerator must be an Accelerator, got {type(accelerator).__name__}")
    m = accelerator.memory
    return m.bandwidth_bytes_per_s * m.latency_s


def stream_bandwidth(tier_bytes_per_s: float, port_bytes_per_s: float, link_efficiency: float,
                     bytes_in_flight: float, round_trip_s: float) -> tuple[float, str]:
    """``min(tier, port x efficiency, in flight / round trip)`` (bytes/s) and which term
    sets it (``"tier"``, ``"port"`` or ``"bytes_in_flight"``; ties to the first).

    Parameters
    ----------
    tier_bytes_per_s : float
        The memory tier's bandwidth, bytes/s.
    port_bytes_per_s : float
        The accelerator's port bandwidth per direction, bytes/s.
    link_efficiency : float
        Fraction of the port the stream achieves, in (0, 1].
    bytes_in_flight : float
        Bytes the reader keeps outstanding.
    round_trip_s : float
        A read's round trip, s (0: no latency limit).

    Returns
    -------
    tuple of (float, str)
        The stream, bytes/s, and the name of the term that sets it.
    """
    t = number(tier_bytes_per_s, "tier_bytes_per_s", positive=True)
    p = number(port_bytes_per_s, "port_bytes_per_s", positive=True) * number(
        link_efficiency, "link_efficiency", positive=True, hi=1.0)
    d = number(bytes_in_flight, "bytes_in_flight", positive=True)
    r = number(round_trip_s, "round_trip_s", nonneg=True)
    little = math.inf if r == 0 else d / r
    terms = {"tier": t, "port": p, "bytes_in_flight": little}
    by = min(terms, key=lambda k: terms[k])
    return float(terms[by]), by


def _port(port_bytes_per_s, collectives) -> float:
    if port_bytes_per_s is not None:
        return number(port_bytes_per_s, "port_bytes_per_s", positive=True)
    if isinstance(collectives, Collectives):
        return float(collectives.bandwidth_bytes_per_s)
    raise ConfigError("the accelerator's port is needed (port_bytes_per_s, e.g. a TopologyReport's "
                      "accel_bandwidth_bytes_per_s, or its collectives): a stream never exceeds what the port carries")


def balance_bandwidth(model: Model, batch: int = 1, *, accelerator: Accelerator, tier: MemoryTier | None = None,
                      port_bytes_per_s: float | None = None, link_round_trip_s: float = 0.0,
                      link_efficiency: float = 1.0, bytes_in_flight: float | None = None, **decode_kwargs) -> dict:
    """"Balance the pipe": the link bandwidth (bytes/s per direction) past which a stream from
    ``tier`` over the fabric stops improving decode, derived, not searched.

    The stream is ``min(tier, link x efficiency, D / R)`` with ``D`` the reader's bytes in
    flight (default :func:`reader_bytes_in_flight`) and ``R`` the round trip (the fabric's
    ``link_round_trip_s`` and the tier's own access); decode also stops gaining once its
    step is compute-bound, at ``bytes x peak / FLOPs``. The useful stream is the least of
    the tier, ``D / R`` and that compute balance; the balance point is that over the
    efficiency, capped at the port (``port_bytes_per_s``, default the ``collectives``'
    bandwidth: :attr:`TopologyReport.accel_bandwidth_bytes_per_s`).

    Returns a dict: ``knee_bytes_per_s`` (never above the port), ``ceiling`` (what sets it:
    ``"the port"``, ``"bytes in flight over the round trip"``, ``"compute"`` or ``"the <tier>
    tier's bandwidth"``), ``balanced`` (the knee lies below the port: the link stops being
    the limit), ``ports_to_balance`` (ports of this size the useful stream would fill),
    ``bytes_in_flight``, ``round_trip_s``, ``bytes_in_flight_to_balance`` (what a reader
    would need to stream at the port: ``port x efficiency x R``), ``tokens_per_s_at_knee``
    and ``tokens_per_s_unlimited`` (a link and reader without limit), by :func:`decode`
    (other keyword arguments go to it: ``capacity_bytes``, ``context_tokens``, ``tp``,
    ``collectives``, ...).

    Parameters
    ----------
    model : Model
        The model decoded.
    batch : int, optional
        Sequences decoded together (default 1).
    accelerator : Accelerator
        The reader.
    tier : MemoryTier, optional
        The tier streamed (None: the accelerator's own memory).
    port_bytes_per_s : float, optional
        The accelerator's port per direction, bytes/s (None: the ``collectives``'
        bandwidth, which must then be given).
    link_round_trip_s : float, optional
        The fabric's share of a read's round trip, s (default 0.0).
    link_efficiency : float, optional
        Fraction of the link the stream achieves, in (0, 1] (default 1.0).
    bytes_in_flight : float, optional
        Bytes the reader keeps outstanding (None: :func:`reader_bytes_in_flight`).
    **decode_kwargs
        Passed to :func:`decode` (not ``link_bandwidth_bps``,
        ``link_bandwidth_bytes_per_s`` or ``prefetch_bytes``, derived here).

    Returns
    -------
    dict
        The keys above, with ``tier``, ``port_bytes_per_s``, ``stream_bytes_per_s`` and
        ``tier_bandwidth_bytes_per_s`` (``knee_bps`` and ``tier_bandwidth_bps`` are
        deprecated aliases).
    """
    if not isinstance(model, Model):
        raise ConfigError(f"balance_bandwidth needs a Model, got {type(model).__name__}")
    if not isinstance(accelerator, Accelerator):
        raise ConfigError(f"accelerator must be an Accelerator, got {type(accelerator).__name__}")
    for k in ("link_bandwidth_bps", "link_bandwidth_bytes_per_s", "prefetch_bytes"):
        if k in decode_kwargs:
            raise ConfigError(f"balance_bandwidth derives {k} itself; give port_bytes_per_s and bytes_in_flight")
    tier = tier or accelerator.memory
    if not isinstance(tier, MemoryTier):
        raise ConfigError(f"tier must be a MemoryTier, got {type(tier).__name__}")
    port = _port(port_bytes_per_s, decode_kwargs.get("collectives"))
    eff = number(link_efficiency, "link_efficiency", positive=True, hi=1.0)
    d = reader_bytes_in_flight(accelerator) if bytes_in_flight is None else number(
        bytes_in_flight, "bytes_in_flight", positive=True)
    rtt = tier.latency_s + number(link_round_trip_s, "link_round_trip_s", nonneg=True)
    B = integer(batch, "batch", 1)
    kw = dict(decode_kwargs, model=model, batch=B, accelerator=accelerator, tier=tier,
              link_round_trip_s=float(link_round_trip_s), link_efficiency=eff)
    free = decode(**kw, link_bandwidth_bytes_per_s=1e30)            # neither link nor reader limits
    by, useful = _stream_ceiling(free, tier, d, rtt)
    knee = useful / eff
    balanced = knee <= port
    if not balanced:
        knee, by = port, "the port"
    at = decode(**kw, link_bandwidth_bytes_per_s=knee, prefetch_bytes=d)
    out = {"tier": tier.name, "knee_bytes_per_s": knee, "ceiling": by, "balanced": balanced,
           "port_bytes_per_s": port, "ports_to_balance": math.ceil(useful / (port * eff) - 1e-12),
           "stream_bytes_per_s": min(knee * eff, useful), "bytes_in_flight": d, "round_trip_s": rtt,
           "bytes_in_flight_to_balance": port * eff * rtt, "tokens_per_s_at_knee": at.tokens_per_s,
           "tokens_per_s_unlimited": free.tokens_per_s, "tier_bandwidth_bytes_per_s": tier.bandwidth_bytes_per_s}
    return with_key_aliases(out, {"knee_bps": "knee_bytes_per_s", "tier_bandwidth_bps": "tier_bandwidth_bytes_per_s"})


def _stream_ceiling(free, tier: MemoryTier, d: float, rtt: float) -> tuple[str, float]:
    """What first caps a useful weight stream (bytes/s) and that cap: the tier's bandwidth,
    the bytes in flight ``d`` over the round trip ``rtt`` (s), or compute (the stream at which
    the decode ``free``, unlimited by link or reader, spends as long on memory as on compute)."""
    little = math.inf if rtt == 0 else d / rtt
    compute_bw = math.inf
    if free.compute_s > 0:  # the stream at which memory time equals compute time (the engine's
        # achieved bandwidth and GEMM efficiency included: memory time goes as 1 / stream)
        compute_bw = free.effective_bandwidth_bytes_per_s * free.memory_s / free.compute_s
    terms = {f"the {tier.name} tier's bandwidth": tier.bandwidth_bytes_per_s,
             "bytes in flight over the round trip": little, "compute": compute_bw}
    by = min(terms, key=lambda k: terms[k])
    return by, terms[by]


def latency_value(model: Model, latencies_s, *, accelerator: Accelerator, collectives: Collectives,
                  tps=(8, 72), target_tokens_per_s: float | None = None, batch: int = 1, context_tokens: int = 0,
                  max_tp: int | None = None, port_bytes_per_s: float | None = None,
                  bytes_in_flight: float | None = None, link_efficiency: float = 1.0,
                  runtime=None) -> list[dict]:
    """What lower fabric latency buys, at each one-way latency in ``latencies_s``:

    * ``tokens_per_s[tp]``: a latency-bound decode (``batch``, weights sharded over ``tp``
      accelerators, every layer's all-reduces on the fabric at that latency);
    * ``round_trip_s``: a remote read at that latency (two hops and the memory's access);
    * with ``target_tokens_per_s``: ``tp_range``, the accelerators (1 to ``max_tp``,
      default the largest of ``tps``) over which the model reaches the target from local
      memory, and ``memory_per_chip_bytes``, the weights and KV cache each holds at the
      most of them (collectives grow with the group, so a slower fabric caps how far a
      model can spread, and how small each chip's memory can be); and streaming the
      weights and KV cache from remote memory instead: ``stream_total_bytes_per_s``, what
      the target needs in all (bytes/s); ``stream_per_port_bytes_per_s``, what one chip's
      port can carry at that latency, ``min(port x efficiency, D / round trip)`` (``D``
      :func:`reader_bytes_in_flight` unless given; the port ``port_bytes_per_s``, default
      the collectives' bandwidth); ``stream_tp``, the chips whose ports the target needs;
      ``stream_bandwidth_bytes_per_s``, each one's share (never above its port; the old
      key ``stream_bandwidth_bps`` is a deprecated alias); ``buffer_bytes``, what each
      keeps in flight for it (Little's law); ``stream_in_reach``, whether that many chips
      still reach the target with the collectives at that latency (``stream_tp`` within
      ``tp_range``).

    ``runtime``: the inference engine each decode runs (:class:`phy.topology.Runtime`; default
    the calibrated :meth:`~phy.topology.Runtime.trtllm`; :meth:`~phy.topology.Runtime.ideal`
    for the bare roofline). Its kernel time is the same at every latency, so it dilutes what
    latency buys in tokens but not in time per token.

    Parameters
    ----------
    model : Model
        The model decoded.
    latencies_s : float or array_like
        One-way fabric latencies, s.
    accelerator : Accelerator
        The accelerator.
    collectives : phy.latency.Collectives
        The fabric's collectives, rescaled to each latency.
    tps : tuple of int, optional
        Tensor-parallel group sizes for ``tokens_per_s`` (default (8, 72)).
    target_tokens_per_s : float, optional
        Tokens per second per sequence to reach (None: no ``tp_range`` or stream keys).
    batch : int, optional
        Sequences decoded together (default 1).
    context_tokens : int, optional
        Context per sequence (default 0).
    max_tp : int, optional
        Largest group tried for ``tp_range`` (None: the largest of ``tps``).
    port_bytes_per_s : float, optional
        One chip's port per direction, bytes/s (None: the collectives' bandwidth).
    bytes_in_flight : float, optional
        Bytes a reader keeps outstanding (None: :func:`reader_bytes_in_flight`).
    link_efficiency : float, optional
        Fraction of the port a stream achieves (default 1.0).
    runtime : Runtime, optional
        The inference engine, as above.

    Returns
    -------
    list of dict
        One dict per latency with ``one_way_s`` and the keys above.
    """
    if not isinstance(collectives, Collectives):
        raise ConfigError(f"collectives must be a phy.latency.Collectives, got {type(collectives).__name__}")
    lats = np.atleast_1d(np.asarray(latencies_s, dtype=float))
    tps = tuple(integer(t, "tp", 1) for t in tps)
    top = integer(max_tp or max(tps), "max_tp", 1, 4096)
    tier = accelerator.memory
    ctx = integer(context_tokens, "context_tokens", 0)
    B = integer(batch, "batch", 1)
    port = _port(port_bytes_per_s, collectives)
    eff = number(link_efficiency, "link_efficiency", positive=True, hi=1.0)
    d = reader_bytes_in_flight(accelerator) if bytes_in_flight is None else number(
        bytes_in_flight, "bytes_in_flight", positive=True)
    state = model.weight_bytes + B * ctx * model.kv_per_token_bytes
    rows = []
    for x in lats:
        col = collectives.at_latency(float(x))

        def speed(t):
            return decode(model=model, batch=B, accelerator=accelerator, tp=t, collectives=col, context_tokens=ctx,
                          capacity_bytes=state + 1.0, runtime=runtime).tokens_per_s

        row = {"one_way_s": float(x), "tokens_per_s": {t: speed(t) for t in tps},
               "round_trip_s": 2 * float(x) + tier.latency_s}
        if target_tokens_per_s is not None:
            tgt = number(target_tokens_per_s, "target_tokens_per_s", positive=True)
            _add_target_keys(row, speed, tgt, top, state, model, B, ctx, tier, port, eff, d)
        rows.append(row)
    return rows


def _add_target_keys(row: dict, speed, tgt: float, top: int, state: float, model: Model, B: int, ctx: int,
                     tier, port: float, eff: float, d: float) -> None:
    """:func:`latency_value`'s keys for a target of ``tgt`` tokens/s at one latency, added to
    ``row``: the group sizes (1 to ``top``) that reach it (``speed(tp)`` the tokens/s at
    that size) and the memory each chip holds, and the weight stream from remote memory
    that would reach it instead (its total, each port's share, the chips and buffers)."""
    ok = [t for t in range(1, top + 1) if speed(t) >= tgt]
    row["target_tokens_per_s"] = tgt
    row["tp_range"] = (ok[0], ok[-1]) if ok else None
    row["memory_per_chip_bytes"] = state / ok[-1] if ok else None
    total = (model.touched_bytes(B) + B * ctx * model.kv_per_token_bytes) * tgt
    per_port, limit = stream_bandwidth(tier.bandwidth_bytes_per_s, port, eff, d, row["round_trip_s"])
    chips = math.ceil(total / per_port - 1e-12)
    row["stream_total_bytes_per_s"] = total
    row["stream_per_port_bytes_per_s"] = per_port
    row["stream_limit"] = limit
    row["stream_tp"] = chips
    row["stream_bandwidth_bytes_per_s"] = total / chips
    row["buffer_bytes"] = total / chips * row["round_trip_s"]
    row["stream_in_reach"] = bool(ok) and ok[0] <= chips <= ok[-1]
    with_key_aliases(row, {"stream_bandwidth_bps": "stream_bandwidth_bytes_per_s"})
