"""phy.ami.runner.AmiProcess: an IBIS-AMI model's library in a host process of its own.

The models are the C files of tests/ami_models, compiled here (skipped without ``cc``): a
pass-through model (bit-exact round trips, blocks in order, absolute clock times) and
hostile ones that crash, hang, return garbage or are no AMI model at all. Every failure is
one line naming the model, the library file and the call; this process survives each one,
and the model's process is gone after it.
"""

from __future__ import annotations

import gc
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ami_models.build import build, compiler_or_skip
from phy.ami.errors import AmiError
from phy.ami.runner import AmiProcess, _host_argv

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")

DT = 1e-12
UI = 8e-12  # 8 samples per UI
LIMIT_S = 1.5  # the time limit of the hostile calls (s): the suite stays fast


@pytest.fixture(scope="module")
def lib():
    """name -> the compiled library of tests/ami_models/<name>.c."""
    compiler_or_skip()
    names = ("passthrough", "segv", "hang", "garbage", "noinit", "initonly")
    return {name: build(name) for name in names}


def _gone(pid: int, wait_s: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie) within ``wait_s`` seconds."""
    end = time.monotonic() + wait_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.02)


def _one_line(exc: pytest.ExceptionInfo, model: str, library: str, call: str) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert msg.startswith(f"AMI model {model!r} ({library}): "), msg
    assert call in msg, msg
    return msg


def _impulse(rows: int = 1, cols: int = 64) -> np.ndarray:
    return np.random.default_rng(1).normal(size=(rows, cols)) / DT


def _fails(lib, name: str, params: str, blocks: int = 1) -> tuple[AmiProcess, int]:
    """A hostile model started and initialised with ``params``, then fed ``blocks`` blocks;
    returns it and its host's pid once a call has failed (the failing call raises)."""
    p = AmiProcess(lib[name], name, timeout_s=LIMIT_S)
    pid = p.pid
    p.init(_impulse(), DT, UI, params)
    for _ in range(blocks):
        p.getwave(np.ones(64))
    return p, pid


# ----------------------------------------------------------------------------- pass-through
def test_passthrough_init_gives_back_the_impulse_bit_for_bit_and_its_strings(lib):
    imp = _impulse(3, 257)
    imp[0, :4] = [0.0, -0.0, 5e-324, -1.7e308]  # a subnormal, a negative zero, a huge value
    params = '(pt (s "h\u00e9 \u03a9") (a 1))'
    with AmiProcess(lib["passthrough"], "pt", timeout_s=10) as p:
        out = p.init(imp, DT, UI, params)
    assert out.impulse.shape == imp.shape and out.impulse.dtype == np.float64
    assert np.array_equal(out.impulse.view(np.uint64), imp.view(np.uint64))
    assert out.params_out == params and out.message == "passthrough: impulse left as it is"
    assert out.impulse is not imp


def test_passthrough_blocks_come_back_in_order_bit_exact_with_absolute_clock_times(lib):
    rng = np.random.default_rng(7)
    sizes = [13, 64, 1, 100, 7, 8, 4096, 3]  # ragged: UIs straddle the blocks
    blocks = [rng.normal(size=n) for n in sizes]
    with AmiProcess(lib["passthrough"], "pt", timeout_s=10) as p:
        p.init(_impulse(), DT, UI, "(pt)")
        outs = [p.getwave(b) for b in blocks]
    assert all(np.array_equal(o.wave.view(np.uint64), b.view(np.uint64)) for o, b in zip(outs, blocks))
    # one clock time k*UI for each UI that starts in a block, k counted from the first sample
    n = sum(sizes)
    spb = round(UI / DT)
    clocks = np.concatenate([o.clock_times_s for o in outs])
    assert np.array_equal(clocks, np.arange(math.ceil(n / spb)) * UI)
    assert [o.params_out for o in outs][-1] == f"(passthrough (blocks {len(sizes)}) (samples {n}))"
    assert outs[2].clock_times_s.size == 0  # a one-sample block inside a UI: none


