"""``linkmodel sweep --dry-run`` (:mod:`phy.sweep.plan`): the counts by multiplication, the
groups the runner makes, the first points listed, the store read and never written, and a
time estimate whose arithmetic is the one it states; and the progress line that names the
slowest point."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from phy import ConfigError, cli
from phy import sweep as sw
from phy.sweep import plan as pl
from phy.sweep.runner import _chunks, _Progress, _Slowest
from phy.sweep.spec import medium_key

SMALL = """\
[sweep]
name = "small"
chunk = 2

[channel]
kind = "twinax"

[link]
equalisation = "preset"

[grid]
"channel.length_m" = [0.5, 1.0]
"link.fec" = ["KP4", "KR4", "none"]

[zip]
"channel.awg" = [26, 26, 30]
"link.lanes" = [1, 2, 1]
"""

#: 100 x 100 x 64 x 17 x 100 x 61 = 6.6e10 points: far past anything a dry run could enumerate
HUGE = textwrap.dedent("""\
    [link]
    equalisation = "preset"
    [grid]
    "channel.length_m" = {lengths}
    "link.lanes" = {lanes}
    "link.interleave" = {interleave}
    "link.switch_ports" = {ports}
    "link.target_ber" = {bers}
    "link.required_margin_db" = {margins}
    """).format(lengths=[round(0.1 * i, 1) for i in range(1, 101)], lanes=list(range(1, 101)),
                interleave=list(range(1, 65)), ports=list(range(17)), bers=[1e-15 * i for i in range(1, 101)],
                margins=[float(m) for m in range(-20, 41)])
HUGE_TOTAL = 100 * 100 * 64 * 17 * 100 * 61


def _record(key: str, status: str) -> dict:
    """A record as the runner writes it (its fields and checksum), with no figures."""
    rec = {"key": key, "params": {}, "status": status, "seconds": 0.1}
    rec.update({"row": {}} if status == "ok" else {"error": "ValueError: made up"})
    return sw.records.seal(rec)


def _write(tmp_path, text, name="s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ----------------------------------------------------------------------------- counts
def test_count_and_point_at_are_the_enumeration_without_enumerating(tmp_path):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    pts = sw.points(spec)
    assert sw.count_points(spec) == len(pts) == 2 * 3 * 3
    assert [sw.point_at(spec, i) for i in range(len(pts))] == pts
    assert list(sw.iter_points(spec)) == pts
    with pytest.raises(ConfigError, match="points 0 to 17, got 18"):
        sw.point_at(spec, 18)


def test_the_groups_and_chunks_are_the_runners(tmp_path):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    pts = sw.points(spec)
    plan = sw.plan_sweep(spec, tmp_path / "none.jsonl", measure=False)
    # the zip's rows 1 and 2 share their medium (awg 26), row 3 is another: 2 lengths x 2 awg
    assert plan.media == len({medium_key(p) for p in pts}) == 4
    assert plan.chunks == len(_chunks(pts, spec.chunk))
    assert [s["key"] for s in plan.swept] == ["channel.length_m", "link.fec", "channel.awg", "link.lanes"]


def test_a_dry_run_of_a_huge_sweep_counts_by_multiplication_and_lists_the_first(tmp_path, monkeypatch):
    from phy.sweep import spec as spec_mod

    built = []  # every point built, counted: the bound is in points, not seconds
    real = spec_mod._point
    monkeypatch.setattr(spec_mod, "_point", lambda *a: built.append(1) or real(*a))
    spec = sw.load_spec(_write(tmp_path, HUGE))  # the medium check reads the distinct media, not every point
    plan = sw.plan_sweep(spec, tmp_path / "huge.jsonl", listed=5, measure=False)
    assert len(built) < 1000
    assert plan.total == HUGE_TOTAL and plan.media == 100 and plan.to_run == HUGE_TOTAL
    assert [n for n, _ in plan.listed] == [1, 2, 3, 4, 5] and plan.not_listed == HUGE_TOTAL - 5
    assert plan.listed[1][1] == {k: sw.point_at(spec, 1)[k] for k in spec.grid}
    text = cli.runs.plan_text(plan)
    assert f"{HUGE_TOTAL:,} points" in text and f"... and {HUGE_TOTAL - 5:,} more" in text
    assert "(the first 5 of 66,368,000,000; --list N for more)" in text


def test_a_huge_sweep_with_a_store_is_not_matched_and_says_so(tmp_path):
    spec = sw.load_spec(_write(tmp_path, HUGE))
    store = tmp_path / "huge.jsonl"
    store.write_text(json.dumps(_record(sw.point_key(sw.point_at(spec, 0)), "ok")) + "\n")
    plan = sw.plan_sweep(spec, store, listed=0, measure=False)
    assert plan.in_store is None and "not matched" in plan.store_note and plan.to_run == HUGE_TOTAL


# ----------------------------------------------------------------------------- the store
def test_the_store_is_read_to_count_what_is_done_and_never_written(tmp_path):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    pts = sw.points(spec)
    store = tmp_path / "s.jsonl"
    lines = [_record(sw.point_key(pts[0]), "ok"), _record(sw.point_key(pts[1]), "error"),
             _record("someone-else", "ok")]
    store.write_text("".join(json.dumps(x) + "\n" for x in lines))
    before = store.read_bytes(), store.stat().st_mtime_ns
    plan = sw.plan_sweep(spec, store, measure=False)
    assert plan.in_store == {"ok": 1, "failed": 1} and plan.to_run == len(pts) - 2
    assert "1 of these points done and 1 failed (rerun with --retry-failed" in plan.store_note
    assert "1 records of points not in this sweep" in plan.store_note
    assert sw.plan_sweep(spec, store, measure=False, retry_failed=True).to_run == len(pts) - 1
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before
    assert not Path(f"{store}.lock").exists()


# ----------------------------------------------------------------------------- the estimate
def test_the_estimate_is_the_arithmetic_it_states(tmp_path, monkeypatch):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    times = {"first point": 0.7, "another point": 0.01, "first point of another": 0.5}

    def fake(spec, i, what, limit_s):
        key = next(k for k in sorted(times, key=len, reverse=True) if what.startswith(k))
        return {"point": i + 1, "what": what, "seconds": times[key], "status": "ok"}

    monkeypatch.setattr(pl, "_measure", fake)
    started = []
    monkeypatch.setattr(pl, "_workers_start_s", lambda n, limit_s: started.append(n) or 1.0)
    monkeypatch.setattr(pl.os, "cpu_count", lambda: 2)
    e = pl.estimate(spec, points=18, media=4, chunks=12, workers=2, limit_s=60.0)
    assert (e.medium_s, e.point_s) == (0.5, 0.01)
    assert e.startup_s == pytest.approx(1.0 + 0.2)  # the worker's start, and the first point's extra
    assert e.builds == 4 and e.workers == e.parallel == 2
    assert e.seconds == pytest.approx(e.keys_s + 1.2 + (4 * 0.5 + 14 * 0.01) / 2)
    assert started == [2]  # as many workers as the run starts, together
    assert e.how.startswith("from 3 points measured here and the workers started: start-up 1.20 s, "
                            "a medium's first point 500 ms, each further point 10 ms; 18 points (4 medium builds) "
                            "on 2 workers")
    # more workers than cores: the start-up comes in waves and the points run as many at a time as cores
    e4 = pl.estimate(spec, points=18, media=4, chunks=12, workers=4, limit_s=60.0)
    assert e4.workers == 4 and e4.parallel == 2 and started[-1] == 2  # started up to the cores at once
    assert e4.seconds == pytest.approx(e4.keys_s + 2 * 1.2 + (4 * 0.5 + 14 * 0.01) / 2)
    assert any("4 workers on 2 cores" in c for c in e4.caveats)


def test_the_measured_samples_are_a_point_on_the_first_medium_and_one_on_another(tmp_path):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    first, same, other = pl._samples(spec, sw.count_points(spec))
    k = medium_key(sw.point_at(spec, first))
    assert medium_key(sw.point_at(spec, same)) == k and same != first
    assert medium_key(sw.point_at(spec, other)) != k
    one = sw.parse_spec('[grid]\n"link.fec" = ["KP4", "none"]\n')  # one medium: no other to measure
    assert pl._samples(one, 2) == (0, 1, None)


def test_dry_run_measures_here_writes_nothing_and_exits_0(tmp_path, capsys):
    spec = _write(tmp_path, SMALL.replace('chunk = 2', 'chunk = 2\nexecutor = "inline"'))
    assert cli.main(["sweep", str(spec), "--dry-run", "--list", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"sweep small ({spec}): 18 points; dry run: nothing run, nothing written")
    assert "[grid] channel.length_m (2 values) x [grid] link.fec (3 values) x [zip] 3 rows of channel.awg, " \
           "link.lanes" in out
    assert "4 media" in out and "    1  channel.length_m=0.5 link.fec=\"KP4\" channel.awg=26 link.lanes=1" in out
    assert "... and 14 more" in out
    assert "estimate   about " in out and "from 3 points measured here: start-up " in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]  # no store, no lock
    assert cli.main(["sweep", str(spec), "--dry-run", "--json", "--list", "0"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total"] == 18 and d["listed"] == [] and d["not_listed"] == 18
    est = d["estimate"]
    assert [m["point"] for m in est["measured"]] == [1, 4, 10] and all(m["status"] == "ok" for m in est["measured"])
    assert est["seconds"] > 0 and est["workers"] == 1  # inline: this process alone


def test_dry_run_with_worker_processes_measures_a_workers_start(tmp_path, capsys):
    spec = _write(tmp_path, '[link]\nequalisation = "preset"\n[grid]\n"link.fec" = ["KP4", "none"]\n')
    assert cli.main(["sweep", str(spec), "--dry-run", "--json", "--workers", "2"]) == 0
    est = json.loads(capsys.readouterr().out)["estimate"]
    start = est["measured"][0]
    assert start["point"] is None and start["what"].startswith("1 worker process(es) started together")
    assert start["seconds"] > 0
    assert est["startup_s"] >= start["seconds"]
    assert est["workers"] == 1  # one chunk: one worker


@pytest.mark.parametrize("extra, match", [
    (["--dry-run", "--export", "x.csv"], "--dry-run runs and writes nothing"),
    (["--no-run"], "--no-run runs nothing: give --export FILE"),
    (["--dry-run", "--list", "-1"], "--list must be a count of points from 0 to 10,000 (the most a dry run lists), got -1"),
])
def test_contradictory_options_exit_2_with_one_line(tmp_path, capsys, extra, match):
    spec = _write(tmp_path, SMALL)
    assert cli.main(["sweep", str(spec), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


# ----------------------------------------------------------------------------- progress
class _Tty(io.StringIO):
    def isatty(self):
        return True


def _rec(spec, i, seconds, status="ok"):
    p = sw.point_at(spec, i)
    return {"key": sw.point_key(p), "params": {k: v for k, v in p.items() if not k.startswith("_")},
            "status": status, "seconds": seconds}


def test_the_progress_line_names_the_slowest_point_so_far_and_at_the_end(tmp_path):
    spec = sw.load_spec(_write(tmp_path, SMALL))
    allp = {sw.point_key(p): p for p in sw.points(spec)}
    now = [100.0]
    out = io.StringIO()  # not a terminal: a line at most every interval, and the last
    slow = _Slowest({k: i for i, k in enumerate(allp, 1)}, len(allp), [*spec.grid, *spec.zipped])
    bar = _Progress(3, out, True, slow, clock=lambda: now[0], interval_s=10.0)
    for i, (dt, s) in enumerate([(1.0, 0.2), (2.0, 3.5), (20.0, 0.4)]):
        now[0] += dt
        slow.see(_rec(spec, [0, 7, 12][i], s))
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # the first point, the last (20 s later; the second fell inside 10 s), the summary
    assert lines[0].startswith("[######..............] 1/3 points, 1.00 s elapsed, 1.00 points/s, 2.00 s left; "
                               "slowest so far point 1 of 18 (200 ms): channel.length_m=0.5 link.fec=\"KP4\" "
                               "channel.awg=26 link.lanes=1")
    assert "3/3 points, 23 s elapsed" in lines[1] and " left" not in lines[1]
    assert lines[2] == ("3 of 3 points in 23 s; slowest point 8 of 18 (3.50 s): channel.length_m=0.5 "
                        "link.fec=\"none\" channel.awg=26 link.lanes=2")
    assert slow.best["point"] == 8 and slow.best["seconds"] == 3.5


def test_on_a_terminal_the_line_is_rewritten_per_point():
    out = _Tty()
    bar = _Progress(2, out, True, None, clock=iter([0.0, 1.0, 2.0, 2.0]).__next__)
    bar.update(1)
    bar.update(1)
    bar.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and "1/2 points" in text and "2/2 points" in text
    assert text.endswith("\n2 of 2 points in 2.00 s\n")


def test_a_run_names_its_slowest_point(tmp_path, monkeypatch):
    """A point made slow on purpose (its record says 5 s): the run's result, its summary
    line on the stream and the command's output name it by number and parameters."""
    from phy.sweep import workers

    spec = sw.load_spec(_write(tmp_path, SMALL))
    slow_p = sw.point_at(spec, 10)

    def fake(p):
        slow = sw.point_key(p) == sw.point_key(slow_p)
        return {"key": sw.point_key(p), "params": {k: v for k, v in p.items() if not k.startswith("_")},
                "status": "ok", "row": {"passes": True}, "seconds": 5.0 if slow else 0.01, "worker_pid": 0}

    monkeypatch.setattr(workers, "evaluate_point", fake)
    out = io.StringIO()
    r = sw.run_sweep(spec, tmp_path / "a.jsonl", executor="inline", stream=out)
    assert r.slowest == {"point": 11, "of": 18, "seconds": 5.0, "status": "ok", "key": sw.point_key(slow_p),
                         "params": {"channel.length_m": 1.0, "link.fec": "KP4", "channel.awg": 26, "link.lanes": 2}}
    assert r.to_dict()["slowest"]["point"] == 11
    assert out.getvalue().splitlines()[-1].endswith(
        "slowest point 11 of 18 (5.00 s): channel.length_m=1 link.fec=\"KP4\" channel.awg=26 link.lanes=2")


def test_the_command_prints_the_slowest_point_and_json_keeps_stderr_quiet(tmp_path, monkeypatch, capsys):
    from phy.sweep import workers

    spec = _write(tmp_path, SMALL.replace('chunk = 2', 'chunk = 2\nexecutor = "inline"'))
    target = sw.point_key(sw.point_at(sw.load_spec(spec), 3))

    def fake(p):
        k = sw.point_key(p)
        return {"key": k, "params": {a: b for a, b in p.items() if not a.startswith("_")}, "status": "ok",
                "row": {}, "seconds": 2.0 if k == target else 0.01}

    monkeypatch.setattr(workers, "evaluate_point", fake)
    assert cli.main(["sweep", str(spec), "--store", str(tmp_path / "a.jsonl")]) == 0
    cap = capsys.readouterr()
    assert "slowest point 4 of 18 (2.00 s)" in cap.out and "slowest point 4 of 18 (2.00 s)" in cap.err
    assert cli.main(["sweep", str(spec), "--store", str(tmp_path / "b.jsonl"), "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["slowest"]["point"] == 4
    assert cap.err.count("\n") == 1 and cap.err.startswith("sweep small: 18 points")  # no progress lines
