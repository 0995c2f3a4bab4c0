"""Passive copper reach (issue 32): the longest twinax cable assembly that closes, per gauge
and lane rate, beside the public objectives and shipping products.

For 26, 28 and 30 AWG foam twinax (:func:`channels.media.twinax`) in a cable assembly with
its plugs (:func:`channels.assembly.cable_channel` with ``host=None``: connector, paddle card
and the via the wires land on at each end) and its neighbours' crosstalk (2 NEXT and 3 FEXT
lanes, :func:`channels.crosstalk.cable_aggressors`), at 106.25 and 212.5 Gb/s PAM4, the
length is searched (``--res`` 0.1 m: steps of 0.4 m from a start scaled by the gauge's loss,
then bisection) for the longest that passes: the link roll-up
(:func:`phy.search_link`) chooses the FEC among none, LL272, KR4 and KP4 (no link-level
retry: the margin is judged against the error ratio the FEC itself corrects), and the
3 dB margin rule of :meth:`phy.LinkSpec.margin_requirement` decides. The hosts are 802.3dj
CR host classes at both ends (``phy.Serdes.cr``: the class's package and host PCB, P802.3dj/D3.3
Table 179-23, with the CR reference receiver's floating taps), HN (nominal) and HL (a
cabled host) by default; ``--kr`` adds the roll-up's previous setup (COM's KR package and
125 mm of host board at each end) for comparison.

The table prints each reach with the FEC the roll-up picked there, its margin and COM, the
assembly's loss at Nyquist, and which term of COM's noise dominates, then the public
figures beside it. Nothing here is fitted to those figures: the parts are the sourced ones
of ``channels.media`` and ``ComParams``.

    python benchmarks/bench_reach.py                  # 24 searches of about 5 links each: about 20 minutes of CPU
    python benchmarks/bench_reach.py --awg 26 --hosts HN --json reach.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import phy  # noqa: E402
from channels import assembly  # noqa: E402

FECS = (None, "LL272", "KR4", "KP4")

#: Public objectives and products the reaches stand beside (each with its source).
PUBLIC = (
    ("802.3ck 100GBASE-CR1 (100G/lane)", "106.25", "2 m objective; cable assembly at most 19.75 dB at 26.56 GHz",
     "IEEE Std 802.3ck-2022 objectives and Clause 162; the 19.75 dB reference assembly CA_19p75dB "
     "(mellitz_3ck_04_1119) in ../shared/channels"),
    ("NVIDIA LinkX NDR passive DAC (100G-PAM4/lane)", "106.25", "up to 3 m: 30 AWG for 1-1.5 m, 26 AWG for 2-3 m",
     "NVIDIA MCP7Y10-Nxxx product specification (docs.nvidia.com/networking)"),
    ("802.3dj 200GBASE-CR1 (200G/lane)", "212.5", "at least 1 m objective, host classes HL/HN/HH",
     "IEEE P802.3dj objectives; host classes of P802.3dj/D3.3 Table 179-23 (more with cabled hosts: the issue)"),
    ("NVL72 NVLink spine (200G/lane)", "212.5", "passive copper tray to switch, about 0.2-1.25 m in this model's "
                                              "rack", "NVIDIA GB200 NVL72 (5,184 copper pairs, REFERENCES.md); "
                                                      "lengths from phy.topology.nvl72"),
    ("vendor 224G DAC claims", "212.5", "2 m and more (not verified here)", "issue 32; no datasheet figure found"),
)


#: Where the search starts for 26 AWG (m), scaled for other gauges by their loss per metre
#: at Nyquist (:func:`loss_per_m`): it sets only the number of evaluations, not the reach.
GUESS_M = {106.25: 3.0, 212.5: 1.0}
LOSS_26 = {}


def loss_per_m(awg: float, rate: float) -> float:
    """Twinax loss per metre at the lane's Nyquist frequency (dB/m)."""
    from channels import media

    il = float(media.twinax(1.0, awg).insertion_loss_db(rate / 4))
    LOSS_26.setdefault(round(rate / 1e9, 2), float(media.twinax(1.0, 26).insertion_loss_db(rate / 4)))
    return il


