"""Link roll-up: what a link delivers, how late, at what power and how reliably.

:func:`evaluate_link` takes a :class:`LinkSpec` (lanes, lane rate, modulation, the medium,
the SerDes, the FEC, the framing and what sits in the path) and returns a
:class:`LinkReport`:

* **Errors**: each equalised segment's statistical eye (:func:`phy.statistical_eye`)
  gives its detector error ratio, with DFE error propagation (the DFE burst model of
  :meth:`fec.BurstModel.dfe`, bounded at any error ratio); segments of a retimed link add
  their errors. With COM proposing, the eye decides among COM's own equalisation at COM's
  cursor and variants of it (Rx FFE re-adapted, CTLE flat, no Tx FFE), each sampled at the
  Mueller-Muller point with the first DFE tap (where a DFE receiver's clock locks and COM
  places its cursor, 93A-25) or at the pulse's peak; COM's impairments are applied as
  COM models them (jitter on each symbol's pulse, Tx noise by 93A-30 or 178A-17), so a
  channel with COM above 0 dB errs less than COM's ``DER_0`` at COM's choice
  (``tests/test_consistency.py``). The FEC
  analysis (:func:`fec.burst_errors`, with interleaving and precoding) gives the
  codeword error ratio, the delivered bit error ratio and the frame loss ratio. The
  margin is the Q-factor margin ``20 log10(q / q_req)`` against the detector error ratio
  that would just meet the target (``SER = 2 (1 - 1/M) Q(q)``).
* **Bandwidth**: ``lanes x lane rate x k/n x framing efficiency x retry efficiency``.
  The 802.3 chain: ``106.25 Gb/s x 514/544 x 256/257 = 100 Gb/s`` (the 64b/66b code
  transcoded to 256b/257b; ../shared/REFERENCES.md).
* **Latency** (one way, mean): Tx and Rx SerDes datapaths, FEC accumulation and decode
  (:func:`fec.latency`), time of flight (the electrical channel's own phase delay, the
  fibre's ``n_g L / c``), optical module DSPs, every element of the path, flit
  accumulation and the mean cost of retries.
* **Energy**: SerDes, optical modules (``module power / module rate`` per bit for a
  module at each end, each full duplex) and path elements, in J per payload bit one way;
  ``power_w`` counts both directions of all lanes.

A link that does not meet its target reports ``passes=False`` with the reasons and a
usable bandwidth of zero; a specification that cannot be evaluated raises
:class:`phy.ConfigError`.

:func:`search_link` evaluates the choices a designer has (FEC code or none, interleave
depth, precoding, link-level retry, SerDes presets) and returns every point, the
Pareto set of latency against usable bandwidth and energy, and the lowest-latency point
that meets the target.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache

import numpy as np
from scipy import special

import channels
import fec
from channels.optical import OpticalPath

from ._validate import integer, number
from .com import ComParams, channel_margin
from .equalizers import RxFfe, TxFfe
from .errors import ConfigError
from .noise import Jitter, Noise
from .serdes import Cdr, Receiver, Transmitter, modulation_order
from .stateye import statistical_eye

__all__ = [
    "DEFAULT_TARGET_BER",
    "Framing",
    "LinkReport",
    "LinkSearch",
    "LinkSpec",
    "OpticalClass",
    "PathElement",
    "Retry",
    "Segment",
    "SegmentReport",
    "Serdes",
    "evaluate_link",
    "search_link",
    "segments",
]

#: Delivered bit error ratio the 802.3 PHYs aim at (BER <= 1e-13 at the MAC, e.g. the
#: 800GBASE-DR8 objective as TIA FOTC restates 802.3df; secondary source).
DEFAULT_TARGET_BER = 1e-13


# ----------------------------------------------------------------------------- parts
@dataclass(frozen=True)
class PathElement:
    """Something in the path that adds latency and energy: a retimer, a switch port.

    Parameters
    ----------
    name : str
    latency_s : float
        One-way latency it adds (s).
    energy_j_per_bit : float
        Energy per payload bit crossing it in one direction (J).
    """

    name: str
    latency_s: float
    energy_j_per_bit: float = 0.0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"PathElement.name must be a non-empty string, got {self.name!r}")
        number(self.latency_s, f"PathElement {self.name!r} latency_s", nonneg=True)
        number(self.energy_j_per_bit, f"PathElement {self.name!r} energy_j_per_bit", nonneg=True)

    @classmethod
    def aec_retimer(cls, latency_s: float = 3e-9, energy_j_per_bit: float = 0.0) -> PathElement:
        """A mixed-signal retimer in an active electrical cable: "a few ns"
        (../shared/REFERENCES.md, secondary); give its energy if you know it."""
        return cls("aec_retimer", latency_s, energy_j_per_bit)

    @classmethod
    def dsp_retimer(cls, latency_s: float = 50e-9, energy_j_per_bit: float = 0.0) -> PathElement:
        """A DSP retimer: 15 to 20 times an AEC retimer's few ns (REFERENCES.md,
        secondary): 50 ns."""
        return cls("dsp_retimer", latency_s, energy_j_per_bit)

    @classmethod
    def switch_port(cls, latency_s: float = 200e-9, energy_j_per_bit: float = 0.0) -> PathElement:
        """A scale-up switch, port to port: UALink switches target 150 to 250 ns, a scale-up
        Ethernet switch about 250 ns (REFERENCES.md): 200 ns."""
        return cls("switch_port", latency_s, energy_j_per_bit)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Framing:
    """How payload rides on the FEC's message bits.

    Parameters
    ----------
    name : str
    transcode : (int, int)
        Payload bits per coded bits of the line code, e.g. ``(256, 257)`` for 802.3's
        256b/257b transcoding; ``(1, 1)`` for none.
    flit_bytes : int, optional
        Flit size; flits are packed into a codeword's message bits (as many whole flits
        as fit; a flit larger than the message spans codewords).
    flit_overhead_bytes : int
        Header and CRC bytes inside each flit.
    frame_bytes : int
        The frame (or flit) size for the frame loss ratio.
    """

    name: str = "ethernet"
    transcode: tuple = (256, 257)
    flit_bytes: int | None = None
    flit_overhead_bytes: int = 0
    frame_bytes: int = 64

    def __post_init__(self):
        t = tuple(self.transcode)
        if len(t) != 2:
            raise ConfigError(f"Framing.transcode must be (payload bits, coded bits), got {self.transcode!r}")
        a = integer(t[0], "Framing.transcode payload bits", 1)
        b = integer(t[1], "Framing.transcode coded bits", 1)
        if a > b:
            raise ConfigError(f"Framing.transcode must not carry more payload than coded bits, got {a}/{b}")
        object.__setattr__(self, "transcode", (a, b))
        if self.flit_bytes is not None:
            integer(self.flit_bytes, "Framing.flit_bytes", 1)
            integer(self.flit_overhead_bytes, "Framing.flit_overhead_bytes", 0, self.flit_bytes - 1)
        elif self.flit_overhead_bytes:
            raise ConfigError("Framing.flit_overhead_bytes needs flit_bytes")
        integer(self.frame_bytes, "Framing.frame_bytes", 1)

    @classmethod
    def ethernet(cls) -> Framing:
        """802.3: 64b/66b blocks transcoded four at a time into 257-bit blocks
        (``66/64 x 257/264 = 257/256`` over the MAC rate); 64-byte frames for the frame
        loss ratio (the minimum frame)."""
        return cls("ethernet", (256, 257), None, 0, 64)

    @classmethod
    def ualink(cls, flit_overhead_bytes: int = 0) -> Framing:
        """UALink 1.0: a 640-byte flit is exactly one RS(544,514) codeword's payload
        (REFERENCES.md). Its header and CRC bytes are not in our references: give them
        as ``flit_overhead_bytes``."""
        return cls("ualink", (1, 1), 640, flit_overhead_bytes, 640)

    @classmethod
    def raw(cls) -> Framing:
        """No line code and no flits: every message bit is payload."""
        return cls("raw", (1, 1), None, 0, 64)

    def efficiency(self, message_bits: int | None) -> float:
        """Payload bits per FEC message bit (or per line bit without FEC)."""
        eff = self.transcode[0] / self.transcode[1]
        if self.flit_bytes is None:
            return eff
        fb = 8 * self.flit_bytes
        payload = fb - 8 * self.flit_overhead_bytes
        if message_bits is None or message_bits < fb:
            return eff * payload / fb
        return eff * (message_bits // fb) * payload / message_bits

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Retry:
    """Link-level retry: a CRC detects a bad flit and the sender replays it (go-back-N).

    Parameters
    ----------
    crc_bits : int
        A bad flit slips through with probability ``2^-crc_bits``.
    flit_bytes : int
        The retried unit when the framing has no flits.
    turnaround_s : float
        Processing added to the link's round trip before a replay starts (s).
    """

    crc_bits: int = 32
    flit_bytes: int = 256
    turnaround_s: float = 0.0

    def __post_init__(self):
        integer(self.crc_bits, "Retry.crc_bits", 1, 128)
        integer(self.flit_bytes, "Retry.flit_bytes", 1)
        number(self.turnaround_s, "Retry.turnaround_s", nonneg=True)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Serdes:
    """The host SerDes at each end of the link.

    Parameters
    ----------
    tx, rx : Transmitter, Receiver, optional
        A fixed equalisation. Without them the equalisation is optimised by COM
        (:func:`phy.channel_margin`) with ``com`` (default: 802.3ck KR at 53.125 GBd,
        802.3dj KR otherwise, at the lane's baud rate); the Rx FFE then re-adapts (MMSE)
        on the link.
    com : ComParams, optional
    noise, jitter : Noise, Jitter, optional
        Default: COM's ``eta_0``, ``SNR_TX``, ``sigma_RJ`` and ``A_DD`` for the baud.
    packages : bool
        Put COM's reference package at each end of an electrical channel (the channel is
        then ball to ball, the link die to die).
    tx_latency_ui, rx_latency_ui : float
        Datapath latency of the transmitter and the receiver in UI. Defaults: the widest
        datapath of a vendor's PMA figures (Tx 82 to 564 UI, Rx 58.5 to 513.5 UI by
        datapath width; Microchip PolarFire transceiver documentation), the width a
        100 GBd-class SerDes needs to reach its core clock.
    energy_j_per_bit : float
        Transmitter plus receiver energy per bit (J). No public figure for a long-reach
        112G/224G SerDes was found (a 112 Gb/s transmitter alone is about 1 pJ/bit,
        IBM 14 nm): it is 0 unless you give it, and the report says so.
    cdr : Cdr, optional
        Where a fixed equalisation samples. Default: the better (fewer errors) of the
        Mueller-Muller point with the first DFE tap (``"mm-dfe"``, where COM puts its
        cursor) and the pulse's peak.
    """

    tx: Transmitter | None = None
    rx: Receiver | None = None
    com: ComParams | None = None
    noise: Noise | None = None
    jitter: Jitter | None = None
    packages: bool = True
    tx_latency_ui: float = 564.0
    rx_latency_ui: float = 513.5
    energy_j_per_bit: float = 0.0
    name: str = "serdes"
    cdr: Cdr | None = None

    def __post_init__(self):
        if (self.tx is None) != (self.rx is None):
            raise ConfigError("Serdes needs both tx and rx for a fixed equalisation, or neither (COM chooses)")
        if self.tx is not None and not isinstance(self.tx, Transmitter):
            raise ConfigError(f"Serdes.tx must be a Transmitter, got {type(self.tx).__name__}")
        if self.rx is not None and not isinstance(self.rx, Receiver):
            raise ConfigError(f"Serdes.rx must be a Receiver, got {type(self.rx).__name__}")
        if self.com is not None and not isinstance(self.com, ComParams):
            raise ConfigError(f"Serdes.com must be a ComParams, got {type(self.com).__name__}")
        if self.noise is not None and not isinstance(self.noise, Noise):
            raise ConfigError(f"Serdes.noise must be a Noise, got {type(self.noise).__name__}")
        if self.jitter is not None and not isinstance(self.jitter, Jitter):
            raise ConfigError(f"Serdes.jitter must be a Jitter, got {type(self.jitter).__name__}")
        if self.cdr is not None and not isinstance(self.cdr, Cdr):
            raise ConfigError(f"Serdes.cdr must be a Cdr, got {type(self.cdr).__name__}")
        if self.cdr is not None and self.tx is None:
            raise ConfigError("Serdes.cdr applies to a fixed equalisation (tx and rx); with COM the phase is COM's or the eye's")
        number(self.tx_latency_ui, "Serdes.tx_latency_ui", nonneg=True)
        number(self.rx_latency_ui, "Serdes.rx_latency_ui", nonneg=True)
        number(self.energy_j_per_bit, "Serdes.energy_j_per_bit", nonneg=True)

    def com_params(self, baud_hz: float) -> ComParams:
        if self.com is not None:
            return self.com if np.isclose(self.com.baud_hz, baud_hz) else self.com.with_(baud_hz=baud_hz)
        if np.isclose(baud_hz, 53.125e9):
            return ComParams.ieee_802_3ck_kr()
        p = ComParams.ieee_802_3dj_kr()
        return p if np.isclose(baud_hz, p.baud_hz) else p.with_(baud_hz=baud_hz)

    def impairments(self, baud_hz: float) -> tuple[Noise, Jitter]:
        """Noise and jitter: the given ones, or COM's for the baud, jitter as COM models it
        (:meth:`phy.Jitter.com`: ``sigma_RJ`` and ``A_DD`` on each symbol's pulse)."""
        p = self.com_params(baud_hz)
        # COM's transmitter noise: on the main cursor without an Rx FFE (93A-30), through
        # the whole path with one (178A-17)
        tx_model = "path" if p.rx_ffe_pre + p.rx_ffe_post else "cursor"
        noise = self.noise or Noise(tx_snr_db=p.snr_tx_db, rx_noise_psd_v2_per_hz=p.eta0_v2_per_hz, tx_model=tx_model)
        jitter = self.jitter or Jitter.com(p.sigma_rj_ui, p.a_dd_ui, baud_hz)
        return noise, jitter

    def to_dict(self) -> dict:
        return {"name": self.name, "tx": None if self.tx is None else self.tx.to_dict(),
                "rx": None if self.rx is None else self.rx.to_dict(),
                "com": None if self.com is None else self.com.name, "packages": self.packages,
                "noise": None if self.noise is None else self.noise.to_dict(),
                "jitter": None if self.jitter is None else self.jitter.to_dict(),
                "tx_latency_ui": self.tx_latency_ui, "rx_latency_ui": self.rx_latency_ui,
                "energy_j_per_bit": self.energy_j_per_bit, "cdr": None if self.cdr is None else self.cdr.to_dict()}


@dataclass(frozen=True)
class OpticalClass:
    """An optical link class: the optical path, the electrical host channel at each end,
    and the modules.

    Parameters
    ----------
    kind : {"dsp", "lpo", "cpo"}
        ``"dsp"``: a pluggable with a DSP retimer at each end: three retimed segments
        (host to module, the optics, module to host), the module's DSP equalising the
        optics. ``"lpo"`` (linear pluggable) and ``"cpo"`` (co-packaged): linear drive, one
        segment from host SerDes to host SerDes through the optics, its noise added at the
        optical receiver.
    path : channels.optical.OpticalPath
    host : channels.Channel
        Electrical channel from the host's package to the module (each end).
    module_power_w, module_rate_bps : float
        A module's power and its rate per direction (full duplex).
    module_latency_s : float
        A module's one-way latency (its DSP; 0 for linear optics).
    dsp_rx : Receiver
        The module DSP's receiver for the optical segment (``"dsp"`` only).
    packages : bool, optional
        Whether COM's reference package goes on the host channel's ends (None: as
        ``Serdes.packages``); False when ``host`` already includes the package.
    """

    kind: str
    path: OpticalPath
    host: channels.Channel
    module_power_w: float
    module_rate_bps: float = 800e9
    module_latency_s: float = 0.0
    dsp_rx: Receiver = field(default_factory=lambda: Receiver(ffe=RxFfe(3, 12)))
    packages: bool | None = None
    name: str = ""

    def __post_init__(self):
        if self.kind not in ("dsp", "lpo", "cpo"):
            raise ConfigError(f"OpticalClass.kind must be 'dsp', 'lpo' or 'cpo', got {self.kind!r}")
        if not isinstance(self.path, OpticalPath):
            raise ConfigError(f"OpticalClass.path must be a channels.optical.OpticalPath, got {type(self.path).__name__}")
        if not isinstance(self.host, channels.Channel):
            raise ConfigError(f"OpticalClass.host must be a channels.Channel, got {type(self.host).__name__}")
        number(self.module_power_w, "OpticalClass.module_power_w", nonneg=True)
        number(self.module_rate_bps, "OpticalClass.module_rate_bps", positive=True)
        number(self.module_latency_s, "OpticalClass.module_latency_s", nonneg=True)
        if not isinstance(self.dsp_rx, Receiver):
            raise ConfigError(f"OpticalClass.dsp_rx must be a Receiver, got {type(self.dsp_rx).__name__}")
        if not self.name:
            object.__setattr__(self, "name", self.kind)

    @staticmethod
    def _path(length_m: float, baud_hz: float, connectors: int) -> OpticalPath:
        """A 400GBASE-DR4-class transmitter (OMA_outer mid-range of its -0.8 to 4.2 dBm at
        1.0 dBm, ER 3.5 dB, RIN_OMA -136 dB/Hz at 53.125 GBd, reflectances -26 dB: a
        vendor's restatement of 802.3 Cl.124), scaled to the baud: bandwidths 0.75 baud
        (driver) and 0.5 baud (receiver), and the RIN limit lowered by ``10 log10(baud /
        53.125 GBd)`` dB so that the RIN integrated over the receiver's band stays what
        DR4 allows (-139 dB/Hz at 106.25 GBd; derived: 802.3dj's 200G/lane PMD figures
        were not found in public sources). TIA 12.5 pA/sqrt(Hz) (a 42 GHz SiGe TIA,
        journal), responsivity 0.85 A/W (quantum efficiency 0.8 at 1311 nm), G.652 fibre
        and PC connectors at 0.5 dB / -35 dB."""
        from channels.optical import (
            Fiber,
            OpticalConnector,
            OpticalReceiver,
            OpticalTransmitter,
        )

        rin = -136.0 - 10 * math.log10(baud_hz / 53.125e9)  # the same integrated RIN over the band
        tx = OpticalTransmitter(1.0, 3.5, rin, 1311e-9, 0.75 * baud_hz, 0.0, -26.0)
        rx = OpticalReceiver(0.85, 12.5e-12, 0.5 * baud_hz, -26.0)
        return OpticalPath.point_to_point(Fiber.smf(length_m), connectors, tx, rx, OpticalConnector(0.5, -35.0))

    @classmethod
    def dsp_pluggable(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
                      module_power_w: float = 15.0, module_latency_s: float = 50e-9) -> OpticalClass:
        """An 800G DSP pluggable at each end: 14 to 16 W (REFERENCES.md, vendor slides),
        a DSP retimer's latency (:meth:`PathElement.dsp_retimer`), the built-in
        ``chip_to_module`` host channel."""
        return cls("dsp", cls._path(length_m, baud_hz, connectors), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, module_latency_s, name="dsp_pluggable")

    @classmethod
    def lpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 8.5) -> OpticalClass:
        """Linear pluggable optics: 8 to 9 W per 800G (REFERENCES.md), no DSP, the host's
        ``chip_to_module`` channel at each end."""
        return cls("lpo", cls._path(length_m, baud_hz, connectors), channels.library.get("chip_to_module"),
                   module_power_w, 800e9, 0.0, name="lpo")

    @classmethod
    def cpo(cls, length_m: float = 100.0, baud_hz: float = 106.25e9, connectors: int = 2,
            module_power_w: float = 5.5) -> OpticalClass:
        """Co-packaged optics: about 5.5 W per 800G (REFERENCES.md), the ``cpo_short``
        package channel from the switch die to the optical engine (it holds the package
        trace, so no COM package is added)."""
        return cls("cpo", cls._path(length_m, baud_hz, connectors), channels.library.get("cpo_short"),
                   module_power_w, 800e9, 0.0, packages=False, name="cpo")

    @property
    def energy_j_per_bit(self) -> float:
        """A module at each end, each full duplex: ``2 P / (2 rate)`` per bit one way."""
        return self.module_power_w / self.module_rate_bps

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "path": self.path.to_dict(), "host": self.host.name,
                "module_power_w": self.module_power_w, "module_rate_bps": self.module_rate_bps,
                "module_latency_s": self.module_latency_s, "dsp_rx": self.dsp_rx.to_dict(), "packages": self.packages}


