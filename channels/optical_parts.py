"""Optical PMD parts for the link classes: a spec-corner part built from the standard's
limits and a typical part, each an :class:`channels.optical.OpticalPath` over a given span.

* **Corner** (:func:`corner_path`): every value at its 802.3 limit for a 500 m single-mode
  PAM4 lane, IEEE 802.3 Clause 140 (100GBASE-DR, 53.125 GBd), Tables 140-6 (transmitter),
  140-7 (receiver) and 140-8 (budget), as restated in vendors' datasheets
  (../shared/REFERENCES.md, "Optics: spec-corner and typical parts"):

  - transmitter: ``OMA_outer - TDECQ`` at its minimum -2.2 dBm with TDECQ at its maximum
    3.4 dB (so ``OMA_outer`` 1.2 dBm), extinction ratio 3.5 dB (min), ``RIN21.4OMA``
    -136 dB/Hz (max) at 21.4 dB optical return loss, reflectance -26 dB (max). The
    transmitter's bandwidth is solved so that its TDECQ (:func:`channels.tdecq.tdecq`, the
    reference receiver's noise including the RIN the scope would see) is exactly 3.4 dB;
  - channel: 3 dB insertion loss (max) over 500 m, each connector at the -35 dB discrete
    reflectance;
  - receiver: stressed receiver sensitivity -1.9 dBm ``OMA_outer`` at SECQ 3.4 dB and the
    pre-FEC BER 2.4e-4. SECQ is, like TDECQ, the dB a stressed eye has lost against an ideal
    one at the reference receiver, so the receiver just meets it when its own noise gives
    BER 2.4e-4 on an ideal signal of ``-1.9 - 3.4 = -5.3`` dBm: the TIA's noise density is
    solved for that (:func:`solve_rx_noise`), responsivity 0.85 A/W, bandwidth half the baud
    (the reference receiver's), reflectance -26 dB (max).

  The budget is built to close: ``-2.2 - 3.0 = -5.2`` dBm of TDECQ-equivalent OMA arrives
  where the receiver needs -5.3 dBm (0.1 dB to spare), less what multipath interference at
  the reflectance limits costs (802.3 allocates it within the same penalties), plus what a
  module DSP with more taps than TDECQ's 5-tap reference FFE recovers.

  At 106.25 GBd (200G per lane, 802.3dj 200GBASE-DR1/800GBASE-DR4, Clause 180) the same
  OMA and sensitivity figures are kept, bandwidths scale with the baud, and the RIN limit is
  -139 dB/Hz (the level that keeps DR's integrated RIN; a public design document citing
  Cl. 180 gives the same -139 dB/Hz; the standard's tables were not read): a derived
  corner, labelled so.
* **Typical** (:func:`typical_path`): a shipping DR-class transmitter and receiver
  (datasheet mid-range ``OMA_outer`` 1.0 dBm, ER 3.5 dB, RIN at its -136 dB/Hz limit, a
  42 GHz SiGe TIA's 12.5 pA/sqrt(Hz), responsivity 0.85 A/W, driver 0.75 and receiver
  0.5 of the baud), 0.5 dB / -35 dB connectors.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy import optimize, special

from . import _validate as check
from .errors import ChannelError
from .optical import (
    Fibre,
    OpticalConnector,
    OpticalPath,
    OpticalReceiver,
    OpticalTransmitter,
    db_to_lin,
    dbm_to_w,
)

__all__ = ["CORNER", "PART_GRADES", "corner_path", "part_path", "solve_rx_noise", "typical_path"]

#: 802.3 Cl. 140 (100GBASE-DR) limits the corner part sits at (dBm, dB, dB/Hz; see the module docstring).
CORNER = {
    "oma_minus_tdecq_dbm": -2.2,
    "tdecq_db": 3.4,
    "extinction_ratio_db": 3.5,
    "rin_db_per_hz": -136.0,
    "rin_orl_db": 21.4,
    "tx_reflectance_db": -26.0,
    "channel_loss_db": 3.0,
    "connector_reflectance_db": -35.0,
    "stressed_sensitivity_dbm": -1.9,
    "secq_db": 3.4,
    "rx_reflectance_db": -26.0,
    "ber": 2.4e-4,
}
PART_GRADES = ("typical", "corner")
_BAUD_100G = 53.125e9
_RESPONSIVITY = 0.85


def _rin_limit(baud_hz: float) -> float:
    """-136 dB/Hz at 53.125 GBd, lowered by ``10 log10(baud / 53.125 GBd)`` above it."""
    return CORNER["rin_db_per_hz"] - 10 * math.log10(max(baud_hz, _BAUD_100G) / _BAUD_100G)


def _pam4_ber(d: float, sigma: np.ndarray) -> float:
    """Gray PAM4 BER, levels' noise ``sigma`` (4 values), half-spacing ``d``."""
    q = 0.5 * special.erfc(d / (np.sqrt(2) * np.asarray(sigma)))
    errs = np.zeros(4)
    errs[1:] += q[1:]
    errs[:-1] += q[:-1]
    return float(errs.mean() / 2)


