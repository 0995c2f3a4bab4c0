"""The Touchstone scanner's runs of spaces (channels._tsscan, issue 35, third pass).

The scan kernel skips a run of spaces between tokens in a tight loop of its own; every other
blank (tab, VT, FF, CR, ``\\x1c``-``\\x1f``) goes the general way. These tests hold the
tokens, first-on-line flags, values and special lines it returns to a plain-Python
reference (``bytes.split`` on the blanks, ``float`` per token) on text made of runs of
mixed blanks: spaces next to the other blanks, before ``!`` comments, before LF, at the end
of the buffer without LF, and on lines of right-aligned columns like the shared files'.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from channels import _tsscan

from test_touchstone_speed_paths import _BLANK, _reference  # the scan by plain Python (bytes.split, float)


def _check(raw: bytes) -> None:
    ref, ref_first, ref_spec = _reference(raw)
    v, first, slow, spec = _tsscan.scan_bytes(raw, 0)
    v = v.copy()
    got = v if _tsscan.finish_slow(v, raw, 0, slow) else None
    assert np.array_equal(spec, ref_spec)
    assert (got is None) == (ref is None)
    if ref is not None:
        assert got.tobytes() == ref.tobytes()
        assert np.array_equal(first, ref_first)


_TOKENS = ["0", "180", "-160.388538", "0.0574742849", "10000000", "1.5e-3", "-0", "+.5E+2", "9007199254740993",
           "1e400", "x", "1.2.3", "nan"]


def _blanks(rng: random.Random) -> bytes:
    """A run of blanks: mostly spaces, sometimes one of the others inside or at an end."""
    run = b" " * rng.randint(1, 25)
    if rng.random() < 0.4:
        k = rng.randint(0, len(run))
        run = run[:k] + bytes([rng.choice(_BLANK)]) + run[k:]
    return run


@pytest.mark.parametrize("seed", range(6))
def test_runs_of_blanks_as_the_reference(seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(400):
        shape = rng.random()
        if shape < 0.1:
            lines.append(_blanks(rng) + rng.choice([b"!", b"! note", b"#", b"[x]"]) + _blanks(rng))
            continue
        toks = [rng.choice(_TOKENS[:10] if rng.random() < 0.9 else _TOKENS).encode()
                for _ in range(rng.randint(0, 9))]
        line = b"".join((_blanks(rng) if rng.random() < 0.8 else b"") + t.rjust(rng.choice([0, 12, 21])) + b" "
                        for t in toks)
        if rng.random() < 0.2:
            line += _blanks(rng) + b"! comment  with  spaces"
        if rng.random() < 0.3:
            line += _blanks(rng)
        lines.append(line)
    raw = b"\n".join(lines)
    _check(raw)
    _check(raw + b"\n")
    _check(raw + b"   ")  # spaces to the buffer's end, no LF


@pytest.mark.parametrize("raw", [b"", b" ", b"   ", b" \n ", b"1 ", b" 1", b"1   2", b"1 \t 2", b"1  \x1c  2",
                                 b"1   !  2", b"  !  \n 3", b"1  \r\n  2  ", b"     \n\n   -0.5e1      "])
def test_small_cases(raw):
    _check(raw)


def test_a_line_of_right_aligned_columns():
    vals = ["10000000", "0.0694620022", "14.5548236", "0.937432048", "-18.6365227", "0.00292504407", "-160.388538"]
    raw = ("".join(s.rjust(21) for s in vals) + "\n").encode() * 50
    v, first, slow, spec = _tsscan.scan_bytes(raw, 0)
    assert slow.shape[0] == 0 and spec.shape[0] == 0
    assert v.tobytes() == np.array([float(s) for s in vals] * 50).tobytes()
    assert first.tolist() == ([1] + [0] * 6) * 50
    _check(raw)
