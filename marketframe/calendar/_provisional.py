"""The years past the official table: the flag and the warning of a provisional answer."""

from __future__ import annotations

import datetime as dt
import sys
import warnings

from marketframe.calendar._checks import _day
from marketframe.calendar._table import OFFICIAL_LAST_DAY, DateLike
from marketframe.exceptions import ProvisionalSchedule


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
