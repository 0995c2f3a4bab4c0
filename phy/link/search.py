"""The designer's choices searched (FEC or none, interleave, precoding, retry, SerDes
options) on one medium's eyes: every point, the Pareto set, the lowest latency that
passes."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .equalise import segments
from .parts import Retry
from .report import LinkReport, _report
from .spec import LinkSpec


# ----------------------------------------------------------------------------- search
@dataclass(frozen=True)
class LinkSearch:
    """Every point searched, the Pareto set among those that pass (lower latency, higher
    usable bandwidth, lower energy per bit), and the best: the lowest latency that passes
    (ties: more bandwidth, then less energy). Indices into ``points``."""

    points: tuple
    pareto: tuple
    best: int | None

    @property
    def best_report(self) -> LinkReport | None:
        return None if self.best is None else self.points[self.best]

    def to_dict(self) -> dict:
        return {"points": [p.to_dict() for p in self.points], "pareto": list(self.pareto), "best": self.best}

    def table(self) -> str:
        rows = [(f"{'':2}{'FEC':<18}{'I':>2} {'pre':>4} {'retry':>5} {'latency ns':>11} {'usable Gb/s':>12} "
                f"{'pJ/bit':>7} {'post BER':>9}  pass")]
        for i, p in enumerate(self.points):
            mark = "*" if i == self.best else ("p" if i in self.pareto else " ")
            rows.append(f"{mark:2}{(p.fec or 'none'):<18}{p.interleave:>2} {('y' if p.precoding else 'n'):>4} "
                        f"{('y' if p.retry else 'n'):>5} {p.latency_s * 1e9:>11.2f} "
                        f"{p.usable_bandwidth_bps / 1e9:>12.2f} {p.energy_j_per_bit * 1e12:>7.3g} "
                        f"{p.post_fec_ber:>9.2g}  {'yes' if p.passes else 'no'}")
        return "\n".join(rows)


def search_link(
    spec: LinkSpec,
    *,
    fec_codes=(None, "LL272", "KR4", "KP4"),
    interleaves=(1, 2),
    precoding=(False, True),
    retry=(None, Retry()),
    serdes=None,
) -> LinkSearch:
    """Search FEC, interleaving, precoding, retry and SerDes choices for ``spec``'s medium.

    Each SerDes option's eyes are computed once; the FEC choices reuse them. Interleaving
    is skipped without an FEC, precoding for NRZ.

    Parameters
    ----------
    spec : LinkSpec
        The link whose medium is searched; its other choices are replaced.
    fec_codes : sequence of str or None, optional
        FEC codes tried (None: no FEC; default None, LL272, KR4, KP4).
    interleaves : sequence of int, optional
        FEC interleave depths tried (default 1 and 2).
    precoding : sequence of bool, optional
        Precoding off and on (default both; PAM4 only).
    retry : sequence of Retry or None, optional
        Link-level retry choices (default none and ``Retry()``).
    serdes : sequence of Serdes, optional
        SerDes options (None: ``spec``'s own).

    Returns
    -------
    LinkSearch
        Every point's :class:`LinkReport`, the Pareto set of those that pass (latency,
        usable bandwidth, energy per bit) and the best (least latency).
    """
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"search_link needs a LinkSpec, got {type(spec).__name__}")
    options = [spec.serdes] if serdes is None else list(serdes)
    if not options:
        raise ConfigError("search_link needs at least one Serdes option")
    points = []
    for sd in options:
        base = spec.with_(serdes=sd)
        eyes = segments(base)
        for code in fec_codes:
            for il in interleaves if code is not None else (1,):
                for pre in precoding if spec.modulation == "pam4" else (False,):
                    for rt in retry:
                        s = base.with_(fec=code, interleave=il, precoding=pre, retry=rt)
                        points.append(_report(s, eyes))
    ok = [i for i, p in enumerate(points) if p.passes]

    def dominated(i, j):  # j dominates i
        a, b = points[i], points[j]
        ge = (b.latency_s <= a.latency_s and b.usable_bandwidth_bps >= a.usable_bandwidth_bps
              and b.energy_j_per_bit <= a.energy_j_per_bit)
        gt = (b.latency_s < a.latency_s or b.usable_bandwidth_bps > a.usable_bandwidth_bps
              or b.energy_j_per_bit < a.energy_j_per_bit)
        return ge and gt

    pareto = tuple(i for i in ok if not any(dominated(i, j) for j in ok if j != i))
    best = min(ok, key=lambda i: (points[i].latency_s, -points[i].usable_bandwidth_bps,
                                  points[i].energy_j_per_bit)) if ok else None
    return LinkSearch(tuple(points), pareto, best)
