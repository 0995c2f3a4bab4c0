"""The fast Touchstone reader (channels._tsread, channels._tsnumbers) against scikit-rf's parser.

Every case builds a file's text, reads it with scikit-rf (``rf.Network(io.StringIO(text))``)
and with :func:`channels._tsread.read_text`, and requires every attribute of the two
networks to be equal bit for bit (arrays compared byte for byte), the same exception when
scikit-rf refuses the text, and the fast path to have been taken where it should be.
"""

from __future__ import annotations

import io
import itertools
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
import skrf as rf

from channels import _tsnumbers, _tsread
from channels._tsnumbers import STRUCTURE_TABLE, parse_numbers

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "channels"


# ------------------------------------------------------------------------------ helpers
def _same_value(x, y) -> bool:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
            return False
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.kind in "fc":
            return np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()
        return bool(np.array_equal(x, y))
    if isinstance(x, rf.Frequency):
        return isinstance(y, rf.Frequency) and vars(x).keys() == vars(y).keys() and all(
            _same_value(vars(x)[k], vars(y)[k]) for k in vars(x))
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same_value(x[k], y[k]) for k in x)
    return type(x) is type(y) and x == y


def assert_same_network(got: rf.Network, ref: rf.Network, undefined_s12: bool = False) -> None:
    assert type(got) is rf.Network
    assert vars(got).keys() == vars(ref).keys()
    for k in vars(ref):
        if k == "_s" and undefined_s12:  # scikit-rf leaves S12 = S21 uninitialised: compare the rest
            assert _same_value(got.s[:, [0, 1], [0, 1]], ref.s[:, [0, 1], [0, 1]])
            continue
        assert _same_value(vars(got)[k], vars(ref)[k]), k
    assert np.array_equal(got.f, ref.f) and np.array_equal(got.z0, ref.z0)
    assert undefined_s12 or np.array_equal(got.s, ref.s)


def compare(text: str, name: str, fast: bool | None = True, undefined_s12: bool = False):
    """Read ``text`` both ways; require the same network (or the same error) and, when
    ``fast`` is a bool, that the fast path was (not) taken."""
    buf = io.StringIO(text)
    buf.name = name
    with warnings.catch_warnings(record=True) as w_ref:
        warnings.simplefilter("always")
        try:
            ref, err = rf.Network(buf), None
        except Exception as exc:  # noqa: BLE001 -- whatever scikit-rf raises, we must too
            ref, err = None, exc
    with warnings.catch_warnings(record=True) as w_got:
        warnings.simplefilter("always")
        if err is not None:
            with pytest.raises(type(err)) as info:
                _tsread.read_text(text, name)
            assert str(info.value) == str(err)
            return None
        got, was_fast = _tsread.read_text(text, name)
    assert_same_network(got, ref, undefined_s12)
    assert [str(w.message) for w in w_got] == [str(w.message) for w in w_ref]
    if fast is not None:
        assert was_fast is fast
    return got


def _values(rng: np.random.Generator, shape, fmt: str) -> np.ndarray:
    """Pairs of a format: RI in -1..1, MA magnitudes 0..1.2, DB -80..1; angles in degrees."""
    a = rng.uniform(-1, 1, shape) if fmt == "ri" else (
        rng.uniform(0, 1.2, shape) if fmt == "ma" else rng.uniform(-80, 1, shape))
    b = rng.uniform(-1, 1, shape) if fmt == "ri" else rng.uniform(-180, 180, shape)
    return np.stack([a, b], axis=-1)


_NUMBER_STYLES = (repr, lambda v: f"{v:.9g}", lambda v: f"{v:15.8e}", lambda v: f"{v:.6f}", lambda v: f"{v:+.17g}")


