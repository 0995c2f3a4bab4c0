"""Sweep throughput (``phy.sweep``): 1,000 points of synthesised channels through the
statistical eye, the FEC analysis and the link report, on 1 and 2 worker processes.

The grid: 50 twinax lengths (0.5 to 3 m) x 5 gauges (26 to 34 AWG) = 250 channels, each
with 4 FEC choices (KP4, KR4, RS(272,257+1), none), 212.5 Gb/s PAM4, the preset
equalisation (16-tap MMSE Rx FFE and 1 DFE tap; ``link.equalisation = "preset"``).

1. Per point, in this process (``inline``, every 4th length: 13 x 5 channels x 4 FEC
   choices): the median and mean time of a point and its split, from timers around the
   stages a point runs: building the channel (``phy.sweep.point._channel``, once per
   channel), the equalised eye (``phy.link.segments``: packages, the statistical eyes and
   their DFE error chains, once per channel), the FEC solve (the required detector error
   ratio, ``phy.link.post_fec._required_der``, with the burst models it builds) and the
   rest (the report, its channel figures, the record).
2. The FEC solve against the bisection it replaced (``tests/test_required_der.py``'s
   reference, with the plain-numpy Panjer loop ``fec.burst_errors`` ran before its
   kernel), on the same segments and warm burst models: time per solve and the largest
   difference in decades (the bisection's tolerance is 0.01).
3. 1,000 points on 1 and 2 worker processes, each run from an empty store.
4. A few channels with COM-proposed equalisation, to show what it costs per channel.

Targets (issue 22): a point under 50 ms with preset equalisation; 1,000 points under 60 s
on 2 cores. The load average is printed before each part: other work on the machine
slows every figure.

    python benchmarks/bench_sweep.py
    python benchmarks/bench_sweep.py --dask        # also on a local Dask cluster of 2 workers
"""

from __future__ import annotations

import os

# one BLAS/OpenMP thread, as the sweep's workers have (phy.sweep.workers._ONE_THREAD), so that
# part 1 in this process runs as a worker does: set before numpy is imported
for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if "--serve-split" not in sys.argv:  # a split server imports the tree on its PYTHONPATH (part 0)
    for p in (REPO, REPO / "tests"):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))
    from phy import sweep as sw  # noqa: E402

SPEC = """\
[sweep]
name = "bench"
chunk = 4

[channel]
kind = "twinax"

[link]
lane_rate_gbps = 212.5
equalisation = "{eq}"

[grid]
"channel.length_m" = {lengths}
"channel.awg" = {gauges}
"link.fec" = ["KP4", "KR4", "LL272", "none"]
"""
FECS = ("KP4", "KR4", "LL272", "none")
TARGET_POINT_S = 50e-3
TARGET_1000_S = 60.0


def _load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average unavailable"
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def run(tmp: Path, name: str, lengths, gauges, eq: str, executor: str, workers: int) -> dict:
    spec_path = tmp / f"{name}.toml"
    spec_path.write_text(SPEC.format(lengths=json.dumps(lengths), gauges=json.dumps(gauges), eq=eq))
    store = tmp / f"{name}.jsonl"
    spec = sw.load_spec(spec_path)
    load = _load()
    t = time.perf_counter()
    r = sw.run_sweep(spec, store, executor=executor, workers=workers, progress=False)
    wall = time.perf_counter() - t
    df = sw.load(store)
    return {"points": r.total, "ok": r.ok, "failed": r.failed, "wall_s": wall, "points_per_s": r.total / wall,
            "passing": int(df["passes"].sum()), "mean_point_s": float(df["seconds"].mean()),
            "median_point_s": float(df["seconds"].median()), "load_before": load}


