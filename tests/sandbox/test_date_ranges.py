"""Historical and technical date ranges: defaults for a missing from/to, and extreme years.

The spec leaves the server's default range open (sdk-parity: "[UNKNOWN]"); the sandbox ends a
range without ``to`` today and gives a range without ``from`` the longest allowed span (under
one year) ending at ``to``. Any year the format allows gets a JSON 400 or 200, never a 500.
"""

from __future__ import annotations

import datetime as dt

import pytest
import requests

from marketframe import Client

from .test_access_and_errors import assert_error, get

TODAY = dt.date(2026, 11, 20)  # the session fixture's frozen "now" (tests/conftest.py)


def _dates(r: requests.Response) -> list[dt.date]:
    assert r.status_code == 200, r.text
    return [dt.date.fromisoformat(row["date"]) for row in r.json()["data"]]


def test_candles_without_dates_cover_the_last_year(sandbox) -> None:
    days = _dates(get(sandbox, "stock/historical/candles/2330"))
    assert max(days) == TODAY
    assert min(days) >= dt.date(2025, 11, 21) and min(days) <= dt.date(2025, 11, 25)
    assert len(days) > 240


def test_candles_with_only_to_end_there(sandbox) -> None:
    days = _dates(get(sandbox, "stock/historical/candles/2330", to="2026-01-01"))
    assert max(days) <= dt.date(2026, 1, 1) and min(days) >= dt.date(2025, 1, 2)
    assert len(days) > 240


def test_candles_with_only_from_run_to_today(sandbox) -> None:
    days = _dates(get(sandbox, "stock/historical/candles/2330", **{"from": "2026-06-01"}))
    assert max(days) == TODAY and min(days) >= dt.date(2026, 6, 1)


def test_the_client_gets_candles_without_dates(sandbox, api_key) -> None:
    with Client(api_key, base_url=sandbox.base_url, cache=False) as client:
        frame = client.stock.historical.candles(symbol="2330")
    assert len(frame) > 240


EXTREMES = [
    {"from": "9999-01-01", "to": "9999-12-31"},
    {"from": "9999-12-30", "to": "9999-12-31"},
    {"to": "9999-12-31"},
    {"from": "9999-12-31"},
    {"to": "0001-01-01"},
    {"from": "0001-01-01"},
    {"from": "0001-01-01", "to": "0001-12-31"},
    {"from": "0001-01-01", "to": "9999-12-31"},
]


@pytest.mark.parametrize("dates", EXTREMES)
@pytest.mark.parametrize("timeframe", ["D", "W", "M"])
def test_extreme_years_on_candles_are_json_answers(sandbox, dates, timeframe) -> None:
    r = get(sandbox, "stock/historical/candles/2330", timeframe=timeframe, **dates)
    if r.status_code == 200:
        assert r.json()["data"] == []
    else:
        assert_error(r, 400)


@pytest.mark.parametrize("dates", [d for d in EXTREMES if len(d) == 2])
@pytest.mark.parametrize("path", ["stock/technical/sma/2330", "stock/technical/bb/IX0001"])
def test_extreme_years_on_technical_are_json_answers(sandbox, dates, path) -> None:
    r = get(sandbox, path, timeframe="D", period="5", **dates)
    if r.status_code == 200:
        assert r.json()["data"] == []
    else:
        assert_error(r, 400)