@dataclass(frozen=True)
class LinkSpec:
    """A link: ``lanes`` lanes in each direction, each at ``lane_rate_bps``.

    Parameters
    ----------
    channel : channels.Channel, optional
        The electrical medium (copper), ball to ball when ``serdes.packages``.
    optics : OpticalClass, optional
        An optical medium instead.
    lanes : int
    lane_rate_bps : float
        Line rate of one lane (bit/s), FEC included: 106.25e9, 212.5e9.
    modulation : {"pam4", "nrz"}
    serdes : Serdes
    fec : fec.RSCode or str or None
        A code or its name (``"KP4"``, ``"KR4"``, ``"LL272"``); None: no FEC.
    interleave : int
        Codewords symbol-interleaved per block.
    precoding : bool
        802.3's 1/(1+D) mod 4 precoder (PAM4).
    retry : Retry, optional
        Link-level retry over the FEC (or instead of it).
    framing : Framing
    path : sequence of PathElement
    target_ber : float
        Delivered (post-FEC, post-retry) bit error ratio to meet.
    fec_clock_hz : float
        The FEC decoder's clock (:func:`fec.latency`).
    name : str
    """

    channel: channels.Channel | None = None
    optics: OpticalClass | None = None
    lanes: int = 1
    lane_rate_bps: float = 212.5e9
    modulation: str = "pam4"
    serdes: Serdes = field(default_factory=Serdes)
    fec: object = "KP4"
    interleave: int = 1
    precoding: bool = False
    retry: Retry | None = None
    framing: Framing = field(default_factory=Framing.ethernet)
    path: tuple = ()
    target_ber: float = DEFAULT_TARGET_BER
    fec_clock_hz: float = 1e9
    name: str = "link"

    def __post_init__(self):
        if (self.channel is None) == (self.optics is None):
            raise ConfigError("LinkSpec needs exactly one medium: channel= (electrical) or optics= (optical)")
        if self.channel is not None and not isinstance(self.channel, channels.Channel):
            raise ConfigError(f"LinkSpec.channel must be a channels.Channel, got {type(self.channel).__name__}")
        if self.optics is not None and not isinstance(self.optics, OpticalClass):
            raise ConfigError(f"LinkSpec.optics must be an OpticalClass, got {type(self.optics).__name__}")
        integer(self.lanes, "LinkSpec.lanes", 1, 1024)
        number(self.lane_rate_bps, "LinkSpec.lane_rate_bps", positive=True)
        object.__setattr__(self, "modulation", str(self.modulation).lower())
        try:
            modulation_order(self.modulation)
        except ConfigError as e:
            raise ConfigError(f"LinkSpec.modulation: {e}") from None
        if not isinstance(self.serdes, Serdes):
            raise ConfigError(f"LinkSpec.serdes must be a Serdes, got {type(self.serdes).__name__}")
        code = self.fec
        if isinstance(code, str):
            if code.upper() not in fec.codes.NAMED:
                raise ConfigError(f"unknown FEC {code!r}; named codes: {', '.join(fec.codes.NAMED)}, or None")
            code = fec.codes.NAMED[code.upper()]
        if code is not None and not isinstance(code, fec.RSCode):
            raise ConfigError(f"LinkSpec.fec must be an fec.RSCode, a code name or None, got {type(code).__name__}")
        object.__setattr__(self, "fec", code)
        integer(self.interleave, "LinkSpec.interleave", 1, 64)
        if self.interleave > 1 and code is None:
            raise ConfigError("LinkSpec.interleave needs an FEC")
        if self.precoding and self.modulation != "pam4":
            raise ConfigError("the 1/(1+D) mod 4 precoder applies to PAM4 only")
        if self.retry is not None and not isinstance(self.retry, Retry):
            raise ConfigError(f"LinkSpec.retry must be a Retry or None, got {type(self.retry).__name__}")
        if not isinstance(self.framing, Framing):
            raise ConfigError(f"LinkSpec.framing must be a Framing, got {type(self.framing).__name__}")
        path = tuple(self.path)
        for e in path:
            if not isinstance(e, PathElement):
                raise ConfigError(f"LinkSpec.path takes PathElements, got {type(e).__name__}")
        object.__setattr__(self, "path", path)
        number(self.target_ber, "LinkSpec.target_ber", positive=True, hi=0.5)
        number(self.fec_clock_hz, "LinkSpec.fec_clock_hz", positive=True)

    @property
    def bits_per_symbol(self) -> int:
        return round(math.log2(modulation_order(self.modulation)))

    @property
    def baud_hz(self) -> float:
        return self.lane_rate_bps / self.bits_per_symbol

    def with_(self, **changes) -> LinkSpec:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "medium": self.channel.name if self.channel is not None else self.optics.name,
            "optics": None if self.optics is None else self.optics.to_dict(), "lanes": self.lanes,
            "lane_rate_bps": self.lane_rate_bps, "modulation": self.modulation, "serdes": self.serdes.to_dict(),
            "fec": None if self.fec is None else self.fec.name, "interleave": self.interleave,
            "precoding": self.precoding, "retry": None if self.retry is None else self.retry.to_dict(),
            "framing": self.framing.to_dict(), "path": [e.to_dict() for e in self.path],
            "target_ber": self.target_ber, "fec_clock_hz": self.fec_clock_hz,
        }


