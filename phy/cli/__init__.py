"""The ``linkmodel`` command.

Subcommands (``linkmodel SUBCOMMAND --help`` for each):

* ``channel NAME_OR_FILE``: summarise a built-in channel or a Touchstone file: band,
  port order chosen, delay, insertion and return loss at each Nyquist frequency,
  insertion-loss deviation, quality warnings, the pulse response's cursors, its
  crosstalk, and the effective return loss of each port (``--erl-preset``); ``--json``
  for machine-readable output, ``--plot`` for a figure.
* ``com NAME_OR_FILE``: the Channel Operating Margin for a preset (``--preset 802.3ck_kr``,
  ``802.3dj_kr``, ``802.3dj_cr``), the package case that set it and every case's COM, the
  terms against A_s and the equalisation chosen; ``--json``.
* ``library``: the built-in channels and their documented losses.
* ``demo``: the whole chain on built-in defaults, no files needed: a 212.5 Gb/s PAM4 lane
  over 1 m of twinax, its eye (time domain and statistical) and BER, the FEC, the link
  report, the NVL72 roll-up and decode over it; prints a report and writes plots.
* ``link SPEC.toml``: evaluate one link described in TOML (the sweep format without
  ``[grid]``/``[zip]``); a table or ``--json``.
* ``sweep SPEC.toml``: run a sweep (:mod:`phy.sweep`) into a crash-safe, locked store;
  resumes; a per-point time limit (``--point-timeout-s``); a progress line per point
  naming the slowest; ``--dry-run`` (the points, their groups and a measured time
  estimate, nothing written); ``--export FILE.csv|FILE.parquet`` (``--no-run``: the
  store as it is).
* ``rack [SPEC.toml]``: a topology roll-up (:mod:`phy.topology`) and its exports; with no
  file, the defaults (the demo's NVL72 rack).
* ``warmup [GROUP ...]``: compile the Numba kernels not yet cached, one group per core
  (:mod:`phy.warmup`); ``demo`` does this first on a cold cache.

``linkmodel --version`` prints the installed version. The TOML formats of ``link``,
``sweep`` and ``rack`` are in ``docs/toml_reference.md``, rendered from the schemas that
check them (:mod:`phy.config.reference`).

Exit status (:data:`EXIT_CODES`): 0 done (for ``link``: the link passes); 1 ``link``'s
link fails its target (the report is still printed); 2 bad input: an argument, a file, a
key or value, or a check of the whole (a model that does not fit in memory), found before
any work, with one line on stderr; 3 a file could not be read or written while working
(disk full, permission, a folder removed), one line naming it; 130 interrupted (Ctrl-C; a sweep's finished points are
kept); 141 stdout closed early (``linkmodel library --json | head``), ended quietly as a
shell's SIGPIPE would.
"""

from __future__ import annotations

import argparse
import os
import sys

from channels.errors import shown_path

from ..errors import ConfigError, LinkmodelError
from . import com, rack
from .channel import _cmd_channel, _cmd_library, channel_report
from .demo import _cmd_demo, run_demo
from .rack import _cmd_rack, run_rack
from .runs import _cmd_link, _cmd_sweep

__all__ = ["EXIT_CODES", "build_parser", "channel_report", "main", "rack", "run_demo", "run_rack"]

#: The command's exit statuses and what each means.
EXIT_CODES = {
    0: "done (link: the link passes)",
    1: "link: the link fails its target (the report is still printed)",
    2: "bad input, found before any work: an argument, a file, a key or value, or a check of the whole "
       "(a model that does not fit in memory); one line on stderr",
    3: "a file could not be read or written while working (disk full, permission, a folder gone); one "
       "line on stderr naming the file; a sweep's finished points are kept",
    130: "interrupted (Ctrl-C); a sweep's finished points are kept",
    141: "stdout closed early (| head): ended quietly, as a shell's SIGPIPE would",
}


def _version() -> str:
    from .. import __version__

    return f"linkmodel {__version__}"


