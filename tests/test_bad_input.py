"""Bad input must raise :class:`channels.ChannelError` with a message naming the problem.

Never a traceback from deep inside numpy or scikit-rf, never a silently wrong answer.
Every malformed Touchstone file here is synthesised in ``tmp_path`` from a small
scikit-rf network (a valid file written with ``Network.write_touchstone`` and then
corrupted as text); nothing is read from ../shared.

One limit is documented rather than refused: a delay longer than the data's time span
``1/df`` cannot be seen in sampled data (see the last tests).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import inspect
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import skrf as rf
from hypothesis import given, settings
from hypothesis import strategies as st

import channels
from conftest import write_file
from channels import ChannelError

# scikit-rf warns about a non-increasing axis while it parses, just before channels raises
# its ChannelError for the same problem; the warning adds nothing here.
pytestmark = pytest.mark.filterwarnings("ignore::skrf.frequency.InvalidFrequencyWarning")

# Small grids keep every case fast: 10 points from 1 to 10 GHz for the files.
F_FILE = np.linspace(1e9, 10e9, 10)
F_SMALL = np.linspace(0.0, 1e9, 11)  # for builder argument checks (the grid is never the point)


# --------------------------------------------------------------------------- fixtures
def _stripline(length_m=0.02, f=F_FILE) -> channels.Channel:
    return channels.media.stripline(length_m, frequency=f)


def _two_port(f=F_FILE) -> rf.Network:
    """A realistic lossy differential two-port (100 ohm references)."""
    dd = _stripline(f=f).network.subnetwork([0, 1])
    dd.name = "two"
    return dd


def _four_port(f=F_FILE) -> rf.Network:
    """A single-ended four-port whose through paths are 1->3 and 2->4 (order 13_24)."""
    se = _stripline(f=f).single_ended.copy()
    se.name = "four"
    return se


def _block_diag(*nets: rf.Network, name: str) -> rf.Network:
    """Several networks on one grid side by side (no coupling) as one multi-port."""
    n = sum(k.nports for k in nets)
    f = nets[0].f
    s = np.zeros((f.size, n, n), dtype=complex)
    z0 = np.zeros((f.size, n), dtype=complex)
    k = 0
    for net in nets:
        p = net.nports
        s[:, k:k + p, k:k + p] = net.s
        z0[:, k:k + p] = net.z0
        k += p
    return rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=z0, name=name)


def _touchstone_text(ntwk: rf.Network, tmp_path: Path, **kw) -> str:
    """The text scikit-rf writes for ``ntwk`` (its own extension)."""
    d = tmp_path / "_written"
    d.mkdir(exist_ok=True)
    ntwk.write_touchstone(filename="net", dir=str(d), **kw)
    (out,) = d.glob("net.*")
    text = out.read_text()
    out.unlink()
    return text


_write = write_file


def _data_line_numbers(text: str) -> list[int]:
    """0-based indices of the lines that start a frequency point.

    scikit-rf starts each point's line at column 0 and indents its continuation lines.
    """
    return [
        i for i, line in enumerate(text.splitlines()) if line and not line[0].isspace() and line[0] not in "!#["
    ]


def _replace_token(text: str, line_index: int, token_index: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    toks = lines[line_index].split()
    toks[token_index] = new
    lines[line_index] = (" " if lines[line_index].startswith(" ") else "") + " ".join(toks) + "\n"
    return "".join(lines)


def _replace_option_line(text: str, option: str) -> str:
    lines = text.splitlines(keepends=True)
    (i,) = [k for k, line in enumerate(lines) if line.lstrip().startswith("#")]
    lines[i] = option + "\n"
    return "".join(lines)


def _load(path, **kw):
    """channels.load without the quality warnings (they are not the subject here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", channels.ChannelQualityWarning)
        return channels.load(path, **kw)


@pytest.fixture(scope="module")
def two_port() -> rf.Network:
    return _two_port()


@pytest.fixture(scope="module")
def four_port() -> rf.Network:
    return _four_port()


@pytest.fixture
def s2p_text(two_port, tmp_path) -> str:
    return _touchstone_text(two_port, tmp_path)


@pytest.fixture
def s4p_text(four_port, tmp_path) -> str:
    return _touchstone_text(four_port, tmp_path)


def test_fixture_files_are_valid(tmp_path, s2p_text, s4p_text):
    """Control: the uncorrupted files load, so every failure below is the corruption's."""
    ch2 = _load(_write(tmp_path, "ok.s2p", s2p_text))
    ch4 = _load(_write(tmp_path, "ok.s4p", s4p_text))
    assert ch2.nports == 2 and ch2.f.size == F_FILE.size
    assert ch4.nports == 4 and ch4.port_order.name == "13_24"
    np.testing.assert_allclose(ch2.f, F_FILE)
    np.testing.assert_allclose(ch4.sdd21, _stripline().sdd21, atol=1e-12)


# ------------------------------------------------------------------- the file itself
def test_missing_file(tmp_path):
    with pytest.raises(ChannelError, match="not found"):
        channels.load(tmp_path / "nope.s4p")


def test_directory_instead_of_file(tmp_path):
    d = tmp_path / "looks_like_a_file.s4p"
    d.mkdir()
    with pytest.raises(ChannelError, match="not a file"):
        channels.load(d)


@pytest.mark.parametrize("ext", [".txt", ".csv", ".s2q", ".s4", ".sp"])
def test_unsupported_extension(tmp_path, s2p_text, ext):
    p = _write(tmp_path, "chan" + ext, s2p_text)
    with pytest.raises(ChannelError, match="unsupported extension"):
        channels.load(p)


@pytest.mark.parametrize("content", ["", "\n\n   \n", "   "], ids=["empty", "blank-lines", "spaces"])
def test_empty_file(tmp_path, content):
    p = _write(tmp_path, "empty.s2p", content)
    with pytest.raises(ChannelError, match="empty"):
        channels.load(p)


def test_binary_garbage_with_nul_bytes(tmp_path):
    rng = np.random.default_rng(1)
    blob = b"\x89PNG\r\n\x1a\n\x00\x00" + rng.integers(0, 256, 2000, dtype=np.uint8).tobytes()
    p = _write(tmp_path, "garbage.s4p", blob)
    with pytest.raises(ChannelError, match="binary"):
        channels.load(p)


def test_binary_garbage_without_nul_bytes(tmp_path):
    """High bytes only (no NUL): decoded as latin-1, it must still fail cleanly."""
    rng = np.random.default_rng(2)
    blob = rng.integers(128, 256, 2000, dtype=np.uint8).tobytes()
    p = _write(tmp_path, "garbage.s2p", blob)
    with pytest.raises(ChannelError, match="not a number|malformed|binary"):
        channels.load(p)


# ------------------------------------------------------------------- the path argument
def _one_line_error(excinfo) -> str:
    """The ChannelError's message, checked to be one line raised without a chained traceback."""
    exc = excinfo.value
    msg = str(exc)
    assert "\n" not in msg, msg
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__), msg
    assert len(excinfo.traceback) <= 6, excinfo.traceback  # raised near the API, not deep inside
    return msg


_PATH_TAKERS = {
    "load": channels.load,
    "read_network": channels.read_network,
    "sibling_crosstalk_files": channels.touchstone.sibling_crosstalk_files,
}


@pytest.mark.parametrize("func", sorted(_PATH_TAKERS))
@pytest.mark.parametrize(
    "value, shown",
    [(None, "None (NoneType)"), (3, "3 (int)"), (2.5, "2.5 (float)"), (["a.s4p"], "['a.s4p'] (list)")],
    ids=["None", "int", "float", "list"],
)
def test_path_that_is_not_a_path(func, value, shown):
    """``open(3)`` would read file descriptor 3: an integer must not be taken for a path."""
    with pytest.raises(ChannelError, match=rf"path must be a str or os.PathLike.*got {re.escape(shown)}$") as exc:
        _PATH_TAKERS[func](value)
    _one_line_error(exc)


def test_aggressor_path_that_is_not_a_path(tmp_path, s4p_text):
    thru = _write(tmp_path, "CA_thru.s4p", s4p_text)
    with pytest.raises(ChannelError, match=r"aggressor file path must be a str or os.PathLike.*got None") as exc:
        _load(thru, aggressors=[None])
    _one_line_error(exc)
    with pytest.raises(ChannelError, match=r"aggressor file path must be.*got 7 \(int\)"):
        _load(thru, aggressors=[(7, "next")])
    with pytest.raises(ChannelError, match=r"aggressors must be 'auto' or a list.*got 5"):
        _load(thru, aggressors=5)


@pytest.mark.parametrize(
    "value, match",
    [("", "empty string"), ("chan\x00nel.s4p", "contains a NUL character"), (b"", "empty string")],
    ids=["empty", "nul", "empty-bytes"],
)
def test_path_string_that_names_no_file(value, match):
    with pytest.raises(ChannelError, match=match) as exc:
        channels.load(value)
    _one_line_error(exc)


