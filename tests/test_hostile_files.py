"""Hostile Touchstone files (issue 31): every one a one-line ChannelError, or the right answer.

Each case fails on the loader before issue 31: a padded ``[Reference]``, zero references,
``0_5`` read as 5, a 1e200 that reached a Numba kernel, a LinAlgError from the quality
checks, a COM from two points, an open channel failing inside numpy, unbounded cost (a long
comment word, ``[Number of Ports] 99999``, ``.s40000p``, a large NUL file), internal error
text, raw control characters in messages. Bounded cost is shown without a clock: the
refusal comes before the allocation (tracemalloc's peak), the quadratic scikit-rf methods
are never called, and the linear replacements return what scikit-rf's return. The fuzz of
``benchmarks/bench_fuzz_touchstone.py`` runs on a handful of fixed mutations here, and on
200 seeded files in the slow test.
"""

from __future__ import annotations

import io
import random
import re
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import skrf as rf

import channels
from conftest import shared_file, write_file
from channels import ChannelError, ChannelQualityWarning, _tsdata, _tsfile, _tsnumbers, _tsread, grid, quality
from channels.errors import shown_path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_fuzz_touchstone as fuzz  # noqa: E402

CA_THRU = "ieee802.3ck/CA_19p75dB_thru.s4p"


# ------------------------------------------------------------------------------ helpers
def _two_port(n: int = 601, f_max: float = 60e9, s21_scale: float = 1.0) -> str:
    """A plausible synthetic 2-port (GHz, RI): a lossy line with a little reflection."""
    f = np.linspace(0, f_max, n)
    g = f / 1e9
    s21 = s21_scale * 10 ** (-(0.5 * np.sqrt(g) + 0.2 * g) / 20) * np.exp(-2j * np.pi * f * 0.5e-9)
    s11 = 0.05 * np.exp(-2j * np.pi * f * 0.1e-9)
    rows = [f"{x / 1e9:.6f} {a.real:.6f} {a.imag:.6f} {b.real:.6f} {b.imag:.6f} {b.real:.6f} {b.imag:.6f} "
            f"{a.real:.6f} {a.imag:.6f}" for x, a, b in zip(f, s11, s21)]
    return "! synthetic line\n# GHz S RI R 50\n" + "\n".join(rows) + "\n"


_write = write_file


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return channels.load(path, **kw)


def _refused(path, match: str, **kw) -> str:
    """The ChannelError message of loading ``path``; one line, matching ``match``."""
    with pytest.raises(ChannelError, match=match) as info:
        _load(path, **kw)
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def _ts2(tmp_path, header_lines: list[str], name: str = "t2.s4p") -> Path:
    """The CA through as a Touchstone 2 file with these header lines after the option line."""
    text = shared_file(CA_THRU).read_text()
    lines = text.splitlines(keepends=True)
    body = "".join(lines[3:])
    head = "[Version] 2.0\n# Hz S RI R 50\n" + "".join(x + "\n" for x in header_lines)
    return _write(tmp_path, name, head + body + "[End]\n")


def _peak_bytes(fn) -> int:
    """Peak traced allocation (Python and numpy) while ``fn`` runs (its exception swallowed)."""
    tracemalloc.start()
    try:
        fn()
    except ChannelError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


# ------------------------------------------------------------ 1, 2: [Reference]
def test_reference_with_too_few_values_is_not_padded_from_the_next_keyword(tmp_path):
    p = _ts2(tmp_path, ["[Number of Ports] 4", "[Reference] 50 50", "[Number of Frequencies] 6001",
                        "[Network Data]"])
    msg = _refused(p, r"\[Reference\] gives 2 values for 4 ports before line 5, a keyword line")
    assert "[Number of Frequencies] 6001" in msg


def test_reference_continued_on_the_next_lines_reads_right(tmp_path):
    ref = _load(shared_file(CA_THRU))
    for ref_lines in (["[Reference] 50 50 50 50"], ["[Reference] 50 50", "50 50"],
                      ["[Reference] 50", "! a comment between", "50 50", "", "50"]):
        p = _ts2(tmp_path, ["[Number of Ports] 4", *ref_lines, "[Number of Frequencies] 6001", "[Network Data]"])
        ch = _load(p)
        assert np.all(ch.single_ended.z0 == 50)
        assert np.allclose(ch.insertion_loss_db(26.5625e9), ref.insertion_loss_db(26.5625e9), atol=1e-9)


