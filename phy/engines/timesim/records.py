"""What the time-domain kernels read and write, as named records grouped by concept.

Each record is a :class:`typing.NamedTuple` of arrays and scalars: Numba passes it to the
``@njit(cache=True)`` kernels as a struct of the same fields (cached like separate
arguments, and as fast: ``benchmarks/bench_kernel_args.py``), and the kernels read its
fields by name.
The records are built here and only here, from the prepared link and the run's state
(:func:`for_run`, once per run; :func:`for_chunk`, per chunk); to add a term to the
kernel, add a field to the record of its concept, fill it in the builder below, and read
it in the kernel.

Every field keeps one type for every run (an int, a float, a bool, or an array of one
dtype, dimension and layout): a record whose field changed type would compile the kernel
again (about 10 s) and store a second entry in Numba's cache. The builders convert the
scalars for that.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Clock", "Driver", "Edges", "Equaliser", "Errors", "EyeOut", "FrontEnd", "Run", "Slicer", "Sources",
           "State", "StepTable", "Tail", "edges_for", "for_chunk", "for_run"]


class Driver(NamedTuple):
    """The transmitter's driver: the levels, its FFE and its swing."""

    levels: np.ndarray  # level of each symbol index (unit swing; zero for symbol jitter's step source)
    ffe: np.ndarray  # Tx FFE taps
    main: int  # the FFE's main tap
    swing: float  # V


class Edges(NamedTuple):
    """The victim's symbols over a chunk's window, one entry per symbol (global UI ``g``
    at ``g - g0 + hist``), and each edge's table position and weights
    (:func:`phy.engines.timesim._samples.prepare_symbols` fills all but ``sent`` and ``data``)."""

    sent: np.ndarray  # int64: the sent symbol index (after the precoder)
    data: np.ndarray  # int64: the data symbol index (before the precoder)
    x: np.ndarray  # the driver's amplitude (V)
    a: np.ndarray  # the step d = x_k - x_(k-1) times (1 - f): the weight of table sample idx
    b: np.ndarray  # d f: the weight of idx + 1
    ax: np.ndarray  # x (1 - f), for the settled edges
    bx: np.ndarray  # x f
    idx: np.ndarray  # int64: the edge's whole fine samples into the step table
    d: np.ndarray  # the steps, for the tail (empty without one)
    u: np.ndarray  # the steps times the edge jitter, for the tail (empty without jitter in it)


class StepTable(NamedTuple):
    """The victim's step response, read at every edge's own jittered time (:mod:`.tables`)."""

    S: np.ndarray  # flat, on the fine grid
    T0: np.ndarray  # T0[row, col] = S[row + col spu]
    T1: np.ndarray  # T1[row, col] = S[row + 1 + col spu]
    spu: int  # fine samples per UI (also the eye's columns)
    jpre: int  # UIs the response spans before the sampled symbol
    jpost: int  # ... and after it (older edges have settled)
    hpre: int  # the head's lags read from the table (the tail's beyond, to jpre / jpost)
    hpost: int


class Sources(NamedTuple):
    """The pulse-based sources: the aggressors, and with symbol jitter the victim's own
    symbols first; one row per source."""

    S: np.ndarray  # flat pulse tables (sources, samples)
    T0: np.ndarray  # as rows, like StepTable's (sources, spu, cols)
    T1: np.ndarray
    jmin: np.ndarray  # int64: each source's lags
    jmax: np.ndarray
    a: np.ndarray  # per chunk: level times (1 - f) per symbol (sources, symbols)
    b: np.ndarray  # level times f
    idx: np.ndarray  # int64: table position per symbol


class Tail(NamedTuple):
    """The far cursors' block convolution (:mod:`.tail`; no rows on the direct path)."""

    out: np.ndarray  # per chunk: the tail's outputs (outputs, UIs), column n - base for local UI n
    coef: np.ndarray  # the weight of each output per sampling shift (outputs, shifts), column shift - s_min
    base: int
    s_min: int


