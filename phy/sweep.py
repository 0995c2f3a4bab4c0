"""Batch sweeps over channels and link choices that survive crashes and scale out on Dask.

A sweep is a TOML file: fixed parameters in ``[channel]``, ``[optics]`` and ``[link]``,
and the values to sweep in ``[grid]`` (every combination) and ``[zip]`` (lists walked
together, all of one length), keyed ``"section.name"``::

    [sweep]
    name = "twinax_reach"
    executor = "processes"      # "inline", "processes" (default) or "dask"
    workers = 2
    point_timeout_s = 60        # the time limit of one point (s)

    [channel]
    kind = "twinax"             # twinax, stripline, library, touchstone (or none with [optics])
    awg = 26

    [link]
    lane_rate_gbps = 212.5
    equalization = "preset"     # "com" (COM proposes, the statistical eye decides) or "preset"

    [grid]
    "channel.length_m" = [0.5, 1.0, 1.5, 2.0]
    "link.fec" = ["KP4", "KR4", "LL272", "none"]

Every point runs :func:`phy.evaluate_link` and yields one flat row: its inputs and the
link report's figures. Rows go to an append-only JSON Lines store, one record per point
keyed by a hash of the point, written and fsynced as each finishes; a rerun skips the
points already recorded, so a sweep killed at any moment loses at most the points in
flight and never records one twice. A grid value or zip row given twice is refused
before work starts. :func:`load` reads a store as a ``pandas.DataFrame``.

What a run survives:

* a point that fails records status ``"error"`` and its message, and the sweep goes on;
* a point past its time limit (``point_timeout_s``) records status ``"timeout"`` and the
  limit: in a process pool (and in each Dask worker) the worker running it is killed,
  even inside a Numba kernel or a C call, and replaced; the rest of its chunk runs on;
* a worker that dies (killed, out of memory, a segfault) costs only the point it was
  running: that point and the rest of its chunk run again in a fresh worker, and if the
  point kills its worker a second time it records ``"error"`` with ``worker died: ...``;
* a second run on the same store is refused at once, naming the run that holds it (an
  OS lock beside the store, which dies with its holder: a killed run never blocks);
* the death of the run itself (even ``kill -9``) ends its workers (Linux).

Executors share one interface: ``inline`` (this process), ``processes`` (worker
processes of this run) and ``dask`` (``distributed``: a scheduler address, or a local
cluster). Points that share a channel travel together in chunks, so each worker builds
and equalises a channel once for all the FEC and framing choices on it.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import hashlib
import json
import math
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from multiprocessing import connection as _mpc
from pathlib import Path

from .errors import ConfigError

try:
    import fcntl
except ModuleNotFoundError:  # Windows: no flock; stores are not locked there
    fcntl = None

__all__ = [
    "DEFAULT_POINT_TIMEOUT_S",
    "SweepResult",
    "SweepSpec",
    "evaluate_point",
    "link_spec",
    "load",
    "load_spec",
    "parse_spec",
    "point_key",
    "points",
    "read_records",
    "run_sweep",
]

#: The default time limit of one point (s); see :func:`run_sweep` for why 60 s.
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
    "link.equalization": (_choice("com", "preset"), "com", "COM-proposed (eye decides) or a fixed preset"),
    "link.switch_ports": (_num(lo=0, hi=16, integer=True), 0, "switch ports in the path (200 ns each)"),
}
_SWEEP_KEYS = {"name": _string, "executor": _choice("inline", "processes", "dask"),
               "workers": _num(lo=1, hi=4096, integer=True), "scheduler": _string,
               "chunk": _num(lo=1, hi=10_000, integer=True),
               "point_timeout_s": _num(positive=True, hi=86_400.0)}


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
    """
    if not isinstance(text, str):
        raise ConfigError(f"a spec must be TOML text (str), got {type(text).__name__}")
    try:
        doc = _toml_loads(text)
    except ConfigError as e:
        raise ConfigError(f"{path or 'spec'}: {e}") from None
    root = str(Path(path).resolve().parent) if path else os.getcwd()
    allowed = {"sweep", "channel", "optics", "link"} | ({"grid", "zip"} if sweep else set())
    for sec in doc:
        if sec not in allowed:
            raise ConfigError(f"{_where(path, text, sec, '')}: unknown section [{sec}]; "
                              f"sections: {', '.join(sorted(allowed))}")
        if not isinstance(doc[sec], dict):
            raise ConfigError(f"{path or 'spec'}: '{sec}' must be a [section]")
    meta = doc.get("sweep", {})
    for k, v in meta.items():
        if k not in _SWEEP_KEYS:
            raise ConfigError(f"{_where(path, text, 'sweep', k)}: unknown key; keys: {', '.join(sorted(_SWEEP_KEYS))}")
        bad = _SWEEP_KEYS[k](v)
        if bad:
            raise ConfigError(f"{_where(path, text, 'sweep', k)} must be {bad}, got {v!r}")

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
    for sec in ("channel", "optics", "link"):
        for k, v in doc.get(sec, {}).items():
            check(f"{sec}.{k}", v, sec, k)
            base[f"{sec}.{k}"] = v
    lists = {"grid": {}, "zip": {}}
    for sec in lists:
        for k, vals in doc.get(sec, {}).items():
            if not isinstance(vals, list) or not vals:
                raise ConfigError(f"{_where(path, text, sec, k)} must be a non-empty list of values")
            for v in vals:
                check(k, v, sec, k)
            lists[sec][k] = list(vals)
    _check_lists(lists, path, text)
    spec = SweepSpec(str(meta.get("name", Path(path).stem if path else "sweep")), base, lists["grid"], lists["zip"],
                     meta.get("executor", "processes"), meta.get("workers"), meta.get("scheduler"),
                     int(meta.get("chunk", 8)), root, float(meta.get("point_timeout_s", DEFAULT_POINT_TIMEOUT_S)))
    for p in points(spec):  # every point must describe a medium the chain can build
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
    """
    name, text = _read_text(path, "spec file")
    return parse_spec(text, name, sweep=sweep)


def points(spec: SweepSpec) -> list[dict]:
    """Every point of the sweep: the base overridden by one grid combination and one zip row."""
    gk = list(spec.grid)
    zk = list(spec.zipped)
    zrows = list(zip(*(spec.zipped[k] for k in zk))) if zk else [()]
    out = []
    for combo in product(*(spec.grid[k] for k in gk)) if gk else [()]:
        for zr in zrows:
            p = dict(spec.base)
            p.update(zip(gk, combo))
            p.update(zip(zk, zr))
            p["_root"] = spec.root
            out.append(p)
    return out


def point_key(p: dict) -> str:
    """A stable hash of a point's parameters (defaults filled in, so spelling a default
    out does not make a new point)."""
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
                 "channel.file", "channel.thru")


@lru_cache(maxsize=32)
def _channel(key: tuple, root: str):
    import channels
    from channels import media

    p = dict(zip(_CHANNEL_KEYS, key))
    kind = p["channel.kind"]
    L = p["channel.length_m"]
    if kind == "twinax":
        parts = [media.twinax(L, p["channel.awg"])]
    elif kind == "stripline":
        parts = [media.stripline(L)]
    elif kind == "library":
        return channels.library.get(p["channel.name"])
    else:
        f = Path(p["channel.file"])
        return channels.load(f if f.is_absolute() else Path(root) / f, thru=p["channel.thru"])
    if p["channel.connectors"]:
        parts = [media.connector(), *parts, media.connector()]
    return media.cascade(*parts).renamed(f"{kind}_{L:g}m")


@lru_cache(maxsize=32)
def _optics(kind: str, length_m: float, baud_hz: float, rin):
    from dataclasses import replace

    from .link import OpticalClass

    oc = {"dsp": OpticalClass.dsp_pluggable, "lpo": OpticalClass.lpo, "cpo": OpticalClass.cpo}[kind](
        length_m=length_m, baud_hz=baud_hz)
    if rin is not None:
        oc = replace(oc, path=replace(oc.path, tx=replace(oc.path.tx, rin_db_per_hz=rin)))
    return oc


def _preset_serdes(baud_hz: float, modulation: str):
    """A fixed equalisation for fast sweeps: no Tx FFE, a 0.58-baud Butterworth front end,
    a 16-tap MMSE Rx FFE (5 pre) and one DFE tap: the 802.3dj KR receiver's structure."""
    from .equalizers import Dfe, RxFfe
    from .link import Serdes
    from .serdes import Receiver, Transmitter

    return Serdes(tx=Transmitter(modulation, swing_v=0.413, level_mismatch=0.95 if modulation == "pam4" else 1.0),
                  rx=Receiver(bandwidth_hz=0.58 * baud_hz, ffe=RxFfe(5, 10), dfe=Dfe(1)), name="preset")


