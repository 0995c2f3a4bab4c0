"""The second pass on Touchstone reading speed (issue 35): the steps that build the network.

:func:`channels._tsfile.from_raw` is scikit-rf's ``mag * np.exp(1j * b * np.pi / 180)``
(``mag = 10 ** (a / 20.0)`` for DB) written as scikit-rf writes it. Doing its steps in place
(fewer temporaries) was tried and refused: numpy already elides the temporaries of that
expression for arrays of 256 KiB or more, and which loop runs (in place, which operand
first) decides the sign of a product that underflows to zero, so only the literal expression
gives scikit-rf's bits at every size. These tests hold it to the expression on random,
short and special values and on every shared file. The fast reader's ``load_file`` (a copy of scikit-rf's with
fewer copies) is held to scikit-rf's parser by tests/test_tsread.py; here on every shared
file through ``read_network`` against ``rf.Network``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import skrf as rf

from channels import _tscache, _tsfile
from channels.touchstone import read_network, set_cache_size

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
_REAL = sorted(SHARED.glob("*/*.s*p")) if SHARED.is_dir() else []


def _formula(a: np.ndarray, b: np.ndarray, fmt: str) -> np.ndarray:
    """scikit-rf 2.2's Touchstone.load_file, as written there."""
    if fmt == "ri":
        return a + 1j * b
    mag = 10 ** (a / 20.0) if fmt == "db" else a
    return mag * np.exp(1j * b * np.pi / 180)


def _same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(
        np.ascontiguousarray(x).view(np.uint64), np.ascontiguousarray(y).view(np.uint64))


_SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 90.0, -90.0, 180.0, -180.0, 360.0, 720.0, 1e-320, -1e-320, 5e-324,
                     1e300, -1e300, 1.7976931348623157e308, np.inf, -np.inf, np.nan, -np.nan, 1e-8, 45.0,
                     0.1, 3.0e5, -7.5e7, 2.0 ** 52, 1e22, 400.0, -999.0])


@pytest.mark.parametrize("fmt", ["ma", "db", "ri"])
def test_from_raw_special_values(fmt):
    a, b = np.meshgrid(_SPECIAL, _SPECIAL)
    with np.errstate(all="ignore"):
        want = _formula(a, b, fmt)
        got = _tsfile.from_raw(a, b, fmt)
    assert _same_bits(got, want)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["ma", "db", "ri"])
def test_from_raw_random_values(seed, fmt):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 3000)), 4, 4)
    a = rng.uniform(-120, 2, shape) if fmt == "db" else rng.uniform(0, 1.5, shape) * 10.0 ** rng.integers(-8, 3, shape)
    b = rng.uniform(-180, 180, shape) * 10.0 ** rng.integers(-3, 4, shape)
    b[rng.random(shape) < 0.05] = rng.choice(_SPECIAL, 1)
    a.setflags(write=False)  # as read_network hands them (read-only pairs)
    b.setflags(write=False)
    with np.errstate(all="ignore"):
        got = _tsfile.from_raw(a, b, fmt)
        want = _formula(a, b, fmt)
    assert _same_bits(got, want)


@pytest.mark.skipif(not _REAL, reason="../shared/channels not present")
@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.name)
def test_shared_files_read_as_scikit_rf_reads_them(path):
    before = _tscache.NETWORKS.max_size
    set_cache_size(0)
    try:
        got = read_network(path)
    finally:
        set_cache_size(before)
    ref = rf.Network(str(path))
    assert _same_bits(got.s, ref.s)
    assert _same_bits(got.f, ref.f)
    assert _same_bits(np.asarray(got.z0, complex), np.asarray(ref.z0, complex))
    for attr in ("comments", "comments_after_option_line", "variables", "port_names", "s_def", "port_modes"):
        assert getattr(got, attr) == getattr(ref, attr) if not isinstance(getattr(ref, attr), np.ndarray) else \
            np.array_equal(getattr(got, attr), getattr(ref, attr)), attr
    assert got.frequency.unit == ref.frequency.unit


