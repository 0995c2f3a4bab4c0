"""The public API per package, and the README teaching only it (issue 34, "The public surface").

Each package re-exports a small surface from its ``__init__`` (its ``__all__``) and says in
its docstring's "Public API" section which submodules are public namespaces of their own
(the "Public namespaces" section: one ``:mod:`dotted.name``` per entry) and which modules
are private. A dotted path is *on the surface* when every module it passes through is a
root package (``channels``, ``fec``, ``phy``) or a namespace its parent declares, and the
first name that is not a module is in that module's ``__all__`` (what follows it, a
method or a constructor, is the object's own business). The README's Python blocks and
its prose (backtick spans) may use only such paths. The notebooks are not edited here:
every path they use must still resolve (nothing removed), and :data:`NOTEBOOK_DEEP` lists
the ones that reach past the surface, so a change to that list is seen.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
ROOTS = ("channels", "fec", "phy")

#: Packages with a surface, each with a "Public API" section in its docstring.
PACKAGES = ("channels", "fec", "phy", "phy.serdes", "phy.engines", "phy.link", "phy.latency", "phy.topology",
            "phy.config", "phy.sweep")
DOCUMENTED = PACKAGES

#: What the notebooks use past the surface (read, not edited, here): each must keep
#: working; moving one onto the surface is the notebook's own change.
NOTEBOOK_DEEP = {
    "notebooks/04_link_budget.ipynb": {"phy.latency.stack.plot_stacks"},
    "notebooks/05_scale_up_rack.ipynb": {"phy.cli.demo._latency_figure", "phy.cli.rack.domain_table",
                                         "phy.topology.domain", "phy.topology.domain.default_candidates",
                                         "phy.topology.domain.domain_steps", "phy.topology.domain.plan_domain"},
}


# ----------------------------------------------------------------------------- declared surface
def _section(doc: str, title: str) -> list[str] | None:
    """The lines of a numpydoc-style section (a title line underlined with dashes)."""
    lines = (doc or "").splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == title and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            out = []
            for j in range(i + 2, len(lines)):
                if j + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[j + 1].strip()) and lines[j].strip():
                    break
                out.append(lines[j])
            return out
    return None


def declared_namespaces(pkg: str) -> set[str]:
    """The public namespaces ``pkg``'s docstring declares (full dotted paths); for a package
    without the section, the modules in its ``__all__``."""
    mod = importlib.import_module(pkg)
    sec = _section(mod.__doc__, "Public namespaces")
    if sec is None:
        return {f"{pkg}.{n}" for n in getattr(mod, "__all__", ()) if isinstance(getattr(mod, n), types.ModuleType)}
    return {m.group(1) for line in sec if (m := re.match(r":mod:`([\w.]+)`", line))}


def public_paths() -> set[str]:
    """Every dotted path that names a public module: the roots and, recursively, the
    namespaces each public package declares (``phy.signals`` as well as
    ``phy.serdes.signals``)."""
    out, todo = set(), list(ROOTS)
    while todo:
        path = todo.pop()
        if path in out:
            continue
        out.add(path)
        if hasattr(_resolve(path), "__path__"):  # a package: its declared namespaces
            todo.extend(declared_namespaces(path))
    return out


def _resolve(path: str):
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        if isinstance(obj, types.ModuleType) and not hasattr(obj, part):
            try:  # a submodule not imported by its package's __init__
                importlib.import_module(".".join(parts[: i + 1]))
            except ModuleNotFoundError:
                pass
        obj = getattr(obj, part)
    return obj


def surface_problem(path: str, public: set[str]) -> str | None:
    """Why ``path`` is not on the declared surface (None when it is, or does not resolve:
    :func:`_resolve` raises for that)."""
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        owner, prefix = obj, ".".join(parts[: i + 1])
        obj = _resolve(prefix)
        if isinstance(obj, types.ModuleType):
            if prefix not in public:
                return f"{prefix} is a private module (not a declared namespace of {'.'.join(parts[:i])})"
            continue
        names = getattr(owner, "__all__", None)
        if isinstance(owner, types.ModuleType) and names is not None and part not in names:
            return f"{part} is not in {owner.__name__}.__all__ (reached as {'.'.join(parts[:i])})"
        return None
    return None


# ----------------------------------------------------------------------------- paths in text and code
def _code_paths(src: str, aliases: dict[str, str]) -> set[str]:
    """Dotted paths of our packages a piece of Python uses: its imports (which extend
    ``aliases``, name -> dotted path) and the attribute chains on those names."""
    tree = ast.parse(src)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ROOTS:
                    aliases[a.asname or a.name.split(".")[0]] = a.asname and a.name or a.name.split(".")[0]
                    out.add(a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ROOTS:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                out.add(f"{node.module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, base = [], node
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                out.add(".".join([aliases[base.id], *reversed(chain)]))
    return out


_FILE_SUFFIX = {"py", "md", "toml", "json", "jsonl", "png", "csv", "parquet", "yml", "txt", "ipynb"}


def _prose_paths(text: str, aliases: dict[str, str]) -> set[str]:
    """Dotted paths in the backtick spans of Markdown prose (code fences removed), with the
    names the code imported (``tp``, ``media``) expanded; a ``python -m`` command is a
    command, not an API path."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    roots = "|".join(map(re.escape, sorted({*ROOTS, *aliases}, key=len, reverse=True)))
    out = set()
    for span in re.findall(r"`([^`\n]+)`", prose):
        if "python -m" in span:
            continue
        for m in re.finditer(rf"(?<![\w./])({roots})((?:\.[A-Za-z_]\w*)+)", span):
            parts = (aliases.get(m.group(1), m.group(1)) + m.group(2)).split(".")
            if parts[-1] in _FILE_SUFFIX:
                continue
            out.add(".".join(parts))
    return out


