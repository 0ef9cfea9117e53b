"""Dated rules of the calendar beyond its sessions: when an index futures month expires, and the
intraday odd-lot matching interval of a day."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from marketframe.calendar._checks import _coverage, _day, _group
from marketframe.calendar._days import _labels
from marketframe.calendar._provisional import _say_provisional
from marketframe.calendar._table import (
    FIRST_DAY,
    GROUPS,
    LAST_DAY,
    ODDLOT_INTERVALS,
    TAIPEI,
    DateLike,
    Group,
)
from marketframe.exceptions import InvalidParams, InvalidParamType


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
