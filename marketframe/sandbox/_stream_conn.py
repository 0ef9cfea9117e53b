"""One streaming connection of the sandbox and its subscriptions (state only; the protocol
is in ``_streaming``)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ._stream_events import Events


@dataclass
class _Sub:
    id: str
    channel: str
    symbol: str
    oddlot: bool  # odd lot (stock) or after-hours session (futures/options)
    events: Events
    pos: int = 0
    day: Any = None  # the session day of ``events``
    market: str = "stock"
    version: str = "v1.0"
    requested: str = ""  # the symbol as subscribed (a continuous alias stays an alias)

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


@dataclass
class _Conn:
    ws: web.WebSocketResponse
    authed: bool = False
    subs: dict[str, _Sub] = field(default_factory=dict)
    sent_data: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    cursor: int = 0  # market time reached (fast mode)
    market: str = "stock"  # stock or futopt: the path of the connection
    version: str = "v1.0"


def _strings(values: Any, allow_int: bool = False) -> bool:
    """``values`` is a list of non-empty strings (or ints, ``allow_int``)."""
    kinds = (str, int) if allow_int else (str,)
    return isinstance(values, list) and all(
        isinstance(v, kinds) and not isinstance(v, bool) and str(v) for v in values
    )


async def _quietly(coro: Any) -> None:
    """Run a connection's task; a client that went away mid-send ends it without a traceback."""
    with contextlib.suppress(ConnectionError):
        await coro
