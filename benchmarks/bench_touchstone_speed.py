#!/usr/bin/env python3
"""Touchstone loading speed (issue 35): scikit-rf's parser, the reader of main 862076c and this tree's, side by side.

    python benchmarks/bench_touchstone_speed.py --before /tmp/before35-ts        # about a minute
    python benchmarks/bench_touchstone_speed.py --before /tmp/before35-ts --repeat 9 --json ts.json

``--before`` is a checkout of the code to compare with (``git worktree add --detach
/tmp/before35-ts 862076c``). The case is the issue's: ``DPO_14in_Meg7_THRU.s4p`` with 16
siblings (8 NEXT, 8 FEXT) that are distinct files (each copy of ``DPO_14in_Meg7_NENF89`` or
``_FENH89`` starts with its own comment line, so no two files have the same bytes and no
cache can help), in a temporary folder under /tmp, with the loading caches off.

Each variant runs in its own worker process (one BLAS/Numba thread, pinned to one CPU with
the parent, ``--cpu``, default 0): *skrf* reads the 17 files with ``rf.Network(path)``
(scikit-rf 2.2's own parser), *before* and *after* with ``channels.touchstone.read_network``
(everything the project does to a file: reading, checks, parsing, the checks after) in the
``--before`` tree and in this one; *load* rows time ``channels.load(thru, aggressors="auto",
check_quality=False)`` (reading plus the port order and the Channels) in both trees. The
workers take turns within each round, so that a busy machine slows them alike; the figures
are CPU time (``time.process_time``), best and median of ``--repeat`` rounds after one
untimed round. Every round each worker returns a SHA-256 of every network's attributes
(arrays byte for byte; comments, port names, z0, frequency, name...): *before* and *after*
must be equal (printed). A per-stage profile (cProfile, cumulative time of the stage
functions over one reading of the 17 files) follows for both trees.

Targets (issue 35): at least 300 MB/s, and at least 5x scikit-rf's parser in the same run.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CK = REPO.parent / "shared" / "channels" / "ieee802.3ck"
THRU, NEXT, FEXT = "DPO_14in_Meg7_THRU.s4p", "DPO_14in_Meg7_NENF89.s4p", "DPO_14in_Meg7_FENH89.s4p"
TARGET_MBS, TARGET_VS_SKRF = 300.0, 5.0

# stage -> the functions whose cumulative time it is (module file tail, function name)
STAGES = (
    ("read the bytes (size, binary checks)", (("_tsfile.py", "read_bytes"),)),
    ("decode (line length, word count, UTF-8)", (("_tsfile.py", "decode_text"),)),
    ("header: keywords, port names", (("_tsheader.py", "check"), ("_tsheader.py", "check_port_names"))),
    ("option line (and the text for the parser)", (("_tsfile.py", "parse_option_line"),
                                                   ("_tsfile.py", "option_line_edit"),
                                                   ("channels/touchstone.py", "__init__"),
                                                   ("channels/touchstone.py", "full"))),
    ("parser: header lines", (("_tsread.py", "_read_header"),)),
    ("parser: data block (numbers, comments)", (("_tsread.py", "_read_data"),)),
    ("parser: scikit-rf's load_file (all of it)", (("touchstone.py", "load_file"),)),
    ("network built (read_touchstone, all of it)", (("_tsread.py", "read_touchstone"),)),
    ("MA/DB to complex (from_raw)", (("_tsfile.py", "from_raw"),)),
    ("checks after: network, keywords, magnitudes", (("_tsdata.py", "check_network"), ("_tsdata.py", "check_keywords"),
                                                     ("_tsdata.py", "check_magnitudes"))),
    ("plausibility (_plausible.check)", (("_plausible.py", "check"),)),
    ("read_network, total", (("touchstone.py", "read_network"),)),
)


# ----------------------------------------------------------------------------- worker
def _digest(ntwk) -> str:
    import numpy as np

    h = hashlib.sha256()
    for k in sorted(vars(ntwk)):
        v = vars(ntwk)[k]
        h.update(k.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype}{v.shape}".encode() + np.ascontiguousarray(v).tobytes())
        elif k == "_frequency":
            h.update(np.ascontiguousarray(v.f).tobytes() + repr(v.unit).encode())
        else:
            h.update(repr(v).encode())
    return h.hexdigest()


def worker(tree: str, kind: str, folder: str) -> None:
    """Serve ``run``/``profile`` requests on stdin for the code in ``tree``."""
    sys.path.insert(0, tree)
    import time
    import warnings

    import skrf as rf

    import channels
    from channels import touchstone

    touchstone.set_cache_size(0)
    files = [Path(folder) / THRU] + sorted(p for p in Path(folder).glob("*.s4p") if p.name != THRU)

    def once():
        if kind == "skrf":
            return [rf.Network(str(p)) for p in files]
        if kind == "load":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ch = channels.load(files[0], aggressors="auto", check_quality=False)
            return [ch]
        return [touchstone.read_network(p) for p in files]

    def digest(out):
        if kind == "load":
            import numpy as np

            ch = out[0]
            parts = [np.ascontiguousarray(c.f).tobytes() + np.ascontiguousarray(c.sdd21).tobytes()
                     for c in (ch, *ch.aggressors)]
            return hashlib.sha256(b"".join(parts)).hexdigest()
        return hashlib.sha256("".join(_digest(n) for n in out).encode()).hexdigest()

    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "run":
            t0 = time.process_time()
            out = once()
            dt = time.process_time() - t0
            print(json.dumps({"s": dt, "digest": digest(out)}), flush=True)
        elif cmd == "profile":
            import cProfile
            import pstats

            pr = cProfile.Profile()
            pr.enable()
            once()
            pr.disable()
            stats = pstats.Stats(pr).stats
            res = {}
            for label, funcs in STAGES:
                res[label] = sum(ct for (fn, _, name), (_, _, _, ct, _) in stats.items()
                                 if any(fn.endswith(os.sep + tail) and name == f for tail, f in funcs))
            print(json.dumps(res), flush=True)
        else:
            return


# ----------------------------------------------------------------------------- parent
def make_siblings(folder: Path) -> list[Path]:
    shutil.copyfile(CK / THRU, folder / THRU)
    out = [folder / THRU]
    for kind, src in (("next", NEXT), ("fext", FEXT)):
        data = (CK / src).read_bytes()
        for k in range(8):
            p = folder / f"DPO_14in_Meg7_{kind}{k + 1}.s4p"
            p.write_bytes(f"! distinct copy {k + 1} of {src}\n".encode() + data)
            out.append(p)
    return out


class Worker:
    def __init__(self, tree: Path, kind: str, folder: Path, cpu: int | None) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree), "--kind", kind, "--folder", str(folder)]
        if cpu is not None and shutil.which("taskset"):
            cmd = ["taskset", "-c", str(cpu)] + cmd
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=str(tree))

    def ask(self, cmd: str) -> dict:
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker died on {cmd!r}")
        return json.loads(line)

    def close(self) -> None:
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=False, help="checkout of the code to compare with (e.g. main at 862076c)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cpu", type=int, default=0, help="the CPU every worker is pinned to (-1: none)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.kind, args.folder)
        return 0
    if not CK.is_dir():
        sys.exit(f"bench_touchstone_speed: {CK} not found (the shared channels live beside the repository)")
    if not args.before:
        sys.exit("bench_touchstone_speed: --before DIR is required (git worktree add --detach /tmp/before35-ts 862076c)")
    before = Path(args.before).resolve()
    cpu = None if args.cpu < 0 else args.cpu
    with tempfile.TemporaryDirectory(prefix="bench_ts_speed_", dir="/tmp") as tmp:
        files = make_siblings(Path(tmp))
        mb = sum(p.stat().st_size for p in files) / 1e6
        variants = {"skrf": (REPO, "skrf"), "before": (before, "read"), "after": (REPO, "read"),
                    "load before": (before, "load"), "load after": (REPO, "load")}
        workers = {k: Worker(tree, kind, Path(tmp), cpu) for k, (tree, kind) in variants.items()}
        try:
            times = {k: [] for k in workers}
            digests = {k: set() for k in workers}
            for rnd in range(max(1, args.repeat) + 1):
                for k, w in workers.items():
                    r = w.ask("run")
                    digests[k].add(r["digest"])
                    if rnd:
                        times[k].append(r["s"])
            prof = {k: workers[k].ask("profile") for k in ("before", "after")}
        finally:
            for w in workers.values():
                w.close()
    load = os.getloadavg()
    print(f"Touchstone loading (issue 35): {len(files)} files, {mb:.1f} MB (DPO_14in_Meg7_THRU + 8 NEXT + 8 FEXT, "
          f"distinct bytes), caches off; CPU time, best and median of {args.repeat} rounds, workers pinned to CPU "
          f"{cpu}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"  before = {before} ({_head(before)}), after = {REPO} ({_head(REPO)})")
    print()
    print(f"  {'variant':<58}{'best ms':>9}{'median':>9}{'MB/s':>8}{'vs skrf':>9}{'vs before':>10}")
    best = {k: min(v) for k, v in times.items()}
    rows = (("skrf", "scikit-rf's parser, rf.Network(path)"), ("before", "read_network, main 862076c"),
            ("after", "read_network, this tree"), ("load before", "load(thru, aggressors='auto', check_quality=False), "
                                                              "main"), ("load after", "the same, this tree"))
    for k, label in rows:
        vs_before = best["before" if k == "after" else "load before"] / best[k] if k in ("after", "load after") else None
        print(f"  {label:<58}{best[k] * 1e3:9.1f}{statistics.median(times[k]) * 1e3:9.1f}{mb / best[k]:8.0f}"
              f"{best['skrf'] / best[k]:8.1f}x" + (f"{vs_before:9.2f}x" if vs_before else ""))
    same = digests["before"] == digests["after"] and len(digests["after"]) == 1
    same_load = digests["load before"] == digests["load after"] and len(digests["load after"]) == 1
    print(f"  networks of before and after equal bit for bit: {same}; the loaded channels' Sdd21 equal: {same_load}")
    mbs, vs = mb / best["after"], best["skrf"] / best["after"]
    print(f"  target >= {TARGET_MBS:.0f} MB/s: {'met' if mbs >= TARGET_MBS else 'NOT met'} ({mbs:.0f}); "
          f">= {TARGET_VS_SKRF:.0f}x scikit-rf: {'met' if vs >= TARGET_VS_SKRF else 'NOT met'} ({vs:.1f}x)")
    print()
    print("  per-stage profile of read_network over the 17 files (cProfile, cumulative ms; stages nest: the data block")
    print("  is inside load_file, which is inside read_touchstone)")
    print(f"  {'stage':<52}{'before':>9}{'after':>9}{'ratio':>8}")
    for label, _ in STAGES:
        a, b = prof["before"].get(label, 0.0), prof["after"].get(label, 0.0)
        print(f"  {label:<52}{a * 1e3:9.1f}{b * 1e3:9.1f}" + (f"{a / b:7.1f}x" if b > 0 else ""))
    if args.json:
        Path(args.json).write_text(json.dumps({"mb": mb, "times": times, "profile": prof, "same": same,
                                               "same_load": same_load, "load": load}, indent=2))
    return 0 if same and same_load else 1


def _head(tree: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=False).stdout.strip() or "?"
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
