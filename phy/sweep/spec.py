"""Sweep specifications: a link file's keys (:mod:`phy.config`) with ``[sweep]``,
``[grid]`` and ``[zip]``, the grid and zip walked into points, and the key of a point."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from ..config.files import did_you_mean, parse_named, read_text, where
from ..config.link import (CHANNEL_KEYS, FILE_KEYS, LINK_SECTIONS, MEDIUM_CHECK_KEYS, check_param, file_path,
                           medium_of, read_link_sections)
from ..config.link import value as _get
from ..config.schema import DEFAULT_POINT_TIMEOUT_S, LINK_SCHEMA, SPELLINGS, SWEEP_SCHEMA, canonical
from ..errors import ConfigError

#: Every parameter a sweep's point knows: :data:`phy.config.LINK_SCHEMA` (``"section.name"``
#: -> (check, default, meaning)). A file may also spell a key as :data:`phy.config.SPELLINGS`
#: says; points, their keys and the stores hold the schema's spelling.
SCHEMA = LINK_SCHEMA
@dataclass(frozen=True)
class SweepSpec:
    """A parsed, validated sweep (see the module docstring); ``point_timeout_s`` in s."""

    name: str
    base: dict
    grid: dict
    zipped: dict
    executor: str = "processes"
    workers: int | None = None
    scheduler: str | None = None
    chunk: int = 8
    root: str = "."
    point_timeout_s: float = DEFAULT_POINT_TIMEOUT_S

    def to_dict(self) -> dict:
        return {"name": self.name, "base": dict(self.base), "grid": dict(self.grid), "zip": dict(self.zipped),
                "executor": self.executor, "workers": self.workers, "scheduler": self.scheduler, "chunk": self.chunk,
                "point_timeout_s": self.point_timeout_s}


def _first_repeat(values) -> tuple[int, int] | None:
    """``(i, j)``, 1-based, of the first value equal to an earlier one (``1 == 1.0``), or None."""
    seen: dict = {}
    for j, v in enumerate(values, 1):
        k = tuple(sorted(v.items())) if isinstance(v, dict) else v  # a table (an AMI model's parameters)
        if k in seen:
            return seen[k], j
        seen[k] = j
    return None


# ----------------------------------------------------------------------------- specs
def parse_spec(text: str, path: str | None = None, *, sweep: bool = True) -> SweepSpec:
    """Parse and validate a sweep (or, with ``sweep=False``, a single link: no grid or zip).

    Every unknown key, wrong type, value out of range, missing file, grid value or zip
    row given twice, and grid that cannot be walked raises :class:`phy.ConfigError`
    naming the file, the line and the key, before anything runs.

    Parameters
    ----------
    text : str
        The TOML text.
    path : str, optional
        The file it came from, named in messages; relative files are found from its
        folder (None: from the working directory).
    sweep : bool, optional
        A sweep (default True) or a single link (no ``[grid]`` or ``[zip]``).

    Returns
    -------
    SweepSpec
        The validated spec.
    """
    doc, root = parse_named(text, path, "spec")
    sections = ("sweep", *LINK_SECTIONS, *(("grid", "zip") if sweep else ()))
    base = read_link_sections(doc, path, text, root, sections)
    meta = {k.split(".", 1)[1]: base.pop(k) for k in list(base) if k in SWEEP_SCHEMA}
    lists = {"grid": {}, "zip": {}}
    for sec in lists:
        seen: dict = {}
        for k, vals in doc.get(sec, {}).items():
            at = where(path, text, sec, k)
            full = canonical(k, seen, at, k)
            if full not in SCHEMA:
                raise ConfigError(f"{at}: unknown parameter {full!r}{did_you_mean(full, SCHEMA)}")
            if not isinstance(vals, list) or not vals:
                raise ConfigError(f"{at} must be a non-empty list of values")
            for v in vals:
                check_param(full, v, at, root)
            lists[sec][full] = list(vals)
    _check_lists(lists, path, text)
    spec = SweepSpec(str(meta.get("name", Path(path).stem if path else "sweep")), base, lists["grid"], lists["zip"],
                     meta.get("executor", "processes"), meta.get("workers"), meta.get("scheduler"),
                     int(meta.get("chunk", 8)), root, float(meta.get("point_timeout_s", DEFAULT_POINT_TIMEOUT_S)))
    # every point must describe a medium the chain can build: checked on the distinct
    # combinations of the keys that decide it, not on every point (a grid of 10^6 points
    # has a handful of them)
    for p in iter_points(_projection(spec, MEDIUM_CHECK_KEYS)):
        medium_of(p)
    return spec


def _check_lists(lists: dict, path, text) -> None:
    """[grid] and [zip] must give each point once: no key in both, zip lists of one
    length, no value twice in a grid list (``1`` and ``1.0`` are one value) and no zip
    row twice. Refusing is clearer than merging: the file says what it sweeps."""
    both = set(lists["grid"]) & set(lists["zip"])
    if both:
        k = min(both)
        raise ConfigError(f"{where(path, text, 'zip', k)}: {k!r} is in both [grid] and [zip]")
    for k, vals in lists["grid"].items():
        rep = _first_repeat(vals)
        if rep:
            i, j = rep
            raise ConfigError(f"{where(path, text, 'grid', k)}: value {j} ({vals[j - 1]!r}) repeats value {i} "
                              f"({vals[i - 1]!r}); each grid value must be distinct")
    zk = list(lists["zip"])
    if zk and len({len(v) for v in lists["zip"].values()}) != 1:
        sizes = {k: len(v) for k, v in lists["zip"].items()}
        raise ConfigError(f"{path or 'spec'}: [zip] lists must have one length, got {sizes}")
    rows = list(zip(*(lists["zip"][k] for k in zk)))
    rep = _first_repeat(rows)
    if rep:
        i, j = rep
        raise ConfigError(f"{where(path, text, 'zip', zk[0])}: row {j} {dict(zip(zk, rows[j - 1]))} repeats row {i}; "
                          f"each zip row must be a distinct point")


def load_spec(path, *, sweep: bool = True) -> SweepSpec:
    """Read and parse a sweep file (or, with ``sweep=False``, a link file).

    Every problem with the path or the file (see :func:`parse_spec`) raises
    :class:`phy.ConfigError` with a one-line message.

    Parameters
    ----------
    path : str or os.PathLike
        The TOML file.
    sweep : bool, optional
        A sweep (default True) or a single link, as :func:`parse_spec`.

    Returns
    -------
    SweepSpec
        The validated spec.
    """
    name, text = read_text(path, "spec file")
    return parse_spec(text, name, sweep=sweep)


def _zip_rows(spec: SweepSpec) -> list[tuple]:
    zk = list(spec.zipped)
    return list(zip(*(spec.zipped[k] for k in zk))) if zk else [()]


def _point(spec: SweepSpec, combo: tuple, zrow: tuple) -> dict:
    p = dict(spec.base)
    p.update(zip(spec.grid, combo))
    p.update(zip(spec.zipped, zrow))
    p["_root"] = spec.root
    return p


def iter_points(spec: SweepSpec):
    """The points of the sweep one at a time, in :func:`points`'s order (the first grid
    key varies slowest, the zip rows fastest), without building the list.

    Parameters
    ----------
    spec : SweepSpec
        The parsed sweep (:func:`parse_spec`, :func:`load_spec`).

    Yields
    ------
    dict
        Each point: the base overridden by one grid combination and one zip row.
    """
    zrows = _zip_rows(spec)
    for combo in product(*spec.grid.values()):
        for zr in zrows:
            yield _point(spec, combo, zr)


def points(spec: SweepSpec) -> list[dict]:
    """Every point of the sweep: the base overridden by one grid combination and one zip row.

    Parameters
    ----------
    spec : SweepSpec
        The parsed sweep (:func:`parse_spec`, :func:`load_spec`).

    Returns
    -------
    list of dict
        The points, in :func:`iter_points`'s order.
    """
    return list(iter_points(spec))


def count_points(spec: SweepSpec) -> int:
    """How many points the sweep has, by multiplication (nothing enumerated): the grid's
    list lengths multiplied, times the zip's rows.

    Parameters
    ----------
    spec : SweepSpec
        The parsed sweep (:func:`parse_spec`, :func:`load_spec`).

    Returns
    -------
    int
        The number of points.
    """
    return math.prod(len(v) for v in spec.grid.values()) * len(_zip_rows(spec))


def point_at(spec: SweepSpec, i: int) -> dict:
    """Point ``i`` (0-based) of :func:`points`, built alone (mixed-radix digits of ``i``).

    Parameters
    ----------
    spec : SweepSpec
        The parsed sweep (:func:`parse_spec`, :func:`load_spec`).
    i : int
        The point's index, 0 to ``count_points(spec) - 1``.

    Returns
    -------
    dict
        The point.
    """
    n = count_points(spec)
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        raise ConfigError(f"sweep {spec.name!r} has points 0 to {n - 1}, got {i!r}")
    zrows = _zip_rows(spec)
    i, r = divmod(i, len(zrows))
    combo = []
    for vals in reversed(list(spec.grid.values())):
        i, d = divmod(i, len(vals))
        combo.append(vals[d])
    return _point(spec, tuple(reversed(combo)), zrows[r])


def _projection(spec: SweepSpec, keys) -> SweepSpec:
    """The sweep over ``keys`` alone: its other grid keys dropped, its zip rows cut to
    ``keys`` with repeats dropped. Its points are the distinct combinations of ``keys``
    among the sweep's points."""
    from dataclasses import replace

    zk = [k for k in spec.zipped if k in keys]
    rows = list(dict.fromkeys(tuple(spec.zipped[k][j] for k in zk) for j in range(len(_zip_rows(spec)))))
    return replace(spec, grid={k: v for k, v in spec.grid.items() if k in keys},
                   zipped={k: [r[i] for r in rows] for i, k in enumerate(zk)} if zk else {})


