"""The clock recovery's loop on the README's simulator link (issue 31).

The README's example lost lock with ``phy.Cdr("mm")``: its sinusoidal jitter (0.05 UI at
baud / 1000) sits at the default loop's natural frequency (about baud / 1300, damping
0.6), where the loop follows none of it. The CDR is right (without the jitter it locks at
the Mueller-Muller point with 0.002 UI rms); the example asked the default loop for what
it cannot do, and now uses a loop twice as fast. These tests hold that finding.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import channels
import phy

BAUD = 106.25e9


def _readme_link():
    tx = phy.Transmitter("pam4", swing_v=0.4, level_mismatch=0.95, rise_time_s=4e-12,
                         ffe=phy.TxFfe.ieee(pre=(-0.1,)), pattern="prbs31")
    rx = phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=phy.Ctle.ieee_802_3ck(BAUD, g_dc_db=-10),
                      ffe=phy.RxFfe(0, 0), dfe=phy.Dfe(8, limits=1.0))
    return {"baud_hz": BAUD, "tx": tx, "rx": rx, "noise": phy.Noise(tx_snr_db=33, rx_noise_psd_v2_per_hz=8.2e-18)}


SJ = phy.Jitter(rj_rms_s=0.01 / BAUD, sj_amplitude_s=0.05 / BAUD, sj_frequency_hz=BAUD / 1000)


def test_the_gains_are_floats_whatever_their_spelling():
    """An int gain (``ki_ui=0``) compiled the simulator's kernel a second time (7 s)."""
    c = phy.Cdr("mm", kp_ui=0, ki_ui=0, phase_limit_ui=1, lock_bound_ui=1)
    assert [type(x) for x in (c.kp_ui, c.ki_ui, c.phase_limit_ui, c.lock_bound_ui)] == [float] * 4
    assert c == phy.Cdr("mm", kp_ui=0.0, ki_ui=0.0, phase_limit_ui=1.0, lock_bound_ui=1.0)


def test_without_jitter_the_loop_locks_at_the_mueller_muller_point():
    ch = channels.library.get("chip_to_module")
    r = phy.simulate(ch, 200_000, jitter=phy.Jitter(rj_rms_s=0.01 / BAUD), cdr=phy.Cdr("mm"), seed=1, **_readme_link())
    mm = phy.serdes.prepare_link(ch, cdr=phy.Cdr("mm", phase="mm"), **{k: v for k, v in _readme_link().items()
                                                                        if k != "noise"})
    peak = phy.serdes.prepare_link(ch, **{k: v for k, v in _readme_link().items() if k != "noise"})
    mm_offset_s = (mm.sampling_index - peak.sampling_index) * peak.pulse.dt_s
    assert r.cdr_locked is True and r.ser.count == 0
    assert r.cdr_phase_rms_s * BAUD < 0.005
    assert r.cdr_phase_mean_s == pytest.approx(mm_offset_s, abs=0.005 / BAUD)


def test_the_readmes_jitter_needs_the_faster_loop():
    """At baud / 1000 the default loop's sampling error is the jitter's own: it errs far
    more than a fixed phase (and slips after about a million UI); twice as fast, it follows
    the jitter and errs no more than the fixed phase."""
    ch = channels.library.get("chip_to_module")
    kw = dict(jitter=SJ, seed=1, **_readme_link())
    fixed = phy.simulate(ch, 600_000, cdr=phy.Cdr("fixed", phase="mm"), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", phy.CdrLockWarning)
        default = phy.simulate(ch, 600_000, cdr=phy.Cdr("mm"), **kw)
        fast = phy.simulate(ch, 600_000, cdr=phy.Cdr("mm", kp_ui=2**-6, ki_ui=2**-13), **kw)
    assert default.ser.low > 5 * fixed.ser.high
    assert fast.cdr_locked is True and fast.ser.count <= fixed.ser.count
    assert np.isfinite(fast.ser.value)
