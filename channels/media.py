"""Physics builders: differential lines, cables, discontinuities and terminations.

Every builder returns a full four-port :class:`~channels.channel.Channel` built on
scikit-rf media, so sections cascade into a channel whose impedance mismatches
really reflect (ripple in the insertion loss, echoes in the pulse response).

The line model
--------------
A differential line carries two independent modes: differential (characteristic
impedance ``zdiff_ohm``) and common (``zcomm_ohm``). Each is a line with
frequency-dependent per-unit-length parameters (series ``Z' = R + j omega L``, shunt
``Y' = G + j omega C``), exact from DC up (its ABCD matrix, turned into S by scikit-rf),
assembled into a mixed-mode four-port and converted to single-ended with 50 ohm ports
(so 100 ohm differential and 25 ohm common references). Symmetric structures have no
mode conversion; :func:`skew` adds some. Lumped parts (AC caps, die capacitance, via
stubs) come from scikit-rf media.

* **Dielectric**: a causal Djordjevic-Sarkar (wideband Debye) permittivity through
  ``(dk, df)`` at ``f_ref_hz``, with poles from 10 kHz to 10 THz. The per-unit-length
  capacitance follows it, so ``G = omega C tan(delta)`` comes out of the model.
* **Conductor**: the internal impedance of one leg,
  ``Z_i(f) = R_dc sqrt(1 + j f / f_d) K(f)``: ``R_dc`` at DC, and above ``f_d`` the
  skin-effect asymptote ``(1 + j) k R_s(f) / p`` (``R_s = sqrt(pi f mu0 / sigma)``, ``p``
  the current-carrying perimeter, ``k`` a current-distribution factor), times the
  Hammerstad-Jensen roughness factor ``K = 1 + (2/pi) atan(1.4 (Delta/delta)^2)``.
  The differential mode sees ``2 Z_i``, the common mode ``Z_i / 2``.
* **Inductance and capacitance** are fixed by ``zdiff_ohm`` and the velocity
  ``c / sqrt(dk)`` at ``f_ref_hz``.

Calibration (figures from public sources; see each builder):

* Twinax: ``proximity_factor = 1.3`` makes 26 AWG foamed-PE twinax lose about
  7.1 dB/m at 53.125 GHz and 30 AWG about 10.2 dB/m, the figures of a cable vendor's
  published note (Astera Labs blog "The 1.2-Meter Challenge", medium confidence); at
  26.56 GHz 4.7 and 6.9 dB/m. Checked against cable assemblies
  (:func:`channels.assembly.cable_channel`, plugs included, tests/test_copper_reach.py):
  a 2 m 26 AWG assembly reads 12.0 dB at 26.56 GHz, within 802.3ck's cable assembly limit
  (19.75 dB, a maximum for its 2 m objective), as are the longest 100G-per-lane DACs NVIDIA
  ships (26 AWG to 3 m: 16.7 dB; 30 AWG to 1.5 m); 802.3ck's 19.75 dB reference assembly
  (``CA_19p75dB``, ../shared/channels) is a limit channel about 2.4 m long by its delay, and
  reads between our 26 AWG assembly of that length (13.6 dB) and 30 AWG's (18.9 dB), within
  10 % of the latter, from 13 to 27 GHz. No per-metre datasheet figure from a cable maker
  was found to check the 26 AWG figure more closely.
* Stripline: ``current_factor = 1.2`` (edge crowding and the return current in the
  planes) makes a 5 mil, Megtron-7-class HVLP stripline lose about 0.9 dB/in at
  26.56 GHz (published figures for second-generation low-Dk laminates are about
  0.85 dB/in; the 802.3ck orthogonal backplane files in ../shared/channels imply about 1 dB/in).
"""

from __future__ import annotations

import numpy as np
import skrf as rf

from .channel import Channel, cascade
from .mixed_mode import mixed_mode_to_se
from . import _validate as check
from .errors import ChannelError

