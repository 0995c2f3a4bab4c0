"""COM's chain (93A.1.2, 93A-18): the reference packages cascaded with the channel on
arrays, terminated in ``R_d`` and moved onto the pulses' DFT grid.

The packages depend only on the parameter set's package fields and the channel's
frequency points, so they are built once and remembered (:func:`package`, a bounded
memory). The cascade is :func:`channels.cascading.cascade_s` on the S-matrices (the star
product vectorised over frequency, equal to scikit-rf's ``**``); only the differential
through ``Sdd21`` of the result is formed, with the delay and loss trend that
:class:`channels.Channel` would give the same chain (:func:`channels.grid.estimate_delay`,
:func:`channels.grid.fit_loss_trend`). Reference impedances that the array path does not
cover (complex, or unequal on a four-port) take :func:`transfer_channels`, the same steps
on :class:`channels.Channel` objects.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

import channels
from channels import media
from channels.cascading import cascade_s, renormalise_s
from channels.grid import estimate_delay, fit_loss_trend, resample_response

from .params import ComParams

__all__ = ["PACKAGE_MEMORY", "clear_packages", "package", "terminated_transfer", "transfer_channels"]

#: How many reference packages (parameter set's package fields, end, frequency grid) are
#: remembered; each holds two (F, 4, 4) complex arrays (1.5 MB each at 6,001 points).
PACKAGE_MEMORY = 16
_PACKAGES: OrderedDict = OrderedDict()


def clear_packages() -> None:
    """Forget the remembered packages (for timing a cold call)."""
    _PACKAGES.clear()


def package(p: ComParams, f: np.ndarray, end: str) -> channels.Channel:
    """``p.package(f, end)`` (:meth:`ComParams.package`), remembered for the last
    :data:`PACKAGE_MEMORY` distinct packages: keyed by :meth:`ComParams.package_key`, so
    ends and package cases with the same line share one, and by the frequency points
    themselves (compared exactly on a hit)."""
    f = np.asarray(f, dtype=float)
    key = (p.package_key(end), f.size, hash(f.tobytes()))
    try:
        hit = _PACKAGES.get(key)
    except TypeError:  # a package line holding something unhashable (a list): no memory
        return p.package(f, end)
    if hit is not None and np.array_equal(hit[0], f):
        _PACKAGES.move_to_end(key)
        return hit[1]
    pkg = p.package(f, end)
    _PACKAGES[key] = (f.copy(), pkg)
    while len(_PACKAGES) > PACKAGE_MEMORY:
        _PACKAGES.popitem(last=False)
    return pkg


def _arrays(ch: channels.Channel, four_port: bool):
    """``(s, z0)`` of a channel's single-ended four-port, or of its differential two-port."""
    net = ch.single_ended if four_port else ch.network
    s, z0 = net.s, net.z0
    if not four_port and ch.single_ended is not None:
        s, z0 = s[:, :2, :2], z0[:, :2]
    return s, z0


def _sdd21(s: np.ndarray) -> np.ndarray:
    """Sdd21 of single-ended four-ports ``[in+, in-, out+, out-]`` with one real reference
    on every port: ``(S31 - S32 - S41 + S42) / 2``, the (d2, d1) entry of ``M S M^T``."""
    return 0.5 * (s[:, 2, 0] - s[:, 2, 1] - s[:, 3, 0] + s[:, 3, 1])


def terminated_transfer(ch: channels.Channel, f_new: np.ndarray, p: ComParams, kind: str) -> np.ndarray:
    """93A-18: voltage transfer of package + channel + package between the die terminations
    ``R_d``, on the DFT grid ``f_new`` (Hz); ``kind`` (``"through"``, ``"next"``,
    ``"fext"``) chooses the transmitter's package. As the reference COM code does, the
    cascade is formed on the channel's own frequencies and only the resulting transfer is
    moved onto ``f_new`` (by :mod:`channels.grid`: de-rotated spline inside the band, the
    loss trend above it, both from the chain's own Sdd21). A channel given at another
    reference impedance than the packages' is renormalised in the cascade."""
    f = ch.f
    tx = package(p, f, {"through": "tx"}.get(kind, kind))
    rx = package(p, f, "rx")
    four = ch.single_ended is not None
    parts = [_arrays(c, four) for c in (tx, ch, rx)]
    if any(np.any(np.imag(z) != 0) for _, z in parts):
        return transfer_channels(ch, f_new, p, kind)
    if four:
        z_all = np.concatenate([z.real for _, z in parts], axis=1)
        if not np.all(z_all == z_all[0, 0]):  # unequal references: the mixed-mode view needs scikit-rf
            return transfer_channels(ch, f_new, p, kind)
        if np.allclose(2 * z_all[0, 0], 2 * p.r_d):  # terminated as it is: only the through is needed
            s21 = cascade_s(*parts, through=True)[0]
            h = 0.5 * (s21[:, 0, 0] - s21[:, 0, 1] - s21[:, 1, 0] + s21[:, 1, 1])
        else:  # media.terminate: R_d on every leg
            s, z0 = cascade_s(*parts)
            h = _sdd21(renormalise_s(s, z0, np.full(4, p.r_d)))
        return resample_response(f, h, f_new, estimate_delay(f, h), fit_loss_trend(f, h))
    s, z0 = cascade_s(*parts)
    zi, zo = float(z0[0, 0]), float(z0[0, 1])
    if not np.allclose((zi, zo), 2 * p.r_d):
        s = renormalise_s(s, z0, np.full(2, 2 * p.r_d))
        zi = zo = 2 * p.r_d
    sdd21 = s[:, 1, 0]
    return resample_response(f, sdd21 * np.sqrt(zo / zi), f_new, estimate_delay(f, sdd21), fit_loss_trend(f, sdd21))


def transfer_channels(ch: channels.Channel, f_new: np.ndarray, p: ComParams, kind: str) -> np.ndarray:
    """:func:`terminated_transfer` on :class:`channels.Channel` objects
    (:func:`channels.cascade`, :func:`channels.media.terminate`): the path for reference
    impedances the array path does not take, and its oracle in the tests."""
    own = ch.as_kind("through").without_aggressors()  # the aggressors have their own transfers
    chain = channels.cascade(package(p, ch.f, {"through": "tx"}.get(kind, kind)), own, package(p, ch.f, "rx"))
    if not np.allclose(chain.reference_impedance_ohm, 2 * p.r_d):
        chain = media.terminate(chain, 2 * p.r_d, 2 * p.r_d)
    return resample_response(chain.f, chain.voltage_transfer(), f_new, chain.delay_s, chain.loss_trend_db)
