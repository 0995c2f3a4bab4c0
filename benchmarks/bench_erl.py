"""Effective return loss (93A.5, phy.engines.com.erl): its closed-form checks and its time on the
shared channels, in one run on one core.

1. Closed forms: a lossless 100 ohm line into a load R || 100 ohm, reflection Gamma; with the
   Gaussian edge alone (no ringing) and the reflection past the weighting's ramp, ERL is
   -20 log10 |Gamma| (tests/test_erl.py derives it); inside the 802.3ck KR ramp it is
   -20 log10(|Gamma| w(x)). Printed: each error in dB, and the 802.3ck filters' effect.
2. The shared channels (../shared/channels): ERL of both ports with the 802.3ck KR and CR
   presets and the 200G (802.3dj) one, and the time of one call (both ports, best of
   ``--repeat``, the file already read).
3. Cost on a huge grid: a 600,001-point channel (100 kHz steps to 60 GHz).

    python benchmarks/bench_erl.py [--repeat 3] [--json erl.json] [--no-pin]
"""

from __future__ import annotations

import os

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import skrf as rf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import channels  # noqa: E402
from phy.engines.com import ErlParams, effective_return_loss  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_topology import _pin, best_of  # noqa: E402 (one core, pinned; best of n)

SHARED = REPO.parent / "shared" / "channels"
FILES = ("ieee802.3ck/CA_19p75dB_thru.s4p", "ieee802.3ck/DPO_4in_Meg7_THRU.s4p", "ieee802.3ck/DPO_10in_Meg7_THRU.s4p",
         "ieee802.3ck/DPO_14in_Meg7_THRU.s4p", "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_thru.s4p",
         "ieee802.3ck/C2C_PCB_SYSVIA_12dB_thru.s4p", "vita-backplane/example2_THRU.s4p", "measured/CABLE1_TX_pair.s4p")
PRESETS = ("802.3ck_kr", "802.3ck_cr", "802.3dj_kr")


def mismatch(f, tau_s, r_ohm, z0=100.0):
    """A lossless z0 line of delay tau into a shunt r_ohm before port 2 (z0): reflection Gamma."""
    th = 2 * np.pi * f * tau_s
    a, b, c, d = np.cos(th) + 1j * np.sin(th) * z0 / r_ohm, 1j * z0 * np.sin(th), 1j * np.sin(th) / z0 + np.cos(th) / r_ohm, \
        np.cos(th)
    den = a + b / z0 + c * z0 + d
    s = np.stack([np.stack([(a + b / z0 - c * z0 - d) / den, 2 * (a * d - b * c) / den], -1),
                  np.stack([2 / den, (-a + b / z0 - c * z0 + d) / den], -1)], -2)
    zl = r_ohm * z0 / (r_ohm + z0)
    ch = channels.Channel(differential=rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=z0),
                          name=f"mismatch_{r_ohm:g}")
    return ch, (zl - z0) / (zl + z0)


def closed_forms() -> dict:
    f = np.arange(25001) * 10e6
    kr = ErlParams.ieee_802_3ck_kr()
    bare = kr.with_(f_r=None)
    rows = []
    for r_ohm in (200.0, 500.0, 2000.0):
        ch, g = mismatch(f, 0.4e-9, r_ohm)
        want = -20 * np.log10(abs(g))
        got = effective_return_loss(ch, bare, port=1).erl_db
        full = effective_return_loss(ch, kr, port=1).erl_db
        rows.append({"case": f"past the ramp, R {r_ohm:g} ohm", "closed_form_db": want, "erl_db": got,
                     "error_db": got - want, "with_802.3ck_filters_db": full})
    tb = 1 / kr.baud_hz
    for tau_ui in (1.0, 5.25, 8.0):
        ch, g = mismatch(f, tau_ui * tb, 500.0)
        x, k = 2 * tau_ui + 0.5, kr.n_bx + 1
        w = kr.rho_x * (1 + kr.rho_x) * np.exp(-(((x - k) / k) ** 2))
        want = -20 * np.log10(abs(g) * w)
        got = effective_return_loss(ch, bare, port=1).erl_db
        rows.append({"case": f"in the ramp at {x:g} UI, w {w:.4f}", "closed_form_db": want, "erl_db": got,
                     "error_db": got - want})
    return {"rows": rows, "max_abs_error_db": max(abs(r["error_db"]) for r in rows)}