def readme_paths() -> set[str]:
    text = README.read_text()
    aliases = {r: r for r in ROOTS}
    paths = set()
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        paths |= _code_paths(m.group(1), aliases)
    return {p for p in paths | _prose_paths(text, aliases) if "." in p}


def notebook_paths(nb: Path) -> set[str]:
    cells = json.loads(nb.read_text())["cells"]
    aliases = {r: r for r in ROOTS}
    src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
    return {p for p in _code_paths(src, aliases) if "." in p}


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("pkg", PACKAGES)
def test_every_name_in_all_resolves(pkg):
    mod = importlib.import_module(pkg)
    assert mod.__all__, pkg
    assert len(set(mod.__all__)) == len(mod.__all__), f"{pkg}.__all__ repeats a name"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{pkg}.__all__ names what {pkg} does not have: {missing}"


@pytest.mark.parametrize("pkg", DOCUMENTED)
def test_docstring_states_the_public_api(pkg):
    doc = importlib.import_module(pkg).__doc__
    for title in ("Public API", "Public namespaces", "Private modules"):
        assert _section(doc, title) is not None, f"{pkg}'s docstring has no {title!r} section"


@pytest.mark.parametrize("pkg", DOCUMENTED)
def test_declared_namespaces_are_modules_and_every_exported_module_is_declared(pkg):
    mod = importlib.import_module(pkg)
    declared = declared_namespaces(pkg)
    for path in declared:
        assert path.startswith(pkg + "."), f"{pkg} declares {path}, not one of its own"
        assert isinstance(_resolve(path), types.ModuleType), path
    exported = {f"{pkg}.{n}" for n in mod.__all__ if isinstance(getattr(mod, n), types.ModuleType)}
    assert exported <= declared, f"{pkg}.__all__ exports modules its docstring does not declare: {exported - declared}"


