"""A deterministic synthetic market.

Two levels, generated on demand and cached in memory (no stored files):

* the **daily** history of an instrument (reference, open, high, low, close, volume, number of
  trades) from its first day to a fixed horizon, a cheap sequential walk with Taiwan's rules
  (ticks, +/-10% limits around the reference price, ex-dividend and split references);
* the **intraday** day of an instrument: its trades, generated from the day's daily row as a
  bridge that starts at the open, touches the high and the low and ends at the close, with sizes
  that sum to the day's volume. Everything else (quotes, candles, volumes, books, snapshots,
  historical candles of the day) is aggregated from these trades, so all of it agrees.

The same ``seed``, symbol and date always give the same data.
"""

from __future__ import annotations

import math
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date
from threading import Lock

import numpy as np

from . import _calendar as cal
from ._universe import Instrument, Universe

HORIZON = date(2030, 12, 31)


def _crc(text: str) -> int:
    return zlib.crc32(text.encode())


# --- corporate events --------------------------------------------------------------------------

@dataclass(frozen=True)
class CapitalChange:
    symbol: str
    action_type: str  # etf_split_or_merge, par_value_change, capital_reduction
    effective: date
    halt: date | None
    resume: date | None
    factor: float  # reference price = previous close * factor
    raw: dict[str, object]


CAPITAL_CHANGES: tuple[CapitalChange, ...] = (
    CapitalChange("0050", "etf_split_or_merge", date(2025, 6, 18), date(2025, 6, 11),
                  date(2025, 6, 18), 0.25, {"splitType": "分割", "splitRatio": 4}),
    CapitalChange("8069", "capital_reduction", date(2017, 9, 18), None, date(2017, 9, 18), 1.25,
                  {"reductionRatio": 0.2, "reductionReason": "彌補虧損", "reason": "彌補虧損",
                   "refundPerShare": 0, "sharesPerThousand": 800}),
    CapitalChange("6446", "par_value_change", date(2023, 11, 13), date(2023, 11, 6),
                  date(2023, 11, 13), 0.4, {"parValueBefore": 10, "parValueAfter": 4}),
)


@dataclass(frozen=True)
class Dividend:
    symbol: str
    ex_date: date
    cash: int  # cents per share
    stock: float  # free shares per thousand
    previous_close: int
    reference: int


@dataclass
class Daily:
    """The daily history of one instrument (prices in cents)."""

    inst: Instrument
    dates: np.ndarray  # datetime64[D]
    ref: np.ndarray
    prev_close: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # in the unit of intraday data
    ntrades: np.ndarray
    limit_up: np.ndarray
    limit_down: np.ndarray
    dividends: list[Dividend] = field(default_factory=list)
    capital_changes: list[tuple[CapitalChange, int, int]] = field(default_factory=list)

    def index_of(self, d: date) -> int | None:
        key = np.datetime64(d, "D")
        i = int(np.searchsorted(self.dates, key))
        if i < len(self.dates) and self.dates[i] == key:
            return i
        return None

    def span(self, start: date, end: date) -> slice:
        lo = int(np.searchsorted(self.dates, np.datetime64(start, "D"), side="left"))
        hi = int(np.searchsorted(self.dates, np.datetime64(end, "D"), side="right"))
        return slice(lo, hi)


# --- intraday ------------------------------------------------------------------------------------

KIND_OPEN, KIND_CONT, KIND_CLOSE = 0, 1, 2


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
    trial_time: np.ndarray
    trial_price: np.ndarray
    trial_size: np.ndarray
    trial_serial: np.ndarray
    fixed: tuple[int, int, int] | None = None  # after-hours fixed-price trade (time, price, size)
    etf: bool = False
    session: str = "REGULAR"

    def visible(self, t_us: int) -> int:
        """How many trades have happened at ``t_us``."""
        return int(np.searchsorted(self.time, t_us, side="right"))

    def visible_trials(self, t_us: int) -> int:
        return int(np.searchsorted(self.trial_time, t_us, side="right"))

    def value(self, n: int) -> int:
        """Traded value in TWD of the first ``n`` trades (index "sizes" are turnover already)."""
        if self.inst.type == "INDEX":
            return int(self.size[:n].sum())
        return int(round(float(np.dot(self.price[:n], self.size[:n])) * self.unit_value / 100))


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


