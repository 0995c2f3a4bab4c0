"""A fabric's power, every watt counted: the SerDes at both ends of every link (by the
reach class of what each drives, :mod:`phy.link.power`), the retimers of active cables,
the optical modules, and the switch ASICs' cores; per link class, per accelerator, per
rack and for the domain, both directions; and each rack's total with its accelerators
against its power budget (:class:`FabricPower`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .fabric import Topology

__all__ = ["FabricPower", "fabric_power"]


#: How :meth:`FabricPower.table` names the terms.
_TERM_WORDS = {"accelerator_serdes": "SerDes at the accelerators", "switch_serdes": "SerDes at the switches",
               "switch_core": "switch cores", "retimers": "retimers", "optical_modules": "optical modules"}


@dataclass(frozen=True)
class FabricPower:
    """The fabric's power (W, both directions, every lane).

    Attributes
    ----------
    terms_w : dict
        ``accelerator_serdes`` (the accelerators' ends of their links: inside the
        accelerators' own power, counted here for the fabric's), ``switch_serdes`` (the
        switch ports' ends), ``switch_core`` (the ASICs without their SerDes,
        :attr:`SwitchAsic.core_power_w`), ``retimers``, ``optical_modules`` and any other
        path element by name.
    total_w : float
        Their sum: the fabric's power.
    switch_w : float
        The switch ASICs with their SerDes (core and switch-end SerDes).
    per_accelerator_w, per_rack_w : float
        ``total_w`` over the accelerators and over the racks holding the fabric's nodes.
    by_class_w : dict
        The links' power by link class (the switch cores excluded).
    rack_w : list of float
        Each rack's power: its accelerators' own (:attr:`Accelerator.power_w`, their SerDes
        in it), its switch ASICs (core and their ends' SerDes), and the retimers, modules
        and path elements at the link ends in it.
    notes : list
    """

    terms_w: dict
    total_w: float
    switch_w: float
    per_accelerator_w: float
    per_rack_w: float
    n_racks: int
    by_class_w: dict
    rack_w: list
    notes: list

    @property
    def max_rack_w(self) -> float:
        return float(max(self.rack_w)) if self.rack_w else 0.0

    def table(self) -> str:
        """The terms in kW, one line."""
        terms = ", ".join(f"{_TERM_WORDS.get(k, k.replace('_', ' '))} {v / 1e3:.2f} kW"
                          for k, v in self.terms_w.items() if v)
        return (f"fabric {self.total_w / 1e3:.2f} kW ({terms}); {self.per_accelerator_w:.0f} W per accelerator, "
                f"{self.per_rack_w / 1e3:.2f} kW per rack over {self.n_racks} rack(s); the fullest rack draws "
                f"{self.max_rack_w / 1e3:.1f} kW with its accelerators")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["max_rack_w"] = self.max_rack_w
        return d


def _link_terms_w(ev) -> dict:
    """Each link's power by term (W, both directions): a report's energy per payload bit
    times its payload rate, twice."""
    out: dict = {}
    for k, r in enumerate(ev.rep_list):
        sel = ev.rep_index == k
        watts = 2 * r.rate_chain["payload_bps"]
        for name, e in r.energy_breakdown_j_per_bit.items():
            if e:
                out.setdefault(name, np.zeros(ev.rep_index.size))[sel] = e * watts
    return out


def fabric_power(topo: Topology, ev) -> FabricPower:
    """The power of ``topo`` from its links' reports (``ev``, the roll-up's evaluated
    links): each link's terms split half to each end (a host's SerDes, a retimer, a module
    at each end), the ends at accelerators and at switches told apart, the switch cores
    added, and everything summed per rack (:attr:`Topology.rack_of`)."""
    n = topo.n_accelerators
    nodes = topo.n_nodes
    per_link = _link_terms_w(ev)
    terms = {"accelerator_serdes": 0.0, "switch_serdes": 0.0, "switch_core": 0.0}
    node_w = np.zeros(nodes)  # what each node's rack must feed beyond the accelerators' own power
    for name, w in per_link.items():
        for end in (topo.src, topo.dst):
            half = 0.5 * w
            if name == "serdes":
                at_acc = end < n
                terms["accelerator_serdes"] += float(half[at_acc].sum())
                terms["switch_serdes"] += float(half[~at_acc].sum())
                mine = ~at_acc if topo.accelerator.power_w else np.ones(end.size, dtype=bool)  # else not in it
                node_w += np.bincount(end[mine], weights=half[mine], minlength=nodes)
            else:
                terms[name] = terms.get(name, 0.0) + float(half.sum())
                node_w += np.bincount(end, weights=half, minlength=nodes)
    off = n
    for t in topo.tiers:
        terms["switch_core"] += t.count * t.asic.core_power_w
        node_w[off:off + t.count] += t.asic.core_power_w
        off += t.count
    node_w[:n] += topo.accelerator.power_w
    total = float(sum(terms.values()))
    rack_w = np.bincount(topo.rack_of, weights=node_w, minlength=topo.n_racks)
    by_class = {}
    link_total = sum(per_link.values()) if per_link else np.zeros(topo.n_links)
    for c, cls in enumerate(topo.classes):
        sel = topo.link_class == c
        if sel.any():
            by_class[cls.name] = float(np.sum(link_total[sel]))
    notes = _notes(topo)
    return FabricPower(terms, total, terms["switch_serdes"] + terms["switch_core"], total / n,
                       total / topo.n_racks, topo.n_racks, by_class, rack_w.tolist(), notes)


def _notes(topo: Topology) -> list:
    notes = ["power: every link's SerDes, retimer, module and path-element energy per payload bit times its "
             "payload rate in both directions, split half to each end (the link reports' notes name the SerDes "
             "reach class and the source of each figure)"]
    for t in topo.tiers:
        a = t.asic
        notes.append(f"switch {a.name}: {a.power_w:g} W with its SerDes, {a.core_power_w:.1f} W without them "
                     f"(SwitchAsic gives the source); its ports' SerDes counted from the links")
    acc = topo.accelerator
    if acc.power_w:
        notes.append(f"accelerator {acc.name}: {acc.power_w:g} W each in its rack's power (Accelerator gives the source)")
    else:
        notes.append(f"accelerator {acc.name}: no power given, its racks' totals hold only the fabric")
    return notes
