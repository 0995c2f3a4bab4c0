"""The optical link classes at 106.25 and 212.5 Gb/s per lane, typical and spec-corner
parts, at their shipping reach: margin, pre-FEC BER, the FEC each uses, the verdict, the
largest optical noise term and, for a class that does not close, what decides.

    python benchmarks/bench_optics.py                  # 500 m, all classes, both parts (a few minutes)
    python benchmarks/bench_optics.py --length-m 2000 --kinds dsp --json optics.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phy.link.classes import class_table  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length-m", type=float, default=500.0, help="fibre length (m); DR/LPO ship at 500 m")
    ap.add_argument("--kinds", default="dsp,lpo,lro,cpo")
    ap.add_argument("--parts", default="typical,corner")
    ap.add_argument("--rates-gbps", default="106.25,212.5")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rates = tuple(float(x) * 1e9 for x in a.rates_gbps.split(","))
    rows = []
    t0 = time.perf_counter()
    for part in a.parts.split(","):
        rows += class_table(rates, tuple(a.kinds.split(",")), length_m=a.length_m, part=part)
    print(f"{'rate':>7} {'class':>5} {'part':>8} {'reach':>6} {'margin':>8} {'pre-FEC BER':>11} {'needs':>9} "
          f"{'FEC':>9} {'verdict':>7} {'noise (uA): thermal/shot/rin/mpi':>33}  dominant")
    for r in rows:
        fec = "KP4" + (f"+{r['inner_fec']}" if r["inner_fec"] else "")
        n = r["noise_terms_ua"]
        print(f"{r['lane_rate_bps'] / 1e9:7.2f} {r['kind']:>5} {r['part']:>8} {r['length_m']:5.0f}m "
              f"{r['margin_db']:7.2f}dB {r['pre_fec_ber']:11.3g} {r['required_pre_fec_ber']:9.3g} {fec:>9} "
              f"{'pass' if r['passes'] else 'FAIL':>7} {n['thermal']:8.2f}/{n['shot']:.2f}/{n['rin']:.2f}/{n['mpi']:.2f}"
              f"{'':>6}{r['dominant_noise']}")
    for r in rows:
        if not r["passes"]:
            print(f"- {r['kind']} {r['part']} {r['lane_rate_bps'] / 1e9:g}G: {r['short_by']}; decided by {r['decides']}")
    print(f"({len(rows)} links in {time.perf_counter() - t0:.0f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
