"""Cascading channels on arrays: the S-matrix connection of two balanced 2N-ports
vectorised over frequency, and renormalisation to other real reference impedances.

A channel's network is a balanced 2N-port (N = 2 for a single-ended four-port
``[in+, in-, out+, out-]``, N = 1 for a differential two-port): its first N ports are the
input, the last N the output. Cascading ``a`` then ``b`` joins ``a``'s outputs to ``b``'s
inputs. With the blocks ``S11`` (N x N, input to input), ``S12``, ``S21``, ``S22`` of each
and ``Y = (I - A22 B11)^-1`` (the multiple reflections between the joined ports), the
result is the Redheffer star product (Redheffer, "On the relation of transmission-line
theory to scattering and transfer", J. Math. Phys. 41, 1962; Pozar, *Microwave
Engineering*, 4th ed., section 4.3):

    S11 = A11 + A12 B11 Y A21        S12 = A12 (I + B11 Y A22) B12
    S21 = B21 Y A21                  S22 = B22 + B21 Y A22 B12

which is what scikit-rf's ``a ** b`` (``skrf.connect(a, N, b, 0, num=N)``) computes one port
pair at a time; the tests check the two agree to 1e-12 on real and synthetic networks.
Joined ports must share a reference impedance: ``b``'s inputs are first renormalised to
``a``'s outputs when they differ (scikit-rf inserts the same impedance step). With real
references, power waves (Kurokawa, "Power waves and the scattering matrix", IEEE Trans.
MTT 13, 1965) renormalise from ``z`` to ``z'`` as

    S' = A (S - G) (I - G S)^-1 A^-1,  G = diag((z' - z) / (z' + z)),
    A = diag((z + z') / (2 sqrt(z z'))),

scikit-rf's ``renormalize_s`` without the detour through Z (which fails at an open).
Complex references go through scikit-rf itself (:func:`join_skrf`). The cascade of many
channels, :func:`channels.cascade`, lives beside :class:`channels.Channel`.
"""

from __future__ import annotations

import numpy as np
import skrf as rf

from typing import TYPE_CHECKING

from _linkmodel._renamed import module_getattr

from .errors import ChannelError

if TYPE_CHECKING:  # the Channel functions build their results as the type of their inputs
    from .channel import Channel

__all__ = ["cascade_pair", "cascade_s", "connect_s", "join", "join_skrf", "renormalise_s"]


def _mul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Products of small matrices stored frequency-last, ``(n, m, F) @ (m, k, F)``: a few
    element-wise products over frequency (numpy's batched ``matmul`` and ``solve`` on
    thousands of 2 x 2 matrices cost five to twenty times more). The sums and products are
    written in place (``out=``): the same element-wise operations in the same order as
    ``acc = acc + x[i, k] * y[k, j]``, bit for bit, without a temporary per operation."""
    out = np.empty((x.shape[0], y.shape[1], x.shape[2]), dtype=complex)
    if x.dtype != complex or y.dtype != complex:  # a real product stored into complex: not a complex product
        return _mul_temporaries(x, y, out)
    tmp = np.empty(x.shape[2], dtype=complex) if x.shape[1] > 1 else None
    for i in range(x.shape[0]):
        for j in range(y.shape[1]):
            o = out[i, j]
            np.multiply(x[i, 0], y[0, j], out=o)
            for k in range(1, x.shape[1]):
                np.add(o, np.multiply(x[i, k], y[k, j], out=tmp), out=o)
    return out


def _mul_temporaries(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`_mul` into ``out`` through temporaries (any dtypes: each product in its own)."""
    for i in range(x.shape[0]):
        for j in range(y.shape[1]):
            acc = x[i, 0] * y[0, j]
            for k in range(1, x.shape[1]):
                acc = acc + x[i, k] * y[k, j]
            out[i, j] = acc
    return out


