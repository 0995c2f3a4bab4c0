"""The ``.ami`` parameter file (IBIS 7.x/8, "Algorithmic Modeling Interface") and the
``AMI_parameters_in``/``AMI_parameters_out`` strings.

:func:`parse_ami`/:func:`read_ami` give an :class:`AmiFile`: the root name, the reserved
parameters and the model-specific ones (keyed by their dotted path below ``Model_Specific``),
each an :class:`AmiParameter` with its usage, type, format (Value, Range, List, Increment,
Steps, Corner, Table) and default. :meth:`AmiFile.parameters_in` writes the string a model's
``AMI_Init`` reads; :func:`parse_params_out` reads the one it writes back.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._sexpr import MAX_CHARS, Atom, Node, parse_params_out, read_text, read_tree
from ._values import FORMATS, RESERVED_NAMES, TYPES, USAGES, convert
from .errors import AmiError

__all__ = [
    "RESERVED_NAMES",
    "AmiFile",
    "AmiParameter",
    "parse_ami",
    "parse_params_out",
    "read_ami",
]


def _where(p: AmiParameter) -> str:
    return f"{p.source} line {p.line}: parameter '{'.'.join(p.path[1:]) or p.name}'"


@dataclass(frozen=True)
class AmiParameter:
    """One parameter leaf of an ``.ami`` file.

    Attributes
    ----------
    name : str
        Its own name (``"tx_tap_1"``; a tap number such as ``"-1"`` under a Tap group).
    path : tuple of str
        The names from below the root (``("Model_Specific", "ctle", "gain")``).
    usage : str
        ``"In"``, ``"Out"``, ``"InOut"``, ``"Info"`` or ``"Dep"``.
    type : str
        ``"Float"``, ``"Integer"``, ``"UI"`` (in UI), ``"Boolean"``, ``"String"`` or ``"Tap"``.
    format : str
        ``"Value"``, ``"Range"``, ``"List"``, ``"Increment"``, ``"Steps"``, ``"Corner"``,
        ``"Table"`` or ``""`` (only a Default, or nothing for an output).
    default : object or None
        The ``Default`` tag's value, typed.
    values : tuple
        Value: ``(v,)``; Range and Corner: ``(typ, min, max)``; Increment: ``(typ, min, max,
        delta)``; Steps: ``(typ, min, max, n_steps)``; List: its entries; Table: its rows.
    description : str
        The ``Description`` text.
    labels : tuple of str
        ``List_Tip``/``Labels`` texts (extra to the shared interface).
    source, line : str, int
        Where it was declared (extra to the shared interface; not compared).
    """

    name: str
    path: tuple
    usage: str
    type: str
    format: str
    default: object
    values: tuple
    description: str = ""
    labels: tuple = ()
    source: str = field(default="<string>", compare=False)
    line: int = field(default=0, compare=False)

    @property
    def value(self):
        """The default, else the typical value of its format (the first entry), else None."""
        if self.default is not None:
            return self.default
        return self.values[0] if self.values else None

    def allowed(self) -> str:
        """What :meth:`check` accepts, in words."""
        v = self.values
        if self.format in ("Range", "Increment", "Steps"):
            step = {"Increment": f" in steps of {v[3]:g}" if len(v) > 3 else "",
                    "Steps": f" in {v[3]} steps" if len(v) > 3 else ""}.get(self.format, "")
            return f"a {self.type} from {v[1]} to {v[2]}{step}"
        if self.format in ("List", "Corner") and v:
            return f"one of {', '.join(str(x) for x in v)}"
        return f"a {self.type}"

    def check(self, value):
        """``value`` as this parameter's python type, checked against its format.

        Raises
        ------
        AmiError
            A value of the wrong type, or outside what the format allows, naming the parameter
            and what is allowed.
        """
        who = _where(self)
        v = convert(self.type, value, who)
        f, vals = self.format, self.values
        if f in ("Range", "Increment", "Steps") and len(vals) >= 3:
            lo, hi = vals[1], vals[2]
            tol = 1e-9 * max(abs(lo), abs(hi), 1e-300)
            bad = not (lo - tol <= v <= hi + tol)
            if not bad and f != "Range" and len(vals) > 3:
                step = vals[3] if f == "Increment" else (hi - lo) / vals[3] if vals[3] else 0
                if step:
                    k = (v - lo) / step
                    bad = abs(k - round(k)) > 1e-6
            if bad:
                raise AmiError(f"{who}: {v} is not allowed (it takes {self.allowed()})")
        elif f in ("List", "Corner") and vals and v not in vals:
            raise AmiError(f"{who}: {v!r} is not allowed (it takes {self.allowed()})")
        return v


def _tags(node: Node, who: str) -> dict:
    """A leaf's tags by name (a tag twice is refused; tags this module does not know, vendor
    extensions, are carried and not read)."""
    tags: dict = {}
    for item in node.items:
        if isinstance(item, Atom):
            raise AmiError(f"{who}: stray value {item.text!r} among its tags (line {item.line})")
        if item.name in tags:
            raise AmiError(f"{who}: tag '{item.name}' given twice (line {item.line})")
        tags[item.name] = item
    return tags


def _format_of(tags: dict, who: str) -> tuple[str, list]:
    """The format name and its raw entries (atoms, or row nodes for a Table)."""
    given = [t for t in FORMATS if t in tags]
    if "Format" in tags:
        fmt_node = tags["Format"]
        if given or not fmt_node.items or not isinstance(fmt_node.items[0], Atom):
            raise AmiError(f"{who}: a Format tag with no format name, or with a second format")
        name = fmt_node.items[0].text
        rest = fmt_node.items[1:]
    elif len(given) > 1:
        raise AmiError(f"{who}: several formats given ({', '.join(given)}); one is allowed")
    elif given:
        name, rest = given[0], tags[given[0]].items
    else:
        return "", []
    if name not in FORMATS:
        raise AmiError(f"{who}: Format '{name}' is not one of {', '.join(FORMATS)}")
    if name == "Table":
        return name, [n for n in rest if isinstance(n, Node) and n.name not in ("Labels", "Label")]
    if any(isinstance(a, Node) for a in rest):
        raise AmiError(f"{who}: Format {name} holds a '(' where values were expected")
    return name, [a.text for a in rest]


def _typed_values(fmt: str, raw: list, typ: str, who: str) -> tuple:
    """The format's entries as typed python values, their count and order checked."""
    if fmt == "Table":
        return tuple(tuple(convert(typ, x, who) for x in [n.name] + [a.text for a in n.atoms])
                     for n in raw)
    need = {"Value": 1, "Range": 3, "Corner": 3, "Increment": 4, "Steps": 4}.get(fmt, 1)
    if len(raw) < need or (fmt == "Value" and len(raw) > 1 and typ != "String"):
        raise AmiError(f"{who}: Format {fmt} needs {need} value(s), got {len(raw)}")
    if fmt == "Value" and typ == "String":
        raw = [" ".join(raw)]
    vals = [convert(typ, r, who) for r in raw]
    if fmt == "Steps":
        vals[3] = convert("Integer", raw[3], who)
    if fmt in ("Range", "Increment", "Steps"):
        if typ in ("Boolean", "String"):
            raise AmiError(f"{who}: Format {fmt} is not allowed for Type {typ}")
        typ_v, lo, hi = vals[:3]
        if lo > hi:
            raise AmiError(f"{who}: {fmt} minimum {lo} is above its maximum {hi}")
        if not lo <= typ_v <= hi:
            raise AmiError(f"{who}: {fmt} typical value {typ_v} is outside {lo}..{hi}")
        if fmt != "Range" and vals[3] <= 0:
            raise AmiError(f"{who}: {fmt} step {vals[3]} must be positive")
        vals = vals[:4]
    return tuple(vals)


