"""Channel Operating Margin in the manner of IEEE 802.3 Annex 93A (and 163A, 178A): the
parameter sets and their package test cases (:mod:`.params`), the margin and the
equaliser search (:mod:`.margin`, its figure of merit in a Numba kernel; 178A's Rx FFE by
MMSE at every setting in :mod:`.mmse`; 178A.1.10's MLSD reference receiver in
:mod:`.mlsd`), and the effective return loss of 93A.5 (:mod:`.erl`)."""

from .erl import (
    ERL_PRESETS,
    ErlParams,
    ErlResult,
    effective_return_loss,
    preset_for_baud,
)
from .margin import MarginResult, channel_margin
from .params import ComParams, PackageCase, PackageLine

__all__ = ["ComParams", "ERL_PRESETS", "ErlParams", "ErlResult", "MarginResult", "PackageCase", "PackageLine",
           "channel_margin", "effective_return_loss", "preset_for_baud"]
