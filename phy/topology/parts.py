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
from ..latency import Endpoint, Software
from .memory import DRAM_ACCESS_S, SRAM_ACCESS_S, MemoryTier

__all__ = ["DRAM_ACCESS_S", "KINDS", "SRAM_ACCESS_S", "SWITCH_J_PER_BIT", "Accelerator", "LinkClass", "MemoryTier", "SwitchAsic"]

#: What a link class's cable is made of: passive copper, an active electrical cable (a
#: retimer in each plug), linear pluggable, co-packaged and DSP pluggable optics.
KINDS = ("passive_copper", "aec", "lpo", "cpo", "dsp_optics")

@dataclass(frozen=True)
class Accelerator:
    """An accelerator: compute by precision, its local memory, its link endpoint and the
    software its collectives run.

    Parameters
    ----------
    name : str
    flops : dict
        Dense FLOP/s by precision name (``"fp4"``, ``"fp8"``, ``"bf16"``).
    memory : MemoryTier
    endpoint : phy.latency.Endpoint
        Its link controller and transaction layer (default :meth:`Endpoint.nvlink`).
    software : phy.latency.Software
        Its collective library (default :class:`phy.latency.Software`).
    power_w : float
        Its power at full load with its share of the host (CPU, memory) in its tray (W),
        its own SerDes included: what a rack's power budget must feed per accelerator.
    """

    name: str
    flops: dict
    memory: MemoryTier
    endpoint: Endpoint = field(default_factory=Endpoint.nvlink)
    software: Software = field(default_factory=Software)
    power_w: float = 0.0

    def __post_init__(self):
        if not self.flops:
            raise ConfigError(f"Accelerator {self.name!r} needs FLOP/s for at least one precision")
        for k, v in self.flops.items():
            number(v, f"Accelerator {self.name!r} flops[{k!r}]", positive=True)
        if not isinstance(self.memory, MemoryTier):
            raise ConfigError(f"Accelerator.memory must be a MemoryTier, got {type(self.memory).__name__}")
        if not isinstance(self.endpoint, Endpoint):
            raise ConfigError(f"Accelerator.endpoint must be a phy.latency.Endpoint, got {type(self.endpoint).__name__}")
        if not isinstance(self.software, Software):
            raise ConfigError(f"Accelerator.software must be a phy.latency.Software, got {type(self.software).__name__}")
        number(self.power_w, f"Accelerator {self.name!r} power_w", nonneg=True)

    @classmethod
    def gb200(cls) -> Accelerator:
        """A GB200 GPU: dense 10 PF FP4, 5 PF FP8, 2.5 PF BF16; HBM3e about 8 TB/s
        (REFERENCES.md); 1,410 W: the GPU's 1,200 W maximum and half its superchip's Grace
        (420 W maximum; NVIDIA data-center power software device specifications)."""
        return cls("gb200", {"fp4": 10e15, "fp8": 5e15, "bf16": 2.5e15}, MemoryTier.hbm3e(), power_w=1200.0 + 420.0 / 2)

    @classmethod
    def h200(cls) -> Accelerator:
        """An H200 GPU: dense 1.98 PF FP8 and 0.99 PF BF16, 141 GB of HBM3e at 4.8 TB/s
        (REFERENCES.md); in-switch reduction at NCCL's Hopper efficiency, 0.85; 1,000 W,
        an HGX B200-class GPU's (MLPerf system file "TGP 1000W"; the H200's own maximum is
        lower, so the budget is conservative)."""
        return cls("h200", {"fp8": 1.979e15, "bf16": 0.989e15},
                   MemoryTier("hbm3e", 4.8e12, 141e9, DRAM_ACCESS_S), Endpoint.nvlink(),
                   Software.hopper(), 1000.0)

    @classmethod
    def h100(cls) -> Accelerator:
        """An H100 SXM GPU: dense 1.979 PF FP8 and 0.989 PF BF16, 80 GB of HBM3 at
        3.35 TB/s (NVIDIA H100 datasheet, SXM column, the sparsity figures halved; the same
        figures in modal.com/gpu-glossary/perf/memory-bandwidth); in-switch reduction at
        NCCL's Hopper efficiency, 0.85; 700 W (the SXM part's maximum TDP, same datasheet)."""
        return cls("h100", {"fp8": 1.979e15, "bf16": 0.989e15},
                   MemoryTier("hbm3", 3.35e12, 80e9, DRAM_ACCESS_S), Endpoint.nvlink(),
                   Software().with_(switch_efficiency=0.85), 700.0)

    @classmethod
    def b200(cls) -> Accelerator:
        """A B200 GPU of an HGX/DGX B200: dense 9 PF FP4, 4.5 PF FP8, 2.25 PF BF16
        (modal.com/gpu-glossary/perf/memory-bandwidth; NVIDIA's DGX B200 figures, 72 PF FP8
        and 144 PF FP4 with sparsity for 8 GPUs, halved); 180 GB of HBM3e per GPU at 8 TB/s
        (DGX B200: 1,440 GB and 64 TB/s for 8 GPUs); access 399 ns (:data:`DRAM_ACCESS_S`,
        860 cycles measured on B200); 1,000 W (MLPerf system file "TGP 1000W")."""
        return cls("b200", {"fp4": 9e15, "fp8": 4.5e15, "bf16": 2.25e15},
                   MemoryTier("hbm3e", 8e12, 180e9, DRAM_ACCESS_S), power_w=1000.0)

    def flops_at(self, precision: str) -> float:
        if precision not in self.flops:
            raise ConfigError(f"Accelerator {self.name!r} has no {precision!r} FLOP/s; it has {', '.join(self.flops)}")
        return float(self.flops[precision])

    def with_(self, **changes) -> Accelerator:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {"name": self.name, "flops": dict(self.flops), "memory": self.memory.to_dict(),
                "endpoint": self.endpoint.to_dict(), "software": self.software.to_dict(), "power_w": self.power_w}


