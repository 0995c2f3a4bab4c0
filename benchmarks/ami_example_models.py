"""The public example AMI models, built or extracted into a temporary folder for the benchmarks.

- capn-freako/ibisami's example Tx and Rx: built with its own makefiles (make, g++, Boost
  headers: Debian ``apt-get install libboost-dev``) from a git repository of ibisami (a bare
  mirror or a clone; ``--ibisami``), 64-bit only.
- PyAMI's prebuilt ``tests/examples/example_tx_x86_amd64.so`` (capn-freako/PyAMI), extracted
  from a git repository of PyAMI (``--pyami``); it has no ``.ami`` beside it, so ibisami's
  ``example_tx.ami`` (the same parameters) is copied next to it.

Nothing here is committed: the files land in ``--out`` (default a folder under /tmp).
``python benchmarks/ami_example_models.py`` builds them and checks each with plain ctypes
(AMI_Init with the default parameters must return 1, then one GetWave block and AMI_Close).
"""

from __future__ import annotations

import argparse
import ctypes as C
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MIRRORS = Path("/work/.mirror")
IBISAMI_GIT = MIRRORS / "capn-freako+ibisami" / "repo"
PYAMI_GIT = MIRRORS / "capn-freako+PyAMI" / "repo"
DEFAULT_OUT = Path(tempfile.gettempdir()) / "linkmodel-ami-examples"

#: AMI_parameters_in of each model with its .ami defaults (what pyibis-ami's parser gives).
DEFAULT_PARAMS = {
    "example_rx": "(example_rx (ctle_mode 0) (ctle_freq 5000000000.0) (ctle_mag 0.0) "
                  "(ctle_bandwidth 12000000000.0) (ctle_dcgain 0.0) (dfe_mode 0) (dfe_ntaps 5) "
                  "(dfe_tap1 0.0) (dfe_tap2 0.0) (dfe_tap3 0.0) (dfe_tap4 0.0) (dfe_tap5 0.0) "
                  "(dfe_vout 1.0) (dfe_gain 0.1) (debug (dbg_enable False) "
                  "(dump_dfe_adaptation False) (dump_adaptation_input False)))",
    "example_tx": "(example_tx (tx_tap_units 27) (tx_tap_np1 0) (tx_tap_nm1 0) (tx_tap_nm2 0))",
}


class NotBuilt(RuntimeError):
    """A model could not be built or extracted here; the message says why (one line)."""


def _run(cmd, cwd=None):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        tail = (out.stderr.strip() or out.stdout.strip() or "(no output)").splitlines()[-1]
        raise NotBuilt(f"{' '.join(map(str, cmd[:4]))} failed (exit {out.returncode}): {tail}")
    return out.stdout


def build_ibisami(out: Path = DEFAULT_OUT, git: Path = IBISAMI_GIT) -> dict[str, dict[str, Path]]:
    """Build ibisami's example Tx and Rx (x86_64); ``{name: {"so", "ami", "ibs"}}``.

    Raises
    ------
    NotBuilt
        When the repository, make, g++ or the Boost headers are missing, or the build fails.
    """
    for tool in ("git", "make", "g++"):
        if shutil.which(tool) is None:
            raise NotBuilt(f"ibisami examples: no '{tool}' on PATH")
    if not Path(git).exists():
        raise NotBuilt(f"ibisami examples: no repository at {git}")
    src = Path(out) / "ibisami"
    if not (src / "example" / "example_rx_x86_amd64.so").exists():
        if src.exists():
            shutil.rmtree(src)
        _run(["git", "clone", "-q", str(git), str(src)])
        root = f"IBISAMI_ROOT={src}"
        _run(["make", "-C", str(src), "x64", root])
        _run(["make", "-C", str(src / "example"), "tx64", "rx64", root])
    ex = src / "example"
    return {name: {"so": ex / f"{name}_x86_amd64.so", "ami": ex / f"{name}.ami", "ibs": ex / f"{name}.ibs"}
            for name in ("example_tx", "example_rx")}


