"""Shared fixtures: the real Touchstone channels in ../shared/channels (skipped when absent)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "channels"


def shared_file(rel: str) -> Path:
    """Path of a file in ../shared/channels; skips the test when the folder or file is absent."""
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"shared channel data not available: {p}")
    return p


def write_file(tmp_path: Path, name: str, data: str | bytes) -> Path:
    """``data`` (text or bytes) written to ``tmp_path / name``; the path."""
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return p


@pytest.fixture
def shared():
    return shared_file


# No test may fail for being slow on a busy machine: hypothesis's default per-example
# deadline (200 ms of wall clock) is off for every test, as the suite's own tests are.
settings.register_profile("linkmodel", deadline=None)
settings.load_profile("linkmodel")


@contextlib.contextmanager
def cpu_seconds_at_most(limit_s: float):
    """Bounded cost without a wall clock: the CPU time this process (all its threads) spends
    in the block stays under ``limit_s``.

    A busy machine stretches wall-clock time, not the CPU time a computation needs, so this
    holds on a loaded CI machine. The limits are generous: they catch a runaway (an
    enumeration without end, a search that grew by orders of magnitude), not a slow
    machine; speed itself is measured in ``benchmarks/``. Work done in child processes is
    not counted.
    """
    t = time.process_time()
    yield
    used = time.process_time() - t
    assert used < limit_s, f"{used:.1f} s of CPU, above the bound of {limit_s} s"


_THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_THREAD_SETTINGS = {v: __import__("os").environ.get(v) for v in _THREAD_VARS}  # as the run began


def _restore_thread_settings() -> None:
    import os

    for v, value in _THREAD_SETTINGS.items():
        if os.environ.get(v) != value:
            if value is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = value


@pytest.fixture(autouse=True)
def _thread_settings_kept():
    """The thread-count variables as the run began, before and after each test. Numba reads
    its environment again at every compile: with ``NUMBA_NUM_THREADS`` changed in this
    process (e.g. by a benchmark script that sets it at import for its own runs) every later
    compile fails with "Cannot set NUMBA_NUM_THREADS to a different value once the threads
    have been launched"; a CI run during issue 35 failed so."""
    _restore_thread_settings()
    yield
    _restore_thread_settings()
