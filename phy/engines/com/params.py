"""COM parameter sets (:class:`ComParams`): the reference package, the filters, the
equaliser grids, the noise and jitter figures, and presets for 802.3ck KR (Annex 163A)
and 802.3dj KR (Annex 178A)."""

from __future__ import annotations

import functools
import itertools
from dataclasses import asdict, dataclass, replace

import numpy as np

import channels
from channels import media

from ..._validate import integer, number
from ...errors import ConfigError

__all__ = ["CR_HOST_CLASSES", "ComParams", "PackageCase", "PackageLine", "cr_host_line"]


@dataclass(frozen=True)
class PackageLine:
    """One end's package transmission line (93A-9..14; 802.3dj's Table 178-14 classes):
    segment lengths (m) and impedances (ohm, differential), the loss constants as 93A
    writes them (``gamma0`` per mm, ``a1`` in sqrt(ns)/mm, ``a2`` and ``tau`` in ns/mm), and
    a partial host channel between the package and the channel (``host_m`` of PCB line at
    ``host_z_ohm``, 802.3dj CR's Table 179-22; none when 0)."""

    lengths_m: tuple
    z_c_ohm: tuple = (87.5, 92.5)
    gamma0_per_mm: float = 5e-4
    a1: float = 8.9e-4
    a2: float = 2e-4
    tau_ns_per_mm: float = 6.141e-3
    host_m: float = 0.0
    host_z_ohm: float = 92.5
    host_gamma0_per_mm: float = 0.0
    host_a1: float = 5.95e-4
    host_a2: float = 2.6e-5
    host_tau_ns_per_mm: float = 5.79e-3


@dataclass(frozen=True)
class PackageCase:
    """One package test case (the COM spreadsheets' ``z_p select`` columns; 802.3dj's
    Test 1 and Test 2 per package class, CR's host-class pairs): the package line at the
    victim's transmitter (``tx``) and receiver (``rx``), and at a NEXT and a FEXT
    aggressor's transmitter (default: ``tx``'s). COM is computed for every case of a
    parameter set and is the lowest (each test case must pass)."""

    name: str
    tx: PackageLine
    rx: PackageLine
    next: PackageLine | None = None
    fext: PackageLine | None = None


