"""COM side by side with PyChOpMarg: same channels, same parameters, same search space.

For each 802.3ck channel in ``../shared/channels/ieee802.3ck`` (a through file with its
crosstalk siblings), this runs ``phy.channel_margin`` and, in a separate venv,
PyChOpMarg (``peer_pychopmarg.py``, PRZF mode, no Rx FFE, one process) with the
``ck-kr`` parameter set, over the same equaliser search space, and prints both COM
values, their difference, both run times and the speed ratio; both sides take the KR
sheet's two package test cases, and ours is shown again with the sheet's floating DFE taps
(PyChOpMarg has none without an Rx FFE). Then it times our full 802.3ck search (21 x 7 CTLE
settings x every Tx FFE setting of the grid, for each package case).

One core: thread counts set to 1 before numpy loads; pinned to CPU 0 where allowed.

    python benchmarks/bench_com.py --pcm-python /tmp/pcm-venv/bin/python
    python benchmarks/bench_com.py --grid full --pcm-python ...     # the full grid for both (slow for the peer)

``--grid reduced`` (default) uses g_DC in -20..0 step 2, g_DC2 in {0, -3, -6} and a
coarser Tx FFE grid (c(-3) in {-0.06, 0}, c(-2) in {0, 0.06, 0.12}, c(-1) in -0.34..0
step 0.06, c(1) in -0.2..0 step 0.05) so that the peer finishes in about a minute per
channel.
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
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np

import channels
from phy.engines.com import ComParams, channel_margin

SHARED = REPO.parent / "shared" / "channels" / "ieee802.3ck"
SETS = {
    "DPO_14in_Meg7": ("DPO_14in_Meg7_THRU.s4p", ["DPO_14in_Meg7_FENH89.s4p"], ["DPO_14in_Meg7_NENF89.s4p"]),
    "DPO_10in_Meg7": ("DPO_10in_Meg7_THRU.s4p", [], []),
    "DPO_4in_Meg7": ("DPO_4in_Meg7_THRU.s4p", [], []),
    "CA_19p75dB": ("CA_19p75dB_thru.s4p", ["CA_19p75dB_fext1.s4p"], ["CA_19p75dB_next1.s4p"]),
    "Tp0_Tp5_28p5db_FQSFP": ("Tp0_Tp5_28p5db_FQSFP_thru.s4p", ["Tp0_Tp5_28p5db_FQSFP_fext1.s4p"],
                             ["Tp0_Tp5_28p5db_FQSFP_next1.s4p"]),
    "C2C_PCB_SYSVIA_12dB": ("C2C_PCB_SYSVIA_12dB_thru.s4p", [], []),
}


def grids(kind: str) -> dict:
    full = ComParams.ieee_802_3ck_kr()
    if kind == "full":
        return {"g_dc_db": full.g_dc_db, "g_dc2_db": full.g_dc2_db, "c_m3": full.c_m3, "c_m2": full.c_m2,
                "c_m1": full.c_m1, "c_p1": full.c_p1}
    return {
        "g_dc_db": tuple(float(-g) for g in range(0, 21, 2)),
        "g_dc2_db": (0.0, -3.0, -6.0),
        "c_m3": (-0.06, 0.0),
        "c_m2": (0.0, 0.06, 0.12),
        "c_m1": tuple(np.round(np.arange(-0.34, 0.001, 0.06), 4)),
        "c_p1": tuple(np.round(np.arange(-0.2, 0.001, 0.05), 4)),
    }


def peer_sets(g: dict) -> list[str]:
    """The same grid as PyChOpMarg ``--set`` overrides (its Tx grid is min:step:max per tap)."""

    def span(values):
        v = sorted(float(x) for x in values)
        step = round(v[1] - v[0], 6) if len(v) > 1 else 0.0
        return v[0], v[-1], step

    taps = [span(g[k]) for k in ("c_m3", "c_m2", "c_m1", "c_p1")]
    return [
        f"g_DC={[float(x) for x in g['g_dc_db']]}",
        f"g_DC2={[float(x) for x in g['g_dc2_db']]}",
        f"tx_taps_min={[t[0] for t in taps] + [0.0, 0.0]}",
        f"tx_taps_max={[t[1] for t in taps] + [0.0, 0.0]}",
        f"tx_taps_step={[t[2] for t in taps] + [0.0, 0.0]}",
    ]


def ours(name: str, grid: dict, repeat: int, floating: bool = False) -> dict:
    """Our COM; the time includes reading the Touchstone files, as the peer's does. Without
    the sheet's floating DFE taps unless ``floating`` (PyChOpMarg has none without an Rx FFE)."""
    thru, fext, nxt = SETS[name]
    p = ComParams.ieee_802_3ck_kr().with_(**grid)
    if not floating:
        p = p.with_(dfe_float_groups=0)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = channels.load(SHARED / thru)
            aggs = [channels.load(SHARED / f, thru=ch, kind="fext") for f in fext]
            aggs += [channels.load(SHARED / f, thru=ch, kind="next") for f in nxt]
        r = channel_margin(ch.with_aggressors(*aggs), p)
        dt = time.perf_counter() - t0
        if best is None or dt < best[1]:
            best = (r, dt)
    r, dt = best
    return {"com_db": r.com_db, "seconds": dt, "seconds_margin": r.seconds, "settings": r.settings_searched,
            "package_case": r.package_case, "case_com_db": r.case_com_db, "dfe_floating": r.dfe_floating,
            "g_dc_db": r.g_dc_db,
            "g_dc2_db": r.g_dc2_db, "tx_ffe": r.tx_ffe, "a_s_v": r.a_s_v, "a_ni_v": r.a_ni_v, "sigmas_v": r.sigmas_v}


