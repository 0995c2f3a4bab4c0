"""docs/toml_reference.md is rendered from the schemas that validate link, sweep and rack
files: the file in the tree is what the schemas give now, every key of every schema is in
it, in its section, with its default, and what it says a key accepts is what the validator
accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from phy import ConfigError
from phy import config as cf
from phy.config import reference
from phy.config.checks import Number
from phy.config.schema import SWEEP_SCHEMA
from phy.sweep import spec as sp

DOC = Path(__file__).resolve().parents[1] / "docs" / "toml_reference.md"


def _section_rows(text: str, heading: str, section: str) -> dict:
    """``{key: row}`` of the table under ``### [section]`` of the ``## heading`` part."""
    part = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    table = part.split(f"### [{section}]", 1)[1].split("\n### ", 1)[0]
    return {m.group(1): line for line in table.splitlines() if (m := re.match(r"^\| `([^`]+)` \|", line))}


def test_the_reference_in_the_tree_is_what_the_schemas_give():
    assert DOC.read_text() == reference.toml_reference(), (
        "docs/toml_reference.md is stale: run python -m phy.config.reference docs/toml_reference.md")


def test_every_link_and_sweep_parameter_is_in_its_section_with_its_default():
    text = reference.toml_reference()
    for full, (check, default, meaning) in cf.LINK_SCHEMA.items():
        sec, key = full.split(".", 1)
        rows = _section_rows(text, "Link files", sec)
        assert key in rows, full
        assert reference._default(default) in rows[key] and meaning in rows[key], full
        assert reference.accepts(check) in rows[key]


def test_every_sweep_key_is_in_the_sweep_table():
    rows = _section_rows(reference.toml_reference(), "Sweep files", "sweep")
    assert set(rows) == {k.split(".", 1)[1] for k in SWEEP_SCHEMA}


def test_every_rack_key_is_in_its_section_with_its_default():
    text = reference.toml_reference()
    for full, (check, default, meaning) in cf.RACK_SCHEMA.items():
        sec, key = full.split(".", 1)
        rows = _section_rows(text, "Rack files", sec)
        assert key in rows, full
        assert reference._default(default) in rows[key] and meaning in rows[key], full
        assert reference.accepts(check) in rows[key]
    assert "`equalization` for `equalisation`" in text


def test_a_key_added_to_a_schema_appears_in_the_reference(monkeypatch):
    monkeypatch.setitem(cf.LINK_SCHEMA, "link.new_knob_db", (Number(lo=0, hi=9), 1.5, "a new knob (dB)"))
    monkeypatch.setitem(cf.RACK_SCHEMA, "rack.new_thing", (Number(positive=True, integer=True), 3, "a new rack thing"))
    text = reference.toml_reference()
    assert "| `new_knob_db` | `1.5` | number from 0 to 9 | a new knob (dB) |" in text
    assert "| `new_thing` | `3` | whole number > 0 | a new rack thing |" in text
    assert text != DOC.read_text()


def test_a_check_without_words_fails_the_render(monkeypatch):
    monkeypatch.setitem(SWEEP_SCHEMA, "sweep.colour", (lambda v: None, None, "a colour"))
    with pytest.raises(ValueError, match="no words for the check"):
        reference.toml_reference()


_NUMBERS = [(name, full) for name, schema in (("link", cf.LINK_SCHEMA), ("rack", cf.RACK_SCHEMA), ("sweep", SWEEP_SCHEMA))
            for full, v in schema.items() if isinstance(v[0], Number)]


@pytest.mark.parametrize("name, full", _NUMBERS)
def test_the_numeric_ranges_stated_are_the_checks(name, full):
    check = {"link": cf.LINK_SCHEMA, "rack": cf.RACK_SCHEMA, "sweep": SWEEP_SCHEMA}[name][full][0]
    words = reference.accepts(check)
    if check.hi is not None:
        assert f"{check.hi:g}" in words and check(check.hi) is None
        assert check(check.hi + abs(check.hi) * 0.01 + 1) is not None
    if check.lo is not None:
        assert f"{check.lo:g}" in words and check(check.lo) is None and check(check.lo - 1) is not None
    if check.positive:
        assert "> 0" in words and check(0) is not None
    if check.integer:
        assert words.startswith("whole number") and check(1.5) is not None


def test_the_command_checks_the_file(tmp_path, capsys):
    good, stale = tmp_path / "ref.md", tmp_path / "old.md"
    assert reference.main([str(good)]) == 0 and reference.main(["--check", str(good)]) == 0
    stale.write_text("old\n")
    assert reference.main(["--check", str(stale)]) == 1
    assert "differs from the schemas" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the validators' hints
def test_all_three_validators_list_the_keys_and_suggest_the_nearest(tmp_path):
    link = tmp_path / "link.toml"
    link.write_text('[link]\nlane_rate_gbp = 212.5\n')
    with pytest.raises(ConfigError, match=r"line 2: \[link\] lane_rate_gbp: unknown key 'lane_rate_gbp' "
                                          r"\(did you mean 'lane_rate_gbps'\?\); \[link\] keys: lanes, "):
        cf.load_link(link)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('[grid]\n"channel.lenght_m" = [1.0, 2.0]\n')
    with pytest.raises(ConfigError, match=r"did you mean 'channel.length_m'\?"):
        sp.load_spec(sweep)
    r = tmp_path / "rack.toml"
    r.write_text('[rack]\nbuilder = "nvl72"\n[decode]\nbatches = 2\n')
    with pytest.raises(ConfigError, match=r"rack.toml, line 4: \[decode\] batches: unknown key 'batches' "
                                          r"\(did you mean 'batch'\?\); \[decode\] keys: params, layers, batch, "
                                          r"bytes_per_param$"):
        cf.load_rack(r)
    r.write_text('[rakc]\nbuilder = "nvl72"\n')
    with pytest.raises(ConfigError, match=r"unknown section \[rakc\] \(did you mean 'rack'\?\); sections: rack, "):
        cf.load_rack(r)


def test_a_rack_file_takes_both_spellings_of_equalisation_but_not_both_at_once(tmp_path):
    r = tmp_path / "rack.toml"
    r.write_text('[link]\nequalization = "preset"\n')
    assert cf.load_rack(r)["link.equalisation"] == "preset"
    r.write_text('[link]\nequalisation = "preset"\nequalization = "com"\n')
    with pytest.raises(ConfigError, match="'link.equalisation' is given twice"):
        cf.load_rack(r)


def test_one_default_equalisation_for_every_command():
    assert cf.LINK_SCHEMA["link.equalisation"][1] == cf.RACK_SCHEMA["link.equalisation"][1] == cf.DEFAULT_EQUALISATION
    assert cf.rack_defaults()["link.equalisation"] == cf.DEFAULT_EQUALISATION
    assert sp.SCHEMA is cf.LINK_SCHEMA  # the sweep's points are links: one schema
