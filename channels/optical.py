"""Optical media: fibre, optical connectors and the intensity-modulated PAM link budget.

An optical lane is modelled as an intensity-modulation / direct-detection (IM/DD) path:
laser and driver, fibre, connectors, photodiode and transimpedance amplifier. This module
gives what the electrical stages need from it:

* **Loss and delay**: fibre attenuation over length, connector insertion loss, the time of
  flight ``n_g L / c``.
* **Bandwidth**: the small-signal transfer of optical power from the laser's drive to the
  photocurrent (:meth:`OpticalPath.transfer`), as a product of

  - the transmitter and receiver responses (4th-order Bessel-Thomson low-pass filters,
    -3 dB at their bandwidths; the 802.3 reference receiver shape);
  - multimode fibre's modal bandwidth ``B L0 / L`` as a Gaussian with
    ``|H| = 2^(-(f / B_L)^2)`` (the fibre's -3 dB *optical* bandwidth, where the
    modulated power halves);
  - chromatic dispersion ``D(lambda) = S0 / 4 (lambda - lambda0^4 / lambda^3)``
    (the fit ITU-T G.652 and TIA-492AAAD use): for a source of rms spectral width
    ``s`` a Gaussian of rms ``|D| L s``; for a narrow-line, chirp-free source the
    IM/DD power fading ``cos(pi lambda^2 D L f^2 / c)``.

  :meth:`OpticalPath.channel` wraps it as a unilateral two-port :class:`Channel`
  (``Sdd21 = H``, no reflections, no bulk delay: the fibre's microseconds of flight
  would need a frequency step far finer than any pulse response uses; the delay is
  in :attr:`OpticalPath.delay_s`), so electrical host channels cascade with it.
* **Noise and error ratio** (:meth:`OpticalPath.budget`): the received PAM-M levels
  ``P_k = P_0 + k OMA / (M-1)`` (``OMA`` the outer optical modulation amplitude,
  ``P_0 = OMA / (ER - 1)`` from the extinction ratio) become photocurrents ``R P_k``
  with, at each level, the variance (A^2, ``B_n`` the receiver's noise bandwidth):

  - thermal: ``i_n^2 B_n`` (the TIA's input-referred current density ``i_n``);
  - shot: ``2 q R P_k B_n``;
  - laser RIN, referred to the OMA as 802.3's ``RIN_xOMA``: ``10^(RIN/10) (R OMA / 2)^2 B_n``.
    802.3 (52.9.6, the RIN_xOMA method its PAM4 clauses 121/124/140 refer to) defines
    ``RIN_xOMA = 10 log10(P_N / (BW P_OMA))``: ``P_N`` the electrical noise power with the
    modulation off, ``P_OMA`` the electrical power of the square-wave-modulated signal,
    whose rms is half its peak-to-peak ``R OMA``; so the noise variance per hertz is
    ``10^(RIN/10) (R OMA)^2 / 4`` (Keysight's FlexDCA documents its IEEE RIN as about
    6 dB above its legacy OMA-squared normalisation: the same factor 4). Level-independent:
    the noise is measured with the laser at its average power;
  - multipath interference: each pair of reflectors ``i < j`` (reflectances ``r_i``,
    ``r_j``, one-way power transmission ``T_ij`` between them) sends a doubly reflected
    copy of relative power ``eps_ij = r_i r_j T_ij^2`` to the receiver; it beats with the
    signal at a random optical phase, ``I = I_s + 2 sqrt(I_s I_d) cos(phi)``, so with
    ``phi`` uniform the variance is ``2 I_s I_d``: ``2 R^2 P_k P_avg sum eps_ij``
    (co-polarised, the worst case; the copy carries other symbols, of mean power
    ``P_avg``).

  The symbol error ratio without ISI is the average over the ``2 (M - 1)`` level-to-
  threshold distances, ``SER = (1/M) sum_k [Q(d / sigma_k) + Q(d / sigma_(k+1))]`` with
  ``d = R OMA / (2 (M - 1))`` and thresholds midway. ISI from the bandwidth is left
  to the statistical eye (``phy``), which takes :meth:`OpticalBudget.noise_rms_a`
  scaled to its swing.

Figures in the presets carry their sources; see each class.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import skrf as rf
from scipy import signal, special

from _linkmodel._renamed import module_getattr, renamed_keyword, renamed_property

from . import _validate as check
from .channel import Channel
from ._optical_base import OpticalConnector, db_to_lin, dbm_to_w
from .errors import ChannelError

__all__ = [
    "C0",
    "Q_E",
    "Fibre",
    "OpticalBudget",
    "OpticalConnector",
    "OpticalPath",
    "OpticalReceiver",
    "OpticalTransmitter",
    "bessel_thomson",
]

C0 = 299_792_458.0  # m/s
Q_E = 1.602176634e-19  # C


def _qfunc(x):
    return 0.5 * special.erfc(np.asarray(x, dtype=float) / np.sqrt(2.0))


def bessel_thomson(f_hz, bandwidth_hz: float, order: int = 4) -> np.ndarray:
    """Bessel-Thomson low-pass of ``order`` with -3 dB at ``bandwidth_hz`` (complex, causal)."""
    bw = check.number(bandwidth_hz, "bandwidth_hz", positive=True)
    b, a = signal.bessel(int(order), 1.0, analog=True, norm="mag")
    _, h = signal.freqs(b, a, worN=np.asarray(f_hz, dtype=float) / bw)
    return h


# ----------------------------------------------------------------------------- parts
@dataclass(frozen=True)
class Fibre:
    """A fibre span.

    Parameters
    ----------
    length_m : float
    attenuation_db_per_km : float
        At the operating wavelength.
    zero_dispersion_wavelength_m, dispersion_slope_s_per_m3 : float
        ``lambda0`` and ``S0`` of the dispersion fit (``S0`` in s/m^3: 1 ps/(nm^2 km) is
        1e3 s/m^3).
    group_index : float
        Time of flight ``group_index / c`` per metre.
    modal_bandwidth_hz_m : float, optional
        Effective modal bandwidth-length product of multimode fibre (Hz m); None for
        single-mode fibre.
    name : str
    """

    length_m: float
    attenuation_db_per_km: float = 0.4
    zero_dispersion_wavelength_m: float = 1312e-9
    dispersion_slope_s_per_m3: float = 92.0
    group_index: float = 1.4677
    modal_bandwidth_hz_m: float | None = None
    name: str = "smf"

    def __post_init__(self):
        check.number(self.length_m, "Fibre.length_m", nonneg=True)
        check.number(self.attenuation_db_per_km, "Fibre.attenuation_db_per_km", nonneg=True)
        check.number(self.zero_dispersion_wavelength_m, "Fibre.zero_dispersion_wavelength_m", lo=0.5e-6, hi=2e-6)
        check.number(self.dispersion_slope_s_per_m3, "Fibre.dispersion_slope_s_per_m3", nonneg=True)
        check.number(self.group_index, "Fibre.group_index", lo=1.0, hi=2.0)
        if self.modal_bandwidth_hz_m is not None:
            check.number(self.modal_bandwidth_hz_m, "Fibre.modal_bandwidth_hz_m", positive=True)

    @classmethod
    def smf(cls, length_m: float, attenuation_db_per_km: float = 0.4) -> Fibre:
        """ITU-T G.652 single-mode fibre at 1310 nm: 0.4 dB/km (the cabled-fibre value
        802.3's O-band PMDs budget with), ``lambda0`` mid-range of 1300..1324 nm and the
        maximum slope 0.092 ps/(nm^2 km) of G.652; group index 1.4677 (Corning SMF-28
        data sheet, 1310 nm)."""
        return cls(length_m, attenuation_db_per_km, 1312e-9, 92.0, 1.4677, None, "smf")

    @classmethod
    def om4(cls, length_m: float) -> Fibre:
        """OM4 multimode fibre at 850 nm: 3.0 dB/km (the cabled value 802.3 budgets),
        effective modal bandwidth 4,700 MHz km (TIA-492AAAD), chromatic dispersion with
        ``lambda0`` 1316 nm and ``S0`` 0.10 ps/(nm^2 km) (about -100 ps/(nm km) at 850 nm);
        group index 1.483 (graded-index silica at 850 nm)."""
        return cls(length_m, 3.0, 1316e-9, 100.0, 1.483, 4700e6 * 1e3, "om4")

    @property
    def loss_db(self) -> float:
        return self.attenuation_db_per_km * self.length_m / 1e3

    @property
    def delay_s(self) -> float:
        """Time of flight (s)."""
        return self.group_index * self.length_m / C0

    def dispersion_s_per_m2(self, wavelength_m: float) -> float:
        """Chromatic dispersion ``D`` (s/m^2; 1 ps/(nm km) is 1e-6 s/m^2)."""
        lam = check.number(wavelength_m, "wavelength_m", lo=0.5e-6, hi=2e-6)
        l0 = self.zero_dispersion_wavelength_m
        return self.dispersion_slope_s_per_m3 / 4.0 * (lam - l0**4 / lam**3)

    def transfer(self, f_hz, wavelength_m: float, spectral_width_rms_m: float = 0.0) -> np.ndarray:
        """Small-signal power transfer of the span at baseband frequencies ``f_hz`` (real)."""
        f = np.asarray(f_hz, dtype=float)
        h = np.ones_like(f)
        L = self.length_m
        if self.modal_bandwidth_hz_m is not None and L > 0:
            b = self.modal_bandwidth_hz_m / L
            h = h * np.exp(-np.log(2.0) * (f / b) ** 2)
        D = self.dispersion_s_per_m2(wavelength_m)
        if spectral_width_rms_m > 0:
            s = abs(D) * L * spectral_width_rms_m
            h = h * np.exp(-0.5 * (2 * np.pi * f * s) ** 2)
        else:
            h = h * np.cos(np.pi * wavelength_m**2 * D * L * f**2 / C0)
        return h

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(loss_db=self.loss_db, delay_s=self.delay_s)
        return d


@dataclass(frozen=True)
class OpticalTransmitter:
    """Laser and driver.

    Parameters
    ----------
    oma_outer_dbm : float
        Outer optical modulation amplitude, ``P_(M-1) - P_0`` (dBm).
    extinction_ratio_db : float
        ``P_(M-1) / P_0`` (dB).
    rin_db_per_hz : float
        Relative intensity noise referred to the OMA (802.3's ``RIN_xOMA``, dB/Hz).
    wavelength_m : float
    bandwidth_hz : float, optional
        -3 dB bandwidth of the laser and driver (4th-order Bessel-Thomson); None: ideal.
    spectral_width_rms_m : float
        Rms spectral width; 0 for a narrow-line (single-mode) laser.
    reflectance_db : float, optional
        The transmitter's own reflectance, a reflector for multipath interference.
    rin_orl_db, isolation_db, coherence_collapse_db : float, optional
        The return loss the RIN is specified at (802.3's ``RIN_xOMA``, dB), the loss back into
        the cavity, the coherence-collapse feedback: see :mod:`channels.feedback`.
    """

    oma_outer_dbm: float = 1.0
    extinction_ratio_db: float = 3.5
    rin_db_per_hz: float = -136.0
    wavelength_m: float = 1311e-9
    bandwidth_hz: float | None = None
    spectral_width_rms_m: float = 0.0
    reflectance_db: float | None = -26.0
    rin_orl_db: float | None = None
    isolation_db: float | None = None
    coherence_collapse_db: float = -40.0

    def __post_init__(self):
        check.number(self.oma_outer_dbm, "OpticalTransmitter.oma_outer_dbm", lo=-40.0, hi=30.0)
        check.number(self.extinction_ratio_db, "OpticalTransmitter.extinction_ratio_db", positive=True)
        check.number(self.rin_db_per_hz, "OpticalTransmitter.rin_db_per_hz", hi=-60.0)
        check.number(self.wavelength_m, "OpticalTransmitter.wavelength_m", lo=0.5e-6, hi=2e-6)
        if self.bandwidth_hz is not None:
            check.number(self.bandwidth_hz, "OpticalTransmitter.bandwidth_hz", positive=True)
        check.number(self.spectral_width_rms_m, "OpticalTransmitter.spectral_width_rms_m", nonneg=True)
        if self.reflectance_db is not None:
            check.number(self.reflectance_db, "OpticalTransmitter.reflectance_db", hi=0.0)
        if self.rin_orl_db is not None:
            check.number(self.rin_orl_db, "OpticalTransmitter.rin_orl_db", lo=0.0, hi=80.0)
        if self.isolation_db is not None:
            check.number(self.isolation_db, "OpticalTransmitter.isolation_db", nonneg=True, hi=80.0)
        check.number(self.coherence_collapse_db, "OpticalTransmitter.coherence_collapse_db", lo=-80.0, hi=0.0)

    @property
    def oma_w(self) -> float:
        return dbm_to_w(self.oma_outer_dbm)

    def levels_w(self, levels: int = 4) -> np.ndarray:
        """Launched power of each level (W), lowest first."""
        er = db_to_lin(self.extinction_ratio_db)
        p0 = self.oma_w / (er - 1.0)
        return p0 + self.oma_w * np.arange(levels) / (levels - 1)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OpticalReceiver:
    """Photodiode and transimpedance amplifier.

    Parameters
    ----------
    responsivity_a_per_w : float
    noise_current_density_a_per_rthz : float
        The TIA's input-referred noise current density (A/sqrt(Hz)).
    bandwidth_hz : float
        -3 dB bandwidth (4th-order Bessel-Thomson), which is also the noise bandwidth's
        reference: ``B_n`` is the response's equivalent noise bandwidth.
    reflectance_db : float, optional
    """

    responsivity_a_per_w: float = 0.8
    noise_current_density_a_per_rthz: float = 18e-12
    bandwidth_hz: float = 53.125e9
    reflectance_db: float | None = -26.0

    def __post_init__(self):
        check.number(self.responsivity_a_per_w, "OpticalReceiver.responsivity_a_per_w", positive=True, hi=1.6)
        check.number(self.noise_current_density_a_per_rthz, "OpticalReceiver.noise_current_density_a_per_rthz",
                     nonneg=True, hi=1e-9)
        check.number(self.bandwidth_hz, "OpticalReceiver.bandwidth_hz", positive=True)
        if self.reflectance_db is not None:
            check.number(self.reflectance_db, "OpticalReceiver.reflectance_db", hi=0.0)

    @property
    def noise_bandwidth_hz(self) -> float:
        """Equivalent noise bandwidth of the 4th-order Bessel-Thomson response (Hz)."""
        f = np.linspace(0.0, 20.0, 40001) * self.bandwidth_hz
        h2 = np.abs(bessel_thomson(f, self.bandwidth_hz)) ** 2
        return float(np.sum((h2[1:] + h2[:-1]) / 2) * (f[1] - f[0]))

    def to_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------------- the path
@dataclass(frozen=True)
class OpticalBudget:
    """An optical path's power and noise budget at the receiver.

    Attributes
    ----------
    loss_db : float
        Fibre and connector insertion loss.
    received_oma_dbm : float
    levels_a : list
        Photocurrent of each level (A).
    noise_rms_a : list
        Total rms noise current at each level (A).
    terms_rms_a : dict
        ``thermal``, ``shot``, ``rin``, ``mpi``: rms at the top level (A).
    mpi_ratio_db : float
        ``10 log10(sum eps_ij)``: the doubly reflected power relative to the signal.
    snr_db : float
        ``20 log10(d / sigma)`` for the worst level, ``d`` half a level spacing.
    ser, ber : float
        PAM-M symbol error ratio without ISI; Gray-coded bit error ratio.
    equivalent_noise_rms_a : float
        The level-independent rms that gives the same SER (for the statistical eye).
    """

    levels: int
    loss_db: float
    received_oma_dbm: float
    levels_a: list
    noise_rms_a: list
    terms_rms_a: dict
    mpi_ratio_db: float
    noise_bandwidth_hz: float
    snr_db: float
    ser: float
    ber: float
    equivalent_noise_rms_a: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class OpticalPath:
    """Transmitter, fibre spans and connectors in order, receiver.

    ``elements`` is the sequence between the transmitter and the receiver, each a
    :class:`Fibre` or an :class:`OpticalConnector`, in the order the light meets them.
    """

    tx: OpticalTransmitter = field(default_factory=OpticalTransmitter)
    elements: tuple = ()
    rx: OpticalReceiver = field(default_factory=OpticalReceiver)
    name: str = "optical"

    def __post_init__(self):
        if not isinstance(self.tx, OpticalTransmitter):
            raise ChannelError(f"OpticalPath.tx must be an OpticalTransmitter, got {type(self.tx).__name__}")
        if not isinstance(self.rx, OpticalReceiver):
            raise ChannelError(f"OpticalPath.rx must be an OpticalReceiver, got {type(self.rx).__name__}")
        els = tuple(self.elements)
        for e in els:
            if not isinstance(e, (Fibre, OpticalConnector)):
                raise ChannelError(f"OpticalPath elements must be Fibre or OpticalConnector, got {type(e).__name__}")
        object.__setattr__(self, "elements", els)

    @classmethod
    def point_to_point(cls, fibre: Fibre | None = None, connectors: int = 2, tx: OpticalTransmitter | None = None,
                       rx: OpticalReceiver | None = None, connector: OpticalConnector | None = None,
                       name: str = "optical", *, fiber: Fibre | None = None) -> OpticalPath:
        """A span with ``connectors`` connectors split between its two ends (``fiber``: the
        deprecated spelling of ``fibre``, warns)."""
        fibre = renamed_keyword(fibre, fiber, "fiber", "fibre", "OpticalPath.point_to_point", ChannelError)
        if fibre is None:
            raise ChannelError("OpticalPath.point_to_point needs a fibre (a Fibre span)")
        n = check.number(connectors, "connectors", nonneg=True)
        if n != int(n):
            raise ChannelError(f"connectors must be a whole number, got {connectors!r}")
        c = connector or OpticalConnector()
        head = (c,) * (int(n) - int(n) // 2)
        tail = (c,) * (int(n) // 2)
        return cls(tx or OpticalTransmitter(), head + (fibre,) + tail, rx or OpticalReceiver(), name)

    @property
    def fibres(self) -> tuple:
        """The fibre spans of :attr:`elements`, in order."""
        return tuple(e for e in self.elements if isinstance(e, Fibre))

    #: Deprecated spelling of :attr:`fibres`.
    fibers = renamed_property("fibers", "fibres")

    @property
    def length_m(self) -> float:
        return float(sum(f.length_m for f in self.fibres))

    @property
    def loss_db(self) -> float:
        return float(sum(e.loss_db if isinstance(e, Fibre) else e.insertion_loss_db for e in self.elements))

    @property
    def delay_s(self) -> float:
        """Time of flight through the fibre (s)."""
        return float(sum(f.delay_s for f in self.fibres))

    def _reflectors(self) -> list[tuple[float, float]]:
        """(position as cumulative one-way loss in dB, reflectance as a power ratio)."""
        out = []
        loss = 0.0
        if self.tx.reflectance_db is not None:
            out.append((0.0, db_to_lin(self.tx.reflectance_db)))
        for e in self.elements:
            if isinstance(e, Fibre):
                loss += e.loss_db
            else:
                loss += e.insertion_loss_db / 2
                out.append((loss, db_to_lin(e.reflectance_db)))
                loss += e.insertion_loss_db / 2
        if self.rx.reflectance_db is not None:
            out.append((loss, db_to_lin(self.rx.reflectance_db)))
        return out

    def mpi_ratio(self) -> float:
        """``sum_(i<j) r_i r_j T_ij^2``: doubly reflected power relative to the signal."""
        refl = self._reflectors()
        eps = 0.0
        for i in range(len(refl)):
            for j in range(i + 1, len(refl)):
                t = db_to_lin(-(refl[j][0] - refl[i][0]))
                eps += refl[i][1] * refl[j][1] * t * t
        return eps

    def transfer(self, f_hz) -> np.ndarray:
        """Small-signal transfer from drive to photocurrent, normalised to 1 at DC (complex)."""
        f = check.frequencies(f_hz)
        h = np.ones(f.shape, dtype=complex)
        if self.tx.bandwidth_hz is not None:
            h *= bessel_thomson(f, self.tx.bandwidth_hz)
        for fib in self.fibres:
            h *= fib.transfer(f, self.tx.wavelength_m, self.tx.spectral_width_rms_m)
        h *= bessel_thomson(f, self.rx.bandwidth_hz)
        return h

    def channel(self, frequency=None) -> Channel:
        """The path as a unilateral differential two-port (``Sdd21`` = :meth:`transfer`,
        no reflections, no bulk delay) on ``frequency`` (Hz; default: the media builders'
        grid), to cascade with electrical channels."""
        from .media import frequency_grid

        freq = frequency_grid(frequency)
        s = np.zeros((freq.npoints, 2, 2), dtype=complex)
        s[:, 1, 0] = self.transfer(freq.f)
        return Channel.from_differential(rf.Network(frequency=freq, s=s, z0=100.0, name=self.name), name=self.name)

    def budget(self, levels: int = 4) -> OpticalBudget:
        """Power and noise at the receiver and the PAM-``levels`` error ratio without ISI."""
        M = int(levels)
        if M not in (2, 4, 8):
            raise ChannelError(f"levels must be 2, 4 or 8, got {levels!r}")
        t = db_to_lin(-self.loss_db)
        p = self.tx.levels_w(M) * t
        oma = self.tx.oma_w * t
        R = self.rx.responsivity_a_per_w
        bn = self.rx.noise_bandwidth_hz
        i = R * p
        eps = self.mpi_ratio()
        var_th = self.rx.noise_current_density_a_per_rthz**2 * bn
        var_shot = 2 * Q_E * i * bn
        from .feedback import laser_rin_db_per_hz

        var_rin = db_to_lin(laser_rin_db_per_hz(self)) * (R * oma / 2) ** 2 * bn  # P_OMA: a square wave's power
        var_mpi = 2 * eps * i * float(np.mean(i))
        var = var_th + var_shot + var_rin + var_mpi
        sig = np.sqrt(var)
        d = R * oma / (2 * (M - 1))
        errs = np.zeros(M)
        errs[1:] += _qfunc(d / sig[1:])
        errs[:-1] += _qfunc(d / sig[:-1])
        ser = float(errs.mean())
        per = 2 * (1 - 1 / M)
        if ser <= 0:
            eq = float(np.min(sig))
        else:
            eq = float(d / (np.sqrt(2.0) * special.erfcinv(2 * min(ser / per, 0.5))))
        top = {"thermal": float(np.sqrt(var_th)), "shot": float(np.sqrt(var_shot[-1])),
               "rin": float(np.sqrt(var_rin)), "mpi": float(np.sqrt(var_mpi[-1]))}
        return OpticalBudget(
            levels=M, loss_db=self.loss_db, received_oma_dbm=float(10 * np.log10(oma / 1e-3)),
            levels_a=i.tolist(), noise_rms_a=sig.tolist(), terms_rms_a=top,
            mpi_ratio_db=float(10 * np.log10(eps)) if eps > 0 else float("-inf"), noise_bandwidth_hz=bn,
            snr_db=float(20 * np.log10(d / sig.max())), ser=ser, ber=float(ser / np.log2(M)), equivalent_noise_rms_a=eq,
        )

    def to_dict(self) -> dict:
        return {"name": self.name, "tx": self.tx.to_dict(), "rx": self.rx.to_dict(),
                "elements": [dict(e.to_dict(), type=type(e).__name__) for e in self.elements],
                "loss_db": self.loss_db, "delay_s": self.delay_s, "length_m": self.length_m}


#: ``Fiber``: the deprecated spelling of :class:`Fibre` (warns; the same class).
__getattr__ = module_getattr(__name__, {"Fiber": "Fibre"})
