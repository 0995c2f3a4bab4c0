"""The one exception type of ``phy``, and its warnings."""

from _linkmodel.errors import LinkmodelError


class ConfigError(LinkmodelError):
    """A configuration value is invalid (negative rate, taps that do not fit, ...); a
    :class:`LinkmodelError`, so a ``ValueError``."""


class CdrLockWarning(UserWarning):
    """A simulated clock recovery lost lock: its phase left the eye it started on (it moved
    more than ``Cdr.lock_bound_ui``), so the run's error ratio describes a receiver that
    slipped, not the link; :attr:`phy.SimulationResult.cdr_locked` is False and the error
    ratios are reported as NaN (the counts are kept)."""
