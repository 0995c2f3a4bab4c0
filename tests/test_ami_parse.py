"""The ``.ami`` parameter parser (phy.ami.params): public golden files, pyibis-ami as an
oracle, the IBIS formats and a hostile set, each refused with one clear AmiError line."""

from __future__ import annotations

import pytest
from ami_golden import PYAMI, PYBERT, mirror_text, pyibisami_oracle, python_strings
from conftest import cpu_seconds_at_most

from phy.ami.errors import AmiError
from phy.ami.params import AmiFile, AmiParameter, parse_ami, parse_params_out, read_ami
from phy.errors import ConfigError

# Every format and usage, comments where real files put them, strings with spaces,
# parentheses and a '|', nested groups, a Tap group with numeric names, old and new syntax.
RICH = r"""| a comment before the root
(rich_rx   | the root's name
  (Description "A receiver (CTLE | DFE) for tests")
  (Reserved_Parameters
    (AMI_Version (Usage Info) (Type String) (Value "7.1") (Description "IBIS 7.1"))
    (Init_Returns_Impulse (Usage Info) (Type Boolean) (Value True))
    (GetWave_Exists (Usage Info) (Type Boolean) (Value False))
    (Ignore_Bits (Usage Info) (Type Integer) (Value 1000))
    (Max_Init_Aggressors (Usage Info) (Type Integer) (Value 4))
    (Modulation (Usage Info) (Type String) (List "NRZ" "PAM4") (Default "PAM4"))
    (Rx_Decision_Time (Usage In) (Type UI) (Range 0.5 0.0 1.0))
    (Vendor_Future_Name (Usage Info) (Type Float) (Value 2.5))
  )
  (Model_Specific
    (ctle (Description "group text")
      (gain (Usage In) (Type Float) (Range 3.0 0.0 12.0) (Default 6.0) (Description "dB"))
      (mode (Usage In) (Type Integer) (List 0 1 2) (List_Tip "off" "manual" "auto"))
    )
    (old_syntax (Usage In) (Type Float) (Format Range 0.5 0 1) (Description "IBIS 5.0 style"))
    (step_param (Usage In) (Type Float) (Increment 0.2 0.0 1.0 0.1))
    (steps_param (Usage In) (Type Integer) (Steps 4 0 8 4))
    (corner (Usage In) (Type Float) (Corner 1.0 0.9 1.1))
    (label (Usage In) (Type String) (Value "two words (and parens)"))
    (flag (Usage InOut) (Type Boolean) (Default False))
    (tx_taps
      (-1 (Usage In) (Type Tap) (Range -0.1 -0.5 0.0))
      (0 (Usage In) (Type Tap) (Range 0.9 0.0 1.0))
      (1 (Usage In) (Type Tap) (Range -0.05 -0.5 0.0))
    )
    (dfe_taps_out (Usage Out) (Type Float) (Description "adapted taps"))
    (dep_only (Usage Dep) (Type Integer) (Value 3))
    (table_param (Usage Info) (Type Float)
      (Table (Labels "row" "a" "b") (1 0.1 0.2) (2 0.3 0.4)))
  )
)
| a comment after the root
"""


def rich() -> AmiFile:
    return parse_ami(RICH, "rich.ami")


def test_rich_file_reads_every_format():
    a = rich()
    assert a.root == "rich_rx" and a.source == "rich.ami"
    assert a.description == "A receiver (CTLE | DFE) for tests"
    assert (a.ami_version, a.init_returns_impulse, a.getwave_exists) == ("7.1", True, False)
    assert (a.ignore_bits, a.max_init_aggressors, a.modulation) == (1000, 4, "PAM4")
    assert a.reserved["Vendor_Future_Name"].value == 2.5      # unknown reserved name kept
    ms = a.model_specific
    assert list(ms) == ["ctle.gain", "ctle.mode", "old_syntax", "step_param", "steps_param",
                        "corner", "label", "flag", "tx_taps.-1", "tx_taps.0", "tx_taps.1",
                        "dfe_taps_out", "dep_only", "table_param"]
    g = ms["ctle.gain"]
    assert g == AmiParameter("gain", ("Model_Specific", "ctle", "gain"), "In", "Float", "Range",
                             6.0, (3.0, 0.0, 12.0), "dB")
    assert g.value == 6.0 and g.line == 16
    assert ms["ctle.mode"].values == (0, 1, 2) and ms["ctle.mode"].value == 0
    assert ms["ctle.mode"].labels == ("off", "manual", "auto")
    assert (ms["old_syntax"].format, ms["old_syntax"].values) == ("Range", (0.5, 0.0, 1.0))
    assert ms["step_param"].values == (0.2, 0.0, 1.0, 0.1)
    assert ms["steps_param"].values == (4, 0, 8, 4)
    assert (ms["corner"].format, ms["corner"].value) == ("Corner", 1.0)
    assert ms["label"].value == "two words (and parens)"
    assert (ms["flag"].format, ms["flag"].value, ms["flag"].usage) == ("", False, "InOut")
    assert ms["tx_taps.-1"].value == -0.1 and ms["tx_taps.-1"].type == "Tap"
    assert ms["dfe_taps_out"].value is None and ms["dfe_taps_out"].format == ""
    assert ms["table_param"].values == ((1.0, 0.1, 0.2), (2.0, 0.3, 0.4))
    assert a.reserved["Rx_Decision_Time"].type == "UI"


