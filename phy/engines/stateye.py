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

From it: the symbol error ratio at the thresholds, the error-ratio map over time and
voltage, each eye's height and width at a target, vertical and horizontal bathtubs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._plot import axes as _axes
from .._validate import integer
from ..errors import ConfigError
from ..serdes import Cdr, Jitter, Noise, PreparedLink, Receiver, Transmitter, prepare_link, step_from_pulse
from .pmf import convolve_centred, discrete_pmf, gauss_convolve, scale_mixture_cf, split_variance, uniform_convolve

__all__ = ["StatEye", "statistical_eye"]


@dataclass(frozen=True, eq=False)
class StatEye:
    """The statistical eye of a link.

    Attributes
    ----------
    time_s : ndarray (P,)
        Offsets from the sampling point (s), one UI wide.
    voltage_v : ndarray (nv,)
        Voltage grid (V) at the slicer.
    cdf : ndarray (P, nv)
        Distribution function of ``ISI + XT + N`` (everything but the main cursor's term)
        at each offset.
    main_v : ndarray (P,)
        Main cursor at each offset, for a full-swing symbol (V).
    levels : ndarray
        Normalised symbol amplitudes.
    thresholds_v : ndarray
    sigma_v : dict
        The Gaussian terms (rms V at the sampling point): ``rx``, ``tx``, ``jitter``.
    link : PreparedLink
    parts : tuple
        With duty-cycle distortion the eye is a mixture of two, one per parity of the
        sampled symbol (alternate Tx edges are early and late), each ``(weight, cdf,
        main_v)``; ``cdf`` and ``main_v`` are then their averages, for plots.
    """

    time_s: np.ndarray
    voltage_v: np.ndarray
    cdf: np.ndarray
    main_v: np.ndarray
    levels: np.ndarray
    thresholds_v: np.ndarray
    sigma_v: dict
    ui_s: float
    link: PreparedLink
    parts: tuple = ()

    @property
    def centre(self) -> int:
        return int(np.argmin(np.abs(self.time_s)))

    def _components(self):
        """``(weight, cdf, main_v)`` of each eye in the mixture (one unless DCD splits it)."""
        return self.parts or ((1.0, self.cdf, self.main_v),)

    def _F(self, p: int, x, cdf=None) -> np.ndarray:
        return np.interp(x, self.voltage_v, (self.cdf if cdf is None else cdf)[p], left=0.0, right=1.0)

    def ser(self, column: int | None = None, thresholds_v=None) -> float:
        """Symbol error ratio with the slicer's thresholds (or others) at a time offset
        (default: the sampling point)."""
        p = self.centre if column is None else column
        th = self.thresholds_v if thresholds_v is None else np.asarray(thresholds_v, dtype=float)
        M = self.levels.size
        total = 0.0
        for wgt, cdf, main in self._components():
            lv = self.levels * main[p]
            err = 0.0
            for m in range(M):
                if m > 0:
                    err += self._F(p, th[m - 1] - lv[m], cdf)
                if m < M - 1:
                    err += 1.0 - self._F(p, th[m] - lv[m], cdf)
            total += wgt * err
        return float(total / M)

    def ser_dfe(self) -> float:
        """Symbol error ratio at the sampling point including DFE error propagation: the
        detector error ratio times the mean errors per burst of the DFE's error chain for
        its first six taps, its transitions taken from this eye and conditioned on the
        data (:func:`phy.engines.dfe_chain.dfe_transitions`; the mean from :func:`fec.analysis.dfe_burst_means`,
        exact for that chain), at most ``1 - 1/M``."""
        ser = self.ser()
        b = self.link.dfe[:6]
        if b.size == 0 or ser <= 0 or not np.all(np.abs(b) < 1):
            return ser
        from fec.analysis import dfe_burst_means

        from .dfe_chain import dfe_transitions

        M = self.levels.size
        errors, _span = dfe_burst_means(b, min(ser, 0.5), "pam4" if M == 4 else "nrz",
                                        transitions=dfe_transitions(self))
        return float(min(ser * errors, 1.0 - 1.0 / M))

    def ber(self, column: int | None = None) -> float:
        """Bit error ratio, Gray coded: errors to a neighbouring level flip one bit of
        ``log2 M``."""
        return self.ser(column) / (2 if self.levels.size == 4 else 1)

    def eye_ber(self, p: int, k: int, v) -> np.ndarray:
        """Error ratio of eye ``k`` (between levels ``k`` and ``k+1``) were its threshold at
        ``v``, at offset column ``p``: ``(P(y_k > v) + P(y_(k+1) < v)) / M``."""
        out = 0.0
        for wgt, cdf, main in self._components():
            lv = self.levels * main[p]
            out = out + wgt * ((1.0 - self._F(p, v - lv[k], cdf)) + self._F(p, v - lv[k + 1], cdf))
        return out / self.levels.size

    def ber_map(self) -> np.ndarray:
        """Error ratio over (time offset, voltage): at each voltage, the eye whose levels
        bracket it (the contour plot's data)."""
        P, nv = self.cdf.shape
        out = np.ones((P, nv))
        for p in range(P):
            lv = self.levels * self.main_v[p]
            for k in range(lv.size - 1):
                sel = (self.voltage_v >= lv[k]) & (self.voltage_v <= lv[k + 1])
                out[p, sel] = self.eye_ber(p, k, self.voltage_v[sel])
        return out

    def heights_v(self, target: float, column: int | None = None) -> np.ndarray:
        """Height of each eye where its error ratio stays at or below ``target`` (V)."""
        p = self.centre if column is None else column
        lv = self.levels * self.main_v[p]
        out = []
        for k in range(lv.size - 1):
            v = np.linspace(lv[k], lv[k + 1], 2001)
            ok = self.eye_ber(p, k, v) <= target
            out.append(float(ok.sum() * (v[1] - v[0])) if ok.any() else 0.0)
        return np.array(out)

    def widths_s(self, target: float) -> np.ndarray:
        """Width of each eye (s): the span of offsets around the sampling point where some
        threshold gives an error ratio at or below ``target``."""
        P = self.time_s.size
        good = np.array([self.heights_v(target, p) > 0 for p in range(P)])  # (P, eyes)
        c = self.centre
        dt = self.time_s[1] - self.time_s[0]
        out = []
        for k in range(good.shape[1]):
            if not good[c, k]:
                out.append(0.0)
                continue
            lo = c
            while lo > 0 and good[lo - 1, k]:
                lo -= 1
            hi = c
            while hi < P - 1 and good[hi + 1, k]:
                hi += 1
            out.append(float((hi - lo + 1) * dt))
        return np.array(out)

    def vertical_bathtub(self, eye: int | None = None, n: int = 401) -> tuple[np.ndarray, np.ndarray]:
        """(threshold voltage, error ratio) across one eye at the sampling point."""
        p = self.centre
        k = (self.levels.size - 1) // 2 if eye is None else int(eye)
        lv = self.levels * self.main_v[p]
        v = np.linspace(lv[k], lv[k + 1], n)
        return v, self.eye_ber(p, k, v)

    def horizontal_bathtub(self) -> tuple[np.ndarray, np.ndarray]:
        """(time offset, symbol error ratio at the slicer thresholds)."""
        return self.time_s, np.array([self.ser(p) for p in range(self.time_s.size)])

    def to_dict(self, target: float = 1e-4) -> dict:
        t, s = self.horizontal_bathtub()
        return {
            "ser": self.ser(),
            "ser_dfe": self.ser_dfe(),
            "ber": self.ber(),
            "target": target,
            "heights_v": self.heights_v(target).tolist(),
            "widths_s": self.widths_s(target).tolist(),
            "sigma_v": dict(self.sigma_v),
            "main_v": float(self.main_v[self.centre]),
            "bathtub_ser": s.tolist(),
            "time_s": t.tolist(),
        }

    def plot(self, ax=None, targets=(1e-3, 1e-6, 1e-9, 1e-12)):
        """BER contours over time (ps) and voltage (mV)."""
        ax = _axes(ax)
        m = np.log10(np.clip(self.ber_map(), 1e-300, 1))
        ax.contourf(self.time_s * 1e12, self.voltage_v * 1e3, m.T, levels=np.linspace(-16, 0, 33), cmap="viridis")
        cs = ax.contour(self.time_s * 1e12, self.voltage_v * 1e3, m.T, levels=sorted(np.log10(targets)), colors="w",
                        linewidths=0.6)
        ax.clabel(cs, fmt=lambda x: f"1e{x:.0f}", fontsize=7)
        ax.set_xlabel("time from sampling point (ps)")
        ax.set_ylabel("slicer input (mV)")
        return ax


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
    """
    tx, rx, noise, jitter, cdr = tx or Transmitter(), rx or Receiver(), noise or Noise(), jitter or Jitter(), cdr or Cdr()
    if crosstalk not in ("average", "worst"):
        raise ConfigError(f"crosstalk must be 'average' or 'worst', got {crosstalk!r}")
    if columns not in ("all", "sampling"):
        raise ConfigError(f"columns must be 'all' or 'sampling', got {columns!r}")
    nb = integer(n_bins, "n_bins", 256, 1 << 20)
    lk = prepare_link(link, baud_hz=baud_hz, tx=tx, rx=rx, noise=noise, cdr=cdr, samples_per_ui=samples_per_ui)
    at = _Cursors(lk, tx, rx, n_cursors)
    offsets = np.arange(at.spu) - at.spu // 2
    keep = np.arange(at.spu)  # the columns whose distributions are computed (the grid spans them all)
    if columns == "sampling":
        reach = int(np.ceil(jitter.sj_amplitude_s / at.dt)) + 1
        keep = np.flatnonzero(np.abs(offsets) <= reach)
    slope, d_power = _jitter_slope(lk, tx, jitter)
    main, isi_sets, dcd_sets, dd_sets = _discrete_terms(at, lk, tx, jitter, slope, offsets)
    var_rx, var_tx, var_j = _gaussian_terms(at, lk, jitter, slope, d_power)
    var_q, var_clip, var_clk = _receiver_terms(at, lk, tx)
    sigma = float(np.sqrt(var_rx + var_tx + var_j + var_clip))
    sigmas = {"rx": float(np.sqrt(var_rx)), "tx": float(np.sqrt(var_tx)), "jitter": float(np.sqrt(var_j))}
    if not lk.impairments.ideal:
        sigmas.update(adc=float(np.sqrt(var_q + var_clip)), clock=float(np.sqrt(var_clk)))
    q_widths = np.abs(at.w) * lk.adc_step_v  # each tap's share of the quantisation, uniform
    xt_sets = _crosstalk_terms(at, lk.pulse.aggressors, offsets, crosstalk)
    span = _span(isi_sets, dcd_sets, dd_sets, xt_sets, main, 10 * sigma + 0.5 * q_widths.sum() + 10 * np.sqrt(var_clk))
    span *= 1 + 16 / nb  # a few bins beyond the true support, whatever the eye
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
    cdf = sum(wgt * c_ for wgt, c_, _ in comps)
    main = sum(wgt * m_ for wgt, _, m_ in comps)
    return StatEye(offsets[keep] * at.dt, v, cdf, main, tx.levels, lk.thresholds_v, sigmas, 1.0 / lk.pulse.baud_hz,
                   lk, tuple(comps) if len(comps) > 1 else ())


def _span(isi_sets, dcd_sets, dd_sets, xt_sets, main, gaussian_v: float) -> float:
    """Half the voltage grid's width: every discrete term's largest reach, the continuous
    terms' ``gaussian_v``, and room for the main cursor's levels."""
    return (max(np.abs(s).sum() for s in isi_sets) + max((np.abs(s).sum() for s in dcd_sets), default=0.0)
            + max((np.abs(s).sum() for s in dd_sets), default=0.0)
            + sum(max(np.abs(r).sum(axis=1).max() for r in pp) for pp in xt_sets)
            + gaussian_v + 1.5 * np.abs(main).max())


class _Cursors:
    """Where the eye reads the prepared link: the cursors ``k`` (``n_pre`` before the main,
    ``n_post`` after), the Rx FFE ``w``, the main cursor's index after it, the fine grid."""

    def __init__(self, lk: PreparedLink, tx: Transmitter, rx: Receiver, n_cursors):
        self.spu, self.dt = lk.pulse.samples_per_ui, lk.pulse.dt_s
        self.m_s = lk.sampling_index
        self.n_pre = lk.n_pre
        n_post = lk.cursors.size - 1 - self.n_pre
        if n_cursors is not None:
            n_post = min(n_post, integer(n_cursors, "n_cursors", 1))
        self.n_post = n_post
        self.k = np.arange(-self.n_pre, n_post + 1)
        self.w = lk.rx_ffe
        self.main = self.n_pre + rx.ffe.n_pre
        self.swing = tx.swing_v
        self.fine = np.arange(lk.pulse.samples.size)

    def at(self, arr: np.ndarray, t) -> np.ndarray:
        """``arr`` on the fine grid read at ``t`` (zero outside the record)."""
        return np.interp(t, self.fine, arr, left=0.0, right=0.0)


