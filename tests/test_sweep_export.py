"""A sweep's store as a table: ``linkmodel sweep SPEC --export out.csv | out.parquet`` (after
a run, or ``--no-run`` for the store as it is) and :func:`phy.sweep.export`; pandas and
pyarrow optional (the ``sweeps`` extra), their absence one line naming it."""

from __future__ import annotations

import json
import sys

import pytest

from phy import ConfigError, cli
from phy import sweep as sw

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

SPEC = """\
[sweep]
name = "ex"
executor = "inline"

[channel]
kind = "twinax"

[link]
equalisation = "preset"

[grid]
"channel.length_m" = [0.5, 1.0]
"link.fec" = ["KP4", "none"]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 4-point sweep run once through the command with --export out.parquet, and a failed
    point added to its store by hand (text where figures would be)."""
    d = tmp_path_factory.mktemp("export")
    spec = d / "ex.toml"
    spec.write_text(SPEC)
    assert cli.main(["sweep", str(spec), "--no-progress", "--export", str(d / "run.parquet")]) == 0
    store = d / "ex.jsonl"
    with open(store, "a") as fh:
        fh.write(json.dumps(sw.records.seal({"key": "k-failed", "params": {"channel.length_m": 9.0, "link.fec": "KP4"},
                                             "status": "error", "error": "ChannelError: made up",
                                             "seconds": 0.5})) + "\n")
    return d, spec, store


def test_the_run_exports_what_it_stored(swept):
    d, _, store = swept
    got = pd.read_parquet(d / "run.parquet")
    assert len(got) == 4 and set(got["status"]) == {"ok"}
    assert set(got["equalisation"]) == {"preset"}


def _columns_with_values(df):
    return [c for c in df.columns if df[c].notna().any()]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_round_trips_values_columns_and_types(swept, suffix, capsys):
    d, spec, store = swept
    out = d / f"all{suffix}"
    assert cli.main(["sweep", str(spec), "--export", str(out), "--no-run"]) == 0
    assert capsys.readouterr().out.strip() == f"5 rows of {store} -> {out}"
    want = sw.load(store)
    got = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert list(got.columns) == list(want.columns)
    assert list(want.columns[:4]) == ["key", "status", "error", "seconds"]
    assert {"channel.length_m", "link.fec", "equalisation", "equalisation_choice", "margin_db",
            "latency_ns"} <= set(want.columns)
    # the store's numbers, whatever the format
    for c in want.columns:
        if pd.api.types.is_numeric_dtype(want[c]) and not pd.api.types.is_bool_dtype(want[c]):
            assert want[c].dtype == "float64" or pd.api.types.is_integer_dtype(want[c]), c
            pd.testing.assert_series_equal(got[c], want[c], check_dtype=False, rtol=1e-15, obj=c)
    assert want["com_db"].dtype == "float64" and want["com_db"].isna().all()  # preset points: NaN, not None
    if suffix == ".parquet":  # the types kept exactly
        pd.testing.assert_frame_equal(got, want)
    else:  # CSV keeps no types and writes a missing text as an empty one: yes/no and text compared as such
        assert str(want["passes"].dtype) == "boolean"  # the failed point has none
        pd.testing.assert_series_equal(got["passes"].astype("boolean"), want["passes"])
        for c in _columns_with_values(want):
            if not pd.api.types.is_numeric_dtype(want[c]) and not pd.api.types.is_bool_dtype(want[c]):
                assert got[c].fillna("").tolist() == want[c].fillna("").tolist(), c
    failed = got[got["status"] == "error"].iloc[0]
    assert failed["error"] == "ChannelError: made up" and failed["key"] == "k-failed"
    ok = got[got["key"] != "k-failed"]
    recs = sw.read_records(store)
    assert [bool(v) for v in ok["passes"]] == [recs[k]["row"]["passes"] for k in ok["key"]]
    assert set(ok["link.fec"]) == {"KP4", "none"}


def test_the_library_export_returns_the_rows_and_leaves_no_partial_file(swept, tmp_path):
    _, _, store = swept
    assert sw.export(store, tmp_path / "t.csv") == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    with pytest.raises(ConfigError, match="no such file"):
        sw.export(tmp_path / "missing.jsonl", tmp_path / "x.csv")
    with pytest.raises(ConfigError, match=r"x.csv': its folder '.*dir' does not exist$"):
        sw.export(store, tmp_path / "no" / "such" / "dir" / "x.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


@pytest.mark.parametrize("missing, suffix", [("pyarrow", ".parquet"), ("pandas", ".csv"), ("pandas", ".parquet")])
def test_a_missing_package_is_one_line_naming_the_extra_and_exit_2_before_any_work(tmp_path, monkeypatch, capsys,
                                                                                   missing, suffix):
    monkeypatch.setitem(sys.modules, missing, None)  # import of it now fails, as when it is not installed
    spec = tmp_path / "ex.toml"
    spec.write_text(SPEC)
    with pytest.raises(ConfigError, match=rf"needs {missing}, which is not installed: "
                                          r"pip install 'linkmodel\[sweeps\]'"):
        sw.export_format(tmp_path / f"out{suffix}")
    assert cli.main(["sweep", str(spec), "--export", str(tmp_path / f"out{suffix}")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'linkmodel[sweeps]'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ex.toml"]  # refused before the run: no store


def test_load_names_the_extra_without_pandas(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ConfigError, match=r"needs pandas, which is not installed: pip install 'linkmodel\[sweeps\]'"):
        sw.load(tmp_path / "x.jsonl")


@pytest.mark.parametrize("name, match", [("out.xlsx", r"the suffix '.xlsx' names no table format; use .csv or "
                                                       r"\.parquet"),
                                         ("out", r"the suffix '\(none\)' names no table format")])
def test_an_unknown_suffix_is_refused(tmp_path, capsys, name, match):
    spec = tmp_path / "ex.toml"
    spec.write_text(SPEC)
    assert cli.main(["sweep", str(spec), "--export", str(tmp_path / name), "--no-run"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    with pytest.raises(ConfigError, match=match):
        sw.export_format(tmp_path / name)
