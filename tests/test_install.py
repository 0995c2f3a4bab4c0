"""Where the kernels are cached: never in the install tree (issue 31); a read-only install
with no writable home still runs (issue 14).

The kernels are ``@njit(cache=True)``. Installed read-only, for a user whose home is
missing, Numba finds no folder to cache them in and ``import fec`` used to fail with
``RuntimeError: cannot cache function ...: no locator available for file ...``.
:mod:`fec._numba_setup` now falls back to a private temporary folder, or to no cache,
and says so in one line.

Each test copies the three packages' sources into a temporary tree, makes it read-only
(``chmod -R a-w``), and runs a child Python on the copy with ``HOME`` inside the
read-only tree (it does not exist and cannot be created) and no ``NUMBA_CACHE_DIR``.
The child reaches two fec kernels (KP4 encode and decode) and one phy kernel (PRBS).
For root, whom file permissions do not stop (``os.access`` still says writable after
the chmod), the child makes the tree read-only itself with an audit hook that refuses
every Python-level write, folder creation, rename or removal under it: all of Numba's
cache handling goes through those calls, so the child sees what a normal user sees.

A writable copy (as ``pip install .`` leaves site-packages) gets no Numba file in its tree.

Cold compilation of the reached kernels takes about 7 s a run; five runs in all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("_linkmodel", "channels", "fec", "phy")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes and chmod are POSIX")

CHILD = textwrap.dedent(
    """
    import os, sys

    ro = os.environ["LINKMODEL_TEST_READONLY"]
    if os.environ.get("LINKMODEL_TEST_EMULATE") == "1":
        WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_TMPFILE", 0)

        def read_only(event, args):
            if event == "open":
                path, mode, flags = args
                if not ((mode is not None and any(c in mode for c in "wax+")) or (flags or 0) & WRITE):
                    return
            elif event in ("os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link"):
                path = args[0]
            else:
                return
            if isinstance(path, (str, bytes, os.PathLike)):
                p = os.path.abspath(os.fsdecode(path))
                if p == ro or p.startswith(ro + os.sep):
                    raise PermissionError(13, "Permission denied", p)

        sys.addaudithook(read_only)
    if os.environ.get("LINKMODEL_TEST_NO_TMP") == "1":
        import tempfile
        tempfile.tempdir = os.path.join(ro, "tmp")  # no temporary folder is writable

    import numpy as np
    import fec

    assert fec.__file__.startswith(ro + os.sep), fec.__file__  # the read-only copy, not the checkout
    msgs = np.arange(2 * 514, dtype=np.int64).reshape(2, 514) % 1024
    words = fec.KP4.encode(msgs)
    words[:, [3, 100, 400]] ^= 5
    res = fec.KP4.decode(words)
    assert (res.messages == msgs).all() and (res.n_corrected == 3).all() and not res.failed.any()

    import phy

    bits = phy.signals.prbs(7, 254)
    assert (bits[:127] == bits[127:]).all() and int(bits[:127].sum()) == 64  # an m-sequence

    from fec import _kernels as fk
    from phy.serdes import _kernels as pk

    hits = sum(sum(k.stats.cache_hits.values()) for k in (fk.encode_batch, fk.decode_batch, pk.lfsr_bits))
    print("state", fec._numba_setup.state, fec._numba_setup.cache_dir)
    print("cache hits", hits)
    """
)


@pytest.fixture(scope="module")
def readonly_tree(tmp_path_factory):
    """The packages' sources in a read-only folder; yields ``(root, emulate)``."""
    root = tmp_path_factory.mktemp("readonly-install") / "site"
    for name in PACKAGES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run(["chmod", "-R", "a-w", str(root)], check=True)
    emulate = os.access(root / "fec", os.W_OK)  # root: permissions do not stop writes
    if emulate and not hasattr(sys, "addaudithook"):
        pytest.skip("running as root, and this Python has no audit hooks to make the copy read-only")
    yield root, emulate
    subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)  # so that pytest can remove it