def _jitter_slope(lk: PreparedLink, tx: Transmitter, jitter: Jitter) -> tuple[np.ndarray, float]:
    """The slope jitter acts through, and the power of what it moves: each edge's step
    (edge jitter: the step response's derivative, ``E[(x_k - x_(k-1))^2]``), or each
    symbol's equalised pulse (802.3 COM's model: its slope ``h_J``, 93A-31/32/40)."""
    sym_power = float(np.mean(tx.levels**2))
    if jitter.model == "symbol":
        return np.gradient(lk.pulse.samples, lk.pulse.dt_s), sym_power
    c = tx.ffe.coefficients
    slope = np.gradient(step_from_pulse(lk.analog.samples, lk.analog.samples_per_ui), lk.analog.dt_s)
    return slope, sym_power * float(np.sum(np.diff(np.concatenate([[0.0], c, [0.0]])) ** 2))


def _discrete_terms(at: _Cursors, lk: PreparedLink, tx: Transmitter, jitter: Jitter, slope, offsets):
    """Per time offset: the main cursor, the ISI cursors (less what the DFE takes away),
    and the deterministic jitter's cursors (duty-cycle distortion by parity; COM's dual
    Dirac per symbol)."""
    c = tx.ffe.coefficients
    m0 = tx.ffe.main if tx.ffe.taps else 0
    alt_c = c * np.where((np.arange(c.size) - m0) % 2 == 0, 1.0, -1.0)
    main, isi_sets, dcd_sets, dd_sets = [], [], [], []
    y, nd, k, w, mc = lk.pulse.samples, lk.dfe.size, at.k, at.w, at.main
    for off in offsets:
        t = at.m_s + off + at.spu * k
        cur = np.convolve(at.at(y, t), w) * at.swing
        main.append(cur[mc])
        res = cur.copy()
        res[mc + 1 : mc + 1 + nd] -= lk.dfe * lk.h0_v  # what the DFE takes away (fixed taps)
        res[mc] = 0.0
        isi_sets.append(res)
        if jitter.model == "symbol":
            g = np.convolve(at.at(slope, t), w) * at.swing
            if jitter.dd_s:  # every symbol's own +-A_DD, as independent as its data (93A-40)
                dd_sets.append(jitter.dd_s * g)
            if jitter.dcd_s:  # symbol j moves by +-(dcd/2)(-1)^j: its cursors change by that times h_J
                alt = np.where((np.arange(g.size) - mc) % 2 == 0, 1.0, -1.0)
                dcd_sets.append(0.5 * jitter.dcd_s * alt * g)
        elif jitter.dcd_s:
            # duty-cycle distortion moves alternate Tx edges by +-dcd/2: symbol j's step
            # (x_j - x_(j-1)) arrives eps_j late, eps_j = +-(dcd/2)(-1)^j, so x_j's cursor
            # changes by -eps_j (s'_k + s'_(k-1)) (the slopes of its own step and of the next
            # one). The parity of the sampled symbol picks the sign: two eyes, mixed.
            # the edges are the Tx FFE's output's: x_j reaches them through c_l with eps_(j+l) =
            # eps_j (-1)^l, so the FFE enters with alternating signs
            base = at.at(slope, t) + at.at(slope, t - at.spu)
            g = np.convolve(np.convolve(base, alt_c)[m0 : m0 + base.size], w)
            alt = np.where((np.arange(g.size) - mc) % 2 == 0, 1.0, -1.0)
            dcd_sets.append(0.5 * jitter.dcd_s * at.swing * alt * g)
    return np.array(main), isi_sets, dcd_sets, dd_sets


