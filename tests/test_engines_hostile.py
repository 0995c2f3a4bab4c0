"""The engines and the link/demo commands refuse what they cannot compute (issue 31): absurd
and empty channels, kernels fed non-finite numbers, COM on too coarse a grid, NaN error
ratios, jitter and sizes that would allocate without bound, and the commands' bad
arguments and output paths, each before the work and with a one-line ConfigError."""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
import skrf as rf

import channels
import phy
from phy import ConfigError
from phy.engines.timesim.eye import EyeDiagram

BAUD = 106.25e9


def _lib():
    return channels.library.get("chip_to_module")


def _with_s21(values) -> channels.Channel:
    """A differential channel on the library's chip-to-module grid whose S21 is ``values``
    (its own reflections kept, at its differential 100 ohm), built in memory: no loader involved."""
    base = _lib()
    s = base.network.s[:, :2, :2].copy()
    s[:, 1, 0] = values(base.f, s[:, 1, 0])
    freq = rf.Frequency.from_f(base.f, unit="hz")
    return channels.Channel(differential=rf.Network(frequency=freq, s=s, z0=100), name="hostile")


def _huge():
    def one_entry(f, s21):
        s21 = s21.copy()
        s21[f.size // 3] = 1e200
        return s21

    return _with_s21(one_entry)


def _open():
    return _with_s21(lambda f, s21: np.zeros_like(s21))


# ----------------------------------------------------------------------------- 1: absurd pulses
_CRASH = textwrap.dedent("""
    import numpy as np, skrf as rf, channels, phy
    from phy.engines.pmf import discrete_pmf
    lv = np.array([-1.0, -1/3, 1/3, 1.0])
    for args in ((np.array([0.1, np.nan]), lv, -1.0, 0.01, 201), (np.array([0.1]), lv, np.nan, 0.01, 201),
                 (np.array([1e300]), lv, -1.0, 0.01, 201), (np.array([0.1]), lv, -1.0, -0.01, 201),
                 (np.array([0.1]), lv, 5.0, 0.01, 201)):
        try:
            discrete_pmf(*args)
            print("kernel: no error")
        except ValueError as e:
            print("kernel: ValueError")
    base = channels.library.get("chip_to_module")
    s = base.network.s[:, :2, :2].copy()
    s[base.f.size // 3, 1, 0] = 1e200
    ch = channels.Channel(differential=rf.Network(frequency=rf.Frequency.from_f(base.f, unit="hz"), s=s, z0=100))
    try:
        phy.statistical_eye(ch, baud_hz=106.25e9, columns="sampling")
        print("eye: no error")
    except phy.ConfigError as e:
        print("eye: ConfigError", e)
""")


def test_a_huge_s21_entry_and_nan_kernel_inputs_are_refused_not_a_segfault():
    """One S21 entry of 1e200 made the statistical eye's kernel write far outside its
    arrays (a segfault); NaN or huge cursors and grids did the same. In a subprocess, so the
    old code's crash fails the test instead of ending the run."""
    r = subprocess.run([sys.executable, "-c", _CRASH], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"crashed with status {r.returncode}: {r.stderr[-400:]}"
    lines = r.stdout.splitlines()
    assert lines.count("kernel: ValueError") == 5, lines
    eye = [x for x in lines if x.startswith("eye:")]
    assert eye and eye[0].startswith("eye: ConfigError") and "not physical" in eye[0]


def test_a_huge_s21_entry_never_reaches_a_verdict():
    """The time-domain simulator, COM and the link refuse the same channel; the link used to
    PASS it (the packages' cascade divides a huge S21 out of the eye's pulse)."""
    ch = _huge()
    with pytest.raises(ConfigError, match="not physical"):
        phy.simulate(ch, 1000, baud_hz=BAUD, seed=1)
    with pytest.raises(ConfigError, match="not physical"):
        phy.channel_margin(ch, phy.ComParams.ieee_802_3ck_kr().with_(baud_hz=BAUD))
    spec = phy.LinkSpec(channel=ch, lanes=1, lane_rate_bps=212.5e9, fec="KP4")
    with pytest.raises(ConfigError, match="not physical"):
        phy.evaluate_link(spec)


def test_a_pulse_given_as_samples_is_held_to_the_same_bounds():
    p = phy.serdes.pulse.from_samples(np.r_[np.zeros(64), 1e6, np.zeros(191)], BAUD, 32)
    with pytest.raises(ConfigError, match="beyond the 100"):
        phy.statistical_eye(p, columns="sampling")


def test_a_link_whose_eye_is_not_a_number_never_passes():
    from phy.link.report import _reasons

    spec = SimpleNamespace(target_ber=1e-12, fec=None, retry=None)
    eye = SimpleNamespace(main_v=np.array([np.nan]), centre=0)
    seg = SimpleNamespace(name="channel", ser=float("nan"), der=float("nan"), eye=eye)
    reasons = _reasons(spec, [seg], 0.5, 0.0, 1e-5, 1.0)
    assert reasons and "not a number" in reasons[0]


def test_tx_taps_and_swing_that_blow_up_the_slicer_are_refused():
    tx = phy.Transmitter(swing_v=1e9)
    with pytest.raises(ConfigError, match="slicer"):
        phy.statistical_eye(_lib(), baud_hz=BAUD, tx=tx, columns="sampling")


def test_a_sampling_phase_outside_the_record_is_refused():
    with pytest.raises(ConfigError, match="outside the pulse record"):
        phy.statistical_eye(_lib(), baud_hz=BAUD, cdr=phy.Cdr(phase=1.0), columns="sampling")


# ----------------------------------------------------------------------------- 2: COM's grid
@pytest.mark.parametrize("spu", [1, 4, 8, 15])
def test_com_refuses_a_grid_too_coarse_for_its_cursor(spu, monkeypatch):
    """COM at 1 sample per UI was 3 to 12 dB off (3.07 dB on the library's backplane read
    -3.0 dB); below 16 tenths of a dB: refused with the reason, before the chain is built."""
    from phy.engines.com import chain

    monkeypatch.setattr(chain, "terminated_transfer", lambda *a, **k: pytest.fail("work done before the check"))
    with pytest.raises(ConfigError, match="too coarse for COM"):
        phy.channel_margin(channels.library.get("backplane_30db"), samples_per_ui=spu)


@pytest.mark.parametrize("kw", [{"samples_per_ui": 0}, {"samples_per_ui": -3}, {"samples_per_ui": 2.5},
                                {"samples_per_ui": 10**6}, {"n_ui": 0}, {"n_ui": 10**9}])
def test_com_refuses_bad_sizes(kw):
    """``samples_per_ui=0`` fell back to the default silently; a negative one reached numpy."""
    with pytest.raises(ConfigError):
        phy.channel_margin(channels.library.get("backplane_30db"), **kw)


# ----------------------------------------------------------------------------- 3: probabilities
@pytest.fixture(scope="module")
def stat_eye():
    return phy.statistical_eye(_lib(), baud_hz=BAUD, n_bins=512, samples_per_ui=8)


@pytest.mark.parametrize("bad", [float("nan"), -1e-6, 0.0, 1.5, float("inf"), "1e-6", True])
def test_stat_eye_refuses_error_ratios_out_of_range(stat_eye, bad):
    """``heights_v(nan)`` returned zeros (NaN compares false): every target is checked."""
    for call in (stat_eye.heights_v, stat_eye.widths_s, stat_eye.to_dict):
        with pytest.raises(ConfigError, match="error ratio"):
            call(bad)


def test_stat_eye_checks_columns_thresholds_and_eyes(stat_eye):
    with pytest.raises(ConfigError, match="time offsets"):
        stat_eye.ser(column=10**6)
    with pytest.raises(ConfigError, match="time offsets"):
        stat_eye.heights_v(1e-6, column=1.5)
    with pytest.raises(ConfigError):
        stat_eye.ser(thresholds_v=[np.nan, 0.0, 0.1])
    with pytest.raises(ConfigError, match="3 values"):
        stat_eye.ser(thresholds_v=[0.0])
    with pytest.raises(ConfigError, match="eye must be"):
        stat_eye.vertical_bathtub(eye=7)
    with pytest.raises(ConfigError):
        stat_eye.eye_ber(0, 0, np.nan)
    # the good calls still answer
    assert stat_eye.heights_v(1e-6).shape == (3,)
    assert 0.0 <= stat_eye.ser(column=-1) <= 1.0


def _td_eye():
    counts = np.zeros((4, 16), dtype=np.int64)
    counts[:, [2, 6, 10, 14]] = 25
    return EyeDiagram(counts, np.linspace(-4e-12, 2e-12, 4), np.linspace(-0.4, 0.4, 17), np.array([-0.2, 0.0, 0.2]),
                      np.array([-0.3, -0.1, 0.1, 0.3]), np.zeros(4, dtype=np.int64), np.zeros(16, dtype=np.int64),
                      100, 9.4e-12, "pam4")


@pytest.mark.parametrize("bad", [float("nan"), -0.1, 2.0, float("inf")])
def test_time_domain_eye_refuses_error_ratios_out_of_range(bad):
    eye = _td_eye()
    assert eye.heights_v(0.0).min() > 0  # zero hits allowed is a ratio of 0
    with pytest.raises(ConfigError, match="error ratio"):
        eye.heights_v(bad)
    with pytest.raises(ConfigError, match="error ratio"):
        eye.width_s(bad)
    with pytest.raises(ConfigError, match="time offsets"):
        eye.heights_v(0.0, column=4)


# ----------------------------------------------------------------------------- 4: nothing transmitted
@pytest.mark.parametrize("make", [_open, lambda: _with_s21(lambda f, s: 0.0 * s + 1e-14)])
def test_an_open_channel_transmits_nothing(make):
    """An open (S21 = 0) channel failed in COM with numpy's "operands could not be
    broadcast" (and "Singular matrix" with an Rx FFE): one clear error everywhere, from
    the channel's pulse response (ChannelError) or the prepared link (ConfigError),
    whichever sees it first."""
    ch = make()
    for call in (lambda: phy.statistical_eye(ch, baud_hz=BAUD, columns="sampling"),
                 lambda: phy.simulate(ch, 1000, baud_hz=BAUD, seed=1),
                 lambda: phy.channel_margin(ch, phy.ComParams.ieee_802_3ck_kr().with_(baud_hz=BAUD)),
                 lambda: phy.evaluate_link(phy.LinkSpec(channel=ch, lanes=1, lane_rate_bps=212.5e9, fec="KP4"))):
        with pytest.raises((ConfigError, channels.ChannelError), match="transmits nothing"):
            call()


# ----------------------------------------------------------------------------- 5: sizes
def test_absurd_jitter_is_refused_before_any_table(monkeypatch):
    """``Jitter(rj_rms_s=1)`` asked for 396 TiB of tables: refused against the UI first."""
    sim_mod = importlib.import_module("phy.engines.timesim.simulate")  # the module, not the function

    monkeypatch.setattr(sim_mod, "build_tables", lambda *a, **k: pytest.fail("tables built"))
    for j in (phy.Jitter(rj_rms_s=1.0), phy.Jitter(sj_amplitude_s=1e-6, sj_frequency_hz=1e5),
              phy.Jitter(dcd_s=1e-6)):
        with pytest.raises(ConfigError, match="UI"):
            phy.simulate(_lib(), 1000, baud_hz=BAUD, jitter=j, seed=1)
    with pytest.raises(ConfigError, match="UI"):
        phy.statistical_eye(_lib(), baud_hz=BAUD, jitter=phy.Jitter(rj_rms_s=1.0), columns="sampling")


def test_jitter_within_the_bound_still_runs():
    j = phy.Jitter(sj_amplitude_s=2 / BAUD, sj_frequency_hz=1e6)  # 2 UI of sinusoidal jitter
    eye = phy.statistical_eye(_lib(), baud_hz=BAUD, jitter=j, columns="sampling", n_bins=512, samples_per_ui=8)
    assert math.isfinite(eye.ser())


def test_sizes_that_would_allocate_without_bound_are_refused_with_the_figure(monkeypatch):
    sim_mod = importlib.import_module("phy.engines.timesim.simulate")  # the module, not the function

    monkeypatch.setattr(sim_mod, "_run", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(ConfigError, match=r"max_errors_recorded.*TiB"):
        phy.simulate(_lib(), 1000, baud_hz=BAUD, max_errors_recorded=10**15, seed=1)
    with pytest.raises(ConfigError, match=r"waveform_ui.*GiB"):
        phy.simulate(_lib(), 1000, baud_hz=BAUD, waveform_ui=1 << 20, samples_per_ui=256, seed=1)
    with pytest.raises(ConfigError, match=r"statistical eye of 256 columns.*GiB"):
        phy.statistical_eye(_lib(), baud_hz=BAUD, samples_per_ui=256, n_bins=1 << 20)


# ----------------------------------------------------------------------------- 6: the commands
@pytest.mark.parametrize("argv", [
    ["channel", "twinax_1m_26awg", "--baud-gbd", "0"], ["channel", "twinax_1m_26awg", "--baud-gbd", "-53"],
    ["channel", "twinax_1m_26awg", "--baud-gbd", "nan"], ["channel", "twinax_1m_26awg", "--baud-gbd", "inf"],
    ["channel", "twinax_1m_26awg", "--baud-gbd", "1e300"], ["channel", "twinax_1m_26awg", "--samples-per-ui", "0"],
    ["demo", "--n-ui", "0"], ["demo", "--n-ui", "-5"], ["demo", "--n-ui", "1e12"], ["demo", "--n-ui", "10000000000"],
])
def test_bad_numbers_are_refused_at_parse_time(argv, capsys):
    from phy.cli import build_parser

    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("linkmodel")


def test_plot_into_a_missing_folder_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    from phy.cli import channel as cli_channel
    from phy.cli import main

    monkeypatch.setattr(cli_channel, "_open", lambda *a, **k: pytest.fail("work done before the check"))
    assert main(["channel", "twinax_1m_26awg", "--plot", str(tmp_path / "missing" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["channel", "twinax_1m_26awg", "--plot", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_a_write_failure_is_an_oserror_naming_the_file(tmp_path):
    from phy.cli._args import save_figure

    class Full:
        def savefig(self, path, **kw):
            raise OSError(28, "No space left on device")

    target = tmp_path / "eye.png"
    with pytest.raises(OSError) as e:
        save_figure(Full(), target, dpi=110)
    assert e.value.filename == str(target) and e.value.errno == 28


def test_demo_checks_its_output_folder_before_any_work(tmp_path, monkeypatch, capsys):
    from phy.cli import demo as cli_demo
    from phy.cli import main

    monkeypatch.setattr(cli_demo, "run_demo", lambda *a, **k: pytest.fail("work done before the check"))
    monkeypatch.setattr(cli_demo, "_warm_up_if_cold", lambda: pytest.fail("warm-up before the check"))
    afile = tmp_path / "a_file"
    afile.write_text("x")
    assert main(["demo", "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["demo", "--out", str(afile / "sub")]) == 2
    assert "cannot be made" in capsys.readouterr().err


def test_run_demo_refuses_bad_sizes_before_the_work(tmp_path, monkeypatch):
    from phy.cli import demo as cli_demo

    monkeypatch.setattr(channels.library, "get", lambda *a: pytest.fail("work done before the check"))
    for n in (0, -1, 2.5, 10**12):
        with pytest.raises(ConfigError, match="n_ui"):
            cli_demo.run_demo(None, n_ui=n, plots=False)
    afile = tmp_path / "f"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        cli_demo.run_demo(afile, n_ui=1000, plots=True)


def test_the_replay_monte_carlo_refuses_runs_without_end(monkeypatch):
    """A flit error ratio near 1 (or a burst rate that fails nearly every flit) made the
    go-back-N kernel loop for hours: refused with the expected count, before the kernel."""
    from phy.link import retry

    monkeypatch.setattr(retry, "go_back_n_iid", lambda *a: pytest.fail("kernel ran"))
    monkeypatch.setattr(retry, "go_back_n_bursts", lambda *a: pytest.fail("kernel ran"))
    with pytest.raises(ConfigError, match="transmissions"):
        retry.simulate_replay(10**6, flits=10**4, flit_ui=512, one_way_ui=10, flit_error_ratio=1 - 1e-9)
    with pytest.raises(ConfigError, match="transmissions"):
        retry.simulate_replay(1000, flits=10, flit_ui=512, one_way_ui=10, burst_rate=1.0, span_pmf=[0.0, 1.0])


@pytest.mark.parametrize("f_hz, rule", [
    (np.linspace(10e6, 5e9, 40), "Nyquist"),        # data end far below the band COM needs
    (np.linspace(10e6, 60e9, 2), "at least 16"),     # the 2-point file that got COM -13.1 dB
    (np.linspace(10e6, 60e9, 20), "step"),           # 3 GHz steps: a 0.3 ns record for a 1 ns line
])
def test_com_refuses_a_grid_that_cannot_give_the_pulse(f_hz, rule):
    """A file's grid too short, too sparse or too coarse for the baud rate is refused by COM
    with the rule it breaks (channels.grid.check_pulse_grid), not given a number."""
    ch = channels.media.stripline(0.15, frequency=f_hz)
    with pytest.raises(channels.ChannelError, match=rule):
        phy.channel_margin(ch, phy.ComParams.ieee_802_3ck_kr())
