"""Eye diagrams, bathtubs and waveforms measured by the time-domain simulator, and their
plots (matplotlib is optional: plot functions take ``ax=None`` and return the Axes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._plot import axes as _axes
from ... import _validate

__all__ = ["EyeDiagram", "Waveform"]


@dataclass(frozen=True, eq=False)
class EyeDiagram:
    """A histogram of the slicer input (after the Rx FFE and the DFE's correction) over
    one UI of time offsets around the sampling instant.

    Attributes
    ----------
    counts : ndarray (n_times, n_bins)
        Hits per time offset and voltage bin (values outside the range are clipped into
        the first and last bins).
    time_s : ndarray
        Time offsets from the sampling instant (s), ``-UI/2 .. UI/2 - dt``.
    voltage_edges_v : ndarray
        Bin edges (V).
    thresholds_v, levels_v : ndarray
        The slicer thresholds and the ideal levels at the slicer (V).
    column_errors : ndarray
        Symbol errors a slicer would make at each time offset (the horizontal bathtub).
    crossings : ndarray
        Zero crossings of the ADC input (before the Rx FFE and DFE) by time offset, on a
        grid ``len(crossings) / len(time_s)`` times finer than the columns, the crossing
        time found by linear interpolation between samples.
    n_ui : int
    ui_s : float
    modulation : str
    """

    counts: np.ndarray
    time_s: np.ndarray
    voltage_edges_v: np.ndarray
    thresholds_v: np.ndarray
    levels_v: np.ndarray
    column_errors: np.ndarray
    crossings: np.ndarray
    n_ui: int
    ui_s: float
    modulation: str

    @property
    def voltage_v(self) -> np.ndarray:
        """Bin centres (V)."""
        e = self.voltage_edges_v
        return 0.5 * (e[1:] + e[:-1])

    @property
    def centre(self) -> int:
        """Index of the sampling instant among the time offsets."""
        return int(np.argmin(np.abs(self.time_s)))

    def bathtub(self) -> tuple[np.ndarray, np.ndarray]:
        """Horizontal bathtub: (time offset in s, symbol error ratio at that offset)."""
        return self.time_s, self.column_errors / max(self.n_ui, 1)

    def width_s(self, ser: float = 0.0) -> float:
        """Span of time offsets around the sampling instant whose symbol error ratio stays
        at or below ``ser`` (s; ``ser`` in [0, 1]); 0 when even the sampling instant exceeds it."""
        ser = _validate.probability(ser, "ser", zero=True)
        _, r = self.bathtub()
        c = self.centre
        if r[c] > ser:
            return 0.0
        lo = c
        while lo > 0 and r[lo - 1] <= ser:
            lo -= 1
        hi = c
        while hi < r.size - 1 and r[hi + 1] <= ser:
            hi += 1
        return float((hi - lo + 1) * (self.time_s[1] - self.time_s[0]))

    def heights_v(self, ratio: float = 0.0, column: int | None = None) -> np.ndarray:
        """Vertical opening of each eye (one per threshold) at the sampling instant (V):
        the widest band around the threshold holding at most ``ratio * n_ui`` hits
        (split evenly above and below; ``ratio`` in [0, 1]); 0 for a closed eye."""
        ratio = _validate.probability(ratio, "ratio", zero=True)
        col = self.counts[self.centre if column is None else _validate.column(column, self.counts.shape[0])]
        v = self.voltage_edges_v
        allowed = ratio * self.n_ui / 2
        out = []
        for th in self.thresholds_v:
            b = int(np.clip(np.searchsorted(v, th) - 1, 0, col.size - 1))
            if col[b] > 2 * allowed:
                out.append(0.0)
                continue
            down = np.cumsum(col[b - 1 :: -1]) if b > 0 else np.zeros(0)
            up = np.cumsum(col[b + 1 :])
            n_lo = int(np.searchsorted(down, allowed, side="right"))
            n_hi = int(np.searchsorted(up, allowed, side="right"))
            out.append(float((n_lo + n_hi + 1) * (v[1] - v[0])))
        return np.array(out)

    def crossing_histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """Zero crossings of the receiver input against time from the nominal crossing
        (half a UI from the sampling instant, wrapped): (time in s, counts)."""
        n = self.crossings.size
        dt = (self.time_s[1] - self.time_s[0]) * self.time_s.size / n
        t = (np.arange(n) - n // 2 + 0.5) * dt
        return t, self.crossings.copy()

    def crossing_stats(self) -> dict:
        """Mean, rms and peak-to-peak (s) of the crossing times around the nominal crossing."""
        t, h = self.crossing_histogram()
        if h.sum() == 0:
            return {"n": 0, "mean_s": float("nan"), "rms_s": float("nan"), "peak_to_peak_s": float("nan")}
        m = float(np.average(t, weights=h))
        nz = np.flatnonzero(h)
        return {"n": int(h.sum()), "mean_s": m, "rms_s": float(np.sqrt(np.average((t - m) ** 2, weights=h))),
                "peak_to_peak_s": float(t[nz[-1]] - t[nz[0]])}

    def to_dict(self, include_counts: bool = False) -> dict:
        t, r = self.bathtub()
        d = {
            "n_ui": self.n_ui,
            "modulation": self.modulation,
            "time_s": t.tolist(),
            "thresholds_v": self.thresholds_v.tolist(),
            "levels_v": self.levels_v.tolist(),
            "heights_v": self.heights_v().tolist(),
            "width_s": self.width_s(),
            "bathtub_ser": r.tolist(),
            "crossings": self.crossing_stats(),
        }
        if include_counts:
            d["voltage_edges_v"] = self.voltage_edges_v.tolist()
            d["counts"] = self.counts.tolist()
        return d

    def plot(self, ax=None, n_ui_shown: int = 1, cmap: str = "inferno"):
        """The eye as a density image, time in ps and voltage in mV, with a colour bar:
        log10 of the probability density of the slicer input (per mV) at each time offset.

        The time axis spans the measured UI, ``-UI/2 .. UI/2 - dt`` (as
        :meth:`phy.StatEye.plot`). ``n_ui_shown > 1`` repeats it; the slicer input steps at
        every UI boundary (the DFE's correction changes there), so the copies meet at a
        step, marked by a dotted line. The first and last voltage bins hold the samples
        clipped into the range and are not drawn; the voltage axis is fitted to the bins hit.
        """
        import matplotlib

        ax = _axes(ax)
        n_show = max(int(n_ui_shown), 1)
        e = self.voltage_edges_v
        dv_mv = (e[1] - e[0]) * 1e3
        inner = self.counts[:, 1:-1].T.astype(float)  # the clipped edge bins are left out
        with np.errstate(divide="ignore"):
            img = np.log10(inner / (max(self.n_ui, 1) * dv_mv))
        img = np.tile(np.where(inner > 0, img, np.nan), (1, n_show))
        dt = self.time_s[1] - self.time_s[0]
        t0 = self.time_s[0]
        extent = [(t0 - dt / 2) * 1e12, (t0 + dt * (img.shape[1] - 0.5)) * 1e12, e[1] * 1e3, e[-2] * 1e3]
        cm = matplotlib.colormaps[cmap]
        cm = cm.with_extremes(bad=cm(0.0))
        ax.set_facecolor(cm(0.0))
        finite = img[np.isfinite(img)]
        lo_c, hi_c = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
        im = ax.imshow(img, origin="lower", aspect="auto", extent=extent, cmap=cm, vmin=lo_c, vmax=hi_c,
                       interpolation="nearest")
        cb = ax.figure.colorbar(im, ax=ax, pad=0.02)
        cb.set_label("log10 density (1/mV)")
        for th in self.thresholds_v:
            ax.axhline(th * 1e3, color="w", lw=0.6, ls=":", alpha=0.8)
        for k in range(1, n_show):
            ax.axvline((t0 + (k * self.time_s.size - 0.5) * dt) * 1e12, color="0.7", lw=0.6, ls=":")
        ax.set_xlim(t0 * 1e12, (t0 + dt * (img.shape[1] - 1)) * 1e12)
        clipped = (self.counts[:, 0].sum() + self.counts[:, -1].sum()) / max(self.counts.sum(), 1)
        if clipped > 0:  # the histogram's range is the simulator's: say what it left out
            ax.text(0.01, 0.01, f"{100 * clipped:.2g} % of samples beyond {e[1] * 1e3:.0f} .. {e[-2] * 1e3:.0f} mV,"
                    " not drawn", transform=ax.transAxes, fontsize=7, color="0.8", va="bottom")
        hit = np.flatnonzero(inner.sum(axis=1))
        if hit.size:
            lo, hi = e[1 + hit[0]], e[2 + hit[-1]]
            pad = 0.05 * (hi - lo)
            ax.set_ylim(max(lo - pad, e[1]) * 1e3, min(hi + pad, e[-2]) * 1e3)
        ax.set_xlabel("time from sampling instant (ps)")
        ax.set_ylabel("slicer input (mV)")
        return ax

    def plot_bathtub(self, ax=None):
        """Symbol error ratio against sampling offset (UI), log scale."""
        ax = _axes(ax)
        t, r = self.bathtub()
        floor = 0.5 / max(self.n_ui, 1)
        ax.semilogy(t / self.ui_s, np.maximum(r, floor), marker=".")
        ax.set_xlabel("sampling offset (UI)")
        ax.set_ylabel("symbol error ratio")
        ax.axhline(floor, color="0.6", lw=0.5, ls="--")
        return ax


@dataclass(frozen=True, eq=False)
class Waveform:
    """A stretch of the simulation on the fine grid, in the receiver's clock frame.

    Attributes
    ----------
    adc_v : ndarray (n_ui, samples_per_ui)
        The analog signal at the ADC input (after the CTLE, with noise and crosstalk),
        UI by UI around each sampling instant.
    slicer_v : ndarray (n_ui, samples_per_ui)
        The slicer input (after the Rx FFE and the DFE's correction).
    sent, decided : ndarray
        Sent and decided symbol indices.
    dt_s : float
    first_ui : int
    """

    adc_v: np.ndarray
    slicer_v: np.ndarray
    sent: np.ndarray
    decided: np.ndarray
    dt_s: float
    first_ui: int

    @property
    def time_s(self) -> np.ndarray:
        """Time of each flattened sample from the first UI's sampling instant (s)."""
        n, p = self.adc_v.shape
        return (np.arange(n * p) - p // 2) * self.dt_s

    def plot(self, ax=None):
        ax = _axes(ax)
        t = self.time_s * 1e12
        ax.plot(t, self.adc_v.reshape(-1) * 1e3, lw=0.8, label="ADC input")
        ax.plot(t, self.slicer_v.reshape(-1) * 1e3, lw=0.8, label="slicer input")
        ax.set_xlabel("time (ps)")
        ax.set_ylabel("mV")
        ax.legend()
        return ax
