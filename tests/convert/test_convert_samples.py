"""The real payloads of the service (tests/data/samples, origins in SOURCES.md) convert right."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson
import pandas as pd
import pyarrow as pa
import pytest

import marketframe
from marketframe.convert import to_pandas, to_polars, to_table
from marketframe.exceptions import SchemaError

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
TAIPEI = "Asia/Taipei"

CASES = {
    "stock_intraday_quote": ("stock.intraday.quote", {}),
    "stock_intraday_quote_20260916": ("stock.intraday.quote", {}),
    "stock_intraday_ticker": ("stock.intraday.ticker", {}),
    "stock_intraday_trades": ("stock.intraday.trades", {}),
    "stock_intraday_volumes": ("stock.intraday.volumes", {}),
    "stock_intraday_candles": ("stock.intraday.candles", {}),
    "stock_historical_candles": ("stock.historical.candles", {"timeframe": "D"}),
    "stock_snapshot_quotes": ("stock.snapshot.quotes", {}),
    "futopt_intraday_candles": ("futopt.intraday.candles", {}),
}


def load(name: str) -> bytes:
    return (SAMPLES / f"{name}.json").read_bytes()


def table(name: str) -> pa.Table:
    endpoint, params = CASES[name]
    return to_table(load(name), endpoint, params)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_sample_converts_on_both_backends(name: str) -> None:
    t = table(name)
    pdf = to_pandas(t)
    pldf = to_polars(t)
    assert list(pdf.columns) == t.column_names == pldf.columns
    assert len(pdf) == len(pldf) == t.num_rows > 0


def test_quote_microseconds_give_taipei_wall_time() -> None:
    df = to_pandas(table("stock_intraday_quote"))
    row = df.iloc[0]
    assert str(df["open_time"].dtype) == "datetime64[us, Asia/Taipei]"
    assert row["open_time"] == pd.Timestamp("2026-01-30 09:00:06.599412", tz=TAIPEI)
    assert row["close_time"] == pd.Timestamp("2026-01-30 13:30:00", tz=TAIPEI)
    assert row["last_trial_time"] == pd.Timestamp("2026-01-30 13:29:57.336735", tz=TAIPEI)
    assert row["total_trade_volume"] == 40610 and row["total_trade_value"] == 72462105000
    assert row["bid_price_1"] == 1775 and row["bid_size_5"] == 638 and row["ask_price_5"] == 1800
    assert row["last_trade_price"] == 1775
    assert df.attrs["units"]["total_trade_volume"] == "lots"
    assert df.attrs["units"]["total_trade_value"] == "TWD"


def test_absent_flags_are_false() -> None:
    df = to_pandas(table("stock_intraday_quote"))
    assert df["is_close"].dtype == bool and bool(df["is_close"].iloc[0]) is True
    for flag in (
        "is_open",
        "is_trial",
        "is_limit_up_price",
        "is_continuous",
        "trading_halt_is_halted",
    ):
        assert df[flag].dtype == bool and bool(df[flag].iloc[0]) is False
    other = to_pandas(table("stock_intraday_quote_20260916")).iloc[0]
    assert other["is_continuous"] and not other["is_close"]


def test_trades_newest_first_with_missing_bid_ask_volume() -> None:
    df = to_pandas(table("stock_intraday_trades"))
    assert len(df) == 50
    first = df.iloc[0]  # the after-hours fixed-price trade: no bid, ask or volume
    assert first["serial"] == 99999999
    assert pd.isna(first["bid"]) and pd.isna(first["ask"]) and first["volume"] is pd.NA
    assert first["time"] == pd.Timestamp("2026-01-30 14:30:00", tz=TAIPEI)
    assert df["time"].is_monotonic_decreasing
    assert str(df["size"].dtype) == "Int64" and str(df["type"].dtype) == "category"
    assert df["date"].iloc[0] == pd.Timestamp("2026-01-30")  # a tz-naive datetime64[us]


def test_candles_iso_dates_keep_their_offset() -> None:
    df = to_pandas(table("stock_intraday_candles"))
    assert df["date"].iloc[0] == pd.Timestamp("2023-05-29 09:00", tz=TAIPEI)
    assert str(df["date"].dtype) == "datetime64[us, Asia/Taipei]"
    fut = to_polars(table("futopt_intraday_candles"))
    assert str(fut.schema["date"]) == "Datetime(time_unit='us', time_zone='Asia/Taipei')"
    assert fut["timeframe"][0] == "30"
    assert marketframe.units(table("futopt_intraday_candles"))["volume"] == "contracts"


def test_historical_daily_dates_are_dates_and_volume_in_shares() -> None:
    t = table("stock_historical_candles")
    assert t.schema.field("date").type == pa.date32()
    assert t.column("date").to_pylist() == [dt.date(2023, 2, 8), dt.date(2023, 2, 7)]
    assert t.column("timeframe").to_pylist() == ["D", "D"]  # filled from the request
    assert t.column("turnover").null_count == 2  # not requested: null, not zero
    assert marketframe.units(t) == {"volume": "shares", "turnover": "TWD"}


def test_snapshot_time_combines_with_the_date() -> None:
    df = to_pandas(table("stock_snapshot_quotes"))
    assert (df["time"] == pd.Timestamp("2023-05-29 13:35:00", tz=TAIPEI)).all()
    assert df["last_updated"].iloc[0] == pd.Timestamp("2023-05-29 13:30:00", tz=TAIPEI)


def test_ticker_codes_decode_to_names() -> None:
    raw = to_pandas(table("stock_intraday_ticker")).iloc[0]
    assert raw["industry"] == "24" and raw["security_type"] == "01"
    decoded = to_pandas(
        to_table(load("stock_intraday_ticker"), "stock.intraday.ticker", decode=True)
    ).iloc[0]
    assert decoded["industry"] == "semiconductors"
    assert decoded["security_type"] == "common stock"


def test_zero_padded_futopt_serial_becomes_integer() -> None:
    body = orjson.dumps(
        {
            "date": "2024-06-20",
            "type": "FUTURE_AH",
            "exchange": "TAIFEX",
            "symbol": "TXFG4",
            "data": [
                {"price": 22960, "size": 1, "time": 1718880340342000, "serial": "00379320"},
                {"price": 22961, "size": 2, "time": 1718880341342000, "serial": 379321},
            ],
        }
    )
    t = to_table(body, "futopt.intraday.trades")
    assert t.schema.field("serial").type == pa.int64()
    assert t.column("serial").to_pylist() == [379320, 379321]
    assert to_pandas(t)["time"].iloc[0] == pd.Timestamp("2024-06-20 18:45:40.342", tz=TAIPEI)


def test_null_prices_stay_null() -> None:
    body = orjson.dumps(
        {
            "data": [
                {
                    "date": "2026-12-01",
                    "symbol": "2330",
                    "name": "台積電",
                    "exchange": "TWSE",
                    "dividendType": "息",
                    "cashDividend": 5.0,
                    "previousClose": None,
                    "referencePrice": None,
                    "openingReferencePrice": None,
                }
            ]
        }
    )
    df = to_pandas(to_table(body, "stock.corporate_actions.dividends"))
    assert df["previous_close"].isna().all() and df["reference_price"].isna().all()
    assert df["cash_dividend"].iloc[0] == 5.0
    assert df["date"].iloc[0] == pd.Timestamp("2026-12-01")


def test_unknown_fields_are_kept() -> None:
    doc = orjson.loads(load("stock_intraday_quote"))
    doc["newField"] = 3
    doc["total"]["bidOrders"] = 5
    doc["total"]["newTotal"] = 1.5
    doc["mystery"] = {"aB": "x"}
    t = to_table(orjson.dumps(doc), "stock.intraday.quote")
    assert t.column("new_field").to_pylist() == [3]
    assert t.column("total_new_total").to_pylist() == [1.5]
    assert t.column("total_bid_orders").to_pylist() == [5]
    assert t.column("mystery_a_b").to_pylist() == ["x"]


def test_wrong_type_raises_schema_error_naming_endpoint_and_field() -> None:
    doc = orjson.loads(load("stock_intraday_trades"))
    doc["data"][3]["price"] = "1785"
    with pytest.raises(SchemaError) as info:
        to_table(orjson.dumps(doc), "stock.intraday.trades")
    assert info.value.endpoint == "stock.intraday.trades" and info.value.field == "price"
    assert "stock.intraday.trades" in str(info.value) and "'price'" in str(info.value)


def test_error_body_sample_is_not_a_frame() -> None:
    with pytest.raises(SchemaError, match="data"):
        to_table(load("error_rate_limit_429"), "stock.intraday.trades")