def link_spec(p: dict):
    """The :class:`phy.LinkSpec` of a point."""
    from .link import LinkSpec, PathElement, Retry, Serdes

    mod = _get(p, "link.modulation")
    rate = float(_get(p, "link.lane_rate_gbps")) * 1e9
    baud = rate / (2 if mod == "pam4" else 1)
    serdes = _preset_serdes(baud, mod) if _get(p, "link.equalization") == "preset" else Serdes()
    fec = _get(p, "link.fec")
    kw = {"lanes": int(_get(p, "link.lanes")), "lane_rate_bps": rate, "modulation": mod, "serdes": serdes,
              "fec": None if fec == "none" else fec, "interleave": int(_get(p, "link.interleave")) if fec != "none" else 1,
              "precoding": bool(_get(p, "link.precoding")), "retry": Retry() if _get(p, "link.retry") else None,
              "target_ber": float(_get(p, "link.target_ber")),
              "path": (PathElement.switch_port(),) * int(_get(p, "link.switch_ports"))}
    if _medium_of(p) == "optics":
        oc = _optics(_get(p, "optics.kind"), float(_get(p, "optics.length_m")), baud, _get(p, "optics.rin_db_per_hz"))
        return LinkSpec(optics=oc, **kw)
    key = tuple(_get(p, k) for k in _CHANNEL_KEYS)
    return LinkSpec(channel=_channel(key, p.get("_root", ".")), **kw)


