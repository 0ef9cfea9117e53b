"""Client construction: keys and options are checked up front, the key never shows, and a
client without a key points to the sandbox (issues 11.12, 17.9, 17.15)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marketframe import (
    AuthenticationError,
    Client,
    ConfigurationError,
    InvalidParams,
    MarketframeError,
)
from marketframe.exceptions import redact

SECRET = "s3cret-Key-0123456789abcdef"


@pytest.mark.parametrize("noise", [" ", "\n", "\r\n", "\t", " \r\n"])
def test_surrounding_whitespace_of_the_key_is_stripped(
    sandbox: Any, noise: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Client(sandbox.api_key + noise, base_url=sandbox.base_url, cache=False) as c:
        assert c.stock.intraday.quote(symbol="2330")["symbol"][0] == "2330"
    monkeypatch.setenv("MARKETFRAME_API_KEY", noise + sandbox.api_key + noise)
    with Client(base_url=sandbox.base_url, cache=False) as c:
        assert c.stock.intraday.quote(symbol="2330")["symbol"][0] == "2330"


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (SECRET[:8] + " " + SECRET[8:], "whitespace inside"),
        (SECRET[:8] + "\n" + SECRET[8:], "whitespace inside"),
        (SECRET[:8] + "\x00" + SECRET[8:], "control or non-ASCII"),
        (SECRET[:8] + "é" + SECRET[8:], "control or non-ASCII"),
        (1234567890123, "must be a str, got a int"),
        (SECRET.encode(), "must be a str, got a bytes"),
    ],
)
def test_a_malformed_key_is_refused_without_showing_it(key: Any, problem: str) -> None:
    with pytest.raises(InvalidParams, match=problem) as info:
        Client(key, base_url="http://127.0.0.1:9/marketdata/v1.0", cache=False)
    shown = str(info.value) + repr(info.value) + repr(info.value.args)
    assert SECRET[:8] not in shown and SECRET[9:] not in shown and "1234567890123" not in shown
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_a_malformed_key_in_the_cli_never_reaches_the_terminal(
    sandbox: Any, tmp_path: Path
) -> None:
    key = sandbox.api_key + " \r\nX"  # whitespace inside: refused, not stripped
    env = {**os.environ, "MARKETFRAME_API_KEY": key, "XDG_CACHE_HOME": str(tmp_path)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "marketframe",
            "load",
            "stock.intraday.quote",
            "--symbol",
            "2330",
            "--base-url",
            sandbox.base_url,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode != 0
    assert "InvalidParams" in run.stderr and "whitespace inside" in run.stderr
    assert sandbox.api_key not in run.stderr + run.stdout


def test_no_key_names_both_ways_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key is a local configuration problem (nothing was sent), not a 401."""
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    for empty in (None, "", "  \n"):
        with pytest.raises(ConfigurationError) as info:
            Client(empty)
        text = str(info.value)
        assert "MARKETFRAME_API_KEY" in text and "Client(api_key=...)" in text
        assert "Client.sandbox()" in text


def test_client_sandbox_needs_no_key_and_stops_with_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    with Client.sandbox(seed=3, now="2026-11-20T14:00:00+08:00", backend="polars") as c:
        df = c.stock.historical.candles(symbol="2330", from_="2026-10-01", to="2026-10-31")
        assert type(df).__module__.startswith("polars") and df.height > 10
        assert c._sandbox.seed == 3 and c.cache_path is None
        # the advanced demo key: every plan's endpoints
        assert c.stock.snapshot.quotes(market="TSE").height > 0
        server = c._sandbox._thread  # the sandbox's server thread
        assert server.is_alive()
    assert not server.is_alive()  # (not the port: another test may reuse the number)


def test_client_sandbox_refuses_a_key_or_url() -> None:
    with pytest.raises(InvalidParams, match="set by the sandbox"):
        Client.sandbox(api_key="x")
    with pytest.raises(InvalidParams, match="set by the sandbox"):
        Client.sandbox(base_url="http://127.0.0.1:1")


GOOD = {"base_url": "http://127.0.0.1:9/marketdata/v1.0", "cache": False}


