"""The host process of one IBIS-AMI model: it loads the model's shared library and runs its
calls for :class:`phy.ami.runner.AmiProcess`, so that a model that crashes or hangs takes
down this process, never the caller's.

Started as ``python -I -c <bootstrap> <rfd> <wfd> <parent_pid> <library>`` by
:func:`phy.ami.runner._host_argv` (which loads this module without running ``phy``'s
``__init__``: the host imports the standard library only, no numpy, scipy or Numba, so it
is ready in a few tenths of a second, not the seconds ``import phy`` takes); ``python -m phy.ami._host <rfd> <wfd> <parent_pid>
<library>`` works too, but imports ``phy`` whole first.

The protocol, on two pipes (:class:`multiprocessing.connection.Connection`), one request
at a time, each message a ``send_bytes``:

* at start: ``{"up": true}`` once Python runs, then ``{"getwave": bool, "close": bool}``
  once the library is loaded (or ``{"error": "..."}``, and the host exits);
* ``{"op": "init", "rows", "cols", "dt", "bit", "params"}`` and the impulse matrix (raw
  float64, ``rows`` impulses of ``cols`` samples, V/s, row 0 the through) ->
  ``{"ret", "params_out", "msg"}`` and the matrix the model left;
* GetWave, the hot path, in binary and one message each way: the header :data:`WAVE_HEAD`
  ``(0, n, m)`` (its first byte 0 tells it from a JSON request's ``{``) and ``n`` float64 samples (V) -> the header ``(ret, length of
  AMI_parameters_out, 0)``, the ``n`` samples the model left, ``m`` clock times (s;
  pre-filled with -1 before the call) and the ``AMI_parameters_out`` bytes. The samples
  stay where the request landed: the model works on the received buffer. (Each message
  is a hand-over between the processes, which costs tens of microseconds on a busy
  machine: more than the Python around it.);
* ``{"op": "close"}`` -> ``{"ret"}``, and the host exits.

The other headers are JSON (the parent never unpickles what a model's process sends); the
samples go to C by pointer into the received buffer, never sample by sample in Python.
The strings a model returns (``AMI_parameters_out``, ``msg``) are copied out bounded by
:data:`MAX_TEXT` bytes each.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import struct
import sys
from multiprocessing.connection import BufferTooShort, Connection

from phy._procs import _die_with_parent

#: The most bytes of a string a model returns (``AMI_parameters_out``, ``msg``) copied
#: out; a longer one is cut there (a string without its terminating NUL is cut there too).
MAX_TEXT = 1 << 20
#: A GetWave request's header, before its samples: ``(0, n, m)`` (``n`` samples, room for
#: ``m`` clock times); its reply's: ``(ret, length of AMI_parameters_out, 0)``, followed
#: by the ``n`` samples, the ``m`` clock times and the string (raw bytes).
WAVE_HEAD = struct.Struct("=qqq")

_D = ctypes.POINTER(ctypes.c_double)
_P = ctypes.POINTER(ctypes.c_void_p)
_INIT_ARGS = [_D, ctypes.c_long, ctypes.c_long, ctypes.c_double, ctypes.c_double, ctypes.POINTER(ctypes.c_char),
              _P, _P, _P]
_GETWAVE_ARGS = [_D, ctypes.c_long, _D, _P, ctypes.c_void_p]
_MINUS_ONE = struct.pack("=d", -1.0)

_libc = ctypes.CDLL(None)
_strnlen = _libc.strnlen
_strnlen.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_strnlen.restype = ctypes.c_size_t


class _LoadError(Exception):
    """The library cannot serve as an AMI model (the message says why, in one line)."""


def _raw_text(address: int | None) -> bytes:
    """The NUL-terminated string a model returned at ``address``, at most
    :data:`MAX_TEXT` bytes of it; ``b""`` for NULL."""
    if not address:
        return b""
    return ctypes.string_at(address, _strnlen(address, MAX_TEXT))


def decode(raw: bytes) -> str:
    """A model's string as text: UTF-8, else Latin-1 (which reads any bytes)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _text(address: int | None) -> str:
    return decode(_raw_text(address))


