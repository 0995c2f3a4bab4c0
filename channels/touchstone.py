"""Touchstone import: robust reading, port-order detection, differential pairing.

Every file goes through :func:`read_network`, which hands the text to scikit-rf's
Touchstone parser and then checks what came back, so that a malformed file raises
:class:`~channels.errors.ChannelError` naming the problem instead of a traceback
from inside numpy (or, worse, a silently wrong network). The path, the bytes, the
option line and the parsed structure are checked in :mod:`channels._tsfile`; whether
the header tells the truth about the data (a unit or format that does not fit, a
missing option line) in :mod:`channels._plausible`, which warns with
:class:`~channels.errors.TouchstoneWarning` where both readings are plausible.

Port order
----------
Four-port files pair their ports in one of three ways. The order is named by its
two through paths, 1-based as in the file:

========  ==================  ===========  ============
name      through paths       input pair   output pair
========  ==================  ===========  ============
``12_34``  1->2 and 3->4       (1, 3)       (2, 4)
``13_24``  1->3 and 2->4       (1, 2)       (3, 4)
``14_23``  1->4 and 2->3       (1, 2)       (4, 3)
========  ==================  ===========  ============

scikit-rf's ``se2gmm`` wants ``[in+, in-, out+, out-]``; :attr:`PortOrder.permutation`
gives that renumbering. ``"auto"`` picks the order whose through paths carry the
most low-frequency transmission and refuses to guess when no order stands out
(crosstalk files have no through path: they take the order of their through
sibling).
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import skrf as rf

from . import _plausible, _tsfile
from .errors import ChannelError

__all__ = [
    "PortOrder",
    "PORT_ORDERS",
    "read_network",
    "detect_port_order",
    "port_order",
    "pairs_from_names",
    "match_lanes",
    "Lane",
    "load",
    "sibling_crosstalk_files",
]


@dataclass(frozen=True)
class PortOrder:
    """How a four-port file pairs its ports (1-based port numbers).

    Attributes
    ----------
    name : str
        ``"12_34"``, ``"13_24"``, ``"14_23"`` or ``"custom"``.
    inputs : tuple of int
        The (positive, negative) ports of the input pair.
    outputs : tuple of int
        The (positive, negative) ports of the output pair; ``inputs[0]``
        routes to ``outputs[0]``.
    """

    name: str
    inputs: tuple[int, int]
    outputs: tuple[int, int]

    @property
    def permutation(self) -> list[int]:
        """0-based file ports in scikit-rf's mixed-mode order ``[in+, in-, out+, out-]``."""
        return [p - 1 for p in (*self.inputs, *self.outputs)]

    @property
    def description(self) -> str:
        (a, b), (c, d) = self.inputs, self.outputs
        return f"through {a}->{c} and {b}->{d}; input pair ({a},{b}), output pair ({c},{d})"

    def to_dict(self) -> dict:
        return {"name": self.name, "inputs": list(self.inputs), "outputs": list(self.outputs)}


PORT_ORDERS: dict[str, PortOrder] = {
    "12_34": PortOrder("12_34", (1, 3), (2, 4)),
    "13_24": PortOrder("13_24", (1, 2), (3, 4)),
    "14_23": PortOrder("14_23", (1, 2), (4, 3)),
}


def port_order(spec: str | PortOrder | Sequence) -> PortOrder:
    """Normalise a port-order specification.

    Accepts a name (``"12_34"``, also ``"1-2/3-4"`` style spellings), a
    :class:`PortOrder`, or ``((in+, in-), (out+, out-))`` in 1-based ports.
    """
    if isinstance(spec, PortOrder):
        return spec
    if isinstance(spec, str):
        key = re.sub(r"[^0-9]", "", spec)
        key = f"{key[:2]}_{key[2:]}" if len(key) == 4 else spec
        if key not in PORT_ORDERS:
            raise ChannelError(
                f"unknown port order {spec!r}: expected one of {sorted(PORT_ORDERS)} or 'auto'"
            )
        return PORT_ORDERS[key]
    try:
        (ip, in_), (op, on) = spec
        ports = [int(ip), int(in_), int(op), int(on)]
    except (TypeError, ValueError) as exc:
        raise ChannelError(
            f"port order {spec!r} is neither a name nor ((in+, in-), (out+, out-))"
        ) from exc
    if sorted(ports) != [1, 2, 3, 4]:
        raise ChannelError(f"port order {spec!r} must use each of the ports 1..4 once")
    return PortOrder("custom", (ports[0], ports[1]), (ports[2], ports[3]))


