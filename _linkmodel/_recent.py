"""A bounded memory of recent results: the one mechanism behind the engines' small caches
(the channel figures and ERLs a sweep's FEC choices share, the pulse through the front end
an eye's sampling phases share, the rest-of-ISI PMF an eye and its noisier copies share).

:class:`Recent` is a ``dict`` (so its entries can be read, counted and cleared as such)
that keeps at most ``size`` entries, the most recently used last, and forgets the least
recently used beyond that. Keys built from ``id()`` must come with a ``valid`` check that
the entry still belongs to the same objects (an id is reused once its object is gone).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable


class Recent(dict):
    """At most ``size`` entries, the most recently used last."""

    def __init__(self, size: int):
        super().__init__()
        self.size = int(size)

    def remember(self, key: Hashable, make: Callable[[], object], valid: Callable[[object], bool] | None = None):
        """The entry of ``key`` (made by ``make()`` when absent, or when ``valid(entry)``
        is false), now the most recently used."""
        hit = self.pop(key, None)
        if hit is None or (valid is not None and not valid(hit)):
            hit = make()
        self[key] = hit
        while len(self) > self.size:
            self.pop(next(iter(self)))
        return hit
