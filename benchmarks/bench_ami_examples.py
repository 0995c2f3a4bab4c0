"""The public example IBIS-AMI models through linkmodel: capn-freako/ibisami's example Tx and Rx
(built here with make, g++ and Boost) and PyAMI's prebuilt example Tx, each read from its
``.ami`` file, run out of process (:class:`phy.ami.AmiModel`), in the statistical eye
(``AMI_Init``) and in the simulator (``AMI_GetWave``), on one Touchstone channel.

For each model, side by side in one run:

- our ``AMI_parameters_in`` (from our parser) against pyibis-ami's (``ami_example_models.
  DEFAULT_PARAMS``): the same parameters and values;
- its ``AMI_Init`` impulse response through our host process against the same call in this
  process with plain ctypes (``ami_example_models.ctypes_check``): the same area;
- the statistical eye's SER and the simulator's throughput (UI/s) and eye with the model.

    python benchmarks/bench_ami_examples.py [--touchstone FILE] [--n-ui 100000]

Skips, with the reason, what does not build here (no mirror, no Boost, no compiler).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import ami_example_models as ex  # noqa: E402

DEFAULT_CHANNEL = HERE.parent.parent / "shared" / "channels" / "ieee802.3ck" / "DPO_4in_Meg7_THRU.s4p"


def _leaves(params: str, prefix: str = "") -> dict:
    """The leaves of a parameter string (:func:`phy.ami.parse_params_out`), by dotted name."""
    from phy.ami import parse_params_out

    out = {}
    for k, v in (parse_params_out(params) if isinstance(params, str) else params).items():
        if isinstance(v, dict):
            out.update(_leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _models(out: Path) -> dict:
    """label -> (library, .ami, side, pyibis-ami's parameter string); what does not build is printed."""
    models = {}
    try:
        for name, files in ex.build_ibisami(out).items():
            side = "tx" if name.endswith("tx") else "rx"
            models[f"ibisami {name}"] = (files["so"], files["ami"], side, ex.DEFAULT_PARAMS[name])
    except ex.NotBuilt as err:
        print(f"skipped ibisami: {err}")
    tx_ami = models.get("ibisami example_tx", (None, None))[1]
    try:
        f = ex.extract_pyami_tx(out, ami=tx_ami)
        if "ami" in f:
            models["PyAMI example_tx (prebuilt)"] = (f["so"], f["ami"], "tx", ex.DEFAULT_PARAMS["example_tx"])
    except ex.NotBuilt as err:
        print(f"skipped PyAMI: {err}")
    return models


def run(label, library, ami, side, their_params, ch, baud, n_ui, nspui) -> dict:
    import phy
    from phy.ami import AmiModel

    m = AmiModel.from_files(library, ami)
    ours, theirs = _leaves(m.parameters_in), _leaves(their_params)
    same = {k: v for k, v in theirs.items() if k in ours and ours[k] == v}
    ref = ex.ctypes_check(library, m.parameters_in, ui=1 / baud, nspui=nspui)
    dt = 1 / (baud * nspui)
    probe = np.zeros((1, 64 * nspui))
    probe[0, 8 * nspui] = 1 / dt
    area = float(m.init(probe, dt, 1 / baud).impulse.sum() * dt)
    tx = phy.Transmitter("nrz", swing_v=1.0, pattern="prbs7", ami=m if side == "tx" else None)
    rx = phy.Receiver(ami=m if side == "rx" else None)
    t = time.perf_counter()
    se = phy.statistical_eye(ch, baud_hz=baud, tx=tx, rx=rx, samples_per_ui=nspui)
    t_eye = time.perf_counter() - t
    t = time.perf_counter()
    r = phy.simulate(ch, n_ui, baud_hz=baud, tx=tx, rx=rx, samples_per_ui=nspui, eye=True, eye_bins=1024, seed=1)
    t_sim = time.perf_counter() - t
    return {"label": label, "params_same": f"{len(same)}/{len(theirs)}", "area_ours": area,
            "area_ctypes": ref["impulse_area"], "eye_s": t_eye, "eye_ser": se.ser(), "sim_ui_per_s": n_ui / t_sim,
            "sim_eye_v": float(r.eye.heights_v()[0]), "clock": r.config.get("clock")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--touchstone", type=Path, default=DEFAULT_CHANNEL)
    p.add_argument("--bit-rate", type=float, default=10e9)
    p.add_argument("--n-ui", type=int, default=100_000)
    p.add_argument("--nspui", type=int, default=32)
    p.add_argument("--out", type=Path, default=ex.DEFAULT_OUT)
    args = p.parse_args(argv)
    if not args.touchstone.is_file():
        print(f"skipped: no channel file {args.touchstone}")
        return 0
    import channels

    ch = channels.load(str(args.touchstone))
    print(f"{args.touchstone.name}, {args.bit_rate / 1e9:g} Gb/s NRZ, {args.nspui} samples/UI, {args.n_ui:,} UI")
    print(f"{'model':30} {'params = pyibis-ami':>20} {'area ours':>10} {'area ctypes':>11} {'eye s':>7} "
          f"{'eye SER':>9} {'sim UI/s':>10} {'sim eye V':>9} clock")
    for label, (lib, ami, side, params) in _models(args.out).items():
        r = run(label, lib, ami, side, params, ch, args.bit_rate, args.n_ui, args.nspui)
        print(f"{label:30} {r['params_same']:>20} {r['area_ours']:10.6f} {r['area_ctypes']:11.6f} {r['eye_s']:7.2f} "
              f"{r['eye_ser']:9.2g} {r['sim_ui_per_s']:10.4g} {r['sim_eye_v']:9.4f} {r['clock']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
