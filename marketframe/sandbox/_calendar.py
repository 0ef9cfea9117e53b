"""Taiwan market rules used by the sandbox: trading calendar, tick sizes, price limits.

Prices inside the sandbox are integers in hundredths of a dollar ("cents") so that tick
arithmetic is exact; they become JSON numbers only at the edge.
"""

from __future__ import annotations

import math
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

import numpy as np

from . import _sessions

TAIPEI = ZoneInfo("Asia/Taipei")

#: The fallback rule for years the real table does not cover (before ``_sessions.FIRST_YEAR``,
#: after ``_sessions.LAST_YEAR``): weekdays minus these fixed-date national holidays (month,
#: day). The lunar holidays are left out: they move every year. (The table's years after
#: ``_sessions.OFFICIAL_LAST_YEAR`` are the calendar's provisional ones, XTAI's rules.)
HOLIDAYS: frozenset[tuple[int, int]] = frozenset({(1, 1), (2, 28), (4, 4), (5, 1), (10, 10)})


def _table(text: str) -> frozenset[date]:
    """The dates of a ``_sessions`` table (lines of a year and its MMDD days)."""
    out: set[date] = set()
    for line in text.strip().splitlines():
        year, *days = line.split()
        out.update(date(int(year), int(d[:2]), int(d[2:])) for d in days)
    return frozenset(out)


#: The real calendar (``marketframe.calendar``, copied into ``_sessions.py`` by its generator).
_CLOSED_WEEKDAYS = _table(_sessions.CLOSED_WEEKDAYS)
_OPEN_WEEKEND_DAYS = _table(_sessions.OPEN_WEEKEND_DAYS)

CALENDAR_START = date(2009, 1, 1)
CALENDAR_END = date(2035, 12, 31)

SESSION_OPEN = time(9, 0)
SESSION_CLOSE = time(13, 30)
TRIAL_START = time(8, 30)
CLOSING_TRIAL_START = time(13, 25)
FIXED_PRICE_TIME = time(14, 30)

FUT_OPEN = time(8, 45)
FUT_CLOSE = time(13, 45)
FUT_AH_OPEN = time(15, 0)
FUT_AH_CLOSE = time(5, 0)
#: TAIFEX's index futures and options: the expiring month trades 08:45-13:30 on its last
#: trading day, and has no night session that evening.
FUT_LAST_DAY_CLOSE = time(13, 30)
#: TAIFEX's first after-hours session opened on the evening of this day.
NIGHT_SESSIONS_FROM = date(2017, 5, 15)

#: TWSE's intraday odd lots: first match at 09:10 (``_intraday.ODDLOT_FIRST``), then a call
#: auction every so many seconds, from the dates here (the first opened intraday odd-lot
#: trading): 3 minutes from 2020-10-26, 1 minute from 2022-12-19, 5 seconds from 2024-12-02.
ODDLOT_INTERVALS: tuple[tuple[date, int], ...] = (
    (date(2020, 10, 26), 180),
    (date(2022, 12, 19), 60),
    (date(2024, 12, 2), 5),
)


def is_trading_day(d: date) -> bool:
    """Whether the stock market trades on ``d``: the real Taiwan calendar from
    ``_sessions.FIRST_YEAR`` to ``_sessions.LAST_YEAR``, the fallback rule outside."""
    if _sessions.FIRST_YEAR <= d.year <= _sessions.LAST_YEAR:
        if d.weekday() < 5:
            return d not in _CLOSED_WEEKDAYS
        return d in _OPEN_WEEKEND_DAYS
    return d.weekday() < 5 and (d.month, d.day) not in HOLIDAYS


def has_night_session(d: date) -> bool:
    """Whether TAIFEX holds an after-hours session on the evening of ``d`` (15:00 to 05:00):
    on every trading day since the first (2017-05-15), the last one before a closure too
    (the FSC: a day session has its night session). It belongs to the next trading day."""
    return d >= NIGHT_SESSIONS_FROM and is_trading_day(d)


def has_oddlot(d: date) -> bool:
    """Whether intraday odd lots trade on ``d`` (a trading day from 2020-10-26)."""
    return d >= ODDLOT_INTERVALS[0][0] and is_trading_day(d)


def oddlot_interval(d: date) -> int:
    """Seconds between the intraday odd-lot call auctions on ``d`` (the first rule's before
    intraday odd lots existed)."""
    seconds = ODDLOT_INTERVALS[0][1]
    for since, every in ODDLOT_INTERVALS:
        if since <= d:
            seconds = every
    return seconds


