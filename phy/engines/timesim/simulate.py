"""Time-domain Monte Carlo of a SerDes link, symbol by symbol, in Numba.

:func:`simulate` drives the kernel of :mod:`phy.engines.timesim._kernels` chunk by chunk, so memory stays
bounded whatever the number of UIs: every per-symbol quantity (symbols, transmit noise,
edge jitter) lives in a rolling window a few hundred UIs longer than a chunk, and the
receiver's state (FFE delay line, DFE decisions, CDR loop, burst tracker, postcoder) is
carried from chunk to chunk. The same seed gives the same result bit for bit.

What one UI does, in order:

1. The transmitter maps data symbols to levels (Gray, optional 1/(1+D) precoder), runs
   its FFE, adds its noise, and moves each edge by its jitter.
2. The receiver's ADC samples the analog signal (channel, Tx edge filter, Rx filter,
   CTLE, crosstalk) at the CDR's phase plus its sampling clock's jitter and wander
   (:class:`phy.serdes.Impairments`), adds its noise, and quantises. The cursors near the
   main one (the head) are read at every edge's own jittered time; on a long pulse the
   others (the tail) come from a block convolution of the symbol stream done per chunk by
   FFT, with the edge jitter to first order (:mod:`.tail`).
3. The Rx FFE, the DFE and the slicer decide; errors are counted against the sent
   symbols (detector errors) and, after the postcoder, against the data (symbol and bit
   errors); bursts of detector errors are tracked (a burst ends after as many correct
   decisions in a row as the DFE has taps, at least one).
4. The CDR updates its phase. With an eye diagram, the same is done on a grid of
   ``samples_per_ui`` time offsets around the sampling instant, after the Rx FFE and the
   DFE's correction, and each offset's decisions give the horizontal bathtub.

:func:`simulate` reads as its steps: the prepared link (:func:`phy.serdes.prepare_link`),
the tables the kernel reads (:mod:`.tables`), the random streams (:mod:`.sources`), the
kernel's state (:class:`_State`), the chunks (the kernel's named records are built in
:mod:`.records`), and the result (:func:`.result.assemble`).
"""

from __future__ import annotations

import numpy as np

from fec.interleave import GRAY_PAM4

from ..._validate import integer, number
from ..._validate import seed as check_seed
from ...errors import ConfigError
from ...serdes import Cdr, Jitter, Noise, PreparedLink, Receiver, Transmitter, prepare_link
from ...serdes.limits import check_bytes, check_jitter
from . import _kernels as K
from . import cdr_tail as C
from . import records as R
from ._samples import prepare_symbols
from .getwave import simulate_getwave, uses_getwave
from .result import SimulationResult, assemble
from .sources import RxNoise, aggressor_stream, tx_stream
from .tables import Tables, build_tables
from .tail import TailPlan, plan_tail

__all__ = ["simulate"]

# the tail's decomposition (of the pulse's peak, per unit step): the steps' filters well inside
# the 1e-6 of the main cursor the long-span path keeps without jitter, the jitter's first-order
# filters well inside that term's own neglected part
RANK_TOL = (1e-8, 1e-6)


