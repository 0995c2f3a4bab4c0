"""A rolled-up fabric's latency as the demo and ``linkmodel rack`` print it: one dict of
figures (:func:`fabric_figures`, also in the demo's JSON) and one renderer
(:func:`fabric_lines`), so both commands give the same figures to the same digits."""

from __future__ import annotations

from . import _format as fm


def fabric_figures(r, path: str = "remote") -> dict:
    """The latency of route ``path`` of a :class:`phy.topology.TopologyReport` (s), plain
    JSON values: the PHY floor and its terms, a small transfer's one way, a remote read,
    an 8-byte all-reduce over every accelerator, the one way under switch load, and the
    bytes in flight a stream at the accelerator's bandwidth needs."""
    ar = r.collective("all_reduce", 8.0)
    return {"route": path, "accelerators": r.n_accelerators, "phy_floor_s": r.phy_floor_s[path],
            "phy_floor_breakdown_s": dict(r.phy_floor_breakdown_s[path]),
            "one_way": r.one_way[path].to_dict(), "remote_read": r.round_trip[path].to_dict(),
            "loaded_s": {str(u): dict(q) for u, q in r.loaded_s[path].items()},
            "all_reduce_8b": {"time_s": ar.time_s, "algorithm": ar.algorithm, "protocol": ar.protocol,
                              "layers_s": ar.layer_totals()},
            "stream_bytes_per_s": r.accel_bandwidth_bytes_per_s, "stream_bytes_in_flight": r.bytes_in_flight(path)}


def fabric_lines(f: dict, detail: bool = False, ends: str = "accelerator to accelerator") -> list[str]:
    """:func:`fabric_figures` for a terminal, layer by layer, in ns; with ``detail`` each
    layer's terms and the bytes in flight."""
    w = 19
    ow, rt, ar = f["one_way"], f["remote_read"], f["all_reduce_8b"]
    out = [f"latency      {ends} over the fabric ({f['route']} route), by layer",
           f"  {'PHY floor':<{w}}{fm.ns(f['phy_floor_s']):>11}  links and switch ports only: "
           + fm.terms_ns(f["phy_floor_breakdown_s"]),
           f"  {'one way, 8 B':<{w}}{fm.ns(ow['total_s']):>11}  " + fm.terms_ns(ow["layer_totals_s"]),
           f"  {'remote read, 64 B':<{w}}{fm.ns(rt['total_s']):>11}  " + fm.terms_ns(rt["layer_totals_s"]),
           f"  {'all-reduce, 8 B':<{w}}{fm.ns(ar['time_s']):>11}  over {f['accelerators']} accelerators, "
           f"{ar['algorithm']} {ar['protocol']}: " + fm.terms_ns(ar["layers_s"])]
    if detail:
        for name, st in (("one way", ow), ("remote read", rt)):
            parts = [f"{fm.label(k)}: {fm.terms_ns(v)}" for k, v in st["layers"].items() if sum(v.values()) >= 0.05e-9]
            out.append(f"    {name} by term: " + "; ".join(parts))
        out.append(f"    streaming {fm.bytes_per_s(f['stream_bytes_per_s'])} from remote memory keeps "
                   f"{f['stream_bytes_in_flight'] / 1e6:.2f} MB in flight (bandwidth x the read's round trip)")
    if f["loaded_s"]:
        out.append(f"  {'under switch load':<{w}}one way p50 / p99 / p99.99 (M/D/1 per output port): "
                   + "; ".join(f"{100 * float(u):.0f} %: {q['p50'] * 1e9:.1f} / {q['p99'] * 1e9:.1f} / "
                               f"{q['p99.99'] * 1e9:.1f} ns" for u, q in f["loaded_s"].items()))
    return out
