"""Every Python example in README.md runs as written and prints what its comments say.

Each ```python block runs from the repository root (so ``../shared`` is the shared data
folder beside it), statement by statement as the interpreter runs a block, with
matplotlib's Agg backend; the figures it draws are saved into a temporary folder. A block
that continues an earlier one (the statistical eye uses the simulator block's ``ch``,
``tx``, ``rx``...) runs in that block's namespace: :data:`LAYOUT` gives each block its
group, and the layout is checked against the README (the blocks and their first lines)
and against the names each block uses (only names defined earlier in its own group). A
comment that states a figure has its check in :data:`CHECKS`: a new figure without one
fails :func:`test_every_figure_in_a_comment_is_checked`. A block that reads ``../shared``
skips when that folder is absent, and so do the blocks that use what it defines. Bash and
TOML blocks are not run here (CI runs the README's install commands).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import io
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SHARED = REPO.parent / "shared"

#: Each Python block of the README in order: its group and how its code starts. A block
#: in the group of the block before it continues that block's namespace.
LAYOUT = [
    ("channels", "import channels\nfrom channels import media"),
    ("fec", "import numpy as np\nimport fec"),
    ("phy", "import channels, phy"),
    ("phy", "se = phy.statistical_eye("),  # the statistical eye of the simulator's link
    ("phy", "spec = phy.LinkSpec("),  # the link roll-up, with the simulator block's imports
    ("phy", "real = phy.Serdes("),
    ("rack", "from phy import topology as tp"),
    ("rack", "r.power.table()"),  # the rack block's r and rack
    ("rack", "print(r.latency_table())"),
]

#: Statements not run yet, with the reason; delete an entry to run (and check) it in place.
PENDING = {
    "tp.largest_domain(tp.Layout(max_tiers=1))": (
        "takes 353 s and 1.9 GB until the topology worker's fix of largest_domain (issue 31) "
        "lands; delete this PENDING entry then"),
}

#: Names of standards and parts in comments, not figures the code prints.
NOT_FIGURES = re.compile(r"IEEE 370|802\.3\w*|200G-per-lane|ieee_802_3\w+|\bd1, d2, c1, c2\b")


# ----------------------------------------------------------------------------- the README's blocks
@dataclass
class Statement:
    code: str  # its source, as in the README
    line: int  # README line of its first line
    comments: list[str] = field(default_factory=list)  # its own and the comment lines that belong to it
    node: ast.stmt | None = None


@dataclass
class Block:
    index: int
    line: int  # README line of the block's first code line
    source: str
    group: str = ""
    statements: list[Statement] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.index}-{self.group}-L{self.line}"


def _blocks(lang: str = "python") -> list[Block]:
    text = README.read_text()
    out = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        if m.group(1) == lang:
            out.append(Block(len(out), text[: m.start(2)].count("\n") + 1, m.group(2)))
    return out


def _statements(block: Block) -> list[Statement]:
    """The block's top-level statements, each with its comments: those on its lines, the
    comment lines right after it (no blank line between) and those heading the next."""
    src = block.source
    tree = ast.parse(src, f"README.md (line {block.line})")
    stmts = [Statement(ast.get_source_segment(src, n), block.line + n.lineno - 1, [], n) for n in tree.body]
    spans = [(n.lineno, n.end_lineno) for n in tree.body]
    lines = src.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type != tokenize.COMMENT:
            continue
        ln = tok.start[0]
        owner = next((i for i, (a, b) in enumerate(spans) if a <= ln <= b), None)
        if owner is None:  # a comment line: it follows its statement, or heads the next one
            prev = ln - 1
            while prev >= 1 and lines[prev - 1].strip().startswith("#"):
                prev -= 1
            before = next((i for i, (a, b) in enumerate(spans) if b == prev), None)
            owner = before if before is not None else next(i for i, (a, _) in enumerate(spans) if a > ln)
        stmts[owner].comments.append(tok.string.lstrip("#").strip())
    return stmts


BLOCKS = _blocks()
for _b, (_g, _) in zip(BLOCKS, LAYOUT):
    _b.group = _g
for _b in BLOCKS:
    _b.statements = _statements(_b)


def _names(node: ast.AST) -> tuple[set, set]:
    """(names a statement reads, names it binds)."""
    loads, stores = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            stores |= {a.asname or a.name.split(".")[0] for a in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            stores.add(n.name)
    return loads - stores, stores


def _pending(st: Statement) -> str | None:
    return next((why for key, why in PENDING.items() if key in st.code), None)


# ----------------------------------------------------------------------------- checks of the comments
def shows(value: float, text: str) -> bool:
    """``value`` printed to the significant digits of ``text`` reads ``text`` (2.08e-4, 51.2, 0.037)."""
    mant = text.lower().split("e")[0].lstrip("-")
    digits = len(mant.replace(".", "").lstrip("0"))
    return float(f"{float(value):.{max(digits, 1)}g}") == float(text)


def _il(v, ns, out):
    assert shows(v, "19.7")  # the file's name says 19.75 dB
    ch = ns["ch"]
    f = ch.network.f
    i = int(np.argmin(abs(f - 26.5625e9)))
    assert abs(f[i] - 26.5625e9) < 10e6  # the file's grid has the frequency
    assert v == pytest.approx(-20 * np.log10(abs(ch.network.s[i, 1, 0])), abs=0.02)


def _network(v, ns, out):
    assert v.nports == 4
    np.testing.assert_allclose(v.z0[0].real, [100, 100, 25, 25])  # differential, differential, common, common


def _ui_sum(v, ns, out):
    link = ns["link"]
    assert abs(link.network.s[0, 1, 0]) < 1e-12  # the AC cap: no gain at DC
    assert v == pytest.approx(0.0, abs=1e-9 * ns["pr"].samples.max())
    # and at any other phase the same: every sample one UI apart, summed
    pr = ns["pr"]
    spu = pr.samples_per_ui
    assert [abs(pr.samples[k::spu].sum()) < 1e-9 * pr.samples.max() for k in (0, spu // 3)] == [True, True]


def _wide(v, ns, out):
    f = ns["wide"].network.f
    assert f[0] == 0.0 and f[-1] == pytest.approx(200e9)
    assert ns["wide"].grid.extrapolated_above_hz == pytest.approx(ns["ch"].network.f[-1])  # the file's 60 GHz


def _encode(v, ns, out):
    words, msgs = ns["words"], ns["msgs"]
    assert words.shape == (1000, 544) and np.array_equal(words[:, :514], msgs)


def _decode(v, ns, out):
    res = ns["res"]
    assert np.array_equal(res.messages, ns["msgs"]) and not res.failed.any() and not res.n_corrected.any()


def _random(v, ns, out):
    assert shows(v.cer, "8.15e-13") and shows(v.ber_out, "2.41e-15")


def _burst(v, ns, out):
    import fec

    plain = fec.burst_errors(fec.KP4, ns["dfe"], precoded=False)
    assert v.cer < plain.cer / 100  # the bursts, two errors each after the precoder, cost far less


def _compare(v, ns, out):
    assert [v[k]["agrees"] for k in ("cer", "ser_out", "ber_out")] == [True, True, True]
    assert "codewords" in v["ser_out"]["per"]


def _latency(v, ns, out):
    assert shows(v.accumulation_s * 1e9, "51.2")
    assert v.total_s == pytest.approx(v.accumulation_s + v.syndrome_s + v.key_equation_s + v.chien_forney_s)


def _inner_code(v, ns, out):
    import fec

    assert (fec.SFEC.n, fec.SFEC.k) == (128, 120)  # the comment heading the example


def _inner_words(v, ns, out):
    assert ns["bits"].shape == (10_000, 120)


def _coded(v, ns, out):
    assert ns["coded"].shape == (10_000, 128)


def _llr(v, ns, out):
    assert ns["llr"].shape == (10_000, 128) and np.all(np.isfinite(ns["llr"]))


def _chase(v, ns, out):
    raw, after = v
    assert shows(raw, "3.2e-3") and shows(after, "1.7e-4")


def _threshold(v, ns, out):
    assert shows(v["threshold_ber"], "1.7e-3") and v["outer"].startswith("KP4")


def _eta0(v, ns, out):
    assert ns["noise"].rx_noise_psd_v2_per_hz * 1e9 == pytest.approx(8.2e-9)  # V^2/Hz to V^2/GHz


def _simulate(v, ns, out):
    r = ns["r"]
    assert r.n_ui == 10**7 and r.cdr_locked is True


def _ser(v, ns, out):
    from fec.montecarlo import Estimate

    ber, ser = v
    for est in (ber, ser):
        exact = Estimate.of(est.count, est.trials)
        assert (est.low, est.high) == pytest.approx((exact.low, exact.high))  # exact (Clopper-Pearson) 95 %
    assert shows(ser.value, "4.4e-6") and shows(ser.low, "3.2e-6") and shows(ser.high, "5.9e-6")


def _cdr(v, ns, out):
    locked, rms_ui = v
    assert locked is True and shows(rms_ui, "0.048")


def _bursts(v, ns, out):
    counts, model = v
    assert counts.sum() == ns["r"].n_bursts and model.start_rate == pytest.approx(ns["r"].ser.value)


def _eye(v, ns, out):
    heights, width, crossings = v
    assert [shows(h * 1e3, s) for h, s in zip(heights, ("5.9", "3.9", "5.9"))] == [True] * 3
    assert shows(width * 1e12, "1.8") and crossings["n"] > 0


def _axes(v, ns, out):
    assert v is not None and v.has_data()


def _se_ser(v, ns, out):
    ser, ser_dfe = v
    assert 0 < ser <= ser_dfe


def _thru(v, ns, out):
    names = sorted(a.name for a in ns["thru"].aggressors)
    assert len(names) == 2 and any("NE" in n for n in names) and any("FE" in n for n in names)


def _margin(v, ns, out):
    import phy

    assert callable(phy.ComParams.ieee_802_3dj_kr)  # the alternative the comment names


def _com(v, ns, out):
    assert shows(v[0], "1.81") and "31/29 mm" in ns["m"].package_case


def _passes(v, ns, out):
    passes, reasons = v
    assert passes is True and reasons == [] and ns["spec"].target_ber == 1e-13


def _usable(v, ns, out):
    assert v[0] == 400e9 == pytest.approx(2 * 212.5e9 * 514 / 544 * 256 / 257)


def _impairments(v, ns, out):
    imp = ns["real"].rx_impairments
    assert (imp.adc_enob, imp.adc_clip_probability, imp.ffe_tap_bits) == (5, 1e-6, 6)


def _nvl72(v, ns, out):
    rack = ns["rack"]
    assert rack.n_accelerators == 18 * 4 and [t.count for t in rack.tiers] == [9 * 2]


def _gpu_bw(v, ns, out):
    assert v == 900e9 and ns["r"].n_switches == {"nvswitch": 9 * 2}


def _aggregate(v, ns, out):
    assert v == (129.6e12, 5184) and shows(ns["r"].cable_length_m / 1e3, "3.1")


def _two_tier(v, ns, out):
    assert ns["dom"].n_accelerators == 576


def _decode_speed(v, ns, out):
    from phy import topology as tp

    assert shows(v, "12.7")
    assert shows(tp.over_fabric(ns["r"], tp.Model.llama3_70b(), source="local").tokens_per_s, "113")


def _power(v, ns, out):
    figs = re.findall(r"(\d+\.\d+) kW", v)
    assert figs[:4] == ["5.25", "1.65", "1.65", "1.95"], v


@functools.lru_cache(maxsize=1)
def _nvl72_on_dsp_optics():
    """(the rack, its roll-up) on DSP pluggables, as the power example builds it."""
    from phy import topology as tp

    rack = tp.nvl72(tp.LinkClass.optical("dsp", 2))
    return rack, tp.rollup(rack)


def _optical_power(v, ns, out):
    assert shows(v / 1e3, "24.7")
    assert _nvl72_on_dsp_optics()[1].power.total_w == v
    assert "optical modules 19.44 kW" in _nvl72_on_dsp_optics()[1].power.table()


def _reliability(v, ns, out):
    from phy import topology as tp

    assert shows(v, "2e-4")
    assert shows(tp.fabric_reliability(*_nvl72_on_dsp_optics()).link_down_events_per_day, "0.037")


def _plan(v, ns, out):
    plan = ns["plan"]
    assert plan.closes and len(plan.report_topology.tiers) == 2
    inside = [c for c in plan.choices if c["level"] == 0]
    between = [c for c in plan.choices if c["level"] == 1]
    assert {c["class"] for c in inside} == {"copper_26awg_flyover"}
    assert {c["class"] for c in between} == {"optical_dsp"} and min(c["length_m"] for c in between) == 4.75
    shortest = min(between, key=lambda c: c["length_m"])
    assert [o[1] for o in shortest["options"] if o[0].startswith(("copper", "aec"))] == [False, False]


def _largest(v, ns, out):
    best, plans = ns["best"], ns["plans"]
    assert best.n_accelerators == 72
    assert next(p for p in plans if not p.closes).binding == "switch_radix"


def _latency_table(v, ns, out):
    r = ns["r"]
    first = out.splitlines()[0]
    assert first.startswith("nvl72 remote: PHY floor 472.8 ns, one way 618.5 ns, remote read 1636.5 ns, "
                            "8-byte all-reduce over 72 5.14 us"), first
    one = r.one_way["remote"]
    layer = {k: x * 1e9 for k, x in one.layer_totals().items()}
    assert [shows(layer[k], s) for k, s in (("endpoint", "145"), ("phy", "269"), ("link", "4.5"), ("switch", "200"))] \
        == [True] * 4, layer
    assert set(one.layers["endpoint"]) == {"tx_controller", "rx_controller"}
    assert {k for k, x in one.layers["link"].items() if x > 1e-12} == {"crc_check", "serialization"}
    phy_ns = {k: x * 1e9 for k, x in one.layers["phy"].items()}
    assert shows(phy_ns["serdes_tx"] + phy_ns["serdes_rx"], "20")
    assert shows(phy_ns["fec_accumulation"] + phy_ns["fec_decode"], "237") and shows(phy_ns["time_of_flight"], "12")
    read = r.round_trip["remote"].layer_totals()
    assert shows(read["memory"] * 1e9, "399") and read["phy"] == pytest.approx(2 * one.layer_totals()["phy"])
    tails = r.loaded_s["remote"]
    assert [shows(tails[u]["p99.99"] * 1e9, s) for u, s in ((0.3, "630"), (0.7, "655"), (0.9, "739"))] == [True] * 3
    assert re.findall(r"at (\d+) % switch load", out) == ["30", "70", "90"]


def _collective(v, ns, out):
    assert shows(v.time_s * 1e6, "5.14")  # the table's 8-byte all-reduce


#: Checks of what statements print, by a piece of the statement's code (unique in the README).
#: Each takes (the statement's value, the group's namespace, what it printed).
CHECKS = {
    "ch.insertion_loss_db(26.5625e9)": _il,
    "ch.network": _network,
    "pr.ui_sum()": _ui_sum,
    "wide = ch.uniform(f_max_hz=200e9)": _wide,
    "ch.quality.problems()": lambda v, ns, out: isinstance(v, list),
    "words = fec.KP4.encode(msgs)": _encode,
    "res = fec.KP4.decode(words)": _decode,
    "fec.random_errors(fec.KP4, 2.4e-4)": _random,
    "fec.required_ber(fec.KP4, 1e-13)": lambda v, ns, out: shows(v, "2.08e-4"),
    "fec.burst_errors(fec.KP4, dfe, precoded=True)": _burst,
    "fec.montecarlo.random_stream(fec.KR4, 1e-3, 20_000).compare(": _compare,
    "fec.latency(fec.KP4, 106.25e9)": _latency,
    "rng = np.random.default_rng(1)": _inner_code,
    "bits = rng.integers(0, 2, (10_000, 120)": _inner_words,
    "coded = fec.SFEC.encode(bits)": _coded,
    "llr = fec.hamming.pam4_llr(coded, 0.38, rng)": _llr,
    "((llr < 0) != coded).mean()": _chase,
    'fec.hamming.concatenated_threshold(decoder="chase", interleave=4)': _threshold,
    "noise = phy.Noise(tx_snr_db=33": _eta0,
    "r = phy.simulate(ch, 10**7": _simulate,
    "r.ber, r.ser": _ser,
    "r.cdr_locked, r.cdr_phase_rms_s * baud": _cdr,
    "r.burst_span_counts, r.burst_model()": _bursts,
    "r.eye.heights_v(1e-4), r.eye.width_s(1e-4), r.eye.crossing_stats()": _eye,
    "r.eye.plot()": _axes,
    "r.eye.plot_bathtub()": _axes,
    "se.ser(), se.ser_dfe()": _se_ser,
    "se.plot()": _axes,
    "thru = channels.load(": _thru,
    "m = phy.channel_margin(thru, phy.ComParams.ieee_802_3ck_kr())": _margin,
    "m.com_db, m.breakdown_db()": _com,
    "r.passes, r.reasons": _passes,
    "r.usable_bandwidth_bps, r.rate_chain": _usable,
    "real = phy.Serdes(": _impairments,
    "rack = tp.nvl72()": _nvl72,
    "r.accel_bandwidth_bytes_per_s": _gpu_bw,
    "r.aggregate_bandwidth_bytes_per_s, r.cables": _aggregate,
    "dom = tp.two_tier(8, rack.classes[0]": _two_tier,
    'tp.over_fabric(r, tp.Model.llama3_70b(), source="remote").tokens_per_s': _decode_speed,
    "r.power.table()": _power,
    'tp.rollup(tp.nvl72(tp.LinkClass.optical("dsp", 2))).power.total_w': _optical_power,
    "tp.fabric_reliability(rack, r).link_down_events_per_day": _reliability,
    "plan = tp.plan_domain(144)": _plan,
    "best, plans = tp.largest_domain(": _largest,
    "print(r.latency_table())": _latency_table,
    'r.collective("all_reduce", 8)': _collective,
}


def _check_of(st: Statement):
    keys = [k for k in CHECKS if k in st.code]
    assert len(keys) <= 1, f"README line {st.line}: more than one check matches: {keys}"
    return CHECKS[keys[0]] if keys else None


def _literal_comment(st: Statement):
    """A comment that is a Python literal states the value itself ('through 1->2 ...')."""
    if len(st.comments) == 1 and st.comments[0][:1] in "'\"[({":
        try:
            return True, ast.literal_eval(st.comments[0])
        except (ValueError, SyntaxError):
            pass
    return False, None


# ----------------------------------------------------------------------------- the layout is the README's
def test_the_layout_is_the_readmes():
    assert len(BLOCKS) == len(LAYOUT), f"README has {len(BLOCKS)} Python blocks, LAYOUT {len(LAYOUT)}"
    for b, (group, start) in zip(BLOCKS, LAYOUT):
        assert b.source.startswith(start), f"README block at line {b.line} ({group}) no longer starts {start!r}"


def test_each_block_uses_only_names_its_group_defined_before():
    """A block reads only names bound earlier in itself or in the earlier blocks of its
    group (or builtins); a block continuing a group reads at least one of the group's names
    (otherwise it should start a group of its own)."""
    problems = []
    defined: dict[str, set] = {}
    for b in BLOCKS:
        first = b.group not in defined
        have = defined.setdefault(b.group, set())
        from_group = set()
        for st in b.statements:
            loads, stores = _names(st.node)
            missing = {n for n in loads - have if not hasattr(builtins, n)}
            if missing:
                problems.append(f"README line {st.line} ({b.group}) uses {sorted(missing)}, defined by no earlier "
                                "statement of its group")
            from_group |= loads & have - stores
            have |= stores
        if not first and not from_group:
            problems.append(f"README block at line {b.line} continues group {b.group!r} but uses none of its names")
    assert not problems, "\n".join(problems)


def test_every_figure_in_a_comment_is_checked():
    """A comment stating a figure (a digit, beyond the names of standards) belongs to a
    statement with a check in CHECKS, or is itself the literal value the statement prints."""
    unchecked = []
    for b in BLOCKS:
        for st in b.statements:
            figures = [c for c in st.comments if re.search(r"\d", NOT_FIGURES.sub("", c))]
            if figures and _check_of(st) is None and not _literal_comment(st)[0]:
                unchecked.append(f"README line {st.line}: {figures}")
    assert not unchecked, "comments with figures and no check:\n" + "\n".join(unchecked)


def test_every_check_names_one_statement():
    code = [st.code for b in BLOCKS for st in b.statements]
    for key in CHECKS:
        assert sum(key in c for c in code) == 1, f"CHECKS key {key!r} matches {sum(key in c for c in code)} statements"
    for key in PENDING:
        assert sum(key in c for c in code) == 1, f"PENDING key {key!r} matches no single statement"


def test_the_shapes_of_the_checks():
    assert shows(2.0842764e-4, "2.08e-4") and not shows(2.0942764e-4, "2.08e-4")
    assert shows(0.0365453, "0.037") and shows(3123.46, "3.1e3") and not shows(0.0374, "0.036")
    assert shows(113.3144, "113") and shows(4.4e-6, "4.4e-6")


# ----------------------------------------------------------------------------- running the blocks
@dataclass
class _Group:
    ns: dict = field(default_factory=lambda: {"__name__": "__main__"})
    done: dict = field(default_factory=dict)  # block index -> ("ok" | "skip" | "fail", message)
    unavailable: dict = field(default_factory=dict)  # name -> why it was not defined


_GROUPS: dict[str, _Group] = {}


def _run_statement(b: Block, st: Statement, g: _Group, figures: Path) -> None:
    import phy

    node = st.node
    is_expr = isinstance(node, ast.Expr)
    code = compile(ast.Expression(node.value) if is_expr else ast.Module([node], []), f"README.md:{st.line}",
                   "eval" if is_expr else "exec")
    buf = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buf):
        warnings.filterwarnings("error", category=phy.CdrLockWarning)  # a lost lock is a failed example
        value = eval(code, g.ns) if is_expr else exec(code, g.ns)  # noqa: S307 - the README's own code
    out = buf.getvalue()
    literal, want = _literal_comment(st)
    if literal:
        assert value == want, f"README line {st.line}: prints {value!r}, its comment says {want!r}"
    check = _check_of(st)
    if check is not None:
        ok = check(value, g.ns, out)
        assert ok is not False, f"README line {st.line}: {st.comments} does not hold: {value!r}"
    import matplotlib.pyplot as plt

    for k in plt.get_fignums():
        path = figures / f"{b.name}-L{st.line}-{k}.png"
        plt.figure(k).savefig(path)
        assert path.stat().st_size > 0
    plt.close("all")


def _run_block(b: Block, figures: Path, groups: dict, shared: Path = SHARED) -> tuple[str, str]:
    """Run ``b`` in its group's namespace: ("ok" | "skip" | "fail", why). A block reading
    ``../shared`` skips when ``shared`` is absent, and a statement reading a name that a
    skipped or pending statement would have defined skips the rest of its block."""
    g = groups.setdefault(b.group, _Group())
    if "../shared" in b.source and not shared.is_dir():
        status = ("skip", f"reads ../shared, absent here ({shared})")
    else:
        status = ("ok", "")
    for st in b.statements:
        loads, stores = _names(st.node)
        why = _pending(st)
        if status[0] == "skip" or why:
            for n in stores:
                g.unavailable[n] = status[1] if status[0] == "skip" else why
            continue
        lost = sorted(n for n in loads if n in g.unavailable)
        if lost:
            status = ("skip", f"uses {lost}, not defined: {g.unavailable[lost[0]]}")
            for n in stores:
                g.unavailable[n] = status[1]
            continue
        try:
            _run_statement(b, st, g, figures)
        except Exception as e:  # name the README line
            status = ("fail", f"README line {st.line} ({st.code.splitlines()[0]}): {type(e).__name__}: {e}")
            break
        for n in stores:
            g.unavailable.pop(n, None)
    return status


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    import matplotlib

    matplotlib.use("Agg")
    return tmp_path_factory.mktemp("readme-figures")


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_the_example_runs_as_written(block, figures, monkeypatch):
    """The block, after the earlier blocks of its group (each run once), from the repo root."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    g = _GROUPS.setdefault(block.group, _Group())
    for earlier in BLOCKS[: block.index + 1]:
        if earlier.group == block.group and earlier.index not in g.done:
            failed = [i for i, (s, _) in g.done.items() if s == "fail"]
            g.done[earlier.index] = (("fail", f"block {BLOCKS[failed[0]].name} of its group failed")
                                     if failed else _run_block(earlier, figures, _GROUPS))
    status, message = g.done[block.index]
    if status == "skip":
        pytest.skip(message)
    assert status == "ok", message


