"""802.3dj COM (Annex 178A, the Rx FFE by MMSE at every setting) side by side with PyChOpMarg.

Three parts, one run, one core (thread counts set to 1 before numpy loads; pinned to CPU 0
where allowed):

A. The configuration PyChOpMarg's repository compares against MATLAB COM
   (``config/config_com_ieee8023dj_PyChOpMarg_vs_MATLAB.xls``: one equaliser setting, no
   Tx FFE, a flat CTLE, a 16-tap Rx FFE with 5 pre-cursor taps, one DFE tap), read by
   PyChOpMarg's own spreadsheet reader (``--vs-matlab-xls``; get it from the PyChOpMarg
   repository). Ours: the same values as a ComParams (:func:`vs_matlab_params`). For each
   shared 802.3ck channel: COM, FOM, and every noise term against A_s (dB), both sides.
B. P802.3dj/D3.3 KR (Tables 178-14/15) on a reduced grid, package class A tests 1 and 2,
   both sides without the floating Rx FFE taps, the quantisation noise and the MLSD (the
   peer's ``dj-d3p3-kr`` preset turns them off; ours is shown again with the first two):
   COM as the lower of the two cases.
C. Our full D3.3 KR grid (1,308 Tx FFE x 147 CTLE settings, each with its Rx FFE by MMSE
   at 33 sampling times): one case and both class A cases, full and pruned timing search.

    python benchmarks/bench_com_dj.py --pcm-python /tmp/pcm-venv/bin/python \\
        --vs-matlab-xls /path/to/config_com_ieee8023dj_PyChOpMarg_vs_MATLAB.xls --json out.json
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
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np
from bench_com import SETS, SHARED, peer_sets
from peer_configs import vs_matlab_params

import channels
from phy.engines.com import ComParams, channel_margin

REDUCED = {"g_dc_db": (0.0, -5.0, -10.0, -15.0, -20.0), "g_dc2_db": (0.0, -3.0, -6.0), "c_m3": (0.0,),
           "c_m2": (0.0, 0.1), "c_m1": (-0.2, -0.1, 0.0), "c_p1": (-0.1, 0.0)}
XT_SETS = ("DPO_14in_Meg7", "CA_19p75dB", "Tp0_Tp5_28p5db_FQSFP")


def load(name: str):
    thru, fext, nxt = SETS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(SHARED / thru)
        aggs = [channels.load(SHARED / f, thru=ch, kind="fext") for f in fext]
        aggs += [channels.load(SHARED / f, thru=ch, kind="next") for f in nxt]
    return ch.with_aggressors(*aggs)


def terms_db(a_s: float, sig: dict) -> dict:
    return {k: (20 * np.log10(a_s / v) if v and v > 0 else None) for k, v in sig.items()}


def ours(name: str, p: ComParams) -> dict:
    t0 = time.perf_counter()
    r = channel_margin(load(name), p)
    dt = time.perf_counter() - t0
    return {"com_db": r.com_db, "fom_db": r.fom_db, "seconds": dt, "a_s_v": r.a_s_v, "a_ni_v": r.a_ni_v,
            "terms_db": terms_db(r.a_s_v, r.sigmas_v), "case": r.package_case, "case_com_db": r.case_com_db,
            "tx_ffe": r.tx_ffe, "ctle": [r.g_dc_db, r.g_dc2_db], "dfe": r.dfe, "settings": r.settings_searched}


def peer(python: str, name: str, preset: str, extra: list[str]) -> dict:
    thru, fext, nxt = SETS[name]
    cmd = [python, str(REPO / "benchmarks" / "peer_pychopmarg.py"), "--preset", preset, "--thru", str(SHARED / thru),
           "--warmup", "0", "--repeat", "1", "--json", *extra]
    for f in fext:
        cmd += ["--fext", str(SHARED / f)]
    for f in nxt:
        cmd += ["--next", str(SHARED / f)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip()[-400:]}
    d = json.loads(out.stdout[out.stdout.index("{"):])
    nv = d["noise_V"]
    sig = {"isi": nv["sigma_ISI"], "tx": nv["sigma_Tx"], "jitter": nv["sigma_J"], "crosstalk": nv["sigma_XT"],
           "rx": nv["sigma_N"]}
    return {"com_db": d["com_db"], "fom_db": d["fom_db"], "seconds": d["seconds"], "a_s_v": d["A_s_V"],
            "a_ni_v": d["A_ni_V"], "terms_db": terms_db(d["A_s_V"], sig), "tx_ffe": d["tx_ffe"], "ctle": d["ctle"],
            "dfe": d["dfe_taps"]}


def show(label: str, o: dict, q: dict | None) -> str:
    line = f"{label:24s} ours {o['com_db']:7.3f} dB (FOM {o['fom_db']:6.3f}) {o['seconds']:7.2f} s"
    if q is None:
        return line
    if "error" in q:
        return line + f"  peer failed: {q['error'][-160:]}"
    line += (f" | peer {q['com_db']:7.3f} dB (FOM {q['fom_db']:6.3f}) {q['seconds']:8.2f} s | "
             f"diff {o['com_db'] - q['com_db']:+.3f} dB, {q['seconds'] / o['seconds']:.0f}x")
    terms = " ".join(f"{k} {o['terms_db'][k] - q['terms_db'][k]:+.2f}" for k in o["terms_db"]
                     if o["terms_db"][k] is not None and q["terms_db"].get(k) is not None)
    return line + f"\n{'':24s} terms vs A_s, ours - peer (dB): {terms}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pcm-python", help="python of a venv with pychopmarg (and xlrd for part A)")
    ap.add_argument("--vs-matlab-xls", type=Path, help="PyChOpMarg's config_com_ieee8023dj_PyChOpMarg_vs_MATLAB.xls")
    ap.add_argument("--parts", default="ABC")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not SHARED.exists():
        sys.exit(f"bench_com_dj: {SHARED} not found (the shared channels live beside the repository)")
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {0})
        except OSError:
            pass
    out: dict = {}
    kr = ComParams.ieee_802_3dj_kr("A").with_(mlsd=False)  # as the peer's dj-d3p3-kr preset: no MLSD (bench_mlsd.py)
    channel_margin(load("C2C_PCB_SYSVIA_12dB"), kr.with_(**REDUCED))  # compile / load the Numba cache
    if "A" in args.parts:
        print("A. PyChOpMarg-vs-MATLAB sheet (one setting, Rx FFE 5+1+10 by MMSE, 1 DFE tap)")
        p = vs_matlab_params()
        for name in SETS:
            o = ours(name, p)
            q = None
            if args.pcm_python and args.vs_matlab_xls:
                q = peer(args.pcm_python, name, "dj-vs-matlab", ["--config", str(args.vs_matlab_xls)])
            out.setdefault("A", {})[name] = {"ours": o, "peer": q}
            print(show(name, o, q))
    if "B" in args.parts:
        print("B. P802.3dj/D3.3 KR, class A tests 1 and 2, reduced grid "
              f"({int(np.prod([len(v) for v in REDUCED.values()]))} settings per case)")
        p = kr.with_(**REDUCED, rx_ffe_float_groups=0, adc_bits=0)  # as the peer's preset: neither
        for name in XT_SETS:
            o = ours(name, p)
            full = ours(name, kr.with_(**REDUCED))
            q = None
            if args.pcm_python:
                qs = [peer(args.pcm_python, name, "dj-d3p3-kr", ["--dj-case", c] + [f"--set={s}" for s in
                                                                                    peer_sets(REDUCED)])
                      for c in ("A1", "A2")]
                ok = [x for x in qs if "error" not in x]
                q = min(ok, key=lambda x: x["com_db"]) if len(ok) == 2 else (qs[0] if "error" in qs[0] else qs[1])
                if len(ok) == 2:
                    q = dict(q, seconds=sum(x["seconds"] for x in ok), cases=[x["com_db"] for x in ok])
            out.setdefault("B", {})[name] = {"ours": o, "peer": q, "ours_floating_and_adc": full}
            print(show(name, o, q) + (f"\n{'':24s} cases ours {o['case_com_db']}, peer {q.get('cases')}"
                                      if q and "cases" in q else "")
                  + f"\n{'':24s} ours with D3.3's floating taps and 6-bit quantiser: {full['com_db']:.3f} dB "
                    f"({full['seconds']:.2f} s)")
    if "C" in args.parts:
        print("C. our full D3.3 KR grid on CA_19p75dB (with its NEXT and FEXT)")
        for label, p in (("one case, full ts", kr.with_(package_cases=kr.package_cases[:1])),
                         ("one case, pruned ts", kr.with_(package_cases=kr.package_cases[:1], ts_search="pruned")),
                         ("class A (2 cases), full", kr)):
            o = ours("CA_19p75dB", p)
            out.setdefault("C", {})[label] = o
            print(f"{label:28s} COM {o['com_db']:7.3f} dB, {o['settings']:,} settings in {o['seconds']:.2f} s "
                  f"({o['seconds'] / o['settings'] * 1e6:.0f} us per setting); Tx {o['tx_ffe']} CTLE {o['ctle']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
