"""What a sweep tells its user: the equalisation a point used, in the words its inputs use,
and the spelling of the equalisation key that a sweep file takes."""

from __future__ import annotations

import json

import pytest

import phy
from phy import ConfigError
from phy import sweep as sw
from phy.link.equalise import preset_label
from phy.sweep.point import _mode, _preset_serdes


# ----------------------------------------------------------------------------- the label of a preset
def test_a_fixed_equalisation_is_labelled_preset_with_the_serdes_name_when_it_has_its_own():
    fixed = _preset_serdes(106.25e9, "pam4")
    assert fixed.name == "preset" and preset_label(fixed) == "preset"
    assert preset_label(phy.Serdes(tx=fixed.tx, rx=fixed.rx)) == "preset"  # the default name "serdes" says nothing
    assert preset_label(phy.Serdes(tx=fixed.tx, rx=fixed.rx, name="vendor_224g")) == "preset (vendor_224g)"


def test_a_preset_point_records_its_mode_and_says_preset_not_given():
    p = sw.points(sw.parse_spec('[channel]\nlength_m = 0.5\n[link]\nequalization = "preset"\n', sweep=False))[0]
    rec = sw.evaluate_point(p)
    assert rec["status"] == "ok", rec.get("error")
    row = rec["row"]
    assert row["equalisation"] == "preset"
    assert row["equalisation_choice"].startswith("preset, sampled at ")
    assert "equalization" not in row  # one spelling in outputs: no near-twin column
    assert "given" not in json.dumps(rec)


def test_a_named_serdes_shows_its_name_in_the_report():
    fixed = _preset_serdes(106.25e9, "pam4")
    spec = phy.LinkSpec(channel=sw.link_spec({"channel.length_m": 0.5}).channel, lane_rate_bps=212.5e9,
                        serdes=phy.Serdes(tx=fixed.tx, rx=fixed.rx, name="vendor_224g"))
    seg = phy.evaluate_link(spec).to_dict()["segments"][0]
    assert seg["equalisation"].startswith("preset (vendor_224g), sampled at ")
    assert all(c[0].startswith("preset (vendor_224g)") for c in seg["candidates"])


def test_the_mode_is_com_when_com_proposes_and_preset_for_a_fixed_serdes():
    assert _mode(sw.link_spec({"link.equalization": "com"})) == "com"
    assert _mode(sw.link_spec({"link.equalization": "preset"})) == "preset"


# ----------------------------------------------------------------------------- the key's two spellings
def test_a_sweep_file_takes_equalisation_as_a_spelling_of_equalization():
    spec = sw.parse_spec('[link]\nequalisation = "preset"\n')
    assert spec.base == {"link.equalization": "preset"}
    grid = sw.parse_spec('[grid]\n"link.equalisation" = ["com", "preset"]\n')
    assert grid.grid == {"link.equalization": ["com", "preset"]}
    zipped = sw.parse_spec('[zip]\n"link.equalisation" = ["com", "preset"]\n"link.fec" = ["KP4", "KR4"]\n')
    assert list(zipped.zipped) == ["link.equalization", "link.fec"]
    # one canonical key: the same point, whichever spelling, so a store made with one resumes with the other
    a = sw.points(sw.parse_spec('[link]\nequalisation = "preset"\n'))[0]
    b = sw.points(sw.parse_spec('[link]\nequalization = "preset"\n'))[0]
    assert sw.point_key(a) == sw.point_key(b)
    assert sw.link_spec(a).serdes.tx is not None  # the spelling reaches the point: a fixed SerDes


@pytest.mark.parametrize("body, match", [
    ('[link]\nequalization = "preset"\nequalisation = "com"\n',
     r"line 3: \[link\] equalisation: 'link.equalization' is given twice \(equalization and equalisation\)"),
    ('[grid]\n"link.equalization" = ["com"]\n"link.equalisation" = ["preset"]\n',
     r"line 3: \[grid\] link.equalisation: 'link.equalization' is given twice"),
    ('[grid]\n"link.equalisation" = ["com"]\n[zip]\n"link.equalization" = ["preset"]\n',
     r"'link.equalization' is in both \[grid\] and \[zip\]"),
    ('[link]\nequalisation = "best"\n', r"line 2: \[link\] equalisation must be one of 'com', 'preset'"),
    ('[link]\nequalisaton = "com"\n', r"unknown parameter 'link.equalisaton' \(did you mean 'link.equalization'\?\)"),
])
def test_both_spellings_at_once_or_a_misspelling_is_refused_naming_the_line(tmp_path, body, match):
    f = tmp_path / "s.toml"
    f.write_text(body)
    with pytest.raises(ConfigError, match=match):
        sw.load_spec(f)


def test_the_reference_names_every_spelling_a_link_or_sweep_file_takes():
    from phy.cli import reference

    text = reference.toml_reference()
    link_part = text.split("## Link files", 1)[1].split("\n## ", 1)[0]
    for spelling, key in sw.spec.SPELLINGS.items():
        assert key in sw.SCHEMA
        assert f"`{spelling.split('.', 1)[1]}` for `{key.split('.', 1)[1]}`" in link_part
