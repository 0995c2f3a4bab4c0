"""Link roll-up: what a link delivers, how late, at what power and how reliably.

:func:`evaluate_link` takes a :class:`LinkSpec` (lanes, lane rate, modulation, the medium,
the SerDes, the FEC, the framing and what sits in the path) and returns a
:class:`LinkReport`:

* **Errors**: each equalised segment's statistical eye (:func:`phy.statistical_eye`)
  gives its detector error ratio, with DFE error propagation (the DFE burst model of
  :meth:`fec.BurstModel.dfe`, bounded at any error ratio); segments of a retimed link add
  their errors. With COM proposing, the eye decides among COM's own equalisation at COM's
  cursor and variants of it (Rx FFE re-adapted, CTLE flat, no Tx FFE), each sampled at the
  Mueller-Muller point with the first DFE tap (where a DFE receiver's clock locks and COM
  places its cursor, 93A-25) or at the pulse's peak; COM's impairments are applied as
  COM models them (jitter on each symbol's pulse, Tx noise by 93A-30 or 178A-17), so a
  channel with COM above 0 dB errs less than COM's ``DER_0`` at COM's choice
  (``tests/test_consistency.py``). The FEC
  analysis (:func:`fec.burst_errors`, with interleaving and precoding) gives the
  codeword error ratio, the delivered bit error ratio and the frame loss ratio. The
  margin is the Q-factor margin ``20 log10(q / q_req)`` against the detector error ratio
  that would just meet the target (``SER = 2 (1 - 1/M) Q(q)``).
* **Bandwidth**: ``lanes x lane rate x k/n x framing efficiency x retry efficiency``.
  The 802.3 chain: ``106.25 Gb/s x 514/544 x 256/257 = 100 Gb/s`` (the 64b/66b code
  transcoded to 256b/257b; ../shared/REFERENCES.md).
* **Latency** (one way, mean): Tx and Rx SerDes datapaths, FEC accumulation and decode
  (:func:`fec.latency`), time of flight (the electrical channel's own phase delay, the
  fibre's ``n_g L / c``), optical module DSPs, every element of the path, flit
  accumulation and the mean cost of retries.
* **Energy**: SerDes, optical modules (``module power / module rate`` per bit for a
  module at each end, each full duplex) and path elements, in J per payload bit one way;
  ``power_w`` counts both directions of all lanes.

A link that does not meet its target reports ``passes=False`` with the reasons and a
usable bandwidth of zero; a specification that cannot be evaluated raises
:class:`phy.ConfigError`.

:func:`search_link` evaluates the choices a designer has (FEC code or none, interleave
depth, precoding, link-level retry, SerDes presets) and returns every point, the
Pareto set of latency against usable bandwidth and energy, and the lowest-latency point
that meets the target.

The package, in the order a link is computed: :mod:`.parts` (SerDes, framing, retry, path
elements), :mod:`.optics` (optical classes), :mod:`.spec` (:class:`LinkSpec`),
:mod:`.equalise` (the segments and their eyes), :mod:`.post_fec` (FEC, retry, the
required error ratio), :mod:`.latency` and :mod:`.power` (their terms), :mod:`.report`
(:func:`evaluate_link`), :mod:`.search` (:func:`search_link`) and :mod:`.classes`
(:func:`class_table`: which optical classes close), the applications on top of the
roll-up.

Public API
----------
The names in ``__all__``, reached as ``phy.link.NAME``; the common ones (:class:`LinkSpec`,
:func:`evaluate_link`, :func:`search_link`, the parts) also as ``phy.NAME``. Only here:
:func:`class_table`, :func:`segments`, :data:`COM_CHOICE`, :data:`SAMPLING_PHASES`.

Public namespaces
-----------------
:mod:`phy.link.power`
    the SerDes energy per bit of each reach class, every figure with its source
    (``SERDES_ENERGY_J_PER_BIT``, ``SERDES_ENERGY_SOURCES``, ``reach_class``).
:mod:`phy.link.retry`
    the link layer's terms and go-back-N replay (``LinkLayerTerms``,
    ``replay_quantiles``, ``simulate_replay``, the Monte Carlo of the protocol).

Private modules
---------------
``parts``, ``optics``, ``spec``, ``equalise``, ``post_fec``, ``latency``, ``report``,
``search``, ``classes`` and every ``_name``: they hold what is re-exported here. Importing
them directly still works but is not the interface.
"""

from .classes import class_table
from .equalise import COM_CHOICE, SAMPLING_PHASES, Segment, segments
from .optics import OpticalClass
from .parts import DEFAULT_TARGET_BER, Framing, PathElement, Retry, Serdes
from .report import LinkReport, SegmentReport, evaluate_link
from .search import LinkSearch, search_link
from .spec import LinkSpec

__all__ = [
    "COM_CHOICE",
    "DEFAULT_TARGET_BER",
    "Framing",
    "LinkReport",
    "LinkSearch",
    "LinkSpec",
    "OpticalClass",
    "PathElement",
    "Retry",
    "SAMPLING_PHASES",
    "Segment",
    "SegmentReport",
    "Serdes",
    "class_table",
    "evaluate_link",
    "search_link",
    "segments",
]
