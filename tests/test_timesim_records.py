"""The time-domain kernel's named records give the same runs, bit for bit, as the positional
call they replaced.

``EXPECTED`` holds, per case, the counts and a SHA-256 of every array a run returns (error
positions and levels, burst spans, eye counts, bathtub, crossings, waveform, the CDR's
phase statistics), computed by the code at commit 028ae64 (``run_chunk`` with its 70
positional arguments) with::

    git archive 028ae64 | tar -x -C /tmp/kern_old
    PYTHONPATH=/tmp/kern_old python tests/test_timesim_records.py

on this project's machine (x86-64, numpy 2.4, numba 0.68); the hashes of float arrays are
of that build (``fastmath`` kernels may round differently on another CPU's vector width).
The cases cover the kernel's branches: NRZ and PAM4, the slicer-only loop, DFE on and off
and fed by the decisions or the sent symbols, the precoder, the Rx FFE, the three clock
recoveries, the eye and the waveform, edge and symbol jitter, crosstalk, the ADC and the
sampling clock's jitter and wander, the long-span tail, and chunks cut small.
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np
import pytest

BAUD = 53.125e9
SPU = 32


def _pulse(cursors, start_ui=8, rise_ui=0.3):
    """A compact pulse with these cursors (:func:`test_timesim.smooth_pulse`, 96 UI)."""
    from test_timesim import smooth_pulse

    return smooth_pulse(cursors, rise_ui=rise_ui, n_ui=96, start_ui=start_ui)


def cases() -> dict:
    """name -> (link, n_ui, keyword arguments of ``simulate``)."""
    import channels
    import phy.serdes.pulse as pl
    from phy.serdes import Cdr, Impairments, Jitter, Noise, Receiver, Transmitter
    from phy.serdes import Ctle, Dfe, RxFfe, TxFfe

    victim = pl.from_samples(_pulse([0.04, 0.5, 0.25, 0.1, 0.04]), BAUD, SPU)
    aggs = [_pulse([0.02, 0.05, 0.03, -0.02], start_ui=10), _pulse([-0.03, 0.04, 0.02], start_ui=12)]
    symmetric = pl.from_samples(_pulse([0.05, 0.6, 0.05], rise_ui=0.4), BAUD, SPU)  # where MM locks
    xt = pl.from_samples(victim.samples, BAUD, SPU, aggressors=aggs)
    edge = Jitter(rj_rms_s=0.01 / BAUD, dcd_s=0.02 / BAUD, sj_amplitude_s=0.05 / BAUD, sj_frequency_hz=BAUD / 1000)
    fast = 106.25e9
    return {
        # the slicer alone at a fixed phase (no eye, no waveform, no CDR), no DFE
        "nrz_no_dfe": (victim, 40_000, {"tx": Transmitter("nrz"), "noise": Noise(rx_noise_rms_v=0.045),
                                        "seed": 3}),
        # PAM4, Tx and Rx FFE, two DFE taps on decisions, precoder, edge jitter, MM CDR, eye, waveform
        # (the MM detector on the FFE output: "mm" before issue 35, now "mm-ffe", bit for bit)
        "pam4_mm_eye": (symmetric, 30_000, {
            "tx": Transmitter(ffe=TxFfe((-0.08, 0.85, -0.07), main=1), precoder=True),
            "rx": Receiver(ffe=RxFfe(1, 3), dfe=Dfe(2)), "noise": Noise(tx_snr_db=30, rx_noise_rms_v=0.03),
            "jitter": edge, "cdr": Cdr("mm-ffe", phase=0.1 / BAUD, kp_ui=2**-6, ki_ui=2**-13, update_ui=8), "eye": True,
            "eye_bins": 64, "waveform_ui": 40, "warmup_ui": 2_000, "chunk_ui": 4096, "seed": 5}),
        # bang-bang CDR, genie DFE, the ADC and the sampling clock's jitter and wander, eye
        "pam4_bb_adc_genie": (victim, 30_000, {
            "rx": Receiver(dfe=Dfe(1), impairments=Impairments(adc_enob=4.5, rj_rms_s=400e-15,
                                                               wander_rms_s=300e-15, wander_bandwidth_hz=50e6)),
            "noise": Noise(rx_noise_rms_v=0.012), "jitter": edge,
            "cdr": Cdr("bang-bang", kp_ui=2**-6, ki_ui=2**-13, update_ui=16), "dfe_feedback": "sent",
            "eye": True, "eye_bins": 32, "warmup_ui": 3_000, "seed": 7}),
        # ADC and sampling jitter at a fixed phase without the eye (the three-row sampling path)
        "pam4_adc_fixed": (victim, 30_000, {
            "rx": Receiver(dfe=Dfe(1), impairments=Impairments(adc_enob=5.0, rj_rms_s=500e-15)),
            "noise": Noise(rx_noise_rms_v=0.014), "seed": 8}),
        # crosstalk and symbol jitter (the pulse sources), eye and waveform
        "xt_symbol_jitter": (xt, 20_000, {
            "rx": Receiver(dfe=Dfe(1)), "noise": Noise(rx_noise_rms_v=0.012),
            "jitter": Jitter(rj_rms_s=0.015 / BAUD, dd_s=0.02 / BAUD, model="symbol"), "eye": True,
            "eye_bins": 32, "waveform_ui": 16, "seed": 9}),
        # a library channel's full span: the long-span tail by FFT, with edge jitter and the eye
        "tail_fft": (channels.library.get("twinax_1m_26awg"), 12_000, {
            "baud_hz": fast, "rx": Receiver(bandwidth_hz=0.75 * fast, ctle=Ctle.ieee_802_3ck(fast, -8),
                                            dfe=Dfe(4)),
            "noise": Noise(rx_noise_rms_v=0.02), "jitter": edge, "tail": "fft", "eye": True, "eye_bins": 32,
            "waveform_ui": 8, "seed": 10}),
    }


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:32]


def fingerprint(r) -> dict:
    """The counts of a run, and a hash of each of its arrays."""
    out = {"n_ui": r.n_ui, "symbol_errors": r.symbol_errors, "detector_errors": r.detector_errors,
           "bit_errors": r.bit_errors, "n_bursts": r.n_bursts, "cdr_unlocked_at_ui": r.cdr_unlocked_at_ui,
           "errors": _digest(r.error_ui, r.error_levels, r.burst_span_counts),
           "cdr": _digest(np.array([r.cdr_phase_mean_s, r.cdr_phase_rms_s, r.cdr_phase_min_s, r.cdr_phase_max_s]))}
    if r.eye is not None:
        out["eye"] = _digest(r.eye.counts, r.eye.column_errors, r.eye.crossings, r.eye.voltage_edges_v)
    if r.waveform is not None:
        w = r.waveform
        out["waveform"] = _digest(w.adc_v, w.slicer_v, w.sent, w.decided)
    return out


def run(name: str) -> dict:
    import warnings

    from phy.engines import simulate

    link, n_ui, kw = cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fingerprint(simulate(link, n_ui, **kw))


# computed by the code at 028ae64 (see the module's docstring)
EXPECTED = {
    "nrz_no_dfe": {
        "n_ui": 40000,
        "symbol_errors": 811,
        "detector_errors": 811,
        "bit_errors": 811,
        "n_bursts": 811,
        "cdr_unlocked_at_ui": None,
        "errors": "0f47003325ebe569619fe2c75cf71880",
        "cdr": "faeb3ed5ffcb5a15edc94952976430d5",
    },
    "pam4_mm_eye": {
        "n_ui": 30000,
        "symbol_errors": 483,
        "detector_errors": 243,
        "bit_errors": 484,
        "n_bursts": 239,
        "cdr_unlocked_at_ui": None,
        "errors": "646201f00558637ee6893db1770159b5",
        "cdr": "298037001e363d2a0180b9c005302128",
        "eye": "91fc2b074468231d689ca9f663abef3a",
        "waveform": "41eb78860acba08cab840cfa8080e03e",
    },
    "pam4_bb_adc_genie": {
        "n_ui": 30000,
        "symbol_errors": 1355,
        "detector_errors": 1355,
        "bit_errors": 1355,
        "n_bursts": 1334,
        "cdr_unlocked_at_ui": None,
        "errors": "b9dc499814005da8b37d8391bb496012",
        "cdr": "a02b533797cb5e55cc5cedb018f31362",
        "eye": "aeab11d4588d5f8fc0177bb51c5df9f7",
    },
    "pam4_adc_fixed": {
        "n_ui": 30000,
        "symbol_errors": 1970,
        "detector_errors": 1970,
        "bit_errors": 1970,
        "n_bursts": 1298,
        "cdr_unlocked_at_ui": None,
        "errors": "c19fba3527b0ea68771cf5df556e6cbd",
        "cdr": "faeb3ed5ffcb5a15edc94952976430d5",
    },
    "xt_symbol_jitter": {
        "n_ui": 20000,
        "symbol_errors": 2004,
        "detector_errors": 2004,
        "bit_errors": 2004,
        "n_bursts": 1532,
        "cdr_unlocked_at_ui": None,
        "errors": "3c0043535bfc5c8c96accce6374d1f0c",
        "cdr": "faeb3ed5ffcb5a15edc94952976430d5",
        "eye": "454772b070ca73a1fbae70a1e7c6e60e",
        "waveform": "f7715f31734c08c0e308b88c29e08dd3",
    },
    "tail_fft": {
        "n_ui": 12000,
        "symbol_errors": 71,
        "detector_errors": 71,
        "bit_errors": 71,
        "n_bursts": 70,
        "cdr_unlocked_at_ui": None,
        "errors": "f9787d5ed413b7fc5600f6053cf55ce3",
        "cdr": "faeb3ed5ffcb5a15edc94952976430d5",
        "eye": "4f3d2526ae6421d29a923e0fff2a7931",
        # the last bits since the tail's basis outputs two to a complex inverse FFT (issue 35):
        # within 1e-13 V of the plain overlap-save's, tests/test_timesim_tail_pairs.py
        "waveform": "1e0d71680d87824c3352bced60cc87d4",
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_runs_are_those_of_the_positional_kernel(name):
    assert run(name) == EXPECTED[name]


def test_every_case_is_checked_and_counts_errors():
    """The reference covers every case, and each case's run has errors to count (a run
    without any would not test the counters)."""
    assert sorted(EXPECTED) == sorted(cases())
    for name, exp in EXPECTED.items():
        assert exp["detector_errors"] > 0, name


if __name__ == "__main__":  # print the reference values of the code on PYTHONPATH
    import phy

    print(phy.__file__, file=sys.stderr)
    print(json.dumps({name: run(name) for name in cases()}, indent=1))