def _inv(x: np.ndarray) -> np.ndarray:
    """Inverses of small matrices stored frequency-last ``(n, n, F)``: 1 x 1 and 2 x 2 in
    closed form, even sizes by blocks (the Schur complement), others by numpy."""
    n = x.shape[0]
    if n == 1:
        return 1.0 / x
    if n == 2:
        r = 1.0 / (x[0, 0] * x[1, 1] - x[0, 1] * x[1, 0])
        out = np.empty_like(x, dtype=complex)
        out[0, 0], out[0, 1] = x[1, 1] * r, -x[0, 1] * r
        out[1, 0], out[1, 1] = -x[1, 0] * r, x[0, 0] * r
        return out
    if n % 2:
        return np.linalg.inv(x.transpose(2, 0, 1)).transpose(1, 2, 0)
    h = n // 2
    a, b, c, d = x[:h, :h], x[:h, h:], x[h:, :h], x[h:, h:]
    ai = _inv(a)
    si = _inv(d - _mul(c, _mul(ai, b)))  # the Schur complement's inverse
    ai_b_si = _mul(_mul(ai, b), si)
    c_ai = _mul(c, ai)
    out = np.empty_like(x, dtype=complex)
    out[:h, :h] = ai + _mul(ai_b_si, c_ai)
    out[:h, h:] = -ai_b_si
    out[h:, :h] = -_mul(si, c_ai)
    out[h:, h:] = si
    return out


def _last(s: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(s, dtype=complex).transpose(1, 2, 0))


