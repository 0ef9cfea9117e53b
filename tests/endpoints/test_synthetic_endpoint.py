"""Adding an endpoint is one row, one schema and one sandbox handler (docs/contributing.md).

This test adds ``stock.historical.spreads`` -- a made-up endpoint: each day's high minus low --
at test time, with exactly those three pieces, and checks that everything else follows from
them: validation, the client, conversion on both backends, the store and the docs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pandas as pd
import polars as pl
import pytest

from marketframe import Client, InvalidParams, Store
from marketframe._gen.docs import render
from marketframe.endpoints import FROM, SYMBOL, TO, Endpoint
from marketframe.endpoints import _table as endpoints_table
from marketframe.sandbox import Query, Route, Sandbox, Service
from marketframe.sandbox._payloads import px
from marketframe.schemas._core import col, env, schema

NAME = "stock.historical.spreads"

# 1. the schema: where each column lives in the payload, its kind and unit
SPREADS = schema(
    [env("symbol", "str", req=True), col("date", "date", req=True), col("spread", "float")],
    rows=True,
    ignore="from to",
)

# 2. the row: path, parameters, schema object and the rules that are its own
ROW = Endpoint(
    name=NAME,
    path="/stock/historical/spreads/{symbol}",
    params=(SYMBOL, FROM, TO),
    schema=SPREADS,
    freshness="historical",
    date_range=("from_", "to"),
    keys=("symbol", "date"),
    example={"symbol": "2330", "from_": "2024-01-01", "to": "2024-06-30"},
    doc="daily high minus low (a synthetic endpoint of the tests)",
)


# 3. the sandbox handler and its route: the service's answer, from the sandbox's own market
def spreads(svc: Service, m: dict[str, str], q: Query) -> dict[str, Any]:
    inst = svc.instrument(m["symbol"])
    start, end = q.need_day("from"), q.need_day("to")
    daily = svc.market.daily(inst.symbol)
    span = daily.span(max(start, inst.first_day), min(end, svc.today()))
    rows = [
        {"date": str(d), "spread": px(int(h) - int(lo))}
        for d, h, lo in zip(daily.dates[span], daily.high[span], daily.low[span], strict=True)
    ]
    return {"symbol": inst.symbol, "from": str(start), "to": str(end), "data": rows}


ROUTE = Route("/stock/historical/spreads/{symbol}", spreads)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(now="2026-11-20T14:00:00+08:00", extra_routes=(ROUTE,)) as sandbox:
        yield sandbox


@pytest.fixture
def row(monkeypatch: pytest.MonkeyPatch) -> Endpoint:
    """The row, in ENDPOINTS for this test only (every reader of the table sees it)."""
    monkeypatch.setitem(endpoints_table._BY_NAME, NAME, ROW)
    return ROW


def _expected(sb: Sandbox, start: str, end: str) -> list[float]:
    daily = sb.market.daily("2330")
    span = daily.span(dt.date.fromisoformat(start), dt.date.fromisoformat(end))
    return [
        (int(h) - int(lo)) / 100 for h, lo in zip(daily.high[span], daily.low[span], strict=True)
    ]


def test_validation_comes_from_the_row(row: Endpoint, sb: Sandbox) -> None:
    with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
        with pytest.raises(InvalidParams, match="under one year"):
            c.load(NAME, symbol="2330", from_="2023-01-01", to="2024-06-30")
        with pytest.raises(InvalidParams, match="earliest stock"):
            c.load(NAME, symbol="2330", from_="2005-01-01", to="2005-06-30")
        with pytest.raises(InvalidParams, match="period"):
            c.load(NAME, symbol="2330", period=5)
        assert c.stats().requests == 0  # all refused before any request


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_load_and_conversion_over_a_real_socket(row: Endpoint, sb: Sandbox, backend: str) -> None:
    with Client(sb.api_key, base_url=sb.base_url, cache=False, backend=backend) as c:
        df = c.load(NAME, **row.example)
        many = c.load(NAME, **{**row.example, "symbol": ["2330", "2317"]})
    want = _expected(sb, "2024-01-01", "2024-06-30")
    assert len(want) > 100 and len(many) > len(want)
    if backend == "pandas":
        assert isinstance(df, pd.DataFrame) and list(df.columns) == ["symbol", "date", "spread"]
        assert str(df["date"].dtype) == "datetime64[us]" and df["spread"].tolist() == want
    else:
        assert isinstance(df, pl.DataFrame)
        assert df.schema["date"] == pl.Date and df["spread"].to_list() == want


def test_store_sync_and_read(row: Endpoint, sb: Sandbox, tmp_path: Any) -> None:
    with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
        store = Store(tmp_path / "store", c)
        report = store.sync(NAME, ["2330"], start="2022-03-01", end="2024-06-30")
        again = store.sync(NAME, ["2330"], start="2022-03-01", end="2024-06-30")
        got = store.read(NAME, "2330", start="2022-03-01", end="2024-06-30")
    assert report.requests >= 3  # more than two years: windows under one year each
    assert again.requests == 0  # everything is held
    assert got["spread"].tolist() == _expected(sb, "2022-03-01", "2024-06-30")
    assert got["date"].is_monotonic_increasing


def test_docs_generation(row: Endpoint) -> None:
    text = render()
    assert f"### `{NAME}`" in text and f"| `{NAME}` | `{row.path}` | basic |" in text
    assert "| `spread` | float64 | float64 | Float64 |  | `spread` |" in text
    assert "client.stock.historical.spreads(symbol='2330', from_='2024-01-01'" in text