@lru_cache(maxsize=1)
def all_trading_days() -> np.ndarray:
    """Every trading day of the synthetic calendar, as ``datetime64[D]``."""
    days = []
    d = CALENDAR_START
    one = timedelta(days=1)
    while d <= CALENDAR_END:
        if is_trading_day(d):
            days.append(d)
        d += one
    return np.array(days, dtype="datetime64[D]")


def trading_days(start: date, end: date) -> np.ndarray:
    days = all_trading_days()
    lo = np.searchsorted(days, np.datetime64(start, "D"), side="left")
    hi = np.searchsorted(days, np.datetime64(end, "D"), side="right")
    return days[lo:hi]


def previous_trading_day(d: date) -> date:
    days = all_trading_days()
    i = np.searchsorted(days, np.datetime64(d, "D"), side="left") - 1
    day: date = days[i].astype(object)
    return day


def next_trading_day(d: date) -> date:
    days = all_trading_days()
    i = np.searchsorted(days, np.datetime64(d, "D"), side="right")
    day: date = days[i].astype(object)
    return day


def at(d: date, t: time) -> datetime:
    return datetime.combine(d, t, tzinfo=TAIPEI)


def epoch_us(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1_000_000))


def session_date(now: datetime) -> date:
    """The trading day whose intraday data the service shows at ``now``.

    From the 08:30 trial matching of a trading day that day is shown; before it (and on
    closed days) the previous trading day is shown, complete.
    """
    local = now.astimezone(TAIPEI)
    d = local.date()
    if is_trading_day(d) and local.time() >= TRIAL_START:
        return d
    return previous_trading_day(d)


def one_year_after(d: date) -> date:
    """Same month and day a year later (29 February maps to 28 February)."""
    try:
        return d.replace(year=d.year + 1)
    except ValueError:
        return d.replace(year=d.year + 1, day=28)


# --- ticks and limits (TWSE/TPEx rules; prices in cents) -------------------------------------


def tick(price: float, etf: bool = False) -> int:
    """Tick size in cents for a price in cents (stock bands, or the ETF bands)."""
    if etf:
        return 1 if price < 5000 else 5
    if price < 1000:
        return 1
    if price < 5000:
        return 5
    if price < 10000:
        return 10
    if price < 50000:
        return 50
    if price < 100000:
        return 100
    return 500


#: rounding to a whole number of ticks, ``sign * floor(sign * q + offset)``: down and up
#: forgive a float's last bits (1e-9 of a tick), nearest rounds half up
_MODES = {"down": (1, 1e-9), "up": (-1, 1e-9), "nearest": (1, 0.5)}


def round_tick(price: float, etf: bool = False, mode: str = "nearest") -> int:
    t = tick(price, etf)
    sign, offset = _MODES[mode]
    n = sign * math.floor(sign * price / t + offset)
    return max(int(n * t), t)


#: the stock tick bands: prices (cents) from which each tick applies, and the ticks
_BANDS = np.array((1000, 5000, 10000, 50000, 100000))
_TICKS = np.array((1, 5, 10, 50, 100, 500))


def round_ticks(prices: np.ndarray, etf: bool = False, mode: str = "nearest") -> np.ndarray:
    """:func:`round_tick` of each price (the same arithmetic, on arrays)."""
    t = np.where(prices < 5000, 1, 5) if etf else _TICKS[np.searchsorted(_BANDS, prices, "right")]
    sign, offset = _MODES[mode]
    n = sign * np.floor(sign * prices / t + offset)
    out: np.ndarray = np.maximum((n * t).astype(np.int64), t)
    return out


def limits(reference: int, etf: bool = False) -> tuple[int, int]:
    """(limit up, limit down): +/-10% of the reference price, rounded inwards to the tick."""
    return round_tick(reference * 1.1, etf, "down"), round_tick(reference * 0.9, etf, "up")


def price_below(price: int, etf: bool = False) -> int:
    return price - tick(price - 1, etf)


def price_above(price: int, etf: bool = False) -> int:
    return price + tick(price, etf)


def ladder(low: int, high: int, etf: bool = False, step: int | None = None) -> np.ndarray:
    """Every valid price from ``low`` to ``high`` inclusive (cents)."""
    if step is not None:
        return np.arange(low, high + 1, step, dtype=np.int64)
    out = [low]
    p = low
    while p < high:
        p += tick(p, etf)
        out.append(min(p, high))
    return np.array(out, dtype=np.int64)
