"""Post-FEC analysis against the reference figures and against Monte Carlo through the decoder."""

from __future__ import annotations

import numpy as np
import pytest

import fec
from fec import FecError, analysis as A, montecarlo as MC


def test_random_error_figures_match_references():
    """REFERENCES.md: at p_b = 2.4e-4, KP4 p_s 2.397e-3, CER 8.15e-13, BER_out 2.41e-15;
    KR4 CER 5.15e-5; CER 1e-13 needs p_b 2.08e-4 (KP4) and 1.72e-5 (KR4)."""
    kp4 = A.random_errors(fec.KP4, 2.4e-4)
    assert kp4.pre_fec_ser == pytest.approx(2.397e-3, rel=1e-3)
    assert kp4.cer == pytest.approx(8.15e-13, rel=2e-3)
    assert kp4.ber_out == pytest.approx(2.41e-15, rel=2e-3)
    assert A.random_errors(fec.KR4, 2.4e-4).cer == pytest.approx(5.15e-5, rel=2e-3)
    assert A.required_ber(fec.KP4, 1e-13) == pytest.approx(2.08e-4, rel=3e-3)
    assert A.required_ber(fec.KR4, 1e-13) == pytest.approx(1.72e-5, rel=3e-3)
    # the inverse inverts
    b = A.required_ber(fec.KP4, 1e-15, metric="ber_out")
    assert A.random_errors(fec.KP4, b).ber_out == pytest.approx(1e-15, rel=1e-6)


@pytest.mark.parametrize("ber", [1e-3, 5e-4, 3e-4])
def test_kr4_analytic_cer_agrees_with_monte_carlo_through_the_decoder(ber):
    mc = MC.random_stream(fec.KR4, ber, n_codewords=60_000, seed=int(ber * 1e7))
    an = A.random_errors(fec.KR4, ber)
    wide = MC.Estimate.of(mc.cer.count, mc.cer.trials, 0.999)
    assert wide.contains(an.cer), (mc.cer, an.cer)
    assert mc.compare(an, 0.999)["cer"]["agrees"]
    assert mc.pre_fec_ber.value == pytest.approx(ber, rel=0.02)
    if mc.cer.count > 100:
        assert MC.Estimate.of(mc.ber_out.count, mc.ber_out.trials, 0.999).low < an.ber_out * 1.3
        assert mc.ber_out.value == pytest.approx(an.ber_out, rel=0.3)


def test_miscorrection_is_rare_for_kp4_and_measurable_for_kr4():
    assert A.miscorrection_probability(fec.KP4) < 1e-16
    assert 1e-6 < A.miscorrection_probability(fec.KR4) < 3e-6


def test_frame_loss_ratio():
    cer = 1e-10
    short = A.frame_loss_ratio(fec.KP4, cer, 512)  # a 64-byte frame
    long = A.frame_loss_ratio(fec.KP4, cer, 12_144)  # a 1518-byte frame
    assert short == pytest.approx(cer * (1 + 511 / 5140), rel=1e-6)
    assert long == pytest.approx(cer * (1 + 12_143 / 5140), rel=1e-6)
    r = A.random_errors(fec.KP4, 2.4e-4, frame_bits=12_144)
    assert r.frame_loss_ratio == pytest.approx(r.cer * (1 + 12_143 / 5140), rel=1e-6)


def test_single_error_bursts_reduce_to_random_errors():
    g = A.BurstModel.geometric(0.0)
    b = A.burst_errors(fec.KP4, g, der=4.8e-4)  # PAM4: one bit per detector error, 2 bits per UI
    r = A.random_errors(fec.KP4, 2.4e-4)
    assert b.pre_fec_ber == pytest.approx(2.4e-4, rel=1e-9)
    assert b.cer == pytest.approx(r.cer, rel=0.3)  # Poisson symbol errors vs binomial bits


def _mc_vs_analysis(model, der, interleave, precoded, n_cw, seed):
    mc = MC.burst_stream(fec.KR4, model, n_cw, der=der, seed=seed, interleave=interleave, precoded=precoded)
    an = A.burst_errors(fec.KR4, model, der=der, interleave=interleave, precoded=precoded)
    return mc, an