__all__ = [
    "DEFAULT_F_MAX_HZ",
    "DEFAULT_DF_HZ",
    "frequency_grid",
    "diff_line",
    "stripline",
    "microstrip",
    "twinax",
    "section",
    "connector",
    "via",
    "package",
    "com_package",
    "ac_cap",
    "skew",
    "terminate",
    "awg_diameter_m",
    "cascade",
]

C0 = 299_792_458.0
MU0 = 4e-7 * np.pi
SIGMA_CU = 5.8e7  # S/m, annealed copper
DEFAULT_F_MAX_HZ = 120e9
DEFAULT_DF_HZ = 10e6
_DS_F1, _DS_F2 = 1e4, 1e13  # Djordjevic-Sarkar pole band (Hz)


# ----------------------------------------------------------------------------- helpers
def frequency_grid(frequency=None) -> rf.Frequency:
    """The frequency grid builders use: a :class:`skrf.Frequency`, an array of Hz, or None
    for the default ``0 .. 120 GHz`` in 10 MHz steps."""
    if frequency is None:
        n = int(round(DEFAULT_F_MAX_HZ / DEFAULT_DF_HZ))
        return rf.Frequency.from_f(np.arange(n + 1) * DEFAULT_DF_HZ, unit="hz")
    f = frequency.f if isinstance(frequency, rf.Frequency) else frequency
    f = check.frequencies(f, "frequency", increasing=True, min_points=2)
    return rf.Frequency.from_f(f, unit="hz")


def _djordjevic_sarkar(f: np.ndarray, dk: float, df: float, f_ref: float) -> np.ndarray:
    """Complex relative permittivity ``eps' - j eps''`` with ``eps'(f_ref) = dk`` and
    ``eps''/eps'(f_ref) = df`` (wideband Debye model, causal)."""
    w1, w2 = 2 * np.pi * _DS_F1, 2 * np.pi * _DS_F2
    span = np.log10(_DS_F2 / _DS_F1)

    def shape(freq):
        w = 2 * np.pi * np.asarray(freq, dtype=float)
        return np.log10((w2 + 1j * w) / (w1 + 1j * w)) / span

    k_ref = shape(f_ref)
    delta = -df * dk / k_ref.imag
    eps_inf = dk - delta * k_ref.real
    return eps_inf + delta * shape(f)


def _permittivity(f: np.ndarray, dk: float, df: float, f_ref: float) -> np.ndarray:
    """Djordjevic-Sarkar permittivity, or a constant ``dk`` for a lossless dielectric."""
    return _djordjevic_sarkar(f, dk, df, f_ref) if df > 0 else np.full(np.shape(f), dk, dtype=complex)


def _hammerstad(f: np.ndarray, roughness_rms_m: float, sigma: float) -> np.ndarray:
    if roughness_rms_m <= 0:
        return np.ones_like(f)
    with np.errstate(divide="ignore"):
        skin = np.where(f > 0, 1.0 / np.sqrt(np.pi * np.maximum(f, 1e-300) * MU0 * sigma), np.inf)
    return 1.0 + (2.0 / np.pi) * np.arctan(1.4 * (roughness_rms_m / skin) ** 2)


def _internal_impedance(
    f: np.ndarray, r_dc: float, perimeter_m: float, factor: float, roughness_rms_m: float, sigma: float
) -> np.ndarray:
    """Internal impedance of one conductor per metre (ohm/m), DC to skin effect."""
    # high-frequency asymptote (1 + j) * factor * R_s / p with R_s = sqrt(pi f mu0 / sigma)
    # equals R_dc * sqrt(j f / f_d) for f_d below:
    f_d = r_dc**2 * perimeter_m**2 * sigma / (2 * np.pi * MU0 * factor**2)
    return r_dc * np.sqrt(1 + 1j * f / f_d) * _hammerstad(f, roughness_rms_m, sigma)