def _path(rng: np.random.Generator, lad: np.ndarray, o: int, h: int, lo: int, c: int,
          n: int) -> np.ndarray:
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
    return lad[idx]


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


class Market:
    """The synthetic market of one seed."""

    def __init__(self, seed: int = 0, extra_equities: int = 0) -> None:
        self.seed = int(seed)
        self.universe = Universe(extra_equities)
        self._daily: dict[str, Daily] = {}
        self._days: OrderedDict[tuple, Day] = OrderedDict()
        self._turnover: dict[tuple[str, date], int] = {}
        self._lock = Lock()

    def rng(self, *parts: int | str) -> np.random.Generator:
        words = [self.seed]
        for p in parts:
            words.append(_crc(p) if isinstance(p, str) else int(p))
        return np.random.default_rng(words)

    # --- daily --------------------------------------------------------------------------------

    def daily(self, symbol: str) -> Daily:
        got = self._daily.get(symbol)
        if got is None:
            got = self._make_daily(self.universe[symbol])
            self._daily[symbol] = got
        return got

    def _make_daily(self, inst: Instrument) -> Daily:
        days = cal.trading_days(inst.first_day, HORIZON)
        if inst.suspensions:
            keep = np.ones(len(days), dtype=bool)
            for a, b in inst.suspensions:
                keep &= ~((days >= np.datetime64(a)) & (days <= np.datetime64(b)))
            days = days[keep]
        n = len(days)
        rng = self.rng("daily", inst.symbol)
        z = rng.standard_normal((n, 6))
        index = inst.type == "INDEX"
        step = 1 if index else None
        limited = inst.has_limits
        etf = inst.etf
        vol = inst.vol
        drift = math.log1p(inst.growth) / 250.0
        events = self._events(inst, days)
        cap = {c.effective: c for c in CAPITAL_CHANGES if c.symbol == inst.symbol}
        cols = np.zeros((11, n), dtype=np.int64)
        dividends: list[Dividend] = []
        capital: list[tuple[CapitalChange, int, int]] = []
        prev = self._round(inst.start_price * 100, etf, step)
        log_target = math.log(prev)
        day_list = days.astype(object)
        for i in range(n):
            d = day_list[i]
            ref = prev
            if d in cap:
                ch = cap[d]
                ref = self._round(prev * ch.factor, etf, step)
                capital.append((ch, prev, ref))
                log_target += math.log(ch.factor)
            ev = events.get(d)
            if ev is not None:
                cash_rate, stock = ev
                cash = max(1, int(round(prev * cash_rate))) if cash_rate > 0 else 0
                ref = self._round((prev - cash) / (1 + stock / 1000.0), etf, step)
                dividends.append(Dividend(inst.symbol, d, cash, stock, prev, ref))
                log_target += math.log(ref / prev)
            log_target += drift
            pull = 0.004 * (log_target - math.log(ref))
            up, down = cal.limits(ref, etf) if limited else (0, 0)
            close = self._round(ref * math.exp(vol * z[i, 0] + pull), etf, step)
            opn = self._round(ref * math.exp(vol * 0.35 * z[i, 1]), etf, step)
            if limited:
                close = min(max(close, down), up)
                opn = min(max(opn, down), up)
            hi = self._round(max(opn, close) * math.exp(abs(z[i, 2]) * vol * 0.45), etf, step,
                             "down")
            lo = self._round(min(opn, close) * math.exp(-abs(z[i, 3]) * vol * 0.45), etf, step,
                             "up")
            hi = max(hi, opn, close)
            lo = min(lo, opn, close)
            if limited:
                hi = min(hi, up)
                lo = max(lo, down)
            move = abs(close - ref) / ref
            if index:
                ntr = inst.trades
                volume = int(inst.volume * math.exp(0.25 * z[i, 4]) * (1 + 4 * move))
            else:
                ntr = max(20, int(inst.trades * math.exp(0.25 * z[i, 5])))
                volume = int(inst.volume * math.exp(0.4 * z[i, 4]) * (1 + 6 * move))
                volume = max(volume, 4 * ntr)
            cols[:, i] = (ref, prev, opn, hi, lo, close, volume, ntr, up, down, 0)
            prev = close
        ref_, prev_, open_, high_, low_, close_, vol_, ntr_, up_, down_ = cols[:10]
        return Daily(inst, days, ref_, prev_, open_, high_, low_, close_, vol_, ntr_, up_,
                     down_, dividends=dividends, capital_changes=capital)

    @staticmethod
    def _round(price: float, etf: bool, step: int | None, mode: str = "nearest") -> int:
        if step is not None:
            return max(1, int(math.floor(price + 0.5)) if mode == "nearest" else
                       int(math.floor(price)) if mode == "down" else int(math.ceil(price)))
        return cal.round_tick(price, etf, mode)

    def _events(self, inst: Instrument, days: np.ndarray) -> dict[date, tuple[float, float]]:
        """Ex-dividend days: {date: (cash as a fraction of the previous close, stock per 1000)}."""
        if inst.type != "EQUITY" or not inst.dividend_months or len(days) == 0:
            return {}
        out: dict[date, tuple[float, float]] = {}
        first = days[0].astype(object)
        rng = self.rng("dividends", inst.symbol)
        per_year = 0.028 / len(inst.dividend_months)
        offset = _crc(inst.symbol) % 9
        for year in range(first.year, HORIZON.year + 1):
            for month in inst.dividend_months:
                target = date(year, month, 12 + offset)
                i = int(np.searchsorted(days, np.datetime64(target)))
                draw = rng.random(2)
                if i >= len(days):
                    continue
                d = days[i].astype(object)
                if d <= first or d.month != month:
                    continue
                stock = 0.0
                if inst.symbol == "2603" and year == 2012:
                    stock = 100.0
                if inst.symbol == "5483" and year == 2014:
                    stock, draw[0] = 50.0, -1.0
                cash = 0.0 if draw[0] < 0 else per_year * (0.7 + 0.6 * draw[1])
                out[d] = (cash, stock)
        return out

    # --- intraday -----------------------------------------------------------------------------

    def day(self, symbol: str, d: date, oddlot: bool = False) -> Day | None:
        """The trades of ``symbol`` on ``d`` (None when it did not trade that day)."""
        key = (symbol, d, oddlot)
        with self._lock:
            got = self._days.get(key)
            if got is not None:
                self._days.move_to_end(key)
                return got
        daily = self.daily(symbol)
        i = daily.index_of(d)
        if i is None:
            return None
        made = self._make_day(daily, i) if not oddlot else self._make_oddlot(daily, i)
        with self._lock:
            self._days[key] = made
            while len(self._days) > 512:
                self._days.popitem(last=False)
        return made

    def _make_day(self, daily: Daily, i: int) -> Day:
        inst = daily.inst
        d = daily.dates[i].astype(object)
        rng = self.rng("day", inst.symbol, d.toordinal())
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
        else:
            first = t_open + int(rng.integers(50_000, 8_000_000))
            last_cont = cal.epoch_us(cal.at(d, cal.CLOSING_TRIAL_START)) - 1
            mid = np.sort(rng.integers(first + 1, last_cont, n - 2))
            mid = mid + np.arange(n - 2)  # strictly increasing even when draws collide
            times = np.concatenate(([first], mid, [t_close])).astype(np.int64)
            kinds = np.full(n, KIND_CONT, dtype=np.int8)
            kinds[0], kinds[-1] = KIND_OPEN, KIND_CLOSE
        price = _path(rng, lad, o, h, lo, c, n)
        size = _split_sizes(rng, volume, n, auction_share=not index)
        if index:
            bid = ask = np.full(n, -1, dtype=np.int64)
            side = np.zeros(n, dtype=np.int8)
            serial = np.arange(1, n + 1, dtype=np.int64)
        else:
            side = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
            side[0] = 0
            below = np.array([cal.price_below(int(p), etf) for p in lad], dtype=np.int64)
            above = np.array([cal.price_above(int(p), etf) for p in lad], dtype=np.int64)
            pos = np.searchsorted(lad, price)
            bid = np.where(side >= 0, below[pos], price)
            ask = np.where(side >= 0, price, above[pos])
            bid[0], ask[0] = price[0], above[pos[0]]
            base = 10_000 + int(rng.integers(0, 400_000))
            serial = base + np.cumsum(rng.integers(1, 60, n))
        # trial matches: 08:30-09:00 converging to the open, 13:25-13:30 to the close
        tn = 12
        pre = np.sort(rng.integers(cal.epoch_us(cal.at(d, cal.TRIAL_START)), t_open - 1, tn))
        post = np.sort(rng.integers(cal.epoch_us(cal.at(d, cal.CLOSING_TRIAL_START)),
                                    t_close - 1, tn))
        trial_time = np.concatenate((pre, post)).astype(np.int64)
        if index:
            trial_time = trial_time[:0]
        trial_price = np.concatenate((
            self._converge(rng, lad, o, tn), self._converge(rng, lad, c, tn)))[: len(trial_time)]
        trial_size = (size[0] * rng.uniform(0.3, 1.1, len(trial_time))).astype(np.int64) + 1
        trial_serial = np.concatenate((
            np.arange(1, tn + 1), int(serial[-2]) + np.arange(1, tn + 1)))[: len(trial_time)]
        if len(trial_serial) and not index:
            # the closing trial matches (13:25-13:30) come before the closing auction's trade,
            # so their serials must too: one market-wide counter
            serial[-1] = max(int(serial[-1]), int(trial_serial[-1]) + 1)
        fixed = None
        if inst.type == "EQUITY" and inst.market != "ESB" and not etf:
            fixed_size = max(1, int(volume * rng.uniform(0.001, 0.004)))
            fixed = (cal.epoch_us(cal.at(d, cal.FIXED_PRICE_TIME)), c, fixed_size)
        unit_value = 1000 if inst.unit == "lots" else 1
        return Day(inst, d, int(daily.ref[i]), int(daily.prev_close[i]), int(daily.limit_up[i]),
                   int(daily.limit_down[i]), unit_value, times, price, size, bid, ask,
                   serial.astype(np.int64), kinds, side, trial_time, trial_price,
                   trial_size, trial_serial.astype(np.int64), fixed, etf)

    @staticmethod
    def _converge(rng: np.random.Generator, lad: np.ndarray, target: int, n: int) -> np.ndarray:
        j = int(np.searchsorted(lad, target))
        spread = np.rint(np.linspace(3, 0, n) * rng.normal(0, 1, n)).astype(np.int64)
        return lad[np.clip(j + spread, 0, len(lad) - 1)]

    def _make_oddlot(self, daily: Daily, i: int) -> Day:
        """Odd-lot trading: call auctions every minute from 09:01, sizes in shares."""
        lot = self._make_day(daily, i)
        inst = daily.inst
        d = lot.date
        rng = self.rng("oddlot", inst.symbol, d.toordinal())
        t_open = cal.epoch_us(cal.at(d, cal.SESSION_OPEN))
        grid = t_open + np.arange(1, 271, dtype=np.int64) * 60_000_000
        grid = grid[rng.random(len(grid)) < 0.75]
        n = len(grid)
        pos = np.clip(np.searchsorted(lot.time, grid, side="right") - 1, 0, len(lot.time) - 1)
        price = lot.price[pos]
        size = np.maximum(1, rng.lognormal(5.5, 1.0, n).astype(np.int64))
        side = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
        side[0] = 0
        etf = inst.etf
        above = np.array([cal.price_above(int(p), etf) for p in price], dtype=np.int64)
        below = np.array([cal.price_below(int(p), etf) for p in price], dtype=np.int64)
        bid = np.where(side >= 0, below, price)
        ask = np.where(side >= 0, price, above)
        kinds = np.full(n, KIND_CONT, dtype=np.int8)
        kinds[0], kinds[-1] = KIND_OPEN, KIND_CLOSE
        serial = 1 + np.cumsum(rng.integers(1, 30, n))
        empty = np.zeros(0, dtype=np.int64)
        return Day(inst, d, lot.reference, lot.previous_close, lot.limit_up, lot.limit_down, 1,
                   grid, price, size, bid, ask, serial.astype(np.int64), kinds, side,
                   empty, empty, empty, empty, None, etf)

    def turnover(self, symbol: str, d: date) -> int:
        """TWD traded on a whole day (computed from its trades, then remembered)."""
        key = (symbol, d)
        got = self._turnover.get(key)
        if got is None:
            day = self.day(symbol, d)
            got = 0 if day is None else day.value(len(day.time))
            self._turnover[key] = got
        return got

