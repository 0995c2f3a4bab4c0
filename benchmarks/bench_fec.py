#!/usr/bin/env python3
"""Speed of our Reed-Solomon codec (``fec``) on one core, with the ``galois`` package as the peer.

Run from the repository root (or anywhere):

    python benchmarks/bench_fec.py
    python benchmarks/bench_fec.py --code KR4 --batch 4000 --repeat 5 --json bench_fec.json

Both codecs run in the same process on one core: the thread counts of numba, OpenMP,
OpenBLAS and MKL are forced to 1 before numpy, numba or galois is imported, and the process
is pinned to one CPU where the OS allows it. The galois code is the one of our design
(../shared/DESIGN.md): ``GF = galois.GF(2**10, irreducible_poly=0x409)``,
``galois.ReedSolomon(1023, 1023 - 2t, field=GF, alpha=GF(2), c=0)``, used as the shortened
code (514-symbol messages -> 544-symbol words for KP4, 528 for KR4).

What it measures, on one seeded batch of ``--batch`` random messages (best of ``--repeat``
timed runs after ``--warmup`` untimed ones, so numba compilation is excluded for both;
garbage collector off while timing):

1. bit-exactness first: ``fec.KP4.encode(m)`` must equal ``np.asarray(rs.encode(GF(m)))``,
   or the script stops with an error;
2. encode: ``code.encode(m)`` vs ``rs.encode(GF(m))``;
3. decode error-free words, and words with exactly ``w`` symbol errors per codeword
   (distinct random positions over the whole word, non-zero random values; the same
   corrupted batch for both), for ``w`` = t and t // 2 (15 and 7 for KP4):
   ``code.decode(words)`` vs ``rs.decode(GF(words))``. Every decode is checked: ours must
   report no failure and ``w`` corrected symbols per word, both must return the sent messages;
4. our error-pattern mode ``code.decode_errors(patterns)`` for 0 and t errors (galois has no
   such mode): it must report the pattern weights and no failure or miscorrection.

The galois times include its ``GF(...)`` array construction (an input range check) as ours
include our input checks. Per case: microseconds per codeword, information throughput
(k x m = 5140 bits per codeword / time per codeword) and the ratio ours / galois.
``--galois-batch N`` decodes only the first N words of the same corrupted batches with
galois in the cases with errors (its slow ones); figures stay per codeword.
"""

from __future__ import annotations

import os

# One core for both codecs: set before numpy, numba or galois is imported.
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmark the working tree, wherever the script is run from
    sys.path.insert(0, str(REPO))

import galois  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402

import fec  # noqa: E402

TARGET_RATIO = 100.0  # decode >= 100x galois throughput (error-free and with t errors)
TARGET_GBPS = 1.0  # error-free decode "near 1 Gb/s" of information per core
NEAR = 0.8  # what "near" accepts: at least 80 % of TARGET_GBPS
THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# ----------------------------------------------------------------------------- timing
def bench(fn, repeat: int = 3, warmup: int = 1) -> dict:
    """Time ``fn()``: best of ``repeat`` runs after ``warmup`` untimed ones; seconds, plus the last result."""
    times = []
    result = None
    for i in range(warmup + repeat):
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            dt = time.perf_counter() - t0
        finally:
            if gc_was_enabled:
                gc.enable()
        if i >= warmup:
            times.append(dt)
    return {"best_s": min(times), "median_s": statistics.median(times), "runs_s": times, "result": result}


def figures(t: dict, words: int, info_bits: int) -> dict:
    """Per-codeword time and information throughput from a timing record over ``words`` codewords."""
    us = t["best_s"] / words * 1e6
    return {
        "words": words,
        "best_s": t["best_s"],
        "median_s": t["median_s"],
        "runs_s": t["runs_s"],
        "us_per_codeword": us,
        "info_mbps": info_bits / us,  # bits per microsecond = Mb/s
    }


