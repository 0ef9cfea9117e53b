"""One WebSocket connection cannot take the sandbox down: a documented cap on subscriptions
per connection (an ``error`` event past it, in the shape of the service's limit error; the
connection stays), and replays shared between subscriptions instead of copied."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp

from marketframe.sandbox import Sandbox

NOW = "2026-11-20T10:00:00+08:00"
SAMPLE = Path(__file__).parents[1] / "data" / "samples" / "ws_error_max_connections.json"


async def _auth(ws: aiohttp.ClientWebSocketResponse) -> None:
    await ws.send_json({"event": "auth", "data": {"apikey": "sandbox-advanced"}})
    assert (await ws.receive_json(timeout=10))["event"] == "authenticated"


async def _reply(ws: aiohttp.ClientWebSocketResponse, *events: str) -> dict:
    """The next message of one of ``events`` (or an error), skipping data and heartbeats."""
    while True:
        body = await ws.receive_json(timeout=30)
        if body["event"] in (*events, "error"):
            return body


def test_a_subscribe_past_the_cap_is_an_error_and_the_connection_stays() -> None:
    with Sandbox(seed=3, now=NOW, rate_limit=None, max_subscriptions=3) as sb:

        async def script() -> tuple[dict, dict, dict, dict]:
            async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
                await _auth(ws)
                req = {"channel": "trades", "symbols": ["2330", "2317"]}
                await ws.send_json({"event": "subscribe", "data": req})
                ok = await _reply(ws, "subscribed")
                more = {"channel": "books", "symbols": ["2330", "2317", "2454"]}
                await ws.send_json({"event": "subscribe", "data": more})
                refused = await _reply(ws, "subscribed")
                one = {"channel": "books", "symbol": "2330"}
                await ws.send_json({"event": "subscribe", "data": one})
                third = await _reply(ws, "subscribed")
                await ws.send_json({"event": "subscriptions", "data": {}})
                held = await _reply(ws, "subscriptions")
                return ok, refused, third, held

        ok, refused, third, held = asyncio.run(script())
    assert ok["event"] == "subscribed" and len(ok["data"]) == 2
    # the service's documented limit error: event error, data {code, message}
    sample = json.loads(SAMPLE.read_text())
    assert refused["event"] == "error" and set(refused["data"]) == {"code", "message"}
    assert set(refused) == set(sample) and set(refused["data"]) == set(sample["data"])
    assert refused["data"]["message"].startswith("Maximum number of subscriptions reached")
    assert "3 per connection" in refused["data"]["message"]
    assert third["event"] == "subscribed"  # the connection stayed, nothing of the refused
    assert len(held["data"]) == 3  # request was taken


def test_subscriptions_share_one_replay_even_after_the_cache_let_it_go() -> None:
    with Sandbox(seed=3, now=NOW, rate_limit=None) as sb:

        async def subscriber(hold: asyncio.Event, subscribed: asyncio.Event) -> None:
            async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
                await _auth(ws)
                data = {"channel": "trades", "symbol": "2330"}
                await ws.send_json({"event": "subscribe", "data": data})
                assert (await _reply(ws, "subscribed"))["event"] == "subscribed"
                subscribed.set()
                await hold.wait()

        async def script() -> int:
            hold, first, second = asyncio.Event(), asyncio.Event(), asyncio.Event()
            a = asyncio.ensure_future(subscriber(hold, first))
            await first.wait()
            built = sb.streaming.builds
            sb.streaming._cache.clear()  # the LRU dropped it (512 entries, one board of 4)
            b = asyncio.ensure_future(subscriber(hold, second))
            await second.wait()
            hold.set()
            await asyncio.gather(a, b)
            return sb.streaming.builds - built

        assert asyncio.run(script()) == 0  # the second subscriber shares the first's replay
