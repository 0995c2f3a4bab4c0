"""Memories an accelerator streams from (:class:`MemoryTier`) and their sourced access
latencies; used by :class:`phy.topology.parts.Accelerator` and the decode model."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .._validate import number
from ..errors import ConfigError
from ._aliases import add_aliases, keyword_alias, with_key_aliases

__all__ = ["DRAM_ACCESS_S", "SRAM_ACCESS_S", "MemoryTier"]

#: A GPU's DRAM access as a load sees it: 810 SM cycles on B300 (HBM3e) with its clocks
#: locked at 2.032 GHz (860 cycles on B200, 700 on H100 SXM unlocked; pointer chase,
#: github.com/markdewing/AI_kernels ``latency/README.md``): 399 ns.
DRAM_ACCESS_S = 810 / 2.032e9
#: On-chip SRAM next to the compute: a GPU's L1/shared-memory hit, 40 SM cycles on
#: H100, B200 and B300 (same source), at 2.032 GHz: 19.7 ns. SRAM-machine vendors publish
#: no access latency of their own; this is the order of an SRAM a core reads directly.
SRAM_ACCESS_S = 40 / 2.032e9


@dataclass(frozen=True, init=False)
class MemoryTier:
    """A memory an accelerator can stream weights from.

    Parameters
    ----------
    name : str
    bandwidth_bytes_per_s : float
        Bytes per second one accelerator can draw from it. (``bandwidth_bps``, its old
        name, whose ``_bps`` would mean bits/s, is accepted and read for one release as a
        deprecated alias.)
    capacity_bytes : float
    latency_s : float
        Access latency as a load at the memory sees it (s); a remote read adds the
        fabric's round trip (:func:`phy.latency.round_trip`). The presets carry sourced
        figures (:data:`DRAM_ACCESS_S`, :data:`SRAM_ACCESS_S`).
    energy_j_per_byte : float
    """

    name: str
    bandwidth_bytes_per_s: float
    capacity_bytes: float
    latency_s: float = 0.0
    energy_j_per_byte: float = 0.0

    def __init__(self, name: str, bandwidth_bytes_per_s: float | None = None, capacity_bytes: float | None = None,
                 latency_s: float = 0.0, energy_j_per_byte: float = 0.0, **deprecated):
        extra = set(deprecated) - {"bandwidth_bps"}
        if extra:
            raise TypeError(f"MemoryTier() got an unexpected keyword argument {sorted(extra)[0]!r}")
        kw = keyword_alias({"bandwidth_bytes_per_s": bandwidth_bytes_per_s, **deprecated}, "bandwidth_bps",
                           "bandwidth_bytes_per_s", "MemoryTier")
        for k, v in (("name", name), ("bandwidth_bytes_per_s", kw["bandwidth_bytes_per_s"]),
                     ("capacity_bytes", capacity_bytes), ("latency_s", latency_s),
                     ("energy_j_per_byte", energy_j_per_byte)):
            object.__setattr__(self, k, v)
        self.__post_init__()

    def __post_init__(self):
        if self.bandwidth_bytes_per_s is None or self.capacity_bytes is None:
            raise ConfigError(f"MemoryTier {self.name!r} needs bandwidth_bytes_per_s and capacity_bytes")
        number(self.bandwidth_bytes_per_s, f"MemoryTier {self.name!r} bandwidth_bytes_per_s", positive=True)
        number(self.capacity_bytes, f"MemoryTier {self.name!r} capacity_bytes", positive=True)
        number(self.latency_s, f"MemoryTier {self.name!r} latency_s", nonneg=True)
        number(self.energy_j_per_byte, f"MemoryTier {self.name!r} energy_j_per_byte", nonneg=True)

    @classmethod
    def hbm3e(cls, capacity_bytes: float = 192e9) -> MemoryTier:
        """HBM3e of a GB200/GB300-class GPU: about 8 TB/s (REFERENCES.md); 192 GB
        (GB200; GB300 carries 288 GB); access 399 ns (:data:`DRAM_ACCESS_S`)."""
        return cls("hbm3e", 8e12, capacity_bytes, DRAM_ACCESS_S)

    @classmethod
    def lpddr5x(cls) -> MemoryTier:
        """Grace's LPDDR5X: about 500 GB/s and 480 GB per CPU (REFERENCES.md). No
        public access latency from a GPU was found: it takes the GPU's DRAM access
        (:data:`DRAM_ACCESS_S`, 399 ns), the two being DRAM cores of like timings behind a
        controller; a remote read adds the fabric."""
        return cls("lpddr5x", 500e9, 480e9, DRAM_ACCESS_S)

    @classmethod
    def sram_lpu(cls) -> MemoryTier:
        """An LPU's on-chip SRAM: 230 MB at 80 TB/s (REFERENCES.md); access 20 ns
        (:data:`SRAM_ACCESS_S`)."""
        return cls("sram_lpu", 80e12, 230e6, SRAM_ACCESS_S)

    @classmethod
    def sram_wafer(cls) -> MemoryTier:
        """A wafer-scale part's SRAM: 44 GB at about 21 PB/s (REFERENCES.md); access 20 ns
        (:data:`SRAM_ACCESS_S`)."""
        return cls("sram_wafer", 21e15, 44e9, SRAM_ACCESS_S)

    @classmethod
    def cxl(cls, dram: MemoryTier, bandwidth_bytes_per_s: float, capacity_bytes: float, latency_factor: float = 3.0
            ) -> MemoryTier:
        """CXL-attached memory (``bandwidth_bytes_per_s`` in B/s): 2 to 5 times the latency
        of local DRAM (REFERENCES.md); ``latency_factor`` must lie in that range, ``dram``
        gives the local latency."""
        if not isinstance(dram, MemoryTier):
            raise ConfigError(f"dram must be a MemoryTier, got {type(dram).__name__}")
        f = number(latency_factor, "latency_factor", lo=2.0, hi=5.0)
        return cls(f"cxl({dram.name})", bandwidth_bytes_per_s, capacity_bytes, f * dram.latency_s,
                   dram.energy_j_per_byte)

    def to_dict(self) -> dict:
        """The fields, with ``bandwidth_bps`` (the same figure in bytes/s) kept one release
        as a deprecated key."""
        return with_key_aliases(asdict(self), {"bandwidth_bps": "bandwidth_bytes_per_s"})


add_aliases(MemoryTier, {"bandwidth_bps": "bandwidth_bytes_per_s"})