def simulate(
    link,
    n_ui: int,
    *,
    baud_hz: float | None = None,
    tx: Transmitter | None = None,
    rx: Receiver | None = None,
    noise: Noise | None = None,
    jitter: Jitter | None = None,
    cdr: Cdr | None = None,
    samples_per_ui: int = 32,
    eye: bool = False,
    eye_bins: int = 256,
    waveform_ui: int = 0,
    warmup_ui: int | None = None,
    chunk_ui: int = 1 << 17,
    max_errors_recorded: int = 1_000_000,
    span_energy: float = 1e-6,
    span_threshold: float | None = None,
    span_ui: tuple[int, int] | None = None,
    tail: str = "auto",
    head_ui: tuple[int, int] | None = None,
    dfe_feedback: str = "decisions",
    seed: int | None = None,
) -> SimulationResult:
    """Simulate ``n_ui`` unit intervals of a link.

    Parameters
    ----------
    link : channels.Channel or channels.PulseResponse
        The channel (its pulse response is taken at ``baud_hz`` with ``samples_per_ui``),
        or a pulse response without the transceiver's filters (they are applied here).
        Aggressors of the channel become crosstalk with independent random data at a
        random (seeded) symbol phase.
    n_ui : int
        UIs to count (after ``warmup_ui``).
    baud_hz : float
        Symbol rate (Bd), for a Channel.
    tx, rx, noise, jitter, cdr
        The SerDes (:mod:`phy.serdes`); defaults: PAM4, 0.5 V, no equalisation, no noise, no
        jitter, fixed phase at the pulse peak. An IBIS-AMI model (``tx.ami``, ``rx.ami``) that
        runs ``AMI_GetWave`` takes the run to :func:`.getwave.simulate_getwave` (its limits and
        the settings that do not apply there are listed in :mod:`.getwave`).
    samples_per_ui : int
        Time resolution of the simulation and of the eye (fine samples per UI).
    eye : bool
        Build the eye diagram (``samples_per_ui`` columns x ``eye_bins`` voltage bins)
        and the horizontal bathtub.
    eye_bins : int
        Voltage bins of the eye diagram (default 256), with ``eye``.
    waveform_ui : int
        Record the first this many UIs (after warm-up): the ADC input and the slicer input
        on the fine grid, with the sent and decided symbols.
    warmup_ui : int, optional
        UIs run before counting (FFE/DFE history, CDR lock); default 256, plus 20,000
        with a CDR.
    chunk_ui : int
        UIs per kernel call (memory is a few dozen bytes per UI of a chunk).
    max_errors_recorded : int
        Cap on the stored error positions (counts are always exact).
    span_energy : float
        The pulse is trimmed to the span holding all but this fraction of its energy
        (:func:`phy.serdes.pulse.energy_span`: a record's floor is not channel); what was
        dropped, as rms and peak ISI against the peak, is in ``config["span_dropped"]``.
    span_threshold : float, optional
        Trim instead where the pulse stays below this fraction of its peak.
    span_ui : (int, int), optional
        Keep exactly this many UIs before and after the main cursor instead (the ISI
        beyond is ignored: a deliberate truncation, e.g. to drop late reflections).
    tail : {"auto", "fft", "direct"}
        How the cursors beyond the head are summed. ``"direct"``: every cursor by the exact
        edge-jitter kernel (cost per UI grows with the span). ``"fft"``: the head by that
        kernel, the tail as a block convolution of the symbol stream (FFT overlap-save,
        :mod:`.tail`), exact without jitter and with the edge jitter to first order, its
        error bound in ``config["tail"]``. ``"auto"``: ``"fft"`` when the tail holds at
        least 64 UIs of cursors and the jitter moves edges, else ``"direct"``.
    head_ui : (int, int), optional
        UIs before and after the main cursor kept in the exact kernel with ``tail="fft"``;
        default 6 (plus the Rx FFE's pre-cursor taps) before and 16 or, with more DFE and
        Rx FFE taps, their count plus 8 after. (On the library's channels with 0.14 UI of
        edge jitter, heads from (3, 9) to (8, 24) leave the same difference from the direct
        path: it comes from the far cursors, where the exact kernel's linear interpolation
        has kinks the tail's smooth derivative does not.)
    dfe_feedback : {"decisions", "sent"}
        What the DFE subtracts the post-cursors of: the slicer's decisions (a real
        receiver: one error can cause more, in bursts), or the sent symbols (a genie: every
        error is the slicer's own, the error ratio :meth:`phy.StatEye.ser` computes with
        its past decisions right; for checking the two engines against each other).
    seed : int, optional
        Seed of every random stream (symbols, noises, jitters, crosstalk phases).

    Returns
    -------
    SimulationResult
    """
    tx, rx, noise, jitter, cdr = _parts(tx, rx, noise, jitter, cdr)
    n_ui = integer(n_ui, "n_ui", 1)
    if dfe_feedback not in ("decisions", "sent"):
        raise ConfigError(f"dfe_feedback must be 'decisions' or 'sent', got {dfe_feedback!r}")
    if uses_getwave(tx, rx):
        return simulate_getwave(link, n_ui, (tx, rx, noise, jitter, cdr), baud_hz, samples_per_ui, dfe_feedback,
                                eye=eye, eye_bins=eye_bins, waveform_ui=waveform_ui, warmup_ui=warmup_ui,
                                max_errors_recorded=max_errors_recorded, seed=seed)
    chunk_ui = integer(chunk_ui, "chunk_ui", 64, 1 << 24)
    thr = (None if span_threshold is None else number(span_threshold, "span_threshold", positive=True, hi=0.1),
           number(span_energy, "span_energy", positive=True, hi=0.1))
    warmup = (256 + (20_000 if cdr.kind != "fixed" else 0)) if warmup_ui is None else integer(warmup_ui, "warmup_ui", 0)
    lk = prepare_link(link, baud_hz=baud_hz, tx=tx, rx=rx, noise=noise, cdr=cdr, samples_per_ui=samples_per_ui)
    check_jitter(jitter, lk.analog.baud_hz)
    rngs, r_agg = _streams(seed, len(lk.pulse.aggressors))
    tab = build_tables(lk, jitter, cdr, thr, span_ui, r_agg)
    st = _State(lk, tx, rx, cdr, tab, eye, eye_bins, waveform_ui, max_errors_recorded)
    tp = _tail_plan(lk, rx, jitter, cdr, tab, tail, head_ui, eye or st.wave_raw.shape[0] > 0)
    bound = _run(lk, tx, rx, cdr, jitter, tab, st, warmup, warmup + n_ui, chunk_ui, eye, rngs, tp,
                 dfe_feedback == "sent")
    config = _config(lk, (tx, rx, noise, jitter, cdr), n_ui, warmup, seed, dfe_feedback, tab, st, tp, bound)
    return assemble(lk, tx, cdr, st, config, warmup)


