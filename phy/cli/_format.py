"""How the command prints figures: the library's formatter (:mod:`phy._format`), which
:meth:`phy.LinkReport.summary` and :meth:`phy.latency.LatencyStack.table` also use, so the
demo, ``link``, ``rack`` and the library print the same quantity the same way."""

from __future__ import annotations

from .._format import (
    LAYER_LEGENDS,
    PROBABILITY_FLOOR,
    TERM_LABELS,
    bytes_per_s,
    com_words,
    energy_words,
    label,
    legend,
    margin_words,
    ns,
    prob,
    sig,
    size_bytes,
    terms_ns,
)

__all__ = ["LAYER_LEGENDS", "PROBABILITY_FLOOR", "TERM_LABELS", "bytes_per_s", "com_words", "energy_words", "label",
           "legend", "margin_words", "ns", "prob", "sig", "size_bytes", "terms_ns"]