@pytest.mark.parametrize("values, match", [
    ("0 0 0 0", "finite and positive"), ("-50 50 50 50", "finite and positive"),
    ("nan 50 50 50", "not a number"), ("inf 50 50 50", "not a number"), ("1e999 50 50 50", "finite and positive"),
    ("50 50 50 50 50", "5 values for 4 ports"),
])
def test_reference_values_must_be_finite_positive_one_per_port(tmp_path, values, match):
    p = _ts2(tmp_path, ["[Number of Ports] 4", f"[Reference] {values}", "[Network Data]"])
    _refused(p, match)


def test_reference_at_the_end_of_the_file_or_before_the_port_count(tmp_path):
    p = _ts2(tmp_path, ["[Reference] 50 50 50 50", "[Number of Ports] 4", "[Network Data]"], name="t.ts")
    _refused(p, r"\[Reference\] before \[Number of Ports\]")
    text = "[Version] 2.0\n# GHz S RI R 50\n[Number of Ports] 2\n[Two-Port Data Order] 12_21\n[Reference] 50"
    _refused(_write(tmp_path, "end.s2p", text), "gives 1 values for 2 ports and the file ends")


@pytest.mark.parametrize("lines, match", [
    (["[Number of Ports] 99999", "[Network Data]"], r"\[Number of Ports\] 99999: expected from 1 to 64"),
    (["[Number of Ports] 2", "[Network Data]"], "but the extension says 4 ports"),
    (["[Number of Ports]4", "[Network Data]"], "expected a blank between"),
    (["[Number of Ports] 4", "[Matrix Format]", "[Network Data]"], r"\[Matrix Format\] takes Full, Lower or Upper"),
    (["[Number of Ports] 4", "[Frobnicate] 3", "[Network Data]"], "unknown keyword"),
    (["[Number of Ports] 4", "[Number of Ports] 4", "[Network Data]"], "appears twice"),
    (["[Number of Ports] 4"], "without \\[Network Data\\]"),
    (["[Number of Ports] 4", "[Mixed-Mode Order] D2,1 D2,1 C2,1 C4,3", "[Network Data]"], "every port once"),
])
def test_touchstone2_keywords_checked_before_scikit_rf_uses_them(tmp_path, lines, match):
    _refused(_ts2(tmp_path, lines), match)


def test_keyword_after_the_data_and_data_after_end(tmp_path):
    p = _ts2(tmp_path, ["[Number of Ports] 4", "[Network Data]"])
    text = p.read_text()
    _refused(_write(tmp_path, "a.s4p", text.replace("[End]\n", "[Reference] 50 50 50 50\n[End]\n")),
             r"\[Reference\] after \[Network Data\]")
    _refused(_write(tmp_path, "b.s4p", text + "1 2 3\n"), r"data after \[End\]")


# ------------------------------------------------------------ 3: numbers parsed strictly
@pytest.mark.parametrize("token", ["0_5", "1_0", "1e5_0", "\u0661\u0662", "0x10", "1e", "1e+", "--1", "1d3", "0.5j"])
def test_numbers_are_touchstone_numbers(tmp_path, token):
    text = _two_port().replace("0.050000", token, 1)
    msg = _refused(_write(tmp_path, "n.s2p", text), "not a number as Touchstone writes one")
    assert "line 3" in msg and (shown_path(repr(token)) in msg)


def test_strict_numbers_on_scikit_rfs_own_path_too(tmp_path):
    # a non-ASCII blank sends the file to scikit-rf's parser, whose float() reads "0_5" as 5
    text = _two_port().replace("0.050000", "0_5", 1).replace(" ", "\u00a0 ", 1)
    _refused(_write(tmp_path, "slow.s2p", text), r"line 3: '0_5' is not a number as Touchstone writes one")


@pytest.mark.parametrize("token", ["nan", "-inf", "Infinity"])
def test_nan_and_infinity_are_refused_with_their_frequency(tmp_path, token):
    text = _two_port().replace("0.050000", token, 1)
    _refused(_write(tmp_path, "nan.s2p", text), "NaN or infinite S-parameters.*first at 0 Hz")


