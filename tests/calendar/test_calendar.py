"""marketframe.calendar: the base (XTAI) plus the corrections table, nothing else, and every
correction needed; the official 2026 schedule; session hours; the night session's day; errors."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pytest

from marketframe import calendar as cal
from marketframe.exceptions import InvalidParams, ProvisionalSchedule

FULL = (cal.FIRST_DAY, cal.LAST_DAY)
#: the years whose official schedule the table holds: no provisional answer, no warning
OFFICIAL = (cal.FIRST_DAY, cal.OFFICIAL_LAST_DAY)
_DAY = dt.timedelta(days=1)


def _base() -> set[dt.date]:
    return {d.date() for d in cal.base_sessions()}


def test_every_correction_contradicts_the_base() -> None:
    """A correction the base already agrees with is dead weight (or the base was fixed
    upstream): drop it then."""
    base = _base()
    for c in cal.CORRECTIONS:
        if c.kind == "closed":
            assert c.day in base, f"{c.day}: the base already has it closed"
        else:
            assert c.day not in base, f"{c.day}: the base already has a session"


def test_the_table_is_well_formed() -> None:
    days = [c.day for c in cal.CORRECTIONS]
    assert days == sorted(set(days)), "one row a day, oldest first"
    for c in cal.CORRECTIONS:
        assert cal.FIRST_DAY <= c.day <= cal.LAST_DAY
        assert c.what.strip() and len(c.source) > 20, c
        if c.kind == "saturday":
            assert c.day.weekday() == 5 and c.day.year <= 2018, c  # TWSE stopped in 2019
        else:
            assert c.day.weekday() < 5, c


def test_the_calendar_is_the_base_plus_the_corrections() -> None:
    closed = {c.day for c in cal.CORRECTIONS if c.kind == "closed"}
    opened = {c.day for c in cal.CORRECTIONS if c.kind != "closed"}
    expected = sorted((_base() - closed) | opened)
    with pytest.warns(ProvisionalSchedule):  # 2027-2035: XTAI's rules alone
        got = [d.date() for d in cal.sessions_in_range(*FULL)]
    assert got == expected


def test_2026_is_twse_s_announced_schedule() -> None:
    """TWSE's 2026 (ROC 115) schedule, announced 2025-10-29 (udn.com/news/story/7251/9104888):
    the weekdays without trading."""
    announced = [
        "01-01",
        "02-12",  # no trading, clearing and settlement only
        "02-13",
        "02-16",
        "02-17",
        "02-18",
        "02-19",
        "02-20",
        "02-27",  # Peace Memorial Day (Saturday 02-28) observed
        "04-03",
        "04-06",
        "05-01",
        "06-19",  # Dragon Boat
        "09-25",  # Mid-Autumn
        "09-28",  # Teachers' Day, a holiday again from 2025
        "10-09",  # National Day (Saturday 10-10) observed
        "10-26",  # Taiwan Restoration Day (Sunday 10-25) observed
        "12-25",  # Constitution Day, a holiday again from 2025
    ]
    weekdays = pd.bdate_range("2026-01-01", "2026-12-31")
    sessions = set(cal.sessions_in_range("2026-01-01", "2026-12-31"))
    closed = [d.strftime("%m-%d") for d in weekdays if d not in sessions]
    assert closed == announced


@pytest.mark.parametrize(
    "day",
    ["2024-07-24", "2024-07-25", "2024-10-02", "2024-10-03", "2024-10-31", "2023-08-03"],
)
def test_the_typhoon_closures(day: str) -> None:
    """Gaemi (07-24/25), Krathon (10-02/03) and Khanun (2023-08-03) are in the base; Kong-rey
    (10-31) is a correction."""
    assert not cal.is_session(day)
    assert not cal.is_session(day, "futopt")


def test_make_up_saturdays_trade_until_2018_only() -> None:
    assert cal.is_session("2018-12-22") and cal.is_session(dt.date(2016, 1, 30))
    assert not cal.is_session("2019-01-19")  # a make-up Saturday without trading
    saturdays = [d for d in cal.sessions_in_range(*OFFICIAL) if d.weekday() >= 5]
    assert len(saturdays) == sum(c.kind == "saturday" for c in cal.CORRECTIONS)


def test_regular_sessions_and_minutes() -> None:
    frame = cal.sessions("2026-11-20", "2026-11-20")
    assert list(frame.columns) == ["session", "open", "close"]
    assert frame["open"][0] == pd.Timestamp("2026-11-20 09:00", tz="Asia/Taipei")
    assert frame["close"][0] == pd.Timestamp("2026-11-20 13:30", tz="Asia/Taipei")
    m = cal.minutes("2026-11-20")
    assert len(m) == 270 and str(m.tz) == "Asia/Taipei"
    assert (m[0].time(), m[-1].time()) == (dt.time(9), dt.time(13, 29))
    assert len(cal.minutes("2026-11-20", "futopt")) == 300
    assert len(cal.minutes("2026-11-20", "stock", "afterhours")) == 30
    assert cal.minutes("2026-11-20", "stock", "oddlot_afterhours")[0].time() == dt.time(13, 40)


def test_odd_lot_intraday_starts_2020_10_26() -> None:
    assert not cal.is_session("2020-10-23", "stock", "oddlot")
    assert cal.is_session("2020-10-26", "stock", "oddlot")


def test_a_night_session_belongs_to_the_next_trading_day() -> None:
    """Thursday 2026-11-19 15:00 to Friday 05:00 is Friday's; Friday's evening is Monday's."""
    m = cal.minutes("2026-11-20", "futopt", "afterhours")
    assert m[0] == pd.Timestamp("2026-11-19 15:00", tz="Asia/Taipei")
    assert m[-1] == pd.Timestamp("2026-11-20 04:59", tz="Asia/Taipei")
    monday = cal.sessions("2026-11-23", "2026-11-23", "futopt", "afterhours")
    assert monday["open"][0] == pd.Timestamp("2026-11-20 15:00", tz="Asia/Taipei")


