"""PyBERT's side of the AMI Rx benchmark: one Rx AMI model in GetWave mode behind a Touchstone channel.

Run it with the Python of the separate PyBERT venv (never the project's venv), see
``benchmarks/bench_ami_pybert.md``::

    /work/venv-pybert/bin/python benchmarks/ami_pybert_side.py \\
        --rx-ibs /tmp/ibisami/example/example_rx.ibs \\
        --touchstone ../shared/channels/ieee802.3ck/DPO_4in_Meg7_THRU.s4p \\
        --bit-rate 10e9 --nbits 100000 --nspui 32

It prints one JSON object on stdout (PyBERT's log goes to stderr).

What PyBERT is told to do: NRZ, PRBS-7 (seed 1), ``inter_sel="single"`` with the Touchstone
file (ports 1->2 and 3->4, PyBERT's default numbering), Tx FFE taps all disabled (cursor 1),
no random or periodic noise (``rn = pn_mag = 0``), native CTLE off, Rx AMI model in GetWave
mode (``rx_use_ami = rx_use_getwave = True``, clock times not used), every PyBERT DFE tap
disabled (PyBERT still runs its DFE with zero taps as the slicer and bang-bang CDR: it always
does). Rx termination: from the IBIS file when ``--rx-ibs`` is given (``rx_sel="ibis"``:
``zin`` and ``C_comp``), else PyBERT's native ``rin``/``cin``.

Timing: calls of ``pybert.models.bert.my_run_simulation(b, initial_run=True,
update_plots=False)`` (no plots, no eye diagrams), after the import and trait set-up; with
``--repeat N``, N calls and the fastest (by ``seconds``) is reported.
``seconds_total`` is that call; ``seconds_channel`` is the part spent in ``calc_chnl_h``
(Touchstone import, ``calc_G``, irfft, interpolation, trim); ``seconds`` is the difference,
the simulation without the channel load. ``seconds_ami`` is the time in PyBERT's
``run_ami_model`` (AMI_Init, pyibisami's step/impulse probing with GetWave, then GetWave over
the whole waveform in 40-bit blocks, pyibisami copying samples through Python lists).
``seconds_getwave`` is the last ``AMIModel.getWave`` call alone (the whole waveform through
AMI_GetWave). ``ui_per_s = nbits / seconds`` (NRZ: one bit per UI); ``ui_per_s_ami_only`` and
``ui_per_s_getwave_only`` divide by the other two.

Eye height: PyBERT computes none without plots, so the script measures it on the AMI model's
output (PyBERT's ``ctle_out``): for each of the nspui sampling phases, the output sampled once
per UI is aligned to the transmitted symbols by cross-correlation, and the eye height is
min(samples of +1 symbols) - max(samples of -1 symbols) over the second half of the record;
the best phase is reported (negative when the eye is closed); ``ami_eye.eye_height``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ami_eye import eye_height  # this folder (sys.path[0] when run as a script)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ETS_TOOLKIT", "null")


def parse_args(argv=None):
    """Command line; SI units (bit rate in bit/s)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rx-ibs", type=Path, help="IBIS file whose [Algorithmic Model] names the Rx model")
    p.add_argument("--rx-dll", type=Path, help="Rx AMI shared library (overrides the IBIS file's)")
    p.add_argument("--rx-ami", type=Path, help="Rx .ami file (overrides the IBIS file's)")
    p.add_argument("--touchstone", type=Path, required=True, help="channel .s4p (through 1->2, 3->4)")
    p.add_argument("--bit-rate", type=float, default=10e9, help="bit/s (default 10e9)")
    p.add_argument("--nbits", type=int, default=20000, help="bits simulated (PyBERT: 1000 to 1e7)")
    p.add_argument("--nspui", type=int, default=32, help="samples per UI (PyBERT: 2 to 256)")
    p.add_argument("--f-max", type=float, default=40e9, help="PyBERT's channel f_max, Hz (default 40e9)")
    p.add_argument("--repeat", type=int, default=1, help="runs; the fastest is reported (default 1)")
    p.add_argument("--f-step", type=float, default=10e6, help="PyBERT's channel f_step, Hz (default 10e6)")
    args = p.parse_args(argv)
    if args.rx_ibs is None and (args.rx_dll is None or args.rx_ami is None):
        p.error("give --rx-ibs, or both --rx-dll and --rx-ami")
    for name in ("rx_ibs", "rx_dll", "rx_ami", "touchstone"):
        path = getattr(args, name)
        if path is not None and not path.is_file():
            p.error(f"--{name.replace('_', '-')}: no such file: {path}")
    return args


