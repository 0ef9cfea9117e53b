"""Requests on the stream (subscribe, unsubscribe, subscriptions, ping) and their replies.

The protocol has no correlation ids, so one request is outstanding at a time (a lock) and its
replies are the control events the reader queues meanwhile. A request in flight when the
connection drops is run again once the stream has reconnected and resubscribed
(:meth:`Requests._healing`); it raises :class:`StreamClosed` only when reconnecting is off or
exhausted. While a request waits, a reader paused on a full buffer goes on reading (the reply
is behind the data).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import aiohttp

from marketframe.exceptions import (
    InvalidParams,
    StreamClosed,
    StreamError,
    StreamSubscribeError,
    StreamTimeout,
)

from . import _protocol as proto
from ._buffer import RowBuffer
from ._config import StreamOptions
from ._protocol import Subscription

T = TypeVar("T")
_CLOSED = object()  # put in the reply queue when the connection ends


class _Dropped(Exception):  # noqa: N818 - internal, never reaches the user
    """The connection dropped while a request waited for its reply: healed by
    :meth:`AsyncStream._healing`, or turned into :class:`StreamClosed`."""

    def __init__(self, ws: Any, code: int | None, reason: str | None) -> None:
        super().__init__("the connection closed before the reply")
        self.ws, self.code, self.reason = ws, code, reason


class Requests:
    """The request side of :class:`marketframe.stream.AsyncStream` (a mixin: the attributes
    below are set by its ``__init__``)."""

    url: str
    market: str  # stock or futopt
    options: StreamOptions
    _ws: aiohttp.ClientWebSocketResponse | None
    _subs: dict[str, Subscription]
    _gone: dict[str, Subscription]
    _replies: asyncio.Queue[Any]
    _lock: asyncio.Lock
    _buf: RowBuffer
    _online: bool
    _changed: asyncio.Event
    _pending_odd: bool
    _server_error: str | None
    _last_close: tuple[int | None, str | None]
    _error: BaseException | None
    _closed: bool
    _closing: bool

    async def subscribe(
        self,
        channel: str,
        symbols: str | Sequence[str],
        *,
        odd_lot: bool = False,
        after_hours: bool = False,
    ) -> list[Subscription]:
        """Subscribe one or many symbols on ``channel``; returns the acknowledged
        subscriptions. An unknown channel raises :class:`InvalidParams` before sending; a
        symbol the server refuses raises :class:`StreamSubscribeError` upon its reply (the
        accepted ones of the same call stay subscribed, see ``.subscribed``). If the
        connection drops before the reply, the request is sent again after the reconnect.
        ``odd_lot``: odd-lot stock trading; ``after_hours``: the after-hours session of
        futures/options (each only on its product's stream)."""
        proto.check_channel(channel, self.market)
        syms = proto.symbols_of(symbols)
        flag = self._flag(odd_lot, after_hours)
        first = True

        async def attempt() -> list[Subscription]:
            nonlocal first
            todo = syms
            if not first:  # what the resubscription already restored is not asked again
                have = {
                    s.symbol for s in self._subs.values() if s.channel == channel and s.flag == flag
                }
                todo = [x for x in syms if x not in have]
            first = False
            acked = await self._subscribe(channel, todo, flag) if todo else []
            wanted = set(syms)
            have = [
                s
                for s in self._subs.values()
                if s.channel == channel and s.flag == flag and s.symbol in wanted
            ]
            # an ack may name another symbol than asked (a server resolving an alias)
            return have + [s for s in acked if s not in have]

        return await self._healing(attempt)

    def _flag(self, odd_lot: bool, after_hours: bool) -> bool:
        """The subscription flag of this stream's product, checked before sending."""
        futopt = self.market == "futopt"
        wrong = (
            "odd_lot"
            if odd_lot and futopt
            else "after_hours"
            if after_hours and not futopt
            else None
        )
        if wrong is not None:
            raise InvalidParams(
                "stream.subscribe",
                wrong,
                f"is not for a {'futures/options' if futopt else 'stock'} stream",
                "after_hours=True on client.stream(market='futopt')"
                if wrong == "after_hours"
                else "odd_lot=True on a stock stream (client.stream())",
            )
        return odd_lot or after_hours

    async def _subscribe(self, channel: str, syms: list[str], odd_lot: bool) -> list[Subscription]:
        def refusal(r: dict[str, Any]) -> bool:
            return r.get("event") == "error" and proto.is_refusal(proto.message_of(r), syms)

        def done(replies: list[dict[str, Any]]) -> bool:
            # refused symbols get one error each, then one 'subscribed' lists the accepted
            return any(r.get("event") == "subscribed" for r in replies) or sum(
                map(refusal, replies)
            ) >= len(syms)

        self._pending_odd = odd_lot  # the reader registers the subscriptions it acknowledges
        replies = await self._request(proto.subscribe(channel, syms, odd_lot, self.market), done)
        subs: list[Subscription] = []
        failed: dict[str, str] = {}
        for r in replies:
            if r.get("event") == "subscribed":
                subs += [self._subs[i] for i in proto.reply_ids(r) if i in self._subs]
            elif refusal(r):
                msg = proto.message_of(r)
                sym = proto.refused_symbol(msg, syms) or ",".join(syms)
                failed[sym] = msg
            elif r.get("event") == "error":  # not about this request
                self._server_error = proto.message_of(r)
        if failed:
            raise StreamSubscribeError(channel, failed, subs)
        return subs

    async def unsubscribe(self, subs: Subscription | str | Iterable[Subscription | str]) -> None:
        """Unsubscribe subscriptions (or their ids). If the connection drops before the
        reply, they are not restored by the reconnect (which is what was asked)."""
        items = [subs] if isinstance(subs, Subscription | str) else list(subs)
        ids = [s.id if isinstance(s, Subscription) else str(s) for s in items]
        unknown = [i for i in ids if i not in self._subs]
        if unknown or not ids:
            raise InvalidParams(
                "stream.unsubscribe",
                "ids",
                f"has unknown ids {unknown}",
                ", ".join(self._subs) or "no subscription is active",
            )
        for i in ids:  # from now on a reconnect does not subscribe them again
            self._gone[i] = self._subs.pop(i)
        first = True

        async def attempt() -> None:
            nonlocal first
            if first:  # after a reconnect they are already gone
                first = False
                await self._request(
                    proto.unsubscribe(ids),
                    lambda rs: any(r.get("event") in ("unsubscribed", "error") for r in rs),
                )

        await self._healing(attempt)

    async def subscriptions(self) -> list[Subscription]:
        """The server's list of this connection's subscriptions."""

        async def attempt() -> list[dict[str, Any]]:
            return await self._request(proto.dumps("subscriptions"), bool)

        replies = await self._healing(attempt)
        self._raise_error_reply(replies[-1])
        out = []
        for d in proto.as_list(replies[-1].get("data")):
            if not isinstance(d, dict) or d.get("id") is None:
                continue
            known = self._subs.get(str(d["id"]))
            out.append(
                Subscription(
                    str(d["id"]),
                    str(d.get("channel")),
                    str(d.get("symbol")),
                    known.odd_lot if known else False,
                    known.after_hours if known else d.get("afterHours") is True,
                )
            )
        return out

    @property
    def subscribed(self) -> list[Subscription]:
        """The subscriptions acknowledged so far (kept across reconnects)."""
        return list(self._subs.values())

    async def ping(self, state: str | None = None) -> dict[str, Any]:
        """Send ``ping``; the ``pong``'s data (``time`` in epoch microseconds, ``state``)."""

        async def attempt() -> list[dict[str, Any]]:
            return await self._request(proto.ping(state), bool)

        replies = await self._healing(attempt)
        self._raise_error_reply(replies[-1])
        data = replies[-1].get("data")
        return dict(data) if isinstance(data, dict) else {}

    def _raise_error_reply(self, reply: dict[str, Any]) -> None:
        if reply.get("event") == "error":
            raise StreamError(f"the server answered with an error: {proto.message_of(reply)}")

    async def _healing(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run a request; when the connection drops before its reply, wait for the reconnect
        (and resubscription) and run it again. Raises what ended the stream when reconnecting
        is off or exhausted, :class:`StreamClosed` when the user closed it."""
        old: Any = None
        while True:
            await self._wait_online(old)
            try:
                return await attempt()
            except _Dropped as drop:
                if not self.options.reconnect:
                    raise StreamClosed(str(drop), drop.code, drop.reason) from None
                old = drop.ws

    async def _wait_online(self, old: Any) -> None:
        """Until a connection other than ``old`` is up and resubscribed."""
        while True:
            self._check_alive()
            ws = self._ws
            if self._online and ws is not None and ws is not old and not ws.closed:
                return
            await self._changed.wait()

    def _signal(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _set_online(self, online: bool) -> None:
        self._online = online
        self._signal()

    async def _request(
        self, text: str, done: Callable[[list[dict[str, Any]]], bool]
    ) -> list[dict[str, Any]]:
        """Send one request and collect its replies (requests are serialised: the protocol
        has no correlation ids, so one request is outstanding at a time). Raises
        :class:`_Dropped` when the connection ends first."""
        self._check_alive()
        async with self._lock:
            while not self._replies.empty():
                self._replies.get_nowait()
            ws = self._ws
            if ws is None or ws.closed:
                raise _Dropped(ws, *self._last_close)
            self._buf.urgent += 1  # the reply is behind the data: a paused reader resumes
            self._buf.wake()
            try:
                try:
                    await ws.send_str(text)
                except (aiohttp.ClientError, ConnectionError, RuntimeError):
                    # the transport is closing but the reader (maybe paused on a full
                    # buffer) has not read the close yet: let it, so the stream reconnects
                    done = _never
                replies: list[dict[str, Any]] = []
                while not done(replies):
                    try:
                        r = await asyncio.wait_for(self._replies.get(), self.options.reply_timeout)
                    except TimeoutError:
                        raise StreamTimeout(
                            f"no reply from {self.url} within {self.options.reply_timeout:g} s"
                        ) from None
                    if r is _CLOSED:
                        raise _Dropped(ws, *self._last_close)
                    replies.append(r)
                return replies
            finally:
                self._buf.urgent -= 1

    def _check_alive(self) -> None:
        if self._error is not None:
            raise self._error
        if self._closed or self._closing:
            raise StreamClosed("the stream was closed by the user")


def _never(replies: list[dict[str, Any]]) -> bool:
    """Waits for the connection to end (the request could not be sent)."""
    return False