def test_a_night_session_on_the_evening_before_a_closure() -> None:
    """Dragon Boat, Friday 2026-06-19: Thursday evening's session is held and belongs to
    Monday 06-22, across the closed Friday (the FSC: a day session has its night session)."""
    labels = cal.sessions_in_range("2026-06-15", "2026-06-26", "futopt", "afterhours")
    assert [d.day for d in labels] == [15, 16, 17, 18, 22, 23, 24, 25, 26]
    monday = cal.sessions("2026-06-22", "2026-06-22", "futopt", "afterhours")
    assert str(monday["open"][0]) == "2026-06-18 15:00:00+08:00"
    assert str(monday["close"][0]) == "2026-06-19 05:00:00+08:00"
    assert not cal.is_session("2017-05-12", "futopt", "afterhours")  # before TAIFEX had any
    assert not cal.is_session("2017-05-15", "futopt", "afterhours")  # its first opened that day
    assert cal.is_session("2017-05-16", "futopt", "afterhours")


@pytest.mark.parametrize(
    ("last", "first_after"),
    [
        ("2021-02-05", "2021-02-17"),  # FSC, reprinted at lotmg.com: until 02-06 05:00
        ("2024-02-05", "2024-02-15"),  # FSC on the 2024 schedule (money.udn.com 7669420)
        ("2025-01-22", "2025-02-03"),  # a broker's 2025 table (kaoli77.com): until 01-23 05:00
        ("2026-02-11", "2026-02-23"),  # udn.com/news/story/12806/9290965: until 02-12 05:00
    ],
)
def test_the_last_day_before_lunar_new_year_has_its_night_session(
    last: str, first_after: str
) -> None:
    """The cited evenings before Lunar New Year: held until 05:00, belonging to the first
    trading day after the holiday."""
    night = cal.sessions(first_after, first_after, "futopt", "afterhours")
    opens, closes = night["open"][0], night["close"][0]
    assert str(opens.date()) == last and opens.time() == dt.time(15)
    assert closes.date() - opens.date() == dt.timedelta(days=1) and closes.time() == dt.time(5)


def test_no_night_session_is_missing_before_a_closure_in_2019_to_2026() -> None:
    """Every evening of a trading day has its night session, the 75 evenings before a closed
    weekday in 2019-2026 too (the last, 2026-12-31, belongs to 2027, a provisional year)."""
    with pytest.warns(ProvisionalSchedule):
        days = [d.date() for d in cal.sessions_in_range("2019-01-01", "2027-01-05")]
        nights = cal.sessions("2019-01-02", "2027-01-05", "futopt", "afterhours")
    evenings = [d for d in days if d.year <= 2026]
    opened = {ts.date() for ts in nights["open"]}
    before_closure = [
        a for a, b in zip(days, days[1:], strict=False) if np.busday_count(a + _DAY, b) > 0
    ]
    assert len(before_closure) == 75
    assert [d for d in evenings if d not in opened] == []
    belongs = dict(zip((ts.date() for ts in nights["open"]), nights["session"], strict=True))
    assert all(belongs[a].date() == b for a, b in zip(days, days[1:], strict=False) if a in belongs)


