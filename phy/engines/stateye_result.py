"""The statistical eye's result, :class:`StatEye`: the cumulative voltage distribution at
each time offset of a UI, and what is read from it (error ratios, heights, widths,
bathtubs, the plot). :func:`phy.engines.stateye.statistical_eye` computes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._plot import axes as _axes
from .. import _validate
from .._validate import finite_vector, integer
from ..errors import ConfigError
from ..serdes import PreparedLink

__all__ = ["StatEye"]


@dataclass(frozen=True, eq=False)
class StatEye:
    """The statistical eye of a link.

    Attributes
    ----------
    time_s : ndarray (P,)
        Offsets from the sampling point (s), one UI wide.
    voltage_v : ndarray (nv,)
        Voltage grid (V) at the slicer.
    cdf : ndarray (P, nv)
        Distribution function of ``ISI + XT + N`` (everything but the main cursor's term)
        at each offset.
    main_v : ndarray (P,)
        Main cursor at each offset, for a full-swing symbol (V).
    levels : ndarray
        Normalised symbol amplitudes.
    thresholds_v : ndarray
    sigma_v : dict
        The Gaussian terms (rms V at the sampling point): ``rx``, ``tx``, ``jitter``.
    link : PreparedLink
    parts : tuple
        With duty-cycle distortion the eye is a mixture of two, one per parity of the
        sampled symbol (alternate Tx edges are early and late), each ``(weight, cdf,
        main_v)``; ``cdf`` and ``main_v`` are then their averages, for plots.
    isi_v : ndarray or None
        The residual interference cursors at the sampling point (V, full-swing symbol;
        the main cursor's entry 0, the DFE's taps taken away): their UI-to-UI correlation
        is what a sequence detector sees (:meth:`mlsd`).
    """

    time_s: np.ndarray
    voltage_v: np.ndarray
    cdf: np.ndarray
    main_v: np.ndarray
    levels: np.ndarray
    thresholds_v: np.ndarray
    sigma_v: dict
    ui_s: float
    link: PreparedLink
    parts: tuple = ()
    isi_v: np.ndarray | None = None

    @property
    def centre(self) -> int:
        return int(np.argmin(np.abs(self.time_s)))

    def _components(self):
        """``(weight, cdf, main_v)`` of each eye in the mixture (one unless DCD splits it)."""
        return self.parts or ((1.0, self.cdf, self.main_v),)

    def _column(self, column) -> int:
        """A time offset's index (the sampling point for None), checked."""
        return self.centre if column is None else _validate.column(column, self.time_s.size)

    def _F(self, p: int, x, cdf=None) -> np.ndarray:
        return np.interp(x, self.voltage_v, (self.cdf if cdf is None else cdf)[p], left=0.0, right=1.0)

    def ser(self, column: int | None = None, thresholds_v=None) -> float:
        """Symbol error ratio with the slicer's thresholds (or others, V, one per eye) at a
        time offset (default: the sampling point)."""
        p = self._column(column)
        M = self.levels.size
        th = self.thresholds_v if thresholds_v is None else finite_vector(thresholds_v, "thresholds_v")
        if th.size != M - 1:
            raise ConfigError(f"thresholds_v must hold {M - 1} values (one per eye), got {th.size}")
        # per level m: below its lower threshold (m > 0), then above its upper one (m < M - 1)
        pairs = [(m, up) for m in range(M) for up in (False, True) if (m < M - 1 if up else m > 0)]
        total = 0.0
        for wgt, cdf, main in self._components():
            lv = self.levels * main[p]
            x = np.array([th[m] - lv[m] if up else th[m - 1] - lv[m] for m, up in pairs])
            err = 0.0
            for (_m, up), f in zip(pairs, self._F(p, x, cdf)):  # one interpolation, the same sum
                err += 1.0 - f if up else f
            total += wgt * err
        return float(total / M)

    def ser_dfe(self) -> float:
        """Symbol error ratio at the sampling point including DFE error propagation: the
        detector error ratio times the mean errors per burst of the DFE's error chain for
        its first six taps, its transitions taken from this eye and conditioned on the
        data (:func:`phy.engines.dfe_chain.dfe_transitions`; the mean from :func:`fec.analysis.dfe_burst_means`,
        exact for that chain), at most ``1 - 1/M``."""
        ser = self.ser()
        b = self.link.dfe[:6]
        if b.size == 0 or ser <= 0 or not np.all(np.abs(b) < 1):
            return ser
        from fec.analysis import dfe_burst_means

        from .dfe_chain import dfe_transitions

        M = self.levels.size
        errors, _span = dfe_burst_means(b, min(ser, 0.5), "pam4" if M == 4 else "nrz",
                                        transitions=dfe_transitions(self))
        return float(min(ser * errors, 1.0 - 1.0 / M))

    def mlsd(self):
        """The 1-tap MLSD (802.3dj 178A.1.10's Viterbi detector on ``1 + b D``, ``b`` the first
        DFE tap) at the sampling point: its error events, symbol error ratio and bursts
        (:func:`phy.engines.mlsd.eye_mlsd`)."""
        from .mlsd import eye_mlsd_cached

        return eye_mlsd_cached(self)

    def ser_mlsd(self) -> float:
        """Symbol error ratio at the sampling point of a 1-tap MLSD in place of the DFE's
        first tap (every error of every error event; :meth:`mlsd`), at most ``1 - 1/M``.
        Where the slicer's error ratio is below what the MLSD's sums resolve
        (:data:`phy.engines.mlsd.RESOLVED`), :meth:`ser_dfe`: no gain is claimed there; and
        an MLSD error ratio below that resolution is reported at it (or at the DFE's, if
        lower): its tails are cut there, so a smaller figure, down to 0, is not a result."""
        from .mlsd import RESOLVED

        if self.ser() < RESOLVED:
            return self.ser_dfe()
        floor = min(self.ser_dfe(), RESOLVED)
        return float(min(max(self.mlsd().ser, floor), 1.0 - 1.0 / self.levels.size))

    def ber(self, column: int | None = None) -> float:
        """Bit error ratio, Gray coded: errors to a neighbouring level flip one bit of
        ``log2 M``."""
        return self.ser(column) / (2 if self.levels.size == 4 else 1)

    def eye_ber(self, p: int, k: int, v) -> np.ndarray:
        """Error ratio of eye ``k`` (between levels ``k`` and ``k+1``) were its threshold at
        ``v``, at offset column ``p``: ``(P(y_k > v) + P(y_(k+1) < v)) / M``."""
        p = _validate.column(p, self.time_s.size)
        k = self._eye(k)
        v = np.asarray(v, dtype=float)
        if not np.all(np.isfinite(v)):
            raise ConfigError("eye_ber needs finite threshold voltages v (V)")
        out = 0.0
        for wgt, cdf, main in self._components():
            lv = self.levels * main[p]
            out = out + wgt * ((1.0 - self._F(p, v - lv[k], cdf)) + self._F(p, v - lv[k + 1], cdf))
        return out / self.levels.size

    def ber_map(self) -> np.ndarray:
        """Error ratio over (time offset, voltage): at each voltage, the eye whose levels
        bracket it (the contour plot's data)."""
        P, nv = self.cdf.shape
        out = np.ones((P, nv))
        for p in range(P):
            lv = self.levels * self.main_v[p]
            for k in range(lv.size - 1):
                sel = (self.voltage_v >= lv[k]) & (self.voltage_v <= lv[k + 1])
                out[p, sel] = self.eye_ber(p, k, self.voltage_v[sel])
        return out

    def heights_v(self, target: float, column: int | None = None) -> np.ndarray:
        """Height of each eye where its error ratio stays at or below ``target`` (V);
        ``target`` an error ratio in (0, 1]."""
        target = _validate.probability(target, "target")
        p = self._column(column)
        lv = self.levels * self.main_v[p]
        out = []
        for k in range(lv.size - 1):
            v = np.linspace(lv[k], lv[k + 1], 2001)
            ok = self.eye_ber(p, k, v) <= target
            out.append(float(ok.sum() * (v[1] - v[0])) if ok.any() else 0.0)
        return np.array(out)

    def widths_s(self, target: float) -> np.ndarray:
        """Width of each eye (s): the span of offsets around the sampling point where some
        threshold gives an error ratio at or below ``target`` (an error ratio in (0, 1])."""
        target = _validate.probability(target, "target")
        P = self.time_s.size
        good = np.array([self.heights_v(target, p) > 0 for p in range(P)])  # (P, eyes)
        c = self.centre
        dt = self.time_s[1] - self.time_s[0] if P > 1 else self.link.pulse.dt_s  # one column: its own width
        out = []
        for k in range(good.shape[1]):
            if not good[c, k]:
                out.append(0.0)
                continue
            lo = c
            while lo > 0 and good[lo - 1, k]:
                lo -= 1
            hi = c
            while hi < P - 1 and good[hi + 1, k]:
                hi += 1
            out.append(float((hi - lo + 1) * dt))
        return np.array(out)

    def vertical_bathtub(self, eye: int | None = None, n: int = 401) -> tuple[np.ndarray, np.ndarray]:
        """(threshold voltage, error ratio) across one eye at the sampling point, at ``n``
        thresholds (2 to 100,000)."""
        p = self.centre
        k = (self.levels.size - 1) // 2 if eye is None else self._eye(eye)
        n = integer(n, "n", 2, 100_000)
        lv = self.levels * self.main_v[p]
        v = np.linspace(lv[k], lv[k + 1], n)
        return v, self.eye_ber(p, k, v)

    def horizontal_bathtub(self) -> tuple[np.ndarray, np.ndarray]:
        """(time offset, symbol error ratio at the slicer thresholds)."""
        return self.time_s, np.array([self.ser(p) for p in range(self.time_s.size)])

    def _eye(self, k) -> int:
        """An eye's index, one per threshold, checked."""
        return integer(k, "eye", 0, self.levels.size - 2)

    def to_dict(self, target: float = 1e-4) -> dict:
        target = _validate.probability(target, "target")
        t, s = self.horizontal_bathtub()
        return {
            "ser": self.ser(),
            "ser_dfe": self.ser_dfe(),
            "ber": self.ber(),
            "target": target,
            "heights_v": self.heights_v(target).tolist(),
            "widths_s": self.widths_s(target).tolist(),
            "sigma_v": dict(self.sigma_v),
            "main_v": float(self.main_v[self.centre]),
            "bathtub_ser": s.tolist(),
            "time_s": t.tolist(),
        }

    def _plot_map(self) -> np.ndarray:
        """:meth:`ber_map`, and beyond the outer levels the error ratio a threshold there
        would see (the outer levels' tails, where the signal reaches): the plot's data."""
        out = self.ber_map()
        v, M = self.voltage_v, self.levels.size
        for p in range(self.time_s.size):
            up = dn = 0.0
            for wgt, cdf, mn in self._components():
                lv = self.levels * mn[p]
                up = up + wgt * (1.0 - self._F(p, v - lv.max(), cdf))
                dn = dn + wgt * self._F(p, v - lv.min(), cdf)
            lv = self.levels * self.main_v[p]
            hi, lo = v > lv.max(), v < lv.min()
            out[p, hi], out[p, lo] = up[hi] / M, dn[lo] / M
        return out

    def plot(self, ax=None, targets=(1e-3, 1e-6, 1e-9, 1e-12)):
        """BER contours over time (ps) and voltage (mV) (an eye of ``columns="all"``), with a
        colour bar of log10 BER (the contours marked on it).

        Between the outer levels the colour is :meth:`ber_map`; beyond them, the error ratio
        a threshold there would see (the outer levels' tails: where the signal reaches). The
        voltage axis is fitted to the lowest target's contour. The colour bar marks every
        contour; the outermost and innermost are labelled where they cross the middle eye's
        threshold.
        """
        if self.time_s.size < 2:
            raise ConfigError("plot needs the eye over the whole UI: compute it with columns='all'")
        from matplotlib import patheffects

        targets = [_validate.probability(t, "targets", one=False) for t in np.atleast_1d(targets)]
        if not targets:
            raise ConfigError("plot needs at least one target error ratio")
        ax = _axes(ax)
        lows = sorted(float(np.log10(t)) for t in targets)
        floor = np.floor(lows[0]) - 2.0  # below about 1e-15, 1 - cdf is rounding
        m = np.maximum(np.log10(np.clip(self._plot_map(), 1e-300, 1)), floor)
        t, v = self.time_s * 1e12, self.voltage_v * 1e3
        cf = ax.contourf(t, v, m.T, levels=np.arange(floor, 0.25, 0.5), cmap="viridis")
        cs = ax.contour(t, v, m.T, levels=lows, colors="w", linewidths=0.8, linestyles="solid")
        cb = ax.figure.colorbar(cf, ax=ax, pad=0.02, ticks=sorted({*lows, 0.0}))
        cb.set_label("log10 BER (white: the contours)")
        cb.add_lines(cs)
        # the outermost contour (left) and the innermost (right) labelled where they cross
        # the middle eye's threshold, the text in the open space beside the eye (nested
        # contours sit too close to label each inline: the colour bar marks them all)
        row = int(np.argmin(np.abs(self.voltage_v - self.thresholds_v[self.thresholds_v.size // 2])))
        c, line = self.centre, m[:, row]

        def edge(lev, step):
            p = c
            while 0 <= p + step < t.size and line[p + step] <= lev:
                p += step
            return t[p]

        if line[c] <= lows[-1]:
            outer = (edge(lows[-1], -1), edge(lows[-1], 1))
            for lev, side, x_text in ((lows[-1], -1, (t[0] + outer[0]) / 2), (lows[0], 1, (t[-1] + outer[1]) / 2)):
                if line[c] <= lev:
                    ax.annotate(f"$10^{{{lev:.0f}}}$", xy=(edge(lev, side), v[row]), xytext=(x_text, v[row]),
                                ha="center", va="center", fontsize=10, color="w",
                                arrowprops=dict(arrowstyle="->", color="w", lw=0.8, shrinkA=2, shrinkB=0),
                                path_effects=[patheffects.withStroke(linewidth=2.5, foreground="black")])
        reach = np.flatnonzero((m >= lows[0]).any(axis=0))
        lo, hi = v[reach[0]], v[reach[-1]]
        pad = 0.08 * (hi - lo)
        ax.set_ylim(max(lo - pad, v[0]), min(hi + pad, v[-1]))
        ax.set_xlim(t[0], t[-1])
        ax.set_xlabel("time from sampling instant (ps)")
        ax.set_ylabel("slicer input (mV)")
        return ax
