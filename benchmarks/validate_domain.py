"""The domain trade beside NVIDIA's public figures for GB200 NVL72 (issue 33, area "domain").

``rows()`` gives one dict per public figure (keys area, case, source, measured, ours, unit,
ratio, set; see benchmarks/validate_system.py). No coefficient of the domain model is fitted
to these figures, so every row is in the ``test`` set. The plan is
``phy.topology.domain.plan_domain(72)`` on the default layout and candidates (NVL72's build:
the copper spine closes, one tier of 72-port switches).

    python benchmarks/validate_domain.py            # about 10 to 20 s on one core
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

MILE_M = 1609.344

#: (case, source, measured, unit) per figure; ``ours`` is computed in rows().
FIGURES = {
    "pairs": ("NVL72 copper spine: differential pairs", "NVIDIA (REFERENCES.md Systems): 5,184 copper pairs", 5184.0,
              "pairs"),
    "pair_length": ("NVL72 copper spine: length of cable", "NVIDIA (REFERENCES.md Systems): 'about two miles' of cable",
                    2 * MILE_M, "m"),
    "rack_power": ("NVL72 rack power with its GPUs", "introl.com GB200 NVL72 deployment guide (secondary): 120 kW", 120e3, "W"),
    "rack_units": ("NVL72 rack units in use", "NVIDIA DGX GB200 user guide (18 + 9 trays, 2 TOR) and BCM manual "
                   "(8 power shelves of 1 RU)", 37.0, "RU"),
    "optics_delta": ("NVL72 on DSP pluggables minus copper", "NVIDIA (secondary, tests/test_power.py): copper saves about 20 kW",
                     20e3, "W"),
}


def rows() -> list[dict]:
    from phy import topology as tp
    from phy.topology import domain as dm

    cands = dm.default_candidates()
    plan = dm.plan_domain(72, None, cands)
    copper = plan.report_topology
    pair_m = plan.copper_kg / dm.copper_kg_per_pair_m(26)
    dsp = tp.rollup(tp.nvl72(cands[4])).power.total_w
    ours = {"pairs": float(plan.cables), "pair_length": pair_m, "rack_power": plan.power.max_rack_w,
            "rack_units": float(max(plan.rack_units)), "optics_delta": dsp - plan.power.total_w}
    assert copper.n_accelerators == 72 and plan.closes
    out = []
    for k, (case, src, meas, unit) in FIGURES.items():
        out.append({"area": "domain", "case": case, "source": src, "measured": meas, "ours": ours[k], "unit": unit,
                    "ratio": ours[k] / meas, "set": "test"})
    return out


def main() -> None:
    rs = rows()
    print(f"{'case':<42} {'measured':>10} {'ours':>10} {'unit':>5} {'ratio':>6}  source")
    for r in rs:
        print(f"{r['case']:<42} {r['measured']:>10.4g} {r['ours']:>10.4g} {r['unit']:>5} {r['ratio']:>6.3f}  {r['source']}")


if __name__ == "__main__":
    main()
