"""Equalisers: Tx FFE, the 802.3 CTLE family, Rx FFE and DFE.

Conventions
-----------
* Tap vectors are in time order, ``taps[main]`` is the main tap.
* A Tx FFE follows IEEE 802.3 (93A.1.6, 162A): the sum of the tap magnitudes is one, so
  the peak output swing does not change with equalisation.
* DFE taps and their limits are normalised to the main cursor at the slicer
  (802.3's ``b(n)`` and ``b_max(n)``): the feedback for decisions ``a`` (normalised PAM
  levels, +-1, +-1/3) is ``h0 * sum(b[i] * a[n-1-i])``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from _linkmodel._renamed import renamed_keyword, renamed_property

from .._validate import finite_vector, number
from ..errors import ConfigError

__all__ = ["Ctle", "Dfe", "RxFfe", "TxFfe", "solve_ffe_dfe"]


@dataclass(frozen=True, init=False)
class TxFfe:
    """Transmitter FIR: symbol-spaced taps in time order.

    Parameters
    ----------
    taps : sequence of float
        ``c(-n_pre) .. c(0) .. c(n_post)``.
    main : int
        Index of ``c(0)`` in ``taps``.
    normalise : bool
        Scale the taps so that ``sum(|c|) = 1`` (802.3); otherwise use them as given.
    normalize : bool, optional
        Deprecated spelling of ``normalise`` (warns); give one or the other.
    """

    taps: tuple = (1.0,)
    main: int = 0
    normalise: bool = True

    #: Deprecated spelling of :attr:`normalise`.
    normalize = renamed_property("normalize", "normalise")

    def __init__(self, taps: tuple = (1.0,), main: int = 0, normalise: bool = True, *,
                 normalize: bool | None = None):
        given = renamed_keyword(None if normalise is True else normalise, normalize, "normalize", "normalise",
                                "TxFfe", ConfigError)
        object.__setattr__(self, "taps", taps)
        object.__setattr__(self, "main", main)
        object.__setattr__(self, "normalise", True if given is None else given)
        self.__post_init__()

    def __post_init__(self):
        t = finite_vector(self.taps, "TxFfe taps")
        object.__setattr__(self, "taps", tuple(float(x) for x in t))
        if not isinstance(self.main, (int, np.integer)) or not 0 <= self.main < t.size:
            raise ConfigError(f"TxFfe main must index one of the {t.size} taps, got {self.main!r}")
        if not np.any(t):
            raise ConfigError("TxFfe taps are all zero")

    @classmethod
    def ieee(cls, pre=(), post=()) -> TxFfe:
        """802.3 form: ``pre = (c(-1), c(-2), ...)``, ``post = (c(1), ...)``; the main tap
        is ``c(0) = 1 - sum(|c(k)|)`` and must stay positive."""
        pre = [float(x) for x in pre]
        post = [float(x) for x in post]
        c0 = 1.0 - sum(abs(x) for x in pre + post)
        if c0 <= 0:
            raise ConfigError(f"the Tx FFE side taps {pre} {post} leave no main tap (c(0) = {c0:.3g})")
        return cls(tuple(pre[::-1] + [c0] + post), len(pre), True)

    @property
    def coefficients(self) -> np.ndarray:
        """The taps actually applied (normalised when ``normalise``)."""
        t = np.asarray(self.taps, dtype=float)
        return t / np.abs(t).sum() if self.normalise else t

    def apply(self, samples: np.ndarray, samples_per_ui: int) -> np.ndarray:
        """Apply to an oversampled response: ``sum c(k) x(t - k UI)``; the output keeps the
        input's time axis (``c(0)`` unshifted), so pre-cursor taps move energy earlier."""
        c = self.coefficients
        x = np.asarray(samples, dtype=float)
        out = np.zeros_like(x)
        for i, ci in enumerate(c):
            shift = (i - self.main) * samples_per_ui
            if shift >= 0:
                out[shift:] += ci * x[: x.size - shift]
            else:
                out[:shift] += ci * x[-shift:]
        return out

    def to_dict(self) -> dict:
        # "normalize": the deprecated key of "normalise", kept one release beside it
        return {"taps": list(self.taps), "main": self.main, "normalise": self.normalise,
                "coefficients": self.coefficients.tolist(), "normalize": self.normalise,
                "deprecated_keys": {"normalize": "normalise"}}


