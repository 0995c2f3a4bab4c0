"""A transfer's latency through every layer, from the issuing core to the far end, and the
remote read's round trip.

A route is the links it crosses (each a :class:`phy.LinkReport`: its PHY and link-layer
terms) and the switches between them; the endpoints at its ends are an
:class:`~phy.latency.Endpoint`. :func:`one_way` stacks, in the order a packet meets them:

* ``endpoint``: the sender's controller (``tx_controller``) and the receiver's
  (``rx_controller``);
* ``phy``: every link's SerDes, FEC and flight;
* ``link``: every link's flit accumulation, CRC check and mean replay delay, and the
  packet's serialization (payload and headers at the slowest link's payload rate);
* ``switch``: each switch's port-to-port latency and its output port's mean M/D/1 wait
  at the given utilisation (:mod:`phy.latency.queueing`);
* ``path``: retimers and other elements inside the links.

The quantiles (``p50``, ``p99``, ``p99.99``) add the distributions, not the means: each
link's replay delay (negative binomial, :mod:`phy.link.retry`) and each switch's wait are
independent, so the total's distribution is their convolution (on a common grid, FFT).

:func:`round_trip` is a remote read: the request (a header) one way, the remote memory's
access (``memory`` layer: :attr:`phy.topology.MemoryTier.latency_s`), the response
(header and data) back. Little's law turns it into the bytes a reader must keep in flight
to stream at a bandwidth, :func:`bytes_in_flight`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import signal, stats

from .. import _format as fm
from .._validate import number
from ..errors import ConfigError
from ..link.report import LinkReport
from ..link.retry import QUANTILES
from .parts import Endpoint
from .queueing import md1_wait

__all__ = ["LAYERS", "QUANTILES", "LatencyStack", "bytes_in_flight", "one_way", "plot_stacks", "round_trip"]

LAYERS = ("endpoint", "phy", "link", "switch", "path", "memory")
_MAX_GRID = 2**20


@dataclass(frozen=True)
class LatencyStack:
    """A latency, layer by layer and term by term (s).

    Attributes
    ----------
    name : str
    layers : dict
        ``{layer: {term: seconds}}`` (means), layers in :data:`LAYERS` order.
    quantiles_s : dict
        The total at ``p50``, ``p99``, ``p99.99``.
    notes : tuple of str
    """

    name: str
    layers: dict
    quantiles_s: dict
    notes: tuple = field(default_factory=tuple)

    @property
    def total_s(self) -> float:
        return float(sum(sum(t.values()) for t in self.layers.values()))

    def layer_totals(self) -> dict:
        """Seconds per layer."""
        return {k: float(sum(v.values())) for k, v in self.layers.items()}

    def terms(self) -> dict:
        """Every term, named ``layer.term``."""
        return {f"{k}.{t}": v for k, d in self.layers.items() for t, v in d.items()}

    def table(self) -> str:
        """The stack as lines for a terminal: the total, then each layer's time (ns), its share
        and its terms, by the names and units the command prints (:mod:`phy._format`;
        layers and terms under 0.05 ns are left out), and the total's quantiles."""
        tot = self.total_s
        rows = [f"{self.name}: {fm.ns(tot)} (mean)"]
        for k, d in self.layers.items():
            s = sum(d.values())
            if s < 0.05e-9:
                continue
            rows.append(f"  {fm.label(k):<11}{fm.ns(s):>11} {100 * s / tot if tot else 0:5.1f} %   " + fm.terms_ns(d))
        if self.quantiles_s:
            rows.append(f"  {'quantiles':<11}" + ", ".join(f"{k} {fm.ns(v)}" for k, v in self.quantiles_s.items())
                        + " (of the total)")
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {"name": self.name, "total_s": self.total_s, "layers": {k: dict(v) for k, v in self.layers.items()},
                "layer_totals_s": self.layer_totals(), "quantiles_s": dict(self.quantiles_s),
                "notes": list(self.notes)}


def plot_stacks(rows, ax=None, *, title: str | None = None, legend_title: str = "layer"):
    """Latencies as the demo's latency figure draws them (:func:`phy._plot.latency_bars`):
    stacked horizontal bars in ns on a linear axis, each segment's value on it when it fits,
    each bar's total at its end, the legend's names those the command prints.

    Parameters
    ----------
    rows : sequence of (label, LatencyStack or {name: seconds})
        One bar per row, top to bottom: a :class:`LatencyStack` by layer
        (:meth:`LatencyStack.layer_totals`), or any parts in seconds in the order drawn
        (a link's :attr:`phy.LinkReport.latency_breakdown_s` by term, say).
    ax : matplotlib Axes, optional
    title : str, optional
        Say the path the bars measure (what the ends are and what lies between).
    legend_title : str

    Returns
    -------
    Axes
    """
    from .._plot import latency_bars

    rows = [(k, v.layer_totals() if isinstance(v, LatencyStack) else dict(v)) for k, v in rows]
    ax = latency_bars(ax, rows)
    ax.set_xlabel("latency (ns); segment values in ns")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title=legend_title, title_fontsize=8)
    return ax


