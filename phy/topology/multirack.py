"""Domains over rows of racks: a two-tier domain of NVL72-class racks, a UALink-style
single-tier pod, a scale-out fat tree; each a :class:`Topology` whose cable lengths follow
the rack geometry of :mod:`phy.topology.fabric` and the routes between racks of
:func:`cross_rack_m` (the one- and two-rack builders are in :mod:`phy.topology.builders`).

Every builder counts its links and nodes in closed form first and refuses a domain that
would take more than :data:`phy.topology.fabric.MAX_TOPOLOGY_BYTES` to build and roll up,
before allocating anything (:func:`phy.topology.fabric.check_size`)."""

from __future__ import annotations

import math

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .builders import scale_up_copper
from .fabric import RACK_UNIT_M, SwitchTier, Topology, check_size
from .parts import SWITCH_J_PER_BIT, Accelerator, LinkClass, SwitchAsic
from .wiring import concat_links, row_x_m

__all__ = ["cross_rack_m", "scale_out", "single_tier", "two_tier", "y_sw_of"]


def y_sw_of(asic_in_rack, compute_trays: int):
    """Height (m) of a rack's ``asic_in_rack``-th switch ASIC in :func:`two_tier`'s racks:
    two ASICs a tray, from the middle of the ``compute_trays`` up."""
    return (compute_trays / 2 + np.asarray(asic_in_rack) / 2) * RACK_UNIT_M


def cross_rack_m(dx_m, y1_m, y2_m, pitch_m: float, rack_height_m: float, rise_m: float, tray_run_m: float):
    """The length (m) of a cable between trays at heights ``y1_m`` and ``y2_m`` in racks
    ``dx_m`` apart: neighbours (``dx_m`` at most one ``pitch_m``) through their side walls,
    ``dx + |y1 - y2| + 2 tray_run``; others over the top, ``(H - y1) + (H - y2) + 2 rise +
    dx + 2 tray_run`` with ``H`` the rack's height. A stated geometry (no public routing
    figure): the rack-to-rack run plus the in-rack run at each end.

    Parameters
    ----------
    dx_m : float or array
        The racks' distance apart (m).
    y1_m, y2_m : float or array
        The two trays' heights in their racks (m).
    pitch_m : float
        One rack's pitch (m): at most this apart, racks are neighbours.
    rack_height_m : float
        The racks' height (m).
    rise_m : float
        The run above a rack's top, each end (m).
    tray_run_m : float
        The run inside a tray, each end (m).

    Returns
    -------
    numpy.ndarray of float
        The cable lengths (m), broadcast over the arrays given.
    """
    dx, y1, y2 = (np.asarray(a, dtype=float) for a in (dx_m, y1_m, y2_m))
    side = dx + np.abs(y1 - y2)
    over = (rack_height_m - y1) + (rack_height_m - y2) + 2 * rise_m + dx
    return np.where(dx <= pitch_m * (1 + 1e-9), side, over) + 2 * tray_run_m