def _flat(r) -> dict:
    row = {
        "passes": r.passes, "reasons": "; ".join(r.reasons), "pre_fec_ber": r.pre_fec_ber,
        "post_fec_ber": r.post_fec_ber, "margin_db": r.margin_db, "required_der": r.required_der,
        "codeword_error_ratio": r.codeword_error_ratio, "frame_loss_ratio": r.frame_loss_ratio,
        "usable_gbps": r.usable_bandwidth_bps / 1e9, "payload_gbps": r.rate_chain["payload_bps"] / 1e9,
        "latency_ns": r.latency_s * 1e9, "energy_pj_per_bit": r.energy_j_per_bit * 1e12, "power_w": r.power_w,
        "equalization": r.segments[0].equalisation, "com_db": r.segments[0].com_db,
    }
    for k, v in r.latency_breakdown_s.items():
        row[f"latency_{k}_ns"] = v * 1e9
    return row


def evaluate_point(p: dict) -> dict:
    """One point's record: ``key``, ``params``, ``status`` (``"ok"`` or ``"error"``),
    ``row`` (the flat figures) or ``error``, and ``seconds``."""
    from .link import evaluate_link

    t = time.perf_counter()
    params = {k: v for k, v in p.items() if not k.startswith("_")}
    rec = {"key": point_key(p), "params": params}
    try:
        rec["row"] = _flat(evaluate_link(link_spec(p)))
        rec["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - any failure of a point is recorded and the sweep goes on
        rec["status"] = "error"
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["seconds"] = time.perf_counter() - t
    return rec


# ----------------------------------------------------------------------------- store
def read_records(path) -> dict:
    """The store's records by key (the last complete line wins; a line cut short by a
    crash, or one that is not JSON, is ignored)."""
    out = {}
    p = Path(path)
    if not p.exists():
        return out
    with open(p, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # a write cut short
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "key" in rec:
                out[rec["key"]] = rec
    return out


def _owner(text: str) -> str | None:
    """Who a lock file names (see :class:`_Store`), as words; None if it names no one."""
    if not text.strip():
        return None
    try:
        d = json.loads(text)
        return f"pid {d['pid']} on host {d['host']}, started {d['started']}: {d['command']}"
    except (json.JSONDecodeError, TypeError, KeyError):
        return "a run whose lock file cannot be read"


def _oserror(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


class _Store:
    """The append-only JSON Lines store of one run, held under an exclusive lock.

    The lock is ``fcntl.flock`` on ``<store>.lock`` beside the store, taken without
    waiting: a second run on the store fails at once with :class:`phy.ConfigError`
    naming the run that holds it (pid, host, start and command, which the holder writes
    into the lock file). The kernel releases a flock when the process holding it ends,
    however it ends, so a killed run never leaves a lock that blocks: the next run takes
    it over and says so (``stale``: a clean end empties the file, a killed run leaves its
    name in it). The lock file is never deleted, since deleting it could let two runs
    lock two different files of one name. Worker processes do not inherit it.
    """

    def __init__(self, path):
        if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
            raise ConfigError(f"the store must be a path (a str or os.PathLike), got {type(path).__name__}")
        self.path = Path(path)
        self.stale: str | None = None
        self.lock = self._lock()
        try:
            self.fh = self._open()
        except OSError as e:
            self._release()
            raise ConfigError(f"store {_show(self.path)}: cannot be written ({_oserror(e)})") from None

    def _lock(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(f"{self.path}.lock", "a+", encoding="utf-8")  # noqa: SIM115 - held for the run
        except OSError as e:
            raise ConfigError(f"store {_show(self.path)}: cannot be written ({_oserror(e)})") from None
        if fcntl is None:
            return fh
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            fh.seek(0)
            owner = _owner(fh.read()) or "a run that has not written its name yet"
            fh.close()
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ConfigError(f"store {_show(self.path)}: cannot be locked ({_oserror(e)})") from None
            raise ConfigError(f"store {_show(self.path)} is being written by another sweep ({owner}); "
                              "wait for it to end, or give this run another store") from None
        fh.seek(0)
        self.stale = _owner(fh.read())
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "command": " ".join(sys.argv)[:300]}
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(me))
        fh.flush()
        os.fsync(fh.fileno())
        return fh

    def _open(self):
        # a crash can leave a partial last line: end it so the next record starts clean
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    with open(self.path, "ab") as fa:
                        fa.write(b"\n")
        return open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held for the run, closed by close()

    def append(self, rec: dict) -> None:
        self.fh.write(json.dumps(rec, default=float) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def _release(self) -> None:
        try:
            self.lock.seek(0)
            self.lock.truncate()
            self.lock.flush()
        except OSError:
            pass
        self.lock.close()  # closing the file releases the flock

    def close(self) -> None:
        self.fh.close()
        self._release()


def load(path):
    """The store as a ``pandas.DataFrame``: one row per point, its parameters, ``status``
    (``"ok"``, ``"error"`` or ``"timeout"``), ``error``, ``seconds`` (s) and the figures;
    ``retried`` and ``timeout_s`` where a record has them."""
    try:
        import pandas as pd
    except ModuleNotFoundError:
        raise ConfigError("loading a sweep as a DataFrame needs pandas: pip install pandas") from None
    rows = []
    for key, rec in read_records(path).items():
        row = {"key": key, "status": rec.get("status"), "error": rec.get("error"), "seconds": rec.get("seconds")}
        row.update({k: rec[k] for k in ("retried", "timeout_s") if k in rec})
        row.update(rec.get("params", {}))
        row.update(rec.get("row", {}))
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- workers
def _failure(p: dict, status: str, error: str, seconds: float = 0.0, **extra) -> dict:
    """The record of a point that gave no row, in the shape :func:`evaluate_point` gives."""
    params = {k: v for k, v in p.items() if not k.startswith("_")}
    return {"key": point_key(p), "params": params, "status": status, "error": error, "seconds": seconds, **extra}


def _timed_out(p: dict, limit_s: float, seconds: float, how: str) -> dict:
    return _failure(p, "timeout", f"no result within the time limit of {limit_s:g} s (point_timeout_s); {how}",
                    seconds, timeout_s=limit_s)


def _exit_reason(code: int | None) -> str:
    """How a worker process ended, from its return code (negative: the signal)."""
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _die_with_parent(parent: int) -> None:
    """Make this worker end when the process that started it dies, even mid-point.

    On Linux the kernel sends SIGKILL to the worker when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``), which ends a worker stuck in compiled code too. (The
    kernel means the parent *thread* that started it: the runner starts workers from the
    thread that runs the sweep, which outlives them.) Elsewhere a worker ends at its next
    read or write of the parent's pipe (EOF or EPIPE), that is when its point is done.
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(0)


def _serve(rfd: int, wfd: int, parent: int) -> None:
    """A worker process's loop: say ``"ready"``, then take chunks of points from the
    parent's pipe and send back each point's record as soon as it is done."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the parent's to handle
    rx, tx = _mpc.Connection(rfd, writable=False), _mpc.Connection(wfd, readable=False)
    try:
        tx.send("ready")
        while True:
            for p in rx.recv():
                tx.send(evaluate_point(p))
    except (EOFError, OSError):  # the parent is done, or gone
        return


_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
#: One thread per worker for the BLAS and OpenMP pools unless the environment says
#: otherwise (Dask's workers have the same): the workers are the parallelism, and threads
#: under them oversubscribe the cores. Measured on 2 cores, 96 preset points on 2 workers:
#: 13 to 15 s with these, 20 s without.
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class _Worker:
    """One worker process (``python -c`` running :func:`_serve`) and the points it holds.

    A fresh interpreter rather than a fork: nothing of the parent's threads, locks or
    open files (the store's lock) comes along, and it works inside a daemonic Dask
    worker. It imports this same ``phy`` (``PYTHONPATH`` leads with its folder), with
    one BLAS thread (``_ONE_THREAD``).
    """

    def __init__(self):
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        path = os.pathsep.join(filter(None, (_PACKAGE_ROOT, os.environ.get("PYTHONPATH"))))
        env = {**_ONE_THREAD, **os.environ, "PYTHONPATH": path}
        code = f"from phy.sweep import _serve; _serve({down_r}, {up_w}, {os.getpid()})"
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(down_r, up_w),
                                         stdin=subprocess.DEVNULL, env=env)
        except BaseException:
            os.close(down_w)
            os.close(up_r)
            raise
        finally:
            os.close(down_r)
            os.close(up_w)
        self.tx = _mpc.Connection(down_w, readable=False)
        self.rx = _mpc.Connection(up_r, writable=False)
        self.todo: list[dict] = []  # the points given and not yet reported, in order
        self.ready = False
        self.since: float | None = None  # when the point in hand (todo[0]) started (time.perf_counter, s)

    def give(self, pts: list[dict]) -> None:
        self.todo = list(pts)
        if self.ready:
            self.send()

    def send(self) -> None:
        try:
            self.tx.send(self.todo)
        except OSError:
            pass  # it died: its pipe's EOF reports that
        self.since = time.perf_counter()

    def end(self, kill: bool) -> int:
        """Stop it (kill now, or close its pipe so it ends when idle) and reap it."""
        if kill:
            self.proc.kill()
        self.tx.close()
        try:
            code = self.proc.wait(timeout=None if kill else 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.rx.close()
        return code


class _Pool:
    """Worker processes that run chunks of points under a per-point time limit.

    Each worker reports every point as it finishes, so the pool knows which point each
    worker is on and since when. A point past ``timeout_s`` (s; None: no limit) is
    recorded as ``"timeout"`` and its worker is killed (SIGKILL, which no kernel or C
    call can ignore) and replaced; the rest of its chunk goes back to the queue. A
    worker that dies costs the point it was on one retry: that point and the rest of
    its chunk go back to the front of the queue for a fresh worker, and the point's
    record then says ``retried``; if it dies with that point a second time the point
    records ``"error"``, ``worker died: ...``, and the rest go on. Two workers in a row
    that die before they are ready (a broken installation) stop the run with
    :class:`phy.ConfigError`, rather than restarting forever. A fresh worker's clock
    starts when it is ready (its imports done, about 1 s), not when it is started.
    """

    def __init__(self, workers: int, timeout_s: float | None):
        self.n, self.timeout_s = int(workers), timeout_s
        self.workers: list[_Worker] = []
        self.deaths: dict[str, str] = {}  # point key -> how the worker running it died the first time
        self.failed_starts = 0

    def run(self, chunks):
        """Yield each point's record as it comes (in no particular order)."""
        queue = deque(list(c) for c in chunks if c)
        try:
            while queue or any(w.todo for w in self.workers):
                self._dispatch(queue)
                busy = [w for w in self.workers if w.todo]
                readable = _mpc.wait([w.rx for w in busy], timeout=self._wait_s(busy))
                for w in busy:
                    if w.rx in readable:
                        yield from self._receive(w, queue)
                    elif self._overdue(w):
                        yield self._stop(w, queue)
        except BaseException:
            self.close(kill=True)
            raise

    def _dispatch(self, queue: deque) -> None:
        for w in self.workers:
            if queue and w.ready and not w.todo:
                w.give(queue.popleft())
        while queue and len(self.workers) < self.n:
            w = _Worker()
            w.give(queue.popleft())
            self.workers.append(w)

    def _wait_s(self, busy) -> float | None:
        ends = [w.since + self.timeout_s for w in busy if w.since is not None] if self.timeout_s else []
        return max(0.0, min(ends) - time.perf_counter()) if ends else None

    def _overdue(self, w: _Worker) -> bool:
        return bool(self.timeout_s) and w.since is not None and time.perf_counter() - w.since >= self.timeout_s

    def _receive(self, w: _Worker, queue: deque):
        try:
            msg = w.rx.recv()
        except (EOFError, OSError):
            yield from self._died(w, queue)
            return
        if msg == "ready":
            w.ready, self.failed_starts = True, 0
            w.send()
            return
        w.todo.pop(0)
        w.since = time.perf_counter() if w.todo else None
        first = self.deaths.pop(msg["key"], None)
        if first:
            msg["retried"] = f"worker died: {first} while running this point; it ran again in a fresh worker"
        yield msg

    def _died(self, w: _Worker, queue: deque):
        reason = _exit_reason(w.end(kill=True)) + ("" if w.ready else " before it was ready")
        self.workers.remove(w)
        if not w.ready:
            self.failed_starts += 1
            if self.failed_starts >= 2:
                raise ConfigError(f"sweep worker processes end before they are ready ({reason}, twice in a row); "
                                  "run the sweep with executor = 'inline' to see why")
        if not w.todo:
            return  # it died idle: nothing lost
        p, k = w.todo[0], point_key(w.todo[0])
        if k not in self.deaths:
            self.deaths[k] = reason
            queue.appendleft(w.todo)
            return
        first = self.deaths.pop(k)
        yield _failure(p, "error", f"worker died: {reason} while running this point, after its first worker had "
                                   f"died too ({first}); not retried again")
        if w.todo[1:]:
            queue.appendleft(w.todo[1:])

    def _stop(self, w: _Worker, queue: deque) -> dict:
        p, took = w.todo[0], time.perf_counter() - w.since
        w.end(kill=True)
        self.workers.remove(w)
        if w.todo[1:]:
            queue.appendleft(w.todo[1:])
        self.deaths.pop(point_key(p), None)
        return _timed_out(p, self.timeout_s, took, "its worker was killed and replaced, and the sweep went on")

    def close(self, kill: bool = False) -> None:
        """End every worker: at once (``kill``), or by closing its pipe when it is idle."""
        for w in self.workers:
            w.end(kill)
        self.workers = []


# ----------------------------------------------------------------------------- executors
class _PointTimeout(BaseException):
    """The inline executor's alarm: a point ran past its time limit. Not an
    ``Exception``, so no ``except Exception`` in the code under the point swallows it."""


class _Inline:
    """Runs the points in this process, one after another, each recorded as it finishes.

    Its time limit is SIGALRM (``setitimer``): the alarm stops a point at the next Python
    bytecode past the limit, so it cannot cut short a Numba kernel or a long C call,
    which run to their end first; the point is then recorded as ``"timeout"`` with the
    time it really took. Signals need the main thread and a free alarm timer; without
    them the limit is not enforced and the run says so in its notes. Use ``processes``
    for a limit that holds whatever the point is doing.
    """

    def __init__(self, timeout_s: float | None):
        self.timeout_s = timeout_s
        self.notes: list[str] = []

    def _alarm_free(self) -> bool:
        if self.timeout_s is None:
            return False
        if (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
                and signal.getitimer(signal.ITIMER_REAL)[0] == 0):
            return True
        self.notes.append("the time limit was not enforced: the inline executor needs the main thread and a free "
                          "SIGALRM timer (use executor = 'processes')")
        return False

    def run(self, chunks):
        alarm = self._alarm_free()
        armed = [False]

        def ring(signum, frame):
            if armed[0]:
                raise _PointTimeout

        old = signal.signal(signal.SIGALRM, ring) if alarm else None
        try:
            for p in (q for c in chunks for q in c):
                t = time.perf_counter()
                try:
                    if alarm:
                        armed[0] = True
                        signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
                    rec = evaluate_point(p)
                except _PointTimeout:
                    rec = _timed_out(p, self.timeout_s, time.perf_counter() - t, "the point was interrupted")
                finally:
                    armed[0] = False
                    if alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                yield rec
        finally:
            if alarm:
                signal.signal(signal.SIGALRM, old)

    def close(self, kill: bool = False) -> None:
        pass


class _Processes(_Pool):
    """A pool of this run's own worker processes (see :class:`_Pool`)."""

    def __init__(self, workers: int | None, timeout_s: float | None):
        super().__init__(workers or os.cpu_count() or 1, timeout_s)
        self.notes: list[str] = []


_DASK_LOCAL = threading.local()


def _dask_chunk(chunk: list[dict], timeout_s: float | None) -> list[dict]:
    """A Dask task: one chunk through the calling Dask worker thread's own worker process
    (a :class:`_Pool` of one, kept between tasks), so that the time limit and a worker's
    death are handled on the Dask worker as they are in a process pool."""
    pool = getattr(_DASK_LOCAL, "pool", None)
    if pool is None or pool.timeout_s != timeout_s:
        if pool is not None:
            pool.close()
        pool = _DASK_LOCAL.pool = _Pool(1, timeout_s)
    return list(pool.run([chunk]))


class _Dask:
    """Chunks as Dask tasks, each run by :func:`_dask_chunk` in a worker process of the
    Dask worker. With a local cluster, its workers end with this process (``distributed``
    ends a worker whose parent's pipe closes) and their worker processes with them. A
    remote cluster's workers are not this run's: if the run dies they finish the task in
    hand (bounded by the time limit) and keep their idle worker process for the next."""

    def __init__(self, workers: int | None, scheduler: str | None, timeout_s: float | None):
        try:
            from distributed import Client, LocalCluster
        except ModuleNotFoundError:
            raise ConfigError("the dask executor needs dask.distributed: pip install 'dask[distributed]'") from None
        self.timeout_s = timeout_s
        self.notes: list[str] = []
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            import dask

            # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers; with it glibc
            # hands memory back so eagerly that every point's arrays are re-mapped, and a
            # point took twice as long as in a process pool. Keep the one-thread settings.
            env = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
                   if k != "MALLOC_TRIM_THRESHOLD_"}
            with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
                self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                            processes=True, dashboard_address=None)
            self.client = Client(self.cluster)

    def run(self, chunks):
        from distributed import as_completed

        futs = [self.client.submit(_dask_chunk, c, self.timeout_s, pure=False) for c in chunks]
        chunk_of = {f.key: c for f, c in zip(futs, chunks)}
        for f in as_completed(futs):
            try:
                recs = f.result()
            except Exception as e:  # noqa: BLE001 - a lost task fails its chunk's points, not the run
                what = "worker died" if type(e).__name__ == "KilledWorker" else "the Dask task failed"
                recs = [_failure(p, "error", f"{what}: {type(e).__name__}: {e}") for p in chunk_of[f.key]]
            yield from recs

    def close(self, kill: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _executor(kind: str, workers, scheduler, timeout_s):
    if kind == "inline":
        return _Inline(timeout_s)
    if kind == "processes":
        return _Processes(workers, timeout_s)
    if kind == "dask":
        return _Dask(workers, scheduler, timeout_s)
    raise ConfigError(f"executor must be 'inline', 'processes' or 'dask', got {kind!r}")


# ----------------------------------------------------------------------------- runner
@dataclass
class SweepResult:
    """What a run did: points in the sweep, found already done in the store (``skipped``),
    run now (``ok``, and ``failed``: errors and timeouts), of those past the time limit
    (``timed_out``) and run again after their worker died (``retried``), seconds (s),
    the store, and notes."""

    total: int
    skipped: int
    ok: int
    failed: int
    seconds: float
    store: str
    notes: list = field(default_factory=list)
    timed_out: int = 0
    retried: int = 0

    @property
    def points_per_second(self) -> float:
        return (self.ok + self.failed) / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {"total": self.total, "skipped": self.skipped, "ok": self.ok, "failed": self.failed,
                "timed_out": self.timed_out, "retried": self.retried, "seconds": self.seconds,
                "points_per_second": self.points_per_second, "store": self.store, "notes": list(self.notes)}

    def _count(self, rec: dict) -> None:
        self.ok += rec["status"] == "ok"
        self.failed += rec["status"] != "ok"
        self.timed_out += rec["status"] == "timeout"
        self.retried += bool(rec.get("retried"))


class _Progress:
    def __init__(self, total: int, stream, enabled: bool):
        self.total, self.stream, self.enabled = total, stream, enabled
        self.done = 0
        self.t0 = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        dt = time.perf_counter() - self.t0
        rate = self.done / dt if dt > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        w = 30
        fill = int(w * self.done / max(self.total, 1))
        self.stream.write(f"\r[{'#' * fill}{'.' * (w - fill)}] {self.done}/{self.total} "
                          f"{rate:.2f} points/s, {left:.0f} s left ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _chunks(todo: list[dict], size: int) -> list[list[dict]]:
    """Points grouped by medium (channel or optics and the rate), then cut into chunks."""
    def medium(p):
        return json.dumps([_get(p, k) for k in (*_CHANNEL_KEYS, "optics.kind", "optics.length_m",
                                                "link.lane_rate_gbps", "link.modulation", "link.equalization")],
                          default=str)

    groups: dict = {}
    for p in todo:
        groups.setdefault(medium(p), []).append(p)
    out = []
    for g in groups.values():
        for i in range(0, len(g), size):
            out.append(g[i:i + size])
    return out


def _options(spec: SweepSpec, executor, workers, scheduler, point_timeout_s) -> tuple:
    """The run's executor, workers, scheduler and time limit (s): the arguments, else the spec's."""
    if not isinstance(spec, SweepSpec):
        raise ConfigError(f"run_sweep needs a SweepSpec, got {type(spec).__name__}")
    kind = executor or spec.executor
    nw = workers if workers is not None else spec.workers
    sched = scheduler or spec.scheduler
    limit = point_timeout_s if point_timeout_s is not None else spec.point_timeout_s
    for name, v in (("executor", kind), ("workers", nw), ("scheduler", sched), ("point_timeout_s", limit)):
        bad = None if v is None else _SWEEP_KEYS[name](v)
        if bad:
            raise ConfigError(f"run_sweep {name} must be {bad}, got {v!r}")
    return ("dask" if sched else kind), nw, sched, float(limit)


def _by_key(spec: SweepSpec) -> dict:
    """The sweep's points by key. A point that appears twice is refused (a spec built by
    hand can have one; :func:`parse_spec` refuses it naming the file's line)."""
    out: dict = {}
    for p in points(spec):
        k = point_key(p)
        if k in out:
            params = {a: b for a, b in p.items() if not a.startswith("_")}
            raise ConfigError(f"sweep {spec.name!r}: the point {params} appears twice; give each grid value and "
                              "zip row once")
        out[k] = p
    return out


def run_sweep(spec: SweepSpec, store, *, executor: str | None = None, workers: int | None = None,
              scheduler: str | None = None, point_timeout_s: float | None = None, progress: bool = True,
              retry_failed: bool = False, stream=None) -> SweepResult:
    """Run the points of ``spec`` not yet in ``store`` and append their records as they finish.

    Parameters
    ----------
    spec : SweepSpec
        The sweep (:func:`load_spec`).
    store : str or os.PathLike
        The JSON Lines store. The run holds it under a lock (``<store>.lock``): a second
        run on it raises :class:`phy.ConfigError` at once, naming the run that holds it.
    executor, workers, scheduler : optional
        ``"inline"``, ``"processes"`` or ``"dask"``, the worker count and a Dask scheduler
        address; default the spec's (a scheduler implies Dask).
    point_timeout_s : float, optional
        The time limit of one point (s); default the spec's ``[sweep] point_timeout_s``,
        else :data:`DEFAULT_POINT_TIMEOUT_S` = 60 s. A point normally takes 0.2 to 3 s,
        :func:`phy.evaluate_link` is bounded at about 10 s on any accepted input, and the
        first point of a fresh worker adds a few seconds (Numba's cached kernels load, or
        compile when the cache is cold: about 2 s here); two or three times slower on a
        machine running more workers than cores still ends well inside 60 s. Past that a
        point is stuck, and 60 s bounds what one stuck point costs. Processes and Dask
        enforce it by killing the worker; ``inline`` by SIGALRM, which waits for a Numba
        kernel or C call to return (see :class:`_Inline`).
    progress, stream : optional
        A progress bar on ``stream`` (default ``sys.stderr``).
    retry_failed : bool
        Also rerun points recorded as ``"error"`` or ``"timeout"``.

    Returns
    -------
    SweepResult
        ``skipped`` counts only points found in the store; ``notes`` say what went wrong
        and what the run did about it (a lock taken over, timeouts, worker deaths).
    """
    kind, nw, sched, limit = _options(spec, executor, workers, scheduler, point_timeout_s)
    allp = _by_key(spec)
    st = _Store(store)
    try:
        done = read_records(store)
        keep = {k for k, r in done.items() if r.get("status") == "ok" or not retry_failed}
        todo = [p for k, p in allp.items() if k not in keep]
        res = SweepResult(len(allp), len(allp) - len(todo), 0, 0, 0.0, str(store))
        if st.stale:
            res.notes.append(f"took over the store's lock from a run that ended without releasing it ({st.stale}); "
                             "its finished points are kept")
        if todo:
            _execute(_executor(kind, nw, sched, limit), _chunks(todo, spec.chunk), st, res,
                     _Progress(len(todo), stream or sys.stderr, progress))
    finally:
        st.close()
    if res.timed_out:
        res.notes.append(f"{res.timed_out} point(s) ran past the time limit of {limit:g} s: status 'timeout' "
                         "(rerun with retry_failed and a longer point_timeout_s to try them again)")
    if res.retried:
        res.notes.append(f"{res.retried} point(s) ran again in a fresh worker after their worker died "
                         "(their records say how, under 'retried')")
    return res


def _execute(ex, chunks: list[list[dict]], st: _Store, res: SweepResult, bar: _Progress) -> None:
    """Run the chunks on an executor, appending and counting each record as it comes."""
    t0 = time.perf_counter()
    clean = False
    try:
        for rec in ex.run(chunks):
            st.append(rec)
            res._count(rec)
            bar.update(1)
        clean = True
    finally:
        bar.close()
        ex.close(kill=not clean)
        res.notes.extend(ex.notes)
        res.seconds = time.perf_counter() - t0