def test_path_as_bytes_and_pathlike(tmp_path, s2p_text):
    """Control: every form Python accepts for a file name works (str, bytes, os.PathLike)."""
    p = _write(tmp_path, "ok.s2p", s2p_text)

    class Named:
        def __fspath__(self):
            return str(p)

    for form in (str(p), bytes(p), p, Named()):
        assert _load(form).f.size == F_FILE.size


@pytest.mark.parametrize("shape", ["one-long-name", "deep-path"])
def test_path_too_long_for_the_os(tmp_path, shape):
    """``OSError: [Errno 36] File name too long`` becomes a one-line ChannelError that says so,
    with the path shortened (a 5000-character path in a message helps nobody)."""
    if shape == "one-long-name":
        p = tmp_path / ("x" * 300 + ".s4p")  # names are limited to 255 bytes
    else:
        p = tmp_path.joinpath(*["d" * 200] * 25, "chan.s4p")  # paths to 4096 bytes
    with pytest.raises(ChannelError, match=r"path too long for the operating system \(\d+ bytes") as exc:
        channels.load(p)
    msg = _one_line_error(exc)
    assert "chan.s4p" in msg or ".s4p" in msg  # the end of the path is shown
    assert len(msg) < 400


def test_directory_message_names_the_path(tmp_path):
    d = tmp_path / "folder.s2p"
    d.mkdir()
    with pytest.raises(ChannelError, match=rf"not a file: {re.escape(str(d))} is a directory") as exc:
        channels.read_network(d)
    _one_line_error(exc)


def test_fifo_is_not_read(tmp_path):
    """A named pipe must be refused, not read (which would block until a writer comes)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    p = tmp_path / "pipe.s4p"
    os.mkfifo(p)
    with pytest.raises(ChannelError, match=r"not a file: .*pipe.s4p is a named pipe") as exc:
        channels.load(p)
    _one_line_error(exc)


def _chmod_denies(path: Path, mode: int, check) -> None:
    """chmod ``path`` and skip when the user can still get in (root reads anything)."""
    path.chmod(mode)
    if check():
        path.chmod(0o700)
        pytest.skip("running as a user whom file permissions do not stop (root)")


def test_unreadable_file(tmp_path, s2p_text):
    p = _write(tmp_path, "locked.s2p", s2p_text)
    _chmod_denies(p, 0o000, lambda: os.access(p, os.R_OK))
    try:
        with pytest.raises(ChannelError, match=rf"permission denied reading {re.escape(str(p))}: this user "
                                               r"may not read it \(its permissions are ----------\)") as exc:
            channels.load(p)
        _one_line_error(exc)
    finally:
        p.chmod(0o600)


def test_unsearchable_folder(tmp_path, s2p_text):
    d = tmp_path / "locked"
    d.mkdir()
    p = _write(d, "chan.s2p", s2p_text)
    _chmod_denies(d, 0o000, lambda: os.access(p, os.R_OK))
    try:
        with pytest.raises(ChannelError, match=r"permission denied looking up .*chan.s2p: a folder on its path") as exc:
            channels.load(p)
        _one_line_error(exc)
    finally:
        d.chmod(0o700)


def test_unreadable_file_message_even_as_root(tmp_path, s2p_text, monkeypatch):
    """The same message when the OS refuses the read, simulated so that it is checked when the
    suite runs as root (for whom chmod 000 does not stop a read)."""
    p = _write(tmp_path, "locked.s2p", s2p_text)

    def denied(file, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(file))

    monkeypatch.setattr(channels._tsfile, "open", denied, raising=False)
    with pytest.raises(ChannelError, match=rf"permission denied reading {re.escape(str(p))}: this user may not "
                                           r"read it \(its permissions are -rw") as exc:
        channels.load(p)
    _one_line_error(exc)


@pytest.mark.parametrize(
    "blob, why",
    [
        (gzip.compress(b"# GHz S MA R 50\n1 0.1 0 0.9 -10 0.9 -10 0.1 0\n"),
         "gzip-compressed data: decompress it first"),
        (b"PK\x03\x04" + bytes(40), "a zip archive"),
        (b"\x89HDF\r\n\x1a\n" + bytes(100), "an HDF5 file"),
        (b"# GHz S RI R 50\n1 0 0 1 0\x00\x00 1 0 0 0\n", "a NUL byte at offset 25"),
        (b"\x01\x02\x03\x04\x05\x06" * 50, "300 control characters in its first 300 bytes"),
    ],
    ids=["gzip", "zip", "hdf5", "nul", "control"],
)
def test_binary_file_says_what_it_looks_like(tmp_path, blob, why):
    p = _write(tmp_path, "chan.s2p", blob)
    match = rf"{re.escape(str(p))}: binary data, not a Touchstone text file \({why}"
    with pytest.raises(ChannelError, match=match) as exc:
        channels.load(p)
    _one_line_error(exc)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "latin-1"])
def test_text_encodings_load(tmp_path, s2p_text, encoding):
    """Control: a UTF-16 file (NUL bytes, but a byte-order mark), a UTF-8 byte-order mark and a
    latin-1 comment are text, and read as the plain file does."""
    text = "! measured at 23 \u00b0C, \u00a9 lab\n" + s2p_text
    p = _write(tmp_path, "enc.s2p", text.encode(encoding))
    ref = _load(_write(tmp_path, "plain.s2p", s2p_text))
    np.testing.assert_array_equal(_load(p).network.s, ref.network.s)


# ---------------------------------------------------------------------- option line
@pytest.mark.parametrize(
    "option, match",
    [
        ("# GHz S MA R 50 FOO", "unknown field 'foo'"),
        ("# GHz S XY R 50", "unknown field 'xy'"),
        ("# THz S RI R 50", "unknown field 'thz'"),
        ("# GHz S RI R", "'R' without a resistance"),
        ("# GHz S RI R -50", "must be positive"),
        ("# GHz S RI R 0", "must be positive"),
        ("# GHz S RI R abc", "not a number"),
        ("# GHz S RI R nan", "must be positive"),
        ("# GHz G RI R 50", "G-parameter files are not supported"),
        ("# GHz H MA R 50", "H-parameter files are not supported"),
    ],
)
def test_malformed_option_line(tmp_path, s2p_text, option, match):
    p = _write(tmp_path, "opt.s2p", _replace_option_line(s2p_text, option))
    with pytest.raises(ChannelError, match=re.escape(match)):
        channels.load(p)


@pytest.mark.parametrize(
    "option",
    ["# MHz MA S R 100", "# MA MHz S R 100", "# R 100 S MA MHz", "# mhz ma s r 100", "#MHz   S MA R 100 ! note"],
)
def test_option_fields_in_any_order_load_correctly(tmp_path, two_port, option):
    """``# MHz MA S R 100`` is legal Touchstone: same result as the canonical order."""
    net = two_port.copy()
    net.frequency.unit = "mhz"
    text = _touchstone_text(net, tmp_path, form="ma")
    canonical = _load(_write(tmp_path, "canonical.s2p", _replace_option_line(text, "# MHz S MA R 100")))
    unusual = _load(_write(tmp_path, "unusual.s2p", _replace_option_line(text, option)))
    np.testing.assert_array_equal(unusual.f, canonical.f)
    np.testing.assert_allclose(unusual.network.s, canonical.network.s, rtol=0, atol=1e-12)
    np.testing.assert_allclose(unusual.network.z0, 100.0)
    # and both are the network that was written (MHz scaled back to Hz, MA to complex)
    np.testing.assert_allclose(unusual.f, two_port.f)
    np.testing.assert_allclose(unusual.network.s, two_port.s, rtol=1e-9, atol=1e-12)


def test_option_line_reference_resistance_is_used(tmp_path, two_port):
    """``R 75`` after the format must become the reference impedance, whatever the field order."""
    text = _touchstone_text(two_port, tmp_path)
    ch = _load(_write(tmp_path, "r75.s2p", _replace_option_line(text, "# R 75 RI Hz S")))
    np.testing.assert_allclose(ch.network.z0, 75.0)


# ------------------------------------------------------------------------ data body
@pytest.mark.parametrize("token", ["abc", "1.2.3", "0.5j", "--1"])
@pytest.mark.parametrize("which", ["s2p", "s4p-first-line", "s4p-continuation"])
def test_non_numeric_token_names_the_line(tmp_path, s2p_text, s4p_text, which, token):
    text = s2p_text if which == "s2p" else s4p_text
    starts = _data_line_numbers(text)
    line = starts[4] + (1 if which == "s4p-continuation" else 0)
    bad = _replace_token(text, line, 3, token)
    p = _write(tmp_path, "bad." + which[:3], bad)
    with pytest.raises(ChannelError, match=rf"line {line + 1}\b.*{re.escape(repr(token))}.*not a number"):
        channels.load(p)


