"""Sweep specifications: the parameter schema, reading TOML files safely, the grid and
zip walked into points, and the key of a point."""

from __future__ import annotations

import difflib
import errno
import hashlib
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from ..errors import ConfigError

#: The default time limit of one point (s); see :func:`phy.sweep.run_sweep` for why 60 s.
DEFAULT_POINT_TIMEOUT_S = 60.0


# ----------------------------------------------------------------------------- schema
def _num(lo=None, hi=None, positive=False, integer=False):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return "a number"
        if integer and not float(v).is_integer():
            return "a whole number"
        if not math.isfinite(v) or (positive and v <= 0) or (lo is not None and v < lo) or (hi is not None and v > hi):
            rules = (["> 0"] if positive else []) + ([f">= {lo:g}"] if lo is not None else []) + (
                [f"<= {hi:g}"] if hi is not None else [])
            return "a finite number" + (" " + " and ".join(rules) if rules else "")
        return None
    return check


def _choice(*opts):
    def check(v):
        return None if isinstance(v, str) and v in opts else "one of " + ", ".join(repr(o) for o in opts)
    return check


def _string(v):
    return None if isinstance(v, str) and v else "a non-empty string"


def _boolean(v):
    return None if isinstance(v, bool) else "true or false"


#: Every parameter a sweep knows: "section.name" -> (check, default, description)
SCHEMA: dict = {
    "channel.kind": (_choice("twinax", "stripline", "library", "touchstone", "none"), "twinax",
                     "the electrical medium ('none' with [optics])"),
    "channel.length_m": (_num(positive=True, hi=100.0), 1.0, "cable or trace length (m)"),
    "channel.awg": (_num(lo=20, hi=40), 26, "twinax wire gauge (AWG)"),
    "channel.connectors": (_boolean, True, "a connector at each end (twinax, stripline)"),
    "channel.name": (_string, "twinax_1m_26awg", "a built-in channel (kind = library)"),
    "channel.file": (_string, None, "a Touchstone file (kind = touchstone), relative to the spec"),
    "channel.thru": (_choice("auto", "12_34", "13_24", "14_23"), "auto", "4-port order of the file"),
    "channel.host": (_choice("none", "pcb", "flyover"), "none",
                     "twinax: host boards (125 mm) or flyovers at each end, with the plugs' paddle cards"),
    "channel.crosstalk": (_boolean, False, "twinax: the cable's neighbours as aggressors (2 NEXT, 3 FEXT)"),
    "optics.kind": (_choice("none", "dsp", "lpo", "cpo"), "none", "an optical link class instead of copper"),
    "optics.length_m": (_num(positive=True, hi=1e5), 100.0, "fibre length (m)"),
    "optics.rin_db_per_hz": (_num(lo=-200, hi=-100), None, "laser RIN (dB/Hz); default the class's"),
    "link.lanes": (_num(lo=1, hi=1024, integer=True), 1, "lanes per direction"),
    "link.lane_rate_gbps": (_num(positive=True, hi=2000), 212.5, "line rate per lane (Gb/s)"),
    "link.modulation": (_choice("pam4", "nrz"), "pam4", "modulation"),
    "link.fec": (_choice("KP4", "KR4", "LL272", "none"), "KP4", "FEC code or none"),
    "link.interleave": (_num(lo=1, hi=64, integer=True), 1, "codewords interleaved"),
    "link.precoding": (_boolean, False, "1/(1+D) mod 4 precoder"),
    "link.retry": (_boolean, False, "link-level retry (32-bit CRC, 256-byte flits)"),
    "link.target_ber": (_num(positive=True, hi=0.5), 1e-13, "delivered BER target"),
    "link.equalization": (_choice("com", "preset"), "com", "COM-proposed (eye decides) or a fixed preset; also spelled equalisation"),
    "link.switch_ports": (_num(lo=0, hi=16, integer=True), 0, "switch ports in the path (200 ns each)"),
    "link.required_margin_db": (_num(lo=-20, hi=40), None, "margin a link needs (dB); default 3 dB, COM's"),
    "serdes.rx_impairments": (_choice("none", "adc_dsp_224g"), "none",
                              "a real receiver's ADC, taps and clock (phy.Impairments preset)"),
}
#: Input spellings a sweep or link file takes for a parameter: ``"section.name"`` -> the
#: schema's key, the one the points, their keys and the stores hold (outputs spell
#: "equalisation"). A spelling and its key given together are refused.
SPELLINGS = {"link.equalisation": "link.equalization"}
#: The schemes of a Dask scheduler's address (``distributed.comm``'s transports).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                   r"[A-Za-z0-9])?)*\.?")


