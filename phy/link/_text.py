"""A link report for a terminal, as :meth:`phy.LinkReport.summary` and ``linkmodel link``
print it: every figure with its unit and what it is measured against, probabilities below
:data:`phy._format.PROBABILITY_FLOOR` as a bound, latency terms by name (:mod:`phy._format`).
One renderer, so the library and the command print the same figures to the same digits."""

from __future__ import annotations

from .. import _format as fm

__all__ = ["report_text"]


def report_text(d: dict, preset_words: str | None = None) -> str:
    """``d``, a :meth:`phy.LinkReport.to_dict`, as lines for a terminal.

    ``preset_words``: what a segment's preset (fixed, not searched) equalisation is, printed
    in place of the word "preset" (``linkmodel link`` spells out its preset this way)."""
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
                                            d["target_ber"], d.get("retry_required_der")),
    ]
    one = len(d["segments"]) == 1
    for s in d["segments"]:
        eq = s["equalisation"]
        if preset_words and eq.startswith("preset"):
            eq = preset_words + eq.removeprefix("preset")
        elif s["com_db"] is not None:
            eq = "COM-proposed, the statistical eye decides: " + eq
        lines.append(f"  equalisation {'' if one else s['name'] + ': '}{eq}")
        if s["com_db"] is not None:
            lines.append("               " + fm.com_words(s["com_db"], s["notes"]))
    lines += [
        f"  usable       {d['usable_bandwidth_bps'] / 1e9:.2f} Gb/s per direction (payload after FEC, framing "
        f"and replays; {d['rate_chain']['payload_bps'] / 1e9:g} Gb/s payload)",
        f"  latency      {fm.ns(d['latency_s'])} one way, mean ({fm.terms_ns(d['latency_breakdown_s'])})"
        + (f"; p99.99 {fm.ns(d['latency_quantiles_s']['p99.99'])}" if d["latency_quantiles_s"] else ""),
        "  energy       " + fm.energy_words(d["energy_j_per_bit"], d["power_w"], d["notes"]),
    ]
    lines += [_channel_line(s["channel"], d["baud_hz"], "" if one else s["name"] + ": ") for s in d["segments"]
              if s["channel"] and s["channel"].get("il_db_nyquist") is not None]
    lines.append(f"  verdict      {d['margin_criterion']}")
    return "\n".join(lines)


def _channel_line(c: dict, baud_hz: float, name: str) -> str:
    fom = "" if c.get("fom_ild_db") is None else f", FOM_ILD {c['fom_ild_db']:.3f} dB"
    xt = ("" if c.get("icn_v") is None else
          f", ICN {c['icn_v'] * 1e3:.3g} mV rms ({c['n_next']} NEXT, {c['n_fext']} FEXT)")
    erl = ("" if c.get("erl_db") is None else
           f", ERL {c['erl_db']['port1']:.2f}/{c['erl_db']['port2']:.2f} dB (ports 1/2, {c['erl_preset']})")
    return (f"  channel      {name}IL {c['il_db_nyquist']:.2f} dB, RL {c['rl_db_nyquist']:.2f} dB at Nyquist "
            f"({baud_hz / 2e9:g} GHz){fom}{xt}{erl}")