@dataclass(frozen=True)
class ComParams:
    """A COM parameter set (SI units; grids as tuples).

    Tx FFE grids are the values each tap takes, ``c(-3), c(-2), c(-1), c(1)``; ``c(0) = 1 -
    sum|c|`` must stay at or above ``c0_min``. With an Rx FFE (``rx_ffe_pre``,
    ``rx_ffe_post`` taps; each within ``rx_ffe_limit`` times the cursor tap) the FFE and DFE
    are optimised by MMSE at every setting of the grid (178A, :mod:`.mmse`), each at its best
    sampling time among ``ts_range_samples`` (first, last) samples from the equalised
    pulse's peak (default half a UI either side; ``rx_ffe_search="rerank"`` instead takes the
    ``mmse_candidates`` best settings by the FOM without the Rx FFE, faster and not 178A's
    method; floating Rx FFE taps, 178A.1.8.1: ``rx_ffe_float_groups`` groups of
    ``rx_ffe_float_taps`` within ``rx_ffe_span_ui`` taps, each within
    ``rx_ffe_float_limit``, placed at the ``mmse_candidates`` best settings; the quantiser
    of 178A.1.7.6, ``adc_bits`` (``N_qb``, 0: none) clipping with ``adc_clip_probability``
    (``P_qc``), its noise added at those settings;
    ``ts_search="pruned"`` tries every fourth
    first and the rest only for settings within ``ts_prune_db`` of the best so far, see
    :func:`.mmse.mmse_grid`). CTLE frequencies are multiples of the baud
    rate. Floating DFE taps (the reference code's ``N_bg``, ``N_bf``, ``N_f``, ``bmaxg``,
    ``N_tail_start``, ``B_float_RSS_MAX``): ``dfe_float_groups`` banks of ``dfe_float_taps``
    taps within ``dfe_float_span_ui`` UI of the cursor, each within ``dfe_float_limit``,
    those from ``dfe_float_tail_start_ui`` on within ``dfe_float_tail_rss`` root sum of
    squares. Package capacitances are per leg (F), lengths in m, ``gamma0_per_mm`` per mm, ``a1`` in
    sqrt(ns)/mm and ``a2``, ``tau`` in ns/mm as 93A writes them. ``fom_xt_phase``: the
    crosstalk in the figure of merit at each aggressor's worst sampling phase, as 93A-33/34
    write it (``"worst"``), or averaged over its phases, as newer reference code does
    (``"average"``). ``z_p_fext_m`` (default: ``z_p_tx_m``) is a FEXT aggressor's
    transmitter package. ``package_cases``: the package test cases
    (:class:`PackageCase`) COM is the lowest over; empty: the one package these fields set.
    ``mlsd``: 802.3dj's MLSD reference receiver (178A.1.10, :mod:`.mlsd`): COM with one DFE
    tap plus a 1-tap MLSD's advantage, evaluated with the receiver noise raised until that
    COM falls by ``mlsd_dcom_an_db``; needs exactly one fixed DFE tap.
    """

    name: str
    baud_hz: float
    levels: int = 4
    der0: float = 1e-4
    t_r_s: float = 8e-12
    r_lm: float = 0.95
    a_v: float = 0.413
    a_fe: float = 0.413
    a_ne: float = 0.608
    snr_tx_db: float = 33.0
    eta0_v2_per_hz: float = 8.2e-18
    sigma_rj_ui: float = 0.01
    a_dd_ui: float = 0.02
    f_r: float = 0.75
    ctle_fz: float = 1 / 2.5
    ctle_fp1: float = 1 / 2.5
    ctle_fp2: float = 1.0
    ctle_flf: float = 1 / 80
    g_dc_db: tuple = tuple(float(-g) for g in range(21))
    g_dc2_db: tuple = tuple(float(-g) for g in range(7))
    c_m3: tuple = (0.0,)
    c_m2: tuple = (0.0,)
    c_m1: tuple = (0.0,)
    c_p1: tuple = (0.0,)
    c0_min: float = 0.5
    dfe_max: tuple = (1.0,)
    dfe_min: tuple = (-1.0,)
    dfe_float_groups: int = 0
    dfe_float_taps: int = 3
    dfe_float_span_ui: int = 40
    dfe_float_limit: float = 0.05
    dfe_float_tail_start_ui: int = 0
    dfe_float_tail_rss: float = float("inf")
    r_0: float = 50.0
    r_d: float = 50.0
    c_d_f: tuple = (1.2e-13,)
    l_s_h: tuple = (0.0,)
    c_b_f: float = 0.0
    c_p_f: float = 0.87e-13
    z_c_ohm: tuple = (87.5,)
    z_p_tx_m: tuple = (12e-3,)
    z_p_rx_m: tuple = (12e-3,)
    z_p_next_m: tuple = (12e-3,)
    z_p_fext_m: tuple | None = None
    gamma0_per_mm: float = 5e-4
    a1: float = 8.9e-4
    a2: float = 2e-4
    tau_ns_per_mm: float = 6.141e-3
    samples_per_ui: int = 32
    rx_ffe_pre: int = 0
    rx_ffe_post: int = 0
    rx_ffe_limit: float = float("inf")
    rx_ffe_search: str = "every"
    rx_ffe_float_groups: int = 0
    rx_ffe_float_taps: int = 4
    rx_ffe_span_ui: int = 0
    rx_ffe_float_limit: float = 0.05
    adc_bits: int = 0
    adc_clip_probability: float = 1e-7
    mmse_candidates: int = 24
    ts_range_samples: tuple | None = None
    ts_search: str = "full"
    ts_prune_db: float = 1.0
    fom_xt_phase: str = "worst"
    package_cases: tuple = ()
    mlsd: bool = False
    mlsd_dcom_an_db: float = 3.0
    lines: tuple | None = None
    source: str = ""

    @property
    def n_tx_settings(self) -> int:
        return len(self._tx_grid())

    @property
    def n_ctle_settings(self) -> int:
        return len(self.g_dc_db) * len(self.g_dc2_db)

    def _tx_grid(self) -> np.ndarray:
        """Tx FFE settings ``(n, 5)``: ``c(-3), c(-2), c(-1), c(0), c(1)`` with ``c(0) >= c0_min``
        (built once for the same tap ranges, as a rack's every length asks; a copy each call,
        writeable, as the kernels' signatures expect)."""
        grid = _tx_grid(tuple(self.c_m3), tuple(self.c_m2), tuple(self.c_m1), tuple(self.c_p1), float(self.c0_min))
        return grid.copy()

    @classmethod
    def ieee_802_3ck_kr(cls) -> ComParams:
        """100GBASE-KR1 (802.3ck, 53.125 GBd PAM4, Annex 163A) as in the reference COM
        configuration sheet ``config_com_ieee8023_93a=3ck_SA_KR_08_17_2022.xlsx`` (in the
        public MATLAB COM repository's ``config_sheets_100G``): DER0 1e-4, T_r 7.5 ps
        (``FORCE_TR`` 1), eta_0 8.2e-9 V^2/GHz, 12 DFE taps (the sheet's b_min of 0.3 and
        0.05 for the first two taps as it writes them), package C_d 120 fF, L_s 0.12 nH,
        C_b 30 fF, C_p 87 fF, line 87.5 ohm then 1.8 mm at 92.5 ohm (gamma0 0, here 1e-7/mm,
        a1 9.909e-4, a2 2.772e-4, tau 6.141e-3 ns/mm) in the sheet's two package test
        cases (``z_p select [1 2]``): test 1, 12 mm at every end; test 2, 31 mm at the
        transmitters (victim and FEXT) and 29 mm at the receiver and the NEXT transmitter;
        floating DFE taps, 3 banks of 3 within 40 UI, each within 0.05, those from 25 UI on
        within 0.02 root sum of squares (``N_bg``, ``N_bf``, ``N_f``, ``bmaxg``,
        ``N_tail_start``, ``B_float_RSS_MAX``)."""
        return cls(
            name="802.3ck KR", baud_hz=53.125e9, der0=1e-4, t_r_s=7.5e-12, r_lm=0.95,
            a_v=0.413, a_fe=0.413, a_ne=0.608, snr_tx_db=33.0, eta0_v2_per_hz=8.2e-18,
            sigma_rj_ui=0.01, a_dd_ui=0.02, f_r=0.75,
            g_dc_db=tuple(float(-g) for g in range(21)), g_dc2_db=tuple(float(-g) for g in range(7)),
            c_m3=tuple(np.round(np.arange(-0.06, 0.0001, 0.02), 4)),
            c_m2=tuple(np.round(np.arange(0.0, 0.1201, 0.02), 4)),
            c_m1=tuple(np.round(np.arange(-0.34, 0.0001, 0.02), 4)),
            c_p1=tuple(np.round(np.arange(-0.2, 0.0001, 0.02), 4)),
            c0_min=0.54,
            dfe_max=(0.85, 0.3) + (0.2,) * 5 + (0.1,) * 5,
            dfe_min=(0.3, 0.05) + (-0.03,) * 10,
            dfe_float_groups=3, dfe_float_taps=3, dfe_float_span_ui=40, dfe_float_limit=0.05,
            dfe_float_tail_start_ui=25, dfe_float_tail_rss=0.02,
            r_d=50.0, c_d_f=(1.2e-13,), l_s_h=(0.12e-9,), c_b_f=0.3e-13, c_p_f=0.87e-13,
            z_c_ohm=(87.5, 92.5), z_p_tx_m=(12e-3, 1.8e-3), z_p_rx_m=(12e-3, 1.8e-3), z_p_next_m=(12e-3, 1.8e-3),
            gamma0_per_mm=1e-7, a1=9.909e-4, a2=2.772e-4, tau_ns_per_mm=6.141e-3,
            package_cases=(_ck_case("test 1 (12 mm)", 12e-3, 12e-3, 12e-3, 12e-3),
                           _ck_case("test 2 (31/29 mm)", 31e-3, 29e-3, 29e-3, 31e-3)),
            source="IEEE 802.3ck 163A, MATLAB COM sheet config_com_ieee8023_93a=3ck_SA_KR_08_17_2022",
        )

    @classmethod
    def ieee_802_3dj_kr(cls, package_class: str = "A") -> ComParams:
        """200GBASE-KR1 (P802.3dj/D3.3, 106.25 GBd PAM4, Annex 178A): Table 178-15's COM
        values and Table 178-14's device and package models, as PyChOpMarg 3.4.0
        (``pychopmarg.config.ieee_8023dj_d3p3``) transcribes the draft of 24 September 2026.

        R_0 = R_d = 46.25 ohm; DER0 2e-4; T_r 4 ps; A_v = A_fe 0.385 V, A_ne 0.481 V;
        SNR_TX 33.5 dB; eta_0 7.5e-9 V^2/GHz; CTLE f_z = f_p1 = f_b/2.5, f_p2 = f_b, f_LF =
        f_b/80, g_DC 0 to -20 dB, g_DC2 0 to -6 dB; Tx FFE c(-2) 0 to 0.14, c(-1) -0.34 to 0,
        c(1) -0.2 to 0 in steps of 0.02, c(0) >= 0.54; f_r 0.55 f_b; Rx FFE of 15 fixed taps
        (6 before the cursor), each within 0.7 of it, and 2 floating groups of 4 taps within
        87, each within 0.05; one DFE tap in 0 .. 0.85. Device:
        C_d 40/90/110 fF with L_s 0.13/0.15/0.14 nH, C_b 30 fF, C_p 40 fF. Package class A:
        line 1 at 87.5 ohm then 1.8 mm at 92.5 ohm (a1 8.9e-4, a2 2e-4); class B: line 1 at
        87.5 ohm, then 2.0 mm at 95, 1.3 mm at 100 and 1.5 mm at 78 ohm (a1 6.5e-4,
        a2 2.93e-4). Line 1 per test (Tx, Rx): A 33/33 mm and 12/12 mm, B 45/44 and 30/29 mm.
        ``package_class``: ``"A"``, ``"B"`` or ``"AB"`` (both classes' tests).

        Quantisation: N_qb 6 bits, P_qc 1e-7. The floating taps and the quantisation noise
        are placed and added at the 24 best settings by the MMSE FOM with the fixed taps
        (178A does both at every setting). The MLSD reference receiver of 178A.1.10 is on
        (``mlsd``, with ``dCOM_an`` 3 dB, as PyChOpMarg 3.4.0's ``com_params("KR")``): COM
        is COM_DFE plus the MLSD's advantage at 3 dB of added receiver noise, bounded by
        its error events' distance (:mod:`.mlsd`); ``with_(mlsd=False)`` gives COM_DFE."""
        classes = {"A": ("A",), "B": ("B",), "AB": ("A", "B")}.get(package_class)
        if classes is None:
            raise ConfigError(f"package_class must be 'A', 'B' or 'AB', got {package_class!r}")
        cases = tuple(PackageCase(f"class {k} test {t}", _dj_line(k, zt), _dj_line(k, zr))
                      for k in classes for t, (zt, zr) in enumerate(_DJ_KR_ZP1[k], start=1))
        return cls._dj(f"802.3dj KR (class {package_class})", cases,
                       "IEEE P802.3dj/D3.3 Tables 178-14 and 178-15 as PyChOpMarg 3.4.0 transcribes them")

    @classmethod
    def ieee_802_3dj_cr(cls, cable_class: str = "CA-A") -> ComParams:
        """200GBASE-CR1 (P802.3dj/D3.3, Clause 179): the KR values of
        :meth:`ieee_802_3dj_kr` (Table 179-24 shares them) with the host classes of Table
        179-23 as package cases: HL (class A package, line 1 8 mm, host PCB 22 mm), HN
        (class B, 15 mm, 83 mm), HH (class B, 45 mm, 74 mm); the partial host channel of
        Table 179-22 (92.5 ohm, a1 5.95e-4, a2 2.6e-5, tau 5.79e-3 ns/mm). Every
        (transmitter host, receiver host) pair Table 179-21 allows for ``cable_class``
        (``"CA-A"`` .. ``"CA-D"``) is a case; COM is the lowest."""
        pairs = _DJ_CR_PAIRS.get(cable_class)
        if pairs is None:
            raise ConfigError(f"cable_class must be one of {sorted(_DJ_CR_PAIRS)}, got {cable_class!r}")
        cases = tuple(PackageCase(f"{tx} to {rx}", _dj_host(tx), _dj_host(rx)) for tx, rx in pairs)
        return cls._dj(f"802.3dj CR ({cable_class})", cases,
                       "IEEE P802.3dj/D3.3 Tables 179-21 to 179-24 as PyChOpMarg 3.4.0 transcribes them")

    @classmethod
    def cr_receiver(cls, baud_hz: float, host_class: str = "HN") -> ComParams:
        """The CR reference receiver with one 802.3dj CR host class at every end, the set a
        link proposes a CR host's equalisation with (:attr:`phy.Serdes.host_class`): no test
        cases, the host's package and partial host channel at the victim's and the
        aggressors' ends.

        At 106.25 GBd (and any baud but 53.125 GBd): :meth:`ieee_802_3dj_cr`'s values with
        the host class of Table 179-23 (:func:`cr_host_line`) and its receiver's floating
        Rx FFE taps (178A.1.8.1: 2 groups of 4 within 87 taps, each within 0.05). At 53.125
        GBd: :meth:`ieee_802_3ck_kr`'s receiver with its floating DFE taps (the reference
        code's ``N_bg`` 3, ``N_bf`` 3, ``N_f`` 40, ``bmaxg`` 0.05, ``B_float_RSS_MAX`` 0.02
        from 25 UI) and its test-1 package (12 mm, then 1.8 mm at 92.5 ohm), behind the same
        host class's partial host channel (Table 179-22's line, the class's PCB length): the
        same host board at both rates, a stated assumption (802.3ck's CR sheet's host model
        is not transcribed here). At 106.25 GBd the receiver's MLSD (178A.1.10, ``mlsd``) is on,
        as :meth:`ieee_802_3dj_cr` has it; ``with_(mlsd=False)`` gives the DFE's slicer."""
        if host_class not in _DJ_CR_HOSTS:
            raise ConfigError(f"host_class must be one of {sorted(_DJ_CR_HOSTS)}, got {host_class!r}")
        if np.isclose(baud_hz, 53.125e9):
            ln = replace(_ck_case("", 12e-3, 12e-3, 12e-3, 12e-3).tx, host_m=_DJ_CR_HOSTS[host_class][2])
            base = cls.ieee_802_3ck_kr()
            name = f"802.3ck KR receiver, CR host {host_class}"
        else:
            ln = cr_host_line(host_class)
            base = cls.ieee_802_3dj_cr()
            name = f"802.3dj CR, host {host_class} at both ends"
        p = base.with_(name=name, package_cases=(), lines=(ln, ln, ln, ln),
                       source=base.source + f"; host class {host_class} of Table 179-23 at every end")
        return p if np.isclose(baud_hz, p.baud_hz) else p.with_(baud_hz=baud_hz)

    @classmethod
    def _dj(cls, name: str, cases: tuple, source: str) -> ComParams:
        fb = 106.25e9
        return cls(
            name=name, baud_hz=fb, der0=2e-4, t_r_s=4e-12, r_lm=0.95, a_v=0.385, a_fe=0.385, a_ne=0.481,
            snr_tx_db=33.5, eta0_v2_per_hz=7.5e-18, sigma_rj_ui=0.01, a_dd_ui=0.02, f_r=0.55,
            ctle_fz=1 / 2.5, ctle_fp1=1 / 2.5, ctle_fp2=1.0, ctle_flf=1 / 80,
            g_dc_db=tuple(float(-g) for g in range(21)), g_dc2_db=tuple(float(-g) for g in range(7)),
            c_m3=(0.0,), c_m2=tuple(np.round(np.arange(0.0, 0.1401, 0.02), 4)),
            c_m1=tuple(np.round(np.arange(-0.34, 0.0001, 0.02), 4)),
            c_p1=tuple(np.round(np.arange(-0.2, 0.0001, 0.02), 4)), c0_min=0.54,
            dfe_max=(0.85,), dfe_min=(0.0,), rx_ffe_pre=6, rx_ffe_post=8, rx_ffe_limit=0.7,
            rx_ffe_float_groups=2, rx_ffe_float_taps=4, rx_ffe_span_ui=87, rx_ffe_float_limit=0.05,
            adc_bits=6, adc_clip_probability=1e-7,
            r_0=46.25, r_d=46.25, c_d_f=(0.4e-13, 0.9e-13, 1.1e-13), l_s_h=(0.13e-9, 0.15e-9, 0.14e-9),
            c_b_f=0.3e-13, c_p_f=0.4e-13, z_c_ohm=(87.5, 92.5), z_p_tx_m=(33e-3, 1.8e-3),
            z_p_rx_m=(33e-3, 1.8e-3), z_p_next_m=(33e-3, 1.8e-3), package_cases=cases, mlsd=True,
            mlsd_dcom_an_db=3.0, source=source)

    def cases(self) -> list[tuple[str, ComParams]]:
        """Each package test case as ``(name, parameter set with its package)``; one
        ``("default", self)`` without ``package_cases``."""
        if not self.package_cases:
            return [("default", self)]
        out = []
        for c in self.package_cases:
            if not isinstance(c, PackageCase):
                raise ConfigError(f"package_cases holds PackageCase values, got {type(c).__name__}")
            out.append((c.name, replace(self, package_cases=(), lines=(c.tx, c.rx, c.next or c.tx, c.fext or c.tx))))
        return out

    def line(self, end: str) -> PackageLine:
        """The package line at one end: ``"tx"``, ``"rx"``, ``"next"`` or ``"fext"``."""
        if self.lines is not None:
            return self.lines[("tx", "rx", "next", "fext").index(end)]
        lengths = {"tx": self.z_p_tx_m, "next": self.z_p_next_m, "rx": self.z_p_rx_m,
                   "fext": self.z_p_tx_m if self.z_p_fext_m is None else self.z_p_fext_m}[end]
        return PackageLine(tuple(lengths), tuple(self.z_c_ohm), self.gamma0_per_mm, self.a1, self.a2,
                           self.tau_ns_per_mm)

    def package_key(self, end: str) -> tuple:
        """Everything :meth:`package` reads for one end (hashable): two ends, cases or
        parameter sets with equal keys have the same package on the same grid
        (:func:`phy.engines.com.chain.package` remembers them by it)."""
        return (self.line(end), tuple(self.c_d_f), tuple(self.l_s_h), float(self.c_b_f), float(self.c_p_f),
                end == "rx")

    def package(self, f_hz: np.ndarray, end: str) -> channels.Channel:
        """The reference package (:func:`channels.media.com_package`) at one end, ``"tx"``,
        ``"next"`` or ``"fext"`` (an aggressor's transmitter) or ``"rx"``, with its
        partial host channel on the board side where its line has one. It reads only what
        :meth:`package_key` holds."""
        ln = self.line(end)
        pkg = media.com_package(
            ln.lengths_m, ln.z_c_ohm, die_cap_f=self.c_d_f, series_l_h=self.l_s_h, bump_cap_f=self.c_b_f,
            ball_cap_f=self.c_p_f, gamma0_per_mm=ln.gamma0_per_mm, a1=ln.a1, a2=ln.a2,
            tau_ns_per_mm=ln.tau_ns_per_mm, receiver=end == "rx", frequency=f_hz, name=f"package_{end}")
        if ln.host_m <= 0:
            return pkg
        host = media.com_package(
            (ln.host_m,), (ln.host_z_ohm,), die_cap_f=(0.0,), series_l_h=(0.0,), bump_cap_f=0.0, ball_cap_f=0.0,
            gamma0_per_mm=ln.host_gamma0_per_mm, a1=ln.host_a1, a2=ln.host_a2, tau_ns_per_mm=ln.host_tau_ns_per_mm,
            frequency=f_hz, name=f"host_{end}")
        return channels.cascade(host, pkg) if end == "rx" else channels.cascade(pkg, host)

    def check(self) -> None:
        """:class:`phy.ConfigError` naming the field, for a choice that is not one, or for a
        size that sets the search's cost beyond what a reference receiver has (a clear error
        rather than a search that runs for hours)."""
        if self.levels not in (2, 4):
            raise ConfigError(f"levels must be 2 or 4, got {self.levels}")
        for name, allowed in (("fom_xt_phase", ("worst", "average")), ("ts_search", ("full", "pruned")),
                              ("rx_ffe_search", ("every", "rerank"))):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        integer(self.rx_ffe_pre, "rx_ffe_pre", lo=0, hi=32)
        integer(self.rx_ffe_post, "rx_ffe_post", lo=0, hi=64)
        integer(self.mmse_candidates, "mmse_candidates", lo=1, hi=1000)
        integer(self.dfe_float_groups, "dfe_float_groups", lo=0, hi=8)
        integer(self.rx_ffe_float_groups, "rx_ffe_float_groups", lo=0, hi=8)
        integer(self.adc_bits, "adc_bits", lo=0, hi=16)
        if self.dfe_float_groups:
            integer(self.dfe_float_taps, "dfe_float_taps", lo=1, hi=16)
            integer(self.dfe_float_span_ui, "dfe_float_span_ui", lo=len(self.dfe_max) + self.dfe_float_taps,
                    hi=256)
        if self.rx_ffe_float_groups:
            n_fix = self.rx_ffe_pre + 1 + self.rx_ffe_post
            integer(self.rx_ffe_float_taps, "rx_ffe_float_taps", lo=1, hi=16)
            integer(self.rx_ffe_span_ui, "rx_ffe_span_ui", lo=n_fix + self.rx_ffe_float_taps, hi=256)
        if self.adc_bits:
            number(self.adc_clip_probability, "adc_clip_probability", positive=True, hi=0.1)
        if self.mlsd:
            if len(self.dfe_max) != 1 or self.dfe_float_groups:
                raise ConfigError(f"mlsd (178A.1.10) needs one fixed DFE tap and no floating ones, got "
                                  f"{len(self.dfe_max)} fixed and {self.dfe_float_groups} floating groups")
            number(self.mlsd_dcom_an_db, "mlsd_dcom_an_db", positive=True, hi=20.0)
        if self.ts_range_samples is not None:
            lo, hi = (integer(x, "ts_range_samples", lo=-4 * self.samples_per_ui, hi=4 * self.samples_per_ui)
                      for x in self.ts_range_samples)
            if lo > hi:
                raise ConfigError(f"ts_range_samples must be (first, last) with first <= last, "
                                  f"got {self.ts_range_samples}")

    def with_(self, **changes) -> ComParams:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def _ck_case(name: str, tx: float, rx: float, nxt: float, fext: float) -> PackageCase:
    """An 802.3ck KR package test case: line 1 lengths at each end, then 1.8 mm at 92.5 ohm
    (the 3ck_SA_KR_08_17_2022 sheet's package)."""
    def line(z):
        return PackageLine((z, 1.8e-3), (87.5, 92.5), 1e-7, 9.909e-4, 2.772e-4, 6.141e-3)
    return PackageCase(name, line(tx), line(rx), line(nxt), line(fext))


