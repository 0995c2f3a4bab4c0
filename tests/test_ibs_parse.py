"""The ``.ibs`` reader (phy.ami.ibs): public golden files, pyibis-ami as an oracle, the
keyword conventions ([Comment Char], case, underscores), IBIS 7 Tx/Rx executables, the
platform choice and hostile files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ami_golden import ORACLE_PYTHON, PYAMI, PYBERT, mirror_text, python_strings
from conftest import cpu_seconds_at_most

from phy.ami import ibs
from phy.ami.errors import AmiError
from phy.ami.ibs import Executable, IbsModel, parse_ibs, read_ibs

IV_TABLE = "".join(f"{v / 10:6.2f}  {v * 1e-3:10.3e}  {v * 1e-3:10.3e}  {v * 1e-3:10.3e}\n"
                   for v in range(-18, 37))

REPEATER = f"""
[IBIS_Ver]  7.1   | underscores and case do not matter in keywords
[comment char] #_char
[File Name] rep.ibs
# from here '#' starts a comment and '|' is text
[Component] Retimer|A
[Manufacturer] Nobody
[Pin] signal_name model_name R_pin L_pin C_pin
1  RX_P   rx_sel     # a selector
2  TX_P   rep_tx
3  VDD    POWER
4  VSS    GND
5  NC1    NC
[Model Selector] rx_sel
rx_fast   fast receiver
rx_slow   slow receiver
[Model] rx_fast
Model_type Input
[Pulldown]
{IV_TABLE}
[Model] rx_slow
Model_type Input
[Model] rep_tx
Model_type Output
[Algorithmic Model]
Executable_Rx  Linux_gcc_64  lib\\rep_rx.so   ami/rep_rx.ami   # Windows-style path
Executable_Tx  Linux_gcc_64  lib/rep_tx.so    ami/rep_tx.ami
Executable_Tx  Windows_VisualStudio_64  rep_tx.dll  rep_tx.ami
[End Algorithmic Model]
[Pullup]
{IV_TABLE}
[End]
[Model] after_end
Model_type Output
"""


def rep():
    return parse_ibs(REPEATER, "/models/rep.ibs")


def test_repeater_file_reads_components_models_and_sides():
    f = rep()
    assert (f.ibis_ver, f.file_name, f.source) == ("7.1", "rep.ibs", "/models/rep.ibs")
    assert f.components == {"Retimer|A": ["rx_fast", "rx_slow", "rep_tx"]}
    assert list(f.models) == ["rx_fast", "rx_slow", "rep_tx"]          # [End] ends the file
    assert f.models["rx_fast"] == IbsModel("rx_fast", "Input", ())
    execs = f.models["rep_tx"].executables
    assert execs[0] == Executable("Linux_gcc_64", Path("/models/lib/rep_rx.so"),
                                  Path("/models/ami/rep_rx.ami"), "Rx")
    assert [(e.platform, e.side) for e in execs] == [
        ("Linux_gcc_64", "Rx"), ("Linux_gcc_64", "Tx"), ("Windows_VisualStudio_64", "Tx")]


def test_executable_chooses_by_model_platform_and_side(monkeypatch):
    f = rep()
    monkeypatch.setattr(ibs, "this_platform", lambda: ("linux", "64"))
    assert f.executable(side="Rx").library == Path("/models/lib/rep_rx.so")
    assert f.executable("rep_tx", side="tx").library == Path("/models/lib/rep_tx.so")
    with pytest.raises(AmiError, match="has Rx and Tx executables for this platform; choose"):
        f.executable()
    monkeypatch.setattr(ibs, "this_platform", lambda: ("windows", "64"))
    assert f.executable(side="Tx").library.name == "rep_tx.dll"
    with pytest.raises(AmiError, match=r"no executable for windows_64 \(this machine\) side Rx;"
                                       r" it has Linux_gcc_64 \(Rx\), Linux_gcc_64 \(Tx\)"):
        f.executable(side="Rx")
    assert f.executable(platform="linux_gcc_64", side="Tx").side == "Tx"      # exact, any case
    assert f.executable(platform="Linux_clang_64", side="Tx").platform == "Linux_gcc_64"
    with pytest.raises(AmiError, match="no executable for Linux_gcc_32"):
        f.executable(platform="Linux_gcc_32", side="Tx")


@pytest.mark.parametrize("model, fragment", [
    ("rep_txx", "no [Model] 'rep_txx'; did you mean rep_tx? (it has rx_fast, rx_slow, rep_tx)"),
    ("rx_fast", "model 'rx_fast' has no executable for"),
])
def test_executable_errors_list_what_exists(model, fragment):
    with pytest.raises(AmiError) as e:
        rep().executable(model)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_executable_default_model_needs_exactly_one_algorithmic_model():
    two = "[IBIS Ver] 7.0\n" + "".join(
        f"[Model] m{i}\nModel_type Output\n[Algorithmic Model]\n"
        f"Executable Linux_gcc_64 m{i}.so m{i}.ami\n[End Algorithmic Model]\n" for i in (1, 2))
    with pytest.raises(AmiError, match=r"several models have an \[Algorithmic Model\] "
                                       r"\(m1, m2\); name one with model="):
        parse_ibs(two, "two.ibs").executable()
    assert parse_ibs(two, "two.ibs").executable("M2").library == Path("m2.so")
    none = "[IBIS Ver] 7.0\n[Model] plain\nModel_type I/O\n"
    with pytest.raises(AmiError, match=r"no \[Model\] has an \[Algorithmic Model\] "
                                       r"\(models: plain\)"):
        parse_ibs(none).executable()


def test_this_platform_names_this_machine():
    import sys
    os_name, bits = ibs.this_platform()
    assert bits == ("64" if sys.maxsize > 2**32 else "32")
    if sys.platform.startswith("linux"):
        assert os_name == "linux"
    assert ibs._os_bits("Windows_VisualStudio_32") == ("windows", "32")
    assert ibs._os_bits("MacOS_clang_64") == ("macos", "64")
    assert ibs._os_bits("Linux64") == ("linux", "64")
    assert ibs._os_bits("Win32_MSVC") == ("windows", "")
    assert ibs._os_bits("Solaris_cc_32") == ("solaris", "32")


HOSTILE = [
    ("no_version", "[Model] m\nModel_type Output\n", "no [IBIS Ver] keyword: not an IBIS file"),
    ("ami_text", "(m (Reserved_Parameters))", "no [IBIS Ver] keyword"),
    ("short_executable",
     "[IBIS Ver] 7.0\n[Model] m\n[Algorithmic Model]\nExecutable Linux_gcc_64 m.so\n",
     "line 4: [Model] m: 'Executable' needs a platform, a library and an .ami file, got 2"),
    ("model_twice", "[IBIS Ver] 7.0\n[Model] m\n[Model] m\n",
     "line 3: [Model] m defined twice (first at line 2)"),
    ("algorithmic_outside_model", "[IBIS Ver] 7.0\n[Algorithmic Model]\n",
     "line 2: [Algorithmic Model] outside any [Model]"),
    ("unclosed_keyword", "[IBIS Ver 7.0\n", "line 1: keyword line without ']'"),
    ("nameless_model", "[IBIS Ver] 7.0\n[Model]   | no name\n", "line 2: [Model] without a name"),
]


@pytest.mark.parametrize("name, text, fragment", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_ibs_gives_one_clear_error_line(name, text, fragment):
    with pytest.raises(AmiError) as e:
        parse_ibs(text, "bad.ibs")
    assert fragment in str(e.value) and str(e.value).startswith("bad.ibs")
    assert "\n" not in str(e.value)


def test_hostile_ibs_files(tmp_path):
    big = tmp_path / "huge.ibs"
    with open(big, "wb") as f:                 # sparse: refused before it is read
        f.truncate(65 * 1024 * 1024)
    with pytest.raises(AmiError, match=r"huge\.ibs: 68\.2 MB, larger than the 64 MB"):
        read_ibs(big)
    with pytest.raises(AmiError, match="cannot read an IBIS file"):
        read_ibs(tmp_path / "none.ibs")
    with pytest.raises(AmiError, match="more than the 64 MB"):
        parse_ibs(" " * (64 * 1024 * 1024 + 1))


def test_big_tables_are_skipped_in_linear_time(tmp_path):
    body = ("[Model] m{0}\nModel_type Output\n[Pulldown]\n" + IV_TABLE * 4 +
            "[Algorithmic Model]\nExecutable Linux_gcc_64 m{0}.so m{0}.ami\n"
            "[End Algorithmic Model]\n")
    text = "[IBIS Ver] 7.0\n" + "".join(body.format(i) for i in range(800))   # about 8 MB
    p = tmp_path / "big.ibs"
    p.write_text(text)
    with cpu_seconds_at_most(20.0):
        f = read_ibs(p)
    assert len(f.models) == 800 and len(text) > 7_000_000
    assert f.executable("m799").library == tmp_path.resolve() / "m799.so"


# ---- public golden data: pyibis-ami's test .ibs texts and PyBERT's example model ----

def _pyami_ibs_texts() -> list[str]:
    texts = python_strings(mirror_text(PYAMI, "tests/conftest.py"), "[IBIS Ver]")
    assert len(texts) == 2, "pyibis-ami's tests/conftest.py changed shape"
    return texts


def test_golden_pyibisami_conftest_ibs(tmp_path):
    """What pyibis-ami's tests/ibis/test_parser.py states of its two .ibs fixtures."""
    plain, with_tc = _pyami_ibs_texts()
    p = tmp_path / "test.ibs"
    p.write_text(plain)
    f = read_ibs(p)
    assert (f.file_name, f.ibis_ver) == ("example_tx.ibs", "5.1")
    assert f.components == {"Example_Tx": ["example_tx"]}
    m = f.models["example_tx"]
    assert m.model_type == "Output"
    assert [(e.platform, e.library.name, e.ami.name) for e in m.executables] == [
        ("linux_gcc4.1.2_32", "example_tx_x86.so", "example_tx.ami"),
        ("linux_gcc4.1.2_64", "example_tx_x86_amd64.so", "example_tx.ami"),
        ("Windows_VisualStudio_32", "example_tx_x86.dll", "example_tx.ami"),
        ("Windows_VisualStudio_64", "example_tx_x86_amd64.dll", "example_tx.ami")]
    assert f.executable(platform="Linux_64").platform == "linux_gcc4.1.2_64"
    assert f.executable(platform="Windows_32").library == tmp_path.resolve() / "example_tx_x86.dll"
    # the [AMI Test Configuration] blocks inside [Algorithmic Model] are passed over
    g = parse_ibs(with_tc, "with_tc.ibs")
    assert [e.platform for e in g.models["example_tx"].executables] == [
        "linux_gcc4.1.2_64", "Windows_VisualStudio_64"]


