"""Integrated crosstalk noise (ICN) of a channel's aggressors, as IEEE 802.3 Annex 93A and
the IEEE COM tool compute it, with the parameters of the 802.3ck and 802.3dj COM sheets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from . import _validate as check
from .channel import Channel
from .errors import ChannelError

__all__ = ["ICN_802_3CK", "ICN_802_3DJ", "ICN_PRESETS", "IcnParameters", "IcnResult", "icn", "icn_preset"]


@dataclass(frozen=True)
class IcnParameters:
    """ICN parameters: aggressor amplitudes ``a_ft_v``, ``a_nt_v`` (V, peak), transition corners
    ``f_f``, ``f_n`` and receiver corner ``f_r`` (in units of ``baud_hz``), ``f_2_hz`` (Hz)."""

    baud_hz: float
    a_ft_v: float
    a_nt_v: float
    f_f: float
    f_n: float
    f_2_hz: float
    f_r: float = 0.75
    source: str = ""

    def kwargs(self) -> dict:
        return {k: getattr(self, k) for k in ("a_ft_v", "a_nt_v", "f_f", "f_n", "f_2_hz", "f_r")}

    def to_dict(self) -> dict:
        return asdict(self)


def _preset(baud: float, amp: float, rise_s: float, f2: float, source: str) -> IcnParameters:
    f_t = 0.2365 / (rise_s * baud)  # transition corner of a 20-80 % rise time T_t (93A-46), over f_b
    return IcnParameters(baud, amp, amp, f_t, f_t, f2, 0.75, source)


ICN_PRESETS = {
    "802.3ck_cr": _preset(53.125e9, 0.6, 7.5e-12, 40e9, (
        "IEEE 802.3ck COM sheet config_com_ieee8023_93a=3ck_SA_CR_CA_08_17_2022.xlsx: A_ft = A_nt = 0.6 V, "
        "f_f = f_n = 0.59357 f_b (T_t 7.5 ps), f_2 = 40 GHz, f_r = 0.75 f_b")),
    "802.3dj_200g": _preset(106.25e9, 0.45, 8e-12, 79.6875e9, (
        "200G exploratory COM sheet config_com_ieee8023_93a=df_200G_PAM4_RCos_CAKR_11_2022.xlsx: A_ft = A_nt "
        "= 0.45 V, f_f = f_n = 0.27824 f_b (T_t 8 ps), f_2 = 79.6875 GHz, f_r = 0.75 f_b")),
}


#: :func:`icn` keyword arguments of the presets (without ``baud_hz``): ``icn(ch, 106.25e9, **ICN_802_3DJ)``.
ICN_802_3CK = ICN_PRESETS["802.3ck_cr"].kwargs()
ICN_802_3DJ = ICN_PRESETS["802.3dj_200g"].kwargs()


@dataclass(frozen=True)
class IcnResult:
    """Integrated crosstalk noise (V, RMS): ``nx_v`` from MDNEXT, ``fx_v`` from MDFEXT,
    ``total_v = sqrt(nx_v^2 + fx_v^2)``. ``icr_db`` is ``20 log10(|Sdd21| / sqrt(sum |X|^2))``
    over all aggressors at ``baud_hz / 2`` (None without aggressors or outside the data);
    ``f_1_hz .. f_last_hz`` the summed points, ``delta_f_hz`` their step."""

    nx_v: float
    fx_v: float
    total_v: float
    n_next: int
    n_fext: int
    icr_db: float | None
    f_1_hz: float
    f_last_hz: float
    delta_f_hz: float
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _icn_band(f: np.ndarray, f1, f2: float, name: str) -> tuple[slice, float]:
    """COM's summed points: from the last at or below f_1 to the first at or above f_2."""
    if f2 > f[-1] * (1 + 1e-9):
        raise ChannelError(f"{name}: the data end at {f[-1] / 1e9:.6g} GHz, below f_2 = {f2 / 1e9:.6g} GHz; "
                           "extend them deliberately with .uniform() first")
    i1 = 0 if f1 is None else max(0, int(np.searchsorted(f, check.number(f1, "f_1_hz", nonneg=True)
                                                         * (1 + 1e-12), side="right")) - 1)
    i2 = int(np.searchsorted(f, f2 * (1 - 1e-12)))
    if i2 - i1 < 2:
        raise ChannelError(f"{name}: fewer than 3 points between f_1 and f_2 = {f2 / 1e9:.6g} GHz")
    steps = np.diff(f[i1:i2 + 1])
    df = float(steps.mean())
    if np.max(np.abs(steps - df)) > 1e-6 * df:
        raise ChannelError(f"{name}: ICN needs uniformly spaced points up to f_2 (steps from "
                           f"{steps.min() / 1e6:.6g} to {steps.max() / 1e6:.6g} MHz); use .resample() first")
    return slice(i1, i2 + 1), df


