"""The physical layout of a scale-up domain (:class:`Layout`): racks and what they hold, their
positions in a row, their power and cooling envelope and their rack units, the routes of
cables between them, and the budgets a domain may not exceed; and the copper a cable
carries (:func:`copper_kg_per_pair_m`). :mod:`phy.topology.domain` plans domains in it.

Public figures (REFERENCES.md, "Domain layout"):

* A GB200 NVL72 rack holds 18 compute trays of 1 RU (2 Grace CPUs and 4 Blackwell GPUs
  each), 9 NVLink switch trays of 1 RU, 2 top-of-rack management switches and power
  shelves; the trays are liquid-cooled through manifolds, the rest air-cooled (NVIDIA DGX
  GB200 user guide, "Hardware").
* Its reference design has 8 power shelves of 1 RU, each 6 PSUs of 5.5 kW, 33 kW a shelf
  (NVIDIA Base Command Manager manual, "Power Shelf Integration").
* The rack draws about 120 kW (NVIDIA-based deployment guides, secondary; 132 kW of DC
  output from its 8 shelves in a Supermicro figure, secondary).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .._validate import integer, number
from ..errors import ConfigError
from .fabric import RACK_UNIT_M
from .parts import SwitchAsic

__all__ = ["COPPER_DENSITY", "ROUTES", "Layout", "copper_kg_per_pair_m"]

#: Copper's density (kg/m^3).
COPPER_DENSITY = 8960.0
#: How a cable between racks is routed: ``"laid_out"`` (neighbours through their side
#: walls, others over the top; :func:`phy.topology.multirack.cross_rack_m`) or
#: ``"overhead"`` (``overhead_m`` besides the distance, whatever the racks).
ROUTES = ("laid_out", "overhead")


def copper_kg_per_pair_m(awg: float) -> float:
    """Copper in one metre of a shielded twinax pair (kg): its two conductors and a drain wire
    of the same gauge, solid (:func:`channels.media.awg_diameter_m`); the shield foil,
    insulation and jacket are not copper conductors and are left out (no public per-metre
    mass of twinax was found: NVL72's spine, about 27 to 30 kg with its cartridges and
    connectors over about 3.2 km of pairs, bounds a pair at 8 to 9 g/m)."""
    from channels.media import awg_diameter_m

    d = awg_diameter_m(awg)
    return 3 * math.pi * d * d / 4 * COPPER_DENSITY


@dataclass(frozen=True)
class Layout:
    """How a domain is built and what it may not exceed.

    Parameters
    ----------
    accelerators_per_rack : int
        72: NVL72's 18 compute trays of 4.
    gpus_per_tray : int
    links_per_accelerator : int
        18 NVLink5 links per GPU.
    rack_pitch_m, tray_run_m : float
        Racks in a row at ``rack_pitch_m`` (600 mm racks); ``tray_run_m`` from a tray's
        ASIC to the rack's spine or side (:mod:`phy.topology.fabric`; an assumption).
    route : str
        How a cable between racks runs (:data:`ROUTES`): ``"laid_out"`` (default): between
        neighbours through their side walls at the trays' heights; between racks further
        apart up to the top of the rack, ``rise_m`` up to an overhead tray and down at
        each end, along the row, and down to the far tray; the in-rack runs at each end
        counted (:func:`phy.topology.multirack.cross_rack_m`). ``"overhead"``: the distance
        plus ``overhead_m`` whatever the racks (the model before issue 33).
    overhead_m, rise_m : float
        ``overhead_m``: the fixed route of ``"overhead"`` and of a one-tier row of racks
        (:func:`phy.topology.multirack.single_tier`); ``rise_m``: from a rack's top to the
        overhead cable tray (0.3 m, an assumption).
    rack_power_w : float
        The power and cooling envelope of a rack, with its accelerators: 132 kW, a GB200
        rack's 8 power shelves of 33 kW (NVIDIA BCM documentation) with half of them
        redundant (an assumption: N+N), the heat its liquid loop and fans remove. NVL72
        draws about 120 kW (secondary).
    rack_units : int
        Rack units a rack offers: 48 (an assumption: an OCP/MGX-class rack of 44 to 48 RU;
        NVL72's contents take 37, below).
    power_shelves, other_units : int
        1-RU power shelves in every rack (8, NVIDIA BCM documentation) and other units
        (2 top-of-rack management switches, NVIDIA DGX GB200 user guide).
    asics_per_switch_tray : int
        Switch ASICs a 1-RU switch tray holds: 2 (NVL72's 9 trays hold 18).
    max_tiers : int
        Switch tiers allowed (1 or 2).
    max_cables_per_rack : int, optional
        Copper pairs plus fibres a rack may terminate (None: no limit). NVL72's spine is
        5,184 pairs.
    max_copper_kg_per_rack : float, optional
        Copper conductor mass a rack may carry (:func:`copper_kg_per_pair_m`; None: no
        limit).
    max_link_down_per_day : float, optional
        Link-down events per day the domain may see (its parts' failures,
        :func:`phy.topology.reliability.fabric_reliability`; None: no budget). A domain
        whose every job spans it stops with any link: this is the operator's budget.
    oversubscription : float
        Down to up ports of a first-tier switch (1: non-blocking).
    """

    accelerators_per_rack: int = 72
    gpus_per_tray: int = 4
    links_per_accelerator: int = 18
    rack_pitch_m: float = 0.6
    overhead_m: float = 4.0
    tray_run_m: float = 0.1
    rack_power_w: float = 132e3
    max_tiers: int = 2
    max_cables_per_rack: int | None = None
    max_copper_kg_per_rack: float | None = None
    oversubscription: float = 1.0
    route: str = "laid_out"
    rise_m: float = 0.3
    rack_units: int = 48
    power_shelves: int = 8
    other_units: int = 2
    asics_per_switch_tray: int = 2
    max_link_down_per_day: float | None = None

    def __post_init__(self):
        integer(self.accelerators_per_rack, "Layout.accelerators_per_rack", 1, 4096)
        integer(self.gpus_per_tray, "Layout.gpus_per_tray", 1, self.accelerators_per_rack)
        integer(self.links_per_accelerator, "Layout.links_per_accelerator", 1, 256)
        number(self.rack_pitch_m, "Layout.rack_pitch_m", positive=True)
        number(self.overhead_m, "Layout.overhead_m", nonneg=True)
        number(self.tray_run_m, "Layout.tray_run_m", nonneg=True)
        number(self.rack_power_w, "Layout.rack_power_w", positive=True)
        integer(self.max_tiers, "Layout.max_tiers", 1, 2)
        if self.max_cables_per_rack is not None:
            integer(self.max_cables_per_rack, "Layout.max_cables_per_rack", 1)
        if self.max_copper_kg_per_rack is not None:
            number(self.max_copper_kg_per_rack, "Layout.max_copper_kg_per_rack", positive=True)
        number(self.oversubscription, "Layout.oversubscription", positive=True)
        if self.route not in ROUTES:
            raise ConfigError(f"Layout.route must be one of {', '.join(ROUTES)}, got {self.route!r}")
        number(self.rise_m, "Layout.rise_m", nonneg=True)
        integer(self.rack_units, "Layout.rack_units", 1, 200)
        integer(self.power_shelves, "Layout.power_shelves", 0, 200)
        integer(self.other_units, "Layout.other_units", 0, 200)
        integer(self.asics_per_switch_tray, "Layout.asics_per_switch_tray", 1, 64)
        if self.max_link_down_per_day is not None:
            number(self.max_link_down_per_day, "Layout.max_link_down_per_day", positive=True)

    @property
    def rack_height_m(self) -> float:
        """``rack_units`` at 1 RU (44.45 mm, EIA-310)."""
        return self.rack_units * RACK_UNIT_M

    def units(self, accelerators: int, asics: int) -> int:
        """Rack units a rack holding ``accelerators`` and ``asics`` switch ASICs takes: its
        compute trays, its switch trays, its power shelves and other units."""
        return (math.ceil(accelerators / self.gpus_per_tray) + math.ceil(asics / self.asics_per_switch_tray)
                + self.power_shelves + self.other_units)

    def max_accelerators(self, asic: SwitchAsic, tiers: int | None = None) -> int:
        """The most accelerators the switch radix allows on ``tiers`` tiers (default
        ``max_tiers``): one tier, a port per accelerator on each switch (``radix``); two, a
        plane per accelerator link, each a folded Clos whose first-tier switches give
        ``down`` ports to accelerators and reach every second-tier switch once
        (``down x radix``)."""
        t = self.max_tiers if tiers is None else integer(tiers, "tiers", 1, 2)
        if t == 1:
            return asic.radix
        down = round(asic.radix * self.oversubscription / (1 + self.oversubscription))
        return down * asic.radix

    def to_dict(self) -> dict:
        return asdict(self)
