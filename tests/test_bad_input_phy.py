"""Bad input to ``phy.sweep`` and the ``linkmodel`` command raises :class:`phy.ConfigError`
with a one-line message naming the bad value and what was expected; never a traceback
from deep inside (``OSError``, ``UnicodeDecodeError``, ``TypeError``).

Covers the paths of sweep and rack files (``None``, a number, a name too long for the
OS, a directory, a FIFO, an unreadable file), their contents (binary, not UTF-8, an
infinite number), grid values and zip rows given twice, and the arguments of
:func:`phy.sweep.run_sweep` (store, workers, time limit).
"""

from __future__ import annotations

import os
import sys

import pytest

import phy.config
from phy import ConfigError, cli
from phy import sweep as sw

SWEEP = '[sweep]\nname = "t"\n\n[link]\nequalisation = "preset"\n\n[grid]\n"channel.length_m" = [0.5, 1.0]\n'
RACK = '[rack]\nbuilder = "nvl72"\n\n[link]\nequalisation = "preset"\n'


def _one_line(exc_info) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg and len(msg) < 400, msg
    return msg


@pytest.fixture(params=["sweep", "rack"])
def reader(request):
    """Each file reader with the words its messages start with."""
    if request.param == "sweep":
        return sw.load_spec, "spec file"
    return phy.config.load_rack, "rack file"


# ----------------------------------------------------------------------------- paths
@pytest.mark.parametrize("path, shown", [(None, "None"), (3, "3"), (2.5, "2.5"), (["a.toml"], r"\['a.toml'\]")])
def test_a_path_that_is_not_a_path(reader, path, shown):
    read, what = reader
    with pytest.raises(ConfigError, match=rf"^{what} must be a path \(a str or os.PathLike\), got {shown}$") as e:
        read(path)
    _one_line(e)


def test_a_missing_file(reader, tmp_path):
    read, what = reader
    with pytest.raises(ConfigError, match=rf"^{what} '.*nowhere.toml': no such file$"):
        read(tmp_path / "nowhere.toml")


def test_a_name_too_long_for_the_os(reader, tmp_path):
    read, what = reader
    long = str(tmp_path / ("a" * 5000 + ".toml"))
    msg = rf"^{what} '.*\.\.\..*' \({len(long)} characters\): file name too long$"
    with pytest.raises(ConfigError, match=msg) as e:
        read(long)
    _one_line(e)


def test_a_directory(reader, tmp_path):
    read, what = reader
    with pytest.raises(ConfigError, match=rf"^{what} '.*': is a directory, not a file$"):
        read(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(reader, tmp_path):
    read, what = reader
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=rf"^{what} '.*spec.toml': is not a regular file$"):
        read(fifo)


def test_an_unreadable_file(reader, tmp_path):
    read, what = reader
    p = tmp_path / "secret.toml"
    p.write_text(SWEEP if what == "spec file" else RACK)
    p.chmod(0)
    try:
        if os.access(p, os.R_OK):
            pytest.skip("running as a user who reads any file (root)")
        with pytest.raises(ConfigError, match=rf"^{what} '.*secret.toml': permission denied$"):
            read(p)
    finally:
        p.chmod(0o600)


# ----------------------------------------------------------------------------- contents
def test_a_binary_file(reader, tmp_path):
    read, what = reader
    p = tmp_path / "spec.toml"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ConfigError, match=rf"^{what} '.*spec.toml': a binary file \(a NUL byte at offset 8\), "
                                          r"not TOML text$"):
        read(p)


def test_a_file_that_is_not_utf8(reader, tmp_path):
    read, what = reader
    p = tmp_path / "spec.toml"
    p.write_bytes(b'[sweep]\nname = "caf\xe9"\n')  # Latin-1
    with pytest.raises(ConfigError, match=rf"^{what} '.*spec.toml': not UTF-8 text \(byte 0xe9 at offset 19\); "
                                          r"TOML files are UTF-8$") as e:
        read(p)
    _one_line(e)


def test_a_utf8_byte_order_mark_is_fine(tmp_path):
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + SWEEP.encode())
    assert len(sw.points(sw.load_spec(p))) == 2


def test_a_spec_that_is_not_text():
    with pytest.raises(ConfigError, match=r"^a spec must be TOML text \(str\), got bytes$"):
        sw.parse_spec(SWEEP.encode())


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "+inf"])
def test_an_infinite_lane_rate_in_a_rack_file(tmp_path, value):
    p = tmp_path / "rack.toml"
    p.write_text(f'[rack]\nbuilder = "nvl72"\n\n[link]\nlane_rate_gbps = {value}\n')
    with pytest.raises(ConfigError, match=rf"rack.toml, line 5: \[link\] lane_rate_gbps must be a finite number "
                                          rf"> 0, got {value.lstrip('+')}$"):
        phy.config.load_rack(p)