# ----------------------------------------------------------------------------- reading
def read_network(path: str | Path) -> rf.Network:
    """Read a Touchstone file into a scikit-rf :class:`~skrf.network.Network`, checked.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.sNp`` or ``.ts`` file (Touchstone 1, or 2 with ``[Version] 2.0`` keywords).

    Returns
    -------
    skrf.Network
        The file's single-ended network, in the file's port numbering, frequencies in Hz.

    Raises
    ------
    ChannelError
        A path that is not a str or path, too long, missing, a directory, unreadable or
        binary; an unsupported extension; a malformed or self-contradicting option line;
        non-numeric or truncated data; NaN or infinite values; a frequency axis that is
        not strictly increasing or not a channel's (above 1 THz or below 1 MHz, naming
        the unit that fits); MA, DB or RI data that cannot be what the header says
        (negative magnitudes, dB values all near 0 dB, RI magnitudes above 10, naming
        the format that fits); a Touchstone 2 ``[Number of Frequencies]`` that the data
        do not hold; a port count that does not match the extension.

    Warns
    -----
    TouchstoneWarning
        When header and data disagree but both readings are plausible: an axis ending
        between 1 MHz and 1 GHz in a unit smaller than GHz, angles that never exceed one
        degree, mostly positive dB values, a later option line that disagrees, or no
        option line at all (the Touchstone defaults GHz, S, MA, R 50 then apply). The
        checks and their thresholds are in :mod:`channels._plausible`.
    """
    path = _tsfile.as_path(path)
    st = _tsfile.stat_file(path)
    nports = _tsfile.nports_from_suffix(path)
    text = _tsfile.decode_text(_tsfile.read_bytes(path, st), path)
    if not text.strip():
        raise ChannelError(f"{path.name}: the file is empty")
    opt, parse_text = _tsfile.parse_option_line(text, path.name)
    buf = io.StringIO(parse_text)
    buf.name = path.name  # scikit-rf takes the port count from the name's extension
    try:
        ntwk = rf.Network(buf)
    except Exception as exc:  # scikit-rf raises ValueError/IndexError/... on bad data
        why = _tsfile.diagnose_data(text, nports, path.name) if nports else str(exc)
        raise ChannelError(f"{path.name}: malformed Touchstone data: {why}") from exc
    ntwk.name = path.stem
    pairs = None
    if opt.param == "s":  # parsed as RI: the file's raw pairs
        pairs = (ntwk.s.real.copy(), ntwk.s.imag.copy())
        if opt.fmt != "ri":
            ntwk.s = _tsfile.from_raw(*pairs, opt.fmt)
    _tsfile.check_network(ntwk, path.name, nports)
    if nports == 2 and getattr(ntwk, "noisy", False):
        _tsfile.check_two_port_noise(text, path.name)
    _tsfile.check_keywords(text, ntwk, path.name)
    _plausible.check(opt, np.asarray(ntwk.f, dtype=float), pairs, ntwk.nports, path.name)
    return ntwk


# ------------------------------------------------------------------ port order detection
def _low_band(f: np.ndarray) -> slice:
    """Indices of the lowest part of the band used to judge through paths (no DC point)."""
    start = 1 if f[0] == 0 else 0
    n = max(5, int(0.01 * f.size))
    return slice(start, min(f.size, start + n))


def detect_port_order(ntwk: rf.Network) -> tuple[PortOrder, dict[str, float]]:
    """Choose a four-port file's order from its low-frequency transmission.

    Returns
    -------
    order : PortOrder
    scores : dict
        Mean low-frequency ``|S|`` of each candidate's two through paths.

    Raises
    ------
    ChannelError
        If the network is not a four-port, or no order carries a clear through
        path (crosstalk files: load them with their through sibling's order).
    """
    if ntwk.nports != 4:
        raise ChannelError(f"port-order detection needs a 4-port network, got {ntwk.nports} ports")
    band = _low_band(ntwk.f)
    mag = np.abs(ntwk.s[band]).mean(axis=0)
    mag = 0.5 * (mag + mag.T)
    scores = {}
    for key, order in PORT_ORDERS.items():
        (a, b), (c, d) = order.inputs, order.outputs
        scores[key] = 0.5 * (mag[a - 1, c - 1] + mag[b - 1, d - 1])
    ranked = sorted(scores, key=scores.get, reverse=True)
    best, second = scores[ranked[0]], scores[ranked[1]]
    if best < 0.3 or best < 2.0 * second:
        pretty = ", ".join(f"{k}: {v:.3f}" for k, v in scores.items())
        raise ChannelError(
            f"{ntwk.name or 'network'}: cannot tell the port order from the low-frequency "
            f"transmission (mean |S| of the through paths {pretty}); a crosstalk file has no "
            "through path: load it as an aggressor of its through file, or pass thru='12_34', "
            "'13_24' or '14_23'"
        )
    return PORT_ORDERS[ranked[0]], scores


