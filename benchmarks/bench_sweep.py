"""Sweep throughput (``phy.sweep``): 1,000 points of synthesized channels through the
statistical eye, the FEC analysis and the link report, on 1 and 2 worker processes.

The grid: 50 twinax lengths (0.5 to 3 m) x 5 gauges (26 to 34 AWG) = 250 channels, each
with 4 FEC choices (KP4, KR4, RS(272,257+1), none), 212.5 Gb/s PAM4, the preset
equalisation (16-tap MMSE Rx FFE and 1 DFE tap; ``link.equalization = "preset"``). Each
run starts from an empty store. Then the same for a few channels with COM-proposed
equalisation, to show what it costs per channel. Target: 1,000 points in under two
minutes on 2 cores.

    python benchmarks/bench_sweep.py
    python benchmarks/bench_sweep.py --dask        # also on a local Dask cluster of 2 workers
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from phy import sweep as sw

SPEC = """\
[sweep]
name = "bench"
chunk = 4

[channel]
kind = "twinax"

[link]
lane_rate_gbps = 212.5
equalization = "{eq}"

[grid]
"channel.length_m" = {lengths}
"channel.awg" = {gauges}
"link.fec" = ["KP4", "KR4", "LL272", "none"]
"""


def run(tmp: Path, name: str, lengths, gauges, eq: str, executor: str, workers: int) -> dict:
    spec_path = tmp / f"{name}.toml"
    spec_path.write_text(SPEC.format(lengths=json.dumps(lengths), gauges=json.dumps(gauges), eq=eq))
    store = tmp / f"{name}.jsonl"
    spec = sw.load_spec(spec_path)
    t = time.perf_counter()
    r = sw.run_sweep(spec, store, executor=executor, workers=workers, progress=False)
    wall = time.perf_counter() - t
    df = sw.load(store)
    return {"points": r.total, "ok": r.ok, "failed": r.failed, "wall_s": wall, "points_per_s": r.total / wall,
            "passing": int(df["passes"].sum()), "mean_point_s": float(df["seconds"].mean())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dask", action="store_true", help="also run on a local Dask cluster")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    lengths = [round(0.5 + 0.05 * i, 3) for i in range(50)]
    gauges = [26, 28, 30, 32, 34]
    res = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for w in (1, 2):
            res[f"processes_{w}"] = run(tmp, f"p{w}", lengths, gauges, "preset", "processes", w)
            r = res[f"processes_{w}"]
            print(f"{r['points']} points, preset equalisation, {w} worker(s): {r['wall_s']:.1f} s, "
                  f"{r['points_per_s']:.2f} points/s ({r['passing']} pass; {r['mean_point_s'] * 1e3:.0f} ms per point "
                  f"in the worker)")
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
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
