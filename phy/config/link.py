"""A link from a file or a dict of ``"section.name"`` keys (:data:`LINK_SCHEMA`): the
file read and checked whole, the one medium it names, and its :class:`phy.LinkSpec`.
A sweep's points are such dicts (:mod:`phy.sweep`); ``linkmodel link`` runs one."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from _linkmodel._recent import Recent

from ..errors import ConfigError
from .files import file_problem, parse_named, read_text, show_path, where
from .schema import LINK_SCHEMA, SWEEP_SCHEMA, check_value, read_sections

#: The sections of a link file (a [sweep] section is checked and not needed).
LINK_SECTIONS = ("channel", "optics", "link", "serdes", "tx_ami", "rx_ami")
#: The keys that name a file, relative to the spec's folder.
FILE_KEYS = ("channel.file", *(f"{side}_ami.{k}" for side in ("tx", "rx") for k in ("ibs", "library", "ami")))
#: What a point's channel depends on (:func:`link_spec_from` builds it once per process).
CHANNEL_KEYS = ("channel.kind", "channel.length_m", "channel.awg", "channel.connectors", "channel.name",
                "channel.file", "channel.thru", "channel.host", "channel.crosstalk")
#: The keys that decide whether a point names one medium (:func:`medium_of`).
MEDIUM_CHECK_KEYS = ("channel.kind", "optics.kind", "channel.file")


def value(p: dict, key: str):
    """``p[key]``, or the key's default in :data:`LINK_SCHEMA`."""
    return p.get(key, LINK_SCHEMA[key][1])


def file_path(name, root) -> Path:
    """A file a spec names (``channel.file``): as given when absolute, else in ``root``,
    the spec's folder."""
    f = Path(name)
    return f if f.is_absolute() else Path(root) / f


def check_param(full: str, v, at: str, root: str) -> None:
    """Key ``full`` = ``v`` checked against :data:`LINK_SCHEMA` (a ``channel.file`` must be
    a readable file, relative to ``root``); :class:`phy.ConfigError` at ``at``."""
    check_value(LINK_SCHEMA, full, v, at)
    if full in FILE_KEYS:
        f = str(file_path(v, root))
        bad = file_problem(f)
        if bad == "no such file":
            raise ConfigError(f"{at}: no such file {show_path(f)}")
        if bad:
            raise ConfigError(f"{at}: cannot use {show_path(f)}: {bad}")


def read_link_sections(doc: dict, path, text: str, root: str, sections) -> dict:
    """The link keys of a parsed file (its [channel], [optics], [link], [serdes]) and its
    [sweep] keys, checked; every other section in ``sections`` left to the caller; see
    :func:`parse_link`."""
    got = read_sections(doc, {**LINK_SCHEMA, **SWEEP_SCHEMA}, path, text, sections)
    for k in FILE_KEYS:
        if k in got:
            check_param(k, got[k], where(path, text, *k.split(".")), root)
    return got


def parse_link(text: str, path=None) -> dict:
    """A link file's keys, checked, as the dict :func:`link_spec_from` takes.

    Every unknown section or key, wrong type, value out of range, missing file or second
    medium raises :class:`phy.ConfigError` naming the file, the line and the key. A
    ``[sweep]`` section is left to :mod:`phy.sweep` (a sweep file with no ``[grid]`` or
    ``[zip]`` is a link file too).

    Parameters
    ----------
    text : str
        The TOML text.
    path : str, optional
        The file it came from, named in messages; a relative ``channel.file`` is found
        from its folder (None: from the working directory).

    Returns
    -------
    dict
        ``{"section.name": value}`` of the keys given, plus ``"_root"``, the folder
        relative files are read from.
    """
    doc, root = parse_named(text, path, "link file")
    p = {k: v for k, v in read_link_sections(doc, path, text, root, ("sweep", *LINK_SECTIONS)).items()
         if k in LINK_SCHEMA}
    medium_of(p)
    return {**p, "_root": root}


def load_link(path) -> dict:
    """Read and check a link file (:func:`parse_link`).

    Parameters
    ----------
    path : str or os.PathLike
        The TOML file.

    Returns
    -------
    dict
        Its keys, as :func:`link_spec_from` takes them.
    """
    name, text = read_text(path, "link file")
    return parse_link(text, name)


