"""The error of the IBIS-AMI layer."""

from ..errors import ConfigError

__all__ = ["AmiError"]


class AmiError(ConfigError):
    """An IBIS-AMI model could not be read, loaded or run: a bad ``.ibs`` or ``.ami`` file, a
    parameter outside what the model declares, a library that is not an AMI model, or a call
    (``AMI_Init``, ``AMI_GetWave``, ``AMI_Close``) that crashed, hung, failed or returned
    garbage. One line naming the model, its file and the call; a :class:`phy.ConfigError`,
    so the sweeps record it against the point and go on."""
