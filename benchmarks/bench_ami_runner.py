"""The per-block cost of running an IBIS-AMI model out of process (issue 36).

Times :meth:`phy.ami.runner.AmiProcess.getwave` on the pass-through test model
(``tests/ami_models/passthrough.c``, compiled with ``cc``: the model itself costs nothing)
for several block lengths, and in the same run the floor under it: a bare echo of the
same bytes through two pipes to a Python child (``multiprocessing.connection``, one
message each way), so the two columns are comparable on a busy machine. Prints ns per
sample and microseconds per block, the best of ``--repeat`` timed runs.

    python benchmarks/bench_ami_runner.py
    python benchmarks/bench_ami_runner.py --blocks 4096 32768 131072 --samples 4000000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ami_models.build import build  # noqa: E402

from phy.ami.runner import AmiProcess  # noqa: E402

_ECHO = """
import sys
from multiprocessing.connection import Connection
rx, tx = Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
buf = bytearray(int(sys.argv[3]))
while True:
    try:
        n = rx.recv_bytes_into(buf)
    except EOFError:
        break
    tx.send_bytes(memoryview(buf)[:n])
"""


def _best(fn, blocks: int, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(blocks):
            fn()
        best = min(best, (time.perf_counter() - t) / blocks)
    return best


def _echo_s(wave: np.ndarray, blocks: int, repeat: int) -> float:
    a, b = os.pipe()
    c, d = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", _ECHO, str(a), str(d), str(wave.nbytes)], pass_fds=(a, d))
    os.close(a)
    os.close(d)
    tx, rx = Connection(b, readable=False), Connection(c, writable=False)
    out = bytearray(wave.nbytes)

    def once():
        tx.send_bytes(wave)
        rx.recv_bytes_into(out)

    try:
        return _best(once, blocks, repeat)
    finally:
        tx.close()
        child.wait()
        rx.close()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, nargs="+", default=[1024, 4096, 32768, 131072])
    ap.add_argument("--samples", type=int, default=4_000_000, help="samples per timed run (default 4e6)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'block':>8} {'AmiProcess ns/sample':>21} {'us/block':>9} {'pipe echo ns/sample':>20} {'us/block':>9}")
    with AmiProcess(build("passthrough"), "passthrough", timeout_s=60) as p:
        p.init(np.ones((1, 64)), 1e-12, 32e-12, "(passthrough)")
        for n in args.blocks:
            wave = rng.normal(size=n)
            blocks = max(1, args.samples // n)
            ami = _best(lambda: p.getwave(wave), blocks, args.repeat)
            echo = _echo_s(wave, blocks, args.repeat)
            print(f"{n:>8} {ami / n * 1e9:>21.1f} {ami * 1e6:>9.1f} {echo / n * 1e9:>20.1f} {echo * 1e6:>9.1f}")


if __name__ == "__main__":
    main()
