"""The sandbox stream's data events: what each channel sends for one instrument's day.

Every event is aggregated from the same trades the REST endpoints serve (``_intraday``), so a
stream and the REST answers of the same day agree. Also the malformed frames of the
``garbage_every`` fault.
"""

from __future__ import annotations

import mmap
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from typing import Any

import numpy as np
import orjson

from . import _calendar as cal
from . import _payloads as wire
from . import _quote
from ._intraday import Day
from ._query import Json

Rng = Callable[..., np.random.Generator]
#: event lists of this many bytes or more get pages of their own (:func:`_own_pages`)
_OWN_PAGES = 1 << 16


class Events:
    """The data events of one (channel, symbol, day), in time order: their times (int64
    microseconds) and their serialized ``data`` bodies, all in one buffer.

    No Python object per event: a busy day's 22,000 books as 22,000 ``bytes`` (and 22,000
    ints for their times) cost three times their size in headers, and their memory, freed
    when the last subscriber left, stayed scattered among the objects allocated meanwhile,
    never returned to the system. Indexing an ``array`` is as quick as a list."""

    __slots__ = ("_view", "blob", "ends", "times", "__weakref__")

    def __init__(self, times: array[int], blob: bytes | mmap.mmap, ends: array[int]) -> None:
        self.times = times
        self.blob = blob
        self.ends = ends  # end offset of each body in ``blob``
        self._view = memoryview(blob)

    def __len__(self) -> int:
        return len(self.times)

    def body(self, i: int) -> memoryview:
        """The ``data`` of event ``i`` (a view into the buffer, not a copy)."""
        return self._view[self.ends[i - 1] if i else 0 : self.ends[i]]

    @property
    def nbytes(self) -> int:
        return len(self.blob) + 16 * len(self.times)


def _flags_and(row: Json, flags: Json) -> Json:
    row.update(flags)
    return row


def build_events(channel: str, day: Day, rng: Rng) -> Events:
    """The data events of ``channel`` for one instrument's day, in time order."""
    return pack(iter_rows(channel, day, rng))


def pack(rows: Iterable[tuple[int, Json]]) -> Events:
    """(time, data) pairs -> :class:`Events`, sorted by time (stable). Each row is serialized
    as it comes, into one growing buffer, so rows made one at a time (:func:`iter_rows`) are
    freed at once: a busy day's 22,000 books held as dicts to the end made the garbage
    collector's full passes cost more than building them (and orjson's own ``bytes`` keeps
    the 4 KiB it wrote into, ten times a book)."""
    buf = bytearray()
    times = array("q")
    ends = array("q")
    for t, row in rows:
        buf += orjson.dumps(row)
        times.append(t)
        ends.append(len(buf))
    if all(a <= b for a, b in zip(times, times[1:], strict=False)):
        return Events(times, _own_pages(buf), ends)
    order = sorted(range(len(times)), key=times.__getitem__)
    view = memoryview(buf)
    blob = b"".join(view[ends[i - 1] if i else 0 : ends[i]] for i in order)
    sizes = (ends[i] - (ends[i - 1] if i else 0) for i in order)
    return Events(
        array("q", (times[i] for i in order)), _own_pages(blob), array("q", accumulate(sizes))
    )


def _own_pages(data: bytes | bytearray) -> bytes | mmap.mmap:
    """``data`` in memory of its own (an anonymous mapping) when large: freed, it goes back
    to the system at once, where the allocator's heap kept the blocks of freed replays
    (a sandbox whose 30 connections of 200 books each had closed stayed 200 MB above its
    idle size)."""
    if len(data) < _OWN_PAGES:
        return bytes(data)
    pages = mmap.mmap(-1, len(data))
    pages.write(data)
    return pages


def event_rows(channel: str, day: Day, rng: Rng) -> list[tuple[int, Json]]:
    """The (time, data) pairs of ``channel`` for one instrument's day, unsorted."""
    return list(iter_rows(channel, day, rng))


def iter_rows(channel: str, day: Day, rng: Rng) -> Iterator[tuple[int, Json]]:
    """:func:`event_rows` one by one (the books and the aggregates are made as they are
    asked for)."""
    inst = day.inst
    exchange, market = inst.board(day.date)
    head: dict[str, Any] = {
        "symbol": inst.symbol,
        "type": inst.type,
        "exchange": exchange,
        "market": market,
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
                        "exchange": exchange,
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
            "data": {"symbol": sub.symbol, "price": "abc", "time": sub.events.times[0]},
        }
    ).decode(),
)


def garbage(n: int, sub: Any) -> str:
    """The ``n``-th malformed frame of the ``garbage_every`` fault (kinds in turn)."""
    return _GARBAGE[n % len(_GARBAGE)](sub)
