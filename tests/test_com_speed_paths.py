"""COM's faster kernels (issue 35) against the code before them (main 862076c).

The 802.3 figure-of-merit kernel (:func:`phy.engines.com._kernels.fom_search`) and its
floating DFE are compared bit for bit with plain-Python transcriptions of the code before
(every modulo, sign and running comparison as it was), on real pulses of a shared channel
and on random ones that reach every branch; the lane searches that replace the running
comparisons are compared with those comparisons on arrays with ties, signed zeros, NaN and
infinities. COM on shared channels is pinned to main's values bit for bit (802.3ck) or,
for 178A's MMSE kernel (compiled with fastmath, whose reassociation moves the last bits
when the code around a sum changes), within 1e-9 dB with every chosen setting and cursor
identical.
"""

import math
import warnings

import numpy as np
import pytest

import channels
from phy.engines.com import ComParams, chain, channel_margin, mmse
from phy.engines.com import _kernels as K
from phy.engines.com import margin as mg
from phy.engines.com.grid import Grid


# ------------------------------------------------------------------ main's code, in Python
def ref_floating_dfe(h, h0, n_fixed, groups, taps, limit, tail_start, tail_rss):
    """main's ``floating_dfe``: every bank tried tap by tap per group."""
    L = h.size
    b = np.zeros(L)
    if L < taps or groups <= 0:
        return b
    gain = np.empty(L)
    for q in range(L):
        a = abs(float(h[q]))
        r = max(0.0, a - limit * h0)
        gain[q] = a * a - r * r
    used = np.zeros(L, dtype=bool)
    for _ in range(groups):
        best, start = -1.0, -1
        for s in range(L - taps + 1):
            ok = True
            g = 0.0
            for q in range(s, s + taps):
                if used[q]:
                    ok = False
                    break
                g += float(gain[q])
            if ok and g > best:
                best, start = g, s
        if start < 0:
            break
        for q in range(start, start + taps):
            used[q] = True
            b[q] = min(limit, max(-limit, float(h[q]) / h0))
    if tail_start > 0:
        q0 = max(0, tail_start - n_fixed - 1)
        rss = 0.0
        for q in range(q0, L):
            rss += float(b[q]) * float(b[q])
        rss = math.sqrt(rss)
        if rss > tail_rss:
            for q in range(q0, L):
                b[q] *= tail_rss / rss
    return b