_ORACLE = r"""
import json, sys
from pyibisami.ibis.parser import parse_ibis_file
status, d = parse_ibis_file(sys.stdin.read())
out = {"status": status, "ibis_ver": str(d["ibis_ver"]), "file_name": d["file_name"],
       "components": {k: sorted({m for m, _ in c.pins.values()}) for k, c in d["components"].items()},
       "models": {k: [m.mtype, [[list(p), list(f)] for p, f in m.executables]]
                  for k, m in d["models"].items()}}
json.dump(out, sys.stdout)
"""


def test_golden_pybert_example_rx_ibs_matches_pyibisami(tmp_path):
    text = mirror_text(PYBERT, "models/ibisami/example_rx.ibs")
    f = parse_ibs(text, str(tmp_path / "example_rx.ibs"))
    assert (f.ibis_ver, f.file_name) == ("7.1", "example_rx.ibs")
    assert f.models["example_rx"].model_type == "Input"
    assert f.executable(platform="linux_gcc4.1.2_64").library == tmp_path / "example_rx_x86_amd64.so"
    if not ORACLE_PYTHON.exists():
        pytest.skip(f"pyibis-ami oracle not available: no interpreter at {ORACLE_PYTHON}")
    r = subprocess.run([str(ORACLE_PYTHON), "-c", _ORACLE], input=text, capture_output=True,
                       text=True, timeout=300, cwd="/", check=False)
    if r.returncode != 0:
        pytest.skip(f"pyibis-ami oracle did not run: {r.stderr.strip().splitlines()[-1:]}")
    theirs = json.loads(r.stdout)
    assert theirs["status"] == "Success!"
    assert (theirs["ibis_ver"], theirs["file_name"]) == (f.ibis_ver, f.file_name)
    assert {k: sorted(v) for k, v in f.components.items()} == theirs["components"]
    for name, (mtype, execs) in theirs["models"].items():
        m = f.models[name]
        assert m.model_type == mtype
        assert [[list(ibs._os_bits(e.platform)), [e.library.name, e.ami.name]]
                for e in m.executables] == execs


def test_byte_order_mark_and_crlf_line_ends_are_read(tmp_path):
    p = tmp_path / "bom.ibs"
    p.write_bytes(b"\xef\xbb\xbf" + REPEATER.replace("\n", "\r\n").encode())
    f = read_ibs(p)
    assert f.ibis_ver == "7.1" and f.components == rep().components
    assert f.executable(platform="Linux_gcc_64", side="Rx").library == \
        tmp_path.resolve() / "lib" / "rep_rx.so"
