"""IBIS-AMI models in the engines, against the oracle: the C test models
(``tests/ami_models/ffe_tx.c``, ``ctle_dfe_rx.c``) implement the native Tx FFE and the
native CTLE and DFE, so the native SerDes with the same taps must agree with the AMI path:
to floating point through ``AMI_Init`` (the prepared link, the noise, the statistical eye)
and within the simulator's intervals through ``AMI_GetWave``."""

import numpy as np
import pytest

import channels
import phy
from phy.ami import AmiError, AmiModel
from phy.serdes import prepare_link
from tests.ami_models.build import model_folder

BAUD = 106.25e9
TAPS = (0.0, -0.1, 0.75, -0.15, 0.0, 0.0)  # pre2, pre1, main, post1, post2, post3
TAP_NAMES = ("tap_pre2", "tap_pre1", "tap_main", "tap_post1", "tap_post2", "tap_post3")
CTLE = phy.Ctle.ieee_802_3ck(BAUD, -8)
NOISY = phy.Noise(rx_noise_psd_v2_per_hz=1.5e-15)  # a symbol error ratio near 1e-3 on this channel


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The oracle models, built and named by their .ibs file."""
    d = model_folder(tmp_path_factory.mktemp("oracle"), ("ffe_tx", "ctle_dfe_rx"), "oracle.ibs")
    tx = AmiModel.from_ibs(d / "oracle.ibs", "ffe_tx", parameters=dict(zip(TAP_NAMES, TAPS)))
    rx = AmiModel.from_ibs(d / "oracle.ibs", "ctle_dfe_rx", parameters=dict(
        g_dc_db=CTLE.g_dc_db, g_dc2_db=CTLE.g_dc2_db, f_z_hz=CTLE.f_z_hz, f_p1_hz=CTLE.f_p1_hz, f_p2_hz=CTLE.f_p2_hz,
        f_lf_hz=CTLE.f_lf_hz))
    return {"tx": tx, "rx": rx, "dir": d}


@pytest.fixture(scope="module")
def channel():
    return channels.library.get("chip_to_module")


def _native(dfe=phy.Dfe(4)):
    return phy.Transmitter(ffe=phy.TxFfe(TAPS, main=2, normalise=False)), \
        phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=CTLE, dfe=dfe)


def _ami(models, rx_model=None, dfe=phy.Dfe(4)):
    return phy.Transmitter(ami=models["tx"]), phy.Receiver(bandwidth_hz=0.75 * BAUD, ami=rx_model or models["rx"],
                                                           dfe=dfe)


def test_init_path_is_the_native_link_to_floating_point(models, channel):
    noise = phy.Noise(rx_noise_psd_v2_per_hz=8.2e-18, tx_snr_db=33)
    a = prepare_link(channel, baud_hz=BAUD, tx=_native()[0], rx=_native()[1], noise=noise)
    b = prepare_link(channel, baud_hz=BAUD, tx=_ami(models)[0], rx=_ami(models)[1], noise=noise)
    assert b.sampling_index == a.sampling_index
    np.testing.assert_allclose(b.cursors, a.cursors, rtol=0, atol=1e-11 * a.cursors.max())
    np.testing.assert_allclose(b.dfe, a.dfe, rtol=1e-9)
    assert b.h0_v == pytest.approx(a.h0_v, rel=1e-11)
    # the receiver's noise, shaped by the model's own response (its AMI_Init on a unit impulse)
    assert b.rx_noise_rms_v == pytest.approx(a.rx_noise_rms_v, rel=1e-5)
    assert b.rx_noise_rms_v > 0


def test_statistical_eye_with_models_is_the_native_eye(models, channel):
    kw = dict(baud_hz=BAUD, noise=NOISY, columns="sampling")
    ea = phy.statistical_eye(channel, tx=_native()[0], rx=_native()[1], **kw)
    eb = phy.statistical_eye(channel, tx=_ami(models)[0], rx=_ami(models)[1], **kw)
    assert 1e-5 < ea.ser() < 1e-1
    assert eb.ser() == pytest.approx(ea.ser(), rel=1e-6)


def _oracle_rx(models, lk):
    """The Rx model with the native link's DFE taps (in volts) and slicer reference."""
    h0 = lk.h0_v
    return models["rx"].with_parameters(dfe_n=lk.dfe.size, main_cursor_v=h0,
                                        **{f"dfe_tap{i + 1}": float(b * h0) for i, b in enumerate(lk.dfe)})


def _overlap(a, b) -> bool:
    return a.low <= b.high and b.low <= a.high


