"""What the linkmodel command prints: every figure with its unit and what it is measured
against, tiny probabilities as bounds, one value per quantity across commands, JSON keys
that say bits or bytes, --version, and the documented exit statuses."""

from __future__ import annotations

import json
import re
import textwrap
import warnings
from importlib.metadata import version
from pathlib import Path

import pytest

import phy
from phy import _format as fm
from phy import cli
from phy import topology as tp
from phy.cli import rack as rk

README = Path(__file__).resolve().parents[1] / "README.md"
#: Identifiers of latency terms that must not reach the text unlabelled.
RAW = ("serdes_tx", "serdes_rx", "fec_accumulation", "fec_decode", "time_of_flight", "crc_check", "retry_mean",
       "port_to_port", "tx_controller", "accelerator_serdes", "switch_core")
#: Keys ending ``_bps`` that do hold bits per second.
BIT_KEYS = {"usable_bps", "lane_rate_bps", "line_bps", "payload_bps", "port_rate_bps", "usable_bandwidth_bps"}


# ----------------------------------------------------------------------------- formatting
@pytest.mark.parametrize("p, text", [(0.0, "< 1e-30"), (4.79e-209, "< 1e-30"), (9.99e-31, "< 1e-30"),
                                     (1e-30, "1e-30"), (2.0123e-16, "2.01e-16"), (0.5, "0.5"),
                                     (float("nan"), "n/a")])
def test_tiny_probabilities_print_as_bounds(p, text):
    assert fm.prob(p) == text


def test_latency_terms_have_names_and_units():
    s = fm.terms_ns({"serdes_tx": 5.31e-9, "fec_decode": 105.71e-9, "time_of_flight": 4.6e-9, "retry_mean": 0.0})
    assert s == "SerDes Tx 5.3 ns, FEC decode 105.7 ns, flight 4.6 ns"


def test_one_formatter_for_the_library_the_command_and_the_figures():
    from phy import _plot
    from phy.cli import _format as cli_fm

    assert all(getattr(cli_fm, n) is getattr(fm, n) for n in cli_fm.__all__)  # the command's is the library's
    assert _plot.readable("serdes_tx") == fm.label("serdes_tx") == "SerDes Tx"  # legends: the printed names
    assert _plot.readable("phy") == "PHY (SerDes, FEC, flight)"  # a layer's legend says what it holds


def test_energy_not_counted_says_why():
    assert fm.energy_words(0.0, 0.0, ["SerDes energy: no segments to choose a reach class from; counted as 0"]) == (
        "not counted (SerDes energy: no segments to choose a reach class from; counted as 0)")
    assert fm.energy_words(2.86e-12, 2.29, []) == "2.86 pJ/bit one way, 2.29 W both directions"


# ----------------------------------------------------------------------------- link
def _link(tmp_path, body: str) -> Path:
    p = tmp_path / "link.toml"
    p.write_text(textwrap.dedent(body))
    return p


def test_link_text_has_units_bounds_and_what_the_margin_is_against(tmp_path, capsys):
    p = _link(tmp_path, """\
        [channel]
        kind = "twinax"
        [link]
        equalisation = "preset"
        lanes = 2
        retry = true
        """)
    assert cli.main(["link", str(p)]) == 0
    text = capsys.readouterr().out
    assert "PASS" in text
    assert re.search(r"post-FEC BER < 1e-30 \(target 1e-13\)", text)
    assert re.search(r"margin +\d+\.\d\d dB Q-factor margin over the detector error ratio [\d.e-]+ that KP4 RS\(544,514\) "
                     r"corrects to the BER target 1e-13 by itself \(needs 3\.00 dB; retry absorbs what is left, up to "
                     r"[\d.e-]+, and is not counted\)", text)
    assert "preset: no Tx FFE" in text and "given" not in text
    assert re.search(r"latency +\d+\.\d ns one way, mean \(SerDes Tx \d+\.\d ns, SerDes Rx \d+\.\d ns, FEC "
                     r"accumulation \d+\.\d ns, FEC decode \d+\.\d ns, flight \d+\.\d ns, CRC check 2\.0 ns\)", text)
    assert re.search(r"energy +\d[\d.]* pJ/bit one way, [\d.]+ W both directions", text)
    assert "at Nyquist (53.125 GHz)" in text and "Gb/s per direction" in text
    for raw in RAW:
        assert raw not in text


