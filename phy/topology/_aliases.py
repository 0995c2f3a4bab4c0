"""Deprecated names of bytes-per-second figures.

Until issue 23 several figures in bytes per second were named ``..._bps``, the suffix the
rest of the library keeps for bits per second (an 8x trap). They are now
``..._bytes_per_s``; the old attribute names and JSON keys stay for one release as
deprecated aliases (an attribute warns with :class:`DeprecationWarning`; a dict carries
both keys and lists the old ones under ``"deprecated_keys"``).
"""

from __future__ import annotations

from _linkmodel._renamed import renamed_keyword, renamed_property

#: Why the old names go: said in every warning.
WHY = "it holds bytes/s, not bits/s"


def add_aliases(cls, names: dict) -> None:
    """Give ``cls`` a deprecated property per ``{old: new}``."""
    for old, new in names.items():
        setattr(cls, old, renamed_property(old, new, WHY))


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
    kw = dict(kw)
    kw[new] = renamed_keyword(kw.get(new), kw.pop(old), old, new, where, ConfigError, WHY, stacklevel=5)
    return kw
