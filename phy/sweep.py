"""Batch sweeps over channels and link choices that survive crashes and scale out on Dask.

A sweep is a TOML file: fixed parameters in ``[channel]``, ``[optics]`` and ``[link]``,
and the values to sweep in ``[grid]`` (every combination) and ``[zip]`` (lists walked
together, all of one length), keyed ``"section.name"``::

    [sweep]
    name = "twinax_reach"
    executor = "processes"      # "inline", "processes" (default) or "dask"
    workers = 2

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
flight and never records one twice. A point that fails records its error and the sweep
goes on. :func:`load` reads a store as a ``pandas.DataFrame``.

Executors share one interface: ``inline`` (this process), ``processes`` (a local
process pool) and ``dask`` (``distributed``: a scheduler address, or a local cluster).
Points that share a channel travel together in chunks, so each worker builds and
equalises a channel once for all the FEC and framing choices on it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as _as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from pathlib import Path

from .errors import ConfigError

__all__ = [
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
               "chunk": _num(lo=1, hi=10_000, integer=True)}


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
    """A parsed, validated sweep (see the module docstring)."""

    name: str
    base: dict
    grid: dict
    zipped: dict
    executor: str = "processes"
    workers: int | None = None
    scheduler: str | None = None
    chunk: int = 8
    root: str = "."

    def to_dict(self) -> dict:
        return {"name": self.name, "base": dict(self.base), "grid": dict(self.grid), "zip": dict(self.zipped),
                "executor": self.executor, "workers": self.workers, "scheduler": self.scheduler, "chunk": self.chunk}


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


def parse_spec(text: str, path: str | None = None, *, sweep: bool = True) -> SweepSpec:
    """Parse and validate a sweep (or, with ``sweep=False``, a single link: no grid or zip).

    Every unknown key, wrong type, value out of range, missing file and grid that cannot
    be walked raises :class:`phy.ConfigError` naming the file, the line and the key,
    before anything runs.
    """
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
            f = Path(v) if Path(v).is_absolute() else Path(root) / v
            if not f.is_file():
                raise ConfigError(f"{_where(path, text, sec, key)}: no such file {str(f)!r}")

    base = {}
    for sec in ("channel", "optics", "link"):
        for k, v in doc.get(sec, {}).items():
            check(f"{sec}.{k}", v, sec, k)
            base[f"{sec}.{k}"] = v
    lists = {}
    for sec in ("grid", "zip"):
        lists[sec] = {}
        for k, vals in doc.get(sec, {}).items():
            if not isinstance(vals, list) or not vals:
                raise ConfigError(f"{_where(path, text, sec, k)} must be a non-empty list of values")
            for v in vals:
                check(k, v, sec, k)
            lists[sec][k] = list(vals)
    both = set(lists["grid"]) & set(lists["zip"])
    if both:
        k = min(both)
        raise ConfigError(f"{_where(path, text, 'zip', k)}: {k!r} is in both [grid] and [zip]")
    if lists["zip"] and len({len(v) for v in lists["zip"].values()}) != 1:
        sizes = {k: len(v) for k, v in lists["zip"].items()}
        raise ConfigError(f"{path or 'spec'}: [zip] lists must have one length, got {sizes}")
    spec = SweepSpec(str(meta.get("name", Path(path).stem if path else "sweep")), base, lists["grid"], lists["zip"],
                     meta.get("executor", "processes"), meta.get("workers"), meta.get("scheduler"),
                     int(meta.get("chunk", 8)), root)
    for p in points(spec):  # every point must describe a medium the chain can build
        _medium_of(p)
    return spec


def load_spec(path, *, sweep: bool = True) -> SweepSpec:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such spec file {str(p)!r}")
    return parse_spec(p.read_text(), str(p), sweep=sweep)


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


def _run_chunk(chunk: list[dict]) -> list[dict]:
    return [evaluate_point(p) for p in chunk]


# ----------------------------------------------------------------------------- store
def read_records(path) -> dict:
    """The store's records by key (the last complete line wins; a line cut short by a
    crash is ignored)."""
    out = {}
    p = Path(path)
    if not p.exists():
        return out
    with open(p, encoding="utf-8") as fh:
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


class _Store:
    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a crash can leave a partial last line: end it so the next record starts clean
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    with open(self.path, "ab") as fa:
                        fa.write(b"\n")
        self.fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held for the run, closed by close()

    def append(self, rec: dict) -> None:
        self.fh.write(json.dumps(rec, default=float) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def load(path):
    """The store as a ``pandas.DataFrame``: one row per point, its parameters, ``status``,
    ``error`` and the figures."""
    try:
        import pandas as pd
    except ModuleNotFoundError:
        raise ConfigError("loading a sweep as a DataFrame needs pandas: pip install pandas") from None
    rows = []
    for key, rec in read_records(path).items():
        row = {"key": key, "status": rec.get("status"), "error": rec.get("error"), "seconds": rec.get("seconds")}
        row.update(rec.get("params", {}))
        row.update(rec.get("row", {}))
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- executors
class _Lazy:
    """A task the inline executor runs when its result is asked for."""

    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def result(self):
        return self.fn(self.arg)


class _Inline:
    """Runs each chunk in this process as the runner reaches it, so every finished chunk is
    recorded before the next starts."""

    def submit(self, fn, arg):
        return _Lazy(fn, arg)

    def as_completed(self, futures):
        return iter(futures)

    def close(self):
        pass


class _Processes:
    def __init__(self, workers: int | None):
        self.pool = ProcessPoolExecutor(max_workers=workers)

    def submit(self, fn, arg):
        return self.pool.submit(fn, arg)

    def as_completed(self, futures):
        return _as_completed(futures)

    def close(self):
        self.pool.shutdown(cancel_futures=True)


class _Dask:
    def __init__(self, workers: int | None, scheduler: str | None):
        try:
            from distributed import Client, LocalCluster
        except ModuleNotFoundError:
            raise ConfigError("the dask executor needs dask.distributed: pip install 'dask[distributed]'") from None
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

    def submit(self, fn, arg):
        return self.client.submit(fn, arg, pure=False)

    def as_completed(self, futures):
        from distributed import as_completed

        return as_completed(futures)

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _executor(kind: str, workers, scheduler):
    if kind == "inline":
        return _Inline()
    if kind == "processes":
        return _Processes(workers)
    if kind == "dask":
        return _Dask(workers, scheduler)
    raise ConfigError(f"executor must be 'inline', 'processes' or 'dask', got {kind!r}")


# ----------------------------------------------------------------------------- runner
@dataclass
class SweepResult:
    """What a run did: points in the sweep, already done before, run now (ok and
    failed), seconds, and the store."""

    total: int
    skipped: int
    ok: int
    failed: int
    seconds: float
    store: str
    notes: list = field(default_factory=list)

    @property
    def points_per_second(self) -> float:
        return (self.ok + self.failed) / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {"total": self.total, "skipped": self.skipped, "ok": self.ok, "failed": self.failed,
                "seconds": self.seconds, "points_per_second": self.points_per_second, "store": self.store}


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


def run_sweep(spec: SweepSpec, store, *, executor: str | None = None, workers: int | None = None,
              scheduler: str | None = None, progress: bool = True, retry_failed: bool = False,
              stream=None) -> SweepResult:
    """Run the points of ``spec`` not yet in ``store`` (a JSON Lines path) and append
    their records as they finish."""
    if not isinstance(spec, SweepSpec):
        raise ConfigError(f"run_sweep needs a SweepSpec, got {type(spec).__name__}")
    kind = executor or spec.executor
    nw = workers or spec.workers
    sched = scheduler or spec.scheduler
    if sched and kind != "dask":
        kind = "dask"
    allp = points(spec)
    done = read_records(store)
    keep = {k for k, r in done.items() if r.get("status") == "ok" or not retry_failed}
    todo, seen = [], set()
    for p in allp:
        k = point_key(p)
        if k in keep or k in seen:
            continue
        seen.add(k)
        todo.append(p)
    res = SweepResult(len(allp), len(allp) - len(todo), 0, 0, 0.0, str(store))
    if not todo:
        return res
    t0 = time.perf_counter()
    st = _Store(store)
    bar = _Progress(len(todo), stream or sys.stderr, progress)
    ex = _executor(kind, nw, sched)
    try:
        futs = [ex.submit(_run_chunk, c) for c in _chunks(todo, spec.chunk)]
        for f in ex.as_completed(futs):
            recs = f.result()
            for rec in recs:
                st.append(rec)
                if rec["status"] == "ok":
                    res.ok += 1
                else:
                    res.failed += 1
            bar.update(len(recs))
    finally:
        bar.close()
        ex.close()
        st.close()
    res.seconds = time.perf_counter() - t0
    return res
