"""Crosstalk for synthesised channels (their integrated crosstalk noise: :mod:`channels.icn`).

Victim and aggressor are two matched, uniform lines of length ``l`` (here the differential
modes of two pairs, each mode taken as one conductor) with per-unit-length self ``L``, ``C``
and mutual ``Lm``, ``Cm`` (Maxwell form: ``C`` is a line's total capacitance). To first order
in ``k_L = Lm / L`` and ``k_C = Cm / C``, every port terminated in the line's own impedance
(C. R. Paul, *Analysis of Multiconductor Transmission Lines*, 2nd ed., Wiley 2008, the
weak-coupling (inductive-capacitive coupling) solution of three-conductor lines; S. H. Hall
and H. L. Heck, *Advanced Signal Integrity for High-Speed Digital Designs*, Wiley 2009, ch. 4)::

    K_b = (k_L + k_C) / 4                        backward (near-end) coefficient
    K_f = (k_C - k_L) / 2                        forward coefficient per unit time of flight
    NEXT(f) = K_b (1 - exp(-2 gamma l))          saturates at K_b on long lines
    FEXT(f) = j omega K_f T_d exp(-gamma l)      grows with length and frequency

as S-parameters (incident-wave ratios), ``T_d = l / v`` the time of flight. The short-line
limits ``2 j omega T_d K_b`` and ``j omega T_d K_f`` are Paul's low-frequency ``2 V_NE / V_S``
and ``2 V_FE / V_S``; Hall & Heck's far-end voltage ``(T_d / 2)(Cm/C - Lm/L) dV/dt`` has the
same sign: negative where inductive coupling dominates (microstrip, shielded cable). In a
homogeneous dielectric (stripline) ``k_L = k_C``: even and odd modes travel at one speed and
FEXT vanishes. Errors are of order ``k`` and ``(omega T_d K_f)^2``, for low-loss lines
(``omega L >> R``: above a few hundred MHz on PCB traces). ``exp(-gamma l)`` comes from the
victim section's own ABCD matrix (:func:`propagation`): the crosstalk carries its loss and delay.

Per-section crosstalk rides on the section as aggressors (:meth:`Channel.with_aggressors`);
:func:`channels.cascade` refers each to the far receiver, and :func:`combine_aggressors`
adds the referred contributions of one aggressor lane (same name and kind) coherently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import skrf as rf

from . import _validate as check
from . import media
from .channel import Channel, cascade
from .mixed_mode import mixed_mode_to_se
from .errors import ChannelError

__all__ = [
    "CONNECTOR_FEXT_DB", "CONNECTOR_F_REF_HZ", "CONNECTOR_NEXT_DB", "TWINAX_SHIELD_COUPLING_DB", "Coupling",
    "cable_aggressors", "cascade_coherent", "combine_aggressors", "connector_crosstalk", "coupled_section",
    "host_cable_channel", "line_crosstalk", "microstrip_coupling", "propagation",
    "stripline_coupling", "stripline_pair", "twinax_coupling", "twinax_pair", "weak_coupling",
    "with_crosstalk",
]

ETA0 = 376.730313668  # ohm, impedance of free space
_K_MAX = 0.3  # largest |k_L|, |k_C| the first-order solution is offered for
_XT_MAX = 0.5  # largest |NEXT|, |FEXT| (-6 dB) a weak-coupling result may reach

# Mated-connector pair-to-pair NEXT: the 802.3ck cable assembly of mellitz_3ck_04_1119
# (CA_19p75dB_next1.s4p, ../shared/channels) reads -65.1 dB at 26.56 GHz; taken here as one
# mated connector. Its FEXT figure is the same level by assumption (no separate public figure).
CONNECTOR_F_REF_HZ = 26.5625e9
CONNECTOR_NEXT_DB = -65.0
CONNECTOR_FEXT_DB = -65.0
# Pair-to-pair coupling through twinax shields, 20 log10(Lm / L): calibrated (see twinax_coupling).
TWINAX_SHIELD_COUPLING_DB = -79.2


@dataclass(frozen=True)
class Coupling:
    """Per-unit-length coupling ratios ``k_l = Lm / L``, ``k_c = Cm / C`` of two lines
    (dimensionless, ``|k| <= 0.3``: the solution is first order in ``k``), and their ``source``."""

    k_l: float
    k_c: float
    source: str = ""

    def __post_init__(self):
        for name in ("k_l", "k_c"):
            v = check.number(getattr(self, name), name)
            if abs(v) > _K_MAX:
                raise ChannelError(f"{name} = {v:.4g}: the weak-coupling model needs |k| <= {_K_MAX} "
                                   "(a tighter coupling needs a field solver and the exact modal solution)")
            object.__setattr__(self, name, v)

    @property
    def k_b(self) -> float:
        """Backward (NEXT) coefficient ``(k_L + k_C) / 4``."""
        return (self.k_l + self.k_c) / 4

    @property
    def k_f(self) -> float:
        """Forward (FEXT) coefficient per unit time of flight ``(k_C - k_L) / 2``."""
        return (self.k_c - self.k_l) / 2

    def to_dict(self) -> dict:
        return {"k_l": self.k_l, "k_c": self.k_c, "k_b": self.k_b, "k_f": self.k_f, "source": self.source}


# ----------------------------------------------------------------------------- the model
def propagation(section: Channel) -> np.ndarray:
    """``exp(-gamma l)`` of a section's differential mode, from its ABCD matrix.

    ``cosh(gamma l) = (A + D) / 2`` and ``sinh(gamma l) = sqrt(B C)`` on the branch with
    ``Re(B / sinh) = Re(Z_c) > 0``; ``exp(-gamma l) = 1 / (cosh + sinh)``. Exact for a uniform
    line whatever its impedance against the ports (unlike Sdd21, which carries the
    mismatch), needs no phase unwrapping, and is 1 at DC for a loss-free dielectric.
    """
    if not isinstance(section, Channel):
        raise ChannelError(f"propagation needs a Channel, not {type(section).__name__}")
    dd = section.network if section.nports == 2 else section.network.subnetwork([0, 1])
    if np.any(np.abs(dd.s[:, 1, 0]) < 1e-12):
        raise ChannelError(f"{section.name}: no transmission at some frequency; not a line section")
    abcd = rf.network.s2a(dd.s, dd.z0)
    a, b, c, d = abcd[:, 0, 0], abcd[:, 0, 1], abcd[:, 1, 0], abcd[:, 1, 1]
    sh = np.sqrt(b * c)
    sh = np.where(np.real(b * np.conj(sh)) < 0, -sh, sh)
    p = 1.0 / ((a + d) / 2 + sh)
    if not np.all(np.isfinite(p)):
        raise ChannelError(f"{section.name}: its ABCD matrix gives no finite propagation factor")
    return p


def weak_coupling(f_hz, transmission, delay_s: float, coupling: Coupling) -> tuple[np.ndarray, np.ndarray]:
    """NEXT and FEXT transfers ``(K_b (1 - P^2), j omega K_f T_d P)`` (complex, per point
    of ``f_hz``, Hz) of a matched coupled pair: ``P = transmission`` is the victim's
    ``exp(-gamma l)`` (:func:`propagation`), ``delay_s`` its time of flight ``T_d`` (s)."""
    f = check.frequencies(f_hz, "f_hz")
    p = np.asarray(transmission, dtype=complex)
    if p.shape != f.shape or not np.all(np.isfinite(p)):
        raise ChannelError(f"transmission must be finite, one value per frequency ({f.size}), got shape {p.shape}")
    t = check.number(delay_s, "delay_s", nonneg=True)
    if not isinstance(coupling, Coupling):
        raise ChannelError(f"coupling must be a Coupling, not {type(coupling).__name__}")
    return coupling.k_b * (1 - p * p), 2j * np.pi * f * coupling.k_f * t * p


def _xt_channel(victim: Channel, x: np.ndarray, kind: str, name: str) -> Channel:
    """A crosstalk Channel on the victim's grid and references whose Sdd21 (and Sdd12) is ``x``."""
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if peak > _XT_MAX:
        raise ChannelError(f"{name}: |{kind.upper()}| reaches {20 * np.log10(peak):.1f} dB, beyond the "
                           "weak-coupling model (-6 dB); the coupling is too strong for a first-order solution")
    s = np.zeros((x.size, victim.nports, victim.nports), dtype=complex)
    s[:, 1, 0] = s[:, 0, 1] = x
    ntwk = rf.Network(frequency=victim.network.frequency, s=s, z0=victim.network.z0.copy(), name=name)
    if victim.nports == 4:  # a full four-port (common mode uncoupled): terminate() and cascades work
        return Channel(mixed_mode_to_se(ntwk), name=name, kind=kind)
    return Channel(differential=ntwk, name=name, kind=kind)


