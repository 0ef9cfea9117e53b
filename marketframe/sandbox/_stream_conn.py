"""One streaming connection of the sandbox and its subscriptions (state only; the protocol
is in ``_streaming``)."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections import deque
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeGuard

from aiohttp import WSMsgType, web

from ._stream_events import Events


@dataclass
class _Sub:
    id: str
    channel: str
    symbol: str
    oddlot: bool  # odd lot (stock) or after-hours session (futures/options)
    events: Events
    pos: int = 0
    day: date | None = None  # the session day of ``events``
    market: str = "stock"
    version: str = "v1.0"
    requested: str = ""  # the symbol as subscribed (a continuous alias stays an alias)
    tail: bytes = b""  # what follows ``data`` in each data frame (the id and channel)

    def __post_init__(self) -> None:
        self.tail = b',"id":"' + self.id.encode() + b'","channel":"' + self.channel.encode() + b'"}'

    def ack(self) -> dict[str, Any]:
        """This subscription in ``subscribed`` and ``subscriptions`` replies."""
        out: dict[str, Any] = {
            "id": self.id,
            "channel": self.channel,
            "symbol": self.requested or self.symbol,
        }
        if self.oddlot:
            out["afterHours" if self.market == "futopt" else "intradayOddLot"] = True
        return out


#: RFC 6455 section 5.2 headers of a final, unmasked frame (a server's), by payload length
_LEN1 = struct.Struct("!BB").pack
_LEN2 = struct.Struct("!BBH").pack
_LEN3 = struct.Struct("!BBQ").pack


def _header(first: int, n: int) -> bytes:
    """The header of a final, unmasked frame (``first``: 0x81 text, 0x88 close) of ``n``
    bytes."""
    if n < 126:
        return _LEN1(first, n)
    return _LEN2(first, 126, n) if n < 65536 else _LEN3(first, 127, n)


#: what precedes ``data`` in each data frame
_HEAD = b'{"event":"data","data":'


class _Frames:
    """What one connection sends, queued in order and written to the socket together.

    Each frame written on its own cost one ``send`` system call, the largest part of the
    sandbox's time per streamed message; the pump adds frames here and flushes before every
    ``await``, one write for the frames sent between two awaits. Replies and heartbeats go
    through the same queue, so nothing is reordered with the data frames. A connection that
    negotiated compression sends each message through aiohttp's writer, which compresses it.

    ``flush(wait=True)`` writes everything and waits while the client is slow (the replay
    as fast as possible waits for its reader). ``flush(wait=False)`` writes only while the
    socket's buffer is under its high-water mark and leaves the rest queued: a market clock
    does not wait, and what waits for a client (here and in the socket's buffer,
    :attr:`backlog`) is what the send buffer bounds."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request) -> None:
        self.ws = ws
        self.request = request
        self.parts: list[bytes | memoryview] = []  # whole frames, headers included
        self.pending: deque[bytes] = deque()  # whole payloads, when compressed
        self.queued = 0  # bytes in parts and pending
        self._compressing = asyncio.Lock()  # one sender of pending at a time: in order

    def add(self, body: bytes | memoryview, sub: _Sub) -> None:
        """The data event ``body`` (its ``data``) of subscription ``sub``."""
        self._text(len(_HEAD) + len(body) + len(sub.tail), (_HEAD, body, sub.tail))

    def add_message(self, payload: bytes) -> None:
        """A whole message (a reply, a heartbeat, an error)."""
        self._text(len(payload), (payload,))

    def _text(self, n: int, chunks: tuple[bytes | memoryview, ...]) -> None:
        self.queued += n
        if self.ws.compress:
            self.pending.append(b"".join(chunks))
            return
        self.parts.append(_header(0x81, n))
        self.parts.extend(chunks)

    @property
    def backlog(self) -> int:
        """Bytes waiting for the client: queued here and in the socket's write buffer."""
        transport = self.request.transport
        return self.queued + (transport.get_write_buffer_size() if transport else 0)

    def _writable(self) -> asyncio.Transport:
        transport = self.request.transport
        if self.ws.closed or transport is None or transport.is_closing():
            raise ConnectionResetError("Cannot write to closing transport")
        return transport

    @staticmethod
    def _full(transport: asyncio.Transport) -> bool:
        return transport.get_write_buffer_size() > transport.get_write_buffer_limits()[1]

    async def flush(self, wait: bool = True) -> None:
        transport = self._writable()
        if self.parts and (wait or not self._full(transport)):
            data = b"".join(self.parts)
            self.parts.clear()
            self.queued = 0
            transport.write(data)
        if self.pending:
            async with self._compressing:
                while self.pending and (wait or not self._full(self._writable())):
                    payload = self.pending.popleft()
                    self.queued -= len(payload)
                    await self.ws.send_frame(payload, WSMsgType.TEXT)
        if wait:
            await self.request.writer.drain()  # waits only while the socket's buffer is full

    def write_now(self, payload: bytes, close: tuple[int, bytes] | None = None) -> None:
        """``payload`` (and a close frame) written at once behind what the socket holds, and
        nothing of what is queued here: the last words to a client being dropped."""
        self.parts.clear()
        self.pending.clear()
        self.queued = 0
        transport = self._writable()
        data = _header(0x81, len(payload)) + payload
        if close is not None:
            reason = struct.pack("!H", close[0]) + close[1]
            data += _header(0x88, len(reason)) + reason
        transport.write(data)


@dataclass
class _Conn:
    ws: web.WebSocketResponse
    frames: _Frames
    authed: bool = False
    subs: dict[str, _Sub] = field(default_factory=dict)
    sent_data: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    cursor: int = 0  # market time reached (fast mode)
    market: str = "stock"  # stock or futopt: the path of the connection
    version: str = "v1.0"

    @property
    def gone(self) -> bool:
        """The connection is closed or closing (the client may have vanished unseen)."""
        transport = self.frames.request.transport
        return self.ws.closed or transport is None or transport.is_closing()


def _strings(values: object) -> TypeGuard[list[str]]:
    """``values`` is a list of non-empty strings (symbols)."""
    return _listed(values, (str,))


def _ids(values: object) -> TypeGuard[list[str | int]]:
    """``values`` is a list of non-empty strings or ints (subscription ids)."""
    return _listed(values, (str, int))


def _listed(values: object, kinds: tuple[type, ...]) -> bool:
    return isinstance(values, list) and all(
        isinstance(v, kinds) and not isinstance(v, bool) and str(v) for v in values
    )


async def _quietly(coro: Any) -> None:
    """Run a connection's task; a client that went away mid-send ends it without a traceback."""
    with contextlib.suppress(ConnectionError):
        await coro
