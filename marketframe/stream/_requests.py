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
from ._link import CLOSED, Link
from ._protocol import Subscription

T = TypeVar("T")


class _Dropped(Exception):  # noqa: N818 - internal, never reaches the user
    """The connection dropped while a request waited for its reply: healed by
    :meth:`Requests._healing`, or turned into :class:`StreamClosed`."""

    def __init__(self, ws: Any, code: int | None, reason: str | None) -> None:
        super().__init__("the connection closed before the reply")
        self.ws, self.code, self.reason = ws, code, reason


class Requests:
    """The requests of a stream on its :class:`~._link.Link`; the reader (``_inbox``) queues
    their replies there."""

    def __init__(
        self, link: Link, buf: RowBuffer, options: StreamOptions, url: str, market: str
    ) -> None:
        self._link = link
        self._buf = buf
        self.options = options
        self.url = url
        self.market = market  # stock or futopt

    async def subscribe(
        self, channel: str, symbols: str | Sequence[str], flags: tuple[bool, bool]
    ) -> list[Subscription]:
        """:meth:`AsyncStream.subscribe` (``flags``: odd lot, after hours), sent again after
        a reconnect."""
        proto.check_channel(channel, self.market)
        syms = proto.symbols_of(symbols)
        flag = self._flag(*flags)
        first = True

        async def attempt() -> list[Subscription]:
            nonlocal first
            todo = syms
            if not first:  # what the resubscription already restored is not asked again
                restored = {
                    s.symbol
                    for s in self._link.subs.values()
                    if s.channel == channel and s.flag == flag
                }
                todo = [x for x in syms if x not in restored]
            first = False
            acked = await self.subscribe_once(channel, todo, flag) if todo else []
            wanted = set(syms)
            have = [
                s
                for s in self._link.subs.values()
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

    async def subscribe_once(
        self, channel: str, syms: list[str], odd_lot: bool
    ) -> list[Subscription]:
        def refusal(r: dict[str, Any]) -> bool:
            return r.get("event") == "error" and proto.is_refusal(proto.message_of(r), syms)

        def done(replies: list[dict[str, Any]]) -> bool:
            # refused symbols get one error each, then one 'subscribed' lists the accepted
            return any(r.get("event") == "subscribed" for r in replies) or sum(
                map(refusal, replies)
            ) >= len(syms)

        self._link.pending_flag = odd_lot  # the reader registers the subscriptions it acknowledges
        replies = await self.request(proto.subscribe(channel, syms, odd_lot, self.market), done)
        subs: list[Subscription] = []
        failed: dict[str, str] = {}
        for r in replies:
            if r.get("event") == "subscribed":
                subs += [self._link.subs[i] for i in proto.reply_ids(r) if i in self._link.subs]
            elif refusal(r):
                msg = proto.message_of(r)
                sym = proto.refused_symbol(msg, syms) or ",".join(syms)
                failed[sym] = msg
            elif r.get("event") == "error":  # not about this request
                self._link.server_error = proto.message_of(r)
        if failed:
            raise StreamSubscribeError(channel, failed, subs)
        return subs

    async def unsubscribe(self, subs: Subscription | str | Iterable[Subscription | str]) -> None:
        """:meth:`AsyncStream.unsubscribe`; a reconnect does not restore them."""
        items = [subs] if isinstance(subs, Subscription | str) else list(subs)
        ids = [s.id if isinstance(s, Subscription) else str(s) for s in items]
        unknown = [i for i in ids if i not in self._link.subs]
        if unknown or not ids:
            raise InvalidParams(
                "stream.unsubscribe",
                "ids",
                f"has unknown ids {unknown}",
                ", ".join(self._link.subs) or "no subscription is active",
            )
        for i in ids:  # from now on a reconnect does not subscribe them again
            self._link.gone[i] = self._link.subs.pop(i)
        first = True

        async def attempt() -> None:
            nonlocal first
            if first:  # after a reconnect they are already gone
                first = False
                await self.request(
                    proto.unsubscribe(ids),
                    lambda rs: any(r.get("event") in ("unsubscribed", "error") for r in rs),
                )

        await self._healing(attempt)

    async def subscriptions(self) -> list[Subscription]:
        """The server's list of this connection's subscriptions."""

        async def attempt() -> list[dict[str, Any]]:
            return await self.request(proto.dumps("subscriptions"), bool)

        replies = await self._healing(attempt)
        self._raise_error_reply(replies[-1])
        out = []
        for d in proto.as_list(replies[-1].get("data")):
            if not isinstance(d, dict) or d.get("id") is None:
                continue
            known = self._link.subs.get(str(d["id"]))
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

    async def ping(self, state: str | None = None) -> dict[str, Any]:
        """Send ``ping``; the ``pong``'s data (``time`` in epoch microseconds, ``state``)."""

        async def attempt() -> list[dict[str, Any]]:
            return await self.request(proto.ping(state), bool)

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
            await self._link.wait_online(old)
            try:
                return await attempt()
            except _Dropped as drop:
                if not self.options.reconnect:
                    raise StreamClosed(str(drop), drop.code, drop.reason) from None
                old = drop.ws

    async def request(
        self, text: str, done: Callable[[list[dict[str, Any]]], bool]
    ) -> list[dict[str, Any]]:
        """Send one request and collect its replies (requests are serialised: the protocol
        has no correlation ids, so one request is outstanding at a time). Raises
        :class:`_Dropped` when the connection ends first."""
        self._link.check_alive()
        async with self._link.lock:
            while not self._link.replies.empty():
                self._link.replies.get_nowait()
            ws = self._link.ws
            if ws is None or ws.closed:
                raise _Dropped(ws, *self._link.last_close)
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
                        r = await asyncio.wait_for(
                            self._link.replies.get(), self.options.reply_timeout
                        )
                    except TimeoutError:
                        raise StreamTimeout(
                            f"no reply from {self.url} within {self.options.reply_timeout:g} s"
                        ) from None
                    if r is CLOSED:
                        raise _Dropped(ws, *self._link.last_close)
                    replies.append(r)
                return replies
            finally:
                self._buf.urgent -= 1


def _never(replies: list[dict[str, Any]]) -> bool:
    """Waits for the connection to end (the request could not be sent)."""
    return False
