"""Interleaving and the lane-to-FEC-symbol mapping (Gray PAM4, precoder)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fec
from fec import interleave as IL


@settings(max_examples=30, deadline=None)
@given(ways=st.sampled_from([1, 2, 4]), n=st.integers(1, 40), seed=st.integers(0, 1000))
def test_interleave_round_trip_and_order(ways, n, seed):
    cw = np.random.default_rng(seed).integers(0, 1024, (3, ways, n))
    s = IL.interleave(cw)
    assert s.shape == (3, ways * n)
    np.testing.assert_array_equal(IL.deinterleave(s, ways), cw)
    # stream position j*I + i holds symbol j of codeword i
    assert s[1, 0] == cw[1, 0, 0] and (ways == 1 or s[1, 1] == cw[1, 1, 0])


@pytest.mark.parametrize("ways", [1, 2, 4])
@pytest.mark.parametrize("burst", [1, 3, 7, 16])
def test_a_burst_of_b_symbols_puts_ceil_b_over_i_into_each_codeword(ways, burst):
    code = fec.KP4
    start = 101 * ways + 1  # a symbol boundary, off the block start
    bits = np.arange(start * code.m, (start + burst) * code.m)
    pats = IL.bit_errors_to_patterns(bits, 2 * ways, code, ways)
    per_cw = np.count_nonzero(pats, axis=1)
    assert per_cw.max() == -(-burst // ways)
    assert per_cw.sum() == burst
    assert np.all(pats[pats != 0] == 1023)  # every bit of each symbol flipped


def test_bit_mapping_matches_a_slow_reference():
    code = fec.KR4
    rng = np.random.default_rng(2)
    ways, n_cw = 2, 4
    bits = np.unique(rng.integers(0, n_cw * code.n * code.m, 300))
    got = IL.bit_errors_to_patterns(bits, n_cw, code, ways)
    ref = np.zeros((n_cw, code.n), dtype=np.int64)
    for b in bits:
        sym, bit = divmod(int(b), code.m)
        block, within = divmod(sym, ways * code.n)
        ref[block * ways + within % ways, within // ways] ^= 1 << (code.m - 1 - bit)
    np.testing.assert_array_equal(got, ref)


def test_gray_pam4_flips_one_bit_per_level_step():
    g = IL.GRAY_PAM4
    for a in range(3):
        assert bin(g[a] ^ g[a + 1]).count("1") == 1
    np.testing.assert_array_equal(IL.gray_bits([0, 1, -1, 2, 3, -2]), [0, 1, 1, 2, 1, 2])


def test_precoder_turns_bursts_into_two_errors():
    # an isolated error becomes two
    u, e = IL.postcoder_errors([10], [1])
    np.testing.assert_array_equal(u, [10, 11])
    # an alternating burst (a DFE with a positive first tap) becomes its entry and exit
    u, e = IL.postcoder_errors(np.arange(20, 28), np.where(np.arange(8) % 2 == 0, 1, -1))
    np.testing.assert_array_equal(u, [20, 28])
    # a same-sign burst does not collapse
    u, _ = IL.postcoder_errors(np.arange(5), np.ones(5, dtype=int))
    assert u.size == 6


def test_precoder_against_a_real_precoded_pam4_link():
    """Precode, slice with errors, postcode: the output errors are where postcoder_errors says."""
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, 2000)
    y = np.zeros_like(x)
    prev = 0
    for k, v in enumerate(x):  # Tx: y_k = (x_k - y_(k-1)) mod 4
        y[k] = (v - prev) % 4
        prev = y[k]
    err_ui = np.array([100, 101, 102, 103, 500, 900, 901])
    err = np.array([1, -1, 1, -1, 1, -1, -1])
    yd = y.copy()
    yd[err_ui] = (yd[err_ui] + err) % 4
    xd = (yd + np.r_[0, yd[:-1]]) % 4  # Rx postcoder
    wrong = np.flatnonzero(xd != x)
    u, _ = IL.postcoder_errors(err_ui, err)
    np.testing.assert_array_equal(wrong, u)
    # and the bit errors are those of the Gray map, exactly, given the sent levels
    bits = IL.ui_errors_to_bit_errors(err_ui, err, "pam4", precoded=True, tx_levels=x)
    gx, gd = IL.GRAY_PAM4[x], IL.GRAY_PAM4[xd]
    ref = np.sort(np.concatenate([2 * np.flatnonzero((gx ^ gd) & 2), 2 * np.flatnonzero((gx ^ gd) & 1) + 1]))
    np.testing.assert_array_equal(bits, ref)


def test_bit_stream_entry_point():
    code = fec.KP4
    n_bits = 10 * code.n * code.m + 123
    errs = np.zeros(n_bits, dtype=bool)
    errs[[5, 6, 7000, 7001, 9000]] = True
    r = fec.montecarlo.bit_stream(code, errs, n_bits)
    assert r.codewords == 10 and r.cer.count == 0
    assert r.pre_fec_ser.count == 3  # bits 5 and 6 share a symbol, 7000 and 7001 too
