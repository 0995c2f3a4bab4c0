"""benchmarks/validate_system.py: one definition of the ratio, the sets and the tolerance."""

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "validate_system.py"


@pytest.fixture(scope="module")
def vs():
    spec = importlib.util.spec_from_file_location("validate_system", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(**kw):
    base = dict(area="decode", case="70B 8xH200 FP8 batch 1", source="s", measured=175.0, ours=200.0,
                unit="tok/s", ratio=99.0, set="test")
    base.update(kw)
    return base


def test_ratio_recomputed_and_tolerance_by_set(vs):
    r = vs._clean(row(), "decode")
    assert r["ratio"] == pytest.approx(200 / 175)  # the part's own ratio is not trusted
    assert vs.within(r)  # 14 % off, inside 30 %
    assert not vs.within(vs._clean(row(ours=240.0), "decode"))  # 37 % off
    chk = vs._clean(row(set="check", measured=1.0, ours=1.12), "exports")
    assert not vs.within(chk)  # a tool's own computation is held to 10 %


@pytest.mark.parametrize("bad", [dict(set="fit"), dict(measured=0.0), dict(ours=float("nan"))])
def test_malformed_rows_refused(vs, bad):
    with pytest.raises(ValueError, match="validate_decode"):
        vs._clean(row(**bad), "decode")
    r = row()
    del r["source"]
    with pytest.raises(ValueError, match="lacks source"):
        vs._clean(r, "decode")


def test_summary_counts_and_worst(vs):
    rows = [vs._clean(row(case=c, ours=o), "decode") for c, o in (("a", 175.0), ("b", 100.0), ("c", 210.0))]
    (s,) = vs.summary(rows)
    assert (s["rows"], s["within"]) == (3, 2)
    assert s["worst"].startswith("b ")
    assert s["ratio_min"] == pytest.approx(100 / 175) and s["ratio_max"] == pytest.approx(1.2)
    assert s["ratio_geomean"] == pytest.approx((1.0 * (100 / 175) * 1.2) ** (1 / 3))


def test_context_rows_are_shown_not_judged(vs):
    r = vs._clean(row(set="context", ours=500.0), "decode")
    assert vs.within(r) is None and "*" not in vs.table([r])
    (s,) = vs.summary([r])
    assert s["within"] is None and s["tolerance"] is None
    assert "-" in vs.summary_table([s])
