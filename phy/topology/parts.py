"""The parts a scale-up domain is built from: accelerators, memory tiers, switch ASICs, and
link classes made by :func:`phy.evaluate_link`.

Figures in the presets come from ../shared/REFERENCES.md (cited per preset); SI units
throughout (bytes, B/s, s, W, FLOP/s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from .. import link as _link
from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["Accelerator", "LinkClass", "MemoryTier", "SwitchAsic"]


@dataclass(frozen=True)
class MemoryTier:
    """A memory an accelerator can stream weights from.

    Parameters
    ----------
    name : str
    bandwidth_bps : float
        Bytes per second (B/s) one accelerator can draw from it.
    capacity_bytes : float
    latency_s : float
        Access latency (s); remote tiers add the fabric's latency to it.
    energy_j_per_byte : float
    """

    name: str
    bandwidth_bps: float
    capacity_bytes: float
    latency_s: float = 0.0
    energy_j_per_byte: float = 0.0

    def __post_init__(self):
        number(self.bandwidth_bps, f"MemoryTier {self.name!r} bandwidth_bps", positive=True)
        number(self.capacity_bytes, f"MemoryTier {self.name!r} capacity_bytes", positive=True)
        number(self.latency_s, f"MemoryTier {self.name!r} latency_s", nonneg=True)
        number(self.energy_j_per_byte, f"MemoryTier {self.name!r} energy_j_per_byte", nonneg=True)

    @classmethod
    def hbm3e(cls, capacity_bytes: float = 192e9) -> MemoryTier:
        """HBM3e of a GB200/GB300-class GPU: about 8 TB/s (REFERENCES.md); 192 GB
        (GB200; GB300 carries 288 GB)."""
        return cls("hbm3e", 8e12, capacity_bytes)

    @classmethod
    def lpddr5x(cls) -> MemoryTier:
        """Grace's LPDDR5X: about 500 GB/s and 480 GB per CPU (REFERENCES.md)."""
        return cls("lpddr5x", 500e9, 480e9)

    @classmethod
    def sram_lpu(cls) -> MemoryTier:
        """An LPU's on-chip SRAM: 230 MB at 80 TB/s (REFERENCES.md)."""
        return cls("sram_lpu", 80e12, 230e6)

    @classmethod
    def sram_wafer(cls) -> MemoryTier:
        """A wafer-scale part's SRAM: 44 GB at about 21 PB/s (REFERENCES.md)."""
        return cls("sram_wafer", 21e15, 44e9)

    @classmethod
    def cxl(cls, dram: MemoryTier, bandwidth_bps: float, capacity_bytes: float, latency_factor: float = 3.0
            ) -> MemoryTier:
        """CXL-attached memory: 2 to 5 times the latency of local DRAM (REFERENCES.md);
        ``latency_factor`` must lie in that range, ``dram`` gives the local latency."""
        if not isinstance(dram, MemoryTier):
            raise ConfigError(f"dram must be a MemoryTier, got {type(dram).__name__}")
        f = number(latency_factor, "latency_factor", lo=2.0, hi=5.0)
        return cls(f"cxl({dram.name})", bandwidth_bps, capacity_bytes, f * dram.latency_s, dram.energy_j_per_byte)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Accelerator:
    """An accelerator: compute by precision and its local memory.

    Parameters
    ----------
    name : str
    flops : dict
        Dense FLOP/s by precision name (``"fp4"``, ``"fp8"``, ``"bf16"``).
    memory : MemoryTier
    """

    name: str
    flops: dict
    memory: MemoryTier

    def __post_init__(self):
        if not self.flops:
            raise ConfigError(f"Accelerator {self.name!r} needs FLOP/s for at least one precision")
        for k, v in self.flops.items():
            number(v, f"Accelerator {self.name!r} flops[{k!r}]", positive=True)
        if not isinstance(self.memory, MemoryTier):
            raise ConfigError(f"Accelerator.memory must be a MemoryTier, got {type(self.memory).__name__}")

    @classmethod
    def gb200(cls) -> Accelerator:
        """A GB200 GPU: dense 10 PF FP4, 5 PF FP8, 2.5 PF BF16; HBM3e about 8 TB/s
        (REFERENCES.md)."""
        return cls("gb200", {"fp4": 10e15, "fp8": 5e15, "bf16": 2.5e15}, MemoryTier.hbm3e())

    def flops_at(self, precision: str) -> float:
        if precision not in self.flops:
            raise ConfigError(f"Accelerator {self.name!r} has no {precision!r} FLOP/s; it has {', '.join(self.flops)}")
        return float(self.flops[precision])

    def to_dict(self) -> dict:
        return {"name": self.name, "flops": dict(self.flops), "memory": self.memory.to_dict()}


