"""Compile the Numba kernels ahead of a first run, several groups at once.

The engines' hot loops are ``@njit(cache=True)`` kernels: the first call in a fresh
environment compiles them (on a 2-core machine about 50 s for everything ``linkmodel
demo`` reaches: COM's MMSE search about 20 s, the time-domain kernel about 15 s, the
statistical eye's DFE chain and the FEC's burst analysis about 10 s) and stores the machine
code in Numba's cache, which later runs load in milliseconds. Numba compiles one function
at a time per process (a global compiler lock), so a first run in one process pays the sum.

:func:`warm_up` runs the groups in worker processes, one group per process and as many
processes as there are cores (at most one per group), each group through the same public
calls a real run makes (a COM search, a link's statistical eye and FEC analysis, a
time-domain run with and without the eye), so the types the kernels are compiled for are
the ones real runs pass. :func:`cold_groups` says which groups have nothing in the cache
for the current sources (a kernel's cache index is keyed by its source file's time stamp,
so an edited or reinstalled package is cold again). ``linkmodel warmup`` runs it; ``linkmodel
demo`` runs it first when the cache is cold.

Each group names a few *canary* kernels, the slowest to compile among those its calls
reach from Python (a kernel called only from another kernel is compiled into its caller's
cache entry and has none of its own); a group is warm when every canary has a cache entry
for the current source. The
test suite checks that each group's calls reach its canaries and that after a warm-up the
demo compiles nothing.
"""

from __future__ import annotations

import importlib
import time

from ._procs import fork_map

__all__ = ["DEMO_GROUPS", "GROUPS", "cold_groups", "group_names", "warm_up"]


def _com() -> None:
    """COM's search for an 802.3dj host (Tx FFE and CTLE grid, the Rx FFE by MMSE)."""
    import channels

    from .engines.com import channel_margin
    from .link import Serdes

    baud = 106.25e9
    channel_margin(channels.library.get("twinax_1m_26awg"), Serdes().com_params(baud))


def _link() -> None:
    """A link on a fixed equalisation: its statistical eye, the DFE's error chain, the FEC's
    burst analysis, the required error ratio and the latency."""
    import channels

    from .link import LinkSpec, Serdes, evaluate_link
    from .serdes import Ctle, Dfe, Receiver, RxFfe, Transmitter, TxFfe

    baud = 106.25e9
    s = Serdes(tx=Transmitter(ffe=TxFfe((-0.1, 0.8, -0.1), main=1)),
               rx=Receiver(ctle=Ctle(g_dc_db=-6.0, f_z_hz=baud / 4, f_p1_hz=baud / 4, f_p2_hz=baud),
                           ffe=RxFfe(2, 4), dfe=Dfe(1)))
    evaluate_link(LinkSpec(channel=channels.library.get("chip_to_module"), lanes=1, lane_rate_bps=2 * baud,
                           fec="KP4", serdes=s))


def _timesim() -> None:
    """The time-domain kernel, decisions only and with the eye, with the SerDes's own
    impairments (the direct path) and with edge jitter (the long-span tail)."""
    import channels

    from .engines import simulate
    from .link import Serdes
    from .serdes import Dfe, Receiver, RxFfe

    baud = 106.25e9
    ch = channels.library.get("twinax_1m_26awg")
    noise, jitter = Serdes().impairments(baud)
    rx = Receiver(bandwidth_hz=0.55 * baud, ffe=RxFfe(2, 4), dfe=Dfe(1))
    for eye in (False, True):
        simulate(ch, 3_000, baud_hz=baud, rx=rx, noise=noise, jitter=jitter, eye=eye, seed=1)
        simulate(ch, 3_000, baud_hz=baud, rx=rx, eye=eye, seed=1)


