"""linkmodel ``fec``: Reed-Solomon FEC codec and post-FEC error and latency analysis.

The codec and the analysis arrive with their own issue; this package already fixes
the exception type the rest of the project relies on.
"""


class FecError(ValueError):
    """An impossible code, symbols out of range, wrong shapes or dtypes, or a BER outside [0, 0.5]."""


__all__ = ["FecError"]
