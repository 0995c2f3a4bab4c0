"""The required detector error ratio (the margin's reference) and the FEC analysis under it:
the solve against the bisection it replaced (issue 22), the Panjer kernel against its
plain-numpy loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fec
import phy
from channels import media
from fec import analysis as A
from phy.link import post_fec as P


# ----------------------------------------------------------------------------- references
def panjer_reference(lam, hs, hf, g):
    """The Panjer recursion as :func:`fec.burst_errors` ran it before its kernel: the plain
    numpy loop over the full severity vector (the kernel's signature, for a drop-in swap)."""
    n = g.size - 1
    fpos = np.zeros(n + 1)
    fpos[hs] = hf / hs
    h = np.arange(n + 1)
    g[:] = 0.0
    g[0] = np.exp(-lam)
    for s in range(1, n + 1):
        g[s] = lam / s * np.dot(h[1 : s + 1] * fpos[1 : s + 1], g[s - 1 :: -1][:s])


def bisection_required_der(spec, eyes, one_way_s=None, payload_bps=None) -> float:
    """The required detector error ratio as the roll-up found it before the solve: a
    bisection in log10 of the error ratio on [1e-30, 0.3] to 0.01 decade, the bursts' shape
    at 1e-4, then again at the answer if that is more than half a decade away; the model
    rebuilt (from its caches) at every step."""
    def delivered(d, shape):
        return P._delivered(spec, d, eyes, shape, one_way_s, payload_bps)

    shape = 1e-4
    for _ in range(2):
        lo, hi = -30.0, math.log10(0.3)
        if delivered(10**hi, shape) <= spec.target_ber:
            return 10**hi
        if delivered(10**lo, shape) > spec.target_ber:
            return 10**lo
        while hi - lo > 1e-2:
            mid = (lo + hi) / 2
            if delivered(10**mid, shape) <= spec.target_ber:
                lo = mid
            else:
                hi = mid
        if abs(lo - math.log10(shape)) < 0.5:
            break
        shape = min(10**lo, 1e-2)
    return 10**lo


# ----------------------------------------------------------------------------- Panjer
@pytest.mark.parametrize("model", [A.BurstModel.geometric(0.75), A.BurstModel.geometric(0.0),
                                   A.BurstModel.dfe([0.6], 1e-5), A.BurstModel.dfe([0.45, 0.1], 3e-4)])
@pytest.mark.parametrize("code, interleave, precoded", [(fec.KP4, 1, False), (fec.KR4, 2, True),
                                                        (fec.LL272, 1, True)])
def test_the_panjer_kernel_is_its_plain_numpy_loop(model, code, interleave, precoded, monkeypatch):
    for der in (1e-9, 2e-5, 3e-3, 0.2):
        got = A.burst_errors(code, model, der=der, interleave=interleave, precoded=precoded)
        with monkeypatch.context() as m:
            m.setattr(A, "panjer_poisson", panjer_reference)
            ref = A.burst_errors(code, model, der=der, interleave=interleave, precoded=precoded)
        for k in ("cer", "ser_out", "ber_out"):
            assert getattr(got, k) == pytest.approx(getattr(ref, k), rel=1e-10, abs=1e-300), (k, der)
        assert got.pre_fec_ser == ref.pre_fec_ser


def test_the_panjer_kernel_is_the_compound_poisson_distribution():
    """Against the distribution summed directly: the number of bursts Poisson, each
    burst's symbols i.i.d. from the severity, at a rate where several bursts share a word."""
    from scipy import stats

    from fec._burst_kernels import panjer_poisson

    f = np.zeros(9)
    f[[1, 2, 4]] = [0.6, 0.3, 0.1]
    lam, n = 2.5, 8
    hs = np.flatnonzero(f)
    g = np.zeros(n + 1)
    panjer_poisson(lam, hs, hs * f[hs], g)
    direct, conv = np.zeros(n + 1), np.zeros(n + 1)
    conv[0] = 1.0
    for k in range(40):
        direct += stats.poisson.pmf(k, lam) * conv
        conv = np.convolve(conv, f)[: n + 1]
    assert np.allclose(g, direct, rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------- the solve
def _channel(length_m: float, awg: int):
    return media.cascade(media.connector(), media.twinax(length_m, awg), media.connector())


def _preset_serdes():
    return phy.Serdes.preset(106.25e9, "pam4")


@pytest.fixture(scope="module")
def eyes():
    """Three channels' equalised segments (a short, a middling and a failing cable)."""
    out = {}
    for length_m, awg in ((0.8, 26), (2.0, 30), (2.5, 34)):
        spec = phy.LinkSpec(channel=_channel(length_m, awg), serdes=_preset_serdes(), fec="KP4")
        out[(length_m, awg)] = (spec, phy.link.segments(spec))
    return out


CASES = [dict(fec="KP4"), dict(fec="KR4"), dict(fec="LL272"), dict(fec="KP4", interleave=2),
         dict(fec="LL272", interleave=2), dict(fec="KP4", precoding=True), dict(fec="KR4", precoding=True),
         dict(fec="KP4", interleave=2, precoding=True), dict(fec=None), dict(fec=None, precoding=True),
         dict(fec="KP4", target_ber=1e-12)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_the_solve_is_the_bisection_to_its_tolerance(eyes, case):
    """Codes, interleaving and precoding on three channels: the solve's answer lies within
    the bisection's own 0.01 decade of the bisection's, and meets the target."""
    for base, segs in eyes.values():
        spec = phy.LinkSpec(channel=base.channel, serdes=base.serdes, **case)
        new = P._required_der(spec, segs)
        ref = bisection_required_der(spec, segs)
        assert abs(math.log10(new) - math.log10(ref)) <= P.REQUIRED_TOL + 1e-9, (case, new, ref)


def test_the_solve_with_a_link_layer_is_the_bisection(eyes):
    """Replay without an FEC: the answer is where the replays leave half the bandwidth (a
    step in the delivered BER), found as the bisection finds it."""
    base, segs = eyes[(2.0, 30)]
    spec = phy.LinkSpec(channel=base.channel, serdes=base.serdes, fec=None, retry=phy.link.Retry())
    r = phy.evaluate_link(spec, segs)
    one_way = sum(v for k, v in r.latency_breakdown_s.items() if k != "retry_mean")
    payload = r.rate_chain["payload_bps"]
    new = P._required_der(spec, segs, one_way, payload)
    ref = bisection_required_der(spec, segs, one_way, payload)
    assert abs(math.log10(new) - math.log10(ref)) <= P.REQUIRED_TOL + 1e-9
    assert r.retry_required_der == new  # reported; the margin is against the bare link's
    assert r.required_der == P._required_der(spec.with_(retry=None), segs)


def test_the_solve_takes_few_fec_analyses(eyes, monkeypatch):
    """The point of the solve: far fewer FEC analyses than the bisection's 14 a pass."""
    calls = []
    real = fec.burst_errors

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(P.fec, "burst_errors", counting)
    base, segs = eyes[(2.0, 30)]
    for code in ("KP4", "KR4", "LL272"):
        spec = phy.LinkSpec(channel=base.channel, serdes=base.serdes, fec=code)
        calls.clear()
        bisection_required_der(spec, segs)
        n_ref = len(calls)
        calls.clear()
        P._required_der(spec, segs)
        assert len(calls) <= 0.75 * n_ref, (code, len(calls), n_ref)


def test_feasible_log10_on_a_known_threshold():
    """A power law and a step: the answer is within the tolerance below the threshold."""
    for f in (lambda x: 10 ** (16 * (x + 3.7)) * 1e-15, lambda x: 1.0 if x > -5.123 else 1e-20):
        x, end = P._feasible_log10(f, 1e-15, -30.0, math.log10(0.3), 0.01)
        thr = -3.7 if f(-5.0) < 1 else -5.123
        assert not end and thr - 0.01 <= x <= thr, (x, thr)
    assert P._feasible_log10(lambda x: 0.0, 1e-15, -30.0, -0.5, 0.01) == (-0.5, True)
    assert P._feasible_log10(lambda x: 1.0, 1e-15, -30.0, -0.5, 0.01) == (-30.0, True)


def test_a_bare_link_needs_no_burst_model(eyes, monkeypatch):
    """Without a code or a link layer the delivered BER is the detector's: no model built."""
    base, segs = eyes[(0.8, 26)]
    monkeypatch.setattr(P, "_model", lambda *a: pytest.fail("a burst model was built"))
    spec = phy.LinkSpec(channel=base.channel, serdes=base.serdes, fec=None)
    assert P._required_der(spec, segs) == pytest.approx(2 * spec.target_ber, rel=0.024)



def _noisier_reference(eye, ser):
    """The noisier eye's table as the roll-up first found it: every column convolved with
    ``pmf.gauss_convolve`` at each step of the search."""
    from dataclasses import replace

    from scipy import optimize

    from phy.engines.dfe_chain import dfe_transitions
    from phy.engines.pmf import gauss_convolve

    dv = float(eye.voltage_v[1] - eye.voltage_v[0])

    def noisier(add_v):
        def conv(cdf):
            pmf = np.diff(cdf, axis=1, prepend=0.0)
            out = np.array([gauss_convolve(row, add_v / dv) for row in pmf])
            return np.clip(np.cumsum(out, axis=1) / out.sum(axis=1, keepdims=True), 0.0, 1.0)

        parts = tuple((w, conv(c), m) for w, c, m in eye.parts)
        return replace(eye, cdf=conv(eye.cdf), parts=parts, sigma_v={**eye.sigma_v, "added": add_v})

    h0 = float(eye.main_v[eye.centre])
    hi = 0.05 * h0
    while noisier(hi).ser() < ser and hi < 10 * h0:
        hi *= 2
    add = optimize.brentq(lambda a: np.log(max(noisier(a).ser(), 1e-300)) - np.log(ser), 0.0, hi, rtol=1e-3)
    return dfe_transitions.__wrapped__(noisier(add))


def test_the_noisier_table_is_the_whole_eye_search(eyes):
    """The added-noise search on the sampling column, its transform reused, finds the same
    noise and the same table as the search that convolved the whole eye at every step."""
    for _spec, segs in eyes.values():
        e = segs[0].eye
        target = max(3 * e.ser(), 1e-4)
        got = P._noisier_table.__wrapped__(e, target)
        ref = _noisier_reference(e, target)
        assert got.shape == ref.shape and np.allclose(got, ref, rtol=1e-12, atol=1e-300)