def ref_fom_search(tx_grid, y, win, base, M, r_isi, r_j, r_xt, xt_const, bmax, bmin, r_lm, levels, var_x, var_n,
                   jit_var, snr_lin, tx_path, xt_worst, flt, rows):
    """main's ``fom_search`` for the settings ``rows``: (fom, cursor)."""
    W = win.shape[1]
    n = y.size
    nd = bmax.size
    fom, cursor = [], []
    for s in rows:
        c = [float(x) for x in tx_grid[s]]
        yw = [0.0] * W
        best_w = 0
        for w in range(W):
            acc = 0.0
            for i in range(5):
                acc += c[i] * float(win[i, w])
            yw[w] = acc
            if acc > yw[best_w]:
                best_w = w
        thr = 0.01 * yw[best_w]
        zxi = -1
        for i in range(max(0, best_w - 4 * M), best_w):
            if np.sign(yw[i + 1] - thr) - np.sign(yw[i] - thr) >= 1:
                zxi = i
        start = zxi if zxi >= 0 else best_w - M
        pick = -1
        res_min = math.inf
        b1 = float(bmax[0]) if nd > 0 else 0.0
        for ix in range(max(M, start), min(W - M, start + 2 * M + 1)):
            res = abs(yw[ix - M] - max(yw[ix + M] - b1 * yw[ix], 0.0))
            if res < res_min:
                res_min = res
                pick = ix
        if pick < 0 or yw[pick] <= 0:
            fom.append(-math.inf)
            cursor.append(-1)
            continue
        idx = base + pick
        ph = idx % M
        h0 = yw[pick]
        a_s = r_lm * h0 / (levels - 1)
        post2 = 0.0
        res2 = 0.0
        for j in range(nd):
            hp = 0.0
            for i in range(5):
                hp += c[i] * float(y[(idx + (1 + j - (i - 3)) * M) % n])
            b = min(float(bmax[j]), max(float(bmin[j]), hp / h0))
            post2 += hp * hp
            e = hp - b * h0  # (numba's ``e ** 2`` is e * e; Python's is pow, not always the same bits)
            res2 += e * e
        n_grp = int(flt[0])
        if n_grp > 0:
            hf = np.empty(max(int(flt[2]) - nd, 0))
            for q in range(hf.size):
                v = 0.0
                for i in range(5):
                    v += c[i] * float(y[(idx + (1 + nd + q - (i - 3)) * M) % n])
                hf[q] = v
            bf = ref_floating_dfe(hf, h0, nd, n_grp, int(flt[1]), float(flt[3]), int(flt[4]), float(flt[5]))
            for q in range(hf.size):
                if bf[q] != 0.0:
                    post2 += float(hf[q]) * float(hf[q])
                    e = float(hf[q]) - float(bf[q]) * h0
                    res2 += e * e
        cc = [0.0] * 5
        for lag in range(5):
            v = 0.0
            for i in range(5 - lag):
                v += c[i] * c[i + lag]
            cc[lag] = v if lag == 0 else 2.0 * v
        q_isi = 0.0
        q_j = 0.0
        for lag in range(5):
            q_isi += cc[lag] * float(r_isi[ph, lag])
            q_j += cc[lag] * float(r_j[ph, lag])
        var_isi = var_x * (q_isi - h0 * h0 - post2 + res2)
        var_j = jit_var * var_x * q_j
        var_xt = xt_const
        for a in range(r_xt.shape[0]):
            worst = 0.0
            mean = 0.0
            for m in range(M):
                q = 0.0
                for lag in range(5):
                    q += cc[lag] * float(r_xt[a, m, lag])
                worst = max(worst, q)
                mean += q / M
            var_xt += worst if xt_worst else mean
        var_xt *= var_x
        var_tx = snr_lin * float(r_isi[ph, 0]) if tx_path else h0 * h0 * snr_lin
        fom.append(10.0 * math.log10(a_s * a_s / (var_tx + var_isi + var_j + var_xt + var_n)))
        cursor.append(idx)
    return np.array(fom), np.array(cursor, dtype=np.int64)


def kernel_args(monkeypatch, tx_grid, y, M, p, xt_pulses, var_n=2.8e-7):
    """The arguments :func:`margin._fom_grid` gives the kernel, and the kernel's outputs."""
    seen = []
    real = K.fom_search

    def spy(*args):
        real(*args)
        seen.append([a.copy() if isinstance(a, np.ndarray) else a for a in args])

    monkeypatch.setattr(K, "fom_search", spy)
    mg._fom_grid(tx_grid, y, M, len(p.dfe_max), np.array(p.dfe_max), np.array(p.dfe_min), p, 5 / 9, var_n, xt_pulses)
    monkeypatch.setattr(K, "fom_search", real)
    return seen[0]


def check_against_main(args, rows):
    fom, cursor = args[-2], args[-1]
    ref_fom, ref_cur = ref_fom_search(*args[:-2], rows)
    np.testing.assert_array_equal(cursor[rows], ref_cur)
    np.testing.assert_array_equal(fom[rows], ref_fom)  # bit for bit (-inf where no cursor)


# ---------------------------------------------------------------------------- the kernel
SHARED_CK = "ieee802.3ck/"


