"""One IBIS-AMI model's shared library, run in a host process of its own
(:mod:`phy.ami._host`): :class:`AmiProcess`.

A vendor model is compiled code that may crash, hang, or return garbage. Here it runs in a
separate interpreter started for it (not forked: nothing of the caller's threads or locks
comes along), which dies with the caller (``prctl(PR_SET_PDEATHSIG)``,
:func:`phy._procs._die_with_parent`). Each call has a time limit; a call that crashes,
hangs or returns garbage raises :class:`phy.ami.AmiError` in one line naming the model, the
library file and the call, and the caller's process goes on. After such a failure the host
is gone and every further call raises :class:`AmiError` saying why.

The samples travel as raw float64 buffers over pipes and reach the model by pointer, so a
block costs a few copies of its bytes and a few system calls, not Python per sample.
"""

from __future__ import annotations

import json
import math
import os
import select
import subprocess
import sys
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import BufferTooShort, Connection
from pathlib import Path

import numpy as np

from .._procs import _child_paths, _exit_reason, _spawn
from ._host import MAX_TEXT, WAVE_HEAD, decode
from .errors import AmiError

__all__ = ["AmiProcess", "GetWaveOut", "InitOut"]

#: The longest reply header read from a host (bytes): two strings of at most 1 MB each
#: (:data:`phy.ami._host.MAX_TEXT`), JSON-escaped.
_MAX_REPLY = 1 << 24
#: How long a host may take to start Python (s), beside the call limit ``timeout_s``.
_START_S = 60.0
#: How long an ending host is given to exit by itself before it is killed (s).
_EXIT_S = 5.0
#: The pipes' buffer (bytes; Linux's default /proc/sys/fs/pipe-max-size).
_PIPE_BYTES = 1 << 20
#: The longest model message quoted in an error (characters).
_QUOTE = 300


@dataclass(frozen=True)
class InitOut:
    """What ``AMI_Init`` gave back.

    Attributes
    ----------
    impulse : numpy.ndarray
        The impulse matrix the model left (V/s, the shape it was given, row 0 the through;
        a copy of the input where the model does not change it).
    params_out : str
        The model's ``AMI_parameters_out`` string ("" when it gave none).
    message : str
        The model's ``msg`` string ("" when it gave none).
    """

    impulse: np.ndarray
    params_out: str
    message: str

    def to_dict(self) -> dict:
        return {"impulse": self.impulse.tolist(), "params_out": self.params_out, "message": self.message}


@dataclass(frozen=True)
class GetWaveOut:
    """What one ``AMI_GetWave`` call gave back.

    Attributes
    ----------
    wave : numpy.ndarray
        The block of samples the model left (V), as long as the block sent.
    clock_times_s : numpy.ndarray
        The clock times the model wrote (s, the sampling instant minus half a UI, from the
        first sample of the first block), finite and increasing; empty when it wrote none.
    params_out : str
        The model's ``AMI_parameters_out`` string ("" when it gave none).
    """

    wave: np.ndarray
    clock_times_s: np.ndarray
    params_out: str

    def to_dict(self) -> dict:
        return {"wave": self.wave.tolist(), "clock_times_s": self.clock_times_s.tolist(),
                "params_out": self.params_out}


def _one_line(text: str, limit: int = _QUOTE) -> str:
    """``text`` on one line (runs of white space made one space), cut at ``limit``."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _host_argv(rfd: int, wfd: int, parent: int, library: str) -> list[str]:
    """The command of a host process: an isolated interpreter (``-I``: nothing from the
    current folder or the ``PYTHON*`` variables) that imports :mod:`phy.ami._host` from
    this package without running ``phy``'s ``__init__`` (the engines and Numba: seconds),
    so it imports the standard library only."""
    phy_dir = Path(__file__).resolve().parents[1]
    code = "\n".join([
        "import sys, types",
        f"sys.path[:0] = {_child_paths()!r}",
        f"for name, path in (('phy', {str(phy_dir)!r}), ('phy.ami', {str(phy_dir / 'ami')!r})):",
        "    sys.modules[name] = module = types.ModuleType(name)",
        "    module.__path__ = [path]",
        "from phy.ami._host import main",
        "main()",
    ])
    return [sys.executable, "-I", "-c", code, str(rfd), str(wfd), str(parent), library]


def _end_host(proc: subprocess.Popen, tx: Connection, rx: Connection, wait_s: float = 0.0) -> None:
    """End a host: close its request pipe (an idle host then exits by itself), give it
    ``wait_s`` seconds, kill it if still there, reap it and close the pipes."""
    tx.close()
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    rx.close()


def _widen(fd: int) -> None:
    """Give pipe ``fd`` a 1 MB buffer where Linux allows (``F_SETPIPE_SZ``; default 64 kB),
    so a long block crosses in a few hand-overs between the processes, not sixteen per MB."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or above /proc/sys/fs/pipe-max-size
        pass