def evaluate(length_m: float, awg: float, rate: float, serdes, kr: bool, xt: bool = True):
    """The roll-up's choice on one assembly: (passes, the best report, or the closest to
    passing when none does)."""
    ch = assembly.cable_channel(length_m, awg, host="pcb" if kr else None, crosstalk=xt)
    spec = phy.LinkSpec(channel=ch, lane_rate_bps=rate, serdes=serdes, name=f"{awg:g} AWG {length_m:g} m")
    s = phy.search_link(spec, fec_codes=FECS, interleaves=(1,), precoding=(False,), retry=(None,))
    best = s.best_report
    # the closest to passing when nothing does: the highest margin
    top = best or max(s.points, key=lambda p: p.margin_db - p.required_margin_db)
    return best is not None, top


def reach(awg: float, rate: float, serdes, kr: bool, xt: bool, guess: float, lo: float, hi: float, res: float,
          log, step: float = 0.4):
    """Longest length (on the ``res`` grid, within ``lo`` .. ``hi``) that passes, with its
    report, and the shortest that fails: from ``guess``, steps of ``step`` up or down until
    the verdict changes, then bisection (pass/fail taken as monotone in length). ``guess``
    only sets where the search starts."""
    def at(k):
        ok, r = evaluate(k * res, awg, rate, serdes, kr, xt)
        log(k * res, ok, r)
        return ok, r

    k_lo_lim, k_hi_lim = round(lo / res), round(hi / res)
    k = min(max(round(guess / res), k_lo_lim), k_hi_lim)
    dk = max(1, round(step / res))
    ok, r = at(k)
    if ok:
        k_pass, best, k_fail = k, r, None
        while k_fail is None:
            if k_pass == k_hi_lim:
                return round(k_pass * res, 6), best, None
            k = min(k_pass + dk, k_hi_lim)
            ok, r = at(k)
            if ok:
                k_pass, best = k, r
            else:
                k_fail = k
    else:
        k_fail, k_pass, best, worst = k, None, None, r
        while k_pass is None:
            if k_fail == k_lo_lim:
                return None, worst, round(k_fail * res, 6)
            k = max(k_fail - dk, k_lo_lim)
            ok, r = at(k)
            if ok:
                k_pass, best = k, r
            else:
                k_fail, worst = k, r
    while k_fail - k_pass > 1:
        k = (k_pass + k_fail) // 2
        ok, r = at(k)
        if ok:
            k_pass, best = k, r
        else:
            k_fail = k
    return round(k_pass * res, 6), best, round(k_fail * res, 6)


def dominant(ch, params) -> str:
    """COM's largest noise term on ``ch`` with the proposal's parameters, in dB below the
    signal ``A_s`` (the smaller, the more it costs), and the next one."""
    b = phy.channel_margin(ch, params).breakdown_db()
    terms = sorted(b, key=lambda k: b[k])
    return ", ".join(f"{k} {b[k]:.1f}" for k in terms[:2])


