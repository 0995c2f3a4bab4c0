"""The time-domain simulator: :func:`simulate` runs a prepared link symbol by symbol in
Numba kernels (:mod:`._kernels`, :mod:`._samples`; their arguments are the named records
of :mod:`.records`), chunk by chunk, from seeded streams (:mod:`.sources`)
over tables of the step and pulse responses (:mod:`.tables`), into a
:class:`SimulationResult` (:mod:`.result`) with its eye and waveform (:mod:`.eye`)."""

from .eye import EyeDiagram, Waveform
from .result import SimulationResult
from .simulate import simulate

__all__ = ["EyeDiagram", "SimulationResult", "Waveform", "simulate"]
