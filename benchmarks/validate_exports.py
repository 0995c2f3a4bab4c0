"""Each system simulator's own all-reduce on our exports, against our model (issue 33).

For NVL72 and an 8-GPU HGX board, at 1 KiB, 1 MiB and 1 GiB per GPU: the tool's all-reduce
time on the exported file (GenZ through its own ``get_AR_time`` when ``genz-llm`` is
installed; LLMCompass, Calculon and ASTRA-sim through the readers of
``tests/test_export_tools.py``, each naming the source file it mirrors) against ours for
the same algorithm (``phy.topology.export.ALGORITHM`` and ``PROTOCOL``: NCCL's ring with
Simple), called live. :func:`rows` gives them in the validation table's shape (area
``export``; ``measured`` is ours, the reference; ``ours`` the tool's; ``ratio`` tool /
ours; set ``check``). Run as a script it prints them, and a second table: the same tools
against the algorithm and protocol our model would pick (the fastest: an in-switch
reduction or one-shot where the switch or size favours it), the gap a user of the tool
should expect when NCCL picks otherwise.

    python benchmarks/validate_exports.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))

from phy import topology as tp  # noqa: E402
from phy.topology import export  # noqa: E402
from test_export_tools import (  # noqa: E402
    astra_sim_ring_all_reduce_s,
    calculon_all_reduce_s,
    llmcompass_all_reduce_s,
)

SIZES = {"1 KiB": 2.0**10, "1 MiB": 2.0**20, "1 GiB": 2.0**30}
SOURCES = {
    "GenZ": "genz-llm GenZ/collective_times.py get_AR_time (run)",
    "LLMCompass": "LLMCompass software_model/communication_primitives.py AllReduceMultiPCB",
    "Calculon": "calculon/network.py Network.time",
    "ASTRA-sim": "astra-sim Ring.cc + astra-network-analytical BasicTopology.cpp",
}
_CACHE: dict = {}


def _fabrics():
    if not _CACHE:
        for name in ("nvl72", "hgx8"):
            _CACHE[name] = tp.rollup(getattr(tp, name)())
    return _CACHE


def _tools(r):
    """Each tool's all-reduce time (s) on this roll-up's exports, as a function of size."""
    n = r.n_accelerators
    out = {}
    try:
        from GenZ.collective_times import get_AR_time
        from GenZ.LLM_inference.utils import get_inference_system

        sysg = get_inference_system(export.genz_system(r))
        out["GenZ"] = lambda s: get_AR_time(s, n, sysg) * 1e-3
    except ImportError:
        pass
    arch = export.llmcompass_system(r)
    out["LLMCompass"] = lambda s: llmcompass_all_reduce_s(arch, s)
    net = export.calculon_network(r)
    out["Calculon"] = lambda s: calculon_all_reduce_s(net, s)
    yml = export.astra_sim_network(r)
    out["ASTRA-sim"] = lambda s: astra_sim_ring_all_reduce_s(yml, s)
    return out


def rows() -> list[dict]:
    """The tools' all-reduce times on our exports against ours, same algorithm and protocol."""
    out = []
    for name, r in _fabrics().items():
        for tool, fn in _tools(r).items():
            for label, s in SIZES.items():
                ours = r.collective("all_reduce", s, algorithm=export.ALGORITHM, protocol=export.PROTOCOL).time_s
                t = fn(s)
                out.append({"area": "export", "case": f"{tool} all_reduce {label} {name}", "source": SOURCES[tool],
                            "measured": ours, "ours": t, "unit": "s", "ratio": t / ours, "set": "check"})
    return out


def picks() -> list[dict]:
    """The same tools against the algorithm and protocol our model would pick."""
    out = []
    for name, r in _fabrics().items():
        tools = _tools(r)
        for label, s in SIZES.items():
            best = r.collective("all_reduce", s)
            ring = r.collective("all_reduce", s, algorithm=export.ALGORITHM, protocol=export.PROTOCOL)
            out.append({"case": f"{label} {name}", "pick": f"{best.algorithm} {best.protocol}",
                        "pick_s": best.time_s, "ring_s": ring.time_s,
                        **{tool: fn(s) / best.time_s for tool, fn in tools.items()}})
    return out


def main() -> int:
    rs = rows()
    print(f"all-reduce, each tool on our export vs ours with {export.ALGORITHM} / {export.PROTOCOL} "
          "(ratio = tool / ours; target within 10 %)")
    print(f"{'case':36s} {'ours':>11s} {'tool':>11s} {'ratio':>7s}  source")
    for x in rs:
        print(f"{x['case']:36s} {x['measured'] * 1e6:9.2f}us {x['ours'] * 1e6:9.2f}us {x['ratio']:7.3f}  {x['source']}")
    worst = max(abs(x["ratio"] - 1) for x in rs)
    print(f"largest miss {100 * worst:.1f} %")
    pk = picks()
    tools = [k for k in pk[0] if k not in ("case", "pick", "pick_s", "ring_s")]
    print("\nthe same tools against the algorithm our model picks (tool / ours-picked; ring / picked for scale)")
    print(f"{'case':16s} {'our pick':16s} {'picked':>11s} {'ring/pick':>9s} " + " ".join(f"{t:>10s}" for t in tools))
    for x in pk:
        print(f"{x['case']:16s} {x['pick']:16s} {x['pick_s'] * 1e6:9.2f}us {x['ring_s'] / x['pick_s']:9.2f} "
              + " ".join(f"{x[t]:10.2f}" for t in tools))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
