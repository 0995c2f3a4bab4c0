"""What a SerDes is: its signals, equalisers, noise and jitter, the transmitter, receiver
and clock recovery, the conditioning of a pulse by its front end, and the prepared link,
the one input of every engine (:mod:`phy.engines`).

* :mod:`phy.serdes.signals`: PRBS, Gray PAM4, the 1/(1+D) precoder, PRBS13Q and SSPRQ;
* :mod:`phy.serdes.equalisers`: Tx FFE, CTLE, Rx FFE, DFE, and the MMSE FFE/DFE solve;
* :mod:`phy.serdes.noise`: transmitter and receiver noise, and jitter (on edges, or on
  symbols as 802.3 COM models it);
* :mod:`phy.serdes.transceiver`: :class:`Transmitter`, :class:`Receiver`, :class:`Cdr`;
* :mod:`phy.serdes.impairments`: a real receiver's ADC, tap resolution and sampling clock;
* :mod:`phy.serdes.pulse`: a pulse response through the front end and the Tx FFE, the
  sampling point (peak, Mueller-Muller, Mueller-Muller with the first DFE tap);
* :mod:`phy.serdes.prepared`: :func:`prepare_link` -> :class:`PreparedLink`.

Public API
----------
The names in ``__all__`` that are not modules, reached as ``phy.serdes.NAME`` (the common
ones also as ``phy.NAME``).

Public namespaces
-----------------
:mod:`phy.serdes.signals`
    PRBS, Gray PAM4, the 1/(1+D) precoder, PRBS13Q and SSPRQ (also ``phy.signals``).

Private modules
---------------
The other modules listed above (and ``limits`` and ``_kernels``): they hold what is
re-exported here. ``equalizers`` is the deprecated spelling of ``equalisers`` (it warns). Importing them directly still works but is not the interface.
"""

from _linkmodel._renamed import module_getattr

from . import signals
from .equalisers import Ctle, Dfe, RxFfe, TxFfe, solve_ffe_dfe
from .impairments import Impairments, quantise
from .noise import Jitter, Noise, shaped_noise_filter
from .prepared import PreparedLink, prepare_link, step_from_pulse
from .transceiver import PATTERNS, Cdr, Receiver, Transmitter, modulation_order, symbol_rate_hz

__all__ = [
    "PATTERNS",
    "Cdr",
    "Ctle",
    "Dfe",
    "Impairments",
    "Jitter",
    "Noise",
    "PreparedLink",
    "Receiver",
    "RxFfe",
    "Transmitter",
    "TxFfe",
    "modulation_order",
    "prepare_link",
    "quantise",
    "shaped_noise_filter",
    "signals",
    "solve_ffe_dfe",
    "step_from_pulse",
    "symbol_rate_hz",
]

#: Deprecated spellings (warn; the same objects): ``quantize`` of :func:`quantise`,
#: ``equalizers`` of :mod:`phy.serdes.equalisers`.
__getattr__ = module_getattr(__name__, {"quantize": "quantise", "equalizers": "equalisers"})
