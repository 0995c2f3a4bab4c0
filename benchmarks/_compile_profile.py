"""Run ``linkmodel demo`` in this process and record every Numba compile (a helper of
``bench_first_run.py``, run in a subprocess with the checkout to measure first on
``sys.path`` and a private ``NUMBA_CACHE_DIR``).

    python benchmarks/_compile_profile.py OUT.json demo --no-warmup --no-plots

Writes ``{"cpu_s": ..., "kernels": {"module:name": {"compiles": n, "self_cpu_s": s,
"incl_cpu_s": s, "signatures": [...]}}}``: each dispatcher's compiles (one per signature
compiled in this process, from the ``numba:compile`` event), the CPU seconds spent in them
excluding the compiles of the kernels they call (``self``) and including them (``incl``),
and every signature the dispatcher holds at the end (compiled or loaded from the cache).
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    from numba.core import event as ev
    from numba.core.registry import CPUDispatcher

    out, demo_args = argv[0], argv[1:]
    stack: list[list] = []  # [key, start, child cpu]
    rec: dict = {}
    seen: dict = {}

    class Listener(ev.Listener):
        def on_start(self, event):
            d = event.data["dispatcher"]
            key = f"{d.py_func.__module__}:{d.py_func.__qualname__}"
            seen[key] = d
            stack.append([key, time.process_time(), 0.0])

        def on_end(self, event):
            key, t0, child = stack.pop()
            dt = time.process_time() - t0
            r = rec.setdefault(key, {"compiles": 0, "self_cpu_s": 0.0, "incl_cpu_s": 0.0})
            r["compiles"] += 1
            r["self_cpu_s"] += dt - child
            if not stack or stack[-1][0] != key:  # a recursive compile is counted once
                r["incl_cpu_s"] += dt
            if stack:
                stack[-1][2] += dt

    t = time.process_time()
    from phy.cli import main as cli_main

    with ev.install_listener("numba:compile", Listener()):
        rc = cli_main(demo_args)
    cpu = time.process_time() - t
    import gc

    for o in gc.get_objects():  # every project dispatcher, also those only loaded
        if isinstance(o, CPUDispatcher) and o.py_func.__module__.split(".")[0] in ("phy", "fec", "channels"):
            seen.setdefault(f"{o.py_func.__module__}:{o.py_func.__qualname__}", o)
    kernels = {}
    for key, d in sorted(seen.items()):
        r = rec.get(key, {"compiles": 0, "self_cpu_s": 0.0, "incl_cpu_s": 0.0})
        r["signatures"] = [str(s) for s in d.signatures]
        timers = [o.metadata.get("timers", {}) for o in d.overloads.values() if o.metadata]
        r["llvm_s"] = sum(t.get("llvm_lock", 0.0) for t in timers)  # wall, of the compiles in this process
        r["compiler_s"] = sum(t.get("compiler_lock", 0.0) for t in timers)
        kernels[key] = r
    with open(out, "w") as f:
        json.dump({"cpu_s": cpu, "rc": rc, "kernels": kernels}, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
