"""The connection of :class:`marketframe.stream.AsyncStream`: open and authenticate, run the
reader, reconnect with backoff after a drop, resubscribe, watch the heartbeat (see the module
docstring of :mod:`._client` for the policy; the gaps a drop leaves are :mod:`._backfill`'s).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Any

import aiohttp

from marketframe._http.credential import Credential
from marketframe.exceptions import (
    StreamAuthError,
    StreamClosed,
    StreamError,
    StreamTimeout,
    redact,
)

from . import _protocol as proto
from ._backfill import Backfills
from ._buffer import RowBuffer
from ._config import StreamOptions
from ._inbox import Inbox, _reason
from ._link import Link
from ._requests import Requests, _Dropped
from ._stats import StreamStats


class Connection:
    """Opening, running and healing a stream's socket on its :class:`~._link.Link`: the
    reader (``inbox``) reads it, the requests (``requests``) resubscribe and ping on it, the
    backfills (``gaps``) hear of drops and restored subscriptions."""

    def __init__(
        self,
        link: Link,
        inbox: Inbox,
        requests: Requests,
        gaps: Backfills,
        buf: RowBuffer,
        stats: StreamStats,
        credential: Credential,
        *,
        url: str,
        options: StreamOptions,
    ) -> None:
        self._link = link
        self._inbox = inbox
        self._requests = requests
        self._gaps = gaps
        self._buf = buf
        self._stats = stats
        self._credential = credential  # sent in the auth frame (apikey / token / sdkToken)
        self._key = credential.secret  # redacted from every message
        self.url = url
        self.options = options
        self._session: aiohttp.ClientSession | None = None
        self._runner: asyncio.Task[Any] | None = None  # _run: reads, reconnects
        self._tasks: list[asyncio.Task[Any]] = []  # the watchdog

    @property
    def running(self) -> bool:
        """The reader (and its reconnects) runs."""
        return self._runner is not None and not self._runner.done()

    @property
    def ended(self) -> bool:
        """The reader ran and has ended (the stream closed, or failed)."""
        return self._runner is not None and self._runner.done()

    async def start(self) -> None:
        """Open the socket, authenticate, and start the reader and the watchdog."""
        self._session = aiohttp.ClientSession()
        try:
            self._link.ws = await self._open()
        except BaseException:
            await self._session.close()
            self._session = None
            raise
        self._link.set_online(True)
        self._runner = asyncio.create_task(self._run(self._link.ws))
        self._tasks.append(asyncio.create_task(self._watchdog()))

    async def stop(self) -> None:
        """End the watchdog and the reader, a reconnect in flight too (the link is
        ``closing``), and close the socket."""
        for t in self._tasks:
            t.cancel()
        if self._runner is not None:
            while not self._runner.done():
                ws = self._link.ws
                if ws is not None and not ws.closed:
                    await ws.close()
                # a reconnect in flight checks closing when it returns
                await asyncio.wait({self._runner}, timeout=1.0)
            with contextlib.suppress(BaseException):
                await self._runner
        elif self._link.ws is not None:
            await self._link.ws.close()

    async def close_session(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _open(self) -> aiohttp.ClientWebSocketResponse:
        assert self._session is not None
        try:
            ws = await asyncio.wait_for(
                self._session.ws_connect(self.url, autoping=True, max_msg_size=0),
                self.options.connect_timeout,
            )
        except TimeoutError:
            raise StreamTimeout(
                f"no WebSocket handshake answer from {self.url} within "
                f"{self.options.connect_timeout:g} s; check the URL, or raise "
                "connect_timeout"
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise StreamError(
                f"cannot open {self.url}: {type(exc).__name__}: {redact(str(exc), self._key)}"
            ) from None
        try:
            await ws.send_str(proto.auth(self._credential))
            end = time.monotonic() + self.options.reply_timeout
            while True:
                try:
                    msg = await ws.receive(timeout=max(0.0, end - time.monotonic()))
                except TimeoutError:
                    raise StreamTimeout(
                        f"no answer to auth from {self.url} within {self.options.reply_timeout:g} s"
                    ) from None
                if msg.type != aiohttp.WSMsgType.TEXT:
                    raise StreamClosed(
                        f"{self.url} closed the connection during auth", ws.close_code, _reason(msg)
                    )
                body = self._inbox.parse(msg.data)
                if body is None:
                    raise StreamError(
                        f"{self.url} answered auth with a frame that cannot be "
                        "read (see .malformed)"
                    )
                event = body.get("event")
                if event == "authenticated":
                    self._link.last_recv = time.monotonic()
                    return ws
                if event == "error":
                    data = body.get("data")
                    data = data if isinstance(data, dict) else {}
                    message = redact(proto.message_of(body), self._key)
                    if data.get("code") == 1001:
                        raise StreamError(
                            f"{message} (error 1001): close another stream "
                            "or wait before reconnecting"
                        )
                    raise StreamAuthError(message)
        except BaseException:
            await ws.close()
            raise

    async def _run(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Read the socket; after a drop, reconnect, resubscribe and mark the gaps."""
        resubscribe = False
        while True:
            reader = asyncio.create_task(self._inbox.read(ws))
            if resubscribe:
                try:
                    await self._resubscribe()
                except (_Dropped, StreamClosed):
                    pass  # dropped again: the reader ends too and the loop reconnects
                except StreamError as exc:  # refused or unanswered: cannot restore the stream
                    self._fail(exc)
                    await ws.close()
                    with contextlib.suppress(BaseException):
                        await reader
                    return
                else:
                    self._link.set_online(True)
                    self._gaps.resubscribed()
            try:
                await reader
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                self._fail(exc)
                return
            self._link.set_online(False)
            if self._link.closing:
                return
            code, reason = self._link.last_close
            if not self.options.reconnect:
                why = (
                    f"; last server error: {self._link.server_error}"
                    if self._link.server_error
                    else ""
                )
                self._fail(StreamClosed(f"the server closed the stream{why}", code, reason))
                return
            self._gaps.dropped(self._link.subs.values())
            try:
                new_ws = await self._reconnect()
            except BaseException as exc:  # noqa: BLE001
                self._fail(exc)
                return
            if new_ws is None:
                return
            ws = new_ws
            resubscribe = True

    async def _reconnect(self) -> aiohttp.ClientWebSocketResponse | None:
        code, reason = self._link.last_close
        for attempt in range(self.options.max_reconnects):
            delay = min(self.options.max_backoff, self.options.backoff * 2**attempt)
            with contextlib.suppress(TimeoutError):  # close() cuts the wait short
                await asyncio.wait_for(self._link.stop.wait(), delay * (0.5 + random.random() / 2))
            if self._link.closing:
                return None
            try:
                ws = await self._open()
            except StreamAuthError:
                raise
            except StreamError:
                continue
            if self._link.closing:  # close() ran while this connection was opening
                await ws.close()
                return None
            self._link.ws = ws
            self._stats.reconnects += 1
            return ws
        raise StreamClosed(
            f"the connection dropped and {self.options.max_reconnects} reconnect attempts failed",
            code,
            reason,
        )

    async def _resubscribe(self) -> None:
        """Subscribe again what was subscribed; if the connection drops meanwhile, what is
        not yet acknowledged stays in the list for the next attempt."""
        wanted = list(self._link.subs.values())
        groups: dict[tuple[str, bool], list[str]] = {}
        for sub in wanted:
            groups.setdefault((sub.channel, sub.flag), []).append(sub.symbol)
        self._link.subs.clear()
        try:
            for (channel, odd), syms in groups.items():
                await self._requests.subscribe_once(channel, syms, odd)
        except _Dropped:
            have = {(s.channel, s.symbol, s.flag) for s in self._link.subs.values()}
            for sub in wanted:
                if (sub.channel, sub.symbol, sub.flag) not in have:
                    self._link.subs[sub.id] = sub
            raise

    def _fail(self, exc: BaseException) -> None:
        if self._link.error is None and not self._link.closing:
            self._link.error = exc
        self._buf.data.set()
        self._link.set_online(False)

    async def _watchdog(self) -> None:
        """Ping when nothing arrived for ``heartbeat_timeout`` s; no pong: force a reconnect."""
        period = max(0.05, self.options.heartbeat_timeout / 3)
        while True:
            await asyncio.sleep(period)
            ws = self._link.ws
            if ws is None or ws.closed or not self._buf.space.is_set():
                continue
            if time.monotonic() - self._link.last_recv < self.options.heartbeat_timeout:
                continue
            try:  # on this connection only: a drop is what the watchdog is looking for
                await self._requests.request(proto.ping("watchdog"), bool)
            except (_Dropped, StreamError):
                if ws is self._link.ws and not ws.closed:
                    self._link.last_close = (4000, "no heartbeat, data or pong")
                    await ws.close(code=4000, message=b"no heartbeat")
