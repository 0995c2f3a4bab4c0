"""The ``.ibs`` file, as far as an IBIS-AMI model needs it: its version, components (the
models their pins use), models (type) and each model's ``[Algorithmic Model]`` executables.

One pass over the lines; the I-V and V-t tables and every other keyword are skipped, not
modelled. Files above 64 MB are refused unread.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ._sexpr import read_text
from .errors import AmiError

__all__ = ["MAX_IBS_BYTES", "Executable", "IbsFile", "IbsModel", "parse_ibs", "read_ibs"]

#: The largest ``.ibs`` file read (64 MB).
MAX_IBS_BYTES = 64 * 1024 * 1024
_NOT_MODELS = {"POWER", "GND", "NC", "NA"}


@dataclass(frozen=True)
class Executable:
    """One ``Executable`` line of an ``[Algorithmic Model]``.

    Attributes
    ----------
    platform : str
        ``<OS>_<compiler>_<bits>`` as written (``"Linux_gcc4.1.2_64"``).
    library, ami : Path
        The shared library and its ``.ami`` file, resolved against the ``.ibs`` folder.
    side : str
        ``""`` for ``Executable``, ``"Tx"``/``"Rx"`` for IBIS 7's ``Executable_Tx``/``_Rx``
        (redrivers and retimers).
    """

    platform: str
    library: Path
    ami: Path
    side: str = ""


@dataclass(frozen=True)
class IbsModel:
    """One ``[Model]``: its name, ``Model_type`` and ``[Algorithmic Model]`` executables."""

    name: str
    model_type: str
    executables: tuple = ()


def _os_bits(platform_name: str) -> tuple[str, str]:
    """The OS family and the bits of an IBIS platform name, lower case (``("linux", "64")``
    for ``"Linux_gcc4.1.2_64"``; ``"windows"``, ``"macos"``, ``"solaris"`` the others); the
    bits are ``""`` when the name does not end in 32 or 64."""
    name = platform_name.lower().replace("-", "_")
    head = name.split("_")[0]
    os_name = head
    for family, prefixes in (("linux", ("linux",)), ("windows", ("win",)),
                             ("macos", ("mac", "darwin", "osx")), ("solaris", ("solaris", "sunos"))):
        if head.startswith(prefixes):
            os_name = family
    bits = name[-2:] if name[-2:] in ("32", "64") else ""
    return os_name, bits


def this_platform() -> tuple[str, str]:
    """This machine's ``(os, bits)`` as :func:`_os_bits` names them."""
    os_name = {"win32": "windows", "darwin": "macos", "cygwin": "windows"}.get(
        sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform)
    bits = "64" if sys.maxsize > 2**32 else "32"
    return os_name, bits