@pytest.mark.parametrize(
    ("option", "value", "text"),
    [
        ("base_url", None, "non-empty str"),
        ("base_url", "", "non-empty str"),
        ("base_url", "ftp://x", "not an http(s) URL"),
        ("base_url", "http://", "not an http(s) URL"),
        ("base_url", "127.0.0.1:8000", "not an http(s) URL"),
        ("base_url", "http://host:99999/x", "not a valid URL"),
        ("base_url", "http://host/x?a=1", "query or fragment"),
        ("base_url", f"ftp://user:{SECRET}@host/", "value not shown"),
        ("base_url", f"https://user:{SECRET}@host/", "has user info"),
        ("timeout", -1, "finite number > 0"),
        ("timeout", 0, "finite number > 0"),
        ("timeout", float("nan"), "finite number > 0"),
        ("timeout", (5, -1), "finite number > 0"),
        ("timeout", (1, 2, 3), "(connect, read) pair"),
        ("timeout", "10", "finite number > 0"),
        ("cache", 123, "True, False or a file path"),
        ("cache", "", "True, False or a file path"),
        ("retries", -1, "int >= 0"),
        ("retries", 1.5, "int >= 0"),
        ("backoff", -0.1, "finite number >= 0"),
        ("max_retry_after", float("inf"), "finite number >= 0"),
        ("max_workers", 0, "int >= 1"),
        ("max_workers", "8", "int >= 1"),
        ("decode", "yes", "must be a bool"),
        ("pace", 1, "must be a bool"),
        ("backend", "numpy", "pandas, polars, arrow"),
    ],
)
def test_bad_options_are_refused_at_construction(option: str, value: Any, text: str) -> None:
    with pytest.raises(InvalidParams, match=f"'{option}'") as info:
        Client(SECRET, **{**GOOD, option: value})
    assert text in str(info.value)
    assert SECRET not in str(info.value)


def test_good_options_are_accepted(tmp_path: Path) -> None:
    with Client(
        SECRET,
        base_url="https://example.test/marketdata/v1.0/",
        timeout=(1, 2.5),
        cache=str(tmp_path / "c.sqlite"),
        retries=0,
        backoff=0,
        deadline=0.5,
    ) as c:
        assert c.base_url == "https://example.test/marketdata/v1.0"
        assert c.cache_path == tmp_path / "c.sqlite"


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("known key k", "k", "known key ***"),
        ("X-API-KEY: k\r\n", "k", "X-API-KEY: ***\r\n"),
        ("'abc-def' and abc-defg and xabc-def", "abc-def", "'***' and abc-defg and xabc-def"),
        ("url?key=ab.cd&x=1", "ab.cd", "url?key=***&x=1"),
        ("nothing here", "", "nothing here"),
        ("nothing here", None, "nothing here"),
    ],
)
def test_redaction_is_token_exact(text: str, key: str | None, expected: str) -> None:
    assert redact(text, key) == expected


def test_a_one_letter_key_never_mangles_an_error(sandbox: Any) -> None:
    """The service's message and our own words stay intact around a short key."""
    with Client("k", base_url=sandbox.base_url, cache=False) as c:
        with pytest.raises(AuthenticationError) as info:
            c.stock.intraday.quote(symbol="2330")
    assert "***" not in str(info.value)
    assert "market-data key" in str(info.value)


def test_library_errors_are_typed_and_never_hold_the_key(sandbox: Any) -> None:
    """An error raised inside requests (here an invalid header set on the session after the
    client checked its key) comes out as a typed error with the key redacted."""
    with Client(SECRET, base_url=sandbox.base_url, cache=False) as c:
        c._transport.session.headers["X-API-KEY"] = SECRET + "\n"
        with pytest.raises(MarketframeError) as info:
            c.stock.intraday.quote(symbol="2330")
    assert "InvalidHeader" in str(info.value)
    assert SECRET not in str(info.value)


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.binary(max_size=4),
    st.lists(st.floats(), max_size=3),
    st.tuples(st.floats(), st.floats()),
    st.builds(object),
)


@pytest.mark.parametrize(
    "option",
    [
        "api_key",
        "base_url",
        "backend",
        "cache",
        "timeout",
        "retries",
        "backoff",
        "max_retry_after",
        "max_workers",
        "decode",
        "pace",
        "deadline",
    ],
)
@settings(max_examples=80, deadline=None, database=None)
@given(value=_ANY)
def test_any_option_value_builds_a_client_or_raises_a_typed_error(option: str, value: Any) -> None:
    if option == "cache" and isinstance(value, str):
        value = None  # a string is a file path: not created by a property test
    options = {**GOOD, option: value}
    key = options.pop("api_key", SECRET)
    try:
        Client(key, **options).close()
    except MarketframeError as exc:
        assert SECRET not in str(exc)


def test_a_key_passed_as_a_parameter_by_mistake_is_not_shown(
    sandbox: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Every error text and log line is redacted, also the parameters and URL we show: here
    the key was passed as the symbol too, and neither the 401 nor the log names it."""
    caplog.set_level(logging.DEBUG, logger="marketframe")
    key = "K3yLooksLikeASymbol"
    with Client(key, base_url=sandbox.base_url, cache=False) as c:
        with pytest.raises(AuthenticationError) as info:
            c.stock.intraday.quote(symbol=key)
    assert key not in str(info.value) and key not in repr(info.value.params)
    assert "symbol=***" in str(info.value)
    assert "quote/***" in caplog.text and key not in caplog.text


def test_client_sandbox_lives_as_long_as_its_client() -> None:
    import gc

    client = Client.sandbox(now="2026-11-20T14:00:00+08:00")
    server = client._sandbox._thread
    gc.collect()
    assert server.is_alive() and client.stock.intraday.quote(symbol="2330").shape[0] == 1
    del client
    gc.collect()  # the client's tree refers back to it: collected by the cycle collector
    assert not server.is_alive()
