"""Physics builders: differential lines, cables, discontinuities and terminations.

Every builder returns a full four-port :class:`~channels.channel.Channel` built on
scikit-rf media, so sections cascade into a channel whose impedance mismatches
really reflect (ripple in the insertion loss, echoes in the pulse response).

The line model
--------------
A differential line carries two independent modes: differential (characteristic
impedance ``zdiff_ohm``) and common (``zcomm_ohm``). Each is a line with
frequency-dependent per-unit-length parameters (series ``Z' = R + j omega L``, shunt
``Y' = G + j omega C``), exact from DC up (its ABCD matrix, turned into S by scikit-rf),
assembled into a mixed-mode four-port and converted to single-ended with 50 ohm ports
(so 100 ohm differential and 25 ohm common references). Symmetric structures have no
mode conversion; :func:`skew` adds some. Lumped parts (AC caps, die capacitance, via
stubs) come from scikit-rf media.

* **Dielectric**: a causal Djordjevic-Sarkar (wideband Debye) permittivity through
  ``(dk, df)`` at ``f_ref_hz``, with poles from 10 kHz to 10 THz. The per-unit-length
  capacitance follows it, so ``G = omega C tan(delta)`` comes out of the model.
* **Conductor**: the internal impedance of one leg,
  ``Z_i(f) = R_dc sqrt(1 + j f / f_d) K(f)``: ``R_dc`` at DC, and above ``f_d`` the
  skin-effect asymptote ``(1 + j) k R_s(f) / p`` (``R_s = sqrt(pi f mu0 / sigma)``, ``p``
  the current-carrying perimeter, ``k`` a current-distribution factor), times the
  Hammerstad-Jensen roughness factor ``K = 1 + (2/pi) atan(1.4 (Delta/delta)^2)``.
  The differential mode sees ``2 Z_i``, the common mode ``Z_i / 2``.
* **Inductance and capacitance** are fixed by ``zdiff_ohm`` and the velocity
  ``c / sqrt(dk)`` at ``f_ref_hz``.

Calibration (figures from public sources; see each builder):

* Twinax: ``proximity_factor = 1.3`` makes 26 AWG foamed-PE twinax lose about
  7.1 dB/m at 53.125 GHz and 30 AWG about 10.2 dB/m, the figures of a cable vendor's
  published note (Astera Labs blog "The 1.2-Meter Challenge", medium confidence); at
  26.56 GHz 4.7 and 6.9 dB/m. Checked against cable assemblies
  (:func:`channels.assembly.cable_channel`, plugs included, tests/test_copper_reach.py):
  a 2 m 26 AWG assembly reads 12.0 dB at 26.56 GHz, within 802.3ck's cable assembly limit
  (19.75 dB, a maximum for its 2 m objective), as are the longest 100G-per-lane DACs NVIDIA
  ships (26 AWG to 3 m: 16.7 dB; 30 AWG to 1.5 m); 802.3ck's 19.75 dB reference assembly
  (``CA_19p75dB``, ../shared/channels) is a limit channel about 2.4 m long by its delay, and
  reads between our 26 AWG assembly of that length (13.6 dB) and 30 AWG's (18.9 dB), within
  10 % of the latter, from 13 to 27 GHz. No per-metre datasheet figure from a cable maker
  was found to check the 26 AWG figure more closely.
* Stripline: ``current_factor = 1.2`` (edge crowding and the return current in the
  planes) makes a 5 mil, Megtron-7-class HVLP stripline lose about 0.9 dB/in at
  26.56 GHz (published figures for second-generation low-Dk laminates are about
  0.85 dB/in; the 802.3ck orthogonal backplane files in ../shared/channels imply about 1 dB/in).
"""

from __future__ import annotations

from .channel import cascade
from .discontinuities import ac_cap, com_package, connector, package, section, skew, terminate, via
from .line_model import C0, DEFAULT_DF_HZ, DEFAULT_F_MAX_HZ, MU0, SIGMA_CU, awg_diameter_m, frequency_grid  # noqa: F401
from .lines import diff_line, microstrip, stripline, twinax

__all__ = [
    "DEFAULT_F_MAX_HZ",
    "DEFAULT_DF_HZ",
    "frequency_grid",
    "diff_line",
    "stripline",
    "microstrip",
    "twinax",
    "section",
    "connector",
    "via",
    "package",
    "com_package",
    "ac_cap",
    "skew",
    "terminate",
    "awg_diameter_m",
    "cascade",
]
