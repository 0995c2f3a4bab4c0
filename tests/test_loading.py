"""Fast loading (issue 18, item 6): the same channels as before, with less work.

* ``load`` with the fast reader gives the channels scikit-rf's parser gives, bit for bit,
  through, crosstalk and all.
* The parsed-file cache hands out copies, keeps every check and warning per file, is
  bounded and can be emptied or turned off.
* The passivity figures (largest singular value, PQM) are the full SVD's, bit for bit.
* A channel re-made around the same network keeps its mixed-mode view.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import channels
from channels import _tscache, _tsread, quality, touchstone

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
CK = SHARED / "ieee802.3ck"
needs_shared = pytest.mark.skipif(not CK.is_dir(), reason="../shared/channels not present")


@pytest.fixture
def slow_path(monkeypatch):
    """scikit-rf's parser, no caches, the full SVD: loading as it was before."""
    monkeypatch.setattr(_tsread, "enabled", False)
    monkeypatch.setattr(quality, "_largest_sv", lambda s: np.linalg.svd(s, compute_uv=False)[:, 0])
    touchstone.set_cache_size(0)
    yield
    touchstone.set_cache_size(256 * 2**20)


@pytest.fixture
def fresh_cache():
    touchstone.set_cache_size(256 * 2**20)
    touchstone.clear_cache()
    yield
    touchstone.set_cache_size(256 * 2**20)
    touchstone.clear_cache()


def _quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return channels.load(path, **kw)


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _same_channel(a: channels.Channel, b: channels.Channel) -> None:
    assert a.name == b.name and a.kind == b.kind and a.port_order == b.port_order
    for x, y in ((a.network, b.network), (a.single_ended, b.single_ended)):
        if x is None:
            assert y is None
            continue
        assert _bits(x.s) == _bits(y.s) and _bits(x.f) == _bits(y.f) and _bits(x.z0) == _bits(y.z0)
    assert a.quality == b.quality
    assert len(a.aggressors) == len(b.aggressors)
    for p, q in zip(a.aggressors, b.aggressors):
        _same_channel(p, q)


def _write_copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


# ------------------------------------------------------------------ the same channels
@needs_shared
@pytest.mark.parametrize("thru", ["DPO_14in_Meg7_THRU.s4p", "CA_19p75dB_thru.s4p"])
def test_load_with_siblings_is_bit_for_bit_the_slow_path(thru, tmp_path, monkeypatch, fresh_cache):
    # a through with five crosstalk siblings (copies of the shared ones, under sibling names)
    stem = thru.rsplit("_", 1)[0]
    src = {"DPO_14in_Meg7": ("DPO_14in_Meg7_NENF89.s4p", "DPO_14in_Meg7_FENH89.s4p"),
           "CA_19p75dB": ("CA_19p75dB_next1.s4p", "CA_19p75dB_fext1.s4p")}[stem]
    t = _write_copy(CK / thru, tmp_path / thru)
    for k in range(3):
        _write_copy(CK / src[0], tmp_path / f"{stem}_next{k + 1}.s4p")
    for k in range(2):
        _write_copy(CK / src[1], tmp_path / f"{stem}_fext{k + 1}.s4p")
    fast = _quiet_load(t, aggressors="auto")
    again = _quiet_load(t, aggressors="auto")  # from the cache
    assert touchstone.cache_info()["networks"]["hits"] >= 6
    monkeypatch.setattr(_tsread, "enabled", False)
    monkeypatch.setattr(quality, "_largest_sv", lambda s: np.linalg.svd(s, compute_uv=False)[:, 0])
    touchstone.set_cache_size(0)
    slow = _quiet_load(t, aggressors="auto")
    assert len(fast.aggressors) == 5
    _same_channel(fast, slow)
    _same_channel(again, slow)


@needs_shared
@pytest.mark.parametrize("path", sorted(SHARED.glob("*/*.s*p")), ids=lambda p: p.name)
def test_read_network_is_bit_for_bit_the_slow_path(path, monkeypatch, fresh_cache):
    fast = channels.read_network(path)
    monkeypatch.setattr(_tsread, "enabled", False)
    touchstone.set_cache_size(0)
    slow = channels.read_network(path)
    assert vars(fast).keys() == vars(slow).keys()
    for k, v in vars(slow).items():
        w = vars(fast)[k]
        if isinstance(v, np.ndarray):
            assert v.dtype == w.dtype and _bits(v) == _bits(w), k
        elif k == "_frequency":
            assert _bits(v.f) == _bits(w.f) and v.unit == w.unit
        elif not (isinstance(v, float) and v != v):
            assert v == w, k


