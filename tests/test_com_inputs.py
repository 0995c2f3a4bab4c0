"""COM refuses what the statistical eye and the link refuse (issue 32): data that end
below the Nyquist frequency and a single-ended two-port taken for a differential channel."""

from pathlib import Path

import numpy as np
import pytest

import channels
import phy
from channels import ChannelError, media
from phy import ConfigError
from phy.cli import main

MEASURED = Path(__file__).resolve().parents[1] / ".." / "shared" / "channels" / "measured"


def _cable(f_max_hz: float):
    f = np.arange(0, f_max_hz + 1, 10e6)
    return media.cascade(media.connector(frequency=f), media.twinax(1.0, 26, frequency=f),
                         media.connector(frequency=f)).renamed("short_band")


def test_band_limited_data_are_refused_as_the_eye_refuses_them():
    ch = _cable(20e9)  # below 802.3ck's 26.56 GHz Nyquist frequency
    with pytest.raises(ChannelError, match="below the Nyquist frequency"):
        phy.channel_margin(ch, phy.ComParams.ieee_802_3ck_kr())
    with pytest.raises((ChannelError, ConfigError), match="below the Nyquist frequency"):
        phy.evaluate_link(phy.LinkSpec(channel=ch, lane_rate_bps=106.25e9))
    # asked for, the loss trend extends them (a guess, but a stated one)
    r = phy.channel_margin(ch, phy.ComParams.ieee_802_3ck_kr(), require_nyquist=False)
    assert np.isfinite(r.com_db)
    full = phy.channel_margin(_cable(60e9), phy.ComParams.ieee_802_3ck_kr())
    assert np.isfinite(full.com_db)


def test_the_command_refuses_a_file_ending_at_5_ghz(tmp_path, capsys):
    p = tmp_path / "short.s4p"
    _cable(4.9e9).single_ended.write_touchstone(str(p.with_suffix("")), skrf_comment=False)
    assert main(["com", str(p)]) == 2
    err = capsys.readouterr().err
    assert "4.9 GHz" in err and "Nyquist" in err and "Traceback" not in err


def test_a_50_ohm_two_port_is_not_a_differential_channel():
    f = MEASURED / "pcb_stripline_119mm.s2p"
    if not f.exists():
        pytest.skip("../shared/channels is absent")
    ch = channels.load(f)
    with pytest.raises(ConfigError, match="single-ended line"):
        phy.channel_margin(ch)
    # the same line as the differential mode at 100 ohm is a channel COM takes
    net = ch.network.copy()
    net.renormalize(100.0)
    diff = channels.Channel.from_differential(net, name="as_differential")
    assert np.isfinite(phy.channel_margin(diff).com_db)


def test_the_command_says_so_for_a_single_ended_s2p(capsys):
    f = MEASURED / "pcb_stripline_119mm.s2p"
    if not f.exists():
        pytest.skip("../shared/channels is absent")
    assert main(["com", str(f)]) == 2
    err = capsys.readouterr().err
    assert "single-ended line" in err and "Traceback" not in err
