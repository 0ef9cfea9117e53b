"""The Taiwan trading calendar: TWSE/TPEx stock sessions and TAIFEX futures/options sessions.

Built on ``exchange_calendars``' XTAI (the Taiwan Stock Exchange calendar, a well-kept base
with Taiwan's lunar holidays, observance rules and typhoon closures) plus this project's
corrections, kept in ONE table, :data:`CORRECTIONS`, each with its evidence. The calendar is
exactly the base plus the corrections (a test checks it, and that every correction is needed).

Covered: 2010-01-01 to 2026-12-31 (:data:`FIRST_DAY`, :data:`LAST_DAY`; 2026 is the latest
year TWSE has announced). A date outside raises :class:`~marketframe.exceptions.InvalidParams`.

Sessions (``market=``, ``session=``), times Asia/Taipei:

========  =====================  ============================================================
market    session                hours
========  =====================  ============================================================
stock     ``regular``            09:00-13:30 (continuous trading; closing call 13:25-13:30)
stock     ``oddlot``             09:00-13:30 intraday odd lots, from 2020-10-26
stock     ``oddlot_afterhours``  13:40-14:30 after-hours odd lots (one match at 14:30)
stock     ``afterhours``         14:00-14:30 after-hours fixed-price trading
futopt    ``regular``            08:45-13:45 (the day session)
futopt    ``afterhours``         15:00-05:00 the next morning, from 2017-05-15; it BELONGS TO
                                 THE NEXT TRADING DAY, and there is none on an evening
                                 before a closed weekday
========  =====================  ============================================================

Every function takes dates as ``datetime.date``, ``datetime.datetime``, ``pandas.Timestamp``,
``numpy.datetime64`` or ISO strings; results are pandas (``DatetimeIndex`` / ``DataFrame``) by
default, polars with ``backend="polars"``.

``python -m marketframe.calendar --write-sandbox-table`` regenerates the sandbox's copy of the
session table (``marketframe/sandbox/_sessions.py``): the sandbox imports nothing from the
rest of the package, so it keeps data generated from this module instead.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Literal, overload
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from marketframe.exceptions import InvalidParams, InvalidParamType

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "CORRECTIONS",
    "FIRST_DAY",
    "HOURS",
    "LAST_DAY",
    "TAIPEI",
    "Correction",
    "Hours",
    "base_sessions",
    "is_session",
    "minutes",
    "next_open",
    "previous_close",
    "sessions",
    "sessions_in_range",
]

TAIPEI = ZoneInfo("Asia/Taipei")

#: First and last day the calendar covers.
FIRST_DAY = dt.date(2010, 1, 1)
LAST_DAY = dt.date(2026, 12, 31)

Market = Literal["stock", "futopt"]
SessionName = Literal["regular", "afterhours", "oddlot", "oddlot_afterhours"]
Backend = Literal["pandas", "polars"]
DateLike = dt.date | str | pd.Timestamp | np.datetime64
Kind = Literal["closed", "open", "saturday"]


@dataclass(frozen=True)
class Correction:
    """One day where the base calendar (XTAI) is wrong.

    ``kind``: ``"closed"``, the base has a session but the market was closed;
    ``"open"``, the base has a weekday closed but the market traded;
    ``"saturday"``, a make-up Saturday the market traded (the base trades Monday-Friday only).
    """

    day: dt.date
    kind: Kind
    what: str
    source: str


_D = dt.date
_TWSE_SATURDAYS = (
    "TWSE traded on government make-up Saturdays (補行上班日) until 2018; from 2019 it does "
    "not (Liberty Times 2018-11-20, http://news.ltn.com.tw/news/business/breakingnews/2618735)"
)
_DGPA = "the DGPA work calendar of the year lists it as the make-up workday"

#: The project's corrections to the base calendar, oldest first: the one place to add one.
CORRECTIONS: tuple[Correction, ...] = (
    Correction(
        _D(2010, 2, 6),
        "saturday",
        "make-up Saturday for the 2010-02-19 Lunar New Year bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2010, 4, 30),
        "closed",
        "Labour Day (Saturday 2010-05-01) observed on the Friday",
        "vacanza/holidays' XTAI calendar (its test_labor_day), citing TWSE's 2010 schedule "
        "archived at web.archive.org/web/20100215175517/http://www.twse.com.tw/en/trading/"
        "trading_days.php; not seen first-hand",
    ),
    Correction(
        _D(2011, 5, 2),
        "closed",
        "Labour Day (Sunday 2011-05-01) observed on the Monday",
        "vacanza/holidays' XTAI calendar (its test_labor_day), citing TWSE's 2011 schedule "
        "archived at web.archive.org/web/20110410195932/http://www.twse.com.tw/en/trading/"
        "trading_days.php; not seen first-hand",
    ),
    Correction(
        _D(2012, 2, 4),
        "saturday",
        "make-up Saturday for the 2012-01-27 Lunar New Year bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2012, 3, 3),
        "saturday",
        "make-up Saturday for the 2012-02-27 Peace Memorial Day bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2012, 12, 22),
        "saturday",
        "make-up Saturday for the 2012-12-31 New Year bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2013, 2, 23),
        "saturday",
        "make-up Saturday for the 2013-02-15 Lunar New Year bridge holiday",
        "TWSE 2013 schedule (ETtoday, tw.bg3.co/a/gao-bie-long-nian-tai-gu-2-6feng-guan-2-"
        "18kai-hong-pan-ying-jie-xiao-long-nian.html); " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2013, 9, 14),
        "saturday",
        "make-up Saturday for the 2013-09-20 Mid-Autumn bridge holiday",
        "TWSE 2013 schedule (ETtoday, tw.bg3.co/a/gao-bie-long-nian-tai-gu-2-6feng-guan-2-"
        "18kai-hong-pan-ying-jie-xiao-long-nian.html); " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2014, 12, 27),
        "saturday",
        "make-up Saturday for the 2015-01-02 New Year bridge holiday",
        f"{_DGPA} (2015); {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2016, 1, 30),
        "saturday",
        "make-up Saturday for the 2016-02-12 Lunar New Year bridge holiday",
        "TWSE reminder (Liberty Times 2016-01-12, ec.ltn.com.tw/article/breakingnews/1569388)",
    ),
    Correction(
        _D(2016, 6, 4),
        "saturday",
        "make-up Saturday for the 2016-06-10 Dragon Boat bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2016, 9, 10),
        "saturday",
        "make-up Saturday for the 2016-09-16 Mid-Autumn bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2017, 2, 18),
        "saturday",
        "make-up Saturday for the 2017-02-27 Peace Memorial Day bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2017, 6, 3),
        "saturday",
        "make-up Saturday for the 2017-05-29 Dragon Boat bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2017, 9, 30),
        "saturday",
        "make-up Saturday for the 2017-10-09 National Day bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2018, 3, 31),
        "saturday",
        "make-up Saturday for the 2018-04-06 Tomb Sweeping bridge holiday",
        "TWSE 2018 schedule: the market opens that Saturday (Economic Daily News 2017-11-09, "
        "reposted at s8088.com/article/1113354)",
    ),
    Correction(
        _D(2018, 12, 22),
        "saturday",
        "make-up Saturday for the 2018-12-31 New Year bridge holiday",
        "TWSE 2018 schedule: the market opens that Saturday (Economic Daily News 2017-11-09, "
        "reposted at s8088.com/article/1113354)",
    ),
    Correction(
        _D(2022, 2, 4),
        "closed",
        "Lunar New Year bridge holiday (make-up workday 2022-01-22, no trading)",
        "TWSE holiday schedule 2022, reported in exchange_calendars issue 164 "
        "(github.com/gerrymanoim/exchange_calendars/issues/164); DGPA 2022 calendar",
    ),
    Correction(
        _D(2023, 1, 18),
        "closed",
        "no trading before Lunar New Year (clearing and settlement only)",
        "TWSE 2023 (ROC 112) schedule as republished by KGI Securities, www.kgi.com.tw/zh-tw/"
        "product-market/calendar-overview/stock-market-calendar: 1/18 and 1/19 no trading",
    ),
    Correction(
        _D(2024, 10, 31),
        "closed",
        "Typhoon Kong-rey: Taipei suspended work, TWSE/TAIFEX closed all day",
        "Bloomberg 2024-10-31 (bnnbloomberg.ca/business/international/2024/10/31/taiwan-"
        "braces-for-super-typhoon-kong-rey-after-shutting-exchange): the third storm halt of "
        "2024, after Gaemi (07-24, 07-25) and Krathon (10-02, 10-03), which XTAI has",
    ),
)


@dataclass(frozen=True)
class Hours:
    """The hours of one kind of session (Asia/Taipei) and where they come from."""

    open: dt.time
    close: dt.time
    overnight: bool  # closes on the next calendar day
    since: dt.date  # first day the session exists
    source: str


#: Session hours by (market, session).
HOURS: dict[tuple[str, str], Hours] = {
    ("stock", "regular"): Hours(
        dt.time(9), dt.time(13, 30), False, FIRST_DAY, "spec/wire-facts.md: 09:00-13:30"
    ),
    ("stock", "oddlot"): Hours(
        dt.time(9),
        dt.time(13, 30),
        False,
        dt.date(2020, 10, 26),
        "TWSE intraday odd-lot trading from 2020-10-26: orders from 09:00, first match 09:10, "
        "then every 3 minutes, every minute from 2022-12-19; the spec only says odd lots are "
        "selectable (type=oddlot)",
    ),
    ("stock", "oddlot_afterhours"): Hours(
        dt.time(13, 40),
        dt.time(14, 30),
        False,
        FIRST_DAY,
        "TWSE after-hours odd-lot trading: orders 13:40-14:30, one match at 14:30",
    ),
    ("stock", "afterhours"): Hours(
        dt.time(14),
        dt.time(14, 30),
        False,
        FIRST_DAY,
        "TWSE after-hours fixed-price trading 14:00-14:30 (spec/wire-facts.md: a fixed-price "
        "row may carry serial 99999999)",
    ),
    ("futopt", "regular"): Hours(
        dt.time(8, 45), dt.time(13, 45), False, FIRST_DAY, "TAIFEX day session 08:45-13:45"
    ),
    ("futopt", "afterhours"): Hours(
        dt.time(15),
        dt.time(5),
        True,
        dt.date(2017, 5, 15),
        "spec/wire-facts.md: after-hours 15:00-05:00 next day; TAIFEX opened it 2017-05-15",
    ),
}

_MARKETS = ("stock", "futopt")
_SESSIONS = {m: tuple(s for mm, s in HOURS if mm == m) for m in _MARKETS}


# --- input checks ------------------------------------------------------------------------


def _coverage() -> str:
    return f"{FIRST_DAY.isoformat()} .. {LAST_DAY.isoformat()}"


def _timestamp(value: object, where: str, param: str) -> pd.Timestamp:
    """``value`` as a pandas Timestamp, or InvalidParams naming what is accepted."""
    allowed = "a date: datetime.date/datetime, pandas.Timestamp, numpy.datetime64, ISO string"
    if value is None or isinstance(value, bool | int | float):
        raise InvalidParamType(where, param, f"is {value!r}", allowed)
    if not isinstance(value, dt.date | str | pd.Timestamp | np.datetime64):
        raise InvalidParamType(where, param, f"is a {type(value).__name__}", allowed)
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise InvalidParams(where, param, f"is not a date ({value!r})", allowed) from exc
    if pd.isna(ts):
        raise InvalidParams(where, param, "is NaT", allowed)
    return ts


def _in_range(day: dt.date, where: str, param: str) -> dt.date:
    if not FIRST_DAY <= day <= LAST_DAY:
        raise InvalidParams(
            where, param, f"{day.isoformat()} is outside the calendar's coverage", _coverage()
        )
    return day


def _day(value: DateLike, where: str, param: str = "day") -> dt.date:
    """A calendar date (a datetime's own date, in its own zone)."""
    return _in_range(_timestamp(value, where, param).date(), where, param)


def _moment(value: DateLike | dt.datetime, where: str, param: str = "ts") -> pd.Timestamp:
    """A moment, tz-aware in Asia/Taipei (a naive value is read as Taipei time)."""
    ts = _timestamp(value, where, param)
    ts = ts.tz_localize(TAIPEI) if ts.tzinfo is None else ts.tz_convert(TAIPEI)
    _in_range(ts.date(), where, param)
    return ts


def _hours(market: str, session: str, where: str) -> Hours:
    if market not in _MARKETS:
        raise InvalidParams(where, "market", f"is {market!r}", ", ".join(map(repr, _MARKETS)))
    if session not in _SESSIONS[market]:
        raise InvalidParams(
            where,
            "session",
            f"is {session!r} for market {market!r}",
            ", ".join(map(repr, _SESSIONS[market])),
        )
    return HOURS[(market, session)]


def _backend(backend: str, where: str) -> None:
    if backend not in ("pandas", "polars"):
        raise InvalidParams(where, "backend", f"is {backend!r}", "'pandas', 'polars'")


# --- the table -----------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _base() -> np.ndarray:
    """XTAI's sessions over the coverage, as ``datetime64[D]`` (loaded once, on first use:
    importing exchange_calendars and building XTAI take about a second)."""
    import warnings

    import exchange_calendars as xcals

    with warnings.catch_warnings():  # its own pandas deprecations are not the user's to see
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        xtai = xcals.get_calendar("XTAI", start=FIRST_DAY.isoformat(), end=LAST_DAY.isoformat())
    return np.asarray(xtai.sessions.values.astype("datetime64[D]"))


def base_sessions() -> pd.DatetimeIndex:
    """The base calendar's (XTAI's) stock sessions over the coverage, uncorrected."""
    return pd.DatetimeIndex(_base(), name="session")


@lru_cache(maxsize=1)
def _days() -> np.ndarray:
    """Every stock session (base + corrections), sorted ``datetime64[D]``."""
    closed = {np.datetime64(c.day, "D") for c in CORRECTIONS if c.kind == "closed"}
    opened = {np.datetime64(c.day, "D") for c in CORRECTIONS if c.kind != "closed"}
    days = {d for d in _base() if d not in closed} | opened
    return np.array(sorted(days), dtype="datetime64[D]")


@cache
def _labels(market: str, session: str) -> np.ndarray:
    """The session labels of (market, session): the trading days that have that session."""
    hours = HOURS[(market, session)]
    days = _days()
    days = days[days >= np.datetime64(hours.since, "D")]
    if not hours.overnight:
        return days
    # a night session starts on the evening of one trading day and belongs to the next one;
    # it is held only when no weekday between the two is closed
    every = _days()
    prev = every[np.searchsorted(every, days) - 1]
    ok = np.searchsorted(every, days) > 0
    between = np.busday_count(prev + 1, days)  # weekdays strictly between the two
    ok &= between == 0
    ok &= prev >= np.datetime64(hours.since, "D")
    return days[ok]


def _previous_day(label: np.datetime64) -> np.datetime64:
    every = _days()
    result: np.datetime64 = every[np.searchsorted(every, label) - 1]
    return result


def _bounds(label: np.datetime64, hours: Hours) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Open and close of the session labelled ``label``."""
    start = _previous_day(label) if hours.overnight else label
    d = pd.Timestamp(start).date()
    opens = pd.Timestamp(dt.datetime.combine(d, hours.open, tzinfo=TAIPEI))
    end = d + dt.timedelta(days=1) if hours.overnight else d
    closes = pd.Timestamp(dt.datetime.combine(end, hours.close, tzinfo=TAIPEI))
    return opens, closes


# --- public API -----------------------------------------------------------------------------


def is_session(day: DateLike, market: Market = "stock", session: SessionName = "regular") -> bool:
    """Whether ``day`` has the session (a night session counts for the day it belongs to)."""
    where = "calendar.is_session"
    _hours(market, session, where)
    d = np.datetime64(_day(day, where), "D")
    labels = _labels(market, session)
    i = int(np.searchsorted(labels, d))
    return i < len(labels) and labels[i] == d


def _range(start: DateLike, end: DateLike, market: str, session: str, where: str) -> np.ndarray:
    _hours(market, session, where)
    lo, hi = _day(start, where, "start"), _day(end, where, "end")
    if lo > hi:
        raise InvalidParams(
            where, "end", f"{hi.isoformat()} is before start {lo.isoformat()}", "end >= start"
        )
    labels = _labels(market, session)
    a = np.searchsorted(labels, np.datetime64(lo, "D"), side="left")
    b = np.searchsorted(labels, np.datetime64(hi, "D"), side="right")
    return labels[a:b]


@overload
def sessions_in_range(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["pandas"] = ...,
) -> pd.DatetimeIndex: ...
@overload
def sessions_in_range(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["polars"],
) -> pl.Series: ...
def sessions_in_range(
    start: DateLike,
    end: DateLike,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    backend: Backend = "pandas",
) -> pd.DatetimeIndex | pl.Series:
    """The trading days from ``start`` to ``end`` inclusive that have the session.

    pandas: a tz-naive ``DatetimeIndex`` named ``session``; polars: a ``pl.Date`` Series.
    """
    where = "calendar.sessions_in_range"
    _backend(backend, where)
    labels = _range(start, end, market, session, where)
    if backend == "polars":
        import polars as pl

        return pl.Series("session", labels, dtype=pl.Date)
    return pd.DatetimeIndex(labels.astype("datetime64[ns]"), name="session")


@overload
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["pandas"] = ...,
) -> pd.DataFrame: ...
@overload
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["polars"],
) -> pl.DataFrame: ...
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    backend: Backend = "pandas",
) -> pd.DataFrame | pl.DataFrame:
    """The sessions from ``start`` to ``end`` inclusive: one row per trading day with its
    ``open`` and ``close`` (tz-aware Asia/Taipei).

    The ``session`` column is the trading day the session belongs to: for the TAIFEX night
    session (``market="futopt", session="afterhours"``) that is the day AFTER the evening it
    opens on.
    """
    where = "calendar.sessions"
    _backend(backend, where)
    hours = _hours(market, session, where)
    labels = _range(start, end, market, session, where)
    bounds = [_bounds(label, hours) for label in labels]
    frame = pd.DataFrame(
        {
            "session": pd.DatetimeIndex(labels.astype("datetime64[ns]")),
            "open": pd.DatetimeIndex([b[0] for b in bounds], dtype="datetime64[ns, Asia/Taipei]"),
            "close": pd.DatetimeIndex([b[1] for b in bounds], dtype="datetime64[ns, Asia/Taipei]"),
        }
    )
    if backend == "polars":
        import polars as pl

        stamp = pl.Datetime("us", "Asia/Taipei")
        return pl.from_pandas(frame).with_columns(
            pl.col("session").cast(pl.Date), pl.col("open", "close").cast(stamp)
        )
    return frame


@overload
def minutes(
    day: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["pandas"] = ...,
) -> pd.DatetimeIndex: ...
@overload
def minutes(
    day: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    backend: Literal["polars"],
) -> pl.Series: ...
def minutes(
    day: DateLike,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    backend: Backend = "pandas",
) -> pd.DatetimeIndex | pl.Series:
    """The trading minutes of the session of ``day``, each labelled by its start, from the
    open to the minute before the close (09:00 ... 13:29 for the regular stock session, as
    exchange_calendars counts), tz-aware Asia/Taipei.

    ``day`` is the trading day the session belongs to: the night session of
    ``minutes("2026-11-20", "futopt", "afterhours")`` runs from 15:00 on 2026-11-19.
    Raises :class:`InvalidParams` when ``day`` has no such session.
    """
    where = "calendar.minutes"
    _backend(backend, where)
    hours = _hours(market, session, where)
    d = _day(day, where)
    if not is_session(d, market, session):
        raise InvalidParams(
            where,
            "day",
            f"{d.isoformat()} has no {market} {session} session",
            "a day for which is_session(day, market, session) is true",
        )
    opens, closes = _bounds(np.datetime64(d, "D"), hours)
    index = pd.date_range(opens, closes, freq="min", inclusive="left", name="minute")
    if backend == "polars":
        import polars as pl

        return pl.Series("minute", index).cast(pl.Datetime("us", "Asia/Taipei"))
    return index


def next_open(
    ts: DateLike | dt.datetime, market: Market = "stock", session: SessionName = "regular"
) -> pd.Timestamp:
    """The first open of the session strictly after ``ts`` (a naive ``ts`` is Taipei time).

    Raises :class:`InvalidParams` if that open is past the calendar's coverage.
    """
    where = "calendar.next_open"
    hours = _hours(market, session, where)
    moment = _moment(ts, where)
    labels = _labels(market, session)
    # the session containing or following ts opens no earlier than the day before ts's date
    i = int(np.searchsorted(labels, np.datetime64(moment.date(), "D") - 1))
    for label in labels[i:]:
        opens = _bounds(label, hours)[0]
        if opens > moment:
            return opens
    raise InvalidParams(where, "ts", f"{moment} has no next open in the coverage", _coverage())


def previous_close(
    ts: DateLike | dt.datetime, market: Market = "stock", session: SessionName = "regular"
) -> pd.Timestamp:
    """The last close of the session strictly before ``ts`` (a naive ``ts`` is Taipei time).

    Raises :class:`InvalidParams` if that close is before the calendar's coverage.
    """
    where = "calendar.previous_close"
    hours = _hours(market, session, where)
    moment = _moment(ts, where)
    labels = _labels(market, session)
    i = int(np.searchsorted(labels, np.datetime64(moment.date(), "D") + 2, side="right"))
    for label in labels[:i][::-1]:
        closes = _bounds(label, hours)[1]
        if closes < moment:
            return closes
    raise InvalidParams(where, "ts", f"{moment} has no previous close in the coverage", _coverage())


# --- the sandbox's copy ---------------------------------------------------------------------

#: Where the sandbox keeps its generated copy of the session table.
SANDBOX_TABLE = "marketframe/sandbox/_sessions.py"


def render_sandbox_table() -> str:
    """The source of ``marketframe/sandbox/_sessions.py``: the weekdays without a stock session
    and the Saturdays with one, per year of the coverage, as ``MMDD`` words."""
    days = {pd.Timestamp(d).date() for d in _days()}
    closed: dict[int, list[str]] = {y: [] for y in range(FIRST_DAY.year, LAST_DAY.year + 1)}
    opened: dict[int, list[str]] = {y: [] for y in closed}
    d = FIRST_DAY
    while d <= LAST_DAY:
        if d.weekday() < 5 and d not in days:
            closed[d.year].append(d.strftime("%m%d"))
        elif d.weekday() >= 5 and d in days:
            opened[d.year].append(d.strftime("%m%d"))
        d += dt.timedelta(days=1)

    def table(name: str, rows: dict[int, list[str]]) -> list[str]:
        out = [f'{name} = """']
        for year, words in rows.items():
            out += [f"{year} {' '.join(words[i : i + 16])}" for i in range(0, len(words), 16)]
        return [*out, '"""']

    lines = [
        '"""The real Taiwan stock calendar for the sandbox: GENERATED, do not edit.',
        "",
        "Written by ``python -m marketframe.calendar --write-sandbox-table`` from",
        "``marketframe.calendar`` (XTAI plus the project's corrections); the sandbox imports",
        "nothing from the rest of the package, so it keeps this copy, and",
        "tests/sandbox/test_calendar_table.py fails when the two disagree. Years outside",
        "FIRST_YEAR..LAST_YEAR use the sandbox's rule-based fallback (``_calendar.py``).",
        '"""',
        "",
        f"FIRST_YEAR = {FIRST_DAY.year}",
        f"LAST_YEAR = {LAST_DAY.year}",
        "",
        "#: Weekdays without a session: lines of a year and its MMDD days (a year may take",
        "#: several lines).",
        *table("CLOSED_WEEKDAYS", closed),
        "",
        "#: Saturdays and Sundays with a session (make-up Saturdays, until 2018), the same way.",
        *table("OPEN_WEEKEND_DAYS", opened),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m marketframe.calendar --write-sandbox-table``: regenerate the sandbox's
    table (run from the repository root); ``--check`` exits 1 when it is stale."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m marketframe.calendar")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-sandbox-table", action="store_true")
    group.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    path = Path(__file__).resolve().parent.parent / SANDBOX_TABLE
    text = render_sandbox_table()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        print(f"{SANDBOX_TABLE}: {'current' if current == text else 'STALE'}")
        return 0 if current == text else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {SANDBOX_TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