# ------------------------------------------------------------------ the cache
def _two_port(tmp_path: Path, name: str, extra: str = "") -> Path:
    f = np.linspace(1, 20, 40)
    lines = ["! test", "# GHz S MA R 50"] + [
        f"{x:.3f} 0.1 10 {0.9 - 0.01 * i:.4f} {-5 * i} {0.9 - 0.01 * i:.4f} {-5 * i} 0.1 10" for i, x in enumerate(f)]
    p = tmp_path / name
    p.write_text(extra + "\n".join(lines) + "\n")
    return p


def test_cache_hands_out_copies(tmp_path, fresh_cache):
    p = _two_port(tmp_path, "a.s2p")
    n1 = channels.read_network(p)
    n1.s[:] = 0
    n1.name = "changed"
    n2 = channels.read_network(p)
    assert touchstone.cache_info()["networks"]["hits"] == 1
    assert n2.name == "a" and np.abs(n2.s).max() > 0.5
    n3 = channels.read_network(_write_copy(p, tmp_path / "b.s2p"))
    assert n3.name == "b" and np.array_equal(n3.s, n2.s) and n3 is not n2 and n3.s is not n2.s


def test_cache_keeps_every_check_and_warning(tmp_path, fresh_cache):
    # a file that reads but whose header disagrees with its data warns every time it is read
    p = tmp_path / "w.s2p"
    f = np.linspace(1, 20, 40)
    p.write_text("# MHz S RI R 50\n" + "\n".join(f"{x:.3f} 0.1 0 0.9 0 0.9 0 0.1 0" for x in f) + "\n")  # 20 MHz?
    for name in ("w.s2p", "w2.s2p"):
        q = p if name == "w.s2p" else _write_copy(p, tmp_path / name)
        with pytest.warns(channels.TouchstoneWarning, match=name):
            channels.read_network(q)
    assert touchstone.cache_info()["networks"]["hits"] == 1
    # a Touchstone 2 file whose keyword lies fails every time, naming the file read
    lines = ["[Version] 2.0", "# GHz S RI R 50", "[Number of Ports] 2", "[Two-Port Data Order] 12_21",
             "[Number of Frequencies] 99", "[Network Data]"]
    lines += [f"{x:.3f} 0.1 0 0.9 0 0.9 0 0.1 0" for x in f] + ["[End]"]
    bad = tmp_path / "bad.ts"
    bad.write_text("\n".join(lines) + "\n")
    for q in (bad, _write_copy(bad, tmp_path / "bad2.ts")):
        with pytest.raises(channels.ChannelError, match=rf"{q.name}: \[Number of Frequencies\] says 99"):
            channels.read_network(q)


def test_cache_is_bounded_cleared_and_can_be_turned_off(tmp_path, fresh_cache):
    paths = [_two_port(tmp_path, f"n{k}.s2p", extra=f"! file {k}\n") for k in range(4)]
    one = channels.read_network(paths[0])
    size = one.s.nbytes + one.z0.nbytes + one.f.nbytes + one.s.nbytes
    touchstone.clear_cache()
    touchstone.set_cache_size(2 * size + 10)
    for p in paths:
        channels.read_network(p)
    info = touchstone.cache_info()["networks"]
    assert info["entries"] == 2 and info["size"] <= info["max_size"]
    channels.read_network(paths[3])  # the most recent one is kept
    channels.read_network(paths[0])  # the oldest was dropped
    info = touchstone.cache_info()["networks"]
    assert info["hits"] == 1 and info["misses"] == 5
    touchstone.clear_cache()
    assert touchstone.cache_info()["networks"]["entries"] == 0
    touchstone.set_cache_size(0)
    channels.read_network(paths[1])
    channels.read_network(paths[1])
    assert touchstone.cache_info()["networks"] == {"entries": 0, "size": 0, "max_size": 0, "hits": 0, "misses": 0}
    assert touchstone.cache_info()["quality"]["max_size"] == 0
    for bad in (-1, 1.5, "1", True):
        with pytest.raises(channels.ChannelError, match="cache size"):
            touchstone.set_cache_size(bad)


