"""``linkmodel link`` and ``linkmodel sweep``: one link from TOML, and a sweep into its
locked, crash-safe store (named after the spec file: ``reach.toml`` -> ``reach.jsonl``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import _format as fm

#: What ``link.equalization = "preset"`` is (:func:`phy.sweep.point._preset_serdes`), as printed.
PRESET_WORDS = ("preset: no Tx FFE, a 0.58-baud Butterworth front end, a 16-tap MMSE Rx FFE (5 pre) "
                "and one DFE tap (the 802.3dj KR receiver's structure)")


# ----------------------------------------------------------------------------- link
def link_text(r, equalization: str | None = None) -> str:
    """A :class:`phy.LinkReport` for a terminal: every figure with its unit and what it is
    measured against; probabilities below :data:`phy.cli._format.PROBABILITY_FLOOR` as a
    bound. ``equalization``: the spec's choice ("com" or "preset"), to name a preset."""
    d = r.to_dict()
    verdict = "PASS" if d["passes"] else "FAIL: " + "; ".join(d["reasons"])
    fec = d["fec"] or "none"
    extra = (f"{' x' + str(d['interleave']) + ' interleaved' if d['interleave'] > 1 else ''}"
             f"{', precoded' if d['precoding'] else ''}{', link-level retry' if d['retry'] else ''}")
    lines = [
        f"{d['name']}: {verdict}",
        f"  {d['lanes']} x {d['lane_rate_bps'] / 1e9:g} Gb/s {d['modulation'].upper()}, FEC {fec}{extra}",
        f"  errors       pre-FEC BER {fm.prob(d['pre_fec_ber'])}, post-FEC BER {fm.prob(d['post_fec_ber'])} "
        f"(target {d['target_ber']:.0e})",
        "  margin       " + fm.margin_words(d["margin_db"], d["required_margin_db"], d["required_der"], d["fec"],
                                            d["target_ber"]),
    ]
    for s in d["segments"]:
        eq = s["equalisation"]
        if equalization == "preset" and eq.startswith("preset"):
            eq = PRESET_WORDS + eq.removeprefix("preset")
        elif s["com_db"] is not None:
            eq = "COM-proposed, the statistical eye decides: " + eq
        name = "" if len(d["segments"]) == 1 else f"{s['name']}: "
        lines.append(f"  equalisation {name}{eq}")
        if s["com_db"] is not None:
            lines.append("               " + fm.com_words(s["com_db"], s["notes"]))
    lines += [
        f"  usable       {d['usable_bandwidth_bps'] / 1e9:.2f} Gb/s per direction (payload after FEC, framing "
        f"and replays; {d['rate_chain']['payload_bps'] / 1e9:g} Gb/s payload)",
        f"  latency      {fm.ns(d['latency_s'])} one way, mean ({fm.terms_ns(d['latency_breakdown_s'])})"
        + (f"; p99.99 {fm.ns(d['latency_quantiles_s']['p99.99'])}" if d["latency_quantiles_s"] else ""),
        "  energy       " + fm.energy_words(d["energy_j_per_bit"], d["power_w"], d["notes"]),
    ]
    nyq = d["baud_hz"] / 2e9
    for s in d["segments"]:
        c = s["channel"]
        if not c or c.get("il_db_nyquist") is None:
            continue
        fom = "" if c.get("fom_ild_db") is None else f", FOM_ILD {c['fom_ild_db']:.3f} dB"
        xt = ("" if c.get("icn_v") is None else
              f", ICN {c['icn_v'] * 1e3:.3g} mV rms ({c['n_next']} NEXT, {c['n_fext']} FEXT)")
        erl = ("" if c.get("erl_db") is None else
               f", ERL {c['erl_db']['port1']:.2f}/{c['erl_db']['port2']:.2f} dB (ports 1/2, {c['erl_preset']})")
        name = "" if len(d["segments"]) == 1 else f"{s['name']}: "
        lines.append(f"  channel      {name}IL {c['il_db_nyquist']:.2f} dB, RL {c['rl_db_nyquist']:.2f} dB at "
                     f"Nyquist ({nyq:g} GHz){fom}{xt}{erl}")
    lines.append(f"  verdict      {d['margin_criterion']}")
    return "\n".join(lines)


def _cmd_link(args) -> int:
    from .. import sweep as sw

    spec = sw.load_spec(args.spec, sweep=False)
    p = sw.points(spec)[0]
    from ..link import evaluate_link

    r = evaluate_link(sw.link_spec(p))
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print(link_text(r, p.get("link.equalization", sw.SCHEMA["link.equalization"][1])))
    return 0 if r.passes else 1


# ----------------------------------------------------------------------------- sweep
def _cmd_sweep(args) -> int:
    from .. import sweep as sw

    spec = sw.load_spec(args.spec)
    store = args.store or str(Path(args.spec).with_suffix(".jsonl"))
    n = len(sw.points(spec))
    print(f"sweep {spec.name}: {n} points -> {store}", file=sys.stderr)
    r = sw.run_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                     point_timeout_s=args.point_timeout_s, progress=not args.no_progress,
                     retry_failed=args.retry_failed)
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    late = f" ({r.timed_out} past the time limit)" if r.timed_out else ""
    print(f"{r.total} points: {r.skipped} already done, {r.ok} ran, {r.failed} failed{late}, "
          f"{r.seconds:.1f} s ({r.points_per_second:.2f} points/s); store {r.store}")
    for n in r.notes:
        print(f"note: {n}")
    return 0
