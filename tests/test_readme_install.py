"""The README's quick start, then its test command, in one fresh virtual environment (issue 31).

Run in that order in one venv, the old install broke: the quick start's demo left Numba's
cache in ``site-packages/phy/**/__pycache__``, pip's uninstall (done by the test command's
editable install) left those folders, and ``phy`` and ``fec`` then imported as empty
namespace packages (``linkmodel --version`` failed with ``cannot import name 'ComParams'
from 'phy.engines.com' (unknown location)``). The kernels are now cached outside the
install (:mod:`fec._numba_setup`).

The venv is made by the README's own commands, read from README.md
(``tools/readme_commands.py``):

- in CI, ``.ci/run`` makes it, runs the quick start and then the test command in it (this
  suite runs inside it) and names it in ``LINKMODEL_README_VENV``; these tests check it;
- elsewhere, with ``LINKMODEL_TEST_INSTALL=1``, the fixture makes one in a temporary folder
  the same way (several minutes: two installs from the package index and a cold demo);
  without either the tests skip, saying so.

Then, in that venv and outside the repository: ``linkmodel --version``, the packages import
as the real ones, no folder of theirs is left in site-packages, and the demo runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import readme_commands  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="venv layout and bash")]


def _env(venv: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP") and not k.startswith("NUMBA_")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", MPLBACKEND="Agg")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def readme_venv(tmp_path_factory):
    """``(venv, env)``: the venv the README's two commands made, in the README's order."""
    given = os.environ.get("LINKMODEL_README_VENV")
    if given:
        venv = Path(given)
        assert (venv / "bin" / "python").exists(), f"LINKMODEL_README_VENV={given} is not a venv"
        return venv, _env(venv)
    if os.environ.get("LINKMODEL_TEST_INSTALL") != "1":
        pytest.skip("the README-order install is checked in CI (.ci/run sets LINKMODEL_README_VENV); "
                    "set LINKMODEL_TEST_INSTALL=1 to build a fresh venv here (several minutes)")
    work = tmp_path_factory.mktemp("readme-order")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = _env(venv, XDG_CACHE_HOME=str(work / "cache"))
    demo = REPO / "linkmodel-demo"
    existed = demo.exists()
    cmds = readme_commands.commands()
    try:
        for key in ("quick-start", "tests-install"):
            proc = subprocess.run(["bash", "-c", cmds[key]], cwd=REPO, env=env, capture_output=True, text=True,
                                  timeout=3600)
            assert proc.returncode == 0, f"{cmds[key]!r} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    finally:
        if not existed:
            subprocess.run(["rm", "-rf", str(demo)], check=False)
    return venv, env


def _run(readme_venv, args, cwd, timeout=900):
    venv, env = readme_venv
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_readme_has_the_two_commands():
    cmds = readme_commands.commands()
    assert cmds["quick-start"].startswith("pip install '.[plots]'") and "linkmodel demo" in cmds["quick-start"]
    assert cmds["tests-install"] == "pip install -e '.[test]'"


def test_version_after_the_readme_order(readme_venv, tmp_path):
    proc = _run(readme_venv, ["linkmodel", "--version"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert proc.stdout.strip() == f"linkmodel {version}"


def test_packages_import_whole_outside_the_repo(readme_venv, tmp_path):
    code = ("import _linkmodel, channels, fec, phy\n"
            "from phy.engines.com import ComParams\n"
            "assert callable(phy.evaluate_link) and ComParams is phy.ComParams\n"
            "for m in (_linkmodel, channels, fec, phy): print(m.__name__, m.__file__)\n")
    proc = _run(readme_venv, ["python", "-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    for name in ("_linkmodel", "channels", "fec", "phy"):  # the editable install: the checkout's own files
        assert files[name] == str(REPO / name / "__init__.py"), files


def test_no_package_folder_left_in_site_packages(readme_venv, tmp_path):
    proc = _run(readme_venv, ["python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                tmp_path)
    site = Path(proc.stdout.strip())
    assert site.is_dir(), proc.stderr
    left = [p for p in ("_linkmodel", "channels", "fec", "phy") if (site / p).exists()]
    assert not left, f"{left} left in {site}: they would import as namespace packages"


def test_demo_runs_after_the_readme_order(readme_venv, tmp_path):
    proc = _run(readme_venv, ["linkmodel", "demo", "--out", str(tmp_path / "demo")], tmp_path, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "demo" / "eye.png").stat().st_size > 0 and (tmp_path / "demo" / "latency.png").exists()
    assert "usable" in proc.stdout.lower(), proc.stdout[-2000:]