def medium_of(p: dict) -> str:
    """``"optics"`` or ``"channel"``: the one medium a point names; :class:`phy.ConfigError`
    for none, two, or a Touchstone channel with no file."""
    kind = value(p, "channel.kind")
    optics = value(p, "optics.kind")
    if optics != "none" and "channel.kind" in p and kind != "none":
        raise ConfigError(f"a point has both channel.kind = {kind!r} and optics.kind = {optics!r}: choose one medium")
    if optics == "none" and kind == "none":
        raise ConfigError("a point has no medium: set channel.kind or optics.kind")
    if kind == "touchstone" and not p.get("channel.file"):
        raise ConfigError("channel.kind = 'touchstone' needs channel.file")
    return "optics" if optics != "none" else "channel"


@lru_cache(maxsize=32)
def _channel(key: tuple, root: str):
    import channels
    from channels import assembly, media

    p = dict(zip(CHANNEL_KEYS, key))
    kind = p["channel.kind"]
    L = p["channel.length_m"]
    if kind == "twinax" and (p["channel.host"] != "none" or p["channel.crosstalk"]):
        host = None if p["channel.host"] == "none" else p["channel.host"]
        return assembly.cable_channel(L, p["channel.awg"], host=host, crosstalk=p["channel.crosstalk"],
                                      paddle_card_length_m=25e-3 if p["channel.connectors"] else 0.0)
    if kind == "twinax":
        parts = [media.twinax(L, p["channel.awg"])]
    elif kind == "stripline":
        parts = [media.stripline(L)]
    elif kind == "library":
        return channels.library.get(p["channel.name"])
    else:
        return channels.load(file_path(p["channel.file"], root), thru=p["channel.thru"])
    if p["channel.connectors"]:
        parts = [_connector(), *parts, _connector()]
    return media.cascade(*parts).renamed(f"{kind}_{L:g}m")


@lru_cache(maxsize=1)
def _connector():
    """The mated connector at each end of a synthesized cable or line (:func:`channels.media.connector`,
    on the default grid): the same for every point, built once per process."""
    from channels import media

    return media.connector()


@lru_cache(maxsize=32)
def _optics(kind: str, length_m: float, baud_hz: float, rin):
    from dataclasses import replace

    from ..link import OpticalClass

    oc = {"dsp": OpticalClass.dsp_pluggable, "lpo": OpticalClass.lpo, "cpo": OpticalClass.cpo}[kind](
        length_m=length_m, baud_hz=baud_hz)
    if rin is not None:
        oc = replace(oc, path=replace(oc.path, tx=replace(oc.path.tx, rin_db_per_hz=rin)))
    return oc


def serdes_of(equalisation: str, lane_rate_bps: float, modulation: str = "pam4"):
    """The SerDes a file's ``link.equalisation`` names.

    Parameters
    ----------
    equalisation : {"com", "preset"}
        ``"com"``: COM proposes, the eye decides (:class:`phy.Serdes` with no Tx or Rx);
        ``"preset"``: :meth:`phy.Serdes.preset` at the lane's baud.
    lane_rate_bps : float
        The lane's line rate (b/s).
    modulation : {"pam4", "nrz"}

    Returns
    -------
    phy.Serdes
    """
    from ..link import Serdes
    from ..serdes import symbol_rate_hz

    if equalisation == "preset":
        return Serdes.preset(symbol_rate_hz(lane_rate_bps, modulation), modulation)
    return Serdes()


