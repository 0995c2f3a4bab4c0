"""Topology builders of one rack or two: an NVL72-class rack, an 8-GPU board, two NVL36
racks joined; each a :class:`Topology` whose cable lengths follow the rack geometry of
:mod:`phy.topology.fabric`. Domains over rows of racks (two tiers, a single-tier pod, a
scale-out fat tree) are in :mod:`phy.topology.multirack`.

Every builder counts its links and nodes in closed form first and refuses a domain that
would take more than :data:`phy.topology.fabric.MAX_TOPOLOGY_BYTES` (2 GiB, about two
million links) to build and roll up, before allocating anything
(:func:`phy.topology.fabric.check_size`): a domain too large is refused in
microseconds, not after 10 GB."""

from __future__ import annotations

import math

import numpy as np

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import RACK_UNIT_M, SwitchTier, Topology, check_size
from .parts import Accelerator, LinkClass, SwitchAsic
from .wiring import concat_links

__all__ = ["TRAY_FLYOVER_M", "hgx8", "nvl36x2", "nvl72", "scale_up_copper", "tray_flyover_m"]


#: The flyover cable inside an NVL72-class tray, from the near-chip connector to the rear
#: connector, at each end of a spine link (m): a stated assumption (no public figure; a
#: compute or switch tray is about 0.6 m deep and its ASICs sit mid-tray).
TRAY_FLYOVER_M = 0.2


def tray_flyover_m(host: str | None) -> float | None:
    """The tray flyover a copper class carries in its channel for ``host``:
    :data:`TRAY_FLYOVER_M` with an 802.3dj CR host class (the SerDes holds the host, the
    flyover cable is in the channel), None with a board host (``"flyover"`` and ``"pcb"``
    model their own)."""
    from ..engines.com.params import CR_HOST_CLASSES

    return TRAY_FLYOVER_M if host in CR_HOST_CLASSES else None


def scale_up_copper(lanes: int = 2, lane_rate_bps: float = 212.5e9, host: str | None = "HL",
                    flyover_m: float | None = TRAY_FLYOVER_M) -> LinkClass:
    """The scale-up copper link: twinax with KP4 and a link layer (CRC and go-back-N
    replay, as NVLink and UALink have), from a cabled host at each end by default: 802.3dj
    CR host class HL (P802.3dj/D3.3 Table 179-23, the low-loss host: an 8 mm package line
    and 22 mm of host PCB before the cables) with the CR reference receiver, as an
    NVL72-class tray takes its lanes to the rear connectors on flyover cables rather than
    host board: :data:`TRAY_FLYOVER_M` of flyover cable at each end in the channel (a
    stated assumption; ``host="HN"`` for the class's board host, ``"flyover"`` or ``"pcb"``
    for a board modelled in the channel with the KR package, and ``flyover_m=None``).

    Parameters
    ----------
    lanes : int, optional
        Lanes per link (default 2).
    lane_rate_bps : float, optional
        Line rate of one lane, bit/s (default 212.5e9, a 200G PAM4 lane).
    host : str or None, optional
        Host class at each end (default ``"HL"``, the 802.3dj CR low-loss host);
        ``"HN"``, ``"flyover"``, ``"pcb"`` or None as in :meth:`LinkClass.copper_twinax`.
    flyover_m : float or None, optional
        Flyover cable at each end in the channel, m (default :data:`TRAY_FLYOVER_M`);
        used only with a CR host class, None for none.

    Returns
    -------
    LinkClass
        The copper twinax class with KP4 and go-back-N replay (:class:`Retry`).
    """
    from ..link import Retry

    fly = flyover_m if tray_flyover_m(host) is not None else None
    return LinkClass.copper_twinax(lanes=lanes, lane_rate_bps=lane_rate_bps, retry=Retry(), host=host, flyover_m=fly)


