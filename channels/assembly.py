"""Copper links ball to ball: the host at each end (a host board or a flyover cable), the
connector and the plug's paddle card, the cable, and its neighbours' crosstalk. The
packages at each end belong to the SerDes (COM's reference package,
``phy.Serdes(packages=True)``). Built from :mod:`channels.media` sections, so every
impedance step reflects.
"""

from __future__ import annotations

from . import _validate as check
from .channel import Channel
from .errors import ChannelError
from .media import cascade, connector, stripline, twinax, via

__all__ = ["HOST_PCB_LENGTH_M", "aec_segments", "cable_channel", "flyover", "host_pcb"]


#: Host PCB length of a copper cable link's host at each end: ``z_bp = 125 mm`` of IEEE
#: 802.3's 200G-per-lane exploratory COM configuration (the ``df_200G_PAM4_RCos_CAKR``
#: sheet, 11-2022; 802.3ck's CR sheet has 110.3 mm), on a stripline of about 1.5 dB/in at
#: 53 GHz (that sheet's "1.5 db/in @ 56G"; :func:`stripline`'s defaults give 1.56).
HOST_PCB_LENGTH_M = 0.125


def host_pcb(length_m: float = HOST_PCB_LENGTH_M, *, via_stub_length_m: float = 0.0, frequency=None,
             name: str = "host_pcb") -> Channel:
    """A host board between the package's balls and the cage of a cable's connector: a
    breakout via, ``length_m`` of :func:`stripline`, and a via to the connector's pads
    (about 7.9 dB at 53.125 GHz for the default 125 mm)."""
    check.number(length_m, "length_m", positive=True)
    v = via(stub_length_m=via_stub_length_m, frequency=frequency, name=f"{name}_via")
    return cascade(v, stripline(length_m, frequency=frequency, name=f"{name}_trace"), v).renamed(name)


def flyover(length_m: float = 0.2, awg: float = 30, *, breakout_length_m: float = 10e-3, frequency=None,
            name: str = "flyover") -> Channel:
    """A flyover host: a short board breakout near the package (``breakout_length_m`` of
    stripline and a via), a near-chip cable connector, and ``length_m`` of ``awg`` twinax
    to the front panel (default 0.2 m of 30 AWG, about 2 dB at 53.125 GHz: no public
    per-metre figure for flyover cable was found, so thin twinax stands in for it)."""
    check.number(length_m, "length_m", positive=True)
    check.number(breakout_length_m, "breakout_length_m", positive=True)
    parts = [stripline(breakout_length_m, frequency=frequency, name=f"{name}_breakout"),
             via(frequency=frequency, name=f"{name}_via"),
             flyover_cable(length_m, awg, frequency=frequency, name=name)]
    return cascade(*parts).renamed(name)


def flyover_cable(length_m: float = 0.2, awg: float = 30, *, frequency=None, name: str = "flyover") -> Channel:
    """A flyover's cable without its board breakout: the near-chip cable connector and
    ``length_m`` of ``awg`` twinax (:func:`flyover`'s, for a host whose breakout is in the
    SerDes's host model, such as 802.3dj's cabled host class HL)."""
    check.number(length_m, "length_m", positive=True)
    return cascade(connector(length_m=3e-3, frequency=frequency, name=f"{name}_connector"),
                   twinax(length_m, awg, frequency=frequency, name=f"{name}_cable")).renamed(f"{name}_cable")


def _host(host: str | None, host_length_m: float | None, frequency) -> Channel | None:
    """The host at a cable's end: ``"pcb"``, ``"flyover"`` or None (see :func:`cable_channel`)."""
    if host not in ("pcb", "flyover", None):
        raise ChannelError(f"host must be 'pcb', 'flyover' or None, got {host!r}")
    if host == "pcb":
        h = host_pcb(HOST_PCB_LENGTH_M if host_length_m is None else host_length_m, frequency=frequency)
    elif host == "flyover":
        h = flyover(0.2 if host_length_m is None else host_length_m, frequency=frequency)
    else:
        if host_length_m is not None:
            raise ChannelError("host_length_m needs a host ('pcb' or 'flyover')")
        h = None
    return h


def cable_channel(cable_length_m: float, awg: float = 26, *, host: str | None = "pcb",
                  host_length_m: float | None = None, paddle_card_length_m: float = 25e-3,
                  crosstalk: bool = False, frequency=None, name: str | None = None) -> Channel:
    """A copper cable link ball to ball: host, connector, the plug's paddle card
    (``paddle_card_length_m`` of stripline and the via the cable's wires land on; 0: none),
    ``cable_length_m`` of ``awg`` twinax, paddle card, connector, host (the packages at each end belong to the SerDes: COM's
    reference package, ``phy.Serdes(packages=True)``). ``host``: ``"pcb"``
    (:func:`host_pcb`, ``host_length_m`` default :data:`HOST_PCB_LENGTH_M`), ``"flyover"``
    (:func:`flyover`, ``host_length_m`` its cable's length, default 0.2 m) or None (the
    bare cable assembly between its connectors). Every impedance step reflects.
    ``crosstalk``: the cable's neighbours as aggressors (:func:`channels.crosstalk.cable_aggressors`)."""
    check.number(cable_length_m, "cable_length_m", positive=True)
    h = _host(host, host_length_m, frequency)
    pl = check.number(paddle_card_length_m, "paddle_card_length_m", nonneg=True)
    plug = [connector(frequency=frequency)]
    if pl > 0:
        plug += [stripline(pl, frequency=frequency, name="paddle_card"), via(frequency=frequency, name="paddle_via")]
    plug = cascade(*plug).renamed("plug")
    if crosstalk:
        from .crosstalk import cable_aggressors

        mid = cable_aggressors(plug, cable_length_m, awg, frequency=frequency)
    else:
        mid = cascade(plug, twinax(cable_length_m, awg, frequency=frequency), plug.reversed())
    parts = [mid] if h is None else [h, mid, h.reversed()]
    label = name or f"{host + '_' if host else ''}twinax_{cable_length_m:g}m_{awg:g}awg"
    return cascade(*parts).renamed(label)


def aec_segments(cable_length_m: float, awg: float = 26, *, host: str | None = "pcb",
                 host_length_m: float | None = None, paddle_card_length_m: float = 25e-3, frequency=None,
                 name: str | None = None) -> tuple[Channel, Channel, Channel]:
    """An active electrical cable's three retimed segments, each ball to ball of its ends:
    the host to the retimer on the near plug's paddle card (host as in :func:`cable_channel`,
    the connector, ``paddle_card_length_m`` of paddle card trace), the cable between the two
    retimers (the via the wires land on at each end and ``cable_length_m`` of ``awg``
    twinax), and the far retimer to its host (the first reversed). The retimers' packages
    belong to the SerDes at each segment's ends, as the hosts' do."""
    check.number(cable_length_m, "cable_length_m", positive=True)
    h = _host(host, host_length_m, frequency)
    pl = check.number(paddle_card_length_m, "paddle_card_length_m", positive=True)
    label = name or f"aec_{cable_length_m:g}m_{awg:g}awg"
    near = [connector(frequency=frequency), stripline(pl, frequency=frequency, name="paddle_card")]
    near = cascade(*([h] if h is not None else []), *near).renamed(f"{label}_host_to_retimer")
    land = via(frequency=frequency, name="paddle_via")
    cable = cascade(land, twinax(cable_length_m, awg, frequency=frequency), land).renamed(f"{label}_cable")
    return near, cable, near.reversed().renamed(f"{label}_retimer_to_host")
