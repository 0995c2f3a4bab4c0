"""The laser against what the path reflects back (channels.feedback): the return loss it
faces, the feedback regimes, RIN that grows past the specified return loss, the isolator,
and the worst connector reflectance a link's noise budget takes."""

import math

import numpy as np
import pytest

from channels import ChannelError
from channels.feedback import (
    back_loss_db,
    feedback_db,
    feedback_regime,
    laser_rin_db_per_hz,
    reflectance_tolerance_db,
    return_loss_db,
    with_reflectance,
)
from channels.optical import (
    Fibre,
    OpticalConnector,
    OpticalPath,
    OpticalReceiver,
    OpticalTransmitter,
)


def _path(n=2, refl=-35.0, **tx):
    return OpticalPath.point_to_point(Fibre.smf(100.0), n, OpticalTransmitter(**tx),
                                      connector=OpticalConnector(0.5, refl))


def test_return_loss_by_hand():
    # one connector right after the laser (half its loss each side), the fibre, the receiver
    tx = OpticalTransmitter(reflectance_db=None)
    p = OpticalPath((tx), (OpticalConnector(0.5, -30.0), Fibre.smf(1000.0)), OpticalReceiver(reflectance_db=-26.0))
    back = 10 ** (-30 / 10) * 10 ** (-2 * 0.25 / 10) + 10 ** (-26 / 10) * 10 ** (-2 * (0.5 + 0.4) / 10)
    assert return_loss_db(p) == pytest.approx(-10 * math.log10(back), rel=1e-12)
    # the laser's own facet is not what it faces
    assert return_loss_db(_path(reflectance_db=-10.0)) == pytest.approx(return_loss_db(_path(reflectance_db=-40.0)))


def test_without_a_specified_return_loss_the_rin_ignores_reflections():
    for r in (-60.0, -20.0, -12.0):
        assert laser_rin_db_per_hz(_path(refl=r)) == -136.0


def test_rin_at_the_regime_boundaries():
    # the spec's return loss sits 10 dB below coherence collapse: RIN as specified there
    tx = OpticalTransmitter(rin_orl_db=21.4)
    assert back_loss_db(tx) == pytest.approx(-21.4 + 50.0)
    onset = tx.coherence_collapse_db

    def at(fb):
        # a single reflector at the receiver placed to give that feedback
        p = OpticalPath(tx, (Fibre.smf(1.0),), OpticalReceiver(reflectance_db=fb + back_loss_db(tx) + 2 * 0.0004))
        return p

    spec = at(onset - 10.0)
    assert feedback_db(spec) == pytest.approx(onset - 10.0, abs=1e-6)
    assert laser_rin_db_per_hz(spec) == pytest.approx(-136.0, abs=1e-9)
    assert feedback_regime(at(onset - 10.5)) == "weak" and feedback_regime(at(onset - 9.5)) == "onset"
    assert feedback_regime(at(onset - 0.1)) == "onset" and feedback_regime(at(onset + 0.1)) == "coherence collapse"
    # 3 dB up at the onset (less the specification's own 0.04 dB), 20 dB per decade beyond
    assert laser_rin_db_per_hz(at(onset)) - (-136.0) == pytest.approx(10 * np.log10(2 / 1.01), abs=1e-6)
    def growth(x):
        return 10 * np.log10(1 + (10 ** ((x - onset) / 10)) ** 2)

    assert laser_rin_db_per_hz(at(onset + 10)) - laser_rin_db_per_hz(at(onset + 5)) == pytest.approx(
        growth(onset + 10) - growth(onset + 5), abs=1e-6)
    assert laser_rin_db_per_hz(at(onset + 10)) - laser_rin_db_per_hz(at(onset + 5)) > 9  # toward 20 dB per decade
    # weaker feedback than the specification's never lowers the RIN below it
    assert laser_rin_db_per_hz(at(onset - 30)) == pytest.approx(-136.0)


def test_an_isolator_lowers_the_feedback_and_the_rin():
    rins = [laser_rin_db_per_hz(_path(4, -14.0, rin_orl_db=21.4, isolation_db=i)) for i in (0.0, 10.0, 20.0, 30.0)]
    assert all(a > b for a, b in zip(rins, rins[1:]))


def test_reflectance_tolerance_falls_with_every_connector_and_rises_with_isolation():
    kp4 = 2.08e-4
    tol = [reflectance_tolerance_db(_path(n, rin_orl_db=21.4), kp4) for n in (2, 4, 6, 8)]
    assert all(a > b for a, b in zip(tol, tol[1:]))
    # at the tolerance the budget just meets the threshold
    p = _path(4, rin_orl_db=21.4)
    assert with_reflectance(p, tol[1]).budget().ber <= kp4 < with_reflectance(p, tol[1] + 0.05).budget().ber
    iso = reflectance_tolerance_db(_path(4, rin_orl_db=21.4, isolation_db=45.0), kp4)
    assert iso > tol[1]
    # a looser FEC threshold takes more reflection (the inner code's, about 1.7e-3)
    assert reflectance_tolerance_db(_path(4, rin_orl_db=21.4), 1.7e-3) > tol[1]


def test_bad_feedback_input():
    with pytest.raises(ChannelError, match="rin_orl_db"):
        OpticalTransmitter(rin_orl_db=-3.0)
    with pytest.raises(ChannelError, match="coherence_collapse_db"):
        OpticalTransmitter(coherence_collapse_db=5.0)
    with pytest.raises(ChannelError, match="isolation_db"):
        OpticalTransmitter(isolation_db=-1.0)
    with pytest.raises(ChannelError, match="needs a path with connectors"):
        reflectance_tolerance_db(OpticalPath(OpticalTransmitter(), (Fibre.smf(10.0),)), 1e-4)
