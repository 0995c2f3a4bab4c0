"""The DFE error chain's Numba kernels (``phy.engines._chain_kernels``) against the plain
numpy they replaced, and the chain built on them against its closed forms' inputs."""

from __future__ import annotations

import numpy as np
import pytest

from phy.engines import _chain_kernels as K


def _at(y, x, v0, dv):
    """The chain's linear read of a tail on the grid (plain numpy)."""
    fi = np.clip((x - v0) / dv, 0.0, y.size - 1.000001)
    i0 = fi.astype(np.int64)
    return y[i0] + (y[i0 + 1] - y[i0]) * (fi - i0)


@pytest.fixture
def grid():
    rng = np.random.default_rng(7)
    nv = 513
    px = rng.random(nv) ** 4
    px /= px.sum()
    cdf = np.cumsum(px) - 0.5 * px
    sf = np.concatenate([np.cumsum(px[::-1])[::-1][1:], [0.0]]) + 0.5 * px
    return rng, cdf, sf, -0.3, 0.6 / (nv - 1)


def _read_bins(y, fi):
    """The chain's linear read at ``fi`` bins, held inside the grid (plain numpy)."""
    fi = np.clip(fi, 0.0, y.size - 1.000001)
    i0 = fi.astype(np.int64)
    return y[i0] + (y[i0 + 1] - y[i0]) * (fi - i0)


@pytest.mark.parametrize("spread", [0.05, 0.4])  # the reads inside the grid; many held at its ends
def test_tail_means_is_the_mean_of_the_reads(grid, spread):
    rng, cdf, sf, v0, dv = grid
    cs = rng.uniform(-100, cdf.size + 100, 48)
    d = np.sort(rng.normal(0, spread / dv, 4096))
    out = np.empty(cs.size)
    K.tail_means(sf, cs, d, np.concatenate([[0.0], np.cumsum(d)]), out)
    ref = _read_bins(sf, cs[:, None] - d[None, :]).mean(axis=1)
    assert np.allclose(out, ref, rtol=1e-10, atol=1e-13)


def _windows(rng, cdf, S=3, M=4, k=3):
    mk = M**k
    sc_up, sc_dn = rng.uniform(0, 3, (S, M * M)), rng.uniform(0, 3, (S, M * M))
    c_up, c_dn = rng.uniform(0, cdf.size, (S, M * M)), rng.uniform(0, cdf.size, (S, M * M))
    d_w = rng.normal(0, 30, (M, mk))
    return sc_up, c_up, sc_dn, c_dn, d_w


def _probs_reference(t_up, t_dn, sc_up, c_up, sc_dn, c_dn, d_w, rows):
    M, mk = d_w.shape
    a = np.arange(M * M) // M  # the window's previous symbol, by (a_(t-1), a_t)
    fu = (c_up[:, :, None] - d_w[a][None]).reshape(c_up.shape[0], -1)
    fd = (c_dn[:, :, None] - d_w[a][None]).reshape(c_dn.shape[0], -1)
    up = np.minimum(_read_bins(t_up, fu) * np.repeat(sc_up, mk, axis=1), 1.0)[rows]
    dn = np.minimum(_read_bins(t_dn, fd) * np.repeat(sc_dn, mk, axis=1), 1.0)[rows]
    return up, np.minimum(dn, 1.0 - up)


def test_slicer_probs_is_the_numpy_gather(grid):
    rng, cdf, sf = grid[:3]
    args = _windows(rng, cdf)
    rows = np.array([0, 2])
    MW = args[0].shape[1] * args[4].shape[1]
    up, dn = np.empty((2, MW)), np.empty((2, MW))
    K.slicer_probs(sf, cdf, *args, rows, up, dn)
    r_up, r_dn = _probs_reference(sf, cdf, *args, rows)
    assert np.array_equal(up, r_up) and np.array_equal(dn, r_dn)


def test_chain_step_is_the_probabilities_then_the_advance(grid):
    rng, cdf, sf = grid[:3]
    args = _windows(rng, cdf)
    M, rows = 4, np.array([0, 2])
    MW = args[0].shape[1] * args[4].shape[1]
    Y = rng.random((2, MW // M))
    Y[1, :7] = 0.0
    g_up, g_dn = np.empty(Y.shape), np.empty(Y.shape)
    K.chain_step(sf, cdf, *args, rows, Y, M, g_up, g_dn)
    r_up, r_dn = _probs_reference(sf, cdf, *args, rows)
    q = Y.shape[1]
    Y4 = Y.reshape(2, M, q // M) / M
    for got, p in ((g_up, r_up), (g_dn, r_dn)):
        ref = np.einsum("sam,samk->smk", Y4, p.reshape(-1, M, q // M, M)).reshape(-1, q)
        assert np.allclose(got, ref, rtol=1e-13, atol=0.0)


def test_chain_advance_is_the_einsum(grid):
    rng = grid[0]
    S, M, q = 2, 4, 4**3
    Y = rng.random((S, q))
    Y[0, :5] = 0.0
    up, dn = rng.random((S, q * M)), rng.random((S, q * M)) * 0.3
    g_up, g_dn = np.full((S, q), np.nan), np.full((S, q), np.nan)
    K.chain_advance(Y, up, dn, M, g_up, g_dn)
    Y4 = Y.reshape(S, M, q // M) / M
    for got, p in ((g_up, up), (g_dn, dn)):
        ref = np.einsum("sam,samk->smk", Y4, p.reshape(-1, M, q // M, M)).reshape(-1, q)
        assert np.allclose(got, ref, rtol=1e-13, atol=0.0)


def test_mixture_tails_is_the_weighted_reads(grid):
    rng, cdf, sf, v0, dv = grid
    xb, wb = rng.uniform(-0.2, 0.2, 8), rng.random(8)
    wb /= wb.sum()
    out = np.empty((2, cdf.size))
    for r in (0.3, -0.6, 0.95):
        K.mixture_tails(cdf, sf, xb, wb, r, v0, dv, out)
        x = (v0 + dv * np.arange(cdf.size))[None, :] - r * xb[:, None]
        x /= np.sqrt(1.0 - r * r)
        assert np.allclose(out[0], wb @ _at(cdf, x, v0, dv), rtol=1e-12, atol=1e-16)
        assert np.allclose(out[1], wb @ _at(sf, x, v0, dv), rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("N", [1, 2])
def test_chain_shift_is_the_numpy_state_update(grid, N):
    rng = grid[0]
    S, M, q = 3**N, 4, 4**3
    zero = (S - 1) // 2
    keep = np.arange(S) != zero
    Y = rng.random((S, q))
    Y[zero] = 0.0
    g_up, g_dn = rng.random((S - 1, q)) * 0.01, rng.random((S - 1, q)) * 0.01
    rowmap = np.cumsum(keep) - 1
    rowmap[zero] = -1
    out = np.full((S, q), np.nan)
    K.chain_shift(Y, g_up, g_dn, rowmap, M, S // 3, out)
    G_up, G_dn = np.zeros((S, q)), np.zeros((S, q))
    G_up[keep], G_dn[keep] = g_up, g_dn
    g_all = np.repeat((Y.reshape(S, M, q // M) / M).sum(axis=1), M, axis=1)
    y = np.zeros((S // 3, 3, q))
    for digit, f in zip((1, 2, 0), (g_all - G_up - G_dn, G_up, G_dn)):
        y[:, digit, :] = f.reshape(3, S // 3, q).sum(axis=0)
    assert np.allclose(out, y.reshape(S, q), rtol=1e-13, atol=1e-17)
