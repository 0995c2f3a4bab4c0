"""The one plotting helper every stage shares: matplotlib is optional, so a plot function
takes ``ax=None`` and asks for its Axes here."""

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