@dataclass(frozen=True)
class SwitchAsic:
    """A switch ASIC: ``radix`` ports of ``port_rate_bps`` (bit/s per direction), port to
    port latency and power."""

    name: str
    radix: int
    port_rate_bps: float
    latency_s: float = 200e-9
    power_w: float = 0.0

    def __post_init__(self):
        integer(self.radix, f"SwitchAsic {self.name!r} radix", 2)
        number(self.port_rate_bps, f"SwitchAsic {self.name!r} port_rate_bps", positive=True)
        number(self.latency_s, f"SwitchAsic {self.name!r} latency_s", nonneg=True)
        number(self.power_w, f"SwitchAsic {self.name!r} power_w", nonneg=True)

    @classmethod
    def nvlink5(cls) -> SwitchAsic:
        """An NVLink switch ASIC: 72 ports of 800G (REFERENCES.md); port-to-port latency
        200 ns, the middle of the 150 to 250 ns UALink switches target (REFERENCES.md;
        NVIDIA does not publish its own)."""
        return cls("nvlink5_switch", 72, 800e9, 200e-9)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class LinkClass:
    """A kind of link (copper twinax, DSP pluggable, ...) whose figures depend on its
    length.

    Either ``spec(length_m)`` gives the :class:`phy.LinkSpec` of one link of that length,
    evaluated with :func:`phy.evaluate_link` once per length bucket (lengths rounded up
    to ``resolution_m``) and cached; or ``fixed`` is one :class:`phy.LinkReport` used at
    every length, its time of flight replaced by ``delay_s_per_m`` times the length.

    A topology's cables are many but their lengths few, so a rack needs a handful of
    evaluations; the roll-up itself is array arithmetic.
    """

    name: str
    spec: Callable[[float], _link.LinkSpec] | None = None
    resolution_m: float = 0.25
    medium: str = "copper"
    fixed: _link.LinkReport | None = None
    delay_s_per_m: float | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if (self.spec is None) == (self.fixed is None):
            raise ConfigError(f"LinkClass {self.name!r} needs exactly one of spec (a function of the length) or fixed")
        if self.spec is not None and not callable(self.spec):
            raise ConfigError(f"LinkClass {self.name!r} spec must be a function of the length (m)")
        if self.fixed is not None:
            if not isinstance(self.fixed, _link.LinkReport):
                raise ConfigError(f"LinkClass {self.name!r} fixed must be a LinkReport")
            number(self.delay_s_per_m, f"LinkClass {self.name!r} delay_s_per_m", positive=True)
        number(self.resolution_m, f"LinkClass {self.name!r} resolution_m", positive=True)
        if self.medium not in ("copper", "optical"):
            raise ConfigError(f"LinkClass {self.name!r} medium must be 'copper' or 'optical', got {self.medium!r}")

    def bucket(self, length_m: float) -> float:
        """The length a cable of ``length_m`` is evaluated at (rounded up)."""
        L = number(length_m, "length_m", positive=True)
        if self.fixed is not None:
            return L
        r = self.resolution_m
        return round(math.ceil(L / r - 1e-9) * r, 9)

    def report(self, length_m: float) -> _link.LinkReport:
        """The link's report at ``length_m`` (its bucket's)."""
        key = self.bucket(length_m)
        if key in self._cache:
            return self._cache[key]
        if self.fixed is not None:
            lat = dict(self.fixed.latency_breakdown_s)
            lat["time_of_flight"] = self.delay_s_per_m * key
            rep = replace(self.fixed, latency_breakdown_s=lat, latency_s=float(sum(lat.values())))
        else:
            spec = self.spec(key)
            if not isinstance(spec, _link.LinkSpec):
                raise ConfigError(f"LinkClass {self.name!r} spec({key}) returned {type(spec).__name__}, not a LinkSpec")
            rep = _link.evaluate_link(spec)
        self._cache[key] = rep
        return rep

    @classmethod
    def copper_twinax(cls, lanes: int = 2, lane_rate_bps: float = 212.5e9, awg: float = 26, fec="KP4",
                      serdes: _link.Serdes | None = None, resolution_m: float = 0.25) -> LinkClass:
        """Passive copper: a 92-ohm connector, ``awg`` foam twinax of the length, a
        connector (the ``twinax_1m_26awg`` construction), die to die with COM's packages,
        ``lanes`` x ``lane_rate_bps`` PAM4, KP4."""
        from channels import media

        sd = serdes or _link.Serdes()

        def spec(length_m: float) -> _link.LinkSpec:
            ch = media.cascade(media.connector(), media.twinax(length_m, awg), media.connector())
            return _link.LinkSpec(channel=ch.renamed(f"twinax_{length_m:g}m_{awg:g}awg"), lanes=lanes,
                                  lane_rate_bps=lane_rate_bps, serdes=sd, fec=fec, name=f"copper {length_m:g} m")

        return cls(f"copper_{awg:g}awg", spec, resolution_m, "copper")

    @classmethod
    def optical(cls, kind: str = "dsp", lanes: int = 4, lane_rate_bps: float = 212.5e9, fec="KP4",
                resolution_m: float = 10.0) -> LinkClass:
        """Optics of :class:`phy.OpticalClass` ``kind`` (``"dsp"``, ``"lpo"``, ``"cpo"``)
        over the length of single-mode fibre."""
        makers = {"dsp": _link.OpticalClass.dsp_pluggable, "lpo": _link.OpticalClass.lpo,
                  "cpo": _link.OpticalClass.cpo}
        if kind not in makers:
            raise ConfigError(f"optical kind must be one of {', '.join(makers)}, got {kind!r}")
        baud = lane_rate_bps / 2

        def spec(length_m: float) -> _link.LinkSpec:
            return _link.LinkSpec(optics=makers[kind](length_m=length_m, baud_hz=baud), lanes=lanes,
                                  lane_rate_bps=lane_rate_bps, fec=fec, name=f"{kind} {length_m:g} m")

        return cls(f"optical_{kind}", spec, resolution_m, "optical")

    @classmethod
    def from_report(cls, name: str, report: _link.LinkReport, delay_s_per_m: float, medium: str = "copper"
                    ) -> LinkClass:
        """A class with ``report``'s figures at every length (see the class docstring)."""
        return cls(name, None, 1.0, medium, report, delay_s_per_m)

    def to_dict(self) -> dict:
        return {"name": self.name, "medium": self.medium, "resolution_m": self.resolution_m,
                "fixed": self.fixed is not None, "evaluated_lengths_m": sorted(self._cache)}
