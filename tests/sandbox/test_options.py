"""Every server option is checked before the sandbox starts: a value that would make every
request fail (or hang) is refused, by the CLI with exit 2 naming the range, by ``Sandbox``
with a ``ValueError`` subclass; 0 means "no limit" for the rate limit everywhere."""

from __future__ import annotations

import math

import pytest
import requests

from marketframe.cli import main
from marketframe.sandbox import Sandbox, SandboxOptionError

BAD_CLI = [
    ("--seed", "-1", "from 0 to 2**64-1"),
    ("--rate-limit", "-5", "from 1 to 10**9"),
    ("--fault-rate", "2", "a share from 0 to 1"),
    ("--reset-rate", "-0.1", "a share from 0 to 1"),
    ("--http-connections", "-3", "from 1 to 1000000"),
    ("--latency-ms", "inf", "milliseconds from 0 to 60000"),
    ("--latency-ms", "nan", "milliseconds from 0 to 60000"),
    ("--rate-window", "inf", "> 0 and <= 86400"),
    ("--rate-window", "0", "> 0 and <= 86400"),
    ("--idle-timeout", "-1", "> 0 and <= 86400"),
    ("--extra-equities", "-2", "from 0 to 100000"),
    ("--port", "70000", "65535"),
    ("--send-buffer", "1000", "bytes from 65536 (64 KiB) up"),
    ("--stream-speed", "-1", "0 (as fast as possible) to 1e6"),
]


@pytest.mark.parametrize(("flag", "value", "allowed"), BAD_CLI)
def test_the_cli_refuses_an_option_out_of_range(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, allowed: str
) -> None:
    # were it accepted, the command would serve forever: the test would hang, not fail
    assert main(["sandbox", "--port", "0", f"{flag}={value}"]) == 2
    err = capsys.readouterr().err
    assert flag in err and allowed in err, err


BAD_API = [
    ("seed", -1),
    ("seed", 1.5),
    ("rate_limit", -5),
    ("rate_window", math.inf),
    ("latency", math.inf),
    ("latency", math.nan),
    ("fault_rate", 2.0),
    ("reset_rate", -1.0),
    ("http_connections", -3),
    ("idle_timeout", 0),
    ("extra_equities", -1),
    ("heartbeat", math.nan),
    ("stream_speed", -1),
    ("stream_from", "25:00"),
    ("drop_after", 0),
    ("max_subscriptions", 0),
    ("send_buffer", 1000),
    ("send_buffer", 0),
]


@pytest.mark.parametrize(("name", "value"), BAD_API)
def test_sandbox_refuses_an_option_out_of_range(name: str, value: object) -> None:
    with pytest.raises(SandboxOptionError, match=f"{name}=.*allowed: ") as info:
        Sandbox(**{name: value})
    assert isinstance(info.value, ValueError)


def test_configure_checks_the_same_ranges() -> None:
    sb = Sandbox()
    with pytest.raises(SandboxOptionError, match="fault_rate"):
        sb.configure(fault_rate=2)
    assert sb.settings.fault_rate == 0.0


def test_a_rate_limit_of_zero_is_unlimited() -> None:
    with Sandbox(rate_limit=0) as sb:
        r = requests.get(
            f"{sb.base_url}/stock/intraday/quote/2330",
            headers={"X-API-KEY": sb.api_key},
            timeout=30,
        )
        assert r.status_code == 200, r.text
        sb.configure(rate_limit=0)
        assert sb.settings.rate_limit is None
