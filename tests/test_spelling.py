"""One spelling per word (issue 34): the project's own names are British (equalise,
fibre, quantise, normalise, ...); each American name users may have stays as a deprecated
alias that warns with :class:`DeprecationWarning`, naming the new one, and gives the very
same object, so code on the old name keeps its results.

The last tests walk the project's identifiers with :mod:`ast` (module, function, class,
argument, class attribute and module constant names of ``_linkmodel``, ``channels``,
``fec`` and ``phy``) and fail on an American spelling other than the aliases listed here.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import channels.cascading as cascading
import channels.optical as optical
import phy.serdes as serdes
import phy.serdes.equalisers as equalisers
import phy.serdes.impairments as impairments
from channels import ChannelError
from phy import ConfigError

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("_linkmodel", "channels", "fec", "phy")


def _old(match: str):
    """``pytest.warns`` for a deprecated spelling whose message names ``match`` (the new
    name) and points at this file (the caller, not the library)."""
    return pytest.warns(DeprecationWarning, match=match)


def _from_here(record) -> None:
    assert [Path(w.filename).name for w in record] == [Path(__file__).name] * len(record)


# ------------------------------------------------------------- phy.serdes.equalizers
def _forget_shim():
    sys.modules.pop("phy.serdes.equalizers", None)
    serdes.__dict__.pop("equalizers", None)


def test_the_old_equalisers_module_warns_and_gives_the_same_classes():
    _forget_shim()
    with _old("phy.serdes.equalisers") as rec:
        from phy.serdes.equalizers import Ctle, Dfe, RxFfe, TxFfe, solve_ffe_dfe
    _from_here(rec)
    assert (Ctle, Dfe, RxFfe, TxFfe, solve_ffe_dfe) == (equalisers.Ctle, equalisers.Dfe, equalisers.RxFfe,
                                                       equalisers.TxFfe, equalisers.solve_ffe_dfe)
    assert Dfe is equalisers.Dfe and TxFfe is serdes.TxFfe
    assert sys.modules["phy.serdes.equalizers"].__all__ == equalisers.__all__
    _forget_shim()


def test_the_old_module_name_as_an_attribute_of_phy_serdes():
    _forget_shim()
    with _old("phy.serdes.equalisers"):
        old = serdes.equalizers
    assert old.Dfe is equalisers.Dfe


# ------------------------------------------------------------------------- quantise
def test_quantize_is_quantise_with_a_warning():
    x = np.linspace(-1.3, 1.3, 1001)
    with _old("phy.serdes.quantise") as rec:
        f = serdes.quantize
    _from_here(rec)
    with _old("phy.serdes.impairments.quantise"):
        g = impairments.quantize
    assert f is g is impairments.quantise is serdes.quantise
    q = impairments.quantise(x, 0.1, 1.0)
    assert np.array_equal(f(x, 0.1, 1.0), q)
    assert np.unique(q).size == 20 and np.max(q) == pytest.approx(0.95)  # the mid-rise grid, clipped
    assert "quantise" in serdes.__all__ and "quantize" not in serdes.__all__


# ---------------------------------------------------------------- TxFfe.normalise
def test_txffe_normalize_keyword_attribute_and_key_still_work():
    taps = (-0.1, 0.6, -0.2)
    new = equalisers.TxFfe(taps, 1, normalise=False)
    with _old("normalise=") as rec:
        old = equalisers.TxFfe(taps, 1, normalize=False)
    _from_here(rec)
    assert old == new and hash(old) == hash(new)
    assert np.array_equal(old.coefficients, np.array(taps))               # as given, not scaled
    assert equalisers.TxFfe(taps, 1).coefficients == pytest.approx(np.array(taps) / 0.9)
    with _old(r"\.normalise"):
        assert old.normalize is False
    d = new.to_dict()
    assert d["normalise"] is False and d["normalize"] is False
    assert d["deprecated_keys"] == {"normalize": "normalise"}
    with pytest.raises(ConfigError, match="give normalise only"):
        equalisers.TxFfe(taps, 1, False, normalize=True)
    # the same transmitter swing either way
    with _old("normalise="):
        a = equalisers.TxFfe(taps, 1, normalize=True)
    assert a == equalisers.TxFfe(taps, 1) and a.normalise is True


# -------------------------------------------------------------------------- Fibre
def test_fiber_is_fibre_with_a_warning():
    with _old("channels.optical.Fibre") as rec:
        cls = optical.Fiber
    _from_here(rec)
    assert cls is optical.Fibre
    with _old("channels.optical.Fibre"):
        from channels.optical import Fiber
    assert Fiber is optical.Fibre and Fiber.smf(2e3) == optical.Fibre.smf(2e3)
    assert "Fibre" in optical.__all__ and "Fiber" not in optical.__all__
    with pytest.raises(AttributeError, match="no attribute 'Fibra'"):
        optical.Fibra  # noqa: B018


def test_point_to_point_fiber_keyword_and_fibers_property():
    span = optical.Fibre.om4(150.0)
    new = optical.OpticalPath.point_to_point(span, 2)
    with _old("fibre=") as rec:
        old = optical.OpticalPath.point_to_point(fiber=span, connectors=2)
    _from_here(rec)
    assert old == new
    f = np.linspace(1e9, 40e9, 64)
    assert np.array_equal(old.transfer(f), new.transfer(f))
    assert old.budget().ber == new.budget().ber and old.loss_db == new.loss_db
    assert new.fibres == (span,)
    with _old(r"\.fibres"):
        assert new.fibers == new.fibres
    assert new.to_dict()["elements"][1]["type"] == "Fibre"
    with pytest.raises(ChannelError, match="give fibre only"):
        optical.OpticalPath.point_to_point(span, fiber=span)
    with pytest.raises(ChannelError, match="needs a fibre"):
        optical.OpticalPath.point_to_point()


# ---------------------------------------------------------------- renormalise_s
def test_renormalize_s_is_renormalise_s_with_a_warning():
    rng = np.random.default_rng(7)
    s = 0.3 * (rng.standard_normal((5, 2, 2)) + 1j * rng.standard_normal((5, 2, 2)))
    with _old("channels.cascading.renormalise_s") as rec:
        old = cascading.renormalize_s
    _from_here(rec)
    assert old is cascading.renormalise_s
    out = old(s, [50.0, 50.0], [42.5, 47.5])
    assert np.array_equal(out, cascading.renormalise_s(s, [50.0, 50.0], [42.5, 47.5]))
    assert not np.allclose(out, s)                            # it did move the reference
    assert np.allclose(cascading.renormalise_s(out, [42.5, 47.5], [50.0, 50.0]), s)


def test_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.import_module("phy.serdes.equalisers")
        equalisers.TxFfe((0.1, 0.9), 1, normalise=False).to_dict()
        p = optical.OpticalPath.point_to_point(fibre=optical.Fibre.smf(10.0))
        assert p.fibres and serdes.quantise(np.zeros(3), 0.1, 1.0).shape == (3,)
        cascading.renormalise_s(np.zeros((1, 2, 2), complex), [50.0, 50.0], [50.0, 50.0])


# ------------------------------------------------------------- the identifier walk
#: American spellings: any ``-ize``/``-izer``/``-ization`` word (``size`` aside) and
#: ``-yze``, and the other words the project spells the British way.
AMERICAN = re.compile(r"(?<!s)iz(e|ing|ation)|yz(e|ing)|fiber|color|behavior|center|modeling|modeled", re.IGNORECASE)

#: The deprecated aliases, the only American names allowed: (module, name).
ALIASES = {
    ("phy.serdes.equalizers", "equalizers"),          # the module kept as a warning shim
    ("phy.serdes.equalisers", "normalize"),           # TxFfe(normalize=), TxFfe.normalize
    ("channels.optical", "fiber"),                    # OpticalPath.point_to_point(fiber=)
    ("channels.optical", "fibers"),                   # OpticalPath.fibers
}

def _names(tree: ast.AST):
    """(name, kind) of every function, class, argument, class attribute and module
    constant a module defines."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, type(node).__name__
        elif isinstance(node, ast.arg):
            yield node.arg, "argument"
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for st in node.body:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) \
                    else []
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            yield n.id, "attribute"