def point_key(p: dict) -> str:
    """A stable hash of a point's parameters (defaults filled in, so spelling a default
    out does not make a new point).

    Parameters
    ----------
    p : dict
        The point (a ``channel.file`` is taken from its ``_root``).

    Returns
    -------
    str
        The first 20 hex digits of the SHA-256 of its full parameters.
    """
    full = {_KEY_NAMES.get(k, k): p.get(k, SCHEMA[k][1]) for k in SCHEMA if k not in _GIVEN_ONLY or k in p}
    for k in FILE_KEYS:
        if full.get(k):
            full[k] = str(file_path(full[k], p.get("_root", ".")))
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()[:20]


# ----------------------------------------------------------------------------- one point
#: The names a point's key hashes (:func:`point_key`): the schema's names, except where a
#: key was respelt after stores were written (:data:`phy.config.SPELLINGS`, the older
#: spelling of each), so that a store written before resumes its points.
_KEY_NAMES = {new: old for old, new in SPELLINGS.items()}
#: Keys a point's key hashes only when the point gives them: those added after stores were
#: written (the IBIS-AMI models' sections), so that a store written before resumes its points.
_GIVEN_ONLY = frozenset(k for k in SCHEMA if k.startswith(("tx_ami.", "rx_ami.")))
#: What a point's channel (or optics) and its eye depend on (:func:`medium_key`).
MEDIUM_KEYS = (*CHANNEL_KEYS, "optics.kind", "optics.length_m", "optics.rin_db_per_hz", "link.lane_rate_gbps",
               "link.modulation", "link.equalisation", "serdes.rx_impairments")


def medium_key(p: dict) -> str:
    """What a point's channel (or optics) and its eye depend on besides the FEC and the
    framing: its medium, the rate, the modulation and the equalisation. Points with the
    same key share the channel a worker builds and the eye it computes."""
    return json.dumps([_get(p, k) for k in MEDIUM_KEYS], default=str)
