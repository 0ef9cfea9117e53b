"""Taipei time: the service's clock and calendar day, in one place.

The service runs on Asia/Taipei time, UTC+8 all year (Taiwan has no daylight saving), so a
fixed offset is exact and cheaper than a tz database lookup. Date ranges of the service are
"under one year": :func:`one_year_after` and :func:`one_year_before` say where one ends.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

#: The service's time zone: Asia/Taipei, UTC+8 all year (no daylight saving).
TAIPEI = dt.timezone(dt.timedelta(hours=8))
#: Its IANA name, for tz-aware pandas / polars / Arrow columns.
TZ_NAME = "Asia/Taipei"


def taipei_now() -> dt.datetime:
    """The current time in Taipei, tz-aware."""
    return dt.datetime.now(TAIPEI)


def taipei_today() -> dt.date:
    """Today's date in Taipei (the service's calendar day)."""
    return taipei_now().date()


def session_date(envelope: Mapping[str, Any]) -> dt.date | None:
    """The ``date`` of an envelope as a date, or None when absent or not YYYY-MM-DD."""
    value = envelope.get("date")
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def one_year_after(day: dt.date) -> dt.date:
    """Same month and day next year; Feb 29 -> Feb 28 (``date.max`` past the last year)."""
    if day.year >= dt.MAXYEAR:
        return dt.date.max
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return day.replace(year=day.year + 1, day=28)


def one_year_before(day: dt.date) -> dt.date:
    """The earliest start of a range under one year that ends on ``day`` (the inverse of
    :func:`one_year_after`: ``day`` < ``one_year_after(one_year_before(day))``)."""
    if day.year <= dt.MINYEAR:
        return dt.date.min
    try:
        start = day.replace(year=day.year - 1)
    except ValueError:  # 29 February
        start = day.replace(year=day.year - 1, day=28)
    # one_year_after(start) <= day here; a day or two later it is not (2000-02-29 + 1 year
    # is 2001-02-28, so a range ending 2001-02-28 starts 2000-03-01 at the earliest)
    while one_year_after(start) <= day:
        start += dt.timedelta(days=1)
    return start


def duration(value: object) -> dt.timedelta | None:
    """A ``timedelta`` >= 0, or its text (``"7d"``, ``"36h"``, ``"0"``: days unless ``h``);
    None for anything else (the caller names what is allowed)."""
    if isinstance(value, dt.timedelta):
        return value if value >= dt.timedelta(0) else None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([dh]?)\s*", value) if isinstance(value, str) else None
    if m is None:
        return None
    n = float(m[1])
    return dt.timedelta(hours=n) if m[2] == "h" else dt.timedelta(days=n)