@pytest.mark.parametrize("fmt", ["ma", "db"])
def test_from_raw_short_arrays_and_underflow(fmt):
    """Short arrays (numpy's loops take other paths for a few elements) and products that
    underflow to a signed zero (the in-place variant failed here)."""
    rng = np.random.default_rng(35)
    for _ in range(600):
        n = int(rng.integers(1, 80))
        a = rng.uniform(-400, 3, n) if fmt == "db" else rng.uniform(0, 1.5, n) * 10.0 ** rng.integers(-300, 3, n)
        b = rng.uniform(-180, 180, n) * 10.0 ** rng.integers(-330, 5, n)
        m = rng.random(n) < 0.2
        b[m] = rng.choice(_SPECIAL, int(m.sum()))
        m = rng.random(n) < 0.1
        a[m] = rng.choice(_SPECIAL, int(m.sum()))
        off = int(rng.integers(0, 3))  # unaligned starts too
        buf = np.empty(n + off)
        buf[off:] = a
        with np.errstate(all="ignore"):
            assert _same_bits(_tsfile.from_raw(buf[off:], b, fmt), _formula(buf[off:], b, fmt))


_COMMENTS = ["!", "!!", "! x ! y", "!\tfreq\tGHz", "!!!! banner !!!!", "! a = 1 b", "!\r", "! mid\rline",
             "! \u00e9t\u00e9", "!\u00a0nbsp\u2003", "! port 1 = in"]


@pytest.mark.parametrize("seed", range(8))
def test_comments_after_the_option_line_as_scikit_rf_joins_them(seed):
    """The fast reader joins ``comments_after_option_line`` in one pass; scikit-rf joins
    ``line.strip()[1:]`` line by line: the same text for comments in the header after the
    option line and among the data, bare ``!`` lines, ``!`` inside comments, blanks of every
    kind and CRs."""
    import random

    from test_tsread import compare

    rng = random.Random(seed)
    lines = ["! head comment", "# GHz S MA R 50"]
    lines += [rng.choice(_COMMENTS) for _ in range(rng.randint(0, 3))]
    for k in range(rng.randint(1, 30)):
        if rng.random() < 0.6:
            lines.append("  " * rng.randint(0, 2) + rng.choice(_COMMENTS) + " " * rng.randint(0, 2))
        vals = " ".join(f"{rng.uniform(0, 1):.6f} {rng.uniform(-180, 180):.3f}" for _ in range(4))
        lines.append(f"{k + 1} {vals}" + (" ! tail" if rng.random() < 0.2 else ""))
    text = "\n".join(lines) + "\n"
    got = compare(text, "x.s2p", fast=None)
    assert got is not None


def _v1(nports: int, opt: str | None, pts: int = 5, before: str = "", between: str = "") -> str:
    rng = np.random.default_rng(nports + pts)
    lines = ["! made for the test", before] if before else ["! made for the test"]
    if opt is not None:
        lines.append(opt)
    lines.append(between) if between else None
    for k in range(pts):
        vals = rng.uniform(0, 1, (nports * nports, 2))
        vals[:, 1] *= 360
        lines.append(f"{(k + 1) * 1.5} " + " ".join(f"{a:.9f} {b:.5f}" for a, b in vals))
    return "\n".join(lines) + "\n"


_V2_REF = ("[Version] 2.0\n# MHz S DB R 50\n[Number of Ports] 3\n[Two-Port Data Order] 12_21\n"
           "[Number of Frequencies] 3\n[Reference] 50\n! a comment between\n 75\n\n 60.5\n[Matrix Format] Full\n"
           "[Network Data]\n" + "".join(f"{k + 1} " + " ".join(f"-{k + 2 + i}.5 {10 * i}" for i in range(9)) + "\n"
                                      for k in range(3)) + "[End]\n")

_CASES = {
    "plain.s2p": _v1(2, "# GHz S MA R 50"),
    "fields_reordered.s4p": _v1(4, "# MA s  HZ r 75"),
    "no_option_line.s2p": _v1(2, None),
    "option_after_comments.s3p": _v1(3, "#   kHz S RI R 50  ", before="! another\n!\n"),
    "comments_after_option.s1p": _v1(1, "# GHz S DB R 50", between="! after\n\n! and more"),
    "crlf.s2p": _v1(2, "# GHz S MA R 50").replace("\n", "\r\n"),
    "bom.s2p": "\ufeff" + _v1(2, "# GHz S MA R 50"),
    "non_ascii_comment.s2p": _v1(2, "# GHz S MA R 50", before="! \u00e9t\u00e9 25 \u00b0C"),
    "latin1.s2p": _v1(2, "# GHz S MA R 50", before="! \u00e9t\u00e9 25 \u00b0C"),
    "two_option_lines.s2p": _v1(2, "# GHz S MA R 50", between="# MHz S RI R 50"),
    "reference_over_lines.ts": _V2_REF,
    "no_option_line_v2.ts": _V2_REF.replace("# MHz S DB R 50\n", ""),
    "utf16.s2p": _v1(2, "# GHz S MA R 50"),
    "long_header.s2p": _v1(2, "# GHz S MA R 50", between="\n".join(f"! header line {k}" for k in range(400))),
    "ports_among_data.s2p": "\n".join(("+" + ln if ln[:1].isdigit() else ln) + ("\n! Port[1] = in\n! Port[2] = out"
                                                                                if ln.startswith("3") else "")
                                       for ln in _v1(2, "# GHz S MA R 50").splitlines()) + "\n",
}