# P802.3dj/D3.3 package lines (Table 178-14) and CR host classes (Tables 179-21..23)
_DJ_KR_ZP1 = {"A": ((33e-3, 33e-3), (12e-3, 12e-3)), "B": ((45e-3, 44e-3), (30e-3, 29e-3))}
_DJ_CR_HOSTS = {"HL": ("A", 8e-3, 22e-3), "HN": ("B", 15e-3, 83e-3), "HH": ("B", 45e-3, 74e-3)}
_DJ_CR_PAIRS = {
    "CA-A": (("HN", "HL"), ("HN", "HN"), ("HN", "HH"), ("HL", "HL"), ("HL", "HN"), ("HL", "HH"), ("HH", "HL"),
             ("HH", "HN")),
    "CA-B": (("HL", "HL"), ("HL", "HN"), ("HL", "HH"), ("HN", "HL"), ("HN", "HN"), ("HH", "HL")),
    "CA-C": (("HL", "HL"), ("HL", "HN"), ("HN", "HL")),
    "CA-D": (("HL", "HL"),),
}


def _dj_line(package_class: str, zp1: float, host_m: float = 0.0) -> PackageLine:
    if package_class == "A":
        return PackageLine((zp1, 1.8e-3), (87.5, 92.5), 5e-4, 8.9e-4, 2e-4, 6.141e-3, host_m=host_m)
    return PackageLine((zp1, 2.0e-3, 1.3e-3, 1.5e-3), (87.5, 95.0, 100.0, 78.0), 5e-4, 6.5e-4, 2.93e-4, 6.141e-3,
                       host_m=host_m)


