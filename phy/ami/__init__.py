"""IBIS-AMI models: vendor transmitters and receivers in the engines, run in a process of
their own.

* :mod:`phy.ami.ibs`: the ``.ibs`` file (its models and their ``[Algorithmic Model]``
  executables);
* :mod:`phy.ami.params`: the ``.ami`` parameter tree (reserved and model-specific
  parameters, their ranges, lists and defaults) and the ``AMI_parameters_in`` string;
* :mod:`phy.ami.runner`: :class:`AmiProcess`, one model's shared library loaded in a host
  process of its own (:mod:`phy.ami._host`), so a model that crashes or hangs ends that call
  with an :class:`AmiError`, never the caller's process;
* :mod:`phy.ami.model`: :class:`AmiModel`, what a :class:`phy.Transmitter` or
  :class:`phy.Receiver` holds (``ami=``): ``AMI_Init`` on a pulse response for the
  statistical eye, COM-like margins and the link roll-up, a session for ``AMI_GetWave`` in
  the time-domain simulator.

Public API
----------
:class:`AmiModel`, :class:`AmiError`, :class:`AmiFile`, :class:`AmiParameter`,
:func:`read_ami`, :func:`parse_ami`, :func:`parse_params_out`, :func:`read_ibs`,
:class:`IbsFile`, :class:`AmiProcess`.
"""

from .errors import AmiError
from .ibs import IbsFile, parse_ibs, read_ibs
from .model import AmiModel
from .params import AmiFile, AmiParameter, parse_ami, parse_params_out, read_ami
from .runner import AmiProcess

__all__ = ["AmiError", "AmiFile", "AmiModel", "AmiParameter", "AmiProcess", "IbsFile", "parse_ami",
           "parse_params_out", "parse_ibs", "read_ami", "read_ibs"]
