"""The stock quote (REST ``intraday/quote``, the ``aggregates`` channel) and its book (the
``books`` channel): one implementation, so the REST answer and the stream of the same moment
agree.

A book's level prices follow from its best bid and ask (remembered per pair); its sizes are a
hash of the update's serial under one key a day (:class:`BookSizes`), so a whole day of books
is a few array operations, not a random generator per book.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np

from . import _calendar as cal
from ._intraday import KIND_CONT, KIND_OPEN, Day
from ._payloads import header, limit_flags, num, px, ratio
from ._query import Json

#: ``Market.rng``: a generator seeded by the market's seed and the parts given
SeedRng = Callable[..., np.random.Generator]


def last_update(day: Day, n: int, t_us: int) -> tuple[int, int] | None:
    """(serial, time) of the latest update of the instrument at ``t_us``, ``n`` trades seen:
    its last trade or a later book update (the books move between trades)."""
    if not n:
        return None
    serial, time_ = int(day.serial[n - 1]), int(day.time[n - 1])
    nb = day.visible_books(t_us) if len(day.book_time) else 0
    if nb and int(day.book_serial[nb - 1]) > serial:
        serial, time_ = int(day.book_serial[nb - 1]), int(day.book_time[nb - 1])
    return serial, time_


# splitmix64's increment and finalizer: a day's book sizes are one generator draw (the key)
# hashed with each update's serial, a few array operations for any number of updates
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LEVELS = np.arange(1, 11, dtype=np.uint64) * _GOLDEN


def _mix64(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


class BookSizes:
    """The sizes of one day's books, ten an update (five bids, then five asks): a function of
    the market's seed, the symbol, the date and the update's serial alone, so the REST quote
    and the stream channels show the same book for the same update.

    ``serials`` (a stream channel's whole day) are computed at once; others when asked."""

    def __init__(
        self,
        day: Day,
        seed_rng: SeedRng,
        serials: np.ndarray | None = None,
    ) -> None:
        draw = seed_rng(day.inst.symbol, day.date.toordinal(), "books")
        self._key = np.uint64(draw.integers(0, 2**64, dtype=np.uint64))
        self._top = np.uint64(max(2, int(day.mean_size * 4)) - 1)
        self._known: dict[int, tuple[int, ...]] = {}
        if serials is not None:
            self._known = dict(zip(serials.tolist(), self.rows(serials), strict=True))

    @classmethod
    def whole_day(cls, day: Day, seed_rng: SeedRng) -> BookSizes:
        """With the sizes of every update of ``day`` (its trades and the moves between)
        computed at once: for a stream channel's quotes."""
        return cls(day, seed_rng, np.concatenate((day.serial, day.book_serial)))

    def of(self, serials: np.ndarray) -> np.ndarray:
        """The sizes of the books at ``serials``: one row of ten per serial, each from 1 to
        just under four times the day's mean trade size."""
        per_book = _mix64(self._key ^ (np.asarray(serials).astype(np.uint64) * _GOLDEN))
        z = _mix64(per_book[:, None] + _LEVELS)
        return 1 + (z % self._top).astype(np.int64)

    def rows(self, serials: np.ndarray) -> Iterator[tuple[int, ...]]:
        """:meth:`of` as a tuple of ten per serial, each made as it is asked for (a day of
        lists alive together, 22,000 of them, costs the garbage collector full passes;
        tuples of numbers it leaves alone)."""
        flat = iter(self.of(serials).ravel().tolist())
        return zip(*[flat] * 10, strict=False)

    def __call__(self, serial: int) -> tuple[int, ...]:
        got = self._known.get(serial)
        if got is None:
            got = next(self.rows(np.array([serial])))
        return got


@lru_cache(maxsize=8192)
def _levels(
    bid: int, ask: int, limit_up: int, limit_down: int, etf: bool
) -> tuple[tuple[int | float | None, ...], tuple[int | float | None, ...], bool, bool]:
    """The prices of a book's bid and ask levels from its best bid and ask, and whether it is
    locked at the limit up or down (orders queue on the limit side, nothing is offered beyond
    it)."""
    locked_up = bool(limit_up) and bid == ask == limit_up
    locked_down = bool(limit_down) and bid == ask == limit_down
    bids: list[int | float | None] = []
    asks: list[int | float | None] = []
    p = bid
    for _ in range(0 if locked_down else 5):
        if limit_down and p < limit_down:
            break
        bids.append(px(p))
        p = cal.price_below(p, etf)
    p = ask
    for _ in range(0 if locked_up else 5):
        if limit_up and p > limit_up:
            break
        asks.append(px(p))
        p = cal.price_above(p, etf)
    return tuple(bids), tuple(asks), locked_up, locked_down


def book(
    day: Day,
    n: int,
    seed_rng: SeedRng,
    serial: int | None = None,
    *,
    sizes: BookSizes | None = None,
) -> tuple[list[Json], list[Json]]:
    """Best five bid and ask levels after the ``n``-th trade (as of the update ``serial``,
    the last trade's by default: the sizes move at every update). ``sizes``: the day's
    :class:`BookSizes`, when the caller builds many books."""
    if day.inst.type == "INDEX" or n == 0:
        return [], []
    last = n - 1
    if serial is None:
        serial = int(day.serial[last])
    if sizes is None:
        sizes = BookSizes(day, seed_rng)
    return book_levels(day, int(day.bid[last]), int(day.ask[last]), sizes(serial))


def book_levels(day: Day, bid: int, ask: int, size: Sequence[int]) -> tuple[list[Json], list[Json]]:
    """The bid and ask levels of a book whose best bid and ask are ``bid`` and ``ask``, with
    the ten sizes ``size`` of :class:`BookSizes`."""
    bid_prices, ask_prices, locked_up, locked_down = _levels(
        bid, ask, day.limit_up, day.limit_down, day.etf
    )
    bids: list[Json] = [{"price": p, "size": s} for p, s in zip(bid_prices, size, strict=False)]
    asks: list[Json] = [{"price": p, "size": s} for p, s in zip(ask_prices, size[5:], strict=False)]
    # a locked book's limit side queues: its first level is 20 times the usual size
    if locked_up and bids:
        bids[0]["size"] *= 20
    if locked_down and asks:
        asks[0]["size"] *= 20
    return bids, asks


def quote(
    day: Day,
    t_us: int,
    name: str,
    seed_rng: SeedRng,
    *,
    oddlot: bool = False,
    books: BookSizes | None = None,
) -> Json:
    """The stock quote (REST ``intraday/quote`` and the ``aggregates`` channel) at ``t_us``;
    ``books``: the day's :class:`BookSizes`, when the caller builds many quotes."""
    inst = day.inst
    n = day.visible(t_us)
    nt = day.visible_trials(t_us)
    out: Json = header(day, day.date)
    out["name"] = name
    out["referencePrice"] = px(day.reference)
    out["previousClose"] = px(day.previous_close)
    last_time = None
    run = day.running
    j = n - 1  # the last trade (read once: a stream channel builds a quote per trade)
    close = traded = value = volume = 0
    if n:
        times = day.time
        hi, lo = int(run.high[j]), int(run.low[j])
        close, traded = int(day.price[j]), int(times[j])
        value = day.value(n)
        volume = int(run.volume[j])
        out.update(
            {
                "openPrice": px(day.price[0]),
                "openTime": int(times[0]),
                "highPrice": px(hi),
                "highTime": int(times[run.high_at[j]]),
                "lowPrice": px(lo),
                "lowTime": int(times[run.low_at[j]]),
                "closePrice": px(close),
                "closeTime": traded,
            }
        )
        if inst.type == "INDEX":
            out["avgPrice"] = px(round(float(run.price_sum[j]) / n))
        else:
            unit = day.unit_value / 100
            out["avgPrice"] = num(round(value / (volume * unit) / 100, 2)) if volume else None
        out["change"] = px(close - day.reference)
        out["changePercent"] = ratio((close - day.reference) * 100, day.reference)
        out["amplitude"] = ratio((hi - lo) * 100, day.reference)
        last_time = traded
    last_is_trial = nt and (not n or int(day.trial_time[nt - 1]) > traded)
    if last_is_trial:
        out["lastPrice"] = px(day.trial_price[nt - 1])
        out["lastSize"] = int(day.trial_size[nt - 1])
        last_time = int(day.trial_time[nt - 1])
    elif n:
        out["lastPrice"] = px(close)
        if inst.type != "INDEX":
            out["lastSize"] = int(day.size[j])
    update = last_update(day, n, t_us) if inst.type != "INDEX" else None
    if inst.type != "INDEX":
        bids, asks = book(day, n, seed_rng, update[0] if update else None, sizes=books)
        out["bids"], out["asks"] = bids, asks
    if n:
        total = {"tradeValue": value}
        if inst.type != "INDEX":  # an index has turnover, not a traded volume
            total["tradeVolume"] = volume
            total["tradeVolumeAtBid"] = int(run.at_bid[j])
            total["tradeVolumeAtAsk"] = int(run.at_ask[j])
        total["transaction"] = n
        total["time"] = traded
        out["total"] = total
        if inst.type != "INDEX":
            out["lastTrade"] = {
                "bid": px(day.bid[j]),
                "ask": px(day.ask[j]),
                "price": px(close),
                "size": int(day.size[j]),
                "time": traded,
                "serial": int(day.serial[j]),
            }
    if nt:
        k = nt - 1
        tp = int(day.trial_price[k])
        out["lastTrial"] = {
            "bid": px(cal.price_below(tp, day.etf)),
            "ask": px(tp),
            "price": px(tp),
            "size": int(day.trial_size[k]),
            "time": int(day.trial_time[k]),
            "serial": int(day.trial_serial[k]),
        }
    flags: dict[str, bool] = {}
    if n and inst.type != "INDEX":
        bids, asks = out.get("bids") or [], out.get("asks") or []
        b = int(round(bids[0]["price"] * 100)) if bids else None
        a = int(round(asks[0]["price"] * 100)) if asks else None
        flags.update(limit_flags(day, close, b, a))
    closed = n == len(day.time) and n > 0
    kind = int(day.kind[j]) if n and not closed else None
    # the flags describe the last trade (the real mid-session quote has isContinuous alone,
    # samples/stock_intraday_quote_20260916.json; after the close isClose alone)
    if last_is_trial:
        flags["isTrial"] = True
    elif kind == KIND_CONT:
        flags["isContinuous"] = True
    elif kind == KIND_OPEN:
        flags["isOpen"] = True
    if closed:
        flags["isClose"] = True
    out.update(flags)
    if update is not None and not last_is_trial:
        out["serial"], last_time = update
    elif n and inst.type != "INDEX":
        out["serial"] = int(day.serial[n - 1])
    if last_time is not None:
        out["lastUpdated"] = last_time
    return out
