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
import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from readme_checks import CHECKS, shows

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
    ("ami", "import channels, phy\nfrom phy.ami import AmiModel"),
    ("rack", "from phy import topology as tp"),
    ("rack", "r.power.table()"),  # the rack block's r and rack
    ("rack", "print(r.latency_table())"),
]

#: Statements not run yet, with the reason; delete an entry to run (and check) it in place.
PENDING: dict[str, str] = {}

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
            after = next((i for i, (a, _) in enumerate(spans) if a > ln), len(spans) - 1)
            owner = before if before is not None else after
        stmts[owner].comments.append(tok.string.lstrip("#").strip())
    return stmts


BLOCKS = _blocks()
for _b, (_g, _) in zip(BLOCKS, LAYOUT):
    _b.group = _g
for _b in BLOCKS:
    _b.statements = _statements(_b)


def _names(node: ast.AST) -> tuple[set, set]:
    """(names a statement reads from its namespace, names it binds there); the variables
    of its comprehensions and lambdas are their own."""
    loads, stores, local = set(), set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            stores |= {a.asname or a.name.split(".")[0] for a in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            stores.add(n.name)
        elif isinstance(n, ast.comprehension):
            local |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            local |= {a.arg for a in n.args.args + n.args.kwonlyargs}
    return loads - local, stores - local


def _pending(st: Statement) -> str | None:
    return next((why for key, why in PENDING.items() if key in st.code), None)


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


def test_pending_examples_are_in_the_readme_and_have_their_checks():
    """A statement not run yet (PENDING, empty when every example runs) is still in the
    README and has its check ready, so deleting its entry runs and checks it."""
    for key in PENDING:
        st = next((st for b in BLOCKS for st in b.statements if key in st.code), None)
        assert st is not None, f"PENDING names {key!r}, which no README example holds"
        assert _check_of(st) is not None, key


def test_the_runner_skips_what_needs_shared_and_names_a_failure(tmp_path, monkeypatch):
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
    key = "expensive_call(3)"
    monkeypatch.setitem(PENDING, key, "a synthetic pending statement")
    later = block(4, f"def expensive_call(n):\n    raise AssertionError('ran')\nbest, plans = {key}\nn = best\n",
                  group="pending")
    status, why = _run_block(later, tmp_path, groups, absent)
    assert status == "skip" and PENDING[key] in why and "best" not in groups["pending"].ns