def test_getwave_tx_and_rx_agree_with_the_native_simulator(models, channel):
    tx_n, rx_n = _native()
    lk = prepare_link(channel, baud_hz=BAUD, tx=tx_n, rx=rx_n, noise=NOISY)
    rx_fixed = phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=CTLE, dfe=phy.Dfe(4, taps=tuple(lk.dfe)))
    n = 100_000
    native = phy.simulate(channel, n, baud_hz=BAUD, tx=tx_n, rx=rx_fixed, noise=NOISY, seed=3)
    tx_a, rx_a = _ami(models, _oracle_rx(models, lk))
    ami = phy.simulate(channel, n, baud_hz=BAUD, tx=tx_a, rx=rx_a, noise=NOISY, seed=3, eye=True)
    assert ami.n_ui == n and ami.link is None
    assert ami.config["engine"] == "ami-getwave" and ami.config["clock"] == "model"
    assert native.detector_errors > 50 and ami.detector_errors > 50
    assert _overlap(native.ser, ami.ser), (native.ser, ami.ser)
    assert _overlap(native.ber, ami.ber)
    # the slicer's levels learnt from the model's output: the native main cursor
    assert ami.config["main_cursor_v"] == pytest.approx(lk.h0_v, rel=0.01)
    assert ami.eye.counts.sum() == n * ami.eye.counts.shape[0]
    assert "sample_phase" in ami.config["rx_init_params_out"]


def test_getwave_tx_with_an_analog_receiver_finds_its_phase(models, channel):
    """An AMI_GetWave transmitter before a native CTLE (no DFE): the tool's own clock, the
    peak of the output's correlation with the sent symbols, agrees with the native run."""
    rx = phy.Receiver(bandwidth_hz=0.75 * BAUD, ctle=CTLE)
    noise = phy.Noise(rx_noise_psd_v2_per_hz=1.2e-15)
    n = 100_000
    native = phy.simulate(channel, n, baud_hz=BAUD, tx=_native()[0], rx=rx, noise=noise, seed=5)
    ami = phy.simulate(channel, n, baud_hz=BAUD, tx=_ami(models)[0], rx=rx, noise=noise, seed=5)
    assert ami.config["clock"] == "fixed"
    assert native.detector_errors > 50
    assert _overlap(native.ser, ami.ser), (native.ser, ami.ser)


def test_a_linear_receiver_model_runs_in_the_native_simulator(models, channel):
    """A model run by its AMI_Init response (getwave=False) goes through the native
    simulator in its pulse: the same decisions as the native CTLE to a handful."""
    tx_n, rx_n = _native()
    lk = prepare_link(channel, baud_hz=BAUD, tx=tx_n, rx=rx_n, noise=NOISY)
    dfe = phy.Dfe(4, taps=tuple(lk.dfe))
    native = phy.simulate(channel, 50_000, baud_hz=BAUD, tx=tx_n, rx=rx_n.with_(dfe=dfe), noise=NOISY, seed=2)
    linear = AmiModel.from_files(models["rx"].library, models["rx"].ami, parameters=models["rx"].parameters,
                                 getwave=False)
    rx = phy.Receiver(bandwidth_hz=0.75 * BAUD, ami=linear, dfe=dfe)
    r = phy.simulate(channel, 50_000, baud_hz=BAUD, tx=tx_n, rx=rx, noise=NOISY, seed=2)
    assert "engine" not in r.config and native.detector_errors > 20
    assert abs(r.detector_errors - native.detector_errors) <= 2


def test_what_the_waveform_path_does_not_model_is_refused(models, channel):
    tx, rx = _ami(models)
    with pytest.raises(phy.ConfigError, match="does not move edges"):
        phy.simulate(channel, 1000, baud_hz=BAUD, tx=tx, rx=rx, jitter=phy.Jitter(rj_rms_s=1e-13))
    with pytest.raises(phy.ConfigError, match="clock"):
        phy.simulate(channel, 1000, baud_hz=BAUD, tx=tx, rx=rx, cdr=phy.Cdr("mm"))
    with pytest.raises(phy.ConfigError, match="white noise at the sampler"):
        phy.simulate(channel, 1000, baud_hz=BAUD, tx=tx, rx=rx, noise=phy.Noise(rx_noise_rms_v=1e-3))
    with pytest.raises(phy.ConfigError, match="either an FFE or an AMI model"):
        phy.Transmitter(ffe=phy.TxFfe.ieee(pre=(-0.1,)), ami=models["tx"])
    with pytest.raises(phy.ConfigError, match="either a CTLE or an AMI model"):
        phy.Receiver(ctle=CTLE, ami=models["rx"])


def test_model_parameters_are_checked_when_the_model_is_made(models):
    with pytest.raises(AmiError, match="tap_main"):
        models["tx"].with_parameters(tap_main=3.0)
    with pytest.raises(AmiError, match="tap_man"):
        models["tx"].with_parameters(tap_man=0.5)


def test_bad_run_settings_are_refused(models, channel):
    tx, rx = _ami(models)
    with pytest.raises(phy.ConfigError, match="eye_bins"):
        phy.simulate(channel, 1000, baud_hz=BAUD, tx=tx, rx=rx, eye=True, eye_bins=0)
    with pytest.raises(phy.ConfigError, match="warm-up of 10,000,000,000 UIs"):
        phy.simulate(channel, 1000, baud_hz=BAUD, tx=tx, rx=rx, warmup_ui=10**10)