# --------------------------------------------------------------------- multi-port files
@dataclass(frozen=True)
class Lane:
    """One differential lane of a multi-port file (0-based ports).

    ``near`` is the (p, n) pair at the input end, ``far`` the pair at the output end.
    """

    near: tuple[int, int]
    far: tuple[int, int]
    name: str = ""


_PN = re.compile(r"^(?P<base>.*?)[\s_.\-]*(?P<pol>p|n|pos|neg|\+|-|plus|minus)$", re.IGNORECASE)


def pairs_from_names(names: Sequence[str]) -> list[tuple[int, int, str]]:
    """Group port names such as ``TX1_P``/``TX1_N`` into differential pairs.

    Returns ``[(p_port, n_port, base_name), ...]`` with 0-based ports, or raises
    :class:`ChannelError` when the names do not pair up.
    """
    groups: dict[str, dict[str, int]] = {}
    for i, raw in enumerate(names):
        m = _PN.match(raw.strip())
        if not m or not m.group("base"):
            raise ChannelError(
                f"port {i + 1} name {raw!r} does not end in a polarity (P/N, +/-): "
                "cannot tell which ports form a differential pair; pass pairs=..."
            )
        pol = "p" if m.group("pol").lower() in {"p", "pos", "+", "plus"} else "n"
        base = m.group("base").strip().lower()
        if pol in groups.setdefault(base, {}):
            raise ChannelError(f"two ports are named as the {pol.upper()} side of pair {base!r}")
        groups[base][pol] = i
    pairs = []
    for base, g in groups.items():
        if set(g) != {"p", "n"}:
            raise ChannelError(f"pair {base!r} has only its {'/'.join(g).upper()} side in the port names")
        pairs.append((g["p"], g["n"], base))
    pairs.sort(key=lambda t: min(t[0], t[1]))
    return pairs


def _sdd(s: np.ndarray, a: tuple[int, int], b: tuple[int, int]) -> np.ndarray:
    """Differential transmission from pair ``b`` into pair ``a`` (single-ended S array)."""
    (ap, an), (bp, bn) = a, b
    return 0.5 * (s[..., ap, bp] - s[..., ap, bn] - s[..., an, bp] + s[..., an, bn])


def match_lanes(ntwk: rf.Network, pairs: Sequence[tuple[int, int, str]]) -> list[Lane]:
    """Match differential pairs into lanes by their low-frequency transmission.

    The end holding the lower port number is the lane's near (input) end.
    """
    band = _low_band(ntwk.f)
    s = ntwk.s[band]
    k = len(pairs)
    if k < 2 or k % 2:
        raise ChannelError(f"{k} differential pairs cannot form lanes (need an even number >= 2)")
    t = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                t[i, j] = np.abs(_sdd(s, pairs[i][:2], pairs[j][:2])).mean()
    lanes: list[Lane] = []
    free = set(range(k))
    while free:
        i, j = max(((i, j) for i in free for j in free if i < j), key=lambda ij: t[ij])
        if t[i, j] < 0.3:
            raise ChannelError(
                f"pairs {pairs[i][2]!r} and {pairs[j][2]!r} are the best remaining match but "
                f"carry only |Sdd| = {t[i, j]:.3f} at low frequency: no through path; pass pairs=..."
            )
        a, b = sorted((pairs[i], pairs[j]), key=lambda p: min(p[0], p[1]))
        lanes.append(Lane((a[0], a[1]), (b[0], b[1]), f"{a[2]}->{b[2]}"))
        free -= {i, j}
    lanes.sort(key=lambda ln: min(ln.near))
    return lanes