def _gaussian_terms(at: _Cursors, lk: PreparedLink, jitter: Jitter, slope, d_power: float) -> tuple:
    """Variances (V^2) at the sampling point of the Gaussian terms: Rx noise through the Rx FFE (with
    its UI-to-UI correlation), Tx noise through the whole path (added after the Tx FFE, it
    sees the pulse without it), random jitter through the slope (93A-31 in COM's model)."""
    w = at.w
    if lk.rx_noise_fir.size > 1:
        g = lk.rx_noise_fir
        R = np.correlate(g, g, "full")[g.size - 1 :]
        R[0] += lk.white_noise_rms_v**2
    else:
        R = np.array([lk.rx_noise_rms_v**2])
    Rn = np.zeros(w.size)
    Rn[: min(w.size, R.size)] = R[: min(w.size, R.size)]
    sig_rx2 = float(w @ Rn[np.abs(np.subtract.outer(np.arange(w.size), np.arange(w.size)))] @ w)
    t0 = at.m_s + at.spu * at.k
    sig_tx2 = (lk.tx_noise_rms * at.swing) ** 2 * float(np.sum(np.convolve(at.at(lk.analog.samples, t0), w) ** 2))
    g_j = np.convolve(at.at(slope, t0), w) * at.swing
    sig_j2 = jitter.rj_rms_s**2 * d_power * float(np.sum(g_j**2))
    return sig_rx2, sig_tx2, sig_j2