def _scheduler(v):
    """A Dask scheduler address as Dask reads it: ``[scheme://]host:port`` (scheme one of
    :data:`SCHEDULER_SCHEMES`, default tcp; host a name, an IPv4 address or ``[IPv6]``;
    port 1 to 65535), or ``inproc://host/pid/n``. Checked before anything is contacted."""
    want = ("a Dask scheduler address such as 'tcp://10.0.0.5:8786' ([scheme://]host:port, scheme one of "
            + ", ".join(SCHEDULER_SCHEMES) + ")")
    if not isinstance(v, str) or not v or len(v) > 300 or not v.isprintable() or any(c.isspace() for c in v):
        return want
    scheme, sep, loc = v.partition("://")
    if not sep:
        scheme, loc = "tcp", v
    if scheme not in SCHEDULER_SCHEMES:
        return want
    if scheme == "inproc":
        return None if re.fullmatch(r"[^/]+/\d+/\d+", loc) else want
    host, colon, port = loc.rpartition(":")
    if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
        return want
    if host.startswith("[") and host.endswith("]"):
        import ipaddress

        try:
            ipaddress.IPv6Address(host[1:-1])
            return None
        except ValueError:
            return want
    return None if _HOST.fullmatch(host) else want


_SWEEP_KEYS = {"name": _string, "executor": _choice("inline", "processes", "dask"),
               "workers": _num(lo=1, hi=4096, integer=True), "scheduler": _scheduler,
               "chunk": _num(lo=1, hi=10_000, integer=True),
               "point_timeout_s": _num(positive=True, hi=86_400.0)}


def _hint(name: str, known) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or nothing."""
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _line_of(text: str, section: str, key: str) -> int | None:
    """Line number (1-based) of ``key`` in ``[section]`` of a TOML text, if it can be found."""
    lines = text.splitlines()
    in_sec = section == ""
    pat = re.compile(r'^\s*(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")\s*=")
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if s.startswith("[") and not s.startswith("[["):
            in_sec = s.strip("[] ") == section
            if in_sec and key == "":
                return i
            continue
        if in_sec and pat.match(ln):
            return i
    return None


def _where(path, text, section, key) -> str:
    ln = _line_of(text, section, key) if text else None
    return f"{path or 'spec'}{f', line {ln}' if ln else ''}: [{section}] {key}"


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


try:
    import tomllib as _toml
except ModuleNotFoundError:  # Python 3.10
    import tomli as _toml


def _toml_loads(text: str) -> dict:
    """TOML to a dict; :class:`phy.ConfigError` with the parser's line and column."""
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as e:
        raise ConfigError(f"not valid TOML: {e}") from None


# ----------------------------------------------------------------------------- files
_MAX_TOML_BYTES = 16 * 2**20  # a sweep or rack file is text a person writes; 16 MiB is far past any


def _show(path, n: int = 80) -> str:
    """A path for a one-line message: quoted, and cut in the middle when longer than ``n``."""
    s = str(path)
    return repr(s) if len(s) <= n else f"{s[:40] + '...' + s[-30:]!r} ({len(s)} characters)"


