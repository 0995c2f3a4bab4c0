"""Speed and accuracy of the time-domain simulator (``phy.simulate``) on real channels at
their full span, before and after the long-span path, side by side with PyBERT and serdespy.

One core (thread counts set to 1 before numpy/numba load; pinned to one CPU where allowed).
The SerDes of every case: PAM4, Tx rise 4 ps and a pre-cursor tap of -0.1, Rx 4th-order
Butterworth at 0.75 baud, the 802.3ck CTLE at -10 dB, 8 DFE taps; noise on (Tx SNR 33 dB,
Rx density 8.2e-9 V^2/GHz through the front end) and jitter on (Tx RJ 0.01 UI rms, DCD
0.02 UI, SJ 0.05 UI at baud/1000), fixed sampling phase; 32 samples per UI.

What it prints, in one run:

1. **Full span**: UI/s counting errors at the slicer and with the 32-column eye (bathtub and
   crossings too) on ``twinax_1m_26awg`` and ``chip_to_module`` at 106.25 GBd and, when
   ``../shared/channels`` is there, the 802.3ck cable assembly ``CA_19p75dB`` at 53.125 GBd:
   the code before (``--before``, a checkout of the commit before the long-span path, run in
   a subprocess, with its own default span) and now (default span and path), and the 64-UI
   case (8 UI before the cursor, 55 after) both ways; against the targets (10 M UI/s at the
   slicer and 1 M UI/s with the eye on full spans, 20 M UI/s at the slicer on 64 UI).
2. **Time per UI against span** (64, 256, 512, 923 UI and the whole record, 2,052 UI on the
   cable assembly, else ``twinax_1m_26awg``'s), before and now, the time now split into the
   convolution (the head's scatter, the settled edges, the tail's FFT and its combination,
   each timed alone on the run's own tables and inputs) and the rest (streams, noise and
   jitter draws, decisions, counting, eye).
3. **Accuracy**: the long-span path against the direct one on the same run (waveform at the
   ADC): without jitter (target: under 1e-6 of the main cursor) and with it (within the
   stated worst-case and rms bounds).
4. **Peers** (``--peer-python``, a venv with PipBERT and serdespy; see ``peer_pybert.py``,
   ``peer_serdespy.py`` and ``peers_timesim.py``): PyBERT with a 64-UI and a 923-UI channel
   impulse, serdespy on our own pulse (full record and cut to 64 UI), and the ratios.

``--awgn`` adds the accuracy check against the AWGN closed forms; ``--long-ui N`` a run of N UI
and its peak memory.

    python benchmarks/bench_timesim.py --before /tmp/before22 --peer-python /tmp/pybert-venv/bin/python
    git worktree add --detach /tmp/before22 f05c7bc    # the checkout before the long-span path
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CA = REPO.parent / "shared" / "channels" / "ieee802.3ck" / "CA_19p75dB_thru.s4p"
TARGET_SLICER, TARGET_EYE, TARGET_64 = 10e6, 1e6, 20e6
SPANS = (64, 256, 512, 923)


def _setup(repo: Path):
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))


def case(name: str, span, tail=None) -> tuple:
    """(channel, keyword arguments) of a case; ``span``: None (default), (pre, post) or "record"."""
    import warnings

    import channels
    from phy.serdes import Jitter, Noise, Receiver, Transmitter
    from phy.serdes.equalisers import Ctle, Dfe, TxFfe

    baud = 53.125e9 if name == "CA_19p75dB" else 106.25e9
    if name == "CA_19p75dB":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = channels.load(CA)
    else:
        ch = channels.library.get(name)
    ui = 1 / baud
    kw = {"baud_hz": baud, "samples_per_ui": 32, "seed": 1,
          "tx": Transmitter(swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12, ffe=TxFfe.ieee(pre=(-0.1,))),
          "rx": Receiver(bandwidth_hz=0.75 * baud, ctle=Ctle.ieee_802_3ck(baud, -10.0), dfe=Dfe(8)),
          "noise": Noise(tx_snr_db=33.0, rx_noise_psd_v2_per_hz=8.2e-18),
          "jitter": Jitter(rj_rms_s=0.01 * ui, dcd_s=0.02 * ui, sj_amplitude_s=0.05 * ui, sj_frequency_hz=baud / 1000)}
    if span == "record":
        kw["span_threshold"] = 1e-12
    elif span is not None:
        kw["span_ui"] = tuple(span)
    if tail is not None:
        kw["tail"] = tail
    return ch, kw


def timed(name, span, eye: bool, n_ui: int, repeat: int, tail=None) -> dict:
    """Best of ``repeat`` runs after a warm one."""
    from phy.engines import simulate

    ch, kw = case(name, span, tail)
    r = simulate(ch, 3000, eye=eye, **kw)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = simulate(ch, n_ui, eye=eye, **kw)
        dt = time.perf_counter() - t0
        if best is None or dt < best["seconds"]:
            best = {"seconds": dt, "ui_per_s": n_ui / dt, "ns_per_ui": dt / n_ui * 1e9, "ser": r.ser.value,
                    "span_ui": r.config["span_ui"]}
    tl = r.config.get("tail")
    best["tail"] = None if tl is None else {k: tl[k] for k in ("head_ui", "filters", "rank", "fft_size")}
    return best


def worker(spec: dict) -> dict:
    """Run the cases of ``spec`` with the code on ``sys.path`` (this checkout or ``--before``)."""
    out = {}
    for key, c in spec.items():
        out[key] = timed(c["name"], c["span"], c["eye"], c["n_ui"], c["repeat"], c.get("tail"))
    return out


def run_before(before: Path, spec: dict) -> dict:
    if before is None:
        return {}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec), "--repo", str(before)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip()[-600:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def split(name, span, eye: bool, n_ui: int) -> dict:
    """The convolution's share of a run's time: the head's scatter, the settled edges and the
    tail (its FFT outputs and their combination), each timed alone on one chunk's own tables
    and inputs (captured from the run), scaled to the run's UIs."""
    import numpy as np

    from phy.engines import simulate
    from phy.engines.timesim import _kernels as K
    from phy.engines.timesim import _samples as KS
    from phy.engines.timesim import tail as T

    ch, kw = case(name, span)
    cap, outs = [], []
    run_chunk, outputs = K.run_chunk, T.TailPlan.outputs

    def spy(*a):
        cap.append(a)
        return run_chunk(*a)

    def spy_out(self, d, u):
        outs.append((self, d.copy(), None if u is None else u.copy()))
        return outputs(self, d, u)

    K.run_chunk, T.TailPlan.outputs = spy, spy_out
    try:
        simulate(ch, 1 << 16, eye=eye, chunk_ui=1 << 16, **kw)
    finally:
        K.run_chunk, T.TailPlan.outputs = run_chunk, outputs
    g0, n, hist, edges, step, src, tail, front, slicer, eq, clock, eye_out, errors, state = cap[0]  # a whole chunk
    P, block = step.spu, clock.block
    y, cols = np.zeros(block), np.zeros((block, P))

    def conv():
        for s0 in range(0, n - block + 1, block):
            n_lo = hist + s0 + eq.pre
            n_hi = n_lo + block
            if eye:
                KS.sample_cols(cols, n_lo, n_hi, edges, step, src, tail, -P // 2)
            else:
                KS.sample_row(y, n_lo, n_hi, edges, step, src, tail, 0)

    def best(f):
        f()
        return min(_time(f) for _ in range(3))

    used = (n // block) * block
    t_head = best(conv) / used
    t_fft = 0.0
    if outs:
        plan, d, u = outs[0]
        t_fft = best(lambda: outputs(plan, d, u)) / (d.size - plan.kd.shape[1] + 1)
    return {"convolution_ns_per_ui": (t_head + t_fft) * 1e9, "fft_ns_per_ui": t_fft * 1e9}


def _time(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def accuracy(name: str) -> dict:
    """The long-span path against the direct one, on the same 4,000 UI (the ADC's waveform)."""
    import numpy as np

    from phy.engines import simulate
    from phy.serdes import Jitter, Noise

    out = {}
    for label, jit in (("no jitter", True), ("edge jitter", False)):
        ch, kw = case(name, None)
        kw["noise"] = Noise()
        if jit:
            kw["jitter"] = Jitter()
        r = {t: simulate(ch, 4000, waveform_ui=4000, tail=t, **kw) for t in ("direct", "fft")}
        d = (r["fft"].waveform.adc_v - r["direct"].waveform.adc_v)[500:]
        h0 = r["direct"].link.h0_v
        tl = r["fft"].config["tail"]
        out[label] = {"max_of_main": float(np.abs(d).max() / h0), "rms_of_main": float(np.sqrt(np.mean(d**2)) / h0),
                      "bound_of_main": tl["bound_of_main_cursor"], "rms_bound_of_main": tl["rms_bound_of_main_cursor"],
                      "same_decisions": bool(np.array_equal(r["fft"].waveform.decided, r["direct"].waveform.decided))}
    return out


def peers(python: str, names, n_ui: int) -> dict:
    sys.path.insert(0, str(REPO / "benchmarks"))
    import tempfile

    import peers_timesim as PT

    from phy.serdes import prepare_link

    cpu = os.sched_getaffinity(0).pop() if hasattr(os, "sched_getaffinity") else 0
    # PyBERT runs its own channel (only the impulse's length follows ours), 30,000 UI: outside the
    # record lengths where its CTLE trimming wraps (peers_timesim.run_pybert)
    res = {"pybert_64": PT.run_pybert(python, 30_000, 64, cpu=cpu), "pybert_923": PT.run_pybert(python, 30_000, 923, cpu=cpu)}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            ch, kw = case(name, None)
            lk = prepare_link(ch, baud_hz=kw["baud_hz"], tx=kw["tx"], rx=kw["rx"], samples_per_ui=32)
            for cut in (None, (8, 55)):
                p = Path(tmp) / f"{name}_{cut is not None}.npz"
                PT.pulse_file(lk.pulse, p, int(round(lk.sampling_index)), span_ui=cut)
                res[f"serdespy_{name}_{'64' if cut else 'full'}"] = PT.run_serdespy(python, p, n_ui, cpu=cpu)
    return res


def awgn() -> list[dict]:
    import numpy as np
    from scipy import stats

    import phy.serdes.pulse as pl
    from phy.engines import simulate
    from phy.serdes import Noise, Transmitter

    baud = 106.25e9
    y = np.zeros(64 * 32)
    y[5 * 32 : 6 * 32] = 1.0
    pulse = pl.from_samples(y, baud, 32)
    rows = []
    for mod, targets in (("pam4", (1e-2, 1e-3, 1e-4, 1e-5)), ("nrz", (1e-3, 1e-5))):
        M = 4 if mod == "pam4" else 2
        d = 0.5 / (M - 1)
        for target in targets:
            sigma = d / stats.norm.isf(target / (2 * (1 - 1 / M)))
            n = int(1000 / target)
            r = simulate(pulse, n, tx=Transmitter(mod, swing_v=0.5), noise=Noise(rx_noise_rms_v=sigma), seed=3)
            theory = 2 * (1 - 1 / M) * stats.norm.sf(d / sigma)
            rows.append({"modulation": mod, "n_ui": n, "ser_theory": theory, "ser": r.ser.value, "ser_low": r.ser.low,
                         "ser_high": r.ser.high, "ratio": r.ser.value / theory})
    return rows


def _rate(x) -> str:
    return f"{x['ui_per_s'] / 1e6:6.2f}" if isinstance(x, dict) and "ui_per_s" in x else "   n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-ui", type=float, default=4e6, help="UI per slicer timing")
    ap.add_argument("--eye-ui", type=float, default=4e5, help="UI per eye timing")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, help="a checkout of the code before the long-span path")
    ap.add_argument("--peer-python", help="python of a venv with PipBERT and serdespy")
    ap.add_argument("--peer-ui", type=int, default=200_000, help="UI per serdespy run (PyBERT: 30,000)")
    ap.add_argument("--awgn", action="store_true")
    ap.add_argument("--long-ui", type=float, default=0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--repo", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {args.cpu})
        except OSError:
            pass
    _setup(args.repo)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker)), default=float))
        return 0
    names = ["twinax_1m_26awg", "chip_to_module"] + (["CA_19p75dB"] if CA.exists() else [])
    ns, ne, rep = int(args.n_ui), int(args.eye_ui), args.repeat
    res: dict = {"full_span": {}, "span_table": {}, "accuracy": {}}
    # 1. full span and 64 UI, before and now
    spec = {}
    for name in names:
        for span, tag in ((None, "full"), ((8, 55), "64")):
            spec[f"{name}|{tag}|slicer"] = {"name": name, "span": span, "eye": False, "n_ui": ns // 4, "repeat": rep}
            spec[f"{name}|{tag}|eye"] = {"name": name, "span": span, "eye": True, "n_ui": ne // 4, "repeat": rep}
    before = run_before(args.before, spec)
    print("1. UI/s (M), one core, PAM4, 8 DFE taps, noise and jitter on        before   now    target")
    for key, c in spec.items():
        now = timed(c["name"], c["span"], c["eye"], ns if not c["eye"] else ne, rep)
        b = before.get(key)
        res["full_span"][key] = {"before": b, "now": now}
        name, tag, mode = key.split("|")
        target = TARGET_EYE if mode == "eye" else (TARGET_64 if tag == "64" else TARGET_SLICER)
        spans = f"span {b['span_ui'] if isinstance(b, dict) and 'span_ui' in b else '?'} -> {now['span_ui']}"
        ok = "ok" if now["ui_per_s"] >= target else "MISSED"
        print(f"   {name:16s} {tag:>4s} {mode:6s}                             {_rate(b)}  {_rate(now)}  "
              f"{target / 1e6:4g} {ok}   {spans}, tail {now['tail']}")
    if "error" in before:
        print("   before: not run:", before["error"][-300:])
    # 2. time per UI against span
    table = names[-1] if "CA_19p75dB" in names else "twinax_1m_26awg"
    spec2 = {}
    for s in (*SPANS, "record"):
        span = "record" if s == "record" else (8, s - 9)
        for eye in (False, True):
            spec2[f"{s}|{'eye' if eye else 'slicer'}"] = {"name": table, "span": span, "eye": eye,
                                                          "n_ui": (ne if eye else ns) // 8, "repeat": 2}
    before2 = run_before(args.before, spec2)
    print(f"2. ns per UI against span ({table}): before / now (convolution + rest, of which the tail's FFT)")
    for key, c in spec2.items():
        now = timed(c["name"], c["span"], c["eye"], c["n_ui"] * 2, 2)
        sp = split(c["name"], c["span"], c["eye"], c["n_ui"])
        b = before2.get(key)
        res["span_table"][key] = {"before": b, "now": now, "split": sp}
        bn = f"{b['ns_per_ui']:8.0f}" if isinstance(b, dict) and "ns_per_ui" in b else "     n/a"
        conv = sp["convolution_ns_per_ui"]
        print(f"   span {now['span_ui'][1] - now['span_ui'][0] + 1:5d} UI {key.split('|')[1]:6s} {bn} / "
              f"{now['ns_per_ui']:6.0f} ({conv:5.0f} + {now['ns_per_ui'] - conv:5.0f}, FFT {sp['fft_ns_per_ui']:4.0f})")
    # 3. accuracy
    print("3. long-span path against the direct one (ADC waveform, 3,500 UI), of the main cursor")
    for name in names:
        acc = accuracy(name)
        res["accuracy"][name] = acc
        for label, a in acc.items():
            print(f"   {name:16s} {label:12s} max {a['max_of_main']:.1e} (bound {a['bound_of_main']:.1e}), rms "
                  f"{a['rms_of_main']:.1e} (bound {a['rms_bound_of_main']:.1e}), same decisions {a['same_decisions']}")
    # 4. peers
    if args.peer_python:
        res["peers"] = pe = peers(args.peer_python, names, args.peer_ui)
        print("4. peers (UI/s), and ours / theirs")
        for key, v in pe.items():
            print(f"   {key:32s} {json.dumps(v)[:160]}")
        for name in names:
            ours = res["full_span"][f"{name}|full|slicer"]["now"]["ui_per_s"]
            ours_eye = res["full_span"][f"{name}|full|eye"]["now"]["ui_per_s"]
            sd = pe.get(f"serdespy_{name}_full", {})
            if "ui_per_s_slicer" in sd:
                print(f"   {name}: ours / serdespy, full pulse: slicer {ours / sd['ui_per_s_slicer']:,.0f}x, "
                      f"eye {ours_eye / sd['ui_per_s_eye']:,.0f}x")
        for k in ("pybert_64", "pybert_923"):
            if "ui_per_s" in pe[k]:
                ours = res["full_span"]["chip_to_module|full|slicer"]["now"]["ui_per_s"]
                print(f"   ours (chip_to_module, full span, slicer) / PyBERT ({k}): {ours / pe[k]['ui_per_s']:,.0f}x")
    if args.awgn:
        res["awgn"] = awgn()
        for row in res["awgn"]:
            print(f"AWGN {row['modulation']}: theory {row['ser_theory']:.3e} measured {row['ser']:.3e} "
                  f"[{row['ser_low']:.3e}, {row['ser_high']:.3e}] ratio {row['ratio']:.3f}")
    if args.long_ui:
        t = timed("chip_to_module", None, False, int(args.long_ui), 1)
        res["long"] = {**t, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        print(f"long run: {args.long_ui:.3g} UI in {t['seconds']:.1f} s, max RSS {res['long']['max_rss_mb']:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