def test_next_open_and_previous_close() -> None:
    tz = "Asia/Taipei"
    assert cal.next_open("2026-06-18T14:00") == pd.Timestamp("2026-06-22 09:00", tz=tz)
    utc = pd.Timestamp("2026-06-22 00:59", tz="UTC")  # 08:59 in Taipei
    assert cal.next_open(utc) == pd.Timestamp("2026-06-22 09:00", tz=tz)
    assert cal.next_open(utc + pd.Timedelta(minutes=1)) == pd.Timestamp("2026-06-23 09:00", tz=tz)
    assert cal.previous_close("2026-06-22T08:00") == pd.Timestamp("2026-06-18 13:30", tz=tz)
    assert cal.previous_close("2026-06-22T13:30") == pd.Timestamp("2026-06-18 13:30", tz=tz)
    night = cal.next_open("2026-06-18T16:00", "futopt", "afterhours")
    assert night == pd.Timestamp("2026-06-22 15:00", tz=tz)
    assert cal.previous_close(dt.datetime(2026, 6, 22, 8), "futopt", "afterhours") == (
        pd.Timestamp("2026-06-19 05:00", tz=tz)  # Thursday evening's, held before the closure
    )


def test_polars_backend() -> None:
    s = cal.sessions_in_range("2026-06-15", "2026-06-23", backend="polars")
    assert isinstance(s, pl.Series) and s.dtype == pl.Date and len(s) == 6
    f = cal.sessions("2026-06-15", "2026-06-23", "futopt", "afterhours", backend="polars")
    assert f.schema["session"] == pl.Date and f.schema["open"] == pl.Datetime("us", "Asia/Taipei")
    m = cal.minutes("2026-06-15", backend="polars")
    assert m.dtype == pl.Datetime("us", "Asia/Taipei") and len(m) == 270


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: cal.is_session("2009-12-31"), "2010-01-01 .. 2035-12-31"),
        (lambda: cal.is_session("2036-01-02"), "outside the calendar's coverage"),
        (lambda: cal.is_session(None), "is None"),  # type: ignore[arg-type]
        (lambda: cal.is_session(20260101), "is 20260101"),  # type: ignore[arg-type]
        (lambda: cal.is_session(pd.NaT), "is NaT"),  # type: ignore[arg-type]
        (lambda: cal.is_session(np.datetime64("NaT")), "is NaT"),
        (lambda: cal.is_session("someday"), "is not a date"),
        (lambda: cal.sessions_in_range("2026-03-01", "2026-02-01"), "end >= start"),
        (lambda: cal.sessions("2026-01-01", "2026-02-01", "bond"), "'stock', 'futopt'"),  # type: ignore[call-overload]
        (lambda: cal.is_session("2026-01-05", "futopt", "oddlot"), "'regular', 'afterhours'"),
        (lambda: cal.minutes("2026-02-16"), "has no stock regular session"),
        (lambda: cal.minutes("2026-01-05", backend="arrow"), "'pandas', 'polars'"),  # type: ignore[call-overload]
        (lambda: cal.next_open("2035-12-31T14:00"), "no next open"),
        (lambda: cal.sessions("2026-01-05", "2026-01-09", group="fx"), "groups are TAIFEX's"),
        (lambda: cal.minutes("2026-01-05", "futopt", group="bond"), "'index', 'equity'"),  # type: ignore[call-overload]
        (lambda: cal.expiry(2026, 12, "fx"), "'fx': the last trading day"),
        (lambda: cal.expiry(2026, 13), "1..12"),
        (lambda: cal.expiry(2036, 1), "outside the calendar's coverage"),
        (lambda: cal.expiry("2026", 1), "is '2026'"),  # type: ignore[arg-type]
        (lambda: cal.oddlot_interval("2020-10-23"), "from 2020-10-26"),
        (lambda: cal.previous_close("2010-01-04T09:00"), "no previous close"),
    ],
)
def test_bad_input_raises_invalid_params(call: object, says: str) -> None:
    with pytest.raises(InvalidParams, match=None) as info:
        call()  # type: ignore[operator]
    assert says in str(info.value)


def test_exchange_calendars_loads_on_first_use() -> None:
    code = (
        "import sys, marketframe.calendar as c\n"
        "print('exchange_calendars' in sys.modules)\n"
        "c.is_session('2026-01-05')\n"
        "print('exchange_calendars' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
