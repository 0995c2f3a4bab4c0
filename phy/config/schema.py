"""The keys of link, sweep and rack files, each ``"section.name" -> (check, default,
meaning with its unit)``, the other spellings they take, and the one reader that checks a
file's sections against a schema (``docs/toml_reference.md`` is rendered from these)."""

from __future__ import annotations

from ..errors import ConfigError
from .checks import Boolean, ListOf, Number, SchedulerAddress, Table, Text, choice
from .files import did_you_mean, where

#: The one default equalisation of every command (``link``, ``sweep``, ``rack``): COM
#: proposes, the statistical eye decides, as :class:`phy.LinkSpec` does with no ``serdes``.
DEFAULT_EQUALISATION = "com"

#: Every parameter of a link (and of a sweep's points): "section.name" -> (check, default,
#: meaning). The sections are those of a link file: [channel], [optics], [link], [serdes].
LINK_SCHEMA: dict = {
    "channel.kind": (choice("twinax", "stripline", "library", "touchstone", "none"), "twinax",
                     "the electrical medium ('none' with [optics])"),
    "channel.length_m": (Number(positive=True, hi=100.0), 1.0, "cable or trace length (m)"),
    "channel.awg": (Number(lo=20, hi=40), 26, "twinax wire gauge (AWG)"),
    "channel.connectors": (Boolean(), True, "a connector at each end (twinax, stripline)"),
    "channel.name": (Text(), "twinax_1m_26awg", "a built-in channel (kind = library)"),
    "channel.file": (Text(), None, "a Touchstone file (kind = touchstone), relative to the spec"),
    "channel.thru": (choice("auto", "12_34", "13_24", "14_23"), "auto", "4-port order of the file"),
    "channel.host": (choice("none", "pcb", "flyover"), "none",
                     "twinax: host boards (125 mm) or flyovers at each end, with the plugs' paddle cards"),
    "channel.crosstalk": (Boolean(), False, "twinax: the cable's neighbours as aggressors (2 NEXT, 3 FEXT)"),
    "optics.kind": (choice("none", "dsp", "lpo", "cpo"), "none", "an optical link class instead of copper"),
    "optics.length_m": (Number(positive=True, hi=1e5), 100.0, "fibre length (m)"),
    "optics.rin_db_per_hz": (Number(lo=-200, hi=-100), None, "laser RIN (dB/Hz); default the class's"),
    "link.lanes": (Number(lo=1, hi=1024, integer=True), 1, "lanes per direction"),
    "link.lane_rate_gbps": (Number(positive=True, hi=2000), 212.5, "line rate per lane (Gb/s)"),
    "link.modulation": (choice("pam4", "nrz"), "pam4", "modulation"),
    "link.fec": (choice("KP4", "KR4", "LL272", "none"), "KP4", "FEC code or none"),
    "link.interleave": (Number(lo=1, hi=64, integer=True), 1, "codewords interleaved"),
    "link.precoding": (Boolean(), False, "1/(1+D) mod 4 precoder"),
    "link.retry": (Boolean(), False, "link-level retry (32-bit CRC, 256-byte flits)"),
    "link.target_ber": (Number(positive=True, hi=0.5), 1e-13, "delivered BER target"),
    "link.equalisation": (choice("com", "preset"), DEFAULT_EQUALISATION,
                          "COM-proposed (the eye decides) or a fixed preset (phy.Serdes.preset; fast)"),
    "link.switch_ports": (Number(lo=0, hi=16, integer=True), 0, "switch ports in the path (200 ns each)"),
    "link.required_margin_db": (Number(lo=-20, hi=40), None, "margin a link needs (dB); default 3 dB, COM's"),
    "serdes.rx_impairments": (choice("none", "adc_dsp_224g"), "none",
                              "a real receiver's ADC, taps and clock (phy.Impairments preset)"),
    **{f"{side}_ami.{k}": v for side in ("tx", "rx") for k, v in {
        "ibs": (Text(), None, f"an IBIS file with the {side.upper()} IBIS-AMI model, relative to the spec"),
        "model": (Text(), None, "its [Model] (default: the one with an [Algorithmic Model])"),
        "library": (Text(), None, "or the model's shared library (.so), relative to the spec, with ami"),
        "ami": (Text(), None, "and its .ami parameter file"),
        "parameters": (Table(), None, "values of the model's In parameters (default: the .ami file's)"),
        "timeout_s": (Number(positive=True, hi=86_400.0), 60.0, "time limit of one call to the model (s)"),
    }.items()},
    "rx_ami.dfe_taps": (Number(lo=0, hi=64, integer=True), 0,
                        "DFE taps the Rx model has: the statistical eye models them after its AMI_Init"),
    "rx_ami.bandwidth_ghz": (Number(positive=True), None,
                             "the receiver's analog bandwidth before the model (GHz); default 0.75 of the baud"),
}