# ----------------------------------------------------------------------------- reports
@dataclass(frozen=True)
class SegmentReport:
    """One equalised segment (an electrical hop or an optical span) and its eye.

    Attributes
    ----------
    name : str
    ser : float
        Detector symbol error ratio at the sampling point.
    der : float
        With DFE error propagation (errors per UI).
    dfe_taps : list
        Normalised to the main cursor.
    main_v : float
        Main cursor at the slicer for a full-swing symbol (V).
    eye_heights_v : list
        At ``eye_target`` (the FEC's required detector error ratio, or the target).
    sigma_v : dict
    equalisation : str
        How the equalisation was chosen.
    tx, rx : dict
        The transmitter and receiver used.
    com_db : float or None
        When COM proposed the equalisation.
    delay_s : float
        Time of flight of the segment.
    notes : list
    sampling : dict
        The sampling phase (:class:`phy.Cdr`) the eye was computed at.
    candidates : list of [str, float, float]
        Every equalisation and phase tried, with its symbol error ratio at the slicer and
        its detector error ratio with DFE error propagation.
    """

    name: str
    ser: float
    der: float
    dfe_taps: list
    main_v: float
    eye_heights_v: list
    eye_target: float
    sigma_v: dict
    equalisation: str
    tx: dict
    rx: dict
    com_db: float | None
    delay_s: float
    notes: list
    sampling: dict = field(default_factory=dict)
    candidates: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LinkReport:
    """What a link delivers (see the module docstring; SI units, one direction unless
    named otherwise).

    Attributes
    ----------
    passes : bool
        Meets ``target_ber``.
    reasons : list of str
        Why it does not (empty when it passes).
    pre_fec_ber, pre_fec_der : float
        Bit and detector (UI) error ratios into the FEC, all segments.
    post_fec_ber : float
        Delivered bit error ratio (after retry when there is one).
    codeword_error_ratio, frame_loss_ratio, flit_retry_ratio : float or None
    required_der : float
        Detector error ratio that would just meet the target.
    margin_db : float
        Q-factor margin against ``required_der``.
    rate_chain : dict
        ``line_bps``, ``fec_rate``, ``framing_efficiency``, ``payload_bps``,
        ``retry_efficiency``, ``usable_bps``.
    usable_bandwidth_bps : float
        Per direction; 0 when the link fails.
    latency_s : float
        One-way mean latency; ``latency_breakdown_s`` holds its terms.
    energy_j_per_bit : float
        Per payload bit, one way; ``energy_breakdown_j_per_bit`` its terms.
    power_w : float
        Both directions, all lanes.
    """

    name: str
    passes: bool
    reasons: list
    lanes: int
    lane_rate_bps: float
    baud_hz: float
    modulation: str
    fec: str | None
    interleave: int
    precoding: bool
    retry: bool
    segments: list
    pre_fec_ber: float
    pre_fec_der: float
    post_fec_ber: float
    codeword_error_ratio: float | None
    frame_loss_ratio: float | None
    flit_retry_ratio: float | None
    target_ber: float
    required_der: float
    margin_db: float
    rate_chain: dict
    usable_bandwidth_bps: float
    latency_s: float
    latency_breakdown_s: dict
    energy_j_per_bit: float
    energy_breakdown_j_per_bit: dict
    power_w: float
    notes: list

    def to_dict(self) -> dict:
        d = asdict(self)
        d["segments"] = [s.to_dict() if isinstance(s, SegmentReport) else s for s in self.segments]
        return _plain(d)

    def summary(self) -> str:
        """A few lines for a terminal."""
        st = "PASS" if self.passes else "FAIL: " + "; ".join(self.reasons)
        lat = ", ".join(f"{k} {v * 1e9:.2f}" for k, v in self.latency_breakdown_s.items() if v)
        return (
            f"{self.name}: {st}\n"
            f"  {self.lanes} x {self.lane_rate_bps / 1e9:g} Gb/s {self.modulation.upper()}, FEC {self.fec or 'none'}"
            f"{' x' + str(self.interleave) if self.interleave > 1 else ''}{' precoded' if self.precoding else ''}"
            f"{' + retry' if self.retry else ''}\n"
            f"  pre-FEC BER {self.pre_fec_ber:.3g}, post-FEC BER {self.post_fec_ber:.3g} (target "
            f"{self.target_ber:.0e}), margin {self.margin_db:.2f} dB\n"
            f"  usable {self.usable_bandwidth_bps / 1e9:.2f} Gb/s per direction\n"
            f"  latency {self.latency_s * 1e9:.2f} ns ({lat})\n"
            f"  energy {self.energy_j_per_bit * 1e12:.3g} pJ/bit, {self.power_w:.3g} W both directions"
        )


