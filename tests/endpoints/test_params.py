"""Invalid parameters raise InvalidParams naming the allowed values, before any request."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marketframe import Client, ConfigurationError, InvalidParams
from marketframe._time import one_year_after

KDJ = {"symbol": "2330", "timeframe": "D", "rPeriod": 9, "kPeriod": 3, "dPeriod": 3}


CASES = [
    # (endpoint, params, text that must be in the message)
    (
        "stock.historical.candles",
        {"symbol": "0050", "timeframe": "2H"},
        "allowed: 1, 3, 5, 10, 15, 30, 60, D, W, M",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": "2024-13-01", "to": "2024-12-31"},
        "'YYYY-MM-DD' string, datetime.date, datetime.datetime or numpy.datetime64",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": "20240101", "to": "2024-12-31"},
        "is not a date",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": 20240101, "to": "2024-12-31"},
        "is not a date",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": "2024-01-01", "to": "2025-01-01"},
        "to <= 2024-12-31",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": "2024-02-29", "to": "2025-02-28"},
        "to <= 2025-02-27",
    ),
    ("stock.technical.kdj", {**KDJ, "from_": "2024-06-01", "to": "2024-05-01"}, "from <= to"),
    (
        "stock.historical.candles",
        {"symbol": "0050", "timeframe": "5", "from_": "2024-01-01"},
        "omit from_/to",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "timeframe": "5", "fields": "open,turnover"},
        "open, high, low, close, volume",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "fields": ["open", "vwap"]},
        "open, high, low, close, volume, turnover, change",
    ),
    (
        "stock.historical.candles",
        {"symbol": "2330", "from_": "2009-06-01", "to": "2009-12-31"},
        "dates from 2010-01-01",
    ),
    (
        "stock.historical.candles",
        {"symbol": "IX0001", "from_": "2014-06-01", "to": "2014-12-31"},
        "dates from 2015-01-01",
    ),
    ("stock.intraday.quote", {"symbol": "2330", "type": "ODD"}, "allowed: oddlot"),
    ("stock.intraday.quote", {"symbol": "2330", "colour": "red"}, "allowed: symbol, type"),
    (
        "stock.technical.kdj",
        {"symbol": "2330", "from_": "2024-01-01", "to": "2024-02-01", "timeframe": "D"},
        "'rPeriod' is required",
    ),
    ("stock.snapshot.quotes", {"market": "NYSE"}, "allowed: TSE, OTC, ESB, TIB, PSB"),
    (
        "stock.snapshot.movers",
        {"market": "TSE", "direction": "sideways", "change": "percent"},
        "allowed: up, down",
    ),
    ("futopt.intraday.products", {"type": "BOND"}, "allowed: FUTURE, OPTION"),
    ("stock.intraday.trades", {"symbol": "2330", "limit": -1}, "must be an int >= 1"),
    ("stock.intraday.tickers", {"type": "EQUITY", "isNormal": "yes"}, "True, False"),
    ("stock.intraday.quote", {"symbol": ["2330", ""]}, "non-empty string"),
    ("stock.intraday.quote", {"symbol": []}, "non-empty list"),
    ("stock.intraday.quot", {"symbol": "2330"}, "stock.intraday.quote"),
    # 17.15: each of these used to raise a bare TypeError/ValueError, or went out and was
    # refused by the service, or rewrote the path
    ("stock.historical.candles", {"symbol": "0050", "fields": 5}, "comma string or a list"),
    ("stock.historical.candles", {"symbol": "0050", "fields": True}, "comma string or a list"),
    ("stock.historical.candles", {"symbol": "0050", "fields": object()}, "comma string or a list"),
    ("stock.historical.candles", {"symbol": "0050", "fields": ["open", 1]}, "list of strings"),
    ("stock.historical.candles", {"symbol": "0050", "fields": "open,,close"}, "empty field name"),
    ("stock.historical.candles", {"symbol": "0050", "fields": []}, "empty field name"),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": "9999-06-01", "to": "9999-12-31"},
        "dates from 1900-01-01 to 2999-12-31",
    ),
    (
        "stock.historical.candles",
        {"symbol": "0050", "from_": dt.date(9999, 12, 31)},
        "is out of range",
    ),
    ("stock.intraday.ticker", {"symbol": "."}, "not a valid symbol"),
    ("stock.intraday.ticker", {"symbol": ".."}, "not a valid symbol"),
    ("stock.intraday.quote", {"symbol": "../tickers"}, "not a valid symbol"),
    ("stock.intraday.quote", {"symbol": "2330 "}, "not a valid symbol"),
    ("stock.intraday.quote", {"symbol": 2330}, "'0050', not 50"),
    ("stock.intraday.trades", {"symbol": "2330", "limit": 0}, "must be an int >= 1"),
    ("stock.intraday.trades", {"symbol": "2330", "offset": 2**40}, "ints from 0 to"),
    ("futopt.intraday.trades", {"symbol": "TXFA4", "limit": 0}, "must be an int >= 1"),
    (
        "stock.technical.sma",
        {
            "symbol": "2330",
            "from_": "2024-01-01",
            "to": "2024-02-01",
            "timeframe": "D",
            "period": 0,
        },
        "must be an int >= 1",
    ),
    (
        "stock.technical.kdj",
        {**KDJ, "from_": "2024-01-01", "to": "2024-02-01", "dPeriod": 1.5},
        "must be an int >= 1",
    ),
    (
        "stock.snapshot.movers",
        {"market": "TSE", "direction": "up", "change": "percent", "gt": float("nan")},
        "not NaN or inf",
    ),
    (
        "stock.snapshot.movers",
        {"market": "TSE", "direction": "up", "change": "percent", "lte": float("-inf")},
        "not NaN or inf",
    ),
    (
        "stock.snapshot.movers",
        {"market": "TSE", "direction": "up", "change": "percent", "eq": 10**400},
        "must be a finite number",
    ),  # found by the sweep
    ("stock.historical.candles", {"symbol": "0050", "timeframe": True}, "allowed: 1, 3"),
    ("stock.historical.candles", {"symbol": "0050", "timeframe": 5.0}, "allowed: 1, 3"),
]


@pytest.mark.parametrize(("name", "params", "text"), CASES)
def test_invalid_params_raise_before_any_request(
    client: Client, sandbox: Any, name: str, params: dict[str, Any], text: str
) -> None:
    before, sent = sandbox.requests_served, client.stats().requests
    with pytest.raises(InvalidParams) as info:
        client.load(name, **params)
    assert text in str(info.value)
    assert isinstance(info.value, ValueError)
    assert sandbox.requests_served == before  # not a single request went out
    assert client.stats().requests == sent


def test_one_year_rule() -> None:
    assert one_year_after(dt.date(2024, 2, 29)) == dt.date(2025, 2, 28)
    assert one_year_after(dt.date(2024, 3, 1)) == dt.date(2025, 3, 1)


def test_dates_accept_str_date_and_datetime(client: Client) -> None:
    base = {"symbol": "0050", "timeframe": "D"}
    a = client.stock.historical.candles(**base, from_="2024-01-02", to="2024-03-29")
    b = client.stock.historical.candles(**base, from_=dt.date(2024, 1, 2), to=dt.date(2024, 3, 29))
    c = client.stock.historical.candles(
        **base, from_=dt.datetime(2024, 1, 2, 9, 30), to=dt.datetime(2024, 3, 29, 13, 30)
    )
    assert a.equals(b) and a.equals(c) and len(a) > 0
    # just under a year is allowed
    assert len(client.stock.historical.candles(**base, from_="2024-01-01", to="2024-12-31")) > 200


def test_a_tz_aware_datetime_is_a_day_in_taipei(client: Client) -> None:
    """20:00 UTC on 6 January is already 7 January in Taipei: the request says 2025-01-07."""
    late = dt.datetime(2025, 1, 6, 20, 0, tzinfo=dt.UTC)
    fetched = client.fetch(
        "stock.historical.candles",
        symbol="0050",
        timeframe="D",
        from_=late,
        to=dt.datetime(2025, 1, 10, 1, 0, tzinfo=dt.UTC),
    )
    assert "from=2025-01-07" in fetched.responses[0].url
    assert "to=2025-01-10" in fetched.responses[0].url
    days = fetched.table.column("date").to_pylist()
    assert min(days) == dt.date(2025, 1, 7)
    # a naive datetime is taken as Taipei time, as before
    naive = client.fetch(
        "stock.historical.candles",
        symbol="0050",
        timeframe="D",
        from_=dt.datetime(2025, 1, 6, 23, 59),
        to="2025-01-10",
    )
    assert "from=2025-01-06" in naive.responses[0].url


def test_the_last_year_of_the_span_needs_no_overflowing_date_arithmetic() -> None:
    assert one_year_after(dt.date(9999, 1, 1)) == dt.date.max


def test_technical_minute_timeframe_ignores_the_range(client: Client) -> None:
    df = client.stock.technical.sma(
        symbol="2330", from_="2024-01-01", to="2026-11-20", timeframe="5", period=5
    )
    assert len(df) > 0


def test_missing_key_says_how_to_set_it(monkeypatch: pytest.MonkeyPatch, sandbox: Any) -> None:
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="MARKETFRAME_API_KEY"):
        Client(base_url=sandbox.base_url)
    monkeypatch.setenv("MARKETFRAME_API_KEY", sandbox.keys["basic"])
    with Client(base_url=sandbox.base_url, cache=False) as c:
        assert c.stock.intraday.quote(symbol="2330")["symbol"][0] == "2330"


def test_bad_backend() -> None:
    with pytest.raises(InvalidParams, match="pandas, polars, arrow"):
        Client("k", backend="spark", cache=False)


def test_tree_has_signatures_and_docs(client: Client) -> None:
    import inspect

    kdj = client.stock.technical.kdj
    sig = inspect.signature(kdj)
    assert list(sig.parameters)[:7] == [
        "symbol",
        "from_",
        "to",
        "timeframe",
        "rPeriod",
        "kPeriod",
        "dPeriod",
    ]
    assert "timeframe" in (kdj.__doc__ or "") and "k, d, j" in (kdj.__doc__ or "")
    assert "corporate_actions" in dir(client.stock)


def test_fields_accept_a_list_or_a_comma_string_and_narrow_the_columns(sandbox) -> None:
    from marketframe import Client

    client = Client(sandbox.api_key, base_url=sandbox.base_url, cache=False)
    for fields in (["open", "close", "turnover"], "open,close,turnover"):
        df = client.stock.historical.candles(
            symbol="2330", from_="2026-03-02", to="2026-03-06", fields=fields
        )
        assert {"open", "close", "turnover"} <= set(df.columns)
        assert df["high"].isna().all() if "high" in df.columns else True
        assert df["turnover"].notna().all() and len(df) == 5
    with pytest.raises(InvalidParams, match="turnover, change"):
        client.stock.historical.candles(symbol="2330", fields=["open", "vwap"])


@pytest.mark.parametrize(
    "fields",
    [
        "open,close",
        " open , close ",
        ["open", "close"],
        ("open", "close"),
        ["open,close"],
        ["open, close", "open"],
    ],
)
def test_every_spelling_of_fields_sends_the_same_request(client: Client, fields: Any) -> None:
    """A comma string (as the CLI passes ``--fields open,close``) or a list, spaces and
    repeats tolerated: the service is asked for exactly ``fields=open,close``."""
    fetched = client.fetch(
        "stock.historical.candles",
        symbol="2330",
        from_="2026-03-02",
        to="2026-03-06",
        fields=fields,
    )
    assert "fields=open,close&" in fetched.responses[0].url + "&"


def test_a_huge_int_is_refused_not_crashed_on(client: Client) -> None:
    huge = 10**5000  # str() of it raises ValueError (int max str digits)
    for name, params in (
        ("stock.historical.candles", {"symbol": "0050", "timeframe": huge}),
        ("stock.intraday.trades", {"symbol": "2330", "limit": huge}),
    ):
        with pytest.raises(InvalidParams, match="a int|an int"):
            client.load(name, **params)


def test_the_symbol_may_be_given_by_position(client: Client, sandbox: Any) -> None:
    import inspect

    by_name = client.stock.intraday.quote(symbol="2330")
    assert client.stock.intraday.quote("2330").equals(by_name)
    sig = inspect.signature(client.stock.intraday.quote)
    assert sig.parameters["symbol"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    served = sandbox.requests_served
    with pytest.raises(InvalidParams, match="given twice"):
        client.stock.intraday.quote("2330", symbol="2317")
    with pytest.raises(InvalidParams, match="one positional value"):
        client.stock.intraday.quote("2330", "2317")
    assert sandbox.requests_served == served
    assert len(client.stock.snapshot.quotes("TSE")) > 0  # the first required one: market


def test_mistyped_names_get_a_suggestion(client: Client) -> None:
    with pytest.raises(AttributeError, match="did you mean 'quote'"):
        client.stock.intraday.qoute  # noqa: B018
    with pytest.raises(AttributeError, match="did you mean 'historical'"):
        client.stock.histrical  # noqa: B018
    with pytest.raises(InvalidParams, match="did you mean 'symbol'"):
        client.stock.intraday.quote(symbl="2330")
    with pytest.raises(InvalidParams, match="did you mean 'stock.intraday.quote'"):
        client.load("stock.intraday.qoute", symbol="2330")


@pytest.mark.parametrize("missing", [pd.NaT, float("nan"), np.datetime64("NaT")])
@pytest.mark.parametrize("where", ["from_", "to"])
def test_a_missing_date_is_invalid_params_not_a_type_error(
    client: Client, missing: Any, where: str
) -> None:
    # pandas' NaT is a datetime (it passed the isinstance check and failed the first compare)
    args = {"from_": "2024-01-01", "to": "2024-01-31", where: missing}
    with pytest.raises(InvalidParams, match=f"'{where}' is not a date"):
        client.stock.historical.candles("2330", **args)


@pytest.mark.parametrize("missing", [pd.NaT, float("nan")])
@pytest.mark.parametrize("where", ["start", "end"])
def test_download_refuses_a_missing_date(client: Client, missing: Any, where: str) -> None:
    from marketframe import download

    args = {"start": "2024-01-01", "end": "2024-01-31", where: missing}
    with pytest.raises(InvalidParams, match=f"'{where}' is not a date"):
        download("2330", client=client, **args)
