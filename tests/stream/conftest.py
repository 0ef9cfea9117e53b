"""Fixtures of the streaming tests: a sandbox after the close (REST holds the whole day)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from marketframe import Client
from marketframe.sandbox import Sandbox

NOW = "2026-11-20T14:45:00+08:00"


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(seed=7, now=NOW, rate_limit=None) as s:
        yield s


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> Iterator[Client]:
    with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
        yield c


def rest_trades(client: Client, symbol: str, **params: Any) -> list[dict[str, Any]]:
    """Every REST trade of the day (regular and trial), sorted by serial."""
    import orjson

    rows = []
    for trial in (False, True):
        extra = {"isTrial": True} if trial else {}
        body = (
            client.fetch(
                "stock.intraday.trades",
                symbol=symbol,
                sort="asc",
                limit=100000,
                refresh=True,
                **extra,
                **params,
            )
            .responses[0]
            .body
        )
        rows += orjson.loads(body)["data"]
    return sorted(rows, key=lambda r: r["serial"])


@pytest.fixture
def scripted() -> Iterator[Any]:
    """A :class:`tests.stream.scripted.ScriptedServer` running on 127.0.0.1."""
    import threading

    from .scripted import ScriptedServer

    server = ScriptedServer()
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, args=(ready,), daemon=True)
    thread.start()
    assert ready.wait(30)
    yield server
    assert server.loop is not None
    server.loop.call_soon_threadsafe(server.loop.stop)
    thread.join(30)