@pytest.mark.parametrize("where, old, new, match", [
    ("option line", "R 50", "R 5_0", "reference resistance must be positive, finite and written as a Touchstone"),
    ("option line", "R 50", "R 0x32", "reference resistance is not a number"),
])
def test_option_line_numbers_strict(tmp_path, where, old, new, match):
    _refused(_write(tmp_path, "o.s2p", _two_port().replace(old, new, 1)), match)


def test_keyword_numbers_strict(tmp_path):
    _refused(_ts2(tmp_path, ["[Number of Ports] 0_4", "[Network Data]"]), "written with digits")
    _refused(_ts2(tmp_path, ["[Number of Ports] 4", "[Number of Frequencies] 6_001", "[Network Data]"]),
             "written with digits")
    _refused(_ts2(tmp_path, ["[Number of Ports] 4", "[Reference] 5_0 50 50 50", "[Network Data]"]), "not a number")


def test_is_number_is_the_touchstone_grammar():
    for ok in ["0", "-0", "+1.5", "1.", ".5", "-.5e-3", "1E5", "12345678901234567890", "1e-400"]:
        assert _tsnumbers.is_number(ok) and _tsnumbers.is_number(ok.encode())
    for bad in ["0_5", "nan", "inf", "Infinity", " 1", "1 ", "0x10", "1e", ".", "+", "\u0661", "1e5.0", "", "1,5"]:
        assert not _tsnumbers.is_number(bad)
    assert _tsnumbers.is_nonfinite("-Infinity") and not _tsnumbers.is_nonfinite("1")


# ------------------------------------------------------------ 4: magnitudes no channel has
def test_a_huge_value_in_a_real_file_is_refused_naming_where(tmp_path):
    text = shared_file(CA_THRU).read_text()
    p = _write(tmp_path, "huge.s4p", text.replace("0.7496757", "1e200", 1))  # S12 at 10 MHz
    msg = _refused(p, r"\|S12\| = 1e\+200 \(\+4000\.0 dB\) at 0\.01 GHz")
    assert "above 2" in msg and "1.14" in msg


def test_mild_excess_still_loads_with_the_passivity_warning(tmp_path):
    p = _write(tmp_path, "mild.s2p", _two_port(s21_scale=1.5))  # |S21| up to 1.5: not passive, not absurd
    with pytest.warns(ChannelQualityWarning, match="passivity poor"):
        ch = channels.load(p)
    assert np.abs(ch.sdd21).max() == pytest.approx(1.5, rel=1e-5)


# ------------------------------------------------------------ 5: no stray type from the quality checks
@pytest.mark.parametrize("value", [1e150, 1e200, 1e300])
def test_quality_of_huge_values_has_no_linalg_error(value):
    f = np.linspace(0, 10e9, 20)
    s = np.zeros((20, 2, 2), complex)
    s[:, 1, 0] = s[:, 0, 1] = 0.5
    s[3, 1, 0] = value
    rep = quality.check_quality(rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=50))
    assert rep.max_singular_value == pytest.approx(value, rel=1e-12) and rep.passivity == "poor"


def test_quality_of_nan_is_a_channel_error():
    s = np.full((5, 2, 2), 0.5 + 0j)
    s[2, 0, 0] = np.nan
    net = rf.Network(frequency=rf.Frequency.from_f(np.arange(5) * 1e9, unit="hz"), s=s, z0=50)
    with pytest.raises(ChannelError, match="NaN or infinite S-parameters at 1 frequency points, first at 2e"):
        quality.check_quality(net)


# ------------------------------------------------------------ 6: grids too short or too coarse
def _points(tmp_path, keep: list[int], name="few.s4p") -> Path:
    lines = shared_file(CA_THRU).read_text().splitlines(keepends=True)
    body = "".join("".join(lines[3 + 4 * k:7 + 4 * k]) for k in keep)
    return _write(tmp_path, name, "".join(lines[:3]) + body)


def test_two_points_get_no_com(tmp_path):
    import phy

    ch = _load(_points(tmp_path, [100, 5000]), thru="13_24")
    with pytest.raises(ChannelError, match=r"2 frequency points \(1 to 50 GHz\).*needs at least 16"):
        phy.channel_margin(ch)
    with pytest.raises(ChannelError, match="needs at least 16"):
        ch.pulse_response(106.25e9, 8, require_nyquist=False)


