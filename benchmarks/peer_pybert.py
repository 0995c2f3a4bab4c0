"""Peer benchmark: PyBERT's time-domain throughput (unit intervals simulated per second).

Run it with the Python of a separate venv that holds PyBERT (not the project's venv):

    python3 -m venv /tmp/pybert-venv
    /tmp/pybert-venv/bin/pip install PipBERT        # NOT "pybert": that PyPI name is an unrelated BERT NLP package
    /tmp/pybert-venv/bin/python benchmarks/peer_pybert.py --n-ui 100000 --json

PipBERT 11.1.0 pulls its GUI stack (traits, traitsui, pyface, enable, chaco, PySide6),
pyibis-ami and pychopmarg; all are wheels. No display is needed: the script sets
``QT_QPA_PLATFORM=offscreen`` and ``ETS_TOOLKIT=null`` and builds ``PyBERT(run_simulation=False,
gui=False)``.

What is timed: ``pybert.models.bert.my_run_simulation(b, initial_run=True, update_plots=False)``,
best of ``--repeat`` runs after ``--warmup`` untimed runs, garbage collector off while timing.
Import, trait setup, and PyBERT's cached bit, symbol and time vectors are left out. One run
always includes these steps:

- building the channel (native model -> S-parameters -> ``calc_G`` -> irfft -> cubic
  interpolation onto the simulation grid -> trim);
- a channel-only convolution, used for plots and jitter only;
- Tx FFE and channel convolution, plus Gaussian and periodic noise;
- building and trimming the CTLE response, then convolving;
- the identity Rx FFE convolution;
- DFE + bang-bang CDR + AGC, a per-sample pure-Python loop over all n_ui x 32 samples;
- BER against the pattern;
- pulse, step and frequency responses of every stage;
- jitter analysis (crossings, TIE, decomposition, spectra) at four nodes: the channel, Tx
  and channel, CTLE, and DFE outputs.

Eye diagrams, bathtubs and plot data are only built when ``--eyes`` is given
(``update_plots=True``). COM is off (``enable_com=False``).

Settings, next to the target (PAM4, 106.25 GBd, lossy channel with a ~64 UI pulse response,
8 DFE taps, random noise, random + sinusoidal jitter, 32 samples per UI):

- modulation: ``mod_type="PAM-4"``, ``bit_rate=212.5`` Gb/s, which is 106.25 GBd.
  ``nbits = 2 * n_ui``. PyBERT allows 1000 to 10,000,000 bits, so n_ui runs from 500 to
  5,000,000.
- pattern: PRBS-7 with LFSR seed 1 (PyBERT's default). Gray-coded bit pairs map to symbols
  +-1 and +-1/3 with ``vod = 1`` V. The seed also fixes NumPy's noise draws, so repeats match.
  PyBERT's jitter decomposition needs ``eye_bits`` of at least 10 x 2^n for PRBS-n, which
  rules out long patterns.
- ``eye_bits = nbits // 2``: the second half of the run is used for BER and jitter.
- samples per UI: ``nspui = 32``.
- channel: the built-in "native" model (Howard Johnson's lossy line) with ``l_ch = 0.1`` m and
  defaults for everything else. Tx and Rx pad capacitances are ``cout = cin = 0.05`` pF; the
  default 0.5 pF alone costs more than 30 dB at 53 GHz. ``f_max = 150`` GHz and
  ``f_step = 10`` MHz. That gives about 16 dB of loss at 53.125 GHz, pads included.
- pulse response length: the channel impulse response is fixed at ``--impulse-ui`` UI
  (default 64) through PyBERT's ``impulse_length`` trait. Left automatic, a lossy channel
  gets trimmed to its 20 UI minimum. The trait is set only while ``calc_chnl_h()`` runs
  (see ``_FixedSpan``). PyBERT cannot make the response longer than the record
  (``n_ui`` UI); the span it actually built is reported as ``measured.pulse_span_ui``
  (the one asked for is ``settings.channel_span_ui``). The native channel is short, so a
  long span is mostly a near-zero tail, but PyBERT convolves directly (``numpy.convolve``),
  so the cost grows as record x span: in the channel and Tx convolutions and in the
  identity Rx FFE, which PyBERT zero-pads to the channel's length.
  ``my_run_simulation`` reuses the trait without converting ns to s, so with it set the CTLE
  response would span the whole record and its convolution would be O(N^2).
- CTLE: trimmed automatically to 30-100 UI, and the length depends on the record length.
  The measured length is reported as ``ctle_span_ui``.
- Tx FFE: 3 taps, pre1 = -0.1 and post1 = -0.1; the cursor is 0.8.
- Tx and Rx impedance: 100 ohm (PyBERT's defaults).
- CTLE: one zero and two poles, ``rx_bw = 60`` GHz, ``peak_freq = 53.125`` GHz,
  ``peak_mag = 10`` dB.
- Rx FFE: PyBERT's default, cursor only. It is an identity filter but is still convolved.
- DFE: 8 taps with PyBERT's default limits, LMS gain 0.1, 100 averages, ideal summing node,
  AGC on.
- CDR: bang-bang, PyBERT's defaults.
- random noise: ``rn = 1`` mV rms. It is white, drawn once per sample (3.4 TS/s), added at
  the Rx input and then filtered by the CTLE.
- jitter: none. PyBERT 11.1 has no random or sinusoidal jitter injection; it only *measures*
  jitter. The nearest knob, kept on at its defaults, is periodic *voltage* noise
  (``pn_mag = 10`` mV, a square wave at ``pn_freq = 11`` MHz, high-passed at 1 MHz).
  PyBERT therefore does no jittered-edge work.
- AGC warm-up: the AGC needs about 10^4 UI before its first update and writes the adapted
  ``decision_scaler`` back into the trait. The warm-up run adapts it, and each timed run then
  starts from that same value.

Check the reported BER. PyBERT trims the CTLE response with ``trim_impulse``, which rolls it
by half the record. For records of about 100-200 ns (about 10,600-21,200 UI here), the
irfft wrap-around lands in front of the main lobe, the CTLE comes out as garbage, and BER
reaches about 40%. Use n_ui of 10,000 or less, or 25,000 or more.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ETS_TOOLKIT", "null")

try:
    import numpy as np
    from pybert import __version__ as PYBERT_VERSION
    from pybert.models.bert import my_run_simulation
    from pybert.pybert import PyBERT
except ImportError as err:
    sys.exit(
        f"peer_pybert: cannot import PyBERT ({err}).\n"
        "Run this script with the Python of a venv holding the SerDes simulator, e.g.\n"
        "  python3 -m venv /tmp/pybert-venv && /tmp/pybert-venv/bin/pip install PipBERT\n"
        "  /tmp/pybert-venv/bin/python benchmarks/peer_pybert.py --json\n"
        "(the PyPI package named 'pybert' is an unrelated BERT NLP library)."
    )

BAUD = 106.25e9
SPAN_UI = 64  # default channel impulse (so pulse) response length, UI (--impulse-ui)
N_DFE_TAPS = 8
TX_FFE = {-1: -0.1, 1: -0.1}  # tap position -> weight; cursor = 1 - sum(|w|)
TRAITS = {  # applied in this order (nbits before eye_bits)
    "mod_type": "PAM-4",
    "bit_rate": 2 * BAUD / 1e9,  # Gb/s
    "nspui": 32,
    "pattern": "PRBS-7",
    "seed": 1,
    "inter_sel": "native",
    "l_ch": 0.1,  # m
    "cout": 0.05,  # pF
    "cin": 0.05,  # pF
    "f_max": 150.0,  # GHz
    "f_step": 10.0,  # MHz
    "rx_bw": 60.0,  # GHz
    "peak_freq": 53.125,  # GHz
    "peak_mag": 10.0,  # dB
    "ctle_enable": True,
    "rn": 0.001,  # V rms
    "pn_mag": 0.01,  # V
    "pn_freq": 11.0,  # MHz
    "gain": 0.1,
    "n_ave": 100.0,
    "sum_ideal": True,
    "use_agc": True,
    "cdr_type": "Bang-Bang",
    "enable_com": False,
}
STAGES = ("channel", "tx", "ctle", "ffe", "dfe", "jitter")  # PyBERT's own <stage>_perf counters


class _FixedSpan(PyBERT):
    """PyBERT with the channel impulse response fixed at ``fixed_span_ui`` UI.

    ``impulse_length`` (ns) is set only while the channel is built; ``my_run_simulation``
    misreads it as seconds when trimming the CTLE (see the module docstring).
    """

    fixed_span_ui = SPAN_UI  # a plain class value; traits turns it into an Int trait

    def calc_chnl_h(self):
        self.impulse_length = self.fixed_span_ui * self.ui * 1e9
        try:
            return super().calc_chnl_h()
        finally:
            self.impulse_length = 0.0


def configure(n_ui: int, span_ui: int = SPAN_UI) -> PyBERT:
    """A headless PyBERT set up as in the module docstring, for ``n_ui`` PAM4 symbols and a
    channel impulse response of ``span_ui`` UI."""
    b = _FixedSpan(run_simulation=False, gui=False)
    b.fixed_span_ui = span_ui
    for name, value in {**TRAITS, "nbits": 2 * n_ui, "eye_bits": n_ui}.items():
        setattr(b, name, value)
    for tap in b.tx_taps:
        tap.enabled = tap.pos in TX_FFE
        tap.value = TX_FFE.get(tap.pos, 0.0)
    for k, tap in enumerate(b.dfe_tap_tuners):
        tap.enabled = k < N_DFE_TAPS
    _ = b.t, b.bits, b.symbols  # cached properties: setup, not simulation
    return b


def run_once(b: PyBERT, eyes: bool) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        my_run_simulation(b, initial_run=True, update_plots=eyes)
        return time.perf_counter() - t0
    finally:
        gc.enable()


def facts(b: PyBERT, seconds: float) -> dict:
    """What the last run built and did: channel, CTLE, DFE, BER, and PyBERT's per-stage times."""
    nspui = b.nspui
    i_nyq = int(np.argmin(abs(b.f - BAUD / 2)))
    work = b.nbits * (nspui // 2)  # PyBERT's *_perf = nbits * nspb / seconds (nspb = nspui/2 for PAM4)
    stages = {s: work / getattr(b, f"{s}_perf") for s in STAGES}
    stages["other"] = seconds - sum(stages.values())
    return {
        "loss_at_nyquist_db": round(20 * np.log10(abs(b.chnl_H[i_nyq]) / abs(b.chnl_H[1])), 2),
        "pulse_span_ui": b.len_h / nspui,
        "ctle_span_ui": len(b.ctle_h) / nspui,
        "ber": b.n_errs_dfe / b.eye_bits,
        "dfe_taps": [round(float(w), 4) for w in b.adaptation[-1]],
        "stage_seconds": {k: round(v, 3) for k, v in stages.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-ui", type=int, default=100_000, help="PAM4 symbols per run (500..5e6)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (adapts the AGC)")
    ap.add_argument("--impulse-ui", type=int, default=SPAN_UI,
                    help=f"channel impulse response length, UI (default {SPAN_UI}; at most --n-ui)")
    ap.add_argument("--eyes", action="store_true", help="also build eye diagrams, bathtubs, plot data")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if not 500 <= args.n_ui <= 5_000_000 or args.repeat < 1 or args.warmup < 0:
        ap.error("need 500 <= --n-ui <= 5e6, --repeat >= 1, --warmup >= 0")
    if not 1 <= args.impulse_ui <= args.n_ui:
        ap.error("need 1 <= --impulse-ui <= --n-ui")

    b = configure(args.n_ui, args.impulse_ui)
    first = [run_once(b, args.eyes) for _ in range(args.warmup)]
    agc_start = b.decision_scaler
    times = []
    for _ in range(args.repeat):
        b.decision_scaler = agc_start
        times.append(run_once(b, args.eyes))
    best = min(times)
    measured = facts(b, times[-1])

    eyes = ", eye diagrams and bathtubs" if args.eyes else "; no eye diagrams"
    notes = (
        f"Timed: my_run_simulation(update_plots={args.eyes}): channel build, Tx/CTLE/FFE convolutions, "
        f"per-sample Python DFE/CDR loop, BER, jitter analysis at 4 nodes{eyes}. No RJ/SJ injection "
        "exists in PyBERT (periodic voltage noise instead). Single-threaded. "
        "stage_seconds are PyBERT's own counters from the last run."
    )
    if measured["ber"] > 1e-3:
        notes += " WARNING: BER > 1e-3: the link is not working (see the CTLE trim bug in the docstring)."
    result = {
        "peer": "pybert",
        "version": PYBERT_VERSION,
        "n_ui": args.n_ui,
        "seconds": best,
        "ui_per_s": args.n_ui / best,
        "pulse_span_ui": measured["pulse_span_ui"],  # as built; settings.channel_span_ui is as asked
        "settings": {
            **TRAITS,
            "baud": BAUD,
            "nbits": b.nbits,
            "eye_bits": b.eye_bits,
            "channel_span_ui": args.impulse_ui,
            "tx_ffe": {str(k): v for k, v in TX_FFE.items()},
            "dfe_taps": N_DFE_TAPS,
            "rx_ffe": "cursor only (identity)",
            "rj_sj": None,
            "eyes": args.eyes,
        },
        "measured": measured,
        "all_seconds": times,
        "warmup_seconds": first,
        "platform": f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs",
        "notes": notes,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"PyBERT {PYBERT_VERSION}: {args.n_ui} UI in {best:.3f} s (best of {args.repeat}) "
              f"= {result['ui_per_s']:.0f} UI/s; pulse span {measured['pulse_span_ui']:g} UI; "
              f"BER {measured['ber']:.2e}; "
              f"stages {measured['stage_seconds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