def touchstone_text(
    nports: int = 2, npts: int = 7, *, fmt: str = "ri", unit: str = "GHz", param: str = "S", ref: str = "50",
    version: int = 1, matrix: str = "Full", order: str | None = None, reference: list | None = None,
    layout: str = "standard", per_line: int = 4, style: int = 0, comments: bool = False, seed: int = 0,
    newline: str = "\n", header: str = "", n_freq_keyword: bool = True, port_names: bool = False,
) -> str:
    """A Touchstone text: ``layout`` 'standard' (Touchstone 1: one line per point up to two
    ports, else four pairs per line, each row on its own lines), 'one' (a point per line),
    'fixed' (``per_line`` numbers per line, each point on new lines) or 'flow' (numbers run on
    across points, ``per_line`` a line: points start inside lines)."""
    rng = np.random.default_rng(seed)
    num = _NUMBER_STYLES[style]
    f = np.round(np.linspace(0.01, 50, npts), 6) * {"Hz": 1e9, "kHz": 1e6, "MHz": 1e3, "GHz": 1.0}[unit]
    if matrix == "Full":
        cells = [(i, j) for i in range(nports) for j in range(nports)]
    elif matrix == "Lower":
        cells = [(i, j) for i in range(nports) for j in range(i + 1)]
    else:
        cells = [(i, j) for i in range(nports) for j in range(i, nports)]
    vals = _values(rng, (npts, len(cells)), fmt.lower())
    lines = [f"! synthetic {nports}-port, {fmt} {unit} {param}"]
    if port_names:
        lines += [f"! Port[{k + 1}] = P{k + 1}_{'PN'[k % 2]}" for k in range(nports)]
    lines += ["! length = 12 mm", "! temp = 25 C"] if comments else []
    lines += header.splitlines()
    if version == 2:
        lines += ["[Version] 2.0", f"# {unit} {param} {fmt} R {ref}", f"[Number of Ports] {nports}"]
        if nports == 2 and order:
            lines.append(f"[Two-Port Data Order] {order}")
        if n_freq_keyword:
            lines.append(f"[Number of Frequencies] {npts}")
        if reference is not None:
            lines.append("[Reference] " + " ".join(str(r) for r in reference))
        lines += [f"[Matrix Format] {matrix}", "[Network Data]"]
    else:
        lines.append(f"# {unit} {param} {fmt} R {ref}")
    flow: list[str] = []
    for k in range(npts):
        numbers = [num(float(f[k]))] + [num(float(x)) for x in vals[k].ravel()]
        if layout == "one":
            rows = [numbers]
        elif layout == "standard":
            if nports <= 2:
                rows = [numbers]
            else:
                rows, per_row = [], 2 * nports
                for r in range(nports):
                    row = numbers[1 + r * per_row: 1 + (r + 1) * per_row]
                    rows += [row[i:i + 8] for i in range(0, len(row), 8)]
                rows[0] = [numbers[0]] + rows[0]
        elif layout == "fixed":
            rows = [numbers[i:i + per_line] for i in range(0, len(numbers), per_line)]
        else:
            flow += numbers
            continue
        for i, row in enumerate(rows):
            tail = f"  ! point {k} row {i}" if comments and i == 0 else ""
            lines.append("  ".join(row) + tail)
        if comments and k % 3 == 1:
            lines.append("! between points")
    if layout == "flow":
        lines += ["  ".join(flow[i:i + per_line]) for i in range(0, len(flow), per_line)]
    if version == 2:
        lines.append("[End]")
    return newline.join(lines) + newline


# ------------------------------------------------------------------------------ numbers
def _float_bits(tokens: list[str]):
    """What parse_numbers must return: float's values, or None when a token is neither a
    Touchstone number nor a NaN or infinity (float also reads "1_0" and non-ASCII digits)."""
    if not all(_tsnumbers.is_number(t) or _tsnumbers.is_nonfinite(t) for t in tokens):
        return None
    return np.array([float(t) for t in tokens])


def _check_numbers(text: str) -> None:
    ref = _float_bits(text.split())
    res = parse_numbers(np.frombuffer(text.encode().translate(STRUCTURE_TABLE), np.uint8))
    if ref is None or not text.isascii():  # non-ASCII: refused, so that the caller falls back
        assert res is None
    else:
        assert res is not None and res[0].tobytes() == ref.tobytes()


def test_numbers_every_short_token_as_float_reads_it():
    for n in range(1, 6):
        for t in itertools.product("01.e+-E9", repeat=n):
            _check_numbers("".join(t))


