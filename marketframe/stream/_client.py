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
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

from marketframe._http.credential import Credential, resolve
from marketframe.exceptions import InvalidParams, redact

from . import _protocol as proto
from ._backfill import Backfills
from ._buffer import RowBuffer
from ._config import StreamOptions
from ._connection import Connection
from ._frames import Batch, to_table_sorting
from ._inbox import Inbox
from ._ledger import Gap, TradeLedger
from ._link import Link
from ._protocol import Subscription
from ._reading import Collector
from ._recorder import Recorder
from ._requests import Requests
from ._stats import StreamStats

_KEEP = 200  # malformed frames and quarantined rows kept for inspection (the latest)


class AsyncStream:
    """An authenticated WebSocket stream of market data (``async with``).

    Prefer :meth:`marketframe.Client.stream` (``async_=True``) which fills in the URL, the key
    and the REST client used for backfills. Parameters are documented in docs/streaming.md.

    Its parts, each made here and handed what it uses: the :class:`~._link.Link` they share
    (the socket, the subscriptions, the stream's state), the buffer, the backfills (the trade
    ledger and its fills), the reader (``Inbox``), the requests and the connection.
    """

    def __init__(
        self,
        api_key: str | Credential | None,
        url: str,
        *,
        rest: Any = None,
        backfill: bool = False,
        options: StreamOptions | None = None,
        market: str | None = None,
        bearer_token: str | None = None,
        sdk_token: str | None = None,
        **overrides: Any,
    ) -> None:
        # exactly one credential, as for Client (a Credential: the client's own)
        credential = (
            api_key
            if isinstance(api_key, Credential)
            else resolve(api_key, bearer_token, sdk_token)
        )
        if backfill and rest is None:
            raise InvalidParams(
                "stream",
                "backfill",
                "needs a REST client",
                "use client.stream(backfill=True) or pass rest=Client(...)",
            )
        #: the checked options (``overrides``: any of its fields by name)
        self.options = StreamOptions.of(options, **overrides)
        self.url = url
        self._key = credential.secret  # redacted from every message
        #: the product streamed: ``stock`` or ``futopt`` (by default read from the URL's path)
        self.market = proto.check_market(market or proto.market_of(url))[0]
        self.rest = rest
        self.backfill = backfill
        self.stats = StreamStats()
        #: the latest malformed frames (reason: text, truncated), oldest first
        self.malformed: deque[str] = deque(maxlen=_KEEP)
        #: the latest rows that could not be converted: (channel, raw row, why)
        self.quarantine: deque[tuple[str, dict[str, Any], str]] = deque(maxlen=_KEEP)
        self._recorder: Recorder | None = None
        self._link = Link()
        self._buf = RowBuffer(self.options.max_buffer, self.options.batch_rows)
        self._gaps = Backfills(
            TradeLedger(self.market),
            self._buf,
            self.stats,
            rest=rest,
            enabled=backfill,
            market=self.market,
            key=self._key,
            stop=self._link.stop,
        )
        self._inbox = Inbox(
            self._link, self._buf, self._gaps, self.stats, self.malformed, self.market, self._key
        )
        self._requests = Requests(self._link, self._buf, self.options, url, self.market)
        self._connection = Connection(
            self._link,
            self._inbox,
            self._requests,
            self._gaps,
            self._buf,
            self.stats,
            credential,
            url=url,
            options=self.options,
        )

    @property
    def gaps(self) -> list[Gap]:
        """Gaps of trades after reconnects (see :class:`Gap`)."""
        return self._gaps.ledger.gaps

    @property
    def _ledger(self) -> TradeLedger:
        return self._gaps.ledger

    @_ledger.setter
    def _ledger(self, ledger: TradeLedger) -> None:  # a test's own, with its gaps
        self._gaps.ledger = ledger

    async def _backfill(self, gap: Gap) -> None:
        await self._gaps.backfill(gap)

    @property
    def last_heartbeat(self) -> int | None:
        """The latest heartbeat's time: epoch microseconds (server's clock), or None."""
        return self._inbox.last_heartbeat

    def __repr__(self) -> str:  # never the key
        link = self._link
        state = "closed" if link.closed else "open" if link.ws is not None else "new"
        return f"<AsyncStream {self.url} {state}, {len(link.subs)} subscriptions>"

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
        if self._link.ws is None:
            await self._connection.start()
        return self

    async def close(self) -> None:
        """Close the socket, finish backfills (open gaps are filled up to now when
        ``backfill=True``), write what is buffered to the recorder and close its files."""
        link = self._link
        if link.closed:
            return
        link.closing = True
        link.stop.set()
        self._buf.release()  # a reader paused on a full buffer must finish
        link.signal()
        await self._connection.stop()
        self._gaps.close_open()
        await self.wait_backfills()
        await self._connection.close_session()
        link.closed = True
        self._buf.data.set()
        if self._recorder is not None:
            while self._buf.size:
                taken = self._buf.take()
                if taken is None:
                    break
                self._recorder.write(self._convert(*taken))
            self._recorder.close()

    async def wait_backfills(self) -> None:
        """Wait until every gap is known and filled: a reconnect in flight first restores the
        subscriptions (the gaps a drop left, and their quiet backfills, are known only then),
        then every started backfill finishes. Returns at once on a closed or failed stream."""
        link = self._link
        while True:
            while (
                not link.online
                and not link.closing
                and link.error is None
                and self._connection.running
            ):
                await link.changed.wait()
            if not self._gaps.tasks:
                return
            await self._gaps.wait()

    # -- requests ---------------------------------------------------------------------------

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
        return await self._requests.subscribe(channel, symbols, (odd_lot, after_hours))

    async def unsubscribe(self, subs: Subscription | str | Iterable[Subscription | str]) -> None:
        """Unsubscribe subscriptions (or their ids). If the connection drops before the
        reply, they are not restored by the reconnect (which is what was asked)."""
        await self._requests.unsubscribe(subs)

    async def subscriptions(self) -> list[Subscription]:
        """The server's list of this connection's subscriptions."""
        return await self._requests.subscriptions()

    @property
    def subscribed(self) -> list[Subscription]:
        """The subscriptions acknowledged so far (kept across reconnects)."""
        return list(self._link.subs.values())

    async def ping(self, state: str | None = None) -> dict[str, Any]:
        """Send ``ping``; the ``pong``'s data (``time`` in epoch microseconds, ``state``)."""
        return await self._requests.ping(state)

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

    @property
    def backend(self) -> str:
        """The backend of :meth:`read` and ``frames`` (``options.backend``)."""
        return self.options.backend

    async def read(
        self,
        channel: str,
        *,
        idle: float = 1.0,
        timeout: float | None = None,
        backend: str | None = None,
    ) -> Any:
        """Everything of ``channel`` until ``idle`` seconds pass without data (or ``timeout``
        in all), as one frame (``backend``: pandas, polars or arrow). Batches of other
        channels read meanwhile are recorded (when recording) and discarded."""
        c = Collector(channel, idle, timeout, self.market)
        while c.keep(await self.next_batch(c.wait())):
            pass
        return c.frame(backend or self.backend)

    def record(
        self,
        directory: str | Path,
        *,
        rows_per_file: int = 100_000,
        seconds_per_file: float | None = None,
    ) -> Recorder:
        """Write every batch handed out from now on (and what is buffered at close) to
        rolling, crash-safe Parquet files under ``directory/<channel>/``."""
        self._recorder = Recorder(
            directory, rows_per_file=rows_per_file, seconds_per_file=seconds_per_file
        )
        return self._recorder

    async def _take(self, timeout: float | None) -> tuple[str, bool, list[dict[str, Any]]] | None:
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            taken = self._buf.take()
            if taken is not None:
                return taken
            if self._link.error is not None:
                raise self._link.error
            if self._link.closed or (self._connection.ended and not self._gaps.tasks):
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
        futopt = self.market == "futopt"
        table, bad = to_table_sorting(channel, rows, odd_lot and not futopt, self.market)
        for row, why in bad:  # set aside, never silently dropped
            self.stats.quarantined += 1
            self.quarantine.append((channel, row, redact(why, self._key)))
        return Batch(channel, table, odd_lot and not futopt, odd_lot and futopt, self.market)

    def _deliver(self, channel: str, odd_lot: bool, rows: list[dict[str, Any]]) -> Batch:
        batch = self._convert(channel, odd_lot, rows)
        if self._recorder is not None:
            self._recorder.write(batch)
        return batch