def _plain(x):
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return x


# ----------------------------------------------------------------------------- segments
@dataclass(frozen=True)
class Segment:
    """One equalised segment of a link, everything needed to rerun it: the channel as the
    receiver sees it (packages included), the chosen transmitter and receiver, the noise
    and jitter, and its statistical eye.

    ``phy.simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx,
    noise=seg.noise, jitter=seg.jitter, cdr=seg.cdr)`` checks the eye in the time domain.

    Attributes
    ----------
    name : str
    channel : channels.Channel
    baud_hz : float
    tx, rx, noise, jitter
    eye : StatEye
    ser, der : float
        Detector symbol error ratio; with DFE error propagation.
    equalisation : str
        How the equalisation was chosen.
    com_db : float or None
    delay_s : float
        Time of flight through the segment.
    notes : tuple of str
    cdr : Cdr
        The fixed sampling phase the eye was computed at (pass it to ``phy.simulate``).
    candidates : tuple of (str, float, float)
        Every equalisation and sampling phase tried, with its symbol error ratio at the
        slicer and its detector error ratio with DFE error propagation.
    """

    name: str
    channel: channels.Channel
    baud_hz: float
    tx: Transmitter
    rx: Receiver
    noise: Noise
    jitter: Jitter
    eye: object
    ser: float
    der: float
    equalisation: str
    com_db: float | None
    delay_s: float
    notes: tuple
    cdr: Cdr = field(default_factory=Cdr)
    candidates: tuple = ()

    @property
    def dfe(self) -> np.ndarray:
        """DFE taps used, normalised to the main cursor."""
        return np.asarray(self.eye.link.dfe, dtype=float)


