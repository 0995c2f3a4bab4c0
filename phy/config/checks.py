"""The checks of a file's values: each is called with a value and gives ``None`` when the
value fits, else what it must be ("a finite number > 0"); ``words`` is what it accepts,
as the generated reference prints it. One vocabulary for link, sweep and rack files."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Number:
    """A finite number (``integer``: a whole one), ``> 0`` when ``positive``, within
    ``lo`` and ``hi`` (inclusive) when given."""

    lo: float | None = None
    hi: float | None = None
    positive: bool = False
    integer: bool = False

    def _rules(self) -> str:
        if self.lo is not None and self.hi is not None and not self.positive:
            return f"from {self.lo:g} to {self.hi:g}"
        rules = (["> 0"] if self.positive else []) + ([f">= {self.lo:g}"] if self.lo is not None else []) + (
            [f"<= {self.hi:g}"] if self.hi is not None else [])
        return " and ".join(rules)

    @property
    def want(self) -> str:
        rules = self._rules()
        return ("a whole number" if self.integer else "a finite number") + (" " + rules if rules else "")

    def __call__(self, v) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return "a number"
        if self.integer and not float(v).is_integer():
            return "a whole number"
        if (not math.isfinite(v) or (self.positive and v <= 0) or (self.lo is not None and v < self.lo)
                or (self.hi is not None and v > self.hi)):
            return self.want
        return None

    @property
    def words(self) -> str:
        rules = self._rules()
        return ("whole number" if self.integer else "number") + (" " + rules.replace(" and ", ", ") if rules else "")


@dataclass(frozen=True)
class Choice:
    """One of ``options`` (strings)."""

    options: tuple

    @property
    def want(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)

    def __call__(self, v) -> str | None:
        return None if isinstance(v, str) and v in self.options else self.want

    @property
    def words(self) -> str:
        return " \\| ".join(f'`"{o}"`' for o in self.options)


@dataclass(frozen=True)
class Text:
    """A non-empty string."""

    def __call__(self, v) -> str | None:
        return None if isinstance(v, str) and v else self.want

    want = "a non-empty string"
    words = "non-empty string"


@dataclass(frozen=True)
class Boolean:
    """``true`` or ``false``."""

    def __call__(self, v) -> str | None:
        return None if isinstance(v, bool) else self.want

    want = "true or false"
    words = "`true` \\| `false`"


@dataclass(frozen=True)
class ListOf:
    """A non-empty list, each value passing ``item``."""

    item: object

    def __call__(self, v) -> str | None:
        if isinstance(v, list) and v and all(self.item(x) is None for x in v):
            return None
        return self.want

    @property
    def want(self) -> str:
        return "a non-empty list, each " + self.item.want

    @property
    def words(self) -> str:
        return "non-empty list of " + self.item.words


@dataclass(frozen=True)
class Table:
    """A table (an inline ``{...}`` or a ``[section.sub]``) of names to numbers, booleans
    or strings: an IBIS-AMI model's parameter values."""

    def __call__(self, v) -> str | None:
        ok = isinstance(v, dict) and all(isinstance(k, str) and k and isinstance(x, (bool, int, float, str))
                                         and not (isinstance(x, float) and not math.isfinite(x)) for k, x in v.items())
        return None if ok else self.want

    want = "a table of names to finite numbers, booleans or strings"
    words = "table of names to numbers, booleans or strings"


def choice(*options) -> Choice:
    """:class:`Choice` of ``options``."""
    return Choice(tuple(options))


#: The schemes of a Dask scheduler's address (``distributed.comm``'s transports).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                   r"[A-Za-z0-9])?)*\.?")


@dataclass(frozen=True)
class SchedulerAddress:
    """A Dask scheduler address as Dask reads it: ``[scheme://]host:port`` (scheme one of
    :data:`SCHEDULER_SCHEMES`, default tcp; host a name, an IPv4 address or ``[IPv6]``;
    port 1 to 65535), or ``inproc://host/pid/n``. Checked before anything is contacted:
    called with a value, None when it fits, else what it must be (as :mod:`phy.config.checks`)."""

    want = ("a Dask scheduler address such as 'tcp://10.0.0.5:8786' ([scheme://]host:port, scheme one of "
            + ", ".join(SCHEDULER_SCHEMES) + ")")
    words = "address `[scheme://]host:port` (" + ", ".join(SCHEDULER_SCHEMES) + ")"

    def __call__(self, v) -> str | None:
        want = self.want
        if not isinstance(v, str) or not v or len(v) > 300 or not v.isprintable() or any(c.isspace() for c in v):
            return want
        scheme, sep, loc = v.partition("://")
        if not sep:
            scheme, loc = "tcp", v
        if scheme not in SCHEDULER_SCHEMES:
            return want
        if scheme == "inproc":
            return None if re.fullmatch(r"[^/]+/\d+/\d+", loc) else want
        host, colon, port = loc.rpartition(":")
        if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
            return want
        if host.startswith("[") and host.endswith("]"):
            import ipaddress

            try:
                ipaddress.IPv6Address(host[1:-1])
                return None
            except ValueError:
                return want
        return None if _HOST.fullmatch(host) else want