@pytest.mark.parametrize("interleave, precoded", [(1, False), (2, False), (1, True)])
def test_burst_analysis_agrees_with_monte_carlo(interleave, precoded):
    g = A.BurstModel.geometric(0.75)
    mc, an = _mc_vs_analysis(g, 3e-3, interleave, precoded, 60_000, seed=interleave + 10 * precoded)
    assert mc.pre_fec_ser.value == pytest.approx(an.pre_fec_ser, rel=0.05)
    assert mc.pre_fec_ber.value == pytest.approx(an.pre_fec_ber, rel=0.05)
    wide = MC.Estimate.of(mc.cer.count, mc.cer.trials, 0.999)
    # the analysis is slightly conservative (overlapping bursts, bursts across codewords)
    assert wide.low <= an.cer <= wide.high * 1.15, (mc.cer, an.cer)


def test_interleaving_and_precoding_cut_burst_damage():
    g = A.BurstModel.geometric(0.75)
    base = A.burst_errors(fec.KP4, g, der=1e-3)
    assert A.burst_errors(fec.KP4, g, der=1e-3, interleave=2).cer < base.cer / 100
    pre = A.burst_errors(fec.KP4, g, der=1e-3, precoded=True)
    assert pre.cer < base.cer / 30
    # the precoder turns each alternating burst into two errors: BER = rate * 2 bits / 2 bits per UI
    assert pre.pre_fec_ber == pytest.approx(1e-3 / g.mean_errors, rel=1e-6)


def _simulate_dfe(taps, sigma, n_ui, seed):
    """Slow plain-numpy PAM4 DFE: decisions feed back their own (possibly wrong) levels."""
    rng = np.random.default_rng(seed)
    levels = np.array([-3.0, -1.0, 1.0, 3.0])
    tx = rng.integers(0, 4, n_ui)
    noise = rng.normal(0, sigma, n_ui)
    b = np.asarray(taps)
    dec = np.zeros(n_ui, dtype=np.int64)
    hist_tx = np.zeros(b.size)
    hist_dec = np.zeros(b.size)
    for k in range(n_ui):
        # channel ISI from the sent symbols, cancelled with the decided ones
        y = levels[tx[k]] + np.dot(b, hist_tx) - np.dot(b, hist_dec) + noise[k]
        d = int(np.clip(np.round((y + 3) / 2), 0, 3))
        dec[k] = d
        hist_tx = np.roll(hist_tx, 1)
        hist_tx[0] = levels[tx[k]]
        hist_dec = np.roll(hist_dec, 1)
        hist_dec[0] = levels[d]
    return dec - tx


def test_dfe_burst_model_matches_a_simulated_dfe():
    taps, der0 = [0.6], 1e-2
    model = A.BurstModel.dfe(taps, der0)
    # sigma in level half-spacings, as the model derives it
    from scipy import stats

    sigma = 1 / stats.norm.isf(der0 / 1.5)
    err = _simulate_dfe(taps, sigma, 150_000, seed=1)
    # bursts: runs of errors ended by one correct decision (one tap)
    nz = err != 0
    starts = np.flatnonzero(nz & ~np.r_[False, nz[:-1]])
    ends = np.flatnonzero(nz & ~np.r_[nz[1:], False])
    lengths = ends - starts + 1
    pmf = model.length_pmf(6)[1:]
    measured = np.bincount(lengths, minlength=8)[1:7] / lengths.size
    se = np.sqrt(pmf[:4] * (1 - pmf[:4]) / lengths.size)  # about 1500 bursts
    assert np.all(np.abs(measured[:4] - pmf[:4]) < 3.5 * se), (measured[:4], pmf[:4])
    # a positive tap makes the errors alternate in sign
    pairs = err[starts[lengths >= 2]] * err[starts[lengths >= 2] + 1]
    assert np.mean(pairs < 0) > 0.95
    assert lengths.size / err.size == pytest.approx(model.start_rate, rel=0.15)