def line_crosstalk(victim: Channel, coupling: Coupling, *, delay_s: float | None = None,
                   name: str | None = None) -> tuple[Channel, Channel]:
    """NEXT and FEXT of a uniform ``victim`` section coupled to an identical aggressor.

    ``delay_s`` (s) is the time of flight ``T_d``; default the section's own
    :attr:`Channel.delay_s` (read from its phase: the grid step must stay below
    ``1 / (2 T_d)``). Returns ``(next, fext)`` Channels of kinds ``"next"`` and
    ``"fext"`` on the victim's grid, ready for :meth:`Channel.with_aggressors`.
    """
    if not isinstance(victim, Channel):
        raise ChannelError(f"victim must be a Channel, not {type(victim).__name__}")
    t = victim.delay_s if delay_s is None else check.number(delay_s, "delay_s", positive=True)
    if delay_s is None and (t <= 0 or float(np.max(np.diff(victim.f))) * t >= 0.5):
        raise ChannelError(f"{victim.name}: cannot read its delay from a grid this coarse (steps up to "
                           f"{np.max(np.diff(victim.f)) / 1e6:.4g} MHz) or without transmission; pass delay_s")
    nx, fx = weak_coupling(victim.f, propagation(victim), t, coupling)
    base = name or victim.name
    return _xt_channel(victim, nx, "next", base + "_next"), _xt_channel(victim, fx, "fext", base + "_fext")


