"""Sweeps against hostile files and folders (issue 31): modules planted in the current
folder, symbolic links at predictable names, a store reached through links, devices,
FIFOs and non-store files as stores, damaged and edited records, huge listings, bad
scheduler addresses and a disk that fills up mid-sweep."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
from pathlib import Path

import pytest

import phy.config.schema
from phy import ConfigError, cli
from phy import sweep as sw
from phy.sweep import records, store as store_mod, workers
from phy.sweep.store import _Store

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, flock, /dev")

SPEC = """\
[sweep]
name = "h"
executor = "inline"

[channel]
kind = "twinax"

[link]
equalisation = "preset"

[grid]
"link.fec" = ["KP4", "none"]
"""


def _spec(tmp_path, name="h.toml", text=SPEC) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _record(key: str, **over) -> dict:
    """A record as the runner writes it (no checksum yet)."""
    rec = {"key": key, "params": {"link.fec": "KP4"}, "status": "ok", "row": {"passes": True, "margin_db": 3.5},
           "seconds": 0.2, "worker_pid": 1}
    rec.update(over)
    return rec


def _line(rec: dict) -> str:
    return json.dumps(rec) + "\n"


def _fake_points(monkeypatch):
    """Points that evaluate at once (a fixed row): the store's behaviour, not the link's."""
    def fake(p):
        return {"key": sw.point_key(p), "params": {k: v for k, v in p.items() if not k.startswith("_")},
                "status": "ok", "row": {"passes": True, "margin_db": 4.25}, "seconds": 0.01, "worker_pid": os.getpid()}

    monkeypatch.setattr(workers, "evaluate_point", fake)


# ----------------------------------------------------------------------------- 1: workers
PLANTED = 'open({mark!r}, "w").write("imported from the current folder")\n'


def test_a_module_planted_in_the_current_folder_is_never_imported_by_a_worker(tmp_path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for mod in ("skrf", "numpy"):
        (cwd / f"{mod}.py").write_text(PLANTED.format(mark=str(cwd / f"MARK_{mod}")))
    monkeypatch.chdir(cwd)
    spec = sw.load_spec(_spec(tmp_path, text=SPEC.replace('["KP4", "none"]', '["KP4"]')))
    r = sw.run_sweep(spec, tmp_path / "s.jsonl", executor="processes", workers=1, progress=False)
    assert (r.ok, r.failed) == (1, 0)
    [rec] = sw.read_records(tmp_path / "s.jsonl").values()
    assert rec["worker_pid"] != os.getpid()  # it ran in a worker process, in this folder
    assert sorted(p.name for p in cwd.iterdir()) == ["numpy.py", "skrf.py"]


def test_a_worker_is_an_isolated_interpreter_given_this_package_and_pythonpath(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", ".", "rel/dir", "/abs/one", "/abs/one"]))
    argv = workers._worker_argv(5, 6, 7)
    assert argv[:3] == [sys.executable, "-I", "-c"]
    # this same phy first, then PYTHONPATH's absolute folders; never the current folder
    assert workers._worker_paths() == [workers._PACKAGE_ROOT, "/abs/one"]
    assert repr(workers._worker_paths()) in argv[3] and "_serve(5, 6, 7)" in argv[3]
    assert Path(workers._PACKAGE_ROOT, "phy", "sweep", "workers.py").resolve() == Path(workers.__file__).resolve()


def test_a_worker_imports_this_same_phy_from_any_folder(tmp_path, monkeypatch):
    import subprocess

    import phy

    (tmp_path / "phy").mkdir()  # a planted package of the same name in the current folder
    (tmp_path / "phy" / "__init__.py").write_text("raise SystemExit('the planted phy')\n")
    code = workers._worker_argv(0, 1, 2)[3].split("from phy.sweep")[0] + "import phy; print(phy.__file__)"
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).resolve() == Path(phy.__file__).resolve()


# ----------------------------------------------------------------------------- 2: export
def test_an_export_never_writes_through_a_link_planted_at_a_temporary_name(tmp_path):
    store = tmp_path / "s.jsonl"
    store.write_text(_line(records.seal(_record("k1"))))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.csv"
    planted = tmp_path / f".{out.name}.{os.getpid()}.tmp"  # the name the old code wrote to
    planted.symlink_to(victim)
    assert sw.export(store, out) == 1
    assert victim.read_text() == "precious\n"
    assert out.is_file() and not out.is_symlink() and "k1" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~store_mod._umask()
    assert planted.is_symlink()  # left alone
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([planted.name, "out.csv", "s.jsonl", "victim.txt"])


def test_an_export_onto_the_store_or_into_a_missing_folder_is_refused(tmp_path):
    store = tmp_path / "s.csv"
    store.write_text(_line(records.seal(_record("k1"))))
    with pytest.raises(ConfigError, match=r"is the store itself"):
        sw.export(store, tmp_path / "s.csv")
    with pytest.raises(ConfigError, match=r"its folder '.*nowhere' does not exist"):
        sw.export(store, tmp_path / "nowhere" / "x.csv")


# ----------------------------------------------------------------------------- 3: locks
@linux_only
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_store_is_locked_through_every_name_it_has(tmp_path, monkeypatch, link):
    _fake_points(monkeypatch)
    spec = sw.load_spec(_spec(tmp_path))
    real = tmp_path / "real.jsonl"
    other = tmp_path / "other.jsonl"
    first = _Store(real)  # the first runner, holding the store
    try:
        if link == "symlink":
            other.symlink_to(real)
        else:
            os.link(real, other)
        who = rf"pid {os.getpid()} on host {socket.gethostname()}" if link == "symlink" else \
            rf"pid {os.getpid()}, through another name of this file"
        with pytest.raises(ConfigError, match=rf"'.*other\.jsonl' is being written by another sweep \({who}"):
            sw.run_sweep(spec, other, progress=False)
        assert real.read_text() == ""  # the second runner wrote nothing
    finally:
        first.close()
    r = sw.run_sweep(spec, other, progress=False)  # free again: through the other name it runs
    assert r.ok == 2 and len(sw.read_records(real)) == 2


def test_a_planted_link_at_the_lock_name_is_refused_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "s.jsonl.lock").symlink_to(victim)
    with pytest.raises(ConfigError, match=r"its lock file '.*s\.jsonl\.lock' is a symbolic link; remove it"):
        _Store(tmp_path / "s.jsonl")
    assert victim.read_text() == "precious\n"


# ----------------------------------------------------------------------------- 4: not a file
@linux_only
def test_dev_null_as_a_store_is_refused_before_any_work_and_creates_nothing(tmp_path, monkeypatch, capsys):
    _fake_points(monkeypatch)
    spec_path = _spec(tmp_path)
    spec = sw.load_spec(spec_path)
    with pytest.raises(ConfigError, match=r"^store '/dev/null': cannot be written \(is a character device, not a "
                                          r"regular file\)"):
        sw.run_sweep(spec, "/dev/null", progress=False)
    link = tmp_path / "null.jsonl"
    link.symlink_to("/dev/null")  # the old code made 'null.jsonl.lock' beside it
    with pytest.raises(ConfigError, match=r"is a character device"):
        sw.run_sweep(spec, link, progress=False)
    with pytest.raises(ConfigError, match=r"is a character device"):
        sw.plan_sweep(spec, link, measure=False)
    assert cli.main(["sweep", str(spec_path), "--store", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linkmodel: error: store '/dev/null': cannot be written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.toml", "null.jsonl"]


@linux_only
def test_a_fifo_a_dangling_link_or_a_missing_folder_as_a_store_is_refused_without_a_hang(tmp_path, monkeypatch):
    _fake_points(monkeypatch)
    spec = sw.load_spec(_spec(tmp_path))
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    dangling = tmp_path / "d.jsonl"
    target = tmp_path / "created-through-the-link"
    dangling.symlink_to(target)
    for bad, match in ((fifo, r"is a FIFO"), (dangling, r"a symbolic link to nothing"),
                       (tmp_path / "no" / "s.jsonl", r"its folder '.*no' does not exist")):
        with pytest.raises(ConfigError, match=match):
            sw.run_sweep(spec, bad, progress=False)
        with pytest.raises(ConfigError, match=match):
            sw.plan_sweep(spec, bad, measure=False)
    with pytest.raises(ConfigError, match=r"is not a regular file"):
        sw.read_records("/dev/zero")  # an endless file is refused, not read
    with pytest.raises(ConfigError, match=r"is not a regular file"):
        sw.read_records(fifo)
    assert not target.exists() and not (tmp_path / "no").exists()


# ----------------------------------------------------------------------------- 5, 6: records
BAD_LINES = ['{"key": [1, 2]}\n', '{"key": "x", "status": "ok", "params": [1], "row": {}, "seconds": 1}\n',
             'not json at all\n', '[1, 2, 3]\n']


def test_records_of_the_wrong_shape_are_warned_by_line_and_their_points_run_again(tmp_path, monkeypatch):
    _fake_points(monkeypatch)
    spec = sw.load_spec(_spec(tmp_path))
    kp4, none = (sw.point_key(p) for p in sw.points(spec))
    store = tmp_path / "s.jsonl"
    store.write_text(_line(records.seal(_record(kp4))) + "".join(BAD_LINES)
                     + '{"key": "%s", "status": "ok", "params": 7}\n' % none)
    with pytest.warns(sw.StoreWarning) as got:
        r = sw.run_sweep(spec, store, progress=False)
    lines = [str(w.message) for w in got]
    assert [n for n in range(2, 7) if any(f"line {n}: " in m for m in lines)] == [2, 3, 4, 5, 6]
    assert "line 2: its 'key' is not a non-empty string; record skipped" in lines[0]
    assert (r.skipped, r.ok) == (1, 1)  # the point whose only record was bad ran again
    assert any("5 bad record(s) in the store (line 2, 3, 4, 5, 6) not trusted" in n for n in r.notes)
    with pytest.warns(sw.StoreWarning) as got:
        df = sw.load(store)
    assert "line 3: its 'params' is not an object" in str(got[1].message) and len(got) == 5
    assert sorted(df["key"]) == sorted([kp4, none])


def test_a_record_edited_by_hand_is_caught_by_its_checksum_and_recomputed(tmp_path, monkeypatch):
    _fake_points(monkeypatch)
    spec = sw.load_spec(_spec(tmp_path))
    store = tmp_path / "s.jsonl"
    assert sw.run_sweep(spec, store, progress=False).ok == 2
    lines = store.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["sha256"] == records.checksum(first) and len(first["sha256"]) == 64
    first["row"]["margin_db"] = 99.0  # valid JSON, valid types: an edit
    store.write_text(json.dumps(first) + "\n" + lines[1] + "\n")
    with pytest.warns(sw.StoreWarning, match=r"line 1: its checksum does not match its contents \(the record was "
                                             r"edited or damaged\); record skipped"):
        r = sw.run_sweep(spec, store, progress=False)
    assert (r.skipped, r.ok) == (1, 1)
    assert len(store.read_text().splitlines()) == 3  # the new record appended, the bad line kept
    with pytest.warns(sw.StoreWarning, match="line 1: its checksum"):
        recs = sw.read_records(store)
    assert recs[first["key"]]["row"]["margin_db"] == 4.25  # the last good record of the key wins


def test_records_from_before_checksums_are_trusted_with_one_warning(tmp_path, monkeypatch):
    _fake_points(monkeypatch)
    spec = sw.load_spec(_spec(tmp_path))
    store = tmp_path / "s.jsonl"
    store.write_text("".join(_line(_record(sw.point_key(p))) for p in sw.points(spec)))
    with pytest.warns(sw.StoreWarning) as got:
        r = sw.run_sweep(spec, store, progress=False)
    assert [str(w.message) for w in got] == [
        f"store {str(store)!r}: 2 record(s) carry no checksum (written before records had one); trusted as they are"]
    assert (r.skipped, r.ok) == (2, 0)


def test_a_huge_line_is_skipped_unread(tmp_path):
    store = tmp_path / "s.jsonl"
    store.write_bytes(b"{" + b" " * (records.MAX_LINE_BYTES + 10) + b"\n" + _line(records.seal(_record("k"))).encode())
    with pytest.warns(sw.StoreWarning, match=r"line 1: longer than 1 MiB, not a record"):
        assert list(sw.read_records(store)) == ["k"]


def test_the_command_warns_in_one_line_each(tmp_path, monkeypatch, capsys):
    _fake_points(monkeypatch)
    spec = _spec(tmp_path)
    store = tmp_path / "s.jsonl"
    store.write_text(_line(records.seal(_record("k"))) + BAD_LINES[0])
    assert cli.main(["sweep", str(spec), "--store", str(store), "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [e for e in err if "warning" in e] == [
        f"linkmodel: warning: store {str(store)!r}, line 2: its 'key' is not a non-empty string; record skipped, "
        "its point is not counted as done"]


# ----------------------------------------------------------------------------- 7: spec as store
def test_a_spec_named_jsonl_is_never_its_own_store(tmp_path, capsys):
    spec = _spec(tmp_path, name="reach.jsonl")
    before = spec.read_bytes()
    assert cli.main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the default store (the spec's name with .jsonl) is the spec itself" in err
    for extra in (["--dry-run"], ["--export", str(tmp_path / "x.csv"), "--no-run"]):
        assert cli.main(["sweep", str(spec), *extra]) == 2
        assert "is the spec itself" in capsys.readouterr().err
    assert spec.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["reach.jsonl"]


def test_an_existing_file_that_is_not_a_store_is_refused(tmp_path, capsys):
    spec = _spec(tmp_path)
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n{not a record}\n")
    before = other.read_bytes()
    with pytest.raises(ConfigError, match=r"notes\.txt': it holds no sweep records .*: not a sweep store"):
        sw.run_sweep(sw.load_spec(spec), other, progress=False)
    assert cli.main(["sweep", str(spec), "--store", str(spec)]) == 2
    assert "--store names the spec itself" in capsys.readouterr().err
    assert other.read_bytes() == before and not (tmp_path / "notes.txt.lock").exists()


# ----------------------------------------------------------------------------- 8: --list
HUGE = SPEC.replace('"link.fec" = ["KP4", "none"]', '"link.fec" = ["KP4", "none"]\n"channel.length_m" = ['
                    + ", ".join(str(0.01 * (i + 1)) for i in range(1000)) + ']\n"link.lanes" = ['
                    + ", ".join(str(i + 1) for i in range(1000)) + "]")


def test_a_huge_list_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from phy.sweep import plan as pl

    def no_work(*a, **k):
        raise AssertionError("work done before the refusal")

    monkeypatch.setattr(pl, "iter_points", no_work)
    monkeypatch.setattr(pl, "estimate", no_work)
    spec_path = _spec(tmp_path, text=HUGE)
    assert cli.main(["sweep", str(spec_path), "--dry-run", "--list", "1000000000"]) == 2
    err = capsys.readouterr().err
    assert err == ("linkmodel: error: --list must be a count of points from 0 to 10,000 (the most a dry run lists), "
                   "got 1,000,000,000\n")
    with pytest.raises(ConfigError, match=r"points to list must be a whole number from 0 to 10,000, got 10001"):
        sw.plan_sweep(sw.load_spec(spec_path), listed=pl.MAX_LISTED + 1)


def test_the_most_a_plan_lists_is_listed(tmp_path):
    from phy.sweep import plan as pl

    plan = sw.plan_sweep(sw.load_spec(_spec(tmp_path, text=HUGE)), listed=pl.MAX_LISTED, measure=False)
    assert len(plan.listed) == pl.MAX_LISTED and plan.not_listed == 2_000_000 - pl.MAX_LISTED


# ----------------------------------------------------------------------------- 9: scheduler
@pytest.mark.parametrize("addr", ["not a url", "http://10.0.0.5:8786", "tcp://host", "tcp://host:0",
                                  "tcp://host:99999", "tcp://bad_host:8786", "tcp://[zz::1]:1", "tcp://h:1 x"])
def test_a_bad_scheduler_address_is_one_line_and_contacts_nothing(tmp_path, monkeypatch, capsys, addr):
    def no_contact(*a, **k):
        raise AssertionError("something was contacted")

    monkeypatch.setattr(socket.socket, "connect", no_contact)
    monkeypatch.setattr(socket, "create_connection", no_contact)
    spec = _spec(tmp_path)
    assert cli.main(["sweep", str(spec), "--scheduler", addr, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linkmodel: error: --scheduler must be a Dask scheduler address "
                                                   "such as 'tcp://10.0.0.5:8786'")
    with pytest.raises(ConfigError, match=r"^run_sweep scheduler must be a Dask scheduler address"):
        sw.run_sweep(sw.load_spec(spec), tmp_path / "s.jsonl", scheduler=addr, progress=False)
    in_file = _spec(tmp_path, "f.toml", SPEC.replace('executor = "inline"', f"scheduler = {json.dumps(addr)}"))
    with pytest.raises(ConfigError, match=r"f\.toml, line 3: \[sweep\] scheduler must be a Dask scheduler address"):
        sw.load_spec(in_file)
    assert not (tmp_path / "s.jsonl").exists() and not (tmp_path / "h.jsonl").exists()


@pytest.mark.parametrize("addr", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "tls://sched.example.com:8786",
                                  "tcp://[::1]:8786", "ws://localhost:8787", "inproc://10.0.0.5/123/1"])
def test_scheduler_addresses_dask_takes_are_accepted(addr):
    assert phy.config.schema.scheduler_address(addr) is None


# ----------------------------------------------------------------------------- 10: full disk
@linux_only
def test_a_full_disk_mid_sweep_is_an_oserror_naming_the_store(tmp_path, monkeypatch, capsys):
    """The second record's write runs out of space halfway: an ``OSError`` (ENOSPC) naming
    the store, which ``linkmodel`` reports as a file it could not write (never exit 1,
    which says a link fails), and the store ends with the first record whole."""
    _fake_points(monkeypatch)
    spec = _spec(tmp_path)
    store = tmp_path / "s.jsonl"
    real_write = os.write
    calls = []

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = None
        if target != os.path.realpath(store):
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data)
        if len(calls) == 2:
            return real_write(fd, bytes(data)[: len(data) // 2])  # half a record, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_mod.os, "write", write)
    with pytest.raises(OSError) as e:
        sw.run_sweep(sw.load_spec(spec), store, progress=False)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(store)
    assert str(store) in str(e.value)
    monkeypatch.setattr(store_mod.os, "write", real_write)
    text = store.read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 1 and records.problem(json.loads(text)) is None
    # the command: an OSError naming the store reaches linkmodel's handler (exit 3 there), never exit 1
    store.unlink()
    calls.clear()
    monkeypatch.setattr(store_mod.os, "write", write)
    try:
        code = cli.main(["sweep", str(spec), "--store", str(store), "--no-progress"])
    except OSError as exc:
        assert exc.errno == errno.ENOSPC and exc.filename == str(store)
    else:
        assert code == 3 and str(store) in capsys.readouterr().err
