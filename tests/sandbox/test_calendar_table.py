"""The sandbox trades on the real Taiwan calendar: its generated table (``_sessions.py``) is
``marketframe.calendar``'s, and its market has no trading on a closure, night session too."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from marketframe import calendar
from marketframe.exceptions import ProvisionalSchedule
from marketframe.sandbox import _calendar as cal
from marketframe.sandbox import _sessions
from marketframe.sandbox._market import Market
from marketframe.sandbox._query import Query
from marketframe.sandbox._routes import ROUTES
from marketframe.sandbox._service import Service

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_table_is_current() -> None:
    """Regenerate with ``python -m marketframe._gen``."""
    from marketframe._gen import sessions

    current = (ROOT / sessions.SANDBOX_TABLE).read_text(encoding="utf-8")
    assert current == sessions.render_sandbox_table()


def _days(first: dt.date, last: dt.date) -> list[dt.date]:
    return [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]


def test_the_sandbox_trades_on_the_calendar_s_days() -> None:
    """Every year of the calendar, the provisional ones (XTAI's rules, after the official
    table) too: the sandbox's market spans them."""
    with pytest.warns(ProvisionalSchedule):
        every = {
            d.date() for d in calendar.sessions_in_range(calendar.FIRST_DAY, calendar.LAST_DAY)
        }
    days = _days(calendar.FIRST_DAY, calendar.LAST_DAY)
    assert [d for d in days if cal.is_trading_day(d)] == sorted(every)
    assert (_sessions.FIRST_YEAR, _sessions.LAST_YEAR, _sessions.OFFICIAL_LAST_YEAR) == (
        calendar.FIRST_DAY.year,
        calendar.LAST_DAY.year,
        calendar.OFFICIAL_LAST_DAY.year,
    )
    got = cal.trading_days(calendar.FIRST_DAY, calendar.LAST_DAY)
    assert [d.astype(object) for d in got] == sorted(every)


def test_the_night_sessions_agree() -> None:
    """The sandbox keys a night session by the evening it opens on; the calendar by the trading
    day it belongs to (the next one)."""
    first = dt.date(2017, 5, 15)  # TAIFEX's first night session
    with pytest.warns(ProvisionalSchedule):
        belongs = calendar.sessions_in_range(first, calendar.LAST_DAY, "futopt", "afterhours")
    last = belongs[-1].date()
    evenings = [d for d in _days(dt.date(2017, 5, 1), last) if cal.has_night_session(d)]
    assert evenings[0] == first
    assert [cal.next_trading_day(d) for d in evenings if d < last] == [d.date() for d in belongs]


def test_before_the_table_the_fallback_rule_holds() -> None:
    """2009, before the real calendar: weekdays minus the fixed national holidays."""
    for day in _days(dt.date(2009, 1, 1), dt.date(2009, 12, 31)):
        assert cal.is_trading_day(day) == (
            day.weekday() < 5 and (day.month, day.day) not in cal.HOLIDAYS
        )


def test_a_provisional_year_has_its_lunar_new_year() -> None:
    """2027 (not announced yet): the sandbox closes for Lunar New Year as XTAI's rules do,
    where the old weekday rule traded through it."""
    with pytest.warns(ProvisionalSchedule):
        closed = [
            d
            for d in _days(dt.date(2027, 2, 1), dt.date(2027, 2, 12))
            if d.weekday() < 5 and not calendar.is_session(d)
        ]
    assert closed and all(not cal.is_trading_day(d) for d in closed)
    assert not cal.is_trading_day(dt.date(2027, 2, 8))


def _get(svc: Service, path: str, query: dict[str, str] | None = None, **match: str) -> Any:
    route = next(r for r in ROUTES if r.path == path)
    return route.handler(svc, match, Query(query or {}))


@pytest.fixture(scope="module")
def market() -> Market:
    return Market(0)


def _service(market: Market, now: str) -> Service:
    moment = dt.datetime.fromisoformat(now)
    return Service(market, lambda: moment)


def test_no_trading_on_a_holiday(market: Market) -> None:
    """Dragon Boat, Friday 2026-06-19: history skips it, and on the day itself the intraday
    and snapshot routes still show Thursday's session."""
    svc = _service(market, "2026-06-19T11:00:00+08:00")
    candles = _get(
        svc,
        "/stock/historical/candles/{symbol}",
        {"from": "2026-06-15", "to": "2026-06-26"},
        symbol="2330",
    )
    dates = sorted(row["date"] for row in candles["data"])
    assert dates == ["2026-06-15", "2026-06-16", "2026-06-17", "2026-06-18"]
    assert _get(svc, "/stock/intraday/quote/{symbol}", symbol="2330")["date"] == "2026-06-18"
    assert _get(svc, "/stock/snapshot/quotes/{market}", market="TSE")["date"] == "2026-06-18"
    later = _service(market, "2026-06-22T14:00:00+08:00")
    candles = _get(
        later,
        "/stock/historical/candles/{symbol}",
        {"from": "2026-06-15", "to": "2026-06-26"},
        symbol="2330",
    )
    assert "2026-06-19" not in {row["date"] for row in candles["data"]}
    assert max(row["date"] for row in candles["data"]) == "2026-06-22"