def test_dfe_propagation_grows_with_the_tap():
    weak, strong = A.BurstModel.dfe([0.2], 1e-4), A.BurstModel.dfe([0.8], 1e-4)
    assert weak.mean_errors < 1.1 < 2.0 < strong.mean_errors
    pw = A.burst_errors(fec.KP4, weak)
    ps = A.burst_errors(fec.KP4, strong)
    assert ps.cer > 100 * pw.cer
    # the precoder rescues the strong tap
    assert A.burst_errors(fec.KP4, strong, precoded=True).cer < ps.cer / 100
    two = A.BurstModel.dfe([0.5, 0.2], 1e-4)
    assert two.truncated < 1e-6 and abs(two.probabilities.sum() - 1) < 1e-12


def test_latency_breakdown_terms():
    lat = fec.latency(fec.KP4, 106.25e9)
    clk = fec.DECODER_CLOCK_HZ  # 350 MHz, a public 400G RS(544,514) core's clock
    assert lat.clock_hz == clk == 350e6
    assert lat.accumulation_s == pytest.approx(51.2e-9, rel=1e-12)  # REFERENCES.md
    assert lat.key_equation_s == pytest.approx(31 / clk)
    assert lat.total_s == pytest.approx(51.2e-9 + 37 / clk)
    assert fec.latency(fec.KP4, 106.25e9, clock_hz=1e9).total_s == pytest.approx(51.2e-9 + 37e-9)
    assert fec.latency(fec.KP4, 106.25e9, interleave=2).accumulation_s == pytest.approx(102.4e-9)
    assert fec.latency(fec.KP4, 53.125e9, lanes=2).accumulation_s == pytest.approx(51.2e-9)
    assert fec.latency(fec.KR4, 25.78125e9).accumulation_s == pytest.approx(5280 / 25.78125e9)
    slow = fec.latency(fec.KP4, 106.25e9, streaming=False, symbols_per_clock=16)
    assert slow.chien_forney_s == pytest.approx((34 + 3) / clk)
    bypass = fec.latency(fec.KP4, 106.25e9, correct=False)
    assert bypass.total_s == pytest.approx(51.2e-9 + 3 / clk)
    ll = fec.latency(fec.LL272, 106.25e9)
    assert ll.accumulation_s == pytest.approx(25.6e-9) and ll.total_s < lat.total_s


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: A.random_errors(fec.KP4, 0.6), r"\[0, 0.5\]"),
        (lambda: A.random_errors(fec.KP4, -1e-3), r"\[0, 0.5\]"),
        (lambda: A.random_errors(fec.KP4, float("nan")), r"\[0, 0.5\]"),
        (lambda: A.random_errors(fec.KP4, "x"), "number"),
        (lambda: A.random_errors("KP4", 1e-4), "RSCode"),
        (lambda: A.required_ber(fec.KP4, 1e-13, metric="fer"), "metric"),
        (lambda: A.burst_errors(fec.KP4, A.BurstModel.geometric(), der=0.7), r"\[0, 0.5\]"),
        (lambda: A.burst_errors(fec.KP4, A.BurstModel.geometric()), "der"),
        (lambda: A.BurstModel.dfe([1.2], 1e-4), "taps"),
        (lambda: A.BurstModel.dfe([0.5], 0.0), "der0"),
        (lambda: A.BurstModel.geometric(1.5), "a must"),
        (lambda: fec.latency(fec.KP4, -1), "lane_rate"),
        (lambda: fec.latency(fec.KP4, 1e9, lanes=0), "lanes"),
        (lambda: MC.random_stream(fec.KP4, 1e-4, 3, interleave=2), "multiple"),
        (lambda: fec.interleave.bits_per_ui("pam8"), "modulation"),
    ],
)
def test_bad_inputs_raise_fec_error(call, match):
    with pytest.raises(FecError, match=match):
        call()


def test_burst_errors_at_error_rates_beyond_the_code_fail_every_codeword():
    # hundreds of bursts per codeword: exp(-lambda) underflows and more than n symbols are
    # hit; the code must then report failure, not a tiny error ratio
    model = fec.BurstModel.dfe([0.5], 0.3, tail=1e-6)
    pf = fec.burst_errors(fec.KP4, model, der=0.45)
    assert pf.cer == 1.0
    assert pf.ber_out > 0.05
    # and a moderate rate keeps its tiny values (no rounding floor)
    small = fec.burst_errors(fec.KP4, fec.BurstModel.dfe([0.5], 1e-6), der=1e-6)
    assert 0 < small.cer < 1e-30


