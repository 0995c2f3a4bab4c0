"""Speed and accuracy of the time-domain simulator (``phy.simulate``), side by side with PyBERT.

One core (thread counts set to 1 before numpy/numba load; pinned to CPU 0 where allowed).

Speed case (issue 4): PAM4 at 106.25 GBd over the built-in ``chip_to_module`` channel, its
pulse response cut to 64 UI (8 before the main cursor, 55 after), Tx rise 4 ps and a
pre-cursor tap of -0.1, Rx 4th-order Butterworth at 0.75 baud, the 802.3ck CTLE at -10 dB,
8 DFE taps (pre-FEC SER about 1e-5); noise on (Tx
SNR 33 dB, Rx density 8.2e-9 V^2/GHz through the front end) and jitter on (Tx RJ 0.01 UI
rms, DCD 0.02 UI, SJ 0.05 UI at baud/1000), fixed sampling phase. It reports UI/s
counting errors at the slicer, UI/s while also building a 32-samples-per-UI eye (with
the bathtub and crossing histograms), and peak memory (max RSS of the process and the
peak of Python allocations while simulating).

``--long-ui N`` also runs N UI (e.g. 1e9) in the slicer mode and reports its peak memory:
memory is per chunk, not per UI.

``--pybert-python PATH`` runs ``peer_pybert.py`` (PyBERT, PyPI "PipBERT") with that
interpreter in the same run and prints the ratio; see that script for its settings
(PyBERT cannot inject jitter, so it does less work per UI than we do here).

``--awgn`` checks accuracy: PAM4 SER against ``2 (1 - 1/M) Q(d / sigma)`` from 1e-2 to 1e-5
on an ideal channel, with enough UI for about 1000 errors at each point, and NRZ BER
against ``Q(d / sigma)``.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
from scipy import stats

import channels
import phy.serdes.pulse as pl
from phy.engines import simulate
from phy.serdes import Jitter, Noise, Receiver, Transmitter
from phy.serdes.equalizers import Ctle, Dfe, TxFfe

BAUD = 106.25e9
TARGET_SLICER = 10e6  # UI/s counting errors at the slicer
TARGET_EYE = 1e6  # UI/s with a 32-samples-per-UI eye


def speed_case() -> dict:
    ui = 1 / BAUD
    return {
        "link": channels.library.get("chip_to_module"),
        "baud_hz": BAUD,
        "tx": Transmitter(swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12, ffe=TxFfe.ieee(pre=(-0.1,))),
        "rx": Receiver(bandwidth_hz=0.75 * BAUD, ctle=Ctle.ieee_802_3ck(BAUD, -10.0), dfe=Dfe(8)),
        "noise": Noise(tx_snr_db=33.0, rx_noise_psd_v2_per_hz=8.2e-18),
        "jitter": Jitter(rj_rms_s=0.01 * ui, dcd_s=0.02 * ui, sj_amplitude_s=0.05 * ui, sj_frequency_hz=BAUD / 1000),
        "span_ui": (8, 55),
        "samples_per_ui": 32,
        "seed": 1,
    }


def timed(n_ui: int, eye: bool, repeat: int) -> dict:
    """Best of ``repeat`` timed runs (no allocation tracing while timing), then one run under
    ``tracemalloc`` for the peak of Python allocations."""
    best = None
    for _ in range(repeat):
        kw = speed_case()
        link = kw.pop("link")
        t0 = time.perf_counter()
        r = simulate(link, n_ui, eye=eye, **kw)
        dt = time.perf_counter() - t0
        if best is None or dt < best["seconds"]:
            best = {"seconds": dt, "ui_per_s": n_ui / dt, "ser": r.ser.value, "errors": r.symbol_errors,
                    "span_ui": r.config["span_ui"]}
    kw = speed_case()
    link = kw.pop("link")
    tracemalloc.start()
    simulate(link, min(n_ui, 2_000_000), eye=eye, **kw)
    best["python_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    best["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return best


def awgn() -> list[dict]:
    y = np.zeros(64 * 32)
    y[5 * 32 : 6 * 32] = 1.0
    pulse = pl.from_samples(y, BAUD, 32)
    rows = []
    for mod, targets in (("pam4", (1e-2, 1e-3, 1e-4, 1e-5)), ("nrz", (1e-3, 1e-5))):
        M = 4 if mod == "pam4" else 2
        d = 0.5 / (M - 1)
        for target in targets:
            sigma = d / stats.norm.isf(target / (2 * (1 - 1 / M)))
            n = int(1000 / target)
            t0 = time.perf_counter()
            r = simulate(pulse, n, tx=Transmitter(mod, swing_v=0.5), noise=Noise(rx_noise_rms_v=sigma), seed=3)
            theory = 2 * (1 - 1 / M) * stats.norm.sf(d / sigma)
            rows.append({"modulation": mod, "n_ui": n, "ser_theory": theory, "ser": r.ser.value,
                         "ser_low": r.ser.low, "ser_high": r.ser.high, "ratio": r.ser.value / theory,
                         "ber": r.ber.value, "ber_over_ser": r.ber.value / r.ser.value,
                         "seconds": time.perf_counter() - t0})
    return rows


def pybert(python: str, n_ui: int) -> dict:
    out = subprocess.run([python, str(REPO / "benchmarks" / "peer_pybert.py"), "--n-ui", str(n_ui), "--json"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip()[-400:]}
    text = out.stdout
    return json.loads(text[text.index("{") :])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-ui", type=float, default=2e7, help="UI for the slicer-only timing")
    ap.add_argument("--eye-ui", type=float, default=2e6, help="UI for the timing with an eye")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--long-ui", type=float, default=0, help="also run this many UI and report peak memory")
    ap.add_argument("--pybert-python", help="python of a venv with PipBERT: run the peer side by side")
    ap.add_argument("--pybert-ui", type=int, default=100_000)
    ap.add_argument("--awgn", action="store_true", help="accuracy against the AWGN closed forms")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--no-pin", action="store_true")
    args = ap.parse_args()
    if not args.no_pin and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {0})
        except OSError:
            pass
    res: dict = {}
    warm = speed_case()
    simulate(warm.pop("link"), 2000, eye=True, **warm)  # compile (or load the cache) before timing
    res["slicer"] = timed(int(args.n_ui), False, args.repeat)
    res["eye"] = timed(int(args.eye_ui), True, args.repeat)
    print(f"slicer only : {res['slicer']['ui_per_s'] / 1e6:6.2f} M UI/s (target {TARGET_SLICER / 1e6:g} M), "
          f"span {res['slicer']['span_ui']} UI, SER {res['slicer']['ser']:.3g}")
    print(f"with eye    : {res['eye']['ui_per_s'] / 1e6:6.2f} M UI/s (target {TARGET_EYE / 1e6:g} M), 32 samples/UI")
    print(f"memory      : max RSS {res['eye']['max_rss_mb']:.0f} MB, Python peak while simulating "
          f"{max(res['slicer']['python_peak_mb'], res['eye']['python_peak_mb']):.1f} MB")
    if args.long_ui:
        res["long"] = timed(int(args.long_ui), False, 1)
        print(f"long run    : {args.long_ui:.3g} UI in {res['long']['seconds']:.1f} s, max RSS "
              f"{res['long']['max_rss_mb']:.0f} MB, Python peak {res['long']['python_peak_mb']:.1f} MB")
    if args.pybert_python:
        peer = pybert(args.pybert_python, args.pybert_ui)
        res["pybert"] = peer
        if "ui_per_s" in peer:
            print(f"PyBERT      : {peer['ui_per_s']:,.0f} UI/s ({args.pybert_ui} UI, PAM4, 32 samples/UI, no jitter "
                  f"injection); ours is {res['slicer']['ui_per_s'] / peer['ui_per_s']:,.0f}x (slicer) and "
                  f"{res['eye']['ui_per_s'] / peer['ui_per_s']:,.0f}x (with eye)")
        else:
            print(f"PyBERT      : not run: {peer['error']}")
    if args.awgn:
        res["awgn"] = awgn()
        for row in res["awgn"]:
            print(f"AWGN {row['modulation']:4s}: theory {row['ser_theory']:.3e}  measured {row['ser']:.3e} "
                  f"[{row['ser_low']:.3e}, {row['ser_high']:.3e}]  ratio {row['ratio']:.3f}  BER/SER "
                  f"{row['ber_over_ser']:.3f}  ({row['n_ui']:.2g} UI, {row['seconds']:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
