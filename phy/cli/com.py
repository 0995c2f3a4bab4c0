"""``linkmodel com``: the Channel Operating Margin of a channel for a COM parameter set."""

from __future__ import annotations

import json
import warnings

from channels import ChannelQualityWarning

from ..engines.com import ComParams, MarginResult, channel_margin
from ..errors import ConfigError
from .channel import _open

PRESETS = ("802.3ck_kr", "802.3dj_kr", "802.3dj_cr")


def com_params(preset: str, package_class: str = "A", cable_class: str = "CA-A") -> ComParams:
    """A preset by its command-line name (``802.3dj_kr`` with its package class,
    ``802.3dj_cr`` with its cable class)."""
    if preset == "802.3ck_kr":
        return ComParams.ieee_802_3ck_kr()
    if preset == "802.3dj_kr":  # a bad class is the preset's own ConfigError
        return ComParams.ieee_802_3dj_kr(package_class)
    if preset == "802.3dj_cr":
        return ComParams.ieee_802_3dj_cr(cable_class)
    raise ConfigError(f"--preset must be one of {', '.join(PRESETS)}, got {preset!r}")


def com_report(r: MarginResult) -> dict:
    """What the command prints: COM, the package case that set it and every case's COM,
    each term against A_s, the equalisation chosen, the notes."""
    return {
        "com_db": r.com_db, "fom_db": r.fom_db, "package_case": r.package_case, "case_com_db": r.case_com_db,
        "a_s_v": r.a_s_v, "a_ni_v": r.a_ni_v, "terms_db_below_a_s": r.breakdown_db(), "tx_ffe": r.tx_ffe,
        "ctle_db": [r.g_dc_db, r.g_dc2_db], "dfe": r.dfe, "dfe_floating": r.dfe_floating,
        "rx_ffe_taps_in_use": sum(1 for w in r.rx_ffe if w != 0.0), "settings_searched": r.settings_searched,
        "seconds": r.seconds, "preset": r.params["name"], "notes": list(r.notes),
        "mlsd": dict(r.mlsd),  # 802.3dj's MLSD receiver (178A.1.10): COM_DFE and its gain; empty without
    }


def _print(d: dict) -> None:
    print(f"COM          {d['com_db']:.3f} dB ({d['preset']}): A_s over the noise and ISI at DER_0, passing at 3 dB; "
          f"FOM {d['fom_db']:.3f} dB (the figure of merit the search maximised)")
    if len(d["case_com_db"]) > 1:
        cases = ", ".join(f"{k} {v:.3f}" for k, v in d["case_com_db"].items())
        print(f"package      {d['package_case']} sets it (cases: {cases} dB)")
    print("terms        " + ", ".join(f"{k} {v:.1f}" for k, v in d["terms_db_below_a_s"].items())
          + " dB below A_s")
    print(f"Tx FFE       {', '.join(f'{c:.3f}' for c in d['tx_ffe'])}; CTLE {d['ctle_db'][0]:g}, "
          f"{d['ctle_db'][1]:g} dB")
    dfe = ", ".join(f"{b:.3f}" for b in d["dfe"])
    if d["dfe_floating"]:
        dfe += "; floating " + ", ".join(f"{k}: {v:.3f}" for k, v in d["dfe_floating"].items())
    print(f"DFE          {dfe}")
    if d["rx_ffe_taps_in_use"] > 1:
        print(f"Rx FFE       {d['rx_ffe_taps_in_use']} taps in use")
    print(f"search       {d['settings_searched']:,} settings in {d['seconds']:.2f} s")
    for n in d["notes"]:
        print(f"note         {n}")


def _cmd_com(args) -> int:
    p = com_params(args.preset, args.package_class, args.cable_class)
    if args.ts_search:
        p = p.with_(ts_search=args.ts_search)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ChannelQualityWarning)
        ch = _open(args.target, args.thru, "auto" if args.aggressors else None)
        d = com_report(channel_margin(ch, p))
    d["warnings"] = [str(w.message) for w in caught if issubclass(w.category, ChannelQualityWarning)]
    if args.json:
        print(json.dumps(d, indent=2, default=float))
    else:
        _print(d)
        for w in d["warnings"]:
            print(f"warning      {w}")
    return 0


def add_parser(sub) -> None:
    c = sub.add_parser("com", help="the Channel Operating Margin of a channel",
                       description="COM (IEEE 802.3 93A; 163A and 178A presets) of a built-in channel or a "
                                   "Touchstone file, with its crosstalk siblings (--aggressors).")
    c.add_argument("target", help="a built-in channel name or a .s4p file")
    c.add_argument("--preset", default="802.3ck_kr", help=f"one of {', '.join(PRESETS)} (default 802.3ck_kr)")
    c.add_argument("--package-class", default="A", help="802.3dj_kr: A, B or AB (default A)")
    c.add_argument("--cable-class", default="CA-A", help="802.3dj_cr: CA-A .. CA-D (default CA-A)")
    c.add_argument("--thru", default="auto", help="4-port order: auto (default), 12_34, 13_24 or 14_23")
    c.add_argument("--aggressors", action="store_true", help="load the crosstalk files beside a through file")
    c.add_argument("--ts-search", choices=("full", "pruned"), help="178A sampling-time search (default full)")
    c.add_argument("--json", action="store_true", help="print JSON instead of text")
    c.set_defaults(func=_cmd_com)
