"""Windows: the fewest under-one-year windows, covering a range exactly, never overlapping."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marketframe._time import one_year_after
from marketframe.endpoints import (
    earliest,
    final_until,
    merge,
    plan,
    split,
    subtract,
)

DAY = dt.timedelta(days=1)
dates = st.dates(min_value=dt.date(2008, 1, 1), max_value=dt.date(2030, 12, 31))
ranges = st.tuples(dates, dates).map(lambda t: (min(t), max(t)))


def _days(ivs: list[tuple[dt.date, dt.date]]) -> set[dt.date]:
    out: set[dt.date] = set()
    for lo, hi in ivs:
        d = lo
        while d <= hi:
            out.add(d)
            d += DAY
    return out


@settings(deadline=None)  # pure functions: no time limit (the machine is shared)
@given(ranges)
def test_split_covers_exactly_without_overlap_and_is_minimal(r: tuple[dt.date, dt.date]) -> None:
    lo, hi = r
    ws = split(lo, hi)
    assert ws[0][0] == lo and ws[-1][1] == hi
    for (_a, b), (c, _) in zip(ws, ws[1:], strict=False):
        assert c == b + DAY  # consecutive: no gap, no overlap
    for a, b in ws:
        assert a <= b < one_year_after(a)  # the service's rule: to < from + 1 year
    # fewest: each window but the last is as long as allowed, so no cover has fewer windows
    for a, b in ws[:-1]:
        assert b + DAY == one_year_after(a)
    # and a lower bound: every window holds at most 366 days
    assert len(ws) >= -(-((hi - lo).days + 1) // 366)


def test_leap_day_window() -> None:
    assert split(dt.date(2024, 2, 29), dt.date(2025, 6, 1))[0] == (
        dt.date(2024, 2, 29),
        dt.date(2025, 2, 27),
    )


@settings(deadline=None)  # pure functions: no time limit (the machine is shared)
@given(ranges, st.lists(ranges, max_size=5), st.sampled_from(["2330", "IX0001", None]))
def test_plan_fetches_exactly_the_missing_days(
    want: tuple[dt.date, dt.date], held: list[tuple[dt.date, dt.date]], symbol: str | None
) -> None:
    windows, before = plan(want, held, symbol)
    first = earliest(symbol)
    missing = _days([want]) - _days(held)
    if first is not None:
        missing = {d for d in missing if d >= first}
        assert all(a >= first for a, _ in windows)  # never before 2010 / 2015
        if before is not None:
            assert before[1] < first and before[0] == want[0]
    fetched = _days(windows)
    assert fetched == missing
    assert sum((b - a).days + 1 for a, b in windows) == len(fetched)  # no overlap
    assert all(b < one_year_after(a) for a, b in windows)


@settings(deadline=None)  # pure functions: no time limit (the machine is shared)
@given(ranges, st.integers(0, 200))
def test_split_with_warmup_lead_stays_under_one_year(r: tuple[dt.date, dt.date], lead: int) -> None:
    lo, hi = r
    ws = split(lo, hi, lead=lead)
    assert _days(ws) == _days([r])
    for a, b in ws:
        assert b < one_year_after(a - dt.timedelta(days=lead))


@settings(deadline=None)  # pure functions: no time limit (the machine is shared)
@given(st.lists(ranges, max_size=6), ranges)
def test_merge_and_subtract(
    ivs: list[tuple[dt.date, dt.date]], want: tuple[dt.date, dt.date]
) -> None:
    merged = merge(ivs)
    assert _days(merged) == _days(ivs)
    assert all(b2[0] > b1[1] + DAY for b1, b2 in zip(merged, merged[1:], strict=False))
    assert _days(subtract(want, ivs)) == _days([want]) - _days(ivs)


@pytest.mark.parametrize(
    ("tf", "today", "expected"),
    [
        ("D", dt.date(2026, 11, 20), dt.date(2026, 11, 19)),
        (None, dt.date(2026, 11, 20), dt.date(2026, 11, 19)),
        ("W", dt.date(2026, 11, 20), dt.date(2026, 11, 15)),  # Friday: this week is still open
        ("W", dt.date(2026, 11, 16), dt.date(2026, 11, 15)),
        ("W", dt.date(2026, 11, 21), dt.date(2026, 11, 20)),  # Saturday: the week is over
        ("W", dt.date(2026, 10, 9), dt.date(2026, 10, 8)),  # a holiday Friday: over on Thursday
        ("W", dt.date(2027, 6, 5), dt.date(2027, 5, 30)),  # provisional calendar: still open
        ("M", dt.date(2026, 11, 20), dt.date(2026, 10, 31)),
        ("M", dt.date(2026, 2, 27), dt.date(2026, 2, 26)),  # a holiday Friday ends February
        ("M", dt.date(2026, 11, 29), dt.date(2026, 10, 31)),  # Monday the 30th trades: open
        ("5", dt.date(2026, 11, 20), None),  # minute candles are never final
    ],
)
def test_final_until(tf: str | None, today: dt.date, expected: dt.date | None) -> None:
    assert final_until(tf, today) == expected


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["2330", "0050", "6669"]), ranges)
def test_stock_windows_start_no_earlier_than_2010(sym: str, r: tuple[dt.date, dt.date]) -> None:
    windows, _ = plan(r, [], sym)
    assert all(a >= dt.date(2010, 1, 1) for a, _ in windows)