@pytest.mark.parametrize("seed", range(4))
def test_numbers_random_decimals_bit_for_bit(seed):
    rng = random.Random(seed)
    toks = []
    for _ in range(20000):
        nd = rng.randint(1, 21)
        digits = "".join(rng.choice("0123456789") for _ in range(nd))
        pt = rng.randint(0, nd)
        s = digits[:pt] + "." + digits[pt:] if rng.random() < 0.9 else digits
        if rng.random() < 0.5:
            s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
        toks.append(rng.choice(["", "-", "+"]) + s)
    toks = [t for t in toks if any(c.isdigit() for c in t.split("e")[0].split("E")[0])]
    _check_numbers(" ".join(toks))


def test_numbers_without_the_80_bit_path(monkeypatch):
    # where numpy's longdouble is not the x87 format, 16-19 digit numbers go to float
    monkeypatch.setattr(_tsnumbers, "_X87", False)
    test_numbers_random_decimals_bit_for_bit(0)
    test_numbers_halfway_between_doubles()


def test_numbers_halfway_between_doubles():
    # exact halfway points (ties to even), and their neighbours, among 16 to 19 digit numbers:
    # the 80-bit path must leave the halfway ones to float
    rng = random.Random(7)
    toks = []
    for _ in range(3000):
        d = float(rng.randrange(2**53, 2**63))
        ulp = int(np.spacing(d))
        for k in (ulp // 2 - 1, ulp // 2, ulp // 2 + 1):
            m = int(d) + k
            e = rng.randint(0, 3)
            toks.append(f"{m}e-{e}" if e else str(m))
            toks.append(str(m)[:-e] + "." + str(m)[-e:] + f"e{e}" if e else f"{m}.0")
    _check_numbers(" ".join(toks))


def test_numbers_edge_tokens():
    edge = ["0", "-0", "+0.0", "-0.0e5", "1.", ".5", "+.5", "-.5e-3", "5e22", "9007199254740993",
            "9007199254740992", "9007199254740991", "1234567890123456789", "12345678901234567890", "1e-22",
            "1e22", "1e23", "4.9e-324", "1e-400", "1e400", "0.005138783100000001", "0.09127562810000001",
            "00000000000000000000001.5", "1e0000", "1e00001", "68.81419220000001"]
    _check_numbers(" ".join(edge))
    for bad in ["1_0", "nan", "inf", "-Infinity", "1d3", "0x10", "1.2.3", "1e5.0", "--1", "e5", ".", "1e", "1e+",
                "+", "1-2", "١٢"]:
        _check_numbers(bad)
        _check_numbers("1.0 2.0 " + bad + " 3.0")
    _check_numbers("1\x0b2\x0c3\x1c4\x1d5\x1e6\x1f7\t8\r9\n10")
    _check_numbers("1\x012")  # a control byte is not a separator: float refuses the token
    assert parse_numbers(np.frombuffer(b"", np.uint8))[0].size == 0
    assert parse_numbers(np.frombuffer(b"  \n ", np.uint8))[0].size == 0


# ------------------------------------------------------------------------------ synthetic files
@pytest.mark.parametrize("nports", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("fmt", ["MA", "DB", "RI"])
def test_ports_and_formats(nports, fmt):
    compare(touchstone_text(nports, fmt=fmt, seed=nports), f"x.s{nports}p")


@pytest.mark.parametrize("unit", ["Hz", "kHz", "MHz", "GHz"])
@pytest.mark.parametrize("param", ["S", "Y", "Z"])
def test_units_and_parameters(unit, param):
    for nports in (1, 2, 4):
        compare(touchstone_text(nports, unit=unit, param=param, ref="75", fmt="MA"), f"x.s{nports}p")


@pytest.mark.parametrize("ref", ["50", "75", "100.5", "1e2", "50 60"])
def test_reference_resistance(ref):
    compare(touchstone_text(2, ref=ref), "x.s2p")


@pytest.mark.parametrize("style", range(len(_NUMBER_STYLES)))
def test_number_styles(style):
    compare(touchstone_text(4, fmt="DB", style=style, seed=style), "x.s4p")


@pytest.mark.parametrize("layout,per_line", [("one", 0), ("standard", 0), ("fixed", 1), ("fixed", 2), ("fixed", 3),
                                             ("fixed", 5), ("fixed", 7), ("fixed", 100)])
def test_values_split_over_lines(layout, per_line):
    for nports in (1, 2, 3, 4):
        # a line of 1 number is a lone frequency: scikit-rf then takes the next line's first
        # number as a frequency too, so the fast path leaves that layout to it
        fast = not (layout == "fixed" and per_line == 1)
        compare(touchstone_text(nports, layout=layout, per_line=per_line), f"x.s{nports}p", fast=fast)


@pytest.mark.parametrize("per_line", [2, 3, 4, 7, 9, 10, 11])
def test_points_running_on_across_lines(per_line):
    # points that start inside a line: scikit-rf reads them its own way (or refuses them)
    for nports in (1, 2, 4):
        text = touchstone_text(nports, layout="flow", per_line=per_line)
        per_point = 1 + 2 * nports * nports
        aligned = per_line % per_point == 0
        compare(text, f"x.s{nports}p", fast=True if aligned else None)


def test_comments_variables_and_port_names():
    for nports in (2, 4, 8):
        got = compare(touchstone_text(nports, comments=True, port_names=True), f"x.s{nports}p")
        assert got.port_names == [f"P{k + 1}_{'PN'[k % 2]}" for k in range(nports)]
        assert got.variables
        assert "between points" in got.comments_after_option_line


def test_line_endings_tabs_and_blank_lines():
    base = touchstone_text(4, comments=True)
    compare(base.replace("\n", "\r\n"), "x.s4p")
    compare(base.replace("  ", "\t"), "x.s4p")
    compare(base.replace("\n", "\n\n  \n"), "x.s4p")
    compare("   " + base.replace("\n", "\n   "), "x.s4p")
    compare(base.replace("\n", "\n\x0c"), "x.s4p")


@pytest.mark.parametrize("matrix", ["Full", "Upper", "Lower"])
@pytest.mark.parametrize("nports", [1, 2, 3, 4])
def test_touchstone2_matrix_format(matrix, nports):
    # a two-port upper or lower matrix in the (default) 21_12 order: scikit-rf 2.2 takes S12 = S21
    # from np.empty's leftovers, so the fast reader leaves it to scikit-rf
    broken = nports == 2 and matrix != "Full"
    for kw, name in ((dict(fmt="MA"), "x.ts"), (dict(layout="one", seed=5), f"x.s{nports}p")):
        compare(touchstone_text(nports, version=2, matrix=matrix, **kw), name, fast=not broken, undefined_s12=broken)


@pytest.mark.parametrize("order", ["12_21", "21_12"])
def test_touchstone2_two_port_order(order):
    compare(touchstone_text(2, version=2, order=order), "x.ts")
    for matrix in ("Lower", "Upper"):
        broken = order == "21_12"
        compare(touchstone_text(2, version=2, order=order, matrix=matrix), "x.ts", fast=not broken,
                undefined_s12=broken)


def test_touchstone2_reference_per_port_and_keywords():
    compare(touchstone_text(4, version=2, reference=[50, 60, 70, 80], param="Z"), "x.ts")
    compare(touchstone_text(2, version=2, reference=[25, 75]), "x.ts")
    text = touchstone_text(4, version=2, reference=[50, 60, 70, 80])
    compare(text.replace("[Reference] 50 60 70 80", "[Reference] 50 60\n70\n! a comment\n80"), "x.ts")
    compare(touchstone_text(4, version=2, n_freq_keyword=False), "x.ts")
    compare(text.replace("[Network Data]", "[Mixed-Mode Order] D2,1 D4,3 C2,1 C4,3\n[Network Data]"), "x.ts")
    compare(text.replace("[Version]", "[version]").replace("[Network Data]", "[NETWORK DATA]"), "x.ts")
    compare(text.replace("[Version] 2.0", "[Version] 2.1"), "x.ts")


def test_option_line_variants():
    text = touchstone_text(2, fmt="MA")
    compare(text.replace("# GHz S MA R 50", "# ghz s ma r 50"), "x.s2p")
    compare(text.replace("# GHz S MA R 50", "#"), "x.s2p")
    compare(text.replace("# GHz S MA R 50", "# MHz"), "x.s2p")
    compare(text.replace("# GHz S MA R 50", "# GHz S MA R 50 ! with a comment"), "x.s2p")
    compare(text.replace("# GHz S MA R 50\n", ""), "x.s2p")  # no option line: scikit-rf's defaults
    compare(text + "# Hz S RI R 75\n", "x.s2p")  # a later option line is ignored
    lines = text.splitlines(keepends=True)
    compare("".join(lines[:-3] + ["# MHz S RI R 50\n"] + lines[-3:]), "x.s2p")


def test_files_the_fast_path_leaves_to_scikit_rf():
    two = touchstone_text(2, fmt="MA")
    noise = "! noise\n1.0 0.5 0.3 45 0.2\n2.0 0.6 0.3 50 0.2\n"
    compare(two + noise, "x.s2p", fast=False)  # Touchstone 1 noise block
    v2 = touchstone_text(2, version=2).replace("[End]\n", "")
    compare(v2 + "[Number of Noise Frequencies] 2\n[Noise Data]\n" + noise.split("\n", 1)[1] + "[End]\n", "x.ts",
            fast=False)
    hfss = two.replace("# GHz S MA R 50\n", "# GHz S MA R 50\n! Gamma ! 1 2 3 4\n! Port Impedance 50 0 50 0\n")
    compare(hfss, "x.s2p", fast=False)
    compare(touchstone_text(2).replace("[End]", ""), "x.txt", fast=None)  # an extension scikit-rf refuses
    compare(two.replace("0.0", "\u00a00.0", 3), "x.s2p", fast=False)  # non-ASCII space between numbers


def test_malformed_text_raises_what_scikit_rf_raises():
    two = touchstone_text(2)
    lines = two.splitlines(keepends=True)
    compare(two.replace("0.0", "0.0x", 1), "x.s2p", fast=None)
    compare(two + "1.0 2.0 3.0\n", "x.s2p", fast=None)  # a truncated last point
    compare("".join(lines[:-1]), "x.s2p", fast=None)
    compare(two.replace("# GHz", "# THz"), "x.s2p", fast=None)
    compare(two + "[End]\n", "x.s2p", fast=None)  # a Touchstone 2 keyword in a Touchstone 1 file
    compare(touchstone_text(2, version=2) + "[Noise Data]\n", "x.ts", fast=None)
    compare("! nothing but comments\n", "x.s2p", fast=None)
    compare("", "x.s2p", fast=None)
    compare("[Version] 2.0\n# GHz S RI R 50\n1 2 3\n", "x.ts", fast=None)  # no [Number of Ports]
    compare(two.replace("# GHz S RI R 50", "# GHz S RI R 50\n# GHz S MA R 50"), "x.s2p")


@pytest.mark.parametrize("seed", range(30))
def test_random_files(seed):
    rng = random.Random(seed)
    nports = rng.choice([1, 2, 3, 4, 5, 8])
    version = rng.choice([1, 2])
    kw = dict(
        fmt=rng.choice(["MA", "DB", "RI"]), unit=rng.choice(["Hz", "kHz", "MHz", "GHz"]),
        param=rng.choice(["S", "S", "Y", "Z"]), ref=rng.choice(["50", "75", "33.3"]), style=rng.randrange(5),
        comments=rng.random() < 0.5, port_names=rng.random() < 0.5, seed=seed, npts=rng.randint(2, 12),
        layout=rng.choice(["one", "standard", "fixed"]), per_line=rng.randint(2, 12),
        newline=rng.choice(["\n", "\r\n"]),
    )
    if version == 2:
        kw.update(matrix=rng.choice(["Full", "Upper", "Lower"]), order=rng.choice([None, "12_21", "21_12"]),
                  reference=rng.choice([None, [rng.choice([25, 50, 75]) for _ in range(nports)]]))
        if nports == 2 and kw["matrix"] != "Full":
            kw["order"] = "12_21"  # not the 21_12 triangle scikit-rf leaves undefined (tested above)
    fast = None if kw["layout"] == "fixed" and kw["per_line"] == 1 else True
    compare(touchstone_text(nports, version=version, **kw), "x.ts" if version == 2 else f"x.s{nports}p", fast=fast)


# ------------------------------------------------------------------------------ real files
_REAL = sorted(SHARED.glob("*/*.s*p")) if SHARED.is_dir() else []


@pytest.mark.skipif(not _REAL, reason="../shared/channels not present")
@pytest.mark.parametrize("path", _REAL, ids=lambda p: p.name)
def test_real_files(path):
    compare(path.read_text(encoding="utf-8"), path.name)