def test_declared_namespaces_are_attributes_of_their_package():
    """``phy.topology.export`` after ``import phy`` (topology loads on first touch), and
    ``channels.optical_parts`` after ``import channels``: a namespace needs no import of its own."""
    import subprocess
    import sys

    paths = sorted(p for p in public_paths() if "." in p)
    code = ("import functools, channels, fec, phy\n"
            f"for p in {paths!r}:\n"
            "    r, *rest = p.split('.')\n"
            "    functools.reduce(getattr, rest, {'channels': channels, 'fec': fec, 'phy': phy}[r])\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_surface_rule_tells_deep_paths_from_surface_paths():
    """The rule itself, on paths it must accept and refuse (the README's old deep paths)."""
    public = public_paths()
    for ok in ("fec.outer_cer", "phy.link.class_table", "channels.media.twinax", "phy.topology.export.ALGORITHM",
               "fec.montecarlo.random_stream", "phy.TxFfe.ieee", "phy.signals", "phy.serdes.signals"):
        assert surface_problem(ok, public) is None, ok
    for deep in ("fec.hamming.outer_cer", "phy.topology.power", "phy.latency.queueing", "phy.link.optics.class_table",
                 "fec.codes.NAMED", "phy.topology.multirack.cross_rack_m"):
        assert surface_problem(deep, public) is not None, deep


def test_readme_finds_the_paths_it_teaches():
    """The extraction sees code, imports, aliases and prose (a guard against a vacuous check)."""
    paths = readme_paths()
    assert {"phy.evaluate_link", "phy.topology.nvl72", "channels.media.twinax", "fec.outer_cer",
            "phy.topology.export.ALGORITHM", "phy.latency.md1_wait", "phy.topology.cross_rack_m"} <= paths
    assert not any(p.startswith("phy.cli") for p in paths)  # `python -m phy.cli.reference` is a command


def test_readme_uses_only_the_declared_surface():
    public = public_paths()
    problems = {}
    for path in sorted(readme_paths()):
        try:
            why = surface_problem(path, public)
        except (AttributeError, ImportError) as e:
            why = f"does not resolve: {e}"
        if why:
            problems[path] = why
    listed = "\n".join(f"  {p}: {w}" for p, w in problems.items())
    assert not problems, "README paths past the public surface:\n" + listed


@pytest.mark.parametrize("nb", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_paths_still_resolve_and_deep_ones_are_listed(nb):
    public = public_paths()
    deep = set()
    for path in sorted(notebook_paths(nb)):
        _resolve(path)  # raises if a path the notebook uses no longer exists
        if surface_problem(path, public):
            deep.add(path)
    assert deep == NOTEBOOK_DEEP.get(f"notebooks/{nb.name}", set())


def _module_basenames() -> set[str]:
    out = set()
    for pkg in ROOTS:
        for p in (REPO / pkg).rglob("*.py"):
            out.add(p.parent.name if p.stem == "__init__" else p.stem)
    return out


def test_readme_prose_names_no_module_by_its_bare_name():
    """``export.ALGORITHM`` or ``multirack.cross_rack_m`` in prose hides which package the
    module is in (and whether it is public): prose names a module through its package
    (``tp.export.ALGORITHM``). Spans in prose only; the code's names are its own variables."""
    bare = _module_basenames() - {*ROOTS, "tp", "media"}
    prose = re.sub(r"^```.*?^```", "", README.read_text(), flags=re.S | re.M)
    hits = set()
    for span in re.findall(r"`([^`\n]+)`", prose):
        if "python -m" in span:
            continue
        for m in re.finditer(r"(?<![\w./])([a-z_]\w*)\.([A-Za-z_]\w*)", span):
            if m.group(1) in bare and m.group(2) not in _FILE_SUFFIX:
                hits.add(m.group(0))
    assert not hits, f"README prose names modules by their bare names: {sorted(hits)}"


def test_what_import_phy_loads_is_what_the_readme_says():
    """README: ``phy.serdes``, ``phy.engines`` and ``phy.link`` load with ``import phy``;
    ``phy.topology``, ``phy.latency`` and ``phy.sweep`` when first touched."""
    import subprocess
    import sys

    text = " ".join(README.read_text().split())
    assert ("`phy.serdes`, `phy.engines` and `phy.link` load with `import phy`, and `phy.config`, `phy.topology`, "
            "`phy.latency` and `phy.sweep` load when first touched") in text
    eager, lazy = ("phy.serdes", "phy.engines", "phy.link"), ("phy.config", "phy.topology", "phy.latency", "phy.sweep")
    code = ("import sys, phy\n"
            f"print([m in sys.modules for m in {eager + lazy!r}])\n"
            f"for m in {lazy!r}: getattr(phy, m.split('.')[1])\n"
            f"print([m in sys.modules for m in {lazy!r}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split("\n")[:2] == [str([True] * 3 + [False] * 4), str([True] * 4)]


@pytest.mark.parametrize("pkg", [p for p in DOCUMENTED if p != "phy"])
def test_every_module_of_a_package_is_named_in_its_docstring(pkg):
    """A newcomer reading ``help(pkg)`` finds every module: public namespace or private."""
    import pkgutil

    mod = importlib.import_module(pkg)
    missing = [m.name for m in pkgutil.iter_modules(mod.__path__)
               if not m.name.startswith("_") and not re.search(rf"\b{m.name}\b", mod.__doc__ or "")]
    assert not missing, f"{pkg}'s docstring names neither as public nor as private: {missing}"
