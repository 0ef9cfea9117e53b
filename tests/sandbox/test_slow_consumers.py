"""A client that stops reading cannot make the sandbox grow: on a market clock, what waits for
one connection is bounded (``send_buffer``); past it the client is told (an ``error`` event)
and dropped, and every other client goes on. Replays nobody holds are freed past the cache's
budget, so the memory comes back when connections close.

The sandbox serves from its own thread over real sockets; the stalled client is a plain
socket with a small receive buffer that never reads until it is dropped."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import time

import aiohttp
import requests
import websocket

from marketframe.sandbox import Sandbox
from marketframe.sandbox._stream_replay import CACHE_BYTES

NOW = "2026-11-20T13:30:00+08:00"
KEY = "sandbox-advanced"


def _symbols(sb: Sandbox, n: int) -> list[str]:
    body = requests.get(
        f"{sb.base_url}/stock/intraday/tickers",
        params={"type": "EQUITY", "market": "TSE"},
        headers={"X-API-KEY": KEY},
        timeout=60,
    ).json()
    return [r["symbol"] for r in body["data"]][:n]


def _stalled(sb: Sandbox, symbols: list[str]) -> websocket.WebSocket:
    """A connection subscribed to the books of ``symbols`` that reads nothing more."""
    ws = websocket.create_connection(
        sb.ws_url, timeout=60, sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 14),)
    )
    ws.send(json.dumps({"event": "auth", "data": {"apikey": KEY}}))
    ws.send(json.dumps({"event": "subscribe", "data": {"channel": "books", "symbols": symbols}}))
    return ws


def _closed(sb: Sandbox) -> None:
    """Wait until the sandbox has closed every WebSocket connection (its handlers ended)."""
    while sb.streaming.connections:
        time.sleep(0.05)


def _last_words(ws: websocket.WebSocket) -> tuple[list[dict], int | None]:
    """Everything the sandbox sent ``ws`` until it closed: the non-data events and the close
    code (None: the socket ended without a close frame)."""
    events = []
    while True:
        try:
            op, data = ws.recv_data(control_frame=True)
        except websocket.WebSocketConnectionClosedException:
            return events, None
        if op == websocket.ABNF.OPCODE_CLOSE:
            return events, int.from_bytes(data[:2], "big")
        if op == websocket.ABNF.OPCODE_TEXT and not data.startswith(b'{"event":"data"'):
            events.append(json.loads(data))


def test_a_stalled_consumer_is_told_and_dropped_while_the_others_are_served() -> None:
    bound = 1 << 16
    opts = {"stream_speed": 600, "stream_from": "09:00", "send_buffer": bound}
    with Sandbox(seed=4, now=NOW, rate_limit=None, **opts) as sb:
        stalled = _stalled(sb, _symbols(sb, 20))
        dropped = threading.Event()

        async def reader() -> tuple[int, int]:
            """A client reading trades of 2330 all along: its data events before and after
            the stalled one was dropped."""
            before = after = 0
            async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
                await ws.send_json({"event": "auth", "data": {"apikey": KEY}})
                sub = {"channel": "trades", "symbol": "2330"}
                await ws.send_json({"event": "subscribe", "data": sub})
                while after < 20:
                    body = await ws.receive_json(timeout=120)
                    if body["event"] != "data":
                        continue
                    if sb.streaming.dropped:
                        dropped.set()
                        after += 1
                    else:
                        before += 1
            return before, after

        before, after = asyncio.run(reader())
        events, code = _last_words(stalled)
        stalled.close()
        quote = requests.get(
            f"{sb.base_url}/stock/intraday/quote/2330", headers={"X-API-KEY": KEY}, timeout=60
        )
    assert dropped.is_set() and sb.streaming.dropped == 1
    assert after == 20  # the reader went on after the drop
    errors = [e for e in events if e["event"] == "error"]
    assert len(errors) == 1 and set(errors[0]) == {"event", "data"}
    message = errors[0]["data"]["message"]
    assert message.startswith("Slow consumer") and f"send buffer of {bound} bytes" in message
    assert code == 1008
    assert quote.status_code == 200


def test_without_a_bound_a_stalled_consumer_stays_connected() -> None:
    """``send_buffer=None``: nobody is dropped (the old behaviour, by choice)."""
    opts = {"stream_speed": 600, "stream_from": "09:00", "send_buffer": None}
    with Sandbox(seed=4, now=NOW, rate_limit=None, **opts) as sb:
        stalled = _stalled(sb, _symbols(sb, 5))

        async def reader() -> int:
            n = 0
            async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
                await ws.send_json({"event": "auth", "data": {"apikey": KEY}})
                sub = {"channel": "books", "symbols": _symbols(sb, 5)}
                await ws.send_json({"event": "subscribe", "data": sub})
                while n < 200:
                    if (await ws.receive_json(timeout=120))["event"] == "data":
                        n += 1
            return n

        assert asyncio.run(reader()) == 200
        dropped = sb.streaming.dropped
        stalled.close()
    assert dropped == 0


def test_replays_nobody_holds_are_freed_past_the_cache_budget() -> None:
    with Sandbox(seed=4, now=NOW, rate_limit=None) as sb:
        symbols = _symbols(sb, 40)

        async def subscribe_and_leave() -> list[object]:
            async with aiohttp.ClientSession() as s, s.ws_connect(sb.ws_url) as ws:
                await ws.send_json({"event": "auth", "data": {"apikey": KEY}})
                sub = {"channel": "books", "symbols": symbols}
                await ws.send_json({"event": "subscribe", "data": sub})
                while (await ws.receive_json(timeout=120))["event"] != "subscribed":
                    pass
                return list(sb.streaming._shared.values())

        held = asyncio.run(subscribe_and_leave())
        _closed(sb)
        kept = len(held)
        assert kept == len(symbols)
        del held
        gc.collect()
        left = list(sb.streaming._shared.values())
    assert len(left) < kept  # replays were let go: the cache keeps at most its budget
    assert sum(e.nbytes for e in left) <= CACHE_BYTES
