"""linkmodel ``phy``: the SerDes simulator, link roll-up, topology and the command line.

For now it holds the command line (:mod:`phy.cli`); the simulator, statistical eye,
link and topology stages arrive with their own issues.
"""


from .errors import ConfigError

__all__ = ["ConfigError"]