def test_the_library_summary_prints_what_link_prints(tmp_path, capsys):
    """``LinkReport.summary()`` is ``linkmodel link``'s text: the same lines, units and
    bounds; only the equalisation line differs, where the command names its preset."""
    from phy import sweep as sw

    p = _link(tmp_path, '[channel]\nkind = "twinax"\n[link]\nequalisation = "preset"\nlanes = 2\nretry = true\n')
    assert cli.main(["link", str(p)]) == 0
    printed = capsys.readouterr().out.rstrip("\n").splitlines()
    r = phy.evaluate_link(sw.link_spec(sw.points(sw.load_spec(str(p), sweep=False))[0]))
    text = r.summary()
    lines = text.splitlines()
    assert len(lines) == len(printed) > 8
    for a, b in zip(lines, printed):
        if a.startswith("  equalisation "):
            assert a.startswith("  equalisation preset, sampled at") and b.startswith("  equalisation preset: no Tx FFE")
        else:
            assert a == b
    assert "post-FEC BER < 1e-30 (target 1e-13)" in text
    assert re.search(r"margin +\d+\.\d\d dB Q-factor margin over the detector error ratio", text)
    assert re.search(r"latency +\d+\.\d ns one way, mean \(SerDes Tx \d+\.\d ns", text)
    assert "at Nyquist (53.125 GHz)" in text
    for raw in RAW:
        assert raw not in text


def test_link_exits_1_on_fail_and_says_why(tmp_path, capsys):
    p = _link(tmp_path, '[channel]\nkind = "twinax"\nlength_m = 6.0\n[link]\nequalisation = "preset"\n')
    assert cli.main(["link", str(p)]) == 1
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("link: FAIL: ")


