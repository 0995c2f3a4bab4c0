"""Statistical eye: the exact distribution of the signal at the slicer, without Monte Carlo.

At a sampling offset ``tau`` from the receiver's sampling point, the slicer sees
``a_0 c_0(tau) + ISI(tau) + XT(tau) + Q + C + N``:

* ``c_k(tau)`` are the symbol-spaced cursors of the equalised pulse (front end, Tx FFE),
  through the Rx FFE, less what the DFE removes (its taps times the nominal main cursor,
  decisions assumed right);
* ``ISI`` is the sum over the other cursors of independent uniform symbols: its
  distribution is the exact convolution of each cursor's ``M`` equally likely values,
  computed on a voltage grid (linear split between neighbouring bins);
* ``XT`` likewise from the aggressors' cursors (independent data), either averaged over
  the aggressor's symbol phase or at its worst phase;
* ``Q`` is a real receiver's ADC quantisation (:mod:`phy.serdes.impairments`): each
  sample off by a uniform error within half a step, independent from sample to sample,
  through the Rx FFE (a sum of uniforms of widths ``|w_t| Delta``, bounded, not Gaussian);
* ``C`` is the sampling clock's error (jitter and wander) times the waveform's slope, a
  slope that depends on the data: a Gaussian scale mixture (its characteristic function
  from the exact distribution of the slope), heavier-tailed than a Gaussian of its
  variance;
* ``N`` is Gaussian: receiver noise through the Rx FFE, transmitter noise through the
  whole path, the ADC's clipping beyond full scale (a Gaussian of the clipping's exact
  power: right while clipping is rare, as at the default 1e-6; a full scale that clips
  often, say a crest factor of 2, makes sparse large errors whose tail this understates:
  the simulator models them), and random jitter through the slope of the response to each edge
  (independent per edge, as :func:`phy.simulate` models it), or to each symbol in 802.3
  COM's model (``Jitter(model="symbol")``: the equalised pulse's slope ``h_J``, 93A-31),
  whose dual-Dirac ``+-A_DD`` is a discrete term like the ISI (93A-40). Duty-cycle
  distortion splits the eye in two by the parity of the sampled symbol; sinusoidal
  jitter mixes shifted copies of it.

With symbol jitter the sampled symbol's own pulse moves too: its main cursor is read
exactly at each ``+-A_DD`` and at Gauss-Hermite nodes of the random jitter, times the
sampled level (COM's ``h_J`` counts it as independent data, which read the error ratio a
few % high). The ISI beyond the cursors kept (64 before, 512 after) is a Gaussian of its
exact variance (``sigma_v["isi_tail"]``).

From it (:class:`StatEye`, in :mod:`phy.engines.stateye_result`): the symbol error ratio at the thresholds, the error-ratio map over time and
voltage, each eye's height and width at a target, vertical and horizontal bathtubs.

Agreement with the simulator (the bound, ``benchmarks/bench_eye_vs_sim.py``): its SER is
the error ratio at the slicer with past decisions right, which ``phy.simulate(...,
dfe_feedback="sent")`` measures (the rate the real DFE's bursts start at is lower where
errors cluster: 5 to 15 % at 1e-2). With each shared through channel's segment, its
noise scaled to SER 1e-2 or 1e-3, the two agree within 4 % (most within 2 %, over 2e6 to
3e7 UI). Where jitter rather than noise sets the error ratio, the Gaussian of the other
symbols' random jitter understates its tail (half the simulator's SER at 1e-4 with a
0.06 UI dual Dirac sampled 0.2 UI off the peak and little noise); a link segment says so
in its notes.
"""

from __future__ import annotations

import numpy as np

from .._validate import integer
from ..errors import ConfigError
from ..serdes import (
    Cdr,
    Jitter,
    Noise,
    Receiver,
    Transmitter,
    prepare_link,
)
from ..serdes.limits import check_bytes, check_jitter
from ._stateye_terms import (
    _clock_cf,
    _column_cdf,
    _crosstalk_terms,
    _Cursors,
    _discrete_terms,
    _gaussian_terms,
    _jitter_slope,
    _receiver_terms,
    _span,
    _tail_isi_variance,
    _with_main_cursor_jitter,
    _with_sinusoidal_jitter,
)
from .stateye_result import StatEye