def _mode_line(
    freq: rf.Frequency,
    length_m: float,
    z_mode: float,
    eps: np.ndarray,
    dk_ref: float,
    z_series: np.ndarray,
    z_port: float,
) -> rf.Network:
    """One mode as a two-port line of characteristic impedance ``z_mode`` (at f_ref).

    The line's ABCD matrix is written without its characteristic impedance,
    ``A = D = cosh(g l)``, ``B = Z' l sinhc(g l)``, ``C = Y' l sinhc(g l)`` with
    ``g = sqrt(Z' Y')``, so it stays exact at DC (where ``Z0 = sqrt(R/G)`` is infinite:
    the line is then just its series resistance); scikit-rf's ``a2s`` turns it into S.
    """
    f = freq.f
    w = 2 * np.pi * f
    l_ext = z_mode * np.sqrt(dk_ref) / C0
    c_ref = np.sqrt(dk_ref) / (C0 * z_mode)
    zp = 1j * w * l_ext + z_series  # series impedance per metre
    yp = 1j * w * c_ref * eps / dk_ref  # shunt admittance per metre (includes G)
    gl = np.sqrt(zp * yp) * length_m
    small = np.abs(gl) < 1e-6
    sinhc = np.where(small, 1 + gl * gl / 6, np.sinh(np.where(small, 1.0, gl)) / np.where(small, 1.0, gl))
    abcd = np.empty((f.size, 2, 2), dtype=complex)
    abcd[:, 0, 0] = abcd[:, 1, 1] = np.cosh(gl)
    abcd[:, 0, 1] = zp * length_m * sinhc
    abcd[:, 1, 0] = yp * length_m * sinhc
    return rf.Network(frequency=freq, s=rf.network.a2s(abcd, z_port), z0=z_port)


def _from_modes(dd: rf.Network, cc: rf.Network, name: str) -> Channel:
    """Assemble a symmetric mixed-mode four-port ``[d1, d2, c1, c2]`` into a Channel."""
    nf = dd.f.size
    s = np.zeros((nf, 4, 4), dtype=complex)
    s[:, 0:2, 0:2] = dd.s
    s[:, 2:4, 2:4] = cc.s
    z0 = np.array([100.0, 100.0, 25.0, 25.0])
    mm = rf.Network(frequency=dd.frequency, s=s, z0=z0, name=name)
    return Channel(mixed_mode_to_se(mm), name=name)


def _from_legs(p_leg: rf.Network, n_leg: rf.Network, name: str) -> Channel:
    """Two uncoupled single-ended two-ports (P leg, N leg) as a four-port Channel."""
    nf = p_leg.f.size
    s = np.zeros((nf, 4, 4), dtype=complex)
    for leg, (a, b) in ((p_leg, (0, 2)), (n_leg, (1, 3))):
        s[:, a, a], s[:, a, b] = leg.s[:, 0, 0], leg.s[:, 0, 1]
        s[:, b, a], s[:, b, b] = leg.s[:, 1, 0], leg.s[:, 1, 1]
    se = rf.Network(frequency=p_leg.frequency, s=s, z0=50.0, name=name)
    return Channel(se, name=name)


def awg_diameter_m(awg: float) -> float:
    """Solid-wire diameter (m) of an AWG gauge: ``0.127 mm * 92^((36 - n)/39)``."""
    awg = check.number(awg, "awg", lo=0, hi=46)
    return 0.127e-3 * 92.0 ** ((36.0 - awg) / 39.0)


