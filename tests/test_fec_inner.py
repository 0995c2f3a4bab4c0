"""The inner code of 802.3dj's 200G-per-lane optics (fec.hamming): extended Hamming
(128,120), bit for bit with galois's BCH(127,120), SECDED and Chase-2, the closed form
against Monte Carlo, and the concatenated threshold under KP4."""

from itertools import combinations

import numpy as np
import pytest

import fec
from fec import FecError
from fec.hamming import (
    SFEC,
    HammingCode,
    concatenated_threshold,
    failure_profile,
    hard_failure_profile,
    inner_point,
    outer_cer,
    pam4_llr,
)

RNG = np.random.default_rng(7)


def test_the_code_is_galois_bch_127_120_extended_bit_for_bit():
    galois = pytest.importorskip("galois")
    GF = galois.GF(2**7, irreducible_poly=0x89)
    bch = galois.BCH(127, 120, extension_field=GF)
    assert str(bch.generator_poly) == "x^7 + x^3 + 1"
    m = RNG.integers(0, 2, (500, 120), dtype=np.uint8)
    c = SFEC.encode(m)
    assert np.array_equal(c[:, :127], np.array(bch.encode(galois.GF2(m))))
    assert np.all(c.sum(axis=1) % 2 == 0)  # the overall even parity
    assert np.array_equal(c, SFEC.encode(m, kernel=False))  # the kernel is the matrix product
    assert (SFEC.n, SFEC.k) == (128, 120) and SFEC.rate == pytest.approx(120 / 128)


def test_every_single_error_corrected_every_double_detected():
    c = SFEC.encode(RNG.integers(0, 2, (1, 120), dtype=np.uint8))[0]
    singles = np.tile(c, (128, 1))
    singles[np.arange(128), np.arange(128)] ^= 1
    r = SFEC.decode_hard(singles)
    assert np.all(r.status == 1) and np.all(r.words == c)
    pairs = np.array(list(combinations(range(128), 2)))
    doubles = np.tile(c, (len(pairs), 1))
    doubles[np.arange(len(pairs)), pairs[:, 0]] ^= 1
    doubles[np.arange(len(pairs)), pairs[:, 1]] ^= 1
    r = SFEC.decode_hard(doubles)
    assert np.all(r.status == 2) and np.array_equal(r.words, doubles)  # detected, left as received
    assert np.array_equal(SFEC.decode_hard(c[None]).messages[0], c[:120])


def test_the_kernel_is_the_numpy_decoder():
    c = SFEC.encode(RNG.integers(0, 2, (4000, 120), dtype=np.uint8))
    noisy = c ^ (RNG.random(c.shape) < 0.01).astype(np.uint8)
    a, b = SFEC.decode_hard(noisy), SFEC.decode_hard(noisy, kernel=False)
    assert np.array_equal(a.words, b.words) and np.array_equal(a.status, b.status)


def _chase_reference(code, llr, lrp):
    """Chase-2 written out: every test pattern on the lrp least reliable bits, SECDED,
    the decodable candidate of least discrepancy."""
    y = (llr < 0).astype(np.uint8)
    rel = np.abs(llr)
    order = np.argsort(rel, kind="stable")[:lrp]
    best, best_m = y.copy(), np.inf
    for pat in range(1 << lrp):
        t = y.copy()
        for j in range(lrp):
            if pat >> j & 1:
                t[order[j]] ^= 1
        d = code.decode_hard(t[None], kernel=False)
        if d.status[0] == 2:
            continue
        m = rel[d.words[0] != y].sum()
        if m < best_m:
            best, best_m = d.words[0], m
    return best


def test_chase_is_the_written_out_algorithm():
    c = SFEC.encode(RNG.integers(0, 2, (300, 120), dtype=np.uint8))
    llr = pam4_llr(c, 0.42, RNG)
    got = SFEC.decode_chase(llr, 2).words
    for i in range(300):
        assert np.array_equal(got[i], _chase_reference(SFEC, llr[i], 2))


def test_hard_decision_monte_carlo_agrees_with_the_closed_form():
    p = inner_point(SFEC, 0.35, 40_000, "hard", seed=3)
    want = SFEC.hard_ber_out(p.raw_ber.value)
    assert p.ber_out.value == pytest.approx(want, rel=0.10)
    # a word with one error is corrected: the output is far below the input
    assert p.ber_out.high < p.raw_ber.low / 3


