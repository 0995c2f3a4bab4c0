"""NCCL's own choice of algorithm, protocol and channel count, as its tuner makes it.

This reproduces, for one NVLink domain (NCCL's ``nNodes == 1``: an HGX board, or an NVL72
rack, which NCCL fuses into one NVLink domain with multi-node NVLink), the cost model NCCL
uses to pick an algorithm and a protocol, and the channel and thread counts it then
launches. The figures are NCCL's (``NVIDIA/nccl``, master at 5067397c, 2026; the same
tables since 2.19):

* ``src/graph/tuning.cc`` ``ncclTopoTuneModel``: base latencies (us) per algorithm and
  protocol, the NVLink hardware latency per step, the LL, LL128 and tree bandwidth caps
  per generation, ``nvlsEfficiency`` (0.85 Hopper, 0.74 Blackwell), the bus to algorithm
  bandwidth ratio ``nRanks / nsteps``; ``ncclTopoGetAlgoTime``: ``lat + bytes / bw``,
  with the tree's per-size correction.
* ``src/enqueue.cc`` ``topoGetAlgoInfo``: the fastest (algorithm, protocol) by that time;
  for ring and tree, channels are removed while ``bytes < channels x threads x
  threshold`` (thresholds 8, 8, 64 bytes per thread for LL, LL128, Simple, the ring LL's
  times ``nRanks``; ``src/include/comm.h``), then threads halved the same way; NVLS runs
  ``nvlsChannels`` (16 Hopper, 24 Blackwell in one NVLink domain, ``src/transport/nvls.cc``).
  Point-to-point: LL up to 16 KiB per channel (``NCCL_P2P_LL_THRESHOLD``).
* The graph NCCL searches: each GPU's NVLink bandwidth as NCCL counts it (18 links of
  20.6 GB/s on Hopper, 40.1 GB/s on Blackwell, ``src/graph/topo.h``), shared by its ring
  channels at the largest speed of NCCL's per-generation speed list that fits
  (``src/graph/search.cc``: 16 channels of 20 GB/s on an H100 board, as NCCL logs it in
  NVIDIA/nccl issue 1453; 16 of 45 GB/s on Blackwell, derived the same way). NVLS uses one
  channel per head GPU (``nHeads`` = the GPUs, NVLS logs in vllm issue 9699), at most 32
  (``NCCL_MAX_NVLS_ARITY``).

The tuner only chooses. :class:`phy.latency.Collectives` computes the time of the choice
from the fabric (hops, wire bytes, protocol efficiency, the channels in use).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["GENERATIONS", "NcclTuner"]

#: NCCL's names of the algorithms modelled here, by the names :class:`Collectives` uses.
NCCL_NAMES = {"tree": "Tree", "ring": "Ring", "nvls": "NVLS"}
PROTOS = ("ll", "ll128", "simple")

# tuning.cc ncclTunerConstantsDefaults (us): baseLatencies and NVLink hwLatencies
_BASE_LAT = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4), "nvls": (0.0, 0.0, 0.0)}
_HW_LAT_NVLINK = {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4), "nvls": (0.0, 0.0, 25.0)}
# treeCorrectionFactor, powers of two of bytes / 64, 64 B to 256 MB
_TREE_CORRECTION = {
    "ll": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),
    "ll128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),
    "simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
}
# device.h: most threads per block; comm.h: bytes per thread before a channel is added
_MAX_THREADS = {"ll": 512, "ll128": 640, "simple": 512}
_THREAD_THRESHOLD = {"ll": 8, "ll128": 8, "simple": 64}
P2P_LL_THRESHOLD_BYTES = 16384


@dataclass(frozen=True)
class Generation:
    """One GPU generation's NCCL constants (``tuning.cc``, ``topo.h``, ``search.cc``,
    ``nvls.cc``); GB/s as NCCL counts them (1e9 bytes/s)."""

    name: str
    nvlink_bw: float           # topo.h SMxx_NVLINK_BW, per link
    speeds: tuple              # search.cc smXXSpeedArrayIntra
    ll_max_bw: float           # llMaxBws[gen][N1]
    per_ch_ring_ll128: float   # perChMaxRingLL128Bws[gen][N1]
    per_ch_tree_ll128: float   # perChMaxTreeLL128Bws[gen][N1]
    per_ch_tree: float         # perChMaxTreeBws[gen][N1]
    nvls_efficiency: float     # nvlsEfficiency[gen]
    nvls_channels: int         # nvls.cc NVLS_NCHANNELS_SM90 / SM100_NVL
    ring_channels: int = 16


GENERATIONS = {
    "hopper": Generation("hopper", 20.6, (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
                         141.0, 36.7, 36.7, 38.7, 0.85, 16),
    "blackwell": Generation("blackwell", 40.1, (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
                            282.0, 40.0, 55.6, 70.0, 0.74, 24),
}


@dataclass(frozen=True)
class NcclTuner:
    """NCCL's tuner in one NVLink domain of GPUs of ``generation`` with ``links`` NVLinks
    each; ``nvls``: the switches reduce (NVLink SHARP) and NCCL may use it."""

    generation: str = "blackwell"
    links: int = 18
    nvls: bool = True

    def __post_init__(self):
        if self.generation not in GENERATIONS:
            raise ConfigError(f"NCCL generation {self.generation!r}: one of {', '.join(GENERATIONS)}")
        integer(self.links, "NcclTuner.links", 1, 64)

    @property
    def gen(self) -> Generation:
        return GENERATIONS[self.generation]

    @property
    def ring_bw(self) -> float:
        """The ring graph's bandwidth per channel (GB/s): the largest speed of NCCL's list
        that ``ring_channels`` channels fit into the GPU's NVLink bandwidth."""
        g = self.gen
        total = self.links * g.nvlink_bw
        for s in g.speeds:
            if s * g.ring_channels <= total:
                return s
        return g.speeds[-1]

    @property
    def n_channels(self) -> int:
        return self.gen.ring_channels

    def nvls_heads(self, p: int) -> int:
        return min(p, 32)

    def algorithms(self, kind: str, p: int) -> tuple:
        """The algorithms NCCL considers for ``kind`` on ``p`` GPUs of one NVLink domain
        (NVLS for all-reduce needs 2 heads; for all-gather and reduce-scatter at most 32
        GPUs; NVLS-tree, CollNet and PAT need several nodes)."""
        if kind == "all_reduce":
            return ("tree", "ring") + (("nvls",) if self.nvls and p >= 2 else ())
        if kind in ("all_gather", "reduce_scatter"):
            return ("ring",) + (("nvls",) if self.nvls and 2 <= p <= 32 else ())
        raise ConfigError(f"NCCL's tuner covers all_reduce, all_gather and reduce_scatter, not {kind!r}")

    def table(self, kind: str, p: int) -> dict:
        """``{(algorithm, protocol): (latency_us, algorithm_bandwidth_GBps)}`` as
        ``ncclTopoTuneModel`` sets them for one node."""
        p = integer(p, "p", 2, 10**6)
        g = self.gen
        nsteps = 2 * (p - 1) if kind == "all_reduce" else p - 1
        nch = self.n_channels
        out = {}
        for a in self.algorithms(kind, p):
            for i, pr in enumerate(PROTOS):
                if a == "nvls" and pr != "simple":
                    continue
                if a == "tree" and kind != "all_reduce":
                    continue
                bw = self.ring_bw
                chans = nch
                if a == "nvls":
                    h = self.nvls_heads(p)
                    total = nch * self.ring_bw  # the GPU's NVLink bandwidth in the graph
                    bw = total / h * g.nvls_efficiency * (h - 1) / h
                    bw *= 2.0 if kind == "all_reduce" else (p - 1) / p
                    chans = h
                bus = chans * bw
                if a == "ring" and pr == "ll":
                    bus = min(g.ll_max_bw, bus * 0.5)
                if a == "ring" and pr == "ll128":
                    bus = min(bus * 0.92, nch * g.per_ch_ring_ll128)
                if a == "tree":
                    bus = min(bus * 0.92, nch * g.per_ch_tree)
                    if pr == "ll":
                        bus = min(bus / 3.8, g.ll_max_bw)
                    if pr == "ll128":
                        bus = min(bus * 7.0 / 9.0, nch * g.per_ch_tree_ll128)
                if not (a != "ring" and kind != "all_reduce"):
                    bus *= (p / nsteps) if a in ("ring", "nvls") else 0.5
                lat = _BASE_LAT[a][i]
                hw = _HW_LAT_NVLINK[a][i]
                if a == "ring":
                    lat += nsteps * hw
                elif a == "tree":
                    lat += 2 * (p - 1) * hw
                else:
                    lat = hw
                out[(a, pr)] = (lat, bus)
        return out

    def time_us(self, kind: str, algorithm: str, protocol: str, size_bytes: float, p: int) -> float:
        """``ncclTopoGetAlgoTime`` for one operation (us)."""
        lat, bw = self.table(kind, p)[(algorithm, protocol)]
        n = int(size_bytes)
        log_size = int(math.log2(n >> 6)) if (n >> 6) > 0 else -1
        if algorithm == "tree" and kind == "all_reduce" and 0 <= log_size < 23:
            bw *= _TREE_CORRECTION[protocol][log_size]
        return lat + n / (1000.0 * bw)

    def pick(self, kind: str, size_bytes: float, p: int, algorithm: str | None = None) -> tuple:
        """NCCL's (algorithm, protocol) for ``kind`` of ``size_bytes`` per GPU on ``p``
        GPUs: the least :meth:`time_us` (the first in NCCL's order on a tie); with
        ``algorithm``, its protocol when that algorithm is forced (``NCCL_ALGO``)."""
        S = number(size_bytes, "size_bytes", nonneg=True)
        best, key = None, math.inf
        for (a, pr) in self.table(kind, p):
            if algorithm is not None and a != algorithm:
                continue
            t = self.time_us(kind, a, pr, S, p)
            if t < key:
                best, key = (a, pr), t
        return best

    def channels(self, kind: str, algorithm: str, protocol: str, size_bytes: float, p: int) -> tuple:
        """``(channels, threads)`` NCCL launches (``topoGetAlgoInfo``); NVLS runs all its
        channels."""
        n = int(number(size_bytes, "size_bytes", nonneg=True))
        if algorithm == "nvls":
            return self.gen.nvls_channels, 640
        nc, nt = self.n_channels, _MAX_THREADS[protocol]
        thr = _THREAD_THRESHOLD[protocol] * (p if (algorithm == "ring" and protocol == "ll") else 1)
        while n < nc * nt * thr and nc >= 2:
            nc -= 1
        while n < nc * nt * thr and nt % 128 == 0:
            nt //= 2
        return nc, nt

    def p2p(self, size_bytes: float) -> tuple:
        """Point-to-point: ``(protocol, channels)``. Parts of at least 64 KiB (an eighth
        of the 512 KiB NVLink P2P chunk) spread over up to ``n_channels`` channels; LL up
        to 16 KiB per channel (``enqueue.cc``)."""
        n = int(number(size_bytes, "size_bytes", nonneg=True))
        nch = max(1, min(self.n_channels, -(-n // 65536)))
        return ("ll" if n <= nch * P2P_LL_THRESHOLD_BYTES else "simple"), nch
