"""Channel Operating Margin in the manner of IEEE 802.3 Annex 93A (and 162A/163A/178A).

:func:`channel_margin` takes a channel (a :class:`channels.Channel`, with its crosstalk
aggressors) and a parameter set (:class:`ComParams`, presets for 802.3ck and 802.3dj) and
returns a :class:`MarginResult`: COM in dB, its noise breakdown and the equalisation the
search chose. The steps, with the equations of Annex 93A:

1. **Packages** (93A.1.2): each end gets the reference package
   (:func:`channels.media.com_package`: die capacitance and series inductance ladder, bump
   capacitance, package line with the 93A loss model, ball capacitance), built once per
   package and grid, cascaded with the channel on its own frequencies on arrays
   (:mod:`.chain`, :func:`channels.cascading.cascade_s`); only the transfer is moved onto
   the pulse's DFT grid. NEXT aggressors use their own package length. The voltage
   transfer between the die terminations ``R_d`` is 93A-18 (as
   :func:`channels.media.terminate` and :meth:`channels.Channel.voltage_transfer`).
2. **Filters** (93A-19): the Tx edge filter (93A-46), the Rx Butterworth at ``f_r f_b``
   (93A-20) and the CTLE (93A-22 with the 802.3ck low-frequency pair); the pulse response
   is the inverse DFT of that transfer times the spectrum of a one-UI rectangle, scaled
   by the transmitter amplitude (``A_v``, ``A_fe``, ``A_ne``).
3. **Equaliser search** (93A.1.6): every CTLE setting and every Tx FFE setting of the
   parameter grid; for each, the cursor is placed by the Mueller-Muller criterion with the
   first DFE tap (93A-25/26) as the reference code places it (the least residual over the
   2 UI after the pulse's last rise through 1 % of its peak), the DFE taps follow the post-cursors within their limits, and
   the figure of merit is ``10 log10(A_s^2 / (s_TX^2 + s_ISI^2 + s_J^2 + s_XT^2 + s_N^2))``
   (93A-36). The search is vectorised over the Tx FFE grid.
4. **COM** (93A.1.7): for the best setting, the interference and noise distribution at the
   detector: ISI, dual-Dirac jitter and crosstalk as exact discrete distributions, the
   Gaussian Tx noise (on the main cursor, 93A-30, or with an Rx FFE through the whole path
   and the FFE, 178A-17), random jitter and Rx noise; ``A_ni`` is its ``DER_0`` quantile
   and ``COM = 20 log10(A_s / A_ni)``. With 802.3dj's MLSD reference receiver
   (``params.mlsd``, 178A.1.10, :mod:`.mlsd`), that is COM_DFE and COM adds the 1-tap
   MLSD's advantage over it.

Deviations from Annex 93A are listed in :class:`MarginResult.notes`.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import numpy as np

import channels

from ...errors import ConfigError
from ...serdes import Ctle
from ...serdes.limits import check_bytes, check_gain
from ..pmf import pmf_quantile
from . import _kernels as _k
from . import chain, mlsd, mmse
from .grid import Grid, check_pulses
from .params import ComParams
from .result import MarginResult

__all__ = ["MarginResult", "channel_margin"]


# ----------------------------------------------------------------------------- the chain
def _terminated_transfer(ch: channels.Channel, f: np.ndarray, p: ComParams, kind: str, cache=None) -> np.ndarray:
    """93A-18 on the DFT grid ``f``: :func:`.chain.terminated_transfer` (``cache`` is
    unused: the packages are remembered there)."""
    return chain.terminated_transfer(ch, f, p, kind)


def channel_margin(ch: channels.Channel, params: ComParams | None = None, *, n_ui: int | None = None,
                   samples_per_ui: int | None = None, require_nyquist: bool = True) -> MarginResult:
    """COM of a channel (with its aggressors) for a parameter set: with package test cases
    (``params.package_cases``), the lowest over them, with the case that set it named in
    :attr:`MarginResult.package_case` and every case's COM in ``case_com_db``.

    Parameters
    ----------
    ch : channels.Channel
        The channel between the package balls; aggressors of kind ``"next"`` and
        ``"fext"`` are the crosstalk.
    params : ComParams
        Default: :meth:`ComParams.ieee_802_3ck_kr`.
    n_ui : int, optional
        Pulse record length in UI (a power of two covering three delays plus 200 UI).
    samples_per_ui : int, optional
        Overrides ``params.samples_per_ui`` (32, as 93A's reference code). From
        :data:`phy.engines.com.grid.MIN_SAMPLES_PER_UI` (16) to 256: coarser grids misplace the cursor. Measured
        against 64 samples per UI with 802.3ck KR on the library's ``backplane_30db`` and
        ``twinax_1m_26awg`` and the shared ``CA_19p75dB_thru`` and ``DPO_14in_Meg7_THRU``,
        and with 802.3dj KR on ``chip_to_module``: 16 and more within 0.13 dB (32 within
        0.04 dB), 12 within 0.18 dB, 8 within 0.25 dB, 2 to 6 up to 0.64 dB off, 1 from
        1.3 to 12 dB low (backplane -3.0 against 3.07 dB, cable -1.6 against 6.34 dB).
    require_nyquist : bool
        The channel's data must reach the Nyquist frequency, as the statistical eye and
        :func:`phy.evaluate_link` require (default). False: data from a quarter of it up are
        extended by the loss trend (:func:`channels.grid.check_pulse_grid`), a guess.

    Raises
    ------
    ConfigError
        A bad parameter; a grid coarser than :data:`phy.engines.com.grid.MIN_SAMPLES_PER_UI`; a channel whose
        ``|Sdd21|`` is not finite or beyond 40 dB of gain, or whose pulse is zero (an open
        channel: it transmits nothing); a two-port channel not referenced to the
        differential ``2 R_0`` (a 50 ohm ``.s2p`` is a single-ended line, not a
        differential channel).
    channels.ChannelError
        Data that end below the Nyquist frequency (with ``require_nyquist``), too few
        points, or a frequency step too coarse for the channel's delay.

    Returns
    -------
    MarginResult
        The COM (dB) and its terms, at the package case that sets it.
    """
    t_start = time.perf_counter()
    p = params or ComParams.ieee_802_3ck_kr()
    if not isinstance(ch, channels.Channel):
        raise ConfigError(f"channel_margin needs a channels.Channel, got {type(ch).__name__}")
    if not isinstance(p, ComParams):
        raise ConfigError(f"params must be a ComParams, got {type(p).__name__}")
    p.check()
    cases = p.cases()
    results = [(name, _margin_one(ch, pc, n_ui, samples_per_ui, require_nyquist)) for name, pc in cases]
    name, worst = min(results, key=lambda r: r[1].com_db)
    notes = list(worst.notes)
    if len(results) > 1:
        notes.append(f"package case {name!r} set COM, the lowest of "
                     + ", ".join(f"{n} {r.com_db:.2f} dB" for n, r in results))
    return replace(worst, package_case=name, case_com_db={n: r.com_db for n, r in results}, notes=notes,
                   settings_searched=sum(r.settings_searched for _, r in results),
                   seconds=time.perf_counter() - t_start, params=p.to_dict())


def _margin_one(ch: channels.Channel, p: ComParams, n_ui, samples_per_ui, require_nyquist=True) -> MarginResult:
    """COM for one package: the chain, the equaliser search and the margin at its best
    (``params`` left empty: :func:`channel_margin` sets it once for the whole set)."""
    t_start = time.perf_counter()
    g = Grid(ch, p, n_ui, samples_per_ui, require_nyquist)
    for c in (ch, *ch.aggressors):
        check_gain(c)
    chans = [(ch, "through", p.a_v)] + [(a, a.kind, p.a_ne if a.kind == "next" else p.a_fe) for a in ch.aggressors]
    check_bytes(8.0 * g.n * 8 * len(chans), f"COM's pulses ({g.n // g.M:,} UI of {g.M} samples, {len(chans)} "
                                            "channels, four basis pulses each)")
    spectra = [g.base * chain.terminated_transfer(c, g.f, p, kind) * amp for c, kind, amp in chans]
    check_pulses(ch, spectra, g, [amp for _, _, amp in chans])
    tx_grid = p._tx_grid()
    ctle_settings = list(itertools.product(p.g_dc_db, p.g_dc2_db))
    fom_best, ci, ti, cursor, w_rx, pulses, notes, q_var = _search(p, g, chans, spectra, tx_grid, ctle_settings)
    g1, g2 = ctle_settings[ci]
    r = _com_at(p, g, chans, pulses, tx_grid[ti], cursor, w_rx, _ctle(p, g1, g2).response(g.f), q_var)
    notes.append("Tx FFE applied as UI-spaced copies of the pulse (equal to 93A's H_ffe on the DFT grid)")
    if r.get("mlsd"):
        m = r["mlsd"]
        notes.append(m["note"] or f"MLSD (178A.1.10): COM_DFE {m['com_dfe_db']:.2f} dB, DER_MLSD {m['der_mlsd']:.3g} "
                     f"at {m['dcom_an_db']:g} dB of added receiver noise, {m['delta_db']:+.2f} dB")
    if ch.aggressors:
        notes.append("crosstalk in the FOM: " + ("each aggressor at its worst sampling phase (93A-33/34)"
                                                 if p.fom_xt_phase == "worst" else
                                                 "each aggressor averaged over its sampling phases"))
    if ch.grid is not None and ch.grid.extrapolated_above_hz is not None:
        notes.append(f"channel data extended above {ch.grid.extrapolated_above_hz / 1e9:.4g} GHz by its loss trend")
    return MarginResult(
        com_db=r["com"], a_s_v=r["a_s"], a_ni_v=r["a_ni"], fom_db=fom_best, sigmas_v=r["sigmas"],
        tx_ffe=[float(t) for t in tx_grid[ti]], g_dc_db=float(g1), g_dc2_db=float(g2), dfe=r["dfe"],
        dfe_floating=r["dfe_floating"], mlsd=r.get("mlsd", {}),
        rx_ffe=[float(x) for x in w_rx], cursor_index=int(cursor),
        settings_searched=int(tx_grid.shape[0] * len(ctle_settings)), seconds=time.perf_counter() - t_start,
        params={}, notes=notes, cursor_offset_s=float((cursor - r["peak"]) / (g.fb * g.M)),
    )


def _ctle_pulses(p: ComParams, g: Grid, spectra, ctle_settings):
    """Every CTLE setting's response and pulses, as ``(index, response, pulses)``. The CTLE
    is ``(g1 P + P jf/f_z)(g2 C + C jf/f_LF)`` with P, C its poles: every setting's pulse is
    a combination of four basis pulses (one inverse DFT each, not one per setting)."""
    fb, f = g.fb, g.f
    fz, flf = p.ctle_fz * fb, p.ctle_flf * fb
    poles = 1 / ((1 + 1j * f / (p.ctle_fp1 * fb)) * (1 + 1j * f / (p.ctle_fp2 * fb)))
    c_lf = 1 / (1 + 1j * f / flf)
    parts = (poles * c_lf, poles * c_lf * 1j * f / flf, poles * 1j * f / fz * c_lf, poles * 1j * f / fz * c_lf * 1j * f / flf)
    basis = [[np.roll(np.fft.irfft(s * q, g.n), g.roll) for q in parts] for s in spectra]
    for ci, (g1, g2) in enumerate(ctle_settings):
        a1_, a2_ = 10 ** (g1 / 20), 10 ** (g2 / 20)
        w4 = (a1_ * a2_, a1_, a2_, 1.0)
        hc = w4[0] * parts[0] + w4[1] * parts[1] + w4[2] * parts[2] + parts[3]
        yield ci, hc, [w4[0] * b[0] + w4[1] * b[1] + w4[2] * b[2] + w4[3] * b[3] for b in basis]


def _search(p: ComParams, g: Grid, chans, spectra, tx_grid, ctle_settings):
    """The setting COM is computed at, over every CTLE x Tx FFE setting of the grid: the
    best by the figure of merit (93A-36), or with an Rx FFE the best by the MMSE figure of
    merit with the Rx FFE and DFE optimised at every setting and sampling time (178A,
    :mod:`.mmse`), the floating taps and the quantiser's noise then taken at the best
    settings. Returns (fom, CTLE index, Tx index, cursor, Rx FFE taps, pulses, notes,
    quantisation noise variance)."""
    n_rx = p.rx_ffe_pre + 1 + p.rx_ffe_post
    kinds = [kind for _, kind, _ in chans]
    bmax, bmin = np.array(p.dfe_max), np.array(p.dfe_min)
    every = n_rx > 1 and p.rx_ffe_search == "every"
    floating = n_rx > 1 and p.rx_ffe_float_groups > 0
    quantised = n_rx > 1 and p.adc_bits > 0
    keep = p.mmse_candidates if n_rx > 1 and (floating or quantised or not every) else 1
    cands: list = []  # the best settings, (fom, ci, ti, cursor)
    for ci, hc, pulses in _ctle_pulses(p, g, spectra, ctle_settings):
        if every:
            fom, cur = mmse.grid_foms(p, pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, tx_grid,
                                      cands[0][0] if cands else -np.inf)
        else:
            var_n = p.eta0_v2_per_hz * float(np.sum(np.abs(g.hr[1:] * hc[1:]) ** 2) * g.df)
            fom, cur = _fom_grid(tx_grid, pulses[0], g.M, len(p.dfe_max), bmax, bmin, p, g.var_x, var_n,
                                 list(zip(pulses[1:], kinds[1:])))
        top = np.argsort(fom)[::-1][:keep]
        cands = sorted(cands + [(float(fom[t]), ci, int(t), int(cur[t])) for t in top], reverse=True)[:keep]
    if n_rx == 1:
        fom_best, ci, ti, cursor = cands[0]
        g1, g2 = ctle_settings[ci]
        return fom_best, ci, ti, cursor, np.array([1.0]), g.pulses(spectra, _ctle(p, g1, g2).response(g.f)), [], 0.0
    if not every:  # the FOM's best re-ranked by the MMSE figure of merit with the Rx FFE, per CTLE setting
        ranked = []
        for ci in sorted({c[1] for c in cands}):
            rows = [c[2] for c in cands if c[1] == ci]
            hc = _ctle(p, *ctle_settings[ci]).response(g.f)
            fom, cur = mmse.grid_foms(p, g.pulses(spectra, hc), kinds, g.hr * hc, g.f, g.M, g.var_x, tx_grid[rows])
            ranked += [(float(fom[k]), ci, rows[k], int(cur[k])) for k in range(len(rows))]
        cands = sorted(ranked, reverse=True)
    # the final taps, with the floating groups placed and the quantiser's noise added at each
    # of the best settings (the best with them wins), or at the best alone without either
    top = None
    for cj in sorted({c[1] for c in (cands if floating or quantised else cands[:1])}):
        hc = _ctle(p, *ctle_settings[cj]).response(g.f)
        pulses = g.pulses(spectra, hc)
        for _, _, tj, cur in (c for c in (cands if floating or quantised else cands[:1]) if c[1] == cj):
            fom, w, q_var = _final_taps(p, g, kinds, tx_grid[tj], cur, pulses, hc, floating, quantised)
            if top is None or fom > top[0]:
                top = (fom, cj, tj, cur, w, pulses, q_var)
    fom_best, ci, ti, cursor, w, pulses, q_var = top
    if not (floating or quantised):
        fom_best = cands[0][0]
    return (fom_best, ci, ti, cursor, w, pulses, _mmse_notes(p, g.M, tx_grid.shape[0] * len(ctle_settings), every,
                                                               len(cands), w, floating, quantised, q_var), q_var)


def _final_taps(p: ComParams, g: Grid, kinds, taps, cursor: int, pulses, hc, floating: bool, quantised: bool):
    """(FOM, Rx FFE taps, quantisation noise variance at the FFE input) at one setting."""
    M = g.M
    n_rx = p.rx_ffe_pre + 1 + p.rx_ffe_post
    thru = sum(c * np.roll(pulses[0], (i - 3) * M) for i, c in enumerate(taps))
    h, k0 = thru[cursor % M :: M], cursor // M
    r_n = mmse.noise_at(p, pulses, kinds, g.hr * hc, g.f, M, g.var_x, taps, cursor,
                        nw=p.rx_ffe_span_ui if floating else n_rx)
    q_var = 0.0
    if quantised:  # 178A-28..31: white at the FFE input, its step from the signal and random noise
        r_rj = mmse.noise_at(p.with_(a_dd_ui=0.0), pulses, kinds, g.hr * hc, g.f, M, g.var_x, taps, cursor, nw=1)
        q_var = mmse.quant_step(p, h, float(r_rj[0])) ** 2 / 12
        r_n = r_n.copy()
        r_n[0] += q_var
    if floating:
        w, _, fom = mmse.floating_taps(h, k0, r_n, p, g.var_x)
    else:
        w, _, fom = mmse.solve_at(h, k0, r_n, p.rx_ffe_pre, n_rx, len(p.dfe_max), np.array(p.dfe_min),
                                  np.array(p.dfe_max), p.rx_ffe_limit, g.var_x, p.r_lm, p.levels)
    return fom, w, q_var


def _mmse_notes(p: ComParams, M: int, n_settings: int, every: bool, n_cands: int, w, floating: bool,
                quantised: bool, q_var: float) -> list:
    """What the 178A search did, for :attr:`MarginResult.notes`."""
    lo, hi = p.ts_range_samples if p.ts_range_samples is not None else (-(M // 2), M // 2)
    where = (f"every one of the {n_settings} settings" if every else
             f"the {n_cands} best settings by the FOM without it (not 178A's every setting)")
    notes = [f"Rx FFE and DFE by MMSE (178A) at {where}, "
             f"each at its best sampling time of {hi - lo + 1} ({lo} to {hi} samples from its pulse's peak"
             + (f"; every fourth first, the rest where within {p.ts_prune_db:g} dB of the best so far)"
                if p.ts_search == "pruned" else ")")]
    n_rx = p.rx_ffe_pre + 1 + p.rx_ffe_post
    if floating:
        used = [i for i in range(n_rx, w.size) if w[i] != 0.0]
        notes.append(f"floating Rx FFE taps (178A.1.8.1): {p.rx_ffe_float_groups} groups of {p.rx_ffe_float_taps} "
                     f"within {p.rx_ffe_span_ui} taps, placed at the {n_cands} best settings by the MMSE FOM "
                     f"with the fixed taps (178A: at every setting); in use at taps {used}")
    if quantised:
        notes.append(f"quantisation noise (178A-28..31, {p.adc_bits} bits, clipping {p.adc_clip_probability:g}) "
                     f"at the {n_cands} best settings: {np.sqrt(q_var) * 1e3:.3g} mV rms at the FFE input")
    return notes


def _com_at(p: ComParams, g: Grid, chans, pulses, taps, cursor: int, w_rx, hc, q_var: float = 0.0) -> dict:
    """COM at one setting (93A.1.7): the signal ``A_s``, the ISI after the DFE, the jitter's
    slope, the crosstalk at each aggressor's worst phase, the Gaussian terms, and
    ``A_ni`` the ``DER_0`` quantile of their sum."""
    M, fb, L = g.M, g.fb, p.levels
    n_rx = len(w_rx)
    nd = len(p.dfe_max)
    # the peak of the Tx-equalised pulse at the Rx FFE's input: the cursor's phase is told from it
    peak = int(np.argmax(sum(c * np.roll(pulses[0], (i - 3) * M) for i, c in enumerate(taps))))
    # the Rx FFE acts on every pulse (UI-spaced taps, main tap at rx_ffe_pre) and on the Rx noise
    if n_rx > 1:
        pulses = [sum(wi * np.roll(x, (i - p.rx_ffe_pre) * M) for i, wi in enumerate(w_rx)) for x in pulses]
    hffe = np.sum(w_rx[:, None] * np.exp(-2j * np.pi * np.outer(np.arange(n_rx) - p.rx_ffe_pre, g.f) / fb), axis=0)
    var_rn = p.eta0_v2_per_hz * float(np.sum(np.abs(g.hr[1:] * hc[1:] * hffe[1:]) ** 2) * g.df)
    var_n = var_rn + q_var * float(np.sum(np.square(w_rx)))  # quantisation: white at the FFE input
    thru = sum(c * np.roll(pulses[0], (i - 3) * M) for i, c in enumerate(taps))
    h0 = thru[cursor]
    a_s = p.r_lm * h0 / (L - 1)
    k0 = cursor // M
    h = thru[cursor % M :: M].copy()
    h[k0] = 0.0
    b = np.clip(h[k0 + 1 : k0 + 1 + nd] / h0, np.array(p.dfe_min), np.array(p.dfe_max))
    h[k0 + 1 : k0 + 1 + nd] -= b * h0
    flt = _floating(p)
    bf = np.zeros(0)
    if p.dfe_float_groups > 0:  # the floating taps (their kernel), after the fixed ones
        hf = h[k0 + 1 + nd : k0 + p.dfe_float_span_ui + 1].copy()
        bf = np.zeros(hf.size)  # (the types the search calls it with: its compiled code is shared)
        _k.floating_dfe_into(hf, hf.size, h0, nd, int(flt[0]), int(flt[1]), flt[3], int(flt[4]), flt[5], bf,
                             np.empty(hf.size), np.empty(hf.size))
        h[k0 + 1 + nd : k0 + 1 + nd + hf.size] -= bf * h0
    thr = 1e-3 * a_s  # 93A.1.7.1 note 2: samples below 0.1 % of A_s are dropped
    h_isi = h[np.abs(h) > thr]
    ext = np.pad(thru, 1)
    idx = cursor % M + M * np.arange(thru.size // M)
    h_j = (ext[idx + 2] - ext[idx]) / (2 / M)  # slope, V per UI (178A-23)
    h_dd = p.a_dd_ui * h_j
    h_dd = h_dd[np.abs(h_dd) > thr]
    var_j = p.sigma_rj_ui**2 * g.var_x * float(np.sum(h_j**2))
    if n_rx > 1:  # 178A-17/21: white at the driver after its FFE, through the whole path and the Rx FFE
        var_tx = 10 ** (-p.snr_tx_db / 10) * float(np.sum(pulses[0][cursor % M :: M] ** 2))
    else:  # 93A-30: on the main cursor
        var_tx = h0**2 * 10 ** (-p.snr_tx_db / 10)
    xts, xt_raw = [], []
    for x, (_, kind, _) in zip(pulses[1:], chans[1:]):
        y = sum(c * np.roll(x, (i - 3) * M) for i, c in enumerate(taps)) if kind == "fext" else x
        ph = int(np.argmax(mmse.phase_energy(y, M)))
        s = y[ph::M]
        xts.append(s[np.abs(s) > thr])
        xt_raw.append(s)
    ystep = min(a_s / 1000, 1e-5)
    a_ni = pmf_quantile([h_isi, h_dd] + xts, np.linspace(-1, 1, L), np.sqrt(var_tx + var_j + var_n), p.der0, ystep)
    var_isi = g.var_x * float(np.sum(h_isi**2))
    var_xt = g.var_x * float(sum(np.sum(s**2) for s in xts))
    com = float(20 * np.log10(a_s / a_ni))
    mr = {}
    if p.mlsd:  # 178A.1.10: the MLSD's advantage over this COM_DFE, at its added receiver noise
        acf, acf_rn = mlsd.noise_acf(g.var_x, h, h_j, p.sigma_rj_ui**2 + p.a_dd_ui**2, xt_raw,
                                     pulses[0][cursor % M :: M] if n_rx > 1 else None,
                                     10 ** (-p.snr_tx_db / 10) if n_rx > 1 else var_tx, g.f, g.df,
                                     np.abs(g.hr * hc * hffe) ** 2, p.eta0_v2_per_hz, fb, w_rx, q_var)
        mr = mlsd.com_mlsd(com, a_s, a_ni, float(b[0]), [h_isi, h_dd] + xts, L, var_tx + var_j + var_n, var_rn,
                           acf, acf_rn, p.der0, ystep, p.mlsd_dcom_an_db)
        com = mr["com_db"]
    return {"com": com, "a_s": float(a_s), "a_ni": float(a_ni), "peak": peak, "mlsd": mr,
            "dfe": [float(x) for x in b],
            "dfe_floating": {int(nd + 1 + q): float(v) for q, v in enumerate(bf) if v != 0.0},
            "sigmas": {"isi": float(np.sqrt(var_isi)), "tx": float(np.sqrt(var_tx)), "jitter": float(np.sqrt(var_j)),
                       "crosstalk": float(np.sqrt(var_xt)), "rx": float(np.sqrt(var_n))}}


def _ctle(p: ComParams, g1: float, g2: float) -> Ctle:
    fb = p.baud_hz
    return Ctle(g1, p.ctle_fz * fb, p.ctle_fp1 * fb, p.ctle_fp2 * fb, g2, p.ctle_flf * fb)


def _floating(p: ComParams) -> np.ndarray:
    """The floating DFE's parameters as the kernels take them."""
    return np.array([p.dfe_float_groups, p.dfe_float_taps, p.dfe_float_span_ui, p.dfe_float_limit,
                     p.dfe_float_tail_start_ui, p.dfe_float_tail_rss], dtype=float)


def _autocorr(y: np.ndarray, M: int, lags: int = 5) -> np.ndarray:
    """Circular autocorrelation of the UI-spaced samples at each phase: ``r[ph, l] = sum_k
    y[ph + k M] y[ph + (k + l) M]`` (the record is one DFT period)."""
    K = y.size // M
    Y = y[: K * M].reshape(K, M)  # row k: UI k, every phase
    ext = np.concatenate([Y, Y[:lags]])  # the period wrapped, so lag l reads rows l .. l + K - 1
    return np.stack([np.einsum("km,km->m", Y, ext[lag:lag + K]) for lag in range(lags)], axis=1)


def _fom_grid(tx_grid, y, M, nd, bmax, bmin, p, var_x, var_n, xt_pulses):
    """FOM (93A-36) of every Tx FFE setting for one CTLE setting (the Numba kernel
    :func:`phy.engines.com._kernels.fom_search`).

    ``y`` is the through pulse; tap ``i`` of ``c(-3) .. c(1)`` delays it by ``(i - 3)`` UI.
    ``xt_pulses``: the aggressors' pulses with their kind (a FEXT aggressor's transmitter
    uses the same FFE; a NEXT one none). Returns (fom, cursor index).
    """
    n = y.size
    peak0 = int(np.argmax(y))
    # the FFE moves the peak by well under a UI; the cursor search reads from 5 UI before
    # the peak (its 1 % crossing within 4 UI, one UI of pre-cursor) to 4 UI after it
    lo = peak0 - 6 * M
    w = np.arange(lo, peak0 + 5 * M + 1)
    win = np.ascontiguousarray(np.stack([y[(w - (i - 3) * M) % n] for i in range(5)]))
    slope = (np.roll(y, -1) - np.roll(y, 1)) / (2 / M)
    r_isi, r_j = _autocorr(y, M), _autocorr(slope, M)
    fext = [x for x, kind in xt_pulses if kind == "fext"]
    r_xt = np.stack([_autocorr(x, M) for x in fext]) if fext else np.zeros((0, M, 5))
    pick = max if p.fom_xt_phase == "worst" else (lambda v: sum(v) / M)  # 93A-33/34, or over the phases
    xt_const = sum(pick([float(e) for e in mmse.phase_energy(x, M)]) for x, kind in xt_pulses if kind == "next")
    fom = np.empty(tx_grid.shape[0])
    cursor = np.empty(tx_grid.shape[0], dtype=np.int64)
    _k.fom_search(np.ascontiguousarray(tx_grid), y, win, lo, M, r_isi, r_j, r_xt, float(xt_const),
                  np.asarray(bmax, dtype=float), np.asarray(bmin, dtype=float), p.r_lm, p.levels, var_x, var_n,
                  p.a_dd_ui**2 + p.sigma_rj_ui**2, 10 ** (-p.snr_tx_db / 10), p.rx_ffe_pre + p.rx_ffe_post > 0,
                  p.fom_xt_phase == "worst", _floating(p), fom, cursor)
    cursor %= n
    return fom, cursor
