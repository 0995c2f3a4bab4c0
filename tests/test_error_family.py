"""One error family (issue 34): :class:`LinkmodelError`, a ``ValueError``, is the base of
``channels.ChannelError``, ``fec.FecError`` and ``phy.ConfigError``; the command line catches
it in one place; ComParams' former bare ``ValueError``/``TypeError`` are ``ConfigError``; the
checks the packages share (``integer``, ``seed``, ...) are one set of functions, each package
raising its own error through them; and the base's package keeps the layering (``channels``
and ``fec`` still import neither each other nor ``phy``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _linkmodel
import channels
import fec
import phy
import phy.cli as cli
from _linkmodel import LinkmodelError, _checks
from channels import _validate as channels_check
from fec import _validate as fec_check
from phy import _validate as phy_check
from phy import ComParams

REPO = Path(__file__).resolve().parents[1]
FAMILY = [channels.ChannelError, fec.FecError, phy.ConfigError]


@pytest.mark.parametrize("error", FAMILY, ids=lambda e: e.__name__)
def test_each_package_error_is_a_linkmodel_error_and_a_value_error(error):
    assert issubclass(error, LinkmodelError) and issubclass(error, ValueError)
    with pytest.raises(LinkmodelError, match="the message"):
        raise error("the message")


def test_the_base_is_one_class_exported_by_every_package():
    assert channels.LinkmodelError is fec.LinkmodelError is phy.LinkmodelError is _linkmodel.LinkmodelError
    for pkg in (channels, fec, phy):
        assert "LinkmodelError" in pkg.__all__
    assert issubclass(LinkmodelError, ValueError)
    # the three stay distinct: catching one package's error does not catch another's
    for a in FAMILY:
        for b in FAMILY:
            assert issubclass(a, b) == (a is b)


# Each kind raised for real by its package, as a command would meet it.
def _channel_error(args):
    channels.library.get("no_such_channel")


def _fec_error(args):
    fec.latency(fec.KP4, -1.0)


def _config_error(args):
    ComParams.ieee_802_3dj_kr("C")


@pytest.mark.parametrize("raises, kind, text", [
    (_channel_error, channels.ChannelError, "unknown built-in channel 'no_such_channel'"),
    (_fec_error, fec.FecError, "must be a finite value > 0, got -1.0"),
    (_config_error, phy.ConfigError, "package_class must be 'A', 'B' or 'AB', got 'C'"),
], ids=["channels", "fec", "phy"])
def test_the_cli_gives_one_line_and_status_2_for_each_package(monkeypatch, capsys, raises, kind, text):
    with pytest.raises(kind) as info:
        raises(None)
    assert text in str(info.value)
    monkeypatch.setattr(cli, "_cmd_library", raises)
    assert cli.main(["library"]) == 2
    assert capsys.readouterr().err == f"linkmodel: error: {cli._one_line(info.value)}\n"


def test_the_cli_catches_the_base_itself_and_keeps_one_line(monkeypatch, capsys):
    def fails(args):
        raise LinkmodelError("a bad value\nand a second line")

    monkeypatch.setattr(cli, "_cmd_library", fails)
    assert cli.main(["library"]) == 2
    assert capsys.readouterr().err == "linkmodel: error: a bad value\\nand a second line\n"


def test_the_cli_leaves_a_plain_value_error_alone(monkeypatch):
    """Only the family is bad input: a bare ValueError is a bug, shown as a traceback."""
    def bug(args):
        raise ValueError("not linkmodel's")

    monkeypatch.setattr(cli, "_cmd_library", bug)
    with pytest.raises(ValueError, match="not linkmodel's") as info:
        cli.main(["library"])
    assert not isinstance(info.value, LinkmodelError)


def test_the_cli_catches_the_family_in_one_place():
    src = (REPO / "phy" / "cli" / "__init__.py").read_text()
    assert src.count("except LinkmodelError") == 1
    for name in ("ChannelError", "FecError"):
        assert name not in src.replace("any package's bad input: ChannelError, ConfigError, FecError", "")


@pytest.mark.parametrize("call, message", [
    (lambda: ComParams.ieee_802_3dj_kr("C"), "package_class must be 'A', 'B' or 'AB', got 'C'"),
    (lambda: ComParams.ieee_802_3dj_cr("CA-Z"), "cable_class must be one of ['CA-A', 'CA-B', 'CA-C', 'CA-D'], got 'CA-Z'"),
    (lambda: ComParams.ieee_802_3ck_kr().with_(package_cases=("x",)).cases(),
     "package_cases holds PackageCase values, got str"),
], ids=["package_class", "cable_class", "package_cases"])
def test_com_params_errors_are_config_errors_with_their_messages(call, message):
    with pytest.raises(phy.ConfigError) as info:
        call()
    assert str(info.value) == message
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize("preset, kwargs, message", [
    ("802.3dj_kr", {"package_class": "C"}, "package_class must be 'A', 'B' or 'AB', got 'C'"),
    ("802.3dj_cr", {"cable_class": "CA-Z"}, "cable_class must be one of ['CA-A', 'CA-B', 'CA-C', 'CA-D'], got 'CA-Z'"),
])
def test_the_com_command_passes_the_preset_error_on_unchanged(preset, kwargs, message):
    from phy.cli.com import com_params
    with pytest.raises(phy.ConfigError) as info:
        com_params(preset, **kwargs)
    assert str(info.value) == message


def test_channel_margin_still_refuses_a_bad_package_case_as_config_error():
    p = ComParams.ieee_802_3ck_kr().with_(package_cases=(1,))
    with pytest.raises(phy.ConfigError, match="package_cases holds PackageCase values, got int"):
        phy.channel_margin(channels.library.get("twinax_1m_26awg"), p)


@pytest.mark.parametrize("name", ["integer", "seed", "number", "finite_vector"])
def test_the_shared_checks_are_one_function_bound_per_package(name):
    owner = getattr(_checks, name)
    bound = [getattr(m, name) for m in (channels_check, phy_check)]
    if name in ("integer", "seed"):
        bound.append(getattr(fec_check, name))
    for b in bound:
        assert b.func is owner, (b, owner)


@pytest.mark.parametrize("module, error", [(channels_check, channels.ChannelError), (fec_check, fec.FecError),
                                           (phy_check, phy.ConfigError)], ids=["channels", "fec", "phy"])
def test_each_package_check_raises_its_own_error_with_one_wording(module, error):
    assert module.integer(np.int64(7), "n", 1) == 7 and type(module.integer(np.int64(7), "n")) is int
    assert module.seed(None) is None and module.seed(3) == 3
    cases = [(lambda: module.integer(2.0, "n"), "n must be an integer, got 2.0"),
             (lambda: module.integer(True, "n"), "n must be an integer, got True"),
             (lambda: module.integer(0, "interleave", 1), "interleave must be an integer >= 1, got 0"),
             (lambda: module.seed(-1), "seed must be a whole number >= 0 or None, got -1"),
             (lambda: module.seed(1.5, "rng"), "rng must be a whole number >= 0 or None, got 1.5")]
    for call, message in cases:
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message
        others = [e for e in FAMILY if e is not error]
        assert not isinstance(info.value, tuple(others))


def test_fec_reaches_the_shared_checks_through_its_api():
    with pytest.raises(fec.FecError, match="lanes must be an integer >= 1, got 0"):
        fec.latency(fec.KP4, 106.25e9, lanes=0)


@pytest.mark.parametrize("root, absent", [("fec", ("channels", "phy", "skrf")), ("channels", ("fec", "phy")),
                                          ("_linkmodel", ("channels", "fec", "phy", "scipy"))])
def test_the_base_keeps_the_layering(root, absent):
    code = f"import sys, {root}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", (root, out.stdout)