def icn(channel: Channel, baud_hz: float, *, a_ft_v: float, a_nt_v: float, f_f: float, f_n: float,
        f_2_hz: float, f_r: float = 0.75, f_1_hz: float | None = None) -> IcnResult:
    """Integrated crosstalk noise as 802.3 Annex 93A and the IEEE COM tool compute it.

    ``PWF(f) = sinc^2(f / f_b) [1 + (f / f_t)^4]^-1 [1 + (f / f_r)^8]^-1`` with ``f_t = f_f f_b``
    (FEXT) or ``f_n f_b`` (NEXT), the receiver corner ``f_r f_b``;
    ``sigma_fx = sqrt(2 Delta_f / f_2 * sum_f A_ft^2 PWF(f) |MDFEXT(f)|^2)``, ``|MDFEXT|^2`` the
    sum of the FEXT aggressors' ``|Sdd21|^2``; ``sigma_nx`` likewise with ``A_nt`` and MDNEXT
    (com_ieee8023_93a_450.m, eqs. 46/47 near its line 1757). The points summed run from the last
    at or below ``f_1_hz`` (default: the first point) to the first at or above ``f_2_hz``, and
    must be uniformly spaced; data stopping below ``f_2_hz`` are refused (extend them
    deliberately with :meth:`Channel.uniform`). Units: Hz, V.
    """
    if not isinstance(channel, Channel):
        raise ChannelError(f"icn needs a Channel, not {type(channel).__name__}")
    fb = check.number(baud_hz, "baud_hz", positive=True)
    amp = {"fext": check.number(a_ft_v, "a_ft_v", nonneg=True), "next": check.number(a_nt_v, "a_nt_v", nonneg=True)}
    ft = {"fext": check.number(f_f, "f_f", positive=True) * fb, "next": check.number(f_n, "f_n", positive=True) * fb}
    fr = check.number(f_r, "f_r", positive=True) * fb
    f2 = check.number(f_2_hz, "f_2_hz", positive=True)
    f = channel.f
    band, df = _icn_band(f, f_1_hz, f2, channel.name)
    fs = f[band]
    base = np.sinc(fs / fb) ** 2 / (1 + (fs / fr) ** 8)
    sigma, count, power = {}, {}, np.zeros(f.size)
    for kind in ("next", "fext"):
        aggs = [a for a in channel.aggressors if a.kind == kind]
        ps = sum((np.abs(a.sdd21) ** 2 for a in aggs), np.zeros(f.size))  # power sum (MDNEXT^2, MDFEXT^2)
        power += ps
        pwf = base / (1 + (fs / ft[kind]) ** 4)
        sigma[kind], count[kind] = float(np.sqrt(2 * df / f2 * amp[kind] ** 2 * np.sum(pwf * ps[band]))), len(aggs)
    icr = None
    if channel.aggressors and f[0] <= fb / 2 <= f[-1]:
        thru2, xt2 = np.interp(fb / 2, f, np.abs(channel.sdd21) ** 2), np.interp(fb / 2, f, power)
        icr = float(10 * np.log10(thru2 / xt2)) if xt2 > 0 and thru2 > 0 else None
    params = {"baud_hz": fb, "a_ft_v": amp["fext"], "a_nt_v": amp["next"], "f_f": ft["fext"] / fb,
              "f_n": ft["next"] / fb, "f_2_hz": f2, "f_r": fr / fb}
    return IcnResult(sigma["next"], sigma["fext"], float(np.hypot(sigma["next"], sigma["fext"])), count["next"],
                     count["fext"], icr, float(fs[0]), float(fs[-1]), df, params)


def icn_preset(channel: Channel, preset: str = "802.3dj_200g") -> IcnResult:
    """:func:`icn` with the parameters of :data:`ICN_PRESETS` (``"802.3ck_cr"``, ``"802.3dj_200g"``)."""
    if preset not in ICN_PRESETS:
        raise ChannelError(f"unknown ICN preset {preset!r}: expected one of {sorted(ICN_PRESETS)}")
    p = ICN_PRESETS[preset]
    return icn(channel, p.baud_hz, **p.kwargs())
