"""Test signals: PRBS generators, Gray PAM4, the 1/(1+D) precoder, PRBS13Q and SSPRQ."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import phy
from fec.interleave import GRAY_PAM4, postcoder_errors
from phy import signals as S

ORDERS = sorted(S.PRBS_POLYNOMIALS)


def reference_lfsr(order: int, seed: int, n: int) -> list[int]:
    """Slow reference: the 802.3 register S0..S(n-1) as a list, stepped one bit at a time."""
    reg = [(seed >> i) & 1 for i in range(order)]  # reg[i] = Si
    out = []
    for _ in range(n):
        fb = 0
        for e in S.PRBS_POLYNOMIALS[order]:
            if e:
                fb ^= reg[e - 1]
        out.append(fb ^ (order == 31))  # 802.3 Figure 49-9 inverts PRBS31 only
        reg = [fb] + reg[:-1]
    return out


def symbols(text: str) -> np.ndarray:
    return np.array([int(c) for c in text])


# ----------------------------------------------------------------------------- PRBS


def test_polynomials_are_the_standard_ones():
    assert S.PRBS_POLYNOMIALS == {
        7: (7, 6, 0),
        9: (9, 5, 0),
        11: (11, 9, 0),
        13: (13, 12, 2, 1, 0),
        15: (15, 14, 0),
        23: (23, 18, 0),
        31: (31, 28, 0),
    }


def _mulmod(a: int, b: int, p: int, n: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a >> n & 1:
            a ^= p
    return r


def _powmod_x(e: int, p: int, n: int) -> int:
    r, base = 1, 2
    while e:
        if e & 1:
            r = _mulmod(r, base, p, n)
        base = _mulmod(base, base, p, n)
        e >>= 1
    return r


def _prime_factors(q: int) -> set[int]:
    out, d = set(), 2
    while d * d <= q:
        while q % d == 0:
            out.add(d)
            q //= d
        d += 1
    return out | ({q} if q > 1 else set())


@pytest.mark.parametrize("order", ORDERS)
def test_every_polynomial_is_primitive(order):
    # x has order exactly 2^n - 1 modulo p(x): p is primitive. The short check for PRBS31,
    # whose period is too long to run here; an algebraic oracle independent of the generator.
    p = sum(1 << e for e in S.PRBS_POLYNOMIALS[order])
    q = (1 << order) - 1
    assert _powmod_x(q, p, order) == 1
    for f in _prime_factors(q):
        assert _powmod_x(q // f, p, order) != 1


@pytest.mark.parametrize("order", [o for o in ORDERS if o <= 23])
def test_period_is_exactly_2n_minus_1_and_balanced(order):
    g = S.Prbs(order)
    q = g.period
    assert q == 2**order - 1
    b = g.bits(q)
    assert g.state == 2**order - 1  # back at the seed after one period
    assert np.count_nonzero(b) == 2 ** (order - 1)  # one more one than zeros
    # every non-zero n-bit window once per period: nothing repeats earlier
    ext = np.concatenate([b, b[: order - 1]]).astype(np.int64)
    win = np.zeros(q, dtype=np.int64)
    for j in range(order):
        win |= ext[j : j + q] << j
    assert np.unique(win).size == q and win.min() > 0


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("seed", [None, 1, 0b1011])
def test_generator_matches_the_slow_reference(order, seed):
    ref = reference_lfsr(order, 2**order - 1 if seed is None else seed, 300)
    np.testing.assert_array_equal(S.prbs(order, 300, seed), ref)


def test_prbs7_first_bits():
    # x^7 + x^6 + 1 from all ones: six zeros first, and a period ends on the seed (7 ones)
    b = S.prbs(7, 3 * 127)
    assert "".join(map(str, b[:32])) == "00000010000011000010100011110010"
    np.testing.assert_array_equal(b, reference_lfsr(7, 127, 3 * 127))
    assert np.all(b[120:127] == 1) and np.array_equal(b[:127], b[127:254])


def test_prbs31_recurrence_and_inversion():
    c = S.prbs(31, 200_000, seed=0x12345678).astype(np.int64)
    # inverted output: c[k] = 1 ^ c[k-31] ^ c[k-28]
    np.testing.assert_array_equal(c[31:], 1 ^ c[:-31] ^ c[3:-28])
    assert abs(c.mean() - 0.5) < 0.005


def test_published_prbs13q_and_prbs31q_examples():
    # IEEE 802.3-2022 120.5.11.2.1 and 120.5.11.2.2 examples, as quoted by public
    # implementations: PRBS13 from S0..S12 = 0000010101011, PRBS31 from all ones.
    q13 = "1031320220111130103121231210012102121023131112"
    q31 = "22222222222222012222222222220002222222222201201222"
    np.testing.assert_array_equal(S.prbs13q()[: len(q13)], symbols(q13))
    np.testing.assert_array_equal(S.gray_pam4(S.prbs(31, 2 * len(q31))), symbols(q31))


@settings(max_examples=40, deadline=None)
@given(
    order=st.sampled_from(ORDERS),
    seed=st.integers(1, 2**31 - 1),
    chunks=st.lists(st.integers(0, 700), min_size=1, max_size=8),
)
def test_chunked_generation_equals_one_call(order, seed, chunks):
    seed = seed % (2**order - 1) + 1
    whole = S.prbs(order, sum(chunks), seed)
    g = S.Prbs(order, seed)
    parts = [g.bits(n) for n in chunks]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # the state is a seed that resumes the stream
    np.testing.assert_array_equal(S.Prbs(order, g.state).bits(50), S.prbs(order, sum(chunks) + 50, seed)[-50:])


def test_prbs_output_type():
    b = S.prbs(9, 10)
    assert b.dtype == np.uint8 and b.shape == (10,)
    assert S.prbs(9, 0).shape == (0,)


# ----------------------------------------------------------------------------- Gray PAM4


def test_gray_map_is_the_8023_map_and_reuses_fec():
    np.testing.assert_array_equal(S.gray_pam4([0, 0, 0, 1, 1, 1, 1, 0]), [0, 1, 2, 3])
    np.testing.assert_array_equal(S.pam4_bits([0, 1, 2, 3]), [0, 0, 0, 1, 1, 1, 1, 0])
    v = GRAY_PAM4[np.arange(4)]
    np.testing.assert_array_equal(S.pam4_bits(np.arange(4)).reshape(4, 2), np.c_[v >> 1, v & 1])
    # adjacent levels differ in exactly one bit
    bits = S.pam4_bits(np.arange(4)).reshape(4, 2)
    assert all(np.sum(bits[k] != bits[k + 1]) == 1 for k in range(3))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 200))
def test_gray_round_trip(seed, m):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, (3, 2 * m))
    lv = S.gray_pam4(bits)
    assert lv.dtype == np.int8 and lv.shape == (3, m)
    np.testing.assert_array_equal(S.pam4_bits(lv), bits)
    np.testing.assert_array_equal(S.gray_pam4(S.pam4_bits(lv)), lv)


# ----------------------------------------------------------------------------- precoder


def _precode_loop(x, y_prev=0):
    y = []
    for v in x:
        y_prev = (v - y_prev) % 4
        y.append(y_prev)
    return y


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 300), initial=st.integers(0, 3), cut=st.integers(0, 300))
def test_precoder_definition_round_trip_and_chunks(seed, n, initial, cut):
    x = np.random.default_rng(seed).integers(0, 4, n)
    y = S.precode(x, initial)
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, _precode_loop(x, initial))
    np.testing.assert_array_equal(S.postcode(y, initial), x)
    # chunked: the precoder carries its last output, the postcoder its last input
    c = min(cut, n)
    y1 = S.precode(x[:c], initial)
    y2 = S.precode(x[c:], y1[-1] if c else initial)
    np.testing.assert_array_equal(np.concatenate([y1, y2]), y)
    x2 = S.postcode(y[c:], y[c - 1] if c else initial)
    np.testing.assert_array_equal(np.concatenate([S.postcode(y[:c], initial), x2]), x)


def test_precoder_batches_with_per_row_initial():
    x = np.random.default_rng(1).integers(0, 4, (3, 50))
    init = np.array([0, 2, 3])
    y = S.precode(x, init)
    for r in range(3):
        np.testing.assert_array_equal(y[r], _precode_loop(x[r], init[r]))
    np.testing.assert_array_equal(S.postcode(y, init), x)


@pytest.mark.parametrize("err", [1, 2, 3])
def test_an_isolated_detector_error_becomes_two(err):
    x = np.random.default_rng(7).integers(0, 4, 64)
    y = S.precode(x)
    bad = y.astype(np.int64)
    bad[20] = (bad[20] + err) % 4
    diff = np.flatnonzero(S.postcode(bad) != x)
    np.testing.assert_array_equal(diff, [20, 21])
    # and the same two errors as the fec package's postcoder error model
    u, e = postcoder_errors([20], [err])
    np.testing.assert_array_equal(u, diff)
    np.testing.assert_array_equal(e, np.mod(S.postcode(bad)[diff] - x[diff], 4))


def test_a_burst_of_alternating_errors_becomes_two():
    x = np.random.default_rng(8).integers(0, 4, 64)
    bad = S.precode(x).astype(np.int64)
    bad[10:17] = (bad[10:17] + np.array([1, -1, 1, -1, 1, -1, 1])) % 4  # a DFE-style burst
    np.testing.assert_array_equal(np.flatnonzero(S.postcode(bad) != x), [10, 17])


# ----------------------------------------------------------------------------- 802.3 patterns


def test_prbs13q_is_two_prbs13_periods_gray_coded():
    q = S.prbs13q()
    assert q.shape == (8191,) and q.dtype == np.int8
    b = S.prbs(13, 8191, seed=0b1101010100000)
    np.testing.assert_array_equal(S.pam4_bits(q), np.concatenate([b, b]))
    # every cyclic pair of bits once: 00 can follow the 12-zero run only 2^11 - 1 times
    np.testing.assert_array_equal(np.bincount(q, minlength=4), [2047, 2048, 2048, 2048])
    # another seed, same pattern at another phase
    q2 = S.prbs13q(seed=1)
    assert not np.array_equal(q2, q)
    np.testing.assert_array_equal(np.sort(np.bincount(q2)), [2047, 2048, 2048, 2048])


def test_ssprq_matches_the_published_sequence():
    s = S.ssprq()
    assert s.shape == (65535,) and s.dtype == np.int8
    # sha256 of IEEE's machine-readable SSPRQ_sequence.csv (802.3 Clause 120) as uint8 levels
    # 0..3, with its level counts and first symbols, as two public implementations give them.
    digest = hashlib.sha256(s.astype(np.uint8).tobytes()).hexdigest()
    assert digest == "f17f5effb8e68863e5355258186456e1c3b3c48b5519c1a0c46dac855fae3582"
    np.testing.assert_array_equal(np.bincount(s), [15215, 17553, 17552, 15215])
    head = "2222222222222132222222222221221222222222213213222222222122222122"
    np.testing.assert_array_equal(s[: len(head)], symbols(head))


def test_ssprq_structure():
    s = S.ssprq()
    # the second repetition is the first, inverted
    np.testing.assert_array_equal(s[16384:32768], 3 - s[:16384])
    # its first section is PRBS31 (inverted output) from the seed 0x00000002
    np.testing.assert_array_equal(S.pam4_bits(s[:5462]), S.prbs(31, 10924, 0x00000002))


# ----------------------------------------------------------------------------- levels, symbols


@pytest.mark.parametrize("r", [1.0, 0.95, 0.5])
def test_pam_levels_and_rlm(r):
    lv = S.pam_levels("pam4", r)
    np.testing.assert_allclose(lv, [-1, -r / 3, r / 3, 1])
    # IEEE 802.3 120D.3.1.2: R_LM from the four levels gives back r
    mid = (lv[0] + lv[3]) / 2
    es1, es2 = (lv[1] - mid) / (lv[0] - mid), (lv[2] - mid) / (lv[3] - mid)
    assert min(3 * es1, 3 * es2, 2 - 3 * es1, 2 - 3 * es2) == pytest.approx(r)
    np.testing.assert_array_equal(S.pam_levels("NRZ"), [-1.0, 1.0])


def test_random_symbols():
    a = S.random_symbols(40_000, "pam4", np.random.default_rng(3))
    assert a.dtype == np.int8 and a.shape == (40_000,)
    np.testing.assert_array_equal(a, S.random_symbols(40_000, "pam4", np.random.default_rng(3)))
    counts = np.bincount(a, minlength=4)
    assert counts.size == 4 and np.all(np.abs(counts - 10_000) < 400)  # about 4 sigma
    assert set(np.unique(S.random_symbols(1000, "nrz", np.random.default_rng(4)))) == {0, 1}


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: S.Prbs(8), "PRBS order must be one of"),
        (lambda: S.Prbs(7.0), "PRBS order must be one of"),
        (lambda: S.Prbs(7, seed=0), r"PRBS7 seed \(0 locks the register\) must be an integer from 1 to 127, got 0"),
        (lambda: S.Prbs(7, seed=128), "must be an integer from 1 to 127, got 128"),
        (lambda: S.Prbs(7, seed=1.5), "seed .* must be an integer"),
        (lambda: S.prbs(7, -1), "n must be an integer >= 0"),
        (lambda: S.gray_pam4([0, 1, 1]), "even number of bits"),
        (lambda: S.gray_pam4([0, 2]), r"bits must lie in 0 \.\. 1"),
        (lambda: S.gray_pam4([0.0, 1.0]), "bits must hold integers"),
        (lambda: S.pam4_bits([4]), r"PAM4 levels must lie in 0 \.\. 3"),
        (lambda: S.precode([0, 5]), r"levels must lie in 0 \.\. 3"),
        (lambda: S.precode([0, 1], initial=4), r"initial must lie in 0 \.\. 3"),
        (lambda: S.postcode([0, -1]), r"levels must lie in 0 \.\. 3"),
        (lambda: S.prbs13q(seed=0), "seed"),
        (lambda: S.pam_levels("pam8"), "modulation must be 'pam4' or 'nrz'"),
        (lambda: S.pam_levels("pam4", 0.0), r"level_mismatch \(R_LM\) must be > 0"),
        (lambda: S.pam_levels("pam4", 1.2), r"level_mismatch \(R_LM\) must be <= 1"),
        (lambda: S.pam_levels("pam4", "x"), r"level_mismatch \(R_LM\) must be a number"),
        (lambda: S.random_symbols(5, "pam5", np.random.default_rng()), "modulation must be"),
        (lambda: S.random_symbols(5, "pam4", 3), "rng must be a numpy.random.Generator"),
        (lambda: S.random_symbols(2.5, "pam4", np.random.default_rng()), "n must be an integer"),
    ],
)
def test_bad_input_raises_config_error(call, message):
    with pytest.raises(phy.ConfigError, match=message):
        call()
    assert issubclass(phy.ConfigError, ValueError)
