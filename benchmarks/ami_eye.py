"""The eye height both sides of ``bench_ami_pybert.py`` report (numpy only: it runs in both venvs)."""

from __future__ import annotations

import numpy as np


def eye_height(y, symbols, nspui, start_ui):
    """Best-phase NRZ eye height of waveform ``y`` against the transmitted ``symbols`` (+-1).

    For each of the ``nspui`` sampling phases, ``y`` sampled once per UI is aligned to the
    symbols by circular-free cross-correlation (delay 0 to half the record), and the eye
    height is min(samples of +1 symbols) - max(samples of -1 symbols) over the UIs from
    ``start_ui`` on (counted in symbols). The best phase wins (when the eye is closed at every
    phase, the least negative); phases whose samples do not correlate positively with the
    symbols are left out.

    Parameters
    ----------
    y : array_like
        Waveform, ``nspui`` samples per UI, sample 0 at the start of symbol 0's UI (V).
    symbols : array_like
        Transmitted symbols, +1 or -1.
    nspui : int
        Samples per UI.
    start_ui : int
        First symbol counted (leave out the start-up).

    Returns
    -------
    tuple
        ``(height_V, phase_samples, delay_ui)``; height is negative when the eye is closed,
        ``-inf`` when no phase or UI counts.
    """
    y = np.asarray(y, dtype=float)
    sym = np.asarray(symbols, dtype=float)
    n = min(len(sym), len(y) // nspui)
    if n < 2:
        raise ValueError(f"eye_height: {len(y)} samples hold fewer than 2 UI of {nspui} samples")
    m = 1 << int(np.ceil(np.log2(2 * n)))
    sym_f = np.conj(np.fft.rfft(sym[:n], m))
    best = (-np.inf, 0, 0)
    for phase in range(nspui):
        s = y[phase::nspui][:n]
        corr = np.fft.irfft(np.fft.rfft(s - s.mean(), m) * sym_f, m)[: max(1, n // 2)]
        d = int(np.argmax(corr))
        if not corr[d] > 0:  # this phase carries no data (or none of it in the right sense)
            continue
        samp, ref = s[d:], sym[: n - d]
        keep = np.arange(n - d) >= max(0, start_ui - d)
        hi, lo = samp[keep & (ref > 0)], samp[keep & (ref < 0)]
        if len(hi) and len(lo):
            h = float(hi.min() - lo.max())
            if h > best[0]:
                best = (h, phase, d)
    return best
