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

``python -m marketframe._gen`` regenerates the sandbox's copy of the
session table (``marketframe/sandbox/_sessions.py``): the sandbox imports nothing from the
rest of the package, so it keeps data generated from this module instead.
"""

from __future__ import annotations

import datetime as dt
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
    _hours,
    _moment,
)
from marketframe.calendar._table import (
    CORRECTIONS,
    FIRST_DAY,
    HOURS,
    LAST_DAY,
    TAIPEI,
    Backend,
    Correction,
    DateLike,
    Hours,
    Market,
    SessionName,
)
from marketframe.exceptions import InvalidParams

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
    return pd.DatetimeIndex(_base().astype("datetime64[us]"), name="session")


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
        import polars as pl  # an optional extra: loaded when asked for

        return pl.Series("session", labels, dtype=pl.Date)
    return pd.DatetimeIndex(labels.astype("datetime64[us]"), name="session")


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
            "session": pd.DatetimeIndex(labels.astype("datetime64[us]")),
            "open": pd.DatetimeIndex([b[0] for b in bounds], dtype="datetime64[us, Asia/Taipei]"),
            "close": pd.DatetimeIndex([b[1] for b in bounds], dtype="datetime64[us, Asia/Taipei]"),
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
    index = pd.date_range(opens, closes, freq="min", inclusive="left", name="minute", unit="us")
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        return pl.Series("minute", index).cast(pl.Datetime("us", TZ_NAME))
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