# ----------------------------------------------------------------------------- bounded DFE bursts
def _reference_dfe(taps, der0, tail):
    """Slow plain-Python enumeration of the DFE bursts (the kernel's reference): every burst
    likelier than ``tail``, as {pattern: probability}, and the mass of the others."""
    from scipy import stats

    b = np.asarray(taps, dtype=float)
    w = 0.75
    sigma = 1.0 / stats.norm.isf(der0 / (2 * w))
    found, dropped = {}, 0.0
    stack = [((1,), 0.5, 0), ((-1,), 0.5, 0)]
    while stack:
        errs, p, zeros = stack.pop()
        if zeros >= b.size:
            found[errs[: len(errs) - zeros]] = found.get(errs[: len(errs) - zeros], 0.0) + p
            continue
        hist = np.zeros(b.size)
        recent = errs[::-1][: b.size]
        hist[: len(recent)] = recent
        delta = -2.0 * float(b @ hist)
        pu = w * stats.norm.sf((1 - delta) / sigma)
        pd = w * stats.norm.sf((1 + delta) / sigma)
        for e, pe in ((0, 1 - pu - pd), (1, pu), (-1, pd)):
            q = p * pe
            if q < tail and not (e == 0 and zeros + 1 >= b.size):
                dropped += q
            else:
                stack.append((errs + (e,), q, zeros + 1 if e == 0 else 0))
    return found, dropped


def test_dfe_enumeration_is_its_slow_reference():
    taps, der0 = [0.55, 0.15], 3e-3
    ref, dropped = _reference_dfe(taps, der0, 1e-9)
    model = A.BurstModel.dfe(taps, der0, tail=1e-9, max_patterns=100_000)
    got = {tuple(int(v) for v in x): p * (1 - model.truncated) for x, p in zip(model.patterns, model.probabilities)}
    assert set(got) == set(ref)
    assert max(abs(got[k] - ref[k]) / ref[k] for k in ref) < 1e-9
    assert model.truncated == pytest.approx(dropped, rel=1e-9)


@pytest.mark.parametrize("taps", [[0.85], [0.6, 0.1], [0.5, 0.22, 0.09, 0.07, 0.03, 0.02]])
@pytest.mark.parametrize("der0", [1e-6, 1e-4, 1e-2, 0.2, 0.5])
def test_dfe_model_keeps_all_mass_and_its_cost_is_bounded_at_any_error_ratio(taps, der0):
    from conftest import cpu_seconds_at_most

    with cpu_seconds_at_most(30):  # was 77 s at 0.05 with six taps; the budget is two walks of 1e6 nodes
        model = A.BurstModel.dfe(taps, der0)
    assert len(model.patterns) <= 4096
    # nothing is dropped: the listed bursts and the ones known by their span make up 1
    assert (1 - model.truncated) * model.probabilities.sum() + model.tail_spans.sum() == pytest.approx(1, abs=1e-12)
    assert model.length_pmf(5000).sum() == pytest.approx(1, abs=1e-12)
    assert model.mean_errors >= 1 and model.mean_span >= model.mean_errors - 1e-9


@pytest.mark.parametrize("b, der0", [(0.3, 1e-4), (0.8, 1e-3), (0.6, 0.3)])
def test_one_tap_burst_means_are_the_geometric_closed_form(b, der0):
    # one tap: every decision after an error errs (either way) with q = w (Q((1+2b)/s) + Q((1-2b)/s)),
    # and the first correct one ends the burst, so errors and span are geometric with mean 1/(1 - q)
    from scipy import stats

    w = 0.75
    s = 1 / stats.norm.isf(der0 / (2 * w))
    q = w * (stats.norm.sf((1 + 2 * b) / s) + stats.norm.sf((1 - 2 * b) / s))
    errors, span = A.dfe_burst_means([b], der0)
    assert errors == pytest.approx(1 / (1 - q), rel=1e-10)
    assert span == pytest.approx(1 / (1 - q), rel=1e-10)
    assert A.BurstModel.dfe([b], der0).mean_errors == pytest.approx(errors, rel=1e-12)


