"""Touchstone import against the real 802.3ck files and synthesised multi-port files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import skrf as rf
from hypothesis import given, settings
from hypothesis import strategies as st

import channels
from channels import media
from channels.ports import PORT_ORDERS, pairs_from_names

from conftest import shared_file

# |Sdd21| in dB at 26.5625 GHz from ../shared/channels/MANIFEST.md
MANIFEST_THRU = {
    "ieee802.3ck/DPO_4in_Meg7_THRU.s4p": -12.18,
    "ieee802.3ck/DPO_10in_Meg7_THRU.s4p": -24.28,
    "ieee802.3ck/DPO_14in_Meg7_THRU.s4p": -32.41,
    "ieee802.3ck/CA_19p75dB_thru.s4p": -20.08,
    "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_thru.s4p": -28.98,
    "ieee802.3ck/C2C_PCB_SYSVIA_12dB_thru.s4p": -12.17,
    "vita-backplane/example2_THRU.s4p": -59.77,
    "measured/CABLE1_TX_pair.s4p": -68.17,
}
MANIFEST_XT = {
    "ieee802.3ck/DPO_14in_Meg7_THRU.s4p": {"DPO_14in_Meg7_FENH89": ("fext", -103.55), "DPO_14in_Meg7_NENF89": ("next", -79.34)},
    "ieee802.3ck/CA_19p75dB_thru.s4p": {"CA_19p75dB_fext1": ("fext", -67.94), "CA_19p75dB_next1": ("next", -65.12)},
    "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_thru.s4p": {
        "Tp0_Tp5_28p5db_FQSFP_fext1": ("fext", -77.83), "Tp0_Tp5_28p5db_FQSFP_next1": ("next", -81.90)},
    "vita-backplane/example2_THRU.s4p": {"example2_FEXT1": ("fext", -69.05), "example2_NEXT1": ("next", -46.85)},
}
F_NYQ = 26.5625e9


def _complex_linear_db(ch, f0):
    """|Sdd21| at f0 by linear interpolation of the complex data (the MANIFEST's convention)."""
    s = ch.sdd21
    v = np.interp(f0, ch.f, s.real) + 1j * np.interp(f0, ch.f, s.imag)
    return 20 * np.log10(abs(v))


def _load_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", channels.ChannelQualityWarning)
        return channels.load(path, **kw)


@pytest.mark.parametrize("rel", sorted(MANIFEST_THRU))
def test_through_files_order_detected_and_sdd21_matches_manifest(rel):
    ch = _load_quiet(shared_file(rel))
    # every 4-port file in the folder routes 1->2 and 3->4 (MANIFEST)
    assert ch.port_order.name == "12_34"
    assert ch.port_order.inputs == (1, 3) and ch.port_order.outputs == (2, 4)
    assert _complex_linear_db(ch, F_NYQ) == pytest.approx(MANIFEST_THRU[rel], abs=0.1)


@pytest.mark.parametrize("rel", sorted(MANIFEST_THRU))
def test_insertion_loss_is_bracketed_by_neighbouring_points(rel):
    """Our interpolation follows the magnitude; linear interpolation of a rotating phasor
    (the MANIFEST's convention) dips below both neighbours when the delay is long: the
    cable files differ from the MANIFEST by 0.3 to 0.6 dB for that reason alone."""
    ch = _load_quiet(shared_file(rel))
    i = np.searchsorted(ch.f, F_NYQ)
    lo, hi = sorted(ch.insertion_loss_db()[i - 1 : i + 1])
    assert lo - 0.05 <= ch.insertion_loss_db(F_NYQ) <= hi + 0.05


def test_wrong_order_gives_plausible_but_wrong_loss_and_override_is_honoured():
    path = shared_file("ieee802.3ck/DPO_14in_Meg7_THRU.s4p")
    right = channels.load(path)
    wrong = channels.load(path, thru="13_24")
    assert wrong.port_order.name == "13_24"
    # DESIGN.md: the wrong order reads about 24 dB instead of about 32 dB
    assert right.insertion_loss_db(F_NYQ) == pytest.approx(32.4, abs=0.3)
    assert abs(wrong.insertion_loss_db(F_NYQ) - right.insertion_loss_db(F_NYQ)) > 3


@pytest.mark.parametrize("rel", sorted(MANIFEST_XT))
def test_crosstalk_files_load_with_their_siblings_order(rel):
    ch = _load_quiet(shared_file(rel), aggressors="auto")
    expect = MANIFEST_XT[rel]
    assert {a.name for a in ch.aggressors} == set(expect)
    for a in ch.aggressors:
        kind, db = expect[a.name]
        assert a.kind == kind
        assert a.port_order == ch.port_order
        assert _complex_linear_db(a, F_NYQ) == pytest.approx(db, abs=0.1)
        assert np.array_equal(a.f, ch.f)


def test_crosstalk_file_alone_refuses_auto_order_but_accepts_sibling():
    thru = _load_quiet(shared_file("ieee802.3ck/CA_19p75dB_thru.s4p"))
    xt = shared_file("ieee802.3ck/CA_19p75dB_next1.s4p")
    with pytest.raises(channels.ChannelError, match="crosstalk"):
        channels.load(xt)
    agg = channels.load(xt, thru=thru, kind="next")
    assert agg.kind == "next" and agg.port_order == thru.port_order
    both = thru.with_aggressors(agg)
    pr = both.pulse_response(53.125e9, 16)
    assert len(pr.aggressors) == 1 and pr.aggressors[0].kind == "next"
    assert np.array_equal(pr.aggressors[0].time_s, pr.time_s)


def test_two_port_file_is_a_differential_only_channel():
    ch = _load_quiet(shared_file("measured/pcb_stripline_119mm.s2p"))
    assert ch.nports == 2 and not ch.has_common_mode
    with pytest.raises(channels.ChannelError, match="common mode"):
        ch.scd21
    assert ch.insertion_loss_db(10e9) > 0
    pr = ch.pulse_response(53.125e9, 16)
    # the file starts at 10 MHz: the pulse's DC gain is the extrapolated DC value
    dc = ch.uniform(ch.f[-1], 10e6).sdd21[0]
    assert dc.imag == 0 and abs(dc.real - abs(ch.sdd21[0])) < 0.01
    assert pr.ui_sum() == pytest.approx(dc.real, rel=1e-6)


def test_measured_non_reciprocal_file_warns():
    with pytest.warns(channels.ChannelQualityWarning, match="reciprocity"):
        ch = channels.load(shared_file("measured/CABLE1_TX_pair.s4p"))
    assert ch.quality.reciprocity != "good"
    assert ch.quality.max_reciprocity_error == pytest.approx(2.6e-2, rel=0.1)  # MANIFEST


def test_file_starting_at_10mhz_is_extrapolated_to_dc_on_request():
    ch = _load_quiet(shared_file("ieee802.3ck/C2C_PCB_SYSVIA_12dB_thru.s4p"))
    assert ch.f[0] == pytest.approx(10e6)
    u = ch.uniform(60e9, 10e6)
    assert u.f[0] == 0 and u.grid.dc_extrapolated
    assert u.grid.extrapolated_above_hz is None
    dc = u.sdd21[0]
    assert dc.imag == 0 and 0.9 < dc.real <= 1.0
    # on the file's own points the data are kept
    np.testing.assert_allclose(u.sdd21[1:], ch.sdd21, atol=1e-9)


# ------------------------------------------------------------------ synthesised files
def _write(ntwk: rf.Network, path, port_names=None):
    ntwk.write_touchstone(str(path.with_suffix("")), form="ri")
    written = path.with_suffix(f".s{ntwk.nports}p")
    if port_names:
        text = written.read_text()
        header = "".join(f"! Port[{i + 1}] = {n}\n" for i, n in enumerate(port_names))
        written.write_text(header + text)
    return written


@settings(max_examples=12, deadline=None)
@given(order=st.sampled_from(sorted(PORT_ORDERS)), length=st.floats(0.02, 0.3))
def test_auto_detects_every_order_of_a_synthesised_channel(tmp_path_factory, order, length):
    freq = np.linspace(0, 40e9, 401)
    ch = media.stripline(length, frequency=freq)
    po = PORT_ORDERS[order]
    se = ch.single_ended.copy()
    # put the canonical ports [in+, in-, out+, out-] at the file positions of this order
    se.renumber([0, 1, 2, 3], po.permutation)
    path = _write(se, tmp_path_factory.mktemp("ord") / "chan.s4p")
    back = channels.load(path)
    assert back.port_order.name == order
    np.testing.assert_allclose(back.sdd21, ch.sdd21, atol=1e-9)
    np.testing.assert_allclose(back.scd21, ch.scd21, atol=1e-9)


def _two_lane_network(freq):
    """An 8-port holding two identical lanes with known far-end and near-end coupling."""
    a = media.twinax(1.0, frequency=freq).single_ended.s  # [in+, in-, out+, out-]
    nf = freq.size
    s = np.zeros((nf, 8, 8), dtype=complex)
    lane_a, lane_b = [0, 1, 2, 3], [4, 5, 6, 7]
    for lane in (lane_a, lane_b):
        s[np.ix_(range(nf), lane, lane)] = a
    fext = 0.01 * np.exp(-2j * np.pi * freq * 4e-9)  # B near end -> A far end, P to P and N to N
    nxt = 0.02 * np.exp(-2j * np.pi * freq * 0.2e-9)  # B far end -> A far end
    for (i, j, x) in ((2, 4, fext), (3, 5, fext), (2, 6, nxt), (3, 7, nxt)):
        s[:, i, j] = s[:, j, i] = x
    return s, fext, nxt


def test_eight_port_file_pairs_from_port_names(tmp_path):
    freq = np.linspace(0, 30e9, 3001)
    s, fext, nxt = _two_lane_network(freq)
    # scramble the file's port numbering; the names tell the pairs
    names = ["A_in_P", "A_in_N", "A_out_P", "A_out_N", "B_in_P", "B_in_N", "B_out_P", "B_out_N"]
    perm = [5, 0, 7, 2, 4, 1, 6, 3]  # file position of canonical port k
    s_file = np.zeros_like(s)
    for i in range(8):
        for j in range(8):
            s_file[:, perm[i], perm[j]] = s[:, i, j]
    file_names = [None] * 8
    for k, p in enumerate(perm):
        file_names[p] = names[k]
    ntwk = rf.Network(frequency=rf.Frequency.from_f(freq, unit="hz"), s=s_file, z0=50)
    path = _write(ntwk, tmp_path / "two_lanes.s8p", file_names)
    ch = channels.load(path, victim=0)
    lane0 = min(range(2), key=lambda k: min(perm[4 * k : 4 * k + 4]))  # the lane holding file port 1
    assert ch.nports == 4
    ref = media.twinax(1.0, frequency=freq)
    np.testing.assert_allclose(np.abs(ch.sdd21), np.abs(ref.sdd21), atol=1e-9)
    kinds = sorted(a.kind for a in ch.aggressors)
    assert kinds == ["fext", "next"]
    by = {a.kind: a for a in ch.aggressors}
    if lane0 == 0:
        # victim is lane A: the coupling written above appears as its FEXT and NEXT
        np.testing.assert_allclose(by["fext"].sdd21, fext, atol=1e-9)
        np.testing.assert_allclose(by["next"].sdd21, nxt, atol=1e-9)


def test_eight_port_with_explicit_pairs(tmp_path):
    freq = np.linspace(0, 30e9, 3001)
    s, fext, nxt = _two_lane_network(freq)
    ntwk = rf.Network(frequency=rf.Frequency.from_f(freq, unit="hz"), s=s, z0=50)
    path = _write(ntwk, tmp_path / "lanes.s8p")
    ch = channels.load(path, pairs=[((1, 2), (3, 4)), ((5, 6), (7, 8))])
    by = {a.kind: a for a in ch.aggressors}
    np.testing.assert_allclose(by["fext"].sdd21, fext, atol=1e-9)
    np.testing.assert_allclose(by["next"].sdd21, nxt, atol=1e-9)
    other = channels.load(path, pairs=[((1, 2), (3, 4)), ((5, 6), (7, 8))], victim=1)
    np.testing.assert_allclose(np.abs(other.sdd21), np.abs(ch.sdd21), atol=1e-12)


def test_pairs_from_names_conventions():
    assert pairs_from_names(["TX1+", "TX1-", "RX1_P", "RX1_N"]) == [(0, 1, "tx1"), (2, 3, "rx1")]
    assert pairs_from_names(["lane0_n", "lane0_p"]) == [(1, 0, "lane0")]
    with pytest.raises(channels.ChannelError, match="polarity"):
        pairs_from_names(["U1_A1", "U1_A2"])
    with pytest.raises(channels.ChannelError, match="only its"):
        pairs_from_names(["A_P", "B_N"])


def test_unusual_option_line_order_loads(tmp_path):
    ch = media.stripline(0.05, frequency=np.linspace(0, 20e9, 201))
    path = _write(ch.single_ended, tmp_path / "x.s4p")
    text = path.read_text().splitlines()
    out = []
    for line in text:
        out.append("# MHz RI S R 50" if line.startswith("#") else line)
    # rescale frequencies from Hz to MHz
    fixed = []
    for line in out:
        toks = line.split()
        if toks and not line.startswith(("!", "#")) and len(toks) % 2 == 1:
            toks[0] = repr(float(toks[0]) / 1e6)
            line = " ".join(toks)
        fixed.append(line)
    odd = tmp_path / "odd.s4p"
    odd.write_text("\n".join(fixed) + "\n")
    back = channels.load(odd)
    np.testing.assert_allclose(back.f, ch.f, rtol=1e-12)
    np.testing.assert_allclose(back.sdd21, ch.sdd21, atol=1e-9)


# ------------------------------------------------------------------ honest headers
REAL_FILES = [
    "ieee802.3ck/C2C_PCB_SYSVIA_12dB_thru.s4p", "ieee802.3ck/CA_19p75dB_fext1.s4p", "ieee802.3ck/CA_19p75dB_next1.s4p",
    "ieee802.3ck/CA_19p75dB_thru.s4p", "ieee802.3ck/DPO_10in_Meg7_THRU.s4p", "ieee802.3ck/DPO_14in_Meg7_FENH89.s4p",
    "ieee802.3ck/DPO_14in_Meg7_NENF89.s4p", "ieee802.3ck/DPO_14in_Meg7_THRU.s4p", "ieee802.3ck/DPO_4in_Meg7_THRU.s4p",
    "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_fext1.s4p", "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_next1.s4p",
    "ieee802.3ck/Tp0_Tp5_28p5db_FQSFP_thru.s4p", "measured/CABLE1_TX_pair.s4p", "measured/pcb_stripline_119mm.s2p",
    "measured/pcb_stripline_238mm.s2p", "vita-backplane/example2_FEXT1.s4p", "vita-backplane/example2_NEXT1.s4p",
    "vita-backplane/example2_THRU.s4p",
]


def test_real_file_list_is_complete(shared):
    """Every file of ../shared/channels is in REAL_FILES (a new file gets the check below)."""
    root = shared("MANIFEST.md").parent
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.suffix.lower().startswith(".s"))
    assert found == sorted(REAL_FILES)


