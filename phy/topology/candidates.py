"""The link classes a domain's cables may be, and the choice among them by length.

:func:`default_candidates` gives the five classes (passive copper, AEC, LPO, CPO and DSP
optics) with the sweeps' preset equalisation; :func:`choose_classes` gives each cable
length the class that closes at the least power (or latency). :mod:`phy.topology.domain`
plans domains with them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .parts import LinkClass
from .rollup import MAX_EVALUATIONS

__all__ = ["ClassChoice", "choose_classes", "default_candidates"]


def default_candidates(lanes: int = 2, lane_rate_bps: float = 212.5e9, fec="KP4", serdes=None,
                       host: str | None = "HL", resolution_m: float | None = None) -> tuple:
    """The five link classes a cable may be: passive copper (26 AWG twinax, host ``host``),
    an active electrical cable (the same, a retimer in each plug), LPO, CPO and DSP
    pluggable optics, all ``lanes`` x ``lane_rate_bps`` with KP4 and the link layer; the
    copper ones with the sweeps' preset equalisation (``serdes``, default the 802.3dj KR
    receiver's structure, :meth:`phy.Serdes.preset`) so that a plan costs
    seconds.

    Without ``serdes`` the same arguments give the same classes (the last eight kept), so
    that plans made one after another share their link evaluations (each class caches its
    reports by length): the default candidates' in-rack lengths cost tens of seconds once,
    not once per plan.

    ``resolution_m``: the copper classes' length buckets (default 0.25 m for passive copper,
    0.5 m for the AEC); a coarser bucket evaluates fewer lengths, each rounded up (a class
    that closes at its bucket closes at the length: conservative).

    Parameters
    ----------
    lanes : int, optional
        Lanes per link (default 2).
    lane_rate_bps : float, optional
        Line rate of one lane, bit/s (default 212.5e9).
    fec : str, optional
        The FEC of every class (default ``"KP4"``).
    serdes : optional
        The copper classes' SerDes (None: the sweeps' preset for the lane's symbol rate).
    host : str or None, optional
        The copper classes' host class (default ``"HL"``), as :func:`scale_up_copper`.
    resolution_m : float or None, optional
        The copper classes' length bucket, m (None: 0.25 copper, 0.5 AEC).

    Returns
    -------
    tuple of LinkClass
        Copper twinax, AEC, LPO, CPO and DSP optics, in that order.
    """
    if serdes is None:
        try:
            return _default_candidates(lanes, lane_rate_bps, fec, host, resolution_m)
        except TypeError:  # an unhashable argument: let the checks below name it
            pass
    return _make_candidates(lanes, lane_rate_bps, fec, serdes, host, resolution_m)


@functools.lru_cache(maxsize=8)
def _default_candidates(lanes, lane_rate_bps, fec, host, resolution_m=None) -> tuple:
    return _make_candidates(lanes, lane_rate_bps, fec, None, host, resolution_m)


def _make_candidates(lanes, lane_rate_bps, fec, serdes, host, resolution_m=None) -> tuple:
    from ..link import Retry, Serdes
    from ..serdes import symbol_rate_hz

    sd = serdes or Serdes.preset(symbol_rate_hz(lane_rate_bps, "pam4"), "pam4")
    from .builders import tray_flyover_m

    fly = tray_flyover_m(host)
    return (LinkClass.copper_twinax(lanes, lane_rate_bps, 26, fec, sd, resolution_m or 0.25, retry=Retry(), host=host,
                                    flyover_m=fly),
            LinkClass.aec(lanes, lane_rate_bps, 26, fec, sd, resolution_m or 0.5, retry=Retry(), host=host),
            LinkClass.optical("lpo", lanes, lane_rate_bps, fec), LinkClass.optical("cpo", lanes, lane_rate_bps, fec),
            LinkClass.optical("dsp", lanes, lane_rate_bps, fec))


@dataclass
class ClassChoice:
    """What :func:`choose_classes` decided for one distinct length: the index of the
    chosen candidate and every candidate's ``[name, passes, power W, latency s, margin dB
    or None]``."""

    length_m: float
    chosen: int
    options: list = field(default_factory=list)  # [class name, passes, power W, latency s, margin dB or None]


def choose_classes(lengths_m: np.ndarray, candidates: tuple, objective: str = "power") -> tuple[np.ndarray, list]:
    """For each length, the index of the candidate that closes (its report passes) at the
    least power per link (``objective="latency"``: the least one-way latency), ties to the
    other figure; a length no candidate closes gets the candidate with the best margin
    and is reported. Each candidate is evaluated once per length bucket, and a candidate
    that fails at a length is taken to fail at every longer one (loss grows with length),
    which bounds the cost: at most :data:`phy.topology.rollup.MAX_EVALUATIONS` evaluations
    not already cached, else :class:`phy.ConfigError` (coarsen the candidates'
    ``resolution_m``). Returns (index per length, one :class:`ClassChoice` per distinct
    length)."""
    if objective not in ("power", "latency"):
        raise ConfigError(f"objective must be 'power' or 'latency', got {objective!r}")
    if not candidates:
        raise ConfigError("choose_classes needs at least one candidate link class")
    L = np.asarray(lengths_m, dtype=float)
    fine = min(c.resolution_m for c in candidates)
    keys = np.round(np.ceil(L / fine - 1e-9) * fine, 9)
    uniq, inv = np.unique(keys, return_inverse=True)
    failed_at = [math.inf] * len(candidates)
    choices = []
    fresh = 0
    for u in uniq:
        opts = []
        for k, c in enumerate(candidates):
            if u >= failed_at[k]:
                opts.append([c.name, False, math.inf, math.inf, None])
                continue
            if c.fixed is None and c.bucket(float(u)) not in c._cache:
                fresh += 1
                if fresh > MAX_EVALUATIONS:
                    raise ConfigError(f"choosing classes for {uniq.size} distinct lengths needs more than "
                                      f"{MAX_EVALUATIONS} link evaluations; coarsen the candidates' resolution_m")
            r = c.report(float(u))
            if not r.passes:
                failed_at[k] = min(failed_at[k], c.bucket(float(u)))
            opts.append([c.name, bool(r.passes), float(r.power_w), float(r.latency_s), float(r.margin_db)])
        ok = [k for k, o in enumerate(opts) if o[1]]
        if ok:
            a, b = (2, 3) if objective == "power" else (3, 2)
            best = min(ok, key=lambda k: (opts[k][a], opts[k][b]))
        else:
            best = max(range(len(opts)), key=lambda k: -math.inf if opts[k][4] is None else opts[k][4])
        choices.append(ClassChoice(float(u), best, opts))
    return np.array([choices[i].chosen for i in inv], dtype=np.int64), choices
