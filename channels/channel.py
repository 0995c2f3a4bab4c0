"""The :class:`Channel` type: a differential channel as a mixed-mode scikit-rf network.

A channel is either *full* (a four-port single-ended network in the canonical order
``[in+, in-, out+, out-]`` and its mixed-mode view ``[d1, d2, c1, c2]``) or
*differential-only* (a two-port that is already the differential mode, such as a
``.s2p`` file). Channels are immutable: every operation returns a new one.

Crosstalk rides along as *aggressors*: channels of kind ``"next"`` or ``"fext"``
whose ``Sdd21`` is the transfer from the aggressor's transmitter to this channel's
receiver.
"""

from __future__ import annotations

from functools import cached_property
from typing import Sequence

import numpy as np
import skrf as rf

from . import _validate as check
from .cascading import cascade_chain, cascade_pair
from .errors import ChannelError
from .channel_figures import ChannelFigures
from .channel_time import ChannelTimeDomain
from .grid import GridInfo, resample_response, uniform_frequencies
from .ild import ILDResult
from .mixed_mode import mixed_mode_to_se, se_to_mixed_mode
from .ports import PortOrder, detect_port_order, port_order
from .quality import QualityReport, check_quality, enforce_passivity

__all__ = ["Channel", "ILDResult", "cascade"]

_KINDS = ("through", "next", "fext")
# mixed-mode indices in scikit-rf's se2gmm order [d1, d2, c1, c2]
_MM_INDEX = {"d1": 0, "d2": 1, "c1": 2, "c2": 3}


