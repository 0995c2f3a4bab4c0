"""The clock recovery in the time-domain simulator (issue 35): what it costs against a fixed
phase, and whether the default ``Cdr("mm")`` keeps lock on every shared through; the code
before (``--before``, a checkout of 862076c run in a subprocess) and now, side by side.

One core (thread counts set to 1 before numpy/numba load; pinned to one CPU where allowed);
CPU time (``time.process_time``); the before and now workers alternate, best of
``--repeat``; the machine's load is printed.

1. **Cost**: ns per UI of ``phy.simulate`` at the slicer (no eye) with the clock fixed, with
   ``Cdr("mm")`` and with ``Cdr("bang-bang")``, on ``bench_timesim``'s SerDes (noise, RJ,
   DCD, 0.05 UI of SJ at baud / 1000; full span, the tail by FFT) on ``twinax_1m_26awg`` at
   106.25 GBd and the 802.3ck cable assembly ``CA_19p75dB`` at 53.125 GBd; every kind counts
   the same UIs after the same 20,256 UI warm-up. Target: CDR on within 1.5x of CDR off.
2. **Profile** of each run: the kernel (``run_chunk``), the tail's outputs (its FFTs: the
   low-rank basis before, the shifts the loop reads now) and the rest (streams, noise,
   symbols, set-up), and the tail's filters per chunk.
3. **Lock** on every ``*THRU*`` file of ``../shared/channels`` (802.3ck at 53.125 GBd, the VITA
   backplane at 25.78125 GBd): ``Cdr("mm")`` and ``Cdr("bang-bang")`` locked or not, and the
   symbol error ratio against the fixed phase's, with the issue's receiver (CTLE, 8 DFE taps)
   and with an MMSE Rx FFE (2 + 8 taps) and 12 DFE taps (which opens the longer throughs).

    git worktree add --detach /tmp/before35-cdr 862076c
    python benchmarks/bench_cdr.py --before /tmp/before35-cdr
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "channels"
KINDS = ("fixed", "mm", "bang-bang")
CASES = (("twinax_1m_26awg", 106.25e9), ("CA_19p75dB", 53.125e9))
WARMUP = 20_256


def _cost(name: str, kind: str, n_ui: int) -> dict:
    """One run's CPU time and its profile (kernel, tail outputs, rest)."""
    import warnings

    import bench_timesim as B

    from phy.engines import simulate
    from phy.engines.timesim import _kernels as K
    from phy.engines.timesim import tail as T
    from phy.serdes import Cdr

    spent = {"kernel": 0.0, "tail": 0.0}
    depth = {"kernel": 0, "tail": 0}

    def timed(fn, key):
        def f(*a, **k):  # the outermost call of a key only (outputs calls add)
            depth[key] += 1
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                depth[key] -= 1
                if depth[key] == 0:
                    spent[key] += time.process_time() - t
        return f

    patches = [(K, "run_chunk", "kernel"), (T.TailPlan, "outputs", "tail")]
    try:
        from phy.engines.timesim import cdr_tail as C
        patches += [(C.LazyTail, "outputs", "tail"), (C.LazyTail, "add", "tail")]
    except ImportError:  # the code before
        pass
    ch, kw = B.case(name, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulate(ch, 3000, cdr=Cdr(kind), **kw)  # compiled and cached
        saved = [(obj, attr, getattr(obj, attr)) for obj, attr, _ in patches]
        for obj, attr, key in patches:
            setattr(obj, attr, timed(getattr(obj, attr), key))
        try:
            t0 = time.process_time()
            r = simulate(ch, n_ui, cdr=Cdr(kind), warmup_ui=WARMUP, **kw)
            total = time.process_time() - t0
        finally:
            for obj, attr, fn in saved:
                setattr(obj, attr, fn)
    tl = r.config["tail"] or {}
    return {"ns_per_ui": total / n_ui * 1e9, "kernel": spent["kernel"] / n_ui * 1e9,
            "tail": spent["tail"] / n_ui * 1e9,
            "filters": tl.get("filters"), "locked": r.cdr_locked, "ser": r.ser.value}


def _lock(n_ui: int) -> dict:
    """Every shared through: lock and error ratio of the fixed phase, mm and bang-bang."""
    import warnings

    import channels
    from phy.engines import simulate
    from phy.serdes import Cdr, Jitter, Noise, Receiver, Transmitter
    from phy.serdes.equalisers import Ctle, Dfe, RxFfe, TxFfe

    out = {}
    for f in sorted(p for p in SHARED.rglob("*") if "thru" in p.name.lower()):
        baud = 25.78125e9 if "vita" in str(f) else 53.125e9
        ui = 1 / baud
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = channels.load(f)
            for rx_name, ffe, ndfe in (("ctle+dfe8", RxFfe(0, 0), 8), ("ffe2+8+dfe12", RxFfe(2, 8), 12)):
                kw = {"baud_hz": baud, "seed": 1,
                      "tx": Transmitter(swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12,
                                        ffe=TxFfe.ieee(pre=(-0.1,))),
                      "rx": Receiver(bandwidth_hz=0.75 * baud, ctle=Ctle.ieee_802_3ck(baud, -10.0), ffe=ffe,
                                     dfe=Dfe(ndfe)),
                      "noise": Noise(tx_snr_db=33.0, rx_noise_psd_v2_per_hz=8.2e-18),
                      "jitter": Jitter(rj_rms_s=0.01 * ui, dcd_s=0.02 * ui, sj_amplitude_s=0.05 * ui,
                                       sj_frequency_hz=baud / 1000)}
                row = {}
                for kind in KINDS:
                    r = simulate(ch, n_ui, cdr=Cdr(kind), **kw)
                    row[kind] = [r.cdr_locked, r.ser.value, r.ser.count]
                out[f"{f.name}|{rx_name}"] = row
    return out


def worker(spec: dict) -> dict:
    if spec["what"] == "cost":
        return {f"{n}|{k}": _cost(n, k, spec["n_ui"]) for n, _ in CASES for k in KINDS}
    return _lock(spec["n_ui"])


def call(repo: Path, spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec), "--repo", str(repo)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise RuntimeError((out.stderr or out.stdout)[-1500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, help="a checkout of the code before (862076c)")
    ap.add_argument("--n-ui", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lock-ui", type=int, default=100_000)
    ap.add_argument("--worker")
    ap.add_argument("--repo", type=Path)
    a = ap.parse_args()
    if a.worker:
        sys.path.insert(0, str(a.repo))
        sys.path.insert(1, str(Path(__file__).resolve().parent))
        if hasattr(os, "sched_setaffinity"):
            try:
                os.sched_setaffinity(0, {0})
            except OSError:
                pass
        print(json.dumps(worker(json.loads(a.worker))))
        return
    trees = {"now": REPO} | ({"before": a.before} if a.before else {})
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {os.cpu_count()} CPUs")
    best: dict = {t: {} for t in trees}
    for _ in range(a.repeat):
        for t, repo in trees.items():  # alternated
            for key, v in call(repo, {"what": "cost", "n_ui": a.n_ui}).items():
                if key not in best[t] or v["ns_per_ui"] < best[t][key]["ns_per_ui"]:
                    best[t][key] = v
    print(f"\n1-2. ns per UI at the slicer, {a.n_ui:,} UI after {WARMUP:,} (best of {a.repeat}, CPU time), and its "
          "profile: kernel / tail outputs / rest; the tail's filters")
    print(f"{'channel':16} {'clock':10} " + " ".join(f"{t:>44}" for t in trees) + "   now/before")
    for name, _ in CASES:
        for kind in KINDS:
            key = f"{name}|{kind}"
            cells = []
            for t in trees:
                v = best[t][key]
                off = best[t][f"{name}|fixed"]["ns_per_ui"]
                rest = v["ns_per_ui"] - v["kernel"] - v["tail"]
                cells.append(f"{v['ns_per_ui']:6.1f} ({v['ns_per_ui'] / off:4.2f}x off) "
                             f"{v['kernel']:5.1f}/{v['tail']:5.1f}/{rest:5.1f} f{v['filters']!s:>2}")
            ratio = best["now"][key]["ns_per_ui"] / best["before"][key]["ns_per_ui"] if a.before else float("nan")
            print(f"{name:16} {kind:10} " + " ".join(f"{c:>44}" for c in cells) + f"   {ratio:.2f}")
    if not SHARED.exists():
        print("\n3. lock: ../shared/channels absent")
        return
    lock = {t: call(repo, {"what": "lock", "n_ui": a.lock_ui}) for t, repo in trees.items()}
    print(f"\n3. lock on the shared throughs ({a.lock_ui:,} UI): locked / SER for fixed, mm, bang-bang")
    for key in lock["now"]:
        f, rx = key.split("|")
        cells = []
        for t in trees:
            row = lock[t][key]
            cells.append(" ".join(f"{k}:{'-' if v[0] is None else ('L' if v[0] else 'LOST')} {v[1]:.2g}"
                                  for k, v in row.items()))
        print(f"{f[:24]:24} {rx:13} " + "  ||  ".join(f"{t}: {c}" for t, c in zip(trees, cells)))


if __name__ == "__main__":
    main()
