"""The plotting helpers every stage shares: matplotlib is optional, so a plot function
takes ``ax=None`` and asks for its Axes here (and imports matplotlib only when it draws)."""

from __future__ import annotations


def axes(ax):
    """``ax``, or a new Axes (ImportError naming the extra when matplotlib is absent)."""
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'linkmodel[plots]'") from exc
    return plt.subplots()[1]


def readable(name: str) -> str:
    """A legend's name for a latency layer (what it holds) or term (as printed): one name
    map for the figures and the text, :func:`phy._format.legend`."""
    from ._format import legend

    return legend(name)


def share_limits(axs, which: str = "y"):
    """Give every Axes in ``axs`` the union of their limits on ``which`` ("x" or "y"), so
    side-by-side panels (a time-domain and a statistical eye) read on one scale."""
    axs = list(axs)
    get, put = (("get_xlim", "set_xlim") if which == "x" else ("get_ylim", "set_ylim"))
    lims = [getattr(a, get)() for a in axs]
    lo, hi = min(min(li) for li in lims), max(max(li) for li in lims)
    for a in axs:
        getattr(a, put)(lo, hi)
    return axs


def latency_bars(ax, rows, *, label_frac_per_char: float = 0.01, colours: dict | None = None):
    """Stacked horizontal bars of latencies, layer by layer, in ns (a linear axis, so each
    segment's length is its share): each segment carries its value when it is wide enough
    to hold it, each bar its total at its end, the legend readable names.

    Parameters
    ----------
    ax : Axes or None
    rows : sequence of (label, {layer: seconds})
        One bar per row, top to bottom; zero or negative layers are skipped.
    label_frac_per_char : float
        A segment is labelled inside when it spans at least this fraction of the widest bar
        per character of its label.
    colours : dict, optional
        Layer to colour, shared by several calls (panels of one figure) so a layer keeps
        its colour; layers not in it are added. A layer's legend entry is drawn once per
        axes.

    Returns
    -------
    Axes
    """
    ax = axes(ax)
    colours = {} if colours is None else colours
    drawn: set = set()
    widest = max((sum(v for v in d.values() if v > 0) for _, d in rows), default=0.0) * 1e9
    for y, (_, layers) in enumerate(rows):
        left = 0.0
        for k, v in layers.items():
            if v <= 0:
                continue
            w = v * 1e9
            first = k not in drawn
            drawn.add(k)
            c = colours.setdefault(k, f"C{len(colours)}")
            ax.barh([y], [w], left=left, color=c, edgecolor="white", linewidth=0.6,
                    label=readable(k) if first else None)
            text = f"{w:,.0f}"
            if widest and w / widest >= label_frac_per_char * len(text):
                ax.text(left + w / 2, y, text, ha="center", va="center", fontsize=8, color="white",
                        fontweight="bold")
            left += w
        ax.text(left, y, f"  {left:,.0f} ns", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, widest * 1.15 if widest else 1.0)
    ax.grid(alpha=0.3, axis="x")
    ax.set_axisbelow(True)
    return ax