@contextmanager
def _stage_timers(totals: dict):
    """Timers around the stages of a point (see the module docstring), added into ``totals``."""
    from phy.config import link
    from phy.link import report

    patched = [(link, "_channel", "channel"), (report, "segments", "eye"), (report, "_required_der", "fec_solve")]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patched]

    def timed(f, key):
        def g(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                totals[key] = totals.get(key, 0.0) + time.perf_counter() - t
        return g

    for (mod, name, key), (_m, _n, f) in zip(patched, saved):
        setattr(mod, name, timed(f, key))
    try:
        yield totals
    finally:
        for mod, name, f in saved:
            setattr(mod, name, f)


def per_point(lengths, gauges) -> dict:
    """Part 1: points in this process, the split of their time."""
    from phy.sweep.point import evaluate_point

    def pt(L, g, f):
        return {"channel.kind": "twinax", "channel.length_m": L, "channel.awg": g, "link.lane_rate_gbps": 212.5,
                "link.equalisation": "preset", "link.fec": f}

    for f in FECS:  # Numba's cached kernels load, the media caches fill
        evaluate_point(pt(0.75, 28, f))
    pts = [pt(L, g, f) for L in lengths for g in gauges for f in FECS]
    totals: dict = {}
    load = _load()
    with _stage_timers(totals):
        t = time.perf_counter()
        secs = [evaluate_point(p)["seconds"] for p in pts]
        wall = time.perf_counter() - t
    n = len(pts)
    split = {k: totals.get(k, 0.0) / n for k in ("channel", "eye", "fec_solve")}
    split["rest"] = wall / n - sum(split.values())
    return {"points": n, "channels": n // len(FECS), "median_point_s": statistics.median(secs),
            "mean_point_s": wall / n, "split_s": split, "load_before": load}


# ----------------------------------------------------------------------------- part 0
#: The stages part 0 times by CPU (besides the point's total; "rest" is what is left).
SPLIT_STAGES = ("channel", "eye", "fec_solve", "figures")


def _pt(L, g, f) -> dict:
    return {"channel.kind": "twinax", "channel.length_m": L, "channel.awg": g, "link.lane_rate_gbps": 212.5,
            "link.equalisation": "preset", "link.fec": f}


def _split_chunks(n_channels: int) -> list:
    """``n_channels`` channels spread over the grid of part 3, each a chunk of its 4 FEC points."""
    chans = [(round(0.5 + 0.05 * i, 3), g) for i in range(50) for g in (26, 28, 30, 32, 34)]
    step = max(1, len(chans) // n_channels)
    return [[_pt(L, g, f) for f in FECS] for L, g in chans[::step][:n_channels]]


def serve_split(core: int | None) -> None:
    """Part 0's server, in a fresh interpreter on the tree on its ``PYTHONPATH``: warm up
    (Numba's cached kernels, the settings' caches) on a channel off the grid, say ``ready``,
    then for each chunk (a JSON line on stdin) evaluate its points and answer a JSON line:
    CPU seconds (``time.process_time``) in all and per stage, and a digest of the rows."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    from phy.config import link
    from phy.link import report
    from phy.sweep.point import evaluate_point

    totals: dict = {}

    def timed(f, key):
        def g(*a, **k):
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                totals[key] = totals.get(key, 0.0) + time.process_time() - t
        return g

    for mod, name, key in ((link, "_channel", "channel"), (report, "segments", "eye"),
                           (report, "_required_der", "fec_solve"), (report, "_figures", "figures")):
        setattr(mod, name, timed(getattr(mod, name), key))
    for f in FECS:
        evaluate_point(_pt(0.73, 29, f))
    import phy

    print(json.dumps({"ready": phy.__file__}), flush=True)
    for line in sys.stdin:
        totals.clear()
        t = time.process_time()
        recs = [evaluate_point(p) for p in json.loads(line)]
        total = time.process_time() - t
        rows = json.dumps([[r["status"], r.get("row"), r.get("error")] for r in recs], sort_keys=True)
        print(json.dumps({"total": total, **totals, "rows": hashlib.sha256(rows.encode()).hexdigest()}), flush=True)


def split_before_after(before: str, n_channels: int, core: int | None) -> dict:
    """Part 0: CPU per point and its split, the tree ``before`` and this one side by side:
    one server each (:func:`serve_split`, pinned to ``core``), given the same chunks in
    turn (which goes first alternates), the rows compared chunk by chunk."""
    trees = {"before": str(Path(before).resolve()), "after": str(REPO)}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    procs = {}
    for name, tree in trees.items():
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-split"]
        cmd += ["--core", str(core)] if core is not None else []
        procs[name] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tree,
                                       env={**env, "PYTHONPATH": tree})
    try:
        ready = {name: json.loads(p.stdout.readline())["ready"] for name, p in procs.items()}
        load = _load()
        got = {name: [] for name in trees}
        same = 0
        chunks = _split_chunks(n_channels)
        for i, chunk in enumerate(chunks):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for name in order:
                procs[name].stdin.write(json.dumps(chunk) + "\n")
                procs[name].stdin.flush()
                got[name].append(json.loads(procs[name].stdout.readline()))
            same += got["before"][-1]["rows"] == got["after"][-1]["rows"]
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait()
    n = sum(len(c) for c in chunks)
    out = {"points": n, "channels": len(chunks), "same_rows_chunks": same, "load_before": load, "trees": ready}
    for name, rs in got.items():
        per = {k: sum(r.get(k, 0.0) for r in rs) / n for k in ("total", *SPLIT_STAGES)}
        per["rest"] = per["total"] - sum(per[k] for k in SPLIT_STAGES)
        per["median_chunk_per_point"] = statistics.median(r["total"] for r in rs) / len(FECS)
        out[name] = per
    out["load_after"] = _load()
    return out


def print_split(r: dict) -> None:
    print(f"part 0: CPU per point, before and after side by side ({r['points']} points, {r['channels']} channels x "
          f"4 FEC, one process each on one core; {r['load_before']}; after: {r['load_after']})")
    print(f"  rows identical in {r['same_rows_chunks']} of {r['channels']} chunks")
    print(f"  {'ms CPU per point':<34}{'before':>9}{'after':>9}{'ratio':>8}")
    for k in ("total", "median_chunk_per_point", *SPLIT_STAGES, "rest"):
        b, a = r["before"][k] * 1e3, r["after"][k] * 1e3
        print(f"  {k:<34}{b:9.2f}{a:9.2f}{(b / a if a else float('nan')):7.2f}x")


def solve_vs_bisection(lengths, gauges) -> dict:
    """Part 2: the solve against the bisection it replaced, on warm burst models."""
    from test_required_der import bisection_required_der, panjer_reference

    import phy
    from fec import analysis as A
    from phy.link import post_fec as P
    from phy.sweep.point import link_spec

    rows = {"new": [], "bisection": []}
    worst = 0.0
    kernel = A.panjer_poisson
    for L in lengths:
        for g in gauges:
            base = link_spec({"channel.kind": "twinax", "channel.length_m": L, "channel.awg": g,
                              "link.lane_rate_gbps": 212.5, "link.equalisation": "preset", "link.fec": "KP4"})
            segs = phy.link.segments(base)
            for f in FECS:
                spec = base.with_(fec=None if f == "none" else f)
                P._required_der(spec, segs)  # the burst models built (both ways share them)
                t = time.perf_counter()
                new = P._required_der(spec, segs)
                rows["new"].append(time.perf_counter() - t)
                A.panjer_poisson = panjer_reference
                try:
                    t = time.perf_counter()
                    ref = bisection_required_der(spec, segs)
                    rows["bisection"].append(time.perf_counter() - t)
                finally:
                    A.panjer_poisson = kernel
                worst = max(worst, abs(math.log10(new) - math.log10(ref)))
    return {"solves": len(rows["new"]), "new_mean_s": statistics.fmean(rows["new"]),
            "bisection_mean_s": statistics.fmean(rows["bisection"]), "max_difference_decades": worst}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dask", action="store_true", help="also run on a local Dask cluster")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--before", help="part 0: a tree of the code before (e.g. a detached worktree of main)")
    ap.add_argument("--split-channels", type=int, default=40, help="part 0: channels (4 points each)")
    ap.add_argument("--core", type=int, default=None, help="part 0: pin both servers to this core")
    ap.add_argument("--split-only", action="store_true", help="run part 0 alone")
    ap.add_argument("--serve-split", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.serve_split:
        serve_split(a.core)
        return 0
    res = {}
    if a.before:
        res["split"] = split_before_after(a.before, a.split_channels, a.core)
        print_split(res["split"])
        if a.split_only:
            if a.json:
                a.json.write_text(json.dumps(res, indent=2))
            return 0
    lengths = [round(0.5 + 0.05 * i, 3) for i in range(50)]
    gauges = [26, 28, 30, 32, 34]

    r = res["per_point"] = per_point(lengths[::4], gauges)
    s = r["split_s"]
    print(f"per point, {r['points']} points in this process ({r['channels']} channels x 4 FEC; {r['load_before']}):")
    print(f"  median {r['median_point_s'] * 1e3:.1f} ms, mean {r['mean_point_s'] * 1e3:.1f} ms "
          f"(target < {TARGET_POINT_S * 1e3:.0f} ms: {'met' if r['mean_point_s'] < TARGET_POINT_S else 'NOT met'})")
    print("  split of the mean: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in s.items()))

    r = res["fec_solve"] = solve_vs_bisection(lengths[::10], gauges[::2])
    print(f"FEC solve, {r['solves']} solves on warm burst models: {r['new_mean_s'] * 1e3:.2f} ms each, the "
          f"bisection it replaced (plain-numpy Panjer) {r['bisection_mean_s'] * 1e3:.2f} ms "
          f"({r['bisection_mean_s'] / r['new_mean_s']:.0f}x); largest difference {r['max_difference_decades']:.4f} "
          "decade (tolerance 0.01)")

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for w in (1, 2):
            r = res[f"processes_{w}"] = run(tmp, f"p{w}", lengths, gauges, "preset", "processes", w)
            ok = r["wall_s"] < TARGET_1000_S if w == 2 else None
            print(f"{r['points']} points, preset equalisation, {w} worker(s): {r['wall_s']:.1f} s, "
                  f"{r['points_per_s']:.2f} points/s ({r['passing']} pass; {r['mean_point_s'] * 1e3:.0f} ms mean, "
                  f"{r['median_point_s'] * 1e3:.0f} ms median per point in the worker; {r['load_before']})"
                  + ("" if ok is None else f" - target < {TARGET_1000_S:.0f} s on 2 cores: {'met' if ok else 'NOT met'}"))
        s = res["processes_2"]["points_per_s"] / res["processes_1"]["points_per_s"]
        res["scaling_1_to_2"] = s
        print(f"scaling from 1 to 2 workers: {s:.2f}x")
        if a.dask:
            res["dask_2"] = run(tmp, "d2", lengths, gauges, "preset", "dask", 2)
            r = res["dask_2"]
            print(f"Dask LocalCluster, 2 workers: {r['wall_s']:.1f} s, {r['points_per_s']:.2f} points/s")
        res["com_2"] = run(tmp, "c2", lengths[:5], gauges[:2], "com", "processes", 2)
        r = res["com_2"]
        print(f"{r['points']} points with COM-proposed equalisation, 2 workers: {r['wall_s']:.1f} s, "
              f"{r['points_per_s']:.2f} points/s")
    print(f"after: {_load()}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