def test_truncated_two_port(tmp_path, s2p_text):
    """The last frequency point cut in half (the file ends mid-line)."""
    lines = s2p_text.splitlines(keepends=True)
    last = _data_line_numbers(s2p_text)[-1]
    lines[last] = " ".join(lines[last].split()[:5]) + "\n"
    p = _write(tmp_path, "cut.s2p", "".join(lines[: last + 1]))
    with pytest.raises(ChannelError, match="truncated"):
        channels.load(p)


def test_truncated_four_port(tmp_path, s4p_text):
    """The last frequency point loses its last two rows (17 of its 33 numbers left)."""
    lines = s4p_text.rstrip("\n").splitlines(keepends=True)
    p = _write(tmp_path, "cut.s4p", "".join(lines[:-2]))
    with pytest.raises(ChannelError, match="truncated"):
        channels.load(p)


# 11 two-port points are 99 numbers = 3 four-port points, and 9 four-port points are 297
# numbers = 33 two-port points: a plain count cannot tell, the line layout must.
@pytest.mark.parametrize("n_points", [10, 11])
def test_s4p_holding_two_port_data(tmp_path, n_points):
    net = _two_port(f=np.linspace(1e9, 10e9, n_points))
    p = _write(tmp_path, "wrong.s4p", _touchstone_text(net, tmp_path))
    with pytest.raises(ChannelError, match=r"[24][- ]ports?\b"):
        channels.load(p)


@pytest.mark.parametrize("n_points", [10, 9])
def test_s2p_holding_four_port_data(tmp_path, n_points):
    net = _four_port(f=np.linspace(1e9, 10e9, n_points))
    p = _write(tmp_path, "wrong.s2p", _touchstone_text(net, tmp_path))
    with pytest.raises(ChannelError, match=r"[24][- ]ports?\b"):
        channels.load(p)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_nan_or_inf_in_s_data(tmp_path, s2p_text, s4p_text, ext, value):
    text = s2p_text if ext == "s2p" else s4p_text
    line = _data_line_numbers(text)[3]
    p = _write(tmp_path, "nan." + ext, _replace_token(text, line, 2, value))
    with pytest.raises(ChannelError, match=r"NaN or infinite S-parameters.*first at 4e\+09 Hz"):
        channels.load(p)


@pytest.mark.parametrize("value", ["nan", "inf"])
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_nan_in_frequency_column(tmp_path, s2p_text, s4p_text, ext, value):
    text = s2p_text if ext == "s2p" else s4p_text
    line = _data_line_numbers(text)[3]
    p = _write(tmp_path, "nanf." + ext, _replace_token(text, line, 0, value))
    # "holds NaN or infinite values", or for inf in a .s2p "not strictly increasing ... after inf"
    with pytest.raises(ChannelError, match=r"frequency axis.*(NaN|inf)"):
        channels.load(p)


def _set_frequencies(text: str, new_f: list[float]) -> str:
    for line, f in zip(_data_line_numbers(text), new_f):
        text = _replace_token(text, line, 0, repr(float(f)))
    return text


@pytest.mark.parametrize("kind", ["repeated", "decreasing", "decreasing-at-end"])
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_frequency_axis_not_increasing(tmp_path, s2p_text, s4p_text, ext, kind):
    """A .s2p is the tricky one: Touchstone 1 two-port files start their noise block where the
    frequency steps back, and scikit-rf then drops the rest of the network data silently."""
    text = s2p_text if ext == "s2p" else s4p_text
    f = list(F_FILE)
    if kind == "repeated":
        f[5] = f[4]  # 5 GHz twice
    elif kind == "decreasing":
        f[4], f[5] = f[5], f[4]  # ... 4, 6, 5, 7 ... GHz
    else:
        f[-1] = 0.5 * (f[-3] + f[-2])  # last point steps back to 8.5 GHz
    p = _write(tmp_path, "freq." + ext, _set_frequencies(text, f))
    with pytest.raises(ChannelError, match="not strictly increasing"):
        channels.load(p)


def test_two_port_noise_block_is_not_a_broken_axis(tmp_path, s2p_text):
    """Control: a real Touchstone 1 noise block (5 numbers a line, frequency restarting) loads."""
    noise = "! noise parameters\n" + "".join(f"{f:.1f} 1.5 0.3 45 0.2\n" for f in np.linspace(1e9, 5e9, 5))
    ch = _load(_write(tmp_path, "noisy.s2p", s2p_text + noise))
    np.testing.assert_allclose(ch.f, F_FILE)


def test_single_frequency_point(tmp_path, s4p_text):
    lines = s4p_text.splitlines(keepends=True)
    first = _data_line_numbers(s4p_text)[0]
    p = _write(tmp_path, "one.s4p", "".join(lines[: first + 4]))
    with pytest.raises(ChannelError, match="only 1 frequency point"):
        channels.load(p)


def test_negative_frequency(tmp_path, s2p_text):
    f = list(F_FILE)
    f[0] = -1e9
    p = _write(tmp_path, "neg.s2p", _set_frequencies(s2p_text, f))
    with pytest.raises(ChannelError, match="negative frequency"):
        channels.load(p)


# ---------------------------------------------------- files that lie about themselves
# A wrong header parses: scikit-rf reads the numbers as the header says. channels compares the
# header with what the numbers look like (channels/_plausible.py has the rules and thresholds).
UNIT_HZ = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}


def _in_unit(text: str, unit: str, f=F_FILE) -> str:
    """The file with its frequency column written in ``unit`` (the option line is left alone)."""
    return _set_frequencies(text, list(np.asarray(f, dtype=float) / UNIT_HZ[unit]))