def _file_problem(path: str) -> str | None:
    """Why ``path`` is not a regular file this process can read (lower case), or None."""
    try:
        st = os.stat(path)
    except OSError as e:
        return "no such file" if e.errno == errno.ENOENT else (e.strerror or str(e)).lower()
    except ValueError:  # an embedded NUL
        return "not a valid path (it holds a NUL character)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def _read_text(path, what: str = "spec file") -> tuple[str, str]:
    """``(name, text)`` of a UTF-8 TOML file a user named.

    Anything else (``None`` or a number for a path, a name too long for the OS, a
    directory, a file that cannot be read, a binary or non-UTF-8 file, one over 16 MiB)
    raises :class:`phy.ConfigError` saying in one line what ``what`` is wrong.
    """
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        got = repr(path) if len(repr(path)) <= 60 else type(path).__name__
        raise ConfigError(f"{what} must be a path (a str or os.PathLike), got {got}")
    name = os.fsdecode(os.fspath(path))
    bad = _file_problem(name)
    if bad:
        raise ConfigError(f"{what} {_show(name)}: {bad}")
    try:
        with open(name, "rb") as fh:
            data = fh.read(_MAX_TOML_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{what} {_show(name)}: {(e.strerror or str(e)).lower()}") from None
    if len(data) > _MAX_TOML_BYTES:
        raise ConfigError(f"{what} {_show(name)}: over {_MAX_TOML_BYTES >> 20} MiB, not a TOML file a person wrote")
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{what} {_show(name)}: a binary file (a NUL byte at offset {nul}), not TOML text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{what} {_show(name)}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                          "TOML files are UTF-8") from None
    return name, text.removeprefix("\ufeff")