def connector_crosstalk(section: Channel, *, next_db: float = CONNECTOR_NEXT_DB,
                        fext_db: float = CONNECTOR_FEXT_DB, f_ref_hz: float = CONNECTOR_F_REF_HZ,
                        fext_inductive: bool = True, name: str | None = None) -> tuple[Channel, Channel]:
    """A mated connector's NEXT and FEXT as lumped (electrically short) coupling.

    ``X(f) = j a (f / f_ref) Sdd21(f)``: the short-line limits ``2 j omega T_d K_b`` and
    ``j omega T_d K_f`` of the module docstring, ``a = 10^(X_db / 20)`` the coupling at
    ``f_ref_hz`` before the section's own loss, carried by the section's through transfer (so
    ``section`` may be any short part: a connector, or a plug with its paddle card). FEXT is
    negative (``fext_inductive``: inductive coupling dominates a pin field, a stated
    assumption). Defaults: NEXT -65 dB at 26.5625 GHz, the 802.3ck cable-assembly figure
    (mellitz_3ck_04_1119, ``CA_19p75dB_next1.s4p``: -65.1 dB), FEXT the same by assumption.
    """
    if not isinstance(section, Channel):
        raise ChannelError(f"section must be a Channel, not {type(section).__name__}")
    a_n = 10 ** (check.number(next_db, "next_db", hi=-6.0) / 20)
    a_f = 10 ** (check.number(fext_db, "fext_db", hi=-6.0) / 20)
    f_ref = check.number(f_ref_hz, "f_ref_hz", positive=True)
    shape = 1j * (section.f / f_ref) * section.sdd21
    base = name or section.name
    sign = -1.0 if fext_inductive else 1.0
    return (_xt_channel(section, a_n * shape, "next", base + "_next"),
            _xt_channel(section, sign * a_f * shape, "fext", base + "_fext"))


