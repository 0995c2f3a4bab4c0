"""A rack file (:data:`RACK_SCHEMA`): read, checked key by key with the file's line, over
the defaults. ``linkmodel rack`` then checks it as a whole and builds it
(:mod:`phy.cli.rack`)."""

from __future__ import annotations

from .files import read_toml
from .schema import RACK_SCHEMA, defaults, read_sections


def rack_defaults() -> dict:
    """Every key of :data:`RACK_SCHEMA` at its default: ``linkmodel rack`` on an empty file
    (the NVL72 rack the demo rolls up).

    Returns
    -------
    dict
        ``{"section.name": default}``.
    """
    return defaults(RACK_SCHEMA)


def load_rack(path) -> dict:
    """A rack file's settings over the defaults of :data:`RACK_SCHEMA`.

    Parameters
    ----------
    path : str or os.PathLike
        The rack file (TOML; an empty one is the demo's NVL72).

    Returns
    -------
    dict
        ``{"section.name": value}``: every key of the schema, the file's value or its default.

    Raises
    ------
    phy.ConfigError
        For anything else, naming the file, the line and the key (an unknown section or
        key with the keys known and the nearest one, a wrong type, a value out of range).
    """
    path, text, doc = read_toml(path, "rack file")
    return {**rack_defaults(), **read_sections(doc, RACK_SCHEMA, path, text)}