def _positive(value, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and x > 0):
        raise AmiError(f"{what} must be a positive finite number, not {value!r}")
    return x


class AmiProcess:
    """An IBIS-AMI model's shared library, loaded in a host process of its own.

    Parameters
    ----------
    library : Path or str
        The model's shared library (``.so``).
    name : str
        The model's name, for messages.
    timeout_s : float
        The time limit of each call (s); a call past it has its process killed and raises
        :class:`AmiError`.

    Raises
    ------
    AmiError
        The library does not exist, cannot be loaded, has no ``AMI_Init``, or its host
        died or hung while loading it.

    Notes
    -----
    A context manager: :meth:`close` (``AMI_Close``, then the host ends) runs at the
    ``with`` block's end. A host not closed is killed when the object is collected or the
    interpreter exits, and dies with the process that started it, even mid-call (on Linux;
    it is started from a thread that lives as long as the process,
    :func:`phy._procs._spawn`, so an object made in a short-lived thread keeps its host).
    """

    def __init__(self, library: Path | str, name: str, timeout_s: float = 60.0):
        self.library = Path(library)
        self.name = str(name)
        self.timeout_s = _positive(timeout_s, f"AMI model {self.name!r}: timeout_s")
        self._where = f"AMI model {self.name!r} ({self.library.name})"
        self._dead: str | None = None  # why no call can run any more
        self._init_done = False
        self._samples_per_bit = 1
        self._last_clock_s = -math.inf
        self._request = np.empty(0)
        self._text_room = 1024  # bytes kept for AMI_parameters_out after a GetWave reply's samples
        if not self.library.is_file():
            raise AmiError(f"{self._where}: the library file {str(library)!r} does not exist")
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        _widen(down_w)
        _widen(up_w)
        try:
            self._proc = _spawn(_host_argv(down_r, up_w, os.getpid(), str(self.library.resolve())),
                                pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL)
        except OSError as exc:
            os.close(down_w)
            os.close(up_r)
            raise AmiError(f"{self._where}: its host process could not start: {_one_line(exc)}") from None
        finally:
            os.close(down_r)
            os.close(up_w)
        self._tx = Connection(down_w, readable=False)
        self._rx = Connection(up_r, writable=False)
        self._poller = select.poll()  # one, not one per wait (Connection.poll builds a selector each time)
        self._poller.register(up_r, select.POLLIN)
        self._finalizer = weakref.finalize(self, _end_host, self._proc, self._tx, self._rx)
        self._exchange("starting its host", None, limit_s=max(_START_S, self.timeout_s))
        hello = self._exchange("loading the library", None)
        self._has_getwave, self._has_close = bool(hello.get("getwave")), bool(hello.get("close"))

    # ------------------------------------------------------------------ the calls
    def init(self, impulse: np.ndarray, dt_s: float, bit_time_s: float, params_in: str) -> InitOut:
        """Call ``AMI_Init``.

        Parameters
        ----------
        impulse : numpy.ndarray
            float64, shape ``(1 + aggressors, row_size)`` (or 1-D: the through alone), the
            impulse responses sampled every ``dt_s`` (V/s: the response per sample over
            ``dt_s``), row 0 the through.
        dt_s, bit_time_s : float
            The sample interval and the unit interval (s).
        params_in : str
            The ``AMI_parameters_in`` string (:meth:`phy.ami.AmiFile.parameters_in`).

        Returns
        -------
        InitOut
        """
        call = "AMI_Init"
        self._alive(call)
        if self._init_done:
            raise AmiError(f"{self._where}: AMI_Init was already called; start another AmiProcess to call it again")
        imp = np.ascontiguousarray(impulse, dtype=np.float64)
        if imp.ndim not in (1, 2) or imp.size == 0:
            raise AmiError(f"{self._where}: the impulse matrix must be 1-D or 2-D and not empty, not of shape "
                           f"{imp.shape}")
        rows, cols = (1, imp.size) if imp.ndim == 1 else imp.shape
        dt_s = _positive(dt_s, f"{self._where}: dt_s")
        bit_time_s = _positive(bit_time_s, f"{self._where}: bit_time_s")
        if not isinstance(params_in, str) or "\0" in params_in:
            raise AmiError(f"{self._where}: params_in must be a string without NUL characters")
        out = bytearray(imp.nbytes)
        head = {"op": "init", "rows": rows, "cols": cols, "dt": dt_s, "bit": bit_time_s, "params": params_in}
        reply = self._exchange(call, head, send=(imp,), into=(out,))
        if reply.get("ret") == 0:
            self._fail(call, f"returned 0 (failure): {_one_line(reply.get('msg') or 'no message')}")
        result = np.frombuffer(out, dtype=np.float64).reshape(imp.shape)
        if not np.all(np.isfinite(result)):
            self._fail(call, "returned NaN or infinite impulse samples")
        self._init_done = True
        self._samples_per_bit = max(1, round(bit_time_s / dt_s))
        return InitOut(result, str(reply.get("params_out", "")), str(reply.get("msg", "")))

    def getwave(self, wave: np.ndarray) -> GetWaveOut:
        """Call ``AMI_GetWave`` on the next block of the waveform.

        Parameters
        ----------
        wave : numpy.ndarray
            1-D float64, any length (V, sampled every ``dt_s``); the blocks are sent in order.

        Returns
        -------
        GetWaveOut
        """
        call = "AMI_GetWave"
        self._alive(call)
        if not self._has_getwave:
            raise AmiError(f"{self._where}: the library has no AMI_GetWave function")
        if not self._init_done:
            raise AmiError(f"{self._where}: AMI_GetWave called before AMI_Init")
        w = np.ascontiguousarray(wave, dtype=np.float64)
        if w.ndim != 1:
            raise AmiError(f"{self._where}: a GetWave block must be 1-D, not of shape {w.shape}")
        if w.size == 0:
            return GetWaveOut(w.copy(), np.empty(0), "")
        n, m = w.size, -(-w.size // self._samples_per_bit) + 8
        if self._request.size != 3 + n:
            self._request = np.empty(3 + n)  # WAVE_HEAD's three int64, then the samples; kept for the next block
        self._request[:3].view(np.int64)[:] = (0, n, m)
        self._request[3:] = w
        fixed = WAVE_HEAD.size + 8 * (n + m)
        out = bytearray(fixed + self._text_room)  # the reply lands here, and the results view it
        ret, params_out = self._wave_exchange(self._request, out, fixed)
        if ret == 0:
            self._fail(call, "returned 0 (failure)")
        both = np.frombuffer(out, dtype=np.float64, count=n + m, offset=WAVE_HEAD.size)
        result, times = both[:n], both[n:]
        if not np.all(np.isfinite(result)):
            self._fail(call, "returned NaN or infinite samples")
        end = np.flatnonzero(times < 0)
        times = times[: end[0] if end.size else times.size].copy()
        if times.size and not (np.all(np.isfinite(times)) and np.all(np.diff(times) > 0)
                               and times[0] > self._last_clock_s):
            self._fail(call, "returned clock times that are not finite and increasing")
        if times.size:
            self._last_clock_s = float(times[-1])
        return GetWaveOut(result, times, params_out)

    def close(self) -> None:
        """Call ``AMI_Close`` (when ``AMI_Init`` succeeded and the library has it) and end
        the host; a second call does nothing.

        Raises
        ------
        AmiError
            ``AMI_Close`` crashed, hung or returned 0; the host is ended all the same.
        """
        if not self._finalizer.alive:
            return
        try:
            if self._dead is None and self._init_done and self._has_close:
                if self._exchange("AMI_Close", {"op": "close"}).get("ret") == 0:
                    self._fail("AMI_Close", "returned 0 (failure)")
        finally:
            if self._dead is None:
                self._dead = "the model was closed"
            self._finalizer.detach()
            _end_host(self._proc, self._tx, self._rx, wait_s=_EXIT_S)

    def __enter__(self) -> AmiProcess:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # the error in flight is the one to see
            try:
                self.close()
            except AmiError:
                pass

    @property
    def pid(self) -> int:
        """The host process's id."""
        return self._proc.pid

    def __repr__(self) -> str:
        state = "running" if self._dead is None else self._dead
        return f"AmiProcess({str(self.library)!r}, {self.name!r}, timeout_s={self.timeout_s:g}): {state}"

    # ------------------------------------------------------------------ the pipes
    def _alive(self, call: str) -> None:
        if self._dead is not None:
            raise AmiError(f"{self._where}: {call} cannot run: {self._dead}")

    def _fail(self, call: str, what: str) -> None:
        """End the host, remember why, raise that in one line."""
        self._dead = _one_line(f"{call} {what}", 2 * _QUOTE)
        self._finalizer()
        raise AmiError(f"{self._where}: {self._dead}")

    @contextmanager
    def _calling(self, call: str, limit_s: float | None = None):
        """Around one request and its reply: yields the deadline (``time.monotonic``, s;
        ``limit_s``, default ``timeout_s``, from now). Anything but an :class:`AmiError`
        that stops it halfway (Ctrl-C) leaves the pipes out of step: the host is ended."""
        self._alive(call)
        finished = False
        try:
            yield time.monotonic() + (self.timeout_s if limit_s is None else limit_s)
            finished = True
        finally:
            if not finished and self._dead is None:
                self._dead = f"{call} was interrupted, and its process was killed"
                self._finalizer()

    def _send(self, *messages) -> None:
        try:
            for message in messages:
                self._tx.send_bytes(message)
        except OSError:
            pass  # the host is gone: reading its reply says how

    def _exchange(self, call: str, head: dict | None, send=(), into=(), limit_s: float | None = None) -> dict:
        """Send a request (a JSON ``head``, then raw buffers ``send``), read the reply's
        JSON header and then its buffers into ``into`` (each exactly filled), all within
        ``limit_s`` (s; default ``timeout_s``)."""
        with self._calling(call, limit_s) as deadline:
            self._send(*([] if head is None else [json.dumps(head).encode("utf-8")]), *send)
            text = self._recv(call, deadline, limit_s, longest=_MAX_REPLY)
            try:
                reply = json.loads(text)
            except ValueError:  # not JSON
                reply = None
            if not isinstance(reply, dict):
                self._fail(call, "got a reply it cannot read from its host")
            if "error" in reply:
                self._fail(call, f"failed: {_one_line(reply['error'])}")
            for buf in into:
                if self._recv(call, deadline, limit_s, into=buf) != len(buf):
                    self._fail(call, "got a reply of the wrong length from its host")
            return reply

    def _wave_exchange(self, request: np.ndarray, out: bytearray, fixed: int) -> tuple[int, str]:
        """Send a GetWave request (one message) and read its reply (one message) into
        ``out``, longer when it does not fit: :data:`WAVE_HEAD`, the samples and clock times
        (``fixed`` bytes in all), then ``AMI_parameters_out``. Returns ``(ret,
        params_out)``."""
        call = "AMI_GetWave"
        with self._calling(call) as deadline:
            self._send(request)
            got = self._recv(call, deadline, None, into=out, grow=True)
            ret, size, _ = WAVE_HEAD.unpack_from(out)
            if not 0 <= size <= MAX_TEXT or got != fixed + size:
                self._fail(call, "got a reply of the wrong length from its host")
            self._text_room = size + 1024  # the next reply's string is likely as long
            return ret, decode(bytes(out[fixed:got]))

    def _recv(self, call: str, deadline: float, limit_s: float | None, longest: int = 0,
              into: bytearray | None = None, grow: bool = False):
        """The next message (at most ``longest`` bytes), or its length once read into
        ``into`` (made longer with ``grow``, else refused when it does not fit), by the
        deadline; the host's end (a crash) or a missed deadline ends it and raises."""
        if not self._poller.poll(max(0, math.ceil(1000 * (deadline - time.monotonic())))):
            limit = f"{self.timeout_s:g} s (timeout_s)" if limit_s is None else f"{limit_s:g} s"
            self._fail(call, f"gave no answer within {limit}: its process was killed")
        try:
            return self._rx.recv_bytes(longest) if into is None else self._rx.recv_bytes_into(into)
        except BufferTooShort as exc:
            data = exc.args[0] if grow else None
        except (EOFError, OSError):
            data = False
        if data is None:
            self._fail(call, "got a reply of the wrong length from its host")
        if data is not False:
            into[:] = data  # longer than into: it takes the reply's length
            return len(data)
        try:
            code = self._proc.wait(timeout=_EXIT_S)
        except subprocess.TimeoutExpired:
            self._fail(call, "broke its pipe: its process was killed")
        self._fail(call, f"crashed: {_exit_reason(code)}")
