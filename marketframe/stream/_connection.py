"""The connection side of :class:`marketframe.stream.AsyncStream`: open and authenticate,
run the reader, reconnect with backoff after a drop, resubscribe, watch the heartbeat, and
refill gaps from REST (see the module docstring of :mod:`._client` for the policy).
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
from ._backfill import fetch_gap, split_day
from ._inbox import Inbox, _reason
from ._ledger import Gap
from ._requests import Requests, _Dropped

#: seconds a reconnected stream waits for a trade to close each gap before filling it up to
#: now (the rest of the day may have passed during the drop: nothing would close it)
QUIET_GAP_S = 1.0


class Connection(Requests, Inbox):
    """Connecting and healing (a mixin: the attributes below are set by
    ``AsyncStream.__init__``)."""

    rest: Any
    _credential: Credential
    _session: aiohttp.ClientSession | None
    _backfills: set[asyncio.Task[Any]]
    _stop: asyncio.Event

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
                body = self._parse(msg.data)
                if body is None:
                    raise StreamError(
                        f"{self.url} answered auth with a frame that cannot be "
                        "read (see .malformed)"
                    )
                event = body.get("event")
                if event == "authenticated":
                    self._last_recv = time.monotonic()
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
            reader = asyncio.create_task(self._read(ws))
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
                    self._set_online(True)
                    if self.backfill:
                        for gap in self._ledger.quiet():
                            self._track(self._fill_quiet(gap))
            try:
                await reader
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                self._fail(exc)
                return
            self._set_online(False)
            if self._closing:
                return
            code, reason = self._last_close
            if not self.options.reconnect:
                why = f"; last server error: {self._server_error}" if self._server_error else ""
                self._fail(StreamClosed(f"the server closed the stream{why}", code, reason))
                return
            self._ledger.dropped(self._subs.values())
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
        code, reason = self._last_close
        for attempt in range(self.options.max_reconnects):
            delay = min(self.options.max_backoff, self.options.backoff * 2**attempt)
            with contextlib.suppress(TimeoutError):  # close() cuts the wait short
                await asyncio.wait_for(self._stop.wait(), delay * (0.5 + random.random() / 2))
            if self._closing:
                return None
            try:
                ws = await self._open()
            except StreamAuthError:
                raise
            except StreamError:
                continue
            if self._closing:  # close() ran while this connection was opening
                await ws.close()
                return None
            self._ws = ws
            self.stats.reconnects += 1
            return ws
        raise StreamClosed(
            f"the connection dropped and {self.options.max_reconnects} reconnect attempts failed",
            code,
            reason,
        )

    async def _resubscribe(self) -> None:
        """Subscribe again what was subscribed; if the connection drops meanwhile, what is
        not yet acknowledged stays in the list for the next attempt."""
        wanted = list(self._subs.values())
        groups: dict[tuple[str, bool], list[str]] = {}
        for sub in wanted:
            groups.setdefault((sub.channel, sub.flag), []).append(sub.symbol)
        self._subs.clear()
        try:
            for (channel, odd), syms in groups.items():
                await self._subscribe(channel, syms, odd)
        except _Dropped:
            have = {(s.channel, s.symbol, s.flag) for s in self._subs.values()}
            for sub in wanted:
                if (sub.channel, sub.symbol, sub.flag) not in have:
                    self._subs[sub.id] = sub
            raise

    def _fail(self, exc: BaseException) -> None:
        if self._error is None and not self._closing:
            self._error = exc
        self._buf.data.set()
        self._set_online(False)

    def _start_backfill(self, gap: Gap) -> None:
        self._track(self._backfill(gap))

    def _track(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._backfills.add(task)
        task.add_done_callback(self._backfills.discard)

    async def _backfill(self, gap: Gap) -> None:
        try:
            rows, served = await self._fetch(gap)
        except Exception as exc:  # noqa: BLE001 - recorded on the gap, never swallowed silently
            gap.error = redact(f"{type(exc).__name__}: {exc}", self._key)
            return
        self._fill(gap, rows, served)

    async def _fill_quiet(self, gap: Gap) -> None:
        """A provisional gap up to now (``TradeLedger.quiet``): filled if no trade has
        closed it after ``QUIET_GAP_S`` and once its rows are in; left open on an error (a
        later trade or ``close()`` closes it and its backfill reports the error)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), QUIET_GAP_S)
            return  # closing: close() fills what is still open
        if not self._ledger.still_open(gap):
            return  # closed by a trade meanwhile
        try:
            rows, served = await self._fetch(gap)
        except Exception:  # noqa: BLE001 - the gap stays open, see above
            return
        if self._ledger.settle(gap):
            self._fill(gap, rows, served)

    async def _fetch(self, gap: Gap) -> tuple[list[dict[str, Any]], str | None]:
        return await asyncio.get_running_loop().run_in_executor(
            None, fetch_gap, self.rest, gap, 500, self.market
        )

    def _fill(self, gap: Gap, rows: list[dict[str, Any]], served: str | None) -> None:
        later = split_day(gap, served)
        if later is not None:  # a gap up to now filled on a later day: the rows are its
            self._ledger.add(later, gap)
            gap = later
        self._ledger.filled(gap, rows)
        self.stats.backfilled += len(rows)
        self._buf.extend("trades", gap.odd_lot or gap.after_hours, rows)

    async def _watchdog(self) -> None:
        """Ping when nothing arrived for ``heartbeat_timeout`` s; no pong: force a reconnect."""
        period = max(0.05, self.options.heartbeat_timeout / 3)
        while True:
            await asyncio.sleep(period)
            ws = self._ws
            if ws is None or ws.closed or not self._buf.space.is_set():
                continue
            if time.monotonic() - self._last_recv < self.options.heartbeat_timeout:
                continue
            try:  # on this connection only: a drop is what the watchdog is looking for
                await self._request(proto.ping("watchdog"), bool)
            except (_Dropped, StreamError):
                if ws is self._ws and not ws.closed:
                    self._last_close = (4000, "no heartbeat, data or pong")
                    await ws.close(code=4000, message=b"no heartbeat")