def solve_rx_noise(oma_dbm: float, extinction_ratio_db: float, responsivity_a_per_w: float, bandwidth_hz: float,
                   ber: float = CORNER["ber"]) -> float:
    """The TIA's input-referred noise density (A/sqrt(Hz)) at which an ideal PAM4 signal
    of ``oma_dbm`` (no ISI, no RIN, no reflections) has Gray-coded BER ``ber`` with the
    receiver's thermal and shot noise (the budget of :meth:`OpticalPath.budget`)."""
    target = check.number(ber, "ber", positive=True, hi=0.1)
    rx = OpticalReceiver(responsivity_a_per_w, 0.0, bandwidth_hz, None)
    bn = rx.noise_bandwidth_hz
    tx = OpticalTransmitter(oma_dbm, extinction_ratio_db, -300.0, reflectance_db=None)
    i = responsivity_a_per_w * tx.levels_w(4)
    d = responsivity_a_per_w * dbm_to_w(oma_dbm) / 6

    def err(log_in: float) -> float:
        sig = np.sqrt(np.exp(log_in) ** 2 * bn + 2 * 1.602176634e-19 * i * bn)
        return math.log(_pam4_ber(d, sig)) - math.log(target)

    if err(math.log(1e-15)) > 0:
        raise ChannelError(f"an ideal {oma_dbm} dBm signal cannot reach BER {ber} even with a noiseless TIA")
    return float(math.exp(optimize.brentq(err, math.log(1e-15), math.log(1e-6), xtol=1e-10)))


def _tdecq_with_rin(path: OpticalPath, baud: float) -> float:
    """TDECQ with the transmitter's RIN as the reference receiver sees it: the Gaussian
    noise TDECQ allows, less the RIN's variance (relative to the OMA)."""
    from .tdecq import Q_T, tdecq

    t = tdecq(path, baud)
    if not math.isfinite(t.tdecq_db):
        return float("inf")
    ref = OpticalReceiver(1.0, 0.0, 0.5 * baud, None).noise_bandwidth_hz
    rin_rel = math.sqrt(db_to_lin(path.tx.rin_db_per_hz) * ref) / 2  # rms over the OMA (P_OMA = (OMA/2)^2)
    left = t.sigma_g_rel**2 - rin_rel**2
    return float("inf") if left <= 0 else float(10 * math.log10((1 / (6 * Q_T)) / math.sqrt(left)))


def _solve_tx_bandwidth(path: OpticalPath, baud: float, tdecq_db: float) -> float:
    """The transmitter's -3 dB bandwidth (Hz) giving ``tdecq_db`` through the path."""

    def f(log_bw: float) -> float:
        p = replace(path, tx=replace(path.tx, bandwidth_hz=float(np.exp(log_bw))))
        return min(_tdecq_with_rin(p, baud), 30.0) - tdecq_db

    lo, hi = math.log(0.15 * baud), math.log(5.0 * baud)
    if f(hi) > 0:
        raise ChannelError(f"even a {5 * baud / 1e9:.4g} GHz transmitter misses TDECQ {tdecq_db} dB over this span")
    return float(np.exp(optimize.brentq(f, lo, hi, xtol=1e-4)))


def _span(length_m: float, connectors: int, loss_db: float | None, reflectance_db: float) -> tuple:
    """The fibre and connectors; with ``loss_db`` the connectors share what the fibre leaves of it."""
    fib = Fibre.smf(check.number(length_m, "length_m", nonneg=True, hi=1e5))
    n = int(check.number(connectors, "connectors", nonneg=True, hi=16))
    il = 0.5 if loss_db is None or n == 0 else max(0.0, (loss_db - fib.loss_db) / n)
    return fib, n, OpticalConnector(il, reflectance_db)


def corner_path(length_m: float = 500.0, baud_hz: float = _BAUD_100G, connectors: int = 2) -> OpticalPath:
    """The spec-corner part over ``length_m`` (module docstring): 802.3 Cl. 140's limits;
    the channel at its 3 dB maximum insertion loss whatever the length (``connectors``
    connectors take what the fibre leaves; at least the fibre's own loss)."""
    baud = check.number(baud_hz, "baud_hz", positive=True)
    c = CORNER
    fib, n, con = _span(length_m, connectors, c["channel_loss_db"], c["connector_reflectance_db"])
    rx_bw = 0.5 * baud
    noise = solve_rx_noise(c["stressed_sensitivity_dbm"] - c["secq_db"], c["extinction_ratio_db"], _RESPONSIVITY, rx_bw)
    tx = OpticalTransmitter(c["oma_minus_tdecq_dbm"] + c["tdecq_db"], c["extinction_ratio_db"], _rin_limit(baud),
                            1311e-9, None, 0.0, c["tx_reflectance_db"], rin_orl_db=c["rin_orl_db"])
    rx = OpticalReceiver(_RESPONSIVITY, noise, rx_bw, c["rx_reflectance_db"])
    path = OpticalPath.point_to_point(fib, n, tx, rx, con, name="corner")
    bw = _solve_tx_bandwidth(path, baud, c["tdecq_db"])
    return replace(path, tx=replace(tx, bandwidth_hz=bw))


def typical_path(length_m: float = 500.0, baud_hz: float = _BAUD_100G, connectors: int = 2) -> OpticalPath:
    """The typical part over ``length_m`` (module docstring)."""
    baud = check.number(baud_hz, "baud_hz", positive=True)
    fib, n, con = _span(length_m, connectors, None, -35.0)
    tx = OpticalTransmitter(1.0, 3.5, _rin_limit(baud), 1311e-9, 0.75 * baud, 0.0, -26.0, rin_orl_db=21.4)
    rx = OpticalReceiver(_RESPONSIVITY, 12.5e-12, 0.5 * baud, -26.0)
    return OpticalPath.point_to_point(fib, n, tx, rx, con, name="typical")


def part_path(grade: str, length_m: float, baud_hz: float, connectors: int = 2) -> OpticalPath:
    """:func:`typical_path` or :func:`corner_path` by ``grade``."""
    if grade not in PART_GRADES:
        raise ChannelError(f"grade must be one of {', '.join(PART_GRADES)}, got {grade!r}")
    return (typical_path if grade == "typical" else corner_path)(length_m, baud_hz, connectors)