def test_an_init_only_model_runs_init_and_refuses_getwave_without_dying(lib):
    imp = _impulse(2, 16)
    p = AmiProcess(lib["initonly"], "io", timeout_s=10)
    out = p.init(imp, DT, UI, "(io)")
    assert np.array_equal(out.impulse, np.vstack([imp[0] * 0.5, imp[1]])) and out.params_out == "(initonly (gain 0.5))"
    with pytest.raises(AmiError) as e:
        p.getwave(np.ones(8))
    assert "has no AMI_GetWave" in _one_line(e, "io", "libinitonly.so", "AMI_GetWave")
    pid = p.pid
    p.close()  # no AMI_Close: the host just ends
    assert _gone(pid)


# ----------------------------------------------------------------------------- crashes
@pytest.mark.parametrize("where, call", [("init", "AMI_Init"), ("getwave", "AMI_GetWave")])
def test_a_segfault_is_one_line_and_the_model_is_dead_after_it(lib, where, call):
    with pytest.raises(AmiError) as e:
        _fails(lib, "segv", f'(segv (where "{where}"))')
    msg = _one_line(e, "segv", "libsegv.so", call)
    assert msg.endswith(f"{call} crashed: killed by signal 11 (SIGSEGV)")


def test_a_crash_leaves_the_object_dead_saying_why(lib):
    p = AmiProcess(lib["segv"], "segv", timeout_s=LIMIT_S)
    p.init(_impulse(), DT, UI, "(segv (where getwave))")
    with pytest.raises(AmiError):
        p.getwave(np.ones(16))
    assert _gone(p.pid)
    with pytest.raises(AmiError) as e:
        p.getwave(np.ones(16))
    assert _one_line(e, "segv", "libsegv.so", "AMI_GetWave").endswith(
        "AMI_GetWave cannot run: AMI_GetWave crashed: killed by signal 11 (SIGSEGV)")
    p.close()  # ends nothing more, raises nothing
    p.close()


def test_a_crash_in_close_is_one_line_and_the_host_is_gone(lib):
    p = AmiProcess(lib["segv"], "segv", timeout_s=LIMIT_S)
    p.init(_impulse(), DT, UI, "(segv (where close))")
    p.getwave(np.ones(16))
    with pytest.raises(AmiError) as e:
        p.close()
    assert _one_line(e, "segv", "libsegv.so", "AMI_Close").endswith("AMI_Close crashed: killed by signal 11 (SIGSEGV)")
    assert _gone(p.pid)


def test_a_model_that_exits_is_reported_with_its_status(lib):
    with pytest.raises(AmiError) as e:
        _fails(lib, "segv", "(segv (where exit))")
    assert _one_line(e, "segv", "libsegv.so", "AMI_GetWave").endswith("AMI_GetWave crashed: exited with status 3")


def test_a_host_killed_between_calls_is_reported_at_the_next_call(lib):
    p = AmiProcess(lib["passthrough"], "pt", timeout_s=10)
    p.init(_impulse(), DT, UI, "(pt)")
    os.kill(p.pid, signal.SIGKILL)
    with pytest.raises(AmiError) as e:
        p.getwave(np.ones(4096 * 4))  # more than a pipe holds: the send must not block
    assert _one_line(e, "pt", "libpassthrough.so", "AMI_GetWave").endswith("crashed: killed by signal 9 (SIGKILL)")


# ----------------------------------------------------------------------------- hangs
@pytest.mark.parametrize("mode, call", [("init", "AMI_Init"), ("getwave", "AMI_GetWave")])
def test_a_hang_is_killed_at_the_time_limit(lib, mode, call):
    p = AmiProcess(lib["hang"], "hang", timeout_s=LIMIT_S)
    with pytest.raises(AmiError) as e:
        p.init(_impulse(), DT, UI, f"(hang (mode {mode}))")
        p.getwave(np.ones(64))
    msg = _one_line(e, "hang", "libhang.so", call)
    assert msg.endswith(f"{call} gave no answer within {LIMIT_S:g} s (timeout_s): its process was killed")
    assert _gone(p.pid)