def _check_band(ch: channels.Channel, baud: float, what: str) -> None:
    if ch.f[-1] < baud / 2:
        raise ConfigError(
            f"{what} {ch.name!r} has data only up to {ch.f[-1] / 1e9:.4g} GHz, below the Nyquist frequency "
            f"{baud / 2e9:.4g} GHz of {baud / 1e9:.4g} GBd: it cannot carry this lane rate with this modulation"
        )


_EYES: OrderedDict = OrderedDict()  # recent segments, so a channel met again is not re-equalised
_EYES_MAX = 64


def _equalised_eye(name: str, ch: channels.Channel, spec: LinkSpec, *, extra_psd: float = 0.0,
                   packages: bool | None = None) -> Segment:
    """The host SerDes over ``ch``: equalisation (fixed or by COM), then the statistical eye.
    Remembered for the same channel object, SerDes, baud, modulation, added noise and
    packages (an optical class's host channel at every fibre length, a search's options)."""
    key = (id(ch), spec.serdes, spec.baud_hz, spec.modulation, float(extra_psd), packages)
    try:
        hit = _EYES.get(key)
    except TypeError:  # a SerDes holding something unhashable: no memory
        return _equalise(name, ch, spec, extra_psd, packages)
    if hit is not None and hit[0] is ch:
        _EYES.move_to_end(key)
        return replace(hit[1], name=name)
    seg = _equalise(name, ch, spec, extra_psd, packages)
    _EYES[key] = (ch, seg)
    if len(_EYES) > _EYES_MAX:
        _EYES.popitem(last=False)
    return seg


