"""Each segment of a link equalised and its statistical eye computed: COM proposes, the eye
decides among COM's own equalisation and variants of it, at the sampling phases a
receiver's clock recovery can lock to."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np

import channels

from ..engines import channel_margin, statistical_eye
from ..engines.com.chain import package
from ..errors import ConfigError
from ..serdes import (
    Cdr,
    Jitter,
    Noise,
    Receiver,
    RxFfe,
    Transmitter,
    TxFfe,
    modulation_order,
)
from ..serdes.limits import check_gain
from .optics import OpticalClass
from .spec import LinkSpec


# ----------------------------------------------------------------------------- segments
@dataclass(frozen=True)
class Segment:
    """One equalised segment of a link, everything needed to rerun it: the channel as the
    receiver sees it (packages included), the chosen transmitter and receiver, the noise
    and jitter, and its statistical eye.

    ``phy.simulate(seg.channel, n_ui, baud_hz=seg.baud_hz, tx=seg.tx, rx=seg.rx,
    noise=seg.noise, jitter=seg.jitter, cdr=seg.cdr)`` checks the eye in the time domain.

    Attributes
    ----------
    name : str
    channel : channels.Channel
    baud_hz : float
    tx, rx, noise, jitter
    eye : StatEye
    ser, der : float
        Detector symbol error ratio; with DFE error propagation (with ``rx.mlsd``, the
        1-tap MLSD's symbol error ratio, :meth:`phy.StatEye.ser_mlsd`).
    equalisation : str
        How the equalisation was chosen: one of COM's candidates (:data:`COM_CHOICE` and
        its variants), or for a fixed one ``"preset"`` with the SerDes's own name if it has
        one (:func:`preset_label`), and where it sampled ("preset, sampled at the pulse
        peak"); ``"module DSP"`` for an optical span.
    com_db : float or None
    delay_s : float
        Time of flight through the segment.
    notes : tuple of str
    cdr : Cdr
        The fixed sampling phase the eye was computed at (pass it to ``phy.simulate``).
    candidates : tuple of (str, float, float)
        Every equalisation and sampling phase tried, with its symbol error ratio at the
        slicer and its detector error ratio with DFE error propagation.
    reference_der : float or None
        With a receiver's impairments modelled (``Serdes(rx_impairments=...)`` or a given
        receiver's own): the detector error ratio of the reference
        (ideal) receiver on the same equalisation and phase, what the impairments cost.
    """

    name: str
    channel: channels.Channel
    baud_hz: float
    tx: Transmitter
    rx: Receiver
    noise: Noise
    jitter: Jitter
    eye: object
    ser: float
    der: float
    equalisation: str
    com_db: float | None
    delay_s: float
    notes: tuple
    cdr: Cdr = field(default_factory=Cdr)
    candidates: tuple = ()
    reference_der: float | None = None

    @property
    def dfe(self) -> np.ndarray:
        """DFE taps used, normalised to the main cursor."""
        return np.asarray(self.eye.link.dfe, dtype=float)


def _check_band(ch: channels.Channel, baud: float, what: str) -> None:
    if ch.f[-1] < baud / 2:
        raise ConfigError(
            f"{what} {ch.name!r} has data only up to {ch.f[-1] / 1e9:.4g} GHz, below the Nyquist frequency "
            f"{baud / 2e9:.4g} GHz of {baud / 1e9:.4g} GBd: it cannot carry this lane rate with this modulation"
        )


_EYES: OrderedDict = OrderedDict()  # recent segments, so a channel met again is not re-equalised
_EYES_MAX = 64


def _equalised_eye(name: str, ch: channels.Channel, spec: LinkSpec, *, extra_psd: float = 0.0,
                   packages: bool | None = None, input_psd: tuple | None = None) -> Segment:
    """The host SerDes over ``ch``: equalisation (fixed or by COM), then the statistical eye.
    Remembered for the same channel object, SerDes, baud, modulation, added noise and
    packages (an optical class's host channel at every fibre length, a search's options)."""
    key = (id(ch), spec.serdes, spec.baud_hz, spec.modulation, float(extra_psd), packages, input_psd)
    try:
        hit = _EYES.get(key)
    except TypeError:  # a SerDes holding something unhashable: no memory
        return _equalise(name, ch, spec, extra_psd, packages, input_psd)
    if hit is not None and hit[0] is ch:
        _EYES.move_to_end(key)
        return replace(hit[1], name=name)
    seg = _equalise(name, ch, spec, extra_psd, packages, input_psd)
    _EYES[key] = (ch, seg)
    if len(_EYES) > _EYES_MAX:
        _EYES.popitem(last=False)
    return seg


def _equalise(name: str, ch: channels.Channel, spec: LinkSpec, extra_psd: float, packages: bool | None,
              input_psd: tuple | None = None) -> Segment:
    """The steps of :func:`_equalised_eye`: the channel with its packages, the candidate
    equalisations (COM's and its variants, or the fixed SerDes), the eye of each at its
    sampling phases, the best by its detector's error ratio, and the segment's notes."""
    s = spec.serdes
    baud = spec.baud_hz
    _check_band(ch, baud, name)
    check_gain(ch, f"{name} {ch.name!r}")  # the packages' cascade would hide an absurd S21 from the eye
    p = s.com_params(baud)
    use_pkg = s.packages if packages is None else packages
    full = _with_packages(ch, p) if use_pkg else ch
    com_db = None
    if s.tx is None:
        p, com_db, candidates = _com_candidates(ch, p, spec.modulation, extra_psd)
    else:
        candidates = [(preset_label(s), s.tx, s.rx, (s.cdr,) if s.cdr is not None else SAMPLING_PHASES)]
    noise, jitter = _eye_impairments(s, baud, extra_psd, input_psd)
    if s.rx_impairments is not None:  # the real receiver, whatever equalisation it runs
        candidates = [(label, tx, replace(rx, impairments=s.rx_impairments), phases)
                      for label, tx, rx, phases in candidates]
    notes = []
    best, tried, pulse = _best_eye(candidates, full, spec, noise, jitter, notes)
    der, label, eye, tx, rx, cdr, noise = best
    if com_db is not None:
        notes.append(f"COM ({p.name}) {com_db:.2f} dB; equalisation: {label}")
    sv = eye.sigma_v
    if jitter.model == "symbol" and sv.get("jitter", 0.0) > np.hypot(sv.get("rx", 0.0), sv.get("tx", 0.0)):
        notes.append(JITTER_BOUND_NOTE)
    if use_pkg and s.host_class is not None:
        notes.append(host_note(s.host_class, baud, bool(p.mlsd)))
    notes.extend(ami_notes(tx, rx))
    ref = _reference_der(pulse, baud, tx, rx, noise, jitter, cdr)
    return Segment(name, full, baud, tx, rx, noise, jitter, eye, float(eye.ser()), der, label, com_db,
                   float(full.delay_s), tuple(notes), cdr, tuple(tried), ref)


def _with_packages(ch: channels.Channel, p) -> channels.Channel:
    """``ch`` between the reference packages of COM parameters ``p`` (remembered by their
    parameters and grid: every channel of a sweep on one grid has the same)."""
    f = ch.f
    return channels.cascade(package(p, f, "tx"), ch, package(p, f, "rx"))


def _com_candidates(ch: channels.Channel, p, modulation: str, extra_psd: float) -> tuple:
    """COM's search on ``ch`` and the equalisations the eye chooses among: ``(p, COM in dB,
    [(label, tx, rx, sampling phases)])``, ``p`` the COM parameters as the search ran them."""
    if modulation != ("pam4" if p.levels == 4 else "nrz"):
        p = p.with_(levels=modulation_order(modulation))
    if extra_psd > 0:  # let the search see the added noise (it is referred to the same input)
        p = p.with_(eta0_v2_per_hz=p.eta0_v2_per_hz + extra_psd)
    m = channel_margin(ch, p)
    tx, rx_com = m.serdes()
    # the re-adapted candidates solve the fixed Rx FFE taps (MMSE); COM's own candidate
    # keeps its floating taps (178A.1.8.1), which an unconstrained solve over their whole
    # span would overstate
    rx = replace(rx_com, ffe=RxFfe(p.rx_ffe_pre, p.rx_ffe_post) if p.rx_ffe_pre + p.rx_ffe_post
                 else RxFfe(rx_com.ffe.n_pre, rx_com.ffe.n_post))
    # COM proposes, the statistical eye decides: COM's ranking without the Rx FFE
    # can favour a CTLE that costs too much signal when the noise is large; where the
    # clock recovery locks (COM's cursor, 93A-25's Mueller-Muller point with the first
    # DFE tap, or the pulse's peak) is tried too
    flat = replace(rx, ctle=replace(rx.ctle, g_dc_db=0.0, g_dc2_db=0.0)) if rx.ctle is not None else rx
    bare = replace(tx, ffe=TxFfe())
    candidates = [(COM_CHOICE, tx, rx_com, (m.cdr(),)), ("COM's Tx FFE and CTLE", tx, rx, SAMPLING_PHASES),
                  ("COM's Tx FFE, flat CTLE", tx, flat, SAMPLING_PHASES),
                  ("no Tx FFE, COM's CTLE", bare, rx, SAMPLING_PHASES),
                  ("no Tx FFE, flat CTLE", bare, flat, SAMPLING_PHASES)]
    return p, float(m.com_db), candidates


def _eye_impairments(s, baud: float, extra_psd: float, input_psd: tuple | None) -> tuple[Noise, Jitter]:
    """The SerDes' noise and jitter at ``baud``, with the shaped input noise ``input_psd`` or
    else the flat added density ``extra_psd`` (its mean, which COM's search saw)."""
    noise, jitter = s.impairments(baud)
    if input_psd is not None:  # the shaped noise in the eye; extra_psd, its flat mean, was COM's
        noise = replace(noise, input_psd=input_psd)
    elif extra_psd > 0:
        noise = replace(noise, rx_noise_psd_v2_per_hz=noise.rx_noise_psd_v2_per_hz + extra_psd)
    return noise, jitter


def _best_eye(candidates: list, full: channels.Channel, spec: LinkSpec, base_noise: Noise, jitter: Jitter,
              notes: list) -> tuple:
    """The statistical eye of every candidate at each of its sampling phases, on one pulse
    response of ``full``: ``(best, tried, pulse)``, ``best`` the ``(DER, label, eye, tx, rx,
    cdr, noise)`` of the lowest detector error ratio (a later one must beat it by 1 %),
    ``tried`` every ``(label, SER, DER)``. Appends to ``notes``."""
    baud = spec.baud_hz
    best, tried, pulse = None, [], None
    for label, tx, rx, phases in candidates:
        noise = _settled(base_noise, tx)
        if tx.modulation != spec.modulation:
            raise ConfigError(f"the Serdes transmitter modulates {tx.modulation}, the link {spec.modulation}")
        if pulse is None:  # every candidate and phase reads the same pulse
            pulse = full.pulse_response(baud, EYE_SAMPLES_PER_UI)
        if noise.rx_noise_psd_v2_per_hz > 0 and rx.bandwidth_hz is None:
            rx = replace(rx, bandwidth_hz=0.75 * baud)
            notes.append("receiver bandwidth set to 0.75 baud for the noise density")
        for phase in phases:
            cdr = phase if isinstance(phase, Cdr) else Cdr(phase=phase)
            eye = statistical_eye(pulse, baud_hz=baud, tx=tx, rx=rx, noise=noise, jitter=jitter, cdr=cdr,
                                  samples_per_ui=EYE_SAMPLES_PER_UI, columns="sampling")
            der = float(eye.ser_mlsd() if rx.mlsd else eye.ser_dfe())
            what = label if isinstance(phase, Cdr) else f"{label}, sampled at {_PHASE_WORDS[phase]}"
            tried.append((what, float(eye.ser()), der))
            if best is None or der < best[0] * 0.99:
                best = (der, what, eye, tx, rx, cdr, noise)
    return best, tried, pulse


def _reference_der(pulse, baud: float, tx: Transmitter, rx: Receiver, noise: Noise, jitter: Jitter,
                   cdr: Cdr) -> float | None:
    """With an impaired receiver, the reference receiver's DER on the same equalisation
    (None for an ideal one)."""
    if rx.impairments is None or rx.impairments.ideal:
        return None
    ref_eye = statistical_eye(pulse, baud_hz=baud, tx=tx, rx=replace(rx, impairments=None), noise=noise,
                              jitter=jitter, cdr=cdr, samples_per_ui=EYE_SAMPLES_PER_UI, columns="sampling")
    return float(ref_eye.ser_mlsd() if rx.mlsd else ref_eye.ser_dfe())


def _settled(noise: Noise, tx: Transmitter) -> Noise:
    """A shaped input noise (``input_psd``, only a linear optical path's) is referred to the
    transmitter's settled levels: the linear module's driver sets the laser's OMA on the
    levels long runs settle at (802.3 measures OMA_outer there), which the host's Tx FFE
    scales by its DC gain ``sum(c)``; the optical noise, fixed against the OMA, scales with
    it (its density by ``sum(c)^2``). Other noise is unchanged."""
    if noise.input_psd is None:
        return noise
    g = float(np.sum(tx.ffe.coefficients))
    if g == 1.0:
        return noise
    f, dens = noise.input_psd
    return replace(noise, input_psd=(f, tuple((np.asarray(dens) * g * g).tolist())))


#: The note a segment carries where jitter, not noise, sets its eye (the bound stated in
#: :mod:`phy.engines.stateye`).
JITTER_BOUND_NOTE = ("jitter, not noise, dominates this eye: the statistical eye takes the other symbols' random "
                     "jitter as Gaussian, which understates its tail (half phy.simulate's error ratio at 1e-4 in "
                     "such a case; within 4 % where noise dominates)")


def host_note(host_class: str, baud_hz: float, mlsd: bool = False) -> str:
    """The host assumption of a CR host (:attr:`phy.Serdes.host_class`) in words."""
    from ..engines.com.params import cr_host_line

    ln = cr_host_line(host_class)
    rx = ("802.3ck KR's reference receiver with its floating DFE taps (3 groups of 3 within 40 UI)"
          if np.isclose(baud_hz, 53.125e9) else
          "802.3dj's CR reference receiver with its floating Rx FFE taps (178A.1.8.1: 2 groups of 4 within 87)")
    return (f"host: 802.3dj CR host class {host_class} at each end (P802.3dj/D3.3 Table 179-23: package line 1 "
            f"{ln.lengths_m[0] * 1e3:g} mm, {ln.host_m * 1e3:g} mm of host PCB on Table 179-22's line); the channel "
            f"runs between the hosts' connectors; receiver: {rx}; "
            + ("with MLSD (178A.1.10)" if mlsd else "no MLSD"))


#: Samples per UI of the pulse the segments' statistical eyes read (the engines' default).
EYE_SAMPLES_PER_UI = 32

#: The candidate that is COM's equalisation as COM found it: its Tx FFE, CTLE and Rx FFE
#: taps, sampled at its cursor.
COM_CHOICE = "COM's equalisation at COM's cursor"
#: Sampling phases the roll-up tries for each re-adapted equalisation (:class:`phy.Cdr` ``phase``).
SAMPLING_PHASES = ("mm-dfe", "peak")
_PHASE_WORDS = {"mm-dfe": "the Mueller-Muller point with the first DFE tap (93A-25)", "peak": "the pulse peak"}
#: The label of a fixed equalisation (a SerDes given its ``tx`` and ``rx``): the name inputs
#: give that mode (``link.equalisation = "preset"``).
PRESET = "preset"


def ami_notes(tx: Transmitter, rx: Receiver) -> list:
    """What a segment's notes say of its IBIS-AMI models: which, with which parameters, and
    what stands for the receiver model's DFE."""
    out = []
    for side, part in (("Tx", tx), ("Rx", rx)):
        m = part.ami
        if m is not None:
            given = ", ".join(f"{k}={v!r}" for k, v in m.parameters.items()) or "the .ami file's defaults"
            out.append(f"IBIS-AMI {side} model {m.name!r} ({m.library.name}): its AMI_Init response in the eye, "
                       f"parameters {given}")
    if rx.ami is not None:
        out.append(f"the Rx model's DFE is taken as {rx.dfe.n_taps} zero-forcing taps after its AMI_Init response "
                   "(AMI_Init is linear: IBIS-AMI leaves the DFE to the tool)")
    return out


def preset_label(serdes) -> str:
    """How a fixed equalisation is labelled: ``"preset"``, with the SerDes's name when it
    has one of its own (not the default ``"serdes"``, nor ``"preset"`` itself):
    ``"preset (vendor_224g)"``. A segment's label then adds where it sampled."""
    name = getattr(serdes, "name", None)
    return PRESET if not name or name in ("serdes", PRESET) else f"{PRESET} ({name})"


def _optical_eye(name: str, oc: OpticalClass, spec: LinkSpec) -> Segment:
    """The optical span equalised by the module DSP, noise from the optical budget."""
    baud = spec.baud_hz
    M = modulation_order(spec.modulation)
    b = oc.path.budget(M)
    swing = 0.5
    rel = b.equivalent_noise_rms_a / (b.levels_a[-1] - b.levels_a[0])  # rms over the outer amplitude
    noise = Noise(rx_noise_rms_v=rel * 2 * swing)
    ch = oc.path.channel()
    tx = Transmitter(spec.modulation, swing_v=swing)
    cdr = Cdr(phase="mm-dfe")
    eye = statistical_eye(ch, baud_hz=baud, tx=tx, rx=oc.dsp_rx, noise=noise, cdr=cdr, columns="sampling")
    notes = ((f"optical budget: received OMA {b.received_oma_dbm:.2f} dBm, SNR {b.snr_db:.2f} dB, "
             f"SER without ISI {b.ser:.3g}"),)
    return Segment(name, ch, baud, tx, oc.dsp_rx, noise, Jitter(), eye, float(eye.ser()), float(eye.ser_dfe()),
                   "module DSP", None, oc.path.delay_s, notes, cdr)


def segments(spec: LinkSpec) -> tuple[Segment, ...]:
    """The equalised segments of ``spec``'s medium: one for copper and linear optics, one per
    channel for retimed copper, three for DSP-retimed optics (host to module, the optics,
    module to host), two for linear-receive optics (host to module; the optics and the far
    host channel into the host's receiver).

    Parameters
    ----------
    spec : LinkSpec
        The link; its medium, SerDes, lane rate and modulation set the segments.

    Returns
    -------
    tuple of Segment
        The segments in order along the link, each with its equalised eye.
    """
    if not isinstance(spec, LinkSpec):
        raise ConfigError(f"segments needs a LinkSpec, got {type(spec).__name__}")
    chs = spec.electrical_segments
    if len(chs) == 1:
        return (_equalised_eye("channel", chs[0], spec),)
    if chs:  # retimed copper: each segment its own eye
        return tuple(_equalised_eye(f"segment_{i + 1}", c, spec) for i, c in enumerate(chs))
    oc = spec.optics
    if oc.kind == "dsp":
        host = _equalised_eye("host_to_module", oc.host, spec, packages=oc.packages)
        optical = _optical_eye("optics", oc, spec)
        back = replace(host, name="module_to_host")
        return (host, optical, back)
    if oc.kind == "lro":  # the module's DSP retimes the transmit side; the receive side is linear into the host
        host = _equalised_eye("host_to_module", oc.host, spec, packages=oc.packages)
        ch = channels.cascade(oc.path.channel(oc.host.f), oc.host)
        return (host, _linear_eye("optics_host", ch, oc, spec))
    # linear optics: host -> (the driver's equaliser) -> optics -> host, the optical noise at the optical receiver
    near = (oc.host, oc.driver_eq(oc.host.f, spec.baud_hz)) if oc.module_eq_db > 0 else (oc.host,)
    ch = channels.cascade(*near, oc.path.channel(oc.host.f), oc.host)
    return (_linear_eye("host_optics_host", ch, oc, spec),)


def _linear_eye(name: str, ch: channels.Channel, oc: OpticalClass, spec: LinkSpec) -> Segment:
    """A linear optical segment ending in the host's receiver: the optical receiver's noise
    referred through the far host channel to the host's input. The noise is set against the
    signal's settled outer levels at the optical receiver (what the OMA measures): the full
    swing through the near host channel and the LPO driver's equaliser at 1 GHz (LRO: the
    module DSP drives the laser directly), then scaled by each candidate Tx FFE's DC gain
    (:func:`_settled`)."""
    M = modulation_order(spec.modulation)
    b = oc.path.budget(M)
    p = spec.serdes.com_params(spec.baud_hz)
    swing = spec.serdes.tx.swing_v if spec.serdes.tx is not None else p.a_v
    f = oc.host.f
    h_host = np.abs(oc.host.sdd21)
    rel = b.equivalent_noise_rms_a / (b.levels_a[-1] - b.levels_a[0])
    k = int(np.argmin(np.abs(f - 1e9)))
    if oc.kind == "lro":  # the module's DSP drives the laser: no host channel before the optics
        h_near = 1.0
    else:
        h_near = h_host[k] * (float(np.abs(oc.driver_eq(f, spec.baud_hz).sdd21[k])) if oc.module_eq_db > 0 else 1.0)
    sigma_v = rel * 2 * swing * float(h_near)  # at the optical receiver, against the signal's settled levels there
    bn = b.noise_bandwidth_hz
    # the optical receiver's noise, flat over its noise bandwidth (a 4th-order roll-off past
    # it), crosses the far host channel: its density at the host's input follows |H_far|^2
    shape = h_host**2 / (1 + (f / bn) ** 8)
    dens = sigma_v**2 / bn * shape
    flat = float(np.mean(dens[f <= bn]))  # COM's proposal takes it flat, its in-band mean (COM has no shaped one)
    e = _equalised_eye(name, ch, spec, extra_psd=flat, packages=oc.packages,
                       input_psd=(tuple(f.tolist()), tuple(dens.tolist())))
    notes = e.notes + ((f"optical budget: received OMA {b.received_oma_dbm:.2f} dBm, SNR {b.snr_db:.2f} dB; "
                       f"its noise at the host's input shaped by the far host channel (in-band mean "
                       f"{flat:.3g} V^2/Hz)"),)
    return replace(e, delay_s=e.delay_s + oc.path.delay_s, notes=notes)
