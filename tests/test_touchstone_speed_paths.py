"""The compiled Touchstone scanner (channels._tsscan, issue 35) against ``float`` and scikit-rf.

:func:`channels._tsscan.scan` reads a data block in one pass; :func:`finish_slow` completes
the numbers it leaves. Every test here compares with an independent reference built in
Python: the lines split at LF, special lines (first non-blank ``!``, ``#``, ``[``) set
aside, comments cut at ``!``, ``bytes.split()`` for the tokens and ``float`` for each (or a
refusal where a token is neither a Touchstone number nor a NaN/infinity spelling), compared
bit for bit; and the old numpy reader (:func:`channels._tsnumbers.parse_numbers`) on the
same bytes. The networks of every shared file are compared with scikit-rf's own.
"""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import numpy as np
import pytest
import skrf as rf

from channels import ChannelError, _tsfile, _tsheader, _tsnumbers, _tsread, _tsscan
from channels._tsnumbers import STRUCTURE_TABLE, parse_numbers

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "channels"
_REAL = sorted(SHARED.glob("*/*.s*p")) if SHARED.is_dir() else []
_BLANK = b" \t\x0b\x0c\r\x1c\x1d\x1e\x1f"


def _reference(raw: bytes):
    """(values or None, first-on-line flags, special lines (start, end, bare)) by plain Python."""
    tokens, first, spec, pos = [], [], [], 0
    for line in raw.split(b"\n"):
        body = line.lstrip(_BLANK)
        at = pos + len(line) - len(body)
        if body[:1] in (b"!", b"#", b"["):
            spec.append((at, pos + len(line), int(body == b"!" or (body[:1] == b"!" and not body[1:].strip(_BLANK)))))
        else:
            words = body.partition(b"!")[0].translate(bytes.maketrans(_BLANK, b" " * len(_BLANK))).split(b" ")
            words = [w for w in words if w]
            first += [1] + [0] * (len(words) - 1) if words else []
            tokens += words
        pos += len(line) + 1
    ok = all(_tsnumbers.is_number(t) or _tsnumbers.is_nonfinite(t) for t in tokens)
    values = np.array([float(t) for t in tokens]) if ok else None
    return values, np.array(first, np.uint8), np.array(spec, np.int64).reshape(-1, 3)


def _scanned(raw: bytes):
    v, first, slow, spec = _tsscan.scan_bytes(raw, 0)
    v = v.copy()
    return (v if _tsscan.finish_slow(v, raw, 0, slow) else None), first, spec


def _check(raw: bytes, old: bool = True) -> None:
    ref, ref_first, ref_spec = _reference(raw)
    got, first, spec = _scanned(raw)
    assert np.array_equal(spec, ref_spec)
    if ref is None:
        assert got is None
    else:
        assert got is not None and got.tobytes() == ref.tobytes()
        assert np.array_equal(first, ref_first)
    if old and raw.isascii() and not any(c in raw for c in b"!#["):  # the old numpy reader agrees
        res = parse_numbers(np.frombuffer(raw.translate(STRUCTURE_TABLE), np.uint8))
        assert (res is None) == (got is None)
        assert res is None or res[0].tobytes() == got.tobytes()


@pytest.mark.skipif(not _REAL, reason="../shared/channels not present")
@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.name)
def test_every_token_of_every_shared_file_is_floats(path):
    raw = path.read_bytes()
    _check(raw, old=False)
    ref, _, _ = _reference(raw)
    assert ref is not None and ref.size > 1000  # the files are numbers, and they were read


def _adversarial(rng: random.Random) -> list[str]:
    toks = ["0", "-0", "+0", "0.0", "-0.0", "+0.0e5", "-0e-999", "0e9999", "1.", ".5", "+.5", "-.5", "1e5", "1E5",
            "+.5E-3", "-1.e-3", "00000000000000000000001.5", "0.0009762563559999999", "-000.000000000000000000000001",
            "9007199254740991", "9007199254740992", "9007199254740993", "18446744073709551615", "18446744073709551616",
            "1234567890123456789", "12345678901234567890", "99999999999999999999e-20", "1e22", "1e23", "1e-22",
            "1e-23", "4.9e-324", "2.4703282292062327e-324", "1e-400", "1e308", "1.7976931348623157e308", "1e309",
            "1e400", "123456789e27", "123456789e-27", "1e0000", "1e00001", "1e+0022", "0.09127562810000001",
            "68.81419220000001"]
    for _ in range(4000):  # 17 digits (repr), 19-20 digits, huge and small exponents
        nd = rng.choice([15, 16, 17, 17, 18, 19, 20, 21, rng.randint(1, 25)])
        digits = "".join(rng.choice("0123456789") for _ in range(nd))
        pt = rng.randint(0, nd)
        s = digits[:pt] + "." + digits[pt:] if rng.random() < 0.8 else digits
        if rng.random() < 0.6:
            s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.choice([rng.randint(0, 30), rng.randint(0, 400)]))
        toks.append(rng.choice(["", "-", "+"]) + s)
    for _ in range(1500):  # halfway points between doubles and their neighbours, 16-19 digits
        d = float(rng.randrange(2**53, 2**63))
        half = int(np.spacing(d)) // 2
        for k in (half - 1, half, half + 1):
            m, e = str(int(d) + k), rng.randint(0, 5)
            toks.append(f"{m}e-{e}" if e else m)
            toks.append((m[:-e] + "." + m[-e:] + f"e{e}") if e else f"{m}.0")
    return toks


