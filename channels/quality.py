"""Quality of S-parameter data: passivity, reciprocity, causality, and passivity enforcement.

The metrics are those of IEEE 370-2020's initial frequency-domain checks (PQMi,
RQMi, CQMi, in percent, with the standard's good / acceptable / inconclusive / poor
bands), as scikit-rf implements them in
:class:`skrf.calibration.deembedding.IEEEP370_FD_QM`. scikit-rf loops over
frequencies in Python (about 0.6 s for a 6,000-point four-port); the versions here
are the same formulas vectorised with numpy, and the test suite checks them against
scikit-rf's to 1e-9. ``p370_reference(network)`` calls scikit-rf's directly.

On top of the percentages the report gives the raw numbers a link engineer reads
first: the largest singular value of S over frequency (above 1: the data create
energy) and the largest ``|S_ij - S_ji|``.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
import skrf as rf

from . import _tscache
from .errors import ChannelError, ChannelQualityWarning

__all__ = ["QualityReport", "check_quality", "enforce_passivity", "p370_reference"]

# IEEE 370 initial-check constants (as in scikit-rf's IEEEP370_FD_QM)
_PQM_A, _PQM_B = 1.00001, 0.1
_RQM_B, _RQM_C = 0.1, 1e-6


def _band(value: float, limits: tuple[float, float, float]) -> str:
    poor, inconclusive, acceptable = limits
    if value <= poor:
        return "poor"
    if value <= inconclusive:
        return "inconclusive"
    if value <= acceptable:
        return "acceptable"
    return "good"


@dataclass(frozen=True)
class QualityReport:
    """IEEE 370 quality metrics of a network and the raw numbers behind them.

    Attributes
    ----------
    passivity_pct, reciprocity_pct, causality_pct : float
        IEEE 370 PQMi, RQMi, CQMi in percent (100 is perfect).
    passivity, reciprocity, causality : str
        The standard's evaluation of each: ``good``, ``acceptable``,
        ``inconclusive`` or ``poor``.
    max_singular_value : float
        Largest singular value of S over all frequencies (<= 1 for passive data).
    max_singular_value_f_hz : float
        Where it occurs.
    max_reciprocity_error : float
        Largest ``|S_ij - S_ji|``.
    """

    passivity_pct: float
    reciprocity_pct: float
    causality_pct: float
    passivity: str
    reciprocity: str
    causality: str
    max_singular_value: float
    max_singular_value_f_hz: float
    max_reciprocity_error: float

    @property
    def ok(self) -> bool:
        """True when all three IEEE 370 evaluations are ``good``."""
        return self.passivity == self.reciprocity == self.causality == "good"

    def problems(self) -> list[str]:
        """One sentence per metric that is not ``good``."""
        out = []
        if self.passivity != "good":
            out.append(
                f"passivity {self.passivity} (IEEE 370 PQM {self.passivity_pct:.2f}%, max singular "
                f"value {self.max_singular_value:.5f} at {self.max_singular_value_f_hz / 1e9:.3f} GHz)"
            )
        if self.reciprocity != "good":
            out.append(
                f"reciprocity {self.reciprocity} (IEEE 370 RQM {self.reciprocity_pct:.2f}%, "
                f"max |Sij-Sji| {self.max_reciprocity_error:.3g})"
            )
        if self.causality != "good":
            out.append(f"causality {self.causality} (IEEE 370 CQM {self.causality_pct:.2f}%)")
        return out

    def to_dict(self) -> dict:
        return {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in asdict(self).items()}


# How far the largest singular value from eigvalsh(S^H S) may be from the SVD's: the two
# agree to about 1e-15 relative (both backward stable); this margin is a million times that.
_SV_MARGIN = 1e-9
# Largest |S_ij| for which S^H S is formed: its entries then stay below 1e300 (and a channel's
# are below a few units); beyond it the SVD runs on every frequency.
_GRAM_SAFE = 1e145


def _largest_sv(s: np.ndarray) -> np.ndarray:
    """The largest singular value of S at each frequency where it can matter, as
    ``np.linalg.svd`` gives it; elsewhere 0.

    It matters where it may exceed the IEEE 370 threshold ``_PQM_A`` and where it may be
    the largest over frequency. ``sqrt(eigvalsh(S^H S))`` (half the time of the SVD) finds
    those frequencies, with :data:`_SV_MARGIN` to spare; the SVD then runs on them alone
    (the SVD of a batch is the SVD of each matrix, so these values are bit for bit those of
    the full SVD), so that the passivity figures are the full SVD's exactly.
    """
    if s.shape[0] == 0 or np.abs(s).max() > _GRAM_SAFE:
        # S^H S would overflow (LinAlgError in eigvalsh): the SVD, which scales its input
        return np.linalg.svd(s, compute_uv=False)[:, 0]
    gram = np.conj(np.swapaxes(s, 1, 2)) @ s
    est = np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[:, -1], 0.0))
    need = np.flatnonzero((est > _PQM_A - _SV_MARGIN) | (est >= est.max() - 2 * _SV_MARGIN))
    sv = np.zeros(s.shape[0])
    sv[need] = np.linalg.svd(s[need], compute_uv=False)[:, 0]
    return sv


def _passivity_pct(s: np.ndarray) -> tuple[float, np.ndarray]:
    """IEEE 370 PQMi and the largest singular value per frequency (0 where it is neither
    above the threshold nor near the largest: see :func:`_largest_sv`)."""
    sv = _largest_sv(s)
    pw = np.where(sv > _PQM_A, (sv - _PQM_A) / _PQM_B, 0.0)
    nf = s.shape[0]
    return max(nf - pw.sum(), 0.0) / nf * 100.0, sv


def _reciprocity_pct(s: np.ndarray) -> tuple[float, float]:
    n = s.shape[1]
    diff = np.abs(s - np.swapaxes(s, 1, 2))
    rm = diff.sum(axis=(1, 2)) / (n * (n - 1))
    rw = np.where(rm > _RQM_C, (rm - _RQM_C) / _RQM_B, 0.0)
    nf = s.shape[0]
    return max(nf - rw.sum(), 0.0) / nf * 100.0, float(diff.max())


def _causality_pct(s: np.ndarray) -> float:
    """IEEE 370 CQMi: the share of clockwise rotation of each S_ij in the complex plane."""
    v = np.diff(s, axis=0)
    r = v[1:].real * v[:-1].imag - v[1:].imag * v[:-1].real
    total = np.abs(r).sum(axis=0)
    positive = np.where(r > 0, r, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cqm = np.where(total > 0, positive / total, 0.0) * 100.0
    # A constant S_ij counts as causal (as in IEEE 370 / scikit-rf); so does one that
    # is numerically zero (below 1e-9 everywhere: synthesised isolation, whose
    # rounding noise rotates at random and would otherwise read as non-causal).
    constant = (np.ptp(s.real, axis=0) + np.ptp(s.imag, axis=0) == 0) | (np.abs(s).max(axis=0) < 1e-9)
    cqm = np.where(constant, 100.0, cqm)
    return float(cqm.min())


def check_quality(ntwk: rf.Network) -> QualityReport:
    """IEEE 370 initial quality metrics of a multi-port network (vectorised).

    Reports are remembered by the content of S and f (:data:`channels._tscache.QUALITY`):
    loading a copy of a file again costs a hash.

    Raises
    ------
    ChannelError
        When S is empty or holds NaN or infinite values (no metric means anything then).
    """
    s = np.asarray(ntwk.s)
    if s.ndim != 3 or s.shape[0] == 0:
        raise ChannelError(f"{ntwk.name or 'network'}: no S-parameters to check (shape {s.shape})")
    bad = ~np.isfinite(s).all(axis=(1, 2))
    if bad.any():
        i = int(np.argmax(bad))
        raise ChannelError(f"{ntwk.name or 'network'}: NaN or infinite S-parameters at {int(bad.sum())} frequency "
                           f"points, first at {float(ntwk.f[i]):.6g} Hz: no quality metric applies")
    cache = _tscache.QUALITY
    key = _tscache.array_key(ntwk.s, ntwk.f) if cache.max_size else None
    report = cache.get(key) if key is not None else None
    if report is None:
        report = _check_quality(ntwk)
        if key is not None:
            cache.put(key, report, 1)
    return report


def _check_quality(ntwk: rf.Network) -> QualityReport:
    s = ntwk.s
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # huge values: inf/NaN metrics, said so below
            pqm, sv = _passivity_pct(s)
            rqm, rmax = _reciprocity_pct(s)
            cqm = _causality_pct(s)
    except np.linalg.LinAlgError:
        raise ChannelError(f"{ntwk.name or 'network'}: the passivity check (largest singular value of S) did not "
                           f"converge; largest |S| {float(np.abs(s).max()):.4g}") from None
    i = int(np.argmax(sv))
    return QualityReport(
        passivity_pct=float(pqm),
        reciprocity_pct=float(rqm),
        causality_pct=float(cqm),
        passivity=_band(pqm, (80.0, 99.0, 99.9)),
        reciprocity=_band(rqm, (80.0, 99.0, 99.9)),
        causality=_band(cqm, (20.0, 50.0, 80.0)),
        max_singular_value=float(sv[i]),
        max_singular_value_f_hz=float(ntwk.f[i]),
        max_reciprocity_error=rmax,
    )


def p370_reference(ntwk: rf.Network) -> dict:
    """scikit-rf's own IEEE 370 initial checks (slow; the oracle for :func:`check_quality`)."""
    from skrf.calibration.deembedding import IEEEP370_FD_QM

    return IEEEP370_FD_QM().check_se_quality(ntwk)


def enforce_passivity(ntwk: rf.Network) -> rf.Network:
    """Clip every singular value of S above 1 to 1, frequency by frequency.

    The same construction as scikit-rf's ``IEEEP370_TD_QM.create_passive``,
    vectorised. The result is passive by construction; the change is as small as
    the excess (a 1.0005 singular value moves by 5e-4).
    """
    out = ntwk.copy()
    hot = np.linalg.svd(ntwk.s, compute_uv=False)[:, 0] > 1.0
    if hot.any():
        u, d, vh = np.linalg.svd(ntwk.s[hot])
        out.s[hot] = (u * np.minimum(d, 1.0)[:, None, :]) @ vh
    return out


def warn_quality(report: QualityReport, name: str, stacklevel: int = 3) -> None:
    """Issue one :class:`ChannelQualityWarning` listing what is not ``good``."""
    problems = report.problems()
    if problems:
        warnings.warn(
            f"{name}: " + "; ".join(problems), ChannelQualityWarning, stacklevel=stacklevel
        )
