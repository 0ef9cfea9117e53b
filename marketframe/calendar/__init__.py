"""The Taiwan trading calendar: TWSE/TPEx stock sessions and TAIFEX futures/options sessions.

Built on ``exchange_calendars``' XTAI (the Taiwan Stock Exchange calendar, a well-kept base
with Taiwan's lunar holidays, observance rules and typhoon closures) plus this project's
corrections, kept in ONE table, :data:`CORRECTIONS`, each with its evidence. The calendar is
exactly the base plus the corrections (a test checks it, and that every correction is needed).

Covered: 2010-01-01 to 2035-12-31 (:data:`FIRST_DAY`, :data:`LAST_DAY`). The table holds the
official schedules through 2026 (:data:`OFFICIAL_LAST_DAY`; TWSE announces a year's schedule
in the autumn before it); later years are PROVISIONAL, XTAI's rules alone:
:func:`is_provisional` says so, and every function answering about such a year warns
:class:`~marketframe.exceptions.ProvisionalSchedule` naming it. A date outside the coverage
raises :class:`~marketframe.exceptions.InvalidParams`.

Sessions (``market=``, ``session=``), times Asia/Taipei:

========  =====================  ============================================================
market    session                hours
========  =====================  ============================================================
stock     ``regular``            09:00-13:30 (continuous trading; closing call 13:25-13:30)
stock     ``oddlot``             09:00-13:30 intraday odd lots, from 2020-10-26: first match
                                 09:10, then every 3 min, 1 min from 2022-12-19, 5 s from
                                 2024-12-02 (:func:`oddlot_interval`)
stock     ``oddlot_afterhours``  13:40-14:30 after-hours odd lots (one match at 14:30)
stock     ``afterhours``         14:00-14:30 after-hours fixed-price trading
futopt    ``regular``            08:45-13:45 (the day session)
futopt    ``afterhours``         15:00-05:00 the next morning, from 2017-05-15, on the
                                 evening of EVERY trading day; it BELONGS TO THE NEXT
                                 TRADING DAY (the one before a closure too)
========  =====================  ============================================================

The futures and options hours are those of TAIFEX's domestic index products; ``group=``
(:data:`GROUPS`) gives another group's: single-stock, FX, gold and TOPIX futures open their
night session at 17:25, FX, gold and TOPIX close their day at 16:15. The expiring month of
the index products stops at 13:30 on its last trading day (:func:`expiry`) and has no night
session that evening.

Every function takes dates as ``datetime.date``, ``datetime.datetime``, ``pandas.Timestamp``,
``numpy.datetime64`` or ISO strings; results are pandas (``DatetimeIndex`` / ``DataFrame``) by
default, polars with ``backend="polars"``.

``python -m marketframe._gen`` regenerates the sandbox's copy of the
session table (``marketframe/sandbox/_sessions.py``): the sandbox imports nothing from the
rest of the package, so it keeps data generated from this module instead.
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
import warnings
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Literal, overload

import numpy as np
import pandas as pd

from marketframe._time import TZ_NAME
from marketframe.calendar._checks import (
    _backend,
    _coverage,
    _day,
    _group,
    _hours,
    _moment,
)
from marketframe.calendar._table import (
    CORRECTIONS,
    FIRST_DAY,
    GROUPS,
    HOURS,
    LAST_DAY,
    ODDLOT_FIRST_MATCH,
    ODDLOT_INTERVALS,
    OFFICIAL_LAST_DAY,
    TAIPEI,
    Backend,
    Correction,
    DateLike,
    Group,
    Hours,
    Market,
    OddLotInterval,
    ProductGroup,
    SessionName,
)
from marketframe.exceptions import InvalidParams, InvalidParamType, ProvisionalSchedule

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "CORRECTIONS",
    "FIRST_DAY",
    "GROUPS",
    "HOURS",
    "LAST_DAY",
    "ODDLOT_FIRST_MATCH",
    "ODDLOT_INTERVALS",
    "OFFICIAL_LAST_DAY",
    "TAIPEI",
    "Correction",
    "Group",
    "Hours",
    "OddLotInterval",
    "ProductGroup",
    "base_sessions",
    "expiry",
    "is_provisional",
    "is_session",
    "minutes",
    "next_open",
    "oddlot_interval",
    "previous_close",
    "sessions",
    "sessions_in_range",
]

# --- the table -----------------------------------------------------------------------------


_BUILDING = threading.Lock()


@lru_cache(maxsize=1)
def _base() -> np.ndarray:
    """XTAI's sessions over the coverage, as ``datetime64[D]`` (loaded once, on first use:
    importing exchange_calendars and building XTAI take about a second). One thread builds
    it while the others wait: the warning filters below are process-wide, and a second
    builder leaving its ``catch_warnings`` would restore them under the first one."""
    with _BUILDING:
        return _xtai()


@lru_cache(maxsize=1)
def _xtai() -> np.ndarray:
    import exchange_calendars as xcals  # about a second: loaded on first use

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
    # a night session opens on the evening of every trading day and belongs to the next one,
    # across a closure too (the evening before Lunar New Year's closure belongs to the first
    # day after it)
    every = _days()
    result: np.ndarray = every[1:][every[:-1] >= np.datetime64(hours.since, "D")]
    return result


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


# --- provisional years -----------------------------------------------------------------------


def _say_provisional(first: dt.date, last: dt.date, where: str) -> None:
    """Warn :class:`ProvisionalSchedule` when an answer rests on days past
    :data:`OFFICIAL_LAST_DAY` (``first`` .. ``last``), at the caller of the public function
    that calls this. The package's own uses of the calendar (the HTTP cache's expiry, the
    ``NoSession`` warning) do not warn: the caller is a user's."""
    if last <= OFFICIAL_LAST_DAY:
        return
    caller = sys._getframe(2).f_globals.get("__name__", "")
    if caller == "marketframe" or caller.startswith("marketframe."):
        return
    first = max(first, OFFICIAL_LAST_DAY + dt.timedelta(days=1))
    years = str(first.year) if first.year == last.year else f"{first.year}-{last.year}"
    warnings.warn(
        ProvisionalSchedule(
            f"{where}: the official schedule of {years} is not in marketframe.calendar's "
            f"table yet (it holds the years to {OFFICIAL_LAST_DAY.year}); the answer is "
            "PROVISIONAL, XTAI's rules (exchange_calendars), and may change when TWSE "
            "announces the year's holidays"
        ),
        stacklevel=3,
    )


