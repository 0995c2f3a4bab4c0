"""Behaviour unchanged: the same figures from two source trees, side by side in one run.

``python benchmarks/compare_trees.py BEFORE_TREE [AFTER_TREE]`` runs each probe below in a
fresh interpreter on each tree (``PYTHONPATH`` set to it; AFTER_TREE defaults to this
repository) and compares what it prints, value by value: equal means bit for bit (floats by
their ``repr``), nothing rounded. What a refactor must not move:

- links: ``linkmodel link --json`` on ten link files (copper by COM and by the preset,
  stripline, a library channel, NRZ with KR4, precoding and retry, the three optical
  classes), every figure of the report;
- a time-domain simulation (the README's link with more noise: PAM4, CTLE, 8-tap DFE, RJ and SJ, a
  Mueller-Muller CDR; 2e5 UI) and an NRZ one with a fixed phase: error counts, SER, the eye's heights, the
  CDR's phase;
- the statistical eye and COM of the README's channel;
- a sweep (inline, 8 points) exported as rows, times and process ids left out;
- ``linkmodel rack --json`` (NVL72 with the preset and with a domain search over 72 and
  144), and decode, collectives and the domain trade from ``phy.topology``.

Run times (``seconds`` and the like) are left out, a column renamed on purpose
(:data:`RENAMED`) is compared under its new name, and a key added on purpose beside the
old one (:data:`ADDED`) is not a difference; nothing else is changed. The old tree takes the
file key ``equalisation`` as a spelling, so both trees read the same files.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

LINKS = {
    "twinax_1m_preset": '[channel]\nlength_m = 1.0\n[link]\nequalisation = "preset"\nlanes = 2\n',
    "twinax_2m_com": '[channel]\nlength_m = 2.0\n[link]\nequalisation = "com"\n',
    "twinax_hl_xtalk": '[channel]\nlength_m = 1.5\nhost = "flyover"\ncrosstalk = true\n[link]\nequalisation = "preset"\n',
    "stripline": '[channel]\nkind = "stripline"\nlength_m = 0.3\n[link]\nequalisation = "preset"\nfec = "LL272"\n',
    "library": '[channel]\nkind = "library"\nname = "chip_to_module"\n[link]\nequalisation = "preset"\n',
    "nrz_kr4": ('[channel]\nlength_m = 2.0\n[link]\nequalisation = "preset"\nmodulation = "nrz"\n'
                'lane_rate_gbps = 25.78125\nfec = "KR4"\n'),
    "precode_retry": ('[channel]\nlength_m = 1.0\n[link]\nequalisation = "preset"\nprecoding = true\nretry = true\n'
                      'switch_ports = 2\ninterleave = 2\n[serdes]\nrx_impairments = "adc_dsp_224g"\n'),
    "optics_dsp": '[channel]\nkind = "none"\n[optics]\nkind = "dsp"\nlength_m = 500\n',
    "optics_lpo": '[channel]\nkind = "none"\n[optics]\nkind = "lpo"\nlength_m = 50\n',
    "optics_cpo": '[channel]\nkind = "none"\n[optics]\nkind = "cpo"\nlength_m = 30\nrin_db_per_hz = -140\n',
}

SWEEP = '''[sweep]
name = "cmp"
executor = "inline"
[channel]
awg = 26
[link]
equalisation = "preset"
[grid]
"channel.length_m" = [0.5, 1.5]
"link.fec" = ["KP4", "KR4", "LL272", "none"]
'''

RACKS = {
    "nvl72_preset": '[link]\nequalisation = "preset"\n',
    "domain_sizes": '[link]\nequalisation = "preset"\n[domain]\nsearch = "sizes"\nsizes = [72, 144]\n',
}

PHY_PROBE = r'''
import json, numpy as np, channels, phy
baud = 106.25e9
ch = channels.library.get("chip_to_module")
tx = phy.Transmitter("pam4", swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12,
                     ffe=phy.TxFfe.ieee(pre=(-0.1,)), pattern="prbs31")
rx = phy.Receiver(bandwidth_hz=0.75 * baud, ctle=phy.Ctle.ieee_802_3ck(baud, g_dc_db=-10),
                  ffe=phy.RxFfe(0, 0), dfe=phy.Dfe(8, limits=1.0))
noise = phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18)
jitter = phy.Jitter(rj_rms_s=0.01 / baud, sj_amplitude_s=0.05 / baud, sj_frequency_hz=baud / 1000)
out = {}
noisy = phy.Noise(tx_snr_db=27, rx_noise_psd_v2_per_hz=5e-17)
r = phy.simulate(ch, 200_000, baud_hz=baud, tx=tx, rx=rx, noise=noisy, jitter=jitter,
                 cdr=phy.Cdr("mm", kp_ui=2**-6, ki_ui=2**-13), eye=True, seed=1)
out["sim_pam4"] = {"ser": r.ser.value, "ber": r.ber.value, "locked": r.cdr_locked,
                   "phase_rms_s": r.cdr_phase_rms_s, "bursts": np.asarray(r.burst_span_counts).tolist(),
                   "heights_v": np.asarray(r.eye.heights_v(1e-3)).tolist(), "width_s": r.eye.width_s(1e-3)}
txn = phy.Transmitter("nrz", swing_v=0.4, ffe=phy.TxFfe.ieee(pre=(-0.05,)))
rxn = phy.Receiver(bandwidth_hz=0.75 * 53.125e9, ffe=phy.RxFfe(3, 6), dfe=phy.Dfe(2))
r2 = phy.simulate(ch, 100_000, baud_hz=53.125e9, tx=txn, rx=rxn, noise=phy.Noise(tx_snr_db=20, rx_noise_psd_v2_per_hz=2e-16),
                  seed=3)
out["sim_nrz"] = {"ser": r2.ser.value, "ber": r2.ber.value}
se = phy.statistical_eye(ch, baud_hz=baud, tx=tx, rx=rx, noise=noise, jitter=jitter)
out["stateye"] = {"ser": float(se.ser()), "heights_v": np.asarray(se.heights_v(1e-6)).tolist()}
m = phy.channel_margin(ch, phy.ComParams.ieee_802_3dj_kr())
out["com"] = {"com_db": m.com_db, "breakdown": {k: float(v) for k, v in m.breakdown_db().items()}}
print(json.dumps(out, default=float))
'''

TOPO_PROBE = r'''
import json, phy
from phy import topology as tp
out = {}
for name in ("nvl72", "hgx8"):
    t = getattr(tp, name)()
    r = tp.rollup(t) if hasattr(tp, "rollup") else None
    out[name] = r.to_dict() if r is not None and hasattr(r, "to_dict") else repr(r)
print(json.dumps(out, default=repr))
'''

#: Names a tree changed on purpose: the old name -> the new one (the sweep's column of the
#: equalisation key, respelt ``link.equalisation`` in issue 34); compared under the new.
RENAMED = {"link.equalization": "link.equalisation"}
#: Keys a tree added on purpose beside an old one (``TxFfe``'s ``normalise`` beside the
#: deprecated ``normalize``, and the ``deprecated_keys`` map that says so): listed apart,
#: not counted as a changed figure (the old key is still compared).
ADDED = {"normalise", "deprecated_keys"}
TIMES = {"seconds", "worker_pid", "points_per_second", "elapsed_s", "wall_s", "started", "finished"}


def _run(tree: Path, args: list, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=3600)
    return out.stdout if out.returncode in (0, 1) else f"EXIT {out.returncode}: {out.stderr.strip()[-400:]}"


def _cli(tree: Path, cwd: Path, *argv) -> str:
    return _run(tree, ["-c", "import sys; from phy import cli; sys.exit(cli.main(sys.argv[1:]))", *argv], cwd)


def probe(tree: Path) -> dict:
    """Every figure the probes print on ``tree``, as JSON-able values."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for name, text in LINKS.items():
            (d / f"{name}.toml").write_text(text)
            out[f"link:{name}"] = _json(_cli(tree, d, "link", "--json", f"{name}.toml"))
        for name, text in RACKS.items():
            (d / f"{name}.toml").write_text(text)
            out[f"rack:{name}"] = _json(_cli(tree, d, "rack", "--json", f"{name}.toml"))
        (d / "cmp.toml").write_text(SWEEP)
        _cli(tree, d, "sweep", "--no-progress", "--export", "cmp.csv", "cmp.toml")
        out["sweep"] = (d / "cmp.csv").read_text() if (d / "cmp.csv").exists() else "no export"
        out["phy"] = _json(_run(tree, ["-c", PHY_PROBE], d))
        out["topology"] = _json(_run(tree, ["-c", TOPO_PROBE], d))
    return out