def identifiers(root: Path = ROOT, packages=PACKAGES) -> dict:
    """``{(module, name): kind}`` over the project's packages, module names included."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            mod = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            for p in parts:
                out[(mod, p)] = "module"
            for name, kind in _names(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                out.setdefault((mod, name), kind)
    return out


def american(ids: dict) -> dict:
    return {k: v for k, v in ids.items() if AMERICAN.search(k[1])}


def test_the_walk_flags_american_names(tmp_path):
    (tmp_path / "phy").mkdir()
    (tmp_path / "phy" / "equalizer.py").write_text(
        "LEVEL_NORMALIZED = 1\nclass Fiber:\n    colors: int = 0\n    def center(self, behavior): ...\n"
        "def optimize(x, *, size=1, noise=2): ...\nclass Fibre:\n    pass\n")
    got = american(identifiers(tmp_path, ("phy",)))
    assert set(got) == {("phy.equalizer", "equalizer"), ("phy.equalizer", "LEVEL_NORMALIZED"),
                        ("phy.equalizer", "Fiber"), ("phy.equalizer", "colors"), ("phy.equalizer", "center"),
                        ("phy.equalizer", "behavior"), ("phy.equalizer", "optimize")}


def test_the_walk_sees_the_new_names():
    ids = identifiers()
    for key in [("phy.serdes.equalisers", "equalisers"), ("channels.optical", "Fibre"),
                ("phy.serdes.impairments", "quantise"), ("phy.serdes.equalisers", "normalise"),
                ("channels.cascading", "renormalise_s"), ("channels.optical", "fibre"),
                ("channels.optical", "fibres")]:
        assert key in ids, key
    # the aliases themselves are there, as the names the walk allows
    assert ALIASES <= set(american(ids))


def test_no_american_spelling_in_the_projects_names():
    bad = {k: v for k, v in american(identifiers()).items() if k not in ALIASES}
    assert not bad, "American spellings (use the British one, keep the old as a deprecated alias): " + ", ".join(
        f"{m}: {n} ({kind})" for (m, n), kind in sorted(bad.items()))