# --------------------------------------------------------------------------- loading
def _kind_from_name(path: Path, thru_stem: str | None) -> str:
    stem = path.stem.lower()
    if "fext" in stem:
        return "fext"
    if "next" in stem:
        return "next"
    if thru_stem:
        prefix = thru_stem.lower().split("thru")[0]
        rest = stem[len(prefix):] if stem.startswith(prefix) else stem
        if rest.startswith("fe"):
            return "fext"
        if rest.startswith("ne"):
            return "next"
    raise ChannelError(
        f"{path.name}: cannot tell from the name whether it is NEXT or FEXT; pass (path, 'next') or (path, 'fext')"
    )


def sibling_crosstalk_files(path: str | Path) -> list[Path]:
    """Crosstalk files beside a through file: same folder and extension, same name up to
    ``thru`` (``CA_thru.s4p`` -> ``CA_next1.s4p``, ``CA_fext1.s4p``)."""
    path = _tsfile.as_path(path, "through file")
    stem = path.stem
    i = stem.lower().find("thru")
    if i < 0:
        raise ChannelError(f"{path.name}: aggressors='auto' needs a through file whose name contains 'thru'")
    prefix = stem[:i].lower()
    out = []
    for p in sorted(path.parent.glob("*" + path.suffix)):
        s = p.stem.lower()
        if p != path and s.startswith(prefix) and "thru" not in s:
            out.append(p)
    return out


def _lanes_arg(pairs, nports: int) -> list[Lane]:
    lanes = []
    try:
        for item in pairs:
            (np_, nn), (fp, fn) = item
            ports = [int(np_), int(nn), int(fp), int(fn)]
            lanes.append(Lane((ports[0] - 1, ports[1] - 1), (ports[2] - 1, ports[3] - 1)))
    except (TypeError, ValueError) as exc:
        raise ChannelError(
            "pairs must be a list of lanes ((near+, near-), (far+, far-)) in 1-based ports"
        ) from exc
    used = [p for ln in lanes for p in (*ln.near, *ln.far)]
    if any(p < 0 or p >= nports for p in used):
        raise ChannelError(f"pairs name ports outside 1..{nports}")
    if len(set(used)) != len(used):
        raise ChannelError("pairs use a port more than once")
    if not lanes:
        raise ChannelError("pairs is empty")
    return lanes


def _load_multiport(ntwk: rf.Network, pairs, victim: int, name: str):
    from .channel import Channel

    n = ntwk.nports
    if pairs is not None:
        lanes = _lanes_arg(pairs, n)
    else:
        names = ntwk.port_names
        if not names or len(names) != n or not all(names):
            raise ChannelError(
                f"{name}: a {n}-port file must name its ports (! Port[k] = TX1_P ...) so that pairs can be "
                "formed, or pass pairs=[((near+, near-), (far+, far-)), ...]"
            )
        lanes = match_lanes(ntwk, pairs_from_names(names))
    if not isinstance(victim, (int, np.integer)) or not 0 <= victim < len(lanes):
        raise ChannelError(f"victim must be a lane index from 0 to {len(lanes) - 1}, got {victim!r}")
    v = lanes[victim]
    vname = v.name or f"lane{victim}"
    through = ntwk.subnetwork([*v.near, *v.far])
    order = PortOrder("custom", (v.near[0] + 1, v.near[1] + 1), (v.far[0] + 1, v.far[1] + 1))
    aggs = []
    for k, ln in enumerate(lanes):
        if k == victim:
            continue
        lname = ln.name or f"lane{k}"
        fext = ntwk.subnetwork([*ln.near, *v.far])
        nxt = ntwk.subnetwork([*ln.far, *v.far])
        aggs.append(Channel(fext, name=f"{lname} FEXT", kind="fext"))
        aggs.append(Channel(nxt, name=f"{lname} NEXT", kind="next"))
    return Channel(through, name=f"{name} {vname}".strip(), port_order=order, aggressors=aggs)