@pytest.mark.parametrize("rel", REAL_FILES)
def test_real_files_pass_the_header_checks_silently(rel):
    """The unit, format and option-line checks never trip on real files (MA in Hz and MHz, RI in
    Hz and GHz, DB in Hz), and the data read bit for bit as scikit-rf reads them."""
    path = shared_file(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all from reading
        ours = channels.read_network(path)
    theirs = rf.Network(str(path))
    np.testing.assert_array_equal(ours.s, theirs.s)
    np.testing.assert_array_equal(ours.f, theirs.f)


def _version_2_text(ntwk: rf.Network, fmt: str, matrix: str = "Full", order: str = "12_21") -> str:
    """A Touchstone 2.0 file of ``ntwk`` (GHz), written here from the 2.0 specification's keywords."""
    n = ntwk.nports
    out = ["! Touchstone 2.0 test file", "[Version] 2.0", f"# GHz S {fmt} R 50", f"[Number of Ports] {n}"]
    if n == 2:
        out.append(f"[Two-Port Data Order] {order}")
    out += [f"[Number of Frequencies] {ntwk.f.size}", "[Reference] " + " ".join(["50"] * n),
            f"[Matrix Format] {matrix}", "[Network Data]"]
    for fk, s in zip(ntwk.f, ntwk.s):
        if n == 2 and order == "21_12":
            entries = [s[0, 0], s[1, 0], s[0, 1], s[1, 1]]
        else:
            entries = [s[i, j] for i in range(n) for j in range(n)
                       if matrix == "Full" or (matrix == "Upper" and j >= i) or (matrix == "Lower" and j <= i)]
        nums = []
        for e in entries:
            if fmt == "RI":
                nums += [e.real, e.imag]
            elif fmt == "MA":
                nums += [abs(e), np.angle(e, deg=True)]
            else:
                nums += [20 * np.log10(abs(e)), np.angle(e, deg=True)]
        out.append(f"{float(fk) / 1e9!r} " + " ".join(repr(float(v)) for v in nums))
    return "\n".join(out + ["[End]"]) + "\n"


@pytest.mark.parametrize(
    "ext, fmt, matrix, order",
    [("s2p", "RI", "Full", "12_21"), ("ts", "MA", "Full", "21_12"), ("s4p", "DB", "Upper", "12_21"),
     ("ts", "RI", "Lower", "12_21"), ("s4p", "MA", "Full", "12_21")],
)
def test_version_2_files_load(tmp_path, ext, fmt, matrix, order):
    """Touchstone 2.0 keyword files (matrix formats, two-port orders, .ts or .sNp) read as the network written."""
    ch = media.stripline(0.05, frequency=np.linspace(10e6, 20e9, 201))
    net = ch.network.subnetwork([0, 1]) if ext == "s2p" or order == "21_12" else ch.single_ended
    path = tmp_path / f"v2.{ext}"
    path.write_text(_version_2_text(net, fmt, matrix, order))
    with warnings.catch_warnings():
        warnings.simplefilter("error", channels.TouchstoneWarning)
        back = channels.read_network(path)
    np.testing.assert_allclose(back.f, net.f, rtol=1e-12)
    np.testing.assert_allclose(back.s, net.s, atol=1e-12)
    if net.nports == 4:
        assert channels.load(path, check_quality=False).port_order.name == "13_24"


def _write_s4p(ntwk, path):
    ntwk.write_touchstone(str(path.with_suffix("")), skrf_comment=False)
    return path


def test_auto_aggressors_skip_an_unusable_sibling_and_say_whose(tmp_path):
    from channels import ChannelQualityWarning

    thru = media.stripline(0.1).single_ended
    _write_s4p(thru, tmp_path / "LNK_thru.s4p")
    nx = thru.copy()
    nx.s = nx.s * 0.01
    _write_s4p(nx, tmp_path / "LNK_next1.s4p")
    short = nx[nx.f < 0.2 * nx.f[-1]]  # cut short: a fifth of the through's band
    _write_s4p(short, tmp_path / "LNK_fext1.s4p")
    (tmp_path / "LNK_fext2.s4p").write_text("! not a touchstone file\nhello\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ch = channels.load(tmp_path / "LNK_thru.s4p", aggressors="auto", check_quality=False)
    assert [a.name for a in ch.aggressors] == ["LNK_next1"]
    skipped = [str(w.message) for w in caught if issubclass(w.category, ChannelQualityWarning)]
    assert any(m.startswith("LNK_fext1.s4p skipped as an aggressor of LNK_thru.s4p") and "cut short" in m
               for m in skipped)
    assert any(m.startswith("LNK_fext2.s4p skipped as an aggressor of LNK_thru.s4p") for m in skipped)
    # named by the caller, the same file is an error that says whose aggressor it is
    with pytest.raises(channels.ChannelError, match=r"LNK_fext1.s4p \(an aggressor of LNK_thru.s4p\)"):
        channels.load(tmp_path / "LNK_thru.s4p", aggressors=[tmp_path / "LNK_fext1.s4p"], check_quality=False)
