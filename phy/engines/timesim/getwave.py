"""The time-domain simulator with IBIS-AMI models that run ``AMI_GetWave``: the waveform,
block by block, through the vendor's transmitter, the channel and the vendor's receiver.

:func:`phy.simulate` comes here when the transmitter's or the receiver's
:class:`phy.ami.AmiModel` runs ``AMI_GetWave``. The flow is IBIS-AMI's (IBIS 7.2, 10.2):

1. ``AMI_Init`` of the transmitter on the channel's impulse response (the channel, the Tx
   edge and the receiver's analog filter), then of the receiver on what it returns, each
   in a session of its own process (:meth:`phy.ami.AmiModel.session`);
2. per block of ``block_ui`` UIs: the symbols (the pattern, Gray, the precoder) as a
   waveform held over each UI, through the transmitter's ``AMI_GetWave`` (or its FFE, or
   its ``AMI_Init`` response: a linear model), the transmitter's noise per symbol, the
   channel (an FIR of its impulse response, its state carried from block to block), the
   crosstalk and the receiver's input-referred noise shaped by its analog filter, then the
   receiver's ``AMI_GetWave``: the slicer's input and the model's clock times;
3. the samples at the clock times plus half a UI (IBIS-AMI's convention) or, when the model
   gives none, at a fixed phase: the tool's clock, the peak of the correlation of the
   output with the sent symbols over the warm-up (with ``Cdr(phase=offset_s)`` that far
   from it);
4. the decisions: the delay from the sent symbols to the samples and the slicer's levels
   (main cursor and offset, a least-squares fit) are learnt over the warm-up, as a BERT
   synchronises to its pattern and a receiver adapts its thresholds; then symbol, bit and
   detector errors are counted, bursts tracked and the eye built around the sampling
   instants.

Limits, each refused with a :class:`phy.ConfigError` that says so: edge and clock jitter
(give them to the statistical eye, on the models' ``AMI_Init`` response), a clock
recovery loop of the tool's (the model's clock, or a fixed phase), white noise at the
sampler and a shaped input noise (the noise is input-referred, or the transmitter's per
symbol), an ADC with a receiver model (it is inside the vendor's receiver), and a native Rx
FFE, DFE or ADC behind an ``AMI_GetWave`` transmitter.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.fft import next_fast_len

from fec.interleave import GRAY_PAM4
from fec.montecarlo import Estimate

from ...errors import ConfigError
from ...serdes import pulse as pl
from ...serdes.pulse import impulse_from_pulse, pulse_from_impulse
from ...serdes import signals
from ...serdes.limits import check_bytes
from ...serdes.prepared import _raw_pulse
from .eye import EyeDiagram
from .result import SimulationResult
from .sources import _Source, random_symbols

__all__ = ["simulate_getwave", "uses_getwave"]

_POPCOUNT = np.array([0, 1, 1, 2])  # bits set in 0..3: the bit errors of a Gray (or NRZ) symbol error

#: UIs of the warm-up the sampling phase and the delay are learnt from (at most).
SYNC_UI = 8192

#: UIs per block through the models (a block is ``block_ui * samples_per_ui`` samples).
BLOCK_UI = 4096


def uses_getwave(tx, rx) -> bool:
    """Whether a run of this transmitter and receiver goes through ``AMI_GetWave``."""
    return any(m is not None and m.runs_getwave for m in (tx.ami, rx.ami))


class _Fir:
    """A causal FIR on a stream: each block's output, the filter's state (its last inputs)
    carried over, so the cut into blocks changes nothing but rounding. Overlap-save by FFT,
    the filter's spectrum kept for each transform length (the blocks are of one length)."""

    def __init__(self, h: np.ndarray):
        self.h = np.asarray(h, dtype=float)
        self.prev = np.zeros(self.h.size - 1)
        self._spectra: dict[int, np.ndarray] = {}

    def __call__(self, x: np.ndarray) -> np.ndarray:
        full = np.concatenate([self.prev, x])
        self.prev = full[full.size - self.prev.size :] if self.prev.size else self.prev
        n = next_fast_len(full.size, real=True)
        H = self._spectra.get(n)
        if H is None:
            H = self._spectra[n] = np.fft.rfft(self.h, n)
        return np.fft.irfft(np.fft.rfft(full, n) * H, n)[self.h.size - 1 : full.size]


