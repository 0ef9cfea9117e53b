"""Fill a gap in a trades stream from the REST intraday trades endpoint.

Serials of one symbol increase but are not consecutive, so a gap cannot be seen from the
serials alone: after every reconnect the client asks for the trades strictly between the last
serial seen before the drop and the first seen after it (or every later trade when none came
after it yet). Regular trades and trial matches are two lists on the endpoint (``isTrial``),
and two serial sequences (a closing trial match may carry a higher serial than the closing
trade), so each kind has its own gap; both are read with ``sort=asc`` and ``offset``/``limit``
paging. Rows come back in the
streamed ``trades`` shape (the envelope's ``symbol``/``type``/... copied into each row) with
``backfilled: true``; flags the REST rows do not carry (``isOpen``, ...) are false.

A gap open up to now (no trade closed it) may be filled after the endpoint has moved on to a
later trading day: its rows of that day are the gap's too (the drop spanned the day change),
so the gap is split like a gap closed by the new day's first trade (:func:`split_day`): the
rest of its own day (known empty after the fixed-price trade, else no longer fetchable) and
the served day's gap, which the rows fill.

:class:`Backfills` is the stream's part that keeps the trade ledger and runs the fills: a gap a
trade closes is filled at once, a gap still open after a reconnect (``TradeLedger.quiet``)
once ``QUIET_GAP_S`` passed without a trade closing it, and at ``close()`` what is still open.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterable
from typing import Any

import orjson

from marketframe.exceptions import GapUnavailable, redact

from ._buffer import RowBuffer
from ._ledger import FIXED_PRICE_SERIAL, REGULAR, Gap, TradeLedger, position
from ._protocol import Subscription
from ._stats import StreamStats

ENDPOINT = "stock.intraday.trades"
FUTOPT_ENDPOINT = "futopt.intraday.trades"
#: seconds a reconnected stream waits for a trade to close each gap before filling it up to
#: now (the rest of the day may have passed during the drop: nothing would close it)
QUIET_GAP_S = 1.0


class Backfills:
    """The trade ledger of a stream and the tasks filling its gaps from REST through
    ``rest`` (a :class:`marketframe.Client`); ``enabled``: ``backfill=True`` (without it,
    gaps are recorded, never filled)."""

    def __init__(
        self,
        ledger: TradeLedger,
        buf: RowBuffer,
        stats: StreamStats,
        *,
        rest: Any,
        enabled: bool,
        market: str,
        key: str,
        stop: asyncio.Event,
    ) -> None:
        self.ledger = ledger
        self._buf = buf
        self._stats = stats
        self._rest = rest
        self.enabled = enabled
        self._market = market
        self._key = key  # redacted from a gap's error
        self._stop = stop  # set by close(): a quiet gap is then filled by close()
        #: the fills running
        self.tasks: set[asyncio.Task[Any]] = set()

    def accept(self, row: dict[str, Any], odd_lot: bool, symbol: str | None) -> bool:
        """A streamed trade into the ledger; False for a duplicate. The gaps it closes are
        filled."""
        keep, gaps = self.ledger.accept(row, odd_lot, symbol)
        if self.enabled:
            for gap in gaps:
                self.start(gap)
        return keep

    def dropped(self, subs: Iterable[Subscription]) -> None:
        """The connection dropped: ``subs``' trades have gaps from here."""
        self.ledger.dropped(subs)

    def resubscribed(self) -> None:
        """The subscriptions are back: the gaps no trade closes soon are filled up to now."""
        if self.enabled:
            for gap in self.ledger.quiet():
                self._track(self._fill_quiet(gap))

    def close_open(self) -> None:
        """Closing: every gap still open ends now, and is filled."""
        for gap in self.ledger.close_open():
            if self.enabled:
                self.start(gap)

    def start(self, gap: Gap) -> None:
        self._track(self.backfill(gap))

    async def wait(self) -> None:
        """Until the fills running now have finished."""
        await asyncio.gather(*list(self.tasks), return_exceptions=True)

    def _track(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def backfill(self, gap: Gap) -> None:
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
        if not self.ledger.still_open(gap):
            return  # closed by a trade meanwhile
        try:
            rows, served = await self._fetch(gap)
        except Exception:  # noqa: BLE001 - the gap stays open, see above
            return
        if self.ledger.settle(gap):
            self._fill(gap, rows, served)

    async def _fetch(self, gap: Gap) -> tuple[list[dict[str, Any]], str | None]:
        return await asyncio.get_running_loop().run_in_executor(
            None, fetch_gap, self._rest, gap, 500, self._market
        )

    def _fill(self, gap: Gap, rows: list[dict[str, Any]], served: str | None) -> None:
        later = split_day(gap, served)
        if later is not None:  # a gap up to now filled on a later day: the rows are its
            self.ledger.add(later, gap)
            gap = later
        self.ledger.filled(gap, rows)
        self._stats.backfilled += len(rows)
        self._buf.extend("trades", gap.odd_lot or gap.after_hours, rows)


def fetch_gap(
    client: Any, gap: Gap, page: int = 500, market: str = "stock"
) -> tuple[list[dict[str, Any]], str | None]:
    """The regular trades (or trial matches) of ``gap``, sorted by position, and the trading
    day the endpoint served. ``client`` is a :class:`marketframe.Client`. The intraday
    endpoint serves one trading day (the current one): a gap on another day cannot be filled
    and raises :class:`GapUnavailable`, unless it is known to be empty (it follows the day's
    fixed-price trade, the day's last) or it is open up to now and the endpoint serves a
    later day (the rows are that day's: see :func:`split_day`).

    ``market="futopt"``: from ``/futopt/intraday/trades`` (newest first, ``session=afterhours``
    for an after-hours gap); it serves no trial matches, so a trial gap raises
    :class:`GapUnavailable`."""
    futopt = market == "futopt"
    if futopt and gap.trial:
        raise GapUnavailable(
            "the futures/options trades endpoint serves no trial matches: "
            "trial frames missed during a reconnect cannot be fetched"
        )
    rows: list[dict[str, Any]] = []
    served: str | None = None
    offset = 0
    while True:
        params: dict[str, Any] = {"symbol": gap.symbol, "offset": offset, "limit": page}
        if futopt and gap.after_hours:
            params["session"] = "afterhours"
        if not futopt:
            params["sort"] = "asc"
        if gap.trial:
            params["isTrial"] = True
        if gap.odd_lot:
            params["type"] = "oddlot"
        body = (
            client.fetch(FUTOPT_ENDPOINT if futopt else ENDPOINT, refresh=True, **params)
            .responses[0]
            .body
        )
        doc = orjson.loads(body)
        data = doc.get("data") or []
        served = served or doc.get("date")
        head = {k: doc[k] for k in ("symbol", "type", "exchange", "market") if k in doc}
        for r in data:
            row = {**head, **r, "backfilled": True}
            pos = position(row)
            if pos is None or not gap.contains(pos):
                continue
            if gap.trial:
                row["isTrial"] = True
            rows.append(row)
        last = position({**head, **data[-1]}) if data else None
        if len(data) < page or last is None:
            break
        if futopt and gap.lo is not None and last <= gap.lo:
            break  # newest first: the next pages are older than the gap
        if not futopt and gap.hi is not None and last >= gap.hi:
            break
        offset += len(data)
    if gap.date is not None and served is not None and served != gap.date:
        later = gap.hi is None and gap.lo is not None and served > gap.date
        if not later and gap.after != FIXED_PRICE_SERIAL:  # else nothing of that day came after it
            raise unavailable(gap, served)
    rows.sort(key=lambda r: position(r) or (0, 0, 0))
    return rows, served


def unavailable(gap: Gap, served: str) -> GapUnavailable:
    return GapUnavailable(
        f"the intraday endpoint now serves {served}; trades of "
        f"{gap.date} in this gap can no longer be fetched"
    )


def split_day(gap: Gap, served: str | None) -> Gap | None:
    """When ``gap`` is open up to now and was filled while the endpoint served a later day:
    ``gap`` becomes the rest of its own day (``filled=0`` after the fixed-price trade, else
    an ``error``) and the served day's gap (from that day's start) is returned, for the
    rows. ``None`` when the gap needs no split."""
    if gap.hi is not None or gap.lo is None or served is None or gap.date is None:
        return None
    if served <= gap.date:
        return None
    later = Gap(
        gap.symbol,
        gap.odd_lot,
        gap.trial,
        None,
        None,
        date=served,
        after_hours=gap.after_hours,
    )
    gap.hi = (gap.lo[0] + 1, REGULAR, -1)  # before any trade of the next day
    if gap.after == FIXED_PRICE_SERIAL:
        gap.filled = 0
    else:
        exc = unavailable(gap, served)
        gap.error = f"{type(exc).__name__}: {exc}"
    return later