def build_parser() -> argparse.ArgumentParser:
    from . import _args  # numbers checked as argparse reads them
    from .demo import MAX_DEMO_UI

    epilog = ("exit status: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items())
              + ". TOML formats of link, sweep and rack: docs/toml_reference.md.")
    p = argparse.ArgumentParser(prog="linkmodel", description="Physical-layer link and SerDes modeler.", epilog=epilog)
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True)
    _add_channel_parser(sub, _args)
    com.add_parser(sub)
    lib = sub.add_parser("library", help="list the built-in channels", description="The built-in channels.")
    lib.add_argument("--json", action="store_true", help="print JSON instead of text")
    lib.set_defaults(func=_cmd_library)
    d = sub.add_parser("demo", help="the whole chain on built-in defaults",
                       description="A 212.5 Gb/s PAM4 lane over 1 m of twinax: eye, BER, FEC, link report, "
                                   "NVL72 roll-up and decode; prints a report and writes plots.")
    d.add_argument("--out", default="linkmodel-demo", help="folder for the plots (default linkmodel-demo)")
    d.add_argument("--n-ui", type=_args.count(1, MAX_DEMO_UI, "--n-ui"), default=200_000,
                   help=f"UIs of the time-domain run, 1 to {MAX_DEMO_UI:,} (default 200000)")
    d.add_argument("--no-plots", action="store_true", help="skip the plots (and matplotlib)")
    d.add_argument("--json", action="store_true", help="print JSON instead of text")
    d.add_argument("--no-warmup", action="store_true",
                   help="on a cold Numba cache, compile as the run goes (one process) instead of first in parallel")
    d.set_defaults(func=_cmd_demo)
    w = sub.add_parser("warmup", help="compile the Numba kernels ahead of a first run, in parallel",
                       description="Compile the kernel groups (phy.warmup) not yet in Numba's cache, one group "
                                   "per core; later runs load them. Once per install or upgrade.")
    w.add_argument("groups", nargs="*", help="groups to compile (default all: " + ", ".join(_warmup_groups()) + ")")
    w.add_argument("--workers", type=int, help="processes (default: one per core)")
    w.add_argument("--force", action="store_true", help="run the groups even when their kernels are cached")
    w.set_defaults(func=_cmd_warmup)
    lk = sub.add_parser("link", help="evaluate a link described in a TOML file",
                        description="Evaluate one link: [channel] or [optics], [link] and [serdes] "
                                    "(docs/toml_reference.md). Exits 1 when the link fails its target.")
    lk.add_argument("spec", help="TOML file")
    lk.add_argument("--json", action="store_true", help="print JSON instead of text")
    lk.set_defaults(func=_cmd_link)
    _add_sweep_parser(sub)
    r = sub.add_parser("rack", help="roll up a rack or domain from a TOML file",
                       description="Topology roll-up: [rack] builder, [link] copper, [uplink] optics, [decode], "
                                   "[domain] (docs/toml_reference.md).")
    r.add_argument("spec", nargs="?", help="TOML file (default: every key at its default, the demo's NVL72 rack)")
    r.add_argument("--export", metavar="DIR", help="write ASTRA-sim, Calculon, GenZ, LLMCompass, ns-3 and JSON files")
    r.add_argument("--json", action="store_true", help="print JSON instead of text")
    r.set_defaults(func=_cmd_rack)
    return p


def _add_channel_parser(sub, _args) -> None:
    """``linkmodel channel``'s arguments."""
    c = sub.add_parser("channel", help="summarise a built-in channel or a Touchstone file",
                       description="Loss, return loss, port order, quality and pulse response of a channel.")
    c.add_argument("target", help="a built-in channel name (see 'linkmodel library') or a .s2p/.s4p/.sNp file")
    c.add_argument("--baud-gbd", type=_args.baud_gbd, nargs="+", default=[53.125, 106.25],
                   help="symbol rates in GBd, each above 0 (default: 53.125 106.25)")
    c.add_argument("--samples-per-ui", type=_args.count(2, 1024, "--samples-per-ui"), default=32,
                   help="pulse-response samples per UI, 2 to 1024 (default 32)")
    c.add_argument("--thru", default="auto", help="4-port order: auto (default), 12_34, 13_24 or 14_23")
    c.add_argument("--aggressors", action="store_true",
                   help="also load the crosstalk files beside a through file (names sharing the part before 'thru')")
    c.add_argument("--erl-preset", default="auto", metavar="NAME",
                   help="effective return loss (93A.5) of each port with this preset: 802.3ck_kr, 802.3ck_cr, "
                        "802.3dj_kr, 802.3dj_cr, none, or auto (default: at each rate the CR preset of its family)")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    c.add_argument("--plot", metavar="PNG", help="write loss and pulse-response plots to this file")
    c.set_defaults(func=_cmd_channel)


