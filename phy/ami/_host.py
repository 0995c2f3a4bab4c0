"""The host process of one IBIS-AMI model: it loads the model's shared library and runs its
calls for :class:`phy.ami.runner.AmiProcess`, so that a model that crashes or hangs takes
down this process, never the caller's.

Started as ``python -I -c <bootstrap> <rfd> <wfd> <parent_pid> <library>`` by
:func:`phy.ami.runner._host_argv` (which loads this module without running ``phy``'s
``__init__``: the host imports the standard library only, no numpy, scipy or Numba, so it
starts in about a tenth of a second); ``python -m phy.ami._host <rfd> <wfd> <parent_pid>
<library>`` works too, but imports ``phy`` whole first.

The protocol, on two pipes (:class:`multiprocessing.connection.Connection`), one request
at a time, each message a ``send_bytes``:

* at start: ``{"up": true}`` once Python runs, then ``{"getwave": bool, "close": bool}``
  once the library is loaded (or ``{"error": "..."}``, and the host exits);
* ``{"op": "init", "rows", "cols", "dt", "bit", "params"}`` and the impulse matrix (raw
  float64, ``rows`` impulses of ``cols`` samples, V/s, row 0 the through) ->
  ``{"ret", "params_out", "msg"}`` and the matrix the model left;
* ``{"op": "getwave", "n", "clocks"}`` and ``n`` float64 samples (V) -> ``{"ret",
  "params_out"}``, the ``n`` samples the model left, and the ``clocks`` float64 clock times
  (s; pre-filled with -1 before the call);
* ``{"op": "close"}`` -> ``{"ret"}``, and the host exits.

The headers are JSON (the parent never unpickles what a model's process sends); the
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
from multiprocessing.connection import Connection

from phy._procs import _die_with_parent

#: The most bytes of a string a model returns (``AMI_parameters_out``, ``msg``) copied
#: out; a longer one is cut there (a string without its terminating NUL is cut there too).
MAX_TEXT = 1 << 20
#: The longest request header read (bytes): it carries ``AMI_parameters_in``.
MAX_HEAD = 1 << 26

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


def _text(address: int | None) -> str:
    """The NUL-terminated string a model returned at ``address``, at most
    :data:`MAX_TEXT` bytes of it, as text (UTF-8, else Latin-1); ``""`` for NULL."""
    if not address:
        return ""
    raw = ctypes.string_at(address, _strnlen(address, MAX_TEXT))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


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
        self.wave = bytearray()

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

    def getwave(self, rx: Connection, tx: Connection, head: dict) -> None:
        n, m = int(head["n"]), int(head["clocks"])
        if len(self.wave) != 8 * (n + m):  # kept while the blocks keep their length: the wave, then the clocks
            self.wave = bytearray(8 * (n + m))
            self.wave_c = (ctypes.c_double * n).from_buffer(self.wave)
            self.clocks_c = (ctypes.c_double * m).from_buffer(self.wave, 8 * n)
        if rx.recv_bytes_into(self.wave) != 8 * n:
            raise ValueError("the wave block has the wrong length")
        self.wave[8 * n:] = _MINUS_ONE * m
        out = ctypes.c_void_p()
        ret = self.getwave_fn(self.wave_c, n, self.clocks_c, ctypes.byref(out), self.handle)
        _send(tx, {"ret": int(ret), "params_out": _text(out.value)})
        tx.send_bytes(self.wave)

    def close(self, tx: Connection) -> None:
        ret = self.close_fn(self.handle) if self.close_fn is not None else 1
        _send(tx, {"ret": int(ret)})


def _send(tx: Connection, head: dict) -> None:
    tx.send_bytes(json.dumps(head).encode("utf-8"))


def _serve(rx: Connection, tx: Connection, model: _Model) -> None:
    """Answer requests until ``close`` or the parent's end of the pipe closes."""
    while True:
        head = json.loads(rx.recv_bytes(MAX_HEAD))
        op = head.get("op")
        if op == "init":
            model.init(rx, tx, head)
        elif op == "getwave":
            model.getwave(rx, tx, head)
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