# ----------------------------------------------------------------------------- lines
def diff_line(
    length_m: float,
    zdiff_ohm: float = 100.0,
    *,
    dk: float = 3.5,
    df: float = 0.002,
    f_ref_hz: float = 10e9,
    zcomm_ohm: float | None = None,
    r_dc_ohm_per_m: float = 0.0,
    perimeter_m: float = 1.0,
    current_factor: float = 1.0,
    roughness_rms_m: float = 0.0,
    conductivity_s_per_m: float = SIGMA_CU,
    permittivity: np.ndarray | None = None,
    frequency=None,
    name: str = "line",
) -> Channel:
    """A uniform differential transmission line (the model every line builder uses).

    Parameters
    ----------
    length_m : float
        Physical length (m), >= 0.
    zdiff_ohm : float
        Differential characteristic impedance at ``f_ref_hz`` (ohm).
    dk, df : float
        Relative permittivity and loss tangent at ``f_ref_hz``.
    f_ref_hz : float
        Frequency at which ``dk``, ``df`` and ``zdiff_ohm`` are specified (Hz).
    zcomm_ohm : float, optional
        Common-mode impedance (ohm); default ``zdiff_ohm / 4 * 1.2`` (a loosely coupled
        pair: even-mode impedance 20 % above odd-mode).
    r_dc_ohm_per_m : float
        DC resistance of one leg (ohm/m); 0 gives a conductor-loss-free line.
    perimeter_m, current_factor, roughness_rms_m, conductivity_s_per_m : float
        Skin-effect asymptote ``current_factor * R_s / perimeter`` per leg, the RMS
        roughness (Hammerstad), the conductivity (S/m).
    permittivity : ndarray, optional
        Effective complex permittivity per frequency (overrides the Djordjevic-Sarkar model).
    frequency : skrf.Frequency or array of Hz, optional
        Grid (default 0 to 120 GHz in 10 MHz steps).
    """
    length_m = check.number(length_m, "length_m", nonneg=True)
    zdiff_ohm = check.number(zdiff_ohm, "zdiff_ohm", positive=True)
    zc = check.number(zcomm_ohm, "zcomm_ohm", positive=True) if zcomm_ohm is not None else 0.3 * zdiff_ohm
    dk = check.number(dk, "dk", lo=1.0)
    df = check.number(df, "df", nonneg=True, hi=0.5)
    f_ref_hz = check.number(f_ref_hz, "f_ref_hz", positive=True)
    r_dc = check.number(r_dc_ohm_per_m, "r_dc_ohm_per_m", nonneg=True)
    perimeter_m = check.number(perimeter_m, "perimeter_m", positive=True)
    current_factor = check.number(current_factor, "current_factor", positive=True)
    roughness_rms_m = check.number(roughness_rms_m, "roughness_rms_m", nonneg=True)
    sigma = check.number(conductivity_s_per_m, "conductivity_s_per_m", positive=True)
    freq = frequency_grid(frequency)
    f = freq.f
    if permittivity is not None:
        eps = np.asarray(permittivity, dtype=complex)
        if eps.shape != f.shape or not np.all(np.isfinite(eps)):
            raise ChannelError("permittivity must be a finite complex array, one value per frequency")
        dk_ref = float(np.interp(f_ref_hz, f, eps.real))
    else:
        eps = _permittivity(f, dk, df, f_ref_hz)
        dk_ref = dk
    if r_dc > 0:
        zi = _internal_impedance(f, r_dc, perimeter_m, current_factor, roughness_rms_m, sigma)
    else:
        zi = np.zeros(f.shape, dtype=complex)
    dd = _mode_line(freq, length_m, zdiff_ohm, eps, dk_ref, 2.0 * zi, 100.0)
    cc = _mode_line(freq, length_m, zc, eps, dk_ref, 0.5 * zi, 25.0)
    return _from_modes(dd, cc, name)


def stripline(
    length_m: float,
    zdiff_ohm: float = 100.0,
    *,
    dk: float = 3.4,
    df: float = 0.002,
    f_ref_hz: float = 10e9,
    trace_width_m: float = 127e-6,
    trace_thickness_m: float = 17.5e-6,
    roughness_rms_m: float = 0.4e-6,
    current_factor: float = 1.2,
    conductivity_s_per_m: float = SIGMA_CU,
    zcomm_ohm: float | None = None,
    frequency=None,
    name: str = "stripline",
) -> Channel:
    """A differential PCB stripline.

    Defaults: a 5 mil (127 um) half-ounce trace in a Megtron-7-class laminate
    (Dk 3.4, Df 0.002 near 10 GHz, per Panasonic's published R-5785 values) with HVLP
    copper (0.4 um RMS). Current flows on both faces of the strip: perimeter ``2 w``.
    """
    w = check.number(trace_width_m, "trace_width_m", positive=True)
    t = check.number(trace_thickness_m, "trace_thickness_m", positive=True)
    sigma = check.number(conductivity_s_per_m, "conductivity_s_per_m", positive=True)
    return diff_line(
        length_m, zdiff_ohm, dk=dk, df=df, f_ref_hz=f_ref_hz, zcomm_ohm=zcomm_ohm,
        r_dc_ohm_per_m=1.0 / (sigma * w * t), perimeter_m=2 * w, current_factor=current_factor,
        roughness_rms_m=roughness_rms_m, conductivity_s_per_m=sigma, frequency=frequency, name=name,
    )


