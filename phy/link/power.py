"""A link's energy per payload bit, term by term: the SerDes, the optical modules (a module
at each end, each full duplex) and the path elements; the report turns it into watts for
both directions of all lanes."""

from __future__ import annotations

from .spec import LinkSpec

__all__ = ["energy_terms"]


def energy_terms(spec: LinkSpec, notes: list) -> dict:
    """Energy per payload bit one way (J), by name; a note when the SerDes's is not given."""
    energy = {"serdes": spec.serdes.energy_j_per_bit}
    if spec.serdes.energy_j_per_bit == 0:
        notes.append("SerDes energy not given: counted as 0")
    if spec.optics is not None:
        energy["optical_modules"] = spec.optics.energy_j_per_bit
    for e in spec.path:
        energy[e.name] = energy.get(e.name, 0.0) + e.energy_j_per_bit
    return energy
