"""Peers of the time-domain simulator (serdespy, PyBERT) on the same pulse, from the project's venv.

The peers live in another venv (``/tmp/pybert-venv``: ``PipBERT`` and ``serdespy``); this
module writes a pulse response to an ``.npz`` file and runs ``peer_serdespy.py`` and
``peer_pybert.py`` with that venv's Python in a subprocess, returning their JSON::

    import channels
    from benchmarks.peers_timesim import pulse_file, run_pybert, run_serdespy

    p = channels.library.get("twinax_1m_26awg").pulse_response(106.25e9, 32)
    npz = pulse_file(p, "/tmp/twinax.npz", p.main_index)             # the whole record
    cut = pulse_file(p, "/tmp/twinax64.npz", p.main_index, (8, 55))  # 64 UI around the cursor
    run_serdespy("/tmp/pybert-venv/bin/python", npz, 200_000)        # {"ui_per_s_slicer": ...}
    run_pybert("/tmp/pybert-venv/bin/python", 30_000, 923)           # {"ui_per_s": ...}

PyBERT cannot take our pulse: it builds its own channel (its native lossy line, see
``peer_pybert.py``) and only its impulse length (``impulse_ui``) follows ours. serdespy runs
on the pulse exactly as given.

Run as a script it does the end-to-end check: ``twinax_1m_26awg`` and ``chip_to_module`` at
106.25 GBd and the 802.3ck ``CA_19p75dB_thru.s4p`` at 53.125 GBd, each with the whole
record and cut to 64 UI (8 before the main cursor, 55 after, as ``bench_timesim.py``), and
PyBERT at the impulse spans of ``--pybert-spans``::

    python benchmarks/peers_timesim.py --n-ui 200000 --pybert-n-ui 30000 --json peers.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEER_PYTHON = "/tmp/pybert-venv/bin/python"
CA_FILE = REPO.parent / "shared" / "channels" / "ieee802.3ck" / "CA_19p75dB_thru.s4p"
# PyBERT's CTLE trim wraps for records of about 100-200 ns (see peer_pybert.py): BER ~40%
PYBERT_BAD_NS = (100.0, 200.0)
PYBERT_BAUD = 106.25e9


def pulse_file(pulse_response, path, main_index: int | None = None, span_ui: tuple[int, int] | None = None) -> Path:
    """Write ``pulse_response`` (``.samples``, ``.samples_per_ui``, ``.baud_hz``) to ``path``
    as the ``.npz`` that ``peer_serdespy.py`` reads; ``main_index`` is the sampling sample of
    the main cursor (default: the object's ``.main_index``).

    ``span_ui = (before, after)`` keeps only that many UIs before and after the main cursor,
    cut as ``phy.simulate(span_ui=...)`` does (from half a UI before the first kept cursor to
    half a UI after the last); the stored ``main_index`` is then relative to the cut.
    """
    samples = np.asarray(pulse_response.samples, dtype=float).ravel()
    spu = int(pulse_response.samples_per_ui)
    if main_index is None:
        main_index = getattr(pulse_response, "main_index", None)
        if main_index is None:
            raise ValueError("pulse_file: pass main_index (the object has no .main_index)")
    m = int(main_index)
    if not 0 <= m < samples.size:
        raise ValueError(f"pulse_file: main_index {m} outside the pulse (0..{samples.size - 1})")
    if span_ui is not None:
        before, after = (int(v) for v in span_ui)
        if before < 0 or after < 1:
            raise ValueError(f"pulse_file: span_ui must be (>= 0, >= 1) UIs, got {span_ui!r}")
        lo = max(0, m - before * spu - spu // 2)
        hi = min(samples.size, m + after * spu + spu // 2)
        samples, m = samples[lo:hi], m - lo
    path = Path(path)
    with path.open("wb") as fh:  # keep the name as given (np.savez adds ".npz" to a bare str)
        np.savez(fh, samples=samples, samples_per_ui=np.int64(spu),
                 baud_hz=np.float64(pulse_response.baud_hz), main_index=np.int64(m))
    return path


def _run_json(cmd: list[str], timeout: float | None) -> dict:
    """Run ``cmd``; its JSON (the whole of stdout, or its last line), or ``{"error": ...}``."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"error": f"{type(err).__name__}: {err}", "cmd": cmd}
    out = done.stdout.strip()
    if done.returncode != 0 or not out:
        tail = (done.stderr.strip() or out)[-2000:]
        return {"error": f"exit status {done.returncode}: {tail}", "cmd": cmd}
    for text in (out, out.splitlines()[-1]):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            continue
    return {"error": f"no JSON on stdout: {out[-2000:]}", "cmd": cmd}


def run_serdespy(python, npz_path, n_ui: int, *, repeat: int = 3, cpu: int = 0, extra: tuple[str, ...] = (),
                 timeout: float | None = 3600.0) -> dict:
    """``peer_serdespy.py`` on the pulse in ``npz_path`` for ``n_ui`` UI with ``python``
    (a venv holding serdespy), pinned to ``cpu``; its JSON (``ui_per_s_slicer``,
    ``ui_per_s_eye``, ``pulse_ui``, ...) or ``{"error": ...}``. ``extra``: more options,
    e.g. ``("--rj-ui", "0.01")``."""
    cmd = [str(python), str(HERE / "peer_serdespy.py"), "--pulse", str(npz_path), "--n-ui", str(int(n_ui)),
           "--repeat", str(int(repeat)), "--cpu", str(int(cpu)), *map(str, extra), "--json"]
    return _run_json(cmd, timeout)


def run_pybert(python, n_ui: int, impulse_ui: int, *, repeat: int = 3, cpu: int | None = None,
               timeout: float | None = 3600.0) -> dict:
    """``peer_pybert.py`` for ``n_ui`` UI with the channel impulse response ``impulse_ui`` UI
    long, with ``python`` (a venv holding PipBERT); its JSON (``ui_per_s``,
    ``pulse_span_ui``, ...) or ``{"error": ...}``. ``cpu``: run it under ``taskset -c cpu``
    (the script does not pin itself). A record length in PyBERT's CTLE-trim window (about
    10,600-21,200 UI at 106.25 GBd) gets a ``"warning"``."""
    cmd = [] if cpu is None else ["taskset", "-c", str(int(cpu))]
    cmd += [str(python), str(HERE / "peer_pybert.py"), "--n-ui", str(int(n_ui)), "--impulse-ui", str(int(impulse_ui)),
           "--repeat", str(int(repeat)), "--json"]
    res = _run_json(cmd, timeout)
    record_ns = n_ui / PYBERT_BAUD * 1e9
    if PYBERT_BAD_NS[0] <= record_ns <= PYBERT_BAD_NS[1]:
        res["warning"] = (f"{n_ui} UI = {record_ns:.0f} ns is inside PyBERT's CTLE-trim wrap window "
                          f"({PYBERT_BAD_NS[0]:.0f}-{PYBERT_BAD_NS[1]:.0f} ns): expect BER ~0.4")
    return res


def _cases() -> list[tuple[str, object, int]]:
    """(name, pulse response, main index) of the three end-to-end pulses."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import channels

    out = []
    for name in ("twinax_1m_26awg", "chip_to_module"):
        p = channels.library.get(name).pulse_response(106.25e9, 32)
        out.append((name, p, p.main_index))
    if CA_FILE.exists():
        p = channels.load(str(CA_FILE)).pulse_response(53.125e9, 32)
        out.append((CA_FILE.stem, p, p.main_index))
    else:
        print(f"peers_timesim: {CA_FILE} not found; skipping it", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=PEER_PYTHON, help="the peers' venv Python")
    ap.add_argument("--n-ui", type=int, default=200_000, help="UI per serdespy run")
    ap.add_argument("--pybert-n-ui", type=int, default=30_000, help="UI per PyBERT run (500..5e6)")
    ap.add_argument("--pybert-spans", default="64,923", help="PyBERT impulse lengths, UI (comma-separated; '' = none)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (best reported)")
    ap.add_argument("--cpu", type=int, default=0, help="CPU both peers are pinned to")
    ap.add_argument("--serdespy-args", default="", help="more peer_serdespy.py options, e.g. '--rj-ui 0.01'")
    ap.add_argument("--cut", default="8,55", help="UIs kept before,after the main cursor for the cut pulse")
    ap.add_argument("--json", help="also write every result to this file")
    args = ap.parse_args()
    cut = tuple(int(v) for v in args.cut.split(","))
    spans = [int(v) for v in args.pybert_spans.split(",") if v.strip()]

    results: dict = {"serdespy": [], "pybert": []}
    with tempfile.TemporaryDirectory(prefix="peers_timesim_") as tmp:
        for name, p, m in _cases():
            for label, span in (("full", None), (f"cut{cut[0]}+{cut[1]}", cut)):
                npz = pulse_file(p, Path(tmp) / f"{name}_{label}.npz", m, span)
                r = run_serdespy(args.python, npz, args.n_ui, repeat=args.repeat, cpu=args.cpu,
                                 extra=tuple(args.serdespy_args.split()))
                r.update(channel=name, pulse=label, baud_hz=float(p.baud_hz))
                results["serdespy"].append(r)
                if "error" in r:
                    print(f"serdespy {name} {label}: {r['error']}")
                else:
                    print(f"serdespy {name:22s} {label:8s} pulse {r['pulse_ui']:7.1f} UI: "
                          f"slicer {r['ui_per_s_slicer']:9.0f} UI/s, eye {r['ui_per_s_eye']:9.0f} UI/s, "
                          f"BER {r['ber']}", flush=True)
    for span in spans:
        r = run_pybert(args.python, args.pybert_n_ui, span, repeat=args.repeat, cpu=args.cpu)
        results["pybert"].append(r)
        if "error" in r:
            print(f"pybert impulse {span} UI: {r['error']}")
        else:
            print(f"pybert   impulse {span:5d} UI (built {r['pulse_span_ui']:g} UI), {r['n_ui']} UI: "
                  f"{r['ui_per_s']:9.0f} UI/s, BER {r['measured']['ber']:.2e}"
                  + (f"  [{r['warning']}]" if "warning" in r else ""), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