def test_mean_errors_of_many_taps_match_an_exhaustive_enumeration():
    taps, der0 = [0.5, 0.2, 0.1], 1e-3
    ref, dropped = _reference_dfe(taps, der0, 1e-13)
    assert dropped < 1e-8  # what the reference leaves out bounds its own error
    mean_ref = sum(p * np.count_nonzero(k) for k, p in ref.items()) / sum(ref.values())
    assert A.dfe_burst_means(taps, der0)[0] == pytest.approx(mean_ref, rel=1e-7)


def test_pruned_bursts_keep_their_exact_spans():
    taps, der0 = [0.6, 0.1], 1e-3
    coarse = A.BurstModel.dfe(taps, der0, tail=1e-6)
    fine = A.BurstModel.dfe(taps, der0, tail=1e-15, max_patterns=200_000)
    assert coarse.truncated > 1e-6 > 1e-9 > fine.truncated
    np.testing.assert_allclose(coarse.length_pmf(60), fine.length_pmf(60), rtol=0, atol=1e-13)


@pytest.mark.parametrize("taps, der0, keep", [([0.7], 1e-3, 16), ([0.6, 0.1], 1e-4, 64)])
@pytest.mark.parametrize("precoded", [False, True])
def test_bounded_bursts_overstate_the_codeword_error_ratio_by_at_most_their_stated_bound(taps, der0, keep, precoded):
    listed = A.BurstModel.dfe(taps, der0, tail=1e-14, max_patterns=200_000)
    bounded = A.BurstModel.dfe(taps, der0, max_patterns=keep)
    assert len(bounded.patterns) <= keep < len(listed.patterns)
    assert bounded.truncated > 1e3 * listed.truncated
    for code in (fec.KP4, fec.LL272):
        exact = A.burst_errors(code, listed, precoded=precoded)
        b = A.burst_errors(code, bounded, precoded=precoded)
        assert exact.cer * (1 - 1e-9) <= b.cer <= exact.cer + b.bounded + exact.bounded
        assert b.pre_fec_ber >= exact.pre_fec_ber * (1 - 1e-9)
        if not precoded:  # by span, an unlisted burst hits about the symbols it really hits
            assert b.cer <= 1.5 * exact.cer
        # (a precoder turns an alternating burst into two errors, which a span cannot tell:
        # there the bound is loose, and the default listing leaves little to it)
        default = A.burst_errors(code, A.BurstModel.dfe(taps, der0), precoded=precoded)
        assert default.cer == pytest.approx(exact.cer, rel=0.02)


def _hits_reference(pattern, code, interleave, precoded, modulation):
    """The symbol hits of one burst by an explicit loop over alignments (slow reference)."""
    from fec.interleave import bits_per_ui, gray_bits, postcoder_errors

    bpu = bits_per_ui(modulation)
    upsym = code.m // bpu
    ui = np.flatnonzero(pattern)
    err = np.asarray(pattern)[ui]
    if precoded:
        ui, err = postcoder_errors(ui, err)
    bits = gray_bits(err) if bpu == 2 else (err % 2 != 0).astype(np.int64)
    hs, bs = [], []
    for o in range(upsym):
        uniq, inv = np.unique((ui + o) // upsym, return_inverse=True)
        sbits = np.bincount(inv, weights=bits, minlength=uniq.size)
        for phase in range(interleave):
            mine = (uniq + phase) % interleave == 0
            hs.append(int(mine.sum()))
            bs.append(float(sbits[mine].sum()))
    return np.array(hs), np.array(bs)


def test_burst_hits_are_their_slow_reference():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        pat = rng.choice([-1, 0, 1], n, p=[0.3, 0.4, 0.3]).astype(np.int64)
        pat[0], pat[-1] = 1, (-1 if n > 1 else 1)
        for code, il, pre, mod in ((fec.KP4, 1, False, "pam4"), (fec.KP4, 2, True, "pam4"), (fec.KR4, 3, False, "nrz")):
            hs, _w, bs = A._hits(pat, code, il, pre, mod)
            ref_h, ref_b = _hits_reference(pat, code, il, pre, mod)
            np.testing.assert_array_equal(hs, ref_h)
            np.testing.assert_array_equal(bs, ref_b)