def _add_sweep_parser(sub) -> None:
    """``linkmodel sweep``'s arguments."""
    s = sub.add_parser("sweep", help="run a sweep from a TOML file (resumes; crash-safe store)",
                       description="Run every point of a sweep ([grid] and [zip]) into a JSON Lines store "
                                   "(docs/toml_reference.md).")
    s.add_argument("spec", help="TOML file")
    s.add_argument("--store", help="JSON Lines store (default: the spec's name with .jsonl)")
    s.add_argument("--executor", choices=("inline", "processes", "dask"), help="default: the spec's, else processes")
    s.add_argument("--workers", type=int, help="worker processes")
    s.add_argument("--point-timeout-s", type=float, metavar="S",
                   help="time limit of one point in seconds (default: the spec's point_timeout_s, else 60)")
    s.add_argument("--scheduler", help="a Dask scheduler address (implies --executor dask)")
    s.add_argument("--no-progress", action="store_true",
                   help="no progress line (by default one per point on stderr, naming the slowest point so far; "
                        "off with --json)")
    s.add_argument("--retry-failed", action="store_true", help="rerun points whose record is an error or a timeout")
    s.add_argument("--dry-run", action="store_true",
                   help="run and write nothing: check the spec, count and group the points, list the first, "
                        "and estimate the run's time from a few points measured here")
    s.add_argument("--list", type=int, metavar="N",
                   help="with --dry-run: points to list (default 20; all when the sweep has no more)")
    s.add_argument("--export", metavar="FILE",
                   help="after the run, write the store as a table: FILE.csv or FILE.parquet "
                        "(pandas, pyarrow: pip install 'linkmodel[sweeps]')")
    s.add_argument("--no-run", action="store_true", help="with --export: run nothing, export the store as it is")
    s.add_argument("--json", action="store_true", help="print the summary (or the --dry-run plan) as JSON")
    s.set_defaults(func=_cmd_sweep)


def _warmup_groups() -> list[str]:
    from ..warmup import GROUPS

    return list(GROUPS)


def _cmd_warmup(args) -> int:
    """``linkmodel warmup``: each group's seconds, or that all was cached."""
    import time

    from .. import warmup

    names = warmup.group_names(args.groups) if args.groups else None
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers}")
    cold = warmup.cold_groups(names)
    if not cold and not args.force:
        print("every kernel group is in Numba's cache: nothing to compile")
        return 0
    t = time.perf_counter()
    warmup.warm_up(names, workers=args.workers, only_cold=not args.force,
                   report=lambda g, sec: print(f"{g:<8} {sec:6.1f} s  {warmup.GROUPS[g][0]}", flush=True))
    print(f"done in {time.perf_counter() - t:.1f} s")
    return 0


def _one_line(text) -> str:
    """``text`` safe to print as one line: control characters (a newline, an escape sequence
    in a file name) escaped as :func:`channels.errors.shown_path` escapes a path, whole."""
    return shown_path(str(text), keep=None)


def _io_error(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    return f"{what}: {' -> '.join(os.fsdecode(n) for n in names)}" if names else what


def main(argv=None) -> int:
    """Entry point of the ``linkmodel`` console script: the command's status, 2 with one
    line on stderr for bad input, 3 with one line naming the file when a file could not be
    read or written, 130 on Ctrl-C, 141 when stdout is closed early. Every error line has its
    control characters escaped (a file name cannot move the terminal's cursor)."""
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored ..."
        return code
    except LinkmodelError as exc:  # any package's bad input: ChannelError, ConfigError, FecError
        print(f"linkmodel: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader left (``| head``): nothing more to say. Point stdout at /dev/null so
        # the interpreter's last flush at exit does not fail again.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
    except OSError as exc:  # after BrokenPipeError, which is one
        print(f"linkmodel: error: could not read or write a file: {_one_line(_io_error(exc))}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("linkmodel: interrupted", file=sys.stderr)
        return 130