def _check(tx, rx, noise, jitter, cdr) -> None:
    """What the waveform path does not model, refused by name."""
    if any((jitter.rj_rms_s, jitter.dcd_s, jitter.sj_amplitude_s, jitter.dd_s)):
        raise ConfigError("the IBIS-AMI waveform simulation does not move edges: give the jitter to the statistical "
                          "eye (phy.statistical_eye runs the models' AMI_Init response), or simulate without it")
    if cdr.kind != "fixed" or cdr.phase in ("mm", "mm-dfe"):
        raise ConfigError("with an AMI_GetWave model the samples are taken at the model's clock times, or at a fixed "
                          "phase from the peak (Cdr() or Cdr(phase=offset_s)): the tool's clock loops do not apply")
    if noise.rx_noise_rms_v or noise.input_psd is not None or (noise.tx_model == "cursor" and noise.tx_snr_db):
        raise ConfigError("the IBIS-AMI waveform simulation takes the receiver's noise input-referred "
                          "(Noise.rx_noise_psd_v2_per_hz, shaped by Receiver.bandwidth_hz) and the transmitter's per "
                          "symbol (tx_model='path'): white noise at the sampler and a shaped input noise are not "
                          "modelled there (a vendor receiver's are inside its model)")
    if rx.ami is not None and rx.ami.runs_getwave:
        if rx.impairments is not None:
            raise ConfigError("an AMI_GetWave receiver is the whole receiver: Receiver.impairments (its ADC, clock) "
                              "are inside the model")
    elif rx.ffe.n_taps > 1 or rx.dfe.n_taps or rx.impairments is not None:
        raise ConfigError("an AMI_GetWave transmitter runs here with an analog receiver (bandwidth, CTLE, or a model): "
                          "a native Rx FFE, DFE or ADC behind it is not simulated in the waveform path; use an AMI "
                          "receiver, or the statistical eye")
    if noise.rx_noise_psd_v2_per_hz and rx.bandwidth_hz is None:
        raise ConfigError("a receiver noise density (rx_noise_psd_v2_per_hz) needs Receiver.bandwidth_hz")