__all__ = ["StatEye", "statistical_eye"]


def _kept_columns(at, offsets: np.ndarray, jitter: Jitter, columns: str, nb: int) -> np.ndarray:
    """The columns whose distributions are computed (the grid spans them all), after checking
    the memory they take: one (P, bins) array per eye (two with DCD), 16 shifted copies with
    sinusoidal jitter, their mixture and the plot's map."""
    keep = np.arange(at.spu)
    if columns == "sampling":
        # sinusoidal jitter mixes shifted copies of the columns it reaches (and their
        # neighbours, between which it interpolates); without it the sampling point alone
        reach = int(np.ceil(jitter.sj_amplitude_s / at.dt)) + 1 if jitter.sj_amplitude_s else 0
        keep = np.flatnonzero(np.abs(offsets) <= reach)
    copies = (2 if jitter.dcd_s else 1) * (16 if jitter.sj_amplitude_s else 1) + 2
    check_bytes(8.0 * copies * keep.size * (nb | 1), f"a statistical eye of {keep.size} columns x {nb | 1} bins")
    return keep


def _gaussian_sigma(at, lk, tx: Transmitter, jitter: Jitter, slope, d_power) -> tuple[float, dict, float]:
    """The Gaussian part of the slicer's noise: ``(sigma (V), each term's rms by name, the
    clock error's variance (V^2), which is not Gaussian and not in sigma)``."""
    var_rx, var_tx, var_j, var_j_main = _gaussian_terms(at, lk, jitter, slope, d_power)
    var_q, var_clip, var_clk = _receiver_terms(at, lk, tx)
    var_tail = _tail_isi_variance(at, lk, tx)
    # the main cursor's own random jitter is in its term (_with_main_cursor_jitter), not here
    sigma = float(np.sqrt(var_rx + var_tx + max(var_j - var_j_main, 0.0) + var_clip + var_tail))
    sigmas = {"rx": float(np.sqrt(var_rx)), "tx": float(np.sqrt(var_tx)), "jitter": float(np.sqrt(var_j))}
    if var_tail > 0:
        sigmas["isi_tail"] = float(np.sqrt(var_tail))
    if not lk.impairments.ideal:
        sigmas.update(adc=float(np.sqrt(var_q + var_clip)), clock=float(np.sqrt(var_clk)))
    return sigma, sigmas, var_clk


