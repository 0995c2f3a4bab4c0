"""Touchstone import: robust reading, and loading a file (with its crosstalk) as a Channel.

Every file goes through :func:`read_network`, which parses the text as scikit-rf's
Touchstone parser does (with :mod:`channels._tsread`: scikit-rf's own code around a numpy
reader of the numeric block, the same network bit for bit, scikit-rf's parser itself for
what the fast path does not read) and then checks what came back, so that a malformed file raises
:class:`~channels.errors.ChannelError` naming the problem instead of a traceback
from inside numpy (or, worse, a silently wrong network). The path, the bytes, the
option line and the parsed structure are checked in :mod:`channels._tsfile`; whether
the header tells the truth about the data (a unit or format that does not fit, a
missing option line) in :mod:`channels._plausible`, which warns with
:class:`~channels.errors.TouchstoneWarning` where both readings are plausible.

The port order and the pairing of multi-port files are :mod:`channels.ports`.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Iterable

import numpy as np
import skrf as rf

from . import _plausible, _tscache, _tsdata, _tsfile, _tsheader, _tsread
from .channel import Channel
from .grid import check_transmits
from .errors import ChannelError, ChannelQualityWarning, shown_path
from .ports import Lane, PortOrder, match_lanes, pairs_from_names
from .quality import warn_quality

__all__ = ["cache_info", "clear_cache", "load", "read_network", "set_cache_size", "sibling_crosstalk_files"]


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
        For anything in the file that is not a channel's Touchstone data, and nothing else
        for any content (an unexpected failure inside a parser becomes one too, naming the
        file): a path that is not a str or path, too long, missing, a directory, unreadable
        or binary (a NUL byte anywhere); a file, a line or a port count over the limits
        of :mod:`channels._tsfile` (``MAX_FILE_BYTES``, ``MAX_LINE_CHARS``, ``MAX_PORTS``,
        checked before the work they bound); an unsupported extension; a malformed or
        self-contradicting option line; a number not written as Touchstone writes them
        (``0_5``, ``nan``, ``inf``, ``0x10``, ``1e``: Python's ``float`` reads some of these);
        Touchstone 2 keywords that are unknown, out of order, repeated or malformed, a
        ``[Reference]`` without one finite positive value per port
        (:mod:`channels._tsheader`); non-numeric or truncated data; NaN or infinite
        values; an |S| above :data:`channels._tsdata.MAX_S_MAGNITUDE`; a frequency axis
        that is not strictly increasing or not a channel's (above 1 THz or below 1 MHz,
        naming the unit that fits); MA, DB or RI data that cannot be what the header says
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
    name = shown_path(path.name)
    try:
        return _read_network(path, name)
    except ChannelError:
        raise
    except MemoryError:
        raise ChannelError(f"{name}: not enough memory to read it ({_size(path)})") from None
    except Exception as exc:  # a parser's own failure on content nobody checked for: never its text
        raise ChannelError(f"{name}: could not be read as a Touchstone file: reading it failed with "
                           f"{type(exc).__name__} where the checks expected well-formed data; "
                           "check the option line, the keywords and the data layout") from exc


def _size(path: Path) -> str:
    try:
        return f"{os.stat(path).st_size:,} bytes"
    except OSError:
        return "size unknown"


def _read_network(path: Path, name: str) -> rf.Network:
    st = _tsfile.stat_file(path)
    nports = _tsfile.nports_from_suffix(path)
    raw = _tsfile.read_bytes(path, st)
    key = _tscache.bytes_key(raw, path.suffix.lower()) if _tscache.NETWORKS.max_size else None
    hit = _tscache.NETWORKS.get(key) if key is not None else None
    noise_text = None
    if hit is not None:  # these bytes were read before: what the checks below need of them
        ntwk, pairs, opt, keyword_text = hit
    else:
        text = _tsfile.decode_text(raw, path)
        if not text or text.isspace():  # (what strip() would leave empty, without copying the text)
            raise ChannelError(f"{name}: the file is empty")
        header = _tsheader.check(text, name, nports, _tsfile.MAX_PORTS)
        if nports is None and header.ports is None:
            raise ChannelError(f"{name}: a .ts file is Touchstone 2: expected [Version] 2.0, [Number of Ports] and "
                               "[Network Data] keywords (or name a Touchstone 1 file .sNp)")
        _tsheader.check_port_names(text, name, nports or header.ports)
        joined = header.joined(text)
        opt, *edit = _tsfile.option_line_edit(joined, name)
        tail = _same_bytes(raw, text, joined, edit, header.reference_span)
        del raw
        ntwk, pairs, fast = _parse(_ParseText(joined, *edit, tail is not None), text, opt, path, name,
                                   nports or header.ports, header, tail)
        if nports == 2 and getattr(ntwk, "noisy", False):
            noise_text = text  # (never cached: the fast reader leaves noise to scikit-rf)
        keyword_text = text if "[" in text else ""  # check_keywords looks no further without one
        if fast and key is not None:
            size = ntwk.s.nbytes + ntwk.z0.nbytes + ntwk.f.nbytes + len(keyword_text)
            size += 2 * pairs[0].nbytes if pairs else 0
            _tscache.NETWORKS.put(key, (ntwk, pairs, opt, keyword_text), size)
    ntwk.name = shown_path(path.stem, keep=None)
    _tsdata.check_network(ntwk, name, nports)
    if noise_text is not None:
        _tsdata.check_two_port_noise(noise_text, name)
    _tsdata.check_keywords(keyword_text, ntwk, name)
    _plausible.check(opt, np.asarray(ntwk.f, dtype=float), pairs, ntwk.nports, name)
    _tsdata.check_magnitudes(ntwk, name)
    return ntwk


class _ParseText:
    """The text to hand to scikit-rf's parser, ``joined[:start] + line + joined[end:]``
    (:func:`channels._tsfile.option_line_edit`): ``head`` its start when the fast reader may
    read the rest from the file's bytes (``short``; the option line and :data:`PARSE_HEAD`
    characters after it: the whole text is a 4 MB copy a file), ``full()`` all of it."""

    def __init__(self, joined: str, start: int, end: int, line: str, short: bool) -> None:
        self.joined, self.start, self.end, self.line = joined, start, end, line
        cut = end + PARSE_HEAD if short and end + PARSE_HEAD < len(joined) else None
        self.complete = cut is None
        self.head = joined[:start] + line + joined[end:cut]

    def full(self) -> str:
        return self.head if self.complete else self.joined[:self.start] + self.line + self.joined[self.end:]


PARSE_HEAD = 1 << 16  # characters after the option line handed to the fast reader when the bytes can follow


def _same_bytes(raw: bytes, text: str, joined: str, edit, span):
    """``(raw, shift, keep_from)`` such that character ``i`` of the parser's text is byte
    ``raw[i - shift]`` for every ``i >= keep_from`` (the fast reader then scans ``raw`` instead
    of encoding the text again), or None. The parser's text is ``text`` with two edits: the
    continued ``[Reference]`` (``span``) written on one line (``joined``), then the option line
    ``edit`` (``start, end, line``). ASCII text as long as the bytes is those bytes one for one
    (a byte-order mark or UTF-16 would make the lengths differ)."""
    if not text.isascii() or len(raw) != len(text):
        return None
    start, end, line = edit
    shift_option = len(line) - (end - start)
    reference_end = span[0] + len(span[2]) if span is not None else 0  # in joined
    return raw, len(joined) + shift_option - len(text), max(start + len(line), reference_end + shift_option)


def _parse(parse: _ParseText, text: str, opt, path: Path, name: str, nports: int, header, tail=None):
    """The network of the text ``parse`` stands for (S-parameters read as RI, then converted
    to the file's format), its raw pairs (S files; read-only), and whether the fast reader
    read it. ``tail``: the file's bytes where they are that text's (:func:`_same_bytes`)."""
    try:  # scikit-rf's network, read by the fast reader (scikit-rf's parser where it must)
        ntwk, fast = _tsread.read_text(parse.head, path.name,  # the name's extension gives the port count
                                       before_fallback=lambda: _tsdata.check_tokens(text, name), tail=tail,
                                       full=None if parse.complete else parse.full)
    except ChannelError:
        raise
    except Exception as exc:  # scikit-rf raises ValueError/IndexError/... on bad data
        why = _tsdata.diagnose_data(text, nports, name, header.matrix)
        raise ChannelError(f"{name}: malformed Touchstone data: {why}") from exc
    pairs = None
    if opt.param == "s":  # parsed as RI: the file's raw pairs
        pairs = (ntwk.s.real.copy(), ntwk.s.imag.copy())
        for a in pairs:
            a.setflags(write=False)
        if opt.fmt != "ri":
            with np.errstate(over="ignore", invalid="ignore"):  # huge dB values: refused by check_magnitudes
                ntwk.s = _tsfile.from_raw(*pairs, opt.fmt)
    return ntwk, pairs, fast


# ----------------------------------------------------------------------------- the cache
def cache_info() -> dict:
    """What the loading caches hold (:mod:`channels._tscache`): ``{"networks": {...},
    "quality": {...}}``, each with ``entries``, ``size`` (bytes, or reports), ``max_size``,
    ``hits`` and ``misses``."""
    return {"networks": _tscache.NETWORKS.info(), "quality": _tscache.QUALITY.info()}


def clear_cache() -> None:
    """Forget every parsed file and quality report (and the hit counts)."""
    _tscache.NETWORKS.clear()
    _tscache.QUALITY.clear()


def set_cache_size(max_bytes: int) -> None:
    """Bound the parsed-file cache to ``max_bytes`` (0 turns both caches off).

    The budget counts each network's S, z0 and frequency arrays and its raw pairs: a
    6,000-point four-port takes about 3 MB, a sixteen-port about 50 MB. The default is
    256 MB, or ``LINKMODEL_TOUCHSTONE_CACHE_MB`` megabytes when that is set."""
    if not isinstance(max_bytes, (int, np.integer)) or isinstance(max_bytes, bool) or max_bytes < 0:
        raise ChannelError(f"the cache size must be a whole number of bytes >= 0, got {max_bytes!r}")
    _tscache.NETWORKS.max_size = int(max_bytes)
    _tscache.QUALITY.max_size = 4096 if max_bytes else 0


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
        f"{shown_path(path.name)}: cannot tell from the name whether it is NEXT or FEXT; pass (path, 'next') or (path, 'fext')"
    )


def sibling_crosstalk_files(path: str | Path) -> list[Path]:
    """Crosstalk files beside a through file: same folder and extension, same name up to
    ``thru`` (``CA_thru.s4p`` -> ``CA_next1.s4p``, ``CA_fext1.s4p``)."""
    path = _tsfile.as_path(path, "through file")
    stem = path.stem
    i = stem.lower().find("thru")
    if i < 0:
        raise ChannelError(f"{shown_path(path.name)}: aggressors='auto' needs a through file whose name contains 'thru'")
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


def _load_multiport(ntwk: rf.Network, pairs, victim: int, name: str) -> Channel:
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
    vname = shown_path(v.name, keep=None) or f"lane{victim}"  # (port names are the file's text)
    through = ntwk.subnetwork([*v.near, *v.far])
    order = PortOrder("custom", (v.near[0] + 1, v.near[1] + 1), (v.far[0] + 1, v.far[1] + 1))
    aggs = []
    for k, ln in enumerate(lanes):
        if k == victim:
            continue
        lname = shown_path(ln.name, keep=None) or f"lane{k}"
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
        names share the part before ``thru`` (``CA_thru`` -> ``CA_next1``, ``CA_fext1``);
        a sibling that cannot be used (unreadable, cut short, another band) is skipped
        with a :class:`~channels.errors.ChannelQualityWarning` naming it, its through
        and why, and the others load. Every message about an aggressor names its through.
    kind : str
        ``"through"`` (default), or ``"next"``/``"fext"`` to load a crosstalk file on its own.
    name : str, optional
        Default: the file's stem.
    check_quality : bool
        Check passivity, reciprocity and causality (IEEE 370) and warn with
        :class:`~channels.errors.ChannelQualityWarning` when one is not good.

    Returns
    -------
    Channel
        The through (or crosstalk) channel with its aggressors and port order.

    Raises
    ------
    ChannelError
        Whatever the file holds, nothing else: everything :func:`read_network` refuses, a
        port order that cannot be told, and a through that transmits nothing (|Sdd21|
        below :data:`channels.grid.TRANSMISSION_FLOOR` at every frequency: an open or an
        all-zero file). Messages name the file with its control characters escaped
        (:func:`channels.errors.shown_path`).
    """
    path = _tsfile.as_path(path)
    ntwk = read_network(path)
    shown = shown_path(path.name)
    try:
        ch = _channel_of(ntwk, path, thru, pairs, victim, kind, name or shown_path(path.stem, keep=None))
        if ch.kind == "through":
            check_transmits(ch.sdd21, shown)
        ch.source = str(path)
        if check_quality:
            warn_quality(ch.quality, shown)
    except ChannelError:
        raise
    except Exception as exc:  # what the file's content made fail in building the channel: never its text
        raise ChannelError(f"{shown}: read, but no channel could be built from its data ({type(exc).__name__} "
                           "where well-formed S-parameters were expected)") from exc
    if aggressors is not None:
        ch = ch.with_aggressors(*_load_aggressors(ch, path, aggressors, check_quality))
    return ch


def _channel_of(ntwk: rf.Network, path: Path, thru, pairs, victim: int, kind: str, label: str) -> Channel:
    """The Channel a file's network makes: a differential two-port, a four-port in its port
    order (detected, named, or lent by another Channel), or one lane of a multi-port file."""
    n = ntwk.nports
    if n == 2:
        if not (isinstance(thru, str) and thru == "auto"):
            raise ChannelError(f"{shown_path(path.name)} is a 2-port file: there is no port order to choose (thru={thru!r})")
        if pairs is not None:
            raise ChannelError(f"{shown_path(path.name)} is a 2-port file: pairs= is for 8, 12 or 16-port files")
        return Channel.from_differential(ntwk, name=label, kind=kind)
    if n == 4:
        if pairs is not None:
            raise ChannelError(f"{shown_path(path.name)} is a 4-port file: use thru= for its port order, not pairs=")
        if isinstance(thru, Channel):
            if thru.port_order is None:
                raise ChannelError(f"channel {thru.name!r} has no port order to lend (it was not loaded from a file)")
            thru = thru.port_order
        return Channel.from_single_ended(ntwk, thru, name=label, kind=kind)
    if n >= 8 and n % 4 == 0:
        if not (isinstance(thru, str) and thru == "auto"):
            raise ChannelError(
                f"{shown_path(path.name)} has {n} ports: thru= names a 4-port order; pass pairs= to say which ports form lanes"
            )
        if kind != "through":
            raise ChannelError("a multi-port file holds its own through and crosstalk; kind must be 'through'")
        return _load_multiport(ntwk, pairs, victim, label)
    raise ChannelError(
        f"{shown_path(path.name)} has {n} ports: expected 2 (differential), 4 (one pair each end) or a multiple "
        "of 4 (several lanes)"
    )


def _load_aggressors(ch: Channel, path: Path, aggressors, check_quality: bool) -> list[Channel]:
    """The crosstalk files (or Channels) of a through, in its port order and on its grid."""
    if ch.kind != "through":
        raise ChannelError("only a through channel can carry aggressors")
    auto = isinstance(aggressors, str) and aggressors == "auto"
    items = sibling_crosstalk_files(path) if auto else aggressors
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
        try:
            agg = _load_one_aggressor(apath, akind, ch, path, check_quality)
        except ChannelError as e:
            if not auto:  # named by the caller: its failure is the caller's to see
                raise ChannelError(f"{shown_path(apath.name)} (an aggressor of {shown_path(path.name)}): {e}") from None
            warnings.warn(f"{shown_path(apath.name)} skipped as an aggressor of {shown_path(path.name)}: {e}", ChannelQualityWarning,
                          stacklevel=4)
            continue
        loaded.append(agg)
    return loaded


def _load_one_aggressor(apath: Path, akind: str, ch: Channel, path: Path, check_quality: bool) -> Channel:
    """One crosstalk file of ``path``'s through, on its grid; its warnings say whose aggressor
    it is."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agg = load(apath, thru=ch if ch.port_order is not None else "auto", kind=akind, check_quality=check_quality)
        if agg.f.size != ch.f.size or not np.allclose(agg.f, ch.f):
            if agg.f[-1] < 0.5 * ch.f[-1]:
                raise ChannelError(f"its data end at {agg.f[-1] / 1e9:.4g} GHz, under half the through's "
                                   f"{ch.f[-1] / 1e9:.4g} GHz: cut short or another band")
            agg = agg.resample(ch.f)
    for w in caught:
        warnings.warn(f"{w.message} (an aggressor of {shown_path(path.name)})", w.category, stacklevel=5)
    return agg