def _json(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _csv_rows(text: str) -> list:
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(text)))
    return [{RENAMED.get(k, k): v for k, v in r.items() if k not in TIMES} for r in rows]


def diffs(a, b, path="") -> list:
    """Where two probe results differ (floats compared exactly, NaN equal to NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k in TIMES:
                continue
            if k in b and k not in a and k in ADDED:
                continue
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k in b else 'before'}")
            else:
                out += diffs(a[k], b[k], f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diffs(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} vs {b!r}"]


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(__doc__)
        return 2
    before, after = Path(args[0]).resolve(), Path(args[1]).resolve() if len(args) > 1 else HERE
    a, b = probe(before), probe(after)
    a["sweep"], b["sweep"] = _csv_rows(a["sweep"]), _csv_rows(b["sweep"])
    print(f"{'probe':<26} {'values':>7} {'differ':>7}")
    total = bad = 0
    for k in a:
        n = _count(a[k])
        d = diffs(a[k], b.get(k))
        total, bad = total + n, bad + len(d)
        print(f"{k:<26} {n:>7} {len(d):>7}")
        for line in d[:8]:
            print(f"    {line}")
    print(f"{'all':<26} {total:>7} {bad:>7}   ({before} -> {after})")
    return 0 if bad == 0 else 1


def _count(v) -> int:
    if isinstance(v, dict):
        return sum(_count(x) for k, x in v.items() if k not in TIMES)
    if isinstance(v, list):
        return sum(_count(x) for x in v)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
