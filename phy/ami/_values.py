"""The vocabulary of an ``.ami`` file (usages, types, formats, reserved names) and the typing
of one value. Private: :mod:`phy.ami.params` is the public face."""

from __future__ import annotations

import math
import re

from .errors import AmiError

__all__ = ["FORMATS", "RESERVED_NAMES", "TYPES", "USAGES", "convert"]

USAGES = ("In", "Out", "InOut", "Info", "Dep")
TYPES = ("Float", "Integer", "UI", "Boolean", "String", "Tap")
FORMATS = ("Value", "Range", "List", "Increment", "Steps", "Corner", "Table")
#: The reserved parameter names of IBIS 7.x/8 (a name outside it under Reserved_Parameters is
#: kept all the same: newer versions add names).
RESERVED_NAMES = frozenset((
    "AMI_Version", "Init_Returns_Impulse", "GetWave_Exists", "Use_Init_Output",
    "Max_Init_Aggressors", "Ignore_Bits", "Resolve_Exists", "Model_Name", "Special_Param_Names",
    "Component_Name", "Signal_Name", "Rx_Decision_Time", "DC_Offset", "Rx_Use_Clock_Input",
    "Supporting_Files", "DLL_Path", "DLL_ID", "Tx_Jitter", "Tx_DCD", "Tx_Rj", "Tx_Dj", "Tx_Sj",
    "Tx_Sj_Frequency", "Rx_DCD", "Rx_Rj", "Rx_Dj", "Rx_Sj", "Rx_Clock_PDF",
    "Rx_Clock_Recovery_Mean", "Rx_Clock_Recovery_Rj", "Rx_Clock_Recovery_Dj",
    "Rx_Clock_Recovery_Sj", "Rx_Clock_Recovery_DCD", "Rx_Receiver_Sensitivity", "Rx_Noise",
    "Rx_GaussianNoise", "Rx_UniformNoise", "Modulation", "Modulation_Levels", "PAM4_Mapping",
    "PAM4_UpperThreshold", "PAM4_CenterThreshold", "PAM4_LowerThreshold", "PAM4_UpperEyeOffset",
    "PAM4_CenterEyeOffset", "PAM4_LowerEyeOffset", "PAM_Thresholds", "PAM_Offsets",
    "Repeater_Type", "BCI_Protocol", "BCI_ID", "BCI_State", "BCI_Message_Interval_UI",
    "BCI_Training_UI", "BCI_Training_Mode", "Ts4file", "Tx_V", "Tx_R", "Rx_R",
))
_INT = re.compile(r"[-+]?\d+\Z")


def convert(typ: str, raw, who: str):
    """One raw value (text, or an already typed python value) as ``typ`` wants it."""
    try:
        if typ in ("Float", "UI", "Tap"):
            if isinstance(raw, bool):
                raise ValueError
            v = float(raw)
            if not math.isfinite(v):
                raise ValueError
            return v
        if typ == "Integer":
            if isinstance(raw, bool):
                raise ValueError
            if isinstance(raw, str) and not _INT.match(raw.strip()):
                f = float(raw)  # "1e5" and "27.0" are integers written loosely
                if not f.is_integer():
                    raise ValueError
                return int(f)
            if isinstance(raw, float) and not raw.is_integer():
                raise ValueError
            return int(raw)
        if typ == "Boolean":
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
                return raw.strip().lower() == "true"
            raise ValueError
        if not isinstance(raw, str) or '"' in raw:
            raise ValueError
        return raw
    except (TypeError, ValueError, OverflowError):
        raise AmiError(f"{who}: {raw!r} is not a {typ} value") from None
