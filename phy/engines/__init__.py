"""The three engines, each running on the prepared link of :mod:`phy.serdes` (or, for COM,
on the channel and its own reference chain) and none on another:

* :mod:`phy.engines.timesim`: the time-domain simulator (:func:`simulate`);
* :mod:`phy.engines.stateye`: the statistical eye (:func:`statistical_eye`);
* :mod:`phy.engines.com`: the Channel Operating Margin (:func:`channel_margin`).

The distributions on a voltage grid the statistical eye and COM share are in
:mod:`phy.engines.pmf`; the error events of 802.3dj's 1-tap MLSD, which both read, in
:mod:`phy.engines.mlsd`.

Public API
----------
The names in ``__all__``, reached as ``phy.engines.NAME`` (all of them also as
``phy.NAME``).

Public namespaces
-----------------
:mod:`phy.engines.com`
    COM's parameter sets and package cases, the effective return loss and its presets
    (``ERL_PRESETS``, ``preset_for_baud``).

Private modules
---------------
``timesim``, ``stateye`` (with ``stateye_result``), ``pmf``, ``mlsd``, ``dfe_chain`` and every ``_name``: they hold
what is re-exported here, or the kernels behind it. Importing them directly still works
but is not the interface.
"""

from .com import ComParams, MarginResult, channel_margin
from .stateye import StatEye, statistical_eye
from .timesim import EyeDiagram, SimulationResult, Waveform, simulate

__all__ = ["ComParams", "EyeDiagram", "MarginResult", "SimulationResult", "StatEye", "Waveform", "channel_margin",
           "simulate", "statistical_eye"]