def configure(b, args):
    """Set the PyBERT instance ``b`` up as the module docstring says."""
    b.mod_type = "NRZ"
    b.bit_rate = args.bit_rate / 1e9            # PyBERT: Gb/s
    b.nspui = args.nspui
    b.nbits = args.nbits
    b.eye_bits = args.nbits // 2
    b.rn = 0.0
    b.pn_mag = 0.0
    for tap in b.tx_taps:
        tap.enabled = False
    b.ctle_enable = False
    b.inter_sel = "single"
    b.ch_file = str(args.touchstone.resolve())
    b.f_max = args.f_max / 1e9                  # PyBERT: GHz
    b.f_step = args.f_step / 1e6                # PyBERT: MHz
    if args.rx_ibs is not None:
        b.rx_ibis_file = str(args.rx_ibs.resolve())
        b.rx_sel = "ibis"
    if args.rx_ami is not None:
        b.rx_ami_file = str(args.rx_ami.resolve())
    if args.rx_dll is not None:
        b.rx_dll_file = str(args.rx_dll.resolve())
    if not (b.rx_ami_valid and b.rx_dll_valid):
        raise SystemExit(f"PyBERT did not accept the Rx model: ami {b.rx_ami_file!r} valid={b.rx_ami_valid}, "
                         f"dll {b.rx_dll_file!r} valid={b.rx_dll_valid}")
    if not b.rx_has_getwave:
        raise SystemExit(f"{b.rx_ami_file}: GetWave_Exists is not True; GetWave mode impossible")
    b.rx_use_ami = True                          # also disables PyBERT's DFE and Rx FFE taps
    b.rx_use_getwave = True
    b.rx_use_clocks = False
    for tap in b.dfe_tap_tuners:
        tap.enabled = False


class _Timed:
    """Wrap a callable, adding its wall time to ``self.seconds``."""

    def __init__(self, fn):
        self.fn, self.seconds, self.calls = fn, 0.0, 0

    def __call__(self, *a, **k):
        t0 = time.perf_counter()
        try:
            return self.fn(*a, **k)
        finally:
            self.seconds += time.perf_counter() - t0
            self.calls += 1


def main(argv=None):
    """Run PyBERT ``--repeat`` times and print the JSON result of the fastest run."""
    args = parse_args(argv)
    t_import = time.perf_counter()
    from pybert import __version__ as pybert_version
    from pybert.pybert import PyBERT
    import pybert.models.bert as bert
    import pyibisami
    t_import = time.perf_counter() - t_import

    from pyibisami.ami.model import AMIModel

    b = PyBERT(run_simulation=False, gui=False)
    configure(b, args)
    _ = (b.t, b.bits, b.symbols, b.ffe)          # PyBERT's cached vectors, outside the timing
    run_ami = bert.run_ami_model = _Timed(bert.run_ami_model)
    calc_chnl = _Timed(b.calc_chnl_h)
    b.calc_chnl_h = calc_chnl
    getwave = _Timed(AMIModel.getWave)           # probing calls first, the whole waveform last
    getwave_last = []

    def timed_getwave(self, *a, **k):
        t0 = time.perf_counter()
        out = getwave(self, *a, **k)
        getwave_last.append(time.perf_counter() - t0)
        return out

    AMIModel.getWave = timed_getwave
    runs = []
    for _ in range(args.repeat):
        before = (calc_chnl.seconds, run_ami.seconds, run_ami.calls)
        t0 = time.perf_counter()
        bert.my_run_simulation(b, initial_run=True, update_plots=False)
        total = time.perf_counter() - t0
        if run_ami.calls != before[2] + 1:
            raise SystemExit(f"PyBERT did not run the Rx AMI model once (status: {b.status!r})")
        channel = calc_chnl.seconds - before[0]
        runs.append({"seconds": total - channel, "seconds_total": total, "seconds_channel": channel,
                     "seconds_ami": run_ami.seconds - before[1], "seconds_getwave": getwave_last[-1]})
    best = min(runs, key=lambda r: r["seconds"])
    seconds = best["seconds"]
    height, phase, delay = eye_height(b.ctle_out, b.symbols, args.nspui, args.nbits // 2)
    out = {
        "tool": "PyBERT",
        "pybert_version": pybert_version,
        "pyibisami_version": getattr(pyibisami, "__version__", "?"),
        "python": sys.version.split()[0],
        "rx_dll": b.rx_dll_file,
        "rx_ami": b.rx_ami_file,
        "rx_ibs": str(args.rx_ibs) if args.rx_ibs else None,
        "touchstone": str(args.touchstone),
        "bit_rate": args.bit_rate,
        "nspui": args.nspui,
        "nbits": args.nbits,
        "mode": "NRZ PRBS-7, Tx FFE off, no noise, Rx AMI GetWave (40-bit blocks), PyBERT DFE 0 taps + CDR",
        "repeat": args.repeat,
        **best,
        "seconds_import": t_import,
        "ui_per_s": args.nbits / seconds,
        "ui_per_s_ami_only": args.nbits / best["seconds_ami"],
        "ui_per_s_getwave_only": args.nbits / best["seconds_getwave"],
        "seconds_all_runs": [r["seconds"] for r in runs],
        "pybert_total_perf_samples_per_s": b.total_perf,
        "pybert_stage_seconds": {   # from PyBERT's own *_perf (samples/s) of the last run
            stage: args.nbits * args.nspui / getattr(b, f"{stage}_perf")
            for stage in ("channel", "tx", "ctle", "ffe", "dfe", "jitter")
            if getattr(b, f"{stage}_perf", 0) > 0},
        "status": b.status,
        "bit_errors_pybert_dfe": int(b.n_errs_dfe),
        "channel_impulse_samples": int(b.len_h),
        "eye_height_V": height,
        "eye_phase_samples": phase,
        "eye_delay_ui": delay,
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