class FrontEnd(NamedTuple):
    """The receiver's front end after the analog signal: its noise, the ADC, the sampling clock."""

    noise: np.ndarray  # per chunk: the receiver's noise at each UI's sample (V)
    adc_step: float  # the ADC's step (V; 0: no ADC)
    adc_top: float  # its clipping level (V)
    clock_offset: np.ndarray  # per chunk: each UI's sampling error (fine samples), with jitter_on
    jitter_on: bool  # the sampling clock jitters or wanders


class Slicer(NamedTuple):
    """The decision: thresholds, levels and the map back to data."""

    order: int  # 2 or 4
    levels: np.ndarray  # level per symbol index (unit swing), what the DFE feeds back
    thresholds: np.ndarray  # V
    gray: np.ndarray  # int64: the bits of each data symbol
    precoded: bool  # the 1/(1+D) precoder: decisions are postcoded against the data


class Equaliser(NamedTuple):
    """The receiver's FFE and DFE."""

    ffe: np.ndarray  # Rx FFE taps
    pre: int  # its pre-cursor taps: samples are taken this many UIs ahead
    dfe: np.ndarray  # DFE taps (V per unit level)
    genie: bool  # feed back the sent symbols instead of the decisions


class Clock(NamedTuple):
    """The clock recovery."""

    kind: int  # 0 fixed, 1 Mueller-Muller (slicer input), 2 bang-bang, 3 Mueller-Muller (FFE output) (Cdr.code)
    kp: float  # proportional gain (UI per detector output)
    ki: float  # integral gain
    h0: float  # the main cursor (V), the MM detector's scale
    phase_lim: float  # the phase's limit (fine samples)
    lock_bound: float  # beyond this phase (fine samples) the loop has lost lock
    block: int  # UIs per phase update (the phase is frozen within a block)


class EyeOut(NamedTuple):
    """The eye diagram, the bathtub, the crossings and the waveform the kernel fills."""

    on: bool
    vlo: float  # the first voltage bin's lower edge (V)
    vstep: float  # the bins' width (V)
    counts: np.ndarray  # int64 (columns, bins)
    col_err: np.ndarray  # int64: slicer errors per column
    cross: np.ndarray  # int64: zero crossings, CROSS_SUB bins per column
    wave_raw: np.ndarray  # (UIs, columns): the ADC input
    wave_z: np.ndarray  # (UIs, columns): the slicer input
    wave_meta: np.ndarray  # int64 (UIs, 2): sent and decided symbol


class Errors(NamedTuple):
    """The error counters' setting and records."""

    warmup: int  # UIs before counting
    gap: int  # a burst ends after this many correct decisions
    pos: np.ndarray  # int64: UI of each recorded detector error
    val: np.ndarray  # int8: its level error
    burst_hist: np.ndarray  # int64: bursts by span


class State(NamedTuple):
    """What the kernel carries from chunk to chunk (:data:`phy.engines.timesim._kernels.I_PREV` ...)."""

    yring: np.ndarray  # the Rx FFE's delay line
    colring: np.ndarray  # ... per eye column
    ahist: np.ndarray  # the DFE's past decisions
    fstate: np.ndarray  # float64 scalars (F_*)
    istate: np.ndarray  # int64 scalars (I_*)


class Run(NamedTuple):
    """A run's records (Python side: the per-chunk fields are filled by :func:`for_chunk`)."""

    driver: Driver
    step: StepTable
    sources: Sources
    tail: Tail
    front: FrontEnd
    slicer: Slicer
    eq: Equaliser
    clock: Clock
    eye: EyeOut
    errors: Errors
    state: State