def statistical_eye(
    link,
    *,
    baud_hz: float | None = None,
    tx: Transmitter | None = None,
    rx: Receiver | None = None,
    noise: Noise | None = None,
    jitter: Jitter | None = None,
    cdr: Cdr | None = None,
    samples_per_ui: int = 32,
    crosstalk: str = "average",
    n_bins: int = 4096,
    n_cursors: int | None = None,
    columns: str = "all",
) -> StatEye:
    """The statistical eye of a link, configured as for :func:`phy.simulate`.

    Parameters
    ----------
    link, baud_hz, tx, rx, noise, jitter, cdr, samples_per_ui
        As for :func:`phy.simulate` (the CDR's phase is the sampling point; a CDR's
        wander is not modelled here).
    crosstalk : {"average", "worst"}
        Aggressor data at a symbol phase averaged uniformly (asynchronous aggressors) or at
        the phase that maximises the peak crosstalk.
    n_bins : int
        Voltage grid points.
    n_cursors : int, optional
        Post-cursors kept (default: all the pulse record holds).
    columns : {"all", "sampling"}
        Time offsets computed: the whole UI (eye widths, horizontal bathtub), or only the
        sampling point and the columns its deterministic jitter reaches (error ratios and
        heights at the sampling point, several times faster).

    Returns
    -------
    StatEye
        The cumulative voltage distribution at each time offset, with the levels,
        thresholds and noise; error ratios, heights and widths are its methods.
    """
    tx, rx, noise, jitter, cdr = tx or Transmitter(), rx or Receiver(), noise or Noise(), jitter or Jitter(), cdr or Cdr()
    if crosstalk not in ("average", "worst"):
        raise ConfigError(f"crosstalk must be 'average' or 'worst', got {crosstalk!r}")
    if columns not in ("all", "sampling"):
        raise ConfigError(f"columns must be 'all' or 'sampling', got {columns!r}")
    nb = integer(n_bins, "n_bins", 256, 1 << 20)
    lk = prepare_link(link, baud_hz=baud_hz, tx=tx, rx=rx, noise=noise, cdr=cdr, samples_per_ui=samples_per_ui)
    check_jitter(jitter, lk.pulse.baud_hz)
    at = _Cursors(lk, tx, rx, n_cursors)
    offsets = np.arange(at.spu) - at.spu // 2
    keep = _kept_columns(at, offsets, jitter, columns, nb)
    slope, d_power = _jitter_slope(lk, tx, jitter)
    main, isi_sets, dcd_sets, dd_sets, main_at = _discrete_terms(at, lk, tx, jitter, slope, offsets)
    sigma, sigmas, var_clk = _gaussian_sigma(at, lk, tx, jitter, slope, d_power)
    q_widths = np.abs(at.w) * lk.adc_step_v  # each tap's share of the quantisation, uniform
    xt_sets, var_xt_left = _crosstalk_terms(at, lk.pulse.aggressors, offsets, crosstalk, tx.levels)
    if var_xt_left > 0:  # the aggressors' cursors beyond their windows: a Gaussian
        sigma = float(np.hypot(sigma, np.sqrt(var_xt_left)))
        sigmas["xt_tail"] = float(np.sqrt(var_xt_left))
    span = _span(isi_sets, dcd_sets, dd_sets, xt_sets, main, 10 * sigma + 0.5 * q_widths.sum() + 10 * np.sqrt(var_clk))
    span *= 1 + 16 / nb  # a few bins beyond the true support, whatever the eye
    if not (np.isfinite(span) and span > 0):  # the kernels index the grid by voltage over its step
        raise ConfigError(f"the statistical eye's voltage grid would span {span:.3g} V: its terms are not finite")
    v = np.linspace(-span, span, nb | 1)  # odd: 0 V is a grid point
    clk_cf = _clock_cf(at, lk, tx, v[1] - v[0])

    def eye_cdf(sign: float) -> np.ndarray:
        return np.array([_column_cdf(isi_sets[i] + sign * dcd_sets[i] if dcd_sets else isi_sets[i], at.main,
                                     dd_sets[i] if dd_sets else None, [pp[i] for pp in xt_sets], tx.levels, v, sigma,
                                     q_widths, clk_cf)
                         for i in keep])

    main = main[keep]
    # DCD: the two parities of the sampled symbol are two eyes, each with its own cursors
    # (its main cursor too); otherwise one eye
    if dcd_sets:
        d_main = np.array([dcd_sets[i][at.main] for i in keep])
        comps = [(0.5, eye_cdf(+1.0), main + d_main), (0.5, eye_cdf(-1.0), main - d_main)]
    else:
        comps = [(1.0, eye_cdf(0.0), main)]
    comps = _with_sinusoidal_jitter(comps, jitter, at.dt, keep.size)
    comps = _with_main_cursor_jitter(comps, jitter, main_at, keep)
    cdf = sum(wgt * c_ for wgt, c_, _ in comps)
    main = sum(wgt * m_ for wgt, _, m_ in comps)
    return StatEye(offsets[keep] * at.dt, v, cdf, main, tx.levels, lk.thresholds_v, sigmas, 1.0 / lk.pulse.baud_hz,
                   lk, tuple(comps) if len(comps) > 1 else (), isi_sets[at.spu // 2].copy())
