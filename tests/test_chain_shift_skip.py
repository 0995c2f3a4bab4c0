"""``chain_shift`` skips a state with no mass and nothing erring (issue 35): its output
bit for bit the old kernel's, every state run (here in plain Python, the same operations
in the same order), with states all zero, zero mass but errors, NaN, and live states."""

from __future__ import annotations

import numpy as np
import pytest

from phy.engines import _chain_kernels as K


def _old_chain_shift(Y, g_up, g_dn, rowmap, M, top):
    """The kernel before the skip, operation for operation."""
    S, q = Y.shape
    qm = q // M
    out = np.zeros((S, q))
    for s in range(S):
        ga = [0.0] * qm
        for m in range(qm):
            acc = 0.0
            for a in range(M):
                acc += Y[s, a * qm + m] / M
            ga[m] = acc
        r, rest = rowmap[s], s % top
        for j in range(q):
            g = ga[j // M]
            if r >= 0:
                u, d = g_up[r, j], g_dn[r, j]
                out[3 * rest + 1, j] += g - u - d
                out[3 * rest + 2, j] += u
                out[3 * rest, j] += d
            else:
                out[3 * rest + 1, j] += g
    return out


def _case(rng, N, zero_rows, err_rows=(), nan=False):
    S, M, q = 3**N, 4, 4**3
    zero = (S - 1) // 2
    keep = np.arange(S) != zero
    rowmap = np.cumsum(keep) - 1
    rowmap[zero] = -1
    Y = rng.random((S, q)) ** 3
    Y[zero] = 0.0
    g_up, g_dn = rng.random((S - 1, q)) * 0.01, rng.random((S - 1, q)) * 0.01
    for s in zero_rows:  # no mass: nothing errs from it either (as chain_step makes it)
        Y[s] = 0.0
        if rowmap[s] >= 0:
            g_up[rowmap[s]], g_dn[rowmap[s]] = 0.0, 0.0
    for s in err_rows:  # no mass, yet errors given: must not be skipped
        Y[s] = 0.0
    if nan:
        Y[zero_rows[0], 5] = np.nan
    return Y, g_up, g_dn, rowmap, M, S // 3


@pytest.mark.parametrize("N", [1, 2])
@pytest.mark.parametrize("kind", ["live", "zero", "zero_and_errs", "nan"])
def test_chain_shift_with_skips_is_the_old_kernel_bit_for_bit(N, kind):
    rng = np.random.default_rng(11 + N)
    S = 3**N
    zr = [s for s in range(S) if s % 2 == 0]
    args = {"live": lambda: _case(rng, N, []),
            "zero": lambda: _case(rng, N, zr),
            "zero_and_errs": lambda: _case(rng, N, zr[:1], err_rows=[s for s in range(1, S, 2) if s != (S - 1) // 2]),
            "nan": lambda: _case(rng, N, zr, nan=True)}[kind]()
    Y, g_up, g_dn, rowmap, M, top = args
    out = np.full(Y.shape, 7.0)
    K.chain_shift(Y, g_up, g_dn, rowmap, M, top, out)
    ref = _old_chain_shift(Y, g_up, g_dn, rowmap, M, top)
    assert out.tobytes() == ref.tobytes()
    if kind == "zero_and_errs":  # the errors of the massless states reached the output
        assert (ref[:, :] != 0).sum() > 0 and np.signbit(ref).any()