@dataclass(frozen=True)
class Ctle:
    """Continuous-time linear equaliser of IEEE 802.3 93A-22 with the 802.3ck
    low-frequency pole-zero pair::

        H(f) = (g1 + j f/f_z) / ((1 + j f/f_p1)(1 + j f/f_p2))
               * (g2 + j f/f_lf) / (1 + j f/f_lf)

    with ``g1 = 10^(g_dc_db/20)`` and ``g2 = 10^(g_dc2_db/20)``. The peaking is
    ``-g_dc_db`` (and ``-g_dc2_db`` below ``f_lf``); above ``f_p2`` the gain falls as ``1/f``.

    Parameters
    ----------
    g_dc_db, g_dc2_db : float
        DC gains (dB, <= 0).
    f_z_hz, f_p1_hz, f_p2_hz : float
        Zero and poles (Hz).
    f_lf_hz : float, optional
        Low-frequency pole-zero (Hz); ``None`` (or ``g_dc2_db = 0``) leaves it out.
    """

    g_dc_db: float = 0.0
    f_z_hz: float = 21.25e9
    f_p1_hz: float = 21.25e9
    f_p2_hz: float = 53.125e9
    g_dc2_db: float = 0.0
    f_lf_hz: float | None = None

    def __post_init__(self):
        for name in ("g_dc_db", "g_dc2_db"):
            v = number(getattr(self, name), name)
            if v > 0:
                raise ConfigError(f"{name} must be <= 0 dB (the CTLE attenuates DC), got {v}")
        for name in ("f_z_hz", "f_p1_hz", "f_p2_hz"):
            number(getattr(self, name), name, positive=True)
        if self.f_lf_hz is not None:
            number(self.f_lf_hz, "f_lf_hz", positive=True)

    @classmethod
    def ieee_802_3ck(cls, baud_hz: float, g_dc_db: float = 0.0, g_dc2_db: float = 0.0) -> Ctle:
        """The 802.3ck CTLE (Annex 162A/163A, also used by 802.3dj 178A): ``f_z = f_p1 =
        f_b/2.5``, ``f_p2 = f_b``, ``f_LF = f_b/80``; 802.3 searches ``g_dc_db`` over
        -20..0 dB and ``g_dc2_db`` over -6..0 dB in 1 dB steps."""
        fb = number(baud_hz, "baud_hz", positive=True)
        return cls(g_dc_db, fb / 2.5, fb / 2.5, fb, g_dc2_db, fb / 80)

    def response(self, f_hz) -> np.ndarray:
        """Complex transfer function at ``f_hz`` (Hz)."""
        f = np.asarray(f_hz, dtype=float)
        jf = 1j * f
        h = (10 ** (self.g_dc_db / 20) + jf / self.f_z_hz) / ((1 + jf / self.f_p1_hz) * (1 + jf / self.f_p2_hz))
        if self.f_lf_hz is not None and self.g_dc2_db != 0:
            h = h * (10 ** (self.g_dc2_db / 20) + jf / self.f_lf_hz) / (1 + jf / self.f_lf_hz)
        return h

    def peaking_db(self) -> float:
        """Peak gain over DC gain (dB)."""
        f = np.geomspace(1e6, 10 * self.f_p2_hz, 4000)
        g = 20 * np.log10(np.abs(self.response(f)))
        return float(g.max() - g[0])

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RxFfe:
    """Receiver FFE on the sampled signal (an ADC-DSP receiver).

    Parameters
    ----------
    n_pre, n_post : int
        Pre- and post-cursor taps (the main tap is ``n_pre``); each at most 128 (802.3dj's
        reference receiver spans 87 taps with its floating groups).
    taps : sequence of float, optional
        The ``n_pre + 1 + n_post`` taps in time order; ``None`` solves them (MMSE with the
        DFE, :func:`solve_ffe_dfe`) for the pulse and noise at hand.
    """

    n_pre: int = 0
    n_post: int = 0
    taps: tuple | None = None

    def __post_init__(self):
        for name in ("n_pre", "n_post"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= 128:
                raise ConfigError(f"RxFfe {name} must be an integer from 0 to 128, got {v!r}")
        if self.taps is not None:
            t = finite_vector(self.taps, "RxFfe taps")
            if t.size != self.n_taps:
                raise ConfigError(f"RxFfe has {self.n_pre}+1+{self.n_post} = {self.n_taps} taps, got {t.size} values")
            object.__setattr__(self, "taps", tuple(float(x) for x in t))

    @property
    def n_taps(self) -> int:
        return self.n_pre + 1 + self.n_post

    def to_dict(self) -> dict:
        return {"n_pre": self.n_pre, "n_post": self.n_post, "taps": None if self.taps is None else list(self.taps)}


@dataclass(frozen=True)
class Dfe:
    """Decision-feedback equaliser.

    Parameters
    ----------
    n_taps : int
        Number of taps (0 to 64).
    taps : sequence of float, optional
        ``b(1) .. b(n_taps)`` normalised to the main cursor; ``None`` sets them to the
        post-cursors they face (zero forcing), clipped to the limits.
    limits : float or sequence of float
        ``b_max``: each tap is clipped to ``[-b_max(i), b_max(i)]`` (one value for all).
    """

    n_taps: int = 0
    taps: tuple | None = None
    limits: float | tuple = 1.0
    _lim: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        n = self.n_taps
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= 64:
            raise ConfigError(f"Dfe n_taps must be an integer from 0 to 64, got {n!r}")
        lim = np.atleast_1d(finite_vector(self.limits, "Dfe limits", allow_scalar=True))
        if lim.size == 1:
            lim = np.full(n, lim[0])
        if lim.size != n or np.any(lim < 0):
            raise ConfigError(f"Dfe limits must be one value or {n} values, all >= 0, got {self.limits!r}")
        object.__setattr__(self, "_lim", tuple(float(x) for x in lim))
        if self.taps is not None:
            t = finite_vector(self.taps, "Dfe taps")
            if t.size != n:
                raise ConfigError(f"Dfe has {n} taps, got {t.size} values")
            if np.any(np.abs(t) > lim + 1e-12):
                raise ConfigError(f"Dfe taps {t.tolist()} exceed their limits {lim.tolist()}")
            object.__setattr__(self, "taps", tuple(float(x) for x in t))

    @property
    def tap_limits(self) -> np.ndarray:
        return np.asarray(self._lim)

    def to_dict(self) -> dict:
        return {"n_taps": self.n_taps, "taps": None if self.taps is None else list(self.taps),
                "limits": list(self._lim)}


def solve_ffe_dfe(
    cursors: np.ndarray,
    main: int,
    n_pre: int,
    n_post: int,
    n_dfe: int,
    noise_autocorr: np.ndarray | None = None,
    signal_power: float = 1.0,
    dfe_limits=None,
) -> np.ndarray:
    """MMSE Rx FFE taps for symbol-spaced ``cursors`` (main cursor at index ``main``),
    with a DFE cancelling the first ``n_dfe`` post-cursors of the FFE output.

    Minimises the mean square error at the slicer, ``signal_power * |H w - t|^2 + w^T R w``
    (``H`` the convolution with the cursors, ``R`` the Toeplitz noise autocorrelation per
    UI lag), subject to the FFE output's main cursor being ``h0 = cursors[main]``. The
    target ``t`` is zero for every cursor but the main and the DFE's; a DFE cursor is free
    while its tap ``comb / h0`` stays within ``dfe_limits`` (default 1), and is pinned at
    the limit otherwise (re-solved until no tap exceeds its limit).
    """
    h = np.asarray(cursors, dtype=float)
    nt = n_pre + 1 + n_post
    n_out = h.size + nt - 1
    H = np.zeros((n_out, nt))
    for i in range(nt):
        H[i : i + h.size, i] = h
    centre = main + n_pre
    h0 = float(h[main])
    lim = np.broadcast_to(np.asarray(1.0 if dfe_limits is None else dfe_limits, dtype=float), (n_dfe,))
    R = np.zeros((nt, nt))
    if noise_autocorr is not None:
        r = np.zeros(nt)
        ac = np.asarray(noise_autocorr, dtype=float)
        r[: min(nt, ac.size)] = ac[:nt]
        R = r[np.abs(np.subtract.outer(np.arange(nt), np.arange(nt)))]
    g = H[centre]
    pinned = np.zeros(n_dfe)  # 0: free; +-1: pinned at +-limit
    for _ in range(n_dfe + 1):
        rows = np.ones(n_out, dtype=bool)
        rows[centre] = False
        target = np.zeros(n_out)
        for j in range(n_dfe):
            k = centre + 1 + j
            if k >= n_out:
                continue
            if pinned[j] == 0:
                rows[k] = False
            else:
                target[k] = pinned[j] * lim[j] * h0
        A, t = H[rows], target[rows]
        Q = signal_power * A.T @ A + R
        Q = Q + (1e-12 * np.trace(Q) / nt if np.trace(Q) > 0 else 1e-18) * np.eye(nt)
        c = signal_power * A.T @ t
        qc, qg = np.linalg.solve(Q, c), np.linalg.solve(Q, g)
        w = qc + (h0 - g @ qc) / (g @ qg) * qg
        comb = H @ w
        b = comb[centre + 1 : centre + 1 + n_dfe] / h0
        over = (pinned == 0) & (np.abs(b) > lim[: b.size] + 1e-12)
        if not np.any(over):
            return w
        pinned[over] = np.sign(b[over])
    return w
