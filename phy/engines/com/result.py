"""The result of :func:`phy.engines.com.channel_margin`: COM, its noise breakdown and the
equalisation the search chose, and that equalisation as a transmitter, receiver and
sampling phase to run the same link in the other engines.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ...serdes import Cdr, Ctle, Dfe, Receiver, RxFfe, Transmitter, TxFfe

__all__ = ["MarginResult"]


@dataclass(frozen=True)
class MarginResult:
    """COM and how it came about (volts at the detector, dB).

    Attributes
    ----------
    com_db : float
        ``20 log10(A_s / A_ni)``; with ``params.mlsd``, that (COM_DFE) plus the MLSD's
        advantage (178A-49, :attr:`mlsd`).
    a_s_v, a_ni_v : float
        Signal amplitude ``R_LM h0 / (L - 1)`` and the interference-and-noise amplitude at
        ``DER_0``.
    fom_db : float
        The figure of merit of the chosen equalisation.
    sigmas_v : dict
        Rms of each term: ``isi``, ``tx``, ``jitter``, ``crosstalk``, ``rx``.
    tx_ffe : list
        ``c(-3) .. c(1)`` chosen.
    g_dc_db, g_dc2_db : float
    dfe : list
        DFE taps (normalised to h0).
    rx_ffe : list
        Rx FFE taps (``[1.0]`` without one).
    cursor_index : int
        Sample of the cursor in the pulse response.
    cursor_offset_s : float
        Time of the cursor from the peak of the equalised pulse (s): the sampling phase to
        run the same equalisation at (:meth:`cdr`).
    settings_searched : int
    seconds : float
    params : dict
    notes : list of str
    package_case : str
        The package test case that set COM (the lowest); ``"default"`` without cases.
    case_com_db : dict
        COM of every package test case.
    dfe_floating : dict
        The floating DFE taps by post-cursor (UI after the cursor), normalised to h0.
    mlsd : dict
        With ``params.mlsd`` (178A.1.10, :func:`.mlsd.com_mlsd`): ``com_dfe_db`` (COM with
        the DFE alone), ``delta_db``, ``der_mlsd``, ``g_an``, the error events' rates;
        ``com_db`` is then COM with the MLSD. Empty without it.
    """

    com_db: float
    a_s_v: float
    a_ni_v: float
    fom_db: float
    sigmas_v: dict
    tx_ffe: list
    g_dc_db: float
    g_dc2_db: float
    dfe: list
    rx_ffe: list
    cursor_index: int
    settings_searched: int
    seconds: float
    params: dict
    notes: list = field(default_factory=list)
    cursor_offset_s: float = 0.0
    package_case: str = "default"
    case_com_db: dict = field(default_factory=dict)
    dfe_floating: dict = field(default_factory=dict)
    mlsd: dict = field(default_factory=dict)

    def serdes(self):
        """The chosen equalisation as :class:`phy.Transmitter` and :class:`phy.Receiver`, to
        run :func:`phy.simulate` or :func:`phy.statistical_eye` with: swing ``A_v``, the Tx
        edge, Rx filter, CTLE and Tx FFE of this result, and a DFE of as many taps within
        the same limits that adapts (zero forcing) to the link it is run on. Floating DFE
        taps (:attr:`dfe_floating`) extend that DFE to the last of them: each floating
        position within COM's value's magnitude (so the root-sum-square bound COM placed
        them under holds), the positions between them held at zero."""
        p = self.params
        fb = p["baud_hz"]
        taps = [t for t in self.tx_ffe]
        tx = Transmitter("pam4" if p["levels"] == 4 else "nrz", swing_v=p["a_v"], level_mismatch=p["r_lm"],
                         rise_time_s=p["t_r_s"], ffe=TxFfe(tuple(taps), main=3, normalise=False))
        ctle = Ctle(self.g_dc_db, p["ctle_fz"] * fb, p["ctle_fp1"] * fb, p["ctle_fp2"] * fb, self.g_dc2_db,
                    p["ctle_flf"] * fb)
        lim = np.maximum(np.abs(p["dfe_max"]), np.abs(p["dfe_min"]))
        post = max(p["rx_ffe_post"], len(self.rx_ffe) - p["rx_ffe_pre"] - 1)  # floating taps extend it
        ffe = RxFfe(p["rx_ffe_pre"], post, tuple(self.rx_ffe) if len(self.rx_ffe) > 1 else None)
        lim = list(lim[: len(self.dfe)]) + [0.0] * (len(self.dfe) - lim[: len(self.dfe)].size)
        if self.dfe_floating:
            last = max(int(k) for k in self.dfe_floating)
            lim += [0.0] * (last - len(lim))
            for k, v in self.dfe_floating.items():
                lim[int(k) - 1] = abs(float(v))
        rx = Receiver(bandwidth_hz=p["f_r"] * fb, ctle=ctle, ffe=ffe, dfe=Dfe(len(lim), None, tuple(lim)),
                      mlsd=bool(p.get("mlsd", False)))
        return tx, rx

    def cdr(self):
        """A fixed sampling phase at COM's cursor, for :func:`phy.simulate` and
        :func:`phy.statistical_eye` with :meth:`serdes`."""
        return Cdr(phase=float(self.cursor_offset_s))

    def breakdown_db(self) -> dict:
        """Each term's rms against ``A_s`` (dB): how far below the signal it sits."""
        return {k: (20 * np.log10(self.a_s_v / v) if v > 0 else float("inf")) for k, v in self.sigmas_v.items()}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["breakdown_db"] = self.breakdown_db()
        return d
