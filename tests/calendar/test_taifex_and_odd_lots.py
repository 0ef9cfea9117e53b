"""TAIFEX's hours by product group and the expiring month's last day; the intraday odd-lot
matching interval over time."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from marketframe import calendar as cal

TZ = "Asia/Taipei"


@pytest.mark.parametrize(
    ("group", "night_open"),
    [
        ("index", "15:00"),
        ("equity", "17:25"),
        ("fx", "17:25"),
        ("gold", "17:25"),
        ("topix", "17:25"),
    ],
)
def test_the_night_session_opens_by_product_group(group: cal.Group, night_open: str) -> None:
    """TAIFEX's after-hours introduction: 17:25 for TOPIX futures, FX, gold and equity
    products, 15:00 for the others; 05:00 the next day for all."""
    night = cal.sessions("2026-11-20", "2026-11-20", "futopt", "afterhours", group=group)
    assert night["open"][0] == pd.Timestamp(f"2026-11-19 {night_open}", tz=TZ)
    assert night["close"][0] == pd.Timestamp("2026-11-20 05:00", tz=TZ)
    m = cal.minutes("2026-11-20", "futopt", "afterhours", group=group)
    assert m[0] == pd.Timestamp(f"2026-11-19 {night_open}", tz=TZ)
    opens = cal.next_open("2026-11-19T16:00", "futopt", "afterhours", group=group)
    assert opens == pd.Timestamp(
        "2026-11-20 15:00" if group == "index" else "2026-11-19 17:25", tz=TZ
    )


def test_the_day_session_by_product_group() -> None:
    day = {g: cal.sessions("2026-11-20", "2026-11-20", "futopt", group=g) for g in cal.GROUPS}
    assert {g: (f["open"][0].time(), f["close"][0].time()) for g, f in day.items()} == {
        "index": (dt.time(8, 45), dt.time(13, 45)),
        "equity": (dt.time(8, 45), dt.time(13, 45)),
        "fx": (dt.time(8, 45), dt.time(16, 15)),
        "gold": (dt.time(8, 45), dt.time(16, 15)),
        "topix": (dt.time(8), dt.time(16, 15)),
    }
    assert cal.sessions("2026-11-20", "2026-11-20", "futopt").equals(day["index"])
    for g in cal.GROUPS.values():
        assert g.products and len(g.source) > 40


@pytest.mark.parametrize(
    ("year", "month", "last"),
    [
        (2026, 12, "2026-12-16"),  # the third Wednesday
        (2026, 2, "2026-02-23"),  # 02-18 is in the Lunar New Year closure: the next session
        (2023, 1, "2023-01-30"),  # 01-18 had no trading: the first session after the holiday
    ],
)
def test_the_expiring_month_stops_at_1330_on_its_last_day(year: int, month: int, last: str) -> None:
    """TAIFEX's index futures: 08:45-13:30 on the last trading day for the delivery month, no
    after-hours session for it that day."""
    stops = cal.expiry(year, month)
    assert stops == pd.Timestamp(f"{last} 13:30", tz=TZ)
    # that evening's night session belongs to the next trading day, past the expiry
    night = cal.next_open(stops, "futopt", "afterhours")
    assert night.date() == stops.date() and night.time() == dt.time(15)
    belongs = cal.sessions(last, "2026-12-31", "futopt", "afterhours")
    assert belongs["session"][0].date() == pd.Timestamp(last).date()  # the evening before's
    assert belongs["open"][1] == night  # this evening's belongs to the next day


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
