"""Past the years whose official schedule the table holds, the calendar goes on with XTAI's
rules and says so: ``is_provisional`` and a ``ProvisionalSchedule`` warning naming the year,
never a refusal of a date a user reaches next month."""

from __future__ import annotations

import datetime as dt
import warnings

import pandas as pd
import pytest

from marketframe import calendar as cal
from marketframe.exceptions import MarketframeWarning, ProvisionalSchedule


def test_2027_is_answered_provisionally() -> None:
    assert cal.OFFICIAL_LAST_DAY == dt.date(2026, 12, 31)
    with pytest.warns(ProvisionalSchedule, match="schedule of 2027 is not in") as got:
        assert cal.is_session("2027-01-05")
    assert got[0].filename == __file__  # said at the user's line
    assert cal.is_provisional("2027-01-05") and not cal.is_provisional("2026-12-31")
    with pytest.warns(ProvisionalSchedule, match="2027"):
        assert not cal.is_session("2027-01-01")  # New Year's Day, by XTAI's rules


@pytest.mark.parametrize(
    "call",
    [
        lambda: cal.sessions_in_range("2026-12-28", "2027-01-08"),
        lambda: cal.sessions("2027-01-04", "2027-01-08", "futopt", "afterhours"),
        lambda: cal.minutes("2027-01-05"),
        lambda: cal.next_open("2026-12-31T14:00"),  # the answer is 2027-01-04's open
        # 2026-12-31's close, the previous one only if 2027-01-01 is closed: provisional
        lambda: cal.previous_close("2027-01-04T08:00"),
        lambda: cal.expiry(2027, 1),
    ],
)
def test_every_function_answers_2027_with_the_marker(call: object) -> None:
    with pytest.warns(ProvisionalSchedule) as got:
        call()  # type: ignore[operator]
    assert issubclass(got[0].category, MarketframeWarning)


def test_the_official_years_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProvisionalSchedule)
        cal.sessions_in_range("2026-01-01", "2026-12-31")
        cal.next_open("2026-12-30T14:00")
        cal.previous_close("2026-12-31T14:00")
        cal.is_provisional("2030-01-02")  # the flag itself is no answer about the year


def test_next_month_is_never_refused() -> None:
    """Every day of the year after the table answers, up to the coverage's end."""
    with pytest.warns(ProvisionalSchedule):
        days = cal.sessions_in_range("2027-01-01", cal.LAST_DAY)
    assert cal.LAST_DAY >= dt.date(2035, 12, 31)
    weekdays = pd.bdate_range("2027-01-01", "2027-12-31")
    in_2027 = [d for d in days if d.year == 2027]
    assert 230 <= len(in_2027) < len(weekdays)  # lunar and national holidays, from XTAI


def test_the_package_s_own_uses_do_not_warn() -> None:
    """The HTTP cache asks the calendar for the next trading morning: no warning reaches the
    user from there (only a direct answer about a provisional year warns)."""
    from marketframe._http.cache import _next_trading_8am

    with warnings.catch_warnings():
        warnings.simplefilter("error", ProvisionalSchedule)
        nxt = _next_trading_8am(dt.datetime(2026, 12, 31, 14, tzinfo=cal.TAIPEI))
    assert nxt == dt.datetime(2027, 1, 4, 8, tzinfo=cal.TAIPEI)
