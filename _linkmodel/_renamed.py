"""Old names kept as deprecated aliases of renamed ones: the one mechanism of every rename
(issue 34's spellings, issue 23's bytes-per-second names, a moved function).

linkmodel spells the British way (equalise, fibre, quantise, normalise) and names units
in full (``_bytes_per_s``, ``_bps`` for bits); the names it used before stay for one
release and warn with :class:`DeprecationWarning` naming the new one (and, with ``why``,
the reason). Each alias hands back the very object (or value) of the new name, so
code on the old name works identically (``tests/test_spelling.py`` lists every alias).
"""

from __future__ import annotations

import sys
import warnings


def warn_renamed(old: str, new: str, stacklevel: int = 3, why: str = "") -> None:
    """Warn (:class:`DeprecationWarning`) that ``old`` is now ``new`` (``why``: the reason,
    said in the message); ``stacklevel`` 3 points at the caller of the function that calls
    this."""
    because = f" ({why})" if why else ""
    warnings.warn(f"{old} is deprecated{because}: use {new} (the old name goes in a later release)",
                  DeprecationWarning, stacklevel=stacklevel)


def module_getattr(module: str, renamed: dict):
    """A module ``__getattr__`` giving each old name of ``renamed`` (``{old: new}``) the
    module's attribute ``new``, with a warning; other names fail as usual."""

    def __getattr__(name: str):
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_renamed(f"{module}.{name}", f"{module}.{new}")
        return getattr(sys.modules[module], new)

    return __getattr__


def renamed_property(old: str, new: str, why: str = "") -> property:
    """A read-only property ``old`` returning attribute ``new``, with a warning."""

    def get(self):
        warn_renamed(f"{type(self).__name__}.{old}", f".{new}", why=why)
        return getattr(self, new)

    return property(get, doc=f"Deprecated name of :attr:`{new}`{f' ({why})' if why else ''}.")


def renamed_keyword(new_value, old_value, old: str, new: str, where: str, error: type[ValueError],
                    why: str = "", stacklevel: int = 4):
    """The value of keyword ``new`` when the caller may have given the deprecated ``old``
    instead (``None`` meaning not given): ``old_value`` with a warning, ``error`` when both.
    ``stacklevel`` 4 points at the caller of the function that calls this."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise error(f"{where}: give {new} only, not also the deprecated {old}")
    warn_renamed(f"{where}({old}=...)", f"{new}=", stacklevel=stacklevel, why=why)
    return old_value