def _first_repeat(values) -> tuple[int, int] | None:
    """``(i, j)``, 1-based, of the first value equal to an earlier one (``1 == 1.0``), or None."""
    seen: dict = {}
    for j, v in enumerate(values, 1):
        if v in seen:
            return seen[v], j
        seen[v] = j
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
    if not isinstance(text, str):
        raise ConfigError(f"a spec must be TOML text (str), got {type(text).__name__}")
    try:
        doc = _toml_loads(text)
    except ConfigError as e:
        raise ConfigError(f"{path or 'spec'}: {e}") from None
    root = str(Path(path).resolve().parent) if path else os.getcwd()
    allowed = {"sweep", "channel", "optics", "link", "serdes"} | ({"grid", "zip"} if sweep else set())
    for sec in doc:
        if sec not in allowed:
            raise ConfigError(f"{_where(path, text, sec, '')}: unknown section [{sec}]{_hint(sec, allowed)}; "
                              f"sections: {', '.join(sorted(allowed))}")
        if not isinstance(doc[sec], dict):
            raise ConfigError(f"{path or 'spec'}: '{sec}' must be a [section]")
    meta = doc.get("sweep", {})
    for k, v in meta.items():
        if k not in _SWEEP_KEYS:
            raise ConfigError(f"{_where(path, text, 'sweep', k)}: unknown key{_hint(k, _SWEEP_KEYS)}; "
                              f"keys: {', '.join(sorted(_SWEEP_KEYS))}")
        bad = _SWEEP_KEYS[k](v)
        if bad:
            raise ConfigError(f"{_where(path, text, 'sweep', k)} must be {bad}, got {v!r}")

    def canonical(full: str, sec: str, key: str, seen: dict) -> str:
        """The schema's key for ``full``; a key given twice in one table (in two spellings) is refused."""
        name = SPELLINGS.get(full, full)
        if name in seen:
            raise ConfigError(f"{_where(path, text, sec, key)}: {name!r} is given twice ({seen[name]} and {key})")
        seen[name] = key
        return name

    def check(full: str, v, sec: str, key: str):
        if full not in SCHEMA:
            near = difflib.get_close_matches(full, list(SCHEMA), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ConfigError(f"{_where(path, text, sec, key)}: unknown parameter {full!r}{hint}")
        bad = SCHEMA[full][0](v)
        if bad:
            raise ConfigError(f"{_where(path, text, sec, key)} must be {bad}, got {v!r}")
        if full == "channel.file":
            f = str(Path(v) if Path(v).is_absolute() else Path(root) / v)
            bad = _file_problem(f)
            if bad == "no such file":
                raise ConfigError(f"{_where(path, text, sec, key)}: no such file {_show(f)}")
            if bad:
                raise ConfigError(f"{_where(path, text, sec, key)}: cannot use {_show(f)}: {bad}")

    base = {}
    for sec in ("channel", "optics", "link", "serdes"):
        seen: dict = {}
        for k, v in doc.get(sec, {}).items():
            full = canonical(f"{sec}.{k}", sec, k, seen)
            check(full, v, sec, k)
            base[full] = v
    lists = {"grid": {}, "zip": {}}
    for sec in lists:
        seen = {}
        for k, vals in doc.get(sec, {}).items():
            full = canonical(k, sec, k, seen)
            if not isinstance(vals, list) or not vals:
                raise ConfigError(f"{_where(path, text, sec, k)} must be a non-empty list of values")
            for v in vals:
                check(full, v, sec, k)
            lists[sec][full] = list(vals)
    _check_lists(lists, path, text)
    spec = SweepSpec(str(meta.get("name", Path(path).stem if path else "sweep")), base, lists["grid"], lists["zip"],
                     meta.get("executor", "processes"), meta.get("workers"), meta.get("scheduler"),
                     int(meta.get("chunk", 8)), root, float(meta.get("point_timeout_s", DEFAULT_POINT_TIMEOUT_S)))
    # every point must describe a medium the chain can build: checked on the distinct
    # combinations of the keys that decide it, not on every point (a grid of 10^6 points
    # has a handful of them)
    for p in iter_points(_projection(spec, _MEDIUM_CHECK_KEYS)):
        _medium_of(p)
    return spec


def _check_lists(lists: dict, path, text) -> None:
    """[grid] and [zip] must give each point once: no key in both, zip lists of one
    length, no value twice in a grid list (``1`` and ``1.0`` are one value) and no zip
    row twice. Refusing is clearer than merging: the file says what it sweeps."""
    both = set(lists["grid"]) & set(lists["zip"])
    if both:
        k = min(both)
        raise ConfigError(f"{_where(path, text, 'zip', k)}: {k!r} is in both [grid] and [zip]")
    for k, vals in lists["grid"].items():
        rep = _first_repeat(vals)
        if rep:
            i, j = rep
            raise ConfigError(f"{_where(path, text, 'grid', k)}: value {j} ({vals[j - 1]!r}) repeats value {i} "
                              f"({vals[i - 1]!r}); each grid value must be distinct")
    zk = list(lists["zip"])
    if zk and len({len(v) for v in lists["zip"].values()}) != 1:
        sizes = {k: len(v) for k, v in lists["zip"].items()}
        raise ConfigError(f"{path or 'spec'}: [zip] lists must have one length, got {sizes}")
    rows = list(zip(*(lists["zip"][k] for k in zk)))
    rep = _first_repeat(rows)
    if rep:
        i, j = rep
        raise ConfigError(f"{_where(path, text, 'zip', zk[0])}: row {j} {dict(zip(zk, rows[j - 1]))} repeats row {i}; "
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
    name, text = _read_text(path, "spec file")
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
    full = {k: p.get(k, SCHEMA[k][1]) for k in SCHEMA}
    if full.get("channel.file"):
        full["channel.file"] = str(Path(p.get("_root", ".")) / full["channel.file"])
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()[:20]


# ----------------------------------------------------------------------------- one point
def _get(p: dict, k: str):
    return p.get(k, SCHEMA[k][1])


def _medium_of(p: dict) -> str:
    kind = _get(p, "channel.kind")
    optics = _get(p, "optics.kind")
    if optics != "none" and "channel.kind" in p and kind != "none":
        raise ConfigError(f"a point has both channel.kind = {kind!r} and optics.kind = {optics!r}: choose one medium")
    if optics == "none" and kind == "none":
        raise ConfigError("a point has no medium: set channel.kind or optics.kind")
    if kind == "touchstone" and not p.get("channel.file"):
        raise ConfigError("channel.kind = 'touchstone' needs channel.file")
    return "optics" if optics != "none" else "channel"


_CHANNEL_KEYS = ("channel.kind", "channel.length_m", "channel.awg", "channel.connectors", "channel.name",
                 "channel.file", "channel.thru", "channel.host", "channel.crosstalk")


#: What :func:`_medium_of` reads: the keys that decide whether a point has a medium.
_MEDIUM_CHECK_KEYS = ("channel.kind", "optics.kind", "channel.file")
#: What a point's channel (or optics) and its eye depend on (:func:`medium_key`).
MEDIUM_KEYS = (*_CHANNEL_KEYS, "optics.kind", "optics.length_m", "optics.rin_db_per_hz", "link.lane_rate_gbps",
               "link.modulation", "link.equalization", "serdes.rx_impairments")


def medium_key(p: dict) -> str:
    """What a point's channel (or optics) and its eye depend on besides the FEC and the
    framing: its medium, the rate, the modulation and the equalisation. Points with the
    same key share the channel a worker builds and the eye it computes."""
    return json.dumps([_get(p, k) for k in MEDIUM_KEYS], default=str)
