"""Optical links with 802.3dj's inner code in the roll-up (phy.link.post_fec), linear
receive optics, and the class table (phy.link.classes.class_table)."""

import numpy as np
import pytest

import fec
from phy import ConfigError
from phy.link import LinkSpec, OpticalClass, evaluate_link
from phy.link.classes import class_table
from phy.link.post_fec import _chase_table, _inner_profile, covered

RATE = 212.5e9


@pytest.fixture(scope="module")
def dsp_pair():
    # the spec-corner optics, whose errors dominate the link's (the inner code covers only the optics)
    oc = OpticalClass.dsp_pluggable(length_m=100.0, part="corner")
    return (evaluate_link(LinkSpec(optics=oc, lanes=4)),
            evaluate_link(LinkSpec(optics=oc, lanes=4, inner_fec="SFEC", inner_decoder="hard")))


def test_the_inner_code_raises_what_the_optics_may_err_and_costs_its_latency(dsp_pair):
    r0, r1 = dsp_pair
    assert r1.passes and r1.required_der > 1.5 * r0.required_der  # SECDED doubles it (compound analysis)
    assert r1.latency_breakdown_s["inner_fec"] == pytest.approx(fec.SFEC.latency_s(RATE, fec.DECODER_CLOCK_HZ))
    assert r1.latency_s == pytest.approx(r0.latency_s + r1.latency_breakdown_s["inner_fec"], rel=1e-9)
    assert any("inner code SFEC" in n and "over optics" in n for n in r1.notes)


def test_chase_closes_more_than_hard_decisions_on_cpo():
    oc = OpticalClass.cpo(length_m=100.0)
    r0, rh, rc = (evaluate_link(LinkSpec(optics=oc, lanes=4, inner_fec=i, inner_decoder=d))
                  for i, d in ((None, "chase"), ("SFEC", "hard"), ("SFEC", "chase")))
    assert r0.pre_fec_ber == rh.pre_fec_ber == rc.pre_fec_ber  # the same optics
    assert r0.required_der < rh.required_der < rc.required_der
    assert r0.margin_db + 0.5 < rh.margin_db < rc.margin_db


def test_covered_segments_and_linear_receive_optics():
    oc = OpticalClass.lro(length_m=100.0)
    spec = LinkSpec(optics=oc, lanes=4, inner_fec="SFEC")
    r = evaluate_link(spec)
    assert [s.name for s in r.segments] == ["host_to_module", "optics_host"]
    # one DSP crossed per direction, the sender's
    assert r.latency_breakdown_s["optical_modules"] == pytest.approx(50e-9)
    assert r.energy_breakdown_j_per_bit["optical_modules"] == pytest.approx(11.75 / 800e9)

    class E:
        def __init__(self, name, eq="x"):
            self.name, self.equalisation = name, eq

    assert covered(spec, [E("host_to_module"), E("optics_host")]) == [False, True]
    dsp = LinkSpec(optics=OpticalClass.dsp_pluggable(), lanes=4, inner_fec="SFEC")
    assert covered(dsp, [E("a"), E("optics", "module DSP"), E("b")]) == [False, True, False]


def test_chase_profiles_below_their_grid_follow_the_soft_decoder_slope():
    raws, profs, fails = _chase_table(fec.SFEC)
    assert np.all(np.diff(raws) > 0) and fails[0] >= 30

    class S:
        inner_fec, inner_decoder = fec.SFEC, "chase"

    q, raw = fec.hamming.failure_profile(fec.SFEC, 0.32, 300_000, "chase", seed=9)
    model, how = _inner_profile(S, raw)
    assert "power d R" in how
    assert 0.5 < (1 - model[0]) / (1 - q[0]) < 2.0  # 300,000 words hold about 13 failures
    hard = fec.hamming.hard_failure_profile(fec.SFEC, raw)
    assert 1 - model[0] < 1 - hard[0]  # Chase-2 below SECDED


def test_class_table_says_why_a_class_does_not_close():
    # 802.3 100GBASE-DR's spec-corner parts: the DSP pluggable closes (its DSP equalises the
    # optics, as 802.3's budget assumes); linear CPO with the same receiver does not
    d, c = class_table((106.25e9,), ("dsp", "cpo"), length_m=500.0, part="corner")
    assert d["passes"] and d["short_by"] is None and d["inner_fec"] is None  # no inner code at 100G per lane
    assert not c["passes"] and c["short_by"].startswith("short by")
    # with a quiet laser and no reflections it closes: the optical noise decides, the corner TIA's first
    assert c["decides"].startswith("the optical noise") and "thermal is its largest" in c["decides"]
    assert c["energy_pj_per_bit"] < d["energy_pj_per_bit"]
    assert "Broadcom" in c["published"]


def test_co_packaged_optics_close_at_200g_with_the_inner_code_only():
    (with_inner,) = class_table((RATE,), ("cpo",), length_m=500.0, part="corner")
    (without,) = class_table((RATE,), ("cpo",), inner={}, length_m=500.0, part="corner")
    assert with_inner["passes"] and with_inner["inner_fec"] == "SFEC"
    assert not without["passes"] and without["pre_fec_ber"] == with_inner["pre_fec_ber"]
    assert without["required_pre_fec_ber"] < with_inner["pre_fec_ber"] < with_inner["required_pre_fec_ber"]


def test_bad_inner_code_input():
    oc = OpticalClass.dsp_pluggable()
    with pytest.raises(ConfigError, match="needs an outer fec"):
        LinkSpec(optics=oc, fec=None, inner_fec="SFEC")
    with pytest.raises(ConfigError, match="unknown inner code"):
        LinkSpec(optics=oc, inner_fec="BCH")
    with pytest.raises(ConfigError, match="Gray PAM4"):
        LinkSpec(optics=oc, modulation="nrz", inner_fec="SFEC")
    with pytest.raises(ConfigError, match="inner_decoder"):
        LinkSpec(optics=oc, inner_fec="SFEC", inner_decoder="viterbi")
    with pytest.raises(ConfigError, match="kind must be one of"):
        class_table((RATE,), ("zr",))


def test_a_flat_input_noise_is_the_receiver_density_and_bad_shapes_are_refused():
    from phy.serdes import Noise
    from phy.serdes.noise import shaped_noise_filter

    def h(f):
        return 1 / (1 + (f / 40e9) ** 4)

    flat = Noise(input_psd=((0.0, 5e12), (2e-17, 2e-17)))
    g1, r1 = shaped_noise_filter(2e-17, 106.25e9, h)
    g2, r2 = shaped_noise_filter(0.0, 106.25e9, h, extra_psd=flat.input_psd_at)
    assert np.allclose(r1, r2, rtol=1e-9) and np.allclose(g1, g2, rtol=1e-9)
    # the linear optics' noise reaches the host shaped by the far host channel
    lin = evaluate_link(LinkSpec(optics=OpticalClass.cpo(length_m=100.0), lanes=4)).segments[0]
    assert any("shaped by the far host channel" in n for n in lin.notes)
    with pytest.raises(ConfigError, match="input_psd needs increasing"):
        Noise(input_psd=((1.0, 0.5), (1e-18, 1e-18)))
    with pytest.raises(ConfigError, match="input_psd must be"):
        Noise(input_psd=3.0)
