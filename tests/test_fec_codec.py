"""The Reed-Solomon codec: 802.3 definitions, bit-exact with galois, decoding properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fec
from fec import FecError, RSCode

galois = pytest.importorskip("galois")

GF1024 = galois.GF(2**10, irreducible_poly=0x409)


def _galois(code: RSCode):
    """The same code in galois: the full-length RS(1023, 1023 - 2t) with c = 0, shortened."""
    return galois.ReedSolomon(1023, 1023 - code.parity, field=GF1024, alpha=GF1024(2), c=code.first_root)


def _reference_encode(code: RSCode, msg: np.ndarray) -> np.ndarray:
    """Slow plain-numpy systematic encoder: parity = m(x) x^2t mod g(x) by long division."""
    gf = code.gf
    rem = np.concatenate([msg.astype(np.int64), np.zeros(code.parity, dtype=np.int64)])
    g = code.generator
    for i in range(code.k):
        coef = rem[i]
        if coef:
            rem[i : i + code.parity + 1] ^= gf.mul(coef, g)
    return np.concatenate([msg, rem[code.k :]])


def test_kp4_generator_is_the_802_3_one():
    # DESIGN.md / REFERENCES.md: highest degree first, 1, 575, 552, 187, 230, 552, 1, 108 ... 523
    g = fec.KP4.generator
    assert list(g[:8]) == [1, 575, 552, 187, 230, 552, 1, 108]
    assert list(g[-8:]) == [193, 392, 127, 185, 158, 128, 834, 523]
    assert (fec.KP4.t, fec.KR4.t, fec.LL272.t) == (15, 7, 7)
    assert fec.LL272.k == 258 and fec.LL272.n == 272


@pytest.mark.parametrize("code", [fec.KP4, fec.KR4, fec.LL272], ids=lambda c: c.name)
def test_encoding_is_bit_exact_with_galois(code):
    rng = np.random.default_rng(7)
    msgs = rng.integers(0, 1024, (500, code.k))
    ours = code.encode(msgs)
    theirs = np.asarray(_galois(code).encode(GF1024(msgs)))
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours[:3], np.array([_reference_encode(code, m) for m in msgs[:3]]))
    # every codeword has zero syndromes
    assert not code.syndromes(ours[:50]).any()


@pytest.mark.parametrize("code", [fec.KP4, fec.KR4], ids=lambda c: c.name)
def test_decoding_agrees_with_galois_up_to_t_errors(code):
    rng = np.random.default_rng(11)
    msgs = rng.integers(0, 1024, (8 * (code.t + 1), code.k))
    words = code.encode(msgs)
    nerr = rng.permutation(np.repeat(np.arange(code.t + 1), 8))  # every count of errors up to t, 8 times
    for i, ne in enumerate(nerr):
        pos = rng.choice(code.n, ne, replace=False)
        words[i, pos] ^= rng.integers(1, 1024, ne).astype(np.uint16)
    res = code.decode(words)
    np.testing.assert_array_equal(res.messages, msgs)
    np.testing.assert_array_equal(res.n_corrected, nerr)
    assert not res.failed.any()
    dec, nfix = _galois(code).decode(GF1024(words), errors=True)
    np.testing.assert_array_equal(np.asarray(dec), res.messages)
    np.testing.assert_array_equal(np.asarray(nfix), res.n_corrected)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), which=st.sampled_from(["KP4", "KR4", "small"]))
def test_any_pattern_of_up_to_t_errors_decodes(data, which):
    code = SMALL if which == "small" else fec.NAMED[which]
    q = code.gf.q
    msg = np.array(data.draw(st.lists(st.integers(0, q - 1), min_size=code.k, max_size=code.k)))
    ne = data.draw(st.integers(0, code.t))
    pos = data.draw(st.lists(st.integers(0, code.n - 1), min_size=ne, max_size=ne, unique=True))
    vals = data.draw(st.lists(st.integers(1, q - 1), min_size=ne, max_size=ne))
    word = code.encode(msg)
    word[pos] ^= np.array(vals, dtype=np.uint16)
    res = code.decode(word)
    assert not res.failed and res.n_corrected == ne
    np.testing.assert_array_equal(res.messages, msg)
    pat = np.zeros(code.n, dtype=np.uint16)
    pat[pos] = vals
    pr = code.decode_errors(pat)
    assert pr.weight == ne and not pr.failed and not pr.miscorrected and pr.residual_symbols == 0


SMALL = RSCode(15, 11, m=4, primitive_poly=0x13, name="RS(15,11)")  # GF(16), x^4 + x + 1, t = 2


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_beyond_t_errors_the_decoder_fails_or_miscorrects(data):
    code = SMALL
    msg = np.array(data.draw(st.lists(st.integers(0, 15), min_size=code.k, max_size=code.k)))
    ne = data.draw(st.integers(code.t + 1, code.n))
    pos = data.draw(st.lists(st.integers(0, code.n - 1), min_size=ne, max_size=ne, unique=True))
    vals = data.draw(st.lists(st.integers(1, 15), min_size=ne, max_size=ne))
    sent = code.encode(msg)
    word = sent.copy()
    word[pos] ^= np.array(vals, dtype=np.uint16)
    res = code.decode(word)
    if res.failed:
        return
    # a miscorrection: the decoder found a different codeword within t of what it received
    fixed = word.copy()
    fixed[: code.k] = res.messages
    recoded = code.encode(res.messages)
    assert not np.array_equal(recoded, sent)
    assert np.count_nonzero(recoded != word) <= code.t
    assert np.count_nonzero(recoded != word) == res.n_corrected


def test_measured_miscorrection_rate_matches_the_formula():
    """Uniformly random received words decode (to the wrong codeword) with probability
    V / q^(2t), V the volume of a radius-t sphere: the formula of fec.analysis."""
    code = SMALL
    rng = np.random.default_rng(5)
    pats = rng.integers(0, 16, (200_000, code.n)).astype(np.uint16)
    r = code.decode_errors(pats)
    far = r.weight > code.t
    rate = r.miscorrected[far].mean()
    formula = fec.analysis.miscorrection_probability(code)
    assert formula == pytest.approx((1 + 15 * 15 + 105 * 225) / 16**4)
    est = fec.montecarlo.Estimate.of(int(r.miscorrected[far].sum()), int(far.sum()), 0.999)
    assert est.contains(formula), (rate, formula)
    # within t: always corrected
    assert not (r.failed | r.miscorrected)[~far].any()


def test_decode_and_error_pattern_mode_agree():
    code = fec.KR4
    rng = np.random.default_rng(3)
    msgs = rng.integers(0, 1024, (3000, code.k))
    sent = code.encode(msgs)
    pats = np.zeros_like(sent)
    ne = rng.integers(0, 12, sent.shape[0])
    for i, k in enumerate(ne):
        pats[i, rng.choice(code.n, k, replace=False)] = rng.integers(1, 1024, k)
    res = code.decode(sent ^ pats)
    pr = code.decode_errors(pats)
    np.testing.assert_array_equal(res.failed, pr.failed)
    wrong = np.any(res.messages != msgs, axis=1)
    np.testing.assert_array_equal(wrong, pr.failed & np.any(pats[:, : code.k] != 0, axis=1) | pr.miscorrected)
    np.testing.assert_array_equal(np.count_nonzero(res.messages != msgs, axis=1), pr.residual_symbols)
    bits = np.unpackbits((res.messages ^ msgs).astype(">u2").view(np.uint8).reshape(len(msgs), -1), axis=1)
    np.testing.assert_array_equal(bits.sum(axis=1), pr.residual_bits)


def test_batches_of_any_leading_shape():
    rng = np.random.default_rng(0)
    msgs = rng.integers(0, 1024, (3, 5, fec.KP4.k))
    words = fec.KP4.encode(msgs)
    assert words.shape == (3, 5, 544) and words.dtype == np.uint16
    res = fec.KP4.decode(words)
    assert res.messages.shape == (3, 5, 514) and res.failed.shape == (3, 5)
    one = fec.KP4.encode(msgs[0, 0])
    assert one.shape == (544,)
    assert fec.KP4.decode(one).n_corrected.shape == ()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=1100, k=1000), "exceeds"),
        (dict(n=544, k=544), "k < n"),
        (dict(n=544, k=600), "k < n"),
        (dict(n=544, k=0), "k < n"),
        (dict(n=544, k=515), "even"),
        (dict(n=544, k=514, primitive_poly=0x401), "not primitive"),  # x^10 + 1
        (dict(n=544, k=514, primitive_poly=0x40F), "not primitive"),
        (dict(n=544, k=514, primitive_poly=0x209), "degree"),
        (dict(n=544, k=514, m=1), "symbol size"),
        (dict(n=544.0, k=514), "integer"),
        (dict(n=544, k=514, first_root=-1), "first_root"),
    ],
)
def test_impossible_codes_are_refused(kwargs, match):
    with pytest.raises(FecError, match=match):
        RSCode(**kwargs)


@pytest.mark.parametrize(
    "arr, match",
    [
        (np.full((2, 514), 1024), "outside"),
        (np.full((2, 514), -1), "outside"),
        (np.zeros((2, 513), dtype=int), "shape"),
        (np.zeros((2, 514), dtype=float), "dtype"),
        (np.zeros((2, 514), dtype=bool), "dtype"),
        (np.int64(5), "shape"),
    ],
)
def test_bad_symbols_are_refused(arr, match):
    with pytest.raises(FecError, match=match):
        fec.KP4.encode(arr)
    with pytest.raises(FecError):
        fec.KP4.decode(np.zeros((2, 543), dtype=int))
    with pytest.raises(FecError):
        fec.KP4.decode_errors(np.zeros((1, 544), dtype=np.float32))


def test_primitive_polynomials():
    assert fec.is_primitive(0x409, 10) and fec.is_primitive(0x13, 4) and fec.is_primitive(0x11D, 8)
    assert not fec.is_primitive(0x11B, 8)  # AES polynomial: irreducible, not primitive
    assert not fec.is_primitive(0x401, 10)
