"""The async streaming client: connect, authenticate, subscribe, read batches, heal drops.

Buffer policy (bounded, lossless, :mod:`._buffer`): when ``max_buffer`` rows wait, the reader
stops reading the socket until the consumer takes a batch; nothing is dropped. A server that
gives up on a slow consumer closes the connection; the client then reconnects and, with
``backfill=True``, refills the missed trades from REST, so even then no trade is lost.

Reconnects: when the connection drops (any close the user did not ask for, or no heartbeat,
data or pong for ``heartbeat_timeout`` seconds) the client reconnects with exponential backoff
and jitter, authenticates, and resubscribes every subscription. Trades are then de-duplicated
by (trading date, session, serial) per (symbol, odd lot, trial or regular), and the gap
between the last trade seen before the drop and the first seen after it is recorded in
:attr:`AsyncStream.gaps` (see :mod:`._ledger`) and, with ``backfill=True``, filled from the
intraday trades endpoint (see :mod:`._backfill`). A request (subscribe, unsubscribe,
subscriptions, ping) in flight when the connection drops is sent again once the stream is
back; it fails with :class:`StreamClosed` only when reconnecting is off or every attempt failed.

Bad input never ends the stream: a malformed frame (not JSON, not an object, ``data`` of the
wrong shape, an unknown channel or event) is counted in ``stats.malformed``, kept (truncated)
in :attr:`AsyncStream.malformed` and skipped; a row that cannot be converted is set aside in
:attr:`AsyncStream.quarantine` (``stats.quarantined``) and the rest of its batch delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pyarrow as pa

from marketframe.convert import to_frame
from marketframe.exceptions import (
    InvalidParams,
    StreamAuthError,
    StreamClosed,
    StreamError,
    StreamTimeout,
    redact,
)

from . import _protocol as proto
from ._backfill import fetch_gap
from ._buffer import RowBuffer
from ._frames import Batch, to_table, to_table_sorting
from ._inbox import Inbox, _reason
from ._ledger import Gap, TradeLedger
from ._protocol import Subscription
from ._recorder import Recorder
from ._requests import Requests, _Dropped

_KEEP = 200  # malformed frames and quarantined rows kept for inspection (the latest)


@dataclass
class StreamStats:
    messages: int = 0  # data messages received
    heartbeats: int = 0
    reconnects: int = 0
    duplicates: int = 0  # trades dropped because their serial was already seen
    backfilled: int = 0  # trades added from REST
    paused: int = 0  # times the reader waited for the consumer (buffer full)
    malformed: int = 0  # frames skipped because they could not be read (see .malformed)
    quarantined: int = 0  # rows set aside because they could not be converted


class AsyncStream(Requests, Inbox):
    """An authenticated WebSocket stream of market data (``async with``).

    Prefer :meth:`marketframe.Client.stream` (``async_=True``) which fills in the URL, the key
    and the REST client used for backfills. Parameters are documented in docs/streaming.md.
    """

    def __init__(self, api_key: str, url: str, *, rest: Any = None, backfill: bool = False,
                 connect_timeout: float = 10.0, reply_timeout: float = 10.0,
                 reconnect: bool = True, max_reconnects: int = 10, backoff: float = 0.5,
                 max_backoff: float = 30.0, heartbeat_timeout: float = 75.0,
                 max_buffer: int = 200_000, batch_rows: int = 20_000,
                 backend: str = "pandas") -> None:
        if backfill and rest is None:
            raise InvalidParams("stream", "backfill", "needs a REST client",
                                "use client.stream(backfill=True) or pass rest=Client(...)")
        if max_buffer < 1 or batch_rows < 1:
            raise InvalidParams("stream", "max_buffer", "must be at least 1")
        self.url = url
        self._key = api_key
        self.rest = rest
        self.backfill = backfill
        self.connect_timeout = connect_timeout
        self.reply_timeout = reply_timeout
        self.reconnect = reconnect
        self.max_reconnects = max_reconnects
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.heartbeat_timeout = heartbeat_timeout
        self.max_buffer = max_buffer
        self.batch_rows = batch_rows
        self.backend = backend
        self.stats = StreamStats()
        self.last_heartbeat: int | None = None  # epoch microseconds (server's clock)
        self._subs: dict[str, Subscription] = {}
        self._buf = RowBuffer(max_buffer, batch_rows)
        self._ledger = TradeLedger()
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._replies: asyncio.Queue[Any] = asyncio.Queue()
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[Any]] = []
        self._backfills: set[asyncio.Task[Any]] = set()
        self._runner: asyncio.Task[Any] | None = None
        self._error: BaseException | None = None
        self._closing = False
        self._stop = asyncio.Event()
        self._closed = False
        self._last_recv = time.monotonic()
        self._last_close: tuple[int | None, str | None] = (None, None)
        self._server_error: str | None = None
        self._recorder: Recorder | None = None
        self._pending_odd = False
        self._gone: dict[str, Subscription] = {}  # unsubscribed (data may still be in flight)
        self._online = False  # connected, authenticated and resubscribed
        self._changed = asyncio.Event()  # replaced and set at each change of state
        #: the latest malformed frames (reason: text, truncated), oldest first
        self.malformed: deque[str] = deque(maxlen=_KEEP)
        #: the latest rows that could not be converted: (channel, raw row, why)
        self.quarantine: deque[tuple[str, dict[str, Any], str]] = deque(maxlen=_KEEP)

    @property
    def gaps(self) -> list[Gap]:
        """Gaps of trades after reconnects (see :class:`Gap`)."""
        return self._ledger.gaps

    def __repr__(self) -> str:  # never the key
        state = "closed" if self._closed else "open" if self._ws is not None else "new"
        return f"<AsyncStream {self.url} {state}, {len(self._subs)} subscriptions>"

    # -- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> AsyncStream:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> AsyncStream:
        """Open the socket and authenticate; :class:`StreamTimeout` when the server does not
        complete the handshake or answer ``auth`` in time, :class:`StreamAuthError` for a
        refused key."""
        if self._ws is not None:
            return self
        self._session = aiohttp.ClientSession()
        try:
            self._ws = await self._open()
        except BaseException:
            await self._session.close()
            self._session = None
            raise
        self._set_online(True)
        self._runner = asyncio.create_task(self._run(self._ws))
        self._tasks.append(asyncio.create_task(self._watchdog()))
        return self

    async def close(self) -> None:
        """Close the socket, finish backfills (open gaps are filled up to now when
        ``backfill=True``), write what is buffered to the recorder and close its files."""
        if self._closed:
            return
        self._closing = True
        self._stop.set()
        self._buf.release()  # a reader paused on a full buffer must finish
        self._signal()
        for t in self._tasks:
            t.cancel()
        if self._runner is not None:
            while not self._runner.done():
                ws = self._ws
                if ws is not None and not ws.closed:
                    await ws.close()
                # a reconnect in flight checks _closing when it returns
                await asyncio.wait({self._runner}, timeout=1.0)
            with contextlib.suppress(BaseException):
                await self._runner
        elif self._ws is not None:
            await self._ws.close()
        for gap in self._ledger.close_open():
            if self.backfill:
                self._start_backfill(gap)
        await self.wait_backfills()
        if self._session is not None:
            await self._session.close()
        self._closed = True
        self._buf.data.set()
        if self._recorder is not None:
            while self._buf.size:
                taken = self._buf.take()
                if taken is None:
                    break
                self._recorder.write(self._convert(*taken))
            self._recorder.close()

    async def wait_backfills(self) -> None:
        """Wait until every started backfill has finished."""
        while self._backfills:
            await asyncio.gather(*list(self._backfills), return_exceptions=True)

    # -- reading ----------------------------------------------------------------------------

    async def next_batch(self, timeout: float | None = None) -> Batch | None:
        """The next batch of rows (one channel, at most ``batch_rows``), or ``None`` after
        ``timeout`` seconds without data or when the stream is closed and drained."""
        taken = await self._take(timeout)
        return None if taken is None else self._deliver(*taken)

    def __aiter__(self) -> AsyncIterator[Batch]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Batch]:
        while True:
            batch = await self.next_batch()
            if batch is None:
                return
            yield batch

    async def read(self, channel: str, *, idle: float = 1.0, timeout: float | None = None,
                   backend: str | None = None) -> Any:
        """Everything of ``channel`` until ``idle`` seconds pass without data (or ``timeout``
        in all), as one frame (``backend``: pandas, polars or arrow). Batches of other
        channels read meanwhile are recorded (when recording) and discarded."""
        proto.check_channel(channel)
        tables: list[pa.Table] = []
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = idle if end is None else max(0.0, min(idle, end - time.monotonic()))
            batch = await self.next_batch(wait)
            if batch is None:
                break
            if batch.channel == channel:
                tables.append(batch.table)
            if end is not None and time.monotonic() >= end:
                break
        return to_frame(_concat(channel, tables), backend or self.backend)

    def record(self, directory: str | Path, *, rows_per_file: int = 100_000,
               seconds_per_file: float | None = None) -> Recorder:
        """Write every batch handed out from now on (and what is buffered at close) to
        rolling, crash-safe Parquet files under ``directory/<channel>/``."""
        self._recorder = Recorder(directory, rows_per_file=rows_per_file,
                                  seconds_per_file=seconds_per_file)
        return self._recorder

    async def _take(self, timeout: float | None) -> tuple[str, bool, list[dict[str, Any]]] | None:
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            taken = self._buf.take()
            if taken is not None:
                return taken
            if self._error is not None:
                raise self._error
            if self._closed or (self._runner is not None and self._runner.done()
                                and not self._backfills):
                return None
            self._buf.data.clear()
            wait = None if end is None else end - time.monotonic()
            if wait is not None and wait <= 0:
                return None
            try:
                await asyncio.wait_for(self._buf.data.wait(), wait)
            except TimeoutError:
                return None

    def _convert(self, channel: str, odd_lot: bool, rows: list[dict[str, Any]]) -> Batch:
        table, bad = to_table_sorting(channel, rows, odd_lot)
        for row, why in bad:  # set aside, never silently dropped
            self.stats.quarantined += 1
            self.quarantine.append((channel, row, redact(why, self._key)))
        return Batch(channel, table, odd_lot)

    def _deliver(self, channel: str, odd_lot: bool, rows: list[dict[str, Any]]) -> Batch:
        batch = self._convert(channel, odd_lot, rows)
        if self._recorder is not None:
            self._recorder.write(batch)
        return batch

    # -- the connection ---------------------------------------------------------------------

    async def _open(self) -> aiohttp.ClientWebSocketResponse:
        assert self._session is not None
        try:
            ws = await asyncio.wait_for(
                self._session.ws_connect(self.url, autoping=True, max_msg_size=0),
                self.connect_timeout)
        except TimeoutError:
            raise StreamTimeout(f"no WebSocket handshake answer from {self.url} within "
                                f"{self.connect_timeout:g} s; check the URL, or raise "
                                "connect_timeout") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise StreamError(f"cannot open {self.url}: {type(exc).__name__}: "
                              f"{redact(str(exc), self._key)}") from None
        try:
            await ws.send_str(proto.auth(self._key))
            end = time.monotonic() + self.reply_timeout
            while True:
                try:
                    msg = await ws.receive(timeout=max(0.0, end - time.monotonic()))
                except TimeoutError:
                    raise StreamTimeout(f"no answer to auth from {self.url} within "
                                        f"{self.reply_timeout:g} s") from None
                if msg.type != aiohttp.WSMsgType.TEXT:
                    raise StreamClosed(f"{self.url} closed the connection during auth",
                                       ws.close_code, _reason(msg))
                body = self._parse(msg.data)
                if body is None:
                    raise StreamError(f"{self.url} answered auth with a frame that cannot be "
                                      "read (see .malformed)")
                event = body.get("event")
                if event == "authenticated":
                    self._last_recv = time.monotonic()
                    return ws
                if event == "error":
                    data = body.get("data")
                    data = data if isinstance(data, dict) else {}
                    message = redact(proto.message_of(body), self._key)
                    if data.get("code") == 1001:
                        raise StreamError(f"{message} (error 1001): close another stream "
                                          "or wait before reconnecting")
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
            try:
                await reader
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                self._fail(exc)
                return
            self._set_online(False)
            if self._closing:
                return
            code, reason = self._last_close
            if not self.reconnect:
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
        for attempt in range(self.max_reconnects):
            delay = min(self.max_backoff, self.backoff * 2 ** attempt)
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
        raise StreamClosed(f"the connection dropped and {self.max_reconnects} reconnect "
                           "attempts failed", code, reason)

    async def _resubscribe(self) -> None:
        """Subscribe again what was subscribed; if the connection drops meanwhile, what is
        not yet acknowledged stays in the list for the next attempt."""
        wanted = list(self._subs.values())
        groups: dict[tuple[str, bool], list[str]] = {}
        for sub in wanted:
            groups.setdefault((sub.channel, sub.odd_lot), []).append(sub.symbol)
        self._subs.clear()
        try:
            for (channel, odd), syms in groups.items():
                await self._subscribe(channel, syms, odd)
        except _Dropped:
            have = {(s.channel, s.symbol, s.odd_lot) for s in self._subs.values()}
            for sub in wanted:
                if (sub.channel, sub.symbol, sub.odd_lot) not in have:
                    self._subs[sub.id] = sub
            raise

    def _fail(self, exc: BaseException) -> None:
        if self._error is None and not self._closing:
            self._error = exc
        self._buf.data.set()
        self._set_online(False)

    def _start_backfill(self, gap: Gap) -> None:
        task = asyncio.create_task(self._backfill(gap))
        self._backfills.add(task)
        task.add_done_callback(self._backfills.discard)

    async def _backfill(self, gap: Gap) -> None:
        try:
            rows = await asyncio.get_running_loop().run_in_executor(
                None, fetch_gap, self.rest, gap)
        except Exception as exc:  # noqa: BLE001 - recorded on the gap, never swallowed silently
            gap.error = redact(f"{type(exc).__name__}: {exc}", self._key)
            return
        self._ledger.filled(gap, rows)
        self.stats.backfilled += len(rows)
        self._buf.extend("trades", gap.odd_lot, rows)

    async def _watchdog(self) -> None:
        """Ping when nothing arrived for ``heartbeat_timeout`` s; no pong: force a reconnect."""
        period = max(0.05, self.heartbeat_timeout / 3)
        while True:
            await asyncio.sleep(period)
            ws = self._ws
            if ws is None or ws.closed or not self._buf.space.is_set():
                continue
            if time.monotonic() - self._last_recv < self.heartbeat_timeout:
                continue
            try:  # on this connection only: a drop is what the watchdog is looking for
                await self._request(proto.ping("watchdog"), bool)
            except (_Dropped, StreamError):
                if ws is self._ws and not ws.closed:
                    self._last_close = (4000, "no heartbeat, data or pong")
                    await ws.close(code=4000, message=b"no heartbeat")


def _concat(channel: str, tables: list[pa.Table]) -> pa.Table:
    if not tables:
        return to_table(channel, [])
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
