"""Discontinuities and lumped parts of :mod:`channels.media`: a uniform section,
connectors, vias, packages (a trace or the COM package model), AC capacitors,
intra-pair skew and terminations.
"""

from __future__ import annotations

import numpy as np
import skrf as rf

from . import _validate as check
from .channel import Channel
from .errors import ChannelError
from .line_model import C0, frequency_grid, from_legs, line_permittivity
from .lines import diff_line, stripline

__all__ = ["section", "connector", "via", "package", "com_package", "ac_cap", "skew", "terminate"]


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
    eps = line_permittivity(freq.f, dk, df, 10e9)
    gamma = 2j * np.pi * freq.f * np.sqrt(eps) / C0
    leg = rf.media.DefinedGammaZ0(freq, z0_port=50.0, z0=zdiff_ohm / 2, gamma=gamma)
    stub_leg = leg.shunt_delay_open(stub, "m")
    return barrel.cascade(from_legs(stub_leg, stub_leg, name + "_stub")).renamed(name)


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
    return from_legs(leg, leg, name)


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
    return from_legs(leg, leg, name)


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
    return from_legs(p, n, name)


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
        out = from_legs(leg, leg, "tx_die").cascade(out)
    if cr > 0:
        leg = m.shunt_capacitor(cr)
        out = out.cascade(from_legs(leg, leg, "rx_die"))
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