def _touchstone() -> None:
    """The Touchstone reader's compiled scan of a data block (a 4-port file of a lossy
    delay written by scikit-rf, read back as :func:`channels.load` reads files)."""
    import os
    import tempfile

    import numpy as np
    import skrf as rf

    from channels._tsread import read_text

    f = np.linspace(10e6, 50e9, 200)
    thru = np.exp(-2j * np.pi * f * 1e-9 - f / 50e9)
    s = np.zeros((f.size, 4, 4), complex)
    s[:, 0, 1] = s[:, 1, 0] = s[:, 2, 3] = s[:, 3, 2] = thru
    with tempfile.TemporaryDirectory() as d:
        rf.Network(frequency=rf.Frequency.from_f(f, unit="Hz"), s=s, z0=50).write_touchstone("warm", dir=d)
        path = os.path.join(d, "warm.s4p")
        with open(path, encoding="ascii") as fh:
            read_text(fh.read(), path)


#: The groups: name -> (what it compiles, the calls, the canary kernels as "module:name"),
#: the slowest to compile first (on 2 cores: COM's about 20 s on one, the simulator's
#: about 17 s then the link's about 10 s on the other).
GROUPS: dict = {
    "com": ("COM's search (Tx FFE and CTLE grid, Rx FFE by MMSE)", _com,
            ("phy.engines.com._mmse_kernels:mmse_grid", "phy.engines.com._kernels:fom_search")),
    "timesim": ("the time-domain simulator", _timesim,
                ("phy.engines.timesim._kernels:run_chunk", "phy.engines.timesim._samples:prepare_symbols",
                 "phy.serdes._kernels:fast_normals")),
    "link": ("the statistical eye, the DFE error chain and the FEC burst analysis", _link,
             ("phy.engines.pmf:discrete_pmf", "phy.engines._chain_kernels:chain_step",
              "fec._kernels:dfe_enumerate", "fec._burst_kernels:pattern_hits")),
    "touchstone": ("the Touchstone reader", _touchstone, ("channels._tsscan:scan",)),
}

#: The groups ``linkmodel demo`` reaches (it reads no Touchstone file).
DEMO_GROUPS = ("com", "timesim", "link")


def _dispatcher(ref: str):
    mod, name = ref.split(":")
    return getattr(importlib.import_module(mod), name)


def _cached(ref: str) -> bool:
    """Whether the kernel ``ref`` has a cache entry for its current source (Numba's index,
    read as the dispatcher will read it: an index from another source time stamp is
    empty). False when the cache cannot be read (caching off, an unknown Numba)."""
    try:
        cache = _dispatcher(ref)._cache
        return bool(cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - any failure to read the cache means "not known to be warm"
        return False


def cold_groups(groups=None) -> list[str]:
    """The groups (of ``groups``, default all) with a canary kernel not in the cache."""
    names = list(GROUPS) if groups is None else group_names(groups)
    return [g for g in names if not all(_cached(ref) for ref in GROUPS[g][2])]


def group_names(groups) -> list[str]:
    """The group names of ``groups`` (a name or names), checked against :data:`GROUPS`."""
    names = [groups] if isinstance(groups, str) else list(groups)
    bad = [g for g in names if g not in GROUPS]
    if bad:
        from .errors import ConfigError

        raise ConfigError(f"unknown warm-up group(s) {', '.join(map(repr, bad))}; the groups are "
                          f"{', '.join(GROUPS)}")
    return names


def _run_group(name: str) -> tuple[str, float]:
    t = time.perf_counter()
    GROUPS[name][1]()
    return name, time.perf_counter() - t


def warm_up(groups=None, *, workers: int | None = None, only_cold: bool = True, report=None) -> dict[str, float]:
    """Compile the kernel groups (default: all, and of those only the cold ones) in
    ``workers`` processes (default: one per core, at most one per group; 1 runs them here;
    :func:`phy._procs.fork_map`).
    ``report(name, seconds)`` is called as each group ends. Returns each group's seconds
    (compiling and running its calls), an empty dict when nothing was cold."""
    names = group_names(list(GROUPS) if groups is None else groups)
    if only_cold:
        names = cold_groups(names)
    if not names:
        return {}
    order = sorted(names, key=list(GROUPS).index)
    done: dict[str, float] = {}

    def arrived(i, r):
        done[r[0]] = r[1]
        if report is not None:
            report(*r)

    fork_map(_run_group, order, workers, on_result=arrived)
    return done