#: Tomahawk 5's energy per bit with its SerDes: 8.8 pJ/b, 450 W typical over 51.2 Tb/s
#: (secondary: a teardown-style article; an analyst puts it at about 500 W; Broadcom quotes
#: no chip power). The scale for a switch ASIC without a figure of its own.
SWITCH_J_PER_BIT = 8.8e-12


@dataclass(frozen=True)
class SwitchAsic:
    """A switch ASIC: ``radix`` ports of ``port_rate_bps`` (bit/s per direction), port to
    port latency and power.

    ``power_w`` is the ASIC's power with its SerDes, all ports in use, the figure vendors
    quote; its SerDes are ``lanes_per_port`` lanes per port of the ``serdes_reach`` class
    at the lane rate (:data:`phy.link.power.SERDES_ENERGY_J_PER_BIT`), so the switch core
    is :attr:`core_power_w` and the roll-up counts the SerDes at each port from the link
    that uses it (a port driving a short channel spends less than its LR rating).
    """

    name: str
    radix: int
    port_rate_bps: float
    latency_s: float = 200e-9
    power_w: float = 0.0
    lanes_per_port: int = 2
    lane_rate_bps: float = 212.5e9
    serdes_reach: str = "lr"

    def __post_init__(self):
        from ..link.power import REACH_CLASSES

        integer(self.radix, f"SwitchAsic {self.name!r} radix", 2)
        number(self.port_rate_bps, f"SwitchAsic {self.name!r} port_rate_bps", positive=True)
        number(self.latency_s, f"SwitchAsic {self.name!r} latency_s", nonneg=True)
        number(self.power_w, f"SwitchAsic {self.name!r} power_w", nonneg=True)
        integer(self.lanes_per_port, f"SwitchAsic {self.name!r} lanes_per_port", 1, 64)
        number(self.lane_rate_bps, f"SwitchAsic {self.name!r} lane_rate_bps", positive=True)
        if self.serdes_reach not in REACH_CLASSES:
            raise ConfigError(f"SwitchAsic {self.name!r} serdes_reach must be one of {', '.join(REACH_CLASSES)}, "
                              f"got {self.serdes_reach!r}")

    @property
    def serdes_power_w(self) -> float:
        """Its SerDes at their rated class, every lane in use, both directions counted once
        (a transceiver's energy covers its Tx and its Rx)."""
        from ..link.power import SERDES_ENERGY_J_PER_BIT, serdes_generation

        e = SERDES_ENERGY_J_PER_BIT[self.serdes_reach][serdes_generation(self.lane_rate_bps)]
        return self.radix * self.lanes_per_port * self.lane_rate_bps * e

    @property
    def core_power_w(self) -> float:
        """The ASIC without its SerDes: ``power_w - serdes_power_w`` (never below 0)."""
        return max(0.0, self.power_w - self.serdes_power_w)

    @classmethod
    def nvlink5(cls) -> SwitchAsic:
        """An NVLink switch ASIC: 72 ports of 800G (REFERENCES.md), each 2 lanes of
        212.5 Gb/s; port-to-port latency 200 ns, the UALink Consortium's target for a 50T
        switch ("a 25T switch is <= 150 ns, 50T < 200ns, and a 100T switch < 250ns"; NVIDIA
        does not publish its own). Power 200 W: an NVL72's 9 switch trays draw 3.6 kW
        (secondary, a Supermicro figure; NVIDIA quotes none), 400 W per tray of 2 ASICs,
        the tray's other parts counted in (so an upper bound for the chip; NVIDIA's first
        NVSwitch drew about 100 W, secondary)."""
        return cls("nvlink5_switch", 72, 800e9, 200e-9, 200.0, 2, 212.5e9, "lr")

    @classmethod
    def nvlink4(cls) -> SwitchAsic:
        """A third-generation NVSwitch (HGX H100/H200): 64 NVLink4 ports of 2 x 100G
        lanes (REFERENCES.md); port to port 150 ns, the UALink target for a 25T switch
        (the class of its 64 x 400G). Power: no public figure; Tomahawk 5's energy per
        bit (:data:`SWITCH_J_PER_BIT`) over its 64 x 2 x 106.25 Gb/s, 120 W (an estimate)."""
        return cls("nvlink4_switch", 64, 400e9, 150e-9, SWITCH_J_PER_BIT * 64 * 2 * 106.25e9, 2, 106.25e9, "lr")

    @classmethod
    def tomahawk5(cls) -> SwitchAsic:
        """A 51.2T Ethernet switch (Tomahawk 5 class): 64 ports of 800G, each 8 lanes of
        106.25 Gb/s; 450 W typical (:data:`SWITCH_J_PER_BIT`, secondary); about 250 ns port
        to port, a scale-up Ethernet switch's (REFERENCES.md)."""
        return cls("ethernet_switch", 64, 800e9, 250e-9, 450.0, 8, 106.25e9, "lr")

    def to_dict(self) -> dict:
        return {**asdict(self), "serdes_power_w": self.serdes_power_w, "core_power_w": self.core_power_w}