def test_defaults_are_the_in_and_inout_parameters():
    d = rich().defaults()
    assert d == {"Rx_Decision_Time": 0.5, "ctle.gain": 6.0, "ctle.mode": 0, "old_syntax": 0.5,
                 "step_param": 0.2, "steps_param": 4, "corner": 1.0,
                 "label": "two words (and parens)", "flag": False, "tx_taps.-1": -0.1,
                 "tx_taps.0": 0.9, "tx_taps.1": -0.05}


def test_parameters_in_nests_groups_quotes_strings_and_takes_checked_overrides():
    a = rich()
    s = a.parameters_in({"ctle.gain": 9, "tx_taps.0": "0.8", "flag": "True"})
    assert s == ('(rich_rx (Rx_Decision_Time 0.5) (ctle (gain 9.0) (mode 0)) (old_syntax 0.5) '
                 '(step_param 0.2) (steps_param 4) (corner 1.0) '
                 '(label "two words (and parens)") (flag True) '
                 '(tx_taps (-1 -0.1) (0 0.8) (1 -0.05)))')
    back = parse_params_out(s)
    assert back["ctle"] == {"gain": 9.0, "mode": 0} and back["tx_taps"]["0"] == 0.8
    assert back["label"] == "two words (and parens)" and back["flag"] is True
    assert parse_params_out(a.parameters_in())["ctle"]["gain"] == 6.0


@pytest.mark.parametrize("values, fragment", [
    ({"ctle.gian": 1.0}, "no parameter 'ctle.gian'; did you mean ctle.gain"),
    ({"dfe_taps_out": 1.0}, "'dfe_taps_out' is Usage Out: only In and InOut"),
    ({"AMI_Version": "8.0"}, "'AMI_Version' is Usage Info"),
    ({"dep_only": 3}, "'dep_only' is Usage Dep"),
    ({"ctle.gain": 13.0}, "13.0 is not allowed (it takes a Float from 0.0 to 12.0)"),
    ({"ctle.mode": 3}, "3 is not allowed (it takes one of 0, 1, 2)"),
    ({"ctle.mode": 1.5}, "1.5 is not a Integer value"),
    ({"step_param": 0.25}, "in steps of 0.1"),
    ({"steps_param": 3}, "in 4 steps"),
    ({"corner": 1.05}, "one of 1.0, 0.9, 1.1"),
    ({"flag": "maybe"}, "'maybe' is not a Boolean value"),
    ({"label": 'a "quoted" word'}, "is not a String value"),
    ({"ctle.gain": float("nan")}, "nan is not a Float value"),
])
def test_parameters_in_refuses_bad_overrides_in_one_line(values, fragment):
    with pytest.raises(AmiError) as e:
        rich().parameters_in(values)
    msg = str(e.value)
    assert fragment in msg and "\n" not in msg and msg.startswith("rich.ami")


def test_check_normalises_to_the_parameter_type():
    ms = rich().model_specific
    assert ms["ctle.mode"].check("2") == 2 and isinstance(ms["ctle.mode"].check(2.0), int)
    assert ms["ctle.gain"].check(4) == 4.0 and isinstance(ms["ctle.gain"].check(4), float)
    assert ms["flag"].check("false") is False and ms["flag"].check(True) is True
    assert ms["step_param"].check(0.7) == 0.7 and ms["steps_param"].check(6) == 6
    assert ms["label"].check("x y") == "x y"
    with pytest.raises(AmiError, match="is not a Float value"):
        ms["ctle.gain"].check(True)


