"""Compile a test AMI model (``tests/ami_models/<name>.c``) into a shared library.

``build(name)`` runs ``cc -O2 -shared -fPIC -std=c99 -o lib<name>.so <name>.c -lm`` once
per source text: the library is kept under the temporary folder in a folder named by the
SHA-256 of the compiler, its flags, the source and the headers beside it (``*.h``), so later runs (and other tests) reuse
it. Concurrent builds are safe: each compiles to a temporary name and moves it into place
with :func:`os.replace`, which is atomic. A test that needs a compiler calls
:func:`compiler_or_skip` (or catches :class:`NoCompiler`) and is skipped where there is none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["HERE", "NoCompiler", "build", "compiler", "compiler_or_skip", "model_folder"]

HERE = Path(__file__).resolve().parent
CFLAGS = ("-O2", "-shared", "-fPIC", "-std=c99")
LIBS = ("-lm",)
CACHE = Path(tempfile.gettempdir()) / "linkmodel-ami-models"


class NoCompiler(RuntimeError):
    """There is no C compiler (``cc``) on the ``PATH``."""


def compiler() -> str:
    """The C compiler's path; :class:`NoCompiler` when ``cc`` is not on the ``PATH``."""
    cc = shutil.which("cc")
    if cc is None:
        raise NoCompiler("no C compiler: 'cc' is not on the PATH")
    return cc


def compiler_or_skip() -> str:
    """The C compiler's path, or skip the calling pytest test when there is none."""
    import pytest

    try:
        return compiler()
    except NoCompiler as exc:
        pytest.skip(f"the AMI test models need a C compiler: {exc}")


def build(name: str, out_dir: Path | None = None) -> Path:
    """The shared library of ``tests/ami_models/<name>.c``, compiled if not already.

    Parameters
    ----------
    name : str
        The model's source name, without ``.c``.
    out_dir : Path, optional
        Where the library is put (``lib<name>.so``); by default the cache folder.

    Returns
    -------
    Path
        The library.

    Raises
    ------
    NoCompiler
        There is no ``cc``.
    RuntimeError
        The compiler refused the source (its messages follow).
    """
    cc = compiler()
    source = HERE / f"{name}.c"
    text = source.read_bytes()
    headers = [h.read_bytes() for h in sorted(HERE.glob("*.h"))]
    key = hashlib.sha256(b"\0".join([cc.encode(), *(f.encode() for f in CFLAGS + LIBS), text, *headers]))
    key = key.hexdigest()[:24]
    cached = CACHE / key / f"lib{name}.so"
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        _compile(cc, source, cached)
    if out_dir is None:
        return cached
    out = Path(out_dir) / cached.name
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    shutil.copyfile(cached, tmp)
    os.replace(tmp, out)
    return out


def model_folder(dest: Path, names, ibs: str | None = None) -> Path:
    """A folder as a vendor ships models: each of ``names`` as ``<name>.so`` beside its
    ``<name>.ami``, and the ``.ibs`` file ``ibs`` naming them (when given). Skips the calling
    test where there is no compiler."""
    compiler_or_skip()
    dest = Path(dest)
    for name in names:
        shutil.copy(build(name), dest / f"{name}.so")
        shutil.copy(HERE / f"{name}.ami", dest / f"{name}.ami")
    if ibs is not None:
        shutil.copy(HERE / ibs, dest / ibs)
    return dest


def _compile(cc: str, source: Path, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        run = subprocess.run([cc, *CFLAGS, "-o", tmp, str(source), *LIBS], capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"cc could not compile {source.name}:\n{run.stderr.strip()}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