def _receiver_terms(at: _Cursors, lk: PreparedLink, tx: Transmitter) -> tuple[float, float, float]:
    """Variances (V^2) at the slicer of a real receiver's ADC and sampling clock: the
    quantisation's ``Delta^2 / 12`` per sample (for the report; the eye convolves its
    uniform errors) and the clipping's power over the ADC input's exact distribution
    (:class:`phy.serdes.impairments.AdcInput`), each independent from sample to sample,
    through the Rx FFE; the sampling error through the cursors' slopes
    ``p'_k``: white jitter ``sigma_rj^2 E[a^2] |w|^2 sum_k p'_k^2`` (every sample the FFE
    combines is off by its own error), wander ``sigma_w^2 E[a^2] sum_k (w * p')_k^2`` (one
    error across the FFE's span)."""
    w2 = float(np.sum(at.w**2))
    var_q = lk.adc_step_v**2 / 12.0 * w2
    var_clip = lk.adc_clip_v2 * w2
    var_clk = 0.0
    imp = lk.impairments
    if imp.sampling_rms_s > 0:
        slopes = _sampling_slopes(at, lk)
        power = float(np.mean(tx.levels**2))
        # white jitter: each sample the FFE combines has its own error; the wander is the
        # same across the FFE's span, so it moves the equalised pulse
        var_clk = power * (imp.rj_rms_s**2 * w2 * float(np.sum(slopes**2))
                           + imp.wander_rms_s**2 * float(np.sum(np.convolve(slopes, at.w) ** 2)))
    return var_q, var_clip, var_clk


