"""178A's MMSE kernel's small dense algebra (issue 35, second pass): the Cholesky factor
keeps its diagonal as reciprocals, so the factor and the solves multiply instead of divide.
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
    assert np.array_equal(np.tril(L1), np.tril(L2))


def test_not_positive_definite_is_refused():
    Q = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    assert not _chol(Q, np.zeros((2, 2)), 2)
    assert not _chol(np.array([[0.0]]), np.zeros((1, 1)), 1)