def peer(python: str, name: str, grid: dict) -> dict:
    thru, fext, nxt = SETS[name]
    cmd = [python, str(REPO / "benchmarks" / "peer_pychopmarg.py"), "--preset", "ck-kr", "--thru", str(SHARED / thru),
           "--warmup", "0", "--repeat", "1", "--json"]
    for f in fext:
        cmd += ["--fext", str(SHARED / f)]
    for f in nxt:
        cmd += ["--next", str(SHARED / f)]
    for s in peer_sets(grid):
        cmd += ["--set", s]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip()[-500:]}
    d = json.loads(out.stdout[out.stdout.index("{") :])
    return {"com_db": d["com_db"], "seconds": d["seconds"], "seconds_search": d.get("seconds_search_and_noise"),
            "ctle": d.get("ctle"), "tx_ffe": d.get("tx_ffe"),
            "a_s_v": d.get("A_s_V"), "a_ni_v": d.get("A_ni_V"), "noise_v": d.get("noise_V"),
            "settings": d.get("search", {}).get("full_grid"), "case_com_db": d.get("package_cases_com_db")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pcm-python", help="python of a venv with pychopmarg: run the peer side by side")
    ap.add_argument("--grid", choices=("reduced", "full"), default="reduced")
    ap.add_argument("--channels", nargs="*", default=list(SETS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if not SHARED.exists():
        sys.exit(f"bench_com: {SHARED} not found (the shared channels live beside the repository)")
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {0})
        except OSError:
            pass
    grid = grids(args.grid)
    rows = {}
    ours(args.channels[0], grids("reduced"), 1)  # compile / load the Numba cache before timing
    print(f"{'channel':24s} {'ours dB':>8s} {'peer dB':>8s} {'diff':>6s} {'ours s':>7s} {'peer s':>8s} {'ratio':>7s}"
          f"  {'(search only: ours, peer, ratio)'}  [ours with the floating DFE]")
    for name in args.channels:
        o = ours(name, grid, args.repeat)
        of = ours(name, grid, 1, floating=True)
        row = {"ours": o, "ours_floating_dfe": of}
        line = f"{name:24s} {o['com_db']:8.3f}"
        if args.pcm_python:
            q = peer(args.pcm_python, name, grid)
            row["peer"] = q
            if "com_db" in q:
                line += (f" {q['com_db']:8.3f} {o['com_db'] - q['com_db']:6.2f} {o['seconds']:7.3f} {q['seconds']:8.2f}"
                         f" {q['seconds'] / o['seconds']:7.0f}x  ({o['seconds_margin']:.3f} s, "
                         f"{q['seconds_search']:.2f} s, {q['seconds_search'] / o['seconds_margin']:.0f}x)")
            else:
                line += f"  peer failed: {q['error'][-120:]}"
        else:
            line += f" {'':8s} {'':6s} {o['seconds']:7.3f}"
        cases = ", ".join(f"{v:.2f}" for v in o["case_com_db"].values())
        peer_cases = ", ".join(f"{v:.2f}" for v in (row.get("peer") or {}).get("case_com_db") or [])
        line += (f"  [{of['com_db']:.3f} dB, {len(of['dfe_floating'])} floating taps; "
                 f"cases ours {cases}, peer {peer_cases or '-'}]")
        print(line, flush=True)
        rows[name] = row
    full = ours(args.channels[0], grids("full"), args.repeat, floating=True)
    print(f"full 802.3ck search on {args.channels[0]} (both package cases, floating DFE): {full['settings']:,} "
          f"settings in {full['seconds']:.2f} s (COM {full['com_db']:.3f} dB, case {full['package_case']})")
    rows["full_search"] = full
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