def shared(repeat: int) -> list:
    out = []
    for rel in FILES:
        path = SHARED / rel
        if not path.exists():
            continue
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = channels.load(path)
        row = {"file": rel, "load_s": time.perf_counter() - t, "points": int(ch.f.size), "presets": {}}
        for name in PRESETS:
            p = ErlParams.preset(name)
            try:
                res, dt = best_of(lambda: effective_return_loss(ch, p, require_nyquist=False), repeat)
            except Exception as e:  # noqa: BLE001 - a benchmark reports what it could not do
                row["presets"][name] = {"error": str(e)}
                continue
            row["presets"][name] = {"port1_db": res[0].erl_db, "port2_db": res[1].erl_db, "seconds": dt,
                                    "passes": [r.passes for r in res], "notes": sorted({n for r in res for n in r.notes[1:]})}
        out.append(row)
    return out


def huge(repeat: int) -> dict:
    f = np.arange(600001) * 100e3
    ch, g = mismatch(f, 0.4e-9, 500.0)
    res, dt = best_of(lambda: effective_return_loss(ch, ErlParams.ieee_802_3ck_kr()), repeat)
    return {"points": int(f.size), "seconds": dt, "port1_db": res[0].erl_db, "closed_form_db": -20 * np.log10(abs(g))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args(argv)
    if not a.no_pin:
        _pin()
    effective_return_loss(mismatch(np.arange(6001) * 10e6, 0.4e-9, 500.0)[0])  # load the Numba cache untimed
    out = {"closed_forms": closed_forms()}
    print("closed forms (ERL of one reflection, dB):")
    for r in out["closed_forms"]["rows"]:
        extra = f"   802.3ck filters {r['with_802.3ck_filters_db']:.4f}" if "with_802.3ck_filters_db" in r else ""
        print(f"  {r['case']:32s} closed form {r['closed_form_db']:8.4f}  ERL {r['erl_db']:8.4f}  "
              f"error {r['error_db']:+.4f}{extra}")
    print(f"  largest error {out['closed_forms']['max_abs_error_db']:.4f} dB")
    out["shared"] = shared(a.repeat)
    if not out["shared"]:
        print(f"(no shared channels at {SHARED})")
    else:
        print(f"\n{'file':42s} {'preset':11s} {'port 1':>7s} {'port 2':>7s} {'ms':>7s}")
        for row in out["shared"]:
            for name, r in row["presets"].items():
                if "error" in r:
                    print(f"{row['file']:42s} {name:11s} {r['error'][:60]}")
                    continue
                flag = "  (data extended)" if any("extended" in n for n in r["notes"]) else ""
                flag += "  (PTDR cut at 1/df)" if any("cut" in n for n in r["notes"]) else ""
                print(f"{row['file']:42s} {name:11s} {r['port1_db']:7.2f} {r['port2_db']:7.2f} "
                      f"{r['seconds'] * 1e3:7.1f}{flag}")
        times = [r["seconds"] for row in out["shared"] for r in row["presets"].values() if "seconds" in r]
        print(f"time per ERL call (both ports): median {np.median(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms")
    out["huge_grid"] = huge(a.repeat)
    h = out["huge_grid"]
    print(f"\nhuge grid: {h['points']:,} points, {h['seconds'] * 1e3:.0f} ms for both ports "
          f"(port 1 {h['port1_db']:.3f} dB, closed form without the filters {h['closed_form_db']:.3f} dB)")
    if a.json:
        a.json.write_text(json.dumps(out, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
