"""COM's chain on arrays (:mod:`phy.engines.com.chain`) against the code before it: the
packages cascaded with the channel through scikit-rf on :class:`channels.Channel` objects
(``transfer_channels`` with ``join_skrf``), transfer by transfer and COM by COM; and the
packages' memory (its key, its bound)."""

import warnings

import numpy as np
import pytest

import channels
import channels.cascading as cc
from channels import Channel, media
from phy.engines.com import ComParams, PackageLine, chain, channel_margin
from phy.engines.com import margin as mg

#: a reduced 802.3ck grid around the settings the full search picks on these channels
REDUCED = {"g_dc_db": (-8.0, -12.0, -16.0), "g_dc2_db": (0.0, -3.0), "c_m3": (-0.02, 0.0), "c_m2": (0.0, 0.06),
           "c_m1": (-0.3, -0.2, -0.1), "c_p1": (-0.05, 0.0)}


def load_set(shared, thru, fext, nxt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = channels.load(shared(f"ieee802.3ck/{thru}"))
        aggs = [channels.load(shared(f"ieee802.3ck/{fext}"), thru=ch, kind="fext"),
                channels.load(shared(f"ieee802.3ck/{nxt}"), thru=ch, kind="next")]
    return ch.with_aggressors(*aggs)


@pytest.fixture
def dpo(shared):
    return load_set(shared, "DPO_14in_Meg7_THRU.s4p", "DPO_14in_Meg7_FENH89.s4p", "DPO_14in_Meg7_NENF89.s4p")


@pytest.fixture
def cable(shared):
    return load_set(shared, "CA_19p75dB_thru.s4p", "CA_19p75dB_fext1.s4p", "CA_19p75dB_next1.s4p")


def old_transfer(ch, f, p, kind):
    """The transfer as it was computed: fresh packages, scikit-rf's ``**`` on Channels."""
    saved_join, saved_pkg = cc.join, chain.package
    cc.join, chain.package = cc.join_skrf, (lambda p_, f_, end: p_.package(f_, end))
    try:
        return chain.transfer_channels(ch, f, p, kind)
    finally:
        cc.join, chain.package = saved_join, saved_pkg


def old_margin(ch, p, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(cc, "join", cc.join_skrf)
        m.setattr(chain, "package", lambda p_, f_, end: p_.package(f_, end))
        m.setattr(chain, "terminated_transfer", chain.transfer_channels)
        return channel_margin(ch, p)


def agree(new, old):
    """Equal to 1e-12 of the largest above DC. At DC these channels are (near) throughs,
    ``I - S`` nearly singular, where scikit-rf's renormalisation through Z-parameters loses
    digits (tests/test_cascade_arrays.py: the array path is exact there): 1e-8."""
    assert np.max(np.abs(new[1:] - old[1:])) <= 1e-12 * np.max(np.abs(old))
    assert abs(new[0] - old[0]) <= 1e-8


@pytest.mark.parametrize("preset", ["ck", "dj"])
def test_transfers_equal_the_scikit_rf_chain(dpo, preset):
    """Victim, FEXT and NEXT, every package case; 802.3dj's R_d = 46.25 ohm terminates the
    chain (a renormalisation), 802.3ck's does not."""
    p = ComParams.ieee_802_3ck_kr() if preset == "ck" else ComParams.ieee_802_3dj_kr()
    for _, pc in p.cases():
        g = mg.Grid(dpo, pc, None, None)
        for c, kind in [(dpo, "through")] + [(a, a.kind) for a in dpo.aggressors]:
            new = chain.terminated_transfer(c, g.f, pc, kind)
            old = old_transfer(c, g.f, pc, kind)
            assert np.max(np.abs(new - old)) <= 1e-12 * np.max(np.abs(old))


def test_transfer_of_a_differential_channel_and_of_other_references(shared):
    """A two-port channel cascades with the packages' differential two-ports; a four-port at
    its own references (42.5 / 45 ohm legs) takes the Channel path and agrees too."""
    p = ComParams.ieee_802_3ck_kr().cases()[1][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        line = channels.load(shared("measured/pcb_stripline_238mm.s2p")).uniform(70e9, 10e6)
    f_dft = np.fft.rfftfreq(8192, 1 / (p.baud_hz * 32))
    for q in (p, p.with_(r_d=46.25)):  # the line's 50 ohm renormalised to the packages' 100
        agree(chain.terminated_transfer(line, f_dft, q, "through"), old_transfer(line, f_dft, q, "through"))
    seg = media.diff_line(0.1, 90.0, frequency=line.f)
    se = seg.single_ended.copy()
    se.renormalize(np.array([42.5, 42.5, 45.0, 45.0]))
    odd = Channel(se, name="odd")
    agree(chain.terminated_transfer(odd, f_dft, p, "through"), old_transfer(odd, f_dft, p, "through"))


@pytest.mark.parametrize("which", ["dpo", "cable"])
def test_com_equals_the_code_before(which, request, monkeypatch):
    """COM, its terms and the chosen equalisation: the same as with the scikit-rf chain, to
    floating point, on two real channels with crosstalk and both package cases."""
    ch = request.getfixturevalue(which)
    p = ComParams.ieee_802_3ck_kr().with_(**REDUCED)
    new, old = channel_margin(ch, p), old_margin(ch, p, monkeypatch)
    assert new.com_db == pytest.approx(old.com_db, abs=1e-9)
    for k in old.case_com_db:
        assert new.case_com_db[k] == pytest.approx(old.case_com_db[k], abs=1e-9)
    assert (new.tx_ffe, new.g_dc_db, new.g_dc2_db, new.cursor_index, new.package_case) == (
        old.tx_ffe, old.g_dc_db, old.g_dc2_db, old.cursor_index, old.package_case)
    for k, v in old.sigmas_v.items():
        assert new.sigmas_v[k] == pytest.approx(v, rel=1e-9, abs=1e-15)
    np.testing.assert_allclose(new.dfe, old.dfe, rtol=1e-9, atol=1e-15)
    assert new.params == old.params == p.to_dict()
    assert -5 < new.com_db < 10  # and it is a COM, not a failure value


def test_dj_com_equals_the_code_before(dpo, monkeypatch):
    """802.3dj: the Rx FFE by MMSE and the R_d termination, on a small grid."""
    p = ComParams.ieee_802_3dj_kr().with_(g_dc_db=(-10.0, -14.0), g_dc2_db=(-2.0,), c_m2=(0.06,),
                                          c_m1=(-0.2, -0.1), c_p1=(0.0,), rx_ffe_float_groups=0, adc_bits=0)
    new, old = channel_margin(dpo.without_aggressors(), p), old_margin(dpo.without_aggressors(), p, monkeypatch)
    assert new.com_db == pytest.approx(old.com_db, abs=1e-9)
    np.testing.assert_allclose(new.rx_ffe, old.rx_ffe, rtol=1e-8, atol=1e-12)


def test_package_memory_is_keyed_and_bounded(monkeypatch):
    f = np.linspace(0, 60e9, 601)
    ck = ComParams.ieee_802_3ck_kr()
    t1, t2 = (c for _, c in ck.cases())
    chain.clear_packages()
    built = []
    real = ComParams.package

    def counting(self, f_hz, end):
        built.append(end)
        return real(self, f_hz, end)

    monkeypatch.setattr(ComParams, "package", counting)
    a = chain.package(t1, f, "tx")
    assert chain.package(t1, f, "tx") is a and chain.package(t1, f, "fext") is a  # one line, one package
    assert chain.package(t1, f, "next") is a  # test 1: 12 mm everywhere
    r = chain.package(t1, f, "rx")
    assert r is not a and chain.package(t1.with_(name="other"), f, "rx") is r  # the name is not in it
    assert len(built) == 2
    b = chain.package(t2, f, "tx")  # 31 mm
    assert b is not a and len(built) == 3
    np.testing.assert_array_equal(b.sdd21, real(t2, f, "tx").sdd21)
    assert chain.package(t1, f[:-1], "tx") is not a  # another grid
    g = f.copy()
    g[3] += 1.0  # same size and ends, other points
    assert chain.package(t1, g, "tx") is not a
    assert chain.package(t1.with_(c_p_f=1e-13), f, "tx") is not a  # another device
    for k in range(chain.PACKAGE_MEMORY + 3):
        chain.package(t1.with_(c_b_f=1e-15 * k), f, "tx")
    assert len(chain._PACKAGES) == chain.PACKAGE_MEMORY
    chain.clear_packages()
    assert not chain._PACKAGES
    # a line given with a list (unhashable): built without the memory
    listy = t1.with_(lines=(PackageLine([12e-3, 1.8e-3], [87.5, 92.5]),) + t1.lines[1:])
    np.testing.assert_array_equal(chain.package(listy, f, "tx").sdd21, real(listy, f, "tx").sdd21)
    assert not chain._PACKAGES


def test_host_segments_and_package_cases_share_the_memory():
    """802.3dj CR's host channel (a cascade inside :meth:`ComParams.package`) is remembered
    with its package."""
    p = ComParams.ieee_802_3dj_cr("CA-D").cases()[0][1]
    f = np.linspace(0, 60e9, 601)
    chain.clear_packages()
    a = chain.package(p, f, "tx")
    assert chain.package(p, f, "tx") is a
    np.testing.assert_allclose(a.sdd21, p.package(f, "tx").sdd21, rtol=0, atol=1e-14)
