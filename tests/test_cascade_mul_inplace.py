"""``channels.cascading._mul`` (and the star product's sums) written in place (issue 35): bit
for bit the expressions they replaced (``acc = acc + x[i, k] * y[k, j]``, a temporary per
operation), over shapes, views of larger blocks, special values and real inputs."""

from __future__ import annotations

import numpy as np
import pytest

from channels.cascading import _connect, _mul


def _old_mul(x, y):
    out = np.empty((x.shape[0], y.shape[1], x.shape[2]), dtype=complex)
    for i in range(x.shape[0]):
        for j in range(y.shape[1]):
            acc = x[i, 0] * y[0, j]
            for k in range(1, x.shape[1]):
                acc = acc + x[i, k] * y[k, j]
            out[i, j] = acc
    return out


def _c(rng, *shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


@pytest.mark.parametrize("n,m,k", [(1, 1, 1), (2, 2, 2), (2, 1, 2), (1, 2, 1), (2, 2, 1), (3, 3, 3), (4, 4, 4)])
def test_mul_in_place_is_the_old_expression_bit_for_bit(n, m, k):
    rng = np.random.default_rng(n * 100 + m * 10 + k)
    F = 1001
    x, y = _c(rng, n, m, F), _c(rng, m, k, F)
    x.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e308 + 1e308j, 1e-320]
    y.flat[:4] = [-0.0 - 0.0j, 1e308, np.nan + 1j, 0.0]
    with np.errstate(all="ignore"):
        got, ref = _mul(x, y), _old_mul(x, y)
    assert got.tobytes() == ref.tobytes()


def test_mul_of_block_views_and_real_inputs_bit_for_bit():
    rng = np.random.default_rng(5)
    F = 777
    big = _c(rng, 4, 4, F)  # the star product's blocks: views of a (2N, 2N, F) array
    x, y = big[:2, 2:], big[2:, :2]
    assert _mul(x, y).tobytes() == _old_mul(x, y).tobytes()
    xr = -rng.random((2, 2, F))  # real factors: products of reals stored into complex
    xr[0, 0, :3] = [np.inf, -0.0, 0.0]
    with np.errstate(all="ignore"):
        for a, b in ((xr, big[:2, :2]), (big[:2, :2], xr), (xr, xr)):
            assert _mul(a, b).tobytes() == _old_mul(a, b).tobytes()


def _old_tail(a21, a22, z):
    """``cascading._tail`` before issue 35's in-place sums."""
    from channels.cascading import _inv

    n = z.shape[0] // 2
    b11, b12, b21, b22 = z[:n, :n], z[:n, n:], z[n:, :n], z[n:, n:]
    y = -_old_mul(a22, b11)
    for i in range(n):
        y[i, i] += 1.0
    y = _inv(y)
    y_a21 = _old_mul(y, a21)
    y_a22b12 = _old_mul(y, _old_mul(a22, b12))
    return _old_mul(b21, y_a21), b22 + _old_mul(b21, y_a22b12), y_a21, y_a22b12


def _old_connect(x, z):
    n = z.shape[0] // 2
    s21, s22, y_a21, y_a22b12 = _old_tail(x[n:, :n], x[n:, n:], z)
    b11, b12 = z[:n, :n], z[:n, n:]
    out = np.empty_like(x, dtype=complex)
    out[:n, :n] = x[:n, :n] + _old_mul(x[:n, n:], _old_mul(b11, y_a21))
    out[:n, n:] = _old_mul(x[:n, n:], b12 + _old_mul(b11, y_a22b12))
    out[n:, :n] = s21
    out[n:, n:] = s22
    return out


@pytest.mark.parametrize("ports", [2, 4, 8])
def test_star_product_is_the_old_one_bit_for_bit(ports):
    from channels.cascading import _tail

    rng = np.random.default_rng(9 + ports)
    a, b = _c(rng, ports, ports, 501) * 0.4, _c(rng, ports, ports, 501) * 0.4
    assert _connect(a, b).tobytes() == _old_connect(a, b).tobytes()
    n = ports // 2
    for got, ref in zip(_tail(a[n:, :n], a[n:, n:], b), _old_tail(a[n:, :n], a[n:, n:], b)):
        assert got.tobytes() == ref.tobytes()
