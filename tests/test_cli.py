"""The linkmodel command: text and JSON output agree with the library calls."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import channels
from phy import cli

from conftest import shared_file


def test_channel_json_matches_library_calls(capsys):
    assert cli.main(["channel", "twinax_1m_26awg", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ch = channels.library.get("twinax_1m_26awg")
    assert out["rates"][1]["insertion_loss_db"] == pytest.approx(ch.insertion_loss_db(53.125e9), abs=1e-12)
    pr = ch.pulse_response(106.25e9, 32, rise_time_s=0.3 / 106.25e9, rx_bandwidth_hz=0.75 * 106.25e9)
    assert out["rates"][1]["pulse_main_cursor"] == pytest.approx(pr.main_cursor, abs=1e-12)
    assert out["warnings"] == []


def test_channel_text_for_a_file_with_aggressors_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = shared_file("ieee802.3ck/CA_19p75dB_thru.s4p")
    png = tmp_path / "ch.png"
    assert cli.main(["channel", str(path), "--aggressors", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "port order   12_34" in text
    assert "crosstalk CA_19p75dB_next1" in text
    assert png.stat().st_size > 10_000


def test_library_listing(capsys):
    assert cli.main(["library"]) == 0
    text = capsys.readouterr().out
    for name in channels.library.names():
        assert name in text


def test_errors_exit_2_with_a_message(capsys):
    assert cli.main(["channel", "no_such_channel_or_file.s4p"]) == 2
    assert "neither a built-in channel" in capsys.readouterr().err


def test_every_subcommand_has_help(capsys):
    for sub in (["--help"], ["channel", "--help"], ["library", "--help"]):
        with pytest.raises(SystemExit) as exc:
            cli.main(sub)
        assert exc.value.code == 0
    assert "usage" in capsys.readouterr().out


def _writer_status_and_stderr(cmd: str, env: dict) -> tuple[str, str]:
    # the writer's own exit status (PIPESTATUS[0]), whatever the reader did
    r = subprocess.run(["bash", "-c", f'{cmd} > /dev/null; echo "${{PIPESTATUS[0]}}"'], capture_output=True,
                       text=True, env=env, timeout=60)
    return r.stdout.strip(), r.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for the pipeline")
@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("reader", ["head -c 10", "head -1", "true"])
def test_a_closed_stdout_ends_the_command_quietly(reader, buffered):
    # "true" exits before linkmodel has even started writing: every write then fails
    exe = Path(sys.executable).with_name("linkmodel")
    if not exe.exists():
        pytest.skip("the linkmodel console script is not installed beside this Python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    status, err = _writer_status_and_stderr(f"{exe} library --json | {reader}", env)
    assert err == ""
    assert status in ("0", "141")


def test_python_dash_m_phy_cli_works_and_ends_quietly_on_a_closed_pipe():
    status, err = _writer_status_and_stderr(f"{sys.executable} -m phy.cli library --json | true", dict(os.environ))
    assert err == "" and status in ("0", "141")
    r = subprocess.run([sys.executable, "-m", "phy.cli", "library"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "twinax_1m_26awg" in r.stdout


def test_com_command_names_the_package_case(capsys):
    from phy.cli import main
    from phy.cli.com import com_params

    # the full 802.3ck grid on a built-in channel: both package tests, the lower named
    assert main(["com", "chip_to_module", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["case_com_db"]) == {"test 1 (12 mm)", "test 2 (31/29 mm)"}
    assert d["com_db"] == min(d["case_com_db"].values()) == d["case_com_db"][d["package_case"]]
    assert d["settings_searched"] == 2 * com_params("802.3ck_kr").n_tx_settings * 147
    assert main(["com", "chip_to_module"]) == 0
    out = capsys.readouterr().out
    assert "sets it (cases:" in out and out.startswith("COM ")
    assert main(["com", "chip_to_module", "--preset", "802.3dj_kr", "--package-class", "C"]) == 2
    assert "package_class" in capsys.readouterr().err
