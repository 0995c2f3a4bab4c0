"""PAM4 log-likelihood ratios for the inner code's Chase decoder (fec.hamming.pam4_llr):
the kernel against its numpy reference and against the Gaussian densities summed directly.

The README's concatenated threshold spends its time here (five points of 200,000 words):
the kernel made it several times faster, and the old path's exp underflowed to infinite
LLRs at small noise, which the Chase decoder refuses (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fec.hamming import SFEC, pam4_llr

LEVELS = np.array([-3.0, -1.0, 1.0, 3.0])
GRAY = np.array([[0, 0], [0, 1], [1, 1], [1, 0]])


def _direct(y: np.ndarray, sigma: float) -> np.ndarray:
    """log(sum of the densities of the levels whose bit is 0 / of those where it is 1)."""
    pdf = stats.norm.pdf(y[:, None], LEVELS, sigma)
    out = np.empty((y.size, 2))
    for j in (0, 1):
        out[:, j] = np.log(pdf[:, GRAY[:, j] == 0].sum(1) / pdf[:, GRAY[:, j] == 1].sum(1))
    return out


@pytest.mark.parametrize("sigma", [0.2, 0.38, 1.0, 3.0])
def test_the_kernel_is_the_numpy_path_and_the_densities(sigma):
    bits = np.random.default_rng(3).integers(0, 2, (200, 128), dtype=np.uint8)
    fast = pam4_llr(bits, sigma, np.random.default_rng(4))
    slow = pam4_llr(bits, sigma, np.random.default_rng(4), kernel=False)
    assert fast.shape == bits.shape
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
    # the same noise drawn again gives the received samples; their LLRs from the densities
    pairs = bits.reshape(-1, 2)
    idx = np.array([[0, 1], [3, 2]])[pairs[:, 0], pairs[:, 1]]
    y = LEVELS[idx] + np.random.default_rng(4).normal(0.0, sigma, idx.shape)
    np.testing.assert_allclose(fast.reshape(-1, 2), _direct(y, sigma), rtol=1e-9, atol=1e-9)


def test_small_noise_gives_finite_llrs_the_chase_decoder_takes():
    c = SFEC.encode(np.random.default_rng(5).integers(0, 2, (100, 120), dtype=np.uint8))
    for kernel in (True, False):
        llr = pam4_llr(c, 0.05, np.random.default_rng(6), kernel=kernel)
        assert np.all(np.isfinite(llr))
        assert np.array_equal(SFEC.decode_chase(llr).words, c)
