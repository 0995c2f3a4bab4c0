"""COM parameter sets that stand for a peer's configuration file, shared by the benchmarks
and the tests (importing this sets no thread counts, unlike the benchmark scripts)."""

from __future__ import annotations

from phy.engines.com import ComParams
from phy.engines.com.params import PackageCase, PackageLine


def vs_matlab_params() -> ComParams:
    """PyChOpMarg's ``config/config_com_ieee8023dj_PyChOpMarg_vs_MATLAB.xls`` as a ComParams
    (units converted; the CTLE's 1000 GHz zero and poles and 0 dB gains make it flat but for
    its low-frequency pair)."""
    fb = 106.25e9

    def line(z):
        return PackageLine((z, 1.8e-3), (87.5, 92.5), 5e-4, 8.9e-4, 2e-4, 6.141e-3)

    p = ComParams(
        name="802.3dj, PyChOpMarg vs MATLAB sheet", baud_hz=fb, der0=2e-4, t_r_s=4e-12, r_lm=0.95, a_v=0.413,
        a_fe=0.413, a_ne=0.45, snr_tx_db=33.0, eta0_v2_per_hz=6e-18, sigma_rj_ui=0.01, a_dd_ui=0.02, f_r=0.58,
        ctle_fz=1000e9 / fb, ctle_fp1=1000e9 / fb, ctle_fp2=1000e9 / fb, ctle_flf=1.328125e9 / fb,
        g_dc_db=(0.0,), g_dc2_db=(0.0,), c0_min=1.0, dfe_max=(0.85,), dfe_min=(0.0,), rx_ffe_pre=5, rx_ffe_post=10,
        rx_ffe_limit=1.0, ts_range_samples=(-16, 16), r_0=50.0, r_d=50.0, c_d_f=(0.4e-13, 0.9e-13, 1.1e-13),
        l_s_h=(0.13e-9, 0.15e-9, 0.14e-9), c_b_f=0.3e-13, c_p_f=0.4e-13)
    return p.with_(package_cases=(PackageCase("sheet", line(34e-3), line(32e-3), line(34e-3), line(34e-3)),))
