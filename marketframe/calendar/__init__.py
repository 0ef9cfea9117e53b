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
from marketframe.calendar._days import _bounds, _labels, base_sessions
from marketframe.calendar._provisional import _say_provisional, is_provisional
from marketframe.calendar._rules import expiry, oddlot_interval
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
from marketframe.exceptions import InvalidParams

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
    return pd.DatetimeIndex(labels.astype("datetime64[us]"), name="session")


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
    index = pd.date_range(opens, closes, freq="min", inclusive="left", name="minute", unit="us")
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