def load(
    path: str | Path,
    thru="auto",
    *,
    pairs=None,
    victim: int = 0,
    aggressors=None,
    kind: str = "through",
    name: str | None = None,
    check_quality: bool = True,
):
    """Load a Touchstone file as a :class:`~channels.channel.Channel`.

    Parameters
    ----------
    path : str or Path
        ``.s2p`` (taken as the differential two-port), ``.s4p``, or an 8/12/16-port
        file holding several lanes.
    thru : ``"auto"``, a port-order name, a :class:`PortOrder`, or a Channel
        Four-port files only: how the ports pair up (module docstring). ``"auto"``
        detects it; a Channel lends its own order (a crosstalk file takes its through
        sibling's). The order chosen is reported as ``channel.port_order``.
    pairs : list of lanes, optional
        Multi-port files: ``[((near+, near-), (far+, far-)), ...]`` in 1-based ports.
        By default the pairs come from the file's port names (``..._P``/``..._N``) and
        are matched into lanes by their low-frequency transmission.
    victim : int
        Multi-port files: which lane is the through; the others become NEXT and FEXT
        aggressors.
    aggressors : ``"auto"`` or list, optional
        Crosstalk files of this through, each a path or ``(path, "next"|"fext")``; they
        load with the through's port order. ``"auto"`` takes the files beside it whose
        names share the part before ``thru`` (``CA_thru`` -> ``CA_next1``, ``CA_fext1``).
    kind : str
        ``"through"`` (default), or ``"next"``/``"fext"`` to load a crosstalk file on its own.
    name : str, optional
        Default: the file's stem.
    check_quality : bool
        Check passivity, reciprocity and causality (IEEE 370) and warn with
        :class:`~channels.errors.ChannelQualityWarning` when one is not good.
    """
    from .channel import Channel
    from .quality import warn_quality

    path = _tsfile.as_path(path)
    ntwk = read_network(path)
    label = name or path.stem
    n = ntwk.nports
    if n == 2:
        if not (isinstance(thru, str) and thru == "auto"):
            raise ChannelError(f"{path.name} is a 2-port file: there is no port order to choose (thru={thru!r})")
        if pairs is not None:
            raise ChannelError(f"{path.name} is a 2-port file: pairs= is for 8, 12 or 16-port files")
        ch = Channel.from_differential(ntwk, name=label, kind=kind)
    elif n == 4:
        if pairs is not None:
            raise ChannelError(f"{path.name} is a 4-port file: use thru= for its port order, not pairs=")
        if isinstance(thru, Channel):
            if thru.port_order is None:
                raise ChannelError(f"channel {thru.name!r} has no port order to lend (it was not loaded from a file)")
            order = thru.port_order
        else:
            order = thru
        ch = Channel.from_single_ended(ntwk, order, name=label, kind=kind)
    elif n >= 8 and n % 4 == 0:
        if not (isinstance(thru, str) and thru == "auto"):
            raise ChannelError(
                f"{path.name} has {n} ports: thru= names a 4-port order; pass pairs= to say which ports form lanes"
            )
        if kind != "through":
            raise ChannelError("a multi-port file holds its own through and crosstalk; kind must be 'through'")
        ch = _load_multiport(ntwk, pairs, victim, label)
    else:
        raise ChannelError(
            f"{path.name} has {n} ports: expected 2 (differential), 4 (one pair each end) or a multiple "
            "of 4 (several lanes)"
        )
    ch.source = str(path)
    if check_quality:
        warn_quality(ch.quality, path.name)
    if aggressors is not None:
        if ch.kind != "through":
            raise ChannelError("only a through channel can carry aggressors")
        items = sibling_crosstalk_files(path) if (isinstance(aggressors, str) and aggressors == "auto") else aggressors
        if isinstance(items, (str, bytes, os.PathLike)) or not isinstance(items, Iterable):
            raise ChannelError(
                f"aggressors must be 'auto' or a list of paths or (path, kind) pairs, got {aggressors!r}"
            )
        loaded = []
        for item in items:
            if isinstance(item, Channel):
                if item.kind == "through":
                    raise ChannelError(f"aggressor {item.name!r} has kind 'through'")
                loaded.append(item)
                continue
            if isinstance(item, (tuple, list)) and len(item) == 2:
                apath, akind = _tsfile.as_path(item[0], "aggressor file"), str(item[1]).lower()
                if akind not in ("next", "fext"):
                    raise ChannelError(f"aggressor kind must be 'next' or 'fext', got {item[1]!r}")
            else:
                apath = _tsfile.as_path(item, "aggressor file")
                akind = _kind_from_name(apath, path.stem)
            agg = load(apath, thru=ch if ch.port_order is not None else "auto", kind=akind,
                       check_quality=check_quality)
            if agg.f.size != ch.f.size or not np.allclose(agg.f, ch.f):
                agg = agg.resample(ch.f)
            loaded.append(agg)
        ch = ch.with_aggressors(*loaded)
    return ch
