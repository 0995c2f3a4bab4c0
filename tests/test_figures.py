"""The demo's figures as a report would use them (issue 23): each eye has a colour bar with
its unit, the two eyes share a time span and axis words, each voltage axis is fitted to its
eye (covers what is drawn, at most 1.5 times it), the latency bars carry their values and
the legend readable names."""

from __future__ import annotations

import re

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from phy.cli import demo as d

    seen = {}
    real = d._demo_plots

    def capture(out, sim, seg, rep, rr, full=None):
        seen.update(sim=sim, seg=seg, rep=rep, rr=rr)
        return real(out, sim, seg, rep, rr, full)

    out = tmp_path_factory.mktemp("demo")
    d._demo_plots, saved = capture, d._demo_plots
    try:
        res = d.run_demo(out, n_ui=20_000)
    finally:
        d._demo_plots = saved
    return d, res, seen


def _panels(fig):
    """The eye panels (not the colour bars' axes)."""
    return [a for a in fig.axes if a.get_label() != "<colorbar>"]


def _colour_bar_label(ax):
    for m in [*ax.images, *ax.collections]:
        cb = getattr(m, "colorbar", None)
        if cb is not None:
            return cb.ax.get_ylabel()
    return None


def test_demo_writes_both_figures(demo):
    _, res, _ = demo
    assert [p.rsplit("/", 1)[-1] for p in res["plots"]] == ["eye.png", "latency.png"]
    from pathlib import Path

    assert all(Path(p).stat().st_size > 10_000 for p in res["plots"])


def test_eyes_have_colour_bars_with_units_and_one_time_span(demo):
    d, _, s = demo
    fig = d._eye_figure(s["sim"], s["seg"], s["rep"])
    fig.canvas.draw()
    td, se = _panels(fig)
    assert "density" in _colour_bar_label(td) and "(1/mV)" in _colour_bar_label(td)
    assert "log10 BER" in _colour_bar_label(se)
    t = s["sim"].eye.time_s * 1e12
    assert np.allclose(td.get_xlim(), se.get_xlim()) and np.allclose(td.get_xlim(), (t[0], t[-1]))
    assert td.get_xlabel() == se.get_xlabel() and "(ps)" in td.get_xlabel()
    assert td.get_ylabel() == se.get_ylabel() and "(mV)" in td.get_ylabel()


def test_voltage_axes_fit_the_eyes(demo):
    d, _, s = demo
    fig = d._eye_figure(s["sim"], s["seg"], s["rep"])
    td, se = _panels(fig)
    eye = s["sim"].eye
    e = eye.voltage_edges_v * 1e3
    hit = np.flatnonzero(eye.counts[:, 1:-1].sum(axis=0))  # the bins drawn (the clipped edges are not)
    drawn = {id(td): (e[1 + hit[0]], e[2 + hit[-1]])}
    cs = next(c for c in se.collections if hasattr(c, "allsegs") and len(c.levels) == 4)  # the BER contours
    outer = np.concatenate(cs.allsegs[0])[:, 1]  # the lowest target's contour, where the signal reaches
    drawn[id(se)] = (outer.min(), outer.max())
    for ax in (td, se):
        lo, hi = drawn[id(ax)]
        y0, y1 = ax.get_ylim()
        assert y0 <= lo + 1e-9 and y1 >= hi - 1e-9, (ax.get_title(), (y0, y1), (lo, hi))
        assert y1 - y0 <= 1.5 * (hi - lo), (ax.get_title(), (y0, y1), (lo, hi))
    # the contours are labelled, legibly
    labels = [t for t in se.texts if re.fullmatch(r"\$10\^\{-\d+\}\$", t.get_text())]
    assert len(labels) >= 1 and all(t.get_fontsize() >= 9 for t in labels)


def test_latency_bars_carry_values_and_readable_names(demo):
    d, _, s = demo
    rr = s["rr"]
    fig = d._latency_figure(rr)
    ax, ax2 = fig.axes  # the transfers, and the collective on its own scale
    values = [t.get_text() for a in (ax, ax2) for t in a.texts if re.search(r"\d", t.get_text())]
    totals = [float(v.strip().split()[0].replace(",", "")) for v in values if v.strip().endswith("ns")]
    assert len(totals) == len(ax.get_yticks()) + len(ax2.get_yticks()) == 4
    assert totals[1] == pytest.approx(rr.one_way["remote"].total_s * 1e9, abs=0.6)
    assert totals[3] == pytest.approx(rr.collective("all_reduce", 8.0).time_s * 1e9, abs=0.6)
    assert len(values) >= 4 + 6  # segment values besides the totals
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend and not any("_" in x for x in legend) and len(legend) == len(set(legend))
    # a layer keeps its colour across the two panels
    colour = {}
    for a in (ax, ax2):
        for patch, lab in zip(*a.get_legend_handles_labels()):
            colour.setdefault(lab, set()).add(tuple(patch.patches[0].get_facecolor()))
    assert colour and all(len(c) == 1 for c in colour.values())
    assert "\u2192" in ax.get_title()  # the path spelled out


def test_plot_stacks_draws_the_demos_bars_for_any_stacks():
    """:func:`phy.latency.stack.plot_stacks` (notebook 04's link terms, any LatencyStack) is
    the demo's rendering: a value on each wide segment, each bar's total in ns, the legend
    by the command's names, the path in the title."""
    from matplotlib.figure import Figure

    import phy
    from phy import _format as fm
    from phy import latency as lt
    from phy.latency.stack import plot_stacks

    rep = phy.evaluate_link(phy.LinkSpec(optics=phy.OpticalClass.dsp_pluggable(length_m=50.0), lanes=2))
    stack = lt.one_way([rep, rep])
    ax = Figure().subplots()
    assert plot_stacks([("DSP pluggable 50 m", rep.latency_breakdown_s), ("two hops", stack)], ax,
                       title="Tx SerDes \u2192 fibre \u2192 Rx SerDes", legend_title="part") is ax
    totals = [t.get_text().strip() for t in ax.texts if t.get_text().strip().endswith(" ns")]
    assert totals == [f"{rep.latency_s * 1e9:,.0f} ns", f"{stack.total_s * 1e9:,.0f} ns"]
    values = [t.get_text() for t in ax.texts if not t.get_text().strip().endswith("ns")]
    assert f"{rep.latency_breakdown_s['time_of_flight'] * 1e9:,.0f}" in values  # the fibre's flight, on its bar
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == [fm.label("serdes_tx"), fm.label("serdes_rx")] and "PHY (SerDes, FEC, flight)" in legend
    assert not any("_" in x for x in legend)
    assert ax.get_title() == "Tx SerDes \u2192 fibre \u2192 Rx SerDes" and ax.get_legend().get_title().get_text() == "part"
    assert "(ns)" in ax.get_xlabel()
