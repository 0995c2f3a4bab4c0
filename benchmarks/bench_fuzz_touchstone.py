#!/usr/bin/env python3
"""Fuzzing the Touchstone loader with mutated real files (issue 31).

    python benchmarks/bench_fuzz_touchstone.py                  # 2,000 files, seed 31 (15 to 30 minutes)
    python benchmarks/bench_fuzz_touchstone.py -n 200 --seed 7 --jobs 2 --json fuzz.json
    python benchmarks/bench_fuzz_touchstone.py --only 1234      # one file again, with its mutations listed
    python benchmarks/bench_fuzz_touchstone.py --keep DIR       # keep the files that failed

Each file is a real file of ``../shared/channels`` put through one to three seeded mutations
(:data:`MUTATIONS`: byte flips, line deletions and duplications, truncation, numbers
replaced by huge, NaN and odd spellings, Touchstone 2 keywords added and damaged, option
lines changed, the port count changed in the name or the keywords, long words and
``!`` runs, many comment lines, NUL bytes, CR line ends, UTF-16, shortened to a few points,
zeroed values). File ``i`` of seed ``s`` is drawn from ``numpy.random.default_rng([s, i])``
alone, so any file can be made again with ``--only i``.

Each file is loaded (``channels.load``; crosstalk files with their kind and the through's
port order) in a worker process with a per-file time bound (``--timeout``) and an address
space limit (``--memory-gb``), so that a crash (a segfault: the worker dies) or a hang (the
worker is killed) is seen and counted; a new worker then takes over. A file that loads gets
its insertion loss and a pulse response at 106.25 GBd (8 samples/UI, extended above its
data if need be), checked finite. Outcomes:

* ``loaded``: loaded, insertion loss and pulse computed (finite);
* ``ChannelError``: refused at load, or at the pulse, with a ``channels.ChannelError``;
* ``stray``: any other exception type (or a non-finite result), with its type, message and
  the mutations;
* ``crash``: the worker died; ``timeout``: it took longer than the bound.

The report gives the counts, the most common ChannelError messages, every stray exception,
crash and timeout, and the slowest file. The exit status is 1 when there was any crash,
stray exception or timeout, else 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "channels"
BAUD = 106.25e9

# ------------------------------------------------------------------------------ mutations
ODD_NUMBERS = ["1e200", "-1e308", "1e999", "-1e-400", "nan", "NaN", "inf", "-Infinity", "0_5", "1_0", "1e", "1e+",
               "0x10", "\u0661\u0662", "1.2.3", "--1", ".", "+", "1e5_0", "9" * 400, "0", "-0", "2.5", "1d3", "1,5",
               "\u00bd", "0.5j", "1e-320", "+.5", "5."]
OPTION_LINES = ["# MHz MA S R 50", "# THz S RI R 50", "# Hz S RI R 0", "# Hz S RI R -50", "# Hz S RI R 5_0",
                "# Hz S RI R nan", "# Hz S DB R 50", "# Hz S MA R 50", "# GHz S RI R 50", "# Hz Y RI R 50",
                "# Hz Z RI R 50", "# Hz G RI R 50", "# Hz S RI", "#", "", "# Hz S RI R 50 50 50 50",
                "# Hz Hz S RI R 50", "# Hz S RI MA R 50", "# Hz S RI R 1e400", "# Hz S RI R", "# kHz S RI R 50",
                "# Hz S RI R 50 ! comment", "# HZ s ri r 75", "# Hz S XY R 50", "# Hz S RI R 50\n# GHz S MA R 50"]
EXTENSIONS = [".s1p", ".s2p", ".s3p", ".s4p", ".s8p", ".s16p", ".s64p", ".s65p", ".s99999p", ".s40000p", ".ts",
              ".s0p", ".txt", ".S4P", ".s04p"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _data_line_indices(lines: list[bytes]) -> list[int]:
    out = []
    for k, line in enumerate(lines):
        s = line.strip()
        if s and s[:1] not in (b"!", b"#", b"["):
            out.append(k)
    return out


def _point_starts(lines: list[bytes], nports: int = 4) -> list[int]:
    """Data lines that start a frequency point (counting ``1 + 2 nports**2`` numbers a point)."""
    per_point = 1 + 2 * nports * nports
    out, count = [], 0
    for k in _data_line_indices(lines):
        if count % per_point == 0:
            out.append(k)
        count += len(lines[k].split(b"!")[0].split())
    return out


def m_byte_flips(data, name, rng):
    b = bytearray(data)
    k = int(rng.integers(1, 21))
    for pos in rng.integers(0, len(b), k):
        b[int(pos)] = int(rng.integers(0, 256))
    return bytes(b), name, f"{k} bytes flipped"


def m_delete_lines(data, name, rng):
    lines = _lines(data)
    k = int(rng.integers(1, 6))
    drop = set(int(x) for x in rng.integers(0, len(lines), k))
    return b"\n".join(x for i, x in enumerate(lines) if i not in drop), name, f"lines {sorted(drop)[:5]} deleted"


def m_duplicate_lines(data, name, rng):
    lines = _lines(data)
    k = int(rng.integers(0, len(lines)))
    n = int(rng.integers(1, 4))
    return b"\n".join(lines[:k + 1] + lines[k:k + n] + lines[k + 1:]), name, f"{n} lines duplicated at {k}"


def m_truncate(data, name, rng):
    cut = int(rng.integers(0, len(data)))
    return data[:cut], name, f"truncated at byte {cut}"


def m_numbers(data, name, rng):
    lines = _lines(data)
    idx = _data_line_indices(lines)
    if not idx:
        return data, name, "no data line"
    k = int(rng.integers(1, 4))
    what = []
    for _ in range(k):
        li = idx[int(rng.integers(0, len(idx)))]
        toks = lines[li].split()
        t = int(rng.integers(0, len(toks)))
        new = ODD_NUMBERS[int(rng.integers(0, len(ODD_NUMBERS)))]
        toks[t] = new.encode()
        lines[li] = b" ".join(toks)
        what.append(f"line {li + 1} token {t} -> {new[:12]!r}")
    return b"\n".join(lines), name, "; ".join(what)


def _ports_of(name: str) -> int:
    ext = Path(name).suffix.lower()
    return int(ext[2:-1]) if ext[2:-1].isdigit() else 4


def m_keywords(data, name, rng):
    """Make the file Touchstone 2 and damage one of its keywords."""
    lines = _lines(data)
    opt = next((i for i, x in enumerate(lines) if x.strip().startswith(b"#")), None)
    if opt is None:
        return data, name, "no option line"
    n = _ports_of(name)
    npts = len(_point_starts(lines, n))
    kw = {"ports": f"[Number of Ports] {n}", "order": "[Two-Port Data Order] 12_21" if n == 2 else None,
          "nfreq": f"[Number of Frequencies] {npts}", "ref": "[Reference] " + " ".join(["50"] * n),
          "matrix": "[Matrix Format] Full", "data": "[Network Data]"}
    choice = ["ports", "ref", "nfreq", "matrix", "data", "version", "unknown", "end", "after", "mixed", "portname",
              "none"][int(rng.integers(0, 12))]
    bad = {
        "ports": [f"[Number of Ports] {v}" for v in ("0", "99999", "-1", "0_4", "four", "", "2", "8", "4.0")],
        "ref": ["[Reference] 50 50", "[Reference] 0 0 0 0", "[Reference] -50 50 50 50", "[Reference] nan 50 50 50",
                "[Reference] 50 50\n50 50", "[Reference] 50 50 50 50 50", "[Reference] 5_0 50 50 50", "[Reference]",
                "[Reference] 50\n! c\n50\n50\n50", "[Reference] inf 50 50 50", "[Reference]50 50 50 50"],
        "nfreq": [f"[Number of Frequencies] {v}" for v in ("0", "1", str(npts + 1), "999999999999", "6_001", "x")],
        "matrix": ["[Matrix Format] Upper", "[Matrix Format] Lower", "[Matrix Format] Diagonal", "[Matrix Format]"],
        "data": ["", "[Network Data]\n[Network Data]", "[Network Data] now"],
        "mixed": ["[Mixed-Mode Order] D2,1 D4,3 C2,1 C4,3", "[Mixed-Mode Order] D2,1 D2,1 C2,1 C4,3",
                  "[Mixed-Mode Order] S1 S2", "[Mixed-Mode Order] D9,1 D4,3 C2,1 C4,3", "[Mixed-Mode Order] D1_0,2"],
    }
    version = "[Version] 2.0"
    extra_top, extra_end = [], ["[End]"]
    what = choice
    if choice in bad:
        options = bad[choice]
        v = options[int(rng.integers(0, len(options)))]
        what = f"{choice}: {v!r}"
        if choice == "mixed":
            kw["mixed"] = v
        else:
            kw[choice] = v
    elif choice == "version":
        version = ["[Version] 1.0", "[Version] 3", "[Version]", "[Version] 2_0", "[version] 2.1"][int(rng.integers(0, 5))]
        what = f"version {version!r}"
    elif choice == "unknown":
        extra_top.append("[Begin Information]\n[End Information]" if rng.random() < 0.5 else "[Frobnicate] 3")
    elif choice == "end":
        extra_end = ["[End]\n1 2 3"] if rng.random() < 0.5 else []
    elif choice == "after":
        extra_end = [["[Reference] 50 50 50 50", "[Number of Ports] 4", "[Noise Data]", "[Matrix Format] Full"][
            int(rng.integers(0, 4))], "[End]"]
    elif choice == "portname":
        extra_top.append(["! Port[0] = X", "! Port[99] = X", "! Port[" + "9" * 5000 + "] = X",
                          "! Port[1] = TX1_P\n! Port[1] = TX1_N"][int(rng.integers(0, 4))])
    head = [version, lines[opt].decode("latin-1")] + [v for v in kw.values() if v is not None] + extra_top
    if choice == "ref" and rng.random() < 0.2:
        head = [version, lines[opt].decode("latin-1"), kw["ports"], "[Network Data]"]
        return (("\n".join(head) + "\n").encode() + b"\n".join(lines[opt + 1:]) + b"\n[Reference] 50 50",
                name, "[Reference] at the end of the file")
    text = "\n".join(head).encode() + b"\n" + b"\n".join(lines[opt + 1:]) + b"\n" + "\n".join(extra_end).encode()
    new_name = name if rng.random() < 0.7 else str(Path(name).with_suffix(".ts"))
    return text, new_name, f"Touchstone 2, {what}"


def m_option_line(data, name, rng):
    lines = _lines(data)
    opt = next((i for i, x in enumerate(lines) if x.strip().startswith(b"#")), None)
    new = OPTION_LINES[int(rng.integers(0, len(OPTION_LINES)))]
    if opt is None:
        return data, name, "no option line"
    lines[opt] = new.encode()
    return b"\n".join(lines), name, f"option line -> {new!r}"


def m_extension(data, name, rng):
    ext = EXTENSIONS[int(rng.integers(0, len(EXTENSIONS)))]
    return data, str(Path(name).with_suffix(ext)), f"renamed {ext}"


def m_long_word(data, name, rng):
    n = int(rng.choice([5_000, 50_000, 200_000, 300_000]))
    kind = int(rng.integers(0, 8))
    word = ["! " + "a" * n, "! " + "!" * n + "::x", "! x = " + "7" * n, "! " + "a" * n + " = b",
            "! " + "\t" * n + "Port", " ".join(["0.5"] * (n // 4)), "! " + "[" * n, "1 " + "#" * n][kind]
    lines = _lines(data)
    at = int(rng.integers(0, min(len(lines), 40)))
    return b"\n".join(lines[:at] + [word.encode()] + lines[at:]), name, f"long line kind {kind}, {n} characters at {at}"


def m_comment_flood(data, name, rng):
    n = int(rng.choice([20_000, 80_000]))
    block = b"\n".join(b"! comment line %d with a few words in it, as instruments write" % k for k in range(n))
    lines = _lines(data)
    return b"\n".join(lines[:1] + [block] + lines[1:]), name, f"{n} comment lines"


def m_nul(data, name, rng):
    pos = int(rng.integers(0, len(data))) if rng.random() < 0.7 else int(rng.integers(0, min(4096, len(data))))
    k = int(rng.integers(1, 100))
    return data[:pos] + b"\x00" * k + data[pos:], name, f"{k} NUL bytes at {pos}"


def m_encoding(data, name, rng):
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return data.replace(b"\n", b"\r"), name, "CR line ends"
    if kind == 1:
        return data.decode("latin-1").encode("utf-16"), name, "UTF-16"
    if kind == 2:
        return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), name, "BOM and CRLF"
    return data.replace(b" ", b"\xa0", 50), name, "non-breaking spaces"


def m_shrink(data, name, rng):
    lines = _lines(data)
    starts = _point_starts(lines, _ports_of(name))
    if len(starts) < 3:
        return data, name, "too short to shrink"
    k = int(rng.choice([1, 2, 15, 16, 40, 200, 200, 600, 600]))
    first = int(rng.integers(0, max(1, len(starts) - k)))
    step = int(rng.choice([1, 1, 7, 300]))
    keep = starts[first::step][:k]
    out = lines[:starts[0]]
    for s in keep:
        nxt = next((t for t in starts if t > s), len(lines))
        out += lines[s:nxt]
    return b"\n".join(out), name, f"{len(keep)} points from {first} every {step}"


def m_zero(data, name, rng):
    lines = _lines(data)
    idx = set(_data_line_indices(lines))
    starts = set(_point_starts(lines, _ports_of(name)))
    out = []
    for k, line in enumerate(lines):
        if k in idx:
            toks = line.split()
            keep = 1 if k in starts else 0
            line = b" ".join(toks[:keep] + [b"0"] * (len(toks) - keep))
        out.append(line)
    return b"\n".join(out), name, "every value zeroed"


MUTATIONS = {
    "byte_flips": m_byte_flips, "delete_lines": m_delete_lines, "duplicate_lines": m_duplicate_lines,
    "truncate": m_truncate, "numbers": m_numbers, "keywords": m_keywords, "option_line": m_option_line,
    "extension": m_extension, "long_word": m_long_word, "comment_flood": m_comment_flood, "nul": m_nul,
    "encoding": m_encoding, "shrink": m_shrink, "zero": m_zero,
}
_WEIGHTS = {"byte_flips": 3, "numbers": 4, "keywords": 4, "option_line": 2, "shrink": 3, "delete_lines": 2,
            "duplicate_lines": 2, "truncate": 1, "extension": 1, "long_word": 1, "comment_flood": 0.3, "nul": 1,
            "encoding": 1, "zero": 0.5}


_MILD = ["numbers", "option_line", "long_word", "encoding", "zero", "keywords", "comment_flood"]


def sources() -> list[Path]:
    return sorted(SHARED.glob("*/*.s*p"))


def make_file(seed: int, i: int, files: list[Path], cache: dict) -> tuple[bytes, str, list[str]]:
    """File ``i`` of ``seed``: its bytes, its name and the mutations applied."""
    rng = np.random.default_rng([seed, i])
    src = files[int(rng.integers(0, len(files)))]
    if src not in cache:
        cache[src] = src.read_bytes()
    data, name = cache[src], src.name
    names = list(_WEIGHTS)
    p = np.array([_WEIGHTS[k] for k in names])
    if rng.random() < 0.5:  # most files shortened first: quicker, and short grids are a case of their own
        data, name, _ = m_shrink(data, name, rng)
    what = [src.name]
    if rng.random() < 0.25:  # one mild change, which leaves the layout whole: most of these load
        m = _MILD[int(rng.integers(0, len(_MILD)))]
        data, name, desc = MUTATIONS[m](data, name, rng)
        return data, name, what + [f"{m}: {desc}"]
    for _ in range(int(rng.choice([1, 1, 1, 2, 3]))):
        m = names[int(rng.choice(len(names), p=p / p.sum()))]
        data, name, desc = MUTATIONS[m](data, name, rng)
        what.append(f"{m}: {desc}")
    return data, name, what


# ------------------------------------------------------------------------------ the worker
def _kind(name: str) -> str:
    low = name.lower()
    if "fext" in low or "fenh" in low:
        return "fext"
    if "next" in low or "nenf" in low:
        return "next"
    return "through"


def run_one(path: str) -> dict:
    """Load ``path`` and, if it loads, its insertion loss and a pulse response; the outcome."""
    import warnings

    import channels

    out = {"stage": "load"}
    t0 = time.perf_counter()
    kind = _kind(Path(path).name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "through":
                ch = channels.load(path)
            else:  # crosstalk: no through path to detect the order from (every 4-port here is 13_24)
                ch = channels.load(path, thru="13_24", kind=kind) if Path(path).suffix.lower() == ".s4p" else \
                    channels.load(path, kind=kind)
            out["stage"] = "pulse"
            il = ch.insertion_loss_db()
            pr = ch.pulse_response(BAUD, 8, require_nyquist=False)
        if not (np.all(np.isfinite(il)) or kind != "through") or not np.all(np.isfinite(pr.samples)):
            out.update(outcome="stray", type="NonFinite", message="insertion loss or pulse not finite")
        else:
            out.update(outcome="loaded")
    except channels.ChannelError as exc:
        msg = str(exc)
        out.update(outcome="ChannelError", message=msg, one_line="\n" not in msg)
    except Exception as exc:  # noqa: BLE001 - the point of the exercise
        import traceback
        out.update(outcome="stray", type=type(exc).__name__, message=str(exc)[:500],
                   where=traceback.format_exc(limit=-4)[-1500:])
    out["seconds"] = time.perf_counter() - t0
    return out


def _worker(conn, memory_gb: float, threads: int) -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)
    if memory_gb > 0:
        import resource
        limit = int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import channels  # noqa: F401 - imported once, before the first bound
    from channels import touchstone
    touchstone.set_cache_size(0)  # every file parsed, none answered from memory
    conn.send("ready")
    while True:
        task = conn.recv()
        if task is None:
            return
        conn.send(run_one(task))


class Worker:
    """A child process that loads files; restarted after a crash or a timeout."""

    def __init__(self, memory_gb: float, threads: int) -> None:
        self.memory_gb, self.threads = memory_gb, threads
        self.ctx = mp.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.memory_gb, self.threads), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(300) or self.conn.recv() != "ready":
            raise RuntimeError("fuzz worker did not start")

    def run(self, path: str, timeout: float) -> dict:
        t0 = time.perf_counter()
        self.conn.send(path)
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
            self.proc.join(5)
            res = {"outcome": "crash", "exitcode": self.proc.exitcode, "seconds": time.perf_counter() - t0}
        else:
            self.proc.kill()
            self.proc.join(5)
            res = {"outcome": "timeout", "seconds": time.perf_counter() - t0}
        self._start()
        return res

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


# ------------------------------------------------------------------------------ the run
def fuzz(n: int, seed: int, *, jobs: int = 1, timeout: float = 60.0, memory_gb: float = 6.0, only=None,
         keep: str | None = None, progress: bool = False) -> dict:
    """Run the fuzz; the summary (counts, failures, slowest file) as a dict."""
    files = sources()
    if not files:
        raise SystemExit(f"no Touchstone files in {SHARED}")
    indices = list(only) if only is not None else list(range(n))
    tmp = Path(tempfile.mkdtemp(prefix="fuzz_touchstone_"))
    workers = [Worker(memory_gb, 1) for _ in range(max(1, jobs))]
    cache: dict = {}
    counts = collections.Counter()
    messages = collections.Counter()
    failures = []
    slowest = None
    results = []
    t_start = time.perf_counter()
    try:
        from concurrent.futures import ThreadPoolExecutor

        def one(k: int, worker: Worker) -> dict:
            i = indices[k]
            data, name, what = make_file(seed, i, files, cache)
            folder = tmp / str(i)
            folder.mkdir()
            path = folder / name
            path.write_bytes(data)
            res = worker.run(str(path), timeout)
            res.update(index=i, name=name, mutations=what, bytes=len(data))
            bad = res["outcome"] in ("stray", "crash", "timeout") or (
                res["outcome"] == "ChannelError" and not res.get("one_line", True))
            if bad and keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(path, Path(keep) / f"{i}_{name}")
            shutil.rmtree(folder, ignore_errors=True)
            return res

        with ThreadPoolExecutor(len(workers)) as pool:
            for start in range(0, len(indices), len(workers)):
                batch = range(start, min(start + len(workers), len(indices)))
                for res in pool.map(lambda kw: one(*kw), [(k, workers[k - start]) for k in batch]):
                    results.append(res)
                    counts[res["outcome"]] += 1
                    if res["outcome"] == "ChannelError":
                        messages[_gist(res["message"])] += 1
                        if not res.get("one_line", True):
                            failures.append(res)
                    elif res["outcome"] != "loaded":
                        failures.append(res)
                    if slowest is None or res["seconds"] > slowest["seconds"]:
                        slowest = res
                if progress and len(results) % 100 < len(workers):
                    print(f"  {len(results)} files, {dict(counts)}, {time.perf_counter() - t_start:.0f} s",
                          flush=True)
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "seed": seed, "files": len(results), "counts": dict(counts), "seconds": time.perf_counter() - t_start,
        "slowest": {k: slowest[k] for k in ("index", "name", "seconds", "outcome", "mutations")} if slowest else None,
        "top_messages": messages.most_common(12), "failures": failures,
        "limits": {"timeout_s": timeout, "memory_gb": memory_gb},
    }


def _gist(message: str) -> str:
    """A ChannelError message without the file name and numbers, to group them."""
    import re

    body = message.split(": ", 1)[-1]
    return re.sub(r"[-+]?\d[\d.,e+-]*", "#", body)[:90]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=2000, help="files (default 2000)")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--timeout", type=float, default=60.0, help="bound per file, s (default 60)")
    ap.add_argument("--memory-gb", type=float, default=6.0, help="address-space limit per worker (default 6)")
    ap.add_argument("--only", type=int, nargs="+", help="these file indices only")
    ap.add_argument("--keep", help="copy the files that failed into this folder")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args(argv)
    if args.only:
        files = sources()
        for i in args.only:
            _, name, what = make_file(args.seed, i, files, {})
            print(f"file {i}: {name}: " + " | ".join(what))
    res = fuzz(args.n, args.seed, jobs=args.jobs, timeout=args.timeout, memory_gb=args.memory_gb,
               only=args.only, keep=args.keep, progress=not args.only)
    c = res["counts"]
    print(f"\n{res['files']} mutated files (seed {res['seed']}) in {res['seconds']:.0f} s, "
          f"bound {args.timeout:g} s and {args.memory_gb:g} GB a file:")
    for k in ("loaded", "ChannelError", "stray", "crash", "timeout"):
        print(f"  {k:>12}: {c.get(k, 0)}")
    if res["slowest"]:
        s = res["slowest"]
        print(f"  slowest: file {s['index']} ({s['name']}), {s['seconds']:.2f} s, {s['outcome']}: "
              + " | ".join(s["mutations"]))
    print("  most common refusals:")
    for msg, k in res["top_messages"]:
        print(f"    {k:5d}  {msg}")
    for f in res["failures"][:40]:
        print(f"  FAILED file {f['index']} ({f['name']}): {f['outcome']} {f.get('type', '')} "
              f"{f.get('exitcode', '')} {f.get('message', '')[:200]!r}\n      " + " | ".join(f["mutations"]))
        if f.get("where"):
            print("      " + f["where"].replace("\n", "\n      ")[-800:])
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, default=str))
    bad = c.get("stray", 0) + c.get("crash", 0) + c.get("timeout", 0) + sum(
        1 for f in res["failures"] if f["outcome"] == "ChannelError")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