def _doubles(buf: bytearray):
    """A ctypes view of ``buf``'s float64 values (no copy), to hand to C by pointer."""
    return (ctypes.c_double * (len(buf) // 8)).from_buffer(buf)


class _Model:
    """The loaded library, its entry points and its memory handle."""

    def __init__(self, library: str):
        try:
            lib = ctypes.CDLL(library, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            raise _LoadError(f"the library could not be loaded (dlopen): {exc}") from None
        self.init_fn = self._entry(lib, "AMI_Init", _INIT_ARGS)
        if self.init_fn is None:
            raise _LoadError("the library has no AMI_Init function, so it is not an IBIS-AMI model")
        self.getwave_fn = self._entry(lib, "AMI_GetWave", _GETWAVE_ARGS)
        self.close_fn = self._entry(lib, "AMI_Close", [ctypes.c_void_p])
        self.lib = lib
        self.handle = ctypes.c_void_p()
        self.keep: list = []  # what the model was handed and may still point to
        self.buf = bytearray(1 << 16)  # the last request, and a GetWave's reply
        self.layout: tuple[int, int] | None = None  # the (n, m) of the GetWave views of buf

    @staticmethod
    def _entry(lib, name: str, argtypes: list):
        try:
            fn = getattr(lib, name)
        except AttributeError:
            return None
        fn.argtypes, fn.restype = argtypes, ctypes.c_long
        return fn

    def init(self, rx: Connection, tx: Connection, head: dict) -> None:
        rows, cols = int(head["rows"]), int(head["cols"])
        buf = bytearray(rows * cols * 8)
        if rx.recv_bytes_into(buf) != len(buf):
            raise ValueError("the impulse matrix has the wrong length")
        params = ctypes.create_string_buffer(str(head["params"]).encode("utf-8"))
        out, msg = ctypes.c_void_p(), ctypes.c_void_p()
        self.keep = [buf, params]
        ret = self.init_fn(_doubles(buf), cols, rows - 1, float(head["dt"]), float(head["bit"]), params,
                           ctypes.byref(out), ctypes.byref(self.handle), ctypes.byref(msg))
        _send(tx, {"ret": int(ret), "params_out": _text(out.value), "msg": _text(msg.value)})
        tx.send_bytes(buf)

    def receive(self, rx: Connection) -> int:
        """Read the next request into :attr:`buf` (replaced by a longer one when it does
        not fit); its length (bytes)."""
        try:
            return rx.recv_bytes_into(self.buf)
        except BufferTooShort as exc:
            data = exc.args[0]
            self.buf, self.layout = bytearray(len(data)), None
            self.buf[:] = data
            return len(data)

    def getwave(self, tx: Connection, length: int) -> None:
        """Run AMI_GetWave on the request in :attr:`buf`: the header, ``n`` samples, then
        room for ``m`` clock times (8-byte aligned), handed to C where they lie."""
        _, n, m = WAVE_HEAD.unpack_from(self.buf)
        start = WAVE_HEAD.size
        clocks, end = start + 8 * n, start + 8 * (n + m)
        if length != clocks:
            raise ValueError("the wave block has the wrong length")
        if self.layout != (n, m):  # the views are kept while the blocks keep their length
            if len(self.buf) < end:
                grown = bytearray(end)
                grown[:length] = memoryview(self.buf)[:length]
                self.buf = grown
            self.wave_c = (ctypes.c_double * n).from_buffer(self.buf, start)
            self.clocks_c = (ctypes.c_double * m).from_buffer(self.buf, clocks)
            self.layout = (n, m)
        self.buf[clocks:end] = _MINUS_ONE * m
        out = ctypes.c_void_p()
        ret = self.getwave_fn(self.wave_c, n, self.clocks_c, ctypes.byref(out), self.handle)
        text = _raw_text(out.value)
        total = end + len(text)
        if len(self.buf) < total:  # room for the string after the clock times
            grown = bytearray(total + 4096)
            grown[:end] = memoryview(self.buf)[:end]
            self.buf, self.layout = grown, None
        self.buf[end:total] = text
        WAVE_HEAD.pack_into(self.buf, 0, ret, len(text), 0)
        tx.send_bytes(memoryview(self.buf)[:total])  # one message: each hand-over between processes costs

    def close(self, tx: Connection) -> None:
        ret = self.close_fn(self.handle) if self.close_fn is not None else 1
        _send(tx, {"ret": int(ret)})


def _send(tx: Connection, head: dict) -> None:
    tx.send_bytes(json.dumps(head).encode("utf-8"))


def _serve(rx: Connection, tx: Connection, model: _Model) -> None:
    """Answer requests until ``close`` or the parent's end of the pipe closes."""
    while True:
        length = model.receive(rx)
        if model.buf[:1] != b"{":
            model.getwave(tx, length)
            continue
        head = json.loads(model.buf[:length])
        op = head.get("op")
        if op == "init":
            model.init(rx, tx, head)
        elif op == "close":
            model.close(tx)
            return
        else:
            raise ValueError(f"unknown request {op!r}")


def main(argv: list[str] | None = None) -> None:
    """Run the host: ``argv`` is ``[rfd, wfd, parent_pid, library]`` (the pipe from the
    parent, the pipe to it, the parent's process id and the library's absolute path)."""
    rfd, wfd, parent, library = sys.argv[1:] if argv is None else argv
    _die_with_parent(int(parent))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the parent's to handle
    rx, tx = Connection(int(rfd), writable=False), Connection(int(wfd), readable=False)
    try:
        _send(tx, {"up": True})
        try:
            model = _Model(library)
        except _LoadError as exc:
            _send(tx, {"error": str(exc)})
            return
        _send(tx, {"getwave": model.getwave_fn is not None, "close": model.close_fn is not None})
        try:
            _serve(rx, tx, model)
        except (ValueError, KeyError, TypeError) as exc:  # a request this host cannot read
            _send(tx, {"error": f"the host could not read a request ({type(exc).__name__}: {exc})"})
    except (EOFError, OSError):  # the parent is done, or gone
        return


if __name__ == "__main__":
    main()
