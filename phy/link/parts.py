"""The parts of a link specification: the host SerDes at each end, the framing over the
FEC, link-level retry, and the elements in the path (retimers, switch ports)."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

import numpy as np

from .._validate import integer, number
from ..engines import ComParams
from ..engines.com.params import CR_HOST_CLASSES
from ..errors import ConfigError
from ..serdes import Cdr, Dfe, Impairments, Jitter, Noise, Receiver, RxFfe, Transmitter

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
        """A mixed-signal retimer in an active electrical cable: 3 ns, a 112G PAM4
        mixed-signal retimer's (Point2 P1B121, vendor figure; "a few ns" against 15 to 20
        times that for DSP retimers, ../shared/REFERENCES.md). Its SerDes energy is counted
        from the segments it joins when the link is retimed copper (``LinkSpec(channel=
        (...))``: :mod:`phy.link.power`); ``energy_j_per_bit`` is anything beyond that."""
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
    """The link layer: a CRC detects a bad flit and the sender replays it (go-back-N), and
    credits keep the receiver's buffer from overflowing (:mod:`phy.link.retry`).

    Parameters
    ----------
    crc_bits : int
        A bad flit slips through with probability ``2^-crc_bits``.
    flit_bytes : int
        The retried unit when the framing has no flits.
    turnaround_s : float
        Processing added to the link's round trip before a replay starts (s).
    crc_check_s : float
        The receiver's CRC check before it delivers a flit (s): 2 ns, PCI-SIG's figure for
        PCIe 6.0's FEC and CRC together ("under 2 ns", ../shared/REFERENCES.md,
        secondary), taken as the CRC's alone.
    credit_buffer_bytes : int, optional
        The receive buffer credits are granted from. None: sized to the credit loop (the
        report gives the bytes that takes); smaller, the link is capped at
        ``buffer / loop``.
    """

    crc_bits: int = 32
    flit_bytes: int = 256
    turnaround_s: float = 0.0
    crc_check_s: float = 2e-9
    credit_buffer_bytes: int | None = None

    def __post_init__(self):
        integer(self.crc_bits, "Retry.crc_bits", 1, 128)
        integer(self.flit_bytes, "Retry.flit_bytes", 1)
        number(self.turnaround_s, "Retry.turnaround_s", nonneg=True)
        number(self.crc_check_s, "Retry.crc_check_s", nonneg=True)
        if self.credit_buffer_bytes is not None:
            integer(self.credit_buffer_bytes, "Retry.credit_buffer_bytes", 1)

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
    energy_j_per_bit : float, optional
        Transmitter plus receiver energy per line bit (J), a transceiver's, spent once per
        segment one way. None (default): by the reach class of each segment's loss at
        Nyquist, XSR to LR at 112G and 224G per lane (:data:`phy.link.power.SERDES_ENERGY_J_PER_BIT`,
        each figure's source in :data:`phy.link.power.SERDES_ENERGY_SOURCES`: published
        transceivers, 4.1 pJ/bit at 112G LR and 3 pJ/bit at 224G LR); the report's notes name
        the class and the source.
    cdr : Cdr, optional
        Where a fixed equalisation samples. Default: the better (fewer errors) of the
        Mueller-Muller point with the first DFE tap (``"mm-dfe"``, where COM puts its
        cursor) and the pulse's peak.
    rx_impairments : Impairments, optional
        A real receiver's ADC, tap resolution and sampling clock
        (:class:`phy.serdes.Impairments`, e.g. ``Impairments.adc_dsp_224g()``), applied
        to whatever receiver the equalisation uses. None: the reference receiver (COM's),
        whose real-receiver penalties the 3 dB margin requirement stands for.
    host_class : {"HL", "HN", "HH"}, optional
        A CR host at each end (a cable link's host): the 802.3dj CR host class of
        P802.3dj/D3.3 Table 179-23 (:func:`phy.engines.com.params.cr_host_line`; HL a cabled
        host, class A package with 8 mm of line 1 and 22 mm of host PCB; HN class B, 15 mm
        and 83 mm; HH class B, 45 mm and 74 mm) takes the place of the KR package, so the
        channel is the cable assembly between the hosts' connectors; and the proposal's
        receiver is the CR reference receiver of :meth:`ComParams.cr_receiver` (floating Rx
        FFE taps and MLSD at 106.25 GBd, floating DFE taps at 53.125 GBd). None: the KR package and
        receiver (:meth:`com_params`). :meth:`cr` makes one.
    """

    tx: Transmitter | None = None
    rx: Receiver | None = None
    com: ComParams | None = None
    noise: Noise | None = None
    jitter: Jitter | None = None
    packages: bool = True
    tx_latency_ui: float = 564.0
    rx_latency_ui: float = 513.5
    energy_j_per_bit: float | None = None
    name: str = "serdes"
    cdr: Cdr | None = None
    rx_impairments: Impairments | None = None
    host_class: str | None = None

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
        if self.rx_impairments is not None and not isinstance(self.rx_impairments, Impairments):
            raise ConfigError(f"Serdes.rx_impairments must be an Impairments, got {type(self.rx_impairments).__name__}")
        number(self.tx_latency_ui, "Serdes.tx_latency_ui", nonneg=True)
        number(self.rx_latency_ui, "Serdes.rx_latency_ui", nonneg=True)
        if self.energy_j_per_bit is not None:
            number(self.energy_j_per_bit, "Serdes.energy_j_per_bit", nonneg=True)
        if self.host_class is not None:
            if self.host_class not in CR_HOST_CLASSES:
                raise ConfigError(f"Serdes.host_class must be one of {', '.join(CR_HOST_CLASSES)} (802.3dj CR host "
                                  f"classes, Table 179-23) or None, got {self.host_class!r}")
            if not self.packages:
                raise ConfigError("Serdes.host_class puts the CR host's package at each end: it needs packages=True")

    @classmethod
    def preset(cls, baud_hz: float, modulation: str = "pam4") -> Serdes:
        """A fixed equalisation for fast sweeps (a file's ``link.equalisation = "preset"``):
        no Tx FFE, a Butterworth front end at 0.58 of the baud, a 16-tap MMSE Rx FFE (5
        pre-cursor taps) and one DFE tap: the structure of the 802.3dj KR reference receiver
        (an Rx FFE and a short DFE; COM's own front end there is at 0.55 of the baud).

        Parameters
        ----------
        baud_hz : float
            The lane's symbol rate (Hz): :func:`phy.serdes.symbol_rate_hz`.
        modulation : {"pam4", "nrz"}
            The lane's modulation; PAM4's levels carry 802.3's level mismatch R_LM = 0.95.

        Returns
        -------
        Serdes
            Named ``"preset"``.
        """
        return cls(tx=Transmitter(modulation, swing_v=0.413, level_mismatch=0.95 if modulation == "pam4" else 1.0),
                   rx=Receiver(bandwidth_hz=0.58 * baud_hz, ffe=RxFfe(5, 10), dfe=Dfe(1)), name="preset")

    @classmethod
    def cr(cls, host_class: str = "HN", **kw) -> Serdes:
        """A SerDes on a CR host (:attr:`host_class`, default HN, 802.3dj's nominal host:
        class B package, 15 mm of line 1 and 83 mm of host PCB) with the CR reference
        receiver; ``kw`` sets the other fields."""
        return cls(host_class=host_class, name=kw.pop("name", f"cr_{host_class}"), **kw)

    @property
    def receiver_impairments(self) -> Impairments | None:
        """The impairments the receiver is evaluated with: ``rx_impairments``, or a given
        receiver's own."""
        if self.rx_impairments is not None:
            return self.rx_impairments
        return None if self.rx is None else self.rx.impairments

    def com_params(self, baud_hz: float) -> ComParams:
        """The COM set the link proposes its equalisation with: ``com``, or 802.3ck KR at
        53.125 GBd and 802.3dj KR otherwise, with the one package the link cascades (their
        first test case) and the receiver the link's eye has: fixed DFE taps (no floating
        ones; the ADC is ``rx_impairments``'s) and, for 802.3dj, the 15 fixed Rx FFE taps
        re-ranking the FOM's best settings
        (a roll-up needs a proposal in well under a second) and the channel's 100 ohm at the
        die (R_0 = R_d = 50 ohm, not D3.3's 46.25), with the DFE's slicer rather than D3.3's
        MLSD (a ``com`` with ``mlsd`` gives the link's receiver the MLSD too:
        :meth:`phy.MarginResult.serdes`, ``Receiver(mlsd=True)``). The standard's search is
        ``phy.channel_margin(ch, ComParams.ieee_802_3dj_kr())``. With :attr:`host_class`, the
        CR host's package and host PCB and the CR reference receiver
        (:meth:`ComParams.cr_receiver`) with its floating taps and, at 106.25 GBd, its MLSD,
        the same shortcuts otherwise (re-ranking, no ADC, 50 ohm)."""
        if self.com is not None:
            return self.com if np.isclose(self.com.baud_hz, baud_hz) else self.com.with_(baud_hz=baud_hz)
        if self.host_class is not None:
            return _cr_proposal(float(baud_hz), self.host_class)
        if np.isclose(baud_hz, 53.125e9):
            return ComParams.ieee_802_3ck_kr().with_(package_cases=(), dfe_float_groups=0)
        p = ComParams.ieee_802_3dj_kr().with_(package_cases=(), rx_ffe_search="rerank", rx_ffe_float_groups=0,
                                              adc_bits=0, r_0=50.0, r_d=50.0, mlsd=False)
        return p if np.isclose(baud_hz, p.baud_hz) else p.with_(baud_hz=baud_hz)

    def impairments(self, baud_hz: float) -> tuple[Noise, Jitter]:
        """Noise and jitter: the given ones, or COM's for the baud, jitter as COM models it
        (:meth:`phy.Jitter.com`: ``sigma_RJ`` and ``A_DD`` on each symbol's pulse)."""
        p = self.com_params(baud_hz)
        # COM's transmitter noise: on the main cursor without an Rx FFE (93A-30), through
        # the whole path with one (178A-17)
        tx_model = "path" if p.rx_ffe_pre + p.rx_ffe_post else "cursor"
        snr = p.snr_tx_db
        if tx_model == "path":  # COM's SNR_TX is against a full-swing symbol (178A-21 has no sigma_X^2),
            levels = p.levels  # the eye's against the mean symbol power sigma_X^2
            snr += 10 * np.log10((levels**2 - 1) / (3 * (levels - 1) ** 2))
        noise = self.noise or Noise(tx_snr_db=snr, rx_noise_psd_v2_per_hz=p.eta0_v2_per_hz, tx_model=tx_model)
        jitter = self.jitter or Jitter.com(p.sigma_rj_ui, p.a_dd_ui, baud_hz)
        return noise, jitter

    def to_dict(self) -> dict:
        return {"name": self.name, "tx": None if self.tx is None else self.tx.to_dict(),
                "rx": None if self.rx is None else self.rx.to_dict(),
                "com": None if self.com is None else self.com.name, "packages": self.packages,
                "noise": None if self.noise is None else self.noise.to_dict(),
                "jitter": None if self.jitter is None else self.jitter.to_dict(),
                "tx_latency_ui": self.tx_latency_ui, "rx_latency_ui": self.rx_latency_ui,
                "energy_j_per_bit": self.energy_j_per_bit, "cdr": None if self.cdr is None else self.cdr.to_dict(),
                "rx_impairments": None if self.rx_impairments is None else self.rx_impairments.to_dict(),
                "host_class": self.host_class}


@functools.lru_cache(maxsize=8)
def _cr_proposal(baud_hz: float, host_class: str) -> ComParams:
    """:meth:`Serdes.com_params` for a CR host (made once per baud and class: a sweep asks at
    every length)."""
    p = ComParams.cr_receiver(baud_hz, host_class)
    if np.isclose(baud_hz, 53.125e9):
        return p
    return p.with_(rx_ffe_search="rerank", adc_bits=0, r_0=50.0, r_d=50.0)