def for_run(lk, tx, rx, cdr, tab, st, tp, eye: bool, warmup: int, genie: bool, symbol_jitter: bool) -> Run:
    """The records of a run: the prepared link ``lk``, the parts, the tables ``tab``
    (:class:`.tables.Tables`), the state ``st`` (``simulate._State``), the tail's plan ``tp``
    (None on the direct path)."""
    empty, empty_i = np.zeros((0, 0)), np.zeros((0, 0), dtype=np.int64)
    levels = np.zeros_like(tx.levels) if symbol_jitter else tx.levels  # the step source: noise only
    if tp is not None:
        step_head, tail = (tp.head_pre, tp.head_post), Tail(np.zeros((0, 1)), tp.coef, int(tab.jpost), int(tp.s_min))
    else:
        step_head, tail = (tab.jpre, tab.jpost), Tail(np.zeros((0, 1)), np.zeros((0, 1)), int(tab.jpost), 0)
    return Run(
        driver=Driver(levels, tx.ffe.coefficients, int(tx.ffe.main), float(tx.swing_v)),
        step=StepTable(tab.S, tab.T0, tab.T1, int(lk.analog.samples_per_ui), int(tab.jpre), int(tab.jpost),
                       int(step_head[0]), int(step_head[1])),
        sources=Sources(tab.agg_S, tab.agg_T0, tab.agg_T1, tab.agg_jmin, tab.agg_jmax, empty, empty, empty_i),
        tail=tail,
        front=FrontEnd(np.zeros(0), float(lk.adc_step_v), float(lk.adc_top_v), np.zeros(1),
                       bool(lk.impairments.sampling_rms_s > 0)),
        slicer=Slicer(int(tx.order), tx.levels, lk.thresholds_v, st.gray, bool(tx.precoder)),
        eq=Equaliser(lk.rx_ffe, int(rx.ffe.n_pre), st.dfe_v, bool(genie)),
        clock=Clock(int(cdr.code), float(cdr.kp_ui), float(cdr.ki_ui), float(lk.h0_v), float(tab.phase_lim),
                    float(st.lock_bound), int(st.block)),
        eye=EyeOut(bool(eye), float(st.vlo), float(st.vstep), st.eye_hist, st.col_err, st.cross, st.wave_raw,
                   st.wave_z, st.wave_meta),
        errors=Errors(int(warmup), int(st.gap), st.err_pos, st.err_val, st.burst_hist),
        state=State(st.yring, st.colring, st.ahist, st.fstate, st.istate),
    )


def edges_for(sent: np.ndarray, data: np.ndarray, tail_d: bool, tail_u: bool, bufs: dict | None = None) -> Edges:
    """A chunk's edges, to be filled by ``prepare_symbols`` (the tail's ``d`` and ``u``
    only when the tail reads them); their arrays are the front of the buffers in ``bufs``
    when given (kept there from chunk to chunk, grown when a chunk is longer)."""
    n = sent.size

    def buf(key, size, dtype=np.float64):
        if bufs is None:
            return np.empty(size, dtype=dtype)
        b = bufs.get(key)
        if b is None or b.size < size:
            bufs[key] = b = np.empty(size, dtype=dtype)
        return b[:size]

    x, a, b, ax, bx = (buf(k, n) for k in ("x", "a", "b", "ax", "bx"))
    return Edges(sent, data, x, a, b, ax, bx, buf("idx", n, np.int64), buf("d", n if tail_d else 0),
                 buf("u", n if tail_u else 0))


def for_chunk(run: Run, src_a: np.ndarray, src_b: np.ndarray, src_idx: np.ndarray, tail_out: np.ndarray,
              noise: np.ndarray, clock_offset: np.ndarray) -> tuple[Sources, Tail, FrontEnd]:
    """The records with per-chunk fields, for one chunk: the pulse sources' weights and
    positions, the tail's outputs, the receiver's noise and sampling errors."""
    return (run.sources._replace(a=src_a, b=src_b, idx=src_idx), run.tail._replace(out=tail_out),
            run.front._replace(noise=noise, clock_offset=clock_offset))