def _sampling_slopes(at: _Cursors, lk: PreparedLink) -> np.ndarray:
    """The pulse's slope (V/s for a full-swing symbol) at each cursor's sampling instant."""
    return at.at(np.gradient(lk.pulse.samples, lk.pulse.dt_s), at.m_s + at.spu * at.k) * at.swing


def _clock_cf(at: _Cursors, lk: PreparedLink, tx: Transmitter, dv: float):
    """The characteristic function (of ``f`` in cycles per voltage bin) of the sampling
    clock's term, or None: the white jitter ``sum_t w_t delta_t S_t`` with each tap's own
    error and a slope ``S_t`` distributed as ``sum_k a_k p'_k`` (the cursors' slopes), and
    the wander ``delta_w sum_k a_k (w * p')_k`` (one error, the equalised slopes); each
    slope's exact distribution, each error Gaussian and independent of it."""
    imp = lk.impairments
    if imp.sampling_rms_s == 0:
        return None
    slopes = _sampling_slopes(at, lk)
    parts = []
    if imp.rj_rms_s:
        parts.append((slopes, imp.rj_rms_s * np.abs(at.w)))
    if imp.wander_rms_s:
        parts.append((np.convolve(slopes, at.w), [imp.wander_rms_s]))
    cfs = []
    for vals, sig in parts:
        reach = float(np.abs(vals).sum() * np.abs(tx.levels).max())
        n = 2049
        ds = 2 * reach / (n - 1) * (1 + 16 / n)
        pmf = discrete_pmf(vals, tx.levels, -reach * (1 + 16 / n), ds, n)
        grid = -reach * (1 + 16 / n) + ds * np.arange(n)
        cfs.append(scale_mixture_cf(grid / dv, pmf, sig))
    return lambda f: np.prod([c(f) for c in cfs], axis=0)