class Channel(ChannelFigures, ChannelTimeDomain):
    """A differential channel: a mixed-mode scikit-rf network with crosstalk attached.

    Build one with :func:`channels.load`, the builders of :mod:`channels.media`,
    :mod:`channels.library`, or the class methods :meth:`from_single_ended`,
    :meth:`from_mixed_mode` and :meth:`from_differential`.

    All frequencies are in Hz, times in s, impedances in ohm; ``*_db`` values are
    positive losses in dB. The loss figures and summary come from
    :class:`~channels.channel_figures.ChannelFigures`, the pulse and step responses
    from :class:`~channels.channel_time.ChannelTimeDomain`.
    """

    def __init__(
        self,
        single_ended: rf.Network | None = None,
        differential: rf.Network | None = None,
        *,
        name: str = "",
        kind: str = "through",
        port_order: PortOrder | None = None,
        aggressors: Sequence["Channel"] = (),
        grid: GridInfo | None = None,
        source: str | None = None,
        reference: "Channel | None" = None,
    ) -> None:
        if (single_ended is None) == (differential is None):
            raise ChannelError("a Channel needs exactly one of single_ended (4-port) or differential (2-port)")
        if kind not in _KINDS:
            raise ChannelError(f"kind must be one of {_KINDS}, got {kind!r}")
        if single_ended is not None and single_ended.nports != 4:
            raise ChannelError(f"single_ended must be a 4-port network, got {single_ended.nports} ports")
        if differential is not None and differential.nports != 2:
            raise ChannelError(f"differential must be a 2-port network, got {differential.nports} ports")
        mm = se_to_mixed_mode(single_ended) if single_ended is not None else differential
        self._setup(single_ended, mm, name, kind, port_order, aggressors, grid, source, reference)

    def _setup(self, single_ended, mm, name, kind, port_order, aggressors, grid, source, reference) -> None:
        """The checks and fields of :meth:`__init__`, given the mixed-mode network ``mm``
        (computed from ``single_ended``, or the differential network itself)."""
        if kind not in _KINDS:
            raise ChannelError(f"kind must be one of {_KINDS}, got {kind!r}")
        f = np.asarray(mm.f, dtype=float)
        if f.size < 2 or np.any(np.diff(f) <= 0) or f[0] < 0:
            raise ChannelError("a Channel needs at least 2 strictly increasing, non-negative frequencies")
        if not np.all(np.isfinite(mm.s)):
            raise ChannelError(f"{name or 'network'}: NaN or infinite S-parameters")
        for a in aggressors:
            if not isinstance(a, Channel) or a.kind == "through":
                raise ChannelError("aggressors must be Channels of kind 'next' or 'fext'")
            if not np.array_equal(a.f, f):
                raise ChannelError(
                    f"aggressor {a.name!r} is on a different frequency grid than {name!r}; resample it first"
                )
        self._se = single_ended
        self._mm = mm
        self.name = name or (mm.name or "channel")
        self.kind = kind
        self.port_order = port_order
        self.grid = grid
        self.source = source
        self._reference = reference
        self._aggressors = tuple(a._with_reference(self) for a in aggressors)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_single_ended(
        cls, ntwk: rf.Network, order: str | PortOrder | Sequence = "auto", *, name: str | None = None,
        kind: str = "through",
    ) -> "Channel":
        """A channel from a four-port single-ended network in any port order.

        ``order`` is ``"auto"`` (detected from low-frequency transmission), a name
        such as ``"12_34"``, a :class:`PortOrder`, or ``((in+, in-), (out+, out-))``.
        """
        if ntwk.nports != 4:
            raise ChannelError(
                f"{ntwk.name or 'network'} has {ntwk.nports} ports; a differential channel from a "
                "single-ended network needs 4 (use channels.load for 2, 8, 12 or 16 ports)"
            )
        po = detect_port_order(ntwk)[0] if (isinstance(order, str) and order == "auto") else port_order(order)
        se = ntwk.copy()
        se.renumber(po.permutation, [0, 1, 2, 3])
        return cls(se, name=name or ntwk.name or "", kind=kind, port_order=po)

    @classmethod
    def from_mixed_mode(cls, mm: rf.Network, *, name: str | None = None, kind: str = "through") -> "Channel":
        """A channel from a mixed-mode four-port ordered ``[d1, d2, c1, c2]``."""
        if mm.nports != 4:
            raise ChannelError(f"a mixed-mode channel needs 4 ports, got {mm.nports}")
        return cls(mixed_mode_to_se(mm), name=name or mm.name or "", kind=kind)

    @classmethod
    def from_differential(cls, ntwk: rf.Network, *, name: str | None = None, kind: str = "through") -> "Channel":
        """A differential-only channel from a two-port (its S21 is taken as Sdd21)."""
        if ntwk.nports != 2:
            raise ChannelError(f"a differential-only channel needs a 2-port network, got {ntwk.nports} ports")
        return cls(differential=ntwk.copy(), name=name or ntwk.name or "", kind=kind)

    def _replace(self, **changes) -> "Channel":
        args = dict(
            single_ended=self._se,
            differential=None if self._se is not None else self._mm,
            name=self.name,
            kind=self.kind,
            port_order=self.port_order,
            aggressors=self._aggressors,
            grid=self.grid,
            source=self.source,
            reference=self._reference,
        )
        args.update(changes)
        if "single_ended" in changes or "differential" in changes:
            return Channel(**args)
        # the same network: keep its mixed-mode view rather than computing it again
        out = Channel.__new__(Channel)
        out._setup(args.pop("single_ended"), self._mm, *(args[k] for k in (
            "name", "kind", "port_order", "aggressors", "grid", "source", "reference")))
        return out

    def _with_reference(self, victim: "Channel") -> "Channel":
        return self._replace(reference=victim, aggressors=())

    # ------------------------------------------------------------------ basic views
    @property
    def network(self) -> rf.Network:
        """The mixed-mode scikit-rf network (``[d1, d2, c1, c2]``, or ``[d1, d2]`` for a
        differential-only channel). Treat it as read-only."""
        return self._mm

    @property
    def single_ended(self) -> rf.Network | None:
        """The four-port single-ended network in canonical order ``[in+, in-, out+, out-]``
        (None for a differential-only channel). Treat it as read-only."""
        return self._se

    @property
    def f(self) -> np.ndarray:
        """Frequency points (Hz)."""
        return self._mm.f

    @property
    def nports(self) -> int:
        """4 for a full channel, 2 for a differential-only one."""
        return 4 if self._se is not None else 2

    @property
    def has_common_mode(self) -> bool:
        return self._se is not None

    @property
    def aggressors(self) -> tuple["Channel", ...]:
        """Crosstalk channels (kind ``"next"`` or ``"fext"``) into this channel's receiver."""
        return self._aggressors

    def _mm_param(self, out: str, inp: str) -> np.ndarray:
        if (out[0] == "c" or inp[0] == "c") and self._se is None:
            raise ChannelError(
                f"{self.name}: S{out[0]}{inp[0]}{out[1]}{inp[1]} needs the common mode, and this "
                "channel is differential-only (loaded from a 2-port)"
            )
        return self._mm.s[:, _MM_INDEX[out], _MM_INDEX[inp]]

    def parameter(self, name: str) -> np.ndarray:
        """A mixed-mode parameter by name: ``"sdd21"``, ``"scd21"``, ``"scc11"``... (complex)."""
        key = name.lower()
        if len(key) != 5 or key[0] != "s" or key[1] not in "dc" or key[2] not in "dc" or key[3:] not in {
            "11", "12", "21", "22"
        }:
            raise ChannelError(f"unknown mixed-mode parameter {name!r}: expected e.g. 'sdd21', 'scd21', 'scc11'")
        return self._mm_param(key[1] + key[3], key[2] + key[4])

    @property
    def sdd21(self) -> np.ndarray:
        """Differential insertion (through) transfer, complex, per frequency point."""
        return self._mm_param("d2", "d1")

    @property
    def sdd12(self) -> np.ndarray:
        return self._mm_param("d1", "d2")

    @property
    def sdd11(self) -> np.ndarray:
        """Differential reflection at the input."""
        return self._mm_param("d1", "d1")

    @property
    def sdd22(self) -> np.ndarray:
        """Differential reflection at the output."""
        return self._mm_param("d2", "d2")

    @property
    def scd21(self) -> np.ndarray:
        """Differential-to-common conversion from input to output."""
        return self._mm_param("c2", "d1")

    @property
    def reference_impedance_ohm(self) -> tuple[float, float]:
        """Differential reference impedances of the input and output ports (ohm)."""
        z0 = self._mm.z0
        return float(z0[0, 0].real), float(z0[0, 1].real)

    def voltage_transfer(self) -> np.ndarray:
        """Received differential voltage over half the open-circuit source voltage.

        Equals Sdd21 when both ports have the same reference impedance; otherwise
        ``Sdd21 * sqrt(Z_out / Z_in)`` (power-wave S-parameters, real references).
        """
        zi, zo = self.reference_impedance_ohm
        return self.sdd21 * np.sqrt(zo / zi)

    # ------------------------------------------------------------------ quality
    @cached_property
    def quality(self) -> QualityReport:
        """IEEE 370 passivity, reciprocity and causality of the underlying network."""
        return check_quality(self._se if self._se is not None else self._mm)

    def enforce_passivity(self) -> "Channel":
        """A copy whose S-matrix has no singular value above 1 at any frequency."""
        if self._se is not None:
            return self._replace(single_ended=enforce_passivity(self._se),
                                 aggressors=[a.enforce_passivity() for a in self._aggressors])
        return self._replace(differential=enforce_passivity(self._mm),
                             aggressors=[a.enforce_passivity() for a in self._aggressors])

    # ------------------------------------------------------------------ grids
    def _network_on(self, f_new: np.ndarray) -> rf.Network:
        """The underlying network (SE or differential) moved onto ``f_new``."""
        base = self._se if self._se is not None else self._mm
        s = resample_response(self.f, base.s, f_new, self.delay_s, self.loss_trend_db, self.name)
        out = rf.Network(frequency=rf.Frequency.from_f(f_new, unit="hz"), s=s, z0=base.z0[0], name=base.name)
        return out

    def _grid_info(self, f_new: np.ndarray) -> GridInfo:
        """What moving onto ``f_new`` keeps from the data and what it extrapolates."""
        src = self.grid
        f_lo = src.source_f_min_hz if src else float(self.f[0])
        f_hi = src.source_f_max_hz if src else float(self.f[-1])
        below = bool(f_new[0] < f_lo * (1 - 1e-12))
        above = bool(f_new[-1] > f_hi * (1 + 1e-12))
        return GridInfo(
            f_min_hz=float(f_new[0]),
            f_max_hz=float(f_new[-1]),
            n_points=int(f_new.size),
            source_f_min_hz=f_lo if below else float(f_new[0]),
            source_f_max_hz=f_hi if above else float(f_new[-1]),
            dc_extrapolated=below,
            extrapolated_above_hz=f_hi if above else None,
            reference_delay_s=self.delay_s,
            loss_trend_db=self.loss_trend_db,
        )

    def _moved(self, f_new: np.ndarray) -> "Channel":
        ntwk = self._network_on(f_new)
        aggs = [a._moved(f_new) for a in self._aggressors]
        info = self._grid_info(f_new)
        if self._se is not None:
            return self._replace(single_ended=ntwk, aggressors=aggs, grid=info)
        return self._replace(differential=ntwk, aggressors=aggs, grid=info)

    def resample(self, f_hz) -> "Channel":
        """The channel on new frequency points inside the data's band (Hz).

        Interpolation follows :mod:`channels.grid` (de-rotated cubic spline). Points
        outside the band raise :class:`ChannelError`; extrapolate with :meth:`uniform`.
        """
        f = check.frequencies(f_hz)
        if f.size < 2 or np.any(np.diff(f) <= 0):
            raise ChannelError("resample needs at least 2 strictly increasing frequencies")
        if f[0] < self.f[0] * (1 - 1e-12) or f[-1] > self.f[-1] * (1 + 1e-12):
            raise ChannelError(
                f"{self.name}: resample to {f[0]:.6g}..{f[-1]:.6g} Hz leaves the data "
                f"({self.f[0]:.6g}..{self.f[-1]:.6g} Hz); use .uniform() to extrapolate deliberately"
            )
        return self._moved(f)

    def uniform(self, f_max_hz: float, df_hz: float | None = None) -> "Channel":
        """The channel on a uniform grid ``0, df, ..., f_max`` (Hz), extrapolating deliberately.

        Below the first point: extrapolation to DC; above the last: the extension of
        :mod:`channels.grid`. ``df_hz`` defaults to the data's smallest step. The
        returned channel's :attr:`grid` says what was extrapolated.
        """
        f_max_hz = check.number(f_max_hz, "f_max_hz", positive=True)
        df = check.number(df_hz, "df_hz", positive=True) if df_hz is not None else float(np.min(np.diff(self.f)))
        return self._moved(uniform_frequencies(f_max_hz, df))

    # ------------------------------------------------------------------ composition
    def cascade(self, other: "Channel") -> "Channel":
        """This channel followed by ``other`` (both on the same frequency grid), cascaded on
        arrays (:mod:`channels.cascading`).

        Crosstalk is referred to the far receiver, assuming aggressor lanes share the
        victim's through path: a FEXT aggressor of ``self`` continues through
        ``other``; a FEXT aggressor of ``other`` is preceded by ``self``'s through; a
        NEXT aggressor of ``self`` reaches it backwards through ``other`` and leaves
        forwards through it; a NEXT aggressor of ``other`` is unchanged.
        """
        return cascade_pair(self, other)

    def __pow__(self, other: "Channel") -> "Channel":
        """``a ** b`` is ``a.cascade(b)`` (as for scikit-rf networks)."""
        return self.cascade(other)

    def with_aggressors(self, *aggressors: "Channel") -> "Channel":
        """A copy carrying these crosstalk channels (kind ``next``/``fext``) in addition."""
        for a in aggressors:
            if not isinstance(a, Channel):
                raise ChannelError(f"an aggressor must be a Channel, not {type(a).__name__}")
            if a.kind == "through":
                raise ChannelError(f"aggressor {a.name!r} has kind 'through'; give it kind 'next' or 'fext'")
        return self._replace(aggressors=self._aggressors + tuple(aggressors))

    def without_aggressors(self) -> "Channel":
        """The same channel with no crosstalk attached."""
        return self._replace(aggressors=())

    def reversed(self) -> "Channel":
        """The same structure seen from its other end (ports swapped end for end), named
        ``<name>_far``, without aggressors (crosstalk belongs to a direction): the far
        host or plug of a symmetric link."""
        net = self.single_ended if self.single_ended is not None else self.network
        perm = [2, 3, 0, 1] if net.nports == 4 else [1, 0]
        out = rf.Network(frequency=net.frequency, s=net.s[:, perm][:, :, perm], z0=net.z0[:, perm], name=net.name)
        if self.single_ended is not None:
            return Channel(out, name=self.name + "_far")
        return Channel(differential=out, name=self.name + "_far")

    def renamed(self, name: str) -> "Channel":
        """The same channel under another name."""
        return self._replace(name=str(name))

    def as_kind(self, kind: str) -> "Channel":
        """The same network labelled as a ``"through"``, ``"next"`` or ``"fext"`` channel."""
        return self._replace(kind=kind, aggressors=() if kind != "through" else self._aggressors)

    def __repr__(self) -> str:
        mode = "4-port mixed-mode" if self._se is not None else "differential-only"
        return (
            f"Channel({self.name!r}, {mode}, {self.f[0] / 1e9:.4g}-{self.f[-1] / 1e9:.4g} GHz, "
            f"{self.f.size} points, {len(self._aggressors)} aggressors)"
        )