def two_tier(n_racks: int = 8, link_class: LinkClass | None = None, uplink_class: LinkClass | None = None, *,
             accelerator: Accelerator | None = None, asic: SwitchAsic | None = None, gpus_per_rack: int = 72,
             links_per_gpu: int = 18, oversubscription: float = 1.0, rack_pitch_m: float = 0.6,
             overhead_m: float = 4.0, tray_run_m: float = 0.1, name: str | None = None,
             rack_height_m: float | None = None, rise_m: float = 0.3) -> Topology:
    """A two-tier scale-up domain: racks of ``gpus_per_rack`` GPUs whose first-tier ASICs
    (in the rack, copper to the GPUs) send ``1 / (1 + oversubscription)`` of their ports up
    over optics to second-tier ASICs in spine racks in the middle of the row. The default,
    8 racks of 72, is a 576-GPU domain; its copper is :func:`scale_up_copper`'s, as NVL72's.

    A cable between racks runs ``overhead_m`` besides the distance between the racks by
    default. With ``rack_height_m`` its route is laid out instead (:func:`cross_rack_m`):
    between neighbouring racks, through their side walls at the switch trays' heights (the
    pitch, the height between the two trays and ``tray_run_m`` at each end); between racks
    further apart, up each rack from its tray to the top, ``rise_m`` up to the overhead
    tray and down at each end, and along the row.

    Parameters
    ----------
    n_racks : int, optional
        Racks of GPUs (default 8).
    link_class : LinkClass or None, optional
        Class of the in-rack GPU-to-L1 links (None: :func:`scale_up_copper`).
    uplink_class : LinkClass or None, optional
        Class of the L1-to-L2 links (None: ``LinkClass.optical("dsp", lanes=2)``).
    accelerator : Accelerator or None, optional
        The GPU (None: :meth:`Accelerator.gb200`).
    asic : SwitchAsic or None, optional
        The ASIC of both tiers (None: :meth:`SwitchAsic.nvlink5`).
    gpus_per_rack : int, optional
        GPUs in a rack (default 72).
    links_per_gpu : int, optional
        Links from each GPU, round robin over its rack's L1 ASICs (default 18).
    oversubscription : float, optional
        Ratio of an L1 ASIC's down ports to its up ports (default 1.0, non-blocking).
    rack_pitch_m : float, optional
        Distance between neighbouring racks, m (default 0.6).
    overhead_m : float, optional
        Length added to the distance between racks for an uplink cable, m (default
        4.0); not used with ``rack_height_m``.
    tray_run_m : float, optional
        Cable run inside the tray at each end, m (default 0.1).
    name : str or None, optional
        Name of the topology (None: ``"two_tier_<GPUs>"``).
    rack_height_m : float or None, optional
        Height of a rack, m; given, uplinks follow :func:`cross_rack_m` (default None).
    rise_m : float, optional
        Rise from a rack's top to the overhead tray, m (default 0.3), with ``rack_height_m``.

    Returns
    -------
    Topology
        The domain with tiers ``"l1"`` and ``"l2"`` and classes (copper, uplink).

    Raises
    ------
    ConfigError
        When ``oversubscription`` leaves an ASIC no down or no up ports.
    """
    nr = integer(n_racks, "n_racks", 1)
    gpr = integer(gpus_per_rack, "gpus_per_rack", 1)
    lpg = integer(links_per_gpu, "links_per_gpu", 1)
    ov = number(oversubscription, "oversubscription", positive=True)
    sw = asic or SwitchAsic.nvlink5()
    acc = accelerator or Accelerator.gb200()
    lc = link_class or scale_up_copper()
    uc = uplink_class or LinkClass.optical("dsp", lanes=2)
    down, up = _down_up_ports(sw, ov)
    l1_per_rack = math.ceil(gpr * lpg / down)
    n = nr * gpr
    n_l1 = nr * l1_per_rack
    uplinks = n_l1 * up
    n_l2 = math.ceil(uplinks / sw.radix)
    spine_racks = max(1, math.ceil(n_l2 * 1 / 18))  # 18 ASICs per rack (9 trays of 2)
    check_size(name or "two_tier", n * lpg + uplinks, n + n_l1 + n_l2 + nr + spine_racks)
    run = number(tray_run_m, "tray_run_m", nonneg=True)
    pitch = number(rack_pitch_m, "rack_pitch_m", positive=True)
    over = number(overhead_m, "overhead_m", nonneg=True)
    g, l1, len0, trays = _gpu_to_l1(n, gpr, lpg, l1_per_rack, run)
    # level 1: every L1 ASIC's up ports spread over the L2 ASICs
    s1 = np.repeat(np.arange(n_l1), up)
    s2 = np.arange(uplinks) % n_l2
    if rack_height_m is not None:
        rack_height_m = number(rack_height_m, "rack_height_m", positive=True)
    len1 = _uplink_lengths(s1, s2, nr, spine_racks, l1_per_rack, trays, pitch, over, rack_height_m, rise_m, run)
    src, dst, L, c, lv = concat_links((g, n + l1, len0, np.zeros(g.size), np.zeros(g.size)),
                                      (n + s1, n + n_l1 + s2, len1, np.ones(s1.size), np.ones(s1.size)))
    tiers = (SwitchTier("l1", sw, n_l1), SwitchTier("l2", sw, n_l2))
    return Topology(name or f"two_tier_{n}", acc, n, tiers, (lc, uc), src, dst, L, c, lv,
                    {"local": ((0, 0), (0,)), "remote": ((0, 1, 1, 0), (0, 1, 0))},
                    ((f"{nr} racks of {gpr}; {l1_per_rack} L1 ASICs per rack ({down} down, {up} up); "
                     f"{n_l2} L2 ASICs in {spine_racks} spine rack(s)"),),
                    np.concatenate([np.arange(n) // gpr, np.arange(n_l1) // l1_per_rack,
                                    nr + np.arange(n_l2) // 18 % spine_racks]))


def _down_up_ports(sw: SwitchAsic, ov: float) -> tuple[int, int]:
    """A first-tier ASIC's ports down (to the GPUs) and up at oversubscription ``ov``."""
    down = round(sw.radix * ov / (1 + ov))
    up = sw.radix - down
    if down < 1 or up < 1:
        raise ConfigError(f"oversubscription {ov} leaves no {'down' if down < 1 else 'up'} ports on a {sw.radix}-port ASIC")
    return down, up


def _gpu_to_l1(n: int, gpr: int, lpg: int, l1_per_rack: int, run: float) -> tuple:
    """Level 0 of :func:`two_tier`: GPU k of a rack spreads its ``lpg`` links over the rack's
    L1 ASICs, round robin; ``(GPU of each link, its L1 ASIC, its length (m), compute trays
    a rack)``, the lengths vertical: GPU trays of 4 above and below the switch trays in
    the middle, plus ``run`` at each end."""
    g = np.repeat(np.arange(n), lpg)
    rack = g // gpr
    slot = (g % gpr) * lpg + np.tile(np.arange(lpg), n)
    l1 = rack * l1_per_rack + slot % l1_per_rack
    trays = math.ceil(gpr / 4)
    y_gpu = ((g % gpr) // 4) * RACK_UNIT_M
    y_sw = y_sw_of(l1 % l1_per_rack, trays)
    return g, l1, np.abs(y_gpu - y_sw) + 2 * run, trays


def _uplink_lengths(s1, s2, nr: int, spine_racks: int, l1_per_rack: int, trays: int, pitch: float, over: float,
                    rack_height_m: float | None, rise_m: float, run: float) -> np.ndarray:
    """Lengths (m) of :func:`two_tier`'s uplinks from L1 ASICs ``s1`` to L2 ASICs ``s2``: the
    spine racks sit in the middle of the row; the distance along the row plus ``over``, or
    with ``rack_height_m`` the route of :func:`cross_rack_m`."""
    x = row_x_m(nr + spine_racks, pitch)
    mid = nr // 2
    x_gpu_rack = np.concatenate([x[:mid], x[mid + spine_racks:]])
    x_spine = x[mid:mid + spine_racks]
    dx = np.abs(x_gpu_rack[s1 // l1_per_rack] - x_spine[s2 // 18 % spine_racks])
    if rack_height_m is None:
        return dx + over
    y1 = y_sw_of(s1 % l1_per_rack, trays)
    y2 = y_sw_of(s2 % 18, trays)
    return cross_rack_m(dx, y1, y2, pitch, rack_height_m, number(rise_m, "rise_m", nonneg=True), run)


def single_tier(n_accelerators: int, link_class: LinkClass | None = None, *, accelerator: Accelerator | None = None,
                asic: SwitchAsic | None = None, links_per_accel: int = 4, accels_per_rack: int = 64,
                rack_pitch_m: float = 0.6, overhead_m: float = 2.0, name: str | None = None) -> Topology:
    """A generic single-tier switched pod (UALink-style): every accelerator has one link to
    each of ``links_per_accel`` switches, so each switch needs a port per accelerator
    (UALink 1.0: up to 1,024 accelerators; REFERENCES.md). Accelerators fill racks of
    ``accels_per_rack``; the switches sit in a rack in the middle of the row (default link
    class :func:`scale_up_copper`). The default
    switch (1,024 ports of 800G) has no public power figure: Tomahawk 5's energy per bit
    (:data:`phy.topology.parts.SWITCH_J_PER_BIT`) over its bandwidth, an estimate.

    Parameters
    ----------
    n_accelerators : int
        Accelerators in the pod (at least 2, at most the switch's radix).
    link_class : LinkClass or None, optional
        Class of every accelerator-to-switch link (None: :func:`scale_up_copper`).
    accelerator : Accelerator or None, optional
        The accelerator (None: :meth:`Accelerator.gb200`).
    asic : SwitchAsic or None, optional
        The switch (None: a 1,024-port 800G UALink-class switch, 200 ns).
    links_per_accel : int, optional
        Links from each accelerator, one to each switch (default 4).
    accels_per_rack : int, optional
        Accelerators in a rack (default 64).
    rack_pitch_m : float, optional
        Distance between neighbouring racks, m (default 0.6).
    overhead_m : float, optional
        Length added to the distance to the switch rack for each cable, m (default 2.0).
    name : str or None, optional
        Name of the topology (None: ``"single_tier_<n>"``).

    Returns
    -------
    Topology
        The pod with one ``"switch"`` tier.

    Raises
    ------
    ConfigError
        When there are more accelerators than switch ports.
    """
    n = integer(n_accelerators, "n_accelerators", 2)
    k = integer(links_per_accel, "links_per_accel", 1)
    apr = integer(accels_per_rack, "accels_per_rack", 1)
    sw = asic or SwitchAsic("ualink_switch", 1024, 800e9, 200e-9, SWITCH_J_PER_BIT * 1024 * 800e9, 4)
    if n > sw.radix:
        raise ConfigError(f"more links than switch ports: {n} accelerators need {n} ports on each switch, "
                          f"the {sw.name} has {sw.radix}")
    racks = math.ceil(n / apr)
    check_size(name or "single_tier", n * k, n + k + racks)
    lc = link_class or scale_up_copper()
    acc = accelerator or Accelerator.gb200()
    x = row_x_m(racks + 1, number(rack_pitch_m, "rack_pitch_m", positive=True))
    mid = racks // 2
    x_acc = np.concatenate([x[:mid], x[mid + 1:]])
    g = np.repeat(np.arange(n), k)
    s = np.tile(np.arange(k), n)
    length = np.abs(x_acc[g // apr] - x[mid]) + number(overhead_m, "overhead_m", nonneg=True)
    src, dst, L, c, lv = concat_links((g, n + s, length, np.zeros(g.size), np.zeros(g.size)))
    return Topology(name or f"single_tier_{n}", acc, n, (SwitchTier("switch", sw, k),), (lc,), src, dst, L, c, lv,
                    {"local": ((0, 0), (0,)), "remote": ((0, 0), (0,))},
                    (f"{n} accelerators in {racks} racks, {k} switches of {sw.radix} ports",),
                    np.concatenate([np.arange(n) // apr, np.full(k, racks)]))


def scale_out(n_accelerators: int, link_class: LinkClass | None = None, *, accelerator: Accelerator | None = None,
              asic: SwitchAsic | None = None, nics_per_accel: int = 1, accels_per_rack: int = 72,
              rack_pitch_m: float = 0.6, overhead_m: float = 4.0, name: str | None = None) -> Topology:
    """A scale-out network for comparison: one NIC per accelerator (800 Gb/s, a
    ConnectX-8-class port; REFERENCES.md) into a non-blocking fat tree of Ethernet
    switches (default :meth:`SwitchAsic.tomahawk5`, 64 ports of 800G): leaves at the top of each rack, two tiers while
    ``radix^2 / 2`` endpoints fit, else three.

    Parameters
    ----------
    n_accelerators : int
        Accelerators (at least 2).
    link_class : LinkClass or None, optional
        Class of every link (None: ``LinkClass.optical("dsp", lanes=4)``).
    accelerator : Accelerator or None, optional
        The accelerator (None: :meth:`Accelerator.gb200`).
    asic : SwitchAsic or None, optional
        The switch of every tier (None: :meth:`SwitchAsic.tomahawk5`).
    nics_per_accel : int, optional
        NIC ports per accelerator (default 1).
    accels_per_rack : int, optional
        Accelerators in a rack (default 72).
    rack_pitch_m : float, optional
        Distance between neighbouring racks, m (default 0.6).
    overhead_m : float, optional
        Length added to the distance between racks for a cable above the leaves, m
        (default 4.0); a NIC-to-leaf cable is 3 m.
    name : str or None, optional
        Name of the topology (None: ``"scale_out_<n>"``).

    Returns
    -------
    Topology
        The fat tree: a ``"leaf"`` tier and, beyond one leaf, the tiers above it.
    """
    n = integer(n_accelerators, "n_accelerators", 2)
    k = integer(nics_per_accel, "nics_per_accel", 1)
    sw = asic or SwitchAsic.tomahawk5()
    lc = link_class or LinkClass.optical("dsp", lanes=4)
    acc = accelerator or Accelerator.gb200()
    apr = integer(accels_per_rack, "accels_per_rack", 1)
    half = sw.radix // 2
    ends = n * k
    leaves = math.ceil(ends / half)
    racks = math.ceil(n / apr)
    links, above = _fat_tree_counts(ends, leaves, half, sw.radix)
    check_size(name or "scale_out", links, n + leaves + above + racks)
    pitch = number(rack_pitch_m, "rack_pitch_m", positive=True)
    over = number(overhead_m, "overhead_m", nonneg=True)
    x = row_x_m(racks, pitch)
    g = np.repeat(np.arange(n), k)
    leaf = np.arange(ends) // half
    len0 = np.full(ends, 3.0)  # NIC to the top-of-rack leaf: a 3 m run
    blocks = [(g, n + leaf, len0, np.zeros(ends), np.zeros(ends))]
    tiers = [SwitchTier("leaf", sw, leaves)]
    paths = {"local": ((0, 0), (0,))}
    x_leaf_of = x[np.minimum((np.arange(leaves) * half // k) // apr, racks - 1)]
    x_mid = x[racks // 2]
    if leaves == 1:
        paths["remote"] = paths["local"]
    elif leaves <= sw.radix:
        paths["remote"] = _add_spines(blocks, tiers, sw, n, leaves, half, x_leaf_of, x_mid, over)
    else:
        paths["remote"] = _add_pods_and_cores(blocks, tiers, sw, n, leaves, half, x_leaf_of, x_mid, over)
    src, dst, L, c, lv = concat_links(*blocks)
    # leaves in their racks; the tiers above in one network rack past the row
    above = sum(t.count for t in tiers[1:])
    rack_of = np.concatenate([np.arange(n) // apr, np.minimum((np.arange(leaves) * half // k) // apr, racks - 1),
                              np.full(above, racks)])
    return Topology(name or f"scale_out_{n}", acc, n, tuple(tiers), (lc,), src, dst, L, c, lv, paths,
                    (f"{n} accelerators, {k} NIC(s) each, fat tree of {sw.radix}-port switches: "
                     + ", ".join(f"{t.count} {t.name}" for t in tiers),), rack_of.astype(np.int64))


def _fat_tree_counts(ends: int, leaves: int, half: int, radix: int) -> tuple[int, int]:
    """(links, switches above the leaves) of :func:`scale_out`'s fat tree, in closed form."""
    if leaves <= 1:
        return ends, 0
    if leaves <= radix:
        return ends + leaves * half, half
    aggs = math.ceil(leaves / half) * half
    return ends + leaves * half + aggs * half, aggs + math.ceil(aggs * half / radix)


def _add_spines(blocks: list, tiers: list, sw: SwitchAsic, n: int, leaves: int, half: int, x_leaf_of, x_mid,
                over: float) -> tuple:
    """Two tiers: every leaf has one link to each of ``half`` spines. Appends the links and
    the tier; returns the remote path."""
    s1 = np.repeat(np.arange(leaves), half)
    s2 = np.tile(np.arange(half), leaves)
    len1 = np.abs(x_leaf_of[s1] - x_mid) + over
    blocks.append((n + s1, n + leaves + s2, len1, np.zeros(s1.size), np.ones(s1.size)))
    tiers.append(SwitchTier("spine", sw, half))
    return ((0, 1, 1, 0), (0, 1, 0))


def _add_pods_and_cores(blocks: list, tiers: list, sw: SwitchAsic, n: int, leaves: int, half: int, x_leaf_of,
                        x_mid, over: float) -> tuple:
    """Three tiers: pods of ``half`` leaves fully meshed to ``half`` aggregation switches,
    whose up ports spread over the core switches. Appends the links and tiers; returns the
    remote path."""
    pods = math.ceil(leaves / half)
    aggs = pods * half
    s1 = np.repeat(np.arange(leaves), half)
    a_of = (s1 // half) * half + np.tile(np.arange(half), leaves)
    len1 = np.full(s1.size, over)
    cores = math.ceil(aggs * half / sw.radix)
    s2 = np.repeat(np.arange(aggs), half)
    c_of = np.arange(aggs * half) % cores
    x_pod = np.zeros(aggs)
    x_pod[a_of] = x_leaf_of[s1]
    len2 = np.abs(x_pod[s2] - x_mid) + over
    blocks.append((n + s1, n + leaves + a_of, len1, np.zeros(s1.size), np.ones(s1.size)))
    blocks.append((n + leaves + s2, n + leaves + aggs + c_of, len2, np.zeros(s2.size), np.full(s2.size, 2)))
    tiers += [SwitchTier("aggregation", sw, aggs), SwitchTier("core", sw, cores)]
    return ((0, 1, 2, 2, 1, 0), (0, 1, 2, 1, 0))
