"""A tiny real WebSocket server (aiohttp, 127.0.0.1) whose behaviour a test scripts.

It speaks the streaming protocol well enough for the client (auth, subscribe, unsubscribe,
subscriptions, ping), and lets a test inject what the sandbox never sends: frames that cannot
be read, drops at an exact moment, garbage in the auth reply, unrelated error events. It is a
server the client talks to over a real socket, not a mock of the client.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import WSMsgType, web

PATH = "/marketdata/v1.0/stock/streaming"
Frame = str | bytes


def dumps(event: str, data: Any = None, **extra: Any) -> str:
    return orjson.dumps({"event": event, "data": data, **extra}).decode()


def trade(symbol: str, serial: int, time_us: int, price: Any = 100.5, **extra: Any) -> str:
    """A ``trades`` data frame."""
    row = {
        "symbol": symbol,
        "type": "EQUITY",
        "exchange": "TWSE",
        "market": "TSE",
        "price": price,
        "size": 1,
        "volume": 1,
        "time": time_us,
        "serial": serial,
        **extra,
    }
    return dumps("data", row, id=f"trades:{symbol}", channel="trades")


@dataclass
class Conn:
    number: int  # 1 for the first connection
    ws: web.WebSocketResponse
    subs: dict[str, dict[str, Any]] = field(default_factory=dict)

    async def send(self, *frames: Frame) -> None:
        for f in frames:
            if isinstance(f, bytes):
                await self.ws.send_bytes(f)
            else:
                await self.ws.send_str(f)


# on_request(conn, body) -> True when the script handled the request itself (no default reply)
Hook = Callable[[Conn, dict[str, Any]], Any]


class ScriptedServer:
    def __init__(self) -> None:
        self.connections: list[Conn] = []
        self.requests: list[tuple[int, dict[str, Any]]] = []
        self.on_request: Hook | None = None
        self.auth_reply: Callable[[Conn], Frame] = lambda conn: dumps(
            "authenticated", {"message": "Authenticated successfully"}
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{PATH}"

    def call(self, coro: Any, timeout: float = 30.0) -> Any:
        """Run a coroutine on the server's loop (e.g. ``conn.send(...)``) and wait for it."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        conn = Conn(len(self.connections) + 1, ws)
        self.connections.append(conn)
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            body = orjson.loads(msg.data)
            self.requests.append((conn.number, body))
            if self.on_request is not None:
                handled = self.on_request(conn, body)
                if asyncio.iscoroutine(handled):
                    handled = await handled
                if handled:
                    continue
            await self.reply(conn, body)
        return ws

    async def reply(self, conn: Conn, body: dict[str, Any]) -> None:
        """The default answer to a request."""
        event, data = body.get("event"), body.get("data") or {}
        if event == "auth":
            await conn.send(self.auth_reply(conn))
        elif event == "ping":
            await conn.send(
                dumps("pong", {"time": 1, **({"state": data["state"]} if "state" in data else {})})
            )
        elif event == "subscribe":
            syms = data.get("symbols") or [data.get("symbol")]
            out = []
            for sym in syms:
                sid = f"{data['channel']}:{sym}"
                conn.subs[sid] = {"id": sid, "channel": data["channel"], "symbol": sym}
                out.append(conn.subs[sid])
            await conn.send(dumps("subscribed", out if "symbols" in data else out[0]))
        elif event == "unsubscribe":
            ids = data.get("ids") or [data.get("id")]
            gone = [{"id": i} for i in ids if conn.subs.pop(i, None)]
            await conn.send(dumps("unsubscribed", gone if "ids" in data else gone[0]))
        elif event == "subscriptions":
            await conn.send(dumps("subscriptions", list(conn.subs.values())))

    def serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        app = web.Application()
        app.router.add_get(PATH, self.handle)
        runner = web.AppRunner(app, handle_signals=False)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def after_subscribe(self, frames: Callable[[Conn], list[Frame]]) -> None:
        """Answer every subscribe, then send ``frames(conn)`` on that connection."""

        async def hook(conn: Conn, body: dict[str, Any]) -> bool:
            if body.get("event") != "subscribe":
                return False
            await self.reply(conn, body)
            await conn.send(*frames(conn))
            return True

        self.on_request = hook
