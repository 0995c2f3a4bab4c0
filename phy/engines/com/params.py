"""COM parameter sets (:class:`ComParams`): the reference package, the filters, the
equaliser grids, the noise and jitter figures, and presets for 802.3ck KR (Annex 163A)
and 802.3dj KR (Annex 178A)."""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, replace

import numpy as np

import channels
from channels import media

__all__ = ["ComParams"]


@dataclass(frozen=True)
class ComParams:
    """A COM parameter set (SI units; grids as tuples).

    Tx FFE grids are the values each tap takes, ``c(-3), c(-2), c(-1), c(1)``; ``c(0) = 1 -
    sum|c|`` must stay at or above ``c0_min``. With an Rx FFE (``rx_ffe_pre``,
    ``rx_ffe_post`` taps) the ``mmse_candidates`` best settings by the FOM without it are
    re-ranked with MMSE Rx FFE taps (see :func:`channel_margin`). CTLE frequencies are multiples of the baud
    rate. Package capacitances are per leg (F), lengths in m, ``gamma0`` per m, ``a1`` in
    sqrt(ns)/mm and ``a2``, ``tau`` in ns/mm as 93A writes them. ``fom_xt_phase``: the
    crosstalk in the figure of merit at each aggressor's worst sampling phase, as 93A-33/34
    write it (``"worst"``), or averaged over its phases, as newer reference code does
    (``"average"``).
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
    gamma0_per_mm: float = 5e-4
    a1: float = 8.9e-4
    a2: float = 2e-4
    tau_ns_per_mm: float = 6.141e-3
    samples_per_ui: int = 32
    rx_ffe_pre: int = 0
    rx_ffe_post: int = 0
    mmse_candidates: int = 24
    fom_xt_phase: str = "worst"
    source: str = ""

    @property
    def n_tx_settings(self) -> int:
        return len(self._tx_grid())

    @property
    def n_ctle_settings(self) -> int:
        return len(self.g_dc_db) * len(self.g_dc2_db)

    def _tx_grid(self) -> np.ndarray:
        """Tx FFE settings ``(n, 5)``: ``c(-3), c(-2), c(-1), c(0), c(1)`` with ``c(0) >= c0_min``."""
        combos = np.array(list(itertools.product(self.c_m3, self.c_m2, self.c_m1, self.c_p1)), dtype=float)
        c0 = 1.0 - np.abs(combos).sum(axis=1)
        ok = c0 >= self.c0_min - 1e-12
        grid = np.column_stack([combos[:, 0], combos[:, 1], combos[:, 2], c0, combos[:, 3]])
        return grid[ok]

    @classmethod
    def ieee_802_3ck_kr(cls) -> ComParams:
        """100GBASE-KR1 (802.3ck, 53.125 GBd PAM4, Annex 163A) as in the reference COM
        configuration sheet ``3ck_d3p1_KR_11_30_21`` (MATLAB COM 3.70), as transcribed in
        public COM ports: DER0 1e-4, eta_0 8.2e-9 V^2/GHz, 12 DFE taps (the sheet's
        b_min of 0.3 and 0.05 for the first two taps kept as transcribed), package C_d
        120 fF, L_s 0.12 nH, C_b 30 fF, C_p 87 fF, 12 mm at 87.5 ohm plus 1.8 mm at 92.5 ohm
        (gamma0 1e-7/mm, a1 9.909e-4, a2 2.772e-4, tau 6.141e-3 ns/mm).

        Not from the sheet: T_r = 4 ps (the transcription lacks it; this is the 802.3dj
        value, 7.5 ps of the ck C2C sheet lowers COM by about 0.8 dB), and the sheet's
        floating DFE taps are not modelled."""
        return cls(
            name="802.3ck KR", baud_hz=53.125e9, der0=1e-4, t_r_s=4e-12, r_lm=0.95,
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
            r_d=50.0, c_d_f=(1.2e-13,), l_s_h=(0.12e-9,), c_b_f=0.3e-13, c_p_f=0.87e-13,
            z_c_ohm=(87.5, 92.5), z_p_tx_m=(12e-3, 1.8e-3), z_p_rx_m=(12e-3, 1.8e-3), z_p_next_m=(12e-3, 1.8e-3),
            gamma0_per_mm=1e-7, a1=9.909e-4, a2=2.772e-4, tau_ns_per_mm=6.141e-3,
            source="IEEE 802.3ck 163A, 3ck_d3p1_KR COM sheet values as public COM ports transcribe them",
        )

    @classmethod
    def ieee_802_3dj_kr(cls) -> ComParams:
        """200GBASE-KR1 (802.3dj draft, 106.25 GBd PAM4, Annex 178A) values as PyChOpMarg's
        ``IEEE_8023dj`` set carries them, with its 16-tap Rx FFE (5 pre, 10 post) and one
        DFE tap. 178A optimises the Rx FFE by MMSE at every setting of the grid; here the
        Tx FFE step is 0.02 (not 0.005) and the MMSE re-ranks the FOM's best settings."""
        return cls(
            name="802.3dj KR", baud_hz=106.25e9, der0=2e-4, t_r_s=4e-12, r_lm=0.95,
            a_v=0.413, a_fe=0.413, a_ne=0.45, snr_tx_db=33.0, eta0_v2_per_hz=6.0e-18,
            sigma_rj_ui=0.01, a_dd_ui=0.02, f_r=0.58,
            g_dc_db=tuple(float(-g) for g in range(16)), g_dc2_db=tuple(-g / 2 for g in range(11)),
            c_m3=tuple(np.round(np.arange(-0.06, 0.0001, 0.02), 4)),
            c_m2=tuple(np.round(np.arange(0.0, 0.1201, 0.02), 4)),
            c_m1=tuple(np.round(np.arange(-0.34, 0.0001, 0.02), 4)),
            c_p1=tuple(np.round(np.arange(-0.2, 0.0001, 0.02), 4)),
            c0_min=0.5, dfe_max=(0.85,), dfe_min=(0.0,), rx_ffe_pre=5, rx_ffe_post=10,
            r_d=50.0, c_d_f=(0.4e-13, 0.9e-13, 1.1e-13), l_s_h=(0.13e-9, 0.15e-9, 0.14e-9), c_b_f=0.3e-13,
            c_p_f=0.4e-13, z_c_ohm=(87.5, 92.5), z_p_tx_m=(33e-3, 1.8e-3), z_p_rx_m=(33e-3, 1.8e-3),
            z_p_next_m=(33e-3, 1.8e-3),
            source="IEEE P802.3dj 178A as in PyChOpMarg's IEEE_8023dj (Tx FFE step 0.02; MMSE re-ranking)",
        )

    def package(self, f_hz: np.ndarray, end: str) -> channels.Channel:
        """The reference package (:func:`channels.media.com_package`) at one end:
        ``"tx"``, ``"next"`` (a NEXT aggressor's transmitter) or ``"rx"``."""
        lengths = {"tx": self.z_p_tx_m, "next": self.z_p_next_m, "rx": self.z_p_rx_m}[end]
        return media.com_package(
            lengths, self.z_c_ohm, die_cap_f=self.c_d_f, series_l_h=self.l_s_h, bump_cap_f=self.c_b_f,
            ball_cap_f=self.c_p_f, gamma0_per_mm=self.gamma0_per_mm, a1=self.a1, a2=self.a2,
            tau_ns_per_mm=self.tau_ns_per_mm, receiver=end == "rx", frequency=f_hz, name=f"package_{end}")

    def with_(self, **changes) -> ComParams:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}