def _drop_option_line(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#"))


@contextlib.contextmanager
def _no_header_warning():
    """A context in which a TouchstoneWarning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", channels.TouchstoneWarning)
        yield


@pytest.fixture
def quiet_header():
    with _no_header_warning():
        yield


@pytest.mark.parametrize(
    "written, label, match",
    [
        ("Hz", "GHz", r"the last frequency, 1e\+10 GHz = 1e\+19 Hz, is above 1 THz, implausible for a channel; "
                      r"read as Hz the axis runs from 1 GHz to 10 GHz in 1 GHz steps: the unit is probably Hz, "
                      r"not GHz; if so, write the option line '# Hz S RI R 100'$"),
        ("kHz", "GHz", r"the last frequency, 1e\+07 GHz = 1e\+16 Hz, is above 1 THz.*probably kHz, not GHz.*"
                       r"'# kHz S RI R 100'$"),
        ("Hz", "kHz", r"the last frequency, 1e\+10 kHz = 1e\+13 Hz, is above 1 THz.*probably Hz, not kHz"),
        ("kHz", "MHz", r"the last frequency, .*is above 1 THz.*probably kHz, not MHz"),
        ("GHz", "Hz", r"the axis runs from 1 Hz to 10 Hz in 1 Hz steps, implausible for a channel \(channel data "
                      r"reach GHz\); read as GHz the axis runs from 1 GHz to 10 GHz in 1 GHz steps: the unit is "
                      r"probably GHz, not Hz; if so, write the option line '# GHz S RI R 100'$"),
        ("GHz", "kHz", r"the axis runs from 1 kHz to 10 kHz in 1 kHz steps, implausible.*probably GHz, not kHz"),
        ("MHz", "Hz", r"the axis runs from 1 kHz to 10 kHz in 1 kHz steps, implausible.*probably MHz, not Hz"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 4 else None,
)
def test_frequency_unit_that_disagrees_with_the_axis(tmp_path, s2p_text, written, label, match):
    text = _replace_option_line(_in_unit(s2p_text, written), f"# {label} S RI R 100")
    p = _write(tmp_path, "unit.s2p", text)
    with pytest.raises(ChannelError, match=rf"^unit.s2p: option line '# {label} S RI R 100': {match}"):
        channels.load(p)


@pytest.mark.parametrize(
    "written, label, match",
    [
        ("Hz", "GHz", r"the last frequency, 6e\+10 GHz = 6e\+19 Hz, is above 1 THz.*read as Hz the axis runs "
                      r"from 10 MHz to 60 GHz in 10 MHz steps: the unit is probably Hz"),
        ("GHz", "Hz", r"the axis runs from 10 mHz to 60 Hz in 10 mHz steps, implausible for a channel.*read as "
                      r"GHz the axis runs from 10 MHz to 60 GHz in 10 MHz steps: the unit is probably GHz"),
    ],
    ids=["Hz-labelled-GHz", "GHz-labelled-Hz"],
)
def test_unit_mislabel_on_a_real_channel_grid(tmp_path, written, label, match):
    """The issue's examples, on the grid of the 802.3 channel files (10 MHz steps to 60 GHz)."""
    f = np.arange(1, 6001) * 10e6
    text = _touchstone_text(_two_port(f=f), tmp_path)
    p = _write(tmp_path, "grid.s2p", _replace_option_line(_in_unit(text, written, f), f"# {label} S RI R 100"))
    with pytest.raises(ChannelError, match=match):
        channels.read_network(p)


def test_unit_plausible_either_way_warns(tmp_path, s2p_text):
    """A file in GHz labelled MHz ends at 10 MHz: a low-frequency file, or the wrong label."""
    p = _write(tmp_path, "low.s2p", _replace_option_line(_in_unit(s2p_text, "GHz"), "# MHz S RI R 100"))
    with pytest.warns(channels.TouchstoneWarning,
                      match=r"^low.s2p: option line '# MHz S RI R 100': the axis runs from 1 MHz to 10 MHz in 1 MHz "
                            r"steps, low for a channel: if the file is in GHz, it runs from 1 GHz to 10 GHz in 1 GHz "
                            r"steps \(read as MHz, as the header says\); if so, write the option line "
                            r"'# GHz S RI R 100'$"):
        ch = _load(p)
    np.testing.assert_allclose(ch.f, F_FILE / 1e3)  # read as the header says


@pytest.mark.parametrize("written, label", [("Hz", "Hz"), ("GHz", "GHz")])
def test_no_unit_makes_a_channels_band(tmp_path, s2p_text, written, label):
    scale = 1e9 if label == "Hz" else 1e-15  # ends at 1e19 Hz, or at 10 kHz in a GHz file
    text = _set_frequencies(s2p_text, list(F_FILE * scale / UNIT_HZ[written]))
    p = _write(tmp_path, "odd.s2p", _replace_option_line(text, f"# {label} S RI R 100"))
    with pytest.raises(ChannelError, match=r"implausible for a channel.*; no Touchstone unit \(Hz to GHz\) makes "
                                           r"it a channel's band: is the first column a frequency\?$"):
        channels.load(p)


@pytest.mark.parametrize("unit", sorted(UNIT_HZ))
def test_correct_units_load_without_a_header_warning(tmp_path, s2p_text, unit, quiet_header):
    """Control: each unit, rightly labelled, loads silently on the same axis."""
    p = _write(tmp_path, "ok.s2p", _replace_option_line(_in_unit(s2p_text, unit), f"# {unit} S RI R 100"))
    np.testing.assert_allclose(_load(p).f, F_FILE, rtol=1e-12)


@pytest.mark.parametrize("form", ["ri", "ma", "db"])
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_correct_formats_read_as_scikit_rf_reads_them(tmp_path, two_port, four_port, form, ext, quiet_header):
    """Control: files scikit-rf writes in each format read silently, bit for bit as scikit-rf reads them
    (channels hands S data to scikit-rf as RI to see the raw pairs and converts them itself)."""
    net = two_port if ext == "s2p" else four_port
    p = _write(tmp_path, "fmt." + ext, _touchstone_text(net, tmp_path, form=form))
    ours, theirs = channels.read_network(p), rf.Network(str(p))
    np.testing.assert_array_equal(ours.s, theirs.s)
    np.testing.assert_array_equal(ours.f, theirs.f)
    np.testing.assert_array_equal(ours.z0, theirs.z0)


def test_missing_option_line_with_plausible_data_warns(tmp_path, two_port):
    """No option line: Touchstone's defaults (GHz, S, MA, R 50) apply; the data fit them, but nothing says so."""
    net = two_port.copy()
    net.frequency.unit = "ghz"
    text = _touchstone_text(net, tmp_path, form="ma")
    explicit = _load(_write(tmp_path, "explicit.s2p", _replace_option_line(text, "# GHz S MA R 50")))
    p = _write(tmp_path, "bare.s2p", _drop_option_line(text))
    with pytest.warns(channels.TouchstoneWarning,
                      match=r"^bare.s2p: no option line, so the Touchstone defaults GHz, S, MA, R 50 apply: the data "
                            r"are plausible under them \(1 GHz to 10 GHz in 1 GHz steps\) but nothing confirms it: "
                            r"add the option line, e.g. '# GHz S MA R 50'$"):
        bare = _load(p)
    np.testing.assert_array_equal(bare.network.s, explicit.network.s)
    np.testing.assert_array_equal(bare.f, explicit.f)


@pytest.mark.parametrize(
    "unit, form, match",
    [
        ("Hz", "ri", r"the last frequency, 1e\+10 GHz = 1e\+19 Hz, is above 1 THz.*the unit is probably Hz, not "
                     r"GHz; \d+ of 40 magnitudes are negative.*these are RI \(real, imaginary\) pairs; if so, write "
                     r"the option line '# Hz S RI R 50'$"),
        ("GHz", "ri", r"\d+ of 40 magnitudes are negative \(the first, -0.\d+, in S\d\d at \d GHz\), and no angle "
                      r"exceeds 0.99 degrees: these are RI \(real, imaginary\) pairs; if so, write the option line "
                      r"'# GHz S RI R 50'$"),
        ("MHz", "ma", r"the last frequency, 10000 GHz = 1e\+13 Hz, is above 1 THz.*probably MHz.*'# MHz S MA R 50'$"),
    ],
)
def test_missing_option_line_with_data_that_contradict_the_defaults(tmp_path, s2p_text, two_port, unit, form, match):
    text = _touchstone_text(two_port, tmp_path, form=form)
    p = _write(tmp_path, "bare.s2p", _drop_option_line(_in_unit(text, unit)))
    with pytest.raises(ChannelError, match=r"^bare.s2p: no option line, so the Touchstone defaults GHz, S, MA, "
                                           r"R 50 apply: (.*; )?" + match):
        channels.load(p)


@pytest.mark.parametrize(
    "form, match",
    [
        ("ri", r"\d+ of 40 magnitudes are negative \(the first, -0.\d+, in S\d\d at \d GHz\), and no angle exceeds "
               r"0.99 degrees: these are RI \(real, imaginary\) pairs; if so, write the option line "
               r"'# Hz S RI R 100'$"),
        ("db", r"40 of 40 magnitudes are negative \(the first, -\d+.\d+, in S11 at 1 GHz\), none is above -0.\d+ "
               r"and some reach -\d+.\d+, as dB values do: these are DB \(dB, angle\) pairs; if so, write the option "
               r"line '# Hz S DB R 100'$"),
    ],
)
def test_ma_label_on_data_with_negative_magnitudes(tmp_path, two_port, form, match):
    text = _replace_option_line(_touchstone_text(two_port, tmp_path, form=form), "# Hz S MA R 100")
    p = _write(tmp_path, "ma.s2p", text)
    with pytest.raises(ChannelError, match=r"^ma.s2p: option line '# Hz S MA R 100': " + match):
        channels.load(p)


def test_ma_data_with_one_negative_magnitude(tmp_path, two_port):
    """One damaged magnitude in real MA data: an error, but no other format fits, so none is suggested."""
    text = _touchstone_text(two_port, tmp_path, form="ma")
    line = _data_line_numbers(text)[4]
    mag = text.splitlines()[line].split()[3]  # |S21| at 5 GHz
    p = _write(tmp_path, "ma.s2p", _replace_token(text, line, 3, "-" + mag))
    with pytest.raises(ChannelError, match=rf"1 of 40 magnitudes are negative \(the first, -{float(mag):.4g}, in "
                                           r"S21 at 5 GHz\): a magnitude cannot be negative, so the data are not MA "
                                           r"or are damaged$"):
        channels.load(p)


def _network(s_of_f, f=F_FILE, z0=50.0) -> rf.Network:
    s = np.array([s_of_f(k, fk) for k, fk in enumerate(f)], dtype=complex)
    return rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=z0, name="net")


def test_ma_label_on_ri_data_with_positive_real_parts_warns(tmp_path):
    """RI data whose real parts are all positive give valid MA numbers, but angles that never pass
    0.1 degree up to 10 GHz belong to no channel (1 degree at 10 GHz is 0.28 ps of delay)."""
    att = _network(lambda k, f: [[0.1 + 0.001j * k, 0.5 + 0.01j * k], [0.5 + 0.01j * k, 0.1 + 0.001j * k]])
    text = _replace_option_line(_touchstone_text(att, tmp_path, form="ri"), "# Hz S MA R 50")
    with pytest.warns(channels.TouchstoneWarning,
                      match=r"no angle exceeds 0.09 degrees up to 10 GHz, where 0.28 ps of delay already turns the "
                            r"phase by 1 degree: the pairs look like RI \(real, imaginary\) \(read as MA, as the "
                            r"header says\); if so, write the option line '# Hz S RI R 50'$"):
        net = channels.read_network(_write(tmp_path, "att.s2p", text))
    np.testing.assert_allclose(np.abs(net.s[:, 1, 0]), 0.5)  # read as MA


