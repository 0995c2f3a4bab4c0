"""The shell commands the README tells a new user to run, read from README.md itself.

``.ci/run`` and ``tests/test_readme_install.py`` run these, in the README's order, so CI
and the test follow the README as written: if the README changes, they change with it.

    python tools/readme_commands.py quick-start    # the quick start's command
    python tools/readme_commands.py tests          # the command that runs the tests
    python tools/readme_commands.py tests-install  # its install step (before " && python -m pytest")

The commands are the ``bash`` code blocks of the README's "Quick start" section: the first
is the quick start, the one after "To run the tests" is the test command.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
PYTEST = " && python -m pytest"


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    if m is None:
        raise SystemExit(f"README.md has no '## {heading}' section")
    return m.group(1)


def commands(readme: Path = README) -> dict[str, str]:
    """``{"quick-start": ..., "tests": ..., "tests-install": ...}`` from the README."""
    section = _section(readme.read_text(encoding="utf-8"), "Quick start")
    blocks = [b.strip() for b in re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)]
    if len(blocks) != 2 or any("\n" in b for b in blocks):
        raise SystemExit(f"README.md's Quick start should hold two one-line bash blocks, found {blocks!r}")
    quick, tests = blocks
    if PYTEST not in tests:
        raise SystemExit(f"README.md's test command does not run '{PYTEST.strip(' &')}': {tests!r}")
    return {"quick-start": quick, "tests": tests, "tests-install": tests.split(PYTEST)[0]}


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    cmds = commands()
    if which not in cmds:
        raise SystemExit(f"usage: readme_commands.py {{{'|'.join(cmds)}}}")
    print(cmds[which])
