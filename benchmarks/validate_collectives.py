"""Collectives against public nccl-tests figures (issue 33, part 2), in one run.

Each public measurement of :data:`phy.latency.measured.MEASUREMENTS` beside the model's
figure on the same fabric (an HGX H100/H200-class board, an HGX B200 board, a GB200 NVL72
rack, each rolled up from its links), with the algorithm and protocol the model takes
(NCCL's own choice unless the run forced one), the ratio ours / measured, and whether the
point trained the model (``train``: the two software constants) or was held out. Then
NCCL's selection against its logged crossover on 8 H100, and an all-reduce sweep 8 B to
4 GiB on 8 and 72 GPUs (time, bus bandwidth, algorithm, protocol, channels).

    python benchmarks/validate_collectives.py      # about 45 s, mostly the NVL72 roll-up

``rows()`` returns the table for ``benchmarks/validate_system.py``.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import replace
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phy import topology as tp  # noqa: E402
from phy.latency.measured import H100_CROSSOVER, MEASUREMENTS  # noqa: E402

GPUS = {"h100": "H100", "b200": "B200", "nvl72": "GB200 NVL72"}


@functools.lru_cache(maxsize=1)
def fabrics() -> dict:
    """The three fabrics' collectives, rolled up from their links."""
    h100 = tp.hgx8(tp.scale_up_copper(2, 106.25e9), accelerator=tp.Accelerator.h200(),
                   asic=tp.SwitchAsic.nvlink4(), n_switches=4)
    return {"h100": tp.rollup(h100).collectives, "b200": tp.rollup(tp.hgx8()).collectives,
            "nvl72": tp.rollup(tp.nvl72()).collectives}


def model(m: dict, cols: dict | None = None):
    """The model's :class:`~phy.latency.CollectiveTime` for one measurement."""
    col = (cols or fabrics())[m["fabric"]]
    if m["symmetric"]:
        col = replace(col, software=col.software.with_(symmetric=True))
    if not m.get("nvls", True):
        col = replace(col, software=col.software.with_(switch_reduction=False))
    kind = m["area"]
    kw = {"algorithm": m["algorithm"]} if m["algorithm"] else {}
    return col.time(kind, m["size"], m["p"], **kw)


def _size(s: float) -> str:
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if s >= f:
            return f"{s / f:g} {unit}"
    return f"{s:g} B"


def rows(cols: dict | None = None) -> list[dict]:
    """One row per public measurement: area, case, source, measured, ours, unit, ratio, set."""
    out = []
    for m in MEASUREMENTS:
        t = model(m, cols)
        if m["quantity"] == "busbw":
            ours, meas, unit = t.bus_bandwidth_bytes_per_s() / 1e9, m["value"] / 1e9, "GB/s busbw"
        else:
            ours, meas, unit = t.time_s * 1e6, m["value"] * 1e6, "us"
        forced = " (forced)" if m["algorithm"] else "" if m.get("nvls", True) else " (NCCL's pick, NVLS off)"
        case = (f"{m['p']} x {GPUS[m['fabric']]}, {_size(m['size'])}, ours {t.algorithm}/{t.protocol}{forced}"
                + (", symmetric kernels" if m["symmetric"] else ""))
        out.append({"area": m["area"], "case": case, "source": m["source"], "measured": meas, "ours": ours,
                    "unit": unit, "ratio": ours / meas, "set": m["set"]})
    # NVL72 with NVLS on offer: NCCL's tuner takes NVLS at every size (25 us, 523 GB/s algbw)
    col = (cols or fabrics())["nvl72"]
    for m in MEASUREMENTS:
        if m["fabric"] == "nvl72" and m["p"] == 72:
            t = col.time("all_reduce", m["size"], 72)
            out.append({"area": "all_reduce", "case": f"72 x GB200 NVL72, {_size(m['size'])}, ours "
                        f"{t.algorithm}/{t.protocol} (NCCL's pick with NVLS)", "source": m["source"],
                        "measured": m["value"] / 1e9, "ours": t.bus_bandwidth_bytes_per_s() / 1e9,
                        "unit": "GB/s busbw", "ratio": t.bus_bandwidth_bytes_per_s() / m["value"], "set": "context"})
    return out


def main() -> int:
    cols = fabrics()
    rs = rows(cols)
    print("Collectives against public measurements (ratio = ours / measured)")
    print(f"{'area':<11}{'set':<7}{'measured':>10}{'ours':>10}{'ratio':>7}  {'unit':<11}case [source]")
    for r in rs:
        print(f"{r['area']:<11}{r['set']:<7}{r['measured']:>10.3g}{r['ours']:>10.3g}{r['ratio']:>7.2f}  "
              f"{r['unit']:<11}{r['case']} [{r['source']}]")
    held = [r for r in rs if r["set"] == "test"]
    inside = sum(abs(r["ratio"] - 1) <= 0.3 for r in held)
    print(f"\nheld-out points within 30 %: {inside} of {len(held)}")

    h = cols["h100"]
    print("\nNCCL's choice on 8 x H100 (logged: ring LL to 1 MB, NVLS Simple from 2 MB; nccl-tests issue 309)")
    for s in (8, 2**16, 2**19, H100_CROSSOVER["ring_ll_up_to"], H100_CROSSOVER["nvls_from"], 2**24, 2**30):
        print(f"   {_size(s):>8}: {'/'.join(h.choice('all_reduce', s, 8))}")
    print("\nAll-reduce sweep (NCCL's choice): size, time, bus bandwidth, algorithm/protocol, channels")
    for name, p in (("h100", 8), ("b200", 8), ("nvl72", 72)):
        print(f"   {p} x {GPUS[name]}")
        for s in (8, 2**10, 2**16, 2**20, 2**22, 2**24, 2**26, 2**28, 2**30, 2**32):
            t = cols[name].time("all_reduce", s, p)
            print(f"      {_size(s):>8} {t.time_s * 1e6:10.2f} us {t.bus_bandwidth_bytes_per_s() / 1e9:8.1f} GB/s "
                  f"{t.algorithm}/{t.protocol} x {t.channels}")
    print("\nNVLS latency against GPU count (128 B, H100 board to 8, the B200 board's fabric beyond)")
    for p in (2, 4, 8, 16, 32, 72):
        c = cols["h100"] if p <= 8 else cols["b200"]
        t = c.time("all_reduce", 128, p, algorithm="nvls")
        print(f"   {p:>3} GPUs: {t.time_s * 1e6:6.2f} us (barriers {t.layers['software']['barrier'] * 1e6:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
