"""One streaming connection of the sandbox and its subscriptions (state only; the protocol
is in ``_streaming``)."""

from __future__ import annotations

import asyncio
import contextlib
import struct
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


#: RFC 6455 section 5.2 headers of a final, unmasked text frame (a server's), by payload length
_LEN1 = struct.Struct("!BB").pack
_LEN2 = struct.Struct("!BBH").pack
_LEN3 = struct.Struct("!BBQ").pack
#: what precedes ``data`` in each data frame
_HEAD = b'{"event":"data","data":'


class _Frames:
    """The data frames of one connection, written to the socket together.

    Each frame written on its own cost one ``send`` system call, the largest part of the
    sandbox's time per streamed message; the pump adds frames here and flushes before every
    ``await`` (so nothing the other tasks send, replies or heartbeats, is reordered with them),
    one write for the frames sent between two awaits. A connection that negotiated compression
    sends each frame through aiohttp's writer, which compresses it."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request) -> None:
        self.ws = ws
        self.request = request
        self.parts: list[bytes] = []
        self.pending: list[bytes] = []  # whole payloads, when compressed

    def add(self, body: bytes, sub: _Sub) -> None:
        """The data event ``body`` (its ``data``) of subscription ``sub``."""
        if self.ws.compress:
            self.pending.append(_HEAD + body + sub.tail)
            return
        n = len(_HEAD) + len(body) + len(sub.tail)
        if n < 126:
            head = _LEN1(0x81, n)
        elif n < 65536:
            head = _LEN2(0x81, 126, n)
        else:
            head = _LEN3(0x81, 127, n)
        self.parts += (head, _HEAD, body, sub.tail)

    async def flush(self) -> None:
        if self.pending:
            pending, self.pending = self.pending, []
            for payload in pending:
                await self.ws.send_frame(payload, WSMsgType.TEXT)
        if not self.parts:
            return
        data = b"".join(self.parts)
        self.parts.clear()
        transport = self.request.transport
        if self.ws.closed or transport is None or transport.is_closing():
            raise ConnectionResetError("Cannot write to closing transport")
        transport.write(data)
        await self.request.writer.drain()  # waits only while the socket's buffer is full


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
