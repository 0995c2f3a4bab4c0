"""The terms of the statistical eye (:func:`phy.engines.stateye.statistical_eye`), each
from the prepared link at every time offset of a UI: the cursors and their ISI, the
deterministic jitter's cursors, the Gaussian variances, a real receiver's ADC and clock,
the crosstalk's cursors, and one column's distribution from them (see the model in
:mod:`phy.engines.stateye`)."""

from __future__ import annotations

import numpy as np

from .._validate import integer
from ..serdes import Jitter, PreparedLink, Receiver, Transmitter, step_from_pulse
from .pmf import (
    convolve_centred,
    discrete_pmf,
    gauss_convolve,
    scale_mixture_cf,
    split_variance,
    uniform_convolve,
)


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


def _convolve_rows(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row of ``a`` fully convolved with ``w`` (``np.convolve`` row by row, at once)."""
    out = np.zeros((a.shape[0], a.shape[1] + w.size - 1))
    for j in range(w.size):
        out[:, j : j + a.shape[1]] += w[j] * a
    return out


def _convolved_column(at: _Cursors, y: np.ndarray, t: np.ndarray, w: np.ndarray, col: int) -> np.ndarray:
    """``_convolve_rows(at.at(y, t), w)[:, col]`` bit for bit (the same products added in
    the same order), reading only the cursors that column needs."""
    lo, hi = max(col - w.size + 1, 0), min(col, t.shape[1] - 1)
    a = at.at(y, t[:, lo : hi + 1])
    acc = np.zeros(t.shape[0])
    for j in range(w.size):
        if lo <= col - j <= hi:
            acc += w[j] * a[:, col - j - lo]
    return acc


def _discrete_terms(at: _Cursors, lk: PreparedLink, tx: Transmitter, jitter: Jitter, slope, offsets):
    """Per time offset: the main cursor, the ISI cursors (less what the DFE takes away),
    the deterministic jitter's cursors (duty-cycle distortion by parity; COM's dual Dirac
    per symbol, the main cursor's own left out: it moves with the sampled symbol, see
    :func:`_with_main_cursor_jitter`), and the main cursor at every offset were the
    sampled symbol's pulse moved by ``eps`` seconds (a function of ``eps``). Every offset
    at once: a row each."""
    c = tx.ffe.coefficients
    m0 = tx.ffe.main if tx.ffe.taps else 0
    alt_c = c * np.where((np.arange(c.size) - m0) % 2 == 0, 1.0, -1.0)
    dcd_sets, dd_sets = [], []
    y, nd, k, w, mc = lk.pulse.samples, lk.dfe.size, at.k, at.w, at.main
    t = at.m_s + np.asarray(offsets)[:, None] + at.spu * k[None, :]  # (offset, cursor)
    cur = _convolve_rows(at.at(y, t), w) * at.swing
    main = cur[:, mc].copy()
    res = cur
    res[:, mc + 1 : mc + 1 + nd] -= lk.dfe * lk.h0_v  # what the DFE takes away (fixed taps)
    res[:, mc] = 0.0
    alt = np.where((np.arange(res.shape[1]) - mc) % 2 == 0, 1.0, -1.0)

    def main_at(eps: float, rows=None) -> np.ndarray:  # the pulse moved late by eps: read eps earlier
        if rows is None:
            return _convolve_rows(at.at(y, t - eps / at.dt), w)[:, mc] * at.swing
        return _convolved_column(at, y, t[rows] - eps / at.dt, w, mc) * at.swing

    if jitter.model == "symbol":
        g = _convolve_rows(at.at(slope, t), w) * at.swing
        if jitter.dd_s:  # every other symbol's own +-A_DD, as independent as its data (93A-40)
            g_other = g.copy()
            g_other[:, mc] = 0.0
            dd_sets = list(jitter.dd_s * g_other)
        if jitter.dcd_s:  # symbol j moves by +-(dcd/2)(-1)^j: its cursors change by that times h_J
            dcd_sets = list(0.5 * jitter.dcd_s * alt * g)
    elif jitter.dcd_s:
        # duty-cycle distortion moves alternate Tx edges by +-dcd/2: symbol j's step
        # (x_j - x_(j-1)) arrives eps_j late, eps_j = +-(dcd/2)(-1)^j, so x_j's cursor
        # changes by -eps_j (s'_k + s'_(k-1)) (the slopes of its own step and of the next
        # one). The parity of the sampled symbol picks the sign: two eyes, mixed.
        # the edges are the Tx FFE's output's: x_j reaches them through c_l with eps_(j+l) =
        # eps_j (-1)^l, so the FFE enters with alternating signs
        base = at.at(slope, t) + at.at(slope, t - at.spu)
        g = _convolve_rows(_convolve_rows(base, alt_c)[:, m0 : m0 + base.shape[1]], w)
        dcd_sets = list(0.5 * jitter.dcd_s * at.swing * alt * g)
    return main, list(res), dcd_sets, dd_sets, main_at


def _gaussian_terms(at: _Cursors, lk: PreparedLink, jitter: Jitter, slope, d_power: float) -> tuple:
    """Variances (V^2) at the sampling point of the Gaussian terms: Rx noise through the Rx FFE (with
    its UI-to-UI correlation), Tx noise through the whole path (added after the Tx FFE, it
    sees the pulse without it), random jitter through the slope (93A-31 in COM's model),
    and of that the main cursor's own share (symbol jitter: the sampled symbol's pulse
    moves with it, so its share is not independent of the symbol; 0 for edge jitter)."""
    w = at.w
    sig_rx2 = float(rx_noise_acf(lk, w, 1)[0])
    t0 = at.m_s + at.spu * at.k
    sig_tx2 = (lk.tx_noise_rms * at.swing) ** 2 * float(np.sum(np.convolve(at.at(lk.tx_noise_pulse.samples, t0), w)
                                                                          ** 2))
    g_j = np.convolve(at.at(slope, t0), w) * at.swing
    sig_j2 = jitter.rj_rms_s**2 * d_power * float(np.sum(g_j**2))
    own = jitter.rj_rms_s**2 * d_power * float(g_j[at.main] ** 2) if jitter.model == "symbol" else 0.0
    return sig_rx2, sig_tx2, sig_j2, own


def rx_noise_acf(lk: PreparedLink, w: np.ndarray, lags: int) -> np.ndarray:
    """Autocorrelation (V^2) of the receiver noise after the Rx FFE ``w`` at lags 0 ..
    ``lags - 1`` UI: the density noise's UI-spaced shaping FIR (its own correlation) and
    the white rest, or white noise without a FIR."""
    if lk.rx_noise_fir.size > 1:
        g = lk.rx_noise_fir
        R = np.correlate(g, g, "full")[g.size - 1 :]
        R[0] += lk.white_noise_rms_v**2
    else:
        R = np.array([lk.rx_noise_rms_v**2])
    n = w.size + lags
    Rn = np.zeros(n)
    Rn[: min(n, R.size)] = R[: min(n, R.size)]
    k = np.arange(w.size)
    # E[y_n y_(n+l)] = sum_ij w_i w_j R(l + i - j)
    return np.array([float(w @ Rn[np.abs(np.subtract.outer(k, k - lag))] @ w) for lag in range(lags)])


def _tail_isi_variance(at: _Cursors, lk: PreparedLink, tx: Transmitter) -> float:
    """Variance (V^2) at the sampling point of the ISI the discrete terms leave out: the
    symbol-spaced samples of the whole pulse record beyond the cursors kept (the prepared
    link keeps 64 before the main one and 512 after), through the Rx FFE, with independent
    data. Hundreds of small cursors: a Gaussian of their exact variance (a 1130-UI cable
    assembly's tail is 0.4 to 0.7 % of the noise variance at SER 1e-2 to 1e-3, about 1 to
    3 % of the error ratio)."""
    y = at.fine
    k_all = np.arange(min(-int(at.m_s // at.spu), -at.n_pre), max(int((y.size - 1 - at.m_s) // at.spu), at.n_post) + 1)
    full = np.convolve(at.at(lk.pulse.samples, at.m_s + at.spu * k_all), at.w) * at.swing
    kept = np.convolve(at.at(lk.pulse.samples, at.m_s + at.spu * at.k), at.w) * at.swing
    s = -at.n_pre - int(k_all[0])  # the first kept cursor's place among all
    full[s : s + kept.size] -= kept
    return float(np.mean(tx.levels**2)) * float(full @ full)


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


def _crosstalk_terms(at: _Cursors, aggressors, offsets, crosstalk: str, levels) -> tuple[list, float]:
    """Each aggressor's cursors per time offset, at 8 symbol phases (a uniform mixture of
    an asynchronous aggressor) or at the worst one; and the variance (V^2) of what they
    leave out. An aggressor's pulse need not arrive with the victim's (a near-end one
    arrives a flight time early: 70 UI on the VITA backplane at 25.8 GBd, 509 on the 802.3ck
    cable assembly), so its cursors are read in the window as long as the victim's that
    holds most of its energy; the rest of its record is a Gaussian of its exact variance
    (averaged over the phases)."""
    phases = np.arange(0, at.spu, max(1, at.spu // 8))
    L = at.n_pre + 4 + at.n_post + 1
    p2 = float(np.mean(np.asarray(levels) ** 2))
    xt_sets, left = [], 0.0
    for a in aggressors:
        y = a.samples
        k_all = np.arange(-int(at.m_s // at.spu) - 1, int((y.size - 1 - at.m_s) // at.spu) + 2)
        e = sum(at.at(y, at.m_s + th + at.spu * k_all) ** 2 for th in phases)
        if k_all.size > L:  # the window of L cursors holding the most energy
            run = np.convolve(e, np.ones(L), "valid")
            k0 = int(k_all[int(np.argmax(run))])
        else:
            k0 = int(k_all[0])
        k0 = min(k0, -at.n_pre - 4)  # never later than the victim's own window
        k = np.arange(k0, k0 + max(L, -k0 + 1))
        full = [np.convolve(at.at(y, at.m_s + th + at.spu * k_all), at.w) * at.swing for th in phases]
        per_offset = []
        for off in offsets:
            t = at.m_s + off + at.spu * k
            rows = np.array([np.convolve(at.at(y, t + th), at.w) * at.swing for th in phases])
            if off == 0:
                left += p2 * max(float(np.mean([f @ f for f in full]) - np.mean(np.sum(rows**2, axis=1))), 0.0)
            if crosstalk == "worst":
                rows = rows[[int(np.argmax(np.abs(rows).sum(axis=1)))]]
            per_offset.append(rows)
        xt_sets.append(per_offset)
    return xt_sets, left


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


#: Gauss-Hermite nodes of the main cursor's random jitter (:func:`_with_main_cursor_jitter`):
#: exact for the error ratio's polynomial part to degree 9 in the main cursor's amplitude.
MAIN_JITTER_NODES = 5


def _with_main_cursor_jitter(comps: list, jitter: Jitter, main_at, keep: np.ndarray) -> list:
    """Symbol jitter moves the sampled symbol's own pulse with it: its main cursor becomes
    ``main(eps)``, the pulse read ``eps`` later (the symbol's +-A_DD and random jitter,
    exactly, not through the slope), multiplied by the sampled level, not independent of
    it. Each eye becomes a mixture over ``eps`` (two dual-Dirac signs times
    :data:`MAIN_JITTER_NODES` Gauss-Hermite nodes of the random part), its distribution
    of the rest unchanged (``main_at(eps, keep)``: the main cursor at the offsets ``keep``, the
    columns kept)."""
    if jitter.model != "symbol" or not (jitter.dd_s or jitter.rj_rms_s):
        return comps
    x, wx = np.polynomial.hermite_e.hermegauss(MAIN_JITTER_NODES if jitter.rj_rms_s else 1)
    wx = wx / wx.sum()
    base = main_at(0.0, keep)
    shifts = [(0.5 * wgt if jitter.dd_s else wgt, main_at(s * jitter.dd_s + jitter.rj_rms_s * xi, keep) - base)
              for s in ((-1.0, 1.0) if jitter.dd_s else (0.0,)) for xi, wgt in zip(x, wx)]
    return [(w * ws, c_, m_ + d_) for w, c_, m_ in comps for ws, d_ in shifts]