# ----------------------------------------------------------------------------- geometry
def _modal(p_air: np.ndarray, p_diel: np.ndarray) -> tuple[float, float, float, float]:
    """``(k_L, k_C, Zdiff, eps_eff)`` of the differential modes of two pairs from 4x4 potential
    coefficient matrices (units of 1/eps0): ``C = eps0 P_diel^-1``, ``L^-1 = P_air^-1 / mu0``.
    Both ratios come from the inverse matrices reduced to the two differential modes the
    same way, so a homogeneous medium gives ``k_L = k_C`` exactly (no spurious FEXT)."""
    t = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, -1.0], [0.0, 1.0]])
    ca = t.T @ np.linalg.inv(p_air) @ t
    cd = t.T @ np.linalg.inv(p_diel) @ t
    z = 4 * ETA0 / np.sqrt(ca[0, 0] * cd[0, 0])  # L_dd = 4 mu0 / ca, C_dd = eps0 cd / 4
    return float(-ca[0, 1] / ca[0, 0]), float(-cd[0, 1] / cd[0, 0]), float(z), float(cd[0, 0] / ca[0, 0])


def _geometry(spacing_m, trace_width_m, trace_thickness_m, intra_gap_m) -> np.ndarray:
    """Distances (m) between the legs: victim +, -, then the aggressor mirrored (-, +), so the
    two nearest legs share a polarity and the couplings come out positive."""
    s = check.number(spacing_m, "spacing_m", positive=True)
    w = check.number(trace_width_m, "trace_width_m", positive=True)
    t = check.number(trace_thickness_m, "trace_thickness_m", positive=True)
    p = w + check.number(intra_gap_m, "intra_gap_m", positive=True)
    x = np.array([0.0, p, p + w + s, 2 * p + w + s])
    dist = np.abs(x[:, None] - x[None, :])
    np.fill_diagonal(dist, (w + t) / 4)  # equivalent radius of a w x t strip (thin strip: w / 4)
    return dist


def stripline_coupling(spacing_m: float, *, trace_width_m: float = 127e-6, trace_thickness_m: float = 17.5e-6,
                       intra_gap_m: float = 127e-6, plane_spacing_m: float = 300e-6, dk: float = 3.4) -> Coupling:
    """Pair-to-pair coupling of two edge-coupled differential striplines (centred between planes).

    Each trace is a line charge midway between planes ``b = plane_spacing_m`` apart: by images
    its potential at distance ``x`` is ``ln coth(pi x / 2b) / (2 pi eps)``, which falls off as
    ``2 exp(-pi x / b)``, the exponential decay of stripline coupling with spacing over the
    dielectric height. The 4x4 potential matrix of the two pairs (``spacing_m`` edge to edge
    between their nearest traces; self terms at the strip's equivalent radius ``(w + t) / 4``)
    gives the differential modes' ``k_L``; the dielectric is homogeneous, so ``k_C = k_L``
    (FEXT vanishes). Defaults: 5 mil traces and gap with 300 um between the planes, which this
    model puts at 100 ohm differential in Dk 3.4 (``dk`` only sets the impedance quoted in
    ``source``; the coupling ratios do not depend on it).
    """
    dist = _geometry(spacing_m, trace_width_m, trace_thickness_m, intra_gap_m)
    b = check.number(plane_spacing_m, "plane_spacing_m", positive=True)
    dk = check.number(dk, "dk", lo=1.0)
    if b <= trace_thickness_m:
        raise ChannelError(f"plane_spacing_m ({b:.4g} m) must exceed trace_thickness_m ({trace_thickness_m:.4g} m)")
    e = np.exp(-np.pi * dist / b)
    pot = (np.log1p(e) - np.log1p(-e)) / (2 * np.pi)  # ln coth(pi x / 2b), accurate far out
    k_l, _, z, _ = _modal(pot, pot)
    return Coupling(k_l, k_l, f"stripline, image method between planes {b * 1e6:.0f} um apart; "
                              f"model Zdiff {z / np.sqrt(dk):.1f} ohm at Dk {dk:g}")


