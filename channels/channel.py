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
from typing import Iterable, Sequence

import numpy as np
import skrf as rf

from . import _validate as check
from .cascading import cascade_pair
from .errors import ChannelError
from .grid import (
    GridInfo,
    check_pulse_grid,
    check_transmits,
    estimate_delay,
    fit_loss_trend,
    resample_response,
    uniform_frequencies,
)
from .ild import ILDResult, insertion_loss_deviation
from .mixed_mode import mixed_mode_to_se, se_to_mixed_mode
from .ports import PortOrder, detect_port_order, port_order
from .quality import QualityReport, check_quality, enforce_passivity
from .response import PulseResponse, StepResponse, check_filters, filter_response

__all__ = ["Channel", "ILDResult", "cascade"]

_KINDS = ("through", "next", "fext")
# mixed-mode indices in scikit-rf's se2gmm order [d1, d2, c1, c2]
_MM_INDEX = {"d1": 0, "d2": 1, "c1": 2, "c2": 3}


class Channel:
    """A differential channel: a mixed-mode scikit-rf network with crosstalk attached.

    Build one with :func:`channels.load`, the builders of :mod:`channels.media`,
    :mod:`channels.library`, or the class methods :meth:`from_single_ended`,
    :meth:`from_mixed_mode` and :meth:`from_differential`.

    All frequencies are in Hz, times in s, impedances in ohm; ``*_db`` values are
    positive losses in dB.
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

    # ------------------------------------------------------------------ loss figures
    def _interp_db(self, values: np.ndarray, f_hz, what: str) -> np.ndarray:
        db = -20 * np.log10(np.maximum(np.abs(values), 1e-300))
        if f_hz is None:
            return db
        f = check.frequencies(f_hz)
        lo, hi = self.f[0], self.f[-1]
        if np.any(f < lo * (1 - 1e-12)) or np.any(f > hi * (1 + 1e-12)):
            raise ChannelError(
                f"{self.name}: {what} asked at {f.min():.6g}..{f.max():.6g} Hz, outside the data "
                f"({lo:.6g}..{hi:.6g} Hz); use .uniform() to extrapolate deliberately"
            )
        out = np.interp(f, self.f, db)
        return out if np.ndim(f_hz) else out[0]

    def insertion_loss_db(self, f_hz=None):
        """Differential insertion loss ``-20 log10 |Sdd21|`` (dB) at ``f_hz`` (default: every point).

        Between points the dB values are interpolated linearly.
        """
        return self._interp_db(self.sdd21, f_hz, "insertion loss")

    def return_loss_db(self, f_hz=None, port: int = 1):
        """Differential return loss ``-20 log10 |Sddii|`` (dB) at port 1 (input) or 2 (output)."""
        if port not in (1, 2):
            raise ChannelError(f"port must be 1 or 2, got {port!r}")
        return self._interp_db(self.sdd11 if port == 1 else self.sdd22, f_hz, "return loss")

    def group_delay_s(self, f_hz=None):
        """Group delay of Sdd21, ``-d(phase)/d(omega)`` (s). Meaningless where |Sdd21| is
        at the noise floor."""
        ph = np.unwrap(np.angle(self.sdd21))
        gd = -np.gradient(ph, 2 * np.pi * self.f)
        if f_hz is None:
            return gd
        f = check.frequencies(f_hz)
        out = np.interp(f, self.f, gd)
        return out if np.ndim(f_hz) else out[0]

    @cached_property
    def delay_s(self) -> float:
        """Propagation delay (s) from the phase slope of the through (see
        :func:`channels.grid.estimate_delay`); an aggressor reports its victim's."""
        if self._reference is not None:
            return self._reference.delay_s
        return estimate_delay(self.f, self.sdd21)

    @cached_property
    def loss_trend_db(self) -> tuple[float, float]:
        """``(a1, a2)`` of the through's loss trend ``a1 sqrt(f) + a2 f`` (dB, f in Hz), used
        to extend responses above the last frequency; an aggressor uses its victim's."""
        if self._reference is not None:
            return self._reference.loss_trend_db
        return fit_loss_trend(self.f, self.sdd21)

    def ild(
        self,
        baud_hz: float | None = None,
        f_min_hz: float | None = None,
        f_max_hz: float | None = None,
        tt_s: float = 9.6e-12,
    ) -> ILDResult:
        """Insertion-loss deviation against the IEEE 802.3 fitted insertion loss.

        Parameters
        ----------
        baud_hz : float, optional
            Signalling rate; when given the fit runs up to ``f_max = baud_hz`` (as the
            IEEE COM code does) and FOM_ILD is computed.
        f_min_hz, f_max_hz : float, optional
            Fit band (default: the first non-zero point, and ``baud_hz`` or the last point).
        tt_s : float
            Rise time ``T_t`` of the FOM_ILD Tx filter (s).
        """
        return insertion_loss_deviation(self.f, self.sdd21, self.name, baud_hz, f_min_hz, f_max_hz, tt_s)

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

    # ------------------------------------------------------------------ time domain
    def _spectrum(self, values: np.ndarray, f_new: np.ndarray) -> np.ndarray:
        return resample_response(self.f, values, f_new, self.delay_s, self.loss_trend_db, self.name)

    def pulse_response(
        self,
        baud_hz: float,
        samples_per_ui: int = 32,
        *,
        rise_time_s: float | None = None,
        rx_bandwidth_hz: float | None = None,
        rx_filter_order: int = 4,
        n_ui: int | None = None,
        require_nyquist: bool = True,
    ) -> PulseResponse:
        """Response to one unit symbol, with the aggressors' on the same time axis.

        Parameters
        ----------
        baud_hz : float
            Symbol rate (Bd); the UI is ``1 / baud_hz``.
        samples_per_ui : int
            Samples per UI (2 to 1024).
        rise_time_s : float, optional
            20-80 % rise time of a Gaussian Tx filter (IEEE 802.3 93A-46).
        rx_bandwidth_hz : float, optional
            -3 dB frequency of a Butterworth Rx filter (93A-20 uses 4th order at 0.75 baud).
        rx_filter_order : int
            Order of that Butterworth.
        n_ui : int, optional
            Record length in UI (default: a power of two covering three times the delay,
            where the first echo of the two ends arrives, plus 200 UI; at least 256).
        require_nyquist : bool
            Refuse (default) when the data stop below the Nyquist frequency ``baud / 2``.

        Raises
        ------
        ChannelError
            Bad parameters, or a grid that cannot give the response
            (:func:`channels.grid.check_pulse_grid`): fewer than 16 points, data that stop
            below Nyquist (below a quarter of it with ``require_nyquist=False``), or a
            frequency step too coarse: the data's time span ``1 / df`` (``df`` the largest
            step up to Nyquist) must hold the delay plus 64 UI, and 256 UI. (A delay longer
            than ``1 / (2 df)`` aliases in the data themselves and cannot be seen in them;
            the 256 UI floor refuses the grids where that is likely.) A through that
            transmits nothing (:func:`channels.grid.check_transmits`).
        """
        baud = check.number(baud_hz, "baud_hz", positive=True)
        if not isinstance(samples_per_ui, (int, np.integer)) or not 2 <= samples_per_ui <= 1024:
            raise ChannelError(f"samples_per_ui must be an integer from 2 to 1024, got {samples_per_ui!r}")
        check_filters(rise_time_s, rx_bandwidth_hz, rx_filter_order)
        if self.kind == "through":
            check_transmits(self.sdd21, self.name)
        tau = self.delay_s
        check_pulse_grid(self.f, baud, tau, self.name, require_nyquist=require_nyquist,
                         f_data_max_hz=self.grid.source_f_max_hz if self.grid else None)
        spu = int(samples_per_ui)
        need_ui = max(tau * baud + 64, 256)
        if n_ui is None:  # room for the triple-transit echo (3 delays) and 200 UI of tail
            n_ui = max(256, 1 << int(np.ceil(np.log2(3 * tau * baud + 200))))
        elif isinstance(n_ui, bool) or not isinstance(n_ui, (int, np.integer)) or n_ui < need_ui:
            raise ChannelError(
                f"n_ui must be an integer >= {int(np.ceil(need_ui))} (delay + 64 UI, at least 256), got {n_ui!r}"
            )
        n_fft = int(n_ui) * spu
        dt = 1.0 / (baud * spu)
        fgrid = np.fft.rfftfreq(n_fft, dt)
        rect = np.zeros(n_fft)
        rect[:spu] = 1.0
        shaping = np.fft.rfft(rect) * filter_response(fgrid, rise_time_s, rx_bandwidth_hz, rx_filter_order)
        n_roll = min(8, int(n_ui) // 16) * spu
        info = self._grid_info(fgrid)

        def one(ch: Channel, kind: str) -> PulseResponse:
            y = np.fft.irfft(ch._spectrum(ch.voltage_transfer(), fgrid) * shaping, n_fft)
            y = np.roll(y, n_roll)
            main = int(np.argmax(y)) if kind == "through" else int(np.argmax(np.abs(y)))
            return PulseResponse(y, dt, baud, spu, -n_roll * dt, main, ch.name, kind, info)

        aggs = tuple(one(a, a.kind) for a in self._aggressors)
        victim = one(self, self.kind)
        return PulseResponse(
            victim.samples, dt, baud, spu, victim.t0_s, victim.main_index, self.name, self.kind, info, aggs
        )

    def step_response(
        self,
        parameter: str = "sdd21",
        *,
        dt_s: float = 1e-12,
        duration_s: float | None = None,
        rise_time_s: float | None = None,
    ) -> StepResponse:
        """Response of a mixed-mode parameter to a unit step (``"sdd11"`` gives a TDR).

        Parameters
        ----------
        parameter : str
            ``"sdd21"``, ``"sdd11"``, ``"sdd22"``, ``"scd21"``...
        dt_s : float
            Sample spacing (s); the grid reaches ``1 / (2 dt)``.
        duration_s : float, optional
            Record length (s), the first sixteenth of it before the step; default 1.25x
            the round-trip delay plus 2 ns.
        rise_time_s : float, optional
            20-80 % rise time of a Gaussian filter on the step.
        """
        dt = check.number(dt_s, "dt_s", positive=True)
        check_filters(rise_time_s, None, 4)
        values = self.parameter(parameter)
        zref = self.reference_impedance_ohm[0 if parameter[-1] == "1" else 1]
        if duration_s is None:
            duration_s = 2.5 * self.delay_s + 2e-9
        duration_s = check.number(duration_s, "duration_s", positive=True)
        n = int(np.ceil(duration_s / dt))
        n += n % 2
        step = float(np.median(np.diff(self.f)))
        if 1.0 / step < duration_s:
            raise ChannelError(
                f"{self.name}: frequency step {step / 1e6:.4g} MHz spans only {1e9 / step:.4g} ns, "
                f"shorter than the requested {duration_s * 1e9:.4g} ns"
            )
        fgrid = np.fft.rfftfreq(n, dt)
        h = self._spectrum(values, fgrid) * filter_response(fgrid, rise_time_s, None, 4)
        n_roll = n // 16  # a pre-roll, so that a filtered (non-causal) edge starts from zero
        impulse = np.roll(np.fft.irfft(h, n), n_roll)
        return StepResponse(np.cumsum(impulse), dt, -n_roll * dt, parameter.lower(), zref, self._grid_info(fgrid))

    # ------------------------------------------------------------------ reporting
    def summary(self, bauds_hz: Iterable[float] = (53.125e9, 106.25e9)) -> dict:
        """Headline figures: band, delay, loss and return loss at each Nyquist, quality."""
        f_hi = self.f[-1]
        rows = []
        for b in bauds_hz:
            nyq = b / 2
            inside = self.f[0] <= nyq <= f_hi
            rows.append(
                {
                    "baud_hz": float(b),
                    "nyquist_hz": float(nyq),
                    "insertion_loss_db": float(self.insertion_loss_db(nyq)) if inside else None,
                    "return_loss_db": float(self.return_loss_db(nyq)) if inside else None,
                }
            )
        q = self.quality
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "ports": self.nports,
            "points": int(self.f.size),
            "f_min_hz": float(self.f[0]),
            "f_max_hz": float(f_hi),
            "port_order": self.port_order.to_dict() if self.port_order else None,
            "delay_s": self.delay_s,
            "nyquist": rows,
            "quality": q.to_dict(),
            "quality_problems": q.problems(),
            "aggressors": [{"name": a.name, "kind": a.kind} for a in self._aggressors],
            "grid": self.grid.to_dict() if self.grid else None,
        }

    def to_dict(self) -> dict:
        """Plain-JSON description (the :meth:`summary`)."""
        return self.summary()

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
    out = parts[0]
    for p in parts[1:]:
        out = cascade_pair(out, p)
    return out