def microstrip(
    length_m: float,
    zdiff_ohm: float = 100.0,
    *,
    dk: float = 3.4,
    df: float = 0.002,
    f_ref_hz: float = 10e9,
    trace_width_m: float = 127e-6,
    height_m: float = 100e-6,
    trace_thickness_m: float = 35e-6,
    roughness_rms_m: float = 0.4e-6,
    current_factor: float = 1.0,
    conductivity_s_per_m: float = SIGMA_CU,
    zcomm_ohm: float | None = None,
    frequency=None,
    name: str = "microstrip",
) -> Channel:
    """A differential microstrip (outer-layer trace over a plane).

    The field is partly in air: the quasi-static Hammerstad-Jensen filling factor
    ``q`` from ``w/h`` gives ``eps_eff(f) = 1 + q (eps(f) - 1)``, which lowers both the
    permittivity and the dielectric loss. Current flows mainly on the face toward
    the plane: perimeter ``w``.
    """
    w = check.number(trace_width_m, "trace_width_m", positive=True)
    h = check.number(height_m, "height_m", positive=True)
    t = check.number(trace_thickness_m, "trace_thickness_m", positive=True)
    dk = check.number(dk, "dk", lo=1.0)
    df = check.number(df, "df", nonneg=True, hi=0.5)
    sigma = check.number(conductivity_s_per_m, "conductivity_s_per_m", positive=True)
    f_ref_hz = check.number(f_ref_hz, "f_ref_hz", positive=True)
    freq = frequency_grid(frequency)
    eps_eff_static = (dk + 1) / 2 + (dk - 1) / 2 / np.sqrt(1 + 12 * h / w)
    q = (eps_eff_static - 1) / (dk - 1) if dk > 1 else 1.0
    eps = _permittivity(freq.f, dk, df, f_ref_hz)
    return diff_line(
        length_m, zdiff_ohm, dk=dk, df=df, f_ref_hz=f_ref_hz, zcomm_ohm=zcomm_ohm,
        r_dc_ohm_per_m=1.0 / (sigma * w * t), perimeter_m=w, current_factor=current_factor,
        roughness_rms_m=roughness_rms_m, conductivity_s_per_m=sigma,
        permittivity=1 + q * (eps - 1), frequency=freq, name=name,
    )


def twinax(
    length_m: float,
    awg: float = 26,
    zdiff_ohm: float = 100.0,
    *,
    dk: float = 1.5,
    df: float = 3e-4,
    f_ref_hz: float = 10e9,
    proximity_factor: float = 1.3,
    conductivity_s_per_m: float = SIGMA_CU,
    roughness_rms_m: float = 0.0,
    zcomm_ohm: float | None = None,
    frequency=None,
    name: str | None = None,
) -> Channel:
    """A shielded twinax (DAC) cable pair of solid ``awg`` wires.

    Defaults: foamed polyethylene (Dk 1.5: velocity 0.82 c, 4.1 ns/m, inside the
    4.0 to 4.3 ns/m of foam twinax in REFERENCES.md; Df 3e-4) and the proximity
    factor calibrated as the module docstring says.
    """
    d = awg_diameter_m(awg)
    sigma = check.number(conductivity_s_per_m, "conductivity_s_per_m", positive=True)
    return diff_line(
        length_m, zdiff_ohm, dk=dk, df=df, f_ref_hz=f_ref_hz, zcomm_ohm=zcomm_ohm,
        r_dc_ohm_per_m=4.0 / (sigma * np.pi * d * d), perimeter_m=np.pi * d,
        current_factor=proximity_factor, roughness_rms_m=roughness_rms_m,
        conductivity_s_per_m=sigma, frequency=frequency, name=name or f"twinax_{awg:g}awg",
    )


