"""Peer harness for ``bench_com_terms.py``: PyChOpMarg's COM at one equaliser setting, with its
chain written out stage by stage, for a term-by-term comparison.

Run it with the Python of a venv that holds PyChOpMarg (see ``peer_pychopmarg.py``, whose
presets and quirk fixes it reuses):

    /tmp/pcm-venv/bin/python benchmarks/peer_com_terms.py --preset ck-kr --thru X.s4p \\
        --force -6,-3,0,0.06,-0.22,-0.1 --out /tmp/x.npz

``--force gDC,gDC2,c(-3),c(-2),c(-1),c(1)`` makes the search grid one point (the CTLE and
Tx FFE given; the Rx FFE and DFE are still optimised as PyChOpMarg does); without it the
preset's grid (with ``--set`` overrides) is searched. One package case: the preset's first
(``ck-kr``: test 1, 12 mm; ``dj-d3p3-kr``: the ``--dj-case`` device). ``--ir-trunc`` sets
PyChOpMarg's impulse-response truncation (``COM.ir_trunc_thresh``, 1e-3 of the peak as
MATLAB COM; 0 keeps the whole record). ``--cursor-eps`` sets the Mueller-Muller tolerance
of ``loc_curs`` (PyChOpMarg's 1e-3 V; 0 takes the least residual, as MATLAB COM 3.70+).

The ``.npz`` holds: ``f`` (Hz), ``H21`` (package + channel between the terminations, with
Ht and Hr divided out, as PyChOpMarg keeps it), ``Ht``, ``Hr``, ``Hctf``, ``Htx``;
``t`` (s); the victim's pulses, volts: ``p_uneq`` (Ht H21 Hr, times A_v), ``p_eq`` (with
the CTLE and Tx FFE, before the Rx FFE), ``p_final`` (with the Rx FFE); ``cursor_ix``,
``rx_taps``, ``dfe_taps``, ``hISI`` (the ISI samples after the DFE); and the scalars in
``meta`` (a JSON string): COM, A_s, A_ni and every sigma (V).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_pychopmarg import PRESETS, _apply_overrides, _NoRxFfeCOM  # noqa: E402  (exits without pychopmarg)

import pychopmarg.com as pcm_com  # noqa: E402
import pychopmarg.utility.probability as pcm_prob  # noqa: E402
from pychopmarg.common import NormMode  # noqa: E402


def _loc_curs_eps(eps: float):
    """``loc_curs`` with another "exact" Mueller-Muller tolerance (PyChOpMarg's is 1e-3 V)."""
    orig = pcm_prob.loc_curs

    def loc(pulse_resp, nspui, dfe_max, dfe_min, max_range=1, eps_=None):
        return orig(pulse_resp, nspui, dfe_max, dfe_min, max_range=max_range, eps=eps)
    return loc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--preset", choices=("ck-kr", "dj-d3p3-kr"), default="ck-kr")
    ap.add_argument("--dj-case", default="A1")
    ap.add_argument("--thru", required=True, type=Path)
    ap.add_argument("--fext", action="append", default=[], type=Path)
    ap.add_argument("--next", action="append", default=[], type=Path)
    ap.add_argument("--force", help="gDC,gDC2,c(-3),c(-2),c(-1),c(1)")
    ap.add_argument("--ir-trunc", type=float, default=1e-3)
    ap.add_argument("--cursor-eps", type=float, default=1e-3)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args(argv)

    make, opt_mode = PRESETS[a.preset]
    cp = _apply_overrides(make(), a.set)
    devices = None
    if a.preset == "dj-d3p3-kr":
        from pychopmarg.config.ieee_8023dj_d3p3 import kr_c2c_device
        k, t = a.dj_case[0], int(a.dj_case[1])
        devices = {"tx_device": kr_c2c_device(k, t, False), "rx_device": kr_c2c_device(k, t, True)}
    elif cp.zp_cases:
        cp = dataclasses.replace(cp, zp_cases=None)  # one package case: the first (test 1)
    if a.force:
        g1, g2, *taps = (float(x) for x in a.force.split(","))
    if a.cursor_eps != 1e-3:
        pcm_com.loc_curs = _loc_curs_eps(a.cursor_eps)
    _NoRxFfeCOM.ir_trunc_thresh = a.ir_trunc if a.ir_trunc > 0 else 0.0
    files = {"THRU": [str(a.thru)], "FEXT": [str(p) for p in a.fext], "NEXT": [str(p) for p in a.next]}
    c = _NoRxFfeCOM(cp, files, **(devices or {}))
    c.n_procs = 1
    c.opt_mode, c.norm_mode = opt_mode, NormMode.P8023dj
    if a.force:  # the one setting, as opt_eq() would finish it (opt_eq() would also try "no Tx EQ")
        c._tx_combs = [c._tx_combs[0], np.array(taps + [0.0, 0.0])]
        c.gDC, c.gDC2, c.tx_ix = g1, g2, 1
        c.calc_fom(1, c.calc_Hctf(g1, g2))
        fr = c.fom_rslts
        rx = np.asarray(fr["rx_taps"], dtype=float)
        c.rx_taps = rx / rx[c.nRxPreTaps] if c.nRxTaps else rx
        c.dfe_taps = fr["dfe_tap_weights"]
        a_s, a_ni, _ = c.calc_noise(cursor_ix=fr["cursor_ix"])
        com = float(20 * np.log10(a_s / a_ni))
    else:
        com = float(c(opt_mode=opt_mode, norm_mode=NormMode.P8023dj))
    cr = c.com_rslts
    h21 = c.chnls[0][1]
    hctf = c.calc_Hctf(c.gDC, c.gDC2)
    pre = c.gen_pulse_resps(tx_ix=c.tx_ix, Hctf=hctf, rx_taps=c.null_rx_ffe, dfe_taps=c.empty_array)[0]
    tx = list(c._tx_combs[c.tx_ix])
    meta = {"com_db": com, "A_s_V": float(cr["As"]), "A_ni_V": float(cr["Ani"]),
            "sigmas_V": {k: float(cr[k]) for k in ("sigma_ISI", "sigma_J", "sigma_XT", "sigma_Tx", "sigma_N",
                                                    "sigma_G", "sigma_Q")},
            "gDC": float(c.gDC), "gDC2": float(c.gDC2), "tx": [float(x) for x in tx],
            "A_v": float(cp.A_v), "M": int(cp.M), "fb_GBd": float(cp.fb), "ir_trunc": a.ir_trunc,
            "cursor_eps": a.cursor_eps}
    np.savez(a.out, f=c.freqs, H21=h21, Ht=c.Ht, Hr=c.Hr, Hctf=hctf, Htx=c.Htx(c.tx_ix), t=c.times,
             p_uneq=c.pulse_resps_noeq[0], p_eq=pre, p_final=cr["pulse_resps"][0], cursor_ix=int(cr["cursor_ix"]),
             rx_taps=np.asarray(c.rx_taps if c.nRxTaps else [1.0], dtype=float),
             dfe_taps=np.asarray(cr["dfe_taps"], dtype=float), hISI=np.asarray(cr["hISI"], dtype=float),
             meta=json.dumps(meta))
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