def test_an_interrupted_call_ends_the_host_and_says_so(lib):
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    p = AmiProcess(lib["hang"], "hang", timeout_s=60)
    p.init(_impulse(), DT, UI, "(hang (mode getwave))")
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # Ctrl-C while the model spins
        with pytest.raises(KeyboardInterrupt):
            p.getwave(np.ones(64))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _gone(p.pid)
    with pytest.raises(AmiError) as e:
        p.getwave(np.ones(64))
    assert _one_line(e, "hang", "libhang.so", "AMI_GetWave").endswith(
        "AMI_GetWave cannot run: AMI_GetWave was interrupted, and its process was killed")


def test_a_hang_in_close_is_killed_at_the_time_limit(lib):
    p = AmiProcess(lib["hang"], "hang", timeout_s=LIMIT_S)
    p.init(_impulse(), DT, UI, "(hang (mode close))")
    with pytest.raises(AmiError) as e:
        p.close()
    _one_line(e, "hang", "libhang.so", "AMI_Close gave no answer")
    assert _gone(p.pid)


# ----------------------------------------------------------------------------- garbage
@pytest.mark.parametrize("mode, blocks, call, tail", [
    ("fail", 0, "AMI_Init", "AMI_Init returned 0 (failure): garbage: asked to fail second line"),
    ("inf", 0, "AMI_Init", "AMI_Init returned NaN or infinite impulse samples"),
    ("nan", 1, "AMI_GetWave", "AMI_GetWave returned NaN or infinite samples"),
    ("wavefail", 1, "AMI_GetWave", "AMI_GetWave returned 0 (failure)"),
    ("clock", 1, "AMI_GetWave", "AMI_GetWave returned clock times that are not finite and increasing"),
    ("clocknan", 1, "AMI_GetWave", "AMI_GetWave returned clock times that are not finite and increasing"),
    ("clockback", 2, "AMI_GetWave", "AMI_GetWave returned clock times that are not finite and increasing"),
])
def test_garbage_is_refused_in_one_line_and_ends_the_model(lib, mode, blocks, call, tail):
    p = AmiProcess(lib["garbage"], "garbage", timeout_s=LIMIT_S)
    with pytest.raises(AmiError) as e:
        p.init(_impulse(), DT, UI, f"(garbage (mode {mode}))")
        for _ in range(blocks):
            p.getwave(np.ones(64))
    assert _one_line(e, "garbage", "libgarbage.so", call).endswith(tail)
    assert _gone(p.pid)
    with pytest.raises(AmiError, match="cannot run"):
        p.getwave(np.ones(64))


def test_clock_times_increasing_across_blocks_pass_and_close_failure_is_reported(lib):
    p = AmiProcess(lib["garbage"], "garbage", timeout_s=LIMIT_S)
    p.init(_impulse(), DT, UI, "(garbage (mode closefail))")
    assert p.getwave(np.ones(64)).clock_times_s.size == 0  # none written: empty
    with pytest.raises(AmiError) as e:
        p.close()
    assert _one_line(e, "garbage", "libgarbage.so", "AMI_Close").endswith("AMI_Close returned 0 (failure)")


def test_a_model_string_is_copied_out_bounded_to_one_megabyte(lib):
    with AmiProcess(lib["garbage"], "garbage", timeout_s=10) as p:
        out = p.init(_impulse(), DT, UI, "(garbage (mode longmsg))")
    assert out.message == "x" * (1 << 20)


def test_a_long_getwave_string_comes_back_whole_with_the_samples(lib):
    wave = np.random.default_rng(3).normal(size=100)
    with AmiProcess(lib["garbage"], "garbage", timeout_s=10) as p:
        p.init(_impulse(), DT, UI, "(garbage (mode longout))")
        outs = [p.getwave(wave) for _ in range(3)]  # longer than the room kept for it, then not
    assert all(o.params_out == "y" * 5000 and np.array_equal(o.wave, wave) for o in outs)


# ----------------------------------------------------------------------------- not a model
def test_a_library_without_ami_init_is_refused_at_construction(lib):
    with pytest.raises(AmiError) as e:
        AmiProcess(lib["noinit"], "noinit", timeout_s=10)
    assert "has no AMI_Init function" in _one_line(e, "noinit", "libnoinit.so", "loading the library")