# ---------------------------------------------------------------------------- inputs
def corrupt(words: np.ndarray, w: int, q: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``w`` symbol errors per word: distinct random positions, non-zero random values.

    Returns the received words and the error patterns (received XOR sent).
    """
    nb, n = words.shape
    patterns = np.zeros_like(words)
    if w:
        pos = np.argsort(rng.random((nb, n)), axis=1)[:, :w]
        vals = rng.integers(1, q, size=(nb, w)).astype(words.dtype)
        np.put_along_axis(patterns, pos, vals, axis=1)
    return words ^ patterns, patterns


def pin_one_cpu() -> str:
    """Pin this process to one CPU where the OS supports it; describe what was done."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except OSError as exc:  # pragma: no cover - depends on the OS / container
        return f"not pinned ({exc})"
    return f"pinned to CPU {cpu}"


def fail(msg: str) -> int:
    print(f"bench_fec: ERROR: {msg}", file=sys.stderr)
    return 1


# ------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", choices=("KP4", "KR4"), default="KP4", help="code to benchmark (default KP4)")
    ap.add_argument("--batch", type=int, default=2000, help="codewords per batch (default 2000)")
    ap.add_argument("--galois-batch", type=int, default=None, metavar="N",
                    help="galois decodes only the first N words in the cases with errors (default: the whole batch)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case; the best is reported (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs before timing, JIT included (default 1)")
    ap.add_argument("--seed", type=int, default=2024, help="random seed (default 2024)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = ap.parse_args(argv)
    if args.batch < 1 or args.repeat < 1 or args.warmup < 1:
        ap.error("--batch >= 1, --repeat >= 1 and --warmup >= 1 are required (the warm-up excludes JIT compilation)")
    gb = args.batch if args.galois_batch is None else args.galois_batch
    if not 1 <= gb <= args.batch:
        ap.error("--galois-batch must be from 1 to --batch")

    pinned = "not pinned (--no-pin)" if args.no_pin else pin_one_cpu()
    code = fec.NAMED[args.code]
    n, k, t, m = code.n, code.k, code.t, code.m
    q = 1 << m
    info_bits = code.message_bits
    B, R, W = args.batch, args.repeat, args.warmup
    timing = dict(repeat=R, warmup=W)
    weights = sorted({t // 2, t} - {0})  # KP4: 7, 15; KR4: 3, 7

    GF = galois.GF(2**m, irreducible_poly=code.primitive_poly)
    rs = galois.ReedSolomon(q - 1, q - 1 - code.parity, field=GF, alpha=GF(2), c=code.first_root)

    rng = np.random.default_rng(args.seed)
    msgs = rng.integers(0, q, size=(B, k)).astype(np.uint16)

    # ------------------------------------------------------------ bit-exactness
    ours_words = code.encode(msgs)
    galois_words = np.asarray(rs.encode(GF(msgs)))
    if galois_words.shape != ours_words.shape:
        return fail(f"galois encodes {msgs.shape} to {galois_words.shape}, ours to {ours_words.shape}")
    mismatch = int((ours_words != galois_words.astype(ours_words.dtype)).any(axis=1).sum())
    if mismatch:
        return fail(f"{mismatch} of {B} codewords differ between {code.name}.encode and galois: not bit-exact")
    words = ours_words

    # ---------------------------------------------------------------- the cases
    cases: list[dict] = []

    def add(key: str, label: str, ours_t: dict, ours_words_n: int, gal_t: dict | None, gal_words_n: int | None,
            checks: dict) -> None:
        o = figures(ours_t, ours_words_n, info_bits)
        g = figures(gal_t, gal_words_n, info_bits) if gal_t is not None else None
        cases.append({
            "case": key, "label": label, "ours": o, "galois": g,
            "ratio": (o["info_mbps"] / g["info_mbps"]) if g is not None else None,
            "checks": checks,
        })

    # encode
    o = bench(lambda: code.encode(msgs), **timing)
    g = bench(lambda: rs.encode(GF(msgs)), **timing)
    if not np.array_equal(o["result"], words) or not np.array_equal(np.asarray(g["result"]), words):
        return fail("encode gave different codewords in the timed runs")
    add("encode", "encode", o, B, g, B, {"bit_exact": True})

    # decode: error-free, then w errors per word (fewest first)
    kept_patterns: dict[int, np.ndarray] = {}
    for w in [0] + weights:
        if w:
            received, patterns = corrupt(words, w, q, rng)
            ng = gb
        else:
            received, patterns = words, np.zeros_like(words)
            ng = B
        sub = np.ascontiguousarray(received[:ng])
        o = bench(lambda r=received: code.decode(r), **timing)
        g = bench(lambda s=sub: rs.decode(GF(s)), **timing)
        res = o["result"]
        gal_msgs = np.asarray(g["result"])
        n_failed = int(res.failed.sum())
        if n_failed:
            return fail(f"decode, {w} errors: ours reports {n_failed} failed words of {B}")
        if not np.array_equal(res.messages, msgs):
            return fail(f"decode, {w} errors: our messages differ from the sent ones")
        if not np.all(res.n_corrected == w):
            return fail(f"decode, {w} errors: our corrected-symbol counts are not all {w}")
        if not np.array_equal(gal_msgs, res.messages[:ng]):
            return fail(f"decode, {w} errors: galois's messages differ from ours")
        label = "decode, error-free" if w == 0 else f"decode, {w} errors/word"
        add(f"decode_{w}", label, o, B, g, ng,
            {"ours_failed": 0, "ours_corrected_per_word": w, "messages_equal_sent": True,
             "galois_equal_ours": True})

        if w in (0, t):
            kept_patterns[w] = patterns

    # our error-pattern mode, on the same error patterns as the decode cases
    for w, patterns in kept_patterns.items():
        o = bench(lambda e=patterns: code.decode_errors(e), **timing)
        pr = o["result"]
        if not np.all(pr.weight == w):
            return fail(f"decode_errors, {w} errors: reported weights are not all {w}")
        if pr.failed.any() or pr.miscorrected.any() or pr.residual_symbols.any():
            return fail(f"decode_errors, {w} errors: {int(pr.failed.sum())} failed, "
                        f"{int(pr.miscorrected.sum())} miscorrected words")
        add(f"decode_errors_{w}", f"decode_errors (patterns), {w} errors", o, B, None, None,
            {"weight": w, "failed": 0, "miscorrected": 0, "residual_symbols": 0})

    # ------------------------------------------------------------------ targets
    by = {c["case"]: c for c in cases}
    r0, rt = by["decode_0"]["ratio"], by[f"decode_{t}"]["ratio"]
    gbps0 = by["decode_0"]["ours"]["info_mbps"] / 1e3
    ratio_ok = r0 >= TARGET_RATIO and rt >= TARGET_RATIO
    speed_ok = gbps0 >= NEAR * TARGET_GBPS
    targets = {
        "ratio_target": TARGET_RATIO,
        "ratio_error_free": r0,
        f"ratio_{t}_errors": rt,
        "ratio_met": ratio_ok,
        "gbps_target": TARGET_GBPS,
        "gbps_near_fraction": NEAR,
        "error_free_gbps": gbps0,
        "gbps_met": speed_ok,
        "all_met": ratio_ok and speed_ok,
    }

    # ----------------------------------------------------------------------- report
    threads = ", ".join(f"{v}={os.environ.get(v)}" for v in THREAD_VARS)
    print(f"fec benchmark: {code.name} (n={n}, k={k}, t={t}, m={m}) vs galois, one core")
    print(f"  galois    GF(2**{m}, irreducible_poly={code.primitive_poly:#x}), "
          f"ReedSolomon({rs.n}, {rs.k}, alpha=GF(2), c={code.first_root}) shortened to ({n}, {k})")
    print(f"  batch     {B} random messages, seed {args.seed}; information per codeword {k} x {m} = {info_bits} bits")
    if gb < B:
        print(f"            galois decodes only the first {gb} words of the same batches in the cases with errors "
              f"(--galois-batch); its figures are per codeword over those words")
    print(f"  threads   {threads}; numba.config.NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}; {pinned}")
    print(f"  timing    best of {R} after {W} warm-up (JIT compilation excluded for both); Python "
          f"{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"galois {galois.__version__}, {os.cpu_count()} CPUs")
    print(f"  bit-exact {code.name}.encode == np.asarray(rs.encode(GF(m))) on all {B} codewords: YES")
    print()
    hdr = (f"  {'case':<36}{'ours us/cw':>11}{'ours Mb/s':>11}{'galois us/cw':>14}{'galois Mb/s':>13}"
           f"{'ours/galois':>13}{'words':>12}")
    print(hdr)
    print("  " + "-" * (len(hdr) - 2))
    for c in cases:
        o, g = c["ours"], c["galois"]
        if g is None:
            gal = f"{'n/a':>14}{'n/a':>13}{'n/a':>13}"
            nw = f"{o['words']}/-"
        else:
            gal = f"{g['us_per_codeword']:14.2f}{g['info_mbps']:13.2f}{c['ratio']:12.1f}x"
            nw = f"{o['words']}/{g['words']}"
        print(f"  {c['label']:<36}{o['us_per_codeword']:11.3f}{o['info_mbps']:11.1f}{gal}{nw:>12}")
    print()
    print("  us/cw = microseconds per codeword (best run / words); Mb/s = information bits "
          f"({info_bits} per codeword) per microsecond;")
    print("  words = codewords per timed run, ours/galois. Checks passed: ours reports no failures and the "
          "expected corrected counts,")
    print("  both return the sent messages; decode_errors reports the pattern weights and no failure or miscorrection.")
    print()
    print(f"TARGETS: decode >= {TARGET_RATIO:g}x galois throughput: error-free {r0:.0f}x, {t} errors {rt:.0f}x -> "
          f"{'MET' if ratio_ok else 'NOT MET'}; error-free decode {gbps0:.2f} Gb/s of information per core "
          f"(target near {TARGET_GBPS:g} Gb/s, i.e. >= {NEAR * TARGET_GBPS:g}) -> {'MET' if speed_ok else 'NOT MET'}")

    if args.json:
        report = {
            "code": code.to_dict(),
            "galois": {"n": rs.n, "k": rs.k, "alpha": 2, "c": code.first_root,
                       "irreducible_poly": code.primitive_poly, "version": galois.__version__},
            "batch": B,
            "galois_batch_with_errors": gb,
            "seed": args.seed,
            "repeat": R,
            "warmup": W,
            "info_bits_per_codeword": info_bits,
            "bit_exact_encode": True,
            "environment": {
                "python": platform.python_version(),
                "numpy": np.__version__,
                "numba": numba.__version__,
                "galois": galois.__version__,
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "threads": {v: os.environ.get(v) for v in THREAD_VARS},
                "pinning": pinned,
            },
            "cases": cases,
            "targets": targets,
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=float) + "\n")
        print(f"JSON written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
