"""PHY realism (issue 17): a real receiver's penalties, the margin in the verdict, host
channels and crosstalk in the copper class, and what they do to reach and to the FEC the
search picks.

1. The implementation penalties against closed forms and between the two engines: the ADC's
   quantisation noise against Delta^2 / 12, and the statistical eye's SER against the
   time-domain simulator's with each penalty on (ratio sim / eye, and the simulator's 95 %
   interval).
2. Reach at 106.25 and 212.5 Gb/s per lane (26 AWG, KP4, one lane): the longest cable that
   passes, before (the bare cable assembly, an ideal receiver, no margin asked) and after
   (host boards and crosstalk; the reference receiver with COM's 3 dB, or the 224G ADC/DSP
   receiver's modelled penalties), beside public reach statements and 802.3 objectives.
3. What ``search_link`` picks against cable length, before and after.
4. The synthesised cable's insertion loss, ILD, return loss and ICN beside each other.

Run: ``python benchmarks/bench_phy_realism.py [--quick] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

import phy
from channels import assembly, media
from phy.serdes.impairments import Impairments, quantise

try:
    from bench_link import _pin  # one core, pinned, as the other benchmarks
except ImportError:  # pragma: no cover
    def _pin():
        pass

BAUD = 106.25e9
#: Public statements the reach table stands beside (REFERENCES.md, "PHY realism").
PUBLIC = {
    106.25e9: "802.3ck 100GBASE-CR1: at least 2 m (objective); 802.3bj/cd: 5 m at 25G, 3 m at 50G per lane",
    212.5e9: "802.3dj 200GBASE-CR1: at least 1 m (objective), CR die-to-die IL <= 40 dB at 53.125 GHz; "
             "vendor statements: passive copper near 1 to 2 m at 200G per lane with host traces",
}


def closed_forms() -> dict:
    rng = np.random.default_rng(1)
    fs, enob = 0.4, 5.0
    step = 2 * fs / 2**enob
    x = rng.uniform(-fs, fs, 1_000_000)
    e = quantise(x, step, fs) - x
    return {"adc_noise_over_delta2_12": float(np.var(e) / (step**2 / 12))}


def _twinax_link(imp):
    ch = media.cascade(media.connector(), media.twinax(4.0, 26), media.connector())
    tx = phy.Transmitter(ffe=phy.TxFfe.ieee(pre=(-0.1,)))
    rx = phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=phy.Ctle.ieee_802_3ck(BAUD, -14), ffe=phy.RxFfe(3, 8),
                      dfe=phy.Dfe(1), impairments=imp)
    return ch, tx, rx, phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18)


def engines(n_ui: int) -> list[dict]:
    cases = [("ADC ENOB 4.0", Impairments(adc_enob=4.0)),
             ("ADC ENOB 5.0 (224G preset: 6-bit FFE taps, clipping 1e-6)", Impairments.adc_dsp_224g()),
             ("sampling RJ 700 fs", Impairments(rj_rms_s=700e-15)),
             ("CDR wander 700 fs, 4 MHz", Impairments(wander_rms_s=700e-15)),
             ("ENOB 4.5, 5-bit FFE, RJ 400 fs, wander 400 fs",
              Impairments(adc_enob=4.5, ffe_tap_bits=5, rj_rms_s=400e-15, wander_rms_s=400e-15))]
    rows = []
    for name, imp in cases:
        ch, tx, rx, noise = _twinax_link(imp)
        t = time.perf_counter()
        e = phy.statistical_eye(ch, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, columns="sampling")
        te = time.perf_counter() - t
        t = time.perf_counter()
        r = phy.simulate(ch, n_ui, baud_hz=BAUD, tx=tx, rx=rx, noise=noise, seed=5)
        ts = time.perf_counter() - t
        rows.append({"case": name, "eye_ser": e.ser(), "sim_ser": r.ser.value, "sim_low": r.ser.low,
                     "sim_high": r.ser.high, "errors": r.symbol_errors,
                     "ratio": r.ser.value / e.ser() if e.ser() > 0 else math.inf, "eye_s": te, "sim_s": ts,
                     "sigma_mv": {k: v * 1e3 for k, v in e.sigma_v.items()}})
    return rows


# ----------------------------------------------------------------------------- reach
CONFIGS = {
    "before: bare cable, ideal Rx, no margin asked": dict(host=None, crosstalk=False, imp=None, margin=0.0),
    "host PCB + crosstalk, reference Rx, COM's 3 dB": dict(host="pcb", crosstalk=True, imp=None, margin=None),
    "host PCB + crosstalk, 224G ADC/DSP Rx, 3 dB less its penalty": dict(host="pcb", crosstalk=True, imp="224g", margin=None),
    "flyover + crosstalk, reference Rx, COM's 3 dB": dict(host="flyover", crosstalk=True, imp=None, margin=None),
}


def _spec(L: float, rate: float, cfg: dict, **kw) -> phy.LinkSpec:
    ch = assembly.cable_channel(L, 26, host=cfg["host"], crosstalk=cfg["crosstalk"])
    imp = Impairments.adc_dsp_224g() if cfg["imp"] == "224g" else None
    return phy.LinkSpec(channel=ch, lane_rate_bps=rate, serdes=phy.Serdes(rx_impairments=imp),
                        required_margin_db=cfg["margin"], **kw)


def reach(rate: float, cfg: dict, lo: float = 0.25, hi: float = 8.0, step: float = 0.25) -> dict:
    """The longest cable (to ``step``) that passes with KP4, by bisection on a monotone verdict."""
    cache = {}

    def ok(L):
        if L not in cache:
            cache[L] = phy.evaluate_link(_spec(L, rate, cfg))
        return cache[L].passes

    if not ok(lo):
        return {"reach_m": 0.0, "evaluations": len(cache)}
    n_lo, n_hi = 1, int(round(hi / step))
    if ok(n_hi * step):
        return {"reach_m": hi, "evaluations": len(cache)}
    while n_hi - n_lo > 1:
        mid = (n_lo + n_hi) // 2
        if ok(mid * step):
            n_lo = mid
        else:
            n_hi = mid
    r = cache[n_lo * step]
    return {"reach_m": n_lo * step, "margin_db": r.margin_db, "pre_fec_ber": r.pre_fec_ber,
            "il_db_nyquist": float(assembly.cable_channel(n_lo * step, 26, host=cfg["host"]).insertion_loss_db(rate / 4)),
            "evaluations": len(cache)}


def search_vs_length(lengths, rate: float, cfg: dict) -> list[dict]:
    rows = []
    for L in lengths:
        s = phy.search_link(_spec(L, rate, cfg), interleaves=(1,), precoding=(False,))
        b = s.best_report
        rows.append({"cable_m": L, "fec": None if b is None else (b.fec or "none"),
                     "retry": None if b is None else b.retry, "margin_db": None if b is None else b.margin_db,
                     "needs_db": None if b is None else b.required_margin_db,
                     "pre_fec_ber": None if b is None else b.pre_fec_ber,
                     "latency_ns": None if b is None else b.latency_s * 1e9})
    return rows


def channel_figures(lengths) -> list[dict]:
    from channels import icn as icn_mod

    rows = []
    for L in lengths:
        ch = assembly.cable_channel(L, 26, host="pcb", crosstalk=True)
        ild = ch.ild(BAUD)
        icn = icn_mod.icn(ch, BAUD, **icn_mod.ICN_802_3DJ)
        rows.append({"cable_m": L, "il_db_53g": float(ch.insertion_loss_db(53.125e9)),
                     "rl_db_53g": float(ch.return_loss_db(53.125e9)), "fom_ild_db": ild.fom_ild_db,
                     "icn_mv": icn.total_v * 1e3, "icn_next_mv": icn.nx_v * 1e3, "icn_fext_mv": icn.fx_v * 1e3,
                     "aggressors": len(ch.aggressors)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-pin", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if not a.no_pin:
        _pin()
    out = {}
    print("1. Implementation penalties: closed forms and the two engines (4 m 26 AWG, 212.5 Gb/s)")
    out["closed_forms"] = closed_forms()
    print(f"   ADC quantisation noise / (Delta^2/12): {out['closed_forms']['adc_noise_over_delta2_12']:.4f}")
    out["engines"] = engines(1_000_000 if a.quick else 4_000_000)
    print(f"   {'case':<52} {'eye SER':>9} {'sim SER':>9} {'95 % interval':>21} {'sim/eye':>7}")
    for r in out["engines"]:
        print(f"   {r['case']:<52} {r['eye_ser']:>9.3g} {r['sim_ser']:>9.3g} {r['sim_low']:>10.3g}..{r['sim_high']:<10.3g}"
              f" {r['ratio']:>7.2f}")

    print("\n2. Reach (26 AWG, KP4, one lane): the longest cable that passes")
    out["reach"] = []
    for rate in (106.25e9, 212.5e9):
        for name, cfg in CONFIGS.items():
            t = time.perf_counter()
            r = reach(rate, cfg, hi=8.0 if rate < 200e9 else 5.0)
            r.update(rate_gbps=rate / 1e9, config=name, seconds=time.perf_counter() - t)
            out["reach"].append(r)
            print(f"   {rate / 1e9:>6.2f} Gb/s  {name:<50} {r['reach_m']:>5.2f} m"
                  + (f"  (margin {r['margin_db']:.2f} dB there, IL {r['il_db_nyquist']:.1f} dB at Nyquist)"
                     if "margin_db" in r else ""))
        print(f"   {'':>6}       public: {PUBLIC[rate]}")

    print("\n3. search_link's choice against cable length (212.5 Gb/s, one lane)")
    lengths = (1.0, 2.0) if a.quick else (0.5, 1.0, 1.5, 2.0, 3.0)
    out["search"] = {}
    for name in (list(CONFIGS)[0], list(CONFIGS)[1], list(CONFIGS)[2]):
        out["search"][name] = search_vs_length(lengths, 212.5e9, CONFIGS[name])
        print(f"   {name}")
        for r in out["search"][name]:
            if r["fec"] is None:
                print(f"      {r['cable_m']:>4g} m: nothing passes")
                continue
            print(f"      {r['cable_m']:>4g} m: FEC {r['fec']:<18} retry {'yes' if r['retry'] else 'no ':<3} "
                  f"margin {r['margin_db']:5.2f} dB (needs {r['needs_db']:.2f}), pre-FEC BER {r['pre_fec_ber']:.2g}, "
                  f"{r['latency_ns']:.1f} ns")

    print("\n4. The synthesised cable with hosts: IL, RL, ILD and ICN (802.3dj preset) side by side")
    out["channel"] = channel_figures((1.0, 2.0) if a.quick else (0.5, 1.0, 2.0, 3.0))
    for r in out["channel"]:
        print(f"   {r['cable_m']:>4g} m: IL {r['il_db_53g']:.2f} dB, RL {r['rl_db_53g']:.2f} dB at 53.125 GHz, "
              f"FOM_ILD {r['fom_ild_db']:.3f} dB, ICN {r['icn_mv']:.3f} mV (NEXT {r['icn_next_mv']:.3f}, "
              f"FEXT {r['icn_fext_mv']:.3f}), {r['aggressors']} aggressors")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