def test_ma_ideal_element_with_zero_angles_is_silent(tmp_path, quiet_header):
    """Control: an ideal attenuator's angles are exactly 0, which RI data would not be."""
    att = _network(lambda k, f: [[0.0, 0.5], [0.5, 0.0]])
    channels.read_network(_write(tmp_path, "pad.s2p", _touchstone_text(att, tmp_path, form="ma")))


@pytest.mark.parametrize(
    "form, match",
    [
        ("ri", r"every value is above -1.5 dB \(from -0.\d+ to 0.\d+ dB\): each port would reflect and pass nearly "
               r"all the power it receives \(up to \d.\d times it\), impossible for a passive channel; the second "
               r"numbers never exceed 0.9\d* where angles in degrees turn through \+-180: these are RI \(real, "
               r"imaginary\) pairs; if so, write the option line '# Hz S RI R 100'$"),
        ("ma", r"every value is above -1.5 dB \(from 0.00\d+ to 0.9\d* dB\): .*impossible for a passive channel; "
               r"all lie between 0 and 0.9\d*, as magnitudes do: these are MA \(magnitude, angle\) pairs; if so, "
               r"write the option line '# Hz S MA R 100'$"),
    ],
)
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_db_label_on_ri_or_ma_data(tmp_path, two_port, four_port, form, match, ext):
    net = two_port if ext == "s2p" else four_port
    text = _replace_option_line(_touchstone_text(net, tmp_path, form=form), "# Hz S DB R 100")
    with pytest.raises(ChannelError, match=r"option line '# Hz S DB R 100': " + match):
        channels.load(_write(tmp_path, "db." + ext, text))


def test_db_data_mostly_above_0_db_warns(tmp_path):
    """Three of four entries at +3 dB is gain no channel has; the one at -10 dB keeps it plausible as dB."""
    turn = lambda k: np.exp(-1j * 0.7 * k)  # noqa: E731  angles that span degrees
    gain = _network(lambda k, f: [[1.41 * turn(k), 1.41 * turn(k)], [0.316 * turn(k), 1.41 * turn(k)]])
    p = _write(tmp_path, "gain.s2p", _touchstone_text(gain, tmp_path, form="db"))
    with pytest.warns(channels.TouchstoneWarning, match=r"option line '# Hz S DB R 50.0': 75% of the dB values are "
                                                        r"above 0 dB, gain that a passive channel does not have"):
        channels.read_network(p)


@pytest.mark.parametrize(
    "form, match",
    [
        ("ma", r"as real and imaginary parts the largest \|S\| is 1\d\d.\d+ \(\+4\d dB\), impossible for a passive "
               r"channel; the first numbers all lie between 0 and 0.99\d* and the second reach 1\d\d.\d+, as "
               r"magnitudes and angles in degrees do: these are MA pairs; if so, write the option line "
               r"'# Hz S MA R 100'$"),
        ("db", r"as real and imaginary parts the largest \|S\| is 1\d\d.\d+ .*the first numbers lie between -\d+.\d+ "
               r"and -0.\d+ and the second reach 1\d\d.\d+, as dB values and angles in degrees do: these are DB "
               r"pairs; if so, write the option line '# Hz S DB R 100'$"),
    ],
)
def test_ri_label_on_ma_or_db_data(tmp_path, two_port, form, match):
    text = _replace_option_line(_touchstone_text(two_port, tmp_path, form=form), "# Hz S RI R 100")
    with pytest.raises(ChannelError, match=r"option line '# Hz S RI R 100': " + match):
        channels.load(_write(tmp_path, "ri.s2p", text))


@pytest.mark.parametrize(
    "option, match",
    [
        ("# Hz GHz S RI R 100", r"names two frequency units, Hz and GHz; the data fit Hz \(1 GHz to 10 GHz in 1 GHz "
                                r"steps\); if so, write the option line '# Hz S RI R 100'$"),
        ("# GHz S RI R 100 Hz", r"names two frequency units, GHz and Hz; the data fit Hz \(1 GHz to 10 GHz"),
        ("# MHz kHz S RI R 100", r"names two frequency units, MHz and kHz; the data fit neither, but Hz \(1 GHz to "
                                 r"10 GHz in 1 GHz steps\); if so, write the option line '# Hz S RI R 100'$"),
        ("# Hz S MA RI R 100", r"names two data formats, MA and RI; the data fit RI; if so, write the option line "
                               r"'# Hz S RI R 100'$"),
        ("# Hz S RI DB R 100", r"names two data formats, RI and DB; the data fit RI"),
        ("# Hz S Z RI R 100", r"names two parameter types, S and Z: keep the one the file was written with$"),
        ("# Hz S RI R 100 R 50", r"names two reference resistances, 100 and 50 ohm: keep the one the file was "
                                 r"written with$"),
    ],
)
def test_option_line_naming_a_field_twice(tmp_path, s2p_text, option, match):
    p = _write(tmp_path, "twice.s2p", _replace_option_line(s2p_text, option))
    with pytest.raises(ChannelError, match=rf"^twice.s2p: option line {re.escape(repr(option))}: {match}"):
        channels.load(p)


def test_option_line_repeating_a_field_with_one_value_is_fine(tmp_path, s2p_text, quiet_header):
    ch = _load(_write(tmp_path, "rep.s2p", _replace_option_line(s2p_text, "# Hz Hz S RI ri R 100")))
    np.testing.assert_allclose(ch.f, F_FILE)


def test_later_option_line_that_disagrees_warns(tmp_path, s2p_text):
    """Touchstone uses the first option line; a different second one means someone was confused."""
    lines = s2p_text.splitlines(keepends=True)
    at = _data_line_numbers(s2p_text)[5]
    text = "".join(lines[:at] + ["# GHz S MA R 50\n"] + lines[at:])
    with pytest.warns(channels.TouchstoneWarning, match=rf"line {at + 1} holds another option line, "
                                                        r"'# GHz S MA R 50', which Touchstone ignores"):
        ch = _load(_write(tmp_path, "two_opts.s2p", text))
    np.testing.assert_allclose(ch.f, F_FILE)  # the first applies
    # a repeated identical line is no news
    same = "".join(lines[:at] + ["# hz s ri r 100.0\n"] + lines[at:])
    with _no_header_warning():
        _load(_write(tmp_path, "same_opts.s2p", same))


# Touchstone 2: [Version] 2.0 and keywords. scikit-rf's 1.x two-port column order S11 S21 S12 S22
# is the 2.0 "[Two-Port Data Order] 21_12"; its four-port rows are the 2.0 "Full" matrix.
def _as_version_2(text: str, nports: int, n_points: int, *, option: bool = True) -> str:
    lines = text.splitlines()
    (i,) = [k for k, line in enumerate(lines) if line.lstrip().startswith("#")]
    header = ["[Version] 2.0"] + ([lines[i]] if option else []) + [f"[Number of Ports] {nports}"]
    header += ["[Two-Port Data Order] 21_12"] if nports == 2 else []
    header += [f"[Number of Frequencies] {n_points}", "[Network Data]"]
    return "\n".join(lines[:i] + header + lines[i + 1:] + ["[End]"]) + "\n"


@pytest.mark.parametrize("name", ["v2.s2p", "v2.ts", "v2.s4p"])
@pytest.mark.parametrize("form", ["ri", "ma"])
def test_version_2_file_reads_as_its_version_1_twin(tmp_path, two_port, four_port, name, form, quiet_header):
    net = four_port if name.endswith("s4p") else two_port
    text = _touchstone_text(net, tmp_path, form=form)
    v1 = channels.read_network(_write(tmp_path, "v1." + ("s4p" if net.nports == 4 else "s2p"), text))
    v2 = channels.read_network(_write(tmp_path, name, _as_version_2(text, net.nports, F_FILE.size)))
    np.testing.assert_array_equal(v2.s, v1.s)
    np.testing.assert_array_equal(v2.f, v1.f)


@pytest.mark.parametrize(
    "change, match",
    [
        ("unit", r"option line '# GHz S RI R 100': the last frequency, 1e\+10 GHz = 1e\+19 Hz, is above 1 THz"),
        ("format", r"option line '# Hz S MA R 100': \d+ of 40 magnitudes are negative.*RI"),
        ("count-high", r"\[Number of Frequencies\] says 12 but the \[Network Data\] hold 10 points: the file is "
                       r"truncated or the keyword is wrong$"),
        ("count-low", r"\[Number of Frequencies\] says 8 but the \[Network Data\] hold 10 points: the keyword is "
                      r"wrong$"),
    ],
)
def test_version_2_file_that_lies(tmp_path, s2p_text, change, match):
    option = {"unit": "# GHz S RI R 100", "format": "# Hz S MA R 100"}.get(change)
    text = _replace_option_line(s2p_text, option) if option else s2p_text
    count = {"count-high": 12, "count-low": 8}.get(change, F_FILE.size)
    p = _write(tmp_path, "v2.ts", _as_version_2(text, 2, count))
    with pytest.raises(ChannelError, match=r"^v2.ts: " + match):
        channels.load(p)


