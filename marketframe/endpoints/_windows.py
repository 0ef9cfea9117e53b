"""Date arithmetic of the store and ``download``: intervals, under-one-year windows, earliest
dates, finality.

Everything here is pure and works on closed ``datetime.date`` intervals ``(lo, hi)``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from marketframe._time import one_year_after
from marketframe.endpoints._model import EARLIEST, MINUTE_TIMEFRAMES
from marketframe.endpoints._table import ENDPOINTS
from marketframe.exceptions import InvalidParams

Interval = tuple[dt.date, dt.date]
_DAY = dt.timedelta(days=1)


def earliest(symbol: str | None) -> dt.date | None:
    """First date the service holds for ``symbol`` (indices start with ``IX``); None: no rule."""
    if symbol is None:
        return None
    return EARLIEST["index" if symbol.startswith("IX") else "stock"]


def window_end(lo: dt.date) -> dt.date:
    """The last day of the longest window starting at ``lo`` that is under one year."""
    return one_year_after(lo) - _DAY


def split(lo: dt.date, hi: dt.date, lead: int = 0, floor: dt.date | None = None) -> list[Interval]:
    """``[lo, hi]`` as the fewest consecutive windows each under one year.

    Greedy is optimal: every window but the last is as long as the service allows, so no
    cover by fewer windows can reach as far. ``lead`` days are requested before each window
    (warm-up bars of technical indicators; never before ``floor``) and count towards the
    one-year limit: see :func:`fetch_start`.
    """
    if lead < 0 or lead > MAX_LEAD:
        raise InvalidParams("windows", "lead", f"is {lead} days", f"0..{MAX_LEAD} days")
    out: list[Interval] = []
    start = lo
    while start <= hi:
        end = min(hi, window_end(fetch_start(start, lead, floor)))
        out.append((start, end))
        start = end + _DAY
    return out


MAX_LEAD = 200  # days; leaves every window at least ~5 months long


def fetch_start(lo: dt.date, lead: int, floor: dt.date | None) -> dt.date:
    """First day to request for a window starting at ``lo`` with ``lead`` warm-up days."""
    start = lo - dt.timedelta(days=lead)
    return max(start, floor) if floor is not None and lo >= floor else start


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted union of intervals; touching intervals (hi + 1 day == lo) are joined."""
    out: list[Interval] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + _DAY:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def subtract(want: Interval, held: Sequence[Interval]) -> list[Interval]:
    """The parts of ``want`` not covered by ``held``."""
    lo, hi = want
    out: list[Interval] = []
    cur = lo
    for h_lo, h_hi in merge(held):
        if h_hi < cur:
            continue
        if h_lo > hi:
            break
        if h_lo > cur:
            out.append((cur, h_lo - _DAY))
        cur = max(cur, h_hi + _DAY)
        if cur > hi:
            break
    if cur <= hi:
        out.append((cur, hi))
    return out


def intersect(a: Interval, b: Interval) -> Interval | None:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


def plan(
    want: Interval, held: Sequence[Interval], symbol: str | None, lead: int = 0
) -> tuple[list[Interval], Interval | None]:
    """Windows to fetch for ``want`` given final-covered ``held`` intervals.

    Returns ``(windows, before)``: the missing part clamped to the symbol's earliest date,
    split into the fewest under-one-year windows, and the part before the earliest date (known
    empty by the service's rules, so it costs no request) or None.
    """
    lo, hi = want
    first = earliest(symbol)
    before: Interval | None = None
    if first is not None and lo < first:
        before = (lo, min(hi, first - _DAY))
        lo = first
    windows: list[Interval] = []
    if lo <= hi:
        for gap in subtract((lo, hi), held):
            windows.extend(split(*gap, lead=lead, floor=first))
    return windows, before


def final_until(
    timeframe: str | None, today: dt.date, endpoint: str | None = None
) -> dt.date | None:
    """The last date whose rows can no longer change, given the service's ``today``.

    Daily rows (and date-keyed endpoints with no timeframe) are final before today. Weekly and
    monthly candles are labelled by the first trading day of their period and aggregate the
    whole period, so a label is final only when its period's sessions are over: labels before
    the start of today's week (Monday) or month, and the current period's too when
    :mod:`marketframe.calendar` has no session from today to the period's end (a Saturday, or
    the holidays closing a month). Minute rows are never final (None). Rows of
    an endpoint whose row has ``refresh_days`` (they keep changing after their date) are final
    only that long after their date: refetched by every sync until then.
    """
    row = ENDPOINTS.get(endpoint) if endpoint is not None else None
    refresh = row.refresh_days if row is not None else None
    if refresh is not None:
        return today - dt.timedelta(days=refresh)
    if timeframe in MINUTE_TIMEFRAMES and (row is None or row.minute_range != "checked"):
        return None  # the latest 30 days: rows that age out, never final
    if timeframe == "W":
        start = today - dt.timedelta(days=today.weekday())
        return today - _DAY if _over(today, start + 6 * _DAY) else start - _DAY
    if timeframe == "M":
        start = today.replace(day=1)
        end = (start + 31 * _DAY).replace(day=1) - _DAY
        return today - _DAY if _over(today, end) else start - _DAY
    return today - _DAY


def _over(today: dt.date, end: dt.date) -> bool:
    """No stock session from ``today`` to ``end`` (False outside the calendar's coverage, and
    where its answer is provisional: the period may still trade, and a row held as final is
    never fetched again)."""
    # the calendar (exchange_calendars) loads on first use: import marketframe stays light
    from marketframe import calendar

    try:
        if calendar.is_provisional(end):
            return False
        return len(calendar.sessions_in_range(today, end)) == 0
    except InvalidParams:
        return False
