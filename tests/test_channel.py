"""The Channel type: mixed mode, cascading, grids, ILD, quality, aggressors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import skrf as rf
from hypothesis import given, settings
from hypothesis import strategies as st

import channels
from channels import media
from channels.channel import mixed_mode_to_se, se_to_mixed_mode
from channels.quality import check_quality, enforce_passivity, p370_reference

from conftest import shared_file


def _random_network(rng, nf=50, z0=50.0):
    s = (rng.normal(size=(nf, 4, 4)) + 1j * rng.normal(size=(nf, 4, 4))) * 0.3
    return rf.Network(frequency=rf.Frequency.from_f(np.linspace(0, 10e9, nf), unit="hz"), s=s, z0=z0)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), z0=st.sampled_from([50.0, 42.5, 85.0]))
def test_fast_mixed_mode_transform_equals_scikit_rf(seed, z0):
    se = _random_network(np.random.default_rng(seed), z0=z0)
    ours = se_to_mixed_mode(se)
    ref = se.copy()
    ref.se2gmm(p=2)
    np.testing.assert_allclose(ours.s, ref.s, atol=1e-12)
    np.testing.assert_allclose(ours.z0, ref.z0, atol=1e-12)
    back = mixed_mode_to_se(ours)
    np.testing.assert_allclose(back.s, se.s, atol=1e-12)


def test_mixed_mode_of_unequal_references_falls_back_to_scikit_rf():
    se = _random_network(np.random.default_rng(1))
    se.renormalize(np.array([40.0, 45.0, 50.0, 55.0]))
    ref = se.copy()
    ref.se2gmm(p=2)
    np.testing.assert_allclose(se_to_mixed_mode(se).s, ref.s, atol=1e-12)


def test_cascade_equals_scikit_rf_cascade_of_single_ended_networks():
    a, b = media.twinax(0.5), media.connector()
    ours = a.cascade(b)
    ref = a.single_ended ** b.single_ended
    np.testing.assert_allclose(ours.single_ended.s, ref.s, atol=1e-12)
    ref.se2gmm(p=2)
    np.testing.assert_allclose(ours.network.s, ref.s, atol=1e-12)


def test_cascade_rejects_different_grids_and_common_grid_resamples():
    a = media.stripline(0.05, frequency=np.linspace(0, 40e9, 401))
    b = media.stripline(0.05, frequency=np.linspace(0, 50e9, 1001))
    with pytest.raises(channels.ChannelError, match="different frequency grids"):
        a.cascade(b)
    ab = channels.cascade(a, b, grid="common")
    assert ab.f[-1] == pytest.approx(40e9) and ab.f[1] == pytest.approx(50e6)
    ref = media.stripline(0.1, frequency=ab.f)
    np.testing.assert_allclose(ab.sdd21, ref.sdd21, atol=1e-3)


def test_differential_only_channel_cascades_with_a_full_one():
    full = media.stripline(0.05)
    dd_only = channels.Channel.from_differential(full.network.subnetwork([0, 1]), name="dd")
    both = dd_only.cascade(full)
    assert both.nports == 2
    np.testing.assert_allclose(both.sdd21, media.stripline(0.1).sdd21, atol=1e-6)


def test_from_mixed_mode_round_trip():
    ch = media.twinax(0.3)
    back = channels.Channel.from_mixed_mode(ch.network)
    np.testing.assert_allclose(back.single_ended.s, ch.single_ended.s, atol=1e-12)


def test_resample_on_a_coarse_grid_reproduces_the_fine_one():
    """De-rotated cubic interpolation from a 100 MHz grid onto a 10 MHz one: a 1 m cable
    turns its phase by 2.6 rad per coarse step and still comes back to 1e-3 above the
    first coarse step (below it the skin-effect onset is not resolved by the coarse data)."""
    fine = np.arange(0, 4001) * 10e6
    coarse = fine[::10]
    ch = media.twinax(1.0, frequency=coarse)
    truth = media.twinax(1.0, frequency=fine)
    up = ch.resample(fine)
    err21 = np.abs(up.sdd21 - truth.sdd21)
    err11 = np.abs(up.sdd11 - truth.sdd11)
    above = fine >= 200e6
    assert err21[above].max() < 1e-3 and err11[above].max() < 3e-3
    assert err21.max() < 1e-2
    np.testing.assert_allclose(up.sdd21[::10], ch.sdd21, atol=1e-12)  # the data points are kept


def test_dc_extrapolation_and_extension_are_physically_sensible():
    truth = media.twinax(2.0)  # DC..120 GHz
    band = (truth.f >= 10e6) & (truth.f <= 60e9)
    cut = truth.resample(truth.f[band])  # as if measured from 10 MHz to 60 GHz
    wide = cut.uniform(120e9, 10e6)
    g = wide.grid
    assert g.dc_extrapolated and g.extrapolated_above_hz == pytest.approx(60e9)
    assert g.source_f_min_hz == pytest.approx(10e6)
    assert wide.sdd21[0].imag == 0
    # the DC value is linearly extrapolated from 10 and 20 MHz, where the skin effect
    # already acts: it cannot see the DC resistance and lands within 1 % of the truth
    assert wide.sdd21[0].real == pytest.approx(truth.sdd21[0].real, rel=0.01)
    # above the data the loss keeps growing as the physics says (within 1.5 dB at 2x)
    il_true = truth.insertion_loss_db(np.array([80e9, 100e9, 120e9]))
    il_ext = wide.insertion_loss_db(np.array([80e9, 100e9, 120e9]))
    np.testing.assert_allclose(il_ext, il_true, atol=1.5)
    above = wide.f > 60e9
    assert np.all(np.diff(wide.insertion_loss_db()[above]) >= -1e-9)
    # continuity at the seam
    i = np.searchsorted(wide.f, 60e9)
    assert abs(wide.insertion_loss_db()[i + 1] - wide.insertion_loss_db()[i]) < 0.05


@pytest.mark.parametrize(
    "rel",
    ["ieee802.3ck/DPO_14in_Meg7_THRU.s4p", "ieee802.3ck/CA_19p75dB_thru.s4p",
     "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_thru.s4p", "vita-backplane/example2_THRU.s4p"],
)
def test_dc_extrapolation_of_real_files_within_two_percent(rel):
    """Files that include DC, cut at 10 MHz and extrapolated back: the DC gain is within 2 %."""
    ch = channels.load(shared_file(rel))
    cut = ch.resample(ch.f[ch.f >= 10e6])
    back = cut.uniform(ch.f[-1], ch.f[1] - ch.f[0])
    assert back.sdd21[0].real == pytest.approx(ch.sdd21[0].real, rel=0.02)
    assert back.sdd21[0].imag == 0


def test_lossless_channel_extends_flat():
    ch = media.diff_line(0.1, 100, dk=3, df=0, zcomm_ohm=25, frequency=np.linspace(0, 50e9, 501))
    wide = ch.uniform(200e9, 100e6)
    np.testing.assert_allclose(np.abs(wide.sdd21), 1.0, atol=1e-5)
    phase = np.unwrap(np.angle(wide.sdd21))
    np.testing.assert_allclose(phase, -2 * np.pi * wide.f * ch.delay_s, atol=1e-4)


def test_ild_recovers_a_known_fitted_loss_exactly():
    f = np.linspace(0, 50e9, 501)
    g = f / 1e9
    coef = (0.5, 1.2, 0.35, 0.001)
    il = coef[0] + coef[1] * np.sqrt(g) + coef[2] * g + coef[3] * g * g
    s21 = 10 ** (-il / 20) * np.exp(-2j * np.pi * f * 1e-9)
    s = np.zeros((f.size, 2, 2), dtype=complex)
    s[:, 1, 0] = s[:, 0, 1] = s21
    ch = channels.Channel.from_differential(rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=100))
    res = ch.ild(baud_hz=50e9)
    np.testing.assert_allclose(res.coefficients, coef, rtol=1e-6, atol=1e-9)
    assert res.rms_ild_db < 1e-8 and res.fom_ild_db < 1e-8
    np.testing.assert_allclose(res.fitted_il_db(f[1:]), il[1:], atol=1e-8)


def test_reflections_raise_the_ild():
    smooth = media.stripline(0.2)
    bumpy = channels.cascade(media.stripline(0.1), media.connector(zdiff_ohm=75), media.stripline(0.1))
    assert smooth.ild(53.125e9).fom_ild_db < 0.02
    assert bumpy.ild(53.125e9).fom_ild_db > 5 * smooth.ild(53.125e9).fom_ild_db


def test_quality_metrics_equal_scikit_rf_ieee370():
    ch = channels.load(shared_file("ieee802.3ck/CA_19p75dB_thru.s4p"))
    ntwk = ch.single_ended
    ours = check_quality(ntwk)
    ref = p370_reference(ntwk)
    assert ours.passivity_pct == pytest.approx(ref["passivity"]["value"], abs=1e-9)
    assert ours.reciprocity_pct == pytest.approx(ref["reciprocity"]["value"], abs=1e-9)
    assert ours.causality_pct == pytest.approx(ref["causality"]["value"], abs=1e-9)
    assert ours.passivity == ref["passivity"]["evaluation"]
    assert ours.max_singular_value == pytest.approx(1.0005, abs=1e-4)  # MANIFEST


def test_non_passive_data_warns_and_enforcement_fixes_it(tmp_path):
    ch = media.stripline(0.02, frequency=np.linspace(0, 20e9, 201))
    hot = ch.single_ended.copy()
    hot.s = hot.s * 1.14  # "max singular values reach 1.14 in measured files"
    hot.write_touchstone(str(tmp_path / "hot"))
    with pytest.warns(channels.ChannelQualityWarning, match="passivity"):
        loaded = channels.load(tmp_path / "hot.s4p")
    assert loaded.quality.max_singular_value == pytest.approx(1.14 * ch.quality.max_singular_value, rel=1e-6)
    fixed = loaded.enforce_passivity()
    assert fixed.quality.max_singular_value <= 1 + 1e-12
    assert fixed.quality.passivity == "good"
    # same construction as scikit-rf's IEEE 370 create_passive
    from skrf.calibration.deembedding import IEEEP370_TD_QM

    ref = IEEEP370_TD_QM.create_passive(None, loaded.single_ended)
    np.testing.assert_allclose(enforce_passivity(loaded.single_ended).s, ref.s, atol=1e-12)


def test_aggressors_follow_the_cascade_rules():
    """FEXT of the first part continues through the second; NEXT of the first goes back
    through the second and forward again; aggressors of the second: FEXT preceded by the
    first's through, NEXT unchanged."""
    freq = np.arange(0, 3001) * 10e6
    a = media.stripline(0.1, frequency=freq)
    b = media.twinax(0.5, frequency=freq)
    xt = media.diff_line(0.0, 100, dk=3, df=0, frequency=freq)  # a unit coupling
    xt = channels.Channel(xt.single_ended.copy(), kind="fext")
    scale = 0.01

    def scaled(kind):
        se = xt.single_ended.copy()
        se.s = se.s * scale
        return channels.Channel(se, name=kind, kind=kind)

    a2 = a.with_aggressors(scaled("fext"), scaled("next"))
    b2 = b.with_aggressors(scaled("fext"), scaled("next"))
    ab = a2.cascade(b2)
    got = {(x.name, i): x for i, x in enumerate(ab.aggressors)}
    (fa, na, fb, nb) = [x for _, x in sorted(got.items(), key=lambda kv: kv[0][1])]
    sb, sa = b.sdd21, a.sdd21
    np.testing.assert_allclose(fa.sdd21, scale * sb, atol=1e-6)
    np.testing.assert_allclose(na.sdd21, scale * sb * sb, atol=1e-6)
    np.testing.assert_allclose(fb.sdd21, scale * sa, atol=1e-6)
    np.testing.assert_allclose(nb.sdd21, scale * np.ones_like(sa), atol=1e-6)
    assert [x.kind for x in (fa, na, fb, nb)] == ["fext", "next", "fext", "next"]


def test_loss_figures_interpolate_and_refuse_outside_the_band():
    ch = media.stripline(0.1, frequency=np.linspace(0, 50e9, 501))
    il = ch.insertion_loss_db(np.array([10e9, 20e9]))
    assert il.shape == (2,) and np.all(il > 0)
    assert isinstance(ch.insertion_loss_db(10e9), float)
    assert ch.return_loss_db(10e9, port=2) > 20
    with pytest.raises(channels.ChannelError, match="outside the data"):
        ch.insertion_loss_db(60e9)


def test_summary_and_to_dict_are_plain_json():
    import json

    ch = channels.library.get("twinax_1m_26awg")
    d = ch.to_dict()
    json.dumps(d)
    assert d["nyquist"][1]["insertion_loss_db"] == pytest.approx(7.74, abs=0.05)
    pr = ch.pulse_response(53.125e9, 8)
    json.dumps(pr.to_dict(include_samples=True))


def test_load_warnings_can_be_silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        channels.load(shared_file("measured/CABLE1_TX_pair.s4p"), check_quality=False)