def microstrip_coupling(spacing_m: float, *, trace_width_m: float = 127e-6, trace_thickness_m: float = 35e-6,
                        intra_gap_m: float = 127e-6, height_m: float = 100e-6, dk: float = 3.4) -> Coupling:
    """Pair-to-pair coupling of two edge-coupled differential microstrips.

    Line charges on a grounded dielectric slab (``height_m``, ``dk``): the image series
    ``P(x) = sum_n (-K)^n ln[(x^2 + 4 (n+1)^2 h^2) / (x^2 + 4 n^2 h^2)] / (2 pi (1 + dk))``,
    ``K = (dk - 1) / (dk + 1)`` (the spectral-domain Green's function expanded in
    ``exp(-2 k h)``); in air (``K = 0``) it is ``ln(1 + (2h/x)^2) / (4 pi)``, whose fall-off
    ``~ (h/x)^2`` is Johnson & Graham's ``1 / (1 + (D/H)^2)`` crosstalk rule. ``k_L`` comes from
    the air problem, ``k_C`` from the slab problem (the mutual field runs partly in air, so
    ``k_C < k_L`` and FEXT is negative). Defaults as :func:`channels.media.microstrip`.
    """
    dist = _geometry(spacing_m, trace_width_m, trace_thickness_m, intra_gap_m)
    h = check.number(height_m, "height_m", positive=True)
    dk = check.number(dk, "dk", lo=1.0, hi=100.0)
    kk = (dk - 1) / (dk + 1)
    n = np.arange(int(np.ceil(np.log(1e-13) / np.log(kk))) + 1 if kk > 0 else 1)  # |K|^n < 1e-13
    x2 = dist[..., None] ** 2
    terms = (-kk) ** n * np.log((x2 + 4 * (n + 1) ** 2 * h * h) / (x2 + 4 * n**2 * h * h))
    p_diel = terms.sum(-1) / (2 * np.pi * (1 + dk))
    p_air = np.log(1 + 4 * h * h / dist**2) / (4 * np.pi)
    k_l, k_c, z, eps_eff = _modal(p_air, p_diel)
    return Coupling(k_l, k_c, f"microstrip, image series over a {h * 1e6:.0f} um slab of Dk {dk:g}; "
                              f"model Zdiff {z:.1f} ohm, eps_eff about {eps_eff:.2f}")


def twinax_coupling(shield_coupling_db: float = TWINAX_SHIELD_COUPLING_DB) -> Coupling:
    """Pair-to-pair coupling of two shielded twinax pairs: what leaks through foil shields is their
    transfer impedance, inductive here (``Z_t ~ j omega L_t``), so ``k_L = 10^(shield_coupling_db
    / 20)`` and ``k_C = 0``: ``K_f = -k_L / 2`` (FEXT grows with length and frequency), ``K_b = k_L / 4``.

    Calibration of the default (-79.2 dB): :func:`host_cable_channel` (8 dB host, connector, 1 m of
    26 AWG twinax, connector, 8 dB host) then has its single-aggressor FEXT 22.25 dB below its
    through at 53.125 GHz, as the public 802.3dj channel kocsis_3dj_02_2305 CH01 (8 dB host +
    1 m 26 AWG DAC + 8 dB host: FEXT Sdd21 about -53 dB, through -30.75 dB at 53 GHz; whole-
    channel figures including hosts and connectors). The ratio is matched, not the level: FEXT
    scales with the through, and this library's cable assembly loses about 7 dB less than
    CH01's. Its NEXT then comes out near CH01's -75 dB (the receive-side connector seen through
    the two hosts): a check, not a fit (tests/test_crosstalk.py).
    """
    db = check.number(shield_coupling_db, "shield_coupling_db", hi=-20 * np.log10(1 / _K_MAX))
    return Coupling(10 ** (db / 20), 0.0, f"twinax, shield transfer coupling {db:g} dB (inductive)")


