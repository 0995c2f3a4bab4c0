"""docs/toml_reference.md is rendered from the schemas that validate link, sweep and rack
files: the file in the tree is what the schemas give now, every key of every schema is in
it, in its section, with its default, and what it says a key accepts is what the validator
accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from phy import ConfigError
from phy.cli import rack as rk
from phy.cli import reference
from phy.sweep import spec as sp

DOC = Path(__file__).resolve().parents[1] / "docs" / "toml_reference.md"


def _section_rows(text: str, heading: str, section: str) -> dict:
    """``{key: row}`` of the table under ``### [section]`` of the ``## heading`` part."""
    part = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    table = part.split(f"### [{section}]", 1)[1].split("\n### ", 1)[0]
    return {m.group(1): line for line in table.splitlines() if (m := re.match(r"^\| `([^`]+)` \|", line))}


def test_the_reference_in_the_tree_is_what_the_schemas_give():
    assert DOC.read_text() == reference.toml_reference(), (
        "docs/toml_reference.md is stale: run python -m phy.cli.reference docs/toml_reference.md")


def test_every_link_and_sweep_parameter_is_in_its_section_with_its_default():
    text = reference.toml_reference()
    for full, (check, default, meaning) in sp.SCHEMA.items():
        sec, key = full.split(".", 1)
        rows = _section_rows(text, "Link files", sec)
        assert key in rows, full
        assert reference._default(default) in rows[key] and meaning in rows[key], full
        assert reference.accepts(check) in rows[key]


def test_every_sweep_key_is_in_the_sweep_table():
    rows = _section_rows(reference.toml_reference(), "Sweep files", "sweep")
    assert set(rows) == set(sp._SWEEP_KEYS)


def test_every_rack_key_is_in_its_section_with_its_default():
    text = reference.toml_reference()
    for full, (_kind, default, meaning) in rk.RACK_SCHEMA.items():
        sec, key = full.split(".", 1)
        rows = _section_rows(text, "Rack files", sec)
        assert key in rows, full
        assert reference._default(default) in rows[key] and meaning in rows[key], full
    assert "`equalisation` for `equalization`" in text


def test_a_key_added_to_a_schema_appears_in_the_reference(monkeypatch):
    monkeypatch.setitem(sp.SCHEMA, "link.new_knob_db", (sp._num(lo=0, hi=9), 1.5, "a new knob (dB)"))
    monkeypatch.setitem(rk.RACK_SCHEMA, "rack.new_thing", (int, 3, "a new rack thing"))
    text = reference.toml_reference()
    assert "| `new_knob_db` | `1.5` | number >= 0, <= 9 | a new knob (dB) |" in text
    assert "| `new_thing` | `3` | whole number > 0 | a new rack thing |" in text
    assert text != DOC.read_text()


def test_a_sweep_key_without_a_meaning_fails_the_render(monkeypatch):
    monkeypatch.setitem(sp._SWEEP_KEYS, "colour", sp._string)
    with pytest.raises(ValueError, match="colour"):
        reference.toml_reference()


@pytest.mark.parametrize("full", [k for k, v in sp.SCHEMA.items() if v[0].__qualname__.startswith("_num")])
def test_the_numeric_ranges_stated_are_the_validators(full):
    check = sp.SCHEMA[full][0]
    env = reference._closure(check)
    words = reference.accepts(check)
    if env.get("hi") is not None:
        assert f"<= {env['hi']:g}" in words and check(env["hi"]) is None and check(env["hi"] + abs(env["hi"]) * 0.01 + 1) is not None
    if env.get("lo") is not None:
        assert f">= {env['lo']:g}" in words and check(env["lo"]) is None and check(env["lo"] - 1) is not None
    if env.get("positive"):
        assert "> 0" in words and check(0) is not None
    if env.get("integer"):
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
    with pytest.raises(ConfigError, match=r"line 2: \[link\] lane_rate_gbp: unknown parameter "
                                          r"'link.lane_rate_gbp' \(did you mean 'link.lane_rate_gbps'\?\)"):
        sp.load_spec(link, sweep=False)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('[grid]\n"channel.lenght_m" = [1.0, 2.0]\n')
    with pytest.raises(ConfigError, match=r"did you mean 'channel.length_m'\?"):
        sp.load_spec(sweep)
    r = tmp_path / "rack.toml"
    r.write_text('[rack]\nbuilder = "nvl72"\n[decode]\nbatches = 2\n')
    with pytest.raises(ConfigError, match=r"rack.toml, line 4: \[decode\] batches: unknown key 'batches' "
                                          r"\(did you mean 'batch'\?\); \[decode\] keys: params, layers, batch, "
                                          r"bytes_per_param$"):
        rk._rack_spec(r)
    r.write_text('[rakc]\nbuilder = "nvl72"\n')
    with pytest.raises(ConfigError, match=r"unknown section \[rakc\] \(did you mean 'rack'\?\); sections: rack, "):
        rk._rack_spec(r)


def test_a_rack_file_takes_both_spellings_of_equalisation_but_not_both_at_once(tmp_path):
    r = tmp_path / "rack.toml"
    r.write_text('[link]\nequalisation = "preset"\n')
    assert rk._rack_spec(r)["link.equalization"] == "preset"
    r.write_text('[link]\nequalization = "preset"\nequalisation = "com"\n')
    with pytest.raises(ConfigError, match="'link.equalization' is given twice"):
        rk._rack_spec(r)


def test_one_default_equalisation_for_every_command():
    assert sp.SCHEMA["link.equalization"][1] == rk.RACK_SCHEMA["link.equalization"][1] == rk.DEFAULT_EQUALIZATION
    assert rk.rack_defaults()["link.equalization"] == rk.DEFAULT_EQUALIZATION
