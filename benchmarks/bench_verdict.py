"""The link verdict with and without link-level retry, the old rule beside the new (issue 32).

Old rule: each option's margin was taken over its own required detector error ratio, and
with link-level retry that is the error ratio at which replays take half the bandwidth
(3-6e-3), so retry turned KP4 fails into passes. New rule: the margin is taken over the
error ratio the FEC corrects to the target by itself; retry absorbs what remains and its
own limit (``LinkReport.retry_required_der``) is only reported.

For 26 AWG twinax cable links (125 mm host boards, plugs with paddle cards, the cable's
neighbours as crosstalk: ``channels.assembly.cable_channel(..., host="pcb",
crosstalk=True)``) at 212.5 and 106.25 Gb/s PAM4 it prints, for KP4, KR4 and LL272 with
and without retry: the detector error ratio, the FEC's own required ratio, the replays'
ratio, the margin under the new rule and under the old one, and each rule's verdict; then
the lowest-latency passing choice of ``phy.search_link`` under the new rule.

    python benchmarks/bench_verdict.py            # 0.5, 1, 2 m at 212.5 and 106.25 Gb/s
    python benchmarks/bench_verdict.py --quick    # 0.5 m at 212.5 Gb/s only
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import phy  # noqa: E402
from channels import assembly  # noqa: E402
from phy.link.post_fec import _q_of  # noqa: E402

CODES = ("KP4", "KR4", "LL272")


def rows(length_m: float, rate_bps: float) -> list[str]:
    ch = assembly.cable_channel(length_m, 26, host="pcb", crosstalk=True)
    base = phy.LinkSpec(channel=ch, lane_rate_bps=rate_bps, fec="KP4", name=f"{length_m:g} m")
    segs = phy.link.segments(base)
    out = []
    for code in CODES:
        for retry in (None, phy.link.Retry()):
            r = phy.evaluate_link(base.with_(fec=code, retry=retry), segs)
            ref = r.required_der if r.retry_required_der is None else r.retry_required_der
            old = 20 * math.log10(_q_of(r.pre_fec_der, 4) / _q_of(ref, 4)) if r.pre_fec_der < 0.5 else -math.inf
            old_pass = old >= r.required_margin_db and r.post_fec_ber <= r.target_ber
            out.append(f"{length_m:>5g} {rate_bps / 1e9:>7.2f} {code:<6} {'y' if retry else 'n':>5} "
                       f"{r.pre_fec_der:>9.2e} {r.required_der:>9.2e} "
                       f"{'' if r.retry_required_der is None else f'{r.retry_required_der:.2e}':>9} "
                       f"{r.margin_db:>7.2f} {old:>7.2f} {'PASS' if old_pass else 'fail':>5} "
                       f"{'PASS' if r.passes else 'fail':>5}")
    s = phy.search_link(base, fec_codes=(None,) + CODES, interleaves=(1,), precoding=(False,))
    best = s.best_report
    out.append(f"      search_link: {'no choice passes' if best is None else best.fec or 'no FEC'}"
               + ("" if best is None else f"{' + retry' if best.retry else ''}, margin {best.margin_db:.2f} dB, "
                  f"{best.latency_s * 1e9:.1f} ns"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    cases = [(0.5, 212.5e9)] if args.quick else [(L, r) for r in (212.5e9, 106.25e9) for L in (0.5, 1.0, 2.0)]
    print(f"{'L m':>5} {'Gb/s':>7} {'FEC':<6} {'retry':>5} {'DER':>9} {'FEC req':>9} {'retry req':>9} "
          f"{'margin':>7} {'old':>7} {'old':>5} {'new':>5}")
    for L, rate in cases:
        for line in rows(L, rate):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
