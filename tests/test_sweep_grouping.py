"""A sweep builds each channel once and equalises it once for all its FEC choices: points
grouped by medium, a medium's chunks steered to the worker that built it (issue 22)."""

from __future__ import annotations

import json
from collections import deque

from phy import sweep as sw
from phy.config import link as link_config
from phy.link import equalise
from phy.sweep import runner, workers
from phy.sweep.spec import medium_key

SPEC = """\
[sweep]
name = "g"
chunk = {chunk}

[channel]
kind = "twinax"

[link]
lane_rate_gbps = 212.5
equalisation = "preset"

[grid]
"channel.length_m" = {lengths}
"link.fec" = ["KP4", "KR4", "LL272", "none"]
"""


def _spec(tmp_path, lengths, chunk):
    p = tmp_path / "g.toml"
    p.write_text(SPEC.format(lengths=json.dumps(list(lengths)), chunk=chunk))
    return sw.load_spec(p)


def test_the_medium_key_ignores_the_fec_and_tells_channels_apart(tmp_path):
    pts = sw.points(_spec(tmp_path, [0.5, 1.0], 8))
    keys = {medium_key(p) for p in pts}
    assert len(keys) == 2
    for k in keys:
        assert {p["link.fec"] for p in pts if medium_key(p) == k} == {"KP4", "KR4", "LL272", "none"}
    # the equalisation and the rate are part of the medium (another eye)
    p = dict(pts[0])
    assert medium_key({**p, "link.equalisation": "com"}) != medium_key(p)
    assert medium_key({**p, "link.lane_rate_gbps": 106.25}) != medium_key(p)


def test_chunks_hold_one_medium_each(tmp_path):
    pts = sw.points(_spec(tmp_path, [0.5, 1.0, 1.5], 3))
    chunks = runner._chunks(pts, 3)
    assert all(len({medium_key(p) for p in c}) == 1 for c in chunks)
    assert sorted(len(c) for c in chunks) == [1, 1, 1, 3, 3, 3]


class _FakeWorker:
    def __init__(self):
        self.media = deque(maxlen=workers.MEDIA_REMEMBERED)


def test_a_free_worker_takes_the_chunk_of_a_medium_it_has_built(tmp_path):
    """A medium's second chunk goes to the worker that ran its first, not to whichever
    worker is free first; a worker with nothing of its own takes the first chunk of a
    medium no other worker holds, else the queue's head."""
    pts = sw.points(_spec(tmp_path, [0.5, 1.0, 1.5], 3))
    a0, a1, b0, b1, c0, c1 = runner._chunks(pts, 3)
    pool = workers._Pool(3, None)
    w, fresh, other = _FakeWorker(), _FakeWorker(), _FakeWorker()
    pool.workers = [w, fresh, other]
    w.media.append(medium_key(a0[0]))
    other.media.append(medium_key(b0[0]))
    queue = deque([a1, b1, c0, c1])
    assert pool._next_for(fresh, queue) is c0  # a1 and b1 are w's and other's to finish
    assert pool._next_for(w, deque([b1, a1])) is a1
    assert pool._next_for(fresh, deque([a1, b1])) is a1  # nothing free of others: the head
    assert list(queue) == [a1, b1, c1]


def test_each_channel_is_built_and_equalised_once_for_its_fec_choices(tmp_path, monkeypatch):
    calls = []
    real = equalise._equalise

    def counting(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(equalise, "_equalise", counting)
    link_config._channel.cache_clear()
    spec = _spec(tmp_path, [0.5, 2.0], 3)
    r = sw.run_sweep(spec, tmp_path / "g.jsonl", executor="inline", progress=False)
    assert (r.ok, r.failed) == (8, 0)
    assert link_config._channel.cache_info().misses == 2
    assert len(calls) == 2 and calls[0] is not calls[1]


def test_two_workers_run_each_channel_in_one_process(tmp_path):
    """On two worker processes with chunks of a channel's four points (the benchmark's):
    every record says which process ran it, and each channel's points ran in one, so each
    worker builds and equalises a channel once."""
    spec = _spec(tmp_path, [0.5, 0.75, 1.0, 1.25], 4)
    store = tmp_path / "w.jsonl"
    r = sw.run_sweep(spec, store, executor="processes", workers=2, progress=False)
    assert r.ok == 16
    by_medium: dict = {}
    for rec in sw.read_records(store).values():
        by_medium.setdefault(medium_key(rec["params"]), set()).add(rec["worker_pid"])
    assert len(by_medium) == 4
    assert all(len(pids) == 1 for pids in by_medium.values()), by_medium
    assert len(set().union(*by_medium.values())) == 2  # both workers took part


def test_unknown_sweep_sections_and_keys_get_a_did_you_mean():
    import pytest

    from phy import ConfigError
    from phy.sweep import spec

    with pytest.raises(ConfigError, match=r"unknown section \[sweeep\] \(did you mean 'sweep'\?\)"):
        spec.parse_spec('[sweeep]\nname = "a"\n')
    with pytest.raises(ConfigError, match=r"unknown key 'nmae' \(did you mean 'name'\?\); \[sweep\] keys: name, "):
        spec.parse_spec('[sweep]\nnmae = "a"\n')
