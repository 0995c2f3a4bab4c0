"""phy.sweep and the demo/link/sweep/rack commands: specs, crash safety, executors, CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import phy
from phy import ConfigError, cli
from phy import sweep as sw

REPO = Path(__file__).resolve().parents[1]

SPEC = """\
[sweep]
name = "t"
chunk = {chunk}

[channel]
kind = "twinax"

[link]
lane_rate_gbps = 212.5
equalization = "{eq}"

[grid]
"channel.length_m" = {lengths}
"link.fec" = ["KP4", "none"]
"""


def _spec(tmp_path, lengths=(0.5, 1.0, 1.5), chunk=8, extra="", eq="preset") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(lengths=json.dumps(list(lengths)), chunk=chunk, eq=eq) + extra)
    return p


# ----------------------------------------------------------------------------- specs
def test_points_walk_the_grid_and_the_zip(tmp_path):
    p = _spec(tmp_path, extra='\n[zip]\n"channel.awg" = [26, 30]\n"link.lanes" = [1, 2]\n')
    spec = sw.load_spec(p)
    pts = sw.points(spec)
    assert len(pts) == 3 * 2 * 2
    assert {(q["channel.awg"], q["link.lanes"]) for q in pts} == {(26, 1), (30, 2)}
    assert len({sw.point_key(q) for q in pts}) == len(pts)
    # spelling a default out does not make a new point
    q = dict(pts[0])
    q["link.modulation"] = "pam4"
    assert sw.point_key(q) == sw.point_key(pts[0])


@pytest.mark.parametrize(
    "body, match",
    [
        ('[link]\nlane_rate = 212.5\n', (r"line 2: \[link\] lane_rate: unknown parameter 'link.lane_rate' "
                                         r"\(did you mean 'link.lane_rate_gbps'\?\)")),
        ('[channel]\nkind = "twinax"\nlength_m = "1 m"\n', r"line 3: \[channel\] length_m must be a number"),
        ('[channel]\nlength_m = -2\n', r"line 2: \[channel\] length_m must be a finite number > 0"),
        ('[channel]\nkind = "touchstone"\nfile = "nowhere.s4p"\n', r"line 3: \[channel\] file: no such file"),
        ('[grid]\n"link.fec" = ["KP4", "RS(255,223)"]\n', r"line 2: \[grid\] link.fec must be one of"),
        ('[zip]\n"link.lanes" = [1, 2]\n"channel.awg" = [26]\n', r"\[zip\] lists must have one length"),
        ('[tuning]\nx = 1\n', r"line 1: \[tuning\] : unknown section"),
        ('[sweep]\nexecutor = "mpi"\n', r"line 2: \[sweep\] executor must be one of"),
        ('[optics]\nkind = "dsp"\n[channel]\nkind = "twinax"\n', "choose one medium"),
        ('[link\n', "not valid TOML"),
    ],
)
def test_bad_specs_are_refused_before_any_work_naming_key_and_line(tmp_path, body, match):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(ConfigError, match=match):
        sw.load_spec(p)


# ----------------------------------------------------------------------------- runs
def test_sweep_runs_resumes_and_records_failures(tmp_path):
    bad = tmp_path / "broken.s4p"
    bad.write_text("! not a touchstone file\n# GHz S MA R 50\n1 2 3\n")
    p = _spec(tmp_path, lengths=(0.5, 1.0))
    store = tmp_path / "s.jsonl"
    r = sw.run_sweep(sw.load_spec(p), store, executor="inline", progress=False)
    assert (r.total, r.ok, r.failed, r.skipped) == (4, 4, 0, 0)
    again = sw.run_sweep(sw.load_spec(p), store, executor="inline", progress=False)
    assert (again.ok, again.skipped) == (0, 4)
    # a point that cannot run records its error and the others go on
    p2 = tmp_path / "f.toml"
    p2.write_text('[channel]\nkind = "touchstone"\nfile = "broken.s4p"\n[link]\nequalization = "preset"\n'
                  '[grid]\n"link.fec" = ["KP4", "none"]\n')
    r2 = sw.run_sweep(sw.load_spec(p2), store, executor="inline", progress=False)
    assert (r2.ok, r2.failed) == (0, 2)
    recs = sw.read_records(store)
    assert len(recs) == 6
    assert sum(x["status"] == "error" for x in recs.values()) == 2
    assert all("ChannelError" in x["error"] for x in recs.values() if x["status"] == "error")
    df = sw.load(store)
    assert len(df) == 6 and {"channel.length_m", "link.fec", "passes", "latency_ns", "usable_gbps"} <= set(df.columns)
    # the rows are the library's numbers
    row = next(x for x in recs.values() if x["params"].get("channel.length_m") == 1.0
               and x["params"]["link.fec"] == "KP4")
    rep = phy.evaluate_link(sw.link_spec({**row["params"], "_root": str(tmp_path)}))
    assert row["row"]["latency_ns"] == pytest.approx(rep.latency_s * 1e9, rel=1e-12)
    assert row["row"]["post_fec_ber"] == pytest.approx(rep.post_fec_ber, rel=1e-9, abs=1e-300)


def test_a_sweep_killed_halfway_resumes_with_every_point_once(tmp_path):
    # 12 points; COM equalisation makes each channel take a second or two
    p = _spec(tmp_path, lengths=[0.5 + 0.25 * i for i in range(6)], chunk=1, eq="com")
    store = tmp_path / "kill.jsonl"
    code = f"from phy.cli import main; main(['sweep', {str(p)!r}, '--store', {str(store)!r}, " \
           f"'--executor', 'inline', '--no-progress'])"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if store.exists() and len(store.read_text().splitlines()) >= 3:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    half = sw.read_records(store)
    assert 3 <= len(half) < 12
    r = sw.run_sweep(sw.load_spec(p), store, executor="inline", progress=False)
    assert r.skipped == len(half) and r.ok == 12 - len(half)
    keys = []
    for line in store.read_text().splitlines():
        try:
            keys.append(json.loads(line)["key"])
        except json.JSONDecodeError:
            pass  # a record cut short by the kill
    assert len(keys) == len(set(keys)) == 12
    assert set(keys) == {sw.point_key(q) for q in sw.points(sw.load_spec(p))}


def test_process_pool_and_dask_give_identical_rows(tmp_path):
    pytest.importorskip("distributed")
    p = _spec(tmp_path, lengths=(0.5, 1.5))
    spec = sw.load_spec(p)
    a, b = tmp_path / "pool.jsonl", tmp_path / "dask.jsonl"
    ra = sw.run_sweep(spec, a, executor="processes", workers=2, progress=False)
    rb = sw.run_sweep(spec, b, executor="dask", workers=2, progress=False)
    assert ra.ok == rb.ok == 4
    A, B = sw.read_records(a), sw.read_records(b)
    assert set(A) == set(B)
    for k in A:
        assert A[k]["row"] == B[k]["row"]
        assert A[k]["params"] == B[k]["params"]


# ----------------------------------------------------------------------------- commands
@pytest.mark.parametrize("sub", ["channel", "library", "demo", "link", "sweep", "rack"])
def test_every_subcommand_has_help(sub, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([sub, "--help"])
    assert e.value.code == 0
    assert "usage: linkmodel " + sub in capsys.readouterr().out


def test_demo_numbers_are_the_library_calls(capsys):
    assert cli.main(["demo", "--no-plots", "--json", "--n-ui", "20000"]) == 0
    d = json.loads(capsys.readouterr().out)
    spec = phy.LinkSpec(channel=phy.link.channels.library.get("twinax_1m_26awg"), lanes=2, lane_rate_bps=212.5e9)
    rep = phy.evaluate_link(spec)
    assert d["link"]["latency_s"] == pytest.approx(rep.latency_s, rel=1e-12)
    assert d["link"]["post_fec_ber"] == pytest.approx(rep.post_fec_ber, rel=1e-9, abs=1e-300)
    assert d["nvl72"]["gpu_bandwidth_bps"] == pytest.approx(900e9)
    assert d["nvl72"]["pairs"] == 5184
    assert d["decode_70b_fp8"]["local_hbm_tokens_per_s"] == pytest.approx(114.29, abs=0.01)
    assert d["time_domain"]["n_ui"] == 20000
    assert d["seconds"] < 60


def test_link_and_rack_commands(tmp_path, capsys):
    p = tmp_path / "l.toml"
    p.write_text('[channel]\nkind = "twinax"\nlength_m = 1.0\n[link]\nequalization = "preset"\nlanes = 2\n')
    assert cli.main(["link", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["passes"] and d["usable_bandwidth_bps"] == pytest.approx(400e9)
    r = tmp_path / "r.toml"
    r.write_text(textwrap.dedent("""\
        [rack]
        builder = "nvl72"
        [link]
        equalization = "preset"
        [decode]
        params = 70e9
        """))
    out = tmp_path / "exports"
    assert cli.main(["rack", str(r), "--export", str(out)]) == 0
    text = capsys.readouterr().out
    assert "72 accelerators" in text and "900.0 GB/s" in text
    assert {f.name for f in out.iterdir()} >= {"astra_sim_network.yml", "calculon_network.json", "ns3_topology.txt"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[rack]\nbuilder = "nvl144"\n')
    assert cli.main(["rack", str(bad)]) == 2
    assert "line 2: [rack] builder must be one of" in capsys.readouterr().err
