"""The reader of :class:`marketframe.stream.AsyncStream`: frames in, rows buffered.

Each text frame is parsed once (orjson) and classified: ``data`` rows go to the buffer (trades
through the ledger first: duplicates dropped, gaps closed and handed to the backfill),
heartbeats are counted, control replies are queued for the request waiting for them. A frame
that cannot be read is counted (``stats.malformed``), kept truncated in ``malformed`` and
skipped: bad input never ends the stream. When the buffer is full the reader waits for the
consumer, except while a request waits for its reply or the stream is closing.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from typing import Any

import aiohttp
import orjson

from marketframe.exceptions import redact

from . import _protocol as proto
from ._backfill import Backfills
from ._buffer import RowBuffer
from ._frames import CHANNELS, FUTOPT_CHANNELS, futopt_trade_rows
from ._link import CLOSED, Link
from ._protocol import Subscription
from ._stats import StreamStats


class Inbox:
    """The reader of a stream's socket: rows into the buffer (trades through the backfills'
    ledger), replies onto the :class:`~._link.Link` for the request waiting for them."""

    def __init__(
        self,
        link: Link,
        buf: RowBuffer,
        gaps: Backfills,
        stats: StreamStats,
        malformed: deque[str],
        market: str,
        key: str,
    ) -> None:
        self._link = link
        self._buf = buf
        self._gaps = gaps
        self.stats = stats
        self.malformed = malformed  # the stream's: the latest frames skipped, oldest first
        self.market = market  # stock or futopt
        self._key = key  # redacted from every frame kept
        self.last_heartbeat: int | None = None  # epoch microseconds (server's clock)

    async def read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        on_text = self._on_text
        try:
            while True:
                msg = await ws.receive()
                if msg.type == aiohttp.WSMsgType.TEXT:
                    self._link.last_recv = time.monotonic()
                    on_text(msg.data)
                    if self._buf.full and not self._buf.urgent and not self._buf.released:
                        self.stats.paused += 1
                        await self._buf.wait_space()
                        self._link.last_recv = time.monotonic()
                elif msg.type in (
                    aiohttp.WSMsgType.CLOSE,
                    aiohttp.WSMsgType.CLOSING,
                    aiohttp.WSMsgType.CLOSED,
                    aiohttp.WSMsgType.ERROR,
                ):
                    code = msg.data if msg.type == aiohttp.WSMsgType.CLOSE else ws.close_code
                    self._link.last_close = (code, _reason(msg))
                    return
                elif msg.type == aiohttp.WSMsgType.BINARY:
                    self._bad_frame("a binary frame", repr(msg.data[:100]))
        finally:
            self._link.replies.put_nowait(CLOSED)
            if not ws.closed:
                with contextlib.suppress(aiohttp.ClientError, ConnectionError):
                    await ws.close()

    def _bad_frame(self, why: str, text: str) -> None:
        self.stats.malformed += 1
        self.malformed.append(f"{why}: {redact(text[:200], self._key)}")

    def parse(self, text: str) -> dict[str, Any] | None:
        """A frame's JSON object, or None (counted as malformed)."""
        try:
            body = orjson.loads(text)
        except orjson.JSONDecodeError:
            self._bad_frame("not JSON", text)
            return None
        if not isinstance(body, dict):
            self._bad_frame("not a JSON object", text)
            return None
        return body

    def _on_text(self, text: str) -> None:
        body = self.parse(text)
        if body is None:
            return
        event = body.get("event")
        if event == "data":
            channel = body.get("channel")
            row = body.get("data")
            futopt = self.market == "futopt"
            if channel not in (FUTOPT_CHANNELS if futopt else CHANNELS):
                return self._bad_frame("data on an unknown channel", text)
            if not isinstance(row, dict):
                return self._bad_frame("data is not an object", text)
            self.stats.messages += 1
            sid = body.get("id", "")  # no subscription has the id ""
            sub = self._link.subs.get(sid) or self._link.gone.get(sid)
            odd = sub.flag if sub is not None else False
            if channel != "trades":
                return self._buf.add(channel, odd, row)
            rows = futopt_trade_rows(row) if futopt else [row]
            if rows is None:  # a futures/options trades frame holds a list of trades
                return self._bad_frame("trades is not a list of objects", text)
            for one in rows:
                if not self._gaps.accept(one, odd, sub.symbol if sub else None):
                    self.stats.duplicates += 1
                    continue
                self._buf.add(channel, odd, one)
        elif event == "heartbeat":
            data = body.get("data")
            if not isinstance(data, dict):
                return self._bad_frame("heartbeat data is not an object", text)
            self.stats.heartbeats += 1
            with contextlib.suppress(TypeError, ValueError):
                self.last_heartbeat = int(data.get("time", ""))  # absent: ValueError
        elif event in proto.REPLIES:
            if event == "subscribed":
                # registered here, before the data that follows the reply is read
                for d in proto.as_list(body.get("data")):
                    if not isinstance(d, dict) or d.get("id") is None:
                        self._bad_frame("subscribed reply without an id", text)
                        continue
                    flag = self._link.pending_flag  # odd lot, or after hours on futures/options
                    sub = Subscription(
                        str(d["id"]),
                        str(d.get("channel")),
                        str(d.get("symbol")),
                        flag and self.market != "futopt",
                        flag and self.market == "futopt",
                    )
                    self._link.subs[sub.id] = sub
            if event == "error" and not self._link.lock.locked():
                self._link.server_error = proto.message_of(body)
            self._link.replies.put_nowait(body)
        else:
            self._bad_frame(f"unknown event {str(event)[:40]!r}", text)


def _reason(msg: aiohttp.WSMessage) -> str | None:
    extra = getattr(msg, "extra", None)
    return str(extra) if extra else None
