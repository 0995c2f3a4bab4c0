"""The array cascade (:mod:`channels.cascading`) against scikit-rf's own: the star product
against ``a ** b``, the renormalisation against ``skrf.network.renormalize_s``, and
:func:`channels.cascade` against the same cascade through scikit-rf (``join_skrf``) on
real and synthetic channels, four-port mixed-mode, two-port differential, with crosstalk
and with mismatched references."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
import skrf as rf

import channels
import channels.cascading as cc
from channels import Channel, media

F = np.linspace(0, 50e9, 401)


def random_network(rng, ports, f=F, z0=50.0, scale=0.45):
    """A random network, its S small enough that every cascade is well conditioned."""
    s = (rng.normal(size=(f.size, ports, ports)) + 1j * rng.normal(size=(f.size, ports, ports))) * scale / ports
    return rf.Network(frequency=rf.Frequency.from_f(f, unit="hz"), s=s, z0=z0)


def close(a, b, tol=1e-12):
    """Equal to ``tol`` relative to the larger's largest magnitude."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    err = float(np.max(np.abs(a - b)))
    assert err <= tol * max(float(np.max(np.abs(b))), 1e-300), err


@pytest.mark.parametrize("ports", [2, 4, 6])
def test_connect_s_is_scikit_rf_cascade(ports):
    rng = np.random.default_rng(ports)
    a, b = random_network(rng, ports), random_network(rng, ports)
    close(cc.connect_s(a.s, b.s), (a ** b).s)
    # a strong reflection on both sides of the join: the multiple reflections matter
    a.s[:, ports // 2:, ports // 2:] += 0.5
    b.s[:, : ports // 2, : ports // 2] -= 0.4
    close(cc.connect_s(a.s, b.s), (a ** b).s)


def test_connect_s_exact_cases():
    """A through is the identity; two matched attenuators multiply."""
    rng = np.random.default_rng(1)
    net = random_network(rng, 4).s
    thru = np.zeros_like(net)
    thru[:, 2, 0] = thru[:, 0, 2] = thru[:, 3, 1] = thru[:, 1, 3] = 1.0
    np.testing.assert_allclose(cc.connect_s(thru, net), net, rtol=0, atol=1e-15)
    np.testing.assert_allclose(cc.connect_s(net, thru), net, rtol=0, atol=1e-15)
    att = np.zeros((F.size, 2, 2), dtype=complex)
    att[:, 1, 0] = att[:, 0, 1] = 0.5
    out = cc.connect_s(att, att)
    np.testing.assert_allclose(out[:, 1, 0], 0.25, atol=1e-16)
    np.testing.assert_allclose(out[:, 0, 0], 0.0, atol=1e-16)


@pytest.mark.parametrize("ports", [2, 4])
def test_renormalise_s_is_scikit_rf(ports):
    rng = np.random.default_rng(10 + ports)
    s = random_network(rng, ports).s
    z_old = rng.uniform(20, 120, ports)
    z_new = rng.uniform(20, 120, ports)
    close(cc.renormalise_s(s, z_old, z_new), rf.network.renormalize_s(s, z_old, z_new))
    # per-frequency references, and back again
    z_f = np.outer(np.linspace(1, 1.2, F.size), z_new)
    there = cc.renormalise_s(s, z_old, z_f)
    close(there, rf.network.renormalize_s(s, np.broadcast_to(z_old, z_f.shape), z_f))
    close(cc.renormalise_s(there, z_f, z_old), s)


def test_renormalise_s_exact_at_a_near_through():
    """A near-through (``I - S`` nearly singular, where a detour through Z loses digits)
    renormalised from 50 to 100 ohm, against the same in exact rational arithmetic:
    ``Z = 50 (I - S)^-1 (I + S)``, ``S' = (Z - 100) (Z + 100)^-1``."""
    s = np.array([[0.0206684723, 0.9802516081], [0.9791322101, 0.0246604613]])

    def inv(m):
        d = m[0][0] * m[1][1] - m[0][1] * m[1][0]
        return [[m[1][1] / d, -m[0][1] / d], [-m[1][0] / d, m[0][0] / d]]

    def mul(x, y):
        return [[sum(x[i][k] * y[k][j] for k in range(2)) for j in range(2)] for i in range(2)]

    q = [[Fraction(float(v)) for v in row] for row in s]
    eye = [[Fraction(int(i == j)) for j in range(2)] for i in range(2)]
    z = [[50 * v for v in row] for row in mul(inv([[eye[i][j] - q[i][j] for j in range(2)] for i in range(2)]),
                                              [[eye[i][j] + q[i][j] for j in range(2)] for i in range(2)])]
    exact = mul([[z[i][j] - 100 * eye[i][j] for j in range(2)] for i in range(2)],
                inv([[z[i][j] + 100 * eye[i][j] for j in range(2)] for i in range(2)]))
    out = cc.renormalise_s(s[None].astype(complex), [50.0, 50.0], [100.0, 100.0])[0]
    np.testing.assert_allclose(out.real, np.array(exact, dtype=float), rtol=0, atol=5e-16)


def test_cascade_s_through_block_is_the_full_cascades():
    rng = np.random.default_rng(5)
    parts = [(random_network(rng, 4).s, np.full((F.size, 4), 50.0)) for _ in range(3)]
    full, z_full = cc.cascade_s(*parts)
    s21, z21 = cc.cascade_s(*parts, through=True)
    np.testing.assert_array_equal(z_full, z21)
    close(s21, full[:, 2:, :2], 1e-13)
    nets = [rf.Network(frequency=rf.Frequency.from_f(F, unit="hz"), s=x, z0=50.0) for x, _ in parts]
    close(full, (nets[0] ** nets[1] ** nets[2]).s)


def test_cascade_s_renormalises_a_mismatched_join():
    rng = np.random.default_rng(6)
    a, b = random_network(rng, 4, z0=50.0), random_network(rng, 4, z0=40.0)
    s, z0 = cc.cascade_s((a.s, a.z0), (b.s, b.z0))
    np.testing.assert_array_equal(z0, np.column_stack([a.z0[:, :2], b.z0[:, 2:]]))
    close(s, (a ** b).s)  # scikit-rf inserts the same impedance step
    with pytest.raises(channels.ChannelError):
        cc.cascade_s((a.s, a.z0), (a.s[:, :2, :2], a.z0[:, :2]))
    with pytest.raises(channels.ChannelError):
        cc.cascade_s((a.s, a.z0), (b.s, b.z0 + 1j))


def compare_channels(new: Channel, old: Channel, tol=1e-12):
    assert new.name == old.name and new.kind == old.kind and new.nports == old.nports
    close(new.network.s, old.network.s, tol)
    np.testing.assert_allclose(new.network.z0, old.network.z0, rtol=1e-14)
    if new.single_ended is not None:
        close(new.single_ended.s, old.single_ended.s, tol)
    assert [(a.name, a.kind) for a in new.aggressors] == [(a.name, a.kind) for a in old.aggressors]
    for a, b in zip(new.aggressors, old.aggressors):
        close(a.network.s, b.network.s, tol)


def skrf_cascade(*parts, monkeypatch):
    """:func:`channels.cascade` with the joins through scikit-rf (the code before)."""
    with monkeypatch.context() as m:
        m.setattr(cc, "join", cc.join_skrf)
        return channels.cascade(*parts)


def test_cascade_of_real_channels_with_crosstalk(shared, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thru = channels.load(shared("ieee802.3ck/CA_19p75dB_thru.s4p"))
        fext = channels.load(shared("ieee802.3ck/CA_19p75dB_fext1.s4p"), thru=thru, kind="fext")
        nxt = channels.load(shared("ieee802.3ck/CA_19p75dB_next1.s4p"), thru=thru, kind="next")
    victim = thru.with_aggressors(fext, nxt)
    pkg = media.com_package((30e-3, 1.8e-3), (87.5, 92.5), series_l_h=(0.12e-9,), bump_cap_f=3e-14,
                            frequency=victim.f)
    far = pkg.reversed()
    # crosstalk on both sides of a join, referred to the far receiver
    for parts in ((pkg, victim, far), (victim, victim), (victim, pkg, victim)):
        compare_channels(channels.cascade(*parts), skrf_cascade(*parts, monkeypatch=monkeypatch))
    # the loss adds: the cascade of two copies of the cable reads about twice its loss
    two = channels.cascade(thru, thru)
    il = two.insertion_loss_db(26.5625e9)
    assert 2 * thru.insertion_loss_db(26.5625e9) - 1.5 < il < 2 * thru.insertion_loss_db(26.5625e9) + 1.5


def test_cascade_of_differential_and_mismatched_channels(shared, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        line = channels.load(shared("measured/pcb_stripline_119mm.s2p"))
    assert line.nports == 2
    seg = media.diff_line(0.05, 90.0, frequency=line.f)
    parts = (seg, line, seg)  # four-port and two-port: the differential two-ports are cascaded
    compare_channels(channels.cascade(*parts), skrf_cascade(*parts, monkeypatch=monkeypatch))
    # a four-port at other references than its neighbour: renormalised at the join
    se = seg.single_ended.copy()
    se.renormalize(np.array([42.5, 42.5, 45.0, 45.0]))
    odd = Channel(se, name="odd")
    for parts in ((seg, odd, seg), (odd, odd)):
        compare_channels(channels.cascade(*parts), skrf_cascade(*parts, monkeypatch=monkeypatch))
    dd = line.network.copy()
    dd.renormalize(np.array([85.0, 95.0]))
    odd2 = Channel.from_differential(dd, name="odd2")
    compare_channels(channels.cascade(line, odd2, line), skrf_cascade(line, odd2, line, monkeypatch=monkeypatch))


def test_complex_references_go_through_scikit_rf():
    rng = np.random.default_rng(7)
    a = random_network(rng, 2, z0=50.0)
    b = random_network(rng, 2, z0=50.0 + 5j)
    ca, cb = Channel.from_differential(a, name="a"), Channel.from_differential(b, name="b")
    out = channels.cascade(ca, cb)
    ref = cc.join_skrf(ca, cb)
    close(out.network.s, ref.network.s)
    np.testing.assert_array_equal(out.network.z0, ref.network.z0)