def is_provisional(day: DateLike) -> bool:
    """Whether the calendar's answers about ``day`` are provisional: its year's official
    schedule is not in the table yet (past :data:`OFFICIAL_LAST_DAY`), so the day follows
    XTAI's rules alone."""
    return _day(day, "calendar.is_provisional") > OFFICIAL_LAST_DAY


# --- public API -----------------------------------------------------------------------------


def is_session(day: DateLike, market: Market = "stock", session: SessionName = "regular") -> bool:
    """Whether ``day`` has the session (a night session counts for the day it belongs to)."""
    where = "calendar.is_session"
    _hours(market, session, where)
    d = _day(day, where)
    _say_provisional(d, d, where)
    labels = _labels(market, session)
    i = int(np.searchsorted(labels, np.datetime64(d, "D")))
    return i < len(labels) and labels[i] == np.datetime64(d, "D")


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
    _say_provisional(_day(start, where, "start"), _day(end, where, "end"), where)
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        return pl.Series("session", labels, dtype=pl.Date)
    return pd.DatetimeIndex(labels.astype("datetime64[ns]"), name="session")


@overload
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    group: Group | None = ...,
    backend: Literal["pandas"] = ...,
) -> pd.DataFrame: ...
@overload
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    group: Group | None = ...,
    backend: Literal["polars"],
) -> pl.DataFrame: ...
def sessions(
    start: DateLike,
    end: DateLike,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    group: Group | None = None,
    backend: Backend = "pandas",
) -> pd.DataFrame | pl.DataFrame:
    """The sessions from ``start`` to ``end`` inclusive: one row per trading day with its
    ``open`` and ``close`` (tz-aware Asia/Taipei).

    The ``session`` column is the trading day the session belongs to: for the TAIFEX night
    session (``market="futopt", session="afterhours"``) that is the day AFTER the evening it
    opens on. ``group``: a TAIFEX product group's hours (:data:`GROUPS`; the futures and
    options only), the domestic index products' when None.
    """
    where = "calendar.sessions"
    _backend(backend, where)
    hours = _hours(market, session, where, group)
    labels = _range(start, end, market, session, where)
    _say_provisional(_day(start, where, "start"), _day(end, where, "end"), where)
    bounds = [_bounds(label, hours) for label in labels]
    frame = pd.DataFrame(
        {
            "session": pd.DatetimeIndex(labels.astype("datetime64[ns]")),
            "open": pd.DatetimeIndex([b[0] for b in bounds], dtype="datetime64[ns, Asia/Taipei]"),
            "close": pd.DatetimeIndex([b[1] for b in bounds], dtype="datetime64[ns, Asia/Taipei]"),
        }
    )
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        stamp = pl.Datetime("us", TZ_NAME)
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
    group: Group | None = ...,
    backend: Literal["pandas"] = ...,
) -> pd.DatetimeIndex: ...
@overload
def minutes(
    day: DateLike,
    market: Market = ...,
    session: SessionName = ...,
    *,
    group: Group | None = ...,
    backend: Literal["polars"],
) -> pl.Series: ...
def minutes(
    day: DateLike,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    group: Group | None = None,
    backend: Backend = "pandas",
) -> pd.DatetimeIndex | pl.Series:
    """The trading minutes of the session of ``day``, each labelled by its start, from the
    open to the minute before the close (09:00 ... 13:29 for the regular stock session, as
    exchange_calendars counts), tz-aware Asia/Taipei.

    ``day`` is the trading day the session belongs to: the night session of
    ``minutes("2026-11-20", "futopt", "afterhours")`` runs from 15:00 on 2026-11-19.
    ``group``: as :func:`sessions`'. Raises :class:`InvalidParams` when ``day`` has no such
    session.
    """
    where = "calendar.minutes"
    _backend(backend, where)
    hours = _hours(market, session, where, group)
    d = _day(day, where)
    if not is_session(d, market, session):
        raise InvalidParams(
            where,
            "day",
            f"{d.isoformat()} has no {market} {session} session",
            "a day for which is_session(day, market, session) is true",
        )
    _say_provisional(d, d, where)
    opens, closes = _bounds(np.datetime64(d, "D"), hours)
    index = pd.date_range(opens, closes, freq="min", inclusive="left", name="minute")
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        return pl.Series("minute", index).cast(pl.Datetime("us", TZ_NAME))
    return index


