"""The input layer (``phy.config``): one reader for link, sweep and rack files, one check
vocabulary, one preset SerDes, one baud, and ``linkmodel link`` without the sweep
machinery."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import phy
from phy import ConfigError
from phy import config as cf
from phy import sweep as sw
from phy.config.checks import Choice, ListOf, Number
from phy.serdes import symbol_rate_hz

ROOT = Path(__file__).resolve().parents[1]


def test_the_baud_is_the_rate_over_the_bits_a_symbol_carries():
    assert symbol_rate_hz(212.5e9, "pam4") == 106.25e9
    assert symbol_rate_hz(53.125e9, "nrz") == 53.125e9
    for mod in ("pam4", "nrz"):
        assert phy.LinkSpec(lane_rate_bps=106.25e9, modulation=mod,
                            channel=sw.link_spec({"channel.length_m": 0.5}).channel).baud_hz == symbol_rate_hz(106.25e9, mod)


def test_the_preset_is_the_kr_receiver_structure_at_the_lanes_baud():
    sd = phy.Serdes.preset(106.25e9, "pam4")
    assert sd.name == "preset" and sd.tx.modulation == "pam4" and sd.tx.level_mismatch == 0.95
    assert sd.rx.bandwidth_hz == pytest.approx(0.58 * 106.25e9)
    assert (sd.rx.ffe.n_pre, sd.rx.ffe.n_post, sd.rx.dfe.n_taps) == (5, 10, 1)
    assert phy.Serdes.preset(53.125e9, "nrz").tx.level_mismatch == 1.0


def test_every_command_takes_the_preset_from_one_place():
    """A sweep point, a rack file's links and the domain trade's candidates: the same SerDes."""
    from phy.cli import rack as rk
    from phy.topology.candidates import _make_candidates

    want = phy.Serdes.preset(106.25e9, "pam4")
    assert sw.link_spec({"link.equalisation": "preset"}).serdes == want
    assert rk._serdes({**cf.rack_defaults(), "link.equalisation": "preset"}) == want
    cands = _make_candidates(2, 212.5e9, "KP4", None, None)
    copper = next(c for c in cands if c.kind == "passive_copper")
    assert copper.spec(1.0).serdes == want


def test_a_link_file_becomes_a_link_spec_with_no_sweep(tmp_path):
    f = tmp_path / "l.toml"
    f.write_text('[channel]\nlength_m = 0.5\n[link]\nequalisation = "preset"\nlanes = 2\nfec = "KR4"\n')
    p = cf.load_link(f)
    assert {k: v for k, v in p.items() if k != "_root"} == {"channel.length_m": 0.5, "link.equalisation": "preset",
                                                          "link.lanes": 2, "link.fec": "KR4"}
    spec = cf.link_spec_from(p)
    assert (spec.lanes, spec.fec.n, spec.fec.k, spec.serdes.name) == (2, 528, 514, "preset")
    assert sw.link_spec is cf.link_spec_from  # a sweep's point is a link: one builder


def test_linkmodel_link_does_not_load_the_sweep_machinery(tmp_path):
    f = tmp_path / "l.toml"
    f.write_text('[channel]\nlength_m = 0.5\n[link]\nequalisation = "preset"\n')
    code = ("import sys; from phy import cli; rc = cli.main(['link', sys.argv[1]]); "
            "print('SWEEP' if any(m.startswith('phy.sweep') for m in sys.modules) else 'NO_SWEEP', rc)")
    out = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "NO_SWEEP 0"


@pytest.mark.parametrize("kind, body, match", [
    ("link", '[link]\nlanez = 2\n', r"line 2: \[link\] lanez: unknown key 'lanez' \(did you mean 'lanes'\?\)"),
    ("sweep", '[link]\nlanez = 2\n', r"line 2: \[link\] lanez: unknown key 'lanez' \(did you mean 'lanes'\?\)"),
    ("rack", '[link]\nlanez = 2\n', r"line 2: \[link\] lanez: unknown key 'lanez' \(did you mean 'lanes'\?\)"),
    ("link", '[link]\nlanes = 0\n', r"line 2: \[link\] lanes must be a whole number from 1 to 1024, got 0"),
    ("rack", '[link]\nlanes = 0\n', r"line 2: \[link\] lanes must be a whole number from 1 to 1024, got 0"),
    ("link", '[lnk]\nlanes = 2\n', r"line 1: \[lnk\] : unknown section \[lnk\] \(did you mean 'link'\?\)"),
    ("rack", '[lnk]\nlanes = 2\n', r"line 1: \[lnk\] : unknown section \[lnk\] \(did you mean 'link'\?\)"),
    ("link", '[sweep]\nchunk = 0\n', r"line 2: \[sweep\] chunk must be a whole number from 1 to 10000, got 0"),
    ("link", '[link\n', r"l.toml: not valid TOML"),
    ("rack", '[link\n', r"l.toml: not valid TOML"),
])
def test_one_reader_gives_one_message_for_each_kind_of_file(tmp_path, kind, body, match):
    f = tmp_path / "l.toml"
    f.write_text(body)
    read = {"link": cf.load_link, "sweep": sw.load_spec, "rack": cf.load_rack}[kind]
    with pytest.raises(ConfigError, match=match):
        read(f)


def test_a_link_file_is_refused_a_second_medium_and_a_grid(tmp_path):
    f = tmp_path / "l.toml"
    f.write_text('[channel]\nkind = "twinax"\n[optics]\nkind = "dsp"\n')
    with pytest.raises(ConfigError, match="choose one medium"):
        cf.load_link(f)
    f.write_text('[grid]\n"link.fec" = ["KP4"]\n')
    with pytest.raises(ConfigError, match=r"unknown section \[grid\]"):
        cf.load_link(f)


def test_the_checks_say_what_they_accept_and_refuse_the_rest():
    n = Number(lo=1, hi=8, integer=True)
    assert (n(1), n(8), n(8.0)) == (None, None, None)
    assert n(9) == n.want == "a whole number from 1 to 8" and n(2.5) == "a whole number" and n("2") == "a number"
    assert n(True) == "a number" and Number(positive=True)(float("nan")) == "a finite number > 0"
    c = Choice(("a", "b"))
    assert c("a") is None and c("c") == "one of 'a', 'b'"
    lst = ListOf(n)
    assert lst([1, 2]) is None and lst([]) == lst([1, 9]) == lst(3) == "a non-empty list, each a whole number from 1 to 8"


def test_every_schema_key_has_a_check_with_words_and_a_default_it_accepts():
    from phy.config.schema import SWEEP_SCHEMA

    for schema in (cf.LINK_SCHEMA, cf.RACK_SCHEMA, SWEEP_SCHEMA):
        for full, (check, default, meaning) in schema.items():
            assert isinstance(check.words, str) and meaning, full
            assert default is None or check(default) is None, full


def _imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


def test_only_the_input_layer_parses_toml_and_it_imports_no_application():
    """TOML is read in phy/config/files.py alone; phy.config imports neither the sweep
    nor the command (they import it)."""
    readers = [p.relative_to(ROOT).as_posix() for p in (ROOT / "phy").rglob("*.py")
               if {"tomllib", "tomli"} & _imports(p)]
    assert readers == ["phy/config/files.py"]
    for p in (ROOT / "phy" / "config").glob("*.py"):
        bad = {m for m in _imports(p) if m.startswith(("..sweep", "..cli", "phy.sweep", "phy.cli"))}
        assert not bad, (p.name, bad)
