"""``python -m phy.cli.reference``: the TOML reference, rendered by :mod:`phy.config.reference`
(its home, beside the schemas; this name is kept for the scripts and docs that call it)."""

from __future__ import annotations

from ..config.reference import accepts, main, toml_reference

__all__ = ["accepts", "main", "toml_reference"]

if __name__ == "__main__":
    raise SystemExit(main())
