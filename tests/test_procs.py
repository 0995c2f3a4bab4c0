"""phy._procs.fork_map, and the roll-up's length buckets on several cores."""

from __future__ import annotations

import os
import sys
import time

import pytest

from phy import _procs
from phy import topology as tp
from phy.topology import export

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork_map forks on Linux only")


def _slow_pid(x):
    time.sleep(0.3)
    return x * x, os.getpid()


@linux
def test_fork_map_keeps_order_and_uses_the_workers():
    seen = []
    out = _procs.fork_map(_slow_pid, [3, 1, 2, 5], 2, on_result=lambda i, r: seen.append(i))
    assert [r[0] for r in out] == [9, 1, 4, 25] and seen == [0, 1, 2, 3]
    pids = {r[1] for r in out}
    assert len(pids) == 2 and os.getpid() not in pids
    # a closure need not pickle: the children are forked
    k = 7
    assert _procs.fork_map(lambda x: x + k, [1, 2], 2) == [8, 9]


def test_fork_map_in_this_process_with_one_worker():
    out = _procs.fork_map(_slow_pid, [2], None)  # one item: no pool
    assert out == [(4, os.getpid())]


@linux
def test_fork_map_raises_the_calls_exception():
    def bad(x):
        if x == 2:
            raise ValueError("two is bad")
        return x

    with pytest.raises(ValueError, match="two is bad"):
        _procs.fork_map(bad, [1, 2, 3], 2)


@linux
def test_rollup_on_two_cores_gives_the_same_report():
    from phy import link as lk
    from phy.serdes import Ctle, Dfe, Receiver, RxFfe, Transmitter, TxFfe

    baud = 106.25e9
    sd = lk.Serdes(tx=Transmitter(ffe=TxFfe((-0.1, 0.8, -0.1), main=1)),
                   rx=Receiver(ctle=Ctle(g_dc_db=-6.0, f_z_hz=baud / 4, f_p1_hz=baud / 4, f_p2_hz=baud),
                               ffe=RxFfe(2, 4), dfe=Dfe(1)))

    def topo():
        lc = tp.LinkClass.copper_twinax(resolution_m=0.5, serdes=sd)
        return tp.single_tier(32, lc, links_per_accel=1, accels_per_rack=8, overhead_m=0.5)

    one, two = tp.rollup(topo()), tp.rollup(topo(), workers=2)
    assert len(one.link_reports) >= 2  # two length buckets or more: a real split
    assert export.to_json(one) == export.to_json(two)


@linux
def test_fork_call_runs_beside_this_process():
    """The first call waits for a byte that only the second call writes: they can only both
    finish if the second starts while the first runs (no clock involved; a sequential
    fork_call would leave the first waiting until its 120 s safety timeout)."""
    import select

    k = 3
    r, w = os.pipe()

    def first():
        ready, _, _ = select.select([r], [], [], 120)
        return (_slow_pid(k), os.getpid(), bool(ready) and os.read(r, 1) == b"x")

    def second():
        os.write(w, b"x")
        return _slow_pid(k + 1)

    try:
        a = _procs.fork_call(first)  # closures: forked, not pickled
        b = _procs.fork_call(second)
        (sq, _), pid_a, saw_second = a.result()
        assert sq == 9 and b.result()[0] == 16
    finally:
        os.close(r)
        os.close(w)
    assert pid_a != os.getpid()
    assert saw_second  # the two calls ran at the same time


@linux
def test_fork_call_raises_the_calls_exception():
    def bad():
        raise KeyError("no such lane")

    h = _procs.fork_call(bad)
    with pytest.raises(KeyError, match="no such lane"):
        h.result()
