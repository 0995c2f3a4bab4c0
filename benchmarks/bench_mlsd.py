"""802.3dj's MLSD reference receiver (1-tap MLSE, P802.3dj/D3.3 178A.1.10) in COM and in the
statistical eye, with and without it, side by side in one run on one core.

A. COM (``phy.channel_margin``) with the D3.3 presets, ``mlsd`` off (COM_DFE: one DFE tap)
   and on (COM_DFE plus 178A-49's MLSD term at 3 dB of added receiver noise), on the shared
   802.3ck cable assembly ``CA_19p75dB`` (with its crosstalk; KR class A test 1 and CR HL
   to HL) and synthesised 26 AWG twinax (connector, cable, connector) of 1, 2 and 3 m at
   106.25 GBd (CR HL to HL). The other shared 802.3ck files (backplanes, Tp0-Tp5, C2C)
   are 75 to 120 dB down at 53.125 GHz: no 200G channel. Printed: COM_DFE, COM with the
   MLSD, the gain, the DFE tap ``b`` (the MLSD's target ``1 + b D``), DER_MLSD, g_an, the
   error events summed, the lag-1 noise correlation, and the time with and without.
   Default grid: a reduced one (``--full`` for the presets' own: minutes per channel).
B. The statistical eye at COM's equalisation (``MarginResult.serdes()``, COM's cursor,
   COM's noise and jitter, the reference packages cascaded): the symbol error ratio of the
   slicer (past decisions right), with the DFE's error propagation (``ser_dfe``, the
   link's detector error ratio today), and of the 1-tap MLSD (``ser_mlsd``, the link's with
   ``Receiver(mlsd=True)``), with the mean errors per burst of each; and the same with
   white receiver noise added until ``ser_dfe`` is about 2e-4 (KP4's neighbourhood), where
   the numbers are not deep-tail extrapolations.

    python benchmarks/bench_mlsd.py               # reduced COM grid (about 2 minutes)
    python benchmarks/bench_mlsd.py --full        # the presets' full grids
    python benchmarks/bench_mlsd.py --json out.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np
from scipy import optimize

import channels
import phy
import phy.engines.com.margin as margin_module
from channels import media as m
from phy.engines.com import ComParams, channel_margin
from phy.engines.com.chain import package
from phy.link.parts import Serdes

SHARED = REPO.parent / "shared" / "channels" / "ieee802.3ck"
FB = 106.25e9
REDUCED = {"g_dc_db": (0.0, -3.0, -6.0, -9.0, -12.0, -15.0), "g_dc2_db": (0.0, -2.0, -4.0), "c_m3": (0.0,),
           "c_m2": (0.0, 0.06), "c_m1": (-0.2, -0.1, 0.0), "c_p1": (-0.1, 0.0)}


def channels_to_run():
    out = []
    if (SHARED / "CA_19p75dB_thru.s4p").exists():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ca = channels.load(SHARED / "CA_19p75dB_thru.s4p")
            aggs = [channels.load(SHARED / "CA_19p75dB_fext1.s4p", thru=ca, kind="fext"),
                    channels.load(SHARED / "CA_19p75dB_next1.s4p", thru=ca, kind="next")]
        ca = ca.with_aggressors(*aggs)
        out += [("CA_19p75dB + XT", ca, "KR"), ("CA_19p75dB + XT", ca, "CR")]
    else:
        print(f"(shared channels not found at {SHARED}: the cable assembly is skipped)")
    for length in (1.0, 2.0, 3.0):
        ch = m.cascade(m.connector(), m.twinax(length, 26), m.connector()).renamed(f"twinax_{length:g}m_26awg")
        out.append((ch.name, ch, "CR"))
    return out


def preset(kind: str, full: bool) -> ComParams:
    p = ComParams.ieee_802_3dj_kr("A").with_(package_cases=ComParams.ieee_802_3dj_kr("A").package_cases[1:]) \
        if kind == "KR" else ComParams.ieee_802_3dj_cr("CA-D")
    return p if full else p.with_(**REDUCED)


_MLSD_S = [0.0]


def _timed(fn):
    def run(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            _MLSD_S[0] += time.perf_counter() - t0
    return run


margin_module.mlsd.com_mlsd = _timed(margin_module.mlsd.com_mlsd)


def com_rows(full: bool, only: str | None):
    rows, margins = [], {}
    for name, ch, kind in channels_to_run():
        if only and only not in name:
            continue
        p = preset(kind, full)
        t0 = time.perf_counter()
        off = channel_margin(ch, p.with_(mlsd=False))
        t1 = time.perf_counter()
        _MLSD_S[0] = 0.0
        on = channel_margin(ch, p)
        t2 = time.perf_counter()
        r = on.mlsd
        rows.append({"channel": name, "preset": kind, "il_53_db": float(np.squeeze(ch.insertion_loss_db(FB / 2))),
                     "com_dfe_db": off.com_db, "com_mlsd_db": on.com_db, "gain_db": on.com_db - off.com_db,
                     "delta_db": r.get("delta_db"), "b": r.get("b"), "der_mlsd": r.get("der_mlsd"),
                     "g_an": r.get("g_an"), "events": r.get("events"), "rho1": (r.get("rho") or [0, 0])[1],
                     "note": r.get("note", ""), "s_off": t1 - t0, "s_on": t2 - t1, "s_mlsd": _MLSD_S[0]})
        margins[(name, kind)] = (ch, on, p)
    return rows, margins


def _eye(full_ch, tx, rx, noise, jitter, cdr):
    return phy.statistical_eye(full_ch, baud_hz=FB, tx=tx, rx=rx, noise=noise, jitter=jitter, cdr=cdr,
                               columns="sampling")


def eye_rows(margins):
    rows = []
    for (name, kind), (ch, res, p) in margins.items():
        if kind != "CR":
            continue
        f = ch.f
        full = channels.cascade(package(p.cases()[0][1], f, "tx"), ch, package(p.cases()[0][1], f, "rx"))
        tx, rx = res.serdes()
        noise, jitter = Serdes(com=p).impairments(FB)
        cdr = res.cdr()
        for label, add in (("COM's noise", 0.0), ("noise for ser_dfe ~2e-4", None)):
            if add is None:  # white Rx noise added (rms V) until ser_dfe is about 2e-4
                def err(a):
                    e = _eye(full, tx, rx, replace(noise, rx_noise_rms_v=a), jitter, cdr)
                    return np.log(max(e.ser_dfe(), 1e-300)) - np.log(2e-4)
                try:
                    add = optimize.brentq(err, 1e-5, 0.1 * tx.swing_v, rtol=0.02)
                except ValueError:
                    continue
            t0 = time.perf_counter()
            e = _eye(full, tx, rx, replace(noise, rx_noise_rms_v=add), jitter, cdr)
            t1 = time.perf_counter()
            ml = e.mlsd()
            t2 = time.perf_counter()
            link_mlsd = e.ser_mlsd()  # the link's with Receiver(mlsd=True): ser_dfe where unresolved
            dfe_mean = e.ser_dfe() / e.ser() if e.ser() > 0 else 1.0  # the DFE chain's errors per burst
            rows.append({"channel": name, "noise": label, "added_rms_mv": add * 1e3, "b": ml.events.b,
                         "ser": e.ser(), "ser_dfe": e.ser_dfe(), "ser_mlsd": ml.ser, "link_mlsd": link_mlsd,
                         "dfe_errors_per_burst": float(dfe_mean), "mlsd_errors_per_event": ml.events.mean_errors,
                         "events": int(ml.events.rates.size), "eye_s": t1 - t0, "mlsd_s": t2 - t1})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--full", action="store_true", help="the presets' full equaliser grids")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", help="channels whose name holds this text")
    a = ap.parse_args(argv)
    try:
        os.sched_setaffinity(0, {0})
    except (AttributeError, OSError):
        pass
    rows, margins = com_rows(a.full, a.only)
    print(f"A. COM, P802.3dj/D3.3 ({'full' if a.full else 'reduced'} grid), without and with the MLSD (178A.1.10)")
    print(f"{'channel':22s} {'set':3s} {'IL@53G':>7s} {'COM_DFE':>8s} {'COM_MLSD':>9s} {'gain':>6s} {'b':>5s} "
          f"{'DER_MLSD':>9s} {'g_an':>7s} {'ev':>3s} {'rho1':>6s} {'s off':>6s} {'s on':>6s} {'s MLSD':>6s}")
    for r in rows:
        der = f"{r['der_mlsd']:.2e}" if r["der_mlsd"] is not None else "-"
        g = f"{r['g_an']:.3g}" if r["g_an"] is not None else "-"
        print(f"{r['channel']:22s} {r['preset']:3s} {r['il_53_db']:7.2f} {r['com_dfe_db']:8.2f} "
              f"{r['com_mlsd_db']:9.2f} {r['gain_db']:6.2f} {r['b']:5.2f} {der:>9s} {g:>7s} {r['events']:3d} "
              f"{r['rho1']:6.2f} {r['s_off']:6.2f} {r['s_on']:6.2f} {r['s_mlsd']:6.2f}"
              + (f"  ({r['note']})" if r["note"] else ""))
    erows = eye_rows(margins)
    print("\nB. Statistical eye at COM's equalisation (CR, HL to HL packages): symbol error ratios")
    print(f"{'channel':22s} {'noise':24s} {'+rms mV':>7s} {'b':>5s} {'slicer':>9s} {'ser_dfe':>9s} {'ser_mlsd':>9s} "
          f"{'link':>9s} {'link/dfe':>8s} {'DFE e/burst':>11s} {'MLSD e/event':>12s} {'eye s':>6s} {'mlsd s':>6s}")
    for r in erows:
        ratio = r["link_mlsd"] / r["ser_dfe"] if r["ser_dfe"] > 0 else float("nan")
        print(f"{r['channel']:22s} {r['noise']:24s} {r['added_rms_mv']:7.2f} {r['b']:5.2f} {r['ser']:9.2e} "
              f"{r['ser_dfe']:9.2e} {r['ser_mlsd']:9.2e} {r['link_mlsd']:9.2e} {ratio:8.3f} "
              f"{r['dfe_errors_per_burst']:11.2f} {r['mlsd_errors_per_event']:12.2f} {r['eye_s']:6.2f} "
              f"{r['mlsd_s']:6.3f}")
    if a.json:
        a.json.write_text(json.dumps({"com": rows, "eye": erows}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