def next_open(
    ts: DateLike | dt.datetime,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    group: Group | None = None,
) -> pd.Timestamp:
    """The first open of the session strictly after ``ts`` (a naive ``ts`` is Taipei time);
    ``group``: as :func:`sessions`'.

    Raises :class:`InvalidParams` if that open is past the calendar's coverage.
    """
    where = "calendar.next_open"
    hours = _hours(market, session, where, group)
    moment = _moment(ts, where)
    labels = _labels(market, session)
    # the session containing or following ts opens no earlier than the day before ts's date
    i = int(np.searchsorted(labels, np.datetime64(moment.date(), "D") - 1))
    for label in labels[i:]:
        opens = _bounds(label, hours)[0]
        if opens > moment:
            _say_provisional(moment.date(), pd.Timestamp(label).date(), where)
            return opens
    raise InvalidParams(where, "ts", f"{moment} has no next open in the coverage", _coverage())


def previous_close(
    ts: DateLike | dt.datetime,
    market: Market = "stock",
    session: SessionName = "regular",
    *,
    group: Group | None = None,
) -> pd.Timestamp:
    """The last close of the session strictly before ``ts`` (a naive ``ts`` is Taipei time);
    ``group``: as :func:`sessions`'.

    Raises :class:`InvalidParams` if that close is before the calendar's coverage.
    """
    where = "calendar.previous_close"
    hours = _hours(market, session, where, group)
    moment = _moment(ts, where)
    labels = _labels(market, session)
    i = int(np.searchsorted(labels, np.datetime64(moment.date(), "D") + 2, side="right"))
    for label in labels[:i][::-1]:
        closes = _bounds(label, hours)[1]
        if closes < moment:
            _say_provisional(pd.Timestamp(label).date(), moment.date(), where)
            return closes
    raise InvalidParams(where, "ts", f"{moment} has no previous close in the coverage", _coverage())


def expiry(year: int, month: int, group: Group = "index") -> pd.Timestamp:
    """When the ``month`` contract of ``group``'s products stops trading: the close of its
    last trading day, the third Wednesday of the month (the next trading day when that is
    closed), at 13:30 instead of 13:45, tz-aware Asia/Taipei. That evening's night session
    belongs to the next trading day, without the expired month: the contract's last night
    session is the one of the evening before.

    Only the groups whose expiry is modelled (the domestic index products); weekly options
    are not modelled either.
    """
    where = "calendar.expiry"
    g = _group(group, where)
    modelled = [name for name, x in GROUPS.items() if x.last_day_close is not None]
    if g.last_day_close is None:
        raise InvalidParams(
            where,
            "group",
            f"is {group!r}: the last trading day of its products is not modelled",
            ", ".join(map(repr, modelled)),
        )
    for name, value, allowed in (("year", year, "an int"), ("month", month, "an int 1..12")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParamType(where, name, f"is {value!r}", allowed)
    if not 1 <= month <= 12:
        raise InvalidParams(where, "month", f"is {month}", "1..12")
    if not FIRST_DAY.year <= year <= LAST_DAY.year:
        raise InvalidParams(
            where, "year", f"{year} is outside the calendar's coverage", _coverage()
        )
    first = dt.date(year, month, 1)
    third = first + dt.timedelta(days=(2 - first.weekday()) % 7 + 14)
    days = _labels("futopt", "regular")
    i = int(np.searchsorted(days, np.datetime64(third, "D")))
    if i == len(days):
        raise InvalidParams(
            where, "year", f"{year}-{month:02d} ends past the coverage", _coverage()
        )
    last = pd.Timestamp(days[i]).date()
    _say_provisional(last, last, where)
    return pd.Timestamp(dt.datetime.combine(last, g.last_day_close, tzinfo=TAIPEI))


def oddlot_interval(day: DateLike) -> int:
    """The seconds between TWSE's intraday odd-lot call auctions on ``day`` (the first at
    :data:`ODDLOT_FIRST_MATCH`, 09:10): 180 from 2020-10-26, 60 from 2022-12-19, 5 from
    2024-12-02 (:data:`ODDLOT_INTERVALS`). Raises :class:`InvalidParams` before 2020-10-26,
    when there was no intraday odd-lot trading."""
    where = "calendar.oddlot_interval"
    d = _day(day, where)
    got = [x.seconds for x in ODDLOT_INTERVALS if x.since <= d]
    if not got:
        first = ODDLOT_INTERVALS[0].since.isoformat()
        raise InvalidParams(
            where, "day", f"{d.isoformat()} is before intraday odd lots", f"from {first}"
        )
    return got[-1]