def test_chase_beats_hard_decision_on_the_same_channel():
    h = inner_point(SFEC, 0.36, 20_000, "hard", seed=5)
    s = inner_point(SFEC, 0.36, 20_000, "chase", seed=5)
    assert s.raw_ber.value == h.raw_ber.value  # the same noise
    assert s.ber_out.high < h.ber_out.low / 2


def test_concatenated_threshold_with_hard_decisions():
    need = fec.required_ber(fec.KP4, 1e-13)
    one, four = (concatenated_threshold(decoder="hard", interleave=i) for i in (1, 4))
    assert one["outer_threshold_ber"] == pytest.approx(need)
    # at the threshold the compound analysis meets the target
    assert outer_cer(hard_failure_profile(SFEC, one["threshold_ber"])) == pytest.approx(1e-13, rel=1e-4)
    # were the inner output's errors independent, SECDED would need only its output at KP4's threshold
    assert SFEC.hard_ber_out(one["independent_threshold_ber"]) == pytest.approx(need, rel=1e-6)
    # an inner word fails with several symbols at once: interleaving outer codewords spreads them
    assert need < one["threshold_ber"] < four["threshold_ber"] < one["independent_threshold_ber"]


@pytest.mark.parametrize("ways", [1, 4])
def test_the_inner_code_through_the_outer_decoder(ways):
    # inner-decoded bits cut into KP4 symbols (``ways`` codewords symbol-interleaved) and
    # decoded by the real RS decoder, against the compound analysis of outer_cer: an inner
    # word fails with a few symbol errors at once, so errors are not independent
    n_cw = 800
    words = -(-n_cw * 5440 // 120)
    c = SFEC.encode(RNG.integers(0, 2, (words, 120), dtype=np.uint8))
    out = SFEC.decode_chase(pam4_llr(c, 0.42, RNG)).words
    err = (out[:, :120] != c[:, :120]).reshape(-1)[: n_cw * 5440]
    pats = fec.interleave.bit_errors_to_patterns(np.flatnonzero(err), n_cw, fec.KP4, ways)
    mc = fec.KP4.decode_errors(pats).uncorrectable.mean()
    prof, raw = failure_profile(SFEC, 0.42, 60_000, "chase", seed=11)
    ana = outer_cer(prof, interleave=ways)
    tol = 3 * np.sqrt(ana / n_cw)
    assert 0.6 * ana - tol <= mc <= ana + tol  # the analysis bounds it, and not loosely
    indep = fec.random_errors(fec.KP4, err.mean()).cer
    if ways == 1:  # independent errors at the same BER would promise far fewer failures
        assert indep < mc / 2
    assert 0.005 < raw < 0.008  # the channel's raw BER at this noise


def test_hard_profile_carries_the_closed_form_ber():
    for p in (5e-4, 2e-3, 6e-3):
        q = hard_failure_profile(SFEC, p)
        assert q.sum() == pytest.approx(1.0)
        assert (q * np.arange(q.size)).sum() / 120 == pytest.approx(SFEC.hard_ber_out(p), rel=1e-9)
    # with everything in one word's errors counted as separate symbols and independent
    # words, a profile of single errors is the independent-error analysis
    p_s = 1e-3
    q = np.array([1 - 12 * p_s, 12 * p_s])
    assert outer_cer(q) == pytest.approx(fec.random_errors(fec.KP4, 1 - (1 - p_s) ** (1 / 10)).cer, rel=0.05)


def test_latency_and_bad_input():
    assert SFEC.latency_s(212.5e9) == pytest.approx(128 / 212.5e9 + 3e-9)
    with pytest.raises(FecError, match="not a primitive"):
        HammingCode(7, 0x81)
    with pytest.raises(FecError, match="last axis 120"):
        SFEC.encode(np.zeros((2, 119), dtype=np.uint8))
    with pytest.raises(FecError, match="bits"):
        SFEC.encode(np.full((1, 120), 2))
    with pytest.raises(FecError, match="lrp must be at most 8"):
        SFEC.decode_chase(np.ones((1, 128)), 9)
    with pytest.raises(FecError, match="decoder"):
        inner_point(SFEC, 0.3, 10, "viterbi")
    with pytest.raises(FecError, match="at most 1e8"):
        inner_point(SFEC, 0.3, 10**9)
    with pytest.raises(FecError, match="pmf"):
        outer_cer([0.5, 0.6])
    with pytest.raises(FecError, match="interleave"):
        outer_cer([1.0], interleave=65)
