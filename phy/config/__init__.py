"""The input layer: the files a person writes (link, sweep and rack TOML files) and the
dicts they become, read and checked in one place before any work. A sweep file is a link
file with ``[sweep]``, ``[grid]`` and ``[zip]`` (:func:`phy.sweep.load_spec` reads it with
these pieces). Every problem raises :class:`phy.ConfigError` in one line naming the file,
the line and the key.

Public API
----------
The names in ``__all__``, reached as ``phy.config.NAME``:

- schemas: :data:`LINK_SCHEMA` (a link's and a sweep point's keys), :data:`RACK_SCHEMA`,
  each ``"section.name" -> (check, default, meaning)``; :data:`SPELLINGS` (other spellings
  a file may use for a key); :data:`DEFAULT_EQUALISATION`;
- links: :func:`load_link` and :func:`parse_link` (a file to a dict of keys),
  :func:`link_spec_from` (a dict to a :class:`phy.LinkSpec`), :func:`serdes_of` (the SerDes
  a file's ``link.equalisation`` names);
- racks: :func:`load_rack`, :func:`rack_defaults`;
- files: :func:`read_toml`.

Public namespaces
-----------------
:mod:`phy.config.checks`
    the checks of values (``Number``, ``Choice``, ``Text``, ``Boolean``, ``ListOf``), each
    saying what it accepts.
:mod:`phy.config.schema`
    the schemas, the ``[sweep]`` keys (``SWEEP_SCHEMA``) and the one reader of a file's
    sections (``read_sections``).
:mod:`phy.config.reference`
    ``docs/toml_reference.md`` rendered from the schemas (``python -m phy.config.reference``).

Private modules
---------------
``files``, ``link``, ``rack``: they hold what is re-exported here.
"""

from __future__ import annotations

from ..errors import ConfigError
from . import checks, schema
from .files import read_toml
from .link import load_link, link_spec_from, parse_link, serdes_of
from .rack import load_rack, rack_defaults
from .schema import DEFAULT_EQUALISATION, LINK_SCHEMA, RACK_SCHEMA, SPELLINGS


__all__ = [
    "DEFAULT_EQUALISATION",
    "LINK_SCHEMA",
    "RACK_SCHEMA",
    "SPELLINGS",
    "ConfigError",
    "checks",
    "link_spec_from",
    "load_link",
    "load_rack",
    "parse_link",
    "rack_defaults",
    "read_toml",
    "reference",
    "schema",
    "serdes_of",
]


def __getattr__(name: str):
    # the reference loads on first use, so ``python -m phy.config.reference`` runs it fresh
    if name == "reference":
        import importlib

        return importlib.import_module(f"{__name__}.reference")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
