"""The input layer: the files a person writes (link, sweep and rack TOML files) and the
dicts they become, read and checked in one place before any work.

Public API
----------
- Schemas: :data:`LINK_SCHEMA` (a link's and a sweep point's keys), :data:`RACK_SCHEMA`,
  each ``"section.name" -> (check, default, meaning)``; :data:`SPELLINGS` (other
  spellings a file may use); :data:`DEFAULT_EQUALISATION`. The checks are in
  :mod:`phy.config.checks`; ``docs/toml_reference.md`` is rendered from the schemas by
  :mod:`phy.config.reference`.
- Links: :func:`load_link` / :func:`parse_link` (a file to a dict of keys),
  :func:`link_spec_from` (a dict to a :class:`phy.LinkSpec`).
- Racks: :func:`load_rack`, :func:`rack_defaults`.
- Files: :func:`read_toml`, every message naming the file, the line and the key.

A sweep file is a link file with ``[sweep]``, ``[grid]`` and ``[zip]``
(:func:`phy.sweep.load_spec` reads it with these pieces). Every problem raises
:class:`phy.ConfigError` in one line.
"""

from __future__ import annotations

from ..errors import ConfigError
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
    "link_spec_from",
    "load_link",
    "load_rack",
    "parse_link",
    "rack_defaults",
    "read_toml",
    "serdes_of",
]
