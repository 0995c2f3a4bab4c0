"""Failure rates of a fabric's parts (:class:`FitRates`, FIT = failures per 1e9 device-hours),
the public field figures they are calibrated to, and the calibration itself.

The per-part rates start from reliability handbooks (:data:`HANDBOOK`: Telcordia SR-332,
MIL-HDBK-217F, Siemens SN 29500). The optical parts are scaled by one factor,
:data:`OPTICAL_FIELD_FACTOR` (about 0.55), fitted in code (:func:`fit_optical_factor`) to ONE
training figure: Alibaba HPN's 0.057 % of NIC-ToR optical links failing a month in its LLM
training clusters (:data:`HPN_NIC_TOR_LINK`), a link's hard failures measured directly.
Switches fail at the same paper's ToR crash rate (:data:`HPN_TOR_CRASH`, an input). The other
field figures (:data:`FIELD`) are held out: Meta's pluggable and CPO MTBFs (ECOC 2025), and
the Llama 3 pre-training run's 35 "network switch/cable" job interruptions in 54 days on
16,384 H100 GPUs (:data:`LLAMA3_NETWORK`), predicted over that job's fabric counted part by
part (:func:`llama3_fabric`, switches included) at about 1.7 times the 35 when every hard
failure is taken to interrupt the job (the handbook rates: 3.1 times). The gap is what the
fabric's redundancy absorbs: its ToR uplinks are 1:2 under-subscribed (32 per 16 GPUs), so a
failed uplink need not stop the job; :func:`uplink_interrupt_fraction` gives the fraction of
uplink failures that must have interrupted it for the 35 to hold (about 0.6).
``benchmarks/validate_reliability.py`` prints every figure side by side. The field figures
and fabrics live in :mod:`phy.topology.field_data` (re-exported here).

What is counted is a hard failure: a part that fails and takes its link (or its switch) down
until repaired. A link flap that retrains and comes back is not a failure here: Alibaba
reports 5K to 60K flaps a day against 0.057 % of links failing a month (HPN, sect. 2.3),
flaps that degrade performance for a while and do not crash the job.

Copper has no field figure: no public failure rate of a DAC, an AEC or an NVLink cable
cartridge in the field was found. Its rate stays the handbook derivation (217F solder
terminations, SR-332 connector contacts), labelled as such; the only field bound is an upper
one (all 35 Llama 3 events on the in-rack copper would be 1,650 FIT a link).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

from .._validate import integer, number
from ..errors import ConfigError
from .field_data import (
    AZURE_SWITCH,
    FIELD,
    HOURS_PER_DAY,  # noqa: F401  (re-exported: it was defined here)
    HOURS_PER_MONTH,
    HPN_NIC_TOR_LINK,
    HPN_TOR_CRASH,
    LLAMA3_NETWORK,
    META_ECOC_CPO,
    META_ECOC_PLUGGABLE,
    FieldFabric,
    FieldFigure,
    hpn_link,
    llama3_fabric,
)

__all__ = ["FIELD", "FieldFabric", "FieldFigure", "FitRates", "HANDBOOK", "OPTICAL_FIELD_FACTOR",
           "fabric_fit", "field_comparison", "fit_optical_factor", "hpn_link", "link_fit", "llama3_fabric",
           "poisson_interval", "uplink_interrupt_fraction"]

#: MIL-HDBK-217F Notice 2 section 15.1 mating/unmating factor pi_K by cycles per 1000 hours
#: (<= 0.05, 0.5, 5, 50, above), as RAMSTK transcribes it (constants/connection.py ``PI_K``).
PI_K = ((0.05, 1.0), (0.5, 1.5), (5.0, 2.0), (50.0, 3.0), (math.inf, 4.0))

#: Handbook rates of the optical parts, FIT, before the field factor (sources in FitRates).
HANDBOOK = {"optical_module_fit": 250.0, "lpo_module_fit": 180.0, "optical_engine_fit": 250.0,
            "laser_fit": 110.0, "cpo_laser_fit": 150.0, "fibre_connector_fit": 30.0}
OPTICAL_FITS = tuple(HANDBOOK)


def per_link_units(kind: str, lanes: int, lpm: int, fits, mates: int) -> tuple[dict, dict]:
    """(units of each component per link, links one unit's failure takes down): the counting
    rules of :mod:`phy.topology.reliability`."""
    if kind in ("passive_copper", "aec"):
        n = {"copper_cable": 1.0, "host_connector": 2.0}
        if kind == "aec":
            n["retimer"] = 2.0
        return n, dict.fromkeys(n, 1.0)
    share = 2.0 * lanes / lpm
    shared = max(1.0, lpm / lanes)
    fibres = 2.0 * lanes
    if kind == "cpo":
        lpl = fits.cpo_lasers_per_lane
        n = {"optical_engine": share, "laser": 2.0 * lanes * lpl, "fibre_connector": fibres * mates}
        return n, {"optical_engine": shared, "laser": max(1.0, 1.0 / lpl / lanes), "fibre_connector": 1.0}
    lpl = fits.lasers_per_lane
    n = {"optical_module": share, "host_connector": share, "laser": 2.0 * lanes * lpl,
         "fibre_connector": fibres * mates}
    return n, {"optical_module": shared, "host_connector": 1.0, "laser": max(1.0, 1.0 / lpl / lanes),
               "fibre_connector": 1.0}


DEFAULT_MATES = 4  # two path connectors (phy.OpticalClass's default) and one at each module port


def link_fit(kind: str, lanes: int, lanes_per_module: int, fits=None, mates: int | None = None) -> float:
    """FIT of one link of ``kind`` by the counting rules of :mod:`phy.topology.reliability`
    (``mates`` fibre mated pairs per fibre, default :data:`DEFAULT_MATES`)."""
    f = fits or FitRates()
    m = f.fibre_mates_per_fibre if mates is None else mates
    m = DEFAULT_MATES if m is None else m
    units, _ = per_link_units(kind, lanes, lanes_per_module, f, m)
    u = f.unit_fits(kind, lanes, lanes_per_module)
    return float(sum(v * u[k] for k, v in units.items()))


def fabric_fit(fabric: FieldFabric, fits=None, *, optical: bool | None = None) -> float:
    """FIT of ``fabric``'s links and switches (``optical`` True: its optical links only, False:
    all but those, None: all)."""
    f = fits or FitRates()
    total = 0.0 if optical else fabric.switches * f.switch_fit
    for _, kind, count, lanes, lpm in fabric.links:
        is_opt = kind not in ("passive_copper", "aec")
        if optical is None or optical == is_opt:
            total += count * link_fit(kind, lanes, lpm, f)
    return total


def fit_optical_factor(figure: FieldFigure = HPN_NIC_TOR_LINK, fabric: FieldFabric | None = None,
                       base=None) -> float:
    """The factor on the handbook optical rates (:data:`HANDBOOK`) that makes ``fabric``
    (default :func:`hpn_link`, the training figure's link) fail at ``figure``'s rate, in
    closed form: (field FIT - the FIT of everything else: switches, copper, host connectors)
    / the handbook optical parts' FIT. ``base``: the other rates (default: the handbook
    optics with this module's switch and copper defaults)."""
    fab = fabric or hpn_link()
    b = base or FitRates.handbook()
    if not isinstance(figure, FieldFigure) or not isinstance(fab, FieldFabric) or not isinstance(b, FitRates):
        raise ConfigError("fit_optical_factor takes a FieldFigure, a FieldFabric and a FitRates")
    fixed = replace(b, **dict.fromkeys(OPTICAL_FITS, 0.0))  # what the factor does not scale
    rest = fabric_fit(fab, fixed)
    opt = fabric_fit(fab, b) - rest
    if opt <= 0:
        raise ConfigError(f"{fab.name} has no optical links to calibrate")
    k = (figure.fit - rest) / opt
    if k <= 0:
        raise ConfigError(f"{figure.name}: switches and copper alone ({rest:.3g} FIT) exceed the field rate "
                          f"({figure.fit:.3g} FIT)")
    return k


def uplink_interrupt_fraction(figure: FieldFigure = LLAMA3_NETWORK, fabric: FieldFabric | None = None,
                              fits=None) -> float:
    """The fraction of the fabric's redundant links' failures (every link but the
    single-homed ``nic_tor`` ones) that must interrupt the job for ``fabric`` (default
    :func:`llama3_fabric`) at ``fits`` (default :class:`FitRates`) to give ``figure``'s
    rate, switch and NIC-link failures all interrupting: a derived figure, not a default."""
    fab = fabric or llama3_fabric()
    f = fits or FitRates()
    single = fab.switches * f.switch_fit + sum(c * link_fit(k, ln, m, f) for name, k, c, ln, m in fab.links
                                               if name == "nic_tor")
    redundant = fabric_fit(fab, f) - single
    if redundant <= 0:
        raise ConfigError(f"{fab.name} has no redundant links")
    return (figure.fit - single) / redundant


_SOURCES = {
    "cable_termination_fit": "MIL-HDBK-217F N2 sect. 17.1 reflow-solder connection (handbook; copper has no field basis)",
    "cable_terminations_per_pair": "engineering estimate: 2 signal conductors and a drain per pair per end",
    "connector_contact_fit": "Telcordia SR-332 printed-board edge connector, per pin (handbook; no field basis)",
    "connector_contacts_per_lane": "QSFP-DD: 76 contacts for 8 lanes",
    "mating_cycles": "assumption: installed once",
    "rated_mating_cycles": "QSFP-DD MSA host connector minimum (VIAVI, secondary)",
    "service_hours": "assumption: 5 years",
    "retimer_fit": "Siemens SN 29500-2 CMOS mixed-signal reference at Tj 70 C (TI SFFS030; handbook)",
    "switch_fit": "field: Alibaba HPN SIGCOMM 2024, 0.051 % of ToR switches crash a month",
    "lasers_per_lane": "one EML or DML per lane and end",
    "cpo_lasers_per_lane": "NVIDIA: CPO uses 25% of the lasers",
    "fibre_mates_per_fibre": "the path's connectors plus one at each module port",
}
_OPT_SOURCES = {
    "optical_module_fit": "Telcordia SR-332 transceiver >= 40 Gb/s, laser excluded",
    "lpo_module_fit": "estimate: the DSP module less its DSP",
    "optical_engine_fit": "estimate: a pluggable's electronics per 800G share",
    "laser_fit": "Telcordia SR-332 uncooled EML",
    "cpo_laser_fit": "Telcordia SR-332 CW laser",
    "fibre_connector_fit": "Telcordia SR-332 optical connector per fibre",
}


def _field_note(k: float) -> str:
    return f"x {k:.3f} field factor fitted to Alibaba HPN's 0.057 % of NIC-ToR links failing a month (SIGCOMM 2024)"


@dataclass(frozen=True)
class FitRates:
    """Failure rates of a link's parts and of a switch, FIT (failures per 1e9 device-hours),
    and the connector's mating history. Optical rates default to the handbook's times the
    field factor fitted to Alibaba HPN's link failures (:data:`OPTICAL_FIELD_FACTOR`, about
    0.55; the module docstring); :meth:`handbook` gives the rates before it. Sources (P primary, S secondary,
    EST our estimate):

    Parameters
    ----------
    cable_termination_fit : float
        A copper cable assembly's conductor soldered to its plug's paddle card: 0.069 FIT,
        MIL-HDBK-217F Notice 2 section 17.1, "reflow solder" connection, ground-benign
        environment, pi_Q = pi_E = 1 (0.000069 failures per 1e6 h, as RAMSTK's
        ``PART_STRESS_LAMBDA_B`` transcribes it; P, old). 217F gives wire itself no failure
        rate, only its terminations. NO FIELD BASIS: no public field failure rate of a DAC,
        an AEC or an NVLink cable was found (the copper rates are this handbook derivation).
        A hand-soldered termination is 2.6 FIT (same table), the upper bound.
    cable_terminations_per_pair : float
        Terminations per differential pair per end: 3, two signal conductors and a drain
        (EST). A cable's FIT is ``2 ends x 2 L pairs x this x cable_termination_fit``.
    connector_contact_fit : float
        A host connector (cable or module to host) per contact: 0.13 FIT, Telcordia SR-332
        "printed board, edge" generic rate per pin (sigma 0.088), as the public
        KSY07/temp_predict transcription gives it (P via S; handbook, no field basis).
        Cross-check: MIL-HDBK-217F N2 parts count, PCB edge connector, ground benign,
        0.0054 per 1e6 h x pi_Q 2 = 10.8 FIT a connector, against 76 x 0.13 = 9.9 FIT for a
        QSFP-DD.
    connector_contacts_per_lane : float
        9.5: a QSFP-DD's 76 contacts over its 8 lanes, grounds, power and management
        included. A connector mated pair carrying ``n`` lanes is ``n x 9.5`` contacts.
    mating_cycles, rated_mating_cycles : float
        Mate/unmate cycles the host connector has seen over ``service_hours`` (default 1,
        installed once: an assumption) and its rating: 100, the QSFP-DD MSA's minimum for
        the host connector (VIAVI blog citing the MSA, S). Wear model: the contact FIT times
        MIL-HDBK-217F's pi_K for the cycling rate (:data:`PI_K`; P), times
        ``max(1, cycles / rated)`` beyond the rating (our stated assumption: past the rating
        plating wear-through raises the rate in proportion to the cycles).
    service_hours : float
        The hours the cycles are spread over: 5 years, 43,830 h (assumption).
    retimer_fit : float
        A retimer IC (AEC plug): 70 FIT, Siemens SN 29500-2 reference rate for CMOS
        mixed-signal ICs at a 70 C junction, as TI's FIT report SFFS030 (2024) quotes it
        (P; handbook, no field basis).
    switch_fit : float
        A switch (each ASIC of a :class:`SwitchTier` counted as one): 698 FIT, Alibaba HPN's
        field figure, "about 0.051 % of ToR switches encounter critical errors and crashes"
        a month in its LLM training clusters (SIGCOMM 2024 sect. 2.3; P, field). Microsoft's
        Azure fleet shows 13 times more when every outage counts (2 % of switches in their
        first 3 months, half under 6 minutes; :data:`AZURE_SWITCH`, a check). That an
        NVLink switch ASIC in a tray fails as a ToR box does is an assumption.
    optical_module_fit : float
        A DSP pluggable's electronics, lasers excluded: Telcordia SR-332's generic rate for
        an SFP transceiver of 40 Gb/s and above, 250 FIT (sigma 170), x the field factor.
    lpo_module_fit : float
        A linear pluggable: the DSP module less its DSP taken at ``retimer_fit``, 180 FIT
        (EST) x the field factor.
    optical_engine_fit : float
        A CPO optical engine per share of ``lanes_per_module`` lanes (800G): a pluggable's
        electronics without a host connector, 250 FIT (EST) x the field factor. Held-out
        check: with its laser share, Meta's ECOC 2025 field figure for CPO, 2.6 M
        device-hours MTBF (S).
    laser_fit, lasers_per_lane : float
        A pluggable's laser: Telcordia SR-332 "EML, uncooled", 110 FIT (sigma 89; rates at
        40 C) x the field factor; one per lane and end. Held-out check: an 800G DR8 module
        (module, 8 lasers, host connector) against Meta's ECOC 2025 0.5 to 1 M device-hours
        for pluggables (S).
    cpo_laser_fit, cpo_lasers_per_lane : float
        A CPO external laser source's laser: Telcordia SR-332 "CW laser", 150 FIT x the
        field factor; 0.25 lasers per lane, NVIDIA's statement that its CPO switches use
        25 % of the lasers of pluggables (P). One laser then feeds 4 lanes.
    fibre_connector_fit : float
        A fibre connector mated pair, per fibre: Telcordia SR-332 "optical" connector per
        pin, 30 FIT (sigma 9.5), a pin taken as one fibre position, x the field factor.
    fibre_mates_per_fibre : int or None
        Mated pairs a fibre crosses. None: the optical path's connectors (from the class's
        spec; 2 when it has none) plus one at each module or engine port.
    """

    cable_termination_fit: float = 0.069
    cable_terminations_per_pair: float = 3.0
    connector_contact_fit: float = 0.13
    connector_contacts_per_lane: float = 76 / 8
    mating_cycles: float = 1.0
    rated_mating_cycles: float = 100.0
    service_hours: float = 5 * 8766.0
    retimer_fit: float = 70.0
    switch_fit: float = HPN_TOR_CRASH.fit
    optical_module_fit: float | None = None
    lpo_module_fit: float | None = None
    optical_engine_fit: float | None = None
    laser_fit: float | None = None
    lasers_per_lane: float = 1.0
    cpo_laser_fit: float | None = None
    cpo_lasers_per_lane: float = 0.25
    fibre_connector_fit: float | None = None
    fibre_mates_per_fibre: int | None = None

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "fibre_mates_per_fibre":
                if v is not None:
                    integer(v, "FitRates.fibre_mates_per_fibre", 0, 64)
                continue
            if v is None and f.name in HANDBOOK:
                v = HANDBOOK[f.name] * OPTICAL_FIELD_FACTOR
            strict = f.name in ("connector_contacts_per_lane", "rated_mating_cycles", "service_hours",
                                "lasers_per_lane", "cpo_lasers_per_lane")
            x = number(v, f"FitRates.{f.name}", positive=strict, nonneg=not strict)
            if f.name.endswith("_fit") and x > 1e9:
                raise ConfigError(f"FitRates.{f.name} = {x:g} FIT is more than one failure per device-hour")
            object.__setattr__(self, f.name, x)
        if self.mating_cycles > 1e9:
            raise ConfigError(f"FitRates.mating_cycles must be at most 1e9, got {self.mating_cycles:g}")

    @classmethod
    def handbook(cls, **changes) -> FitRates:
        """The rates before the field calibration: the handbook optics (:data:`HANDBOOK`)."""
        return cls(**{**HANDBOOK, **changes})

    @property
    def pi_k(self) -> float:
        """MIL-HDBK-217F's mating factor for ``mating_cycles`` over ``service_hours``."""
        rate = self.mating_cycles / self.service_hours * 1000.0
        return next(k for top, k in PI_K if rate <= top)

    @property
    def connector_wear(self) -> float:
        """The factor on the connector's FIT: ``pi_K x max(1, cycles / rated)``."""
        return self.pi_k * max(1.0, self.mating_cycles / self.rated_mating_cycles)

    def unit_fits(self, kind: str, lanes: int, lanes_per_module: int) -> dict:
        """FIT of one unit of each component a link of ``kind`` with ``lanes`` lanes per
        direction holds (a cable, a connector mated pair, a module, a laser, a fibre
        through one mated pair; the module's and its connector's for ``lanes_per_module``)."""
        contact = self.connector_contact_fit * self.connector_contacts_per_lane * self.connector_wear
        if kind in ("passive_copper", "aec"):
            out = {"copper_cable": 2 * 2 * lanes * self.cable_terminations_per_pair * self.cable_termination_fit,
                   "host_connector": contact * lanes}
            if kind == "aec":
                out["retimer"] = self.retimer_fit
            return out
        if kind == "cpo":
            return {"optical_engine": self.optical_engine_fit, "laser": self.cpo_laser_fit,
                    "fibre_connector": self.fibre_connector_fit}
        module = self.lpo_module_fit if kind == "lpo" else self.optical_module_fit
        return {"optical_module": module, "host_connector": contact * lanes_per_module, "laser": self.laser_fit,
                "fibre_connector": self.fibre_connector_fit}

    def defaults_used(self) -> list:
        """The fields left at their defaults, each with its source in short."""
        base = FitRates()
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if v == getattr(base, f.name):
                out.append(f"{f.name} = {v:.6g} ({_SOURCES[f.name]})" if isinstance(v, float)
                           else f"{f.name} = {v!r} ({_SOURCES[f.name]})")
        return out

    def with_(self, **changes) -> FitRates:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


#: The handbook optical rates' field factor (:func:`fit_optical_factor` on the training
#: figure); the defaults of :class:`FitRates`' optical rates are the handbook's times this.
OPTICAL_FIELD_FACTOR = fit_optical_factor()
for _name in OPTICAL_FITS:
    _SOURCES[_name] = f"{_OPT_SOURCES[_name]} {HANDBOOK[_name]:g} FIT {_field_note(OPTICAL_FIELD_FACTOR)}"


def poisson_interval(events: float, confidence: float = 0.9) -> tuple[float, float]:
    """The two-sided ``confidence`` interval of a Poisson count ``events`` (chi-square)."""
    from scipy import stats

    a = (1 - confidence) / 2
    lo = 0.0 if events <= 0 else stats.chi2.ppf(a, 2 * events) / 2
    return float(lo), float(stats.chi2.ppf(1 - a, 2 * events + 2) / 2)


def _row(fig: FieldFigure, case: str, measured: float, ours: float, unit: str, set_: str) -> dict:
    return {"area": "failures", "case": case, "source": fig.source, "measured": float(measured),
            "ours": float(ours), "unit": unit, "ratio": float(ours / measured), "set": set_}


def field_comparison(fits: FitRates | None = None) -> list[dict]:
    """Each field figure of :data:`FIELD` against what ``fits`` (default :class:`FitRates`)
    predicts for it, as validation rows (area, case, source, measured, ours, unit, ratio =
    ours / measured, set: "train" for the figure the optical factor is fitted to and the
    switch rate taken as input, "test" for held-out figures, "context" for the rest: the
    handbook rates, a different switch population, copper's upper bound)."""
    f = fits or FitRates()
    hb = FitRates.handbook()
    fab = llama3_fabric()
    per_day = 24.0 / 1e9
    month_pct = HOURS_PER_MONTH / 1e9 * 100
    dr8 = f.unit_fits("dsp_optics", 8, 8)
    module = dr8["optical_module"] + 8 * f.lasers_per_lane * dr8["laser"] + dr8["host_connector"]
    cpo = f.optical_engine_fit + 4 * f.cpo_lasers_per_lane * f.cpo_laser_fit
    dac_links = sum(c for _, k, c, *_ in fab.links if k == "passive_copper")
    opt_links = sum(c for _, k, c, *_ in fab.links if k not in ("passive_copper", "aec"))
    llama_case = (f"Llama 3 job fabric: {fab.links[0][2]:,} GPUs, {fab.switches:,} switches, {opt_links:,} "
                  "optical links; every hard failure interrupts")
    return [
        _row(HPN_NIC_TOR_LINK, "200G NIC-ToR optical link (2 x 100G lanes, a module each end)", 0.057,
             link_fit("dsp_optics", 2, 2, f) * month_pct, "% of links a month", "train"),
        _row(HPN_TOR_CRASH, "ToR switch crashes (input: switch_fit)", 0.051, f.switch_fit * month_pct,
             "% of switches a month", "train"),
        _row(LLAMA3_NETWORK, llama_case, LLAMA3_NETWORK.rate_per_hour * 24, fabric_fit(fab, f) * per_day,
             "interruptions/day", "test"),
        _row(META_ECOC_PLUGGABLE, "800G DR8 pluggable: module, 8 lasers, host connector",
             META_ECOC_PLUGGABLE.fit, module, "FIT", "test"),
        _row(META_ECOC_CPO, "CPO 800G: engine share and its external laser's share", META_ECOC_CPO.fit, cpo,
             "FIT", "test"),
        _row(HPN_NIC_TOR_LINK, "200G NIC-ToR link with the handbook rates (before calibration)", 0.057,
             link_fit("dsp_optics", 2, 2, hb) * month_pct, "% of links a month", "context"),
        _row(LLAMA3_NETWORK, "Llama 3 job fabric with the handbook rates (before calibration)",
             LLAMA3_NETWORK.rate_per_hour * 24, fabric_fit(fab, hb) * per_day, "interruptions/day", "context"),
        _row(AZURE_SWITCH, "datacenter switch, every outage in the first 3 months", AZURE_SWITCH.fit,
             f.switch_fit, "FIT", "context"),
        _row(LLAMA3_NETWORK, "400G DAC in-rack link vs the bound if all 35 were DACs (upper bound only)",
             LLAMA3_NETWORK.fit / dac_links, link_fit("passive_copper", 4, 4, f), "FIT", "context"),
    ]
