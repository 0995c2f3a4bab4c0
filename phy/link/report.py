"""The link roll-up: :func:`evaluate_link` turns a :class:`LinkSpec` and its equalised
segments into a :class:`LinkReport` (errors, bandwidth, latency, energy, the verdict and
its reasons)."""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

import channels
from _linkmodel._recent import Recent

from ..engines.com.erl import effective_return_loss, preset_for_baud
from ..errors import ConfigError
from ._text import report_text
from .equalise import Segment, segments
from .latency import latency_layers, latency_terms, rate_chain
from .post_fec import MIN_RETRY_EFFICIENCY, _post_fec, _q_of, _required_der
from .power import energy_terms
from .retry import QUANTILES, link_layer_terms
from .spec import LinkSpec


# ----------------------------------------------------------------------------- reports
@dataclass(frozen=True)
class SegmentReport:
    """One equalised segment (an electrical hop or an optical span) and its eye.

    Attributes
    ----------
    name : str
    ser : float
        Detector symbol error ratio at the sampling point.
    der : float
        With DFE error propagation (errors per UI).
    dfe_taps : list
        Normalised to the main cursor.
    main_v : float
        Main cursor at the slicer for a full-swing symbol (V).
    eye_heights_v : list
        At ``eye_target`` (the FEC's required detector error ratio, or the target).
    sigma_v : dict
    equalisation : str
        How the equalisation was chosen.
    tx, rx : dict
        The transmitter and receiver used.
    com_db : float or None
        When COM proposed the equalisation.
    delay_s : float
        Time of flight of the segment.
    notes : list
    sampling : dict
        The sampling phase (:class:`phy.Cdr`) the eye was computed at.
    candidates : list of [str, float, float]
        Every equalisation and phase tried, with its symbol error ratio at the slicer and
        its detector error ratio with DFE error propagation.
    channel : dict
        The electrical channel's figures, die to die (packages included), side by side:
        insertion and return loss at Nyquist, FOM_ILD (:meth:`channels.Channel.ild`),
        and ICN with its NEXT and FEXT parts and the number of aggressors
        (:func:`channels.icn.icn`, the 802.3ck CR sheet's parameters at 53.125 GBd, the
        802.3dj 200G sheet's otherwise); and the effective return loss of each port
        (``erl_db``: ``port1``, ``port2``; 93A.5, :func:`phy.engines.com.erl.effective_return_loss`)
        of the medium at its own ports, packages not included as 93A.5 measures it, with
        the CR preset of the rate's family (``erl_preset``, ``erl_limit_db``,
        ``erl_passes``). A figure the data cannot give is None, with the reason under
        ``"unavailable"``.
    """

    name: str
    ser: float
    der: float
    dfe_taps: list
    main_v: float
    eye_heights_v: list
    eye_target: float
    sigma_v: dict
    equalisation: str
    tx: dict
    rx: dict
    com_db: float | None
    delay_s: float
    notes: list
    sampling: dict = field(default_factory=dict)
    candidates: list = field(default_factory=list)
    channel: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LinkReport:
    """What a link delivers (see the module docstring; SI units, one direction unless
    named otherwise).

    Attributes
    ----------
    passes : bool
        Meets ``target_ber``.
    reasons : list of str
        Why it does not (empty when it passes).
    pre_fec_ber, pre_fec_der : float
        Bit and detector (UI) error ratios into the FEC, all segments.
    post_fec_ber : float
        Delivered bit error ratio (after retry when there is one).
    codeword_error_ratio, frame_loss_ratio, flit_retry_ratio : float or None
    required_der : float
        Detector error ratio at which the FEC alone (no replay) just meets the target: the
        error ratio the code itself corrects, the margin's reference with or without a
        link layer, so that retry never relaxes the pass rule.
    retry_required_der : float or None
        With a :class:`Retry`: the detector error ratio at which the link with its replays
        still meets the target and keeps at least half its bandwidth. Retry absorbs the
        codewords the FEC leaves uncorrected; this figure is reported, never the margin's
        reference.
    margin_db : float
        Q-factor margin against ``required_der``.
    required_margin_db : float
        The margin the link needed to pass, and ``margin_criterion`` the rule in words
        (:meth:`LinkSpec.margin_requirement`).
    rate_chain : dict
        ``line_bps``, ``fec_rate``, ``framing_efficiency``, ``payload_bps``,
        ``retry_efficiency``, ``usable_bps``.
    usable_bandwidth_bps : float
        Per direction; 0 when the link fails.
    latency_s : float
        One-way mean latency; ``latency_breakdown_s`` holds its terms and
        ``latency_layers_s`` the same terms by layer (``phy``, ``link``, ``path``).
    latency_quantiles_s : dict
        One flit's one-way latency at ``p50``, ``p99`` and ``p99.99`` (replays included;
        without a link layer every quantile is ``latency_s``).
    link_layer : dict or None
        With a :class:`Retry`: the flit error ratio, the replay delay, the flit time, the
        credit loop and the receive buffer it needs (:class:`phy.link.retry.LinkLayerTerms`).
    energy_j_per_bit : float
        Per payload bit, one way; ``energy_breakdown_j_per_bit`` its terms.
    power_w : float
        Both directions, all lanes.
    frame_bytes : int
        The framing's frame (or flit) size the frame loss ratio is for.
    fibre_connectors : int or None
        Connectors on an optical medium's fibre path (None for copper).
    """

    name: str
    passes: bool
    reasons: list
    lanes: int
    lane_rate_bps: float
    baud_hz: float
    modulation: str
    fec: str | None
    interleave: int
    precoding: bool
    retry: bool
    segments: list
    pre_fec_ber: float
    pre_fec_der: float
    post_fec_ber: float
    codeword_error_ratio: float | None
    frame_loss_ratio: float | None
    flit_retry_ratio: float | None
    target_ber: float
    required_der: float
    margin_db: float
    rate_chain: dict
    usable_bandwidth_bps: float
    latency_s: float
    latency_breakdown_s: dict
    energy_j_per_bit: float
    energy_breakdown_j_per_bit: dict
    power_w: float
    notes: list
    latency_layers_s: dict = field(default_factory=dict)
    latency_quantiles_s: dict = field(default_factory=dict)
    link_layer: dict | None = None
    required_margin_db: float = 0.0
    margin_criterion: str = ""
    frame_bytes: int = 64
    fibre_connectors: int | None = None
    retry_required_der: float | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["segments"] = [s.to_dict() if isinstance(s, SegmentReport) else s for s in self.segments]
        return plain_json(d)

    def summary(self) -> str:
        """The report for a terminal, as ``linkmodel link`` prints it: every figure with its
        unit and what it is measured against, probabilities below 1e-30 as ``< 1e-30``,
        latency terms by name (:func:`phy.link._text.report_text`)."""
        return report_text(self.to_dict())


