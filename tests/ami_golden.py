"""Public golden data for the IBIS-AMI parser tests, read where it lives (never copied here).

* ``$LINKMODEL_MIRRORS`` (default ``/work/.mirror``) holds bare git mirrors of
  ``capn-freako/PyAMI`` (pyibis-ami) and ``capn-freako/PyBERT``; :func:`mirror_text` reads a
  file of their ``HEAD`` with ``git show``. The tests that use them skip, saying why, when a
  mirror or ``git`` is absent.
* ``$PYIBISAMI_PYTHON`` (default ``/work/venv-pybert/bin/python``): an interpreter with
  pyibis-ami installed; :func:`pyibisami_oracle` runs its ``.ami`` parser on texts in a
  subprocess, as an independent reading to compare with ours (skipped when absent).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

MIRRORS = Path(os.environ.get("LINKMODEL_MIRRORS", "/work/.mirror"))
PYAMI = "capn-freako+PyAMI"
PYBERT = "capn-freako+PyBERT"
ORACLE_PYTHON = Path(os.environ.get("PYIBISAMI_PYTHON", "/work/venv-pybert/bin/python"))


def mirror_text(repo: str, path: str) -> str:
    """The text of ``path`` at ``HEAD`` of the bare mirror ``$LINKMODEL_MIRRORS/<repo>/repo``;
    skips the test when the mirror, ``git`` or the file is absent."""
    git_dir = MIRRORS / repo / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"public golden data not available: no mirror at {git_dir}")
    if shutil.which("git") is None:
        pytest.skip("public golden data not readable: no git command")
    r = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"],
                       capture_output=True, text=True, timeout=60, check=False)
    if r.returncode != 0:
        pytest.skip(f"public golden data not available: {path} not in {git_dir}")
    return r.stdout


def python_strings(source: str, prefix: str) -> list[str]:
    """The string literals of a Python source that start (after blanks) with ``prefix``, in
    source order: the golden texts pyibis-ami's own tests hold inline."""
    found = [n for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.lstrip().startswith(prefix)]
    return [n.value for n in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


_ORACLE = r"""
import json, sys
from pyibisami.ami.parser import parse_ami_file_contents
def flat(d, prefix, out):
    for k, v in d.items():
        if hasattr(v, "pvalue"):
            out[prefix + k] = [v.pusage, v.ptype, v.pformat, v.pvalue]
        elif isinstance(v, dict):
            flat(v, prefix + k + ".", out)
res = []
for text in json.load(sys.stdin):
    errors, warnings, root, desc, reserved, specific = parse_ami_file_contents(text)
    out = {}
    flat(reserved, "", out)
    flat(specific, "", out)
    res.append({"errors": errors, "root": root, "description": desc, "params": out})
json.dump(res, sys.stdout)
"""


def pyibisami_oracle(texts: list[str]) -> list[dict]:
    """pyibis-ami's reading of each ``.ami`` text: errors, root, description and, per dotted
    parameter name, ``[usage, type, format, value]`` (skips when pyibis-ami is absent)."""
    if not ORACLE_PYTHON.exists():
        pytest.skip(f"pyibis-ami oracle not available: no interpreter at {ORACLE_PYTHON}")
    r = subprocess.run([str(ORACLE_PYTHON), "-c", _ORACLE], input=json.dumps(texts),
                       capture_output=True, text=True, timeout=300, cwd="/", check=False)
    if r.returncode != 0:
        pytest.skip(f"pyibis-ami oracle did not run: {r.stderr.strip().splitlines()[-1:]}")
    return json.loads(r.stdout)
