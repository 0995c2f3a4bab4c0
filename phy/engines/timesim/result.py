"""What a time-domain run measured (:class:`SimulationResult`), and how the kernel's
counters become it (:func:`assemble`: error ratios with their intervals, bursts, the CDR's
phase and its lock, the eye and the waveform)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from fec.analysis import BurstModel
from fec.montecarlo import Estimate

from ...errors import CdrLockWarning, ConfigError
from ...serdes import PreparedLink
from . import _kernels as K
from .eye import EyeDiagram, Waveform

__all__ = ["SimulationResult"]


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """What a run measured.

    Attributes
    ----------
    n_ui : int
        UIs counted (after the warm-up).
    modulation : str
    symbol_errors : int
        Data symbols wrong (after the postcoder when precoded).
    detector_errors : int
        Decisions at the slicer that differ from the sent symbol.
    bit_errors : int
        Data bits wrong (Gray map for PAM4).
    ber, ser : fec.montecarlo.Estimate
        Bit and symbol error ratios with exact 95 % intervals.
    error_ui : ndarray of int64
        UI index of each detector error (up to ``max_errors_recorded``).
    error_levels : ndarray of int8
        Its level error (decided minus sent symbol index).
    errors_truncated : bool
        More detector errors happened than were recorded.
    burst_span_counts : ndarray
        Bursts by span in UI (index = span; the last bin collects longer ones).
    n_bursts : int
    eye : EyeDiagram or None
    waveform : Waveform or None
    cdr_phase_mean_s, cdr_phase_rms_s : float
        Mean and rms of the CDR phase (relative to the starting phase) over the counted UIs.
    link : PreparedLink or None
        None from a run through IBIS-AMI models' ``AMI_GetWave`` (its ``config`` holds what
        the run learnt: the sampling, the delay, the slicer's levels).
    config : dict
    cdr_locked : bool or None
        Whether the clock recovery stayed within ``Cdr.lock_bound_ui`` of its start (None
        for a fixed phase). When it did not, ``ber`` and ``ser`` hold NaN (the counts are
        kept) and a :class:`phy.errors.CdrLockWarning` says so.
    cdr_phase_min_s, cdr_phase_max_s : float
        The CDR phase's extremes over the counted UIs (s, from its start).
    cdr_unlocked_at_ui : int or None
        The first counted UI beyond the lock bound.
    """

    n_ui: int
    modulation: str
    symbol_errors: int
    detector_errors: int
    bit_errors: int
    ber: Estimate
    ser: Estimate
    error_ui: np.ndarray
    error_levels: np.ndarray
    errors_truncated: bool
    burst_span_counts: np.ndarray
    n_bursts: int
    eye: EyeDiagram | None
    waveform: Waveform | None
    cdr_phase_mean_s: float
    cdr_phase_rms_s: float
    link: PreparedLink
    config: dict = field(default_factory=dict)
    cdr_locked: bool | None = None
    cdr_phase_min_s: float = 0.0
    cdr_phase_max_s: float = 0.0
    cdr_unlocked_at_ui: int | None = None

    @property
    def bits_per_symbol(self) -> int:
        return 2 if self.modulation == "pam4" else 1

    def burst_model(self, max_span: int = 256) -> BurstModel:
        """The measured bursts of detector errors as a :class:`fec.BurstModel` (each
        distinct level-error pattern with its frequency), for :func:`fec.burst_errors`.

        A burst ends after ``gap`` correct decisions in a row, the same rule the run used.
        Needs every error recorded (``errors_truncated`` False)."""
        if self.errors_truncated:
            raise ConfigError("not every error was recorded: raise max_errors_recorded to build a burst model")
        if self.error_ui.size == 0:
            raise ConfigError("the run saw no errors: there are no bursts to model")
        gap = self.config["burst_gap_ui"]
        pos, val = self.error_ui, self.error_levels.astype(np.int64)
        starts = np.flatnonzero(np.concatenate([[True], np.diff(pos) > gap]))
        ends = np.concatenate([starts[1:], [pos.size]])
        counts: dict[tuple, int] = {}
        for s, e in zip(starts, ends):
            span = int(pos[e - 1] - pos[s] + 1)
            if span > max_span:
                continue
            pat = np.zeros(span, dtype=np.int64)
            pat[pos[s:e] - pos[s]] = val[s:e]
            counts[tuple(pat)] = counts.get(tuple(pat), 0) + 1
        pats = tuple(np.array(k, dtype=np.int64) for k in counts)
        n = np.array(list(counts.values()), dtype=float)
        rate = starts.size / self.n_ui
        return BurstModel(pats, n / n.sum(), float(1 - n.sum() / starts.size), "measured", rate, self.modulation)

    def to_dict(self) -> dict:
        return {
            "n_ui": self.n_ui,
            "modulation": self.modulation,
            "symbol_errors": self.symbol_errors,
            "detector_errors": self.detector_errors,
            "bit_errors": self.bit_errors,
            "ber": self.ber.to_dict(),
            "ser": self.ser.to_dict(),
            "errors_recorded": int(self.error_ui.size),
            "errors_truncated": self.errors_truncated,
            "n_bursts": self.n_bursts,
            "burst_span_counts": self.burst_span_counts.tolist(),
            "cdr_phase_mean_s": self.cdr_phase_mean_s,
            "cdr_phase_rms_s": self.cdr_phase_rms_s,
            "cdr_locked": self.cdr_locked,
            "cdr_phase_min_s": self.cdr_phase_min_s,
            "cdr_phase_max_s": self.cdr_phase_max_s,
            "cdr_unlocked_at_ui": self.cdr_unlocked_at_ui,
            "eye": None if self.eye is None else self.eye.to_dict(),
            "link": None if self.link is None else self.link.to_dict(),
            "config": self.config,
        }


def _lock(cdr, fstate, istate, spu: int, ber: Estimate, ser: Estimate):
    """(locked, first UI unlocked, ber, ser): a loop that left its eye makes the ratios NaN
    (the counts stay) and says so in a :class:`phy.CdrLockWarning`."""
    if cdr.kind == "fixed":
        return None, None, ber, ser
    if istate[K.I_UNLOCK] < 0:
        return True, None, ber, ser
    lost_at = int(istate[K.I_UNLOCK])
    swing = max(abs(fstate[K.F_PHMIN]), abs(fstate[K.F_PHMAX])) / spu
    warnings.warn(CdrLockWarning(
        f"the {cdr.kind} clock recovery lost lock: its phase moved {swing:.2f} UI from where it started "
        f"(bound {cdr.lock_bound_ui:g} UI), first at UI {lost_at}; the symbol error ratio of this run "
        f"({ser.value:.3g}) is that of a receiver that slipped, not of the link: it is reported as NaN. "
        "A loop too slow for the jitter it must follow (sinusoidal jitter near or above its natural frequency, "
        "phy.Cdr's docstring) slips on a narrow eye: raise kp_ui and ki_ui; one carried off by its own "
        "detector's noise: lower them; or compare with a fixed phase"), stacklevel=4)
    nan = float("nan")
    return False, lost_at, Estimate(ber.count, ber.trials, nan, nan, nan), Estimate(ser.count, ser.trials, nan, nan, nan)


def assemble(lk: PreparedLink, tx, cdr, st, config: dict, warmup: int) -> SimulationResult:
    """The result of a run from the kernel's state ``st`` (:class:`phy.engines.timesim.
    simulate._State`)."""
    istate, fstate = st.istate, st.fstate
    if istate[K.I_LASTERR] >= 0:  # close the last burst
        span = istate[K.I_LASTERR] - istate[K.I_BSTART] + 1
        st.burst_hist[min(span, st.burst_hist.size - 1)] += 1
        istate[K.I_NBURST] += 1
    analog = lk.analog
    spu, dt = analog.samples_per_ui, analog.dt_s
    counted = int(istate[K.I_NCOUNT])
    nrec = int(istate[K.I_NREC])
    ph_mean = fstate[K.F_PHSUM] / max(counted, 1)
    ph_rms = np.sqrt(max(fstate[K.F_PHSQ] / max(counted, 1) - ph_mean**2, 0.0))
    eye = None
    if st.eye_on:
        times = (np.arange(spu) - spu // 2) * dt
        eye = EyeDiagram(st.eye_hist, times, st.vlo + st.vstep * np.arange(st.eye_hist.shape[1] + 1),
                         lk.thresholds_v, lk.h0_v * tx.levels, st.col_err, st.cross, counted, 1.0 / analog.baud_hz,
                         tx.modulation)
    wave = None
    if st.wave_raw.shape[0]:
        nw = int(istate[K.I_NWAVE])
        wave = Waveform(st.wave_raw[:nw], st.wave_z[:nw], st.wave_meta[:nw, 0], st.wave_meta[:nw, 1], dt, warmup)
    bps = 2 if tx.order == 4 else 1
    ber = Estimate.of(int(istate[K.I_BITERR]), counted * bps)
    ser = Estimate.of(int(istate[K.I_DATAERR]), counted)
    locked, lost_at, ber, ser = _lock(cdr, fstate, istate, spu, ber, ser)
    return SimulationResult(
        n_ui=counted, modulation=tx.modulation, symbol_errors=int(istate[K.I_DATAERR]),
        detector_errors=int(istate[K.I_SYMERR]), bit_errors=int(istate[K.I_BITERR]), ber=ber, ser=ser,
        error_ui=st.err_pos[:nrec].copy(), error_levels=st.err_val[:nrec].copy(),
        errors_truncated=bool(istate[K.I_SYMERR] > nrec), burst_span_counts=st.burst_hist,
        n_bursts=int(istate[K.I_NBURST]), eye=eye, waveform=wave, cdr_phase_mean_s=float(ph_mean * dt),
        cdr_phase_rms_s=float(ph_rms * dt), link=lk, config=config, cdr_locked=locked,
        cdr_phase_min_s=float(fstate[K.F_PHMIN] * dt), cdr_phase_max_s=float(fstate[K.F_PHMAX] * dt),
        cdr_unlocked_at_ui=lost_at,
    )
