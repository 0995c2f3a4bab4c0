"""One measurement for ``bench_com_cost.py --speed`` (issue 35), run in its own process
with ``PYTHONPATH`` set to the tree under test (the code before or after): COM's search
timed by CPU time on one core, with its kernel's share. Prints one JSON line.

    PYTHONPATH=/path/to/tree python benchmarks/com_speed_worker.py ck|dj SHARED_DIR
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import sys
import time
import warnings
from pathlib import Path

import channels
from phy.engines.com import ComParams, channel_margin, mmse
from phy.engines.com import _kernels as com_kernels
from phy.engines.com import margin

SETS = {"ck": ("DPO_14in_Meg7_THRU.s4p", "DPO_14in_Meg7_FENH89.s4p", "DPO_14in_Meg7_NENF89.s4p"),
        "dj": ("CA_19p75dB_thru.s4p", "CA_19p75dB_fext1.s4p", "CA_19p75dB_next1.s4p")}
REDUCED = {"g_dc_db": (0.0, -10.0), "g_dc2_db": (0.0,), "c_m3": (0.0,), "c_m2": (0.0,), "c_m1": (-0.1, 0.0),
           "c_p1": (0.0,)}


def load(shared: Path, which: str) -> channels.Channel:
    thru, fext, nxt = SETS[which]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(shared / thru)
        aggs = [channels.load(shared / fext, thru=ch, kind="fext"), channels.load(shared / nxt, thru=ch, kind="next")]
    return ch.with_aggressors(*aggs)


def timed_kernel(obj, name: str, acc: list):
    """``obj.name`` wrapped to add its CPU time to ``acc[0]``."""
    fn = getattr(obj, name)

    def wrapper(*args):
        t0 = time.process_time()
        try:
            return fn(*args)
        finally:
            acc[0] += time.process_time() - t0

    setattr(obj, name, wrapper)


def main() -> int:
    which, shared = sys.argv[1], Path(sys.argv[2])
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        except OSError:
            pass
    ch = load(shared, which)
    if which == "ck":
        p = ComParams.ieee_802_3ck_kr()
        acc = [0.0]
        channel_margin(ch, p.with_(**REDUCED))  # the Numba cache, the packages
        timed_kernel(com_kernels, "fom_search", acc)
    else:  # 802.3dj KR class A, one package case, the Rx FFE by MMSE at every setting, no MLSD
        kr = ComParams.ieee_802_3dj_kr("A").with_(mlsd=False)
        p = kr.with_(package_cases=kr.package_cases[:1])
        acc = [0.0]
        channel_margin(ch, p.with_(**REDUCED))
        timed_kernel(mmse, "mmse_grid", acc)
    t0 = time.process_time()
    r = channel_margin(ch, p)
    total = time.process_time() - t0
    n = r.settings_searched
    print(json.dumps({"com_db": r.com_db, "settings": n, "cases": len(p.package_cases), "total_s": total,
                      "kernel_s": acc[0], "grid_us": total / n * 1e6, "kernel_us": acc[0] / n * 1e6,
                      "margin": margin.__file__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