def test_version_2_file_without_option_line(tmp_path, two_port):
    """The defaults go in after [Version] (which scikit-rf wants first in a .ts file) and say so."""
    net = two_port.copy()
    net.frequency.unit = "ghz"
    text = _touchstone_text(net, tmp_path, form="ma")
    p = _write(tmp_path, "bare.ts", _as_version_2(text, 2, F_FILE.size, option=False))
    with pytest.warns(channels.TouchstoneWarning, match=r"^bare.ts: no option line, so the Touchstone defaults"):
        v2 = channels.read_network(p)
    np.testing.assert_allclose(v2.f, F_FILE)
    np.testing.assert_allclose(np.abs(v2.s), np.abs(two_port.s), rtol=1e-9)


# ------------------------------------------------------------ fuzzing the data body
# Property: a damaged file either raises ChannelError or loads as a sane channel; it never
# escapes as another exception. The two-port mutations leave the frequency tokens alone
# (test_frequency_axis_not_increasing covers a damaged two-port frequency axis).
_MUTATION_CHARS = "0123456789.-+eE \t\n!#[],;x"


@pytest.fixture(scope="module")
def fuzz_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    return {
        "s2p": _touchstone_text(_two_port(), d),
        "s4p": _touchstone_text(_four_port(), d),
        "dir": d,
    }


def _load_or_channel_error(path: Path):
    try:
        return channels.load(path, check_quality=False)
    except ChannelError as exc:
        assert path.stem in str(exc), str(exc)  # the message names the file
        return None


def _mutable_positions(text: str, skip_frequency: bool) -> list[int]:
    """Character offsets in the data lines (optionally not inside a line's first token)."""
    lines = text.splitlines(keepends=True)
    data = set(_data_line_numbers(text))
    first_data = min(data)
    out, offset = [], 0
    for i, line in enumerate(lines):
        if i >= first_data:
            start = 0
            if skip_frequency and i in data:
                start = len(line) - len(line.lstrip()) + len(line.split()[0]) + 1
            out.extend(range(offset + start, offset + len(line)))
        offset += len(line)
    return out


@settings(max_examples=120, deadline=None, derandomize=True)
@given(data=st.data())
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_fuzz_one_character_mutation(fuzz_files, ext, data):
    text = fuzz_files[ext]
    positions = _mutable_positions(text, skip_frequency=(ext == "s2p"))
    pos = data.draw(st.sampled_from(positions), label="position")
    char = data.draw(st.sampled_from(_MUTATION_CHARS), label="char")
    bad = text[:pos] + char + text[pos + 1:]
    ch = _load_or_channel_error(_write(fuzz_files["dir"], f"mut.{ext}", bad))
    if ch is not None:  # e.g. one digit changed: a valid file; it must keep all its points
        assert ch.f.size == F_FILE.size
        assert np.all(np.diff(ch.f) > 0) and np.all(np.isfinite(ch.network.s))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(frac=st.floats(0.0, 1.0))
@pytest.mark.parametrize("ext", ["s2p", "s4p"])
def test_fuzz_truncation_anywhere(fuzz_files, ext, frac):
    text = fuzz_files[ext]
    positions = _mutable_positions(text, skip_frequency=False)
    cut = positions[min(int(frac * len(positions)), len(positions) - 1)]
    ch = _load_or_channel_error(_write(fuzz_files["dir"], f"cut.{ext}", text[:cut]))
    if ch is not None:  # cut at the end of a point, or inside its last number: a shorter valid file
        assert 2 <= ch.f.size <= F_FILE.size
        np.testing.assert_allclose(ch.f, F_FILE[: ch.f.size])


# ---------------------------------------------------------------- port counts / orders
@pytest.fixture(scope="module")
def eight_port() -> rf.Network:
    """Two uncoupled lanes, ports 1-4 and 5-8, each [in+, in-, out+, out-]; no port names."""
    se = _four_port()
    return _block_diag(se, se, name="eight")


def test_two_port_with_port_order(tmp_path, s2p_text):
    p = _write(tmp_path, "two.s2p", s2p_text)
    with pytest.raises(ChannelError, match="2-port file.*no port order"):
        channels.load(p, thru="12_34")


def test_two_port_with_pairs(tmp_path, s2p_text):
    p = _write(tmp_path, "two.s2p", s2p_text)
    with pytest.raises(ChannelError, match="2-port file.*pairs"):
        channels.load(p, pairs=[((1, 2), (3, 4))])


def test_four_port_with_pairs(tmp_path, s4p_text):
    p = _write(tmp_path, "four.s4p", s4p_text)
    with pytest.raises(ChannelError, match="4-port file.*not pairs"):
        channels.load(p, pairs=[((1, 2), (3, 4))])


def test_eight_port_with_four_port_order(tmp_path, eight_port):
    p = _write(tmp_path, "eight.s8p", _touchstone_text(eight_port, tmp_path))
    with pytest.raises(ChannelError, match="8 ports.*pairs="):
        channels.load(p, thru="12_34")


def test_eight_port_without_names_or_pairs(tmp_path, eight_port):
    p = _write(tmp_path, "eight.s8p", _touchstone_text(eight_port, tmp_path))
    with pytest.raises(ChannelError, match="must name its ports"):
        _load(p)
    # control: the same file with explicit lanes loads
    ch = _load(p, pairs=[((1, 2), (3, 4)), ((5, 6), (7, 8))])
    assert ch.nports == 4 and len(ch.aggressors) == 2


@pytest.mark.parametrize(
    "pairs, match",
    [
        ([((1, 2), (3, 9))], "outside 1..8"),
        ([((1, 2), (3, 3))], "more than once"),
        ([], "empty"),
        ("12_34", "list of lanes"),
    ],
)
def test_eight_port_bad_pairs(tmp_path, eight_port, pairs, match):
    p = _write(tmp_path, "eight.s8p", _touchstone_text(eight_port, tmp_path))
    with pytest.raises(ChannelError, match=match):
        _load(p, pairs=pairs)


@pytest.mark.parametrize("victim", [2, -1, 0.0, "0"])
def test_eight_port_bad_victim(tmp_path, eight_port, victim):
    p = _write(tmp_path, "eight.s8p", _touchstone_text(eight_port, tmp_path))
    with pytest.raises(ChannelError, match="victim must be a lane index from 0 to 1"):
        _load(p, pairs=[((1, 2), (3, 4)), ((5, 6), (7, 8))], victim=victim)


@pytest.mark.parametrize("order", ["12_43", "abc", "11_22", "1234_5", "", ((1, 2), (3, 3)), ((1, 2),), 42])
def test_unknown_port_order(tmp_path, s4p_text, order):
    p = _write(tmp_path, "four.s4p", s4p_text)
    with pytest.raises(ChannelError, match="port order"):
        _load(p, thru=order)


@pytest.mark.parametrize("nports", [6, 3, 10])
def test_port_count_that_fits_no_layout(tmp_path, nports):
    se = _four_port()  # all blocks at 50 ohm, so the file has one reference impedance
    parts = [se] if nports >= 4 else []
    rest = nports - (4 if parts else 0)
    while rest >= 2:
        parts.append(se.subnetwork([0, 2]))  # the in+ -> out+ leg
        rest -= 2
    if rest:
        parts.append(se.subnetwork([0]))
    net = _block_diag(*parts, name=f"n{nports}")
    assert net.nports == nports
    p = _write(tmp_path, f"odd.s{nports}p", _touchstone_text(net, tmp_path))
    with pytest.raises(ChannelError, match=f"has {nports} ports"):
        _load(p)


@pytest.fixture(scope="module")
def crosstalk_four_port() -> rf.Network:
    """A NEXT-like four-port: weak coupling everywhere, no through path."""
    f = F_FILE
    rng = np.random.default_rng(7)
    s = 0.01 * (rng.standard_normal((f.size, 4, 4)) + 1j * rng.standard_normal((f.size, 4, 4)))
    s = 0.5 * (s + s.transpose(0, 2, 1))
    return rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=50.0, name="xt")


def test_crosstalk_file_with_auto_order(tmp_path, crosstalk_four_port):
    p = _write(tmp_path, "CA_next1.s4p", _touchstone_text(crosstalk_four_port, tmp_path))
    with pytest.raises(ChannelError, match=r"(?s)cannot tell the port order.*crosstalk.*through"):
        _load(p, thru="auto")
    # control: with the through sibling's order it loads
    assert _load(p, thru="13_24", kind="next").kind == "next"


def test_crosstalk_sibling_control(tmp_path, s4p_text, crosstalk_four_port):
    """Control: beside its through file, the same crosstalk file loads as an aggressor."""
    _write(tmp_path, "CA_thru.s4p", s4p_text)
    _write(tmp_path, "CA_next1.s4p", _touchstone_text(crosstalk_four_port, tmp_path))
    ch = _load(tmp_path / "CA_thru.s4p", aggressors="auto")
    assert [a.kind for a in ch.aggressors] == ["next"]


