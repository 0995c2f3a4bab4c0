"""The oracle IBIS-AMI models in C (tests/ami_models/ffe_tx.c and ctle_dfe_rx.c), called in
process through ctypes, against the native parts they stand for: phy.serdes.TxFfe and
phy.serdes.Ctle (AMI_Init), a causal FIR, scipy's bilinear sections and a numpy DFE
(AMI_GetWave). Compiled with ``cc`` into a temporary folder; skipped when there is no ``cc``."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import signal

from phy.serdes import Ctle, TxFfe

MODELS = Path(__file__).resolve().parent / "ami_models"
BAUD = 53.125e9
UI = 1 / BAUD


def _compile(name: str, out_dir: Path) -> Path:
    """tests/ami_models/<name>.c compiled into out_dir/<name>.so (the lead's build harness's flags)."""
    out = out_dir / f"{name}.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-std=c99", "-o", str(out), str(MODELS / f"{name}.c"), "-lm"],
                   check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) to build the oracle AMI models")
    d = tmp_path_factory.mktemp("ami_oracle")
    return {name: _compile(name, d) for name in ("ffe_tx", "ctle_dfe_rx")}


class Model:
    """One AMI model instance over ctypes: init, getwave (in place on a copy), close."""

    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        dp, cpp, vpp = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_void_p)
        lib.AMI_Init.argtypes = [dp, ctypes.c_long, ctypes.c_long, ctypes.c_double, ctypes.c_double,
                                 ctypes.c_char_p, cpp, vpp, cpp]
        lib.AMI_GetWave.argtypes = [dp, ctypes.c_long, dp, cpp, ctypes.c_void_p]
        lib.AMI_Close.argtypes = [ctypes.c_void_p]
        for f in (lib.AMI_Init, lib.AMI_GetWave, lib.AMI_Close):
            f.restype = ctypes.c_long
        self.lib, self.handle = lib, ctypes.c_void_p()

    @staticmethod
    def _ptr(a: np.ndarray):
        return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    def init(self, impulse, dt, bit_time, params: str):
        """(rc, impulse out, params_out, msg); impulse of shape (rows, row_size)."""
        m = np.array(np.atleast_2d(impulse), dtype=float, order="C")
        out, msg = ctypes.c_char_p(), ctypes.c_char_p()
        rc = self.lib.AMI_Init(self._ptr(m), m.shape[1], m.shape[0] - 1, dt, bit_time, params.encode(),
                               ctypes.byref(out), ctypes.byref(self.handle), ctypes.byref(msg))
        return rc, m, (out.value or b"").decode(), (msg.value or b"").decode()

    def getwave(self, wave, spu: int):
        """(rc, wave out, valid clock times, params_out): clock buffer as the runner's (-1 filled)."""
        w = np.array(wave, dtype=float)
        clocks = np.full(-(-w.size // spu) + 8, -1.0)
        out = ctypes.c_char_p()
        rc = self.lib.AMI_GetWave(self._ptr(w), w.size, self._ptr(clocks), ctypes.byref(out), self.handle)
        valid = clocks[: np.argmax(clocks < 0)] if np.any(clocks < 0) else clocks
        return rc, w, valid, (out.value or b"").decode()

    def close(self):
        if self.handle:
            self.lib.AMI_Close(self.handle)
        self.handle = ctypes.c_void_p()


def _params(root: str, **kw) -> str:
    items = " ".join(f'({k} "{v}")' if isinstance(v, str) else f"({k} {v!r})" for k, v in kw.items())
    return f"({root} {items})"


def _params_out(text: str) -> dict:
    return {k: float(v) for k, v in re.findall(r"\((\w+) ([-+0-9.eE]+)\)", text)}


def _channel_impulse(n: int, dt: float, rows: int = 1, seed: int = 1) -> np.ndarray:
    """Smooth channel-like impulses (V/s): a delayed gamma-shaped bump and a little ringing."""
    t = np.arange(n) * dt
    rng = np.random.default_rng(seed)
    out = []
    for r in range(rows):
        t0, tau = 20 * UI * (1 + 0.2 * r), (0.8 + 0.3 * rng.random()) * UI
        x = np.where(t > t0, ((t - t0) / tau) ** 2 * np.exp(-(t - t0) / tau), 0.0)
        x += 0.05 * np.sin(2 * np.pi * t / (7 * UI)) * np.exp(-t / (30 * UI))
        out.append(x / (x.sum() * dt) * (1.0 if r == 0 else 0.1))
    return np.array(out)


TAPS = (0.02, -0.08, 0.7, -0.15, 0.03, -0.01)
FFE_PARAMS = _params("ffe_tx", **dict(zip(("tap_pre2", "tap_pre1", "tap_main", "tap_post1", "tap_post2",
                                           "tap_post3"), TAPS)))


def test_ffe_init_is_txffe_row_by_row(libs):
    spu, dt = 8, UI / 8
    x = _channel_impulse(600, dt, rows=3)
    m = Model(libs["ffe_tx"])
    rc, y, out, msg = m.init(x, dt, UI, FFE_PARAMS)
    m.close()
    assert rc == 1, msg
    ref = np.array([TxFfe(TAPS, main=2, normalise=False).apply(row, spu) for row in x])
    err = np.abs(y - ref).max() / np.abs(x).max()
    print(f"ffe_tx Init vs TxFfe.apply: max |diff| / max |x| = {err:.2e}")
    assert err <= 1e-14
    assert not np.allclose(y, x)  # the taps did act


def _fir(c, spu):
    h = np.zeros((len(c) - 1) * spu + 1)
    h[::spu] = c
    return h


def _split(n: int, rng, small=(1,)) -> list[int]:
    """Random block boundaries covering 0..n, with some blocks of the given small sizes."""
    cuts, i = [0], 0
    while i < n:
        i = min(n, i + int(rng.choice(small)) if rng.random() < 0.3 else i + int(rng.integers(1, 400)))
        cuts.append(i)
    return cuts


def test_ffe_getwave_is_the_causal_fir_across_blocks(libs):
    spu, dt = 8, UI / 8
    rng = np.random.default_rng(3)
    x = np.repeat(rng.choice([-1.0, -1 / 3, 1 / 3, 1.0], 700), spu) + 0.01 * rng.standard_normal(700 * spu)
    m = Model(libs["ffe_tx"])
    assert m.init(_channel_impulse(256, dt), dt, UI, FFE_PARAMS)[0] == 1
    cuts = _split(x.size, rng, small=(1, spu - 1))
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        rc, w, clocks, _ = m.getwave(x[a:b], spu)
        assert rc == 1 and clocks.size == 0  # clock_times untouched
        parts.append(w)
    m.close()
    ref = np.convolve(x, _fir(TAPS, spu))[: x.size]
    err = np.abs(np.concatenate(parts) - ref).max() / np.abs(x).max()
    print(f"ffe_tx GetWave vs causal FIR over {len(cuts) - 1} blocks: {err:.2e}")
    assert err <= 1e-14


def test_ffe_defaults_pass_through(libs):
    spu, dt = 4, UI / 4
    x = _channel_impulse(128, dt, rows=2)
    m = Model(libs["ffe_tx"])
    rc, y, out, msg = m.init(x, dt, UI, "(ffe_tx)")
    assert rc == 1, msg
    np.testing.assert_array_equal(y, x)  # tap_main 1, the others 0
    w = np.arange(1.0, 41.0)
    rc, yw, _, _ = m.getwave(w, spu)
    m.close()
    np.testing.assert_array_equal(yw, np.concatenate([np.zeros(2 * spu), w[: -2 * spu]]))  # 2 UI late


@pytest.mark.parametrize("name", ["ffe_tx", "ctle_dfe_rx"])
def test_non_integer_samples_per_ui_is_refused(libs, name):
    m = Model(libs[name])
    rc, _, _, msg = m.init(np.ones((1, 64)), UI / 8.5, UI, f"({name})")
    assert rc == 0
    assert "not an integer" in msg and name in msg


CTLE = dict(g_dc_db=-7.0, g_dc2_db=-3.0, f_z_hz=BAUD / 2.5, f_p1_hz=BAUD / 2.5, f_p2_hz=BAUD, f_lf_hz=BAUD / 80)


def _ctle_ref(x: np.ndarray, dt: float, **kw) -> np.ndarray:
    ctle = Ctle(**{k: (None if k == "f_lf_hz" and v == 0 else v) for k, v in kw.items()})
    n = x.shape[-1]
    return np.fft.irfft(np.fft.rfft(x, axis=-1) * ctle.response(np.fft.rfftfreq(n, dt)), n, axis=-1)


def _peak_phase(y: np.ndarray, spu: int, dt: float):
    p = np.convolve(y, np.ones(spu))[: y.size] * dt
    return int(np.argmax(p)), int(np.argmax(p)) % spu, float(p.max())


@pytest.mark.parametrize("n", [1024, 999])  # the radix-2 FFT and the direct DFT
def test_ctle_init_is_the_fft_ctle(libs, n):
    spu, dt = 16, UI / 16
    x = _channel_impulse(n, dt, rows=3)
    m = Model(libs["ctle_dfe_rx"])
    rc, y, out, msg = m.init(x, dt, UI, _params("ctle_dfe_rx", **CTLE, dfe_n=2, dfe_tap1=0.1, dfe_tap2=-0.02))
    m.close()
    assert rc == 1, msg
    ref = _ctle_ref(x, dt, **CTLE)
    err = np.abs(y - ref).max() / np.abs(x).max()
    print(f"ctle_dfe_rx Init (N = {n}) vs numpy irfft(rfft(x) H): {err:.2e}")
    assert err <= 1e-12
    assert np.abs(y - x).max() > 0.1 * np.abs(x).max()  # the CTLE did act
    peak, phase, top = _peak_phase(ref[0], spu, dt)
    got = _params_out(out)
    assert (got["peak_index"], got["sample_phase"]) == (peak, phase)
    assert got["main_cursor_v"] == pytest.approx(top, rel=1e-12)  # 0 given: the Init pulse's peak
    assert (got["dfe_tap1"], got["dfe_tap2"]) == (0.1, -0.02)


def test_ctle_defaults_and_bad_parameters(libs):
    dt = UI / 8
    x = _channel_impulse(512, dt)
    m = Model(libs["ctle_dfe_rx"])
    rc, y, _, msg = m.init(x, dt, UI, "(ctle_dfe_rx)")
    m.close()
    assert rc == 1, msg
    np.testing.assert_allclose(y, _ctle_ref(x, dt), rtol=0, atol=1e-12 * np.abs(x).max())  # Ctle() defaults
    for bad, words in [("(ctle_dfe_rx (dfe_n 9))", "dfe_n"), ('(ctle_dfe_rx (modulation "PAM8"))', "modulation"),
                       ("(ctle_dfe_rx (f_z_hz 0))", "f_z_hz"), ("(ctle_dfe_rx (g_dc_db abc))", "g_dc_db")]:
        rc, _, _, msg = Model(libs["ctle_dfe_rx"]).init(x, dt, UI, bad)
        assert rc == 0 and words in msg, (bad, msg)
    rc, _, _, msg = Model(libs["ctle_dfe_rx"]).init(np.zeros((1, 65537)), dt, UI, "(ctle_dfe_rx)")
    assert rc == 0 and "65537" in msg


def _sections(dt: float, g_dc_db, g_dc2_db, f_z_hz, f_p1_hz, f_p2_hz, f_lf_hz):
    w = lambda f: 2 * np.pi * f  # noqa: E731
    g1, g2 = 10 ** (g_dc_db / 20), 10 ** (g_dc2_db / 20)
    secs = [([1 / w(f_z_hz), g1], [1 / w(f_p1_hz), 1]), ([1.0], [1 / w(f_p2_hz), 1])]
    if f_lf_hz > 0 and g_dc2_db != 0:
        secs.append(([1 / w(f_lf_hz), g2], [1 / w(f_lf_hz), 1]))
    return [signal.bilinear(b, a, fs=1 / dt) for b, a in secs]


def _ctle_wave(libs, x, spu, params, rng=None):
    """The model's GetWave output over x (one block, or random blocks with rng)."""
    dt = UI / spu
    m = Model(libs["ctle_dfe_rx"])
    rc, _, out, msg = m.init(_channel_impulse(1024, dt), dt, UI, params)
    assert rc == 1, msg
    cuts = [0, x.size] if rng is None else _split(x.size, rng, small=(1, spu - 1))
    waves, clocks = [], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        rc, w, c, _ = m.getwave(x[a:b], spu)
        assert rc == 1
        waves.append(w)
        clocks.append(c)
    m.close()
    return np.concatenate(waves), np.concatenate(clocks), _params_out(out)


def _data_wave(n_ui: int, spu: int, seed: int, levels=(-1.0, -1 / 3, 1 / 3, 1.0)) -> np.ndarray:
    """Symbols through a smooth (Gaussian) pulse, zero at both ends (a linear and a circular filter agree)."""
    rng = np.random.default_rng(seed)
    sym = np.zeros(n_ui)
    sym[100:-300] = rng.choice(levels, n_ui - 400)
    t = np.arange(-4 * spu, 4 * spu + 1) / spu
    g = np.exp(-0.5 * (t / 0.45) ** 2)
    return np.convolve(np.repeat(sym, spu), g / g.sum() * spu, mode="same") / spu


def test_ctle_getwave_is_the_bilinear_sections(libs):
    spu = 32
    dt = UI / spu
    x = _data_wave(800, spu, seed=5)
    y, clocks, got = _ctle_wave(libs, x, spu, _params("ctle_dfe_rx", **CTLE), np.random.default_rng(7))
    ref = x
    for b, a in _sections(dt, **CTLE):
        ref = signal.lfilter(b, a, ref)
    err = np.abs(y - ref).max() / np.abs(x).max()
    print(f"ctle_dfe_rx GetWave CTLE vs scipy bilinear + lfilter: {err:.2e}")
    assert err <= 1e-12
    phase = int(got["sample_phase"])
    first = 0 if phase >= spu // 2 else 1  # UI 0's clock time is negative then: left out
    np.testing.assert_array_equal(clocks, (np.arange(first, x.size // spu) * spu + phase) * dt - UI / 2)


def test_ctle_getwave_is_close_to_the_fft_ctle(libs):
    spu = 32
    x = _data_wave(3000, spu, seed=9)
    y, _, _ = _ctle_wave(libs, x, spu, _params("ctle_dfe_rx", **CTLE))
    ref = _ctle_ref(x, UI / spu, **CTLE)
    rel = np.sqrt(np.mean((y - ref) ** 2)) / np.sqrt(np.mean(ref ** 2))
    print(f"ctle_dfe_rx GetWave (bilinear) vs FFT CTLE at 32 samples/UI: rms diff = {100 * rel:.3f} % of rms")
    assert rel < 0.002  # the bilinear warping at 32 samples/UI (brief: < 1 %)


def _decide(s: float, vref: float, pam4: bool) -> float:
    if not pam4:
        return -1.0 if s < 0 else 1.0
    t = vref * (2.0 / 3.0)
    return -1.0 if s < -t else -1 / 3 if s < 0 else 1 / 3 if s < t else 1.0


def _dfe_reference(c, spu, phase, taps, vref, pam4, dt):
    """The DFE of ctle_dfe_rx.c in plain numpy/Python, on the CTLE output c."""
    h, k, fb, d = spu // 2, 0, 0.0, []
    out, clocks = np.empty_like(c), []
    for n in range(c.size):
        while n >= (k + 1) * spu + phase - h:
            k += 1
            fb = 0.0
            for j, t in enumerate(taps):
                fb += t * (d[-1 - j] if j < len(d) else 0.0)
        out[n] = c[n] - fb
        if n == k * spu + phase:
            d.append(_decide(out[n], vref, pam4))
            if n * dt - UI / 2 >= 0:  # a negative clock time is left out (it would end the list)
                clocks.append(n * dt - UI / 2)
    return out, np.array(clocks), np.array(d)


@pytest.mark.parametrize("mod, spu", [("PAM4", 8), ("NRZ", 8), ("PAM4", 5)])
def test_dfe_getwave_matches_the_reference(libs, mod, spu):
    levels = (-1.0, -1 / 3, 1 / 3, 1.0) if mod == "PAM4" else (-1.0, 1.0)
    x = _data_wave(1500, spu, seed=11, levels=levels)
    x = x + 0.35 * np.concatenate([np.zeros(spu), x[:-spu]]) + 0.1 * np.concatenate([np.zeros(2 * spu), x[:-2 * spu]])
    base = dict(CTLE, modulation=mod)
    c, clocks0, got0 = _ctle_wave(libs, x, spu, _params("ctle_dfe_rx", **base))  # the CTLE alone
    taps = [0.08, 0.03, -0.01]
    dfe = dict(base, dfe_n=3, **{f"dfe_tap{j + 1}": t for j, t in enumerate(taps)}, main_cursor_v=0.3)
    y, clocks, got = _ctle_wave(libs, x, spu, _params("ctle_dfe_rx", **dfe), np.random.default_rng(13))
    ref, ref_clocks, d = _dfe_reference(c, spu, int(got["sample_phase"]), taps, 0.3, mod == "PAM4", UI / spu)
    np.testing.assert_array_equal(y, ref)
    np.testing.assert_array_equal(clocks, ref_clocks)
    np.testing.assert_array_equal(clocks0, ref_clocks)
    assert set(np.unique(d)) == set(levels)  # every level decided
    assert np.abs(y - c).max() > 0.01  # the feedback acted


def test_the_ami_files_drive_the_models(libs):
    """The .ami files' parameter strings (part A's reader, when present) are read by the models."""
    params = pytest.importorskip("phy.ami.params")
    tx, rx = (params.read_ami(MODELS / f"{n}.ami") for n in ("ffe_tx", "ctle_dfe_rx"))
    assert tx.init_returns_impulse and tx.getwave_exists and rx.init_returns_impulse and rx.getwave_exists
    assert set(tx.model_specific) == {"tap_pre2", "tap_pre1", "tap_main", "tap_post1", "tap_post2", "tap_post3"}
    dt = UI / 8
    x = _channel_impulse(512, dt, rows=2)
    rc, y, _, msg = Model(libs["ffe_tx"]).init(x, dt, UI, tx.parameters_in({"tap_pre1": -0.1, "tap_post1": -0.2}))
    assert rc == 1, msg
    np.testing.assert_array_equal(y, [TxFfe((0, -0.1, 1, -0.2, 0, 0), main=2, normalise=False).apply(r, 8) for r in x])
    ctle = dict(CTLE, f_p2_hz=BAUD * 0.9)
    rc, y, out, msg = Model(libs["ctle_dfe_rx"]).init(x, dt, UI, rx.parameters_in(dict(ctle, modulation="NRZ")))
    assert rc == 1, msg
    np.testing.assert_allclose(y, _ctle_ref(x, dt, **ctle), rtol=0, atol=1e-12 * np.abs(x).max())
    assert params.parse_params_out(out)["sample_phase"] == _peak_phase(_ctle_ref(x[0], dt, **ctle), 8, dt)[1]
