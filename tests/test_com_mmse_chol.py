"""178A's MMSE kernel's small dense algebra (issue 35, second pass): the Cholesky factor
keeps its diagonal as reciprocals and its transpose above the diagonal, so the factor and the solves multiply instead of divide.
The register_jitable helpers run here as plain Python; their solutions are checked against
numpy's LU solve (a relative bound of 1e-10 on these well-conditioned matrices: the two
differ only in rounding), and the factor against numpy's Cholesky."""

from __future__ import annotations

import numpy as np
import pytest

from phy.engines.com._mmse_kernels import _chol, _chol_solve


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [1, 2, 15])
def test_factor_and_solve_match_numpy(seed, n):
    rng = np.random.default_rng(seed)
    Q = _spd(rng, n)
    Lm = np.zeros((n, n))
    assert _chol(Q, Lm, n)
    L = np.linalg.cholesky(Q)
    np.testing.assert_allclose(np.diag(Lm), 1.0 / np.diag(L), rtol=1e-12)
    np.testing.assert_allclose(np.tril(Lm, -1), np.tril(L, -1), rtol=1e-10, atol=1e-13)
    assert np.array_equal(np.triu(Lm, 1), np.tril(Lm, -1).T)  # the transpose, for the back substitution
    rhs = rng.standard_normal(n)
    x = np.empty(n)
    _chol_solve(Lm, rhs, x, n)
    np.testing.assert_allclose(x, np.linalg.solve(Q, rhs), rtol=1e-10, atol=1e-13)


def test_reads_only_the_lower_triangle():
    rng = np.random.default_rng(7)
    Q = _spd(rng, 6)
    Qj = np.tril(Q) + np.triu(rng.standard_normal((6, 6)), 1)  # junk above the diagonal
    L1, L2 = np.zeros((6, 6)), np.zeros((6, 6))
    assert _chol(Q, L1, 6) and _chol(Qj, L2, 6)
    assert np.array_equal(L1, L2)


def test_not_positive_definite_is_refused():
    Q = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    assert not _chol(Q, np.zeros((2, 2)), 2)
    assert not _chol(np.array([[0.0]]), np.zeros((1, 1)), 1)


@pytest.mark.parametrize("seed", range(3))
def test_fom_by_lags_is_the_quadratic_form(seed):
    """``_fom_of`` sums ``w^T R w`` by the lags of the Toeplitz ``R``: the same FOM as the
    full quadratic form in numpy, within 1e-9 dB (rounding only)."""
    from scipy.linalg import toeplitz

    from phy.engines.com._mmse_kernels import _fom_of

    rng = np.random.default_rng(seed)
    nw, nd = 15, 1
    r = np.exp(-np.arange(nw) / 2.0) * (1 + 0.1 * rng.standard_normal(nw))
    r[0] = 2.0
    h0, w = rng.standard_normal(nw) * 0.1, rng.standard_normal(nw) * 0.3
    Hb, b = rng.standard_normal((nd, nw)) * 0.1, rng.standard_normal(nd) * 0.2
    var_x, r_lm, levels = 5 / 9, 0.95, 4
    mse = var_x * (w @ toeplitz(r) @ w + 1 + b @ b - 2 * w @ h0 - 2 * w @ Hb.T @ b)
    want = 20 * np.log10(r_lm / (levels - 1) / np.sqrt(mse))
    got = _fom_of(r, h0, Hb, w, b, nw, nd, var_x, r_lm, levels)
    assert abs(got - want) < 1e-9