def _run(root: Path, emulate: bool, **env_extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUMBA_")
           and k not in ("XDG_CACHE_HOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE")}
    env.update(
        HOME=str(root / "home"),  # does not exist, and the read-only tree cannot take it
        PYTHONPATH=str(root),
        LINKMODEL_TEST_READONLY=str(root),
        LINKMODEL_TEST_EMULATE="1" if emulate else "0",
    )
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", CHILD], cwd=root, env=env, capture_output=True, text=True,
                          timeout=180)


def _one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_read_only_install_caches_in_a_temporary_folder(readonly_tree, tmp_path):
    root, emulate = readonly_tree
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    first = _run(root, emulate, TMPDIR=str(tmp))
    line = _one_line(first)
    folder = tmp / f"linkmodel-numba-cache-{os.getuid()}"
    assert re.fullmatch(
        rf"linkmodel: NUMBA_CACHE_DIR is unset and the user cache {re.escape(str(root / 'home'))}\S* is "
        rf"not writable; the kernels are cached in {re.escape(str(folder))} instead \(set NUMBA_CACHE_DIR to "
        r"choose a folder\)", line), line
    assert f"state temporary {folder}" in first.stdout
    assert "cache hits 0" in first.stdout  # cold: compiled, then saved
    assert (folder.stat().st_mode & 0o777) == 0o700
    assert list(folder.rglob("*.nbi")) and list(folder.rglob("*.nbc"))
    assert not list(root.rglob("__pycache__"))  # nothing was written into the install
    # a second process finds the kernels in the same folder instead of compiling them
    second = _run(root, emulate, TMPDIR=str(tmp))
    assert _one_line(second) == line
    hits = int(re.search(r"cache hits (\d+)", second.stdout).group(1))
    assert hits >= 3, second.stdout


def test_no_writable_folder_at_all_turns_the_cache_off(readonly_tree):
    """NUMBA_CACHE_DIR set but unwritable, and no temporary folder either: it still runs."""
    root, emulate = readonly_tree
    proc = _run(root, emulate, NUMBA_CACHE_DIR=str(root / "numba-cache"), LINKMODEL_TEST_NO_TMP="1")
    line = _one_line(proc)
    assert re.fullmatch(
        rf"linkmodel: NUMBA_CACHE_DIR={re.escape(str(root / 'numba-cache'))} is not writable and the user cache .* is not "
        r"writable, and no temporary folder is writable: Numba's cache is off and the kernels compile in every "
        r"process \(seconds\); set NUMBA_CACHE_DIR to a writable folder", line), line
    assert "state off None" in proc.stdout and "cache hits 0" in proc.stdout


def test_this_process_caches_outside_the_tree():
    """Control: this checkout is writable, and still nothing is cached beside the sources."""
    import fec

    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES"):
        assert fec._numba_setup.state == "custom"
        return
    assert fec._numba_setup.state == "user"
    assert fec._numba_setup.cache_dir == fec._numba_setup.user_cache_folder()


def test_writable_install_caches_in_the_user_folder(tmp_path):
    """A writable install (as ``pip install .`` leaves site-packages) gets no Numba file in its
    tree: pip's uninstall would leave those folders behind, and a later editable install of the
    same packages would then import them as empty namespace packages (issue 31). The kernels go
    to ``linkmodel/numba`` in the user's cache folder, and a second process loads them from there."""
    root = tmp_path / "site"
    for name in PACKAGES:
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    xdg = tmp_path / "xdg"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(root), XDG_CACHE_HOME=str(xdg), PYTHONDONTWRITEBYTECODE="1",
               LINKMODEL_TEST_READONLY=str(root), LINKMODEL_TEST_EMULATE="0")

    def run():
        return subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=180)

    first = run()
    assert first.returncode == 0 and not first.stderr.strip(), first.stderr
    assert f"state user {xdg / 'linkmodel' / 'numba'}" in first.stdout
    assert not [p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")]  # nothing in the install
    assert not list(root.rglob("__pycache__"))
    entries = list((xdg / "linkmodel" / "numba").rglob("*.nbi"))
    assert entries and all(str(p.parent.name).startswith(("fec_", "serdes_")) for p in entries), entries
    second = run()
    assert int(re.search(r"cache hits (\d+)", second.stdout).group(1)) >= 3, second.stdout
