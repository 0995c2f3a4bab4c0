"""Differential lines of :mod:`channels.media`: a generic line, stripline, microstrip
and twinax, on the line model of :mod:`channels.line_model` (calibration figures in
the :mod:`channels.media` docstring and in each builder's).
"""

from __future__ import annotations

import numpy as np

from . import _validate as check
from .channel import Channel
from .errors import ChannelError
from .line_model import (
    SIGMA_CU,
    awg_diameter_m,
    frequency_grid,
    from_modes,
    internal_impedance,
    mode_line,
    line_permittivity,
)

__all__ = ["diff_line", "stripline", "microstrip", "twinax"]


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
        eps = line_permittivity(f, dk, df, f_ref_hz)
        dk_ref = dk
    if r_dc > 0:
        zi = internal_impedance(f, r_dc, perimeter_m, current_factor, roughness_rms_m, sigma)
    else:
        zi = np.zeros(f.shape, dtype=complex)
    dd = mode_line(freq, length_m, zdiff_ohm, eps, dk_ref, 2.0 * zi, 100.0)
    cc = mode_line(freq, length_m, zc, eps, dk_ref, 0.5 * zi, 25.0)
    return from_modes(dd, cc, name)


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
    eps = line_permittivity(freq.f, dk, df, f_ref_hz)
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
