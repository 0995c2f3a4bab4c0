"""COM's fixed cost per call, stage by stage, before and after issue 22 (part 5), in one run.

``phy.channel_margin`` on ``DPO_14in_Meg7_THRU`` with its two crosstalk siblings (one FEXT,
one NEXT) and the 802.3ck KR preset (both package test cases), timed:

- **fixed cost**: a one-setting grid (the CTLE and Tx FFE setting the full search picks,
  ``g_DC`` -16 dB, ``g_DC2`` -3 dB, Tx FFE (-0.02, 0.06, -0.3, 0)), so that everything but
  the equaliser search's work per setting is what is measured;
- **full grid**: the preset's whole search (147 CTLE x 4,345 Tx FFE settings per case).

Each call is split by stage, exclusive times (a stage's time excludes the stages it calls):
``packages`` (the reference packages), ``cascade`` (package + channel + package, and the
termination), ``transfer`` (the chain's delay and loss trend, and the move onto the DFT
grid), ``filters`` (the DFT grid, rectangle, Tx edge and Rx Butterworth), ``basis pulses``
(the CTLE's basis pulses and their combination per CTLE setting), ``search prep`` (the
per-CTLE-setting Python around the kernel), ``kernel`` (the Numba figure-of-merit kernel),
``final COM`` (the distribution at the chosen setting) and ``glue`` (the rest).

"Before" is the code as it was: packages built on every call (once per end within a
case), the cascade by scikit-rf's ``**`` on :class:`channels.Channel` objects
(:func:`channels.cascading.join_skrf`, the tests' oracle, kept for complex references)
with the termination by :func:`channels.media.terminate`; it is put back in place by
patching those functions for the "before" calls only. "After" is the code as it is: the
packages remembered (:func:`phy.engines.com.chain.package`; ``after, cold`` empties that
memory before every call) and the cascade on arrays (:mod:`channels.cascading`). The
smaller changes to the glue (the parameter set's ``to_dict`` once per call rather than once
per case as well, each aggressor's phase energies in one reduction) are in both, so the
"before" glue is a little faster than it was. Every COM value of both is printed and must
agree.

One core: thread counts set to 1 before numpy loads; pinned to one CPU where allowed.

``--speed BEFORE`` (issue 35) measures instead COM's search per setting, the code in
``BEFORE`` (a checkout of the code before, e.g. ``git worktree add --detach /tmp/before35
862076c``) against this tree, each in its own process (:mod:`com_speed_worker`), the two
taking turns: the 802.3ck KR grid on the same channel set (us per setting, of which the
figure-of-merit kernel) and the full 802.3dj KR grid (class A test 1, the Rx FFE by MMSE at
all 192,276 settings, no MLSD) on ``CA_19p75dB`` with its FEXT and NEXT (seconds per case, of
which the MMSE kernel). CPU time, the best of ``--speed-repeat`` runs each.

    python benchmarks/bench_com_cost.py                  # about 1 minute
    python benchmarks/bench_com_cost.py --repeat 15 --json com_cost.json
    python benchmarks/bench_com_cost.py --speed /tmp/before35 --speed-repeat 3   # 5-10 minutes
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import contextlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np

import channels
import channels.cascading as cascading
from channels import media
from phy.engines.com import ComParams, chain, channel_margin, margin
from phy.engines.com import _kernels as com_kernels

SHARED = REPO.parent / "shared" / "channels" / "ieee802.3ck"
STAGES = ("packages", "cascade", "transfer", "filters", "basis pulses", "search prep", "kernel", "final COM", "glue")


class Stages:
    """Exclusive time per stage: wrappers that add their elapsed time to their stage and
    take it off the stage that called them."""

    def __init__(self):
        self.t = dict.fromkeys(STAGES, 0.0)
        self._stack: list = []

    def wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            self._stack.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                inner = self._stack.pop()
                self.t[stage] += dt - inner
                if self._stack:
                    self._stack[-1] += dt
        return timed

    def wrap_gen(self, stage: str, fn):
        def timed(*args, **kwargs):
            it = fn(*args, **kwargs)
            while True:
                try:
                    item = self.wrap(stage, next)(it)
                except StopIteration:
                    return
                yield item
        return timed


@contextlib.contextmanager
def patched(pairs):
    old = [(obj, name, getattr(obj, name)) for obj, name, _ in pairs]
    for obj, name, new in pairs:
        setattr(obj, name, new)
    try:
        yield
    finally:
        for obj, name, value in old:
            setattr(obj, name, value)


def before_patches() -> tuple[list, callable]:
    """The code before the change: packages once per (case, end) within a call, and the
    scikit-rf cascade on Channel objects. Returns the patches and a function that starts a
    new call (the old memory lived for one call)."""
    memo: dict = {}

    def old_package(p, f, end):
        key = (p, end, f.size, float(f[0]), float(f[-1]))
        if key not in memo:
            memo[key] = p.package(f, end)
        return memo[key]

    return ([(chain, "package", old_package), (cascading, "join", cascading.join_skrf),
             (chain, "terminated_transfer", chain.transfer_channels)], memo.clear)


def stage_patches(st: Stages, before: bool) -> list:
    """Wrappers that time each stage (on top of the "before" patches when ``before``)."""
    pk = chain.package
    out = [(chain, "package", st.wrap("packages", pk)),
           (margin, "Grid", type("Grid", (margin.Grid,), {"__init__": st.wrap("filters", margin.Grid.__init__)})),
           (margin, "_ctle_pulses", st.wrap_gen("basis pulses", margin._ctle_pulses)),
           (margin, "_fom_grid", st.wrap("search prep", margin._fom_grid)),
           (com_kernels, "fom_search", st.wrap("kernel", com_kernels.fom_search)),
           (margin, "_com_at", st.wrap("final COM", margin._com_at))]
    if before:
        out += [(channels, "cascade", st.wrap("cascade", channels.cascade)),
                (media, "terminate", st.wrap("cascade", media.terminate)),
                (chain, "resample_response", st.wrap("transfer", chain.resample_response)),
                (channels.channel, "estimate_delay", st.wrap("transfer", channels.channel.estimate_delay)),
                (channels.channel, "fit_loss_trend", st.wrap("transfer", channels.channel.fit_loss_trend))]
    else:
        out += [(chain, "cascade_s", st.wrap("cascade", chain.cascade_s)),
                (chain, "renormalise_s", st.wrap("cascade", chain.renormalise_s)),
                (chain, "resample_response", st.wrap("transfer", chain.resample_response)),
                (chain, "estimate_delay", st.wrap("transfer", chain.estimate_delay)),
                (chain, "fit_loss_trend", st.wrap("transfer", chain.fit_loss_trend))]
    return out


def setups(mode: str):
    """(patches, function run before each call) of a mode: ``before``, ``after`` (the
    packages remembered from the warm-up) or ``after-cold`` (memory emptied every call)."""
    if mode == "before":
        return before_patches()
    return [], (chain.clear_packages if mode == "after-cold" else (lambda: None))


def run(ch, p, modes, repeat: int) -> dict:
    """Per mode: the best total of ``repeat`` plain calls, then each stage's best over
    ``repeat`` instrumented calls; the modes take turns call by call, so that they share
    whatever else the machine is doing."""
    out = {m: {"totals": [], "stages": dict.fromkeys(STAGES, np.inf)} for m in modes}
    for m in modes:  # warm-up: Numba cache, imports, this grid's packages
        pairs, fresh = setups(m)
        with patched(pairs):
            fresh()
            out[m]["result"] = channel_margin(ch, p)
    for _ in range(repeat):
        for m in modes:
            pairs, fresh = setups(m)
            with patched(pairs):
                fresh()
                t0 = time.perf_counter()
                channel_margin(ch, p)
                out[m]["totals"].append(time.perf_counter() - t0)
    for _ in range(repeat):
        for m in modes:
            pairs, fresh = setups(m)
            st = Stages()
            with patched(pairs):
                fresh()
                with patched(stage_patches(st, m == "before")):
                    t0 = time.perf_counter()
                    channel_margin(ch, p)
                    dt = time.perf_counter() - t0
            st.t["glue"] = dt - sum(st.t.values())
            out[m]["stages"] = {k: min(out[m]["stages"][k], st.t[k]) for k in STAGES}
    return {m: {"com_db": v["result"].com_db, "case_com_db": v["result"].case_com_db, "seconds": min(v["totals"]),
                "stages_s": v["stages"]} for m, v in out.items()}


def show(title: str, rows: dict) -> None:
    modes = list(rows)
    print(f"\n{title}")
    print(f"  {'stage':14s}" + "".join(f"{m + ' ms':>16s}" for m in modes) + f"{'before/after':>14s}")
    for k in STAGES + ("total",):
        vals = [rows[m]["seconds"] if k == "total" else rows[m]["stages_s"][k] for m in modes]
        ratio = vals[0] / vals[1] if vals[1] > 0 else float("inf")
        label = "total (plain)" if k == "total" else k
        print(f"  {label:14s}" + "".join(f"{v * 1e3:16.1f}" for v in vals) + f"{ratio:13.1f}x")
    print("  COM dB: " + ", ".join(f"{m} {rows[m]['com_db']:.12f} {list(rows[m]['case_com_db'].values())}"
                                   for m in modes))


def speed(before: Path, repeat: int, standards=("ck", "dj")) -> dict:
    """Issue 35: the search per setting, ``before`` against this tree, in processes that take
    turns (:mod:`com_speed_worker`); the best of ``repeat`` runs of each, for ``standards``."""
    worker = REPO / "benchmarks" / "com_speed_worker.py"
    trees = {"before": before.resolve(), "after": REPO}
    out: dict = {}
    for which in standards:
        runs: dict = {m: [] for m in trees}
        for _ in range(repeat):
            for m, tree in trees.items():
                env = dict(os.environ, PYTHONPATH=str(tree))
                res = subprocess.run([sys.executable, str(worker), which, str(SHARED)], env=env, capture_output=True,
                                     text=True, check=True)
                runs[m].append(json.loads(res.stdout.strip().splitlines()[-1]))
        out[which] = {m: min(v, key=lambda r: r["total_s"]) | {"kernel_us_best": min(r["kernel_us"] for r in v)}
                      for m, v in runs.items()}
    return out


def show_speed(out: dict) -> None:
    rows = [("802.3ck FOM kernel, us per setting", "kernel_us_best", 1.0, 0.5),
            ("802.3ck grid, us per setting", "grid_us", 1.0, None),
            ("802.3dj MMSE kernel, us per setting", "kernel_us_best", 1.0, None),
            ("802.3dj grid, us per setting", "grid_us", 1.0, None),
            ("802.3dj full grid, s per case", "total_s", 1.0, 10.0)]
    print(f"\n  {'':38s}{'before':>10s}{'after':>10s}{'ratio':>8s}   target")
    for (label, key, scale, target), which in zip(rows, ("ck", "ck", "dj", "dj", "dj")):
        if which not in out:
            continue
        d = out[which]
        b, a = d["before"][key] * scale, d["after"][key] * scale
        tgt = "" if target is None else f"<= {target:g}: {'met' if a <= target else 'NOT met'}"
        print(f"  {label:38s}{b:10.3f}{a:10.3f}{b / a:7.2f}x   {tgt}")
    for which, d in out.items():
        print(f"  {which}: COM before {d['before']['com_db']!r} dB, after {d['after']['com_db']!r} dB, "
              f"{d['after']['settings']:,} settings over {d['after']['cases']} package case(s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--full-repeat", type=int, default=2)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--speed", type=Path, metavar="BEFORE", help="issue 35: the search per setting against the "
                                                                   "code in this checkout (see above)")
    ap.add_argument("--speed-repeat", type=int, default=3)
    ap.add_argument("--speed-only", choices=("ck", "dj"), help="with --speed: only the 802.3ck or 802.3dj rows")
    args = ap.parse_args()
    if not SHARED.exists():
        sys.exit(f"bench_com_cost: {SHARED} not found (the shared channels live beside the repository)")
    if args.speed:
        print(f"COM search per setting (issue 35), {args.speed} against {REPO}, one core each, CPU time, best of "
              f"{args.speed_repeat}; load average {os.getloadavg()[0]:.1f} at the start")
        out = speed(args.speed, args.speed_repeat, (args.speed_only,) if args.speed_only else ("ck", "dj"))
        show_speed(out)
        print(f"  load average {os.getloadavg()[0]:.1f} at the end")
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2, default=float))
        return 0
    pin = "not pinned"
    if hasattr(os, "sched_setaffinity"):
        try:
            cpu = min(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cpu})
            pin = f"pinned to CPU {cpu}"
        except OSError as exc:
            pin = f"not pinned ({exc})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(SHARED / "DPO_14in_Meg7_THRU.s4p")
        aggs = [channels.load(SHARED / "DPO_14in_Meg7_FENH89.s4p", thru=ch, kind="fext"),
                channels.load(SHARED / "DPO_14in_Meg7_NENF89.s4p", thru=ch, kind="next")]
    ch = ch.with_aggressors(*aggs)
    full = ComParams.ieee_802_3ck_kr()
    one = full.with_(g_dc_db=(-16.0,), g_dc2_db=(-3.0,), c_m3=(-0.02,), c_m2=(0.06,), c_m1=(-0.3,), c_p1=(0.0,))
    print(f"COM fixed cost: DPO_14in_Meg7 + FEXT + NEXT, {full.name}, {len(full.package_cases)} package cases; "
          f"one core ({pin}); best of {args.repeat}")
    out = {}
    out["fixed"] = run(ch, one, ("before", "after", "after-cold"), args.repeat)
    show("one-setting grid (the fixed cost)", out["fixed"])
    out["full"] = run(ch, full, ("before", "after"), args.full_repeat)
    show(f"full grid ({full.n_ctle_settings} CTLE x {full.n_tx_settings} Tx FFE settings per case)", out["full"])
    for part in ("fixed", "full"):
        coms = {m: v["com_db"] for m, v in out[part].items()}
        spread = max(coms.values()) - min(coms.values())
        print(f"{part}: COM spread over before/after {spread:.3g} dB")
    fixed = out["fixed"]["after"]["seconds"]
    print(f"fixed cost per call after: {fixed * 1e3:.1f} ms (target < 100 ms: {'met' if fixed < 0.1 else 'NOT met'}); "
          f"before {out['fixed']['before']['seconds'] * 1e3:.1f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