def bytes_in_flight(bandwidth_bytes_per_s: float, round_trip_s: float) -> float:
    """Little's law: the bytes a reader must have requested and not yet received to stream
    at ``bandwidth_bytes_per_s`` when each request takes ``round_trip_s``.

    Parameters
    ----------
    bandwidth_bytes_per_s : float
        The stream, bytes/s.
    round_trip_s : float
        Each request's round trip, s.

    Returns
    -------
    float
        Bytes in flight, ``bandwidth x round trip``.
    """
    return number(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", nonneg=True) * number(
        round_trip_s, "round_trip_s", nonneg=True)


def one_way(links: Sequence[LinkReport], switches: Sequence = (), endpoint: Endpoint | None = None, *,
            payload_bytes: float = 8.0, header_bytes: int | None = None, utilisation: float = 0.0,
            name: str = "one way") -> LatencyStack:
    """A transfer of ``payload_bytes`` across ``links`` and ``switches``
    (:class:`phy.topology.SwitchAsic`), endpoint to endpoint, with every switch's output
    port at ``utilisation``. ``header_bytes``: per packet (default: the endpoint's
    request header, the one a write carries).

    Parameters
    ----------
    links : sequence of LinkReport
        The links crossed, in order.
    switches : sequence of SwitchAsic, optional
        The switches crossed (default none).
    endpoint : Endpoint, optional
        The endpoints' costs and headers (None: ``Endpoint()``).
    payload_bytes : float, optional
        Bytes carried (default 8.0).
    header_bytes : int, optional
        Header per packet, bytes (None: the endpoint's request header).
    utilisation : float, optional
        Load of every switch output port (default 0.0).
    name : str, optional
        Name of the stack (default ``"one way"``).

    Returns
    -------
    LatencyStack
        The latency layer by layer, with its quantiles and notes.
    """
    ep = endpoint or Endpoint()
    parts = _Route(links, switches, ep, utilisation)
    h = ep.request_header_bytes if header_bytes is None else header_bytes
    layers, dists, notes = parts.direction(float(payload_bytes), h)
    return LatencyStack(name, layers, _quantiles(layers, dists), tuple(notes))


def round_trip(links: Sequence[LinkReport], switches: Sequence = (), endpoint: Endpoint | None = None, *,
               memory=None, read_bytes: float = 64.0, utilisation: float = 0.0, name: str = "remote read"
               ) -> LatencyStack:
    """A read of ``read_bytes`` from ``memory`` (a :class:`phy.topology.MemoryTier`) at the
    far end: the request one way (its header), the memory's access, the response (header
    and data) back over the same route.

    Parameters
    ----------
    links : sequence of LinkReport
        The links crossed each way, in order.
    switches : sequence of SwitchAsic, optional
        The switches crossed each way (default none).
    endpoint : Endpoint, optional
        The endpoints' costs and headers (None: ``Endpoint()``).
    memory : MemoryTier, optional
        The memory read; its ``latency_s`` is the access (None: no access time).
    read_bytes : float, optional
        Bytes read (default 64.0).
    utilisation : float, optional
        Load of every switch output port (default 0.0).
    name : str, optional
        Name of the stack (default ``"remote read"``).

    Returns
    -------
    LatencyStack
        Request, memory access and response, layer by layer.
    """
    ep = endpoint or Endpoint()
    parts = _Route(links, switches, ep, utilisation)
    req, d_req, n_req = parts.direction(0.0, ep.request_header_bytes)
    rsp, d_rsp, n_rsp = parts.direction(float(read_bytes), ep.response_header_bytes)
    layers = {k: {} for k in LAYERS}
    for part in (req, rsp):
        for k, d in part.items():
            for t, v in d.items():
                layers[k][t] = layers[k].get(t, 0.0) + v
    access = 0.0 if memory is None else float(memory.latency_s)
    layers["memory"] = {"access": access}
    notes = list(dict.fromkeys(n_req + n_rsp))
    if memory is not None and access == 0:
        notes.append(f"memory tier {memory.name!r} has no access latency: give MemoryTier.latency_s")
    return LatencyStack(name, layers, _quantiles(layers, d_req + d_rsp), tuple(notes))


