"""Peer benchmark: serdespy's time-domain throughput on a given pulse response (UI per second).

Run it with the Python of a venv that holds serdespy (not the project's venv), on a pulse
written by ``benchmarks/peers_timesim.py`` (``pulse_file``):

    /tmp/pybert-venv/bin/pip install serdespy
    /tmp/pybert-venv/bin/python benchmarks/peer_serdespy.py --pulse pulse.npz --n-ui 200000 --json

The ``.npz`` holds ``samples`` (1-D, volts per unit symbol, on the fine grid),
``samples_per_ui``, ``baud_hz`` and ``main_index`` (the sample the slicer takes for the
main cursor). The pulse is used as the whole linear path (Tx, channel, Rx filters, as the
caller built it): serdespy adds no Tx FIR and no CTLE here.

One core: OMP/MKL/OpenBLAS threads are set to 1 before numpy loads and the process is pinned
to CPU 0 (``--cpu``) where the OS allows it. Matplotlib uses the Agg backend (no display).

Setup, not timed (as PyBERT's cached bits are not timed in ``peer_pybert.py``):

- the symbols: ``serdespy.prqs10(1)`` (PRQS10: PRBS20 Gray-coded to PAM4, 2^20 - 1 symbols,
  built by serdespy's pure-Python LFSR loop in about a second), repeated to ``--n-ui``;
- levels ``[-1, -1/3, 1/3, 1]``, so a unit symbol gives the pulse as given;
- the impulse response ``h`` whose response to serdespy's 1-UI hold is the pulse:
  ``h[n] = p[n] - p[n-1] + h[n - samples_per_ui]`` (exact: ``p = h * rect``), because
  serdespy's transmitter makes a held (NRZ-style) waveform that is then convolved with an
  impulse response, as in its examples (``examples/example_channel/5_BER_test.py``). Over
  the pulse's record the held waveform through ``h`` gives the pulse to rounding; past
  its last sample it leaves a tail of less than one UI (the cut pulse's edge spread by
  the hold: at most one extra cursor, about the pulse's last value), reported as
  ``hold_tail_max_v``;
- the DFE taps: the pulse's first ``--dfe-taps`` post-cursors at ``main_index + k *
  samples_per_ui`` (no adaptation), and the slicer thresholds from the main cursor
  ``p[main_index]`` (``Receiver(main_cursor=...)`` scales serdespy's level midpoints).

Timed, "slicer" (one run = ``--n-ui`` UI; best of ``--repeat`` after one untimed warm-up,
garbage collector off, ``np.random.seed(--seed)`` at the start of each run):

1. ``Transmitter(data, levels, baud / 2)``: symbol-to-level mapping
   (``pam4_input_BR``, a Python loop per symbol), then ``TX.oversample(samples_per_ui)``
   (``np.repeat``); with ``--rj-ui`` > 0 also ``TX.gaussian_jitter(rj)`` (a Python loop
   per symbol);
2. the channel: ``scipy.signal.fftconvolve(tx_waveform, h)`` over the whole record with the
   full-length ``h`` (the way serdespy's examples convolve), then the record from
   ``main_index`` on, so every ``samples_per_ui``-th sample is a sampling instant;
3. ``Receiver(y, samples_per_ui, baud / 2, levels, shift=False, main_cursor=p[main_index])``
   (``shift=False``: the sampling phase is known; serdespy's own ``shift_signal``
   heuristic would pick the phase of largest energy) and ``RX.noise(--noise-v)``: white
   Gaussian noise on every fine sample;
4. ``RX.slice_signal()`` (a Python loop per UI) and ``RX.pam4_DFE_BR(taps)``: the
   baud-rate PAM4 DFE, a Python loop per UI with an inner Python loop over the taps,
   giving ``RX.symbols_out``;
5. the error count: ``serdespy.prqs_checker(10, pattern, symbols_out[10:-10])`` (Python
   loops; it counts bit errors, 2 for a two-level miss; its ``print`` calls go to
   ``/dev/null``). It keeps a list of error positions by ``list + [i]``, quadratic in the
   number of errors, so a closed eye makes it slow.

Timed, "eye": all of the above, plus

6. ``RX.pam4_DFE(taps)``: serdespy's oversampled DFE (a Python loop per UI subtracting the
   feedback from the next UI's fine samples), which is what makes a post-DFE eye;
7. the data preparation of ``serdespy.simple_eye`` at ``samples_per_ui`` (32) samples per
   UI, 2 UI per trace, over the whole record: the crop, ``np.split`` into traces and the
   time axis. ``simple_eye`` does nothing else than ``plt.plot`` one line per trace (no
   histogram, no bathtub, nothing returned), which cannot scale to 10^5 traces, so the
   plotting is not in ``ui_per_s_eye``. It is timed once on its own, as serdespy's
   examples use it (1000 traces, its default 600 dpi, Agg, ``canvas.draw()``), and
   reported as ``eye_plot_seconds_1000_traces``.

Checked, not timed: the noiseless fine waveform at a few sampling instants against the
direct sum of the cursors of ``h`` through the hold (the pulse plus the tail above),
``check_max_abs_v``, so the impulse derivation and the alignment hold.

Where serdespy differs from linkmodel's ``phy.simulate``:

- whole-record NumPy: the waveform of all ``n_ui`` x ``samples_per_ui`` samples is built
  and copied several times (memory grows with ``n_ui``; ``phy.simulate`` works in chunks);
  the per-UI work (mapping, slicing, DFE, error check) is Python loops;
- jitter: serdespy can only move Tx edges by a Gaussian amount rounded to the fine sample
  (``gaussian_jitter``; with 32 samples per UI an rms of 0.01 UI moves few edges at all);
  it has no DCD, no sinusoidal jitter, no Rx jitter and no CDR. Off by default here
  (``--rj-ui 0``); ``phy.simulate`` moves edges exactly (edge-jitter kernel);
- noise: one white Gaussian draw per fine sample at the slicer input, not shaped by any
  filter, no Tx noise;
- DFE: fixed taps from the pulse, ideal feedback, no adaptation and no error propagation
  modelling beyond what the decisions do; serdespy's ``lms_equalizer`` is a separate
  Python loop, not used here;
- eye: serdespy plots traces with matplotlib; ``phy.simulate`` accumulates a 2-D
  histogram with bathtub and crossing histograms;
- alignment: the error checker finds the pattern phase by search; ``phy.simulate``
  knows the symbols.

Output: one JSON line, ``{"ui_per_s_slicer", "ui_per_s_eye", "pulse_ui", "n_ui", "notes",
...}`` with per-stage seconds of the best runs, the bit error ratio and the settings; with
``--json`` it is the only thing on stdout.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["MPLBACKEND"] = "Agg"

import argparse
import contextlib
import gc
import json
import platform
import sys
import time

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import scipy
    import scipy.signal
    import serdespy as sdp
except ImportError as err:
    sys.exit(
        f"peer_serdespy: cannot import serdespy ({err}).\n"
        "Run this script with the Python of a venv holding it, e.g.\n"
        "  /tmp/pybert-venv/bin/pip install serdespy\n"
        "  /tmp/pybert-venv/bin/python benchmarks/peer_serdespy.py --pulse pulse.npz --json"
    )

LEVELS = np.array([-1.0, -1.0 / 3.0, 1.0 / 3.0, 1.0])  # PAM4, unit symbol = the pulse as given
EYE_WINDOW_UI = 2  # UI per eye trace, as in serdespy's examples (2 or 3)
PLOT_TRACES = 1000  # traces in serdespy's examples' eye plots


def serdespy_version() -> str:
    try:
        from importlib.metadata import version

        return version("serdespy")
    except Exception:  # noqa: BLE001 - metadata missing is not fatal
        return "unknown"


def read_pulse(path: str) -> dict:
    with np.load(path) as z:
        p = {
            "samples": np.asarray(z["samples"], dtype=float).ravel(),
            "samples_per_ui": int(z["samples_per_ui"]),
            "baud_hz": float(z["baud_hz"]),
            "main_index": int(z["main_index"]),
        }
    spu, m = p["samples_per_ui"], p["main_index"]
    if spu < 2 or not 0 <= m < p["samples"].size:
        raise SystemExit(f"peer_serdespy: bad pulse file {path}: samples_per_ui={spu}, main_index={m}")
    return p


def impulse_from_pulse(p: np.ndarray, spu: int) -> np.ndarray:
    """``h`` with ``h * ones(spu) == p`` (``h[n] = p[n] - p[n-1] + h[n-spu]``)."""
    d = np.diff(p, prepend=0.0)
    n = -(-d.size // spu) * spu
    d = np.concatenate([d, np.zeros(n - d.size)])
    return np.cumsum(d.reshape(-1, spu), axis=0).ravel()[: p.size]


def run(data, pattern, h, pulse, taps, args, eye: bool) -> tuple[dict, object]:
    """One simulation of ``len(data)`` UI the serdespy way; per-stage seconds and the Receiver."""
    spu, m, baud = pulse["samples_per_ui"], pulse["main_index"], pulse["baud_hz"]
    n = data.size
    np.random.seed(args.seed)
    marks = [("start", time.perf_counter())]

    def mark(name):
        marks.append((name, time.perf_counter()))

    tx = sdp.Transmitter(data, LEVELS, baud / 2)  # serdespy: UI = 1 / (2 f)
    tx.oversample(spu)
    if args.rj_ui > 0:
        tx.gaussian_jitter(stdev_div_UI=args.rj_ui)
        x = tx.signal
    else:
        x = tx.signal_ideal
    mark("tx")
    y = scipy.signal.fftconvolve(x, h)[m: m + n * spu]
    mark("channel")
    rx = sdp.Receiver(y, spu, baud / 2, LEVELS, shift=False, main_cursor=pulse["samples"][m])
    rx.noise(args.noise_v)
    mark("noise")
    rx.slice_signal()
    mark("slice")
    rx.pam4_DFE_BR(taps)
    mark("dfe")
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        checked = sdp.prqs_checker(10, pattern, rx.symbols_out[10:-10])
    mark("check")
    if eye:
        rx.pam4_DFE(taps)
        mark("eye_dfe")
        window = EYE_WINDOW_UI * spu
        signal = rx.signal[spu // 2:]  # eye centre at the middle of each UI of a trace
        ntraces = signal.size // window
        tstep = 1.0 / baud / spu
        signal_crop = signal[0: ntraces * window]  # what simple_eye does before plotting
        traces = np.split(signal_crop, ntraces)
        t = np.linspace(-(tstep * (window - 1)) / 2, (tstep * (window - 1)) / 2, window)
        del traces, t
        mark("eye_prep")
    stages = {name: marks[i][1] - marks[i - 1][1] for i, (name, _) in enumerate(marks) if i}
    stages["total"] = marks[-1][1] - marks[0][1]
    stages["errors"] = None if checked is False else int(checked[0])
    stages["checked_symbols"] = int(rx.symbols_out[10:-10].size)
    return stages, rx


def timed(data, pattern, h, pulse, taps, args, eye: bool) -> dict:
    best, seconds, rx = None, [], None
    for i in range(args.repeat + 1):  # the first run is the warm-up
        gc.collect()
        gc.disable()
        try:
            stages, rx = run(data, pattern, h, pulse, taps, args, eye)
        finally:
            gc.enable()
        if i == 0:
            continue
        seconds.append(stages["total"])
        if best is None or stages["total"] < best["total"]:
            best = stages
    return {"best": best, "all_seconds": seconds, "rx": rx}


def check_waveform(rx, data, pulse, h) -> float:
    """Largest difference, at a few sampling instants, between the noiseless waveform and the
    direct sum of the cursors of ``h`` through the 1-UI hold."""
    spu, m = pulse["samples_per_ui"], pulse["main_index"]
    p = np.convolve(h, np.ones(spu))
    a = LEVELS[data]
    worst = 0.0
    for k in np.linspace(0, data.size - 1, 7).astype(int):
        j = np.arange(max(0, k - (p.size - 1 - m) // spu), min(data.size, k + m // spu + 1))
        direct = float(np.dot(a[j], p[m + (k - j) * spu]))
        worst = max(worst, abs(rx.signal_org[k * spu] - direct))
    return worst


def plot_seconds(rx, spu: int, baud: float) -> float:
    """One ``simple_eye`` call as serdespy's examples make it, drawn on Agg."""
    signal = rx.signal[spu // 2:]
    window = EYE_WINDOW_UI * spu
    ntraces = min(PLOT_TRACES, signal.size // window)
    t0 = time.perf_counter()
    sdp.simple_eye(signal, window, ntraces, 1.0 / baud / spu, "serdespy eye")
    plt.gcf().canvas.draw()
    seconds = time.perf_counter() - t0
    plt.close("all")
    return seconds


def pin(cpu: int) -> bool:
    try:
        os.sched_setaffinity(0, {cpu})
        return True
    except (AttributeError, OSError):
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pulse", required=True, help=".npz: samples, samples_per_ui, baud_hz, main_index")
    ap.add_argument("--n-ui", type=int, default=200_000, help="PAM4 symbols per run")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs after one warm-up; the best is reported")
    ap.add_argument("--dfe-taps", type=int, default=8, help="DFE taps (fixed, from the pulse)")
    ap.add_argument("--noise-v", type=float, default=1e-3, help="white noise rms per fine sample, V")
    ap.add_argument("--rj-ui", type=float, default=0.0,
                    help="Tx Gaussian jitter rms, UI (serdespy's gaussian_jitter; 0 = off)")
    ap.add_argument("--seed", type=int, default=1, help="np.random seed at the start of each run")
    ap.add_argument("--cpu", type=int, default=0, help="CPU to pin to (where allowed)")
    ap.add_argument("--no-plot", action="store_true", help="skip the one-off simple_eye plot timing")
    ap.add_argument("--json", action="store_true", help="only the JSON line on stdout")
    args = ap.parse_args()
    if args.n_ui < 1000 or args.repeat < 1 or args.dfe_taps < 0 or args.noise_v < 0 or args.rj_ui < 0:
        ap.error("need --n-ui >= 1000, --repeat >= 1, --dfe-taps >= 0, --noise-v >= 0, --rj-ui >= 0")

    pinned = pin(args.cpu)
    pulse = read_pulse(args.pulse)
    p, spu, m = pulse["samples"], pulse["samples_per_ui"], pulse["main_index"]
    post = m + spu * np.arange(1, args.dfe_taps + 1)
    taps = np.where(post < p.size, p[np.minimum(post, p.size - 1)], 0.0)
    h = impulse_from_pulse(p, spu)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        pattern = sdp.prqs10(1)
    data = np.resize(pattern, args.n_ui).astype(np.uint8)

    slicer = timed(data, pattern, h, pulse, taps, args, eye=False)
    check_v = check_waveform(slicer["rx"], data, pulse, h)
    hold_tail_v = float(np.abs(np.convolve(h, np.ones(spu))[p.size:]).max())
    del slicer["rx"]
    eye = timed(data, pattern, h, pulse, taps, args, eye=True)
    plot_s = None if args.no_plot else plot_seconds(eye["rx"], spu, pulse["baud_hz"])
    del eye["rx"]

    sl, ey = slicer["best"], eye["best"]
    errors = sl["errors"]
    ber = None if errors is None else errors / (2 * sl["checked_symbols"])
    notes = (
        "serdespy " + serdespy_version() + ", one core. slicer = Transmitter (Python symbol loop) + oversample"
        + (" + gaussian_jitter" if args.rj_ui > 0 else "")
        + ", scipy fftconvolve of the whole record with the full-length impulse response (derived from the pulse), "
        "Receiver.noise (white, per fine sample), slice_signal + pam4_DFE_BR (Python loops), prqs_checker. "
        "eye = slicer + pam4_DFE (oversampled, Python loop) + simple_eye's data preparation (crop, np.split into "
        "2-UI traces at " + str(spu) + " samples/UI); simple_eye only plots one matplotlib line per trace, so the "
        "plotting is excluded (eye_plot_seconds_1000_traces: one 1000-trace plot on Agg). Fixed DFE taps from the "
        "pulse; no CTLE/FIR; no DCD/SJ/Rx jitter/CDR in serdespy"
        + ("" if args.rj_ui > 0 else "; jitter off")
        + "."
    )
    if errors is None:
        notes += " WARNING: prqs_checker could not align the pattern (errors in the first symbols): no error count."
    elif ber > 1e-2:
        notes += f" WARNING: BER {ber:.2e}: the eye is closed with this DFE alone; prqs_checker is quadratic in errors."
    result = {
        "peer": "serdespy",
        "version": serdespy_version(),
        "ui_per_s_slicer": args.n_ui / sl["total"],
        "ui_per_s_eye": args.n_ui / ey["total"],
        "pulse_ui": p.size / spu,
        "n_ui": args.n_ui,
        "seconds_slicer": sl["total"],
        "seconds_eye": ey["total"],
        "stage_seconds_slicer": {k: round(v, 4) for k, v in sl.items() if k not in ("errors", "checked_symbols")},
        "stage_seconds_eye": {k: round(v, 4) for k, v in ey.items() if k not in ("errors", "checked_symbols")},
        "all_seconds_slicer": slicer["all_seconds"],
        "all_seconds_eye": eye["all_seconds"],
        "eye_plot_seconds_1000_traces": plot_s,
        "bit_errors": errors,
        "ber": ber,
        "check_max_abs_v": check_v,
        "hold_tail_max_v": hold_tail_v,
        "settings": {
            "baud_hz": pulse["baud_hz"],
            "samples_per_ui": spu,
            "main_index": m,
            "main_cursor_v": float(p[m]),
            "pre_cursor_ui": m / spu,
            "dfe_taps_v": [round(float(w), 5) for w in taps],
            "levels": LEVELS.tolist(),
            "noise_v_rms_per_sample": args.noise_v,
            "tx_rj_ui": args.rj_ui,
            "pattern": "PRQS10 (serdespy.prqs10(1))",
            "eye_window_ui": EYE_WINDOW_UI,
            "seed": args.seed,
            "repeat": args.repeat,
        },
        "platform": f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, {os.cpu_count()} CPUs, pinned to CPU {args.cpu}: {pinned}",
        "notes": notes,
    }
    if not args.json:
        print(f"serdespy {result['version']}: pulse {result['pulse_ui']:g} UI, {args.n_ui} UI: "
              f"slicer {result['ui_per_s_slicer']:.0f} UI/s, eye {result['ui_per_s_eye']:.0f} UI/s; "
              f"BER {ber if ber is None else f'{ber:.2e}'}; stages {result['stage_seconds_slicer']}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
