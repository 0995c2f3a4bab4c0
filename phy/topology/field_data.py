"""The public field failure figures :mod:`phy.topology.fit_rates` is calibrated to and
judged against (:class:`FieldFigure`: events over exposure, hardware, workload, citation),
and the field fabrics they were measured on, counted part by part (:class:`FieldFabric`,
:func:`hpn_link`, :func:`llama3_fabric`). Which figure trains and which are held out is
said at each and in :mod:`phy.topology.fit_rates`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validate import integer, number
from ..errors import ConfigError

__all__ = ["AZURE_SWITCH", "FIELD", "FieldFabric", "FieldFigure", "HOURS_PER_DAY", "HOURS_PER_MONTH",
           "HPN_NIC_TOR_LINK", "HPN_TOR_CRASH", "LLAMA3_NETWORK", "META_ECOC_CPO", "META_ECOC_PLUGGABLE",
           "hpn_link", "llama3_fabric"]

HOURS_PER_DAY = 24.0
HOURS_PER_MONTH = 730.5  # 8766 h / 12


@dataclass(frozen=True)
class FieldFigure:
    """One public field measurement: ``events`` over ``exposure_hours`` device- or
    fabric-hours of ``unit`` (``rate_per_hour`` their ratio), with the hardware, the software
    or workload, and the citation."""

    name: str
    events: float
    exposure_hours: float
    unit: str
    hardware: str
    software: str
    source: str

    @property
    def rate_per_hour(self) -> float:
        return self.events / self.exposure_hours

    @property
    def fit(self) -> float:
        """The rate in FIT (failures per 1e9 hours of ``unit``)."""
        return self.rate_per_hour * 1e9


#: Held out. Llama 3 405B pre-training, 54 days on 16,384 H100 GPUs: 466 job
#: interruptions, 419 unexpected, 35 of them (8.4 %) "Network Switch/Cable" (Llama Team,
#: "The Llama 3 Herd of Models", arXiv 2407.21783, 2024, Table 5; topology in sect. 3.3.1:
#: Meta's 24K-GPU RoCE cluster, 400 Gb/s per GPU, three-layer Clos).
LLAMA3_NETWORK = FieldFigure(
    "llama3_network", 35.0, 54 * HOURS_PER_DAY, "job fabric",
    "16,384 H100 GPUs, 400 Gb/s RoCE NICs, 3-layer Clos (Minipack2 ToRs)", "Llama 3 405B pre-training",
    "Llama 3 Herd of Models, arXiv 2407.21783, Table 5 (Network Switch/Cable 35 in 54 days)")
#: Input (switches). Alibaba HPN: "about 0.051 % of ToR switches encounter critical errors
#: and crashes" a month in its LLM training clusters (Qian et al., "Alibaba HPN: A Data
#: Center Network for Large Language Model Training", SIGCOMM 2024, sect. 2.3, Fig. 5).
HPN_TOR_CRASH = FieldFigure(
    "hpn_tor_crash", 0.051e-2, HOURS_PER_MONTH, "ToR switch", "Alibaba LLM-training ToR switches",
    "LLM training clusters", "Alibaba HPN, SIGCOMM 2024, sect. 2.3 (0.051 % of ToRs crash a month)")
#: TRAINING figure. Alibaba HPN: "0.057 % of NIC-ToR links fail each month" (same section),
#: link flaps counted apart; the links are 200 Gb/s NIC ports to a ToR, taken as optical (the
#: paper: "thousands of optical modules and links") with 2 lanes of 100G and a module at each
#: end (assumption), the link :func:`hpn_link` counts.
HPN_NIC_TOR_LINK = FieldFigure(
    "hpn_nic_tor_link", 0.057e-2, HOURS_PER_MONTH, "NIC-ToR link",
    "Alibaba 2x200 Gb/s NICs to ToRs, optical modules", "LLM training clusters",
    "Alibaba HPN, SIGCOMM 2024, sect. 2.3 (0.057 % of NIC-ToR links fail a month)")
#: Held out. Meta's field data at ECOC 2025: pluggable optical modules 0.5 to 1 million
#: device-hours MTBF (taken at the geometric middle, 0.71 M h, one failure); CPO 2.6 M
#: device-hours (secondary: APNIC blog and vendor summaries of the talk; primary not read).
META_ECOC_PLUGGABLE = FieldFigure(
    "meta_ecoc_pluggable", 1.0, math.sqrt(0.5e6 * 1e6), "pluggable module (800G class)",
    "Meta fleet pluggable transceivers", "production fabric", "Meta at ECOC 2025 (S: APNIC blog summary)")
META_ECOC_CPO = FieldFigure(
    "meta_ecoc_cpo", 1.0, 2.6e6, "CPO 800G port (engine share and its laser)",
    "Broadcom Tomahawk 5 CPO switches at Meta", "production fabric", "Meta at ECOC 2025 (S: APNIC blog summary)")
#: Check only (a different population). Microsoft Azure: 2 % of 180,000 datacenter switches
#: fail within 3 months of deployment, every cause (hardware, power, software) included, half
#: of the outages under 6 minutes (Singh et al., "Surviving switch failures in cloud
#: datacenters", SIGCOMM CCR 51(2), 2021).
AZURE_SWITCH = FieldFigure(
    "azure_switch", -math.log(1 - 0.02), 3 * HOURS_PER_MONTH, "datacenter switch",
    "180,000 Azure datacenter switches", "cloud datacenters", "Singh et al., SIGCOMM CCR 2021 (2 % in 3 months)")
FIELD = (LLAMA3_NETWORK, HPN_TOR_CRASH, HPN_NIC_TOR_LINK, META_ECOC_PLUGGABLE, META_ECOC_CPO, AZURE_SWITCH)


@dataclass(frozen=True)
class FieldFabric:
    """A field fabric in counts: ``links`` as (name, kind, count, lanes, lanes per module)
    and ``switches``, what :func:`fabric_fit` needs."""

    name: str
    links: tuple
    switches: int
    notes: tuple = ()


def hpn_link() -> FieldFabric:
    """One Alibaba HPN NIC-ToR link (the training figure's unit): 200 Gb/s, 2 lanes of 100G,
    DSP optics with a 2-lane module at each end (assumption)."""
    return FieldFabric("hpn_nic_tor_link", (("nic_tor", "dsp_optics", 1, 2, 2),), 0)


def llama3_fabric(n_gpus: int = 16384, gpus_per_rack: int = 16, pod_gpus: int = 3072,
                  tor_uplinks_per_gpu: int = 2, pod_oversubscription: float = 7.0,
                  cluster_switches_per_pod: int = 16, aggregation_switches: int = 16,
                  in_rack: str = "passive_copper") -> FieldFabric:
    """The fabric a Llama 3 job of ``n_gpus`` uses, in counts (Llama 3 paper sect. 3.3.1):
    one 400 Gb/s NIC per GPU to its rack's ToR (``gpus_per_rack`` 16: two servers and one
    Minipack2 ToR a rack), each ToR up to the cluster switches of its pod (3,072 GPUs, 192
    racks) with ``tor_uplinks_per_gpu`` 400G uplinks a GPU ("RTSW uplink capacity to be 1:2
    under-subscribed", Gangidi et al., "RDMA over Ethernet for Distributed AI Training at
    Meta Scale", SIGCOMM 2024, as quoted by secondary sources; G. Lockwood's notes on Meta's
    H100 clusters say the same), the pods to aggregation switches at 1:7. Assumptions: the in-rack
    NIC-ToR run is passive copper (a 400G DAC within one rack; ``in_rack="dsp_optics"`` for
    optics), 4 lanes of 100G; the uplinks are 400G DSP optics of 4 lanes; each ToR's uplinks
    spread over 16 cluster switches a pod; 16 aggregation switches (the chassis counts
    weigh little: 112 of 1,136 switches); the pod uplinks in proportion to the job's GPUs. The in-rack medium matters most: a rack's NICs and its ToR
    sit within DAC reach, and Meta's 2024 RoCE fabric write-up describes copper in the rack
    (recalled, not re-read for this calibration); with optics there instead, the
    prediction rises by half (60 to 87 hard failures in 54 days)."""
    n = integer(n_gpus, "n_gpus", 1)
    racks = math.ceil(n / integer(gpus_per_rack, "gpus_per_rack", 1))
    pods = math.ceil(n / integer(pod_gpus, "pod_gpus", 1))
    up = round(n / number(pod_oversubscription, "pod_oversubscription", positive=True)) if pods > 1 else 0
    if in_rack not in ("passive_copper", "aec", "dsp_optics"):
        raise ConfigError(f"in_rack must be passive_copper, aec or dsp_optics, got {in_rack!r}")
    per = integer(tor_uplinks_per_gpu, "tor_uplinks_per_gpu", 1)
    links = (("nic_tor", in_rack, n, 4, 4), ("tor_cluster", "dsp_optics", n * per, 4, 4),
             ("cluster_aggregation", "dsp_optics", up, 4, 4))
    sw = racks + pods * integer(cluster_switches_per_pod, "cluster_switches_per_pod", 0) + (
        integer(aggregation_switches, "aggregation_switches", 0) if pods > 1 else 0)
    return FieldFabric(f"llama3_{n}", links, sw, (f"{racks} ToRs, {pods} pods",))