def nvl72(link_class: LinkClass | None = None, *, accelerator: Accelerator | None = None,
          asic: SwitchAsic | None = None, links_per_gpu: int = 18, tray_order: str = "C" * 10 + "S" * 9 + "C" * 8,
          gpus_per_tray: int = 4, asics_per_switch_tray: int = 2, tray_run_m: float = 0.1,
          name: str = "nvl72") -> Topology:
    """An NVL72-class rack: 18 compute trays of 4 GPUs and 9 switch trays of 2 ASICs
    (REFERENCES.md); every GPU has one link to each of the 18 ASICs over the copper spine
    (default :func:`scale_up_copper`: 2 x 212.5 Gb/s, KP4, link-level replay).

    ``tray_order`` lists the trays from the top (``C`` compute, ``S`` switch); the default,
    10 compute trays above the 9 switch trays and 8 below, follows public descriptions of
    the GB200 NVL72 rack (secondary). Each cable is the vertical distance between its
    trays plus ``tray_run_m`` at each end (an assumption; with 0.1 m the spine totals
    about 3.2 km of pairs, against the "about two miles" NVIDIA quotes).

    Parameters
    ----------
    link_class : LinkClass or None, optional
        Class of every GPU-to-switch link (None: :func:`scale_up_copper`).
    accelerator : Accelerator or None, optional
        The GPU (None: :meth:`Accelerator.gb200`).
    asic : SwitchAsic or None, optional
        The switch ASIC (None: :meth:`SwitchAsic.nvlink5`); needs a port per GPU.
    links_per_gpu : int, optional
        Links from each GPU, one to each of that many ASICs (default 18).
    tray_order : str, optional
        Trays from the top, ``C`` compute and ``S`` switch (default 10 C, 9 S, 8 C).
    gpus_per_tray : int, optional
        GPUs in a compute tray (default 4).
    asics_per_switch_tray : int, optional
        Switch ASICs in a switch tray (default 2).
    tray_run_m : float, optional
        Cable run inside the tray at each end of a cable, m (default 0.1).
    name : str, optional
        Name of the topology (default ``"nvl72"``).

    Returns
    -------
    Topology
        The rack: GPUs, one ``"nvswitch"`` tier and one link class.

    Raises
    ------
    ConfigError
        On a bad ``tray_order``, too few ASICs for ``links_per_gpu`` or too few ports.
    """
    lc = link_class or scale_up_copper()
    acc = accelerator or Accelerator.gb200()
    sw = asic or SwitchAsic.nvlink5()
    order = str(tray_order).upper()
    if set(order) - {"C", "S"}:
        raise ConfigError(f"tray_order takes 'C' and 'S', got {tray_order!r}")
    integer(gpus_per_tray, "gpus_per_tray", 1)
    integer(asics_per_switch_tray, "asics_per_switch_tray", 1)
    integer(links_per_gpu, "links_per_gpu", 1)
    run = number(tray_run_m, "tray_run_m", nonneg=True)
    n = order.count("C") * gpus_per_tray
    n_asic = order.count("S") * asics_per_switch_tray
    if n < 1:
        raise ConfigError(f"tray_order needs at least one compute tray 'C', got {tray_order!r}")
    if links_per_gpu > n_asic:
        raise ConfigError(f"{links_per_gpu} links per GPU need as many switch ASICs; the rack has {n_asic}")
    check_size(name, n * links_per_gpu, n + n_asic + len(order))
    if n > sw.radix:  # every ASIC has a port per GPU
        raise ConfigError(f"more links than switch ports: {n} GPUs need {n} ports on each switch ASIC, "
                          f"the {sw.name} has {sw.radix}")
    y = np.arange(len(order)) * RACK_UNIT_M
    yc = y[[i for i, t in enumerate(order) if t == "C"]]
    ys = y[[i for i, t in enumerate(order) if t == "S"]]
    g = np.repeat(np.arange(n), links_per_gpu)
    a = np.tile(np.arange(links_per_gpu), n)
    length = np.abs(yc[g // gpus_per_tray] - ys[a // asics_per_switch_tray]) + 2 * run
    length = np.maximum(length, 2 * run if run > 0 else RACK_UNIT_M)
    src, dst, L, c, lv = concat_links((g, n + a, length, np.zeros(g.size), np.zeros(g.size)))
    return Topology(name, acc, n, (SwitchTier("nvswitch", sw, n_asic),), (lc,), src, dst, L, c, lv,
                    {"local": ((0, 0), (0,)), "remote": ((0, 0), (0,))},
                    (f"{n} GPUs, {n_asic} switch ASICs, one link from every GPU to each of {links_per_gpu} ASICs",),
                    np.zeros(n + n_asic, dtype=np.int64))


def hgx8(link_class: LinkClass | None = None, *, accelerator: Accelerator | None = None,
         asic: SwitchAsic | None = None, n_switches: int = 2, links_per_gpu: int = 18, trace_m: float = 0.3,
         name: str = "hgx8") -> Topology:
    """An 8-GPU board (HGX class): every GPU spreads its ``links_per_gpu`` links round
    robin over ``n_switches`` NVLink switch chips on the board, one hop GPU to GPU.

    The default is a B200 board: 18 NVLink5 links of 2 x 212.5 Gb/s, two switch chips
    (REFERENCES.md). ``hgx8(scale_up_copper(2, 106.25e9), accelerator=Accelerator.h200(),
    asic=SwitchAsic.nvlink4(), n_switches=4)`` is an H100/H200 board. The board's traces
    are taken as the copper link class at ``trace_m`` (an assumption: its loss and delay,
    not a routed PCB's).

    Parameters
    ----------
    link_class : LinkClass or None, optional
        Class of every GPU-to-switch link (None: :func:`scale_up_copper`).
    accelerator : Accelerator or None, optional
        The GPU (None: :meth:`Accelerator.b200`, the HGX B200's GPU).
    asic : SwitchAsic or None, optional
        The switch chip (None: :meth:`SwitchAsic.nvlink5`).
    n_switches : int, optional
        Switch chips on the board (default 2).
    links_per_gpu : int, optional
        Links from each GPU, spread round robin over the switches (default 18).
    trace_m : float, optional
        Length of every GPU-to-switch trace, m (default 0.3).
    name : str, optional
        Name of the topology (default ``"hgx8"``).

    Returns
    -------
    Topology
        The 8-GPU board with one ``"nvswitch"`` tier.

    Raises
    ------
    ConfigError
        When the switches have too few ports for the links.
    """
    lc = link_class or scale_up_copper()
    acc = accelerator or Accelerator.b200()
    sw = asic or SwitchAsic.nvlink5()
    k = integer(n_switches, "n_switches", 1)
    lpg = integer(links_per_gpu, "links_per_gpu", 1)
    L = number(trace_m, "trace_m", positive=True)
    n = 8
    check_size(name, n * lpg, n + k)
    if math.ceil(lpg / k) * n > sw.radix:
        raise ConfigError(f"{lpg} links per GPU over {k} switches need {math.ceil(lpg / k) * n} ports per "
                          f"switch; the {sw.name} has {sw.radix}")
    g = np.repeat(np.arange(n), lpg)
    s = np.tile(np.arange(lpg) % k, n)
    src, dst, Lm, c, lv = concat_links((g, n + s, np.full(g.size, L), np.zeros(g.size), np.zeros(g.size)))
    return Topology(name, acc, n, (SwitchTier("nvswitch", sw, k),), (lc,), src, dst, Lm, c, lv,
                    {"local": ((0, 0), (0,)), "remote": ((0, 0), (0,))},
                    (f"8 GPUs, {k} switch chips, {lpg} links per GPU round robin",), np.zeros(n + k, dtype=np.int64))


def nvl36x2(link_class: LinkClass | None = None, cross_class: LinkClass | None = None, *,
            accelerator: Accelerator | None = None, asic: SwitchAsic | None = None, rack_pitch_m: float = 0.6,
            overhead_m: float = 1.0, tray_run_m: float = 0.1) -> Topology:
    """Two racks of 36 GPUs (9 compute trays, 9 switch trays each); each GPU links to the
    18 ASICs of its rack, and each ASIC gives its other 36 ports to its twin in the other
    rack (cross-rack cables of ``cross_class``, default the same copper).

    Parameters
    ----------
    link_class : LinkClass or None, optional
        Class of the in-rack GPU-to-ASIC links (None: :func:`scale_up_copper`).
    cross_class : LinkClass or None, optional
        Class of the cross-rack ASIC-to-ASIC cables (None: the in-rack class).
    accelerator : Accelerator or None, optional
        The GPU (None: :meth:`Accelerator.gb200`).
    asic : SwitchAsic or None, optional
        The switch ASIC (None: :meth:`SwitchAsic.nvlink5`); its ports beyond 36 go across.
    rack_pitch_m : float, optional
        Distance between the two racks, m (default 0.6).
    overhead_m : float, optional
        Cable length added to the pitch for a cross-rack cable, m (default 1.0).
    tray_run_m : float, optional
        Cable run inside the tray at each end of an in-rack cable, m (default 0.1).

    Returns
    -------
    Topology
        The 72-GPU pair of racks, named ``"nvl36x2"``.
    """
    one = nvl72(link_class, accelerator=accelerator, asic=asic, tray_order="C" * 5 + "S" * 9 + "C" * 4,
                tray_run_m=tray_run_m)
    lc = one.classes[0]
    cc = cross_class or lc
    n1 = one.n_accelerators  # 36
    na = one.tiers[0].count  # 18 per rack
    n = 2 * n1
    # level 0: each rack's GPUs to its own ASICs (rack 1's ids shifted)
    g0, a0 = one.src, one.dst - n1
    g = np.concatenate([g0, g0 + n1])
    a = np.concatenate([a0, a0 + na])
    L0 = np.concatenate([one.length_m, one.length_m])
    per = one.tiers[0].asic.radix - 36
    check_size("nvl36x2", 2 * one.n_links + na * per, n + 2 * na)
    cross_len = number(rack_pitch_m, "rack_pitch_m", positive=True) + number(overhead_m, "overhead_m", nonneg=True)
    ca = np.repeat(np.arange(na), per)
    blocks = [(g, n + a, L0, np.zeros(g.size), np.zeros(g.size)),
              (n + ca, n + na + ca, np.full(ca.size, cross_len), np.full(ca.size, 0 if cc is lc else 1),
               np.ones(ca.size))]
    classes = (lc,) if cc is lc else (lc, cc)
    src, dst, L, c, lv = concat_links(*blocks)
    return Topology("nvl36x2", one.accelerator, n, (SwitchTier("nvswitch", one.tiers[0].asic, 2 * na),), classes,
                    src, dst, L, c, lv, {"local": ((0, 0), (0,)), "remote": ((0, 1, 0), (0, 0))},
                    ("two racks of 36 GPUs; each ASIC gives 36 ports to its twin in the other rack",),
                    np.concatenate([np.arange(n) // n1, np.arange(2 * na) // na]))