@pytest.mark.parametrize(
    "thru_name, aggressors, match",
    [
        ("CA_main.s4p", "auto", "name contains 'thru'"),
        ("CA_thru.s4p", ["CA_xt1.s4p"], "NEXT or FEXT"),
        ("CA_thru.s4p", [("CA_xt1.s4p", "xtalk")], "'next' or 'fext'"),
        ("CA_thru.s4p", "CA_xt1.s4p", "list of paths"),
        ("CA_thru.s4p", ["CA_missing_next.s4p"], "not found"),
    ],
)
def test_bad_aggressor_arguments(tmp_path, s4p_text, crosstalk_four_port, thru_name, aggressors, match):
    _write(tmp_path, thru_name, s4p_text)
    _write(tmp_path, "CA_xt1.s4p", _touchstone_text(crosstalk_four_port, tmp_path))
    if isinstance(aggressors, list):
        aggressors = [
            (str(tmp_path / a[0]), a[1]) if isinstance(a, tuple) else str(tmp_path / a) for a in aggressors
        ]
    with pytest.raises(ChannelError, match=match):
        _load(tmp_path / thru_name, aggressors=aggressors)


# --------------------------------------------------------------------- pulse_response
@pytest.fixture(scope="module")
def short_line() -> channels.Channel:
    """5 cm stripline on 0..120 GHz in 100 MHz steps (1/df = 10 ns, delay 0.3 ns)."""
    return channels.media.stripline(0.05, frequency=np.linspace(0, 120e9, 1201))


@pytest.mark.parametrize("baud", [0.0, -106.25e9, float("nan"), float("inf"), "fast", None])
def test_pulse_bad_baud(short_line, baud):
    with pytest.raises(ChannelError, match="baud_hz"):
        short_line.pulse_response(baud)


@pytest.mark.parametrize("spu", [0, 1, -4, 2.5, 32.0, "32", 2048])
def test_pulse_bad_samples_per_ui(short_line, spu):
    with pytest.raises(ChannelError, match="samples_per_ui"):
        short_line.pulse_response(53.125e9, spu)


@pytest.mark.parametrize("rise", [-1e-12, float("nan"), float("inf")])
def test_pulse_bad_rise_time(short_line, rise):
    with pytest.raises(ChannelError, match="rise_time_s"):
        short_line.pulse_response(53.125e9, 8, rise_time_s=rise)


@pytest.mark.parametrize("bw", [-40e9, 0.0, float("nan")])
def test_pulse_bad_rx_bandwidth(short_line, bw):
    with pytest.raises(ChannelError, match="rx_bandwidth_hz"):
        short_line.pulse_response(53.125e9, 8, rx_bandwidth_hz=bw)


@pytest.mark.parametrize("order", [0, 13, 2.0])
def test_pulse_bad_rx_filter_order(short_line, order):
    with pytest.raises(ChannelError, match="rx_filter_order"):
        short_line.pulse_response(53.125e9, 8, rx_bandwidth_hz=40e9, rx_filter_order=order)


@pytest.mark.parametrize(
    "kw, match",
    [({"rise_time_s": "8ps"}, "rise_time_s"), ({"rx_bandwidth_hz": "40GHz"}, "rx_bandwidth_hz")],
)
def test_pulse_non_numeric_filter_arguments(short_line, kw, match):
    with pytest.raises(ChannelError, match=match):
        short_line.pulse_response(53.125e9, 8, **kw)


def test_pulse_data_stop_below_nyquist():
    ch = channels.media.stripline(0.05, frequency=np.linspace(0, 20e9, 2001))
    with pytest.raises(ChannelError, match=r"below the Nyquist frequency.*require_nyquist=False"):
        ch.pulse_response(106.25e9)
    # the documented escape hatch works
    pr = ch.pulse_response(106.25e9, 8, require_nyquist=False)
    assert pr.grid.extrapolated_above_hz == pytest.approx(20e9)


def _delay_from_length(length_m, dk=3.4):
    """Delay (s) of ``length_m`` of line with relative permittivity ``dk`` (stripline 3.4, twinax 1.5)."""
    return length_m * np.sqrt(dk) / 299_792_458.0


@pytest.mark.parametrize(
    "line, length_m, df_hz",
    [
        # 1 GHz steps, 1/df = 1 ns. 0.08 m: delay 0.49 ns (< 1/(2 df), estimated right) + 64 UI > 1 ns.
        ("stripline", 0.08, 1e9),
        ("stripline", 0.15, 1e9),  # delay 0.92 ns: the phase turns 0.92 turn per step
        ("stripline", 0.5, 1e9),  # delay 3.1 ns, three times the time span
        ("stripline", 1.0, 1e9),  # delay 6.2 ns
    ],
)
def test_pulse_grid_too_coarse(line, length_m, df_hz):
    """A frequency step whose time span 1/df is shorter than the channel's delay must be refused."""
    f = np.arange(0.0, 120e9 + df_hz / 2, df_hz)
    ch = getattr(channels.media, line)(length_m, frequency=f)
    delay = _delay_from_length(length_m, 3.4 if line == "stripline" else 1.5)
    assert delay + 64 / 106.25e9 > 1 / df_hz  # the data's record cannot hold the response
    with pytest.raises(ChannelError, match=r"too coarse"):
        ch.pulse_response(106.25e9, 8)


@pytest.mark.parametrize("line, length_m", [("stripline", 2.0), ("twinax", 3.0), ("twinax", 5.0)])
def test_delay_beyond_half_the_data_span_is_known_only_modulo_the_span(line, length_m):
    """The documented limit: sampled in steps of df, a delay is known only modulo 1/df. On
    100 MHz steps (1/df = 10 ns) a 12.3 ns or 20.5 ns line reads as its delay minus whole
    multiples of 10 ns, so the coarse-grid check cannot refuse it; it is up to the data
    (and the docstring of pulse_response says so)."""
    df_hz = 100e6
    f = np.arange(0.0, 120e9 + df_hz / 2, df_hz)
    ch = getattr(channels.media, line)(length_m, frequency=f)
    true = _delay_from_length(length_m, 3.4 if line == "stripline" else 1.5)
    assert true > 1 / df_hz
    assert ch.delay_s == pytest.approx(true % (1 / df_hz), abs=0.05e-9)
    fine = getattr(channels.media, line)(length_m, frequency=np.arange(0.0, 60e9 + 5e6, 10e6))
    assert fine.delay_s == pytest.approx(true, rel=0.01)


@pytest.mark.parametrize("n_ui", [1, 16, 64, 100.0, -256, "256"])
def test_pulse_n_ui_too_small_or_not_int(short_line, n_ui):
    with pytest.raises(ChannelError, match="n_ui"):
        short_line.pulse_response(106.25e9, 8, n_ui=n_ui)


# -------------------------------------------------------------------------- builders
M = channels.media


def _case(fn, *args, match: str, **kw):
    """A builder call for the table below; the grid defaults to the small F_SMALL."""
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kw.items()])
    return pytest.param(fn, args, kw, match, id=f"{fn.__name__}({shown})")


nan, inf = float("nan"), float("inf")