def load_set(shared, thru, fext, nxt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(shared(SHARED_CK + thru))
        aggs = [channels.load(shared(SHARED_CK + fext), thru=ch, kind="fext"),
                channels.load(shared(SHARED_CK + nxt), thru=ch, kind="next")]
    return ch.with_aggressors(*aggs)


def real_pulses(ch, p, ctle):
    g = Grid(ch, p, None, None)
    chans = [(ch, "through", p.a_v)] + [(a, a.kind, p.a_ne if a.kind == "next" else p.a_fe) for a in ch.aggressors]
    spectra = [g.base * chain.terminated_transfer(c, g.f, p, kind) * amp for c, kind, amp in chans]
    return g, [(pulses, [k for _, k, _ in chans], hc) for _, hc, pulses in mg._ctle_pulses(p, g, spectra, ctle)]


def test_fom_kernel_is_mains_bit_for_bit_on_a_shared_channel(shared, monkeypatch):
    p = ComParams.ieee_802_3ck_kr()
    ch = load_set(shared, "DPO_14in_Meg7_THRU.s4p", "DPO_14in_Meg7_FENH89.s4p", "DPO_14in_Meg7_NENF89.s4p")
    g, sets = real_pulses(ch, p.cases()[1][1], [(-16.0, -3.0), (0.0, 0.0)])
    tx = p._tx_grid()
    rows = list(range(0, tx.shape[0], 23))
    for worst in ("worst", "mean"):
        q = p.with_(fom_xt_phase=worst)
        for pulses, kinds, _ in sets:
            args = kernel_args(monkeypatch, tx, pulses[0], g.M, q, list(zip(pulses[1:], kinds[1:])))
            check_against_main(args, rows)


@pytest.mark.parametrize("seed", range(6))
def test_fom_kernel_is_mains_bit_for_bit_on_random_pulses(seed, monkeypatch):
    """Random pulses (a rise, a tail, reflections, a precursor bump that can hide the 1 %
    crossing), random floating DFEs (none, short spans, tails), both crosstalk phases and
    both transmitter noise paths; some settings find no cursor."""
    rng = np.random.default_rng(seed)
    M = int(rng.choice([16, 32]))
    n = 256 * M
    t = np.arange(n) / M - 20.0
    width = rng.uniform(0.6, 2.5)
    y = np.where(t > 0, (t / width) ** 2 * np.exp(-t / width), 0.0) * rng.uniform(0.05, 0.5)
    for _ in range(int(rng.integers(0, 5))):  # reflections
        d = rng.uniform(3, 60)
        y += rng.normal(0, 0.02) * np.exp(-((t - d) ** 2) / 0.5)
    if seed % 3 == 0:  # a slow precursor: no 1 % crossing within 4 UI of the peak
        y += 0.03 * np.exp(-((t + 6) ** 2) / 40.0)
    y += rng.normal(0, 1e-5, n)
    y = np.roll(y, int(rng.integers(-5 * M, 5 * M)))
    x = np.roll(y, 7 * M) * 0.05 + rng.normal(0, 1e-4, n)
    groups = int(rng.integers(0, 4))
    taps = int(rng.integers(1, 5))
    nd = int(rng.integers(1, 13))
    p = ComParams.ieee_802_3ck_kr().with_(
        dfe_max=tuple(rng.uniform(0.05, 0.9, nd)), dfe_min=tuple(-rng.uniform(0.0, 0.9, nd)),
        dfe_float_groups=groups, dfe_float_taps=taps, dfe_float_span_ui=nd + taps + int(rng.integers(0, 30)),
        dfe_float_limit=float(rng.uniform(0.01, 0.2)), dfe_float_tail_start_ui=int(rng.integers(0, 30)),
        dfe_float_tail_rss=float(rng.uniform(0.001, 0.1)), fom_xt_phase=["worst", "mean"][seed % 2],
        rx_ffe_post=seed % 2)  # an Rx FFE: the transmitter noise through the whole pulse
    tx = np.column_stack([rng.uniform(-0.2, 0.2, (300, 3)), rng.uniform(-0.3, 1.0, 300), rng.uniform(-0.2, 0.2, 300)])
    tx[:20, 3] = -0.5  # inverted mains: often no positive cursor
    tx[1::3, :3] = tx[::3, :3]  # runs sharing the first three taps (the kernel keeps their sum)
    tx[40:60, :3] = 0.0
    tx[41:60:2, :3] = -0.0  # and -0.0 for 0.0 within a run
    args = kernel_args(monkeypatch, tx, y, M, p, [(x, "fext"), (0.5 * x, "next")])
    check_against_main(args, list(range(tx.shape[0])))


@pytest.mark.parametrize("worst", ["worst", "mean"])
def test_fom_kernel_is_mains_bit_for_bit_with_several_far_end_aggressors(worst, monkeypatch):
    """Three FEXT aggressors (the kernel reads their autocorrelations transposed, phase
    fastest, each phase's sum in main's lag order): one with an echo of opposite sign, one
    all but zero; with NEXT too."""
    rng = np.random.default_rng(35)
    M = 16
    n = 256 * M
    t = np.arange(n) / M - 20.0
    y = np.where(t > 0, t * t * np.exp(-t), 0.0) * 0.2 + rng.normal(0, 1e-5, n)
    x1 = np.roll(y, 7 * M) * 0.05 + rng.normal(0, 1e-4, n)
    x2 = x1 - 0.9 * np.roll(x1, M // 2)  # anticorrelated at half a UI
    x3 = rng.normal(0, 1e-9, n)
    p = ComParams.ieee_802_3ck_kr().with_(fom_xt_phase=worst)
    tx = np.column_stack([rng.uniform(-0.2, 0.2, (200, 3)), rng.uniform(0.2, 1.0, 200), rng.uniform(-0.6, 0.6, 200)])
    args = kernel_args(monkeypatch, tx, y, M, p, [(x1, "fext"), (x2, "fext"), (x3, "fext"), (0.5 * x1, "next")])
    assert args[7].shape[0] == 3
    check_against_main(args, list(range(tx.shape[0])))


# -------------------------------------------------------------------- the floating DFE
@pytest.mark.parametrize("seed", range(8))
def test_floating_dfe_is_mains_bit_for_bit(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        L = int(rng.integers(0, 40))
        h = rng.normal(0, 0.02, L)
        if rng.random() < 0.5:  # ties between banks
            h = np.round(h * 200) / 200
        h0 = float(rng.uniform(0.05, 0.5))
        args = (h0, int(rng.integers(0, 13)), int(rng.integers(0, 5)), int(rng.integers(1, 6)),
                float(rng.uniform(0.0, 0.2)), int(rng.integers(0, 40)), float(rng.uniform(0.0, 0.1)))
        want = ref_floating_dfe(h, *args)
        np.testing.assert_array_equal(K.floating_dfe(h, *args), want)
        # into dirty work arrays, as the search reuses them
        b, gain, energy = (np.full(L + 3, np.nan) for _ in range(3))
        K.floating_dfe_into(h, L, *args, b, gain, energy)
        np.testing.assert_array_equal(b[:L], want)


def test_floating_dfe_bank_energies_of_three_taps_are_the_running_sums():
    """The energies of banks of three taps (the 802.3 value, summed in one vectorised loop)
    are ``((0.0 + g[s]) + g[s + 1]) + g[s + 2]`` bit for bit, with magnitudes spread so that
    another order of the sums would differ; one group: the chosen bank and its overlaps -inf."""
    rng = np.random.default_rng(35)
    differ = 0
    for _ in range(300):
        L = int(rng.integers(3, 40))
        h = rng.normal(0, 1, L) * 10.0 ** rng.uniform(-4, 0, L)
        h0, limit = 1.0, float(rng.uniform(0.0, 0.2))
        b, gain, energy = (np.full(L + 3, np.nan) for _ in range(3))
        K.floating_dfe_into(h, L, h0, 0, 1, 3, limit, 0, 1.0, b, gain, energy)
        g = [abs(v) * abs(v) - max(0.0, abs(v) - limit * h0) ** 2 for v in h]
        want = [((0.0 + g[s]) + g[s + 1]) + g[s + 2] for s in range(L - 2)]
        differ += any(w != (0.0 + g[s + 2]) + g[s + 1] + g[s] for s, w in enumerate(want))
        start = int(np.argmax(want))  # (the first maximum; no NaN here)
        for s in range(L - 2):
            expect = -np.inf if abs(s - start) < 3 else want[s]
            assert energy[s] == expect and (np.signbit(energy[s]) == np.signbit(expect))
    assert differ > 20  # the order matters on these cases: the test can see a reordering


# ---------------------------------------------------------------- the lane searches
def running_first_max(x):
    best = 0
    for w in range(1, x.size):
        if x[w] > x[best]:
            best = w
    return best


def running_first_min_below_inf(x):
    pick, least = -1, math.inf
    for i in range(x.size):
        if x[i] < least:
            least, pick = x[i], i
    return pick


def running_first_max_above(x, floor):
    pick, best = -1, floor
    for i in range(x.size):
        if x[i] > best:
            best, pick = x[i], i
    return pick


@pytest.mark.parametrize("seed", range(4))
def test_lane_searches_find_what_the_running_comparisons_find(seed):
    rng = np.random.default_rng(seed)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, 1.0, -1.0])
    for n in range(0, 41):
        for _ in range(6):
            x = np.round(rng.normal(0, 1, n), int(rng.integers(0, 3)))  # ties
            if n and rng.random() < 0.5:
                k = int(rng.integers(1, n + 1))
                x[rng.integers(0, n, k)] = rng.choice(specials, k)
            pad = np.concatenate([x, rng.normal(0, 9, 3)])  # only the first n are read
            if n:
                assert K.first_max(pad, n) == running_first_max(x)
            assert K.first_min_below_inf(pad, n) == running_first_min_below_inf(x)
            assert K.first_max_above(pad, n, -1.0) == running_first_max_above(x, -1.0)


# ------------------------------------------------------------- COM pinned to main's values
#: channel_margin with ComParams.ieee_802_3ck_kr() at main 862076c (repr of every float)
MAIN_CK = {
    ("DPO_14in_Meg7_THRU.s4p", "DPO_14in_Meg7_FENH89.s4p", "DPO_14in_Meg7_NENF89.s4p"): dict(
        com_db=1.8088794151764942, fom_db=13.17870222828019, tx_ffe=[-0.02, 0.06, -0.3, 0.62, -0.0],
        g=[-16.0, -3.0], cursor=9474,
        case={"test 1 (12 mm)": 3.4526145389234952, "test 2 (31/29 mm)": 1.8088794151764942},
        dfe0=0.8429748718338874,
        dfe_floating={13: 0.0034727550603111954, 14: 0.0038812346293850743, 15: -5.51812803752604e-06,
                      19: 0.008943895828587034, 20: -0.006210961325007694, 21: -0.008715101280125353,
                      22: -0.0034671202494990726, 23: 0.00014087324050768773, 24: 0.017096410764139626}),
    ("CA_19p75dB_thru.s4p", "CA_19p75dB_fext1.s4p", "CA_19p75dB_next1.s4p"): dict(
        com_db=6.1783701575406305, fom_db=17.476115099008748, tx_ffe=[0.0, 0.04, -0.2, 0.76, -0.0],
        g=[-9.0, -3.0], cursor=18575,
        case={"test 1 (12 mm)": 6.321057384969757, "test 2 (31/29 mm)": 6.1783701575406305},
        dfe0=0.7266058499931406,
        dfe_floating={21: -0.006642207103509488, 22: -0.007857567735264354, 23: 0.009252957899074198,
                      33: 0.01247027728896088, 34: -0.009402201512424309, 35: 0.0010565103938301136,
                      37: 0.002296266034229723, 38: 0.00457325456278265, 39: -0.011348439621725626}),
}


@pytest.mark.parametrize("files", list(MAIN_CK), ids=lambda f: f[0].split("_")[0])
def test_802_3ck_com_is_mains_bit_for_bit(shared, files):
    want = MAIN_CK[files]
    r = channel_margin(load_set(shared, *files), ComParams.ieee_802_3ck_kr())
    assert r.com_db == want["com_db"]
    assert r.fom_db == want["fom_db"]
    assert r.tx_ffe == want["tx_ffe"]
    assert [r.g_dc_db, r.g_dc2_db] == want["g"]
    assert r.cursor_index == want["cursor"]
    assert r.case_com_db == want["case"]
    assert r.dfe[0] == want["dfe0"]
    assert r.dfe_floating == want["dfe_floating"]


# ------------------------------------------- 178A's MMSE kernel: within 1e-9 dB of main's
#: a reduced 802.3dj grid (bench_com_dj.py's), 180 settings per case
REDUCED_DJ = {"g_dc_db": (0.0, -5.0, -10.0, -15.0, -20.0), "g_dc2_db": (0.0, -3.0, -6.0), "c_m3": (0.0,),
              "c_m2": (0.0, 0.1), "c_m1": (-0.2, -0.1, 0.0), "c_p1": (-0.1, 0.0)}
#: main 862076c: COM of CA_19p75dB (with its FEXT and NEXT) by 802.3dj KR class A on that grid
#: without the MLSD, the floating taps and the quantiser (the search's MMSE kernel alone)
MAIN_DJ = dict(com_db=-4.5567792509951035, fom_db=6.273440971276797, tx_ffe=[0.0, 0.0, 0.0, 1.0, 0.0],
               g=[-20.0, -3.0], cursor=37021,
               case={"class A test 1": -4.5567792509951035, "class A test 2": -3.0687136962379835},
               rx_ffe=[-3.4812439948792346, 9.581190038079654, -12.308310458352885, 1.7609634827202258,
                       33.267776105852484, -99.24764053038994, 147.06778288102035, 34.17713421608863,
                       -58.7802630658979, 54.84053927433075, -33.34248332778499, 14.36454108633338,
                       9.243843245415665, -19.5142559233688, 11.669991319502719])
#: main's kernel FOMs (dB) and cursors over that Tx grid at g_DC -10 dB, g_DC2 -3 dB, class A test 1
MAIN_DJ_GRID = dict(
    fom=[5.396615628116562, 5.745781288932317, 5.756934989362746, 5.932837166041573, 5.986396166622111,
         6.081741313880325, 4.764621155615025, 5.324052659661226, 5.267588621557037, 5.560238999095114,
         5.577475564526165, 5.746171644786331],
    cursor=[37023, 37023, 37023, 37023, 37023, 37023, 37024, 37024, 37024, 37023, 37023, 37023])
#: the MMSE kernel is compiled with fastmath: a change to the code around a sum may let LLVM
#: reassociate it, moving the last bits (measured: below 2e-12 dB over 5 CTLE x 300 Tx
#: settings of the full grid on this channel, every cursor the same)
DJ_BOUND_DB = 1e-9


def dj_params():
    return ComParams.ieee_802_3dj_kr("A").with_(mlsd=False, rx_ffe_float_groups=0, adc_bits=0, **REDUCED_DJ)


def test_mmse_kernel_foms_within_the_bound_of_mains(shared):
    ch = load_set(shared, "CA_19p75dB_thru.s4p", "CA_19p75dB_fext1.s4p", "CA_19p75dB_next1.s4p")
    p = dj_params().cases()[0][1]
    g, [(pulses, kinds, hc)] = real_pulses(ch, p, [(-10.0, -3.0)])
    fom, cur = mmse.grid_foms(p, pulses, kinds, g.hr * hc, g.f, g.M, g.var_x, p._tx_grid())
    np.testing.assert_array_equal(cur, MAIN_DJ_GRID["cursor"])
    np.testing.assert_allclose(fom, MAIN_DJ_GRID["fom"], rtol=0, atol=DJ_BOUND_DB)


def test_802_3dj_com_within_the_bound_of_mains_with_the_same_settings(shared):
    r = channel_margin(load_set(shared, "CA_19p75dB_thru.s4p", "CA_19p75dB_fext1.s4p", "CA_19p75dB_next1.s4p"),
                       dj_params())
    assert abs(r.com_db - MAIN_DJ["com_db"]) <= DJ_BOUND_DB
    assert abs(r.fom_db - MAIN_DJ["fom_db"]) <= DJ_BOUND_DB
    assert r.tx_ffe == MAIN_DJ["tx_ffe"]
    assert [r.g_dc_db, r.g_dc2_db] == MAIN_DJ["g"]
    assert r.cursor_index == MAIN_DJ["cursor"]
    assert list(r.case_com_db) == list(MAIN_DJ["case"])
    np.testing.assert_allclose(list(r.case_com_db.values()), list(MAIN_DJ["case"].values()), rtol=0,
                               atol=DJ_BOUND_DB)
    np.testing.assert_allclose(r.rx_ffe, MAIN_DJ["rx_ffe"], rtol=1e-9, atol=0)
