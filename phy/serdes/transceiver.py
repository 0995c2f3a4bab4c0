"""A SerDes described as configuration: transmitter, receiver and clock recovery.

The configuration every engine reads (:mod:`phy.engines`), made concrete on a channel by
:func:`phy.serdes.prepare_link`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .equalisers import Ctle, Dfe, RxFfe, TxFfe
from .impairments import Impairments
from .signals import pam_levels

__all__ = ["PATTERNS", "Cdr", "Receiver", "Transmitter", "modulation_order", "symbol_rate_hz"]

PATTERNS = ("random", "prbs7", "prbs9", "prbs11", "prbs13", "prbs15", "prbs23", "prbs31", "prbs13q", "ssprq")


def modulation_order(modulation: str) -> int:
    """4 for ``"pam4"``, 2 for ``"nrz"``."""
    return pam_levels(modulation).size


def symbol_rate_hz(lane_rate_bps: float, modulation: str) -> float:
    """The baud rate of a lane: its line rate over the bits a symbol carries
    (``log2`` of :func:`modulation_order`: 2 for PAM4, 1 for NRZ)."""
    return lane_rate_bps / round(math.log2(modulation_order(modulation)))


def _check_ami(model, owner: str) -> None:
    if model is not None:
        from ..ami.model import AmiModel

        if not isinstance(model, AmiModel):
            raise ConfigError(f"{owner}.ami must be a phy.ami.AmiModel or None, got {type(model).__name__}")


def _ami_dict(model) -> dict:
    """``{"ami": ...}`` with a model, nothing without (the records of native parts unchanged)."""
    return {} if model is None else {"ami": model.to_dict()}


@dataclass(frozen=True)
class Transmitter:
    """The transmitter.

    Parameters
    ----------
    modulation : {"pam4", "nrz"}
    swing_v : float
        Peak amplitude of the outer levels (V): the levels are ``swing_v * (-1, -r/3, r/3,
        1)`` for PAM4 (``r`` the level mismatch) and ``swing_v * (-1, 1)`` for NRZ.
    level_mismatch : float
        Spacing of the inner PAM4 levels relative to ideal, in (0, 1] (802.3's R_LM;
        COM uses 0.95); see :func:`phy.signals.pam_levels`.
    ffe : TxFfe
    rise_time_s : float, optional
        20-80 % rise time of the Gaussian edge filter (93A-46).
    pattern : str
        ``"random"`` (uniform symbols), ``"prbs7"`` .. ``"prbs31"`` (the polynomials of
        :data:`phy.signals.PRBS_POLYNOMIALS`, Gray mapped for PAM4), ``"prbs13q"`` or ``"ssprq"`` (the 802.3 PAM4 test patterns).
    precoder : bool
        The 802.3 1/(1+D) mod 4 precoder (PAM4); the receiver postcodes.
    ami : phy.ami.AmiModel, optional
        A vendor's IBIS-AMI transmitter in place of ``ffe`` (which must then be the
        default, one tap): its ``AMI_Init`` shapes the pulse the statistical engines read,
        its ``AMI_GetWave`` (when it has one) the waveform the simulator sends
        (:mod:`phy.ami`). ``swing_v`` and the levels still set the stimulus. Edge jitter
        then moves the stimulus's edges, before the model (as IBIS-AMI tools apply a Tx
        model's jitter), where it moves a native FFE's output edges. The transmitter's
        noise is added after the model, as after a native FFE (in the symbol-by-symbol
        simulator, which runs a model without ``AMI_GetWave`` in its pulse, before it).
    """

    modulation: str = "pam4"
    swing_v: float = 0.5
    level_mismatch: float = 1.0
    ffe: TxFfe = field(default_factory=TxFfe)
    rise_time_s: float | None = None
    pattern: str = "random"
    precoder: bool = False
    ami: object = None

    def __post_init__(self):
        _check_ami(self.ami, "Transmitter")
        if self.ami is not None and self.ffe != TxFfe():
            raise ConfigError("Transmitter: give either an FFE or an AMI model (ami=), not both: the model is the "
                              "transmitter's equaliser")
        object.__setattr__(self, "modulation", str(self.modulation).lower())
        modulation_order(self.modulation)
        number(self.swing_v, "Transmitter.swing_v", positive=True)
        pam_levels(self.modulation, self.level_mismatch)
        if not isinstance(self.ffe, TxFfe):
            raise ConfigError(f"Transmitter.ffe must be a TxFfe, got {type(self.ffe).__name__}")
        if self.rise_time_s is not None:
            number(self.rise_time_s, "Transmitter.rise_time_s", positive=True)
        p = str(self.pattern).lower()
        if p not in PATTERNS:
            raise ConfigError(f"Transmitter.pattern must be one of {', '.join(PATTERNS)}, got {self.pattern!r}")
        object.__setattr__(self, "pattern", p)
        if p in ("prbs13q", "ssprq") and self.modulation != "pam4":
            raise ConfigError(f"{p} is a PAM4 pattern; use a PRBS for NRZ")
        if self.precoder and self.modulation != "pam4":
            raise ConfigError("the 1/(1+D) mod 4 precoder applies to PAM4 only")

    @property
    def order(self) -> int:
        return modulation_order(self.modulation)

    @property
    def levels(self) -> np.ndarray:
        """Normalised symbol amplitudes, lowest first."""
        return pam_levels(self.modulation, self.level_mismatch)

    def to_dict(self) -> dict:
        return {"modulation": self.modulation, "swing_v": self.swing_v, "level_mismatch": self.level_mismatch,
                "ffe": self.ffe.to_dict(), "rise_time_s": self.rise_time_s, "pattern": self.pattern,
                "precoder": self.precoder, **_ami_dict(self.ami)}


@dataclass(frozen=True)
class Receiver:
    """The receiver: analog front end (Butterworth filter, CTLE), then an ADC sampling
    once per UI, a Rx FFE and a DFE.

    Parameters
    ----------
    bandwidth_hz : float, optional
        -3 dB frequency of the Butterworth front-end filter (93A-20 uses 0.75 baud).
    filter_order : int
    ctle : Ctle, optional
    ffe : RxFfe
    dfe : Dfe
    impairments : Impairments, optional
        The ADC, the taps' resolution, the sampling clock's jitter and the CDR's wander
        (:mod:`phy.serdes.impairments`); None: an ideal receiver.
    mlsd : bool
        Detect with a 1-tap MLSD (a Viterbi detector on ``1 + b D``, ``b`` the first DFE
        tap; 802.3dj 178A.1.10's reference receiver) instead of slicing with the DFE's first
        tap: the link's detector error ratio is then the statistical eye's
        :meth:`~phy.StatEye.ser_mlsd` (error events, short bursts) rather than its
        :meth:`~phy.StatEye.ser_dfe`. The simulator still slices.
    ami : phy.ami.AmiModel, optional
        A vendor's IBIS-AMI receiver after the analog front end (``bandwidth_hz``, the
        package's filter) and in place of ``ctle``. Its ``AMI_Init`` shapes the pulse and
        the noise the statistical engines read; ``ffe`` and ``dfe`` then stand for the
        model's own feed-forward and decision-feedback equalisers there (IBIS-AMI's
        ``AMI_Init`` is linear and leaves the DFE to the tool). In the simulator a model
        with ``AMI_GetWave`` is the whole receiver: its output is the slicer's input, its
        clock times (when it gives them) the sampling instants (:mod:`phy.ami`).
    """

    bandwidth_hz: float | None = None
    filter_order: int = 4
    ctle: Ctle | None = None
    ffe: RxFfe = field(default_factory=RxFfe)
    dfe: Dfe = field(default_factory=Dfe)
    impairments: Impairments | None = None
    mlsd: bool = False
    ami: object = None

    def __post_init__(self):
        _check_ami(self.ami, "Receiver")
        if self.ami is not None and self.ctle is not None:
            raise ConfigError("Receiver: give either a CTLE or an AMI model (ami=), not both: the model is the "
                              "receiver's equaliser")
        if self.bandwidth_hz is not None:
            number(self.bandwidth_hz, "Receiver.bandwidth_hz", positive=True)
        integer(self.filter_order, "Receiver.filter_order", 1, 12)
        if self.ctle is not None and not isinstance(self.ctle, Ctle):
            raise ConfigError(f"Receiver.ctle must be a Ctle or None, got {type(self.ctle).__name__}")
        if not isinstance(self.ffe, RxFfe):
            raise ConfigError(f"Receiver.ffe must be an RxFfe, got {type(self.ffe).__name__}")
        if not isinstance(self.dfe, Dfe):
            raise ConfigError(f"Receiver.dfe must be a Dfe, got {type(self.dfe).__name__}")
        if not isinstance(self.mlsd, (bool, np.bool_)):
            raise ConfigError(f"Receiver.mlsd must be True or False, got {self.mlsd!r}")
        if self.impairments is not None and not isinstance(self.impairments, Impairments):
            raise ConfigError(f"Receiver.impairments must be an Impairments or None, got "
                              f"{type(self.impairments).__name__}")

    def with_(self, **changes) -> Receiver:
        from dataclasses import replace

        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {"bandwidth_hz": self.bandwidth_hz, "filter_order": self.filter_order,
                "ctle": None if self.ctle is None else self.ctle.to_dict(), "ffe": self.ffe.to_dict(),
                "dfe": self.dfe.to_dict(),
                "impairments": None if self.impairments is None else self.impairments.to_dict(),
                "mlsd": self.mlsd, **_ami_dict(self.ami)}


@dataclass(frozen=True)
class Cdr:
    """Clock recovery, or a fixed sampling phase.

    Parameters
    ----------
    kind : {"fixed", "mm", "mm-ffe", "bang-bang"}
        ``"mm"``: a Mueller-Muller type A phase detector (K. H. Mueller and M. Muller,
        "Timing recovery in digital synchronous data receivers", IEEE Trans. Commun. 24(5),
        1976) on the slicer's input, the Rx FFE output less the DFE's feedback, ``z``:
        ``(z_(n-1) a_n - z_n a_(n-1)) / h0`` with the decisions ``a`` the DFE feeds back. Its
        mean, ``E[a^2] (h(-1) - (h(1) - b_1)) / h0`` (``b_1`` the DFE's first tap, fixed where
        the loop starts), grows as the sampling moves later at the same rate as the
        detector's on the FFE output (``b_1`` is a constant): it locks where the first
        pre-cursor equals the first post-cursor the DFE leaves, the criterion of 802.3's COM
        cursor (93A-25/26, ``Cdr(phase="mm-dfe")``) with the taps where the loop starts.
        ``"mm-ffe"``: the same detector on the Rx FFE output, before the DFE,
        ``(y_(n-1) a_n - y_n a_(n-1)) / h0`` (mean ``h(-1) - h(1)``; it locks where the first
        pre- and post-cursor are equal; the simulator's ``"mm"`` before issue 35). With a
        large first post-cursor the DFE cancels, that point lies late, near the side where
        the fixed DFE no longer matches the pulse: its decisions fail in bursts there, and
        with wrong decisions the detector's mean changes sign (a false lock point a tenth of
        a UI beyond its lock point on the 802.3ck cable assembly CA_19p75dB), so a transient
        or jitter past it carries the loop a whole UI away (``benchmarks/bench_cdr.py``: it
        lost 6 of the 7 shared throughs with an Rx FFE, ``"mm"`` none). ``"bang-bang"``:
        an Alexander detector with an edge sample half a UI early, used on symmetric
        transitions (``a_n = -a_(n-1)``).
    phase : "peak", "mm", "mm-dfe" or float
        The fixed phase, and the CDR's starting phase: the pulse's peak, its
        Mueller-Mueller point (``h(-1) = h(1)``), the Mueller-Mueller point with the DFE's
        first tap taken out (``h(-1) = h(1) - b_1 h(0)``, where 802.3's COM places its
        cursor, 93A-25/26), or an offset from the peak in seconds
        (:func:`phy.serdes.pulse.sampling_index`).
    kp_ui, ki_ui : float
        Proportional and integral gains of the second-order loop, in UI of phase per unit
        of detector output (the integral path accumulates ``ki_ui`` per update). With a
        detector of slope ``K`` per UI of phase error (the Mueller-Mueller detector's is
        ``E[a^2] d(h(-1) - h(1))/d(phase) / h0``, about 0.75 for PAM4 on the
        ``chip_to_module`` channel) the loop's natural frequency is ``sqrt(ki_ui K)``
        radians per UI and its damping ``kp_ui sqrt(K / ki_ui) / 2``: with the defaults
        about baud / 1300 and 0.6. Jitter well below that frequency is tracked; jitter near
        it is not (the sampling error is as large as the jitter, up to 1.2 times it at
        baud / 1000), and on a narrow eye the decision errors it causes can carry the loop
        past the eye's crossing (a slip, reported as a loss of lock). To track faster
        jitter raise both gains: ``kp_ui x 2, ki_ui x 4`` doubles the frequency at the same
        damping.
    phase_limit_ui : float
        The loop's phase is held within +- this from its start.
    lock_bound_ui : float
        A loop whose phase moves further than this from its start (after the warm-up) has
        left the eye it locked to: the run reports the loss of lock (default half a UI, where
        the sampler reaches the eye's crossing).
    update_ui : int
        The loop updates its phase every UI, and the sampler takes it every ``update_ui``
        UIs, rounded to the simulation's fine grid (``UI / samples_per_ui``): a decimated
        digital loop driving a phase interpolator. Also the block length of the kernel.
    """

    kind: str = "fixed"
    phase: object = "peak"
    kp_ui: float = 2.0**-7
    ki_ui: float = 2.0**-15
    phase_limit_ui: float = 1.0
    lock_bound_ui: float = 0.5
    update_ui: int = 32

    def __post_init__(self):
        k = str(self.kind).lower().replace("_", "-")
        if k not in ("fixed", "mm", "mm-ffe", "bang-bang"):
            raise ConfigError(f"Cdr.kind must be 'fixed', 'mm', 'mm-ffe' or 'bang-bang', got {self.kind!r}")
        object.__setattr__(self, "kind", k)
        if not (self.phase in ("peak", "mm", "mm-dfe") or isinstance(self.phase, (int, float, np.floating))):
            raise ConfigError(f"Cdr.phase must be 'peak', 'mm', 'mm-dfe' or an offset in seconds, got {self.phase!r}")
        if not isinstance(self.phase, str):
            number(self.phase, "Cdr.phase")
        # stored as floats: an int gain (ki_ui=0) would compile the simulator's kernel again
        object.__setattr__(self, "kp_ui", number(self.kp_ui, "Cdr.kp_ui", nonneg=True, hi=0.5))
        object.__setattr__(self, "ki_ui", number(self.ki_ui, "Cdr.ki_ui", nonneg=True, hi=0.5))
        object.__setattr__(self, "phase_limit_ui", number(self.phase_limit_ui, "Cdr.phase_limit_ui", positive=True, hi=16))
        object.__setattr__(self, "lock_bound_ui", number(self.lock_bound_ui, "Cdr.lock_bound_ui", positive=True, hi=16))
        integer(self.update_ui, "Cdr.update_ui", 1, 4096)

    @property
    def code(self) -> int:
        return {"fixed": 0, "mm": 1, "bang-bang": 2, "mm-ffe": 3}[self.kind]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "phase": self.phase, "kp_ui": self.kp_ui, "ki_ui": self.ki_ui,
                "phase_limit_ui": self.phase_limit_ui, "lock_bound_ui": self.lock_bound_ui, "update_ui": self.update_ui}