def plain_json(x):
    """``x`` as plain JSON types: dict keys as str, tuples and arrays as lists, numpy scalars as
    Python numbers (what every ``to_dict`` returns)."""
    if isinstance(x, dict):
        return {str(k): plain_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain_json(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain_json(x.tolist())
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return x


# ----------------------------------------------------------------------------- roll-up
def evaluate_link(spec: LinkSpec, segs: tuple[Segment, ...] | None = None, *, erl: bool = True) -> LinkReport:
    """Roll a link up: errors, bandwidth, latency, energy (see the module docstring).

    Parameters
    ----------
    spec : LinkSpec
        The link: medium, SerDes, lane rate, modulation, FEC, framing, retry and path.
    segs : tuple of Segment, optional
        The medium's :func:`segments` when already computed for this medium, SerDes,
        lane rate and modulation (FEC, framing, retry and path may differ): the eyes are
        then not recomputed (None: computed here).
    erl : bool, optional
        False: leave out each segment's effective return loss (``channel["erl_db"]`` None,
        said under ``"unavailable"``), the costliest channel figure, which a sweep's rows do
        not carry; every other figure is the same.

    Returns
    -------
    LinkReport
        Errors, bandwidth (bit/s), latency (s) and energy (J/bit) of the link.
    """
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"evaluate_link needs a LinkSpec, got {type(spec).__name__}")
    if segs is None:
        segs = segments(spec)
    else:
        segs = tuple(segs)
        if not segs or not all(isinstance(x, Segment) for x in segs):
            raise ConfigError("segs must be the Segments that phy.link.segments returns")
        if not all(np.isclose(x.baud_hz, spec.baud_hz) and x.tx.modulation == spec.modulation for x in segs):
            raise ConfigError("segs were computed for another baud rate or modulation than this LinkSpec's")
    return _report(spec, segs, erl)


def _report(spec: LinkSpec, eyes: tuple[Segment, ...], erl: bool = True) -> LinkReport:
    notes = []
    M = 2**spec.bits_per_symbol
    der = float(sum(e.der for e in eyes))
    der = 0.5 if not der < 0.5 else der  # NaN included: the worst a detector can do
    if len(eyes) > 1:
        notes.append("segments' errors add; bursts take the shape of the worst segment's DFE")
    code = spec.fec
    line, fec_rate, f_eff, payload = rate_chain(spec)
    lat = latency_terms(spec, eyes)
    ber_fec, cer, flr, model = _post_fec(spec, der, eyes)
    if spec.inner_fec is not None:
        from .post_fec import inner_note

        notes.append(inner_note(spec, der, eyes))
    fer, retry_eff, post, ll = None, 1.0, ber_fec, None
    base = float(sum(lat.values()))
    quant = dict.fromkeys(QUANTILES, base)
    if spec.retry is not None:
        ll = link_layer_terms(spec, der, cer, model, base, payload)
        fer, retry_eff = ll.flit_error_ratio, ll.efficiency
        post = ber_fec * ll.undetected
        lat["retry_mean"] = ll.mean_added_s
        if fer < 1:
            quant = {k: base + v for k, v in ll.quantiles_s(1).items()}
        else:
            quant = dict.fromkeys(QUANTILES, float("inf"))
        if ll.credit_efficiency < 1:
            notes.append(f"the receive buffer of {spec.retry.credit_buffer_bytes} B is below the "
                         f"{ll.credit_bytes_needed:.0f} B the credit loop needs: credits cap the link at "
                         f"{ll.credit_efficiency:.3f} of its payload rate")
    # The margin's reference is what the FEC itself corrects: a link layer's replays absorb
    # what remains and never relax the rule (its own limit is reported beside it).
    required = _required_der(spec if spec.retry is None else spec.with_(retry=None), eyes)
    retry_required = None if spec.retry is None else _required_der(spec, eyes, base, payload)
    margin = 20 * math.log10(_q_of(der, M) / _q_of(required, M)) if der < 0.5 else -float("inf")
    penalty = None
    if any(e.reference_der is not None for e in eyes) and der < 0.5:
        ref = float(min(0.5, sum(e.der if e.reference_der is None else e.reference_der for e in eyes)))
        penalty = max(0.0, 20 * math.log10(_q_of(ref, M) / _q_of(der, M)))
    need, criterion = spec.margin_requirement(penalty)
    criterion += (f", over the detector error ratio {required:.3g} that "
                  f"{spec.fec.name + ' corrects' if spec.fec is not None else 'a link without FEC delivers'} to the "
                  f"target BER {spec.target_ber:.0e} by itself"
                  + ("; link-level retry absorbs what the FEC leaves and is not counted in the margin"
                     if spec.retry is not None else ""))
    reasons = _reasons(spec, eyes, der, post, required if retry_required is None else retry_required, retry_eff)
    if not reasons and margin < need:
        reasons.append(f"margin {margin:.2f} dB is below the {need:g} dB required ({criterion})")
    notes.append(f"verdict: {criterion}")
    passes = not reasons
    usable = payload * retry_eff if passes else 0.0
    energy = energy_terms(spec, notes, eyes)
    _latency_defaults(spec, notes)
    e_bit = float(sum(energy.values()))
    for e in eyes:
        notes.extend(e.notes)
    return LinkReport(
        name=spec.name, passes=passes, reasons=reasons, lanes=spec.lanes, lane_rate_bps=spec.lane_rate_bps,
        baud_hz=spec.baud_hz, modulation=spec.modulation, fec=None if code is None else code.name,
        interleave=spec.interleave, precoding=spec.precoding, retry=spec.retry is not None,
        segments=[_segment_report(e, required, bare, erl) for e, bare in zip(eyes, _own_channels(spec, eyes))],
        pre_fec_ber=float(min(0.5, der / spec.bits_per_symbol)),  # Gray: one bit per level error, bursts included
        pre_fec_der=der, post_fec_ber=float(post),
        codeword_error_ratio=None if cer is None else float(cer), frame_loss_ratio=None if flr is None else float(flr),
        flit_retry_ratio=fer, target_ber=spec.target_ber, required_der=float(required), margin_db=float(margin),
        rate_chain={"line_bps": line, "fec_rate": fec_rate, "framing_efficiency": f_eff, "payload_bps": payload,
                    "retry_efficiency": retry_eff, "usable_bps": usable},
        usable_bandwidth_bps=float(usable), latency_s=float(sum(lat.values())), latency_breakdown_s=lat,
        energy_j_per_bit=e_bit, energy_breakdown_j_per_bit=energy, power_w=e_bit * payload * 2,  # both directions
        notes=notes, latency_layers_s=latency_layers(spec, lat), latency_quantiles_s=quant,
        link_layer=None if ll is None else asdict(ll), required_margin_db=float(need), margin_criterion=criterion,
        frame_bytes=int(spec.framing.frame_bytes), fibre_connectors=_fibre_connectors(spec),
        retry_required_der=None if retry_required is None else float(retry_required),
    )


def _fibre_connectors(spec: LinkSpec) -> int | None:
    if spec.optics is None:
        return None
    from channels.optical import OpticalConnector

    return sum(isinstance(e, OpticalConnector) for e in spec.optics.path.elements)


def _latency_defaults(spec: LinkSpec, notes: list) -> None:
    """Say which latency defaults stand for real parts."""
    from fec import DECODER_CLOCK_HZ

    from .parts import Retry

    if spec.fec is not None and spec.fec_clock_hz == DECODER_CLOCK_HZ:
        notes.append(f"FEC decoder clock {DECODER_CLOCK_HZ / 1e6:g} MHz (default: a public 400G RS(544,514) core's, "
                     "fec.DECODER_CLOCK_HZ)")
    if spec.retry is not None and spec.retry.crc_check_s == Retry().crc_check_s:
        notes.append(f"CRC check {Retry().crc_check_s * 1e9:g} ns (default: PCI-SIG's figure for PCIe 6.0's FEC and CRC)")


def _reasons(spec: LinkSpec, eyes, der: float, post: float, required: float, retry_eff: float) -> list:
    """Why the link fails (empty when it passes): a closed eye, a delivered BER above the
    target, retries that waste more than half the bandwidth."""
    reasons = []
    for e in eyes:
        figures = (e.ser, e.der, float(e.eye.main_v[e.eye.centre]))
        if not all(math.isfinite(x) for x in figures):  # never a pass on numbers that are not
            reasons.append(f"the eye of {e.name} is not a number (symbol error ratio {e.ser:.3g}, detector "
                           f"error ratio {e.der:.3g}, main cursor {figures[2]:.3g} V): its channel is not physical")
        elif e.ser >= 1e-2:
            reasons.append(f"the eye of {e.name} is closed: symbol error ratio {e.ser:.3g} at the sampling point")
    if post > spec.target_ber:
        reasons.append(f"delivered BER {post:.3g} is above the target {spec.target_ber:.3g}"
                       f" (the detector error ratio {der:.3g} exceeds the {required:.3g} this "
                       f"{'FEC' if spec.fec is not None else 'link without FEC'}"
                       f"{' with its replays' if spec.retry is not None else ''} can take)")
    if spec.retry is not None and retry_eff < MIN_RETRY_EFFICIENCY:
        reasons.append(f"replays and credit stalls waste more than half the bandwidth (efficiency {retry_eff:.3f})")
    return reasons


def _own_channels(spec: LinkSpec, eyes) -> list:
    """Each segment's medium at its own ports, before the packages (what 93A.5 measures ERL
    on): the link's channel, or an optical class's host channel; None for a linear optical
    path (electrical and optical in one) and the optical span."""
    if spec.channel is not None:
        chs = spec.electrical_segments
        return list(chs) if len(chs) == len(eyes) else [chs[0]] * len(eyes)
    if spec.optics.kind == "dsp":
        return [None if e.equalisation == "module DSP" else spec.optics.host for e in eyes]
    return [None] * len(eyes)


def _segment_report(e: Segment, target: float, own: channels.Channel | None = None, erl: bool = True) -> SegmentReport:
    """One segment's part of the report, its eye heights at ``target``."""
    return SegmentReport(e.name, e.ser, e.der, e.dfe.tolist(), float(e.eye.main_v[e.eye.centre]),
                         e.eye.heights_v(target).tolist(), target, dict(e.eye.sigma_v), e.equalisation,
                         e.tx.to_dict(), e.rx.to_dict(), e.com_db, e.delay_s, list(e.notes), e.cdr.to_dict(),
                         [list(c) for c in e.candidates],
                         _figures(e.channel, e.baud_hz, own, e.tx.levels.size, erl)
                         if e.equalisation != "module DSP" else {})


_FIGURES = Recent(64)  # recent channel figures by channel objects and signal: a sweep's FEC choices share them


def _figures(ch: channels.Channel, baud_hz: float, own: channels.Channel | None, levels: int, erl: bool = True) -> dict:
    """:func:`channel_figures`, remembered for the last 64 channels (a copy each time)."""
    hit = _FIGURES.remember((id(ch), id(own), float(baud_hz), int(levels), bool(erl)),
                            lambda: (ch, own, channel_figures(ch, baud_hz, own, levels, erl)),
                            lambda h: h[0] is ch and h[1] is own)
    return copy.deepcopy(hit[2])


def channel_figures(ch: channels.Channel, baud_hz: float, own: channels.Channel | None = None,
                    levels: int = 4, erl: bool = True) -> dict:
    """Insertion loss, return loss, FOM_ILD and ICN of ``ch`` side by side, and the ERL of
    ``own``, the medium at its own ports, for a PAM-``levels`` signal (see
    :class:`SegmentReport` ``channel``; ``erl`` False: not the ERL)."""
    from channels import icn

    nyq = baud_hz / 2
    out = {"il_db_nyquist": None, "rl_db_nyquist": None, "fom_ild_db": None, "icn_v": None, "icn_next_v": None,
           "icn_fext_v": None, "n_next": sum(a.kind == "next" for a in ch.aggressors),
           "n_fext": sum(a.kind == "fext" for a in ch.aggressors), "unavailable": {}}
    try:
        out["il_db_nyquist"] = float(ch.insertion_loss_db(nyq))
        out["rl_db_nyquist"] = float(ch.return_loss_db(nyq))
    except channels.ChannelError as ex:
        out["unavailable"]["loss"] = str(ex)
    try:
        ild = ch.ild(baud_hz).fom_ild_db
        out["fom_ild_db"] = None if ild is None else float(ild)
    except channels.ChannelError as ex:
        out["unavailable"]["fom_ild_db"] = str(ex)
    preset = icn.ICN_PRESETS["802.3ck_cr" if np.isclose(baud_hz, 53.125e9) else "802.3dj_200g"]
    try:
        r = icn.icn(ch, baud_hz, **preset.kwargs())
        out.update(icn_v=r.total_v, icn_next_v=r.nx_v, icn_fext_v=r.fx_v, icn_parameters=preset.source)
    except channels.ChannelError as ex:
        out["unavailable"]["icn_v"] = str(ex)
    out.update(erl_db=None, erl_preset=None, erl_limit_db=None, erl_passes=None)
    if own is None or not erl:
        out["unavailable"]["erl_db"] = ("not computed (erl=False)" if own is not None else
                                        "no S-parameter medium of its own (a linear optical path)")
        return out
    p = preset_for_baud(baud_hz)
    p = p if p.levels == levels else p.with_(levels=levels)
    try:
        r1, r2 = _erl(own, p)
    except ConfigError as ex:
        out["unavailable"]["erl_db"] = str(ex)
        return out
    out.update(erl_db={"port1": r1.erl_db, "port2": r2.erl_db}, erl_preset=p.name, erl_limit_db=p.limit_db,
               erl_passes=None if p.limit_db is None else bool(r1.passes and r2.passes), erl_parameters=p.source)
    return out


_ERL = Recent(64)  # recent ERLs by channel object and parameters: a sweep meets the same channel again


def _erl(ch: channels.Channel, p):
    def make():
        res = effective_return_loss(ch, p)  # the figures are kept, not the traces
        return ch, tuple(replace(r, time_s=r.time_s[:0], tdr=r.tdr[:0], ptdr=r.ptdr[:0], weight=r.weight[:0])
                         for r in res)

    return _ERL.remember((id(ch), p), make, lambda h: h[0] is ch)[1]
