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
    equalisation = "preset"     # "com" (COM proposes, the statistical eye decides) or "preset"

    [grid]
    "channel.length_m" = [0.5, 1.0, 1.5, 2.0]
    "link.fec" = ["KP4", "KR4", "LL272", "none"]

Every point runs :func:`phy.evaluate_link` and yields one flat row: its inputs and the
link report's figures. Rows go to an append-only JSON Lines store, one record per point
keyed by a hash of the point, written and fsynced as each finishes; a rerun skips the
points already recorded, so a sweep killed at any moment loses at most the points in
flight and never records one twice. A grid value or zip row given twice is refused
before work starts. :func:`load` reads a store as a ``pandas.DataFrame`` and
:func:`export` writes it as CSV or Parquet (pandas and pyarrow: the ``sweeps`` extra).
Each row says the equalisation a point used (``equalisation``: ``"com"`` or ``"preset"``)
and how (``equalisation_choice``).

Before a run, :func:`plan_sweep` (``linkmodel sweep SPEC --dry-run``) counts the points by
multiplication, groups them as the runner will, lists the first, reads the store for what
is done, and estimates the run's time from the workers' start and a few points measured
in this process, saying how. During a run a progress line per point names the slowest
point so far, and :attr:`SweepResult.slowest` names the slowest of the run.

What a run survives:

* a point that fails records status ``"error"`` and its message, and the sweep goes on;
* a point past its time limit (``point_timeout_s``) records status ``"timeout"`` and the
  limit: in a process pool (and in each Dask worker) the worker running it is killed,
  even inside a Numba kernel or a C call, and replaced; the rest of its chunk runs on;
* a worker that dies (killed, out of memory, a segfault) costs only the point it was
  running: that point and the rest of its chunk run again in a fresh worker, and if the
  point kills its worker a second time it records ``"error"`` with ``worker died: ...``;
* a second run on the same store is refused at once, through any of its names, naming
  the run that holds it (an OS lock on the store file itself, which dies with its
  holder: a killed run never blocks);
* a record damaged or edited in the store (each carries a SHA-256 of itself) or of the
  wrong shape is skipped with a warning naming its line, and its point runs again;
* a store that is a device, a folder, the spec itself or any file that is not a store is
  refused before any work; a disk that fills up is an ``OSError`` naming the store;
* worker processes start isolated (``python -I``): a module planted in the current
  folder (``skrf.py``) is never imported;
* the death of the run itself (even ``kill -9``) ends its workers (Linux).

Executors share one interface: ``inline`` (this process), ``processes`` (worker
processes of this run) and ``dask`` (``distributed``: a scheduler address, or a local
cluster). Points that share a channel travel together in chunks, and a process pool gives
a free worker the chunks of a channel it has built first, so each worker builds and
equalises a channel once for all the FEC and framing choices on it.

Public API
----------
The names in ``__all__``, reached as ``phy.sweep.NAME``: :func:`load_spec` and
:func:`parse_spec` (a sweep file to a :class:`SweepSpec`), :func:`points`,
:func:`iter_points`, :func:`point_at`, :func:`count_points` and :func:`point_key` (its
points), :func:`link_spec` (a point's :class:`phy.LinkSpec`: :func:`phy.config.link_spec_from`),
:func:`evaluate_point`, :func:`run_sweep` and :class:`SweepResult`, :func:`plan_sweep` and
:class:`SweepPlan` (the dry run), :func:`load`, :func:`export`, :func:`export_format` and
:func:`read_records` (the store), :class:`StoreWarning`; :data:`SCHEMA` and
:data:`SPELLINGS` (:data:`phy.config.LINK_SCHEMA` and :data:`phy.config.SPELLINGS`: a
sweep file is a link file, read by :mod:`phy.config`, with ``[sweep]``, ``[grid]`` and
``[zip]``).

Public namespaces
-----------------
:mod:`phy.sweep.plan`
    the dry run's plan and its words (``MAX_LISTED``, ``DEFAULT_LISTED``, ``slowest_words``).
:mod:`phy.sweep.records`
    a record's shape and checksum, reading a store back.

Private modules
---------------
``spec`` (the grid walked into points and their keys), ``point`` (one point's record),
``store`` (the locked JSON Lines store, its DataFrame and exports), ``workers`` (worker
processes, inline, Dask), ``runner`` (:func:`run_sweep`).
"""

from ..config.schema import SPELLINGS
from . import plan, records
from .plan import SweepPlan, plan_sweep
from .point import evaluate_point, link_spec
from .runner import SweepResult, run_sweep
from .spec import (
    DEFAULT_POINT_TIMEOUT_S,
    SCHEMA,
    SweepSpec,
    count_points,
    iter_points,
    load_spec,
    parse_spec,
    point_at,
    point_key,
    points,
)
from .records import StoreWarning
from .store import export, export_format, load, read_records

__all__ = [
    "DEFAULT_POINT_TIMEOUT_S",
    "SCHEMA",
    "SPELLINGS",
    "SweepPlan",
    "SweepResult",
    "StoreWarning",
    "SweepSpec",
    "count_points",
    "evaluate_point",
    "export",
    "export_format",
    "iter_points",
    "link_spec",
    "load",
    "load_spec",
    "parse_spec",
    "plan",
    "plan_sweep",
    "point_at",
    "point_key",
    "points",
    "read_records",
    "records",
    "run_sweep",
]
