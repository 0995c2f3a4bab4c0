"""One point of a sweep: its :class:`phy.LinkSpec` (:func:`phy.config.link_spec_from`, here
``link_spec``) and its record (:func:`phy.evaluate_link` flattened into one row)."""

from __future__ import annotations

import os
import time

from ..config.link import link_spec_from as link_spec
from .spec import point_key


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
        rec["row"] = _flat(evaluate_link(spec, erl=False), spec)  # the row carries no ERL: not computed
        rec["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - any failure of a point is recorded and the sweep goes on
        rec["status"] = "error"
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["seconds"] = time.perf_counter() - t
    rec["worker_pid"] = os.getpid()
    return rec


