"""The first run's compilation (issue 35): every kernel a demo-equivalent run reaches holds
one type signature (a second one would be compiled again on every cold first run), and the
helpers compiled into their callers through Numba's overload path (``register_jitable``,
no Python entry point of their own) leave the callers' machine code as it was with
``@njit`` helpers."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# In a fresh process: the warm-up groups' calls (the demo's calls: tests/test_warmup.py checks
# that the demo reaches no kernel or signature beyond them) and the demo itself (its parallel
# parts run in worker processes, whose kernels this process does not see), then every
# dispatcher of phy, fec and channels with the signatures it holds (compiled here or loaded
# from the cache).
_PROBE = textwrap.dedent("""
    import gc, json, sys
    from numba.core.registry import CPUDispatcher
    from phy import warmup
    from phy.cli.demo import run_demo

    for _, run, _ in warmup.GROUPS.values():
        run()
    run_demo(None, n_ui=4_000, plots=False)
    out = {}
    for o in gc.get_objects():
        if isinstance(o, CPUDispatcher) and o.py_func.__module__.split(".")[0] in ("phy", "fec", "channels"):
            if o.signatures:
                out[f"{o.py_func.__module__}:{o.py_func.__qualname__}"] = [str(s) for s in o.signatures]
    print(json.dumps(out))
""")


def test_each_kernel_the_demo_reaches_has_one_signature():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    reached = json.loads(out.stdout.strip().splitlines()[-1])
    # the demo's top-level kernels, at least (more when the cache was cold: their callees)
    for ref in ("phy.engines.timesim._kernels:run_chunk", "phy.engines.com._mmse_kernels:mmse_grid",
                "phy.engines.com._kernels:fom_search", "phy.engines.pmf:discrete_pmf",
                "phy.engines._chain_kernels:chain_step", "fec._kernels:dfe_enumerate"):
        assert ref in reached, ref
    many = {k: v for k, v in reached.items() if len(v) != 1}
    assert many == {}, "kernels compiled for more than one signature in one demo run"


# --- the register_jitable helpers: the callers' machine code is the one of @njit helpers ---

def _variant(tmp_path: Path, module: str, name: str, helpers_as_njit: bool):
    """A fresh copy of ``module`` (cache off), its register_jitable helpers made ``@njit``
    (as before issue 35) when ``helpers_as_njit``."""
    src = Path(importlib.import_module(module).__file__).read_text()
    src = src.replace("cache=True", "cache=False")
    if helpers_as_njit:
        n = len(re.findall(r"register_jitable\(|@register_jitable\n", src))
        assert n >= 1
        src = re.sub(r"register_jitable\((.*)\)\n", r"njit(\1)\n", src)
        src = src.replace("@register_jitable\n", "@njit\n")
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _asm(dispatcher) -> list[str]:
    """The kernel's machine code with the per-process symbol names and labels taken out (and
    the lengths of the strings that hold a symbol name: their unique ids are per process),
    its lines sorted (the linker may order the auxiliary symbols differently)."""
    asm = dispatcher.inspect_asm(dispatcher.signatures[0])
    asm = re.sub(r"_ZN[\w$.]+", "SYM", asm)
    asm = re.sub(r'(\.size\t"\.const\.[^"]*SYM[^"]*"), \d+', r"\1, N", asm)
    asm = re.sub(r"\.(LBB|Ltmp|LCPI|Lfunc_end|LJTI|Lcst)[\w.]*", "LBL", asm)
    lines = [ln.split("#")[0].rstrip() for ln in asm.splitlines()]
    return sorted(ln for ln in lines if ln and not ln.lstrip().startswith((".file", ".loc", ".cfi", ".ident")))


def test_chain_tail_means_machine_code_is_that_of_njit_helpers(tmp_path):
    rng = np.random.default_rng(3)
    t = np.sort(rng.random(40))[::-1].copy()
    d = np.sort(rng.normal(0.0, 3.0, 25))
    cs = np.linspace(-5.0, 45.0, 30)
    csum = np.concatenate([[0.0], np.cumsum(d)])
    outs, asms = [], []
    for i, as_njit in enumerate((False, True)):
        mod = _variant(tmp_path, "phy.engines._chain_kernels", f"chain_v{i}", as_njit)
        out = np.empty(cs.size)
        mod.tail_means(t, cs, d, csum, out)
        outs.append(out)
        asms.append(_asm(mod.tail_means))
    assert asms[0] == asms[1]
    assert np.array_equal(outs[0], outs[1], equal_nan=True)
    assert type(_variant(tmp_path, "phy.engines._chain_kernels", "chain_v2", False)._count_at_most).__name__ \
        == "function"  # no dispatcher: a plain function for Python callers


@pytest.mark.parametrize("module", ["phy.engines.com._mmse_kernels"])
def test_mmse_grid_machine_code_is_that_of_njit_helpers(tmp_path, module):
    """COM's MMSE kernel, its nine helpers register_jitable or @njit: the same machine code."""
    asms = []
    for i, as_njit in enumerate((False, True)):
        mod = _variant(tmp_path, module, f"mmse_v{i}", as_njit)
        shipped = importlib.import_module(module).mmse_grid
        sig = shipped.signatures[0] if shipped.signatures else _mmse_signature()
        mod.mmse_grid.compile(sig)
        asms.append(_asm(mod.mmse_grid))
    assert len(asms[0]) > 1000 and asms[0] == asms[1]


def _mmse_signature():
    """The signature a COM search compiles mmse_grid for (by running the warm-up's COM call)."""
    from phy import warmup
    from phy.engines.com import _mmse_kernels

    warmup.GROUPS["com"][1]()
    return _mmse_kernels.mmse_grid.signatures[0]