def link_spec_from(p: dict):
    """The :class:`phy.LinkSpec` a dict of link keys describes.

    Parameters
    ----------
    p : dict
        ``"section.name"`` keys of :data:`phy.config.LINK_SCHEMA` (missing keys take
        their defaults; ``"_root"``: the folder a relative ``channel.file`` is read from),
        as :func:`parse_link` gives them or a sweep's point.

    Returns
    -------
    phy.LinkSpec
        The link.
    """
    from ..link import LinkSpec, PathElement, Retry
    from ..serdes import symbol_rate_hz

    mod = value(p, "link.modulation")
    rate = float(value(p, "link.lane_rate_gbps")) * 1e9
    serdes = serdes_of(value(p, "link.equalisation"), rate, mod)
    if value(p, "serdes.rx_impairments") != "none":
        from dataclasses import replace

        from ..serdes import Impairments

        serdes = replace(serdes, rx_impairments=getattr(Impairments, value(p, "serdes.rx_impairments"))())
    if any(k.startswith(("tx_ami.", "rx_ami.")) for k in p):
        serdes = ami_serdes(p, serdes, symbol_rate_hz(rate, mod), mod)
    fec = value(p, "link.fec")
    kw = {"lanes": int(value(p, "link.lanes")), "lane_rate_bps": rate, "modulation": mod, "serdes": serdes,
          "fec": None if fec == "none" else fec, "interleave": int(value(p, "link.interleave")) if fec != "none" else 1,
          "precoding": bool(value(p, "link.precoding")), "retry": Retry() if value(p, "link.retry") else None,
          "target_ber": float(value(p, "link.target_ber")),
          "required_margin_db": value(p, "link.required_margin_db"),
          "path": (PathElement.switch_port(),) * int(value(p, "link.switch_ports"))}
    if medium_of(p) == "optics":
        oc = _optics(value(p, "optics.kind"), float(value(p, "optics.length_m")), symbol_rate_hz(rate, mod),
                     value(p, "optics.rin_db_per_hz"))
        return LinkSpec(optics=oc, **kw)
    key = tuple(value(p, k) for k in CHANNEL_KEYS)
    return LinkSpec(channel=_channel(key, p.get("_root", ".")), **kw)


_MODELS = Recent(8)  # the AMI models a sweep's points name: each built (its .ami parsed) once per process


def _ami_model(p: dict, side: str):
    """The ``[tx_ami]`` or ``[rx_ami]`` model of a file's keys, or None."""
    from ..ami import AmiModel

    keys = {k.split(".", 1)[1]: v for k, v in p.items() if k.startswith(f"{side}_ami.")}
    if not keys:
        return None
    root = p.get("_root", ".")
    given = [k for k in ("ibs", "library") if k in keys]
    if len(given) != 1 or ("library" in keys) != ("ami" in keys) or ("model" in keys and "ibs" not in keys):
        raise ConfigError(f"[{side}_ami] names its model by ibs (and model), or by library and ami; got "
                          f"{', '.join(sorted(keys))}")
    params = dict(keys.get("parameters") or {})
    timeout = float(value(p, f"{side}_ami.timeout_s"))
    key = (side, *(str(file_path(keys[k], root)) if k in keys else None for k in ("ibs", "library", "ami")),
           keys.get("model"), tuple(sorted(params.items())), timeout)

    def make():
        if "ibs" in keys:
            return AmiModel.from_ibs(file_path(keys["ibs"], root), keys.get("model"), parameters=params,
                                     timeout_s=timeout)
        return AmiModel.from_files(file_path(keys["library"], root), file_path(keys["ami"], root),
                                   parameters=params, timeout_s=timeout)

    return _MODELS.remember(key, make)


def ami_serdes(p: dict, serdes, baud_hz: float, modulation: str):
    """The SerDes of a file with ``[tx_ami]`` and/or ``[rx_ami]``: the models fix the
    equalisation. The side without a model is :meth:`phy.Serdes.preset`'s (no Tx FFE; a
    0.58-baud front end, a 16-tap Rx FFE and one DFE tap); a receiver model has
    ``rx_ami.dfe_taps`` DFE taps behind it in the statistical eye, no Rx FFE, and an analog
    bandwidth of ``rx_ami.bandwidth_ghz`` (default 0.75 of the baud, 802.3's 93A-20)."""
    from dataclasses import replace

    from ..link import Serdes
    from ..serdes import Dfe, Receiver

    base = serdes if serdes.tx is not None else Serdes.preset(baud_hz, modulation)
    tx_m, rx_m = _ami_model(p, "tx"), _ami_model(p, "rx")
    tx = base.tx if tx_m is None else replace(base.tx, ami=tx_m)
    rx = base.rx
    if rx_m is not None:
        bw = p.get("rx_ami.bandwidth_ghz")
        rx = Receiver(bandwidth_hz=0.75 * baud_hz if bw is None else float(bw) * 1e9,
                      dfe=Dfe(int(value(p, "rx_ami.dfe_taps"))), ami=rx_m)
    return replace(base, tx=tx, rx=rx, name="ibis-ami")
