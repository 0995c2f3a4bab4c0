"""IBIS-AMI models from a link file ([tx_ami], [rx_ami]) and in the link roll-up: the
report with the models is the report with the native SerDes they implement, and its notes
name the models."""

from dataclasses import replace

import pytest

import phy
from phy.config import link_spec_from, load_link, parse_link
from tests.ami_models.build import model_folder

BAUD = 106.25e9
TAPS = {"tap_pre1": -0.1, "tap_main": 0.75, "tap_post1": -0.15}
CTLE = phy.Ctle.ieee_802_3ck(BAUD, -8)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return model_folder(tmp_path_factory.mktemp("ami_link"), ("ffe_tx", "ctle_dfe_rx"), "oracle.ibs")


def _file(folder, body: str):
    p = folder / "link.toml"
    p.write_text('[channel]\nkind = "library"\nname = "chip_to_module"\n[link]\nlane_rate_gbps = 212.5\n' + body)
    return p


RX = ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "ctle_dfe_rx"\ndfe_taps = 4\n'
      f'parameters = {{ g_dc_db = -8.0, f_z_hz = {CTLE.f_z_hz}, f_p1_hz = {CTLE.f_p1_hz}, f_p2_hz = {CTLE.f_p2_hz},'
      f' f_lf_hz = {CTLE.f_lf_hz} }}\n')
TX = '[tx_ami]\nlibrary = "ffe_tx.so"\nami = "ffe_tx.ami"\nparameters = { tap_pre1 = -0.1, tap_main = 0.75, tap_post1 = -0.15 }\n'


def test_link_file_with_models_is_the_native_link(folder):
    spec = link_spec_from(load_link(_file(folder, TX + RX)))
    s = spec.serdes
    assert s.tx.ami.name == "ffe_tx" and s.rx.ami.name == "ctle_dfe_rx" and s.rx.dfe.n_taps == 4
    assert s.tx.ami.parameters == TAPS
    rep = phy.evaluate_link(spec, erl=False)
    native = replace(s, tx=replace(s.tx, ami=None, ffe=phy.TxFfe((0.0, -0.1, 0.75, -0.15, 0.0, 0.0), 2, False)),
                     rx=replace(s.rx, ami=None, ctle=CTLE))
    ref = phy.evaluate_link(replace(spec, serdes=native), erl=False)
    assert rep.margin_db == pytest.approx(ref.margin_db, abs=1e-6)
    assert any("IBIS-AMI Tx model 'ffe_tx' (ffe_tx.so)" in n for n in rep.notes)
    assert any("IBIS-AMI Rx model 'ctle_dfe_rx'" in n and "g_dc_db=-8.0" in n for n in rep.notes)
    assert any("DFE is taken as 4" in n for n in rep.notes)


def test_one_side_only_takes_the_preset_on_the_other(folder):
    spec = link_spec_from(load_link(_file(folder, RX)))
    assert spec.serdes.tx.ami is None and spec.serdes.tx.swing_v == phy.Serdes.preset(BAUD).tx.swing_v
    assert spec.serdes.rx.bandwidth_hz == pytest.approx(0.75 * BAUD)


@pytest.mark.parametrize("body, match", [
    ('[rx_ami]\nibs = "oracle.ibs"\nlibrary = "ctle_dfe_rx.so"\nami = "ctle_dfe_rx.ami"\n', "by ibs"),
    ('[rx_ami]\nlibrary = "ctle_dfe_rx.so"\n', "by ibs"),
    ('[rx_ami]\nibs = "missing.ibs"\n', "no such file"),
    ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "ctle_dfe_rx"\nparameters = { g_dc_db = 3.0 }\n', "g_dc_db"),
    ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "ctle_dfe_rx"\nparameters = { gdc_db = -3.0 }\n', "gdc_db"),
    ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "ctle_dfe_rx"\nparameters = { g_dc_db = [1, 2] }\n', "table of names"),
    ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "no_such_model"\n', "no_such_model"),
    ('[rx_ami]\nibs = "oracle.ibs"\nmodel = "ctle_dfe_rx"\ndfe_tap = 3\n', "unknown key 'dfe_tap'"),
])
def test_bad_model_sections_name_the_problem(folder, body, match):
    with pytest.raises(phy.ConfigError, match=match) as e:
        link_spec_from(parse_link(_file(folder, body).read_text(), str(folder / "link.toml")))
    assert "\n" not in str(e.value)