@pytest.mark.parametrize("text, expected", [
    ("(root (a 1) (b (c 2.5)) (s \"x\"))", {"a": 1, "b": {"c": 2.5}, "s": "x"}),
    ("(m (taps 0.1 -0.2 3e-3) (ok True) (bad False) (word NRZ))",
     {"taps": (0.1, -0.2, 0.003), "ok": True, "bad": False, "word": "NRZ"}),
    ("(m (msg \"a (b) | c\") (empty))", {"msg": "a (b) | c", "empty": ()}),
    ("(m (a 1) (a 2))", {"a": 2}),
    ("", {}),
    ("  \n", {}),
    ("(m)", {}),
])
def test_parse_params_out(text, expected):
    assert parse_params_out(text) == expected


@pytest.mark.parametrize("text, fragment", [
    ("garbage", "'garbage' outside any '(name ...)'"),
    ("(root (a 1)", "'(root' is never closed"),
    ("(root (a 1)))", "')' without its '('"),
    ("(root 1)", "stray value '1'"),
    ("(root (a 1 (b 2)))", "mixes values and groups"),
    ("(root (a 1)) (x 2)", "text after the root"),
    ("((a 1))", "'(' not followed by a name"),
    ("(root (s \"open", "unterminated string"),
    ("(a " * 100 + ")" * 100, "nested deeper than 64"),
])
def test_parse_params_out_refuses_garbage(text, fragment):
    with pytest.raises(AmiError) as e:
        parse_params_out(text)
    assert fragment in str(e.value) and "\n" not in str(e.value)


MINI = "(m (Reserved_Parameters (Init_Returns_Impulse (Usage Info) (Type Boolean) (Value True)))\n"


def _leaf(body: str) -> str:
    return MINI + f"(Model_Specific\n(p {body})))"


def _deep(n: int) -> str:
    return MINI + "(Model_Specific " + "(g" * n + " (p (Usage In) (Type Float) (Value 1))" + \
        ")" * n + "))"


HOSTILE = [
    ("unbalanced_open", MINI + "(Model_Specific (p (Usage In) (Type Float) (Value 1))",
     "line 2: unbalanced parenthesis: '(Model_Specific' is never closed (2 '(' left open"),
    ("unbalanced_close", MINI + "(Model_Specific)))", "line 2: unbalanced parenthesis: ')'"),
    ("deep_nesting", _deep(10_000), "line 2: parentheses nested deeper than 64 levels"),
    ("unknown_usage", _leaf("(Usage Input) (Type Float) (Value 1)"),
     "line 3: parameter 'p': Usage 'Input' is not one of In, Out, InOut, Info, Dep"),
    ("unknown_type", _leaf("(Usage In) (Type Double) (Value 1)"),
     "parameter 'p': Type 'Double' is not one of"),
    ("no_usage", _leaf("(Type Float) (Value 1)"), "parameter 'p': no Usage tag"),
    ("default_outside_range", _leaf("(Usage In) (Type Float) (Range 0.5 0 1) (Default 2)"),
     "parameter 'p': Default 2.0 is outside its Range (a Float from 0.0 to 1.0)"),
    ("default_not_in_list", _leaf("(Usage In) (Type Integer) (List 1 2) (Default 3)"),
     "parameter 'p': Default 3 is outside its List"),
    ("typ_outside_range", _leaf("(Usage In) (Type Float) (Range 2 0 1)"),
     "Range typical value 2.0 is outside 0.0..1.0"),
    ("min_above_max", _leaf("(Usage In) (Type Float) (Range 0.5 1 0)"),
     "Range minimum 1.0 is above its maximum 0.0"),
    ("range_short", _leaf("(Usage In) (Type Float) (Range 0.5 1)"),
     "Format Range needs 3 value(s), got 2"),
    ("bad_number", _leaf("(Usage In) (Type Float) (Value fast)"), "'fast' is not a Float"),
    ("two_formats", _leaf("(Usage In) (Type Float) (Value 1) (List 1 2)"), "several formats"),
    ("tag_twice", _leaf("(Usage In) (Usage Out) (Type Float) (Value 1)"),
     "tag 'Usage' given twice"),
    ("unknown_format", _leaf("(Usage In) (Type Float) (Format Ladder 1 2)"),
     "Format 'Ladder' is not one of"),
    ("duplicate_names", MINI + "(Model_Specific\n(p (Usage In) (Type Float) (Value 1))\n"
     "(p (Usage In) (Type Float) (Value 2))))",
     "line 4: 'Model_Specific.p' defined twice (first at line 3)"),
    ("duplicate_section", MINI + "(Model_Specific)\n(Model_Specific))",
     "line 3: 'Model_Specific' given twice in the root (first at line 2)"),
    ("missing_root", "", "no root '(name ...)' found"),
    ("only_comments", "| nothing\n| here\n", "no root '(name ...)' found"),
    ("bare_words", "just words", "line 1: 'just' outside any '(name ...)'"),
    ("no_reserved", "(m (Model_Specific))", "has no Reserved_Parameters branch"),
    ("text_after_root", MINI + ")\n(second)", "line 3: text after the root '(m' closed"),
    ("nameless", "(m (Reserved_Parameters ((Usage In))))", "'(' not followed by a name"),
    ("empty_parens", "()", "'(' not followed by a name"),
    ("unterminated_string", _leaf('(Usage In) (Type String) (Value "abc)'),
     "line 3: unterminated string"),
    ("neither_leaf_nor_group", _leaf("1 2 3"), "'Model_Specific.p' is neither a parameter"),
    ("stray_value", MINI + "(Model_Specific 42))", "line 2: stray value '42'"),
    ("nested_reserved", ("(m (Reserved_Parameters (grp (AMI_Version (Usage Info) (Type String)"
                         " (Value \"7\")))))"),
     "reserved parameter 'grp.AMI_Version' is inside a group"),
    ("too_long", "(m " + " " * (4 * 1024 * 1024) + ")", "more than the 4 MB"),
]