def _first(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def _tail(a21: np.ndarray, a22: np.ndarray, z: np.ndarray):
    """The output half of the star product (frequency-last blocks): ``S21 = B21 Y A21``
    and ``S22 = B22 + B21 Y A22 B12``, with ``Y A21`` and ``Y A22 B12`` for the input half."""
    n = z.shape[0] // 2
    b11, b12, b21, b22 = z[:n, :n], z[:n, n:], z[n:, :n], z[n:, n:]
    y = _mul(a22, b11)
    np.negative(y, out=y)  # -(A22 B11), in place
    for i in range(n):
        y[i, i] += 1.0
    y = _inv(y)  # Y = (I - A22 B11)^-1
    y_a21 = _mul(y, a21)
    y_a22b12 = _mul(y, _mul(a22, b12))
    s22 = _mul(b21, y_a22b12)
    return _mul(b21, y_a21), np.add(b22, s22, out=s22), y_a21, y_a22b12  # B22 + (..), in place


def _connect(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The star product of frequency-last 2N-ports ``x`` then ``z`` (``(2N, 2N, F)``)."""
    n = z.shape[0] // 2
    s21, s22, y_a21, y_a22b12 = _tail(x[n:, :n], x[n:, n:], z)
    b11, b12 = z[:n, :n], z[:n, n:]
    out = np.empty_like(x, dtype=complex)
    np.add(x[:n, :n], _mul(x[:n, n:], _mul(b11, y_a21)), out=out[:n, :n])  # sums written in place
    t = _mul(b11, y_a22b12)
    out[:n, n:] = _mul(x[:n, n:], np.add(b12, t, out=t))
    out[n:, :n] = s21
    out[n:, n:] = s22
    return out


def connect_s(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` then ``b``: balanced 2N-port S-matrices ``(F, 2N, 2N)`` (inputs first), ``a``'s
    outputs joined to ``b``'s inputs at the same reference impedances. Returns the
    ``(F, 2N, 2N)`` S-matrix of the cascade (``a``'s inputs, ``b``'s outputs)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 3 or a.shape != b.shape or a.shape[1] != a.shape[2] or a.shape[1] % 2:
        raise ChannelError(f"connect_s needs two (F, 2N, 2N) arrays of one shape, got {a.shape} and {b.shape}")
    return _first(_connect(_last(a), _last(b)))


def _renormalise(x: np.ndarray, z_old: np.ndarray, z_new: np.ndarray) -> np.ndarray:
    """:func:`renormalise_s` of a frequency-last ``(P, P, F)`` with ``z`` ``(P, F)``."""
    if np.any(z_old <= 0) or np.any(z_new <= 0):
        raise ChannelError("renormalise_s needs positive real reference impedances")
    g = (z_new - z_old) / (z_new + z_old)
    amp = (z_old + z_new) / (2 * np.sqrt(z_old * z_new))
    num = x.copy()
    den = -g[:, None, :] * x
    for i in range(x.shape[0]):
        num[i, i] -= g[i]
        den[i, i] += 1.0
    return amp[:, None, :] * _mul(num, _inv(den)) / amp[None, :, :]  # A (S - G) (I - G S)^-1 A^-1


def renormalise_s(s: np.ndarray, z_old, z_new) -> np.ndarray:
    """Power-wave S-matrices ``(F, P, P)`` moved from real reference impedances ``z_old``
    to ``z_new`` (ohm; each ``(P,)`` or ``(F, P)``), as scikit-rf's ``renormalize_s`` for
    real references."""
    x = _last(s)
    shape = (x.shape[2], x.shape[0])
    z_old = np.broadcast_to(np.asarray(z_old, dtype=float), shape).T
    z_new = np.broadcast_to(np.asarray(z_new, dtype=float), shape).T
    return _first(_renormalise(x, z_old, z_new))


def _real(z0: np.ndarray) -> bool:
    return bool(np.all(np.imag(z0) == 0))


def _references(z0) -> np.ndarray:
    """Reference impedances as real floats; :class:`ChannelError` for complex ones."""
    z0 = np.asarray(z0)
    if not _real(z0):
        raise ChannelError("cascade_s takes real reference impedances (complex ones: channels.cascade)")
    return np.asarray(z0.real, dtype=float)


def cascade_s(*parts: tuple[np.ndarray, np.ndarray], through: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Cascade ``(s, z0)`` pairs in order (``s`` ``(F, 2N, 2N)``, ``z0`` ``(F, 2N)`` real,
    ohm): each part's inputs are renormalised to the previous output's reference where it
    differs, then joined (:func:`connect_s`). Returns ``(s, z0)`` of the cascade, its
    inputs at the first part's reference and its outputs at the last's; with ``through``,
    ``s`` is only its ``S21`` block ``(F, N, N)`` (outputs from inputs), at about half the
    cost."""
    if not parts:
        raise ChannelError("cascade_s needs at least one (s, z0) pair")
    return _cascade_s(parts, through, _last)


def _cascade_s(parts, through: bool, last) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cascade_s` with ``last(s)`` giving each part's S frequency-last (read, never
    written)."""
    x = last(parts[0][0])
    n = x.shape[0] // 2
    z0 = _references(parts[0][1])
    if through:
        x = (x[n:, :n], x[n:, n:])
    for k, (sb, zb) in enumerate(parts[1:]):
        zb = _references(zb)
        z = last(sb)
        if z.shape != (2 * n, 2 * n, z0.shape[0]):
            raise ChannelError(f"cascade_s: part {k + 1} has shape {np.shape(sb)}, the first {np.shape(parts[0][0])}")
        if not np.array_equal(z0[:, n:], zb[:, :n]):
            z_new = zb.copy()
            z_new[:, :n] = z0[:, n:]
            z, zb = _renormalise(z, zb.T, z_new.T), z_new
        if through:
            x = _tail(x[0], x[1], z)[:2]
        else:
            x = _connect(x, z)
        z0 = np.concatenate([z0[:, :n], zb[:, n:]], axis=1)
    return (_first(x[0]) if through else _first(x)), z0


# ----------------------------------------------------------------------------- channels
# Channels in, a channel of the same type out: this module does not import
# channels.channel (which imports it for Channel.cascade and channels.cascade).
def _dd(ch: Channel) -> rf.Network:
    """The differential two-port of a channel (the ``[d1, d2]`` block of its mixed-mode view)."""
    return ch._mm if ch._se is None else ch._mm.subnetwork([0, 1])


def _match_z0(b: rf.Network, a: rf.Network) -> rf.Network:
    """``b`` renormalised so its input ports have the reference impedance of ``a``'s outputs
    (scikit-rf), for :func:`join_skrf`."""
    half = a.nports // 2
    za, zb = a.z0[:, half:], b.z0[:, :half]
    if np.allclose(za, zb):
        return b
    out = b.copy()
    z = out.z0.copy()
    z[:, :half] = za
    out.renormalize(z)
    return out


def join_skrf(a: Channel, b: Channel, kind: str | None = None, name: str | None = None) -> Channel:
    """:func:`join` through scikit-rf's ``**``: the path for complex reference impedances,
    and the tests' oracle for the array cascade."""
    kind = kind or a.kind
    name = name or a.name
    if a._se is not None and b._se is not None:
        se = a._se ** _match_z0(b._se, a._se)
        return type(a)(se, name=name, kind=kind, grid=a.grid)
    da, db = _dd(a), _dd(b)
    return type(a)(differential=da ** _match_z0(db, da), name=name, kind=kind, grid=a.grid)


def join(a: Channel, b: Channel, kind: str | None = None, name: str | None = None) -> Channel:
    """The networks of ``a`` then ``b`` as one channel (kind and name default to ``a``'s; no
    aggressors): both four-ports, their single-ended networks; otherwise their
    differential two-ports."""
    kind = kind or a.kind
    name = name or a.name
    na, nb = (a._se, b._se) if a._se is not None and b._se is not None else (_dd(a), _dd(b))
    if not (_real(na.z0) and _real(nb.z0)):
        return join_skrf(a, b, kind, name)
    s, z0 = cascade_s((na.s, na.z0), (nb.s, nb.z0))
    net = rf.Network(frequency=na.frequency, s=s, z0=z0, name=na.name, s_def=na.s_def)
    if na.nports == 4:
        return type(a)(net, name=name, kind=kind, grid=a.grid)
    return type(a)(differential=net, name=name, kind=kind, grid=a.grid)


def cascade_pair(first: Channel, other: Channel) -> Channel:
    """:meth:`Channel.cascade`: ``first`` followed by ``other``, their crosstalk referred to
    the far receiver (see there)."""
    if not isinstance(other, type(first)):
        raise ChannelError(f"can only cascade a Channel with a Channel, not {type(other).__name__}")
    if first.f.size != other.f.size or not np.allclose(first.f, other.f, rtol=1e-12, atol=1e-6):
        raise ChannelError(
            f"cannot cascade {first.name!r} ({first.f[0]:.6g}..{first.f[-1]:.6g} Hz, {first.f.size} points) "
            f"with {other.name!r} ({other.f[0]:.6g}..{other.f[-1]:.6g} Hz, {other.f.size} points): "
            "different frequency grids; use channels.cascade(..., grid='common') or .resample()"
        )
    aggs = []
    for a in first.aggressors:
        aggs.append(join(other, join(a, other), kind="next", name=a.name) if a.kind == "next" else join(a, other))
    for a in other.aggressors:
        aggs.append(a if a.kind == "next" else join(first, a, kind="fext", name=a.name))
    joined = join(first, other)
    return joined._replace(name=f"{first.name}+{other.name}", aggressors=aggs, grid=first.grid or other.grid,
                           port_order=None, source=None)


def _se_last(ch: Channel) -> np.ndarray:
    """A channel's single-ended S frequency-last (read-only), kept on the channel: channels
    are immutable, and a sweep cascades the same connectors and packages onto each cable."""
    hit = ch.__dict__.get("_se_last")
    if hit is None or hit[0] is not ch._se:
        hit = (ch._se, _last(ch._se.s))
        hit[1].flags.writeable = False
        ch.__dict__["_se_last"] = hit
    return hit[1]


def cascade_chain(parts) -> Channel | None:
    """:func:`cascade_pair` of three or more plain channels in turn, ``((a b) c) ..``, in one
    array cascade: the same star products on the same arrays (:func:`cascade_s` chains the
    pairs the same way), without building the mixed-mode view of each intermediate channel
    nobody reads. Plain: every part a :class:`Channel` of four ports with real references,
    no aggressors and the very same frequencies; None otherwise (cascade them in pairs)."""
    first = parts[0]
    cls = type(first)
    if len(parts) < 3 or any(type(p) is not cls or p._se is None or p.aggressors or not _real(p._se.z0)
                             or not np.array_equal(p.f, first.f) for p in parts):
        return None
    se = first._se
    s, z0 = _cascade_s([(p, p._se.z0) for p in parts], False, _se_last)
    net = rf.Network(frequency=se.frequency, s=s, z0=z0, name=se.name, s_def=se.s_def)
    name, grid = first.name, first.grid
    for p in parts[1:]:
        name, grid = f"{name}+{p.name}", grid or p.grid
    return cls(net, name=name, kind=first.kind, grid=grid)


#: ``renormalize_s``: the deprecated spelling of :func:`renormalise_s` (warns; the same
#: function; scikit-rf's own ``skrf.network.renormalize_s`` keeps its name).
__getattr__ = module_getattr(__name__, {"renormalize_s": "renormalise_s"})
