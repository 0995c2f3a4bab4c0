"""Content-addressed caches for loading channels: parsed Touchstone files, quality reports.

Loading a through with its crosstalk siblings often reads the same bytes again: a sweep
or a notebook that reloads its channels, several victims of one backplane, a folder of
copies. Two caches, both keyed by a SHA-256 of the content (hardware-accelerated on
current x86 and ARM CPUs: about 2 ms for a 4 MB file, a tenth of parsing it), make a
repeat cost a hash and a copy:

* :data:`NETWORKS` -- the network :func:`channels.touchstone.read_network` parsed from a
  file's bytes (with the raw pairs its plausibility checks read), keyed by the bytes and
  the extension (which gives the port count). Every check still runs on every read, so
  every error and warning names the file being read. Only what the fast reader read is
  cached (scikit-rf's parser may warn while parsing; a cached read would not).
  :meth:`LruCache.get` hands out a deep copy: nobody can change the cached one.
* :data:`QUALITY` -- the IEEE 370 report of :func:`channels.quality.check_quality`, keyed
  by the S-parameters and frequencies (reports are immutable: handed out as they are).

Both are bounded least-recently-used caches, thread-safe. ``LINKMODEL_TOUCHSTONE_CACHE_MB``
sets the networks' budget at import (default 256 MB; 0 turns both off);
:func:`channels.touchstone.set_cache_size`, :func:`~channels.touchstone.clear_cache` and
:func:`~channels.touchstone.cache_info` change, empty and report them.
"""

from __future__ import annotations

import copy
import hashlib
import os
import threading
from collections import OrderedDict

import numpy as np

__all__ = ["LruCache", "NETWORKS", "QUALITY", "array_key", "bytes_key"]


class LruCache:
    """A least-recently-used cache bounded by the total size of its values.

    ``put(key, value, size)``; a value larger than the whole budget is not kept. ``copy``
    values are deep-copied on the way in and out.
    """

    def __init__(self, max_size: int, *, copy_values: bool) -> None:
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._size = 0
        self._max = max(int(max_size), 0)
        self._copy = copy_values
        self.hits = self.misses = 0

    @property
    def max_size(self) -> int:
        return self._max

    @max_size.setter
    def max_size(self, value: int) -> None:
        with self._lock:
            self._max = max(int(value), 0)
            self._evict()

    def get(self, key):
        """The value for ``key`` (a deep copy when the cache copies), or ``None``."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            value = item[0]
        return copy.deepcopy(value) if self._copy else value

    def put(self, key, value, size: int) -> None:
        if size > self._max:
            return
        value = copy.deepcopy(value) if self._copy else value
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= old[1]
            self._items[key] = (value, size)
            self._size += size
            self._evict()

    def _evict(self) -> None:
        while self._size > self._max and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self._size -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._size = 0
            self.hits = self.misses = 0

    def info(self) -> dict:
        with self._lock:
            return {"entries": len(self._items), "size": self._size, "max_size": self._max,
                    "hits": self.hits, "misses": self.misses}


def bytes_key(data: bytes, *extra: str) -> tuple:
    """A key for ``data`` (and any strings that change what it parses to)."""
    return (hashlib.sha256(data).digest(), *extra)


def array_key(*arrays: np.ndarray) -> tuple:
    """A key for the contents, dtypes and shapes of ``arrays``."""
    h = hashlib.sha256()
    meta = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(a)
        meta.append((a.dtype.str, a.shape))
    return (h.digest(), tuple(meta))


_MB = 2**20
_budget = os.environ.get("LINKMODEL_TOUCHSTONE_CACHE_MB", "256")
try:
    _budget_bytes = int(float(_budget) * _MB)
except ValueError:
    _budget_bytes = 256 * _MB

NETWORKS = LruCache(_budget_bytes, copy_values=True)
QUALITY = LruCache(4096 if _budget_bytes else 0, copy_values=False)  # one unit per report
