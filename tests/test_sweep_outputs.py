"""What a sweep tells its user: the equalisation a point used, in the words its inputs use,
and the spellings of the equalisation key (``equalisation``; ``equalization``, the spelling
of older files, still taken)."""

from __future__ import annotations

import json

import pytest

import phy
from phy import ConfigError
from phy import sweep as sw
from phy.link.equalise import preset_label
from phy.sweep.point import _mode


# ----------------------------------------------------------------------------- the label of a preset
def test_a_fixed_equalisation_is_labelled_preset_with_the_serdes_name_when_it_has_its_own():
    fixed = phy.Serdes.preset(106.25e9, "pam4")
    assert fixed.name == "preset" and preset_label(fixed) == "preset"
    assert preset_label(phy.Serdes(tx=fixed.tx, rx=fixed.rx)) == "preset"  # the default name "serdes" says nothing
    assert preset_label(phy.Serdes(tx=fixed.tx, rx=fixed.rx, name="vendor_224g")) == "preset (vendor_224g)"


def test_a_preset_point_records_its_mode_and_says_preset_not_given():
    p = sw.points(sw.parse_spec('[channel]\nlength_m = 0.5\n[link]\nequalisation = "preset"\n', sweep=False))[0]
    rec = sw.evaluate_point(p)
    assert rec["status"] == "ok", rec.get("error")
    row = rec["row"]
    assert row["equalisation"] == "preset"
    assert row["equalisation_choice"].startswith("preset, sampled at ")
    assert "equalization" not in row  # one spelling in outputs: no near-twin column
    assert "given" not in json.dumps(rec)


def test_a_named_serdes_shows_its_name_in_the_report():
    fixed = phy.Serdes.preset(106.25e9, "pam4")
    spec = phy.LinkSpec(channel=sw.link_spec({"channel.length_m": 0.5}).channel, lane_rate_bps=212.5e9,
                        serdes=phy.Serdes(tx=fixed.tx, rx=fixed.rx, name="vendor_224g"))
    seg = phy.evaluate_link(spec).to_dict()["segments"][0]
    assert seg["equalisation"].startswith("preset (vendor_224g), sampled at ")
    assert all(c[0].startswith("preset (vendor_224g)") for c in seg["candidates"])


def test_the_mode_is_com_when_com_proposes_and_preset_for_a_fixed_serdes():
    assert _mode(sw.link_spec({"link.equalisation": "com"})) == "com"
    assert _mode(sw.link_spec({"link.equalisation": "preset"})) == "preset"


# ----------------------------------------------------------------------------- the key's two spellings
def test_a_sweep_file_takes_equalization_as_the_older_spelling_of_equalisation():
    spec = sw.parse_spec('[link]\nequalization = "preset"\n')
    assert spec.base == {"link.equalisation": "preset"}
    grid = sw.parse_spec('[grid]\n"link.equalization" = ["com", "preset"]\n')
    assert grid.grid == {"link.equalisation": ["com", "preset"]}
    zipped = sw.parse_spec('[zip]\n"link.equalization" = ["com", "preset"]\n"link.fec" = ["KP4", "KR4"]\n')
    assert list(zipped.zipped) == ["link.equalisation", "link.fec"]
    # one canonical key: the same point, whichever spelling, so a store made with one resumes with the other
    a = sw.points(sw.parse_spec('[link]\nequalisation = "preset"\n'))[0]
    b = sw.points(sw.parse_spec('[link]\nequalization = "preset"\n'))[0]
    assert sw.point_key(a) == sw.point_key(b)
    assert sw.link_spec(a).serdes.tx is not None  # the spelling reaches the point: a fixed SerDes


def test_a_point_keeps_the_key_it_had_before_the_respelling_so_old_stores_resume():
    """The keys the code of commit 028ae64 (schema key ``link.equalization``) gave these
    points: a store written then finds its points done."""
    a = sw.points(sw.parse_spec('[link]\nequalisation = "preset"\n'))[0]
    b = sw.points(sw.parse_spec('[channel]\nlength_m = 0.5\n[grid]\n"link.fec" = ["KP4"]\n'))[0]
    assert sw.point_key(a) == "fe8542da87b29dd7e2ef"
    assert sw.point_key(b) == "e80680b823a4ecc0d189"


def test_an_old_store_exports_its_equalization_parameter_under_the_one_spelling(tmp_path):
    pytest.importorskip("pandas")
    from phy.sweep.records import seal

    store = tmp_path / "old.jsonl"
    rec = seal({"key": "k" * 20, "params": {"link.equalization": "preset", "channel.length_m": 0.5}, "status": "ok",
                "row": {"passes": True}, "seconds": 0.1, "worker_pid": 1})
    store.write_text(json.dumps(rec) + "\n")
    df = sw.load(store)
    assert "link.equalisation" in df.columns and "link.equalization" not in df.columns
    assert df["link.equalisation"].tolist() == ["preset"]


@pytest.mark.parametrize("body, match", [
    ('[link]\nequalisation = "preset"\nequalization = "com"\n',
     r"line 3: \[link\] equalization: 'link.equalisation' is given twice \(equalisation and equalization\)"),
    ('[grid]\n"link.equalisation" = ["com"]\n"link.equalization" = ["preset"]\n',
     r"line 3: \[grid\] link.equalization: 'link.equalisation' is given twice"),
    ('[grid]\n"link.equalization" = ["com"]\n[zip]\n"link.equalisation" = ["preset"]\n',
     r"'link.equalisation' is in both \[grid\] and \[zip\]"),
    ('[link]\nequalization = "best"\n', r"line 2: \[link\] equalization must be one of 'com', 'preset'"),
    ('[link]\nequalisaton = "com"\n', r"unknown key 'equalisaton' \(did you mean 'equalisation'\?\)"),
    ('[grid]\n"link.equalisaton" = ["com"]\n', r"unknown parameter 'link.equalisaton' \(did you mean 'link.equalisation'\?\)"),
])
def test_both_spellings_at_once_or_a_misspelling_is_refused_naming_the_line(tmp_path, body, match):
    f = tmp_path / "s.toml"
    f.write_text(body)
    with pytest.raises(ConfigError, match=match):
        sw.load_spec(f)


def test_the_reference_names_every_spelling_a_link_or_sweep_file_takes():
    from phy.config import reference

    text = reference.toml_reference()
    link_part = text.split("## Link files", 1)[1].split("\n## ", 1)[0]
    for spelling, key in sw.SPELLINGS.items():
        assert key in sw.SCHEMA
        assert f"`{spelling.split('.', 1)[1]}` for `{key.split('.', 1)[1]}`" in link_part