def test_pulse_grid_rules_are_stated(tmp_path):
    coarse = _load(_points(tmp_path, list(range(0, 6001, 375))), thru="13_24")  # 17 points, 3.75 GHz steps
    with pytest.raises(ChannelError, match=r"step 3750 MHz is too coarse.*a step of at most [\d.]+ MHz"):
        coarse.pulse_response(106.25e9, 8)
    short = _load(_points(tmp_path, list(range(0, 1000, 20)), name="short.s4p"), thru="13_24")  # to 9.8 GHz
    with pytest.raises(ChannelError, match=r"needs data to at least 0.25 of its Nyquist frequency \(13.28 GHz\)"):
        short.pulse_response(106.25e9, 8, require_nyquist=False)
    gap = _load(_points(tmp_path, list(range(0, 3000)) + list(range(3000, 6001, 500)), name="gap.s4p"),
                thru="13_24")  # median step 10 MHz, but 5 GHz steps above 30 GHz
    with pytest.raises(ChannelError, match="step 5000 MHz is too coarse"):
        gap.pulse_response(106.25e9, 8)
    with pytest.raises(ChannelError, match="needs at least 16"):
        grid.resample_response(np.array([0.0, 1e9]), np.ones(2), np.arange(10) * 1e8, 0.0, (0.0, 0.0))


# ------------------------------------------------------------ 7: a channel that transmits nothing
def test_all_zero_and_open_channels_say_they_transmit_nothing(tmp_path):
    text = _two_port()
    rows = text.splitlines()
    opened = [r if r[0] in "!#" else " ".join(r.split()[:3] + ["0"] * 4 + r.split()[7:]) for r in rows]
    _refused(_write(tmp_path, "open.s2p", "\n".join(opened) + "\n"), "transmits nothing")
    zero = [r if r[0] in "!#" else " ".join(r.split()[:1] + ["0"] * 8) for r in rows]
    _refused(_write(tmp_path, "zero.s2p", "\n".join(zero) + "\n"), "transmits nothing")
    z4 = _write(tmp_path, "zero.s4p", fuzz.m_zero(shared_file(CA_THRU).read_bytes(), "x.s4p", None)[0])
    _refused(z4, "no port transmits to any other")
    _refused(z4, "transmits nothing", thru="13_24")
    net = rf.Network(frequency=rf.Frequency.from_f(np.linspace(0, 60e9, 601), unit="hz"),
                     s=np.zeros((601, 2, 2), complex), z0=50)
    ch = channels.Channel.from_differential(net)
    with pytest.raises(ChannelError, match="transmits nothing"):
        ch.pulse_response(53.125e9, 8)


# ------------------------------------------------------------ 8: bounded cost, refused before the work
def test_quadratic_scikit_rf_methods_are_never_called(tmp_path, monkeypatch):
    from skrf.io import touchstone as skts

    def refuse(*a, **k):
        raise AssertionError("scikit-rf's quadratic method was called")

    for meth in ("get_comments", "get_comment_variables", "_parse_port"):
        monkeypatch.setattr(skts.Touchstone, meth, refuse)
    word = "! " + "a" * 200_000 + "\n! " + "!" * 50_000 + "::x\n! x = " + "7" * 50_000 + "\n"
    flood = "".join(f"! comment line {k}\n" for k in range(30_000))
    for text, name in ((word + _two_port(), "w.s2p"), (flood + _two_port(), "f.s2p"),
                       (word + _two_port().replace(" ", "\u00a0 ", 1), "slow.s2p")):  # scikit-rf's path too
        ch = _load(_write(tmp_path, name, text))
        assert ch.f.size == 601


