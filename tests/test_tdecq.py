"""TDECQ (channels.tdecq): 0 dB for an ideal eye, growing with the transmitter's band limit
and the fibre's dispersion; the noise at the target from the closed form."""

import numpy as np
import pytest
from scipy import special

from channels import ChannelError
from channels.optical import Fibre, OpticalPath, OpticalTransmitter
from channels.tdecq import Q_T, SER_TARGET, _ser, tdecq

BAUD = 53.125e9


def _path(bw=None, length=500.0, width=0.0, wavelength=1311e-9):
    tx = OpticalTransmitter(bandwidth_hz=None if bw is None else bw * BAUD, spectral_width_rms_m=width,
                            wavelength_m=wavelength)
    return OpticalPath.point_to_point(Fibre.smf(length), 2, tx)


def test_the_ideal_eye_is_the_reference():
    # 1.5 Q(3.414) is the target: the noise that just meets it on an ISI-free eye is OMA / (6 Q_t)
    assert 1.5 * 0.5 * special.erfc(Q_T / np.sqrt(2)) == pytest.approx(SER_TARGET, rel=0.01)
    assert _ser(np.array([0.0, 1.0, 0.0]), 1, 1 / (6 * Q_T)) == pytest.approx(1.5 * 0.5 * special.erfc(Q_T / np.sqrt(2)))
    r = tdecq(_path(), BAUD, reference_bandwidth_hz=float("inf"))
    assert abs(r.tdecq_db) < 0.05 and abs(r.ceq_db) < 0.05


def test_tdecq_grows_as_the_transmitter_slows_and_the_fibre_disperses():
    t = [tdecq(_path(bw), BAUD).tdecq_db for bw in (None, 0.75, 0.6, 0.5, 0.4)]
    assert all(a < b for a, b in zip(t, t[1:]))
    assert 0 < t[0] < 0.5  # the reference receiver (0.5 baud) alone costs a little
    # at 1271 nm (an FR4 lane, about -3.6 ps/nm/km) a 1 nm-wide source disperses over 2 km
    near, far = (tdecq(_path(0.75, L, 1e-9, 1271e-9), BAUD).tdecq_db for L in (100.0, 2000.0))
    assert far > near + 0.1
    r = tdecq(_path(0.5), BAUD)
    assert sum(r.taps) == pytest.approx(1.0) and r.ceq_db > 0
    assert max(r.ser_at.values()) == pytest.approx(SER_TARGET, rel=1e-3)


def test_bad_tdecq_input():
    with pytest.raises(ChannelError, match="odd"):
        tdecq(_path(), BAUD, taps=4)