@dataclass(frozen=True)
class IbsFile:
    """An ``.ibs`` file read.

    Attributes
    ----------
    ibis_ver : str
        ``[IBIS Ver]``.
    components : dict of str to list of str
        Component name -> the model names its ``[Pin]`` lines use (first use order; a
        ``[Model Selector]`` is expanded to its models).
    models : dict of str to IbsModel
        ``[Model]`` name -> model.
    source : str
        The file it came from (extra to the shared interface).
    file_name : str
        ``[File Name]`` (extra to the shared interface).
    """

    ibis_ver: str
    components: dict
    models: dict
    source: str = "<string>"
    file_name: str = ""

    def executable(self, model: str | None = None, platform: str | None = None,
                   side: str | None = None) -> Executable:
        """The executable to load.

        Parameters
        ----------
        model : str, optional
            The ``[Model]`` name; by default the one model with an ``[Algorithmic Model]``.
        platform : str, optional
            An IBIS platform name (``"Linux_gcc_64"``); by default this machine's. Matched on
            the exact name first, then loosely on OS family and bits.
        side : str, optional
            ``"Tx"`` or ``"Rx"`` for a model with ``Executable_Tx``/``Executable_Rx`` lines
            (extra to the shared interface).

        Raises
        ------
        AmiError
            No such model, no model with executables (or several and none named), no
            executable for the platform: listing what exists.
        """
        m = self._model(model)
        execs = [e for e in m.executables if side is None or e.side.lower() == side.lower()]
        if platform is not None:
            exact = [e for e in execs if e.platform.lower() == platform.lower()]
            want = _os_bits(platform)
        else:
            exact, want = [], this_platform()
        found = exact or [e for e in execs if _os_bits(e.platform)[0] == want[0]
                          and (not want[1] or _os_bits(e.platform)[1] in (want[1], ""))]
        if not found:
            have = ", ".join(f"{e.platform}{' (' + e.side + ')' if e.side else ''}"
                             for e in m.executables)
            raise AmiError(f"{self.source}: model '{m.name}' has no executable for "
                           f"{platform or '_'.join(want) + ' (this machine)'}"
                           f"{' side ' + side if side else ''}; it has {have or 'none'}")
        sides = sorted({e.side for e in found})
        if len(sides) > 1:
            raise AmiError(f"{self.source}: model '{m.name}' has {' and '.join(sides)} "
                           "executables for this platform; choose one with side='Tx' or 'Rx'")
        return found[0]

    def _model(self, model: str | None) -> IbsModel:
        if model is not None:
            if model in self.models:
                return self.models[model]
            folded = {k.lower(): v for k, v in self.models.items()}
            if model.lower() in folded:
                return folded[model.lower()]
            close = difflib.get_close_matches(model, list(self.models), n=3)
            raise AmiError(f"{self.source}: no [Model] {model!r}"
                           f"{'; did you mean ' + ', '.join(close) + '?' if close else ''} "
                           f"(it has {', '.join(self.models) or 'none'})")
        ami = [m for m in self.models.values() if m.executables]
        if len(ami) == 1:
            return ami[0]
        if not ami:
            raise AmiError(f"{self.source}: no [Model] has an [Algorithmic Model] "
                           f"(models: {', '.join(self.models) or 'none'})")
        raise AmiError(f"{self.source}: several models have an [Algorithmic Model] "
                       f"({', '.join(m.name for m in ami)}); name one with model=")


class _State:
    """What the line loop of :func:`parse_ibs` has seen so far."""

    def __init__(self, source: str, folder: Path):
        self.source, self.folder = source, folder
        self.comment = "|"
        self.section = ""
        self.ver = self.file_name = ""
        self.component: str | None = None
        self.components: dict = {}
        self.selectors: dict = {}
        self.selector: str | None = None
        self.model: str | None = None
        self.models: dict = {}  # name -> [type, [executables], line]

    def fail(self, n: int, what: str) -> AmiError:
        return AmiError(f"{self.source} line {n}: {what}")

    def keyword(self, n: int, key: str, value: str) -> None:
        """A ``[Keyword] value`` line."""
        self.section = key
        first = value.split()[0] if value.split() else ""
        if key == "ibis ver":
            self.ver = first
        elif key == "file name":
            self.file_name = first
        elif key == "component":
            self.component = value.strip()
            self.components.setdefault(self.component, [])
        elif key == "model selector":
            self.selector = first
            self.selectors[first] = []
        elif key == "model":
            if not first:
                raise self.fail(n, "[Model] without a name")
            if first in self.models:
                raise self.fail(n, f"[Model] {first} defined twice (first at line "
                                   f"{self.models[first][2]})")
            self.model = first
            self.models[first] = ["", [], n]
        elif key == "algorithmic model" and self.model is None:
            raise self.fail(n, "[Algorithmic Model] outside any [Model]")

    def line(self, n: int, tokens: list) -> None:
        """A line under the current keyword (comment removed, split, not empty)."""
        sec, head = self.section, tokens[0].lower()
        if sec == "pin" and self.component is not None and len(tokens) >= 3:
            used = self.components[self.component]
            if tokens[2].upper() not in _NOT_MODELS and tokens[2] not in used:
                used.append(tokens[2])
        elif sec == "model selector" and self.selector is not None:
            self.selectors[self.selector].append(tokens[0])
        elif sec == "model" and head == "model_type" and self.model is not None:
            if len(tokens) < 2:
                raise self.fail(n, f"Model_type of [Model] {self.model} has no value")
            self.models[self.model][0] = tokens[1]
        elif sec == "algorithmic model" and head in ("executable", "executable_tx",
                                                     "executable_rx"):
            if len(tokens) < 4:
                raise self.fail(n, f"[Model] {self.model}: '{tokens[0]}' needs a platform, a "
                                   f"library and an .ami file, got {len(tokens) - 1} fields")
            side = {"executable_tx": "Tx", "executable_rx": "Rx"}.get(head, "")
            lib, ami = (self.folder / t.replace("\\", "/") for t in tokens[2:4])
            self.models[self.model][1].append(Executable(tokens[1], lib, ami, side))

    def result(self) -> IbsFile:
        if not self.ver:
            raise AmiError(f"{self.source}: no [IBIS Ver] keyword: not an IBIS file")
        comps = {}
        for name, used in self.components.items():
            expanded: list = []
            for m in used:
                for x in self.selectors.get(m, [m]):
                    if x not in expanded:
                        expanded.append(x)
            comps[name] = expanded
        models = {k: IbsModel(k, t, tuple(e)) for k, (t, e, _) in self.models.items()}
        return IbsFile(self.ver, comps, models, self.source, self.file_name)