def _equalise(name: str, ch: channels.Channel, spec: LinkSpec, extra_psd: float, packages: bool | None) -> Segment:
    s = spec.serdes
    baud = spec.baud_hz
    _check_band(ch, baud, name)
    p = s.com_params(baud)
    notes = []
    use_pkg = s.packages if packages is None else packages
    full = ch
    if use_pkg:
        f = ch.f
        full = channels.cascade(p.package(f, "tx"), ch, p.package(f, "rx"))
    com_db = None
    if s.tx is None:
        if spec.modulation != ("pam4" if p.levels == 4 else "nrz"):
            p = p.with_(levels=modulation_order(spec.modulation))
        if extra_psd > 0:  # let the search see the added noise (it is referred to the same input)
            p = p.with_(eta0_v2_per_hz=p.eta0_v2_per_hz + extra_psd)
        m = channel_margin(ch, p)
        com_db = float(m.com_db)
        tx, rx_com = m.serdes()
        rx = replace(rx_com, ffe=RxFfe(rx_com.ffe.n_pre, rx_com.ffe.n_post))
        # COM proposes, the statistical eye decides: COM's ranking without the Rx FFE
        # can favour a CTLE that costs too much signal when the noise is large; where the
        # clock recovery locks (COM's cursor, 93A-25's Mueller-Muller point with the first
        # DFE tap, or the pulse's peak) is tried too
        flat = replace(rx, ctle=replace(rx.ctle, g_dc_db=0.0, g_dc2_db=0.0)) if rx.ctle is not None else rx
        bare = replace(tx, ffe=TxFfe())
        candidates = [(COM_CHOICE, tx, rx_com, (m.cdr(),)), ("COM's Tx FFE and CTLE", tx, rx, SAMPLING_PHASES),
                      ("COM's Tx FFE, flat CTLE", tx, flat, SAMPLING_PHASES),
                      ("no Tx FFE, COM's CTLE", bare, rx, SAMPLING_PHASES),
                      ("no Tx FFE, flat CTLE", bare, flat, SAMPLING_PHASES)]
    else:
        candidates = [("given", s.tx, s.rx, (s.cdr,) if s.cdr is not None else SAMPLING_PHASES)]
    noise, jitter = s.impairments(baud)
    if extra_psd > 0:
        noise = replace(noise, rx_noise_psd_v2_per_hz=noise.rx_noise_psd_v2_per_hz + extra_psd)
    best, tried = None, []
    for label, tx, rx, phases in candidates:
        if tx.modulation != spec.modulation:
            raise ConfigError(f"the Serdes transmitter modulates {tx.modulation}, the link {spec.modulation}")
        if noise.rx_noise_psd_v2_per_hz > 0 and rx.bandwidth_hz is None:
            rx = replace(rx, bandwidth_hz=0.75 * baud)
            notes.append("receiver bandwidth set to 0.75 baud for the noise density")
        for phase in phases:
            cdr = phase if isinstance(phase, Cdr) else Cdr(phase=phase)
            eye = statistical_eye(full, baud_hz=baud, tx=tx, rx=rx, noise=noise, jitter=jitter, cdr=cdr,
                                  columns="sampling")
            der = float(eye.ser_dfe())
            what = label if isinstance(phase, Cdr) else f"{label}, sampled at {_PHASE_WORDS[phase]}"
            tried.append((what, float(eye.ser()), der))
            if best is None or der < best[0] * 0.99:
                best = (der, what, eye, tx, rx, cdr)
    der, label, eye, tx, rx, cdr = best
    if com_db is not None:
        notes.append(f"COM ({p.name}) {com_db:.2f} dB; equalisation: {label}")
    return Segment(name, full, baud, tx, rx, noise, jitter, eye, float(eye.ser()), der, label, com_db,
                   float(full.delay_s), tuple(notes), cdr, tuple(tried))


#: The candidate that is COM's equalisation as COM found it: its Tx FFE, CTLE and Rx FFE
#: taps, sampled at its cursor.
COM_CHOICE = "COM's equalisation at COM's cursor"
#: Sampling phases the roll-up tries for each re-adapted equalisation (:class:`phy.Cdr` ``phase``).
SAMPLING_PHASES = ("mm-dfe", "peak")
_PHASE_WORDS = {"mm-dfe": "the Mueller-Muller point with the first DFE tap (93A-25)", "peak": "the pulse peak"}


def _optical_eye(name: str, oc: OpticalClass, spec: LinkSpec) -> Segment:
    """The optical span equalised by the module DSP, noise from the optical budget."""
    baud = spec.baud_hz
    M = modulation_order(spec.modulation)
    b = oc.path.budget(M)
    swing = 0.5
    rel = b.equivalent_noise_rms_a / (b.levels_a[-1] - b.levels_a[0])  # rms over the outer amplitude
    noise = Noise(rx_noise_rms_v=rel * 2 * swing)
    ch = oc.path.channel()
    tx = Transmitter(spec.modulation, swing_v=swing)
    cdr = Cdr(phase="mm-dfe")
    eye = statistical_eye(ch, baud_hz=baud, tx=tx, rx=oc.dsp_rx, noise=noise, cdr=cdr, columns="sampling")
    notes = ((f"optical budget: received OMA {b.received_oma_dbm:.2f} dBm, SNR {b.snr_db:.2f} dB, "
             f"SER without ISI {b.ser:.3g}"),)
    return Segment(name, ch, baud, tx, oc.dsp_rx, noise, Jitter(), eye, float(eye.ser()), float(eye.ser_dfe()),
                   "module DSP", None, oc.path.delay_s, notes, cdr)


def segments(spec: LinkSpec) -> tuple[Segment, ...]:
    """The equalised segments of ``spec``'s medium: one for copper and linear optics, three
    for DSP-retimed optics (host to module, the optics, module to host)."""
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"segments needs a LinkSpec, got {type(spec).__name__}")
    if spec.channel is not None:
        return (_equalised_eye("channel", spec.channel, spec),)
    oc = spec.optics
    if oc.kind == "dsp":
        host = _equalised_eye("host_to_module", oc.host, spec, packages=oc.packages)
        optical = _optical_eye("optics", oc, spec)
        back = replace(host, name="module_to_host")
        return (host, optical, back)
    # linear optics: host -> optics -> host, the optical noise at the optical receiver
    ch = channels.cascade(oc.host, oc.path.channel(oc.host.f), oc.host)
    M = modulation_order(spec.modulation)
    b = oc.path.budget(M)
    p = spec.serdes.com_params(spec.baud_hz)
    swing = spec.serdes.tx.swing_v if spec.serdes.tx is not None else p.a_v
    f = oc.host.f
    h_host = np.abs(oc.host.sdd21)
    rel = b.equivalent_noise_rms_a / (b.levels_a[-1] - b.levels_a[0])
    sigma_v = rel * 2 * swing * float(h_host[np.argmin(np.abs(f - 1e9))])  # at the optical receiver
    bn = b.noise_bandwidth_hz
    band = f <= bn
    psd = sigma_v**2 / bn * float(np.mean(h_host[band] ** 2))  # referred through the far host channel
    e = _equalised_eye("host_optics_host", ch, spec, extra_psd=psd, packages=oc.packages)
    notes = e.notes + ((f"optical budget: received OMA {b.received_oma_dbm:.2f} dBm, SNR {b.snr_db:.2f} dB; "
                       f"its noise referred to the host receiver as {psd:.3g} V^2/Hz"),)
    return (replace(e, delay_s=e.delay_s + oc.path.delay_s, notes=notes),)


# ----------------------------------------------------------------------------- errors
def _q_of(der: float, M: int) -> float:
    x = min(max(der, 1e-300), 0.5) / (2 * (1 - 1 / M))
    return float(np.sqrt(2.0) * special.erfcinv(2 * min(x, 0.5)))