@pytest.mark.parametrize(
    "fn, args, kw, match",
    [
        _case(M.stripline, -0.1, match="length_m"),
        _case(M.diff_line, -1e-3, match="length_m"),
        _case(M.twinax, -1.0, match="length_m"),
        _case(M.microstrip, -0.01, match="length_m"),
        _case(M.package, -1e-3, match="length_m"),
        _case(M.connector, length_m=-1e-3, match="length_m"),
        _case(M.via, stub_length_m=-1e-3, match="stub_length_m"),
        _case(M.stripline, 0.1, 0.0, match="zdiff_ohm"),
        _case(M.stripline, 0.1, -100.0, match="zdiff_ohm"),
        _case(M.connector, zdiff_ohm=0.0, match="zdiff_ohm"),
        _case(M.twinax, 1.0, 26, -90.0, match="zdiff_ohm"),
        _case(M.diff_line, 0.1, zcomm_ohm=0.0, match="zcomm_ohm"),
        _case(M.stripline, 0.1, dk=nan, match="dk"),
        _case(M.microstrip, 0.1, dk=nan, match="dk"),
        _case(M.stripline, 0.1, dk=0.5, match="dk"),
        _case(M.stripline, 0.1, df=0.6, match="df"),
        _case(M.microstrip, 0.1, df=0.51, match="df"),
        _case(M.stripline, 0.1, df=-0.001, match="df"),
        _case(M.stripline, 0.1, trace_width_m=0.0, match="trace_width_m"),
        _case(M.microstrip, 0.1, height_m=-1e-4, match="height_m"),
        _case(M.stripline, 0.1, roughness_rms_m=-1e-6, match="roughness_rms_m"),
        _case(M.stripline, 0.1, f_ref_hz=0.0, match="f_ref_hz"),
        _case(M.ac_cap, -100e-9, match="capacitance_f"),
        _case(M.ac_cap, 0.0, match="capacitance_f"),
        _case(M.ac_cap, 100e-9, esl_h=-1e-12, match="esl_h"),
        _case(M.twinax, 1.0, 50, match="awg"),
        _case(M.twinax, 1.0, -1, match="awg"),
        _case(M.awg_diameter_m, 47, match="awg"),
        _case(M.stripline, "ten cm", match=r"length_m must be a number.*'ten cm'"),
        _case(M.twinax, 1.0, "26awg", match=r"awg must be a number.*'26awg'"),
        _case(M.stripline, 0.1, "100 ohm", match="zdiff_ohm must be a number"),
        _case(M.stripline, 0.1, dk="low", match="dk must be a number"),
        _case(M.skew, "1ps", match="delay_s must be a number"),
        _case(M.skew, inf, match="delay_s must be finite"),
        _case(M.stripline, 0.1, frequency=[1e9, 0.5e9, 2e9], match="strictly increasing"),
        _case(M.stripline, 0.1, frequency=[-1e9, 1e9], match="negative"),
        _case(M.stripline, 0.1, frequency=[1e9], match="at least 2"),
        _case(M.stripline, 0.1, frequency=[0.0, nan, 2e9], match="finite"),
        _case(M.stripline, 0.1, frequency=["0", "1 GHz"], match="frequency"),
        _case(M.diff_line, 0.1, permittivity=np.ones(3), match="permittivity"),
    ],
)
def test_builder_rejects_bad_argument(fn, args, kw, match):
    if "frequency" in inspect.signature(fn).parameters:
        kw = {"frequency": F_SMALL, **kw}
    with pytest.raises(ChannelError, match=match):
        fn(*args, **kw)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"tx_ohm": 0.0}, "tx_ohm"),
        ({"rx_ohm": -85.0}, "rx_ohm"),
        ({"tx_cap_f": -1e-15}, "tx_cap_f"),
        ({"rx_cap_f": "big"}, "rx_cap_f"),
    ],
)
def test_terminate_rejects_bad_argument(kw, match):
    ch = M.stripline(0.01, frequency=F_SMALL)
    with pytest.raises(ChannelError, match=match):
        M.terminate(ch, **kw)


def test_terminate_needs_a_full_channel_for_die_caps(two_port):
    """A differential-only channel is renormalised alone; die capacitances per leg need
    its legs."""
    ch = channels.Channel.from_differential(two_port)
    with pytest.raises(ChannelError, match="four-port"):
        M.terminate(ch, tx_cap_f=1e-13)
    t = M.terminate(ch, 80.0, 120.0)
    assert t.reference_impedance_ohm == (80.0, 120.0)
    ref = two_port.copy()
    ref.renormalize(np.array([80.0, 120.0]))
    np.testing.assert_allclose(t.sdd21, ref.s[:, 1, 0], rtol=1e-12)


# -------------------------------------------------------------------- Channel methods
@pytest.fixture(scope="module")
def line20() -> channels.Channel:
    """5 cm stripline from DC to 20 GHz in 100 MHz steps."""
    return channels.media.stripline(0.05, frequency=np.linspace(0, 20e9, 201))


@pytest.fixture(scope="module")
def diff_only(two_port) -> channels.Channel:
    return channels.Channel.from_differential(two_port)


@pytest.mark.parametrize("f", [25e9, [1e9, 30e9], -1e9, float("nan")])
def test_insertion_loss_outside_band(line20, f):
    with pytest.raises(ChannelError, match="outside the data|negative|NaN"):
        line20.insertion_loss_db(f)


def test_insertion_loss_outside_band_below_first_point(diff_only):
    with pytest.raises(ChannelError, match="outside the data"):
        diff_only.insertion_loss_db(0.5e9)  # the file starts at 1 GHz


@pytest.mark.parametrize("port", [3, 0, -1, "1", 1.5])
def test_return_loss_bad_port(line20, port):
    with pytest.raises(ChannelError, match="port must be 1 or 2"):
        line20.return_loss_db(10e9, port=port)


def test_return_loss_outside_band(line20):
    with pytest.raises(ChannelError, match="outside the data"):
        line20.return_loss_db(40e9)


@pytest.mark.parametrize(
    "f, match",
    [
        (np.linspace(0, 30e9, 31), "leaves the data"),
        (np.linspace(1e9, 25e9, 5), "leaves the data"),
        (np.linspace(10e9, 1e9, 10), "strictly increasing"),
        ([1e9, 2e9, 2e9, 3e9], "strictly increasing"),
        ([5e9], "at least 2"),
        ([1e9, float("nan")], "NaN"),
        ([-1e9, 1e9], "negative"),
    ],
)
def test_resample_bad_frequencies(line20, f, match):
    with pytest.raises(ChannelError, match=match):
        line20.resample(f)


def test_resample_below_first_point(diff_only):
    with pytest.raises(ChannelError, match="leaves the data"):
        diff_only.resample(np.linspace(0, 5e9, 6))  # the data start at 1 GHz


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0,), "f_max_hz"),
        ((-50e9,), "f_max_hz"),
        ((float("nan"),), "f_max_hz"),
        ((50e9, 0.0), "df_hz"),
        ((50e9, -1e6), "df_hz"),
        ((50e9, 40e9), "fewer than 3 points"),
        ((50e9, 1.0), "too large"),
    ],
)
def test_uniform_bad_arguments(line20, args, match):
    with pytest.raises(ChannelError, match=match):
        line20.uniform(*args)


@pytest.mark.parametrize("name", ["sxx21", "sdd31", "s21", "sdd2", "", "SDD21X"])
def test_unknown_mixed_mode_parameter(line20, name):
    with pytest.raises(ChannelError, match="unknown mixed-mode parameter"):
        line20.parameter(name)


def test_step_response_unknown_parameter(line20):
    with pytest.raises(ChannelError, match="unknown mixed-mode parameter"):
        line20.step_response("sxx21")


@pytest.mark.parametrize("what", ["scd21", "parameter:scc11", "parameter:sdc21", "step:scd21"])
def test_common_mode_on_differential_only_channel(diff_only, what):
    with pytest.raises(ChannelError, match="differential-only"):
        if what == "scd21":
            diff_only.scd21
        elif what.startswith("parameter:"):
            diff_only.parameter(what.split(":")[1])
        else:
            diff_only.step_response(what.split(":")[1])


def test_cascade_on_different_grids():
    a = channels.media.stripline(0.02, frequency=np.linspace(0, 20e9, 201))
    b = channels.media.stripline(0.03, frequency=np.linspace(0, 30e9, 151))
    with pytest.raises(ChannelError, match="different frequency grids.*grid='common'"):
        a.cascade(b)
    with pytest.raises(ChannelError, match="different frequency grids"):
        channels.cascade(a, b)
    with pytest.raises(ChannelError, match="different frequency grids"):
        a ** b
    ab = channels.cascade(a, b, grid="common")
    np.testing.assert_allclose(ab.f, np.linspace(0, 20e9, 201), atol=1e-3)
    # same delay as 5 cm of the same line, to 1 %
    assert ab.delay_s == pytest.approx(_delay_from_length(0.05), rel=0.01)


@pytest.mark.parametrize(
    "args, kw, match",
    [
        ((), {"grid": "fine"}, "grid must be None, 'common'"),
        (("not a channel",), {}, "cascade takes Channels"),
        ((), {"grid": [0.0, float("nan")]}, "grid holds NaN"),
    ],
)
def test_cascade_bad_arguments(line20, args, kw, match):
    with pytest.raises(ChannelError, match=match):
        channels.cascade(line20, *args, **kw)


def test_cascade_with_non_channel(line20, two_port):
    with pytest.raises(ChannelError, match="can only cascade a Channel"):
        line20.cascade(two_port)


@pytest.mark.parametrize("name", ["nope", "", "TWINAX_1M_26AWG", None, 3])
def test_library_unknown_name(name):
    with pytest.raises(ChannelError, match="unknown built-in channel"):
        channels.library.get(name)
    with pytest.raises(ChannelError, match="unknown built-in channel"):
        channels.library.describe(name)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"f_max_hz": 40e9}, "beyond the data"),
        ({"baud_hz": 53.125e9}, "beyond the data"),
        ({"f_min_hz": 15e9, "f_max_hz": 10e9}, "f_min < f_max"),
        ({"f_min_hz": -1e9}, "f_min < f_max"),
        ({"f_min_hz": 10e9, "f_max_hz": 10.2e9}, "fewer than 5 points"),
        ({"baud_hz": -1.0}, "baud_hz"),
    ],
)
def test_ild_bad_band(line20, kw, match):
    with pytest.raises(ChannelError, match=match):
        line20.ild(**kw)