def section(
    length_m: float,
    zdiff_ohm: float,
    *,
    dk: float = 3.5,
    df: float = 0.003,
    zcomm_ohm: float | None = None,
    frequency=None,
    name: str = "section",
) -> Channel:
    """A short differential section of another impedance (dielectric loss only).

    The building block of connectors, vias and package traces modelled as
    impedance discontinuities: its delay is ``length_m * sqrt(dk) / c``.
    """
    return diff_line(length_m, zdiff_ohm, dk=dk, df=df, zcomm_ohm=zcomm_ohm, frequency=frequency, name=name)


def connector(
    zdiff_ohm: float = 92.0, length_m: float = 8e-3, *, dk: float = 3.6, df: float = 0.004,
    frequency=None, name: str = "connector",
) -> Channel:
    """A mated connector as a short section (default 8 mm at 92 ohm, a common
    backplane/cable connector class)."""
    return section(length_m, zdiff_ohm, dk=dk, df=df, frequency=frequency, name=name)


def via(
    zdiff_ohm: float = 80.0,
    length_m: float = 1.5e-3,
    *,
    stub_length_m: float = 0.0,
    dk: float = 3.4,
    df: float = 0.002,
    frequency=None,
    name: str = "via",
) -> Channel:
    """A differential via: a short low-impedance barrel, optionally with an open stub.

    The stub (the unused barrel below the exit layer) hangs from each leg as an open
    line of the barrel's odd-mode impedance; it notches the transmission at its
    quarter-wave frequency ``c / (4 stub_length_m sqrt(dk))``.
    """
    stub = check.number(stub_length_m, "stub_length_m", nonneg=True)
    barrel = section(length_m, zdiff_ohm, dk=dk, df=df, frequency=frequency, name=name)
    if stub == 0:
        return barrel
    freq = frequency_grid(frequency)
    eps = _permittivity(freq.f, dk, df, 10e9)
    gamma = 2j * np.pi * freq.f * np.sqrt(eps) / C0
    leg = rf.media.DefinedGammaZ0(freq, z0_port=50.0, z0=zdiff_ohm / 2, gamma=gamma)
    stub_leg = leg.shunt_delay_open(stub, "m")
    return barrel.cascade(_from_legs(stub_leg, stub_leg, name + "_stub")).renamed(name)


def package(
    length_m: float = 12e-3,
    zdiff_ohm: float = 87.5,
    *,
    dk: float = 3.8,
    df: float = 0.008,
    trace_width_m: float = 25e-6,
    trace_thickness_m: float = 15e-6,
    roughness_rms_m: float = 0.3e-6,
    frequency=None,
    name: str = "package",
) -> Channel:
    """A package trace: a narrow, lossy stripline (default 12 mm at 87.5 ohm, the
    impedance of the IEEE 802.3 COM reference package, in a build-up dielectric)."""
    return stripline(
        length_m, zdiff_ohm, dk=dk, df=df, trace_width_m=trace_width_m,
        trace_thickness_m=trace_thickness_m, roughness_rms_m=roughness_rms_m,
        frequency=frequency, name=name,
    )


