"""Command-line arguments checked where argparse reads them (a bad value is refused with
argparse's usage line and status 2, before any work), and output paths checked before the
work that would write them."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from ..errors import ConfigError

__all__ = ["baud_gbd", "count", "output_dir", "output_file", "save_figure"]


def baud_gbd(text: str) -> float:
    """A symbol rate in GBd: a finite number above 0 and at most 10,000 (``0``, negatives,
    ``nan``, ``inf`` and ``1e300`` are refused)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(v) and 0.0 < v <= 10_000.0):
        raise argparse.ArgumentTypeError(f"a symbol rate in GBd must be above 0 and at most 10000, got {text!r}")
    return v


def count(lo: int, hi: int, what: str):
    """An argparse type: an integer from ``lo`` to ``hi`` (``what`` it counts, for the message)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be from {lo:,} to {hi:,}, got {text!r}")
        return v

    parse.__name__ = what.lstrip("-")  # argparse names the type in its messages
    return parse


def _nearest_existing(p: Path) -> Path:
    p = p.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def output_file(path: str, option: str) -> Path:
    """A file to be written at the end of a command, checked before the work: its folder
    exists and is writable, and the name is not a folder (a failure at the write itself is
    an ``OSError`` naming the file)."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{option} {path!r} is a folder: give a file name")
    folder = p.absolute().parent
    if not folder.is_dir():
        raise ConfigError(f"{option} {path!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path!r}: the folder {str(folder)!r} is not writable")
    return p


def output_dir(path: str, option: str) -> Path:
    """A folder to be created (with its parents) and written at the end of a command,
    checked before the work: not an existing file, and its nearest existing ancestor a
    writable folder."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{option} {path!r} is a file, not a folder: give a folder for the output")
    base = _nearest_existing(p)
    if not base.is_dir():
        raise ConfigError(f"{option} {path!r}: {str(base)!r} is a file, so the folder cannot be made")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path!r}: the folder {str(base)!r} is not writable")
    return p


def save_figure(fig, path, **kwargs) -> None:
    """``fig.savefig(path)``; a failure to write (a full disk, a folder removed meanwhile) is
    an ``OSError`` naming the file, whatever the backend's own message."""
    try:
        fig.savefig(path, **kwargs)
    except OSError as exc:
        raise OSError(exc.errno, f"could not write the plot: {exc.strerror or exc}", str(path)) from exc
