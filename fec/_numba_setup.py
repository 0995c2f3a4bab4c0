"""Where Numba caches the compiled kernels: a user cache folder, never the install tree.

The project's kernels are ``@njit(cache=True)``. Left to itself, Numba caches a kernel in
the ``__pycache__`` folder beside its source file whenever that folder is writable, which
for a ``pip install`` (not editable) is ``site-packages/phy/**/__pycache__``. pip's
uninstall removes only the files it installed, so those folders stay behind holding
Numba's ``.nbi``/``.nbc`` files; a later editable install of the same packages then finds
``site-packages/phy`` and ``site-packages/fec`` as folders without ``__init__.py``, which
Python imports as empty namespace packages ahead of the editable finder (``cannot import
name 'ComParams' from 'phy.engines.com' (unknown location)``). The README's own order --
the quick start (``pip install '.[plots]' && linkmodel demo``) then the test command
(``pip install -e '.[test]'``) in the same environment -- broke that way (issue 31).

So this module, imported first by ``fec/__init__.py`` and ``phy/__init__.py`` (before any
kernel module is decorated), adds one cache locator to Numba's list, for the kernels of
this project only (source files under the ``fec`` and ``phy`` folders beside it), ahead of
the in-tree one. It places them, in order of preference:

1. where the user said, ``NUMBA_CACHE_DIR`` (Numba's own first locator, left first);
2. ``linkmodel/numba`` in the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache`` on
   Linux, as Numba's own user-wide cache is found), state ``"user"``;
3. a private folder in the temporary directory, ``<tmp>/linkmodel-numba-cache-<uid>``,
   when the user cache is not writable (a read-only install run by a user with no
   writable home), state ``"temporary"``, with one line saying so;
4. nowhere: caching is turned off for these kernels (they compile in every process, a few
   seconds each run), state ``"off"``, with one line saying so.

The install tree is never written. Under a folder, Numba keeps one sub-folder per source
folder, named after its full path (``get_suitable_cache_subpath``), so two installs (a
checkout and a site-packages copy) never share entries, and each entry is keyed by its
source file's content hash, so an edited file compiles again. Other code's ``cache=True``
functions are left to Numba. Nothing changes when the user chose the locators
(``NUMBA_CACHE_LOCATOR_CLASSES``).

The line goes to the ``linkmodel`` logger, not to :func:`warnings.warn`: a warning at
import time becomes an import error under ``python -W error`` or pytest's
``filterwarnings = error``, turning a harmless fallback into a broken program. With no
logging configured, Python's last-resort handler prints exactly the message on stderr;
``logging.getLogger("linkmodel").setLevel(logging.ERROR)`` silences it.

The temporary folder is created with mode 0o700 and used only if this user owns it and
nobody else may write to it: Numba's cache files are pickles, and loading pickles from a
folder another user controls would run that user's code. When a folder of that name
exists but fails the check, a fresh private one is made with :func:`tempfile.mkdtemp`.

Attributes
----------
state : str
    ``"custom"`` (``NUMBA_CACHE_DIR`` or the user's own locators), ``"user"``,
    ``"temporary"`` or ``"off"``.
cache_dir : str or None
    The folder the kernels are cached under (None when ``"custom"`` or ``"off"``).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

from numba.core import caching, config, dispatcher

__all__ = ["KERNEL_PACKAGES", "cache_dir", "configure", "state", "user_cache_folder"]

KERNEL_PACKAGES = ("channels", "fec", "phy")  # the packages holding @njit(cache=True) kernels
_ROOT = Path(__file__).resolve().parent.parent
_KERNEL_ROOTS = tuple(str(_ROOT / name) + os.sep for name in KERNEL_PACKAGES)  # _ROOT is resolved
_log = logging.getLogger("linkmodel")

state = "custom"
cache_dir: str | None = None
_configured = False


def _ours(py_file) -> bool:
    """Whether ``py_file`` is a source file of this project's kernel packages."""
    try:
        path = os.path.realpath(os.fspath(py_file))
    except (TypeError, ValueError):
        return False
    return path.startswith(_KERNEL_ROOTS)


class _ProjectCacheLocator(caching.UserWideCacheLocator):
    """Numba locator for this project's kernels: ``<cache_dir>/<source folder tag>``.

    Returns no locator for other files, or when no folder was found (then the dispatcher
    patch below leaves the kernel uncached rather than letting Numba write into the tree).
    """

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir, self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if cache_dir is None or not _ours(py_file):
            return None
        return super().from_function(py_func, py_file)


def user_cache_folder() -> str:
    """``linkmodel/numba`` in the user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``,
    on Linux; the platform's user cache elsewhere), found as Numba finds its own."""
    from numba.misc.appdirs import AppDirs

    return os.path.join(AppDirs(appname="linkmodel", appauthor=False).user_cache_dir, "numba")


def _writable_folder(path: str) -> bool:
    """Create ``path`` if needed (mode 0o700) and check that it takes a file."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


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


def _user_dir_usable() -> bool:
    """Whether Numba's first locator (``NUMBA_CACHE_DIR``) takes the kernels."""
    return bool(config.CACHE_DIR) and _writable_folder(config.CACHE_DIR)


def _install() -> None:
    """Put the project's locator after ``NUMBA_CACHE_DIR``'s and before the in-tree one, and
    make ``cache=True`` compile uncached (never in the tree) where it finds no folder."""
    classes = caching.CacheImpl._locator_classes
    if _ProjectCacheLocator not in classes:
        at = 1 if classes and classes[0] is caching.UserProvidedCacheLocator else 0
        classes.insert(at, _ProjectCacheLocator)
    original = dispatcher.Dispatcher.enable_caching
    if getattr(original, "_linkmodel_fallback", False):
        return

    def enable_caching(self):
        py_func = getattr(self, "py_func", None)
        if state == "off" and py_func is not None and _ours(getattr(py_func.__code__, "co_filename", "")):
            return  # the dispatcher keeps the NullCache it was created with: compiled in memory only
        try:
            original(self)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise

    enable_caching._linkmodel_fallback = True
    dispatcher.Dispatcher.enable_caching = enable_caching


def configure() -> str:
    """Choose the folder (module docstring) and install the locator; returns :data:`state`.

    Runs once at import; later calls return the state chosen then.
    """
    global state, cache_dir, _configured
    if _configured:
        return state
    _configured = True
    if config.CACHE_LOCATOR_CLASSES:
        state = "custom"  # the user chose the locators
        return state
    if _user_dir_usable():
        state = "custom"
        _install()  # our locator comes after NUMBA_CACHE_DIR's, which takes every kernel
        return state
    env = os.environ.get("NUMBA_CACHE_DIR", "")
    said = f"NUMBA_CACHE_DIR={env} is not writable" if env else "NUMBA_CACHE_DIR is unset"
    user = user_cache_folder()
    if _writable_folder(user):
        state, cache_dir = "user", user
        if env:
            _log.warning("linkmodel: %s; the kernels are cached in %s instead", said, user)
        _install()
        return state
    why = f"{said} and the user cache {user} is not writable"
    folder = _temporary_folder()
    if folder is not None:
        state, cache_dir = "temporary", folder
        _install()
        _log.warning("linkmodel: %s; the kernels are cached in %s instead (set NUMBA_CACHE_DIR to choose a "
                     "folder)", why, folder)
        return state
    state, cache_dir = "off", None
    _install()
    _log.warning("linkmodel: %s, and no temporary folder is writable: Numba's cache is off and the kernels "
                 "compile in every process (seconds); set NUMBA_CACHE_DIR to a writable folder", why)
    return state


configure()