def test_an_infinite_lane_rate_in_a_sweep(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("[link]\nlane_rate_gbps = inf\n")
    with pytest.raises(ConfigError, match=r"s.toml, line 2: \[link\] lane_rate_gbps must be a finite number > 0 "
                                          r"and <= 2000, got inf$"):
        sw.load_spec(p)


def test_a_touchstone_name_too_long(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(f'[channel]\nkind = "touchstone"\nfile = "{"x" * 4000}.s4p"\n')
    with pytest.raises(ConfigError, match=r"s.toml, line 3: \[channel\] file: cannot use '.*' \(\d+ characters\): "
                                          r"file name too long$") as e:
        sw.load_spec(p)
    _one_line(e)


# ----------------------------------------------------------------------------- each point once
@pytest.mark.parametrize(
    "grid, match",
    [
        ('"channel.length_m" = [1, 1.0]', r"line 8: \[grid\] channel.length_m: value 2 \(1.0\) repeats value 1 \(1\); "
                                          r"each grid value must be distinct$"),
        ('"link.fec" = ["KP4", "none", "KP4"]', r"line 8: \[grid\] link.fec: value 3 \('KP4'\) repeats value 1"),
    ],
)
def test_a_grid_value_given_twice(tmp_path, grid, match):
    p = tmp_path / "s.toml"
    p.write_text(SWEEP.replace('"channel.length_m" = [0.5, 1.0]', grid))
    with pytest.raises(ConfigError, match=r"s.toml, " + match):
        sw.load_spec(p)


def test_a_zip_row_given_twice(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SWEEP + '\n[zip]\n"channel.awg" = [26, 30, 26.0]\n"link.lanes" = [1, 2, 1]\n')
    with pytest.raises(ConfigError, match=r"s.toml, line 11: \[zip\] channel.awg: row 3 \{'channel.awg': 26.0, "
                                          r"'link.lanes': 1\} repeats row 1; each zip row must be a distinct point$"):
        sw.load_spec(p)


# ----------------------------------------------------------------------------- run_sweep arguments
@pytest.fixture
def spec(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SWEEP)
    return sw.load_spec(p)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"point_timeout_s": 0}, r"^run_sweep point_timeout_s must be a finite number > 0 and <= 86400, got 0$"),
        ({"point_timeout_s": float("inf")}, r"^run_sweep point_timeout_s must be a finite number > 0"),
        ({"workers": 0}, r"^run_sweep workers must be a whole number from 1 to 4096, got 0$"),
        ({"executor": "threads"}, r"^run_sweep executor must be one of 'inline', 'processes', 'dask', got 'threads'$"),
    ],
)
def test_bad_run_arguments(spec, tmp_path, kw, match):
    with pytest.raises(ConfigError, match=match):
        sw.run_sweep(spec, tmp_path / "s.jsonl", progress=False, **kw)


def test_a_bad_time_limit_in_the_spec(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SWEEP.replace('name = "t"', 'name = "t"\npoint_timeout_s = -1'))
    with pytest.raises(ConfigError, match=r"s.toml, line 3: \[sweep\] point_timeout_s must be a finite number > 0"):
        sw.load_spec(p)


@pytest.mark.parametrize("store, match", [(None, r"^the store must be a path \(a str or os.PathLike\), got NoneType$"),
                                          (7, r"^the store must be a path \(a str or os.PathLike\), got int$")])
def test_a_store_that_is_not_a_path(spec, store, match):
    with pytest.raises(ConfigError, match=match):
        sw.run_sweep(spec, store, progress=False)


def test_a_store_that_is_a_directory(spec, tmp_path):
    d = tmp_path / "store"
    d.mkdir()
    with pytest.raises(ConfigError, match=r"^store '.*store': cannot be written \(is a directory\)$"):
        sw.run_sweep(spec, d, progress=False)
    # the lock it took is released: a run on a good store beside it is not refused
    assert sw.run_sweep(spec, tmp_path / "ok.jsonl", executor="inline", progress=False).ok == 2


# ----------------------------------------------------------------------------- the command
@pytest.mark.parametrize("sub", ["sweep", "link", "rack"])
def test_the_command_says_one_line_and_exits_2(sub, tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_bytes(b"\xff\xfe[\x00s\x00")
    assert cli.main([sub, str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linkmodel: error: ") and "bad.toml" in err
    assert cli.main([sub, str(tmp_path / ("n" * 3000))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file name too long" in err


def test_a_channel_name_too_long(capsys):
    assert cli.main(["channel", "c" * 5000]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a usable path (file name too long)" in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_export_folder_that_cannot_be_written(tmp_path, capsys):
    r = tmp_path / "r.toml"
    r.write_text(RACK)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["rack", str(r), "--export", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--export" in err and "cannot write there (not a directory)" in err


# ----------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seed", ["abc", -1, 1.5, True, [1, "x"]])
def test_a_seed_that_is_not_a_whole_number(seed):
    import channels
    import fec
    import phy

    with pytest.raises(ConfigError, match=r"^seed must be a whole number >= 0 or None, got ") as exc:
        phy.simulate(channels.library.get("cpo_short"), 1000, baud_hz=53.125e9, seed=seed)
    _one_line(exc)
    with pytest.raises(fec.FecError, match=r"^seed must be a whole number >= 0 or None, got "):
        fec.montecarlo.random_stream(fec.KP4, 1e-4, 10, seed=seed)
    with pytest.raises(fec.FecError, match=r"^seed must be a whole number >= 0 or None, got "):
        fec.montecarlo.burst_stream(fec.KP4, fec.BurstModel.geometric(), 10, der=1e-4, seed=seed)