def _crosstalk_terms(at: _Cursors, aggressors, offsets, crosstalk: str) -> list:
    """Each aggressor's cursors per time offset, at 8 symbol phases (a uniform mixture of
    an asynchronous aggressor) or at the worst one."""
    phases = np.arange(0, at.spu, max(1, at.spu // 8))
    xt_sets = []
    for a in aggressors:
        per_offset = []
        for off in offsets:
            t = at.m_s + off + at.spu * np.arange(-at.n_pre - 4, at.n_post + 1)
            rows = np.array([np.convolve(at.at(a.samples, t + th), at.w) * at.swing for th in phases])
            if crosstalk == "worst":
                rows = rows[[int(np.argmax(np.abs(rows).sum(axis=1)))]]
            per_offset.append(rows)
        xt_sets.append(per_offset)
    return xt_sets


def _column_cdf(isi, main: int, dd, xt_rows, lv, v, sigma: float, q_widths=None, clk_cf=None) -> np.ndarray:
    """The distribution function of everything but the main cursor's term at one offset:
    the ISI's exact PMF, with the dual Dirac's and each aggressor's (a mixture over its
    phases), the ADC's uniform errors (``q_widths``, V) and the sampling clock's term
    (``clk_cf``), then the Gaussian less the variance the grid's splits already added."""
    dv = v[1] - v[0]
    isi = isi.copy()
    isi[main] = 0.0
    pmf = discrete_pmf(isi, lv, v[0], dv, v.size)
    split = split_variance(isi, lv, dv)
    if dd is not None:
        pmf = convolve_centred(pmf, discrete_pmf(dd, lv, v[0], dv, v.size))
        split += split_variance(dd, lv, dv)
    for rows in xt_rows:
        mix = sum(discrete_pmf(row, lv, v[0], dv, v.size) for row in rows) / len(rows)
        pmf = convolve_centred(pmf, mix)
        split += float(np.mean([split_variance(row, lv, dv) for row in rows]))
    if q_widths is not None or clk_cf is not None:
        pmf = uniform_convolve(pmf, np.asarray(q_widths if q_widths is not None else []) / dv, clk_cf)
    pmf = gauss_convolve(pmf, np.sqrt(max(sigma**2 / dv**2 - split, 0.0)))
    return np.clip(np.cumsum(pmf) / max(pmf.sum(), 1e-300), 0, 1)


def _with_sinusoidal_jitter(comps: list, jitter: Jitter, dt: float, n_cols: int) -> list:
    """Sinusoidal jitter moves all edges together, slowly: its arcsine distribution (16
    phases) mixes shifted copies of each eye."""
    if not jitter.sj_amplitude_s:
        return comps
    shifts = jitter.sj_amplitude_s * np.sin(2 * np.pi * (np.arange(16) + 0.5) / 16)
    cols = np.arange(n_cols)
    return [(wgt, np.mean([_shift_rows(c_, s_ / dt) for s_ in shifts], axis=0),
             np.mean([np.interp(cols - s_ / dt, cols, m_) for s_ in shifts], axis=0)) for wgt, c_, m_ in comps]


def _shift_rows(a: np.ndarray, s: float) -> np.ndarray:
    """Rows of ``a`` moved by ``s`` (fractional) along the first axis, edges held."""
    idx = np.clip(np.arange(a.shape[0]) - s, 0, a.shape[0] - 1)
    i0 = np.floor(idx).astype(int)
    i1 = np.minimum(i0 + 1, a.shape[0] - 1)
    f = (idx - i0)[:, None]
    return (1 - f) * a[i0] + f * a[i1]