def test_lunar_new_year_2026_has_no_sessions(market: Market) -> None:
    svc = _service(market, "2026-02-24T14:00:00+08:00")
    candles = _get(
        svc,
        "/stock/historical/candles/{symbol}",
        {"from": "2026-02-09", "to": "2026-02-24"},
        symbol="2330",
    )
    dates = sorted(row["date"] for row in candles["data"])
    assert dates == ["2026-02-09", "2026-02-10", "2026-02-11", "2026-02-23", "2026-02-24"]


def test_a_night_session_on_the_evening_before_a_closure(market: Market) -> None:
    """Thursday 2026-06-18, before the Dragon Boat closure: its night session is held (the
    FSC: a day session has its night session); at 20:00 that evening the after-hours routes
    show it."""
    assert cal.has_night_session(dt.date(2026, 6, 17))
    assert cal.has_night_session(dt.date(2026, 6, 18))
    assert not cal.has_night_session(dt.date(2026, 6, 19))  # the closed day
    assert not cal.has_night_session(dt.date(2017, 5, 12))  # before TAIFEX had any
    svc = _service(market, "2026-06-18T20:00:00+08:00")
    front = svc.futopt.nth_future("TXF", dt.date(2026, 6, 18), 1)
    assert front is not None
    assert svc.futopt.day(front, dt.date(2026, 6, 18), True) is not None
    quote = _get(
        svc, "/futopt/intraday/quote/{symbol}", {"session": "afterhours"}, symbol=front.symbol
    )
    assert quote["date"] == "2026-06-18"
    # on the closed day the after-hours routes still show Thursday evening's
    later = _service(market, "2026-06-19T20:00:00+08:00")
    quote = _get(
        later, "/futopt/intraday/quote/{symbol}", {"session": "afterhours"}, symbol=front.symbol
    )
    assert quote["date"] == "2026-06-18"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("stock.historical.candles", {"symbol": "2330"}),
        ("stock.historical.candles", {"symbol": "IX0001"}),
        ("stock.historical.candles", {"symbol": "6488"}),  # a TPEx stock
    ],
)
def test_over_http_history_of_2024_to_2026_trades_on_sessions_only(
    client: Any, name: str, params: dict[str, Any]
) -> None:
    """From the outside, as a user sees it: the daily history of 2024..today has a row on
    every session of the calendar and on nothing else (no typhoon day, no holiday)."""
    today = dt.date(2026, 11, 20)  # the session sandbox's clock
    got: list[dt.date] = []
    for first, last in [(dt.date(2024, 1, 1), dt.date(2024, 12, 31)),
                        (dt.date(2025, 1, 1), dt.date(2025, 12, 31)),
                        (dt.date(2026, 1, 1), today)]:  # fmt: skip
        df = client.load(name, **params, start=first, end=last, backend="arrow")
        got += [d for d in df.column("date").to_pylist()]
    want = [d.date() for d in calendar.sessions_in_range(dt.date(2024, 1, 1), today)]
    closures = {dt.date(2024, 10, 31), dt.date(2024, 7, 25), dt.date(2026, 6, 19)}
    assert not closures & set(got)
    assert sorted(got) == want


def test_over_http_futures_history_has_no_day_or_night_session_on_a_closure(client: Any) -> None:
    df = client.futopt.historical.candles(
        product="TXF", contractMonth="1!", start="2026-01-01", end="2026-11-20", backend="arrow"
    )
    days = set(df.column("date").to_pylist())
    days = {d.date() if isinstance(d, dt.datetime) else d for d in days}
    want = {
        d.date() for d in calendar.sessions_in_range(dt.date(2026, 1, 1), dt.date(2026, 11, 20))
    }
    assert days == want
    night = client.futopt.historical.candles(
        product="TXF",
        contractMonth="1!",
        session="afterhours",
        start="2026-01-01",
        end="2026-11-20",
        backend="arrow",
    )
    nights = {
        d.date() if isinstance(d, dt.datetime) else d for d in night.column("date").to_pylist()
    }
    assert nights and nights <= want


def test_over_http_no_night_session_is_missing_before_a_closure_in_2019_to_2026(
    client: Any,
) -> None:
    """From the outside: the TXF night history (keyed by the evening a session opens on) has
    the evening of every trading day of 2019..today, the evenings before a closed weekday
    (Lunar New Year, typhoons, national holidays) too; none on a closed day."""
    today = dt.date(2026, 11, 20)  # the session sandbox's clock, 14:00: tonight's not open yet
    nights: set[dt.date] = set()
    for year in range(2019, 2027):
        df = client.futopt.historical.candles(
            product="TXF",
            contractMonth="1!",
            session="afterhours",
            start=dt.date(year, 1, 1),
            end=min(dt.date(year, 12, 31), today),
            backend="arrow",
        )
        nights |= set(df.column("date").to_pylist())
    days = [d.date() for d in calendar.sessions_in_range(dt.date(2019, 1, 1), today)]
    before_closure = [
        a for a, b in zip(days, days[1:], strict=False) if (b - a).days > 1 + 2 * (a.weekday() == 4)
    ]
    assert len(before_closure) >= 70
    assert [d for d in before_closure if d not in nights] == []
    assert sorted(nights) == days[:-1]
