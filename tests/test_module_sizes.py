"""Every module of the packages stays under 500 lines (DESIGN: a newcomer reads one concept
per module; issue 34). The allow-list names the files being split elsewhere right now."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("channels", "fec", "phy", "_linkmodel")
LIMIT = 500
#: Being split by other work (the lead empties this list after merging).
ALLOWED = {"phy/sweep/spec.py", "phy/engines/timesim/_kernels.py"}


def _modules():
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_walk_sees_the_packages():
    rel = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"channels/channel.py", "fec/analysis.py", "phy/topology/domain.py", "_linkmodel/__init__.py"} <= rel
    assert ALLOWED <= rel  # an allowed file that is gone should leave the list


def test_line_count_counts_lines(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("a = 1\n" * 501)
    assert _lines(f) == 501 and _lines(f) >= LIMIT


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_under_500_lines(path):
    rel = path.relative_to(ROOT).as_posix()
    if rel in ALLOWED:
        pytest.skip("being split in other work")
    n = _lines(path)
    assert n < LIMIT, f"{rel} has {n} lines; split it into modules of one concept each"
