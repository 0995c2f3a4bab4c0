"""Effective return loss (ERL) of each port of a channel, IEEE 802.3 Annex 93A.5 as 802.3cd,
802.3ck and 802.3dj use it, computed the way the public reference COM code does: ``get_TDR``,
``get_StepR``, ``get_PulseR``, ``process_sxp`` and the parameter defaults of
``com_ieee8023_93a_450.m`` (MATLAB COM 4.50, mirrored as Omer-Sella/COM), with the values of
its configuration sheets (``ErlParams`` presets). The standard's own text and equation
numbers were not at hand: the weighting is the code's ``Grr`` 1 form (the ``.3cd`` release),
which the sheets select (no ``Gx``), and agrees with SignalIntegrity's ERL utility.

For each port, with the other port terminated in the TDR's reference ``2 Z_t``:

1. **Reflection** ``Gamma(f)``: Sdd11 (Sdd22 for port 2) with both ports renormalised to
   ``2 Z_t`` (differential; ``Z_t`` = 50 ohm in every sheet). No package and no die
   termination: the reference code's default (``TDR_W_TXPKG = 0``) measures the channel at
   its own ports.
2. **TDR**: the step response of ``Gamma`` through the Gaussian edge of 93A-46 with the
   TDR's transition time ``T_r`` (``TR_TDR``, 10 ps in every sheet), the Rx Butterworth at
   ``f_r f_b`` (93A-20) and the raised-cosine (Tukey) window from ``f_r f_b`` to ``f_b``,
   on a grid of ``samples_per_ui`` points per UI.
3. **PTDR**, the reflection of one UI-long symbol: ``PTDR(t) = TDR(t) - TDR(t - T_b)``.
4. **Gating and weighting** (``G_rr`` and ``G_loss`` as the ``.3cd``/``.3ck`` sheets run them): with
   ``x = (t - T_fx) / T_b``, ``w = 0`` before ``T_fx``; over the ``N_bx + 1`` UI after it
   ``w = rho_x (1 + rho_x) exp(-((x - N_bx - 1) / (N_bx + 1))^2) 10^(beta_x (t - t_k) / 20)``
   with ``t_k = T_fx + (N_bx + 1) T_b``; ``w = 1`` later, up to ``N`` UI after ``T_fx``.
   ``R_eff = PTDR w``.
5. **Distribution**: at the sampling phase whose UI-spaced samples of ``R_eff`` have the
   largest sum of squares (the sheets' ``ERL_FOM = 1``), the reflection ``sum_k a_k r_k`` of a
   random PAM-``L`` signal (``a_k`` uniform on the ``L`` levels of ``[-1, 1]``); ``R`` is minus
   its ``DER_0`` quantile and ``ERL = -20 log10 R``. The largest samples are convolved
   exactly (:func:`phy.engines.pmf.discrete_pmf`); those below 0.1 % of the largest are
   taken together as a Gaussian of the same variance.

For one reflection ``Gamma`` arriving after the weighting's ramp and an edge that does not
ring (no Butterworth or window), the samples of a phase add up to ``|Gamma|`` and, with at
most a handful of them non-negligible, ``R = |Gamma|``: ``ERL = -20 log10 |Gamma|``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import skrf as rf
from scipy.fft import next_fast_len

import channels
from channels.grid import resample_response
from channels.response import rx_butterworth, tx_rise_filter

from ..._validate import integer, number
from ...errors import ConfigError
from ..pmf import discrete_pmf, gauss_convolve, split_variance
from .params import ComParams

__all__ = ["ERL_PRESETS", "ErlParams", "ErlResult", "effective_return_loss", "preset_for_baud"]

_PRE_S = 500e-12  # record before the step (the reference code's TDR pre-delay)
_MAX_SAMPLES = 1 << 22
_MAX_BINS = 1 << 14
_MAX_TERMS = 2048
_R_FLOOR = 1e-15  # below this the reflection is numerical noise: ERL 300 dB

_SHEET_CK_KR = "config_com_ieee8023_93a=3ck_SA_KR_08_17_2022.xlsx"
_SHEET_CK_CR = "config_com_ieee8023_93a=3ck_SA_CR_CA_08_17_2022.xlsx"
_SHEET_200G = "config_com_ieee8023_93a=df_200G_PAM4_RCos_CAKR_11_2022.xlsx"


@dataclass(frozen=True)
class ErlParams:
    """An ERL parameter set (SI units).

    ``t_r_s`` is the TDR edge's 20-80 % transition time (93A-46); ``f_r`` the Rx Butterworth's
    -3 dB point over ``f_b`` (None: no Butterworth); ``tukey`` the raised-cosine window from
    ``f_r f_b`` to ``f_b`` (no window when ``f_r`` is None); ``z_t_ohm`` the single-ended
    source and termination of the TDR; ``n_ui`` the PTDR's length ``N`` after ``T_fx``;
    ``n_bx``, ``rho_x`` and ``beta_x_db_per_s`` the weighting (``beta_x`` in dB per second
    of echo delay: the tables' GHz is dB per ns); ``t_fx_s`` the gating delay of port 1 and
    port 2; ``limit_db`` the pass threshold (None: no verdict).
    """

    name: str
    baud_hz: float
    levels: int = 4
    der0: float = 1e-4
    t_r_s: float = 10e-12
    f_r: float | None = 0.75
    tukey: bool = True
    z_t_ohm: float = 50.0
    n_ui: int = 3500
    n_bx: int = 0
    rho_x: float = 0.618
    beta_x_db_per_s: float = 0.0
    t_fx_s: tuple = (0.0, 0.0)
    samples_per_ui: int = 32
    limit_db: float | None = None
    source: str = ""

    def __post_init__(self):
        number(self.baud_hz, "baud_hz", positive=True)
        integer(self.levels, "levels", 2, 16)
        number(self.der0, "der0", positive=True, hi=0.5)
        number(self.t_r_s, "t_r_s", nonneg=True)
        if self.f_r is not None:
            number(self.f_r, "f_r", positive=True, hi=1.0)
        number(self.z_t_ohm, "z_t_ohm", positive=True)
        integer(self.n_ui, "n_ui", 1, 100_000)
        integer(self.n_bx, "n_bx", 0, 10_000)
        number(self.rho_x, "rho_x", nonneg=True, hi=1.0)
        number(self.beta_x_db_per_s, "beta_x_db_per_s", nonneg=True)
        integer(self.samples_per_ui, "samples_per_ui", 2, 256)
        if self.limit_db is not None:
            number(self.limit_db, "limit_db")
        t_fx = self.t_fx_s
        if np.ndim(t_fx) == 0:
            t_fx = (t_fx, t_fx)
        if len(t_fx) != 2:
            raise ConfigError(f"t_fx_s needs one value or one per port (2), got {self.t_fx_s!r}")
        object.__setattr__(self, "t_fx_s", tuple(number(t, "t_fx_s", nonneg=True) for t in t_fx))

    # ------------------------------------------------------------------ presets
    @classmethod
    def ieee_802_3ck_kr(cls) -> ErlParams:
        """100GBASE-KR1 channel (802.3ck, 53.125 GBd PAM4), the reference code's 802.3ck KR sheet
        (``3ck_SA_KR_08_17_2022``): DER_0 1e-4, TR_TDR 10 ps, f_r 0.75 f_b with the Butterworth
        and the Tukey window, N 3500 UI, N_bx 21, rho_x 0.618, beta_x 0, T_fx 0 at both
        ports, Z_t 50 ohm; ERL pass threshold 9.7 dB."""
        return cls("802.3ck KR", 53.125e9, n_ui=3500, n_bx=21, limit_db=9.7,
                   source=f"reference COM code sheet {_SHEET_CK_KR}")

    @classmethod
    def ieee_802_3ck_cr(cls) -> ErlParams:
        """100GBASE-CR1 cable assembly (802.3ck, 53.125 GBd PAM4), the reference code's CR sheet
        (``3ck_SA_CR_CA_08_17_2022``): as KR but N 4500 UI, N_bx 0 and T_fx 0.3 ns at both
        ports (the test fixtures gated out); ERL pass threshold 8.25 dB."""
        return cls("802.3ck CR", 53.125e9, n_ui=4500, n_bx=0, t_fx_s=(0.3e-9, 0.3e-9), limit_db=8.25,
                   source=f"reference COM code sheet {_SHEET_CK_CR}")

    @classmethod
    def ieee_802_3dj_kr(cls) -> ErlParams:
        """200 Gb/s per lane KR (106.25 GBd PAM4) from the 200G exploratory sheet of the
        reference code (``df_200G_PAM4_RCos_CAKR_11_2022``, Nov 2022, before the 802.3dj draft:
        not the tables of Clauses 178/179, which were not available): DER_0 1e-4, TR_TDR
        10 ps, f_r 0.75 f_b with the Butterworth and the window, N 1000 UI, N_bx 24, rho_x
        0.618, beta_x 0, T_fx 0; ERL pass threshold 10 dB."""
        return cls("802.3dj KR", 106.25e9, n_ui=1000, n_bx=24, limit_db=10.0,
                   source=f"reference COM code exploratory 200G sheet {_SHEET_200G} (not the 802.3dj tables)")

    @classmethod
    def ieee_802_3dj_cr(cls) -> ErlParams:
        """200 Gb/s per lane CR: the same exploratory sheet (it serves cable assemblies and KR
        channels alike, ``CAKR``), so the values of :meth:`ieee_802_3dj_kr`. Assumed: T_fx 0
        (the sheet's); a cable assembly measured through fixtures would gate them out as the
        802.3ck CR sheet does (0.3 ns)."""
        return replace(cls.ieee_802_3dj_kr(), name="802.3dj CR")

    @classmethod
    def preset(cls, name: str) -> ErlParams:
        """A preset by name: ``802.3ck_kr``, ``802.3ck_cr``, ``802.3dj_kr`` or ``802.3dj_cr``."""
        if name not in ERL_PRESETS:
            raise ConfigError(f"unknown ERL preset {name!r}: one of {', '.join(ERL_PRESETS)}")
        return ERL_PRESETS[name]()

    @classmethod
    def from_com(cls, params: ComParams, **changes) -> ErlParams:
        """The ERL set that goes with a COM set: its baud rate, levels, ``DER_0``, ``f_r`` and
        ``R_0`` (as ``Z_t``), the rest from the KR preset of its family (802.3ck below
        80 GBd, the 200G sheet above), then ``changes``."""
        if not isinstance(params, ComParams):
            raise ConfigError(f"from_com needs a ComParams, got {type(params).__name__}")
        base = cls.ieee_802_3ck_kr() if params.baud_hz < 80e9 else cls.ieee_802_3dj_kr()
        out = replace(base, name=f"{params.name} (ERL)", baud_hz=params.baud_hz, levels=params.levels,
                      der0=params.der0, f_r=params.f_r, z_t_ohm=params.r_0,
                      source=f"{base.source}; baud, levels, DER_0, f_r and Z_t from COM set {params.name!r}")
        return replace(out, **changes) if changes else out

    def with_(self, **changes) -> ErlParams:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


ERL_PRESETS = {"802.3ck_kr": ErlParams.ieee_802_3ck_kr, "802.3ck_cr": ErlParams.ieee_802_3ck_cr,
               "802.3dj_kr": ErlParams.ieee_802_3dj_kr, "802.3dj_cr": ErlParams.ieee_802_3dj_cr}


def preset_for_baud(baud_hz: float, kind: str = "cr") -> ErlParams:
    """The 802.3ck preset below 80 GBd, the 802.3dj one above (``kind`` ``"cr"`` or ``"kr"``),
    moved to ``baud_hz`` (and so named) when it is not the preset's own rate."""
    b = number(baud_hz, "baud_hz", positive=True)
    if kind not in ("cr", "kr"):
        raise ConfigError(f"kind must be 'cr' or 'kr', got {kind!r}")
    p = ErlParams.preset(f"802.3{'ck' if b < 80e9 else 'dj'}_{kind}")
    if np.isclose(b, p.baud_hz, rtol=1e-9):
        return p
    return replace(p, name=f"{p.name} at {b / 1e9:g} GBd", baud_hz=b, source=f"{p.source}, moved to {b / 1e9:g} GBd")


@dataclass(frozen=True, eq=False)
class ErlResult:
    """ERL of one port and the traces behind it.

    ``port`` 1 (Sdd11) or 2 (Sdd22); ``erl_db`` ``-20 log10 R`` (300 dB at the numerical
    floor); ``reflection`` ``R``, minus the ``DER_0`` quantile of the reflected PAM signal (V
    per V of symbol); ``limit_db`` and ``passes`` the preset's threshold and ``erl_db >=
    limit_db`` (None without one). ``time_s`` runs from the step's launch (the middle of its
    edge); ``tdr``, ``ptdr`` and ``weight`` are the step's reflection coefficient, the one-UI
    pulse's reflection and ``w(t)``; ``phase_index`` the sampling phase (samples after each
    UI boundary of ``time_s``); ``sample_time_s`` and ``samples`` ``R_eff`` at that phase,
    one per UI from ``T_fx`` on; ``reference_ohm`` ``2 Z_t``; ``extrapolated_above_hz``
    where the data end when the filters needed more.
    """

    port: int
    erl_db: float
    reflection: float
    limit_db: float | None
    passes: bool | None
    time_s: np.ndarray
    tdr: np.ndarray
    ptdr: np.ndarray
    weight: np.ndarray
    phase_index: int
    sample_time_s: np.ndarray
    samples: np.ndarray
    reference_ohm: float
    extrapolated_above_hz: float | None
    params: dict
    notes: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def r_eff(self) -> np.ndarray:
        """The weighted reflection ``PTDR(t) w(t)``."""
        return self.ptdr * self.weight

    def impedance_ohm(self) -> np.ndarray:
        """The TDR as an impedance: ``2 Z_t (1 + rho) / (1 - rho)``."""
        rho = np.clip(self.tdr, -0.999999, 0.999999)
        return self.reference_ohm * (1 + rho) / (1 - rho)

    def to_dict(self, include_traces: bool = False) -> dict:
        keys = ("port", "erl_db", "reflection", "limit_db", "passes", "phase_index", "reference_ohm",
                "extrapolated_above_hz", "params", "notes", "seconds")
        d = {k: getattr(self, k) for k in keys}
        if include_traces:
            d.update({k: getattr(self, k).tolist() for k in ("time_s", "tdr", "ptdr", "weight", "sample_time_s",
                                                              "samples")})
        return d


def effective_return_loss(ch: channels.Channel, params: ErlParams | None = None, *, port="both",
                          require_nyquist: bool = True):
    """ERL of ``ch`` at port 1, port 2, or both (see the module docstring).

    Parameters
    ----------
    ch : channels.Channel
        A full four-port or a differential-only channel; aggressors are ignored.
    params : ErlParams
        Default :meth:`ErlParams.ieee_802_3ck_kr`.
    port : 1, 2 or ``"both"``
        ``"both"`` returns ``(port 1, port 2)``; a number returns that port's :class:`ErlResult`.
    require_nyquist : bool
        Refuse data that stop below ``f_b / 2``; above the data's band the reflection is
        extended as :mod:`channels.grid` extends a response (the result says from where).

    Returns
    -------
    ErlResult or tuple of (ErlResult, ErlResult)
        The port's result, or port 1's and port 2's with ``port="both"``.
    """
    t0 = time.perf_counter()
    if not isinstance(ch, channels.Channel):
        raise ConfigError(f"effective_return_loss needs a channels.Channel, got {type(ch).__name__}")
    p = ErlParams.ieee_802_3ck_kr() if params is None else params
    if not isinstance(p, ErlParams):
        raise ConfigError(f"params must be an ErlParams, got {type(p).__name__}")
    if isinstance(port, str) and port == "both":
        ports = (1, 2)
    elif isinstance(port, (int, np.integer)) and not isinstance(port, bool) and port in (1, 2):
        ports = (int(port),)
    else:
        raise ConfigError(f"port must be 1, 2 or 'both', got {port!r}")
    fb = p.baud_hz
    f_hi = ch.grid.source_f_max_hz if ch.grid is not None else float(ch.f[-1])
    if require_nyquist and f_hi < fb / 2 * (1 - 1e-9):
        raise ConfigError(f"{ch.name}: the data end at {f_hi / 1e9:.4g} GHz, below the Nyquist frequency "
                          f"{fb / 2e9:.4g} GHz of {p.name}; pass require_nyquist=False to extend them")
    gam = _reflections(ch, p)
    t, tdr, ptdr, span_s, extrap = _traces(ch, gam, p)
    out = []
    for k in ports:
        out.append(_one_port(k, t, tdr[:, k - 1], ptdr[:, k - 1], span_s, extrap, ch, p, t0))
    return tuple(out) if len(out) > 1 else out[0]


def _reflections(ch: channels.Channel, p: ErlParams) -> np.ndarray:
    """Sdd11 and Sdd22 ``(F, 2)`` with both ports renormalised to ``2 Z_t``."""
    net = ch.network
    s, z0 = net.s[:, :2, :2], net.z0[:, :2]
    zt = 2 * p.z_t_ohm
    if not np.allclose(z0, zt):
        dd = rf.Network(frequency=net.frequency, s=s, z0=z0)
        dd.renormalize(np.full(2, zt))
        s = dd.s
    return np.stack([s[:, 0, 0], s[:, 1, 1]], axis=1)


def _filters(f: np.ndarray, p: ErlParams) -> np.ndarray:
    """The TDR's Gaussian edge (93A-46), the Butterworth (93A-20) and the raised-cosine window."""
    fb = p.baud_hz
    h = tx_rise_filter(f, p.t_r_s).astype(complex)
    if p.f_r is not None:
        h = h * rx_butterworth(f, p.f_r * fb, 4)
        if p.tukey:
            fr = p.f_r * fb
            w = np.where(f < fr, 1.0, 0.5 * (1 + np.cos(np.pi * np.clip(f - fr, 0, fb - fr) / max(fb - fr, 1e-300))))
            h = h * np.where(f > fb, 0.0, w)
    return h


def _traces(ch: channels.Channel, gam: np.ndarray, p: ErlParams):
    """TDR and PTDR of both ports on the time grid: (t, tdr, ptdr, usable span, extrapolated above).
    The record covers the longer port's ``T_fx + N`` UI; its length also reaches the data's
    own time span ``1 / df`` when that costs at most four times more (a response still
    ringing past the record would otherwise wrap onto it)."""
    fb, M = p.baud_hz, p.samples_per_ui
    dt = 1.0 / (fb * M)
    n_pre = int(np.ceil(max(_PRE_S, 16 / fb) / dt))
    t_end = max(p.t_fx_s) + p.n_ui / fb
    n_need = n_pre + int(np.ceil(t_end / dt)) + 2 * M
    step = float(np.median(np.diff(ch.f)))
    span_s = 1.0 / step
    n = next_fast_len(max(n_need, min(int(span_s / dt), 4 * n_need)))
    if n > _MAX_SAMPLES:
        raise ConfigError(f"an ERL record of {n} samples (N = {p.n_ui} UI at {M} samples per UI) is too long; "
                          f"the most is {_MAX_SAMPLES}")
    f = np.fft.rfftfreq(n, dt)
    top = fb if (p.f_r is not None and p.tukey) else f[-1]
    use = f <= top * (1 + 1e-12)
    spec = np.zeros((f.size, 2), dtype=complex)
    spec[use] = resample_response(ch.f, gam, f[use], ch.delay_s, ch.loss_trend_db) * _filters(f[use], p)[:, None]
    h = np.roll(np.fft.irfft(spec, n, axis=0), n_pre, axis=0)[:n_need]
    tdr = np.cumsum(h, axis=0)
    ptdr = tdr.copy()
    ptdr[M:] -= tdr[:-M]
    t = (np.arange(n_need) - n_pre) * dt
    f_hi = ch.grid.source_f_max_hz if ch.grid is not None else float(ch.f[-1])
    above = f[use] > f_hi * (1 + 1e-9)  # the extension matters where the filters still pass it
    extrap = f_hi if above.any() and np.max(np.abs(_filters(f[use][above], p))) > 1e-3 else None
    return t, tdr, ptdr, span_s, extrap


def _weight(t: np.ndarray, p: ErlParams, t_fx: float) -> np.ndarray:
    """``w(t)``: 0 before ``T_fx``, the ``G_rr G_loss`` ramp over ``N_bx + 1`` UI, 1 after, 0 past ``N`` UI."""
    tb = 1.0 / p.baud_hz
    x = (t - t_fx) / tb
    k = p.n_bx + 1
    ramp = p.rho_x * (1 + p.rho_x) * np.exp(-((x - k) / k) ** 2) * 10 ** (p.beta_x_db_per_s * tb * (x - k) / 20)
    return np.where(x < 0, 0.0, np.where(x <= k, ramp, np.where(x <= p.n_ui, 1.0, 0.0)))


def _one_port(k, t, tdr, ptdr, span_s, extrap, ch, p: ErlParams, t0) -> ErlResult:
    M = p.samples_per_ui
    t_fx = p.t_fx_s[k - 1]
    w = _weight(t, p, t_fx)
    notes = ["93A.5 as the reference COM code computes it: no package, both ports at 2 Z_t; G_rr in the "
             "form the .3cd/.3ck sheets select; sampling phase of largest sum of squares (ERL_FOM = 1)"]
    if t_fx + p.n_ui / p.baud_hz > span_s:
        w = np.where(t > span_s, 0.0, w)
        notes.append(f"PTDR cut at {span_s * 1e9:.4g} ns, the data's time span 1/df, short of T_fx + N UI "
                     f"({(t_fx + p.n_ui / p.baud_hz) * 1e9:.4g} ns)")
    if extrap is not None:
        notes.append(f"reflection extended above {extrap / 1e9:.4g} GHz (the data's end), where the filters "
                     "still pass it, by the through's loss trend (channels.grid)")
    r = ptdr * w
    i0 = int(np.searchsorted(t, 0.0 - 1e-18))
    K = (r.size - i0) // M
    grid = r[i0 : i0 + K * M].reshape(K, M)
    ph = int(np.argmax(np.sum(grid**2, axis=0)))
    samples_all = grid[:, ph]
    times_all = t[i0 + ph :: M][:K]
    keep = times_all >= t_fx - 1e-18
    R = _reflection_at_der(samples_all[keep], p.levels, p.der0)
    erl = float(-20 * np.log10(max(R, _R_FLOOR)))
    passes = None if p.limit_db is None else bool(erl >= p.limit_db)
    return ErlResult(k, erl, float(R), p.limit_db, passes, t, tdr.copy(), ptdr.copy(), w, ph, times_all[keep],
                     samples_all[keep], 2 * p.z_t_ohm, extrap, p.to_dict(), notes, time.perf_counter() - t0)


def _reflection_at_der(values: np.ndarray, levels: int, der0: float) -> float:
    """Minus the ``der0`` quantile of ``sum_k a_k values_k``, ``a_k`` independent and uniform
    on ``levels`` equally spaced values in ``[-1, 1]``: the largest terms (at most
    ``_MAX_TERMS``, down to 0.1 % of the largest) exactly on a grid of at most ``_MAX_BINS``,
    the rest as a Gaussian of their variance (less what the grid's linear splits add)."""
    v = np.sort(np.abs(np.asarray(values, dtype=float)))[::-1]
    v = v[v > 0]
    if v.size == 0 or v[0] < _R_FLOOR:
        return 0.0
    lv = np.linspace(-1.0, 1.0, levels)
    n_big = min(_MAX_TERMS, int(np.sum(v >= 1e-3 * v[0])))
    big, small = v[:n_big], v[n_big:]
    sigma = float(np.sqrt(np.mean(lv**2) * np.sum(small**2)))
    support = float(big.sum()) + 8 * sigma
    nb = min(_MAX_BINS, max(1024, int(2 * support / (1e-4 * v[0]))))
    nb += 1 - nb % 2  # odd: 0 is the middle bin
    dv = 2 * support / (nb - 16)
    v0 = -(nb // 2) * dv
    pmf = discrete_pmf(np.ascontiguousarray(big[::-1]), lv, v0, dv, nb)  # smallest first: the grid widens late
    if sigma > 0:
        pmf = gauss_convolve(pmf, float(np.sqrt(max(sigma**2 / dv**2 - split_variance(big, lv, dv), 0.0))))
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    return float(-(v0 + dv * int(np.searchsorted(cdf, der0))))
