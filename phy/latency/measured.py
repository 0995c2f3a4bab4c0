"""Public measurements of NCCL collectives on NVLink domains, the figures the collective
model is fitted to (``train``) and judged on (``test``; ``context``: a figure measured
under conditions the model only approximates).

Each entry: ``area`` (``all_reduce`` or ``send_recv``), ``fabric`` (``h100``: an
H100/H200-class HGX board, NVLink4 at 450 GB/s per direction, 4 NVSwitch chips;
``b200``: an HGX B200 board; ``nvl72``: a GB200 NVL72 rack), ``p`` GPUs, ``size`` bytes
per GPU, ``quantity`` (``time_s`` or ``busbw``: nccl-tests' bus bandwidth in bytes/s),
``value``, ``algorithm`` forced by the run (None: NCCL's own choice), ``symmetric``
(NCCL 2.27 symmetric kernels on registered buffers), ``software``, ``source``, ``set``;
``nvls`` (default True): False where the run shows NCCL ran without NVLink SHARP.
"""

from __future__ import annotations

GiB = 2**30

MEASUREMENTS = (
    # ---- training set of Software.kernel_s and peer_s (fit_software): 8-byte all-reduce, symmetric kernels
    dict(area="all_reduce", fabric="b200", p=8, size=8, quantity="time_s", value=3.0e-6, algorithm=None,
         symmetric=True, software="NCCL 2.27 symmetric kernels", set="train",
         source="NVIDIA/nccl issue 1940; nccl-tests issue 333 (NVIDIA: 'just over 3 us')"),
    dict(area="all_reduce", fabric="h100", p=8, size=8, quantity="time_s", value=2.3e-6, algorithm=None,
         symmetric=True, software="NCCL 2.27 symmetric kernels, H200", set="train",
         source="NVIDIA/nccl issue 1940"),
    dict(area="all_reduce", fabric="nvl72", p=32, size=8, quantity="time_s", value=6.3e-6, algorithm=None,
         symmetric=True, software="NCCL 2.27 symmetric kernels", set="train",
         source="NCCL 2.27 announcement (system named in nccl-tests issue 333)"),
    # ---- held out
    dict(area="all_reduce", fabric="h100", p=2, size=128, quantity="time_s", value=5.56e-6, algorithm="nvls",
         symmetric=False, software="NCCL 2.20.5, CUDA graphs, NCCL_ALGO=NVLS, H100", set="test",
         source="NVIDIA/nccl issue 1259"),
    *(dict(area="all_reduce", fabric="h100", p=8, size=s, quantity="time_s", value=v, algorithm=None,
           symmetric=False, software="nccl-tests all_reduce_perf, NCCL default, 8 x H20 (NVLink4, 900 GB/s "
           "bidirectional as H100)", set="test", source="deepseek-ai/DeepEP issue 303 (out-of-place)")
      for s, v in ((8, 12.49e-6), (1024, 16.38e-6), (4096, 16.69e-6))),
    dict(area="all_reduce", fabric="h100", p=8, size=GiB, quantity="busbw", value=480e9, algorithm=None,
         symmetric=False, software="NCCL default (NVLS), H100", set="test",
         source="nccl-tests issue 212 (sjeaugey: peak busBw ~480 GB/s on 8 GPUs)"),
    dict(area="all_reduce", fabric="h100", p=8, size=4 * GiB, quantity="busbw", value=475e9, algorithm=None,
         symmetric=False, software="NCCL 2.20.3 default, 8 x H200", set="test",
         source="nccl-tests issue 272 (peak 475 GB/s)"),
    dict(area="all_reduce", fabric="h100", p=8, size=GiB, quantity="busbw", value=370e9, algorithm="ring",
         symmetric=False, software="NCCL_ALGO=RING, H100", set="test",
         source="nccl-tests issue 212 (sjeaugey: 370 GB/s with NCCL_ALGO=RING)"),
    dict(area="all_reduce", fabric="h100", p=5, size=2 * GiB, quantity="busbw", value=420e9, algorithm="nvls",
         symmetric=False, software="NCCL_ALGO=NVLS, H100 SXM", set="test", source="NVIDIA/nccl issue 1455"),
    dict(area="all_reduce", fabric="h100", p=6, size=2 * GiB, quantity="busbw", value=440e9, algorithm="nvls",
         symmetric=False, software="NCCL_ALGO=NVLS, H100 SXM", set="test", source="NVIDIA/nccl issue 1455"),
    dict(area="all_reduce", fabric="h100", p=7, size=2 * GiB, quantity="busbw", value=460e9, algorithm="nvls",
         symmetric=False, software="NCCL_ALGO=NVLS, H100 SXM", set="test", source="NVIDIA/nccl issue 1455"),
    dict(area="all_reduce", fabric="h100", p=4, size=2 * GiB, quantity="busbw", value=367e9, algorithm="ring",
         symmetric=False, software="NCCL_ALGO=RING, H100 SXM (365-370 GB/s for 2 to 8 GPUs)", set="test",
         source="NVIDIA/nccl issue 1455"),
    dict(area="all_reduce", fabric="b200", p=8, size=GiB, quantity="busbw", value=830e9, algorithm="ring",
         symmetric=False, software="NCCL ring, B200", set="test", source="NVIDIA/nccl issue 1807 ('830+')"),
    # NVL72: the run's shape (a fixed ~560 us per operation, what 142 ring steps take; NVLS's
    # is 25 us in NCCL's own model) says NCCL ran without NVLS, so NCCL's choice is taken
    # with NVLS unavailable ("nvls": False); validate_collectives also shows NVLS's figures
    *(dict(area="all_reduce", fabric="nvl72", p=72, size=s, quantity="busbw", value=v, algorithm=None,
           symmetric=False, nvls=False, software="NCCL 2.26.2, MNNVL, out-of-place", set="test",
           source="coreweave/nccl-tests README (PR 43), GB200 NVL72 single rack")
      for s, v in ((GiB // 2, 586.06e9), (GiB, 681.17e9), (2 * GiB, 757.78e9), (4 * GiB, 839.16e9),
                   (8 * GiB, 834.57e9))),
    dict(area="send_recv", fabric="h100", p=2, size=GiB, quantity="busbw", value=370e9, algorithm=None,
         symmetric=False, software="NCCL, H100", set="test",
         source="nccl-tests issue 212 (sjeaugey: ~370 GB/s effective NVLink bandwidth, seen as busBw of "
                "non-allreduce operations)"),
    dict(area="send_recv", fabric="h100", p=2, size=1024, quantity="time_s", value=3.7e-6, algorithm=None,
         symmetric=False, software="sendrecv_perf, CUDA graphs, 4 H800 (8 NVLinks)", set="context",
         source="NVIDIA/nccl issue 1984"),
)

#: NCCL's choice on an 8 x H100 board, from its debug log: ring LL from 8 B to 1 MB, NVLS
#: Simple from 2 MB (NVIDIA/nccl-tests issue 309, kiskra-nvidia's thread, NCCL 2.2x).
H100_CROSSOVER = {"ring_ll_up_to": 2**20, "nvls_from": 2**21}
