"""The one exception type of ``phy``."""


class ConfigError(ValueError):
    """A configuration value is invalid (negative rate, taps that do not fit, ...)."""