def com_package(
    lengths_m=(12e-3,),
    zdiff_ohm=(87.5,),
    *,
    die_cap_f=(1.2e-13,),
    series_l_h=(0.0,),
    bump_cap_f: float = 0.0,
    ball_cap_f: float = 0.87e-13,
    gamma0_per_mm: float = 5e-4,
    a1: float = 8.9e-4,
    a2: float = 2e-4,
    tau_ns_per_mm: float = 6.141e-3,
    receiver: bool = False,
    frequency=None,
    name: str = "com_package",
) -> Channel:
    """The IEEE 802.3 COM reference package (Annex 93A.1.2, with the 802.3ck die ladder).

    From the die (port 1) to the board (port 2): for each ladder segment a die
    capacitance ``die_cap_f`` and a series inductance ``series_l_h`` (per leg), a bump
    capacitance, the package line segments (``lengths_m`` at ``zdiff_ohm``, differential)
    and the ball capacitance ``ball_cap_f``. The line is 93A-9..14: per mm,
    ``gamma(f) = gamma0 + a1 (1 + j) sqrt(f) + a2 f (1 - j 2/pi ln f) + j 2 pi tau f``
    with ``f`` in GHz (``a1`` in sqrt(ns)/mm, ``a2`` and ``tau`` in ns/mm). ``receiver``
    turns it round (board at port 1, die at port 2).
    """
    freq = frequency_grid(frequency)
    f = freq.f
    lengths = [check.number(x, "lengths_m", nonneg=True) for x in np.atleast_1d(lengths_m)]
    zcs = [check.number(z, "zdiff_ohm", positive=True) for z in np.atleast_1d(zdiff_ohm)]
    if len(zcs) == 1:
        zcs = zcs * len(lengths)
    if len(zcs) != len(lengths):
        raise ChannelError(f"zdiff_ohm needs one value or one per segment ({len(lengths)}), got {len(zcs)}")
    caps = [check.number(c, "die_cap_f", nonneg=True) for c in np.atleast_1d(die_cap_f)]
    inds = [check.number(x, "series_l_h", nonneg=True) for x in np.atleast_1d(series_l_h)]
    if len(inds) == 1:
        inds = inds * len(caps)
    if len(inds) != len(caps):
        raise ChannelError(f"series_l_h needs one value or one per die segment ({len(caps)}), got {len(inds)}")
    fg = np.where(f > 0, f / 1e9, 1.0)
    gamma = gamma0_per_mm + a1 * (1 + 1j) * np.sqrt(fg) + (a2 * (1 - 1j * 2 / np.pi * np.log(fg))
                                                           + 2j * np.pi * tau_ns_per_mm) * fg
    gamma = np.where(f > 0, gamma, gamma0_per_mm)
    jw = 2j * np.pi * f
    one, zero = np.ones(f.size, dtype=complex), np.zeros(f.size, dtype=complex)
    # one leg as a chain of ABCD matrices (F, 2, 2): shunt C, series L, line of Z/2 on each leg
    chain = np.broadcast_to(np.eye(2, dtype=complex), (f.size, 2, 2)).copy()

    def then(a, b, c, d):
        nonlocal chain
        chain = chain @ np.stack([np.stack([a, b], -1), np.stack([c, d], -1)], -2)

    for c, ind in zip(caps, inds):
        if c > 0:
            then(one, zero, jw * c, one)
        if ind > 0:
            then(one, jw * ind, zero, one)
    if bump_cap_f:
        then(one, zero, jw * check.number(bump_cap_f, "bump_cap_f", nonneg=True), one)
    for z, length in zip(zcs, lengths):
        if length > 0:
            gl, zl = gamma * length * 1e3, z / 2
            then(np.cosh(gl), zl * np.sinh(gl), np.sinh(gl) / zl, np.cosh(gl))
    if ball_cap_f:
        then(one, zero, jw * check.number(ball_cap_f, "ball_cap_f", nonneg=True), one)
    a_, b_, c_, d_ = chain[:, 0, 0], chain[:, 0, 1], chain[:, 1, 0], chain[:, 1, 1]
    z0 = 50.0
    den = a_ + b_ / z0 + c_ * z0 + d_
    s_leg = np.stack([np.stack([(a_ + b_ / z0 - c_ * z0 - d_) / den, 2 * (a_ * d_ - b_ * c_) / den], -1),
                      np.stack([2 / den, (-a_ + b_ / z0 - c_ * z0 + d_) / den], -1)], -2)
    if receiver:
        s_leg = s_leg[:, ::-1, ::-1]
    leg = rf.Network(frequency=freq, s=s_leg, z0=z0)
    return _from_legs(leg, leg, name)