# ----------------------------------------------------------------------------- composition
def with_crosstalk(victim: Channel, crosstalk: tuple[Channel, Channel], *, n_next: int = 1,
                   n_fext: int = 1) -> Channel:
    """``victim`` carrying ``n_next`` equal NEXT and ``n_fext`` equal FEXT aggressors.

    ``crosstalk`` is a ``(next, fext)`` pair (:func:`line_crosstalk`,
    :func:`connector_crosstalk`). The copies are named ``next1..`` and ``fext1..``: a name
    stands for one aggressor lane, so sections built with the same counts cascade into
    per-lane contributions that :func:`combine_aggressors` adds coherently.
    """
    if not isinstance(victim, Channel):
        raise ChannelError(f"victim must be a Channel, not {type(victim).__name__}")
    if not (isinstance(crosstalk, (tuple, list)) and len(crosstalk) == 2
            and all(isinstance(c, Channel) and c.kind == k for c, k in zip(crosstalk, ("next", "fext")))):
        raise ChannelError(f"crosstalk must be a (next, fext) pair of Channels, got {crosstalk!r}")
    nx, fx = crosstalk
    for ch in crosstalk:
        if ch.f.size != victim.f.size or not np.array_equal(ch.f, victim.f):
            raise ChannelError(f"{ch.name!r} is on a different frequency grid than {victim.name!r} "
                               f"({ch.f.size} against {victim.f.size} points); build it from the victim")
    n_next = check.integer(n_next, "n_next", lo=0, hi=64)
    n_fext = check.integer(n_fext, "n_fext", lo=0, hi=64)
    aggs = [nx.renamed(f"next{i + 1}") for i in range(n_next)] + [fx.renamed(f"fext{i + 1}") for i in range(n_fext)]
    return victim.with_aggressors(*aggs)


def coupled_section(victim: Channel, coupling: Coupling, *, n_next: int = 1, n_fext: int = 1) -> Channel:
    """``victim`` with its :func:`line_crosstalk` attached: ``coupled_section(media.microstrip(0.05),
    microstrip_coupling(250e-6))``."""
    return with_crosstalk(victim, line_crosstalk(victim, coupling), n_next=n_next, n_fext=n_fext)


def stripline_pair(length_m: float, spacing_m: float, *, n_next: int = 1, n_fext: int = 1,
                   trace_width_m: float = 127e-6, trace_thickness_m: float = 17.5e-6, intra_gap_m: float = 127e-6,
                   plane_spacing_m: float = 300e-6, frequency=None, name: str = "stripline", **line_kwargs) -> Channel:
    """A :func:`channels.media.stripline` section (``length_m``, m) with its neighbours' crosstalk
    (:func:`stripline_coupling` at ``spacing_m`` edge to edge). ``line_kwargs`` go to the line."""
    victim = media.stripline(check.number(length_m, "length_m", positive=True), trace_width_m=trace_width_m,
                             trace_thickness_m=trace_thickness_m, frequency=frequency, name=name, **line_kwargs)
    c = stripline_coupling(spacing_m, trace_width_m=trace_width_m, trace_thickness_m=trace_thickness_m,
                           intra_gap_m=intra_gap_m, plane_spacing_m=plane_spacing_m, dk=line_kwargs.get("dk", 3.4))
    return coupled_section(victim, c, n_next=n_next, n_fext=n_fext)


def twinax_pair(length_m: float, awg: float = 26, *, n_next: int = 1, n_fext: int = 1,
                shield_coupling_db: float = TWINAX_SHIELD_COUPLING_DB, frequency=None, **cable_kwargs) -> Channel:
    """A :func:`channels.media.twinax` pair with its neighbours' crosstalk (:func:`twinax_coupling`)."""
    victim = media.twinax(check.number(length_m, "length_m", positive=True), awg, frequency=frequency, **cable_kwargs)
    return coupled_section(victim, twinax_coupling(shield_coupling_db), n_next=n_next, n_fext=n_fext)


def combine_aggressors(channel: Channel) -> Channel:
    """``channel`` with the aggressors sharing a name and kind added into one: after a cascade
    each section's crosstalk of one aggressor lane arrives referred but apart, and the lane's
    crosstalk is their coherent sum (of the transfer blocks; reflections are the first's)."""
    if not isinstance(channel, Channel):
        raise ChannelError(f"combine_aggressors needs a Channel, not {type(channel).__name__}")
    groups: dict[tuple[str, str], list[Channel]] = {}
    for a in channel.aggressors:
        groups.setdefault((a.kind, a.name), []).append(a)
    out = []
    for (kind, name), parts in groups.items():
        if len({p.nports for p in parts}) != 1:
            raise ChannelError(f"aggressor {name!r} mixes four-port and differential-only parts")
        four = parts[0].nports == 4
        nets = [p.single_ended if four else p.network for p in parts]
        s, h = nets[0].s.copy(), 2 if four else 1
        for other in nets[1:]:  # through blocks add; reflections stay the first's
            s[:, h:, :h] += other.s[:, h:, :h]
            s[:, :h, h:] += other.s[:, :h, h:]
        ntwk = rf.Network(frequency=nets[0].frequency, s=s, z0=nets[0].z0.copy(), name=name)
        out.append(Channel(ntwk, name=name, kind=kind) if four else Channel(differential=ntwk, name=name, kind=kind))
    return channel._replace(aggressors=tuple(out))