def _leaf(node: Node, path: tuple, source: str) -> AmiParameter:
    """One parameter leaf, its tags read and checked."""
    who = f"{source} line {node.line}: parameter '{'.'.join(path[1:]) or node.name}'"
    tags = _tags(node, who)

    def one(tag: str) -> str | None:
        if tag not in tags:
            return None
        atoms = tags[tag].atoms
        if len(atoms) != 1 or tags[tag].nodes:
            raise AmiError(f"{who}: tag '{tag}' takes one value, got {len(tags[tag].items)}")
        return atoms[0].text

    usage, typ = one("Usage"), one("Type")
    if usage not in USAGES:
        raise AmiError(f"{who}: Usage {usage!r} is not one of {', '.join(USAGES)}"
                       if usage else f"{who}: no Usage tag")
    if typ not in TYPES:
        raise AmiError(f"{who}: Type {typ!r} is not one of {', '.join(TYPES)}"
                       if typ else f"{who}: no Type tag")
    fmt, raw = _format_of(tags, who)
    values = _typed_values(fmt, raw, typ, who) if fmt else ()
    default = None
    if "Default" in tags:
        d_atoms = [a.text for a in tags["Default"].atoms]
        if not d_atoms:
            raise AmiError(f"{who}: Default with no value")
        default = convert(typ, " ".join(d_atoms) if typ == "String" else d_atoms[0], who)
    desc = " ".join(a.text for a in tags["Description"].atoms) if "Description" in tags else ""
    tips = tags.get("List_Tip") or tags.get("Labels") or tags.get("Label")
    p = AmiParameter(name=node.name, path=path, usage=usage, type=typ, format=fmt,
                     default=default, values=values, description=desc,
                     labels=tuple(a.text for a in tips.atoms) if tips else (),
                     source=source, line=node.line)
    if default is not None and fmt not in ("", "Value", "Table"):
        try:
            p.check(default)
        except AmiError:
            raise AmiError(f"{who}: Default {default!r} is outside its {fmt} "
                           f"({p.allowed()})") from None
    return p


