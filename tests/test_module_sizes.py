"""Every module of the packages stays under 500 lines (DESIGN: a newcomer reads one concept
per module; issue 34), and no module of channels, fec, phy.config or phy.topology imports
another module's private names."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("channels", "fec", "phy", "_linkmodel")
LIMIT = 500


def _modules():
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_walk_sees_the_packages():
    rel = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"channels/channel.py", "fec/analysis.py", "phy/topology/domain.py", "_linkmodel/__init__.py"} <= rel


def test_line_count_counts_lines(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("a = 1\n" * 501)
    assert _lines(f) == 501 and _lines(f) >= LIMIT


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_under_500_lines(path):
    rel = path.relative_to(ROOT).as_posix()
    n = _lines(path)
    assert n < LIMIT, f"{rel} has {n} lines; split it into modules of one concept each"


# ----------------------------------------------------------------------------- private names
import ast  # noqa: E402

#: Where no module may import another module's private names (a module's ``_name`` is its
#: own; what others use gets a public name, in a module both import).
PRIVATE_SCOPE = ("channels", "fec", "phy/config", "phy/topology")


def _private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Private names (``_x``, not modules) that ``path`` imports from another module."""
    rel = path.relative_to(root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = rel.parent
        for _ in range(max(node.level - 1, 0)):
            base = base.parent
        target = (base if node.level else Path()) / Path(*(node.module or "").split(".")) if node.module else base
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or name.startswith("__"):
                continue
            is_module = (root / target / f"{name}.py").exists() or (root / target / name / "__init__.py").exists()
            if not is_module:
                found.append(name)
    return found


def test_the_private_import_walk_finds_a_private_name(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_helpers.py").write_text("def _f():\n    pass\n")
    (pkg / "a.py").write_text("from . import _helpers\nfrom ._helpers import _f\n")
    assert _private_imports(pkg / "a.py", tmp_path) == ["_f"]   # the module is fine, its _f is not


@pytest.mark.parametrize("path", [p for p in _modules() if p.relative_to(ROOT).as_posix().startswith(PRIVATE_SCOPE)],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_private_name_imported_across_modules(path):
    rel = path.relative_to(ROOT).as_posix()
    bad = _private_imports(path)
    assert not bad, f"{rel} imports private {bad}: give them a public name where they live"
