"""Collectives end to end: NCCL's algorithms and protocols, chosen as NCCL chooses them, on
a fabric whose every hop is a :class:`~phy.latency.LatencyStack`.

A collective among ``p`` accelerators, each holding ``S`` bytes, takes::

    T = kernel + steps x step(protocol) + peers x peer + barriers + bytes_on_wire / rate

* ``step``: one hop (``hop``: accelerator to accelerator through the fabric, every layer)
  and the receiver's poll for LL and LL128; Simple fences between data and flag (the data
  hop, a write acknowledgement's round trip, the flag hop: four hops) before the poll.
* Algorithms (all-reduce unless named), by steps, direct peers and bytes each accelerator
  receives:

  ========== ================== ============== =========================================
  ring       ``2 (p-1)``        0              ``2 (p-1)/p S``
  tree       ``2 (p-1)``        0              ``2 S`` (NCCL's tree inside one NVLink
                                               domain is a pipelined chain)
  nvls       NVLink SHARP: barrier, in-switch ``ld_reduce`` (operands read from every
             accelerator's memory), multicast store, barrier: 3 hops, 2 polls, one remote
             read and two barriers whose ``p`` arrivals on one flag serialise
             (``p x atomic``); ``(1 + 1/p) S`` at the switch's reduction efficiency
  one_shot   1                  ``p - 1``      ``(p-1) S`` (symmetric kernels only)
  two_shot   2                  ``2 (p - 1)``  ``2 (p-1)/p S`` (symmetric kernels only)
  ========== ================== ============== =========================================

  ``all_gather`` / ``reduce_scatter``: ring (``p - 1`` steps) or nvls / direct (one step),
  ``(p-1)/p S``; ``all_to_all``: direct, ``(p-1)/p S``; ``send_recv``: one transfer of
  ``S`` to one peer (nccl-tests' ``sendrecv_perf``).
* Bytes on the wire: the payload cut into packets with their headers
  (:meth:`~phy.latency.Endpoint.wire_bytes`), over the protocol's efficiency.
* Rate: the link bandwidth times the share of it the channels NCCL launches can drive
  (``channels x threads`` over NCCL's full complement; :meth:`NcclTuner.channels`): small
  and mid-size messages run on few CTAs, so bandwidth ramps with size.

:meth:`Collectives.time` takes NCCL's own choice of algorithm and protocol
(:class:`~phy.latency.nccl.NcclTuner`, NCCL's ``tuning.cc`` reproduced), or with
``Software.symmetric`` (NCCL 2.27 symmetric-memory kernels on registered buffers) the
fastest of the direct kernels; ``algorithm=`` and ``protocol=`` force one. It says which
layer each nanosecond comes from. :func:`collective_time_s` keeps the plain alpha-beta
formulas (Thakur, Rabenseifner and Gropp 2005) for comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .nccl import NcclTuner
from .parts import Endpoint, Software
from .stack import LatencyStack

__all__ = ["ALGORITHMS", "PROTOCOLS", "CollectiveTime", "Collectives", "collective_time_s", "fit_software"]

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
ALGORITHMS = {
    "all_reduce": ("ring", "tree", "nvls", "one_shot", "two_shot"),
    "all_gather": ("ring", "nvls", "direct"),
    "reduce_scatter": ("ring", "nvls", "direct"),
    "all_to_all": ("direct",),
    "send_recv": ("p2p",),
}
#: Algorithms that run only as NCCL 2.27's symmetric-memory kernels (``Software.symmetric``).
SYMMETRIC = ("one_shot", "two_shot", "direct")
#: Older name of ``nvls``, still accepted.
ALIASES = {"switch": "nvls"}
PROTOCOLS = ("ll", "ll128", "simple")
_HOPS_PER_STEP = {"ll": 1, "ll128": 1, "simple": 4}
_FULL_THREADS = {"ll": 512, "ll128": 640, "simple": 512}


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

    Parameters
    ----------
    kind : str
        ``"ring"``, ``"tree"``, ``"switch"``, ``"all_to_all"``, ``"all_gather"`` or
        ``"reduce_scatter"``, as above.
    size_bytes : float
        Each accelerator's buffer S, bytes.
    p : int
        Accelerators in the collective (1: no time).
    alpha_s : float
        Per-message latency, s.
    bandwidth_bytes_per_s : float
        Each accelerator's bandwidth per direction B, bytes/s.

    Returns
    -------
    float
        The collective's time, s.
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
    channels : int
        The channels (CTAs) NCCL runs it on.
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
    channels: int = 0

    @property
    def latency_s(self) -> float:
        """Everything but the bandwidth term."""
        return self.time_s - sum(self.layers.get("bandwidth", {}).values())

    def layer_totals(self) -> dict:
        return {k: float(sum(v.values())) for k, v in self.layers.items()}

    def bus_bandwidth_bytes_per_s(self) -> float:
        """nccl-tests' bus bandwidth: ``S / t`` times ``2 (p-1)/p`` (all-reduce),
        1 (send/recv) or ``(p-1)/p`` (the others), comparable across ``p``."""
        if self.time_s <= 0:
            return float("inf")
        f = (2 * (self.p - 1) / self.p if self.kind == "all_reduce" else 1.0 if self.kind == "send_recv"
             else (self.p - 1) / self.p)
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
        operands); without it NVLS is not offered.
    name : str
    links : int
        NVLinks per accelerator (NCCL's graph bandwidth counts them).
    """

    hop: LatencyStack
    bandwidth_bytes_per_s: float
    endpoint: Endpoint
    software: Software
    read: LatencyStack | None = None
    name: str = "fabric"
    links: int = 18

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
        integer(self.links, "Collectives.links", 1, 64)

    @property
    def hop_s(self) -> float:
        """One hop, accelerator to accelerator (s)."""
        return self.hop.total_s

    @property
    def alpha_s(self) -> float:
        """Per-step latency of the LL protocol: a hop and a poll (the alpha of alpha-beta)."""
        return self.hop_s + self.software.poll_s

    @property
    def nvls(self) -> bool:
        """NVLink SHARP is on offer: the switch reduces and the remote read is known."""
        return self.software.switch_reduction and self.read is not None

    @property
    def tuner(self) -> NcclTuner:
        """NCCL's tuner for this fabric (:class:`~phy.latency.nccl.NcclTuner`)."""
        return NcclTuner(self.software.generation, self.links, self.nvls)

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
        """The time of ``kind`` over ``p`` accelerators of ``size_bytes`` each, with the
        algorithm and protocol NCCL picks (:meth:`choice`), or the ones given: a forced
        ring or tree keeps NCCL's protocol for it (as ``NCCL_ALGO`` does); otherwise the
        fastest of those left open."""
        if algorithm is None and protocol is None:
            S = number(size_bytes, "size_bytes", nonneg=True)
            p = integer(p, "p", 1, 10**7)
            a, pr = self.choice(kind, S, p)
            return self._one(kind, a, pr, S, p) if p > 1 else self.candidates(kind, S, p)[0]
        algorithm = ALIASES.get(algorithm, algorithm)
        if (protocol is None and kind in ("all_reduce", "all_gather", "reduce_scatter")
                and algorithm in ("ring", "tree") and not self.software.symmetric and integer(p, "p", 1, 10**7) > 1):
            # NCCL_ALGO forced: NCCL's tuner still picks the protocol
            protocol = self.tuner.pick(kind, number(size_bytes, "size_bytes", nonneg=True), p, algorithm)[1]
        return min(self.candidates(kind, size_bytes, p, algorithm=algorithm, protocol=protocol),
                   key=lambda t: t.time_s)

    def choice(self, kind: str, size_bytes: float, p: int) -> tuple:
        """``(algorithm, protocol)`` as NCCL picks them: its tuner's model
        (:meth:`NcclTuner.pick`) for ring, tree and NVLS; point-to-point by NCCL's LL
        threshold (all-to-all as ``p - 1`` sends of ``S/p``); with ``Software.symmetric``
        the fastest symmetric kernel by this model."""
        if kind not in KINDS:
            raise ConfigError(f"unknown collective {kind!r}; one of {', '.join(KINDS)}")
        S = number(size_bytes, "size_bytes", nonneg=True)
        p = integer(p, "p", 1, 10**7)
        if p == 1:
            return ALGORITHMS[kind][0], "simple"
        if kind == "send_recv":
            return "p2p", self.tuner.p2p(S)[0]
        if kind == "all_to_all":
            return "direct", self.tuner.p2p(S / p)[0]
        if self.software.symmetric:
            best = min(self.candidates(kind, S, p), key=lambda t: t.time_s)
            return best.algorithm, best.protocol
        return self.tuner.pick(kind, S, p)

    def candidates(self, kind: str, size_bytes: float, p: int, *, algorithm: str | None = None,
                   protocol: str | None = None) -> list[CollectiveTime]:
        """Every algorithm and protocol on offer (or the ones given): NCCL's own, or with
        ``Software.symmetric`` the symmetric kernels and NVLS."""
        if kind not in KINDS:
            raise ConfigError(f"unknown collective {kind!r}; one of {', '.join(KINDS)}")
        S = number(size_bytes, "size_bytes", nonneg=True)
        p = integer(p, "p", 1, 10**7)
        algs = ALGORITHMS[kind]
        if algorithm is not None:
            algorithm = ALIASES.get(algorithm, algorithm)
            if algorithm not in algs:
                raise ConfigError(f"{kind} algorithms: {', '.join(algs)}; got {algorithm!r}")
            if algorithm == "nvls" and not self.nvls:
                raise ConfigError("NVLS needs a switch that reduces (Software.switch_reduction) "
                                  "and the remote read it makes (Collectives.read)")
            algs = (algorithm,)
        else:
            if not self.nvls:
                algs = tuple(a for a in algs if a != "nvls")
            if kind in ("all_reduce", "all_gather", "reduce_scatter"):
                if self.software.symmetric:
                    algs = tuple(a for a in algs if a in SYMMETRIC or a == "nvls")
                else:
                    algs = tuple(a for a in algs if a not in SYMMETRIC)
        protos = PROTOCOLS
        if protocol is not None:
            if protocol not in PROTOCOLS:
                raise ConfigError(f"protocols: {', '.join(PROTOCOLS)}; got {protocol!r}")
            protos = (protocol,)
        if p == 1:
            return [CollectiveTime(kind, algs[0], protos[0], S, 1, 0.0, 0, 0, 0, {})]
        out = [self._one(kind, a, pr, S, p) for a in algs for pr in protos
               if not (a == "nvls" and pr != "simple")]  # multimem operations move whole lines, no flags
        if not out:
            raise ConfigError("NVLS runs the Simple protocol only")
        return out

    def sweep(self, kind: str, sizes, p: int, **kw) -> list[CollectiveTime]:
        """:meth:`time` at each size."""
        return [self.time(kind, float(s), p, **kw) for s in np.atleast_1d(np.asarray(sizes, dtype=float))]

    def send_recv(self, size_bytes: float, **kw) -> CollectiveTime:
        """One accelerator sends ``size_bytes`` to another (nccl-tests ``sendrecv_perf``)."""
        return self.time("send_recv", size_bytes, 2, **kw)

    # ------------------------------------------------------------------ the model
    def _shape(self, kind: str, alg: str, S: float, p: int) -> tuple:
        """``(steps, peers, bytes received)`` of one algorithm."""
        if kind == "all_reduce":
            return {
                "ring": (2 * (p - 1), 0, 2 * (p - 1) / p * S),
                "tree": (2 * (p - 1), 0, 2 * S),
                "one_shot": (1, p - 1, (p - 1) * S),
                "two_shot": (2, 2 * (p - 1), 2 * (p - 1) / p * S),
                "nvls": (2, 0, (1 + 1 / p) * S),
            }[alg]
        if kind == "send_recv":
            return 1, 0, S
        if alg == "ring":
            return p - 1, 0, (p - 1) / p * S
        if alg == "nvls":
            return 1, 0, (p - 1) / p * S
        return 1, p - 1, (p - 1) / p * S

    def _one(self, kind: str, alg: str, proto: str, S: float, p: int) -> CollectiveTime:
        sw = self.software
        tuner = self.tuner
        k = _HOPS_PER_STEP[proto]
        eff = {"ll": sw.ll_efficiency, "ll128": sw.ll128_efficiency, "simple": 1.0}[proto]
        steps, peers, data = self._shape(kind, alg, S, p)
        barriers = 0.0
        if alg == "nvls":
            # barrier, multimem ld_reduce (a remote read), multimem store, barrier; each
            # barrier's p arrivals on one flag serialise at the flag's L2 slice
            hops = 3 if kind == "all_reduce" else 2
            h = min(p, 32)
            eff *= sw.switch_efficiency * (h - 1) / h
            barriers = 2 * p * sw.atomic_s
            channels, share = tuner.gen.nvls_channels, 1.0
        else:
            hops = steps * k
            if alg in ("ring", "tree"):
                nc, nt = tuner.channels(kind if kind != "all_to_all" else "all_gather", alg, proto, S, p)
                channels, share = nc, min(1.0, nc * nt / (tuner.n_channels * _FULL_THREADS[proto]))
            else:
                per = S if kind == "send_recv" else S / p
                channels = tuner.p2p(per)[1]
                share = min(1.0, channels / tuner.n_channels) if kind == "send_recv" else 1.0
        wire = self.endpoint.wire_bytes(data) if data > 0 else 0.0
        bw = wire / (self.bandwidth_bytes_per_s * eff * share)
        layers: dict = {"software": {"kernel": sw.kernel_s, "poll": steps * sw.poll_s, "peers": peers * sw.peer_s}}
        if barriers:
            layers["software"]["barrier"] = barriers
        for name, d in self.hop.layers.items():
            for t, v in d.items():
                layers.setdefault(name, {})[t] = hops * v
        if alg == "nvls" and kind != "all_gather":
            for name, d in self.read.layers.items():
                for t, v in d.items():
                    layers.setdefault(name, {})[t] = layers.get(name, {}).get(t, 0.0) + v
        layers["bandwidth"] = {"wire": bw}
        total = float(sum(sum(d.values()) for d in layers.values()))
        return CollectiveTime(kind, alg, proto, S, p, total, steps, peers, hops, layers, channels)

    def to_dict(self) -> dict:
        return {"name": self.name, "hop_s": self.hop_s, "alpha_s": self.alpha_s, "hop": self.hop.to_dict(),
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s, "endpoint": self.endpoint.to_dict(),
                "software": self.software.to_dict(), "read": None if self.read is None else self.read.to_dict(),
                "links": self.links}


