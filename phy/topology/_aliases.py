"""Deprecated names of bytes-per-second figures.

Until issue 23 several figures in bytes per second were named ``..._bps``, the suffix the
rest of the library keeps for bits per second (an 8x trap). They are now
``..._bytes_per_s``; the old attribute names and JSON keys stay for one release as
deprecated aliases (an attribute warns with :class:`DeprecationWarning`; a dict carries
both keys and lists the old ones under ``"deprecated_keys"``).
"""

from __future__ import annotations

import warnings


def deprecated_attribute(old: str, new: str) -> property:
    """A read-only property ``old`` returning attribute ``new``, with a DeprecationWarning."""

    def get(self):
        warnings.warn(f"{type(self).__name__}.{old} is deprecated (it holds bytes/s, not bits/s): use .{new}",
                      DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Deprecated alias of :attr:`{new}` (bytes/s; ``_bps`` means bits/s).")


def add_aliases(cls, names: dict) -> None:
    """Give ``cls`` a deprecated property per ``{old: new}``."""
    for old, new in names.items():
        setattr(cls, old, deprecated_attribute(old, new))


def with_key_aliases(d: dict, names: dict) -> dict:
    """``d`` with each ``{old: new}`` key ``old`` copied from ``new`` (when present) and the
    old keys listed under ``"deprecated_keys"`` (old -> new)."""
    dep = {old: new for old, new in names.items() if new in d}
    for old, new in dep.items():
        d[old] = d[new]
    if dep:
        d["deprecated_keys"] = {**d.get("deprecated_keys", {}), **dep}
    return d


def keyword_alias(kw: dict, old: str, new: str, where: str):
    """Move a deprecated keyword ``old`` of ``kw`` to ``new`` (warning); a ConfigError
    when both are given."""
    from ..errors import ConfigError

    if old not in kw:
        return kw
    if kw.get(new) is not None:
        raise ConfigError(f"{where}: give {new} (bytes/s) only, not also the deprecated {old}")
    warnings.warn(f"{where}: {old} is deprecated (it is bytes/s, not bits/s): use {new}", DeprecationWarning,
                  stacklevel=3)
    kw = dict(kw)
    kw[new] = kw.pop(old)
    return kw
