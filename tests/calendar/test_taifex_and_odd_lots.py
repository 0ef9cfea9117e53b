"""The intraday odd-lot matching interval over time."""

from __future__ import annotations

import datetime as dt

import pytest

from marketframe import calendar as cal

SAMPLED = {
    "2020-10-26": 180,
    "2021-06-01": 180,
    "2022-12-16": 180,
    "2022-12-19": 60,
    "2024-11-29": 60,
    "2024-12-02": 5,
    "2026-11-20": 5,
}


@pytest.mark.parametrize(("day", "seconds"), SAMPLED.items())
def test_the_odd_lot_interval_follows_the_dated_rule(day: str, seconds: int) -> None:
    """TWSE: every 3 minutes from 2020-10-26, 1 minute from 2022-12-19, 5 seconds from
    2024-12-02; the first match at 09:10."""
    assert cal.oddlot_interval(day) == seconds
    assert cal.ODDLOT_FIRST_MATCH == dt.time(9, 10)


def test_the_hours_say_the_odd_lot_history() -> None:
    source = cal.HOURS[("stock", "oddlot")].source
    for fact in ("3 minutes", "2022-12-19", "5 seconds from 2024-12-02", "09:10"):
        assert fact in source
    assert [x.since for x in cal.ODDLOT_INTERVALS] == sorted(x.since for x in cal.ODDLOT_INTERVALS)
