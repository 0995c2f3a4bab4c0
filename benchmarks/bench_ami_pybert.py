"""Throughput of an AMI Rx model in GetWave mode: linkmodel against PyBERT, same model and channel.

PyBERT runs in its own venv (default ``/work/venv-pybert``, see ``bench_ami_pybert.md``)
through ``ami_pybert_side.py`` in a subprocess; our side runs in this process (``ours``).
Both get the same Rx AMI model (.so + .ami, or an .ibs naming them), the same Touchstone
channel, bit rate, number of bits and samples per UI; both print seconds and UI/s, and the
table gives the ratio ours / PyBERT (whole simulation, channel load excluded on both sides);
the PyBERT "GetWave UI/s" column is its AMI_GetWave pass over the waveform alone (through
pyibis-ami's ctypes wrapper), for the model-call cost by itself. Without the PyBERT venv the
PyBERT column is skipped with the reason printed.

    python benchmarks/bench_ami_pybert.py --rx-ibs /tmp/ibisami/example/example_rx.ibs \\
        --touchstone ../shared/channels/ieee802.3ck/DPO_4in_Meg7_THRU.s4p --nbits 20000 100000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYBERT_PYTHON = Path("/work/venv-pybert/bin/python")
DEFAULT_CHANNEL = HERE.parent.parent / "shared" / "channels" / "ieee802.3ck" / "DPO_4in_Meg7_THRU.s4p"


# ---------------------------------------------------------------------------------------------
# OUR SIDE: left for the lead (phy.ami + the waveform simulator).
# ---------------------------------------------------------------------------------------------
def ours(rx_library, rx_ami, touchstone, bit_rate, nbits, nspui):
    """linkmodel's simulation with the Rx AMI model in GetWave mode (``phy.simulate``, which
    runs it block by block in its own process, :mod:`phy.engines.timesim.getwave`).

    Same set-up as ``ami_pybert_side.py``: NRZ PRBS-7 at +-1 V (PyBERT's ``vod``), Tx FFE
    off, no noise or jitter, the channel's through path, the Rx AMI model in GetWave mode, no
    other equalisation. ``seconds`` is the simulation (AMI_Init in the model's new process,
    every block through AMI_GetWave, the slicer, the counts and the eye), the channel load
    excluded as on PyBERT's side; ``eye_height_V`` is the inner height of our eye at the
    sampling instant (the model's clock, or the tool's at the correlation peak).

    Returns
    -------
    dict
        ``seconds``, ``ui_per_s``, ``eye_height_V``, ``clock``, ``symbol_errors``.
    """
    import time

    import channels
    import phy
    from phy.ami import AmiModel

    ch = channels.load(str(touchstone))
    ch.pulse_response(bit_rate, nspui)  # the channel's load and its grid checks, outside the timing
    tx = phy.Transmitter("nrz", swing_v=1.0, pattern="prbs7")
    rx = phy.Receiver(ami=AmiModel.from_files(rx_library, rx_ami, getwave=True))
    t = time.perf_counter()
    r = phy.simulate(ch, int(nbits), baud_hz=bit_rate, tx=tx, rx=rx, samples_per_ui=int(nspui), eye=True,
                     eye_bins=4096, seed=1)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "ui_per_s": nbits / seconds, "eye_height_V": float(r.eye.heights_v()[0]),
            "clock": r.config["clock"], "symbol_errors": r.symbol_errors}


# ---------------------------------------------------------------------------------------------
# PyBERT's side: a subprocess in PyBERT's venv.
# ---------------------------------------------------------------------------------------------
def pybert(python, rx_ibs, rx_library, rx_ami, touchstone, bit_rate, nbits, nspui, timeout_s=900.0, repeat=1):
    """Run ``ami_pybert_side.py`` with ``python``; its JSON as a dict, or ``{"skipped": reason}``."""
    python = Path(python)
    if not python.exists():
        return {"skipped": f"no PyBERT venv at {python} (see benchmarks/bench_ami_pybert.md)"}
    cmd = [str(python), str(HERE / "ami_pybert_side.py"), "--touchstone", str(touchstone),
           "--bit-rate", repr(float(bit_rate)), "--nbits", str(nbits), "--nspui", str(nspui),
           "--repeat", str(repeat)]
    if rx_ibs:
        cmd += ["--rx-ibs", str(rx_ibs)]
    if rx_library:
        cmd += ["--rx-dll", str(rx_library)]
    if rx_ami:
        cmd += ["--rx-ami", str(rx_ami)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return {"skipped": f"PyBERT took more than {timeout_s:.0f} s for {nbits} bits"}
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return {"skipped": f"ami_pybert_side.py failed (exit {out.returncode}): {tail}"}
    return json.loads(out.stdout)


def _resolve_rx(args):
    """The (library, ami, reason) for ``ours``: given explicitly, else from the .ibs file.

    ``reason`` is None, or why our side cannot run (then library and ami are None).
    """
    if args.rx_dll and args.rx_ami:
        return args.rx_dll, args.rx_ami, None
    try:
        from phy.ami.ibs import read_ibs  # part A of issue 36
    except ImportError as err:
        return None, None, f"reading {args.rx_ibs} needs phy.ami.ibs ({err}); give --rx-dll and --rx-ami"
    exe = read_ibs(args.rx_ibs).executable()
    return args.rx_dll or exe.library, args.rx_ami or exe.ami, None


def _row(nbits, mine, theirs):
    """One line of the side-by-side table."""
    def cell(r):
        if "skipped" in r:
            return f"{'-':>10} {'-':>12} {'-':>8}"
        eye = r.get("eye_height_V")
        return f"{r['seconds']:10.3f} {r['ui_per_s']:12.4g} {eye if eye is not None else float('nan'):8.4f}"
    ratio = "-"
    if "skipped" not in mine and "skipped" not in theirs:
        ratio = f"{mine['ui_per_s'] / theirs['ui_per_s']:.3g}x"
    gw = theirs.get("ui_per_s_getwave_only")
    gw = f"{gw:12.4g}" if gw else f"{'-':>12}"
    return f"{nbits:>9} | {cell(mine)} | {cell(theirs)} {gw} | {ratio:>8}"


def main(argv=None):
    """Run both sides for each ``--nbits`` and print the table (and ``--json``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rx-ibs", type=Path)
    p.add_argument("--rx-dll", type=Path)
    p.add_argument("--rx-ami", type=Path)
    p.add_argument("--touchstone", type=Path, default=DEFAULT_CHANNEL)
    p.add_argument("--bit-rate", type=float, default=10e9, help="bit/s")
    p.add_argument("--nbits", type=int, nargs="+", default=[20000, 100000])
    p.add_argument("--nspui", type=int, default=32)
    p.add_argument("--pybert-python", type=Path, default=PYBERT_PYTHON)
    p.add_argument("--repeat", type=int, default=1, help="PyBERT runs per size, fastest kept")
    p.add_argument("--json", action="store_true", help="also print the raw results as JSON")
    args = p.parse_args(argv)
    if args.rx_ibs is None and (args.rx_dll is None or args.rx_ami is None):
        p.error("give --rx-ibs, or both --rx-dll and --rx-ami")
    if not args.touchstone.is_file():
        print(f"skipped: no channel file {args.touchstone} (../shared/channels absent?)")
        return 0
    lib, ami, why_not = _resolve_rx(args)
    print(f"Rx AMI model: {lib or args.rx_ibs} ({ami or 'from the .ibs'}); channel {args.touchstone.name}; "
          f"{args.bit_rate / 1e9:g} Gb/s NRZ, {args.nspui} samples/UI")
    print(f"{'bits':>9} | {'ours s':>10} {'ours UI/s':>12} {'eye V':>8} | "
          f"{'PyBERT s':>10} {'PyBERT UI/s':>12} {'eye V':>8} {'GetWave UI/s':>12} | {'ratio':>8}")
    results = []
    for nbits in args.nbits:
        mine = {"skipped": why_not}
        if why_not is None:
            mine = ours(lib, ami, args.touchstone, args.bit_rate, nbits, args.nspui)
        theirs = pybert(args.pybert_python, args.rx_ibs, args.rx_dll, args.rx_ami, args.touchstone,
                        args.bit_rate, nbits, args.nspui, repeat=args.repeat)
        print(_row(nbits, mine, theirs))
        for side, r in (("ours", mine), ("PyBERT", theirs)):
            if "skipped" in r:
                print(f"{'':>9}   {side} skipped: {r['skipped']}")
        results.append({"nbits": nbits, "ours": mine, "pybert": theirs})
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
