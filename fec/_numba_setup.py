"""Where Numba caches the compiled kernels, also on a read-only install.

The project's kernels are ``@njit(cache=True)``. When a kernel is decorated, Numba looks
for a folder to cache it in, trying its locators in order
(``numba.core.caching.CacheImpl._locator_classes``): ``numba.config.CACHE_DIR``
(``NUMBA_CACHE_DIR``) if set and writable, the ``__pycache__`` beside the source file if
writable, the user-wide cache (``~/.cache/numba``, or under ``$XDG_CACHE_HOME``) if
writable, then IPython and zip special cases. When none works -- a package installed
read-only (system site-packages, a container image, a Nix store) run by a user whose
home is missing or read-only -- the decoration raises ``RuntimeError: cannot cache
function ...: no locator available for file ...`` and ``import fec`` fails.

This module is imported first by ``fec/__init__.py`` and ``phy/__init__.py``, before any
kernel module. It asks Numba's own locators, the way the decoration will, whether each
folder of the ``fec`` and ``phy`` packages can take a cache. If one cannot, it points
``numba.config.CACHE_DIR`` and ``NUMBA_CACHE_DIR`` (so that worker processes share it)
at a private folder in the temporary directory, ``<tmp>/linkmodel-numba-cache-<uid>``.
If no temporary folder is writable either, caching is turned off for the functions Numba
cannot place (they then compile in every process, a few seconds each run). Either way one
line says so. Nothing changes when Numba's own choice works, or when the user chose the
locators (``NUMBA_CACHE_LOCATOR_CLASSES``).

The line goes to the ``linkmodel`` logger, not to :func:`warnings.warn`: a warning at
import time becomes an import error under ``python -W error`` or pytest's
``filterwarnings = error``, turning a harmless fallback into a broken program, and the
warning display adds the source line (two lines). With no logging configured, Python's
last-resort handler prints exactly the message on stderr; an application that configures
logging gets it in its logs; ``logging.getLogger("linkmodel").setLevel(logging.ERROR)``
silences it.

The temporary folder is created with mode 0o700 and used only if this user owns it and
nobody else may write to it: Numba's cache files are pickles, and loading pickles from a
folder another user controls would run that user's code. When a folder of that name
exists but fails the check, a fresh private one is made with :func:`tempfile.mkdtemp`.

Attributes
----------
state : str
    ``"default"`` (Numba's own choice works, nothing was changed), ``"temporary"`` (the
    cache is in :data:`cache_dir`) or ``"off"``.
cache_dir : str or None
    The temporary cache folder when :data:`state` is ``"temporary"``.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

from numba.core import caching, config, dispatcher

__all__ = ["KERNEL_PACKAGES", "cache_dir", "configure", "state"]

KERNEL_PACKAGES = ("fec", "phy")  # the packages holding @njit(cache=True) kernels
_ROOT = Path(__file__).resolve().parent.parent
_log = logging.getLogger("linkmodel")

state = "default"
cache_dir: str | None = None


def _probe():  # the function Numba's locators are asked to place; never called
    return None


def _kernel_files() -> list[Path]:
    """One source file per folder of the kernel packages (the cache folder depends only on
    the folder of the source file)."""
    out = []
    for name in KERNEL_PACKAGES:
        top = _ROOT / name
        if not (top / "__init__.py").is_file():
            continue
        for folder, subdirs, files in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__" and not d.startswith("."))
            if "__init__.py" in files:
                out.append(Path(folder) / "__init__.py")
    return out


def _can_cache(py_file: Path) -> bool:
    """Would Numba find a cache folder for a kernel defined in ``py_file``? Its own locators,
    in its own order (they create the folder and test it with a temporary file, as the
    decoration does)."""
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not classes:
        return True  # a Numba whose machinery is unknown: leave the choice to it
    for cls in classes:
        try:
            if cls.from_function(_probe, str(py_file)) is not None:
                return True
        except Exception:  # a locator that cannot even look does not place the kernel
            continue
    return False


def _user_cache() -> str:
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _why(folder: Path) -> str:
    """Why Numba has nowhere to cache the kernels of ``folder``, in the order it tries."""
    env = os.environ.get("NUMBA_CACHE_DIR", "")
    user = "NUMBA_CACHE_DIR is unset" if not env else f"NUMBA_CACHE_DIR={env} is not writable"
    return (f"Numba cannot cache the compiled kernels beside them ({folder / '__pycache__'} is not "
            f"writable), {user} and the user cache {_user_cache()} is not writable")


def _owner_tag() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # no user name either: one shared name, checked like the others
        return "user"


def _private_writable(path: str) -> bool:
    """A real directory (not a link) that this user owns, nobody else may write, and that takes a file."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        return False
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _temporary_folder() -> str | None:
    """``<tmp>/linkmodel-numba-cache-<uid>``, or a fresh private folder in ``<tmp>``; None when
    no temporary directory takes either."""
    try:
        base = tempfile.gettempdir()
    except (OSError, FileNotFoundError):
        return None
    path = os.path.join(base, f"linkmodel-numba-cache-{_owner_tag()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    if _private_writable(path):
        return path
    try:
        return tempfile.mkdtemp(prefix="linkmodel-numba-cache-", dir=base)
    except OSError:
        return None


def _cache_only_where_possible() -> None:
    """Make ``cache=True`` compile without a cache where Numba finds no locator, instead of
    raising. Only that failure is caught: every function Numba can place is still cached."""
    original = dispatcher.Dispatcher.enable_caching
    if getattr(original, "_linkmodel_fallback", False):
        return

    def enable_caching(self):
        try:
            original(self)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
            # the dispatcher keeps the NullCache it was created with: compiled in memory only

    enable_caching._linkmodel_fallback = True
    dispatcher.Dispatcher.enable_caching = enable_caching


def configure() -> str:
    """Check the kernel folders and fall back if Numba could not cache them (module docstring).

    Returns the :data:`state`; runs once at import, and again only if called.
    """
    global state, cache_dir
    if config.CACHE_LOCATOR_CLASSES or state != "default":
        return state
    blocked = [f for f in _kernel_files() if not _can_cache(f)]
    if not blocked:
        return state
    why = _why(blocked[0].parent)
    folder = _temporary_folder()
    if folder is not None:
        before = (config.CACHE_DIR, os.environ.get("NUMBA_CACHE_DIR"))
        config.CACHE_DIR = folder
        os.environ["NUMBA_CACHE_DIR"] = folder
        if all(_can_cache(f) for f in blocked):
            state, cache_dir = "temporary", folder
            _log.warning("linkmodel: %s; the kernels are cached in %s instead (set NUMBA_CACHE_DIR to "
                         "choose a folder)", why, folder)
            return state
        config.CACHE_DIR = before[0]
        if before[1] is None:
            del os.environ["NUMBA_CACHE_DIR"]
        else:
            os.environ["NUMBA_CACHE_DIR"] = before[1]
    _cache_only_where_possible()
    state = "off"
    _log.warning("linkmodel: %s, and no temporary folder is writable: Numba's cache is off and the kernels "
                 "compile in every process (seconds); set NUMBA_CACHE_DIR to a writable folder", why)
    return state


configure()
