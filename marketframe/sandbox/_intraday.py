"""One instrument's intraday day in the synthetic market: its trades, trial matches and books.

The trades are generated from the day's daily row as a bridge that starts at the open, touches
the high and the low and ends at the close, with sizes that sum to the day's volume (see
``_market`` for the two levels of the market).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, time
from functools import cached_property

import numpy as np

from . import _calendar as cal
from ._daily import Daily
from ._instrument import Instrument
from ._query import Json

KIND_OPEN, KIND_CONT, KIND_CLOSE, KIND_CALL = 0, 1, 2, 3
#: odd-lot intraday trading: the first call auction at 09:10, then one a minute to 13:30
#: (TWSE's intraday odd-lot rules: orders from 09:00, first match 09:10, matched every
#: minute since 2022-12-19; the spec says nothing of the schedule)
ODDLOT_FIRST = time(9, 10)
_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class Day:
    """The trades of one instrument on one day (sorted by time, oldest first)."""

    inst: Instrument
    date: date
    reference: int
    previous_close: int
    limit_up: int  # 0: no limit
    limit_down: int
    unit_value: int  # TWD per (cent x unit): 1000/100 for lots, 1/100 for shares
    time: np.ndarray
    price: np.ndarray
    size: np.ndarray
    bid: np.ndarray  # -1 where none
    ask: np.ndarray
    serial: np.ndarray
    kind: np.ndarray
    side: np.ndarray  # +1 traded at the ask, -1 at the bid, 0 not split (opening auction)
    #: the trial matches before the open (none on a day without them)
    trial_time: np.ndarray = field(default_factory=lambda: _EMPTY)
    trial_price: np.ndarray = field(default_factory=lambda: _EMPTY)
    trial_size: np.ndarray = field(default_factory=lambda: _EMPTY)
    trial_serial: np.ndarray = field(default_factory=lambda: _EMPTY)
    fixed: tuple[int, int, int] | None = None  # after-hours fixed-price trade (time, price, size)
    etf: bool = False
    session: str = "REGULAR"
    #: quote-only updates (the books move between trades): times and serials, one counter
    #: with the trades', so the quote's ``serial``/``lastUpdated`` move ahead of the last trade
    book_time: np.ndarray = field(default_factory=lambda: _EMPTY)
    book_serial: np.ndarray = field(default_factory=lambda: _EMPTY)
    #: the day's REST trade rows, built once per kind (``_payloads.trade_rows`` pages them)
    rows: dict[str, list[Json]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def running(self) -> Running:
        """The trades' running aggregates (a quote at any time reads them, not a prefix)."""
        return Running.of(self.price, self.size, self.side)

    @cached_property
    def mean_size(self) -> float:
        """The day's mean trade size (a book's sizes scale with it; read once per update)."""
        return float(self.size.mean())

    # (the arrays' own searchsorted: the np.searchsorted wrapper costs as much again, and a
    # stream channel asks once per event)
    def visible_books(self, t_us: int) -> int:
        return int(self.book_time.searchsorted(t_us, side="right"))

    def visible(self, t_us: int) -> int:
        """How many trades have happened at ``t_us``."""
        return int(self.time.searchsorted(t_us, side="right"))

    def visible_trials(self, t_us: int) -> int:
        return int(self.trial_time.searchsorted(t_us, side="right"))

    def value(self, n: int) -> int:
        """Traded value in TWD of the first ``n`` trades (index "sizes" are turnover already)."""
        if not n:
            return 0
        if self.inst.type == "INDEX":
            return int(self.running.volume[n - 1])
        return int(round(float(self.running.value[n - 1]) * self.unit_value / 100))


@dataclass(frozen=True)
class Running:
    """Running aggregates of a day's trades: element ``i`` covers the trades ``0..i``."""

    high: np.ndarray  # highest price so far
    high_at: np.ndarray  # index of the first trade at that price
    low: np.ndarray
    low_at: np.ndarray
    volume: np.ndarray  # sizes summed
    at_bid: np.ndarray  # sizes of the trades at the bid, summed
    at_ask: np.ndarray
    value: np.ndarray  # price x size summed (cents x unit)
    price_sum: np.ndarray  # prices summed (an index's average)

    @classmethod
    def of(cls, price: np.ndarray, size: np.ndarray, side: np.ndarray) -> Running:
        high = np.maximum.accumulate(price)
        low = np.minimum.accumulate(price)
        return cls(
            high,
            _first_of_run(high),
            low,
            _first_of_run(low),
            np.cumsum(size),
            np.cumsum(np.where(side < 0, size, 0)),
            np.cumsum(np.where(side > 0, size, 0)),
            np.cumsum(price * size),
            np.cumsum(price),
        )