def proposal_cost(rate: float):
    """CPU seconds of the KR proposal (KR package, 125 mm host board) and of the CR one
    (host HN, floating taps) on the same 1 m, 26 AWG assembly, side by side."""
    from phy.link.parts import Serdes

    baud = rate / 2
    out = {}
    for name, ch, p in (("KR package + 125 mm board", assembly.cable_channel(1.0, 26, host="pcb", crosstalk=True),
                         Serdes().com_params(baud)),
                        ("CR host HN", assembly.cable_channel(1.0, 26, host=None, crosstalk=True),
                         Serdes.cr("HN").com_params(baud))):
        phy.channel_margin(ch, p)  # compiled and cached
        t = time.process_time()
        phy.channel_margin(ch, p)
        out[name] = time.process_time() - t
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--awg", default="26,28,30")
    ap.add_argument("--rates", default="106.25,212.5", help="lane rates (Gb/s)")
    ap.add_argument("--hosts", default="HN,HL", help="802.3dj CR host classes at both ends")
    ap.add_argument("--kr", action="store_true", help="also the KR package with 125 mm of host board")
    ap.add_argument("--crosstalk", default="on,off", help="the neighbours' crosstalk: on, off or both")
    ap.add_argument("--lo", type=float, default=0.3)
    ap.add_argument("--hi", type=float, default=5.0)
    ap.add_argument("--res", type=float, default=0.1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-cost", action="store_true", help="skip the proposal's CPU time")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    awgs = [float(x) for x in a.awg.split(",")]
    rates = [float(x) * 1e9 for x in a.rates.split(",")]
    setups = [(h, phy.Serdes.cr(h), False) for h in a.hosts.split(",") if h]
    if a.kr:
        setups.append(("KR+125mm", phy.Serdes(), True))
    xts = [{"on": True, "off": False}[x] for x in a.crosstalk.split(",")]
    t0 = time.time()
    rows = []
    for rate in rates:
        if not a.no_cost:
            cost = proposal_cost(rate)
            print(f"proposal CPU time at {rate / 1e9:g} Gb/s on 1 m of 26 AWG: "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in cost.items())
                  + f" (ratio CR/KR {cost['CR host HN'] / cost['KR package + 125 mm board']:.2f})", flush=True)
        for awg, (host, sd, kr), xt in itertools.product(awgs, setups, xts):
            def log(L, ok, r, awg=awg, host=host, xt=xt):
                if not a.quiet:
                    print(f"  {awg:g} AWG {rate / 1e9:g} Gb/s {host} xt {'on' if xt else 'off'}: {L:.2f} m "
                          f"{'pass' if ok else 'fail'} "
                          f"(fec {r.fec}, margin {r.margin_db:.2f} dB, COM {r.segments[0].com_db:.2f} dB)", flush=True)
            per_m = loss_per_m(awg, rate)
            guess = GUESS_M[round(rate / 1e9, 2)] * LOSS_26[round(rate / 1e9, 2)] / per_m
            found, rep, first_fail = reach(awg, rate, sd, kr, xt, guess, a.lo, a.hi, a.res, log)
            at = found or a.lo
            ca = assembly.cable_channel(at, awg, host="pcb" if kr else None, crosstalk=xt)
            bare = assembly.cable_channel(at, awg, host=None)
            rows.append({"awg": awg, "rate_gbps": rate / 1e9, "host": host, "crosstalk": xt, "reach_m": found,
                         "first_fail_m": first_fail, "fec": rep.fec if found else None,
                         "margin_db": rep.margin_db, "com_db": rep.segments[0].com_db,
                         "ca_il_db_nyquist": float(bare.insertion_loss_db(rate / 4)),
                         "pre_fec_ber": rep.pre_fec_ber, "dominant": dominant(ca, sd.com_params(rate / 2))})
    print()
    print("| AWG | lane rate (Gb/s) | host | crosstalk | reach (m) | first fail (m) | FEC picked "
          "| margin at reach (dB) | COM at reach (dB) | assembly IL at Nyquist (dB) "
          "| COM's largest noise terms (dB below A_s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        got = f"{r['reach_m']:.1f}" if r["reach_m"] is not None else f"< {a.lo:g}"
        ff = f"{r['first_fail_m']:.1f}" if r["first_fail_m"] is not None else f"> {a.hi:g}"
        print(f"| {r['awg']:g} | {r['rate_gbps']:g} | {r['host']} | {'on' if r['crosstalk'] else 'off'} "
              f"| {got} | {ff} | {r['fec'] or '-'} "
              f"| {r['margin_db']:.2f} | {r['com_db']:.2f} | {r['ca_il_db_nyquist']:.1f} | {r['dominant']} |")
    print()
    print("| public figure | lane rate (Gb/s) | reach | source |")
    print("|---|---|---|---|")
    for name, rate_txt, claim, src in PUBLIC:
        print(f"| {name} | {rate_txt} | {claim} | {src} |")
    print(f"\n{time.time() - t0:.0f} s")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "public": PUBLIC}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
