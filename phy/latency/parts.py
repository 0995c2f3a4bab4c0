"""The layers above the link, as parts: the accelerator's endpoint (link controller and
transaction layer, packet headers) and the software that runs collectives on it.

Every default stands for a public figure, cited where it is set; where none is public the
docstring says what the figure was derived or fitted from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["GPU_L2_HIT_S", "Endpoint", "Software"]

#: A GPU's L2 hit latency: 295 SM cycles on B200 and B300 (pointer chase,
#: github.com/markdewing/AI_kernels ``latency/README.md``), at the 2.032 GHz the B300 run
#: locked its clocks to: 145 ns. The SM-to-L2 crossbar is the path a remote store or a
#: flag poll takes on the GPU, so the endpoint and polling terms are built from it.
GPU_L2_HIT_S = 295 / 2.032e9


@dataclass(frozen=True)
class Endpoint:
    """An accelerator's link controller and transaction layer.

    Parameters
    ----------
    name : str
    tx_s : float
        From the issuing core to the link controller's egress: the crossbar, address
        translation and packetisation (s).
    rx_s : float
        From the link controller's ingress to the target's cache or memory controller (s).
    request_header_bytes, response_header_bytes : int
        Bytes a request (a read, or a write's header) and a response carry besides their
        payload.
    max_payload_bytes : int
        Largest payload per packet; a transfer is cut into packets, each with a header.
    """

    name: str = "endpoint"
    tx_s: float = GPU_L2_HIT_S / 2
    rx_s: float = GPU_L2_HIT_S / 2
    request_header_bytes: int = 16
    response_header_bytes: int = 16
    max_payload_bytes: int = 256

    def __post_init__(self):
        number(self.tx_s, f"Endpoint {self.name!r} tx_s", nonneg=True)
        number(self.rx_s, f"Endpoint {self.name!r} rx_s", nonneg=True)
        integer(self.request_header_bytes, f"Endpoint {self.name!r} request_header_bytes", 0, 4096)
        integer(self.response_header_bytes, f"Endpoint {self.name!r} response_header_bytes", 0, 4096)
        integer(self.max_payload_bytes, f"Endpoint {self.name!r} max_payload_bytes", 1, 2**20)

    @classmethod
    def nvlink(cls) -> Endpoint:
        """An NVLink-class GPU endpoint. Each direction crosses the GPU's SM-to-L2 crossbar
        once, half an L2 hit (:data:`GPU_L2_HIT_S`): 73 ns each way. Packets carry a
        16-byte header flit and up to 256 bytes of payload in 16-byte flits (NVLink's
        packet format as described from Hot Chips 2016, WikiChip, secondary; UALink 1.0
        also caps a request at 256 bytes, UALink Consortium webinar Q&A)."""
        return cls("nvlink", GPU_L2_HIT_S / 2, GPU_L2_HIT_S / 2, 16, 16, 256)

    def packets(self, payload_bytes: float) -> int:
        """Packets a transfer of ``payload_bytes`` takes (one at least, for its header)."""
        p = number(payload_bytes, "payload_bytes", nonneg=True)
        return max(1, -(-int(p) // self.max_payload_bytes)) if p > 0 else 1

    def wire_bytes(self, payload_bytes: float, header_bytes: int | None = None) -> float:
        """Payload plus one header per packet (the response header by default)."""
        h = self.response_header_bytes if header_bytes is None else header_bytes
        return float(payload_bytes) + self.packets(payload_bytes) * h

    def efficiency(self, payload_bytes: float) -> float:
        """Payload bytes per byte on the wire for a transfer of ``payload_bytes``."""
        p = float(payload_bytes)
        return p / self.wire_bytes(p) if p > 0 else 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Software:
    """How collectives run on the accelerators: NCCL, its protocols and its tuner.

    Parameters
    ----------
    name : str
    kernel_s : float
        Fixed cost of one collective: the kernel's start in a CUDA graph, its arguments, its
        completion (s).
    poll_s : float
        Per step: the receiver's flag poll, one cache access, and on average half a poll
        loop more (``1.5 x`` an L2 hit by default).
    peer_s : float
        Per peer of each direct phase (one-shot and two-shot all-reduce, all-to-all): the
        cost of posting to and checking one more peer.
    ll_efficiency, ll128_efficiency : float
        Payload per byte stored by the LL protocol (a 4-byte flag with every 4 bytes of
        data: 0.5) and LL128 (8 bytes of flag per 128-byte line: 120/128); the Simple
        protocol stores payload only but fences between data and flag (NCCL's
        ``src/device/prims_ll.h`` and ``prims_ll128.h``).
    switch_reduction : bool
        The switch can reduce (NVLink SHARP: NCCL's NVLS algorithm).
    switch_efficiency : float
        Fraction of the link bandwidth an in-switch reduction reaches: NCCL's own
        ``nvlsEfficiency``, 0.74 for Blackwell, 0.85 for Hopper (``src/graph/tuning.cc``).
        NVLS also loses one of its ``min(p, 32)`` head channels' share, as NCCL's tuner
        counts it (``(nHeads - 1) / nHeads``).
    generation : str
        ``"blackwell"`` or ``"hopper"``: which of NCCL's tuning constants apply
        (:class:`phy.latency.nccl.NcclTuner`).
    symmetric : bool
        NCCL 2.27's symmetric-memory kernels on registered buffers (one-shot, two-shot,
        NVLS direct; nccl-tests ``-R 2``); False is NCCL's default path (ring, tree, NVLS
        chosen by its tuner), what nccl-tests measures without registration.
    atomic_s : float
        Per arrival at an NVLS barrier: the ``p`` GPUs' arrivals on one flag serialise at
        the L2 slice that owns it, about one L2 access each (:data:`GPU_L2_HIT_S`). This
        is why NVLS latency grows with the GPU count (NVIDIA/nccl issue 1259).

    The defaults of ``kernel_s`` (0.936 us) and ``peer_s`` (119 ns) are the one fitted part
    of the latency model: no public source decomposes a collective's software cost, so
    they are the minimax fit (:func:`phy.latency.fit_software`) that brings this model, on
    its own physical fabrics with symmetric kernels, closest to three public measurements
    (the TRAINING set) of a small all-reduce with NCCL 2.27's symmetric kernels: 8 B200
    GPUs of an HGX board, about 3 us (NVIDIA/nccl issue 1940; "just over 3 us" from NVIDIA
    in nccl-tests issue 333); 8 H200, about 2.3 us (nccl issue 1940); 32 GPUs of a GB200
    NVL72 domain, about 6.3 us (the NCCL 2.27 announcement, identified as that system by
    NVIDIA in nccl-tests issue 333). The fit leaves -13 %, +13 % and -13 %;
    ``benchmarks/bench_latency.py`` reproduces it and ``benchmarks/validate_collectives.py``
    judges the model on measurements outside it. Everything else in a collective's time is
    computed from the fabric.
    """

    name: str = "nccl"
    kernel_s: float = 0.936e-6
    poll_s: float = 1.5 * GPU_L2_HIT_S
    peer_s: float = 0.119e-6
    ll_efficiency: float = 0.5
    ll128_efficiency: float = 120 / 128
    switch_reduction: bool = True
    switch_efficiency: float = 0.74
    generation: str = "blackwell"
    symmetric: bool = False
    atomic_s: float = GPU_L2_HIT_S

    def __post_init__(self):
        number(self.kernel_s, f"Software {self.name!r} kernel_s", nonneg=True)
        number(self.poll_s, f"Software {self.name!r} poll_s", nonneg=True)
        number(self.peer_s, f"Software {self.name!r} peer_s", nonneg=True)
        number(self.ll_efficiency, f"Software {self.name!r} ll_efficiency", positive=True, hi=1.0)
        number(self.ll128_efficiency, f"Software {self.name!r} ll128_efficiency", positive=True, hi=1.0)
        number(self.switch_efficiency, f"Software {self.name!r} switch_efficiency", positive=True, hi=1.0)
        number(self.atomic_s, f"Software {self.name!r} atomic_s", nonneg=True)
        if not isinstance(self.switch_reduction, bool):
            raise ConfigError(f"Software {self.name!r} switch_reduction must be True or False")
        if not isinstance(self.symmetric, bool):
            raise ConfigError(f"Software {self.name!r} symmetric must be True or False")
        if self.generation not in ("blackwell", "hopper"):
            raise ConfigError(f"Software {self.name!r} generation must be 'blackwell' or 'hopper', "
                              f"got {self.generation!r}")

    @classmethod
    def hopper(cls, **changes) -> Software:
        """NCCL on Hopper GPUs (H100, H200): its Hopper constants and NVLS efficiency 0.85."""
        return cls(**{"generation": "hopper", "switch_efficiency": 0.85, **changes})

    def with_(self, **changes) -> Software:
        from dataclasses import replace

        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)