def _first_of_run(extreme: np.ndarray) -> np.ndarray:
    """For a running max (or min): the index where its current value was first reached."""
    idx = np.arange(len(extreme))
    new = np.ones(len(extreme), dtype=bool)
    new[1:] = extreme[1:] != extreme[:-1]
    return np.maximum.accumulate(np.where(new, idx, 0))


def _bridge(rng: np.random.Generator, keys: list[tuple[int, int]], top: int) -> np.ndarray:
    """Integer path through (position, level) key points, clipped to [0, top]."""
    n = keys[-1][0] + 1
    out = np.empty(n, dtype=np.int64)
    out[0] = keys[0][1]
    scale = max(0.6, top / max(4.0, math.sqrt(n)) * 0.9)
    for (a, va), (b, vb) in zip(keys[:-1], keys[1:], strict=True):
        m = b - a
        if m == 0:
            continue
        steps = np.arange(1, m + 1) / m
        walk = np.cumsum(rng.normal(0.0, scale, m))
        path = va + (vb - va) * steps + walk - steps * walk[-1]
        seg = np.clip(np.rint(path), 0, top).astype(np.int64)
        seg[-1] = vb
        out[a + 1 : b + 1] = seg
    for pos, level in keys:
        out[pos] = level
    return out


def _path(
    rng: np.random.Generator, lad: np.ndarray, o: int, h: int, lo: int, c: int, n: int
) -> np.ndarray:
    """Prices of ``n`` trades: first ``o``, last ``c``, touching ``h`` and ``lo``."""
    top = len(lad) - 1
    io = int(np.searchsorted(lad, o))
    ic = int(np.searchsorted(lad, c))
    keys = {0: io, n - 1: ic}
    free = [p for p in range(1, n - 1)]
    if h not in (o, c):
        ph = int(rng.integers(1, n - 1))
        keys[ph] = top
        free.remove(ph)
    if lo not in (o, c) and free:
        pl = free[int(rng.integers(0, len(free)))]
        keys[pl] = 0
    idx = _bridge(rng, sorted(keys.items()), top)
    prices: np.ndarray = lad[idx]
    return prices


def _split_sizes(rng: np.random.Generator, total: int, n: int, auction_share: bool) -> np.ndarray:
    """``n`` positive sizes summing to ``total``; opening/closing auctions take a larger share."""
    sizes = np.ones(n, dtype=np.int64)
    rest = total - n
    if auction_share and n >= 3:
        o = int(rest * rng.uniform(0.03, 0.08))
        c = int(rest * rng.uniform(0.03, 0.08))
        sizes[0] += o
        sizes[-1] += c
        rest -= o + c
        weights = rng.lognormal(0.0, 1.0, n - 2)
        sizes[1:-1] += rng.multinomial(rest, weights / weights.sum())
    else:
        weights = rng.lognormal(0.0, 1.0, n)
        sizes += rng.multinomial(rest, weights / weights.sum())
    return sizes


