"""The helpers of benchmarks/bench_ami_pybert.py: the shared eye height and the PyBERT skip."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_ami_pybert  # noqa: E402
from ami_eye import eye_height  # noqa: E402


def _wave(symbols, nspui, delay_ui, pulse):
    """Symbols through a pulse of ``nspui`` samples per UI, shifted by ``delay_ui`` UI."""
    x = np.zeros(len(symbols) * nspui)
    x[::nspui] = symbols
    y = np.convolve(x, pulse)[: len(x)]
    return np.concatenate([np.zeros(delay_ui * nspui), y])[: len(x)]


def test_eye_height_finds_delay_phase_and_inner_eye():
    rng = np.random.default_rng(3)
    sym = rng.choice([-1.0, 1.0], 4000)
    nspui = 8
    # a pulse peaking at sample 5 with 1.0, and 0.25 of ISI one UI later at the same phase
    pulse = np.zeros(3 * nspui)
    pulse[5], pulse[5 + nspui] = 1.0, 0.25
    pulse[4], pulse[6] = 0.5, 0.5
    h, phase, delay = eye_height(_wave(sym, nspui, 7, pulse), sym, nspui, 2000)
    assert (phase, delay) == (5, 7)
    assert h == pytest.approx(2 * (1.0 - 0.25))


def test_eye_height_negative_when_closed():
    rng = np.random.default_rng(4)
    sym = rng.choice([-1.0, 1.0], 4000)
    nspui = 4
    pulse = np.repeat([1.0, 0.7, 0.7], nspui)   # NRZ pulse, ISI 1.4 > cursor 1.0 at every phase
    h, _, _ = eye_height(_wave(sym, nspui, 0, pulse), sym, nspui, 100)
    assert h == pytest.approx(2 * (1.0 - 1.4))


def test_eye_height_ignores_phases_without_data():
    sym = np.tile([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0], 200)
    y = _wave(sym, 4, 0, np.array([0.0, 0.0, 0.3]))   # data only at phase 2
    h, phase, _ = eye_height(y, sym, 4, 10)
    assert phase == 2 and h == pytest.approx(0.6)
    assert eye_height(np.zeros(400), sym[:100], 4, 10)[0] == -np.inf


def test_eye_height_refuses_too_short():
    with pytest.raises(ValueError, match="fewer than 2 UI"):
        eye_height(np.zeros(5), [1, -1, 1], 4, 0)


def test_pybert_side_skips_without_its_venv(tmp_path):
    r = bench_ami_pybert.pybert(tmp_path / "no" / "python", None, "a.so", "a.ami", "c.s4p", 10e9, 1000, 32)
    assert "skipped" in r and "no PyBERT venv" in r["skipped"]


def test_row_gives_ratio_of_throughputs():
    row = bench_ami_pybert._row(1000, {"seconds": 1.0, "ui_per_s": 3e5, "eye_height_V": 0.5},
                                {"seconds": 2.0, "ui_per_s": 1e3, "eye_height_V": 0.5})
    assert row.rstrip().endswith("300x")
    assert bench_ami_pybert._row(1000, {"skipped": "x"}, {"seconds": 2.0, "ui_per_s": 1e3}).rstrip().endswith("-")


@pytest.fixture(scope="module")
def example_models(tmp_path_factory):
    """ibisami's example Tx/Rx built and PyAMI's prebuilt Tx extracted (skip when impossible here)."""
    import ami_example_models as ex

    out = tmp_path_factory.mktemp("ami-examples")
    try:
        built = ex.build_ibisami(out)
        pyami = ex.extract_pyami_tx(out, ami=built["example_tx"]["ami"])
    except ex.NotBuilt as err:
        pytest.skip(str(err))
    return ex, built, pyami


def test_example_models_init_with_defaults(example_models):
    ex, built, pyami = example_models
    rx = ex.ctypes_check(built["example_rx"]["so"], ex.DEFAULT_PARAMS["example_rx"])
    assert (rx["init"], rx["getwave"], rx["getwave_finite"], rx["close"]) == (1, 1, True, 1)
    assert rx["impulse_area"] == pytest.approx(1.0)          # CTLE and DFE off: a pass-through
    for so in (built["example_tx"]["so"], pyami["so"]):
        tx = ex.ctypes_check(so, ex.DEFAULT_PARAMS["example_tx"])
        assert (tx["init"], tx["close"]) == (1, 1)
        assert tx["impulse_area"] == pytest.approx(1.0989, abs=1e-4)   # its tap_weights_[1]
        assert "(tap_weights_[1] 1.0989)" in tx["params_out"]
