"""Collectives end to end: the collective library's algorithms and protocols on a fabric
whose every hop is a :class:`~phy.latency.LatencyStack`.

A collective among ``p`` accelerators, each holding ``S`` bytes, takes::

    T = kernel + steps x step(protocol) + peers x peer + bytes_on_wire / bandwidth

* ``step``: one hop (``hop``: accelerator to accelerator through the fabric, every layer)
  and the receiver's poll for LL and LL128; Simple fences between data and flag (the data
  hop, a write acknowledgement's round trip, the flag hop: four hops) before the poll.
* Algorithms, by steps, direct peers and bytes each accelerator receives (all-reduce
  unless named):

  ========== ================== ============== =========================================
  ring       ``2 (p-1)``        0              ``2 (p-1)/p S``
  tree       ``2 ceil(log2 p)`` 0              ``2 S`` (pipelined double binary tree)
  one_shot   1                  ``p - 1``      ``(p-1) S`` (all-gather, local reduce)
  two_shot   2                  ``2 (p - 1)``  ``2 (p-1)/p S`` (direct reduce-scatter, all-gather)
  switch     barrier, in-switch ``ld_reduce`` round trip (operands read from every
             accelerator's memory), multicast store, barrier: 3 hops, 2 polls and one
             remote read; ``(1 + 1/p) S`` at the switch's reduction efficiency
  ========== ================== ============== =========================================

  ``all_gather`` and ``reduce_scatter``: ring (``p - 1`` steps) or direct (one step,
  ``p - 1`` peers), ``(p-1)/p S``; ``all_to_all``: direct, ``(p-1)/p S``.
* Bytes on the wire: the payload cut into packets with their headers
  (:meth:`~phy.latency.Endpoint.wire_bytes`), over the protocol's efficiency.

:meth:`Collectives.time` picks the fastest algorithm and protocol (as a collective
library's tuner does) unless told, and says which layer each nanosecond comes from.
:func:`collective_time_s` keeps the plain alpha-beta formulas (Thakur, Rabenseifner and
Gropp 2005) for comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .parts import Endpoint, Software
from .stack import LatencyStack

__all__ = ["ALGORITHMS", "PROTOCOLS", "CollectiveTime", "Collectives", "collective_time_s", "fit_software"]

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
ALGORITHMS = {
    "all_reduce": ("ring", "tree", "one_shot", "two_shot", "switch"),
    "all_gather": ("ring", "direct"),
    "reduce_scatter": ("ring", "direct"),
    "all_to_all": ("direct",),
}
PROTOCOLS = ("ll", "ll128", "simple")
_HOPS_PER_STEP = {"ll": 1, "ll128": 1, "simple": 4}


def collective_time_s(kind: str, size_bytes: float, p: int, alpha_s: float, bandwidth_bytes_per_s: float) -> float:
    """Plain alpha-beta time of a collective among ``p`` accelerators (s).

    ``size_bytes`` is each accelerator's buffer, ``alpha_s`` the per-message latency,
    ``bandwidth_bytes_per_s`` each accelerator's bandwidth per direction (B/s). Formulas
    (Thakur, Rabenseifner and Gropp 2005 for ring and binomial tree):

    * ``ring`` all-reduce: ``2 (p-1) alpha + 2 (p-1)/p S/B``
    * ``tree`` all-reduce (binomial reduce then broadcast): ``2 ceil(log2 p) (alpha + S/B)``
    * ``switch`` all-reduce (reduction in the switch): ``alpha + S/B``
    * ``all_to_all`` (switched, full bisection): ``alpha + (p-1)/p S/B``
    * ``all_gather`` / ``reduce_scatter`` (ring): ``(p-1) alpha + (p-1)/p S/B``

    :meth:`Collectives.time` is the end-to-end model; this is the textbook reference.
    """
    S = number(size_bytes, "size_bytes", nonneg=True)
    p = integer(p, "p", 1)
    a = number(alpha_s, "alpha_s", nonneg=True)
    B = number(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", positive=True)
    if p == 1:
        return 0.0
    if kind == "ring":
        return 2 * (p - 1) * a + 2 * (p - 1) / p * S / B
    if kind == "tree":
        return 2 * math.ceil(math.log2(p)) * (a + S / B)
    if kind == "switch":
        return a + S / B
    if kind == "all_to_all":
        return a + (p - 1) / p * S / B
    if kind in ("all_gather", "reduce_scatter"):
        return (p - 1) * a + (p - 1) / p * S / B
    raise ConfigError(f"unknown collective {kind!r}: ring, tree, switch, all_to_all, all_gather, reduce_scatter")


@dataclass(frozen=True)
class CollectiveTime:
    """One collective's time and where it goes (s).

    Attributes
    ----------
    kind, algorithm, protocol : str
    size_bytes : float
        Each accelerator's buffer.
    p : int
    time_s : float
    steps, peers, hops : int
        Synchronised steps, direct peers, fabric hops on the critical path.
    layers : dict
        ``software`` (kernel, polls, peers), the fabric's layers (``endpoint``, ``phy``,
        ``link``, ``switch``, ``path``, ``memory``: every hop's terms times the hops) and
        ``bandwidth`` (the bytes on the wire over the bandwidth).
    """

    kind: str
    algorithm: str
    protocol: str
    size_bytes: float
    p: int
    time_s: float
    steps: int
    peers: int
    hops: int
    layers: dict

    @property
    def latency_s(self) -> float:
        """Everything but the bandwidth term."""
        return self.time_s - sum(self.layers.get("bandwidth", {}).values())

    def layer_totals(self) -> dict:
        return {k: float(sum(v.values())) for k, v in self.layers.items()}

    def bus_bandwidth_bytes_per_s(self) -> float:
        """nccl-tests' bus bandwidth: ``S / t`` times ``2 (p-1)/p`` (all-reduce) or
        ``(p-1)/p`` (the others), comparable across ``p``."""
        if self.time_s <= 0:
            return float("inf")
        f = 2 * (self.p - 1) / self.p if self.kind == "all_reduce" else (self.p - 1) / self.p
        return self.size_bytes / self.time_s * f

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["layers"] = {k: dict(v) for k, v in self.layers.items()}
        d["latency_s"] = self.latency_s
        return d


@dataclass(frozen=True)
class Collectives:
    """Collectives on a fabric.

    Parameters
    ----------
    hop : LatencyStack
        One small message from an accelerator to another, every layer
        (:func:`phy.latency.one_way`; :attr:`phy.topology.TopologyReport.one_way`).
    bandwidth_bytes_per_s : float
        Each accelerator's usable bandwidth into the fabric, per direction.
    endpoint : Endpoint
    software : Software
    read : LatencyStack, optional
        A read of a remote accelerator's memory (the in-switch reduction reads its
        operands); without it the switch algorithm is not offered.
    name : str
    """

    hop: LatencyStack
    bandwidth_bytes_per_s: float
    endpoint: Endpoint
    software: Software
    read: LatencyStack | None = None
    name: str = "fabric"

    def __post_init__(self):
        if not isinstance(self.hop, LatencyStack):
            raise ConfigError(f"Collectives.hop must be a LatencyStack, got {type(self.hop).__name__}")
        number(self.bandwidth_bytes_per_s, "Collectives.bandwidth_bytes_per_s", positive=True)
        if not isinstance(self.endpoint, Endpoint):
            raise ConfigError(f"Collectives.endpoint must be an Endpoint, got {type(self.endpoint).__name__}")
        if not isinstance(self.software, Software):
            raise ConfigError(f"Collectives.software must be a Software, got {type(self.software).__name__}")
        if self.read is not None and not isinstance(self.read, LatencyStack):
            raise ConfigError(f"Collectives.read must be a LatencyStack or None, got {type(self.read).__name__}")

    @property
    def hop_s(self) -> float:
        """One hop, accelerator to accelerator (s)."""
        return self.hop.total_s

    @property
    def alpha_s(self) -> float:
        """Per-step latency of the LL protocol: a hop and a poll (the alpha of alpha-beta)."""
        return self.hop_s + self.software.poll_s

    def at_latency(self, one_way_s: float) -> Collectives:
        """The same fabric with every hop's layers scaled to ``one_way_s`` (and the remote
        read's fabric part with them; its memory access stays), for latency sweeps."""
        x = number(one_way_s, "one_way_s", positive=True)
        f = x / self.hop_s

        def scale(st: LatencyStack, keep=("memory",)) -> LatencyStack:
            lay = {k: ({t: v for t, v in d.items()} if k in keep else {t: v * f for t, v in d.items()})
                   for k, d in st.layers.items()}
            tot_old, tot = st.total_s, sum(sum(d.values()) for d in lay.values())
            q = {k: v + (tot - tot_old) for k, v in st.quantiles_s.items()}
            return LatencyStack(f"{st.name} at {x * 1e9:g} ns", lay, q, st.notes)

        return replace(self, hop=scale(self.hop), read=None if self.read is None else scale(self.read),
                       name=f"{self.name} at {x * 1e9:g} ns")

    def time(self, kind: str, size_bytes: float, p: int, *, algorithm: str | None = None,
             protocol: str | None = None) -> CollectiveTime:
        """The time of ``kind`` over ``p`` accelerators of ``size_bytes`` each: the fastest
        algorithm and protocol, or the ones given."""
        return min(self.candidates(kind, size_bytes, p, algorithm=algorithm, protocol=protocol),
                   key=lambda t: t.time_s)

    def candidates(self, kind: str, size_bytes: float, p: int, *, algorithm: str | None = None,
                   protocol: str | None = None) -> list[CollectiveTime]:
        """Every algorithm and protocol :meth:`time` chooses among (or the ones given)."""
        if kind not in KINDS:
            raise ConfigError(f"unknown collective {kind!r}; one of {', '.join(KINDS)}")
        S = number(size_bytes, "size_bytes", nonneg=True)
        p = integer(p, "p", 1, 10**7)
        algs = ALGORITHMS[kind]
        if algorithm is not None:
            if algorithm not in algs:
                raise ConfigError(f"{kind} algorithms: {', '.join(algs)}; got {algorithm!r}")
            if algorithm == "switch" and (self.read is None or not self.software.switch_reduction):
                raise ConfigError("the switch algorithm needs a switch that reduces (Software.switch_reduction) "
                                  "and the remote read it makes (Collectives.read)")
            algs = (algorithm,)
        elif not self.software.switch_reduction or self.read is None:
            algs = tuple(a for a in algs if a != "switch")
        protos = PROTOCOLS
        if protocol is not None:
            if protocol not in PROTOCOLS:
                raise ConfigError(f"protocols: {', '.join(PROTOCOLS)}; got {protocol!r}")
            protos = (protocol,)
        if p == 1:
            return [CollectiveTime(kind, algs[0], protos[0], S, 1, 0.0, 0, 0, 0, {})]
        out = [self._one(kind, a, pr, S, p) for a in algs for pr in protos
               if not (a == "switch" and pr != "simple")]  # multimem operations move whole lines, no flags
        if not out:
            raise ConfigError("the switch algorithm runs the Simple protocol only")
        return out

    def sweep(self, kind: str, sizes, p: int, **kw) -> list[CollectiveTime]:
        """:meth:`time` at each size."""
        return [self.time(kind, float(s), p, **kw) for s in np.atleast_1d(np.asarray(sizes, dtype=float))]

    # ------------------------------------------------------------------ the model
    def _one(self, kind: str, alg: str, proto: str, S: float, p: int) -> CollectiveTime:
        sw = self.software
        k = _HOPS_PER_STEP[proto]
        lg = math.ceil(math.log2(p))
        memory_reads = 0
        eff = {"ll": sw.ll_efficiency, "ll128": sw.ll128_efficiency, "simple": 1.0}[proto]
        if kind == "all_reduce":
            steps, peers, data = {
                "ring": (2 * (p - 1), 0, 2 * (p - 1) / p * S),
                "tree": (2 * lg, 0, 2 * S),
                "one_shot": (1, p - 1, (p - 1) * S),
                "two_shot": (2, 2 * (p - 1), 2 * (p - 1) / p * S),
                "switch": (2, 0, (1 + 1 / p) * S),
            }[alg]
        elif alg == "ring":
            steps, peers, data = p - 1, 0, (p - 1) / p * S
        else:
            steps, peers, data = 1, p - 1, (p - 1) / p * S
        if alg == "switch":
            hops = 3  # barrier in, multicast store, barrier out; the ld_reduce is a read
            memory_reads = 1
            eff *= sw.switch_efficiency
        else:
            hops = steps * k
        wire = self.endpoint.wire_bytes(data) if data > 0 else 0.0
        bw = wire / (self.bandwidth_bytes_per_s * eff)
        layers: dict = {"software": {"kernel": sw.kernel_s, "poll": steps * sw.poll_s, "peers": peers * sw.peer_s}}
        for name, d in self.hop.layers.items():
            for t, v in d.items():
                layers.setdefault(name, {})[t] = hops * v
        if memory_reads:
            for name, d in self.read.layers.items():
                for t, v in d.items():
                    layers.setdefault(name, {})[t] = layers.get(name, {}).get(t, 0.0) + v
        layers["bandwidth"] = {"wire": bw}
        total = float(sum(sum(d.values()) for d in layers.values()))
        return CollectiveTime(kind, alg, proto, S, p, total, steps, peers, hops, layers)

    def to_dict(self) -> dict:
        return {"name": self.name, "hop_s": self.hop_s, "alpha_s": self.alpha_s, "hop": self.hop.to_dict(),
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s, "endpoint": self.endpoint.to_dict(),
                "software": self.software.to_dict(), "read": None if self.read is None else self.read.to_dict()}


