"""One point of a sweep: its channel or optics, its :class:`phy.LinkSpec`, and its record
(:func:`phy.evaluate_link` flattened into one row)."""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path

from .spec import _CHANNEL_KEYS, _get, _medium_of, point_key


@lru_cache(maxsize=32)
def _channel(key: tuple, root: str):
    import channels
    from channels import assembly, media

    p = dict(zip(_CHANNEL_KEYS, key))
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
        f = Path(p["channel.file"])
        return channels.load(f if f.is_absolute() else Path(root) / f, thru=p["channel.thru"])
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


def _preset_serdes(baud_hz: float, modulation: str):
    """A fixed equalisation for fast sweeps: no Tx FFE, a 0.58-baud Butterworth front end,
    a 16-tap MMSE Rx FFE (5 pre) and one DFE tap: the 802.3dj KR receiver's structure."""
    from ..link import Serdes
    from ..serdes import Dfe, Receiver, RxFfe, Transmitter

    return Serdes(tx=Transmitter(modulation, swing_v=0.413, level_mismatch=0.95 if modulation == "pam4" else 1.0),
                  rx=Receiver(bandwidth_hz=0.58 * baud_hz, ffe=RxFfe(5, 10), dfe=Dfe(1)), name="preset")


def link_spec(p: dict):
    """The :class:`phy.LinkSpec` of a point.

    Parameters
    ----------
    p : dict
        The point: ``"section.name"`` keys of the spec schema (missing keys take their
        defaults).

    Returns
    -------
    phy.LinkSpec
        The link the point describes.
    """
    from ..link import LinkSpec, PathElement, Retry, Serdes

    mod = _get(p, "link.modulation")
    rate = float(_get(p, "link.lane_rate_gbps")) * 1e9
    baud = rate / (2 if mod == "pam4" else 1)
    serdes = _preset_serdes(baud, mod) if _get(p, "link.equalization") == "preset" else Serdes()
    if _get(p, "serdes.rx_impairments") != "none":
        from dataclasses import replace

        from ..serdes import Impairments

        serdes = replace(serdes, rx_impairments=getattr(Impairments, _get(p, "serdes.rx_impairments"))())
    fec = _get(p, "link.fec")
    kw = {"lanes": int(_get(p, "link.lanes")), "lane_rate_bps": rate, "modulation": mod, "serdes": serdes,
              "fec": None if fec == "none" else fec, "interleave": int(_get(p, "link.interleave")) if fec != "none" else 1,
              "precoding": bool(_get(p, "link.precoding")), "retry": Retry() if _get(p, "link.retry") else None,
              "target_ber": float(_get(p, "link.target_ber")),
              "required_margin_db": _get(p, "link.required_margin_db"),
              "path": (PathElement.switch_port(),) * int(_get(p, "link.switch_ports"))}
    if _medium_of(p) == "optics":
        oc = _optics(_get(p, "optics.kind"), float(_get(p, "optics.length_m")), baud, _get(p, "optics.rin_db_per_hz"))
        return LinkSpec(optics=oc, **kw)
    key = tuple(_get(p, k) for k in _CHANNEL_KEYS)
    return LinkSpec(channel=_channel(key, p.get("_root", ".")), **kw)


def _flat(r, spec) -> dict:
    """A link report as one row. ``equalisation`` is the mode the link used (``"com"`` or
    ``"preset"``, as inputs spell it; from ``spec``'s SerDes: a fixed Tx and Rx is a preset),
    ``equalisation_choice`` how its first segment was equalised, in words."""
    row = {
        "passes": r.passes, "reasons": "; ".join(r.reasons), "pre_fec_ber": r.pre_fec_ber,
        "post_fec_ber": r.post_fec_ber, "margin_db": r.margin_db, "required_der": r.required_der,
        "codeword_error_ratio": r.codeword_error_ratio, "frame_loss_ratio": r.frame_loss_ratio,
        "usable_gbps": r.usable_bandwidth_bps / 1e9, "payload_gbps": r.rate_chain["payload_bps"] / 1e9,
        "latency_ns": r.latency_s * 1e9, "energy_pj_per_bit": r.energy_j_per_bit * 1e12, "power_w": r.power_w,
        "equalisation": _mode(spec), "equalisation_choice": r.segments[0].equalisation,
        "com_db": r.segments[0].com_db,
        "required_margin_db": r.required_margin_db,
    }
    ch = r.segments[0].channel
    for k in ("il_db_nyquist", "rl_db_nyquist", "fom_ild_db"):
        row[k] = ch.get(k)
    row["icn_mv"] = None if ch.get("icn_v") is None else ch["icn_v"] * 1e3
    for k, v in r.latency_breakdown_s.items():
        row[f"latency_{k}_ns"] = v * 1e9
    return row


def _mode(spec) -> str:
    """``"preset"`` (a fixed Tx and Rx) or ``"com"`` (COM proposes): what the link's SerDes does."""
    return "com" if spec.serdes.tx is None else "preset"


def evaluate_point(p: dict) -> dict:
    """One point's record: ``key``, ``params``, ``status`` (``"ok"`` or ``"error"``),
    ``row`` (the flat figures) or ``error``, ``seconds`` and ``worker_pid`` (the process
    that ran it).

    Parameters
    ----------
    p : dict
        The point, as :func:`link_spec` takes it; keys starting with ``_`` are left out
        of ``params``.

    Returns
    -------
    dict
        The record; a failure of the point is recorded in it, not raised.
    """
    from ..link import evaluate_link

    t = time.perf_counter()
    params = {k: v for k, v in p.items() if not k.startswith("_")}
    rec = {"key": point_key(p), "params": params}
    try:
        spec = link_spec(p)
        rec["row"] = _flat(evaluate_link(spec), spec)
        rec["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - any failure of a point is recorded and the sweep goes on
        rec["status"] = "error"
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["seconds"] = time.perf_counter() - t
    rec["worker_pid"] = os.getpid()
    return rec