# ----------------------------------------------------------------------------- lumped
def ac_cap(
    capacitance_f: float = 100e-9, *, esl_h: float = 0.0, esr_ohm: float = 0.0, frequency=None,
    name: str = "ac_cap",
) -> Channel:
    """AC-coupling capacitors in series with each leg (default 100 nF, no parasitics).

    The differential mode sees ``C/2`` in series: a high-pass with time constant
    ``2 Z0 C`` into matched 50 ohm legs. ``esl_h`` and ``esr_ohm`` add the capacitor's
    series inductance and resistance.
    """
    c = check.number(capacitance_f, "capacitance_f", positive=True)
    esl = check.number(esl_h, "esl_h", nonneg=True)
    esr = check.number(esr_ohm, "esr_ohm", nonneg=True)
    freq = frequency_grid(frequency)
    m = rf.media.DefinedGammaZ0(freq, z0=50.0)
    leg = m.capacitor(c)
    if esl > 0:
        leg = leg ** m.inductor(esl)
    if esr > 0:
        leg = leg ** m.resistor(esr)
    return _from_legs(leg, leg, name)


def skew(delay_s: float, *, frequency=None, name: str = "skew") -> Channel:
    """Intra-pair skew: the P leg is ``delay_s`` longer than the N leg (negative: shorter).

    Matched, lossless; it converts differential to common mode (Scd21) and closes
    the differential response near ``1 / (2 |delay|)``.
    """
    tau = check.number(delay_s, "delay_s")
    freq = frequency_grid(frequency)
    m = rf.media.DefinedGammaZ0(freq, z0=50.0, gamma=2j * np.pi * freq.f / C0)
    longer = m.line(abs(tau) * C0, "m")
    thru = m.line(0.0, "m")
    p, n = (longer, thru) if tau >= 0 else (thru, longer)
    return _from_legs(p, n, name)


def terminate(
    channel: Channel,
    tx_ohm: float | None = None,
    rx_ohm: float | None = None,
    *,
    tx_cap_f: float = 0.0,
    rx_cap_f: float = 0.0,
) -> Channel:
    """Put die terminations at the channel's ends.

    Each end gets a shunt die capacitance per leg (``tx_cap_f``, ``rx_cap_f``) and its
    ports are renormalised to the termination (``tx_ohm``, ``rx_ohm``: differential
    ohms; None keeps 100). The result's Sdd21 is the transfer between terminations
    that differ from the reference impedance, with the reflections that causes, and
    :meth:`Channel.voltage_transfer` gives the received voltage. Cascade nothing
    after this: terminations belong at the ends. A differential-only channel (a two-port)
    is renormalised alone, without die capacitances.
    """
    if not isinstance(channel, Channel):
        raise ChannelError("terminate needs a Channel")
    rt = check.number(tx_ohm, "tx_ohm", positive=True) if tx_ohm is not None else 100.0
    rr = check.number(rx_ohm, "rx_ohm", positive=True) if rx_ohm is not None else 100.0
    ct = check.number(tx_cap_f, "tx_cap_f", nonneg=True)
    cr = check.number(rx_cap_f, "rx_cap_f", nonneg=True)
    if channel.single_ended is None:
        if ct > 0 or cr > 0 or channel.aggressors:
            raise ChannelError("terminate needs a full four-port Channel for die capacitances or aggressors")
        dd = channel.network.copy()
        dd.renormalize(np.array([rt, rr]))
        return Channel.from_differential(dd, name=channel.name, kind=channel.kind)
    freq = rf.Frequency.from_f(channel.f, unit="hz")
    m = rf.media.DefinedGammaZ0(freq, z0=50.0)
    out = channel
    if ct > 0:
        leg = m.shunt_capacitor(ct)
        out = _from_legs(leg, leg, "tx_die").cascade(out)
    if cr > 0:
        leg = m.shunt_capacitor(cr)
        out = out.cascade(_from_legs(leg, leg, "rx_die"))
    se = out.single_ended.copy()
    se.renormalize(np.array([rt / 2, rt / 2, rr / 2, rr / 2]))
    aggs = []
    for a in out.aggressors:
        ase = a.single_ended.copy() if a.single_ended is not None else None
        if ase is None:
            raise ChannelError("terminate needs four-port aggressors")
        ase.renormalize(np.array([rt / 2, rt / 2, rr / 2, rr / 2]))
        aggs.append(Channel(ase, name=a.name, kind=a.kind))
    return Channel(se, name=channel.name, aggressors=aggs, grid=channel.grid, source=channel.source)
