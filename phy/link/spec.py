"""A link, described: :class:`LinkSpec` (lanes, lane rate, modulation, the medium, the
SerDes, the FEC and how it is framed, retry, the path and the delivered-BER target)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import channels
import fec
from fec import DECODER_CLOCK_HZ

from .._validate import integer, number
from ..errors import ConfigError
from ..serdes import modulation_order, symbol_rate_hz
from .optics import OpticalClass
from .parts import DEFAULT_TARGET_BER, Framing, PathElement, Retry, Serdes

#: 802.3's COM pass threshold (dB): the "COM Pass threshold" of the 802.3ck CR/KR and the
#: 200G exploratory COM configuration sheets; "the entirety of the noise in actual receiver
#: implementations must fit in the 3 dB allocation set aside by the minimum COM" (A. Healey,
#: ieee802.org/3/100GEL/email/msg00174.html).
COM_THRESHOLD_DB = 3.0


@dataclass(frozen=True)
class LinkSpec:
    """A link: ``lanes`` lanes in each direction, each at ``lane_rate_bps``.

    Parameters
    ----------
    channel : channels.Channel or sequence of channels.Channel, optional
        The electrical medium (copper), ball to ball when ``serdes.packages``. A sequence
        is a retimed copper link (an active electrical cable): one segment per channel,
        each equalised and its errors added, a retimer at every joint whose receiver and
        transmitter are the link's SerDes class (give the retimers as ``path`` elements,
        :meth:`PathElement.aec_retimer`, for their latency and energy).
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
        The FEC decoder's clock (:func:`fec.latency`): 350 MHz by default, a public 400G
        RS(544,514) core's (:data:`fec.DECODER_CLOCK_HZ`).
    inner_fec : fec.HammingCode or "SFEC", optional
        An inner code under the outer ``fec`` over the segments it covers (802.3dj's
        200G-per-lane optics: :data:`fec.SFEC`, extended Hamming (128,120)): the optical
        span of a DSP pluggable (the module's DSP decodes it), the whole segment of a
        linear or copper link (the host decodes it). Its errors reach the outer code as
        whole inner-word failures (:func:`fec.hamming.outer_cer`).
    inner_decoder : {"chase", "hard"}
        Chase-2 on the bits' reliabilities, or SECDED on the hard decisions.
    required_margin_db : float, optional
        The margin (:attr:`LinkReport.margin_db`, the Q-factor's against the detector
        error ratio the target allows: for Gaussian noise the same ratio as COM's
        ``20 log10(A_s / A_ni)`` at that error ratio) a link needs to pass. Default
        (:meth:`margin_requirement`): 3 dB for a copper link with the reference
        receiver, 802.3's COM pass threshold, the allocation for a real receiver's noise
        and impairments; where the receiver's impairments are modelled
        (``Serdes(rx_impairments=...)``), what they cost against the reference receiver
        is taken from those 3 dB (never below 0), so modelling a penalty never loosens the
        verdict; 0 dB for an optical medium (the optical budget carries the module's
        penalties).
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
    fec_clock_hz: float = DECODER_CLOCK_HZ
    required_margin_db: float | None = None
    name: str = "link"
    inner_fec: object = None
    inner_decoder: str = "chase"

    def __post_init__(self):
        if (self.channel is None) == (self.optics is None):
            raise ConfigError("LinkSpec needs exactly one medium: channel= (electrical) or optics= (optical)")
        if isinstance(self.channel, (list, tuple)):
            chs = tuple(self.channel)
            if not chs or not all(isinstance(c, channels.Channel) for c in chs):
                raise ConfigError("LinkSpec.channel as a sequence needs one or more channels.Channel (the retimed "
                                  "segments), got " + (", ".join(type(c).__name__ for c in chs) if chs else "none"))
            object.__setattr__(self, "channel", chs[0] if len(chs) == 1 else chs)
        elif self.channel is not None and not isinstance(self.channel, channels.Channel):
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
        if self.required_margin_db is not None:
            number(self.required_margin_db, "LinkSpec.required_margin_db", lo=-20.0, hi=40.0)
        inner = self.inner_fec
        if isinstance(inner, str):
            if inner.upper() != "SFEC":
                raise ConfigError(f"unknown inner code {inner!r}; named: SFEC (802.3dj's Hamming(128,120)), or None")
            inner = fec.SFEC
        if inner is not None:
            if not isinstance(inner, fec.HammingCode):
                raise ConfigError(f"LinkSpec.inner_fec must be an fec.HammingCode, 'SFEC' or None, "
                                  f"got {type(inner).__name__}")
            if code is None:
                raise ConfigError("LinkSpec.inner_fec needs an outer fec (the inner code alone leaves errors)")
            if self.modulation != "pam4" or self.precoding:
                raise ConfigError("LinkSpec.inner_fec is modelled over Gray PAM4 without a precoder")
            if inner.k % code.m:
                raise ConfigError(f"{inner.name}'s {inner.k} message bits are not whole {code.m}-bit symbols "
                                  f"of {code.name}")
        if self.inner_decoder not in ("chase", "hard"):
            raise ConfigError(f"LinkSpec.inner_decoder must be 'chase' or 'hard', got {self.inner_decoder!r}")
        object.__setattr__(self, "inner_fec", inner)

    def margin_requirement(self, penalty_db: float | None = None) -> tuple[float, str]:
        """(the margin a link needs to pass, dB; the criterion in words). ``penalty_db``:
        what the modelled receiver impairments cost against the reference receiver (the
        roll-up measures it on the same equalisation)."""
        if self.required_margin_db is not None:
            return float(self.required_margin_db), f"margin >= {self.required_margin_db:g} dB (given)"
        if self.optics is not None:
            return 0.0, "margin >= 0 dB: the optical budget carries the module's penalties"
        com = (f"{COM_THRESHOLD_DB:g} dB, 802.3's COM pass threshold (802.3ck and 802.3dj COM configurations), "
               "the allocation a reference receiver leaves for a real receiver's noise and impairments")
        imp = self.serdes.receiver_impairments
        if imp is not None and not imp.ideal and penalty_db is not None:
            need = max(0.0, COM_THRESHOLD_DB - penalty_db)
            return need, (f"margin >= {need:.2f} dB: of the {com}, the modelled impairments ({imp.name}) spend "
                          f"{penalty_db:.2f} dB against the reference receiver on the same equalisation")
        return COM_THRESHOLD_DB, f"margin >= {com}"

    @property
    def electrical_segments(self) -> tuple:
        """The copper channels equalised one by one: ``(channel,)``, the retimed segments
        of a sequence, or ``()`` for an optical medium."""
        if self.channel is None:
            return ()
        return self.channel if isinstance(self.channel, tuple) else (self.channel,)

    @property
    def bits_per_symbol(self) -> int:
        return round(math.log2(modulation_order(self.modulation)))

    @property
    def baud_hz(self) -> float:
        return symbol_rate_hz(self.lane_rate_bps, self.modulation)

    def with_(self, **changes) -> LinkSpec:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "medium": (" + ".join(c.name for c in self.electrical_segments) if self.channel is not None
                       else self.optics.name),
            "optics": None if self.optics is None else self.optics.to_dict(), "lanes": self.lanes,
            "lane_rate_bps": self.lane_rate_bps, "modulation": self.modulation, "serdes": self.serdes.to_dict(),
            "fec": None if self.fec is None else self.fec.name, "interleave": self.interleave,
            "precoding": self.precoding, "retry": None if self.retry is None else self.retry.to_dict(),
            "framing": self.framing.to_dict(), "path": [e.to_dict() for e in self.path],
            "target_ber": self.target_ber, "fec_clock_hz": self.fec_clock_hz,
            "inner_fec": None if self.inner_fec is None else self.inner_fec.name, "inner_decoder": self.inner_decoder,
        }