def test_a_text_file_is_refused_at_construction(tmp_path):
    fake = tmp_path / "libfake.so"
    fake.write_text("not a shared library\n")
    with pytest.raises(AmiError) as e:
        AmiProcess(fake, "fake", timeout_s=10)
    msg = _one_line(e, "fake", "libfake.so", "loading the library")
    assert "could not be loaded (dlopen)" in msg and "libfake.so" in msg.split("(dlopen)")[1]


def test_a_missing_file_is_refused_before_any_process_starts(tmp_path):
    with pytest.raises(AmiError) as e:
        AmiProcess(tmp_path / "libnone.so", "none")
    assert "does not exist" in _one_line(e, "none", "libnone.so", "library file")


def test_calls_out_of_order_or_with_bad_input_are_refused_without_killing_the_model(lib):
    with AmiProcess(lib["passthrough"], "pt", timeout_s=10) as p:
        with pytest.raises(AmiError, match="before AMI_Init"):
            p.getwave(np.ones(8))
        with pytest.raises(AmiError, match="dt_s must be a positive"):
            p.init(_impulse(), 0.0, UI, "(pt)")
        with pytest.raises(AmiError, match="shape"):
            p.init(np.ones((1, 2, 3)), DT, UI, "(pt)")
        p.init(_impulse(), DT, UI, "(pt)")
        with pytest.raises(AmiError, match="already called"):
            p.init(_impulse(), DT, UI, "(pt)")
        with pytest.raises(AmiError, match="1-D"):
            p.getwave(np.ones((2, 8)))
        assert np.array_equal(p.getwave(np.arange(8.0)).wave, np.arange(8.0))
    with pytest.raises(AmiError, match="timeout_s must be a positive"):
        AmiProcess(lib["passthrough"], "pt", timeout_s=math.nan)


# ----------------------------------------------------------------------------- the host's life
def test_the_host_ends_on_close_on_context_exit_and_on_garbage_collection(lib):
    p = AmiProcess(lib["passthrough"], "pt", timeout_s=10)
    pid = p.pid
    p.close()
    assert _gone(pid)
    with AmiProcess(lib["passthrough"], "pt", timeout_s=10) as p:
        pid = p.pid
        p.init(_impulse(), DT, UI, "(pt)")
    assert _gone(pid)
    p = AmiProcess(lib["passthrough"], "pt", timeout_s=10)
    pid = p.pid
    del p
    gc.collect()
    assert _gone(pid)


def test_a_model_made_in_a_thread_that_ended_keeps_its_host(lib):
    import threading

    made = []
    t = threading.Thread(target=lambda: made.append(AmiProcess(lib["passthrough"], "pt", timeout_s=10)))
    t.start()
    t.join()
    time.sleep(0.2)  # the kernel's parent-death signal, were it tied to that thread, has come by now
    with made[0] as p:
        assert p.init(_impulse(), DT, UI, "(pt)").message == "passthrough: impulse left as it is"


_CHILD = """
import sys
import numpy as np
from phy.ami.runner import AmiProcess
p = AmiProcess(sys.argv[1], "hang", timeout_s=600)
p.init(np.ones((1, 8)), 1e-12, 8e-12, "(hang (mode getwave))")
print(p.pid, flush=True)
p.getwave(np.ones(64))  # never returns: the host spins in compiled code
"""


def test_a_killed_parent_leaves_no_host_behind_even_mid_call(lib):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(lib["hang"])], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        pid = int(child.stdout.readline())
        assert not _gone(pid, wait_s=0.0)
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert _gone(pid)


def test_the_host_imports_the_standard_library_only():
    code = _host_argv(0, 1, 2, "x")[3].replace("main()", "print(' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    mods = set(out.split())
    assert {"phy.ami._host", "phy._procs"} <= mods
    heavy = {m for m in mods if m.split(".")[0] in ("numpy", "numba", "scipy", "skrf", "channels", "fec", "_linkmodel")}
    assert not heavy and not {m for m in mods if m.startswith("phy.") and m not in ("phy.ami", "phy.ami._host",
                                                                                   "phy._procs")}