def _model(eyes: tuple[Segment, ...], der: float, modulation: str):
    """The burst model of the segment with the most errors, at ``der`` (or None: random)."""
    if der <= 0:
        return None
    worst = max(eyes, key=lambda e: e.der)
    taps = worst.dfe[:6]
    taps = taps[np.abs(taps) < 1] if taps.size else taps
    if taps.size == 0:
        taps = np.zeros(1)  # no DFE: single errors (a precoder still doubles them)
    der = float(f"{min(der, 0.5):.4g}")
    return _dfe_model(tuple(np.round(taps, 6)), der, modulation)


@lru_cache(maxsize=64)
def _dfe_model(taps: tuple, der: float, modulation: str):
    """The DFE burst model, bounded at any error ratio (:meth:`fec.BurstModel.dfe`)."""
    return fec.BurstModel.dfe(np.array(taps), der, modulation)


def _post_fec(spec: LinkSpec, der: float, eyes, shape_der: float | None = None
              ) -> tuple[float, float | None, float | None, object]:
    """(delivered BER before retry, CER, FLR, model) for a detector error ratio ``der``,
    with the bursts' shape taken at ``shape_der`` (default ``der``)."""
    bpu = spec.bits_per_symbol
    code = spec.fec
    model = _model(eyes, der if shape_der is None else shape_der, spec.modulation) if der > 0 else None
    if code is None:
        if model is None:
            return 0.0, None, None, None
        # one bit per level error (Gray); a precoder doubles isolated errors
        factor = 2.0 if spec.precoding else 1.0
        return min(0.5, der * factor / bpu), None, None, model
    if model is None:
        return 0.0, 0.0, 0.0, None
    pf = fec.burst_errors(code, model, der=der, interleave=spec.interleave, precoded=spec.precoding,
                          frame_bits=8 * spec.framing.frame_bytes)
    return pf.ber_out, pf.cer, pf.frame_loss_ratio, model


def _flit_bits(spec: LinkSpec) -> int:
    return 8 * (spec.framing.flit_bytes or spec.retry.flit_bytes)


def _retry_terms(spec: LinkSpec, der: float, cer, model, one_way_s: float, payload_bps: float):
    """(flit error ratio, bandwidth efficiency, mean added latency, undetected fraction)."""
    r = spec.retry
    fb = _flit_bits(spec)
    if spec.fec is not None:
        fer = fec.analysis.frame_loss_ratio(spec.fec, cer, fb) if cer else 0.0
    elif model is None:
        fer = 0.0
    else:
        rate = der / model.mean_errors  # bursts per UI
        flit_ui = fb / spec.bits_per_symbol / spec.lanes
        fer = float(-np.expm1(-rate * (flit_ui + model.mean_span - 1)))
    t_flit = fb / payload_bps
    rtt = 2 * one_way_s + r.turnaround_s
    n_rt = math.ceil(rtt / t_flit) + 1
    eff = 1.0 / (1.0 + fer * n_rt) if fer < 1 else 0.0
    added = fer / (1 - fer) * (rtt + t_flit) if fer < 1 else float("inf")
    return fer, eff, added, 2.0 ** -r.crc_bits


def _delivered(spec, der, eyes, shape_der):
    ber = _post_fec(spec, der, eyes, shape_der)[0]
    return ber * 2.0 ** -spec.retry.crc_bits if spec.retry is not None else ber


def _required_der(spec: LinkSpec, eyes) -> float:
    """Detector error ratio at which the delivered BER equals the target: a bisection in
    log10 (to 0.01 decade) with the bursts' shape fixed, taken first at DER 1e-4, then
    again at the answer if that is more than half a decade away."""
    shape = 1e-4
    for _ in range(2):
        lo, hi = -30.0, math.log10(0.3)
        if _delivered(spec, 10**hi, eyes, shape) <= spec.target_ber:
            return 10**hi
        if _delivered(spec, 10**lo, eyes, shape) > spec.target_ber:
            return 10**lo
        while hi - lo > 1e-2:
            mid = (lo + hi) / 2
            if _delivered(spec, 10**mid, eyes, shape) <= spec.target_ber:
                lo = mid
            else:
                hi = mid
        if abs(lo - math.log10(shape)) < 0.5:
            break
        shape = min(10**lo, 1e-2)
    return 10**lo


# ----------------------------------------------------------------------------- roll-up
def evaluate_link(spec: LinkSpec, segs: tuple[Segment, ...] | None = None) -> LinkReport:
    """Roll a link up: errors, bandwidth, latency, energy (see the module docstring).

    ``segs``: the medium's :func:`segments` when already computed for this medium, SerDes,
    lane rate and modulation (FEC, framing, retry and path may differ): the eyes are then
    not recomputed.
    """
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"evaluate_link needs a LinkSpec, got {type(spec).__name__}")
    if segs is None:
        segs = segments(spec)
    else:
        segs = tuple(segs)
        if not segs or not all(isinstance(x, Segment) for x in segs):
            raise ConfigError("segs must be the Segments that phy.link.segments returns")
        if not all(np.isclose(x.baud_hz, spec.baud_hz) and x.tx.modulation == spec.modulation for x in segs):
            raise ConfigError("segs were computed for another baud rate or modulation than this LinkSpec's")
    return _report(spec, segs)


