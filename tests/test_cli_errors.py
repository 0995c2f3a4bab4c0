"""The command's error lines: one line, control characters escaped, and a file that cannot be
read or written while working exits 3 naming it, not 1 ("the link fails") or a traceback (issue 31)."""

from __future__ import annotations

import errno

import pytest

import phy.cli as cli


def test_a_control_character_in_a_file_name_is_escaped(capsys, tmp_path):
    name = str(tmp_path / "evil\x1b[2J\nname.s4p")
    assert cli.main(["channel", name]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1, repr(err)
    assert "evil\\x1b[2J\\nname.s4p" in err


def test_one_line_keeps_printable_text():
    assert cli._one_line("Sdd21 at 26.6 GHz: 3 dB, µm, Ω") == "Sdd21 at 26.6 GHz: 3 dB, µm, Ω"
    assert cli._one_line("a\tb\rc\x00") == "a\\tb\\rc\\x00"


@pytest.mark.parametrize("exc", [OSError(errno.ENOSPC, "No space left on device", "/data/store.jsonl"),
                                 PermissionError(errno.EACCES, "Permission denied", "/data/eye.png")])
def test_a_file_error_while_working_exits_3_with_one_line(monkeypatch, capsys, exc):
    def fails(args):
        raise exc

    monkeypatch.setattr(cli, "_cmd_library", fails)
    assert cli.main(["library"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linkmodel: error: could not read or write a file: ")
    assert exc.strerror in err and exc.filename in err
    assert 3 in cli.EXIT_CODES and cli.EXIT_CODES[1].startswith("link:")


def test_a_closed_pipe_is_still_141(monkeypatch):
    def closed(args):
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(cli, "_cmd_library", closed)
    monkeypatch.setattr(cli.os, "dup2", lambda *a: None)
    assert cli.main(["library"]) == 141
