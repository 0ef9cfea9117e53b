"""The environment's proxy settings are read once per client, for its one host, with the
semantics of ``requests`` (``NO_PROXY`` bypasses, ``HTTP_PROXY`` routes), not on every call."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import requests

from marketframe import Client, TransportError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def dead_proxy(monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HTTP_PROXY", url)
    return url


def test_no_proxy_bypasses_the_proxy(
    sandbox: Any, dead_proxy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    with Client(sandbox.keys["advanced"], base_url=sandbox.base_url, cache=False) as c:
        assert len(c.stock.intraday.quote(symbol="2330")) == 1


def test_a_proxy_in_the_environment_is_used(sandbox: Any, dead_proxy: str) -> None:
    with Client(sandbox.keys["advanced"], base_url=sandbox.base_url, cache=False, retries=0) as c:
        with pytest.raises(TransportError):
            c.stock.intraday.quote(symbol="2330")


def test_the_environment_is_read_once_per_client(
    sandbox: Any, dead_proxy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client(sandbox.keys["advanced"], base_url=sandbox.base_url, cache=False) as c:
        calls = []
        real = requests.utils.get_environ_proxies

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(requests.sessions, "get_environ_proxies", counted)
        monkeypatch.setattr(requests.utils, "get_environ_proxies", counted)
        monkeypatch.delenv("NO_PROXY")  # later changes do not reach a client already made
        c.stock.intraday.quote(symbol=["2330", "0050", "2317"])
        assert calls == []