def test_link_json_is_the_library_report(tmp_path, capsys):
    p = _link(tmp_path, '[channel]\nkind = "twinax"\n[link]\nequalisation = "preset"\n')
    assert cli.main(["link", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["post_fec_ber"] < 1e-30  # JSON keeps the computed value; the bound is for the text
    assert d["usable_bandwidth_bps"] == pytest.approx(200e9)


# ----------------------------------------------------------------------------- rack and demo
@pytest.fixture(scope="module")
def rolled():
    """``linkmodel rack`` with its defaults, rolled up once for the tests below."""
    cfg = rk.rack_defaults()
    return cfg, rk.run_rack(cfg)


@pytest.fixture
def once(rolled, monkeypatch):
    """The commands' roll-up replaced by the one above (only for the defaults)."""
    cfg0, result = rolled

    def run_rack(cfg, where="rack file"):
        assert cfg == cfg0, "this test's roll-up is the defaults'"
        return result

    monkeypatch.setattr(rk, "run_rack", run_rack)
    return result


def test_the_demo_and_rack_print_the_same_latency(once, tmp_path, capsys):
    assert cli.main(["demo", "--no-plots", "--n-ui", "20000"]) == 0
    demo = capsys.readouterr().out
    (tmp_path / "r.toml").write_text("")
    assert cli.main(["rack", str(tmp_path / "r.toml")]) == 0
    rack = capsys.readouterr().out
    for label in ("PHY floor", "one way, 8 B", "remote read, 64 B", "all-reduce, 8 B", "under switch load"):
        d = next(x for x in demo.splitlines() if x.strip().startswith(label)).strip()
        r = next(x for x in rack.splitlines() if x.strip().startswith(label)).strip()
        assert d == r
    r = once[1]
    assert f"{r.one_way['remote'].total_s * 1e9:.1f} ns" in demo


def test_demo_text_labels_every_figure(once, capsys):
    assert cli.main(["demo", "--no-plots", "--n-ui", "20000"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"insertion loss \d+\.\d\d dB at 53\.125 GHz \(the cable alone; \d+\.\d\d dB die to die with "
                     r"the packages\), delay \d\.\d\d ns", text)
    assert re.search(r"post-FEC BER < 1e-30 \(target 1e-13\)", text)
    assert re.search(r"COM \d+\.\d\d dB \(802\.3dj CR, host HL at both ends\): signal A_s over the noise and ISI at COM's DER_0, "
                     r"against its 3 dB pass", text)
    assert "Q-factor margin over the detector error ratio" in text
    assert "BER 0 measured (95 % upper bound" in text or "95 % interval" in text
    assert "900.0 GB/s per GPU per direction" in text and "129.60 TB/s in all" in text
    for raw in RAW:
        assert raw not in text


def test_rack_text_has_units(once, tmp_path, capsys):
    (tmp_path / "r.toml").write_text("")
    assert cli.main(["rack", str(tmp_path / "r.toml")]) == 0
    text = capsys.readouterr().out
    assert "switch ASICs 18 nvswitch" in text and "{" not in text
    assert "per accelerator 900.0 GB/s per direction" in text
    assert "SerDes at the accelerators 1.51 kW" in text
    assert re.search(r"decode +dense 70B at 1 byte/param, batch 1: [\d.]+ tok/s from local hbm3e, [\d.]+ tok/s "
                     r"streamed", text)
    for raw in RAW:
        assert raw not in text


def _undeclared_bps(x) -> set:
    """Keys ending _bps not listed as a deprecated alias where they sit."""
    out = set()
    if isinstance(x, dict):
        dep = x.get("deprecated_keys", {})
        for k, v in x.items():
            if k == "deprecated_keys":
                continue
            if k.endswith("_bps") and k not in dep:
                out.add(k)
            out |= _undeclared_bps(v)
    elif isinstance(x, list):
        for v in x:
            out |= _undeclared_bps(v)
    return out


def test_json_keys_say_bits_or_bytes(once, tmp_path, capsys):
    (tmp_path / "r.toml").write_text("")
    assert cli.main(["rack", str(tmp_path / "r.toml"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["accel_bandwidth_bytes_per_s"] == pytest.approx(900e9)
    assert d["aggregate_bandwidth_bytes_per_s"] == pytest.approx(129.6e12)
    assert d["accelerator"]["memory"]["bandwidth_bytes_per_s"] == pytest.approx(8e12)
    assert _undeclared_bps(d) <= BIT_KEYS
    assert d["equalisation"] == phy.config.DEFAULT_EQUALISATION
    assert cli.main(["demo", "--no-plots", "--json", "--n-ui", "20000"]) == 0
    nv = json.loads(capsys.readouterr().out)
    assert nv["nvl72"]["gpu_bandwidth_bytes_per_s"] == pytest.approx(900e9)
    assert _undeclared_bps(nv) <= BIT_KEYS


def test_the_deprecated_bps_aliases_still_work_and_warn(once):
    """The one test of the old ``_bps`` names of bytes/s figures (kept one release,
    :mod:`phy.topology._aliases`): the attribute and the keyword warn and give the new
    figure; the dicts carry the old key beside the new one and list it under
    ``deprecated_keys``. Everything else in the tests uses the new names."""
    r = once[1]
    with pytest.warns(DeprecationWarning, match="accel_bandwidth_bytes_per_s"):
        assert r.accel_bandwidth_bps == r.accel_bandwidth_bytes_per_s
    m = tp.Model.llama3_70b()
    with pytest.warns(DeprecationWarning, match="link_bandwidth_bytes_per_s"):
        old = tp.decode(m, accelerator=r.accelerator, link_bandwidth_bps=900e9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = tp.decode(m, accelerator=r.accelerator, link_bandwidth_bytes_per_s=900e9)
        d, rd = new.to_dict(), r.to_dict()
    assert old.tokens_per_s == new.tokens_per_s
    assert d["effective_bandwidth_bps"] == d["effective_bandwidth_bytes_per_s"]
    assert d["deprecated_keys"]["effective_bandwidth_bps"] == "effective_bandwidth_bytes_per_s"
    assert rd["accel_bandwidth_bps"] == rd["accel_bandwidth_bytes_per_s"] == pytest.approx(900e9)
    assert rd["deprecated_keys"]["accel_bandwidth_bps"] == "accel_bandwidth_bytes_per_s"


def test_a_model_that_does_not_fit_is_refused_before_the_roll_up(tmp_path, capsys, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("the roll-up ran")

    monkeypatch.setattr(tp, "rollup", no_work)
    r = tmp_path / "big.toml"
    r.write_text("[decode]\nparams = 405e12\n")
    out = tmp_path / "exports"
    assert cli.main(["rack", str(r), "--export", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "big.toml: [decode] params = 4.05e+14" in err
    assert "does not fit in memory" in err and "before the roll-up" in err
    assert not out.exists()


def test_a_model_too_big_for_one_accelerator_still_streams(tmp_path):
    cfg = rk.rack_defaults()
    cfg["decode.params"] = 405e9
    fits = rk.check_fits(cfg, rk.build_topology(cfg))
    assert fits == {"local": False, "remote": True}


# ----------------------------------------------------------------------------- conveniences
def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"linkmodel {version('linkmodel')}" == f"linkmodel {phy.__version__}"


def test_exit_codes_are_documented(capsys):
    assert set(cli.EXIT_CODES) == {0, 1, 2, 3, 130, 141}
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    readme = README.read_text()
    for code in cli.EXIT_CODES:
        assert f"{code} " in help_text
        assert f"| {code} |" in readme
    assert "docs/toml_reference.md" in help_text and "docs/toml_reference.md" in readme


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    r = tmp_path / "r.toml"
    r.write_text('[link]\nequalisation = "best"\n')
    assert cli.main(["rack", str(r)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "equalisation must be one of 'com', 'preset'" in err
