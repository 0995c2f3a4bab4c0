"""The differential line model behind :mod:`channels.media` (described there).

The default frequency grid, the causal Djordjevic-Sarkar permittivity, the internal
impedance of one conductor (DC to skin effect, Hammerstad-Jensen roughness), one mode
as an exact two-port line, and the assembly of modes or legs into a four-port
:class:`~channels.channel.Channel`.
"""

from __future__ import annotations

import numpy as np
import skrf as rf

from . import _validate as check
from .channel import Channel
from .mixed_mode import mixed_mode_to_se

__all__ = [
    "C0", "MU0", "SIGMA_CU", "DEFAULT_F_MAX_HZ", "DEFAULT_DF_HZ", "frequency_grid",
    "djordjevic_sarkar", "line_permittivity", "hammerstad", "internal_impedance", "mode_line",
    "from_modes", "from_legs", "awg_diameter_m",
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


def djordjevic_sarkar(f: np.ndarray, dk: float, df: float, f_ref: float) -> np.ndarray:
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


def line_permittivity(f: np.ndarray, dk: float, df: float, f_ref: float) -> np.ndarray:
    """Djordjevic-Sarkar permittivity, or a constant ``dk`` for a lossless dielectric."""
    return djordjevic_sarkar(f, dk, df, f_ref) if df > 0 else np.full(np.shape(f), dk, dtype=complex)


def hammerstad(f: np.ndarray, roughness_rms_m: float, sigma: float) -> np.ndarray:
    if roughness_rms_m <= 0:
        return np.ones_like(f)
    with np.errstate(divide="ignore"):
        skin = np.where(f > 0, 1.0 / np.sqrt(np.pi * np.maximum(f, 1e-300) * MU0 * sigma), np.inf)
    return 1.0 + (2.0 / np.pi) * np.arctan(1.4 * (roughness_rms_m / skin) ** 2)


def internal_impedance(
    f: np.ndarray, r_dc: float, perimeter_m: float, factor: float, roughness_rms_m: float, sigma: float
) -> np.ndarray:
    """Internal impedance of one conductor per metre (ohm/m), DC to skin effect."""
    # high-frequency asymptote (1 + j) * factor * R_s / p with R_s = sqrt(pi f mu0 / sigma)
    # equals R_dc * sqrt(j f / f_d) for f_d below:
    f_d = r_dc**2 * perimeter_m**2 * sigma / (2 * np.pi * MU0 * factor**2)
    return r_dc * np.sqrt(1 + 1j * f / f_d) * hammerstad(f, roughness_rms_m, sigma)


def mode_line(
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
    # z0 already in the (F, 2) shape a2s broadcasts a number to (its list-building costs more
    # than the line itself on 12,001 points): the same values, the same S
    z0 = np.full((f.size, 2), z_port, dtype=np.asarray(z_port).dtype)
    return rf.Network(frequency=freq, s=rf.network.a2s(abcd, z0), z0=z_port)


def from_modes(dd: rf.Network, cc: rf.Network, name: str) -> Channel:
    """Assemble a symmetric mixed-mode four-port ``[d1, d2, c1, c2]`` into a Channel."""
    nf = dd.f.size
    s = np.zeros((nf, 4, 4), dtype=complex)
    s[:, 0:2, 0:2] = dd.s
    s[:, 2:4, 2:4] = cc.s
    z0 = np.array([100.0, 100.0, 25.0, 25.0])
    mm = rf.Network(frequency=dd.frequency, s=s, z0=z0, name=name)
    return Channel(mixed_mode_to_se(mm), name=name)


def from_legs(p_leg: rf.Network, n_leg: rf.Network, name: str) -> Channel:
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