def test_linear_comment_handling_equals_scikit_rfs():
    from skrf.io import touchstone as skts

    rng = random.Random(5)
    alphabet = ["a", "b", "7", "_", " ", " = ", "=", "!", ":", "::", "\t", "Port", "é", "."]
    ref = skts.Touchstone.__new__(skts.Touchstone)
    ours = _tsread._SafeTouchstone.__new__(_tsread._SafeTouchstone)
    for _ in range(3000):
        text = "\n".join("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(3))
        ref.comments = ours.comments = text
        assert ours.get_comment_variables() == ref.get_comment_variables()
        assert ours.get_comments() == ref.get_comments()
        for line in text.split("\n"):
            m = re.search(r"!\s*(\S+::[^:]+)", line)
            assert _tsread._sigrity(line) == (m.group(1) if m else None), line
    lines = ["! Port[1] = A", "!  MyPort::VDD", "! x::y::z", "1 2 3", "! Port 2 : B"]
    for k in range(len(lines)):
        buf = "\n".join(lines[k:] + lines[:k]) + "\n"
        assert ours._parse_port(io.StringIO(buf)) == ref._parse_port(io.StringIO(buf))


def test_many_keyword_and_option_characters_on_a_line_cost_linear_time(tmp_path):
    # each '[' or '#' on a line used to search back to the line's start: quadratic in a line
    # (1.4 s of CPU a 256 Ki-character line, and a file may hold 500 of them). A CPU-time bound
    # some 50 times what it takes now (0.15 s; CPU time, not wall clock: a busy machine does not
    # fail it); the 20 lines took 28 s before.
    lines = [("! " + c * (_tsfile.MAX_LINE_CHARS - 10)) for c in "[#"] * 10
    p = _write(tmp_path, "brackets.s2p", "\n".join(lines) + "\n" + _two_port())
    import time

    t = time.process_time()
    ch = _load(p)
    assert time.process_time() - t < 10.0 and ch.f.size == 601


def test_port_count_99999_refused_before_allocating(tmp_path):
    p = _ts2(tmp_path, ["[Number of Ports] 99999", "[Network Data]"], name="big.ts")
    assert _peak_bytes(lambda: _load(p)) < 60 * p.stat().st_size  # the file's text and copies, no S array
    _refused(p, "expected from 1 to 64")


def test_extension_with_40000_ports_refused_before_reading(tmp_path):
    p = _write(tmp_path, "x.s40000p", _two_port())
    assert _peak_bytes(lambda: _load(p)) < 100_000
    _refused(p, "the extension says 40000 ports; expected 1 to 64")
    _refused(_write(tmp_path, "x.s" + "9" * 200 + "p", "x"), "ports; expected 1 to 64")


def test_large_nul_file_refused_before_reading(tmp_path):
    big = tmp_path / "nul.s4p"
    with open(big, "wb") as fh:
        fh.truncate(int(4.5 * 2**30))  # sparse: 4.5 GiB of NUL bytes, no disk space
    assert _peak_bytes(lambda: _load(big)) < 100_000
    _refused(big, r"4,831,838,208 bytes, larger than the 128 MiB")
    small = tmp_path / "nul2.s4p"
    with open(small, "wb") as fh:
        fh.truncate(100 * 2**20)  # under the size limit: refused after its first 4096 bytes
    assert _peak_bytes(lambda: _load(small)) < 100_000
    _refused(small, r"binary data, not a Touchstone text file \(a NUL byte at offset 0\)")
    deep = _two_port().encode()
    deep = deep[:5000] + b"\x00" + deep[5000:]
    _refused(_write(tmp_path, "deep.s2p", deep), r"a NUL byte at offset 5000, line \d+")


def test_line_and_word_limits(tmp_path, monkeypatch):
    long_line = "! " + "x" * (_tsfile.MAX_LINE_CHARS + 10) + "\n"
    _refused(_write(tmp_path, "long.s2p", long_line + _two_port()), "line 1 holds 262,156 characters, more than")
    monkeypatch.setattr(_tsfile, "MAX_WORDS", 1000)
    _refused(_write(tmp_path, "words.s2p", _two_port()), r"5,4\d\d words, more than the 1,000 numbers")


# ------------------------------------------------------------ 9: nothing but ChannelError leaves the loader
@pytest.mark.parametrize("mutate, match", [
    (lambda t: t.replace("# GHz S RI R 50", "# GHz S RI R 50\n! Port[0] = A"), r"'! Port\[0\]' names a port outside"),
    (lambda t: t.replace("# GHz S RI R 50", "# GHz S RI R 50\n! Port[7] = A"), r"'! Port\[7\]' names a port outside"),
])
def test_internal_error_text_never_passes_through(tmp_path, mutate, match):
    msg = _refused(_write(tmp_path, "p.s2p", mutate(_two_port())), match)
    assert "index out of range" not in msg


def test_any_parser_failure_becomes_a_channel_error(tmp_path, monkeypatch):
    def broken(*a, **k):
        return 1 % 0

    p = _write(tmp_path, "ok.s2p", _two_port())
    monkeypatch.setattr(_tsread, "read_text", broken)
    msg = _refused(p, r"ok\.s2p: malformed Touchstone data")
    assert "modulo" not in msg and "division" not in msg
    monkeypatch.undo()
    monkeypatch.setattr(_tsdata, "check_network", broken)
    msg = _refused(p, r"ok\.s2p: could not be read as a Touchstone file.*ZeroDivisionError")
    assert "modulo" not in msg and "division by zero" not in msg


# ------------------------------------------------------------ 10: control characters in file names
def test_control_characters_in_names_are_escaped(tmp_path):
    name = "bad\x1b[31m\nname\r\x07.s2p"
    msg = _refused(tmp_path / ("missing" + name), "not found")
    assert "\x1b" not in msg and "\\x1b[31m\\nname\\r\\x07.s2p" in msg
    p = _write(tmp_path, name, _two_port().replace("0.050000", "0_5", 1))
    msg = _refused(p, "not a number")
    assert msg.startswith("bad\\x1b[31m\\nname\\r\\x07.s2p: line 3")
    ch = _load(_write(tmp_path, "ok\x1b.s2p", _two_port()))
    assert ch.name == "ok\\x1b"
    assert shown_path("a\udcffb") == "a\\udcffb" and shown_path("x" * 300).endswith("(300 characters)")


# ------------------------------------------------------------ the fuzz
@pytest.mark.parametrize("mutation", sorted(fuzz.MUTATIONS))
def test_fixed_mutations_give_a_channel_or_a_one_line_error(tmp_path, mutation):
    files = [shared_file(CA_THRU), shared_file("measured/pcb_stripline_119mm.s2p")]
    for k, src in enumerate(files):
        rng = np.random.default_rng([31, k, sorted(fuzz.MUTATIONS).index(mutation)])
        data, name = src.read_bytes(), src.name
        data, name, _ = fuzz.m_shrink(data, name, np.random.default_rng([7, 1]))  # 200 points: quick
        data, name, what = fuzz.MUTATIONS[mutation](data, name, rng)
        res = fuzz.run_one(str(_write(tmp_path, name, data)))
        assert res["outcome"] in ("loaded", "ChannelError"), (what, res)
        assert res.get("one_line", True), res


def _set_first(data: bytes, old: bytes, new: bytes) -> bytes:
    return data.replace(old, new, 1)


@pytest.mark.parametrize("case", ["1e200", "reference 50 50", "two points", "zero", "0_5"])
def test_fixed_issue_cases_through_the_fuzz_harness(tmp_path, case):
    src = shared_file(CA_THRU).read_bytes()
    short, _, _ = fuzz.m_shrink(src, "CA_thru.s4p", np.random.default_rng([7, 1]))
    data = {
        "1e200": lambda: _set_first(short, b"\t0.", b"\t1e200 "),
        "reference 50 50": lambda: _ts2(tmp_path, ["[Number of Ports] 4", "[Reference] 50 50",
                                                   "[Number of Frequencies] 6001", "[Network Data]"]).read_bytes(),
        "two points": lambda: b"\n".join(fuzz._lines(src)[:3] + fuzz._lines(src)[3 + 400:3 + 408]),
        "zero": lambda: fuzz.m_zero(short, "x.s4p", None)[0],
        "0_5": lambda: _set_first(short, b"\t0.", b"\t0_"),
    }[case]()
    res = fuzz.run_one(str(_write(tmp_path, "CA_thru.s4p", data)))
    assert res["outcome"] == "ChannelError" and res["one_line"], res


@pytest.mark.slow
def test_fuzz_200_seeded_files():
    res = fuzz.fuzz(200, 17, timeout=120, memory_gb=6)
    assert res["files"] == 200
    assert not res["failures"], res["failures"][:3]
    assert res["counts"].get("loaded", 0) > 10 and res["counts"].get("ChannelError", 0) > 50
