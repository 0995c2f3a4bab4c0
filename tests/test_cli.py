"""The linkmodel command: text and JSON output agree with the library calls."""

from __future__ import annotations

import json

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