def extract_pyami_tx(out: Path = DEFAULT_OUT, git: Path = PYAMI_GIT,
                     ami: Path | None = None) -> dict[str, Path]:
    """PyAMI's prebuilt example Tx; ``{"so", "ami"}`` (the .ami: ibisami's, given as ``ami``)."""
    if not Path(git).exists():
        raise NotBuilt(f"PyAMI example Tx: no repository at {git}")
    dest = Path(out) / "pyami"
    dest.mkdir(parents=True, exist_ok=True)
    so = dest / "example_tx_x86_amd64.so"
    blob = subprocess.run(["git", "--git-dir", str(git), "show", "HEAD:tests/examples/example_tx_x86_amd64.so"],
                          capture_output=True, check=False)
    if blob.returncode != 0:
        raise NotBuilt(f"PyAMI example Tx: {git} has no tests/examples/example_tx_x86_amd64.so")
    so.write_bytes(blob.stdout)
    result = {"so": so}
    if ami is not None:
        result["ami"] = Path(shutil.copy(ami, dest / "example_tx.ami"))
    return result


def ctypes_check(so: Path, params: str, ui: float = 100e-12, nspui: int = 32) -> dict:
    """Load ``so`` in this process with plain ctypes and call AMI_Init, one AMI_GetWave, AMI_Close.

    The impulse handed to AMI_Init is one sample of area 1 (V/s: 1/dt) at sample 10 of 128 UI.
    """
    lib = C.CDLL(str(so))
    init = lib.AMI_Init
    init.restype = C.c_long
    init.argtypes = [C.POINTER(C.c_double), C.c_long, C.c_long, C.c_double, C.c_double, C.c_char_p,
                     C.POINTER(C.c_char_p), C.POINTER(C.c_void_p), C.POINTER(C.c_char_p)]
    dt, row = ui / nspui, 128 * nspui
    imp = (C.c_double * row)()
    imp[10] = 1.0 / dt
    pout, mem, msg = C.c_char_p(), C.c_void_p(), C.c_char_p()
    res = {"init": init(imp, row, 0, dt, ui, params.encode(), C.byref(pout), C.byref(mem), C.byref(msg)),
           "params_out": (pout.value or b"").decode(errors="replace"),
           "message": (msg.value or b"").decode(errors="replace"),
           "impulse_area": sum(imp) * dt}
    if hasattr(lib, "AMI_GetWave"):
        gw = lib.AMI_GetWave
        gw.restype = C.c_long
        gw.argtypes = [C.POINTER(C.c_double), C.c_long, C.POINTER(C.c_double), C.POINTER(C.c_char_p), C.c_void_p]
        n = 64 * nspui
        wave = (C.c_double * n)(*[0.5 if (i // nspui) % 3 else -0.5 for i in range(n)])
        clocks = (C.c_double * 72)(*([-1.0] * 72))
        res["getwave"] = gw(wave, n, clocks, C.byref(C.c_char_p()), mem)
        res["getwave_finite"] = all(math.isfinite(v) for v in wave)
    lib.AMI_Close.restype = C.c_long
    lib.AMI_Close.argtypes = [C.c_void_p]
    res["close"] = lib.AMI_Close(mem)
    return res


def main(argv=None):
    """Build/extract the example models and check each with ctypes."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--ibisami", type=Path, default=IBISAMI_GIT, help="git repository of capn-freako/ibisami")
    p.add_argument("--pyami", type=Path, default=PYAMI_GIT, help="git repository of capn-freako/PyAMI")
    args = p.parse_args(argv)
    models = {}
    try:
        for name, files in build_ibisami(args.out, args.ibisami).items():
            models[f"ibisami {name}"] = (files, DEFAULT_PARAMS[name])
    except NotBuilt as err:
        print(f"skipped: {err}")
    try:
        tx_ami = models.get("ibisami example_tx", ({},))[0].get("ami")
        models["PyAMI example_tx (prebuilt)"] = (extract_pyami_tx(args.out, args.pyami, tx_ami),
                                                 DEFAULT_PARAMS["example_tx"])
    except NotBuilt as err:
        print(f"skipped: {err}")
    ok = True
    for label, (files, params) in models.items():
        r = ctypes_check(files["so"], params)
        ok &= r["init"] == 1
        print(f"{label}: {files['so']}\n  AMI_Init {r['init']}, impulse area {r['impulse_area']:.4f}, "
              f"GetWave {r.get('getwave', '-')} (finite {r.get('getwave_finite', '-')}), AMI_Close {r['close']}"
              f"\n  params_out {r['params_out'].strip()!r}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
