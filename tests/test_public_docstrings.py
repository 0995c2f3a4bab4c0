"""Every public function (in the ``__all__`` of the main packages) that takes
parameters has a numpydoc ``Parameters`` section naming each parameter of its
signature and a ``Returns`` (or ``Yields``) section (issue 34).
"""
import importlib
import inspect
import re

import pytest

MODULES = ("channels", "fec", "phy", "phy.topology", "phy.latency",
           "phy.link", "phy.sweep", "phy.config")


def _public_functions():
    seen = {}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not inspect.isfunction(obj):
                continue
            key = (obj.__module__, obj.__name__)
            seen.setdefault(key, obj)
    return seen


def _parameters(func):
    return [p.name for p in inspect.signature(func).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL,
                                                   p.VAR_KEYWORD)]


def _section(doc, title):
    """Body of numpydoc section ``title`` or None."""
    m = re.search(r"^%s\n%s\n" % (title, "-" * len(title)), doc, re.M)
    if m is None:
        return None
    rest = doc[m.end():]
    nxt = re.search(r"^\S[^\n]*\n-{3,}\n", rest, re.M)
    return rest[:nxt.start()] if nxt else rest


def _documented_names(body):
    names = set()
    for line in body.splitlines():
        if not line or line[0].isspace():
            continue
        head = line.split(" : ")[0]
        for part in head.split(","):
            names.add(part.strip().lstrip("*"))
    return names


def _problems(func):
    doc = inspect.getdoc(func) or ""
    problems = []
    body = _section(doc, "Parameters")
    if body is None:
        problems.append("no Parameters section")
    else:
        missing = [p for p in _parameters(func)
                   if p not in _documented_names(body)]
        if missing:
            problems.append("Parameters lacks %s" % ", ".join(missing))
    if _section(doc, "Returns") is None and _section(doc, "Yields") is None:
        problems.append("no Returns/Yields section")
    return problems


FUNCS = {k: f for k, f in _public_functions().items()
         if inspect.signature(f).parameters}


def test_public_functions_found():
    # the packages' __all__ lists hold many functions with parameters
    assert len(FUNCS) > 50


@pytest.mark.parametrize("key", sorted(FUNCS), ids=lambda k: ".".join(k))
def test_public_function_has_numpydoc_sections(key):
    problems = _problems(FUNCS[key])
    assert not problems, "%s: %s" % (".".join(key), "; ".join(problems))


def test_checker_detects_missing_parameter():
    def f(a, b=1):
        """Summary.

        Parameters
        ----------
        a : int
            A.

        Returns
        -------
        int
        """
    assert _problems(f) == ["Parameters lacks b"]

    def g(a):
        """Summary.

        Parameters
        ----------
        a : int
            A.
        """
    assert _problems(g) == ["no Returns/Yields section"]