def fit_software(points, software: Software | None = None, kind: str = "all_reduce") -> tuple[Software, list]:
    """The ``kernel_s`` and ``peer_s`` that bring the model closest to measured collective
    times, and the relative error left at each point.

    ``points``: ``(collectives, p, size_bytes, measured_s)``, each a fabric and a small
    collective measured on it. Every candidate algorithm's time is linear in the two
    constants (``kernel + peers x peer + rest``), so the fit is a linear program: the
    largest relative error over the points is minimised (minimax), with the model's
    choice at each point at most ``(1 + e)`` times the measurement and every candidate at
    least ``(1 - e)`` times it; the choices are then recomputed and the fit repeated until
    they settle (at most 10 times). Both constants are held >= 0.
    """
    from scipy.optimize import linprog

    sw = software or Software()
    pts = list(points)
    if len(pts) < 2:
        raise ConfigError("fit_software needs at least two measured points for its two constants")
    for col, *_ in pts:
        if not isinstance(col, Collectives):
            raise ConfigError("each point starts with a Collectives")
    picks = None
    for _ in range(10):
        A, b = [], []
        chosen = []
        for col, p, size, meas in pts:
            m = number(meas, "measured_s", positive=True)
            cands = replace(col, software=sw).candidates(kind, size, p)
            best = min(cands, key=lambda t: t.time_s)
            chosen.append((best.algorithm, best.protocol))
            for t in cands:
                rest = t.time_s - sw.kernel_s - t.peers * sw.peer_s
                A.append([-1.0, -float(t.peers), -m])  # every candidate >= (1 - e) m
                b.append(rest - m)
                if t is best:
                    A.append([1.0, float(t.peers), -m])  # the choice <= (1 + e) m
                    b.append(m - rest)
        res = linprog([0.0, 0.0, 1.0], A_ub=np.array(A), b_ub=np.array(b), bounds=[(0, None)] * 3,
                      method="highs")
        if not res.success:
            raise ConfigError(f"the fit has no solution: {res.message}")
        sw = sw.with_(kernel_s=float(res.x[0]), peer_s=float(res.x[1]))
        if chosen == picks:
            break
        picks = chosen
    errors = [replace(c, software=sw).time(kind, s, p).time_s / m - 1 for c, p, s, m in pts]
    return sw, errors