def cascade_coherent(*parts: Channel, grid=None) -> Channel:
    """:func:`channels.cascade` of the parts, then :func:`combine_aggressors`."""
    return combine_aggressors(cascade(*parts, grid=grid))


def cable_aggressors(plug: Channel, cable_length_m: float, awg: float = 26, *, n_next: int = 2, n_fext: int = 3,
                     shield_coupling_db: float = TWINAX_SHIELD_COUPLING_DB, next_db: float = CONNECTOR_NEXT_DB,
                     fext_db: float = CONNECTOR_FEXT_DB, frequency=None) -> Channel:
    """A cable assembly with its neighbours' crosstalk: ``plug``, ``cable_length_m`` (m) of
    ``awg`` twinax (:func:`twinax_pair`), and ``plug`` seen from its other end, each plug with
    :func:`connector_crosstalk`, combined per aggressor lane. ``plug`` is the mated connector
    with what it carries (e.g. :func:`channels.media.connector`, or a connector and its paddle
    card); its grid is used (``frequency``, if given, must be the same). Default lanes: 2 NEXT
    and 3 FEXT aggressors, a stated assumption for a pair inside a multi-lane cable.
    """
    if not isinstance(plug, Channel):
        raise ChannelError(f"plug must be a Channel, not {type(plug).__name__}")
    if frequency is not None and not np.array_equal(media.frequency_grid(frequency).f, plug.f):
        raise ChannelError(f"frequency differs from the grid of plug {plug.name!r}; build them on one grid")
    ends = []
    for part in (plug, plug.reversed()):
        xt = connector_crosstalk(part, next_db=next_db, fext_db=fext_db)
        ends.append(with_crosstalk(part, xt, n_next=n_next, n_fext=n_fext))
    cable = twinax_pair(cable_length_m, awg, n_next=n_next, n_fext=n_fext, shield_coupling_db=shield_coupling_db,
                        frequency=plug.f)
    return cascade_coherent(ends[0], cable, ends[1])


def host_cable_channel(length_m: float = 1.0, awg: float = 26, *, host_loss_db: float = 8.0, n_next: int = 1,
                       n_fext: int = 1, f_loss_hz: float = 53.125e9, frequency=None, **crosstalk_kwargs) -> Channel:
    """Host, connector, twinax, connector, host, with crosstalk combined per aggressor lane.

    The topology of the 802.3dj cable channels (e.g. kocsis_3dj_02_2305 CH01: 8 dB host +
    1 m 26 AWG DAC + 8 dB host) and the calibration of :func:`twinax_coupling`. Each host is a
    :func:`channels.media.stripline` long enough to lose ``host_loss_db`` at ``f_loss_hz``,
    without crosstalk (the aggressor lanes taken as routed apart on the host; cascade
    :func:`stripline_pair` sections to model them); ``host_loss_db = 0`` gives the cable assembly
    alone. ``crosstalk_kwargs`` go to :func:`cable_aggressors`.
    """
    host_loss = check.number(host_loss_db, "host_loss_db", nonneg=True, hi=60.0)
    freq = media.frequency_grid(frequency)
    mid = cable_aggressors(media.connector(frequency=freq), length_m, awg, n_next=n_next, n_fext=n_fext,
                           **crosstalk_kwargs)
    if host_loss == 0:
        return mid
    f_loss = check.number(f_loss_hz, "f_loss_hz", positive=True)
    length = 0.1
    for _ in range(2):  # loss is linear in length up to the small mismatch ripple
        length *= host_loss / media.stripline(length, frequency=freq).insertion_loss_db(f_loss)
    host = media.stripline(length, frequency=freq, name="host")
    return cascade_coherent(host, mid, host)