#: The board host that stands for an 802.3dj CR host class where a segment's far end is not a
#: CR host (an active cable's retimer): HL, a cabled host, as a flyover; HN and HH as host PCB.
BOARD_OF_HOST_CLASS = {"HL": "flyover", "HN": "pcb", "HH": "pcb"}


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

    ``kind`` says what the cable is made of, for its mass and its parts' failure rates
    (:data:`KINDS`: passive copper, an active electrical cable with a retimer in each plug,
    linear pluggable, co-packaged or DSP pluggable optics); default ``"passive_copper"``
    for a copper medium, ``"dsp_optics"`` for an optical one. ``awg`` is a copper cable's
    conductor gauge (its mass); ``lanes_per_module`` an optical module's lanes (one module
    at each end serves that many lanes).
    """

    name: str
    spec: Callable[[float], _link.LinkSpec] | None = None
    resolution_m: float = 0.25
    medium: str = "copper"
    fixed: _link.LinkReport | None = None
    delay_s_per_m: float | None = None
    kind: str = ""
    awg: float | None = None
    lanes_per_module: int = 4
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
        if not self.kind:
            self.kind = "passive_copper" if self.medium == "copper" else "dsp_optics"
        if self.kind not in KINDS:
            raise ConfigError(f"LinkClass {self.name!r} kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if (self.kind in ("passive_copper", "aec")) != (self.medium == "copper"):
            raise ConfigError(f"LinkClass {self.name!r}: kind {self.kind!r} does not go with medium {self.medium!r}")
        if self.awg is not None:
            number(self.awg, f"LinkClass {self.name!r} awg", lo=18, hi=40)
        integer(self.lanes_per_module, f"LinkClass {self.name!r} lanes_per_module", 1, 64)

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
                      serdes: _link.Serdes | None = None, resolution_m: float = 0.25,
                      retry: _link.Retry | None = None, host: str | None = "HN",
                      host_length_m: float | None = None, crosstalk: bool = False,
                      flyover_m: float | None = None) -> LinkClass:
        """Passive copper: the cable assembly (:func:`channels.assembly.cable_channel`: the
        connector and the plug's paddle card at each end, ``awg`` foam twinax of the length,
        the cable's neighbours as aggressors if ``crosstalk``) between two hosts, ``lanes`` x
        ``lane_rate_bps`` PAM4, KP4, with the link layer ``retry`` (CRC and link-level
        replay) if given.

        ``host``: an 802.3dj CR host class at each end (``"HL"``, ``"HN"``, ``"HH"``, P802.3dj/D3.3
        Table 179-23; default ``"HN"``, the nominal host: class B package, 15 mm of package
        line 1 and 83 mm of host PCB; ``"HL"`` a cabled host near the die), held by the SerDes
        (:attr:`phy.Serdes.host_class`: the host's package and PCB in COM's model, and the CR
        reference receiver with its floating taps); or the board built into the channel with
        COM's KR package at each end: ``"pcb"`` (125 mm of host board, the 200G exploratory
        COM sheet's), ``"flyover"`` or None (the bare cable assembly).

        ``flyover_m``: with a CR host class, a flyover cable of this length at each end in
        the channel, from the host's near-chip connector to the cable's
        (:func:`channels.assembly.flyover_cable`: 30 AWG twinax; the class's host PCB stands
        for the flyover's breakout): a tray that takes its lanes to its rear connectors on
        cables, as NVL72's does (:func:`phy.topology.builders.scale_up_copper`)."""
        from dataclasses import replace as _replace

        from channels import assembly

        from ..engines.com.params import CR_HOST_CLASSES

        sd = serdes or _link.Serdes()
        board = host
        if host in CR_HOST_CLASSES:
            sd, board = _replace(sd, host_class=host), None
            if host_length_m is not None:
                raise ConfigError(f"host_length_m applies to a board host ('pcb', 'flyover'); host class {host} "
                                  "sets its own (Table 179-23)")
        elif flyover_m is not None:
            raise ConfigError(f"flyover_m goes with a CR host class ('HL', 'HN', 'HH'), got host {host!r}")
        elif sd.host_class is not None and host is not None:
            raise ConfigError(f"the serdes holds CR host class {sd.host_class}: host {host!r} would add a second "
                              "host at each end (give host=None, or the class as host)")

        if flyover_m is not None:
            number(flyover_m, "flyover_m", positive=True)

        def spec(length_m: float) -> _link.LinkSpec:
            ch = assembly.cable_channel(length_m, awg, host=board, host_length_m=host_length_m, crosstalk=crosstalk)
            if flyover_m is not None:  # built here, with the channel: a class costs nothing until evaluated
                from channels import cascade

                fly = assembly.flyover_cable(flyover_m)
                ch = cascade(fly, ch, fly.reversed()).renamed(f"{ch.name}_flyover_{flyover_m:g}m")
            return _link.LinkSpec(channel=ch, lanes=lanes, lane_rate_bps=lane_rate_bps, serdes=sd, fec=fec,
                                  retry=retry, name=f"copper {length_m:g} m")

        suffix = ("" if host == "HN" else "_" + (host or "bare")) + ("" if flyover_m is None else "_flyover")
        return cls(f"copper_{awg:g}awg{suffix}", spec, resolution_m, "copper", kind="passive_copper", awg=awg)

    @classmethod
    def aec(cls, lanes: int = 2, lane_rate_bps: float = 212.5e9, awg: float = 26, fec="KP4",
            serdes: _link.Serdes | None = None, resolution_m: float = 0.5, retry: _link.Retry | None = None,
            host: str | None = "pcb", host_length_m: float | None = None,
            retimer: _link.PathElement | None = None) -> LinkClass:
        """An active electrical cable: a retimer on each plug's paddle card, so three retimed
        segments (host to retimer, the cable, retimer to host; :func:`channels.assembly.aec_segments`),
        each equalised by the SerDes class of the link (``serdes``), their errors added
        (no FEC termination in the retimers, as 802.3's PMA-level retimers); ``retimer``
        (default :meth:`phy.PathElement.aec_retimer`, 3 ns) is counted twice for latency.
        A CR host class as ``host`` builds its board (:data:`BOARD_OF_HOST_CLASS`). The
        retimers' energy is their SerDes's at the reach classes of the segments they join
        (:mod:`phy.link.power`): no public power figure of a 200G-per-lane AEC was
        found (a 112G mixed-signal retimer draws 3 W for 8 channels, about 3.3 pJ/bit per
        channel, vendor figure; a DSP retimer more). The cable's neighbours' crosstalk is
        not modelled here."""
        from channels import assembly

        from ..engines.com.params import CR_HOST_CLASSES

        if host in CR_HOST_CLASSES:  # a retimer's end is not a CR host: the class's board stands in
            host = BOARD_OF_HOST_CLASS[host]
        sd = serdes or _link.Serdes()
        rt = retimer or _link.PathElement.aec_retimer()
        if not isinstance(rt, _link.PathElement):
            raise ConfigError(f"LinkClass.aec retimer must be a PathElement, got {type(rt).__name__}")

        def spec(length_m: float) -> _link.LinkSpec:
            segs = assembly.aec_segments(length_m, awg, host=host, host_length_m=host_length_m)
            return _link.LinkSpec(channel=segs, lanes=lanes, lane_rate_bps=lane_rate_bps, serdes=sd, fec=fec,
                                  retry=retry, path=(rt, rt), name=f"aec {length_m:g} m")

        return cls(f"aec_{awg:g}awg{'' if host == 'pcb' else '_' + (host or 'bare')}", spec, resolution_m, "copper",
                   kind="aec", awg=awg)

    @classmethod
    def optical(cls, kind: str = "dsp", lanes: int = 4, lane_rate_bps: float = 212.5e9, fec="KP4",
                resolution_m: float = 10.0) -> LinkClass:
        """Optics of :class:`phy.OpticalClass` ``kind`` (``"dsp"``, ``"lpo"``, ``"lro"``, ``"cpo"``)
        over the length of single-mode fibre."""
        makers = {"dsp": _link.OpticalClass.dsp_pluggable, "lpo": _link.OpticalClass.lpo,
                  "lro": _link.OpticalClass.lro, "cpo": _link.OpticalClass.cpo}
        if kind not in makers:
            raise ConfigError(f"optical kind must be one of {', '.join(makers)}, got {kind!r}")
        baud = lane_rate_bps / 2

        def spec(length_m: float) -> _link.LinkSpec:
            return _link.LinkSpec(optics=makers[kind](length_m=length_m, baud_hz=baud), lanes=lanes,
                                  lane_rate_bps=lane_rate_bps, fec=fec, name=f"{kind} {length_m:g} m")

        lpm = max(1, round(800e9 / lane_rate_bps * 1.0625))  # an 800G module's lanes at this rate
        return cls(f"optical_{kind}", spec, resolution_m, "optical",
                   kind={"dsp": "dsp_optics", "lro": "dsp_optics"}.get(kind, kind),  # an LRO module holds a DSP
                   lanes_per_module=lpm)

    @classmethod
    def from_report(cls, name: str, report: _link.LinkReport, delay_s_per_m: float, medium: str = "copper",
                    kind: str = "", awg: float | None = None) -> LinkClass:
        """A class with ``report``'s figures at every length (see the class docstring)."""
        return cls(name, None, 1.0, medium, report, delay_s_per_m, kind=kind, awg=awg)

    def to_dict(self) -> dict:
        return {"name": self.name, "medium": self.medium, "kind": self.kind, "awg": self.awg,
                "lanes_per_module": self.lanes_per_module, "resolution_m": self.resolution_m,
                "fixed": self.fixed is not None, "evaluated_lengths_m": sorted(self._cache)}