#: A Dask scheduler's address, checked (:class:`phy.config.checks.SchedulerAddress`).
scheduler_address = SchedulerAddress()
#: The default time limit of one point (s); see :func:`phy.sweep.run_sweep` for why 60 s.
DEFAULT_POINT_TIMEOUT_S = 60.0
#: The ``[sweep]`` keys of a sweep file (a link file may carry them; they are checked and
#: not needed), as :data:`LINK_SCHEMA`. A None default is decided at the run: the name is
#: the file's without ``.toml``, the workers are the CPUs.
SWEEP_SCHEMA: dict = {
    "sweep.name": (Text(), None, "the sweep's name in its records"),
    "sweep.executor": (choice("inline", "processes", "dask"), "processes",
                       "where points run: this process, worker processes, or Dask"),
    "sweep.workers": (Number(lo=1, hi=4096, integer=True), None, "worker processes (or Dask workers of a local cluster)"),
    "sweep.scheduler": (scheduler_address, None,
                        "a Dask scheduler address, e.g. tcp://host:8786 (implies executor = dask)"),
    "sweep.chunk": (Number(lo=1, hi=10_000, integer=True), 8,
                    "points a worker takes at a time (points sharing a channel travel together)"),
    "sweep.point_timeout_s": (Number(positive=True, hi=86_400.0), DEFAULT_POINT_TIMEOUT_S,
                              'the time limit of one point (s); past it the point records "timeout"'),
}

#: The link classes a rack's cable may take (:func:`phy.topology.default_candidates`).
RACK_CLASSES = ("passive_copper", "aec", "lpo", "cpo", "dsp_optics")

#: Every key of a rack file, as :data:`LINK_SCHEMA`; the ranges are the limits of
#: :class:`phy.topology.Layout`, :class:`phy.LinkSpec` and the link classes.
RACK_SCHEMA: dict = {
    "rack.builder": (choice("nvl72", "nvl36x2", "two_tier", "single_tier", "scale_out"), "nvl72",
                     "the topology: NVL72, two NVL36 racks, racks of NVL72 under a second optical tier, "
                     "one switch tier, or a scale-out fat tree"),
    "rack.accelerators": (Number(positive=True, integer=True), 1024, "accelerators of single_tier and scale_out"),
    "rack.racks": (Number(positive=True, integer=True), 8, "racks of two_tier"),
    "link.lanes": (Number(lo=1, hi=1024, integer=True), 2, "lanes per direction of a copper link"),
    "link.lane_rate_gbps": (Number(positive=True), 212.5, "line rate per lane (Gb/s)"),
    "link.awg": (Number(lo=18, hi=40), 26, "twinax wire gauge (AWG)"),
    "link.fec": (choice("KP4", "KR4", "LL272", "none"), "KP4", "FEC code or none"),
    "link.equalisation": (choice("com", "preset"), DEFAULT_EQUALISATION,
                          "COM-proposed (the eye decides; about 1 s per link length) or a fixed preset (fast)"),
    "link.resolution_m": (Number(positive=True), 0.25, "cable lengths are evaluated in buckets of this size (m)"),
    # an NVL72-class tray takes its lanes to the rear connectors on flyover cables, not
    # host board: 802.3dj's cabled host class HL (a stated assumption)
    "link.host": (choice("HL", "HN", "HH", "flyover", "pcb", "none"), "HL",
                  "what joins the die to the cable at each end: an 802.3dj CR host class (Table 179-23: HL cabled, "
                  "HN and HH board hosts) with the CR reference receiver, or flyover cables, 125 mm of host board "
                  "or nothing in the channel with COM's KR package"),
    "link.flyover_m": (Number(positive=True), 0.2, "with a CR host class: the tray's flyover cable at each end, "
                       "near-chip connector to rear connector (m)"),
    "uplink.kind": (choice("dsp", "lpo", "cpo"), "dsp", "optics of two_tier's second tier and of scale_out"),
    "uplink.lanes": (Number(lo=1, hi=1024, integer=True), 2, "lanes per direction of an optical uplink"),
    "decode.params": (Number(positive=True), 70e9, "parameters of the dense model decoded over the fabric"),
    "decode.layers": (Number(positive=True, integer=True), 80, "its layers"),
    "decode.batch": (Number(positive=True, integer=True), 1, "sequences decoded together"),
    "decode.bytes_per_param": (Number(positive=True), 1.0, "bytes per parameter (1: FP8)"),
    # the domain-size trade (phy.topology.domain): "sizes" plans each of domain.sizes,
    # "largest" searches whole racks up to what the switch radix allows
    "domain.search": (choice("none", "sizes", "largest"), "none",
                      "the domain-size trade: none, each of sizes, or the largest whole-rack domain"),
    "domain.sizes": (ListOf(Number(lo=1, hi=8192, integer=True)), [72, 144, 288, 576],
                     "accelerators of each domain planned (search = sizes)"),
    "domain.classes": (ListOf(choice(*RACK_CLASSES)), list(RACK_CLASSES), "link classes a cable may take"),
    "domain.objective": (choice("power", "latency"), "power", "each cable's class: the least power or latency"),
    "domain.accelerators_per_rack": (Number(lo=1, hi=4096, integer=True), 72, "accelerators per rack"),
    "domain.links_per_accelerator": (Number(lo=1, hi=256, integer=True), 18,
                                     "links from each accelerator to the fabric"),
    "domain.rack_power_kw": (Number(positive=True), 132.0, "the power a rack may draw with its accelerators (kW)"),
    "domain.max_tiers": (Number(lo=1, hi=2, integer=True), 2, "switch tiers allowed (1 or 2)"),
    "domain.max_cables_per_rack": (Number(positive=True, integer=True), None,
                                   "pairs and fibres a rack may terminate (default: no limit)"),
    "domain.max_copper_kg_per_rack": (Number(positive=True), None, "copper a rack may carry (kg; default: no limit)"),
    "domain.rack_pitch_m": (Number(positive=True), 0.6, "rack pitch in a row (m)"),
    "domain.overhead_m": (Number(positive=True), 4.0, "a cable between racks runs this much up, along and down "
                          "(m; route = overhead, and a one-tier row)"),
    "domain.route": (choice("laid_out", "overhead"), "laid_out",
                     "cables between racks: neighbours through the side walls, others over the top (laid_out), or "
                     "the distance plus overhead_m (overhead)"),
    "domain.rack_units": (Number(positive=True, integer=True), 48, "rack units a rack offers"),
    "domain.max_link_down_per_day": (Number(positive=True), None,
                                     "link-down events per day the domain may see (default: no budget)"),
}

