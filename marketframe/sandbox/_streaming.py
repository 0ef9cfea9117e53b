"""The sandbox's WebSocket streaming endpoints (`spec/streaming-api.md`): stocks on
``/marketdata/v1.0/stock/streaming``, futures and options on
``/marketdata/{v1.0,v1.1}/futopt/streaming`` (same protocol; what they send is in
``_stream_futopt``).

A connection authenticates, subscribes channels for symbols, and receives ``data`` events
replayed from the same trades the REST endpoints serve (the streamed trades of a day are the
intraday trades endpoint's trades, trial matches flagged ``isTrial``). The replay (its market
clock, ``stream_speed`` and ``stream_from``, and the events it sends) is in ``_stream_replay``.

Faults: ``drop_after`` closes each connection after that many data events;
``max_connections`` refuses further connections with the ``1001`` error; ``garbage_every``
sends one malformed frame after every that many data events (cycling through invalid JSON, a
JSON array, ``data: null``, a heartbeat with a string ``data``, a data event on an unknown
channel and a trade row whose price is not a number), to test that clients skip them.

A request the server cannot read (not JSON, no ``event``, ``data`` not an object, ``symbols``
not a list of strings, ...) is answered with an ``error`` event; the connection stays open.
A client that goes away mid-send is dropped quietly. When the sandbox's clock moves on to the
next session day, a connection whose subscriptions have replayed their day goes on with the
new day's events (as the real service keeps a connection across days).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import hashlib
import heapq
import time
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import Any

import orjson
from aiohttp import WSMsgType, web

from . import _calendar as cal
from . import _stream_futopt as fo
from ._auth import ws_plan
from ._query import Json
from ._service import Service
from ._stream_conn import _Conn, _Frames, _ids, _quietly, _strings, _Sub
from ._stream_events import garbage
from ._stream_replay import Replay, StreamSettings
from ._stream_send import flush

CHANNELS = ("trades", "candles", "books", "aggregates", "indices")
#: data frames one connection sends before it yields to the event loop
_FAIR_SHARE = 32
#: seconds between attempts to write frames a slow client has not made room for yet
_RETRY = 0.05
#: the error of a subscribe past the cap: the shape of the service's documented limit error
#: (ws_error_max_connections: ``data`` with ``code`` and ``message``); code and text are the
#: sandbox's guess (docs/sandbox.md)
SUBSCRIPTIONS_CODE = 1001


class Streaming(Replay):
    def __init__(self, service: Service, settings: StreamSettings) -> None:
        super().__init__(service, settings)
        self.garbage_sent = 0
        self.dropped = 0  # connections dropped for a full send buffer

    # --- the WebSocket handler -------------------------------------------------------------------

    def handler(
        self, market: str, version: str
    ) -> Callable[[web.Request], Awaitable[web.WebSocketResponse]]:
        """The handler of ``/marketdata/{version}/{market}/streaming``."""

        async def handle(request: web.Request) -> web.WebSocketResponse:
            return await self.handle(request, market, version)

        return handle

    async def handle(
        self, request: web.Request, market: str = "stock", version: str = "v1.0"
    ) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=None, max_msg_size=1 << 20)
        await ws.prepare(request)
        s = self.settings
        if s.max_connections is not None and self.connections >= s.max_connections:
            await ws.send_str(
                orjson.dumps(
                    {
                        "event": "error",
                        "data": {"code": 1001, "message": "Maximum number of connections reached"},
                    }
                ).decode()
            )
            await ws.close()
            return ws
        self.connections += 1
        conn = _Conn(ws, _Frames(ws, request), market=market, version=version)
        if s.stream_speed == 0:
            conn.cursor = self.start_us()
        tasks = [
            asyncio.ensure_future(_quietly(self._pump(conn))),
            asyncio.ensure_future(_quietly(self._heartbeats(conn))),
        ]
        try:
            await _quietly(self._read(conn))
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.connections -= 1
            if not ws.closed:
                with contextlib.suppress(ConnectionError):
                    await ws.close()
            conn.subs.clear()
            self.release()
        return ws

    async def _send(self, conn: _Conn, event: str, data: Any) -> None:
        conn.frames.add_message(orjson.dumps({"event": event, "data": data}))
        await self._flush(conn)

    async def _error(self, conn: _Conn, message: str, code: int | None = None) -> None:
        """The service's error event: ``data`` with the message, and the numeric code of a
        limit (``ws_error_max_connections``) when there is one; nothing beside ``data``."""
        await self._send(
            conn,
            "error",
            {"message": message} if code is None else {"code": code, "message": message},
        )

    async def _flush(self, conn: _Conn) -> None:
        """Send what is queued for ``conn`` (:func:`._stream_send.flush`)."""
        if await flush(conn, self.settings):
            self.dropped += 1
            raise ConnectionResetError("dropped: the client is not reading")

    async def _read(self, conn: _Conn) -> None:
        ws = conn.ws
        deadline = time.monotonic() + self.settings.auth_timeout
        while not ws.closed:
            timeout = None if conn.authed else max(0.0, deadline - time.monotonic())
            try:
                msg = await ws.receive(timeout=timeout)
            except TimeoutError:
                await self._error(conn, "Authentication timed out")
                await ws.close()
                return
            if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                return
            if msg.type != WSMsgType.TEXT:
                continue
            problem = None
            try:
                body = orjson.loads(msg.data)
            except orjson.JSONDecodeError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("event"), str):
                problem = "Invalid message: expected a JSON object with an event"
            elif not isinstance(body.get("data") or {}, dict):
                problem = "Invalid message: data must be an object"
            if problem is not None:
                await self._error(conn, problem)
                continue
            await self._dispatch(conn, body["event"], body.get("data") or {})

    async def _dispatch(self, conn: _Conn, event: str, data: dict[str, Any]) -> None:
        if event == "auth":  # exactly one of apikey / token / sdkToken (_auth)
            if ws_plan(data) is not None:
                conn.authed = True
                await self._send(conn, "authenticated", {"message": "Authenticated successfully"})
            else:  # refused (no code), then the service closes the connection
                await self._error(conn, "Invalid authentication credentials")
                await conn.ws.close()
            return
        if event == "ping":
            pong: dict[str, Any] = {"time": cal.epoch_us(datetime.now(cal.TAIPEI))}
            if "state" in data:
                pong["state"] = data["state"]
            await self._send(conn, "pong", pong)
            return
        if not conn.authed:
            await self._error(conn, "Unauthenticated: send an auth event with your API key first")
            return
        if event == "subscribe":
            await self._subscribe(conn, data)
        elif event == "unsubscribe":
            ids = data.get("ids") if "ids" in data else [data.get("id")]
            if not _ids(ids):
                await self._error(
                    conn, "Invalid unsubscribe: give id (a string) or ids (a list of strings)"
                )
                return
            names = [str(i) for i in ids]
            gone = [{"id": i} for i in names if conn.subs.pop(i, None) is not None]
            missing = [i for i in names if i not in {g["id"] for g in gone}]
            if missing:
                await self._error(conn, f"Subscription not found: {', '.join(missing)}")
            if gone:
                await self._send(conn, "unsubscribed", gone if "ids" in data else gone[0])
            conn.changed.set()
        elif event == "subscriptions":
            await self._send(conn, "subscriptions", [s.ack() for s in conn.subs.values()])
        else:
            await self._error(
                conn,
                f"Unknown event '{event}'; allowed: auth, ping, "
                "subscribe, unsubscribe, subscriptions",
            )

    async def _subscribe(self, conn: _Conn, data: Json) -> None:
        channel = data.get("channel")
        allowed = fo.CHANNELS if conn.market == "futopt" else CHANNELS
        if not isinstance(channel, str) or channel not in allowed:
            await self._error(conn, f"Invalid channel '{channel}'; allowed: {', '.join(allowed)}")
            return
        many = "symbols" in data
        symbols = data.get("symbols") if many else [data.get("symbol")]
        if not _strings(symbols) or (many and not symbols):
            await self._error(
                conn,
                "Invalid subscribe: give symbol (a string) or symbols (a "
                "non-empty list of strings)",
            )
            return
        futopt = conn.market == "futopt"
        oddlot = bool(data.get("afterHours" if futopt else "intradayOddLot"))
        # the subscription starts where the market clock is when the request arrives, for
        # every symbol of it: the time the sandbox takes to build the events (longer on a busy
        # machine) must not make a subscriber miss what happened meanwhile
        start = conn.cursor if self.settings.stream_speed == 0 else self.market_now_us()
        day = self.replay_date()
        wanted = []
        for symbol in symbols:
            resolved = self._resolve(conn, channel, symbol, day, oddlot)
            # an alias and its contract are one subscription (one id)
            sid = hashlib.sha1(
                (
                    f"{channel}:{resolved}:{oddlot}"
                    if not futopt
                    else f"futopt:{conn.version}:{channel}:{resolved}:{oddlot}"
                ).encode()
            ).hexdigest()[:20]
            wanted.append((symbol, resolved, sid))
        cap = self.settings.max_subscriptions
        new = {sid for _, resolved, sid in wanted if resolved is not None} - set(conn.subs)
        if cap is not None and len(conn.subs) + len(new) > cap:
            # all or nothing, before anything is built; the connection stays open
            await self._error(
                conn,
                f"Maximum number of subscriptions reached ({cap} per "
                f"connection; {len(conn.subs)} held, {len(new)} more asked)",
                SUBSCRIPTIONS_CODE,
            )
            return
        replies = []
        for symbol, resolved, sid in wanted:
            if resolved is None:
                await self._error(
                    conn, f"Subscription failed: symbol '{symbol}' not available on {channel}"
                )
                continue
            if conn.gone:  # the client left mid-request: build nothing more for it
                return
            events = await self.events_async(channel, resolved, oddlot, conn.market, conn.version)
            pos = bisect.bisect_left(events.times, start)
            sub = _Sub(
                sid, channel, resolved, oddlot, events, pos, day, conn.market, conn.version, symbol
            )
            conn.subs[sid] = sub
            replies.append(sub.ack())
        if replies:
            await self._send(conn, "subscribed", replies if many else replies[0])
        conn.changed.set()

    def _resolve(
        self, conn: _Conn, channel: str, symbol: str, day: date, after_hours: bool
    ) -> str | None:
        """The instrument (stock) or contract (futures/options, in the night session when
        ``after_hours``) ``symbol`` names, or None."""
        if conn.market == "futopt":
            return fo.resolve(self.service.futopt, symbol, day, after_hours)
        inst = self.market.universe.get(symbol)
        if inst is None or (channel == "indices") != (inst.type == "INDEX"):
            return None
        return inst.symbol

    async def _next_day(self, conn: _Conn) -> bool:
        """The sandbox's clock reached a new session day: subscriptions go on with all its
        events (a connection subscribed all along misses none). True if any moved."""
        day = self.replay_date()
        moved = [sub for sub in conn.subs.values() if sub.day != day]
        if not moved:
            return False
        if self.settings.stream_speed == 0:
            conn.cursor = self.start_us()
        for sub in moved:  # subscribed all along: every event of the new day
            sub.events = await self.events_async(
                sub.channel, sub.symbol, sub.oddlot, sub.market, sub.version
            )
            sub.pos = 0
            sub.day = day
        return True

    async def _heartbeats(self, conn: _Conn) -> None:
        while not conn.ws.closed:
            await asyncio.sleep(self.settings.heartbeat)
            if conn.ws.closed:
                return
            now = cal.epoch_us(datetime.now(cal.TAIPEI))
            await self._send(conn, "heartbeat", {"time": str(now)})

    async def _pump(self, conn: _Conn) -> None:
        """Send data events in market-time order across the connection's subscriptions.

        A heap of (next event time, subscription order) picks the next event; ties go to the
        subscription made first. The heap is rebuilt whenever the subscriptions change
        (``conn.changed``), which may happen at any ``await``. Frames go out together
        (``conn.frames``), flushed before every ``await``."""
        ws = conn.ws
        frames = conn.frames
        s = self.settings
        heap: list[tuple[int, int, _Sub]] = []
        dirty = True
        horizon = -1  # nothing later than the sandbox's "now" is sent (REST shows no more)
        while not ws.closed:
            if dirty or conn.changed.is_set():
                conn.changed.clear()
                dirty = False
                heap = [
                    (sub.events.times[sub.pos], order, sub)
                    for order, sub in enumerate(conn.subs.values())
                    if sub.pos < len(sub.events)
                ]
                heapq.heapify(heap)
            if not heap:
                await self._flush(conn)
                # everything of the day is sent: wait for a new subscription or the next day
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(conn.changed.wait(), 0.25)
                dirty = await self._next_day(conn)
                continue
            t, order, best = heap[0]
            if t > horizon:
                horizon = self.service.t_us(self.replay_date())
                if t > horizon:  # not traded yet by the sandbox's clock: wait for it
                    await self._flush(conn)
                    cap = _RETRY if frames.queued else 1.0
                    try:
                        await asyncio.wait_for(conn.changed.wait(), min((t - horizon) / 1e6, cap))
                    except TimeoutError:
                        pass
                    continue
            if s.stream_speed > 0:
                wait = (t - self.market_now_us()) / 1e6 / s.stream_speed
                if wait > 0:
                    await self._flush(conn)
                    # while frames wait for a slow client, come back soon to write them
                    cap = _RETRY if frames.queued else 1.0
                    try:
                        await asyncio.wait_for(conn.changed.wait(), min(wait, cap))
                    except TimeoutError:
                        pass
                    continue
            else:
                conn.cursor = t
            body = best.events.body(best.pos)
            best.pos += 1
            if best.pos < len(best.events):
                heapq.heapreplace(heap, (best.events.times[best.pos], order, best))
            else:
                heapq.heappop(heap)
            frames.add(body, best)
            conn.sent_data += 1
            if conn.sent_data % _FAIR_SHARE == 0:
                # A catch-up replay can send thousands of frames without the writer ever
                # blocking (loopback drains at once): let REST and other connections in.
                await self._flush(conn)
                await asyncio.sleep(0)
            if s.garbage_every and conn.sent_data % s.garbage_every == 0:
                self.garbage_sent += 1  # kinds in turn across connections
                frames.add_message(garbage(self.garbage_sent, best).encode())
                await self._flush(conn)
            if s.drop_after is not None and conn.sent_data >= s.drop_after:
                await self._flush(conn)
                await frames.flush()  # every frame before the close, on a market clock too
                await ws.close(code=1011, message=b"dropped by the sandbox (drop_after)")
                return