class _Chain:
    """The signal chain of a run, block by block: symbols -> transmitter -> channel (+
    crosstalk, noise) -> receiver, and what the models said."""

    def __init__(self, link, baud_hz, tx, rx, noise, spu: int, rngs):
        self.tx, self.rx, self.spu = tx, rx, spu
        raw = _raw_pulse(link, baud_hz, spu)
        self.baud, self.dt = raw.baud_hz, raw.dt_s
        fe = pl.front_end(tx.rise_time_s, rx.bandwidth_hz, rx.filter_order, rx.ctle)
        analog = pl.filtered(raw, fe)
        self.sessions = []
        self.notes: dict = {}
        r_sym, r_txn, r_rxn, r_agg = rngs
        self.source, self.prev_sent = _Source(tx, r_sym), 0
        self.r_txn, self.r_rxn = r_txn, r_rxn
        self.tx_sigma = noise.tx_sigma(float(np.mean(tx.levels**2))) * tx.swing_v
        try:
            self._models(analog)
            self._crosstalk(analog, r_agg)
            self._noise(noise, rx)
        except BaseException:
            self.close()
            raise

    def _models(self, analog) -> None:
        """The sessions (``AMI_Init`` on the channel, in IBIS-AMI's order) and the FIRs."""
        tx, rx, spu, dt, ui = self.tx, self.rx, self.spu, self.dt, 1.0 / self.baud
        h_ch = impulse_from_pulse(analog.samples, spu)
        self.tx_gw = self.rx_gw = None
        if tx.ami is not None and tx.ami.runs_getwave:
            self.tx_gw = tx.ami.session(h_ch[None] / dt, dt, ui)
            self.sessions.append(self.tx_gw)
            self.notes["tx_init_params_out"] = self.tx_gw.init_out.params_out
            h_after_tx = self.tx_gw.init_out.impulse[0] * dt if tx.ami.ami.init_returns_impulse else h_ch
            self.signal = _Fir(h_ch)  # the waveform out of the Tx model, through the channel
        else:
            eq = tx.ami.equalise(analog) if tx.ami is not None else pl.tx_equalised(analog, tx.ffe, False)
            h_after_tx = impulse_from_pulse(eq.samples, spu)
            self.signal = _Fir(eq.samples)  # one symbol per UI (a comb) through the equalised pulse
        rx_h = None
        if rx.ami is not None and rx.ami.runs_getwave:
            self.rx_gw = rx.ami.session(h_after_tx[None] / dt, dt, ui)
            self.sessions.append(self.rx_gw)
            self.notes["rx_init_params_out"] = self.rx_gw.init_out.params_out
        elif rx.ami is not None:  # a linear receiver model: its own response in the signal's path and the noise's
            rx_h, n0 = rx.ami.impulse_response(dt, ui, analog.samples.size)
            rx_h = rx_h[n0:]
            self.signal = _Fir(np.convolve(self.signal.h, rx_h)[: self.signal.h.size])
        self.rx_linear = rx_h
        self.h_after_tx = pulse_from_impulse(h_after_tx, spu)

    def _crosstalk(self, analog, r_agg) -> None:
        """Each aggressor: independent random levels at the victim's swing through its pulse
        (the transmitter's FFE or ``AMI_Init`` response on it)."""
        self.aggs = []
        tx = self.tx
        for i, a in enumerate(analog.aggressors):
            if tx.ami is not None and tx.ami.ami.init_returns_impulse:
                y = tx.ami.equalise(dataclasses.replace(a, aggressors=())).samples
            else:
                y = tx.ffe.apply(a.samples, self.spu)
            if self.rx_linear is not None:
                y = np.convolve(y, self.rx_linear)[: y.size]
            self.aggs.append((_Fir(y), r_agg[i]))

    def _noise(self, noise, rx) -> None:
        """The receiver's input-referred noise: white at the fine sampling with one-sided
        density ``rx_noise_psd_v2_per_hz``, through the analog filter (and a linear AMI
        receiver's response)."""
        self.rx_fir, self.rx_sigma = None, 0.0
        psd = noise.rx_noise_psd_v2_per_hz
        if psd:
            n = 64 * self.spu
            h = np.fft.irfft(pl.front_end(None, rx.bandwidth_hz, rx.filter_order, rx.ctle)(
                np.fft.rfftfreq(n, self.dt)), n)
            if self.rx_linear is not None:
                h = np.convolve(h, self.rx_linear)[:n]
            self.rx_fir, self.rx_sigma = _Fir(h), float(np.sqrt(psd / (2 * self.dt)))

    def block(self, n: int) -> tuple:
        """The next ``n`` UIs: (data symbols, sent symbols, the receiver's output waveform,
        its clock times (s, absolute; empty without))."""
        spu, tx = self.spu, self.tx
        data = np.empty(n, dtype=np.int64)
        self.source.take(data)
        if tx.precoder:
            sent = signals.precode(data, self.prev_sent).astype(np.int64)
            self.prev_sent = int(sent[-1])
        else:
            sent = data
        v = tx.levels[sent] * tx.swing_v
        txn = self.r_txn.normal(0.0, self.tx_sigma, n) if self.tx_sigma else 0.0
        if self.tx_gw is not None:
            w = self.tx_gw.getwave(np.repeat(v, spu)).wave
            if self.tx_sigma:
                w = w + np.repeat(txn, spu)
            y = self.signal(w)
        else:
            y = self.signal(_comb(v + txn, spu))
        for fir, rng in self.aggs:
            y += fir(_comb(tx.levels[random_symbols(rng, n, tx.order)] * tx.swing_v, spu))
        if self.rx_fir is not None:
            y += self.rx_fir(self.r_rxn.normal(0.0, self.rx_sigma, n * spu))
        if self.rx_gw is None:
            return data, sent, y, np.empty(0)
        out = self.rx_gw.getwave(y)
        return data, sent, out.wave, out.clock_times_s

    def close(self) -> None:
        for s in self.sessions:
            s.close()