#: Other spellings a file may use for a key: ``"section.name"`` -> the schema's key (files
#: of every kind, and a sweep's ``[grid]`` and ``[zip]``). A key and its other spelling
#: together are refused. ``equalization`` is the spelling of files written before one
#: spelling was chosen (British, as the outputs have always spelt it).
SPELLINGS = {"link.equalization": "link.equalisation"}


def sections_of(schema: dict) -> list:
    """The sections of ``schema``, in order."""
    return list(dict.fromkeys(k.split(".")[0] for k in schema))


def defaults(schema: dict) -> dict:
    """Every key of ``schema`` at its default."""
    return {k: v[1] for k, v in schema.items()}


def canonical(full: str, seen: dict, at: str, given: str) -> str:
    """The schema's key for ``full`` (its other spellings mapped); a key given twice in one
    table (in two spellings) is refused, ``at`` naming where and ``given`` as written."""
    name = SPELLINGS.get(full, full)
    if name in seen:
        raise ConfigError(f"{at}: {name!r} is given twice ({seen[name]} and {given})")
    seen[name] = given
    return name


def check_value(schema: dict, full: str, v, at: str) -> None:
    """:class:`phy.ConfigError` at ``at`` when ``v`` does not fit key ``full``."""
    bad = schema[full][0](v)
    if bad:
        raise ConfigError(f"{at} must be {bad}, got {v!r}")


def read_sections(doc: dict, schema: dict, path, text: str, sections=None) -> dict:
    """The keys a parsed TOML ``doc`` gives for ``schema``'s sections, checked:
    ``{"section.name": value}`` in the schema's spelling. An unknown section (outside
    ``sections``, default the schema's) or key (with the keys known and the nearest one),
    a table that is not a section, a key given twice, a value that does not fit: one
    :class:`phy.ConfigError` naming the file, the line and the key. Sections in
    ``sections`` that the schema has no keys for are left to the caller."""
    known = sections_of(schema)
    allowed = list(sections) if sections is not None else known
    out = {}
    for sec, body in doc.items():
        if sec not in allowed:
            raise ConfigError(f"{where(path, text, sec, '')}: unknown section [{sec}]{did_you_mean(sec, allowed)}; "
                              f"sections: {', '.join(allowed)}")
        if not isinstance(body, dict):
            raise ConfigError(f"{path or 'spec'}: '{sec}' must be a [section]")
        if sec not in known:
            continue
        seen: dict = {}
        for k, v in body.items():
            at = where(path, text, sec, k)
            full = canonical(f"{sec}.{k}", seen, at, k)
            if full not in schema:
                keys = [x.split(".", 1)[1] for x in schema if x.startswith(sec + ".")]
                raise ConfigError(f"{at}: unknown key {k!r}{did_you_mean(k, keys)}; [{sec}] keys: {', '.join(keys)}")
            check_value(schema, full, v, at)
            out[full] = v
    return out