def cascade(*parts: Channel, grid: str | np.ndarray | None = None) -> Channel:
    """Cascade channels in order (input of the first to output of the last).

    Parameters
    ----------
    *parts : Channel
        Two or more channels.
    grid : None, ``"common"`` or array of Hz
        None: all parts must share one frequency grid. ``"common"``: resample all
        onto a uniform grid from DC to the lowest last frequency among the parts, with
        the smallest step among them. An array: resample (and, deliberately, extrapolate)
        every part onto it (it must start at 0 Hz and be uniform).

    Returns
    -------
    Channel
        The cascade, on the shared or chosen grid.
    """
    if len(parts) < 1:
        raise ChannelError("cascade needs at least one channel")
    for p in parts:
        if not isinstance(p, Channel):
            raise ChannelError(f"cascade takes Channels, got {type(p).__name__}")
    if grid is not None:
        if isinstance(grid, str):
            if grid != "common":
                raise ChannelError(f"grid must be None, 'common' or an array of frequencies, got {grid!r}")
            f_max = min(p.f[-1] for p in parts)
            df = min(float(np.min(np.diff(p.f))) for p in parts)
            f_new = uniform_frequencies(f_max, df)
            f_new = f_new[f_new <= f_max * (1 + 1e-12)]
        else:
            f_new = check.frequencies(grid, "grid", increasing=True, min_points=2)
        parts = tuple(p._moved(f_new) for p in parts)
    out = cascade_chain(parts)  # three or more plain parts at once, the same arithmetic
    if out is not None:
        return out
    out = parts[0]
    for p in parts[1:]:
        out = cascade_pair(out, p)
    return out
