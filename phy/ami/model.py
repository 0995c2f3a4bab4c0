"""An IBIS-AMI model as a part of a SerDes: :class:`AmiModel`.

A :class:`phy.Transmitter` or :class:`phy.Receiver` holds one (``ami=``). The engines use it
in the two ways IBIS-AMI defines (IBIS 7.2, section 10):

* **statistical** (``AMI_Init``, linear and time-invariant): the pulse response of the
  channel, turned into the impulse response ``AMI_Init`` takes (V/s, one row per victim and
  aggressor), through the model, and back into a pulse response
  (:meth:`AmiModel.equalise`): what :func:`phy.prepare_link`, the statistical eye, the
  COM-like margin and the link roll-up read;
* **time domain** (``AMI_GetWave``, block by block, with the model's own adaptation and
  clock): a session (:meth:`AmiModel.session`) in which ``AMI_Init`` has run on the
  channel and blocks of waveform go through the model in order
  (:mod:`phy.engines.timesim.getwave`).

Every call runs in a host process of the model's own (:class:`phy.ami.AmiProcess`): a model
that crashes, hangs or returns garbage ends that call with a one-line
:class:`~phy.ami.AmiError` naming the model, its library and the call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..serdes.pulse import impulse_from_pulse, pulse_from_impulse
from .errors import AmiError
from .params import AmiFile, read_ami
from .runner import AmiProcess

__all__ = ["AmiModel", "AmiSession"]

#: UIs of record before the unit impulse that probes a model's own response
#: (:meth:`AmiModel.impulse_response`): room for its pre-cursor taps.
PROBE_LEAD_UI = 16


@dataclass(frozen=True, eq=False)
class AmiModel:
    """An IBIS-AMI model: its shared library, its parsed ``.ami`` file and the values of its
    parameters.

    Parameters
    ----------
    library : path
        The model's shared library (``.so``; Linux).
    ami : AmiFile or path
        Its parameter file, parsed (:func:`phy.ami.read_ami`) or a path to it.
    parameters : mapping, optional
        Values of its ``In``/``InOut`` parameters by name (dotted below
        ``Model_Specific`` for nested groups); the others take the file's defaults. Checked
        now against the file's types, ranges and lists.
    name : str, optional
        The model's name in messages (default: the ``.ami`` root's).
    getwave : bool, optional
        Run ``AMI_GetWave`` in the time-domain simulator; default: when the model declares
        ``GetWave_Exists``. ``False`` uses its ``AMI_Init`` response there too (a linear
        model), which needs ``Init_Returns_Impulse``.
    timeout_s : float
        Time limit of one call to the model (s); beyond it the model's process is killed
        and the call ends with an :class:`AmiError`.
    """

    library: Path
    ami: AmiFile
    parameters: dict = field(default_factory=dict)
    name: str = ""
    getwave: bool | None = None
    timeout_s: float = 60.0

    def __post_init__(self):
        lib = Path(self.library)
        if not lib.is_file():
            raise AmiError(f"AMI model library {str(lib)!r} does not exist")
        object.__setattr__(self, "library", lib)
        if not isinstance(self.ami, AmiFile):
            object.__setattr__(self, "ami", read_ami(self.ami))
        if not isinstance(self.parameters, dict):
            try:
                object.__setattr__(self, "parameters", dict(self.parameters))
            except (TypeError, ValueError):
                raise AmiError(f"AMI model parameters must be a mapping of names to values, got "
                               f"{type(self.parameters).__name__}") from None
        object.__setattr__(self, "name", str(self.name or self.ami.root))
        self.ami.parameters_in(self.parameters)  # checked now: a bad value fails here, not in a run
        t = self.timeout_s
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 86400:
            raise AmiError(f"AMI model {self.name!r}: timeout_s must be a number of seconds in (0, 86400], got {t!r}")
        if self.getwave and not self.ami.getwave_exists:
            raise AmiError(f"AMI model {self.name!r} ({lib.name}) declares no AMI_GetWave (GetWave_Exists is not True)")
        if not self.runs_getwave and not self.ami.init_returns_impulse:
            raise AmiError(f"AMI model {self.name!r} ({lib.name}) neither returns an impulse from AMI_Init "
                           "(Init_Returns_Impulse) nor runs AMI_GetWave: there is nothing to simulate")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_ibs(cls, ibs, model: str | None = None, *, parameters=None, platform: str | None = None,
                 getwave: bool | None = None, timeout_s: float = 60.0) -> AmiModel:
        """The model ``model`` of an ``.ibs`` file (the one with an ``[Algorithmic Model]``
        when None), its library for this machine's platform (or ``platform``)."""
        from .ibs import read_ibs

        exe = read_ibs(ibs).executable(model, platform)
        return cls(exe.library, read_ami(exe.ami), dict(parameters or {}), model or "", getwave, timeout_s)

    @classmethod
    def from_files(cls, library, ami, *, parameters=None, name: str = "", getwave: bool | None = None,
                   timeout_s: float = 60.0) -> AmiModel:
        """A model from its library and ``.ami`` file."""
        return cls(library, ami, dict(parameters or {}), name, getwave, timeout_s)

    def with_parameters(self, **values) -> AmiModel:
        """The same model with these parameter values changed."""
        return dataclasses.replace(self, parameters={**self.parameters, **values})

    # ------------------------------------------------------------------ what it is
    @property
    def runs_getwave(self) -> bool:
        """Whether the time-domain simulator runs the model's ``AMI_GetWave``."""
        return bool(self.ami.getwave_exists if self.getwave is None else self.getwave)

    @property
    def parameters_in(self) -> str:
        """The ``AMI_parameters_in`` string the model is given."""
        return self.ami.parameters_in(self.parameters)

    def to_dict(self) -> dict:
        return {"name": self.name, "library": str(self.library), "ami": self.ami.source,
                "parameters": dict(self.parameters), "getwave": self.runs_getwave,
                "init_returns_impulse": self.ami.init_returns_impulse, "timeout_s": self.timeout_s}

    def __repr__(self) -> str:
        return f"AmiModel({self.name!r}, library={self.library.name!r}, parameters={self.parameters!r})"

    # ------------------------------------------------------------------ calls
    def process(self) -> AmiProcess:
        """A new host process with the model's library loaded (a context manager)."""
        return AmiProcess(self.library, self.name, self.timeout_s)

    def init(self, impulse: np.ndarray, dt_s: float, bit_time_s: float):
        """``AMI_Init`` once, in a process of its own: ``impulse`` (V/s, rows: the through,
        then aggressors) -> :class:`phy.ami.runner.InitOut`."""
        with self.process() as p:
            return p.init(np.atleast_2d(np.asarray(impulse, dtype=float)), dt_s, bit_time_s, self.parameters_in)

    def session(self, impulse: np.ndarray, dt_s: float, bit_time_s: float) -> AmiSession:
        """A process in which ``AMI_Init`` has run on ``impulse``, for ``AMI_GetWave`` calls."""
        if not self.runs_getwave:
            raise AmiError(f"AMI model {self.name!r} ({self.library.name}) does not run AMI_GetWave here")
        return AmiSession(self, np.atleast_2d(np.asarray(impulse, dtype=float)), dt_s, bit_time_s)

    def impulse_response(self, dt_s: float, bit_time_s: float, n: int) -> tuple[np.ndarray, int]:
        """The model's own ``AMI_Init`` response per sample on a record of ``n`` samples, and
        the index of the unit impulse that probed it (:data:`PROBE_LEAD_UI` UIs in, so that
        pre-cursor taps stay on the record)."""
        spu = _samples_per_ui(dt_s, bit_time_s, self)
        n0 = min(PROBE_LEAD_UI * spu, n // 4)
        d = np.zeros((1, n))
        d[0, n0] = 1.0 / dt_s
        return self.init(d, dt_s, bit_time_s).impulse[0] * dt_s, n0

    def equalise(self, pulse):
        """``pulse`` (a :class:`channels.PulseResponse`, its aggressors too) through the
        model's ``AMI_Init``: the pulses' impulse responses (V/s) in, the model's impulse
        responses back into pulses. Aggressors beyond the model's ``Max_Init_Aggressors``
        go through its own response (:meth:`impulse_response`: it is linear)."""
        self._need_init()
        spu, dt = pulse.samples_per_ui, pulse.dt_s
        rows = [pulse] + list(pulse.aggressors)
        n_in = 1 + min(len(pulse.aggressors), self.ami.max_init_aggressors)
        m = np.array([impulse_from_pulse(p.samples, spu) for p in rows[:n_in]]) / dt
        out = self.init(m, dt, 1.0 / pulse.baud_hz).impulse  # the runner checks its shape
        new = [pulse_from_impulse(out[i] * dt, spu) for i in range(n_in)]
        if len(rows) > n_in:
            g, n0 = self.impulse_response(dt, 1.0 / pulse.baud_hz, pulse.samples.size)
            for p in rows[n_in:]:
                full = np.convolve(p.samples, g)[n0 : n0 + p.samples.size]
                new.append(np.pad(full, (0, p.samples.size - full.size)))
        return _replace_rows(pulse, rows, new)

    # ------------------------------------------------------------------ checks
    def _need_init(self) -> None:
        if not self.ami.init_returns_impulse:
            raise AmiError(f"AMI model {self.name!r} ({self.library.name}) returns no impulse response from "
                           "AMI_Init (Init_Returns_Impulse is not True): the statistical eye and the link roll-up "
                           "need one; simulate it in the time domain")


class AmiSession:
    """A model's process in which ``AMI_Init`` has run, for ``AMI_GetWave`` blocks in order
    (a context manager; :meth:`close` ends the process)."""

    def __init__(self, model: AmiModel, impulse: np.ndarray, dt_s: float, bit_time_s: float):
        self.model = model
        self.proc = model.process()
        try:
            self.init_out = self.proc.init(impulse, dt_s, bit_time_s, model.parameters_in)
        except BaseException:
            self.proc.close()
            raise

    def getwave(self, wave: np.ndarray):
        """The next block through ``AMI_GetWave`` -> :class:`phy.ami.runner.GetWaveOut`."""
        return self.proc.getwave(wave)

    def close(self) -> None:
        self.proc.close()

    def __enter__(self) -> AmiSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _samples_per_ui(dt_s: float, bit_time_s: float, model: AmiModel) -> int:
    spu = bit_time_s / dt_s
    if not (np.isfinite(spu) and spu >= 1 and abs(spu - round(spu)) <= 1e-6 * spu):
        raise AmiError(f"AMI model {model.name!r}: the bit time {bit_time_s:g} s is not a whole number of sample "
                       f"intervals ({dt_s:g} s)")
    return int(round(spu))


def _replace_rows(pulse, rows, new):
    """``pulse`` with its through and aggressors' samples replaced (main indices found again)."""
    out = []
    for p, y in zip(rows, new):
        main = int(np.argmax(y)) if p.kind == "through" else int(np.argmax(np.abs(y)))
        out.append(dataclasses.replace(p, samples=y, main_index=main, aggressors=()))
    return dataclasses.replace(out[0], aggressors=tuple(out[1:]))
