import numpy as np

import channels


def test_builtin_channel_pulse_sums_to_dc_gain():
    ch = channels.library.get("cpo_short")
    pr = ch.pulse_response(106.25e9, 32)
    assert abs(pr.ui_sum() - abs(ch.sdd21[0])) < 1e-9
    assert 0.5 < pr.main_cursor < 1.0