def _comb(v: np.ndarray, spu: int) -> np.ndarray:
    """One value per UI at the UI's first sample, zeros between."""
    out = np.zeros(v.size * spu)
    out[::spu] = v
    return out


class _Slicer:
    """The samples of the receiver's output, the decisions and what they are counted
    against: learnt over the warm-up (the sampling phase or the delay to the model's clocks,
    the main cursor and offset), then applied block by block. Each stream (the output, the
    sent symbols, the clock times) is kept from what is still to be decided on, with the
    global index of its first entry, so a block costs its own length."""

    def __init__(self, chain: _Chain, tx, cdr, warmup: int, total: int, eye_bins: int, max_err: int, gap: int):
        self.spu, self.dt, self.tx = chain.spu, chain.dt, tx
        # the delay searched: the pulse's record and as much again for the models' own latency
        self.max_lag_ui = 2 * (chain.h_after_tx.size // chain.spu) + 64
        self.warmup, self.total, self.gap = warmup, total, gap
        self.lv = tx.levels
        self.offset = 0.0 if cdr.phase == "peak" else float(cdr.phase) / chain.dt
        self.buf, self.base = np.zeros(0), 0  # the output, from fine index base on
        self.sent, self.data, self.s0 = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
        self.clock_t, self.c0, self.n_clocks = np.zeros(0), 0, 0  # clock times from clock c0 on
        self.clock_mode, self.delay, self.tau = False, 0, 0.0
        self.next_k = 0  # the next clock (or, without clocks, symbol) to decide
        self.prev_dec = 0
        self.counts = dict(n=0, det=0, sym=0, bit=0)
        self.err_pos, self.err_val, self.max_err = [], [], max_err
        self.eye_bins = eye_bins
        self.eye_hist = self.col_err = None
        self.gray = GRAY_PAM4.astype(np.int64) if tx.order == 4 else np.array([0, 1], dtype=np.int64)
        self.clock_dev = [0.0, 0.0]  # sum and sum of squares of the clock's departure from a steady one

    # ---------------------------------------------------------------- the stream
    def add(self, data, sent, y, clocks) -> None:
        self.buf = np.concatenate([self.buf, y])
        self.data, self.sent = np.concatenate([self.data, data]), np.concatenate([self.sent, sent])
        if clocks.size:
            self.clock_t = np.concatenate([self.clock_t, clocks])
            self.n_clocks += clocks.size

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """(fine index of each pending sampling instant, global index of the sent symbol it
        decides), from :attr:`next_k` on."""
        if self.clock_mode:
            lo = self.next_k - self.c0
            u = self.clock_t[lo:] / self.dt + self.spu / 2
            return u, self.next_k + np.arange(u.size) - self.delay
        k = np.arange(self.next_k, self.s0 + self.sent.size)
        return k * self.spu + self.tau, k

    def _values(self, u: np.ndarray) -> np.ndarray:
        """The output at fine indices ``u`` (linear interpolation; held at the ends)."""
        x = np.clip(np.asarray(u, dtype=float) - self.base, 0.0, self.buf.size - 1.0)
        i = np.minimum(x.astype(np.int64), self.buf.size - 2)
        f = x - i
        return self.buf[i] + f * (self.buf[i + 1] - self.buf[i])

    # ---------------------------------------------------------------- learning
    def learn(self) -> None:
        """The sampling (the model's clocks, or the phase of the peak correlation), the
        delay to the sent symbols and the slicer's levels, from the warm-up."""
        lv = self.lv[self.sent]
        self.clock_mode = self.clock_t.size > 0
        if self.clock_mode:
            self._check_clocks(self.clock_t)
            self.first_clock = float(self.clock_t[0])
            z = self._values(self.clock_t / self.dt + self.spu / 2)
            n = min(self.warmup, SYNC_UI)
            self.delay = _best_lag(z[:n], lv[:n], max_lag=min(self.warmup // 2, self.max_lag_ui))
        else:
            n_ui = self.buf.size // self.spu
            Y = self.buf[: n_ui * self.spu].reshape(n_ui, self.spu)
            w = min(self.warmup // 2, n_ui // 2, SYNC_UI)
            lags = min(n_ui - w, self.max_lag_ui)
            c = np.array([Y[q : q + w].T @ lv[:w] for q in range(lags)])  # (lag in UI, phase in the UI)
            q, r = np.unravel_index(int(np.argmax(c)), c.shape)
            self.tau = q * self.spu + r + self.offset
        u, k = self.positions()
        ok = (k >= self.warmup // 2) & (k < self.warmup) & (u < self.buf.size - 1)  # past the start's transient
        z, a = self._values(u[ok]), lv[k[ok]]
        A = np.vstack([a, np.ones_like(a)]).T
        (self.h0, self.c), *_ = np.linalg.lstsq(A, z, rcond=None)
        if not self.h0 > 0:
            raise ConfigError("the receiver's output does not follow the sent symbols (no positive main cursor over "
                              f"the warm-up of {self.warmup} UIs): the link is closed, or the model's clock is lost")
        self.thresholds = self.c + self.h0 * 0.5 * (self.lv[1:] + self.lv[:-1])

    def _check_clocks(self, t: np.ndarray) -> None:
        ui = self.spu * self.dt
        d = np.diff(t)
        if t.size < 2 or np.any(d < 0.5 * ui) or np.any(d > 1.5 * ui):
            raise ConfigError("the receiver model's clock times are not one per UI (each step within half a UI of "
                              f"{ui:.4g} s): its clock recovery is lost")

    # ---------------------------------------------------------------- deciding
    def decide(self) -> None:
        """Decide every pending sampling instant the stream now holds (with half a UI after
        it for the eye), and count the symbols from the warm-up's end on."""
        u, k = self.positions()
        end = self.base + self.buf.size - 1 - self.spu
        held = np.flatnonzero(~((u < end) & (k < self.s0 + self.sent.size)))
        n = int(held[0]) if held.size else u.size  # the leading run the stream holds
        if not n:
            return
        u, k = u[:n], k[:n]
        if self.clock_mode:
            self._clock_stats(n)
        self.next_k += n
        keep = (k >= self.warmup) & (k < self.total)
        self._count(u[keep], k[keep])

    def _clock_stats(self, n: int) -> None:
        """The model's clock against a steady one started at its first tick."""
        lo = self.next_k - self.c0
        t = self.clock_t[lo : lo + n]
        dev = t - self.first_clock - self.spu * self.dt * np.arange(self.next_k, self.next_k + n)
        self.clock_dev[0] += float(dev.sum())
        self.clock_dev[1] += float((dev**2).sum())

    def _count(self, u: np.ndarray, k: np.ndarray) -> None:
        if not u.size:
            return
        z = self._values(u)
        d = np.searchsorted(self.thresholds, z)
        sent, data = self.sent[k - self.s0], self.data[k - self.s0]
        if self.tx.precoder:
            dd = signals.postcode(d, self.prev_dec).astype(np.int64)
            self.prev_dec = int(d[-1])
        else:
            dd = d
        wrong = d != sent
        c = self.counts
        c["n"] += k.size
        c["det"] += int(wrong.sum())
        c["sym"] += int((dd != data).sum())
        c["bit"] += int(_POPCOUNT[self.gray[dd] ^ self.gray[data]].sum())
        room = self.max_err - sum(x.size for x in self.err_pos)
        self.err_pos.append(k[wrong][:room])
        self.err_val.append((d - sent)[wrong][:room].astype(np.int8))
        if self.eye_hist is not None:
            self._eye(u, sent)

    def start_eye(self, vmax: float) -> None:
        self.vlo, self.vstep = -vmax, 2 * vmax / self.eye_bins
        self.eye_hist = np.zeros((self.spu, self.eye_bins), dtype=np.int64)
        self.col_err = np.zeros(self.spu, dtype=np.int64)

    def _eye(self, u: np.ndarray, sent: np.ndarray) -> None:
        half = self.spu // 2
        for j, off in enumerate(range(-half, self.spu - half)):
            v = self._values(u + off)
            b = np.clip(((v - self.vlo) / self.vstep).astype(np.int64), 0, self.eye_bins - 1)
            self.eye_hist[j] += np.bincount(b, minlength=self.eye_bins)
            self.col_err[j] += int((np.searchsorted(self.thresholds, v) != sent).sum())

    def trim(self) -> None:
        """Forget what is decided: the output before the next sampling instant (less two UIs),
        the symbols before the next one decided, the clock times before the next."""
        u, k = self.positions()
        lo = int(u[0]) - 2 * self.spu if u.size else self.base + self.buf.size - 4 * self.spu
        cut = max(0, lo - self.base)
        self.buf, self.base = self.buf[cut:], self.base + cut
        ks = int(max(0, min(k[0] if k.size else self.s0 + self.sent.size, self.s0 + self.sent.size) - self.s0))
        self.sent, self.data, self.s0 = self.sent[ks:], self.data[ks:], self.s0 + ks
        if self.clock_mode:
            cc = self.next_k - self.c0
            self.clock_t, self.c0 = self.clock_t[cc:], self.next_k

    def bursts(self) -> tuple[np.ndarray, int]:
        hist = np.zeros(65, dtype=np.int64)
        pos = np.concatenate(self.err_pos) if self.err_pos else np.zeros(0, dtype=np.int64)
        if not pos.size:
            return hist, 0
        starts = np.flatnonzero(np.concatenate([[True], np.diff(pos) > self.gap]))
        ends = np.concatenate([starts[1:], [pos.size]]) - 1
        np.add.at(hist, np.minimum(pos[ends] - pos[starts] + 1, 64), 1)
        return hist, int(starts.size)


def _best_lag(z: np.ndarray, a: np.ndarray, max_lag: int) -> int:
    """The lag ``D`` (0 .. ``max_lag``) at which ``z[j]`` follows ``a[j - D]`` best."""
    n = min(z.size, a.size)
    if n < 16:
        raise ConfigError(f"the warm-up gave {n} samples at the model's clock times: too few to align them")
    z, a = z[:n] - z[:n].mean(), a[:n] - a[:n].mean()
    c = [float(z[D:] @ a[: n - D]) / (n - D) for D in range(min(max_lag, n // 2) + 1)]
    return int(np.argmax(c))


def simulate_getwave(link, n_ui: int, parts: tuple, baud_hz, samples_per_ui: int, dfe_feedback: str, *, eye: bool,
                     eye_bins: int, waveform_ui: int, warmup_ui: int | None, max_errors_recorded: int, seed,
                     block_ui: int = BLOCK_UI) -> SimulationResult:
    """:func:`phy.simulate` with a model that runs ``AMI_GetWave`` (the module docstring);
    ``parts`` is ``(tx, rx, noise, jitter, cdr)``. ``span_*``, ``tail``, ``head_ui`` and
    ``chunk_ui`` do not apply here; a model that only returns its ``AMI_Init`` response runs
    in :func:`phy.simulate`'s own path, in its pulse."""
    tx, rx, noise, jitter, cdr = parts
    if dfe_feedback != "decisions":
        raise ConfigError("dfe_feedback='sent' needs the simulator's own DFE; an AMI_GetWave model decides itself")
    from ..._validate import integer
    from ..._validate import seed as check_seed

    _check(tx, rx, noise, jitter, cdr)
    eye_bins = integer(eye_bins, "eye_bins", 8, 4096)
    max_errors_recorded = integer(max_errors_recorded, "max_errors_recorded", 0)
    check_bytes(9.0 * max_errors_recorded, f"max_errors_recorded={max_errors_recorded:,} (9 bytes per stored error)")
    if waveform_ui:
        raise ConfigError("waveform_ui: the IBIS-AMI waveform simulation records no waveform yet; take the eye")
    ss = np.random.SeedSequence(check_seed(seed))
    r_sym, r_txn, r_rxn, r_agg = (np.random.default_rng(s) for s in ss.spawn(4))
    chain = _Chain(link, baud_hz, tx, rx, noise, samples_per_ui, (r_sym, r_txn, r_rxn, r_agg.spawn(8)))
    try:
        span_ui = chain.h_after_tx.size // samples_per_ui
        ignore = max((m.ami.ignore_bits for m in (tx.ami, rx.ami) if m is not None), default=0)
        warmup = max(2048, 2 * span_ui + 512, ignore + 1024) if warmup_ui is None else \
            integer(warmup_ui, "warmup_ui", 0)
        # the warm-up is kept whole until the sampling is learnt: its waveform and symbols
        check_bytes(8.0 * (warmup + span_ui + block_ui) * (samples_per_ui + 2),
                    f"a warm-up of {warmup:,} UIs at {samples_per_ui} samples per UI through the AMI models")
        sl = _Slicer(chain, tx, cdr, warmup, warmup + n_ui, eye_bins, max_errors_recorded, max(1, rx.dfe.n_taps))
        made = 0
        while made < warmup + span_ui:  # the warm-up, and the pulse's span for the samples it delays
            sl.add(*chain.block(block_ui))
            made += block_ui
        sl.learn()
        if eye:
            sl.start_eye(1.25 * float(np.max(np.abs(sl.buf - sl.c))) + abs(sl.c))
        sl.decide()
        while sl.counts["n"] < n_ui and made < warmup + n_ui + 4 * span_ui + 4 * block_ui:
            sl.trim()
            sl.add(*chain.block(block_ui))
            made += block_ui
            sl.decide()
    finally:
        chain.close()
    return _result(sl, chain, tx, rx, cdr, warmup, n_ui, made, seed)


def _result(sl: _Slicer, chain: _Chain, tx, rx, cdr, warmup: int, n_ui: int, made: int, seed) -> SimulationResult:
    c = sl.counts
    bps = 2 if tx.order == 4 else 1
    hist, n_bursts = sl.bursts()
    pos = np.concatenate(sl.err_pos) if sl.err_pos else np.zeros(0, dtype=np.int64)
    val = np.concatenate(sl.err_val) if sl.err_val else np.zeros(0, dtype=np.int8)
    eye = None
    if sl.eye_hist is not None:
        times = (np.arange(chain.spu) - chain.spu // 2) * chain.dt
        eye = EyeDiagram(sl.eye_hist, times, sl.vlo + sl.vstep * np.arange(sl.eye_bins + 1), sl.thresholds,
                         sl.c + sl.h0 * tx.levels, sl.col_err, np.zeros(chain.spu, dtype=np.int64), c["n"],
                         1.0 / chain.baud, tx.modulation)
    config = {
        "engine": "ami-getwave", "n_ui": n_ui, "warmup_ui": warmup, "seed": seed, "samples_per_ui": chain.spu,
        "burst_gap_ui": sl.gap, "clock": "model" if sl.clock_mode else "fixed", "delay_ui": int(sl.delay),
        "sampling_index": None if sl.clock_mode else float(sl.tau), "main_cursor_v": float(sl.h0),
        "offset_v": float(sl.c), "thresholds_v": sl.thresholds.tolist(), "uis_through_models": made,
        "tx": tx.to_dict(), "rx": rx.to_dict(), "cdr": cdr.to_dict(), **chain.notes,
    }
    mean = rms = 0.0
    if sl.clock_mode:  # the model's clock: how far it moved from a steady one started at its first tick
        n = max(sl.next_k, 1)
        mean = sl.clock_dev[0] / n
        rms = float(np.sqrt(max(sl.clock_dev[1] / n - mean**2, 0.0)))
        config["clock_times"] = sl.n_clocks
    return SimulationResult(
        n_ui=c["n"], modulation=tx.modulation, symbol_errors=c["sym"], detector_errors=c["det"], bit_errors=c["bit"],
        ber=Estimate.of(c["bit"], c["n"] * bps), ser=Estimate.of(c["sym"], c["n"]), error_ui=pos, error_levels=val,
        errors_truncated=bool(c["det"] > pos.size), burst_span_counts=hist, n_bursts=n_bursts, eye=eye, waveform=None,
        cdr_phase_mean_s=mean, cdr_phase_rms_s=rms, link=None, config=config, cdr_locked=None)