@pytest.mark.parametrize("head", [0, 5, 60, 1 << 16])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_bytes_scanned_in_place_of_the_text(name, head, tmp_path, monkeypatch):
    """``read_network`` hands the fast reader the file's bytes where they are the text it
    parses (:func:`channels.touchstone._same_bytes`), and then only the start of that text
    (``head`` characters after the option line): the network (or error) is the same as with
    the whole text encoded again, and the bytes are used where the file is ASCII (a header
    or port-name search that runs past the start reads the whole text)."""
    from channels import _tsread, touchstone

    monkeypatch.setattr(touchstone, "PARSE_HEAD", head)
    text = _CASES[name]
    path = tmp_path / name
    enc = "latin-1" if name.startswith("latin1") else "utf-16" if name.startswith("utf16") else "utf-8"
    path.write_bytes(text.encode(enc))
    before = _tscache.NETWORKS.max_size
    set_cache_size(0)
    used, real = [], _tsread._FastTouchstone._read_data

    def spy(self, text, start, state, tail=None, complete=True):
        used.append(tail is not None and start >= tail[2])
        return real(self, text, start, state, tail, complete)

    def run():
        try:
            return read_network(path), None
        except Exception as exc:  # noqa: BLE001 -- the same error both ways
            return None, f"{type(exc).__name__}: {exc}"

    try:
        monkeypatch.setattr(_tsread._FastTouchstone, "_read_data", spy)
        got, got_err = run()
        monkeypatch.setattr(touchstone, "_same_bytes", lambda *a: None)
        monkeypatch.setattr(touchstone, "PARSE_HEAD", 1 << 30)
        ref, ref_err = run()
    finally:
        set_cache_size(before)
    assert got_err == ref_err
    if ref is None:
        return
    for k in vars(ref):
        g, r = vars(got)[k], vars(ref)[k]
        if isinstance(r, np.ndarray):
            assert _same_bits(g, r) if r.dtype.kind in "fc" else np.array_equal(g, r), k
        elif k == "_frequency":
            assert _same_bits(g.f, r.f) and g.unit == r.unit
        elif k not in ("_noise", "_noise_freq"):
            assert g == r or (g != g and r != r), k  # (NaN fill values)
    ascii_bytes = enc == "utf-8" and text.isascii() and not text.startswith("\ufeff")
    assert used[:1] == [ascii_bytes]


@pytest.mark.parametrize("size,stat_size,limit", [(0, 0, 64), (5000, 5000, 8192), (5000, 100, 8192),
                                                  (5000, 0, 4999), (5000, 4999, 5000), (9000, 100, 8192),
                                                  (9000, 9000, 8192), (8193, 8192, 8192), (4096, 4096, 8192)])
def test_read_bytes_reads_what_one_bounded_read_reads(size, stat_size, limit, tmp_path, monkeypatch):
    """``read_bytes`` reads ``st_size + 1`` bytes, then on (bounded) when the file grew since
    ``stat``: the bytes, or the refusal, are those of ``read(MAX_FILE_BYTES + 1)``."""
    import os

    from channels import ChannelError

    path = tmp_path / "x.s2p"
    path.write_bytes(bytes(np.random.default_rng(size).integers(32, 127, size, dtype=np.uint8)))
    monkeypatch.setattr(_tsfile, "MAX_FILE_BYTES", limit)
    st = os.stat_result((*os.stat(path)[:6], stat_size, *os.stat(path)[7:]))  # a stale size: the file grew
    with open(path, "rb") as fh:
        want = fh.read(limit + 1)
    if stat_size > limit or len(want) > limit:
        with pytest.raises(ChannelError, match="larger than"):
            _tsfile.read_bytes(path, st)
    else:
        assert _tsfile.read_bytes(path, st) == want
