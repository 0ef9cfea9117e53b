"""The sandbox stream's data events: what each channel sends for one instrument's day.

Every event is aggregated from the same trades the REST endpoints serve (``_intraday``), so a
stream and the REST answers of the same day agree. Also the malformed frames of the
``garbage_every`` fault.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from . import _calendar as cal
from . import _payloads as wire
from . import _quote
from ._intraday import Day
from ._query import Json

Rng = Callable[..., np.random.Generator]


@dataclass
class Events:
    """The data events of one (channel, symbol, day): times and serialized bodies."""

    times: np.ndarray  # int64 microseconds, sorted
    bodies: list[bytes]  # JSON of each event's `data`
    _times: list[int] | None = None

    def time_list(self) -> list[int]:
        """``times`` as Python ints (indexing a list is much cheaper than a numpy array)."""
        if self._times is None:
            self._times = self.times.tolist()
        return self._times


def _flags_and(row: Json, flags: Json) -> Json:
    row.update(flags)
    return row


def build_events(channel: str, day: Day, rng: Rng) -> Events:
    """The data events of ``channel`` for one instrument's day, in time order."""
    return pack(iter_rows(channel, day, rng))


def pack(rows: Iterable[tuple[int, Json]]) -> Events:
    """(time, data) pairs -> :class:`Events`, sorted by time (stable). Each row is serialized
    as it comes, so rows made one at a time (:func:`iter_rows`) are freed at once: a busy
    day's 22,000 books held as dicts to the end made the garbage collector's full passes
    cost more than building them."""
    dumped = [(t, orjson.dumps(row)) for t, row in rows]
    dumped.sort(key=lambda r: r[0])
    return Events(np.array([r[0] for r in dumped], dtype=np.int64), [r[1] for r in dumped])


def event_rows(channel: str, day: Day, rng: Rng) -> list[tuple[int, Json]]:
    """The (time, data) pairs of ``channel`` for one instrument's day, unsorted."""
    return list(iter_rows(channel, day, rng))


def iter_rows(channel: str, day: Day, rng: Rng) -> Iterator[tuple[int, Json]]:
    """:func:`event_rows` one by one (the books and the aggregates are made as they are
    asked for)."""
    inst = day.inst
    head: dict[str, Any] = {
        "symbol": inst.symbol,
        "type": inst.type,
        "exchange": inst.exchange,
        "market": inst.market,
    }
    rows: list[tuple[int, Json]] = []
    n = len(day.time)
    if channel == "indices":
        if inst.type == "INDEX":
            rows = [
                (
                    int(t),
                    {
                        "symbol": inst.symbol,
                        "type": inst.type,
                        "exchange": inst.exchange,
                        "index": wire.px(p),
                        "time": int(t),
                    },
                )
                for t, p in zip(day.time.tolist(), day.price.tolist(), strict=True)
            ]
    elif inst.type == "INDEX":
        rows = []
    elif channel == "trades":
        cum = np.cumsum(day.size).tolist()
        for i in range(n):
            row = dict(head)
            row.update(
                {
                    "bid": wire.px(day.bid[i]),
                    "ask": wire.px(day.ask[i]),
                    "price": wire.px(day.price[i]),
                    "size": int(day.size[i]),
                    "volume": cum[i],
                    "time": int(day.time[i]),
                    "serial": int(day.serial[i]),
                }
            )
            rows.append((int(day.time[i]), _flags_and(row, wire.trade_flags(day, i))))
        for j in range(len(day.trial_time)):
            row = dict(head)
            row.update(
                {
                    "price": wire.px(day.trial_price[j]),
                    "size": int(day.trial_size[j]),
                    "time": int(day.trial_time[j]),
                    "serial": int(day.trial_serial[j]),
                    "isTrial": True,
                }
            )
            rows.append((int(day.trial_time[j]), row))
        if day.fixed is not None:
            ft, fp, fs = day.fixed
            row = dict(head)
            row.update({"price": wire.px(fp), "size": fs, "time": ft, "serial": 99999999})
            rows.append((ft, row))
    elif channel == "candles":
        t0 = cal.epoch_us(cal.at(day.date, cal.SESSION_OPEN))
        bucket = (day.time - t0) // 60_000_000
        value = np.cumsum(day.price * day.size)
        volume = np.cumsum(day.size)
        o = h = lo = 0
        v = 0
        for i in range(n):
            p = int(day.price[i])
            if i == 0 or bucket[i] != bucket[i - 1]:
                o = h = lo = p
                v = 0
            h, lo, v = max(h, p), min(lo, p), v + int(day.size[i])
            row = dict(head)
            row.update(
                {
                    "date": wire.iso_minute(t0 + int(bucket[i]) * 60_000_000),
                    "open": wire.px(o),
                    "high": wire.px(h),
                    "low": wire.px(lo),
                    "close": wire.px(p),
                    "volume": v,
                    "average": wire.num(round(float(value[i]) / float(volume[i]) / 100, 2)),
                }
            )
            rows.append((int(day.time[i]), row))
    elif channel == "books":
        # a book after every trade, and the updates between trades (orders placed and
        # cancelled: the quote's serial and lastUpdated move with them), in time order
        times = np.concatenate((day.time, day.book_time))
        seen = np.concatenate(
            (np.arange(1, n + 1), np.searchsorted(day.time, day.book_time, side="right"))
        )
        serials = np.concatenate((day.serial, day.book_serial))
        order = np.argsort(times, kind="stable")  # at one time, the trade's book first
        times, seen, serials = times[order], seen[order], serials[order]
        last = np.maximum(seen - 1, 0)
        for t, any_trade, bid, ask, size in zip(
            times.tolist(),
            (seen > 0).tolist(),
            day.bid[last].tolist(),
            day.ask[last].tolist(),
            _quote.BookSizes(day, rng).rows(serials),
            strict=True,
        ):
            # no trade yet: no book (as the REST quote)
            bids, asks = _quote.book_levels(day, bid, ask, size) if any_trade else ([], [])
            yield t, {**head, "bids": bids, "asks": asks, "time": t}
    elif channel == "aggregates":
        stamps = sorted(set(day.time.tolist()) | set(day.trial_time.tolist()))
        books = _quote.BookSizes.whole_day(day, rng)
        for t in stamps:
            yield t, _quote.quote(day, t, inst.name, rng, books=books)
    yield from rows


_GARBAGE = (
    lambda sub: "{not json",
    lambda sub: "[1, 2, 3]",
    lambda sub: orjson.dumps(
        {"event": "data", "channel": sub.channel, "id": sub.id, "data": None}
    ).decode(),
    lambda sub: '{"event": "heartbeat", "data": "soon"}',
    lambda sub: orjson.dumps(
        {"event": "data", "channel": "weather", "id": sub.id, "data": {"symbol": sub.symbol}}
    ).decode(),
    lambda sub: orjson.dumps(
        {
            "event": "data",
            "channel": sub.channel,
            "id": sub.id,
            "data": {"symbol": sub.symbol, "price": "abc", "time": int(sub.events.time_list()[0])},
        }
    ).decode(),
)


def garbage(n: int, sub: Any) -> str:
    """The ``n``-th malformed frame of the ``garbage_every`` fault (kinds in turn)."""
    return _GARBAGE[n % len(_GARBAGE)](sub)
