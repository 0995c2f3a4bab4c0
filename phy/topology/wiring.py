"""The wiring arrays the topology builders (:mod:`phy.topology.builders`,
:mod:`phy.topology.multirack`) assemble: blocks of links joined into one set of arrays,
and the racks' positions along a row.
"""

from __future__ import annotations

import numpy as np

__all__ = ["concat_links", "row_x_m"]


def concat_links(*blocks):
    """Join blocks of links ``(src, dst, length_m, class, level)`` (each five equal-length
    arrays) into five arrays: endpoints, classes and levels as int64, lengths as float (m)."""
    src, dst, length, cls, level = (np.concatenate([np.asarray(b[i]) for b in blocks]) for i in range(5))
    return (src.astype(np.int64), dst.astype(np.int64), length.astype(float), cls.astype(np.int64),
            level.astype(np.int64))


def row_x_m(n_racks: int, pitch: float) -> np.ndarray:
    """Positions (m) of ``n_racks`` racks along a row, ``pitch`` (m) apart, the first at 0."""
    return np.arange(n_racks) * pitch