@pytest.mark.parametrize("key", sorted(PENDING))
def test_pending_example(key):
    """The statements not run yet, each skipped with its reason; each has its check ready."""
    st = next(st for b in BLOCKS for st in b.statements if key in st.code)
    assert _check_of(st) is not None
    pytest.skip(f"README line {st.line}, {key}: {PENDING[key]}")


def test_the_runner_skips_what_needs_shared_and_names_a_failure(tmp_path):
    """On blocks of its own: without ../shared the block reading it skips, and so does the
    later block using what it defines, not the one using only its own names; an exception
    fails with the README line of its statement; a pending statement is not run."""
    def block(i, src, group="synthetic"):
        b = Block(100 + i, 1000 + 10 * i, src, group)
        b.statements = _statements(b)
        return b

    reads = block(0, 'import os\nfound = os.path.exists("../shared/channels")\n')
    uses = block(1, "twice = [found, found]\n")
    alone = block(2, "x = 2 + 3\n")
    groups: dict = {}
    absent = tmp_path / "no-shared"
    assert _run_block(reads, tmp_path, groups, absent) == ("skip", f"reads ../shared, absent here ({absent})")
    status, why = _run_block(uses, tmp_path, groups, absent)
    assert status == "skip" and why.startswith("uses ['found'], not defined: reads ../shared")
    assert _run_block(alone, tmp_path, groups, absent) == ("ok", "") and groups["synthetic"].ns["x"] == 5
    assert _run_block(reads, tmp_path, {}, tmp_path) == ("ok", "")  # present: it runs
    broken = block(3, "y = 1\nz = 1 / 0\n", group="other")
    status, why = _run_block(broken, tmp_path, groups, absent)
    assert status == "fail" and why.startswith("README line 1031 (z = 1 / 0): ZeroDivisionError")
    key = next(iter(PENDING))
    later = block(4, f"from phy import topology as tp\nbest, plans = {key}\nn = best\n", group="pending")
    status, why = _run_block(later, tmp_path, groups, absent)
    assert status == "skip" and PENDING[key] in why and "best, plans" not in groups["pending"].ns
