"""The tail's outputs two to a complex inverse FFT (issue 35, second pass): a decomposed
tail plan (the eye's columns, a sampling clock's neighbours) makes two outputs from one
complex inverse FFT instead of two real ones. The rounding moves: the outputs stay within
1e-12 of the sum of their terms' magnitudes of numpy's direct convolution (they are within
a few 1e-15 of it), and a fixed-seed run's decisions, error positions, eye histogram,
bathtub and crossings are those of the plain overlap-save (one real inverse FFT per output,
the code before) exactly, its recorded waveform within 1e-13 V."""

import numpy as np
import pytest

import channels
from phy.engines import simulate
from phy.engines.timesim import tail as T

from test_timesim_speed_paths import B1, _case, _outputs_before, _kw

SM = __import__("phy.engines.timesim.simulate", fromlist=["plan_tail"])


def _plan(eye: bool, **extra):
    got = []
    orig = SM.plan_tail

    def spy(*a):
        got.append(orig(*a))
        return got[-1]

    SM.plan_tail = spy
    try:
        simulate(channels.library.get("twinax_1m_26awg"), 300, **_kw(B1, eye=eye, **extra))
    finally:
        SM.plan_tail = orig
    return got[0]


def _direct(plan, d, u):
    ref = np.array([np.convolve(d, plan.kd[o], "valid") - np.convolve(u, plan.ku[o], "valid")
                    for o in range(plan.n_out)])
    scale = np.array([np.convolve(np.abs(d), np.abs(plan.kd[o]), "valid")
                      + np.convolve(np.abs(u), np.abs(plan.ku[o]), "valid") for o in range(plan.n_out)])
    return ref, scale


@pytest.mark.parametrize("n_out", [17, 16, 3, 2])
def test_paired_outputs_are_the_direct_convolution_within_1e_12(n_out):
    """Odd and even counts (one output left to a real inverse FFT), rows of kd only, of ku
    only and of both in one pair; the buffers grown, reused smaller and regrown."""
    base = _plan(True)
    assert base.n_out == 17 and not base._kd_on.all() and not base._ku_on.all()
    rows = list(range(n_out)) if n_out > 3 else [9, 10, 11][:n_out]  # 9: the steps' last, 10: the jitter's first
    plan = T.TailPlan(base.head_pre, base.head_post, base.jpre, base.jpost, base.s_min, base.coef[rows],
                      base.kd[rows], base.ku[rows], base.rank, 0.0, 0.0, 0.0, 0.0, base.nfft).prepare()
    rng = np.random.default_rng(11)
    L = plan.kd.shape[1]
    for n in (30_000, 7_000, 41_000):
        d = rng.standard_normal(n + L - 1) * 0.2
        u = d * rng.standard_normal(d.size) * 0.5
        got = plan.outputs(d, u)
        assert got.flags.c_contiguous and got.shape[0] == n_out and got.shape[1] >= n
        ref, scale = _direct(plan, d, u)
        err = np.abs(got[:, :n] - ref)
        assert np.all(err <= 1e-12 * scale)
        assert np.max(err / scale) > 0  # the rounding is there (not the reference itself)
        # and close to the plain overlap-save's rounding (one real inverse FFT per output)
        before = _outputs_before(plan, d, u)
        assert np.all(np.abs(got[:, :n] - before) <= 1e-13 * scale)
        # a wrong pairing (outputs swapped) is caught
        if n_out >= 2:
            assert not np.all(np.abs(got[[1, 0], :n] - ref[:2]) <= 1e-12 * scale[:2])


def test_without_the_jitter_input():
    plan = _plan(True)
    rng = np.random.default_rng(12)
    L, n = plan.kd.shape[1], 9_000
    d = rng.standard_normal(n + L - 1) * 0.2
    got = plan.outputs(d, None)[:, :n]
    ref, scale = _direct(plan, d, np.zeros_like(d))
    assert np.all(np.abs(got - ref) <= 1e-12 * scale)
    assert np.all(got[plan._ku_on & ~plan._kd_on] == 0.0)