def _is_leaf(node: Node) -> bool:
    names = {n.name for n in node.nodes}
    return "Usage" in names or "Type" in names


def _walk(group: Node, path: tuple, source: str, out: dict, seen: dict) -> None:
    """Every leaf below ``group`` into ``out`` (dotted name below the section -> parameter),
    in file order; the reader already bounded the depth."""
    for item in group.items:
        if isinstance(item, Atom):
            raise AmiError(f"{source} line {item.line}: stray value {item.text!r} in "
                           f"'{'.'.join(path)}' (a parameter needs Usage and Type tags)")
        if item.name == "Description" and not _is_leaf(item):
            continue
        here = path + (item.name,)
        key = ".".join(here[1:])
        if key in seen:
            raise AmiError(f"{source} line {item.line}: '{'.'.join(here)}' defined twice "
                           f"(first at line {seen[key]})")
        seen[key] = item.line
        if _is_leaf(item):
            out[key] = _leaf(item, here, source)
        elif not item.nodes:
            raise AmiError(f"{source} line {item.line}: '{'.'.join(here)}' is neither a "
                           "parameter (no Usage and Type tags) nor a group")
        else:
            _walk(item, here, source, out, seen)


def _text(v) -> str:
    """One python value as the AMI string writes it."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, tuple):
        return " ".join(_text(x) for x in v)
    return str(v)


@dataclass(frozen=True)
class AmiFile:
    """An ``.ami`` file read: its root name, reserved and model-specific parameters.

    Attributes
    ----------
    root : str
        The model's root name (the first ``(name``).
    source : str
        The file it came from (``"<string>"`` for text).
    reserved : dict of str to AmiParameter
        ``Reserved_Parameters`` by name (names this module does not know are kept).
    model_specific : dict of str to AmiParameter
        ``Model_Specific`` by dotted path below it (``"tx_tap_1"``, ``"ctle.gain"``).
    description : str
        The root's ``Description`` (extra to the shared interface).
    """

    root: str
    source: str
    reserved: dict
    model_specific: dict
    description: str = ""

    def _reserved_value(self, name: str):
        p = self.reserved.get(name)
        return None if p is None else p.value

    @property
    def init_returns_impulse(self) -> bool:
        """Reserved ``Init_Returns_Impulse`` (False when absent)."""
        return bool(self._reserved_value("Init_Returns_Impulse"))

    @property
    def getwave_exists(self) -> bool:
        """Reserved ``GetWave_Exists`` (False when absent)."""
        return bool(self._reserved_value("GetWave_Exists"))

    @property
    def ami_version(self) -> str | None:
        """Reserved ``AMI_Version`` as text, or None."""
        v = self._reserved_value("AMI_Version")
        return None if v is None else str(v)

    @property
    def ignore_bits(self) -> int:
        """Reserved ``Ignore_Bits`` (0 when absent)."""
        v = self._reserved_value("Ignore_Bits")
        return 0 if v is None else int(v)

    @property
    def max_init_aggressors(self) -> int:
        """Reserved ``Max_Init_Aggressors`` (0 when absent)."""
        v = self._reserved_value("Max_Init_Aggressors")
        return 0 if v is None else int(v)

    @property
    def modulation(self) -> str | None:
        """Reserved ``Modulation`` (IBIS 7: ``"NRZ"``, ``"PAM4"``, ...), or None."""
        v = self._reserved_value("Modulation")
        return None if v is None else str(v)

    def _inputs(self) -> dict:
        """Name -> parameter of every In/InOut one, reserved first (by name), then
        model-specific (by dotted path)."""
        out = {k: p for k, p in self.reserved.items() if p.usage in ("In", "InOut")}
        out.update((k, p) for k, p in self.model_specific.items() if p.usage in ("In", "InOut"))
        return out

    def defaults(self) -> dict:
        """Dotted name -> default value of every In/InOut parameter that declares one (those
        :meth:`parameters_in` writes when nothing overrides them)."""
        return {k: p.value for k, p in self._inputs().items() if p.value is not None}

    def _lookup(self, name: str) -> AmiParameter:
        p = self.model_specific.get(name) or self.reserved.get(name)
        if p is None:
            known = list(self.model_specific) + list(self.reserved)
            close = difflib.get_close_matches(str(name), known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else \
                f"; it has {', '.join(known[:12])}{' ...' if len(known) > 12 else ''}"
            raise AmiError(f"{self.source}: model '{self.root}' has no parameter {name!r}{hint}")
        if p.usage not in ("In", "InOut"):
            raise AmiError(f"{_where(p)} is Usage {p.usage}: only In and InOut parameters "
                           "can be set")
        return p

    def parameters_in(self, values: Mapping = {}) -> str:
        """The ``AMI_parameters_in`` string: every In/InOut parameter at its default, or at
        the checked value ``values`` gives it (by dotted name), groups nested.

        Raises
        ------
        AmiError
            A name the model does not declare (with close matches), an Out/Info/Dep
            parameter, or a value its format does not allow.
        """
        chosen = {}
        for name, v in dict(values).items():
            chosen[self._lookup(name).path] = self._lookup(name).check(v)
        tree: dict = {}
        for p in self._inputs().values():
            v = chosen.get(p.path, p.value)
            if v is None:
                continue
            rel = p.path[1:] if p.path[0] in ("Model_Specific", "Reserved_Parameters") else p.path
            branch = tree
            for part in rel[:-1]:
                branch = branch.setdefault(part, {})
            branch[rel[-1]] = v

        def write(d: dict) -> str:
            return " ".join(f"({k} {write(v) if isinstance(v, dict) else _text(v)})"
                            for k, v in d.items())

        body = write(tree)
        return f"({self.root} {body})" if body else f"({self.root})"


def parse_ami(text: str, source: str = "<string>") -> AmiFile:
    """Read the text of an ``.ami`` file.

    Parameters
    ----------
    text : str
        The file's text (at most 4 MB, nesting at most 64 deep).
    source : str
        The name errors give (the file's path for :func:`read_ami`).

    Returns
    -------
    AmiFile

    Raises
    ------
    AmiError
        One line naming the source, the line and what is wrong: unbalanced parentheses, no
        root, no Reserved_Parameters, an unknown Usage or Type, a Default outside its Range
        or List, a name defined twice, a parameter with no Usage or Type.
    """
    root = read_tree(text, source)
    reserved: dict = {}
    specific: dict = {}
    description = ""
    sections: dict = {}
    for item in root.items:
        if isinstance(item, Atom):
            raise AmiError(f"{source} line {item.line}: stray value {item.text!r} in the root "
                           f"'({root.name}' (expected Description, Reserved_Parameters, "
                           "Model_Specific)")
        if item.name in sections:
            raise AmiError(f"{source} line {item.line}: '{item.name}' given twice in the root "
                           f"(first at line {sections[item.name]})")
        sections[item.name] = item.line
        if item.name == "Description":
            description = " ".join(a.text for a in item.atoms)
        elif item.name == "Reserved_Parameters":
            _walk(item, ("Reserved_Parameters",), source, reserved, {})
        elif item.name == "Model_Specific":
            _walk(item, ("Model_Specific",), source, specific, {})
        # other branches (tool- or vendor-specific) are skipped, as tools do
    if "Reserved_Parameters" not in sections:
        raise AmiError(f"{source} line {root.line}: '({root.name}' has no Reserved_Parameters "
                       "branch (the IBIS spec requires one); is this an .ami file?")
    nested = [k for k in reserved if "." in k]
    if nested:
        raise AmiError(f"{source} line {reserved[nested[0]].line}: reserved parameter "
                       f"'{nested[0]}' is inside a group; reserved parameters sit directly "
                       "under Reserved_Parameters")
    return AmiFile(root=root.name, source=source, reserved=reserved, model_specific=specific,
                   description=description)


def read_ami(path) -> AmiFile:
    """Read an ``.ami`` file (see :func:`parse_ami`); errors name ``path``."""
    text, source = read_text(path, MAX_CHARS, "an AMI parameter file")
    return parse_ami(text, source)