def _report(spec: LinkSpec, eyes: tuple[Segment, ...]) -> LinkReport:
    notes = []
    M = 2**spec.bits_per_symbol
    bpu = spec.bits_per_symbol
    der = float(min(0.5, sum(e.der for e in eyes)))
    pre_ber = float(min(0.5, der / bpu))  # Gray: one bit per level error, DFE bursts included
    if len(eyes) > 1:
        notes.append("segments' errors add; bursts take the shape of the worst segment's DFE")

    # bandwidth
    code = spec.fec
    line = spec.lanes * spec.lane_rate_bps
    fec_rate = code.k / code.n if code is not None else 1.0
    f_eff = spec.framing.efficiency(code.message_bits if code is not None else None)
    payload = line * fec_rate * f_eff

    # latency before retry
    baud = spec.baud_hz
    lat = {
        "serdes_tx": spec.serdes.tx_latency_ui / baud,
        "serdes_rx": spec.serdes.rx_latency_ui / baud,
    }
    if code is not None:
        fl = fec.latency(code, spec.lane_rate_bps, spec.lanes, spec.interleave, clock_hz=spec.fec_clock_hz)
        lat["fec_accumulation"] = fl.accumulation_s
        lat["fec_decode"] = fl.total_s - fl.accumulation_s
    elif spec.retry is not None:
        lat["flit_accumulation"] = _flit_bits(spec) / line
    lat["time_of_flight"] = float(sum(e.delay_s for e in eyes))
    if spec.optics is not None and spec.optics.module_latency_s:
        lat["optical_modules"] = 2 * spec.optics.module_latency_s
    for e in spec.path:
        lat[e.name] = lat.get(e.name, 0.0) + e.latency_s
    one_way = float(sum(lat.values()))

    # errors
    ber_fec, cer, flr, model = _post_fec(spec, der, eyes)
    fer = None
    retry_eff = 1.0
    post = ber_fec
    if spec.retry is not None:
        fer, retry_eff, added, undetected = _retry_terms(spec, der, cer, model, one_way, payload)
        post = ber_fec * undetected
        lat["retry_mean"] = added
    required = _required_der(spec, eyes)
    margin = 20 * math.log10(_q_of(der, M) / _q_of(required, M)) if der < 0.5 else -float("inf")

    # verdict
    reasons = []
    for e in eyes:
        if e.ser >= 1e-2:
            reasons.append(f"the eye of {e.name} is closed: symbol error ratio {e.ser:.3g} at the sampling point")
    if post > spec.target_ber:
        reasons.append(f"delivered BER {post:.3g} is above the target {spec.target_ber:.3g}"
                       f" (the detector error ratio {der:.3g} exceeds the {required:.3g} this "
                       f"{'FEC' if code is not None else 'link without FEC'} can take)")
    if spec.retry is not None and retry_eff < 0.5:
        reasons.append(f"retries waste more than half the bandwidth (efficiency {retry_eff:.3f})")
    passes = not reasons
    usable = payload * retry_eff if passes else 0.0

    # energy
    energy = {"serdes": spec.serdes.energy_j_per_bit}
    if spec.serdes.energy_j_per_bit == 0:
        notes.append("SerDes energy not given: counted as 0")
    if spec.optics is not None:
        energy["optical_modules"] = spec.optics.energy_j_per_bit
    for e in spec.path:
        energy[e.name] = energy.get(e.name, 0.0) + e.energy_j_per_bit
    e_bit = float(sum(energy.values()))
    nominal = payload  # energy is per payload bit, both directions
    heights_target = required
    segs = [
        SegmentReport(e.name, e.ser, e.der, e.dfe.tolist(), float(e.eye.main_v[e.eye.centre]),
                      e.eye.heights_v(heights_target).tolist(), heights_target, dict(e.eye.sigma_v),
                      e.equalisation, e.tx.to_dict(), e.rx.to_dict(), e.com_db, e.delay_s, list(e.notes),
                      e.cdr.to_dict(), [list(c) for c in e.candidates])
        for e in eyes
    ]
    for e in eyes:
        notes.extend(e.notes)
    return LinkReport(
        name=spec.name, passes=passes, reasons=reasons, lanes=spec.lanes, lane_rate_bps=spec.lane_rate_bps,
        baud_hz=baud, modulation=spec.modulation, fec=None if code is None else code.name,
        interleave=spec.interleave, precoding=spec.precoding, retry=spec.retry is not None, segments=segs,
        pre_fec_ber=pre_ber, pre_fec_der=der, post_fec_ber=float(post),
        codeword_error_ratio=None if cer is None else float(cer), frame_loss_ratio=None if flr is None else float(flr),
        flit_retry_ratio=fer, target_ber=spec.target_ber, required_der=float(required), margin_db=float(margin),
        rate_chain={"line_bps": line, "fec_rate": fec_rate, "framing_efficiency": f_eff, "payload_bps": payload,
                    "retry_efficiency": retry_eff, "usable_bps": usable},
        usable_bandwidth_bps=float(usable), latency_s=float(sum(lat.values())), latency_breakdown_s=lat,
        energy_j_per_bit=e_bit, energy_breakdown_j_per_bit=energy, power_w=e_bit * nominal * 2,
        notes=notes,
    )


# ----------------------------------------------------------------------------- search
@dataclass(frozen=True)
class LinkSearch:
    """Every point searched, the Pareto set among those that pass (lower latency, higher
    usable bandwidth, lower energy per bit), and the best: the lowest latency that passes
    (ties: more bandwidth, then less energy). Indices into ``points``."""

    points: tuple
    pareto: tuple
    best: int | None

    @property
    def best_report(self) -> LinkReport | None:
        return None if self.best is None else self.points[self.best]

    def to_dict(self) -> dict:
        return {"points": [p.to_dict() for p in self.points], "pareto": list(self.pareto), "best": self.best}

    def table(self) -> str:
        rows = [(f"{'':2}{'FEC':<18}{'I':>2} {'pre':>4} {'retry':>5} {'latency ns':>11} {'usable Gb/s':>12} "
                f"{'pJ/bit':>7} {'post BER':>9}  pass")]
        for i, p in enumerate(self.points):
            mark = "*" if i == self.best else ("p" if i in self.pareto else " ")
            rows.append(f"{mark:2}{(p.fec or 'none'):<18}{p.interleave:>2} {('y' if p.precoding else 'n'):>4} "
                        f"{('y' if p.retry else 'n'):>5} {p.latency_s * 1e9:>11.2f} "
                        f"{p.usable_bandwidth_bps / 1e9:>12.2f} {p.energy_j_per_bit * 1e12:>7.3g} "
                        f"{p.post_fec_ber:>9.2g}  {'yes' if p.passes else 'no'}")
        return "\n".join(rows)


def search_link(
    spec: LinkSpec,
    *,
    fec_codes=(None, "LL272", "KR4", "KP4"),
    interleaves=(1, 2),
    precoding=(False, True),
    retry=(None, Retry()),
    serdes=None,
) -> LinkSearch:
    """Search FEC, interleaving, precoding, retry and SerDes choices for ``spec``'s medium.

    Each SerDes option's eyes are computed once; the FEC choices reuse them. Interleaving
    is skipped without an FEC, precoding for NRZ.
    """
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"search_link needs a LinkSpec, got {type(spec).__name__}")
    options = [spec.serdes] if serdes is None else list(serdes)
    if not options:
        raise ConfigError("search_link needs at least one Serdes option")
    points = []
    for sd in options:
        base = spec.with_(serdes=sd)
        eyes = segments(base)
        for code in fec_codes:
            for il in interleaves if code is not None else (1,):
                for pre in precoding if spec.modulation == "pam4" else (False,):
                    for rt in retry:
                        s = base.with_(fec=code, interleave=il, precoding=pre, retry=rt)
                        points.append(_report(s, eyes))
    ok = [i for i, p in enumerate(points) if p.passes]

    def dominated(i, j):  # j dominates i
        a, b = points[i], points[j]
        ge = (b.latency_s <= a.latency_s and b.usable_bandwidth_bps >= a.usable_bandwidth_bps
              and b.energy_j_per_bit <= a.energy_j_per_bit)
        gt = (b.latency_s < a.latency_s or b.usable_bandwidth_bps > a.usable_bandwidth_bps
              or b.energy_j_per_bit < a.energy_j_per_bit)
        return ge and gt

    pareto = tuple(i for i in ok if not any(dominated(i, j) for j in ok if j != i))
    best = min(ok, key=lambda i: (points[i].latency_s, -points[i].usable_bandwidth_bps,
                                  points[i].energy_j_per_bit)) if ok else None
    return LinkSearch(tuple(points), pareto, best)