class _Route:
    """A route's links and switches, checked once."""

    def __init__(self, links, switches, endpoint: Endpoint, utilisation: float):
        self.links = list(links)
        if not self.links or not all(isinstance(x, LinkReport) for x in self.links):
            raise ConfigError("a route needs at least one link, each a phy.LinkReport")
        self.switches = list(switches)
        for x in self.switches:  # a phy.topology.SwitchAsic (the topology is downstream of this module)
            if not all(isinstance(getattr(x, k, None), (int, float)) for k in ("latency_s", "port_rate_bps")):
                raise ConfigError(f"switches must be phy.topology.SwitchAsic parts (port_rate_bps, latency_s), "
                                  f"got {type(x).__name__}")
        if not isinstance(endpoint, Endpoint):
            raise ConfigError(f"endpoint must be a phy.latency.Endpoint, got {type(endpoint).__name__}")
        self.ep = endpoint
        self.rho = number(utilisation, "utilisation", nonneg=True)
        if self.rho >= 1:
            raise ConfigError(f"utilisation must be below 1 (a stable queue), got {self.rho:g}")

    def direction(self, payload: float, header: int) -> tuple[dict, list, list]:
        """Layers (means), the random parts (replays, waits) and notes of one direction."""
        ep = self.ep
        wire = ep.wire_bytes(payload, header)
        layers = {k: {} for k in LAYERS[:-1]}
        layers["endpoint"] = {"tx_controller": ep.tx_s, "rx_controller": ep.rx_s}
        dists, notes = [], []
        slowest = min(r.rate_chain["payload_bps"] for r in self.links)
        for r in self.links:
            lay = r.latency_layers_s or {"phy": dict(r.latency_breakdown_s)}
            for k in ("phy", "link", "path"):
                for t, v in lay.get(k, {}).items():
                    layers[k][t] = layers[k].get(t, 0.0) + v
            if not r.passes:
                notes.append(f"link {r.name!r} misses its target ({'; '.join(r.reasons)}): its latency is shown")
            ll = r.link_layer
            if ll and ll["flit_error_ratio"] > 0:
                flits = max(1, math.ceil(8 * wire / (ll["flit_s"] * r.rate_chain["payload_bps"])))
                f = ll["flit_error_ratio"]
                mean = flits * f / (1 - f) * ll["replay_s"] if f < 1 else float("inf")
                layers["link"]["retry_mean"] = layers["link"].get("retry_mean", 0.0) - ll["mean_added_s"] + mean
                dists.append(("replay", f, flits, ll["replay_s"]))
        layers["link"]["serialization"] = 8 * wire / slowest
        if self.switches:
            layers["switch"]["port_to_port"] = float(sum(s.latency_s for s in self.switches))
            wait = 0.0
            for s in self.switches:
                service = 8 * (ep.max_payload_bytes + ep.response_header_bytes) / s.port_rate_bps
                q = md1_wait(self.rho, service)
                wait += q.mean_s
                if self.rho > 0:
                    dists.append(("queue", q))
            layers["switch"]["queueing"] = wait
        return layers, dists, notes


def _quantiles(layers: dict, dists: list) -> dict:
    """The total's quantiles: the deterministic terms plus the convolution of the random
    parts (each replay's negative binomial, each queue's wait)."""
    total = float(sum(sum(d.values()) for d in layers.values()))
    if not dists:
        return dict.fromkeys(QUANTILES, total)
    if any(d[0] == "replay" and d[1] >= 1 for d in dists):  # a link whose every flit fails never delivers
        return dict.fromkeys(QUANTILES, float("inf"))
    means = 0.0
    for d in dists:
        means += d[1].mean_s if d[0] == "queue" else d[2] * d[1] / (1 - d[1]) * d[3]
    fixed = total - means
    grids = [d[1].grid_s for d in dists if d[0] == "queue"] + [d[3] / 64 for d in dists if d[0] == "replay"]
    span = 0.0
    comps = []
    for d in dists:
        if d[0] == "queue":
            comps.append((np.arange(d[1].pmf.size) * d[1].grid_s, d[1].pmf))
        else:
            _, f, flits, t = d
            kmax = int(stats.nbinom.ppf(1 - 1e-13, flits, 1 - f)) + 1
            if kmax < _MAX_GRID:
                k = np.arange(kmax + 1)
                comps.append((k * t, stats.nbinom.pmf(k, flits, 1 - f)))
            else:  # a flit error ratio near 1: the mass of each of _MAX_GRID spans at its top (bounded memory)
                edges = np.unique(np.rint(np.linspace(-1, kmax, _MAX_GRID + 1)).astype(np.int64))
                comps.append((edges[1:] * t, np.diff(stats.nbinom.cdf(edges, flits, 1 - f))))
        span += comps[-1][0][-1]
    g = max(min(grids), span / _MAX_GRID, 1e-15)
    pmf = np.ones(1)
    for x, p in comps:
        idx = np.rint(x / g).astype(np.int64)
        c = np.bincount(idx, weights=p)
        pmf = np.clip(signal.fftconvolve(pmf, c), 0.0, None)
        keep = np.flatnonzero(pmf > 1e-18 * pmf.max())
        pmf = pmf[: keep[-1] + 1]
    cdf = np.cumsum(pmf) / pmf.sum()
    out = {}
    for name, q in QUANTILES.items():
        out[name] = fixed + float(np.searchsorted(cdf, q - 1e-12)) * g
    return out
