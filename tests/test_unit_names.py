"""Names carry their units (issue 34): MemoryTier's bandwidth is bytes per second under a
``_bytes_per_s`` name (the field ``bandwidth_bps`` held bytes/s, an 8x trap), fec.latency's
lane rate is ``lane_rate_bps``; the old names stay one release, deprecated."""

import dataclasses

import pytest

from phy import ConfigError
from phy import topology as tp


def test_the_field_is_bytes_per_second():
    t = tp.MemoryTier("pool", 1e12, 1e9)
    assert [f.name for f in dataclasses.fields(t)][:3] == ["name", "bandwidth_bytes_per_s", "capacity_bytes"]
    assert t.bandwidth_bytes_per_s == 1e12
    assert dataclasses.replace(t, capacity_bytes=2e9).bandwidth_bytes_per_s == 1e12


def test_the_old_name_still_works_and_warns():
    with pytest.warns(DeprecationWarning, match="bandwidth_bps"):
        t = tp.MemoryTier("pool", capacity_bytes=1e9, bandwidth_bps=2e12)
    assert t == tp.MemoryTier("pool", 2e12, 1e9)
    with pytest.warns(DeprecationWarning, match="bytes/s"):
        assert t.bandwidth_bps == 2e12
    d = t.to_dict()
    assert d["bandwidth_bytes_per_s"] == d["bandwidth_bps"] == 2e12
    assert d["deprecated_keys"] == {"bandwidth_bps": "bandwidth_bytes_per_s"}


def test_both_names_or_neither_are_refused():
    with pytest.raises(ConfigError, match="only"):
        tp.MemoryTier("pool", 1e12, 1e9, bandwidth_bps=1e12)
    with pytest.raises(ConfigError, match="needs bandwidth_bytes_per_s"):
        tp.MemoryTier("pool", capacity_bytes=1e9)
    with pytest.raises(TypeError, match="bandwidth_gbps"):
        tp.MemoryTier("pool", 1e12, 1e9, bandwidth_gbps=1.0)


def test_fec_latency_names_its_unit():
    """``fec.latency``'s lane rate is ``lane_rate_bps`` (bit/s); ``lane_rate`` stays one release."""
    import fec
    from fec import FecError

    new = fec.latency(fec.KP4, lane_rate_bps=106.25e9)
    assert new == fec.latency(fec.KP4, 106.25e9)
    with pytest.warns(DeprecationWarning, match="lane_rate_bps"):
        assert fec.latency(fec.KP4, lane_rate=106.25e9) == new
    with pytest.raises(FecError, match="only"):
        fec.latency(fec.KP4, 106.25e9, lane_rate=106.25e9)
    with pytest.raises(FecError, match="lane_rate_bps"):
        fec.latency(fec.KP4)