def test_cache_key_has_the_extension():
    assert _tscache.bytes_key(b"x", ".s2p") != _tscache.bytes_key(b"x", ".s4p")
    assert _tscache.array_key(np.zeros(4)) != _tscache.array_key(np.zeros((2, 2)))


def test_cache_budget_from_the_environment():
    code = "from channels import touchstone; print(touchstone.cache_info()['networks']['max_size'])"
    for value, expected in (("0", 0), ("1.5", int(1.5 * 2**20)), ("junk", 256 * 2**20)):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"LINKMODEL_TOUCHSTONE_CACHE_MB": value, "PATH": ""},
                             cwd=Path(__file__).resolve().parents[1])
        assert int(out.stdout.strip()) == expected


def test_scikit_rf_fallbacks_are_not_cached(tmp_path, fresh_cache):
    p = _two_port(tmp_path, "noisy.s2p")
    p.write_text(p.read_text() + "1.0 0.5 0.3 45 0.2\n2.0 0.6 0.3 50 0.2\n")
    channels.read_network(p)
    assert touchstone.cache_info()["networks"]["entries"] == 0


# ------------------------------------------------------------------ quality
def _reference_pqm(s):
    sv = np.linalg.svd(s, compute_uv=False)[:, 0]
    pw = np.where(sv > quality._PQM_A, (sv - quality._PQM_A) / quality._PQM_B, 0.0)
    return max(s.shape[0] - pw.sum(), 0.0) / s.shape[0] * 100.0, sv


def _synthetic_s():
    rng = np.random.default_rng(3)
    yield "random, not passive", rng.normal(size=(400, 4, 4)) + 1j * rng.normal(size=(400, 4, 4))
    yield "identity", np.tile(np.eye(4, dtype=complex), (50, 1, 1))
    yield "zeros", np.zeros((20, 4, 4), complex)
    a = rng.normal(size=(300, 2, 2)) * 0.3 + 0j
    a[::7] *= 3.4  # just over the threshold at some points
    yield "two-port", a
    b = np.tile(np.eye(4, dtype=complex), (60, 1, 1)) * 1.000009
    b[5] *= 1.0000011  # within a hair of the threshold
    yield "near the threshold", b
    yield "one point", rng.normal(size=(1, 4, 4)) + 0j


@pytest.mark.parametrize("case", list(_synthetic_s()), ids=lambda c: c[0])
def test_passivity_is_the_full_svd_bit_for_bit(case):
    s = case[1]
    pqm, sv = quality._passivity_pct(s)
    ref_pqm, ref_sv = _reference_pqm(s)
    i = int(np.argmax(sv))
    assert pqm == ref_pqm and i == int(np.argmax(ref_sv)) and sv[i] == ref_sv[i]
    np.testing.assert_array_equal(sv[sv > 0], ref_sv[sv > 0])


@needs_shared
@pytest.mark.parametrize("path", sorted(SHARED.glob("*/*.s*p")), ids=lambda p: p.name)
def test_passivity_of_the_shared_files(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = channels.read_network(path).s
    pqm, sv = quality._passivity_pct(s)
    ref_pqm, ref_sv = _reference_pqm(s)
    assert pqm == ref_pqm and int(np.argmax(sv)) == int(np.argmax(ref_sv)) and sv.max() == ref_sv.max()


def test_quality_reports_are_remembered(fresh_cache):
    ch = channels.library.get("twinax_1m_26awg")
    r1 = quality.check_quality(ch.single_ended)
    r2 = quality.check_quality(ch.single_ended.copy())
    assert r1 is r2 and touchstone.cache_info()["quality"]["hits"] == 1
    other = ch.single_ended.copy()
    other.s = other.s * 0.5
    assert quality.check_quality(other) is not r1
    touchstone.set_cache_size(0)
    assert quality.check_quality(ch.single_ended) == r1


# ------------------------------------------------------------------ the mixed-mode view
def test_a_remade_channel_keeps_its_mixed_mode_view():
    ch = channels.library.get("twinax_1m_26awg")
    renamed = ch.renamed("other")
    assert renamed.network is ch.network and renamed.name == "other"
    xt = ch.as_kind("fext")
    both = ch.with_aggressors(xt)
    assert both.network is ch.network and both.aggressors[0].network is xt.network
    assert both.aggressors[0].delay_s == ch.delay_s  # the aggressor refers to its victim
    with pytest.raises(channels.ChannelError, match="kind must be"):
        ch.as_kind("sideways")
