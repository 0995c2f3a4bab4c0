"""Argument checks of ``phy``: the checks ``channels`` and ``phy`` share
(:mod:`channels._validate`), raising :class:`phy.ConfigError`."""

from __future__ import annotations

from functools import partial

from channels import _validate as _shared

from .errors import ConfigError

number = partial(_shared.number, error=ConfigError)
integer = partial(_shared.integer, error=ConfigError)
seed = partial(_shared.seed, error=ConfigError)
finite_vector = partial(_shared.finite_vector, error=ConfigError)

__all__ = ["finite_vector", "integer", "number", "seed"]
