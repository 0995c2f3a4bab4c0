"""The simulator's Gaussian draws (the ziggurat on xoshiro256++ in the kernel) against the
normal law, and their stream's independence from how it is cut."""

import numpy as np
import pytest
from scipy import stats

from phy.serdes import _kernels as SK


def test_xoshiro256pp_matches_its_reference_sequence():
    """The first outputs of xoshiro256++ from the state (1, 2, 3, 4), computed here by plain
    Python integers from the algorithm's definition (Blackman and Vigna)."""
    M = (1 << 64) - 1
    s = [1, 2, 3, 4]

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & M

    ref = []
    for _ in range(6):
        ref.append((rotl((s[0] + s[3]) & M, 23) + s[0]) & M)
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    assert ref[0] == (5 << 23) + 1  # rotl(s0 + s3, 23) + s0
    state = np.array([1, 2, 3, 4], dtype=np.uint64)
    got = [int(SK._next_py(state)) for _ in range(6)]
    assert got == ref


def test_the_draws_follow_the_normal_law_into_the_tails():
    g = SK.FastNormal(np.random.default_rng(7))
    x = np.empty(4_000_000)
    g.fill(x, 1.0)
    assert abs(x.mean()) < 3e-3 and x.var() == pytest.approx(1.0, abs=3e-3)
    assert stats.kstest(x, "norm").pvalue > 1e-3
    for k in (2.0, 3.0, 4.0):  # the tail probabilities within 4 sigma of their counting error
        expected = 2 * stats.norm.sf(k) * x.size
        assert abs(np.sum(np.abs(x) > k) - expected) < 4 * np.sqrt(expected)
    h, edges = np.histogram(x, bins=100, range=(-4.5, 4.5))
    e = x.size * np.diff(stats.norm.cdf(edges))
    assert stats.chi2.sf(np.sum((h - e) ** 2 / e), 99) > 1e-3


def test_the_stream_does_not_depend_on_how_it_is_cut_and_a_seed_fixes_it():
    a = SK.FastNormal(np.random.default_rng(3))
    b = SK.FastNormal(np.random.default_rng(3))
    whole = np.empty(10_001)
    a.fill(whole, 2.0)
    parts = [np.empty(n) for n in (1, 4999, 3, 4998)]
    for p in parts:
        b.fill(p, 2.0)
    assert np.array_equal(np.concatenate(parts), whole)
    c = SK.FastNormal(np.random.default_rng(4))
    other = np.empty(10_001)
    c.fill(other, 2.0)
    assert not np.array_equal(other, whole)
    clipped = np.empty(100_000)
    SK.FastNormal(np.random.default_rng(5)).fill(clipped, 1.0, clip=2.0)
    assert clipped.max() == 2.0 and clipped.min() == -2.0
