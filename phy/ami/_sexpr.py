"""The S-expression reader under the ``.ami`` parser and the parameter-string reader.

One pass over the text (a compiled token pattern), an explicit stack instead of recursion, so a
deep or long input costs linear time and a bounded depth. Private: :mod:`phy.ami.params` is the
public face.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import AmiError

__all__ = ["MAX_CHARS", "MAX_DEPTH", "Atom", "Node", "parse_params_out", "read_text", "read_tree"]

#: The deepest nesting of parentheses accepted (real files use 4 or 5 levels).
MAX_DEPTH = 64
#: The longest text accepted, in characters (4 MB; real ``.ami`` files are a few kB).
MAX_CHARS = 4 * 1024 * 1024

# One alternative per token kind; the last one catches what no other does.
_INT = re.compile(r"[-+]?\d+\Z")
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>\|[^\n]*)
  | (?P<open>\()
  | (?P<close>\))
  | (?P<string>"[^"]*")
  | (?P<badstring>"[^"]*)
  | (?P<atom>[^\s()"|]+)
""", re.VERBOSE)


@dataclass(frozen=True)
class Atom:
    """One value in the tree: its text (without the quotes of a string) and whether it was
    quoted, with the line it is on."""

    text: str
    quoted: bool
    line: int


@dataclass
class Node:
    """``(name item item ...)``: the name, the line of its ``(`` and its items (atoms and
    nodes, in file order)."""

    name: str
    line: int
    items: list = field(default_factory=list)

    @property
    def nodes(self) -> list[Node]:
        """The items that are nodes."""
        return [i for i in self.items if isinstance(i, Node)]

    @property
    def atoms(self) -> list[Atom]:
        """The items that are atoms."""
        return [i for i in self.items if isinstance(i, Atom)]


def _fail(source: str, line: int, what: str) -> AmiError:
    return AmiError(f"{source} line {line}: {what}")


def read_tree(text: str, source: str) -> Node:
    """Read the one top-level ``(name ...)`` of ``text``.

    Parameters
    ----------
    text : str
        The S-expression text; ``|`` starts a comment to the end of the line (outside strings).
    source : str
        The file name (or ``"<string>"``) the errors name.

    Returns
    -------
    Node
        The root node.

    Raises
    ------
    AmiError
        Text too long, nesting deeper than :data:`MAX_DEPTH`, unbalanced parentheses, an
        unterminated string, a ``(`` without a name, no root or text after the root.
    """
    if not isinstance(text, str):
        raise AmiError(f"{source}: expected text (str), got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise AmiError(f"{source}: {len(text) / 1e6:.1f} MB of text, more than the "
                       f"{MAX_CHARS // (1024 * 1024)} MB an AMI parameter file may have")
    text = text.removeprefix("\ufeff")       # a byte-order mark some editors write
    line = 1
    stack: list[Node] = []
    root: Node | None = None
    want_name = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "ws" or kind == "comment":
            continue
        if kind == "nl":
            line += 1
            continue
        if kind == "badstring":
            raise _fail(source, line, "unterminated string (a '\"' without its closing '\"')")
        if root is not None:
            if kind == "close":
                raise _fail(source, line, "unbalanced parenthesis: ')' without its '('")
            raise _fail(source, line, f"text after the root '({root.name}' closed: "
                                      f"{m.group()[:20]!r}")
        if want_name:
            if kind != "atom":
                raise _fail(source, line, "'(' not followed by a name")
            stack[-1].name = m.group()
            want_name = False
        elif kind == "open":
            if len(stack) >= MAX_DEPTH:
                raise _fail(source, line, f"parentheses nested deeper than {MAX_DEPTH} levels")
            stack.append(Node("", line))
            want_name = True
        elif kind == "close":
            if not stack:
                raise _fail(source, line, "unbalanced parenthesis: ')' without its '('")
            node = stack.pop()
            if stack:
                stack[-1].items.append(node)
            else:
                root = node
        elif not stack:
            raise _fail(source, line, f"{m.group()[:20]!r} outside any '(name ...)'")
        elif kind == "string":
            stack[-1].items.append(Atom(m.group()[1:-1], True, line))
            line += m.group().count("\n")
        else:
            stack[-1].items.append(Atom(m.group(), False, line))
    if stack:
        raise _fail(source, stack[-1].line,
                    f"unbalanced parenthesis: '({stack[-1].name}' is never closed "
                    f"({len(stack)} '(' left open at the end)")
    if root is None:
        raise AmiError(f"{source}: no root '(name ...)' found (empty or only comments)")
    return root


def read_text(path, limit: int, what: str) -> tuple[str, str]:
    """A file's text (UTF-8, else Latin-1), refused above ``limit`` bytes before reading."""
    p = Path(os.fspath(path))
    try:
        size = p.stat().st_size
        if size > limit:
            raise AmiError(f"{p}: {size / 1e6:.1f} MB, larger than the "
                           f"{limit // (1024 * 1024)} MB {what} may be")
        data = p.read_bytes()
    except OSError as exc:
        raise AmiError(f"{p}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig"), str(p)
    except UnicodeDecodeError:
        return data.decode("latin-1"), str(p)


def _atom_value(a: Atom):
    if a.quoted:
        return a.text
    t = a.text
    if t in ("True", "False"):
        return t == "True"
    if _INT.match(t):
        return int(t)
    try:
        return float(t)
    except ValueError:
        return t


def parse_params_out(text: str) -> dict:
    """A parameters string (``AMI_parameters_out``) as a nested dict.

    ``"(root (a 1) (b (c 2.5)) (s \\"x\\"))"`` gives ``{"a": 1, "b": {"c": 2.5}, "s": "x"}``:
    numbers to int or float, ``True``/``False`` to bool, a leaf with several values to a
    tuple, a repeated name keeps its last value. An empty string gives ``{}``.

    Raises
    ------
    AmiError
        Text that is not one ``(root ...)`` tree of ``(name value ...)`` leaves and groups.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("latin-1")
    if isinstance(text, str) and not text.strip():
        return {}
    root = read_tree(text, "AMI_parameters_out")

    def conv(node: Node) -> dict:
        out: dict = {}
        for item in node.items:
            if isinstance(item, Atom):
                raise AmiError(f"AMI_parameters_out line {item.line}: stray value "
                               f"{item.text!r} in '({node.name}' (expected '(name value)')")
            if item.nodes and item.atoms:
                raise AmiError(f"AMI_parameters_out line {item.line}: '({item.name}' mixes "
                               "values and groups")
            if item.nodes:
                out[item.name] = conv(item)
            else:
                vals = tuple(_atom_value(a) for a in item.atoms)
                out[item.name] = vals[0] if len(vals) == 1 else vals
        return out

    return conv(root)