@pytest.mark.parametrize("name, text, fragment", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_text_gives_one_clear_error_line(name, text, fragment):
    with pytest.raises(AmiError) as e:
        parse_ami(text, "bad.ami")
    msg = str(e.value)
    assert fragment in msg, msg
    assert msg.startswith("bad.ami") and "\n" not in msg
    assert isinstance(e.value, ConfigError) and isinstance(e.value, ValueError)


def test_hostile_files_are_refused_unread_or_cleanly(tmp_path):
    big = tmp_path / "huge.ami"
    with open(big, "wb") as f:                 # 100 MB, sparse: refused before reading
        f.truncate(100 * 1024 * 1024)
    with pytest.raises(AmiError, match=r"huge\.ami: 104\.9 MB, larger than the 4 MB"):
        read_ami(big)
    with pytest.raises(AmiError, match=r"missing\.ami: cannot read an AMI parameter file"):
        read_ami(tmp_path / "missing.ami")
    binary = tmp_path / "lib.ami"
    binary.write_bytes(bytes(range(256)) * 16)
    with pytest.raises(AmiError, match=r"lib\.ami line 1: .* outside any"):
        read_ami(binary)
    ok = tmp_path / "ok.ami"
    ok.write_text(RICH)
    assert read_ami(ok).source == str(ok)


def test_large_and_deep_inputs_cost_linear_time():
    n = 20_000                                 # about 1.5 MB of parameters
    body = "".join(f"(p{i} (Usage In) (Type Float) (Range 0.5 0 1) (Description \"d\"))\n"
                   for i in range(n))
    text = MINI + "(Model_Specific\n" + body + "))"
    with cpu_seconds_at_most(20.0):
        a = parse_ami(text)
        for _ in range(20):
            with pytest.raises(AmiError, match="deeper than 64"):
                parse_ami(_deep(10_000))
    assert len(a.model_specific) == n and a.model_specific[f"p{n - 1}"].line == n + 2
    assert len(a.parameters_in()) > 10 * n
    assert parse_ami(_deep(60)).model_specific[".".join(["g"] * 60 + ["p"])].value == 1.0


# ---- public golden data: pyibis-ami's own test texts and PyBERT's example model ----

def _pyami_test_texts() -> list[str]:
    texts = python_strings(mirror_text(PYAMI, "tests/ami/test_parser.py"), "(example_tx")
    texts += python_strings(mirror_text(PYAMI, "tests/conftest.py"), "(example_tx")
    assert len(texts) == 2, "pyibis-ami's test files changed shape"
    return texts


def test_golden_pyibisami_test_parser_fixture():
    """What pyibis-ami's tests/ami/test_parser.py states of its fixture holds for ours."""
    a = parse_ami(_pyami_test_texts()[0], "pyibisami:test_parser.py")
    assert a.root == "example_tx"
    assert a.description == "Example Tx model from ibisami package."
    for key in ("tx_tap_units", "tx_tap_np1", "tx_tap_nm1", "tx_tap_nm2", "corner_test"):
        assert key in a.model_specific
    assert a.model_specific["tx_tap_units"].value == 27
    assert a.reserved["AMI_Version"].value == "5.1" and a.ami_version == "5.1"
    assert a.reserved["Init_Returns_Impulse"].value is True and a.init_returns_impulse
    assert "Bad Name" not in a.reserved
    corner = a.model_specific["corner_test"]
    assert (corner.format, corner.values, corner.value) == ("Corner", (1, 0, 2), 1)
    assert a.parameters_in() == ("(example_tx (tx_tap_units 27) (tx_tap_np1 0) (tx_tap_nm1 0)"
                                 " (tx_tap_nm2 0) (corner_test 1))")


def test_golden_pyibisami_conftest_ami_file(tmp_path):
    p = tmp_path / "test.ami"                 # pyibis-ami's fixture writes it to a file too
    p.write_text(_pyami_test_texts()[1])
    a = read_ami(p)
    assert a.root == "example_tx" and a.getwave_exists and a.init_returns_impulse
    assert a.defaults() == {"tx_tap_units": 27, "tx_tap_np1": 0, "tx_tap_nm1": 0,
                            "tx_tap_nm2": 0}
    assert a.model_specific["tx_tap_units"].values == (27, 6, 27)


def test_golden_pybert_example_rx_ami():
    a = parse_ami(mirror_text(PYBERT, "models/ibisami/example_rx.ami"), "example_rx.ami")
    assert (a.root, a.ami_version, a.init_returns_impulse, a.getwave_exists) == \
        ("example_rx", "5.1", True, True)
    out = parse_params_out(a.parameters_in({"ctle_mode": 1}))
    assert out == {"ctle_mode": 1, "ctle_freq": 5e9, "ctle_mag": 0.0, "ctle_bandwidth": 12e9,
                   "ctle_dcgain": 0.0, "dfe_mode": 0, "dfe_ntaps": 5, "dfe_tap1": 0.0,
                   "dfe_tap2": 0.0, "dfe_tap3": 0.0, "dfe_tap4": 0.0, "dfe_tap5": 0.0,
                   "dfe_vout": 1.0, "dfe_gain": 0.1,
                   "debug": {"dbg_enable": False, "dump_dfe_adaptation": False,
                             "dump_adaptation_input": False}}
    assert a.model_specific["dfe_mode"].labels == ("Off", "Manual", "Adaptive")


def test_pyibisami_oracle_reads_the_same_parameters():
    """pyibis-ami's parser, run on the golden files and our own rich text, gives the same
    usage, type, format and value (List and Table: the entries) for every parameter."""
    texts = _pyami_test_texts() + [mirror_text(PYBERT, "models/ibisami/example_rx.ami"), RICH]
    answers = pyibisami_oracle(texts)
    compared = 0
    for text, theirs in zip(texts, answers):
        ours = parse_ami(text)
        assert theirs["errors"] == [] and theirs["root"] == ours.root
        assert theirs["description"] == ours.description
        mine = {**ours.reserved, **ours.model_specific}
        # pyibis-ami drops an Out parameter that declares no value; it reads all the others
        assert set(mine) - set(theirs["params"]) <= {"dfe_taps_out"}
        for name, (usage, typ, fmt, value) in theirs["params"].items():
            p = mine[name]
            assert (p.usage, p.type, p.format or "Value") == (usage, typ, fmt), name
            if fmt in ("List", "Table"):
                assert [list(v) if fmt == "Table" else v for v in p.values] == value, name
            else:
                assert p.value == value, name
            compared += 1
    assert compared >= 50


def test_an_input_without_any_value_is_left_out_of_defaults_and_the_string():
    a = parse_ami(_leaf("(Usage In) (Type Float)").replace("(Model_Specific\n",
                  "(Model_Specific\n(q (Usage In) (Type Integer) (Value 2))\n"))
    assert a.model_specific["p"].value is None
    assert a.defaults() == {"q": 2} and a.parameters_in() == "(m (q 2))"
    assert a.parameters_in({"p": 0.25}) == "(m (q 2) (p 0.25))"


def test_byte_order_mark_and_crlf_line_ends_are_read(tmp_path):
    p = tmp_path / "bom.ami"
    p.write_bytes(b"\xef\xbb\xbf" + RICH.replace("\n", "\r\n").encode())
    a = read_ami(p)
    assert a.root == "rich_rx" and a.model_specific["ctle.gain"].line == 16
    assert parse_ami("\ufeff" + RICH).defaults() == rich().defaults()
