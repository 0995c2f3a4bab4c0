"""linkmodel ``phy``: the SerDes simulator, link roll-up, topology and the command line.

For now it holds the command line (:mod:`phy.cli`); the simulator, statistical eye,
link and topology stages arrive with their own issues.
"""


class ConfigError(ValueError):
    """A configuration value is invalid (negative rate, taps that do not fit, ...)."""


__all__ = ["ConfigError"]
