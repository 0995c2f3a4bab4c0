"""Issue 20 in figures (so far): 802.3dj's inner code and the optical classes.

1. **The code against galois**: extended Hamming (128,120) encoding, bit for bit against
   ``galois.BCH(127, 120)`` over x^7 + x^3 + 1 (extended), and the time of each; our
   SECDED and Chase-2 decoders' words per second.
2. **Thresholds**: the raw BER the pair (inner under KP4) takes for a codeword error ratio
   of 1e-13, SECDED and Chase-2, with 1, 4 and 16 outer codewords interleaved, against
   KP4 alone and against the figure task-force material is said to quote (about 4.8e-3,
   not found in a primary source).
3. **Monte Carlo through the chain against the analysis**: inner-decoded bits into the real
   RS decoder, against :func:`fec.hamming.outer_cer` and against independent errors.
4. **The class table** at 106.25 and 212.5 Gb/s per lane (:func:`phy.link.classes.class_table`),
   with each transmitter's TDECQ through the span (:mod:`channels.tdecq`).
5. **The laser and its reflections**: RIN against feedback across the regimes, and the worst
   connector reflectance the 200G DR4-class budget takes against the number of connectors,
   under KP4 alone and under the inner code (:mod:`channels.feedback`).

    python benchmarks/bench_inner_fec.py        # about two minutes on one core
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import fec  # noqa: E402
from fec.hamming import SFEC, concatenated_threshold, failure_profile, outer_cer, pam4_llr  # noqa: E402


def versus_galois(n: int = 20_000) -> None:
    import galois

    rng = np.random.default_rng(1)
    m = rng.integers(0, 2, (n, 120), dtype=np.uint8)
    bch = galois.BCH(127, 120, extension_field=galois.GF(2**7, irreducible_poly=0x89))
    t0 = time.perf_counter()
    ref = np.array(bch.encode(galois.GF2(m)))
    t1 = time.perf_counter()
    ours = SFEC.encode(m)
    t2 = time.perf_counter()
    same = np.array_equal(ours[:, :127], ref) and not np.any(ours.sum(1) % 2)
    noisy = ours ^ (rng.random(ours.shape) < 0.003).astype(np.uint8)
    SFEC.decode_hard(noisy[:10])
    t3 = time.perf_counter()
    SFEC.decode_hard(noisy)
    t4 = time.perf_counter()
    llr = pam4_llr(ours, 0.38, rng)
    SFEC.decode_chase(llr[:10])
    t5 = time.perf_counter()
    SFEC.decode_chase(llr)
    t6 = time.perf_counter()
    t7 = time.perf_counter()
    bch.decode(galois.GF2(noisy[:, :127]))
    t8 = time.perf_counter()
    print(f"1. {n} words: bit for bit with galois {same}; encode galois {n / (t1 - t0):,.0f} words/s, ours "
          f"{n / (t2 - t1):,.0f} ({(t1 - t0) / (t2 - t1):.1f}x); SECDED ours {n / (t4 - t3):,.0f} words/s, galois's "
          f"BCH decoder {n / (t8 - t7):,.0f} ({(t8 - t7) / (t4 - t3):.0f}x); Chase-2 {n / (t6 - t5):,.0f} words/s")


def thresholds() -> None:
    need = fec.required_ber(fec.KP4, 1e-13)
    print(f"\n2. raw BER for CER 1e-13 (KP4 alone, independent errors: {need:.3g}; said of 802.3dj: about 4.8e-3)")
    for dec in ("hard", "chase"):
        for ways in (1, 4, 16):
            r = concatenated_threshold(decoder=dec, interleave=ways, words=150_000)
            print(f"  {dec:5s} interleave {ways:2d}: {r['threshold_ber']:.3g} ({r['gain']:.1f}x KP4's)")
    print(f"  SECDED were its output's errors independent: {r['independent_threshold_ber']:.3g}")


def chain(n_cw: int = 1500) -> None:
    print("\n3. Monte Carlo through encoder, PAM4, Chase-2 and the RS decoder against the analysis")
    rng = np.random.default_rng(5)
    for sigma in (0.41, 0.42, 0.43):
        for ways in (1, 4):
            words = -(-n_cw * 5440 // 120)
            c = SFEC.encode(rng.integers(0, 2, (words, 120), dtype=np.uint8))
            out = SFEC.decode_chase(pam4_llr(c, sigma, rng)).words
            err = (out[:, :120] != c[:, :120]).reshape(-1)[: n_cw * 5440]
            pats = fec.interleave.bit_errors_to_patterns(np.flatnonzero(err), n_cw, fec.KP4, ways)
            mc = fec.montecarlo.Estimate.of(int(fec.KP4.decode_errors(pats).uncorrectable.sum()), n_cw)
            q, _raw = failure_profile(SFEC, sigma, 150_000, "chase", seed=3)
            print(f"  sigma {sigma} interleave {ways}: inner output BER {err.mean():.3g}; CER Monte Carlo {mc.value:.3g} "
                  f"[{mc.low:.3g}, {mc.high:.3g}], compound analysis {outer_cer(q, interleave=ways):.3g}, independent "
                  f"errors {fec.random_errors(fec.KP4, err.mean()).cer:.3g}")


def table() -> None:
    from phy.link.classes import class_table

    print("\n4. optical classes over 100 m, 4 lanes (KP4; at 212.5 Gb/s with the inner code, Chase-2)")
    for r in class_table():
        print(f"  {r['lane_rate_bps'] / 1e9:g}G {r['kind']:4s} {'PASS' if r['passes'] else 'FAIL'} margin "
              f"{r['margin_db']:.2f} dB, pre-FEC {r['pre_fec_ber']:.3g} (takes {r['required_pre_fec_ber']:.3g}), "
              f"{r['latency_ns']:.0f} ns, {r['energy_pj_per_bit']:.1f} pJ/bit, TDECQ {r['tdecq_db']:.2f} dB "
              f"(limit 3.4 dB for 400GBASE-DR4) ({r['module_power_w']:g} W module; "
              f"published: {r['published']})" + (f"; {r['short_by']}: {r['decides']}" if r["short_by"] else ""))


def reflections() -> None:
    from channels import feedback as fb
    from phy.link.optics import OpticalClass

    print("\n5. the laser and its reflections (DR4-class transmitter, RIN21.4OMA -139 dB/Hz at 106.25 GBd)")
    base = OpticalClass.dsp_pluggable(length_m=100.0).path
    for refl in (-55.0, -35.0, -26.0, -20.0, -14.0):
        p = fb.with_reflectance(base, refl)
        print(f"  2 connectors at {refl:g} dB: return loss {fb.return_loss_db(p):.1f} dB, feedback {fb.feedback_db(p):.1f} dB "
              f"({fb.feedback_regime(p)}), RIN {fb.laser_rin_db_per_hz(p):.2f} dB/Hz, noise-only BER {p.budget().ber:.3g}")
    kp4 = fec.required_ber(fec.KP4, 1e-13)
    cat = concatenated_threshold(decoder="chase", interleave=4, words=100_000)["threshold_ber"]
    from dataclasses import replace

    for n in (2, 4, 6, 8, 12):
        p = OpticalClass.dsp_pluggable(length_m=100.0, connectors=n).path
        iso = replace(p, tx=replace(p.tx, isolation_db=45.0))
        print(f"  {n:2d} connectors: worst reflectance KP4 alone {fb.reflectance_tolerance_db(p, kp4):.2f} dB, with the "
              f"inner code {fb.reflectance_tolerance_db(p, cat):.2f} dB; with a 45 dB isolator "
              f"{fb.reflectance_tolerance_db(iso, kp4):.2f} / {fb.reflectance_tolerance_db(iso, cat):.2f} dB")


if __name__ == "__main__":
    t = time.perf_counter()
    versus_galois()
    thresholds()
    chain()
    table()
    reflections()
    print(f"\n{time.perf_counter() - t:.0f} s")