@pytest.fixture(scope="module")
def plain():
    """simulate with the tail's outputs by the plain overlap-save of main 862076c."""

    def run(ch, n, kw):
        orig = T.TailPlan.outputs

        def before(self, d, u):
            return np.ascontiguousarray(_outputs_before(self, d, u))

        T.TailPlan.outputs = before
        try:
            return simulate(ch, n, **kw)
        finally:
            T.TailPlan.outputs = orig

    return run


@pytest.mark.parametrize("name", ["twinax eye", "CA eye", "c2m bang-bang adc eye", "records tail_fft"])
def test_runs_decide_as_with_the_plain_overlap_save(plain, name):
    if name.startswith("records"):  # test_timesim_records.py's long-span case (its waveform re-pinned)
        from test_timesim_records import cases

        ch, n, kw = cases()["tail_fft"]
    else:
        ch, n, kw = _case(name)
    a, b = simulate(ch, n, **kw), plain(ch, n, kw)
    assert a.config["tail"]["filters"] > 2
    for f in ("symbol_errors", "detector_errors", "bit_errors", "error_ui", "error_levels", "burst_span_counts"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    for f in ("counts", "column_errors", "crossings"):
        np.testing.assert_array_equal(getattr(a.eye, f), getattr(b.eye, f))
    if a.waveform is not None:
        for f in ("adc_v", "slicer_v"):
            x, y = getattr(a.waveform, f), getattr(b.waveform, f)
            assert np.max(np.abs(x - y)) <= 1e-13
            assert not np.array_equal(x, y)  # the paired path did run (its rounding differs)


def test_peak_sums_are_those_of_the_positions_row_by_row():
    """The eye's range (simulate._peak_sums): np.interp at the positions in increasing order
    gives each position's value of the row-by-row order, bit for bit."""
    rng = np.random.default_rng(14)
    y = np.cumsum(rng.standard_normal(9000)) * 1e-3
    spu = 32
    for at, ffe, dfe in ((100.37 + np.arange(-17, 19), np.array([1.0]), np.array([0.1, -0.02])),
                         (np.arange(32, 64, dtype=float), np.array([-0.1, 1.0, 0.05]), None)):
        got = SM._peak_sums(y, at, spu, ffe, 1, dfe)
        k = np.arange(-(int(np.max(at)) // spu) - 2, (y.size - int(np.min(at))) // spu + 2)
        c = np.interp(at[:, None] + spu * k[None, :], np.arange(y.size), y, left=0.0, right=0.0)
        comb = np.zeros((at.size, k.size + ffe.size - 1))
        for t, w in enumerate(ffe):
            comb[:, t : t + k.size] += w * c
        if dfe is not None:
            m = 1 + int(np.flatnonzero(k == 0)[0])
            comb[:, m + 1 : m + 1 + dfe.size] -= dfe
        np.testing.assert_array_equal(got, np.abs(comb).sum(axis=1))


def _lowrank_before(G, tol):
    """tail._lowrank of main 862076c (fresh arrays each step)."""
    U, sv, Vt = np.linalg.svd(G, full_matrices=False)
    approx = np.zeros_like(G)
    err = float(np.abs(G).sum(axis=1).max())
    r = 0
    while r < sv.size and err > tol:
        approx += np.outer(U[:, r] * sv[r], Vt[r])
        r += 1
        err = float(np.abs(G - approx).sum(axis=1).max())
    return U[:, :r] * sv[:r], Vt[:r].copy(), r, err


def test_lowrank_is_the_code_before_bit_for_bit():
    rng = np.random.default_rng(15)
    x = np.linspace(0, 1, 700)
    G = np.array([np.exp(-((x - 0.3 - 0.01 * s) / 0.1) ** 2) for s in range(32)])
    G += 1e-6 * rng.standard_normal((32, 700))
    for tol in (1e-2, 1e-4, 1e-9):
        got, ref = T._lowrank(G, tol), _lowrank_before(G, tol)
        assert got[2] == ref[2] > 1 and got[3] == ref[3]
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