def parse_ibs(text: str, source: str = "<string>", folder=None) -> IbsFile:
    """Read the text of an ``.ibs`` file.

    Parameters
    ----------
    text : str
        The file's text (at most 64 MB).
    source : str
        The name errors give (the path for :func:`read_ibs`).
    folder : path-like, optional
        Where the executables' files are resolved (extra to the shared interface); by
        default the folder of ``source`` (the current folder for ``"<string>"``).

    Returns
    -------
    IbsFile

    Raises
    ------
    AmiError
        No ``[IBIS Ver]``, a ``[Model]`` twice, an ``Executable`` line short of fields, an
        ``[Algorithmic Model]`` outside a model, a text over 64 MB; one line naming the line.
    """
    if not isinstance(text, str):
        raise AmiError(f"{source}: expected text (str), got {type(text).__name__}")
    if len(text) > MAX_IBS_BYTES:
        raise AmiError(f"{source}: {len(text) / 1e6:.1f} MB of text, more than the 64 MB an "
                       "IBIS file may have here")
    if folder is None:
        folder = Path(".") if source.startswith("<") else Path(source).parent
    st = _State(source, Path(os.fspath(folder)))
    interesting = {"pin", "model selector", "model", "algorithmic model"}
    for n, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        s = raw.lstrip()
        if not s:
            continue
        if s[0] == "[":
            close = s.find("]")
            if close < 0:
                raise st.fail(n, f"keyword line without ']': {s[:40]!r}")
            key = " ".join(s[1:close].replace("_", " ").lower().split())
            value = s[close + 1:]
            if key == "comment char":
                if not value.strip():
                    raise st.fail(n, "[Comment Char] without a character")
                st.comment = value.strip()[0]
                st.section = key
                continue
            if key == "end":
                break
            st.keyword(n, key, value.split(st.comment, 1)[0])
        elif st.section in interesting:
            tokens = s.split(st.comment, 1)[0].split()
            if tokens:
                st.line(n, tokens)
    return st.result()


def read_ibs(path) -> IbsFile:
    """Read an ``.ibs`` file (see :func:`parse_ibs`); the executables are resolved against
    its folder, and errors name ``path``."""
    text, source = read_text(path, MAX_IBS_BYTES, "an IBIS file")
    return parse_ibs(text, source, Path(source).resolve().parent)
