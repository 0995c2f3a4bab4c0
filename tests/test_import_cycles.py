"""No import cycle among the project's modules (issue 34).

Every module under ``channels/``, ``fec/`` and ``phy/`` is parsed with :mod:`ast`; each
``import`` / ``from ... import`` statement, at module level or inside a function or class
body, adds an edge to the module it loads (relative imports resolved against the
importing module's package; ``from pkg import name`` counts as importing ``pkg.name``
when that is a module, else ``pkg``). Statements under ``if TYPE_CHECKING:`` never run
and are skipped. Importing ``pkg.sub`` also runs ``pkg/__init__.py``, but that is not an
edge of the importing module's own making, so package initialisers are reached only
through explicit imports of the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("_linkmodel", "channels", "fec", "phy")


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the project's packages."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom node that can run, skipping ``if TYPE_CHECKING:`` bodies
    (their ``else`` branch still runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (module or function level)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    pkg = _package_of(name, path)
    found = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                if node.module:
                    base += node.module.split(".")
                base_name = ".".join(base)
            else:
                base_name = node.module or ""
            targets = []
            for alias in node.names:
                sub = f"{base_name}.{alias.name}"
                targets.append(sub if sub in modules else base_name)
        for t in targets:
            # ``import a.b.c`` of a non-module attribute: walk up to the nearest module
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _edges(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each
    sorted, plus one concrete cycle path through each for the failure message."""
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        # iterative Tarjan to stay clear of the recursion limit
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sccs


def _one_cycle(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    """A concrete cycle within a strongly connected component (BFS back to its start)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


# ------------------------------------------------------------------------------ tests
def test_the_walk_sees_the_project():
    graph = import_graph()
    assert {"channels", "fec", "phy", "phy.link.report", "phy.link.optics"} <= set(graph)
    # a relative import resolved: report imports the spec of its own package
    assert "phy.link.spec" in graph["phy.link.report"]
    # an absolute cross-package import: phy imports from channels and fec
    assert any(m.startswith("channels") for deps in graph.values() for m in deps)
    assert any(m.startswith("fec") for deps in graph.values() for m in deps)


def test_function_level_imports_count_and_type_checking_does_not(tmp_path):
    pkg = tmp_path / "phy"
    pkg.mkdir()
    (tmp_path / "channels").mkdir()
    (tmp_path / "fec").mkdir()
    for d in ("phy", "channels", "fec"):
        (tmp_path / d / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n    return x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import y\n")
    (pkg / "d.py").write_text("from .c import z\n")
    graph = import_graph(tmp_path)
    assert graph["phy.a"] == {"phy.b"}
    assert graph["phy.b"] == {"phy.a"}          # function-level import counted
    assert graph["phy.c"] == set()              # TYPE_CHECKING skipped
    cycles = find_cycles(graph)
    assert cycles == [["phy.a", "phy.b"]]
    assert _one_cycle(graph, cycles[0]) in (["phy.a", "phy.b", "phy.a"], ["phy.b", "phy.a", "phy.b"])


@pytest.mark.parametrize("pkg", PACKAGES)
def test_no_import_cycle(pkg):
    graph = import_graph()
    cycles = [c for c in find_cycles(graph) if any(m.split(".")[0] == pkg for m in c)]
    msg = "; ".join(f"{len(c)} modules {c}, e.g. {' -> '.join(_one_cycle(graph, c))}" for c in cycles)
    assert not cycles, f"import cycles: {msg}"


# ------------------------------------------------------------ what the breaks moved
def test_the_class_table_lives_above_the_roll_up_and_the_old_name_warns():
    import phy.link
    import phy.link.classes as classes
    import phy.link.optics as optics

    graph = import_graph()
    assert "phy.link.report" in graph["phy.link.classes"]        # the application imports the roll-up
    assert not any(m in graph["phy.link.optics"] for m in ("phy.link.report", "phy.link.classes"))
    assert phy.link.class_table is classes.class_table
    with pytest.warns(DeprecationWarning, match="phy.link.classes.class_table"):
        old = optics.class_table
    assert old is classes.class_table
    with pytest.warns(DeprecationWarning, match="PUBLISHED_MODULES"):
        assert optics.PUBLISHED_MODULES is classes.PUBLISHED_MODULES
    with pytest.raises(AttributeError):
        optics.no_such_name


def test_the_moved_names_keep_their_old_homes():
    import channels
    import channels.cascading as cascading
    import channels.optical as optical
    import phy.sweep.plan as plan
    import phy.sweep.runner as runner
    from channels._optical_base import OpticalConnector

    assert optical.OpticalConnector is OpticalConnector
    assert channels.cascade is channels.channel.cascade
    assert runner._chunks is plan._chunks and runner._options is plan._options
    # the Channel-level joins build a Channel without importing channels.channel
    a = channels.library.get("twinax_1m_26awg")
    joined = cascading.join(a, a)
    assert type(joined) is channels.Channel and joined.f.size == a.f.size
    with pytest.raises(channels.ChannelError, match="can only cascade a Channel"):
        a.cascade(object())