def fit_software(points, software: Software | None = None, kind: str = "all_reduce") -> tuple[Software, list]:
    """The ``kernel_s`` and ``peer_s`` that bring the model closest to measured collective
    times, and the relative error left at each point.

    ``points``: ``(collectives, p, size_bytes, measured_s)``, each a fabric and a small
    collective measured on it; each fabric keeps its own software but for the two
    constants, started from ``software`` (default :class:`Software`). Every candidate's
    time is linear in the two constants (``kernel + peers x peer + rest``), so the fit is a
    linear program: the largest relative error over the points is minimised (minimax),
    with the model's choice at each point (:meth:`Collectives.choice`) at most
    ``(1 + e)`` times the measurement and, where the model takes the fastest candidate
    (symmetric kernels), every candidate at least ``(1 - e)`` times it; the choices are
    then recomputed and the fit repeated until they settle (at most 10 times). Both
    constants are held >= 0.

    Parameters
    ----------
    points : iterable of tuple
        At least two ``(collectives, p, size_bytes, measured_s)``.
    software : Software, optional
        The start, whose other constants are kept (None: ``Software()``).
    kind : str, optional
        The collective measured (default ``"all_reduce"``).

    Returns
    -------
    tuple of (Software, list of float)
        The fitted software and the relative error ``model / measured - 1`` at each point.
    """
    from scipy.optimize import linprog

    sw = software or Software()
    pts = list(points)
    if len(pts) < 2:
        raise ConfigError("fit_software needs at least two measured points for its two constants")
    for col, *_ in pts:
        if not isinstance(col, Collectives):
            raise ConfigError("each point starts with a Collectives")

    def at(col: Collectives, s: Software) -> Collectives:
        return replace(col, software=col.software.with_(kernel_s=s.kernel_s, peer_s=s.peer_s))

    picks = None
    for _ in range(10):
        A, b = [], []
        chosen = []
        for col, p, size, meas in pts:
            m = number(meas, "measured_s", positive=True)
            c = at(col, sw)
            pick = c.choice(kind, size, p)
            chosen.append(pick)
            cands = c.candidates(kind, size, p) if c.software.symmetric else [c.time(kind, size, p)]
            for t in cands:
                rest = t.time_s - sw.kernel_s - t.peers * sw.peer_s
                A.append([-1.0, -float(t.peers), -m])  # every candidate >= (1 - e) m
                b.append(rest - m)
                if (t.algorithm, t.protocol) == pick:
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
    errors = [at(c, sw).time(kind, s, p).time_s / m - 1 for c, p, s, m in pts]
    return sw, errors