def _config(lk: PreparedLink, parts, n_ui: int, warmup: int, seed, dfe_feedback: str, tab: Tables, st: _State,
            tp: TailPlan | None, bound: dict) -> dict:
    """What the run was (the result's ``config``): the rate, the parts, the span, the tail."""
    tx, rx, noise, jitter, cdr = parts
    return {
        "baud_hz": lk.analog.baud_hz, "samples_per_ui": lk.analog.samples_per_ui, "n_ui": n_ui, "warmup_ui": warmup,
        "seed": seed, "tx": tx.to_dict(), "rx": rx.to_dict(), "noise": noise.to_dict(), "jitter": jitter.to_dict(),
        "cdr": cdr.to_dict(), "dfe_feedback": dfe_feedback, "span_ui": [-tab.jpre, tab.jpost], "burst_gap_ui": st.gap,
        "aggressors": tab.agg_S.shape[0], "span_dropped": tab.dropped,
        "tail": None if tp is None else {**tp.to_dict(), **bound},
    }


def _tail_plan(lk: PreparedLink, rx: Receiver, jitter: Jitter, cdr: Cdr, tab: Tables, tail: str, head_ui,
               columns: bool):
    """The tail's plan (:mod:`.tail`), or None for the direct path: the head's lags, and
    every sampling shift the kernel reads (the CDR's range, the sampling clock's
    neighbours, the eye's columns, the bang-bang edge sampler); with a clock recovery and
    no columns, each shift's own filter made as the loop reads it (:mod:`.cdr_tail`)."""
    if tail not in ("auto", "fft", "direct"):
        raise ConfigError(f"tail must be 'auto', 'fft' or 'direct', got {tail!r}")
    if tail == "direct":
        return None
    edge = jitter.model != "symbol"
    if tail == "fft" and not edge:
        raise ConfigError("tail='fft' needs edge jitter: with symbol jitter the victim's own pulse moves whole "
                          "(use tail='direct')")
    if head_ui is None:
        head = (6 + rx.ffe.n_pre, max(16, lk.dfe.size + lk.rx_ffe.size + 8))
    else:
        if not (isinstance(head_ui, (tuple, list)) and len(head_ui) == 2):
            raise ConfigError(f"head_ui must be (UIs before, UIs after) the main cursor, got {head_ui!r}")
        head = (integer(head_ui[0], "head_ui[0]", 0, 4096),
                integer(head_ui[1], "head_ui[1]", max(1, lk.dfe.size), 65536))
    n_tail = max(tab.jpre - head[0], 0) + max(tab.jpost - head[1], 0)
    if n_tail == 0 or (tail == "auto" and (n_tail < 64 or not edge)):
        return None
    spu = lk.analog.samples_per_ui
    lim = tab.phase_lim
    ph = (0, 0) if cdr.kind == "fixed" else (int(np.floor(-lim + 0.5)), int(np.floor(lim + 0.5)))
    lo, hi = ph[0], ph[1]
    if lk.impairments.sampling_rms_s > 0:
        lo, hi = lo - 1, hi + 1
    if columns:
        lo, hi = min(lo, ph[0] - spu // 2), max(hi, ph[1] - spu // 2 + spu - 1)
    if cdr.kind == "bang-bang":
        lo = min(lo, ph[0] - spu // 2)
    e_max = jitter.max_tx_s() / lk.analog.dt_s if edge else 0.0
    if cdr.kind != "fixed" and not columns:  # each shift's own filter, made as the loop reads it
        offsets = [0] + ([-1, 1] if lk.impairments.sampling_rms_s > 0 else []) + (
            [-(spu // 2)] if cdr.kind == "bang-bang" else [])
        return C.lazy_tail(tab.S, tab.pos_base, spu, tab.jpre, tab.jpost, head, np.arange(lo, hi + 1), e_max, offsets)
    return plan_tail(tab.S, tab.pos_base, spu, tab.jpre, tab.jpost, head, np.arange(lo, hi + 1), e_max, RANK_TOL)


def _streams(seed, n_agg: int):
    """The run's random streams from one seed: symbols, Tx noise, Tx jitter, Rx noise, one
    per aggressor (spawned from the aggressors' stream, which also draws their phases) and
    the sampling clock's; and the aggressors' stream."""
    ss = np.random.SeedSequence(check_seed(seed))
    r_sym, r_txn, r_jit, r_rxn, r_agg, r_clk = (np.random.default_rng(s) for s in ss.spawn(6))
    agg_rngs = [np.random.default_rng(s)
                for s in np.random.SeedSequence(int(r_agg.integers(2**63))).spawn(max(n_agg, 1))][:n_agg]
    return (r_sym, r_txn, r_jit, r_rxn, agg_rngs, r_clk), r_agg


def _parts(tx, rx, noise, jitter, cdr):
    """The SerDes parts, defaulted, each of its type (a ConfigError names the one that is not)."""
    tx, rx, noise, jitter, cdr = tx or Transmitter(), rx or Receiver(), noise or Noise(), jitter or Jitter(), cdr or Cdr()
    for name, obj, cls in (("tx", tx, Transmitter), ("rx", rx, Receiver), ("noise", noise, Noise),
                           ("jitter", jitter, Jitter), ("cdr", cdr, Cdr)):
        if not isinstance(obj, cls):
            raise ConfigError(f"{name} must be a {cls.__name__}, got {type(obj).__name__}")
    return tx, rx, noise, jitter, cdr


class _State:
    """What the kernel carries from chunk to chunk (the FFE delay lines, the DFE's
    decisions, the CDR and the counters) and what it fills (the eye, the bathtub, the
    crossings, the waveform, the error positions, the burst spans), with the slicer's
    fixed inputs."""

    def __init__(self, lk: PreparedLink, tx: Transmitter, rx: Receiver, cdr: Cdr, tab: Tables, eye: bool,
                 eye_bins: int, waveform_ui: int, max_errors: int):
        P = lk.analog.samples_per_ui
        eye_bins = integer(eye_bins, "eye_bins", 8, 4096)
        waveform_ui = integer(waveform_ui, "waveform_ui", 0, 1 << 20)
        max_err = integer(max_errors, "max_errors_recorded", 0)
        check_bytes(9.0 * max_err, f"max_errors_recorded={max_err:,} (9 bytes per stored error)")
        check_bytes(16.0 * waveform_ui * (P + 1), f"waveform_ui={waveform_ui:,} at {P} samples per UI")
        check_bytes(8.0 * P * eye_bins * 2, f"an eye of {P} columns x {eye_bins} bins")
        nffe = lk.rx_ffe.size
        self.eye_on = bool(eye)
        self.yring, self.colring, self.ahist = np.zeros(nffe), np.zeros((nffe, P)), np.zeros(lk.dfe.size)
        self.fstate = np.zeros(K.N_FSTATE)
        self.istate = np.zeros(K.N_ISTATE, dtype=np.int64)
        self.istate[K.I_LASTERR] = -1
        self.istate[K.I_UNLOCK] = -1
        self.lock_bound = cdr.lock_bound_ui * P if cdr.kind != "fixed" else np.inf
        self.eye_hist = np.zeros((P, eye_bins), dtype=np.int64)
        self.col_err = np.zeros(P, dtype=np.int64)
        self.cross = np.zeros(P * K.CROSS_SUB, dtype=np.int64)
        vmax = eye_range_v(lk, tx, rx)
        self.vlo, self.vstep = -vmax, 2 * vmax / eye_bins
        self.wave_raw, self.wave_z = np.zeros((waveform_ui, P)), np.zeros((waveform_ui, P))
        self.wave_meta = np.zeros((waveform_ui, 2), dtype=np.int64)
        self.err_pos = np.zeros(max_err, dtype=np.int64)
        self.err_val = np.zeros(max_err, dtype=np.int8)
        self.burst_hist = np.zeros(65, dtype=np.int64)
        self.gap = max(1, lk.dfe.size)
        self.gray = GRAY_PAM4.astype(np.int64) if tx.order == 4 else np.array([0, 1], dtype=np.int64)
        self.dfe_v = lk.dfe * lk.h0_v
        self.block = cdr.update_ui if cdr.kind != "fixed" else 1024


def _peak_sums(y: np.ndarray, at: np.ndarray, spu: int, ffe: np.ndarray, main: int | None = None,
               dfe: np.ndarray | None = None) -> np.ndarray:
    """Per fine-sample position ``at`` in ``y``: the sum of the magnitudes of the
    symbol-spaced samples through ``y`` there (linear interpolation, zero beyond its
    ends), after the Rx FFE ``ffe`` and, when given, minus the DFE's ``dfe`` at the
    post-cursors of index ``main`` (the slicer input's peak distortion per unit symbol)."""
    k = np.arange(-(int(np.max(at)) // spu) - 2, (y.size - int(np.min(at))) // spu + 2)
    # the positions in increasing order (k outer): np.interp's search then starts at its last
    # index (the same values, in a third of the time)
    c = np.interp(at[None, :] + spu * k[:, None], np.arange(y.size), y, left=0.0, right=0.0).T
    comb = np.zeros((at.size, k.size + ffe.size - 1))
    for t, w in enumerate(ffe):
        comb[:, t : t + k.size] += w * c
    if dfe is not None and dfe.size:
        m = main + int(np.flatnonzero(k == 0)[0])
        comb[:, m + 1 : m + 1 + dfe.size] -= dfe
    return np.abs(comb).sum(axis=1)


def eye_range_v(lk: PreparedLink, tx: Transmitter, rx: Receiver) -> float:
    """Half the span of the eye's voltage bins (V): the slicer input's worst case at every
    time offset the eye's columns read, not at the sampling phase alone (off-centre columns
    see other cursors, which the DFE, fitted at the sampling phase, does not cancel).

    Per column (the UI around the sampling instant, one fine sample beyond each side for the
    clock's movement): the peak distortion of the Tx-equalised pulse through the Rx FFE with
    the DFE's correction, at the outer level (``swing_v``); plus each aggressor's worst over
    its phase; times 1.2 (edge jitter, the clock's wander), plus 6 rms of the receiver's noise.
    """
    spu = lk.analog.samples_per_ui
    half = spu // 2
    at = lk.sampling_index + np.arange(-half - 1, spu - half + 1)
    h0 = lk.h0_v / tx.swing_v
    victim = _peak_sums(lk.pulse.samples, at, spu, lk.rx_ffe, rx.ffe.n_pre, lk.dfe * h0).max()
    xt = sum(_peak_sums(a.samples, np.arange(spu, 2 * spu, dtype=float), spu, lk.rx_ffe).max()
             for a in lk.pulse.aggressors)
    return float(1.2 * tx.swing_v * (victim + xt) + 6 * lk.rx_noise_rms_v)


def _run(lk, tx, rx, cdr, jitter, tab: Tables, st: _State, warmup: int, total: int, chunk_ui: int, eye: bool, rngs,
         tp: TailPlan | None, genie: bool = False) -> dict:
    """Every chunk through the kernel; the symbols, levels and noises come from their
    streams in a fixed order (transmitter, aggressors, receiver), so the same seed gives
    the same run whatever the chunk size (with a tail, to the FFT's rounding). Returns the
    tail's error bound over the run (empty without a tail)."""
    r_sym, r_txn, r_jit, r_rxn, agg_rngs, r_clk = rngs
    HB = max([tab.jpost + 2] + [int(j) + 2 for j in tab.agg_jmax]) + tx.ffe.coefficients.size + 1
    HA = max([tab.jpre + 2] + [2 - int(j) for j in tab.agg_jmin]) + rx.ffe.n_pre + tx.ffe.coefficients.size + 1
    # every stream starts at the same global UI whatever the pulse's span, so that the symbols,
    # noises and jitter of UI g do not depend on the channel (for spans up to 4096 UI)
    first = -4096 * (1 + HB // 4096)
    stream = tx_stream(first, tx, lk, jitter, r_sym, r_txn, r_jit)
    agg_streams = [aggressor_stream(first, rg, tx) for rg in agg_rngs]
    rx_noise = RxNoise(lk, r_rxn)
    symbol_jitter = jitter.model == "symbol"
    run = R.for_run(lk, tx, rx, cdr, tab, st, tp, eye, warmup, genie, symbol_jitter)
    imp = lk.impairments
    wander = 0.0
    g0 = 0
    if tp is not None:  # the tail's outputs are n_out floats per UI of a chunk: keep them near 16 MB
        chunk_ui = min(chunk_ui, max(4096, (1 << 21) // max(tp.n_out, 1)))
    tb = run.tail.out
    d_max = u_max = rxj_max = 0.0
    edge_bufs = {}  # the edges' arrays, reused from chunk to chunk
    while g0 < total:
        n = min(chunk_ui, total - g0)
        if run.front.jitter_on:  # the sampling clock's error per UI, in fine samples
            d_s, wander = imp.sampling_offsets(n, 1.0 / lk.analog.baud_hz, r_clk, wander)
            rxj = d_s / lk.analog.dt_s
        else:
            rxj = np.zeros(1)
        win = stream.window(g0 - HB, g0 + n + HA)
        sent, eps = win["sent"], win["eps"]
        edges = R.edges_for(sent, win["data"], tp is not None, tp is not None and tp.ku.any(), edge_bufs)
        dm, um = prepare_symbols(edges, run.driver, win["txn"], 0.0 * eps if symbol_jitter else eps, tab.pos_base)
        levels = [s.window(g0 - HB, g0 + n + HA)["lv"] for s in agg_streams]
        if symbol_jitter:
            levels.insert(0, tx.levels[sent] * tx.swing_v)
        agg_a, agg_b, agg_idx = _pulse_inputs(tab, levels, eps if symbol_jitter else None, sent.size)
        if tp is not None:
            tb = tp.outputs(edges.d, edges.u if edges.u.size else None)
            d_max, u_max = max(d_max, dm), max(u_max, um)
            rxj_max = max(rxj_max, float(np.abs(rxj).max()))
        src, tail, front = R.for_chunk(run, agg_a, agg_b, agg_idx, tb, rx_noise.take(n), rxj)
        C.run_chunk(tp, g0, n, HB, edges, run, src, tail, front)
        g0 += n
    if tp is None:
        return {}
    return _tail_bound(tx, lk, tp, d_max, u_max, rxj_max)


def _tail_bound(tx: Transmitter, lk: PreparedLink, tp: TailPlan, d_max: float, u_max: float, rxj_max: float) -> dict:
    """The tail's error bounds at the slicer over a run whose steps reached ``d_max`` (and
    ``|d eps|`` reached ``u_max``) and whose sampling clock moved up to ``rxj_max`` fine
    samples."""
    gain = (1 + 2 * rxj_max) * float(np.abs(lk.rx_ffe).sum())  # the sampling clock's slope, then the Rx FFE
    worst = tp.bound_v(d_max, u_max) * gain
    rms = tp.rms_bound_v(d_max, u_max, _step_correlation_sum(tx, lk)) * gain
    return {"bound_slicer_v": worst, "bound_of_main_cursor": worst / lk.h0_v, "rms_bound_slicer_v": rms,
            "rms_bound_of_main_cursor": rms / lk.h0_v,
            "decomposition_error_v": d_max * tp.err_d + u_max * tp.err_u, "jitter_first_order_error_v": d_max * tp.lin}


def _step_correlation_sum(tx: Transmitter, lk: PreparedLink) -> float:
    """``sum_l |E[d_k d_(k+l)]|`` (V^2) for the driver's steps ``d_k = x_k - x_(k-1)`` with
    random data: ``x`` is the Tx FFE on independent levels plus the transmitter's white noise."""
    c = tx.ffe.coefficients
    var_lv = float(np.var(tx.levels))
    rx_ = np.correlate(c, c, "full") * var_lv  # R_x(l), l = -(n-1) .. n-1, in units of swing^2
    rx_[c.size - 1] += lk.tx_noise_rms ** 2
    r = np.pad(rx_, 2)
    rd = 2 * r[1:-1] - r[:-2] - r[2:]
    return float(np.abs(rd).sum()) * tx.swing_v ** 2


def _pulse_inputs(tab: Tables, levels: list, eps, n: int):
    """Each pulse source's per-symbol weights and table positions: a fixed position for an
    aggressor, the victim's own symbols each at its jittered one (``eps``)."""
    if not levels:
        return np.zeros((0, n)), np.zeros((0, n)), np.zeros((0, n), dtype=np.int64)
    pos = np.repeat(tab.agg_pos[:, None], n, axis=1)
    if eps is not None:
        pos[0] -= eps
    lv = np.stack(levels)
    idx = np.floor(pos).astype(np.int64)
    frac = pos - idx
    return np.ascontiguousarray(lv * (1 - frac)), np.ascontiguousarray(lv * frac), idx
