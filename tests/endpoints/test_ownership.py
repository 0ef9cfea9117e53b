"""The four stock.ownership loaders: long typed frames on both backends, nulls (never 0) for
missing numbers, monthly dates, the rows' parameters, and the conversion of payload shapes the
official SDKs allow (no recorded payload of the real service exists)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from marketframe import Client, InvalidParams
from marketframe.convert import to_pandas, to_polars, to_table
from marketframe.endpoints import ENDPOINTS
from marketframe.exceptions import SchemaError


def test_etf_holdings_one_row_per_date_and_component(client: Client) -> None:
    df = client.stock.ownership.etf_holdings("0050", start="2010-01-01", end="2010-01-31")
    assert list(df.columns) == [
        "type",
        "exchange",
        "market",
        "symbol",
        "date",
        "component_symbol",
        "component_name",
        "quantity",
        "weight",
        "quantity_change",
        "weight_change",
    ]
    assert not df.duplicated(["date", "component_symbol"]).any()
    assert df.attrs["units"] == {"quantity": "shares", "quantity_change": "shares"}
    first = df[df.date == df.date.min()]
    assert first.date.iloc[0] == pd.Timestamp("2010-01-04")
    # no previous disclosure: null, never 0
    assert first.quantity_change.isna().all() and first.weight_change.isna().all()
    later = df[df.date > df.date.min()]
    assert later.quantity_change.notna().all() and str(later.quantity_change.dtype) == "Int64"
    assert (df.groupby("date").weight.sum() - 100).abs().max() < 1e-9
    # oldest first, as every frame of a ranged endpoint
    assert df.date.is_monotonic_increasing


def test_polars_frames_have_the_same_columns_and_nulls(client: Client) -> None:
    pdf = client.stock.ownership.etf_holdings("0050", from_="2010-01-01", to="2010-01-08")
    pol = client.stock.ownership.etf_holdings(
        "0050", from_="2010-01-01", to="2010-01-08", backend="polars"
    )
    assert pol.columns == list(pdf.columns) and pol.height == len(pdf)
    assert pol.schema["date"] == pl.Date and pol.schema["quantity_change"] == pl.Int64
    assert pol["quantity_change"].null_count() == int(pdf.quantity_change.isna().sum()) > 0


def test_institutional_trades_flat_columns_consistent(client: Client) -> None:
    df = client.load(
        "stock.ownership.institutional_trades",
        symbol=["2330", "0050"],
        start="2026-01-01",
        end="2026-06-30",
        backend="polars",
    )
    whos = ("foreign", "trust", "dealer")
    for who in whos:
        assert (df[f"{who}_buy"] - df[f"{who}_sell"] == df[f"{who}_net"]).all()
        assert df.schema[f"{who}_net"] == pl.Int64
    assert (df["foreign_net"] + df["trust_net"] + df["dealer_net"] == df["total"]).all()
    assert sorted(df["symbol"].unique().to_list()) == ["0050", "2330"]


def test_director_months_are_dates_of_their_first_day(client: Client) -> None:
    df = client.stock.ownership.director_holdings(
        "2330", from_="2026-01-01", to="2026-06-30", sort="asc"
    )
    assert str(df.date.dtype) == "datetime64[us]"
    assert sorted(set(df.date)) == [pd.Timestamp(2026, m, 1) for m in range(1, 7)]
    none_held = df[df.held_shares == 0]
    assert len(none_held) and none_held.pledge_ratio.isna().all()  # null, not 0
    assert str(df.order.dtype) == "Int64" and str(df.pledge_ratio.dtype) == "float64"


def test_tdcc_brackets_as_rows(client: Client) -> None:
    df = client.stock.ownership.tdcc_distribution("2330", start="2026-10-01", end="2026-10-31")
    per_date = df.groupby("date")
    assert (per_date.size() == 15).all()
    assert (per_date.proportion.sum() - 100).abs().max() < 1e-9
    assert str(df.holders.dtype) == "Int64" and df.attrs["units"] == {"shares": "shares"}
    # the items of a date keep the service's order (brackets smallest first), dates ascend
    assert df.date.is_monotonic_increasing
    for _, brackets in per_date:
        assert brackets["range"].iloc[0] == "1-999"
        assert brackets["range"].iloc[-1] == "1,000,001以上"


def test_etf_components_keep_the_services_order_largest_first(client: Client) -> None:
    df = client.stock.ownership.etf_holdings("0056", start="2026-06-01", end="2026-06-30")
    assert df.date.is_monotonic_increasing
    for _, comps in df.groupby("date"):
        assert comps.weight.is_monotonic_decreasing


def test_sort_desc_is_honoured(client: Client) -> None:
    df = client.stock.ownership.institutional_trades(
        "2330", start="2026-03-01", end="2026-03-31", sort="desc"
    )
    assert df.date.is_monotonic_decreasing and len(df) > 15


def test_a_company_has_no_etf_holdings_an_empty_typed_frame(client: Client) -> None:
    df = client.stock.ownership.etf_holdings("2330", from_="2026-01-01", to="2026-01-31")
    assert len(df) == 0 and "component_symbol" in df.columns
    assert str(df.date.dtype) == "datetime64[us]" and str(df.quantity.dtype) == "Int64"


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"code": "2330"}, "code"),  # the filter the service dropped
        ({"from_": "2026-01"}, "from_"),  # a month: pass its first day
        ({"sort": "newest"}, "sort"),
        ({"from_": "2025-01-01", "to": "2026-01-01"}, "to"),  # a year or more
    ],
)
def test_bad_parameters_fail_before_any_request(
    client: Client, sandbox: Any, params: dict[str, Any], name: str
) -> None:
    served = sandbox.requests_served
    with pytest.raises(InvalidParams) as info:
        client.stock.ownership.etf_holdings("0050", **params)
    assert info.value.param == name
    assert sandbox.requests_served == served


# --- payload shapes the SDKs allow, converted without a server --------------------------------

ETF = "stock.ownership.etf_holdings"


def _table(body: dict[str, Any], endpoint: str, **params: Any) -> pa.Table:
    return to_table(orjson.dumps(body), endpoint, params)


def test_missing_and_null_numbers_are_nulls_on_both_backends() -> None:
    body = {
        "symbol": "2330",
        "data": [
            {
                "date": "2026-01-05",
                "foreign": None,
                "trust": {"buy": 10, "sell": None, "net": None},
                "dealer": {"buy": 1, "sell": 2, "net": -1},
                "total": None,
            },
        ],
    }
    t = _table(body, "stock.ownership.institutional_trades", symbol="2330")
    row = t.to_pylist()[0]
    assert row["foreign_buy"] is None and row["trust_sell"] is None and row["total"] is None
    assert row["trust_buy"] == 10 and row["dealer_net"] == -1
    assert row["type"] is None and row["symbol"] == "2330"
    assert pd.isna(to_pandas(t).total.iloc[0]) and to_polars(t)["total"].null_count() == 1


def test_envelope_only_fields_missing_take_the_requested_symbol() -> None:
    body = {
        "data": [
            {
                "date": "2026-01",
                "directors": [
                    {"title": "董事長", "name": "甲", "heldShares": 0, "pledgeRatio": None}
                ],
            }
        ]
    }
    t = _table(body, "stock.ownership.director_holdings", symbol="2330")
    row = t.to_pylist()[0]
    assert row["symbol"] == "2330" and row["date"] == dt.date(2026, 1, 1)
    assert row["order"] is None and row["pledge_ratio"] is None and row["held_shares"] == 0


def test_items_of_a_date_become_rows_and_unknown_item_fields_are_kept() -> None:
    body = {
        "symbol": "0050",
        "data": [
            {
                "date": "2026-01-05",
                "components": [
                    {
                        "symbol": "2330",
                        "name": "台積電",
                        "quantity": 1000,
                        "weight": 60.5,
                        "sector": "24",
                    },
                    {"symbol": "2317", "name": "鴻海", "quantity": 2000, "weight": 39.5},
                ],
            },
            {"date": "2026-01-06", "components": []},  # nothing held that day: no row
            {
                "date": "2026-01-07",
                "components": [
                    {
                        "symbol": "2330",
                        "name": "台積電",
                        "quantity": 1500,
                        "weight": 100.0,
                        "quantityChange": 500,
                        "weightChange": 39.5,
                    }
                ],
            },
        ],
    }
    t = _table(body, ETF, symbol="0050")
    assert t.num_rows == 3
    assert t.column("component_symbol").to_pylist() == ["2330", "2317", "2330"]
    assert t.column("quantity_change").to_pylist() == [None, None, 500]
    assert t.column("components_sector").to_pylist() == ["24", None, None]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([{"date": "2026-01-05", "components": {"symbol": "2330"}}], "data[0].components"),
        ([{"date": "2026-01-05", "components": [1, 2]}], "data[0].components"),
        ([{"date": "2026-01-05", "components": [{"name": "x"}]}], "components.symbol"),
        (
            [
                {
                    "date": "2026-01-05",
                    "components": [{"symbol": "2330", "name": "x", "quantity": "many"}],
                }
            ],
            "components.quantity",
        ),
    ],
)
def test_malformed_items_raise_schema_error_naming_the_field(data: Any, field: str) -> None:
    with pytest.raises(SchemaError) as info:
        _table({"symbol": "0050", "data": data}, ETF)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("text", "day"), [("2026-02", dt.date(2026, 2, 1)), ("2026-02-01", dt.date(2026, 2, 1))]
)
def test_month_dates(text: str, day: dt.date) -> None:
    body = {
        "symbol": "2330",
        "data": [{"date": text, "directors": [{"title": "董事", "name": "乙"}]}],
    }
    t = _table(body, "stock.ownership.director_holdings")
    assert t.column("date").to_pylist() == [day]


@pytest.mark.parametrize("text", ["2026-13", "2026/02", "202602"])
def test_bad_months_raise_schema_error(text: str) -> None:
    body = {
        "symbol": "2330",
        "data": [{"date": text, "directors": [{"title": "董事", "name": "乙"}]}],
    }
    with pytest.raises(SchemaError) as info:
        _table(body, "stock.ownership.director_holdings")
    assert info.value.field == "date"


@pytest.mark.parametrize(
    "name", ["etf_holdings", "institutional_trades", "director_holdings", "tdcc_distribution"]
)
@pytest.mark.parametrize(
    "body", [{"symbol": "0050"}, {"symbol": "0050", "data": None}, {"symbol": "0050", "data": []}]
)
def test_a_bare_envelope_is_an_empty_typed_frame(name: str, body: dict[str, Any]) -> None:
    """The SDKs accept an answer without ``data`` (sdk-parity 1.0): no rows, not an error."""
    endpoint = f"stock.ownership.{name}"
    t = _table(body, endpoint)
    assert t.num_rows == 0
    assert t.schema.names == ENDPOINTS[endpoint].schema.names
    assert len(to_pandas(t)) == 0 and to_polars(t).height == 0


def test_other_endpoints_still_require_data() -> None:
    with pytest.raises(SchemaError) as info:
        _table({"symbol": "2330"}, "stock.historical.candles", timeframe="D")
    assert info.value.field == "data"