def make_day(rng: np.random.Generator, daily: Daily, i: int, interval: int = 0) -> Day:
    """The trades of ``daily``'s instrument on its day ``i``, drawn from ``rng``; ``interval``:
    seconds between its call auctions (a disposition stock), 0 for continuous trading."""
    inst = daily.inst
    d = daily.dates[i].astype(object)
    o, h, lo, c = (int(x[i]) for x in (daily.open, daily.high, daily.low, daily.close))
    volume, n = int(daily.volume[i]), int(daily.ntrades[i])
    index = inst.type == "INDEX"
    etf = inst.etf
    lad = cal.ladder(lo, h, etf, step=1 if index else None)
    t_open = cal.epoch_us(cal.at(d, cal.SESSION_OPEN))
    t_close = cal.epoch_us(cal.at(d, cal.SESSION_CLOSE))
    if index:
        times = t_open + np.arange(1, n + 1, dtype=np.int64) * 5_000_000
        kinds = np.full(n, KIND_CONT, dtype=np.int8)
    elif interval:
        # periodic call auctions (a disposition stock): one match every ``interval`` seconds
        # from the open, none in the closing call (13:25-13:30), then the closing auction
        closing_call = cal.epoch_us(cal.at(d, cal.CLOSING_TRIAL_START))
        grid = np.arange(t_open, closing_call, interval * 1_000_000, dtype=np.int64)
        times = np.append(grid, t_close)
        n = len(times)
        kinds = np.full(n, KIND_CALL, dtype=np.int8)
        kinds[0], kinds[-1] = KIND_OPEN, KIND_CLOSE
    else:
        first = t_open + int(rng.integers(50_000, 8_000_000))
        last_cont = cal.epoch_us(cal.at(d, cal.CLOSING_TRIAL_START)) - 1
        mid = np.sort(rng.integers(first + 1, last_cont, n - 2))
        mid = mid + np.arange(n - 2)  # strictly increasing even when draws collide
        times = np.concatenate(([first], mid, [t_close])).astype(np.int64)
        kinds = np.full(n, KIND_CONT, dtype=np.int8)
        kinds[0], kinds[-1] = KIND_OPEN, KIND_CLOSE
    locked = (
        not index and daily.limit_up[i] and c in (int(daily.limit_up[i]), int(daily.limit_down[i]))
    )
    if locked and n >= 10:
        # a day that closes at its limit: it gets there, then trades only at the limit with
        # the book locked (the limit side queued, nothing on the other side)
        lock = int(n * rng.uniform(0.55, 0.9))
        price = np.concatenate((_path(rng, lad, o, h, lo, c, lock), np.full(n - lock, c)))
    else:
        price = _path(rng, lad, o, h, lo, c, n)
    size = _split_sizes(rng, max(volume, n), n, auction_share=not index)
    if index:
        bid = ask = np.full(n, -1, dtype=np.int64)
        side = np.zeros(n, dtype=np.int8)
        serial = np.arange(1, n + 1, dtype=np.int64)
        book_time = book_serial = _EMPTY
    else:
        side = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
        side[0] = 0
        below = np.array([cal.price_below(int(p), etf) for p in lad], dtype=np.int64)
        above = np.array([cal.price_above(int(p), etf) for p in lad], dtype=np.int64)
        pos = np.searchsorted(lad, price)
        bid = np.where(side >= 0, below[pos], price)
        ask = np.where(side >= 0, price, above[pos])
        bid[0], ask[0] = price[0], above[pos[0]]
        if daily.limit_up[i]:  # at a limit the book is locked on that side
            up, down = int(daily.limit_up[i]), int(daily.limit_down[i])
            bid = np.where(price == up, up, bid)
            ask = np.where(price == up, up, ask)
            bid = np.where(price == down, down, bid)
            ask = np.where(price == down, down, ask)
        base = 10_000 + int(rng.integers(0, 400_000))
        # one market-wide counter: the books of this stock move between its trades (quote
        # updates), and other stocks' messages take serials in between
        nb = 2 * n
        book_time = np.sort(rng.integers(times[0] + 1, times[-2] if n > 2 else times[-1], nb))
        stamps = np.concatenate((times, book_time))
        order = np.argsort(stamps, kind="stable")
        seq = np.empty(n + nb, dtype=np.int64)
        seq[order] = base + np.cumsum(rng.integers(1, 30, n + nb))
        serial, book_serial = seq[:n], seq[n:]
    # trial matches: 08:30-09:00 converging to the open, 13:25-13:30 to the close
    tn = 12
    pre = np.sort(rng.integers(cal.epoch_us(cal.at(d, cal.TRIAL_START)), t_open - 1, tn))
    post = np.sort(rng.integers(cal.epoch_us(cal.at(d, cal.CLOSING_TRIAL_START)), t_close - 1, tn))
    trial_time = np.concatenate((pre, post)).astype(np.int64)
    if index:
        trial_time = trial_time[:0]
    trial_price = np.concatenate((_converge(rng, lad, o, tn), _converge(rng, lad, c, tn)))[
        : len(trial_time)
    ]
    trial_size = (size[0] * rng.uniform(0.3, 1.1, len(trial_time))).astype(np.int64) + 1
    before_close = max(int(serial[-2]), int(book_serial.max()) if len(book_serial) else 0)
    trial_serial = np.concatenate((np.arange(1, tn + 1), before_close + np.arange(1, tn + 1)))[
        : len(trial_time)
    ]
    if len(trial_serial) and not index:
        # the closing trial matches (13:25-13:30) come before the closing auction's trade,
        # so their serials must too: one market-wide counter
        serial[-1] = max(int(serial[-1]), int(trial_serial[-1]) + 1)
    fixed = None
    if inst.type == "EQUITY" and inst.market != "ESB" and not etf:
        fixed_size = max(1, int(volume * rng.uniform(0.001, 0.004)))
        fixed = (cal.epoch_us(cal.at(d, cal.FIXED_PRICE_TIME)), c, fixed_size)
    unit_value = 1000 if inst.unit == "lots" else 1
    return Day(
        inst,
        d,
        int(daily.ref[i]),
        int(daily.prev_close[i]),
        int(daily.limit_up[i]),
        int(daily.limit_down[i]),
        unit_value,
        times,
        price,
        size,
        bid,
        ask,
        serial.astype(np.int64),
        kinds,
        side,
        trial_time,
        trial_price,
        trial_size,
        trial_serial.astype(np.int64),
        fixed,
        etf,
        book_time=book_time.astype(np.int64),
        book_serial=book_serial.astype(np.int64),
    )


