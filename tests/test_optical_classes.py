"""Optical link classes with spec-corner and typical parts (channels.optical_parts,
phy.link.optics): 802.3's RIN_xOMA definition, the corner part at 802.3 Cl. 140's limits,
the budgets closing at 100G per lane and which class fails at 200G and why."""

from dataclasses import replace

import numpy as np
import pytest

import channels
from channels.optical import OpticalTransmitter
from channels.optical_parts import CORNER, _tdecq_with_rin, corner_path, part_path, solve_rx_noise, typical_path
from phy.link import LinkSpec, OpticalClass, evaluate_link

DR_BAUD = 53.125e9


def test_rin_noise_is_rin_xoma_over_the_square_waves_power():
    # 802.3 52.9.6: RIN_xOMA = 10 log10(P_N / (BW P_OMA)), P_OMA the electrical power of the
    # square-wave-modulated signal: a square wave of peak-to-peak R OMA carries (R OMA / 2)^2
    path = replace(typical_path(500.0), tx=replace(typical_path(500.0).tx, rin_orl_db=None))
    b = path.budget()
    R, bn = path.rx.responsivity_a_per_w, path.rx.noise_bandwidth_hz
    i_oma = R * 1e-3 * 10 ** (b.received_oma_dbm / 10)
    assert b.terms_rms_a["rin"] == pytest.approx(np.sqrt(10 ** (-136 / 10) * bn) * i_oma / 2, rel=1e-12)
    # measured as 802.3 measures it: noise power over the bandwidth and the square wave's power
    t = np.arange(4096)
    square = np.where((t // 64) % 2 == 0, b.levels_a[0], b.levels_a[-1])
    p_oma = np.var(square)
    assert p_oma == pytest.approx((i_oma / 2) ** 2, rel=1e-9)
    assert 10 * np.log10(b.terms_rms_a["rin"] ** 2 / (bn * p_oma)) == pytest.approx(-136.0, abs=1e-9)
    # half the rms the OMA-squared reading gave (22 uA at 500 m of DR then, 11 now)
    assert 10e-6 < b.terms_rms_a["rin"] < 12e-6


def test_the_corner_part_sits_at_the_802_3_limits():
    p = corner_path(500.0, DR_BAUD)
    assert p.loss_db == pytest.approx(CORNER["channel_loss_db"], abs=1e-9)
    assert p.tx.oma_outer_dbm - CORNER["tdecq_db"] == pytest.approx(CORNER["oma_minus_tdecq_dbm"])
    assert p.tx.extinction_ratio_db == CORNER["extinction_ratio_db"] and p.tx.rin_db_per_hz == -136.0
    assert _tdecq_with_rin(p, DR_BAUD) == pytest.approx(CORNER["tdecq_db"], abs=0.01)
    # the receiver: an ideal signal at the stressed sensitivity less SECQ gives BER 2.4e-4
    ideal = replace(p, tx=OpticalTransmitter(CORNER["stressed_sensitivity_dbm"] - CORNER["secq_db"] + p.loss_db,
                                             3.5, -300.0, reflectance_db=None),
                    rx=replace(p.rx, reflectance_db=None),
                    elements=tuple(replace(e, reflectance_db=-300.0) if hasattr(e, "reflectance_db") else e
                                   for e in p.elements))
    assert ideal.budget().ber == pytest.approx(CORNER["ber"], rel=1e-3)
    # the budget 802.3 built: TDECQ-equivalent OMA at the receiver vs what it needs
    assert (CORNER["oma_minus_tdecq_dbm"] - CORNER["channel_loss_db"]) - (
        CORNER["stressed_sensitivity_dbm"] - CORNER["secq_db"]) == pytest.approx(0.1)
    # a noisier receiver is needed for a worse sensitivity; the typical TIA is far quieter
    assert solve_rx_noise(-4.0, 3.5, 0.85, DR_BAUD / 2) > p.rx.noise_current_density_a_per_rthz
    assert typical_path(500.0).rx.noise_current_density_a_per_rthz < p.rx.noise_current_density_a_per_rthz / 4
    with pytest.raises(channels.ChannelError, match="grade"):
        part_path("best", 500.0, DR_BAUD)


@pytest.mark.slow
def test_dsp_pluggables_close_at_500_m_corner_by_construction_typical_with_margin():
    rc = evaluate_link(LinkSpec(optics=OpticalClass.dsp_pluggable(500.0, DR_BAUD, part="corner"), lanes=4,
                                lane_rate_bps=106.25e9))
    rt = evaluate_link(LinkSpec(optics=OpticalClass.dsp_pluggable(500.0, DR_BAUD), lanes=4, lane_rate_bps=106.25e9))
    assert rc.passes and rc.margin_db >= 0.0
    assert rt.passes and rt.margin_db > rc.margin_db + 3.0


@pytest.mark.slow
def test_lpo_closes_at_100g_and_fails_at_200g_on_its_host_channels():
    lpo100 = evaluate_link(LinkSpec(optics=OpticalClass.lpo(500.0, DR_BAUD), lanes=4, lane_rate_bps=106.25e9))
    assert lpo100.passes and lpo100.margin_db > 1.0  # the LPO MSA's 100G-DR-LPO at its 500 m
    lpo = OpticalClass.lpo(500.0, 2 * DR_BAUD)
    cpo = OpticalClass.cpo(500.0, 2 * DR_BAUD)
    assert lpo.path == cpo.path  # the same optical part
    # the optics alone are far from erring: the link's failure is not an eye closed by the budget
    assert lpo.path.budget().ser < 1e-15
    spec = LinkSpec(optics=lpo, lanes=4, lane_rate_bps=212.5e9, inner_fec="SFEC")
    r_lpo, r_cpo = evaluate_link(spec), evaluate_link(spec.with_(optics=cpo))
    assert not r_lpo.passes and -3.0 < r_lpo.margin_db < 0.0  # short by a finite margin
    assert r_cpo.passes and r_cpo.margin_db > 3.0
    # what differs: the host channel the host SerDes equalises with the optics (two C2M hosts
    # of 15.8 dB at 53.125 GHz each against CPO's 3.9 dB package trace)
    il = {c.name: -20 * np.log10(abs(np.interp(53.125e9, c.host.f, np.abs(c.host.sdd21)))) for c in (lpo, cpo)}
    assert il["lpo"] > 3 * il["cpo"]
