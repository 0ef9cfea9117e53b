"""Input checks of the calendar's functions: every bad value is InvalidParams naming what
is allowed, before anything is computed."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pandas as pd

from marketframe.calendar._table import (
    _MARKETS,
    _SESSIONS,
    FIRST_DAY,
    GROUPS,
    HOURS,
    LAST_DAY,
    TAIPEI,
    DateLike,
    Hours,
    ProductGroup,
)
from marketframe.exceptions import InvalidParams, InvalidParamType, require_extra

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


def _hours(market: str, session: str, where: str, group: str | None = None) -> Hours:
    """The hours of (market, session), of the product ``group``'s when one is given (the
    futures and options only)."""
    if market not in _MARKETS:
        raise InvalidParams(where, "market", f"is {market!r}", ", ".join(map(repr, _MARKETS)))
    if session not in _SESSIONS[market]:
        raise InvalidParams(
            where,
            "session",
            f"is {session!r} for market {market!r}",
            ", ".join(map(repr, _SESSIONS[market])),
        )
    hours = HOURS[(market, session)]
    if group is None:
        return hours
    if market != "futopt":
        raise InvalidParams(
            where, "group", f"is {group!r} for market {market!r}", "None (groups are TAIFEX's)"
        )
    g = _group(group, where)
    if session == "regular":
        return replace(hours, open=g.regular_open, close=g.regular_close, source=g.source)
    return replace(hours, open=g.afterhours_open, source=g.source)


def _group(group: str, where: str) -> ProductGroup:
    if group not in GROUPS:
        raise InvalidParams(where, "group", f"is {group!r}", ", ".join(map(repr, GROUPS)))
    return GROUPS[group]


def _backend(backend: str, where: str) -> None:
    if backend not in ("pandas", "polars"):
        raise InvalidParams(where, "backend", f"is {backend!r}", "'pandas', 'polars'")
    if backend == "polars":
        require_extra("polars", where)