def _converge(rng: np.random.Generator, lad: np.ndarray, target: int, n: int) -> np.ndarray:
    j = int(np.searchsorted(lad, target))
    spread = np.rint(np.linspace(3, 0, n) * rng.normal(0, 1, n)).astype(np.int64)
    return lad[np.clip(j + spread, 0, len(lad) - 1)]


#: the share of odd-lot call auctions with crossing orders, by interval (seconds): about
#: three in four minutes match; of the 5-second auctions (from 2024-12-02), one in four
ODDLOT_MATCHED = {180: 0.9, 60: 0.75, 5: 0.25}


def make_oddlot(rng: np.random.Generator, lot: Day) -> Day:
    """Odd-lot trading beside the whole-lot day ``lot``: call auctions from 09:10
    (:data:`ODDLOT_FIRST`) to 13:30 on the day's interval (``cal.oddlot_interval``: 3
    minutes, 1 minute from 2022-12-19, 5 seconds from 2024-12-02), sizes in shares, drawn
    from ``rng``; an auction without crossing orders has no match."""
    inst = lot.inst
    d = lot.date
    first = cal.epoch_us(cal.at(d, ODDLOT_FIRST))
    t_close = cal.epoch_us(cal.at(d, cal.SESSION_CLOSE))
    every = cal.oddlot_interval(d)
    grid = np.arange(first, t_close + 1, every * 1_000_000, dtype=np.int64)
    if grid[-1] != t_close:  # 3-minute auctions end at 13:28: the close has its own
        grid = np.append(grid, np.int64(t_close))
    keep = rng.random(len(grid)) < ODDLOT_MATCHED.get(every, 0.75)
    keep[0] = keep[-1] = True  # the first auction (orders since 09:00) and the closing one
    grid = grid[keep]
    n = len(grid)
    pos = np.clip(np.searchsorted(lot.time, grid, side="right") - 1, 0, len(lot.time) - 1)
    price = lot.price[pos]
    size = np.maximum(1, rng.lognormal(5.5, 1.0, n).astype(np.int64))
    side = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    side[0] = 0
    etf = inst.etf
    # the ticks either side, once per distinct price (5-second auctions repeat prices a lot)
    levels, at = np.unique(price, return_inverse=True)
    above = np.array([cal.price_above(int(p), etf) for p in levels], dtype=np.int64)[at]
    below = np.array([cal.price_below(int(p), etf) for p in levels], dtype=np.int64)[at]
    bid = np.where(side >= 0, below, price)
    ask = np.where(side >= 0, price, above)
    kinds = np.full(n, KIND_CALL, dtype=np.int8)  # call auctions: never continuous
    kinds[-1] = KIND_CLOSE
    serial = 1 + np.cumsum(rng.integers(1, 30, n))
    return Day(
        inst,
        d,
        lot.reference,
        lot.previous_close,
        lot.limit_up,
        lot.limit_down,
        1,
        grid,
        price,
        size,
        bid,
        ask,
        serial.astype(np.int64),
        kinds,
        side,
        etf=etf,
    )