@pytest.mark.parametrize("seed", range(3))
def test_adversarial_tokens_bit_for_bit(seed):
    rng = random.Random(seed)
    toks = _adversarial(rng)
    seps = [" ", "  ", "\t", " \r\n", "\n", "\x0b", "\x0c", "\x1c", "\x1f", " ! comment\n", "\n! c\n  ", "\n!\n"]
    text = "".join(t + rng.choice(seps) for t in toks)
    _check(text.encode(), old=False)
    _check(" ".join(toks).encode())


def test_adversarial_tokens_without_the_80_bit_path(monkeypatch):
    monkeypatch.setattr(_tsnumbers, "_X87", False)
    toks = _adversarial(random.Random(5))
    _check(" ".join(toks).encode())


@pytest.mark.parametrize("bad", ["1_0", "nan", "inf", "-Infinity", "1d3", "0x10", "1.2.3", "1e5.0", "--1", "e5", ".",
                                 "1e", "1e+", "+", "-", "1-2", "1+", "+-1", "1e5e5", "1..", "١٢", "1\x012", "1\x7f",
                                 "1\xa02", "é", "1#2", "1[2"])
def test_tokens_that_are_not_numbers(bad):
    for text in (bad, f"1.0 2.0 {bad} 3.0", f"1 2 ! x\n{bad}\n", f"# hz\n{bad} 1\n"):
        _check(text.encode("utf-8"))


def test_lines_special_lines_and_comments():
    cases = [b"", b"\n", b"  \n\n", b"!", b"!\n", b"  !  \r\n", b"! x\n", b"#\n", b" [End]\n", b"1 2\n!\n3 4",
             b"1 2 ! 3\n4", b"1 2!3\n4 ! 5 6\n", b"\t# Hz S RI R 50\n1 2 3", b"1\n\n2\r\n3 4 5\n  6",
             b"1 # 2\n", b"1 [2\n", b"!a\n!\n! b \n#x\n[y]\n", b"1" * 300 + b" 2", b"-" * 40, b"\r\r\r1\r2"]
    for raw in cases:
        _check(raw)


def test_arrays_grow_past_their_first_size():
    # many tokens a byte each, many slow tokens, many special lines: every array grows
    _check(b"1\n" * 5000 + b"1e-30 " * 3000 + b"\n" + b"!\n! x\n" * 2000 + b"0 " * 40000)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())
    if isinstance(a, rf.Frequency):
        return isinstance(b, rf.Frequency) and vars(a).keys() == vars(b).keys() and all(
            _same(vars(a)[k], vars(b)[k]) for k in vars(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


@pytest.mark.skipif(not _REAL, reason="../shared/channels not present")
@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.name)
def test_shared_networks_equal_scikit_rf(path):
    text = path.read_text(encoding="utf-8")
    buf = io.StringIO(text)
    buf.name = path.name
    ref = rf.Network(buf)
    got, fast = _tsread.read_text(text, path.name)
    assert fast  # read by the compiled scanner, not handed back to scikit-rf
    assert vars(got).keys() == vars(ref).keys()
    for k in vars(ref):
        assert _same(vars(got)[k], vars(ref)[k]), k


# ------------------------------------------------------------------- checks made cheaper
def _old_port_check(text: str, ports: int):
    """The regex check_port_names ran before (main 862076c): the first bad port number, or None."""
    for m in re.finditer(r"^[^\S\n]*! Port\[([0-9]+)\]", text, re.M):
        digits = m.group(1)
        if len(digits) > 6 or not 1 <= int(digits) <= ports:
            return text.count("\n", 0, m.start()) + 1, digits
    return None


@pytest.mark.parametrize("seed", range(4))
def test_port_name_check_as_the_regex(seed):
    rng = random.Random(seed)
    pieces = ["! Port[", "Port[", "! ", "!", " ", "\t", "\u2003", "\n", "\r\n", "x", "1", "2", "3", "4", "0", "9",
              "]", "[", "= TX1_P", "0.5 1.5", "!! Port[1]", "0000001", "12345678"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        want = _old_port_check(text, 4)
        if want is None:
            _tsheader.check_port_names(text, "f.s4p", 4)
        else:
            with pytest.raises(ChannelError, match=rf"line {want[0]}: '! Port\[{want[1]}\]'"):
                _tsheader.check_port_names(text, "f.s4p", 4)


def test_line_length_check_as_before(tmp_path):
    limit = _tsfile.MAX_LINE_CHARS
    for lengths in ([limit], [limit + 1], [limit // 2] * 5, [3, limit + 1, 2], [limit - 1, limit, 1],
                    [limit // 2 - 1, 2 * limit], [10] * 1000 + [limit + 7], [limit * 3]):
        raw = b"\n".join(b"1" * k for k in lengths)
        too_long = max(lengths) > limit
        if too_long:
            k = max(range(len(lengths)), key=lambda i: (lengths[i], -i))
            with pytest.raises(ChannelError, match=rf"line {k + 1} holds {lengths[k]:,} characters"):
                _tsfile.check_line_length(raw, tmp_path / "f.s4p")
        else:
            _tsfile.check_line_length(raw, tmp_path / "f.s4p")
