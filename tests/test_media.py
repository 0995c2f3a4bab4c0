"""Physics builders against closed forms: lines, reflections, echoes, loss, lumped parts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import channels
from channels import media

C0 = 299_792_458.0
NP_TO_DB = 20 / np.log(10)


def test_matched_lossless_line_is_unity_with_delay_length_over_velocity():
    dk, length = 4.0, 0.25
    ch = media.diff_line(length, 100.0, dk=dk, df=0.0, zcomm_ohm=25.0)
    tau = length * np.sqrt(dk) / C0
    np.testing.assert_allclose(np.abs(ch.sdd21), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.abs(ch.sdd11), 0.0, atol=1e-6)
    np.testing.assert_allclose(np.abs(ch.scd21), 0.0, atol=1e-12)
    # phase is exactly -2 pi f tau (rad), the delay is length / velocity
    phase = np.unwrap(np.angle(ch.sdd21))
    np.testing.assert_allclose(phase[1:], -2 * np.pi * ch.f[1:] * tau, rtol=1e-9)
    assert ch.delay_s == pytest.approx(tau, rel=1e-9)
    np.testing.assert_allclose(ch.group_delay_s()[1:-1], tau, rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(z2=st.floats(30.0, 200.0), dk=st.floats(1.5, 4.5))
def test_impedance_step_reflects_z2_minus_z1_over_z2_plus_z1(z2, dk):
    """TDR of line(100) | line(z2) | line(100): between the two echoes the reflected step
    equals (Z2 - Z1) / (Z2 + Z1), and a quarter-wave section has the closed-form |S11|."""
    freq = np.arange(0, 4001) * 25e6  # DC..100 GHz
    l1, l2 = 0.03, 0.06
    ch = channels.cascade(
        media.diff_line(l1, 100, dk=dk, df=0, frequency=freq),
        media.diff_line(l2, z2, dk=dk, df=0, frequency=freq),
        media.diff_line(l1, 100, dk=dk, df=0, frequency=freq),
    )
    gamma = (z2 - 100) / (z2 + 100)
    tau1, tau2 = l1 * np.sqrt(dk) / C0, l2 * np.sqrt(dk) / C0
    # long enough for the bounces inside the section to die out before the record wraps
    step = ch.step_response("sdd11", dt_s=0.5e-12, duration_s=12e-9, rise_time_s=8e-12)
    t = step.time_s
    plateau = (t > 2 * tau1 + 0.2 * 2 * tau2) & (t < 2 * tau1 + 0.8 * 2 * tau2)
    assert np.mean(step.samples[plateau]) == pytest.approx(gamma, abs=2e-3)
    z = step.impedance_ohm()[plateau].mean()
    assert z == pytest.approx(z2, rel=5e-3)
    # frequency domain: where the middle section is a quarter wave, |S11| is closed form
    only = media.diff_line(l2, z2, dk=dk, df=0, frequency=freq)
    fq = 1 / (4 * tau2)
    s11 = abs(np.interp(fq, freq, np.abs(only.sdd11)))
    assert s11 == pytest.approx(abs(z2**2 - 100**2) / (z2**2 + 100**2), abs=2e-3)


def test_echo_appears_at_twice_the_section_delay():
    """A section of another impedance between matched lines: the pulse response carries
    an echo 2 tau later, Gamma^2 times the main pulse (lossless, so exactly)."""
    dk, z2, lb = 3.5, 80.0, 0.04
    ch = channels.cascade(
        media.diff_line(0.05, 100, dk=dk, df=0), media.diff_line(lb, z2, dk=dk, df=0),
        media.diff_line(0.05, 100, dk=dk, df=0),
    )
    baud = 53.125e9
    pr = ch.pulse_response(baud, 32, rise_time_s=12e-12)
    tau_b = lb * np.sqrt(dk) / C0
    echo_idx = pr.main_index + int(round(2 * tau_b / pr.dt_s))
    window = pr.samples[echo_idx - 40 : echo_idx + 41]
    peak = echo_idx - 40 + int(np.argmax(window))
    assert abs(peak - echo_idx) <= 1
    gamma = (z2 - 100) / (z2 + 100)
    assert pr.samples[echo_idx] / pr.main_cursor == pytest.approx(gamma**2, rel=0.02)
    # nothing else in between: the line is matched elsewhere
    between = pr.samples[pr.main_index + 3 * 32 : echo_idx - 3 * 32]
    assert np.max(np.abs(between)) < 0.05 * gamma**2


def test_dielectric_loss_matches_closed_form():
    """IL = 8.686 pi f sqrt(dk) tan(delta) L / c at the frequency where dk, df are given."""
    dk, df, length, f_ref = 3.4, 0.004, 0.5, 20e9
    ch = media.diff_line(length, 100, dk=dk, df=df, f_ref_hz=f_ref)
    expected = NP_TO_DB * np.pi * f_ref * np.sqrt(dk) * df * length / C0
    assert ch.insertion_loss_db(f_ref) == pytest.approx(expected, rel=0.01)


def test_conductor_loss_and_dc_resistance_match_closed_forms():
    length, awg = 2.0, 26
    ch = media.twinax(length, awg, df=0.0, proximity_factor=1.0)
    d = media.awg_diameter_m(awg)
    r_dc = 4 / (5.8e7 * np.pi * d * d)  # ohm/m per wire
    # DC: the differential mode sees both wires in series in a 100 ohm system
    assert abs(ch.sdd21[0]) == pytest.approx(200 / (200 + 2 * r_dc * length), rel=1e-5)
    # skin effect: alpha = R'/(2 Z) with R' = 2 R_s / (pi d) for the differential loop
    f = 40e9
    rs = np.sqrt(np.pi * f * 4e-7 * np.pi / 5.8e7)
    alpha = 2 * rs / (np.pi * d) / (2 * 100)
    assert ch.insertion_loss_db(f) == pytest.approx(NP_TO_DB * alpha * length, rel=0.02)


def test_twinax_loss_matches_published_figures():
    """26 AWG about 7.1 dB/m and 30 AWG about 10.2 dB/m at 53.125 GHz (vendor figures)."""
    assert media.twinax(1.0, 26).insertion_loss_db(53.125e9) == pytest.approx(7.14, abs=0.3)
    assert media.twinax(1.0, 30).insertion_loss_db(53.125e9) == pytest.approx(10.23, abs=0.4)
    # foam twinax time of flight 4.0 to 4.3 ns/m (REFERENCES.md)
    assert 4.0e-9 <= media.twinax(1.0).delay_s <= 4.3e-9
    # thicker wire, lower loss
    losses = [media.twinax(1.0, a).insertion_loss_db(53.125e9) for a in (24, 26, 28, 30)]
    assert losses == sorted(losses)


def test_stripline_delay_and_loss_per_inch():
    ch = media.stripline(0.0254)
    assert ch.delay_s / 0.0254 == pytest.approx(np.sqrt(3.4) / C0, rel=0.02)  # about 6.2 ns/m
    assert 0.8 <= ch.insertion_loss_db(26.5625e9) <= 1.05  # dB/in, low-loss laminate
    rough = media.stripline(0.0254, roughness_rms_m=2e-6)
    assert rough.insertion_loss_db(26.5625e9) > ch.insertion_loss_db(26.5625e9) + 0.1


def test_microstrip_is_faster_than_stripline():
    ms, sl = media.microstrip(0.1), media.stripline(0.1)
    assert ms.delay_s < sl.delay_s
    eps_eff = (ms.delay_s * C0 / 0.1) ** 2
    assert 1.0 < eps_eff < 3.4


def test_via_stub_notches_at_quarter_wave():
    stub, dk = 1.0e-3, 3.4
    ch = media.via(stub_length_m=stub, dk=dk, df=0.0)
    f_notch = C0 / (4 * stub * np.sqrt(dk))
    i = int(np.argmin(np.abs(ch.sdd21)))
    assert ch.f[i] == pytest.approx(f_notch, rel=0.01)
    assert abs(ch.sdd21[i]) < 0.05
    assert abs(media.via(dk=dk).sdd21[i]) > 0.9  # no stub, no notch


def test_skew_converts_modes_as_cos_and_sin():
    tau = 4e-12
    ch = media.skew(tau)
    np.testing.assert_allclose(np.abs(ch.sdd21), np.abs(np.cos(np.pi * ch.f * tau)), atol=1e-9)
    np.testing.assert_allclose(np.abs(ch.scd21), np.abs(np.sin(np.pi * ch.f * tau)), atol=1e-9)


def test_ac_cap_blocks_dc_with_time_constant_2_z0_c():
    c = 10e-9
    f3 = 1 / (2 * np.pi * 2 * 50 * c)  # -3 dB of the differential high-pass
    freq = np.array([0.0, f3 / 10, f3, 10 * f3, 1e9])
    ch = media.ac_cap(c, frequency=freq)
    s = np.abs(ch.sdd21)
    assert s[0] == 0.0
    assert s[2] == pytest.approx(1 / np.sqrt(2), rel=1e-6)
    assert s[-1] == pytest.approx(1.0, abs=1e-6)


def test_die_termination_reflects_and_scales_the_received_voltage():
    line = media.diff_line(0.1, 100, dk=3.0, df=0, zcomm_ohm=25)
    ch = media.terminate(line, tx_ohm=100, rx_ohm=80)
    gamma_l = (80 - 100) / (80 + 100)
    # the receiver's port sees the 100 ohm line: |Sdd22| = |Gamma|
    np.testing.assert_allclose(np.abs(ch.sdd22), abs(gamma_l), atol=1e-6)
    # a matched source absorbs the reflection: the received voltage is (1 + Gamma_L) flat
    np.testing.assert_allclose(np.abs(ch.voltage_transfer()), 1 + gamma_l, atol=1e-6)
    # both ends mismatched: Fabry-Perot ripple with period 1 / (2 tau)
    both = media.terminate(line, tx_ohm=70, rx_ohm=70)
    h = np.abs(both.voltage_transfer())
    tau = 0.1 * np.sqrt(3.0) / C0
    peaks = np.flatnonzero((h[1:-1] > h[:-2]) & (h[1:-1] > h[2:])) + 1
    assert np.median(np.diff(both.f[peaks])) == pytest.approx(1 / (2 * tau), rel=0.02)
    # die capacitance rolls the response off
    cap = media.terminate(line, tx_cap_f=150e-15, rx_cap_f=150e-15)
    assert cap.insertion_loss_db(50e9) > line.insertion_loss_db(50e9) + 1


@pytest.mark.parametrize(
    "build",
    [
        lambda: media.twinax(1.0),
        lambda: media.stripline(0.2),
        lambda: media.microstrip(0.05),
        lambda: media.via(stub_length_m=0.5e-3),
        lambda: media.package(),
        lambda: media.ac_cap(esl_h=0.3e-9, esr_ohm=0.1),
        lambda: media.skew(3e-12),
        lambda: media.terminate(media.stripline(0.05), 90, 85, tx_cap_f=1e-13),
    ],
)
def test_builders_are_passive_reciprocal_and_causal(build):
    ch = build()
    q = ch.quality
    assert q.max_singular_value <= 1 + 1e-9
    assert q.max_reciprocity_error < 1e-6
    assert q.ok, q.problems()


def test_symmetric_sections_have_no_mode_conversion_but_differ_in_modes():
    ch = media.diff_line(0.1, 100, dk=3.5, df=0, zcomm_ohm=35)
    assert np.max(np.abs(ch.scd21)) < 1e-12
    # the common mode has its own impedance: it reflects where the differential does not
    assert np.max(np.abs(ch.parameter("scc11"))) > 0.1
    assert np.max(np.abs(ch.sdd11)) < 1e-6


def test_section_cascade_equals_one_long_line():
    a = media.stripline(0.05)
    b = media.stripline(0.07)
    np.testing.assert_allclose((a ** b).sdd21, media.stripline(0.12).sdd21, atol=1e-9)