def _dj_host(host_class: str) -> PackageLine:
    k, zp1, zh = _DJ_CR_HOSTS[host_class]
    return _dj_line(k, zp1, zh)


#: The host classes of P802.3dj/D3.3 Table 179-23 (package class, package line 1, host PCB
#: length): HL (a cabled host near the die), HN (nominal), HH (high loss).
CR_HOST_CLASSES = tuple(_DJ_CR_HOSTS)


def cr_host_line(host_class: str) -> PackageLine:
    """One end of an 802.3dj CR link as COM models it (P802.3dj/D3.3 Tables 179-22 and
    179-23): the host class's package line (class A: line 1 then 1.8 mm at 92.5 ohm; class
    B: line 1 then 2.0, 1.3 and 1.5 mm at 95, 100 and 78 ohm) and its partial host channel
    (PCB line at 92.5 ohm). HL: class A, 8 mm, 22 mm of PCB; HN: class B, 15 mm, 83 mm;
    HH: class B, 45 mm, 74 mm."""
    if host_class not in _DJ_CR_HOSTS:
        raise ConfigError(f"host_class must be one of {sorted(_DJ_CR_HOSTS)}, got {host_class!r}")
    return _dj_host(host_class)


@functools.lru_cache(maxsize=16)
def _tx_grid(c_m3: tuple, c_m2: tuple, c_m1: tuple, c_p1: tuple, c0_min: float) -> np.ndarray:
    grid = np.array(list(itertools.product(c_m3, c_m2, c_m1, c_p1)), dtype=float)
    c0 = 1.0 - np.abs(grid).sum(axis=1)
    ok = c0 >= c0_min - 1e-12
    out = np.column_stack([grid[:, 0], grid[:, 1], grid[:, 2], c0, grid[:, 3]])[ok]
    out.setflags(write=False)
    return out
