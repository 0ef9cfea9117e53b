"""Futures/options stream frames -> typed tables: the documented DOC payloads convert exactly
(copies in tests/data/samples, origins in SOURCES.md), and the v1.1 fields keep their types."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import polars as pl
import pyarrow as pa

from marketframe.convert import table_units, to_pandas, to_polars
from marketframe.stream._frames import FUTOPT_STREAM_SCHEMAS, futopt_trade_rows, to_table

SAMPLES = Path(__file__).parent.parent / "data" / "samples"
TAIPEI = dt.timezone(dt.timedelta(hours=8))


def sample(name: str) -> dict[str, Any]:
    return orjson.loads((SAMPLES / name).read_bytes())


def at(us: int) -> pd.Timestamp:
    return pd.Timestamp(us, unit="us", tz="Asia/Taipei")


def test_the_documented_after_hours_trades_frame_converts_exactly() -> None:
    msg = sample("futopt-ws-trades_v1.0_afterhours_doc.json")
    rows = futopt_trade_rows(msg["data"])
    assert rows is not None
    table = to_table("trades", rows, market="futopt")
    assert table.schema.metadata[b"marketframe.endpoint"] == b"stream.futopt.trades"
    assert table.to_pylist() == [
        {
            "type": "FUTURE_AH",
            "exchange": "TAIFEX",
            "market": None,
            "symbol": "TXFG4",
            "price": 23379.0,
            "bid": 23379.0,
            "ask": 23380.0,
            "size": 1,
            "time": dt.datetime(2024, 6, 20, 18, 45, 40, 342000, TAIPEI),
            "serial": None,
            "frame_serial": 23143,
            "is_trial": False,
            "is_replaced": None,
            "total_trade_volume": 12431,
            "total_total_bid_match": 8191,
            "total_total_ask_match": 7964,
            "backfilled": False,
        }
    ]
    df = to_pandas(table)
    assert df["is_replaced"][0] is pd.NA and df["time"][0] == at(1718880340342000)
    assert str(df["time"].dtype) == "datetime64[us, Asia/Taipei]"
    assert df["time"][0].isoformat() == "2024-06-20T18:45:40.342000+08:00"
    assert {
        c: str(t)
        for c, t in df.dtypes.items()
        if c in ("price", "size", "frame_serial", "is_trial", "is_replaced", "type")
    } == {
        "type": "category",
        "price": "float64",
        "size": "Int64",
        "frame_serial": "Int64",
        "is_trial": "bool",
        "is_replaced": "boolean",
    }
    assert table_units(table)["size"] == "contracts"
    pl_df = to_polars(table)
    assert pl_df.schema["time"] == pl.Datetime("us", "Asia/Taipei")
    assert pl_df.schema["is_replaced"] == pl.Boolean and pl_df["is_replaced"][0] is None
    assert pl_df.schema["serial"] == pl.String and pl_df.schema["size"] == pl.Int64


def test_the_documented_books_frame_converts_exactly() -> None:
    data = sample("futopt-ws-books_v1.0_doc.json")["data"]
    table = to_table("books", [data], market="futopt")
    row = table.to_pylist()[0]
    for i, level in enumerate(data["bids"], 1):
        assert (row[f"bid_price_{i}"], row[f"bid_size_{i}"]) == (level["price"], level["size"])
    for i, level in enumerate(data["asks"], 1):
        assert (row[f"ask_price_{i}"], row[f"ask_size_{i}"]) == (level["price"], level["size"])
    assert row["time"] == dt.datetime(2024, 6, 21, 11, 59, 36, 775000, TAIPEI)
    assert row["derived_bid_price"] is None and row["serial"] is None
    assert row["is_trial"] is False and row["symbol"] == "TXFG4"
    assert table.schema.field("bid_price_1").type == pa.float64()
    assert table.schema.field("bid_size_1").type == pa.int64()
    assert table_units(table)["bid_size_1"] == "contracts"
    assert to_polars(table).schema["time"] == pl.Datetime("us", "Asia/Taipei")


def test_the_documented_candles_frame_converts_exactly() -> None:
    data = sample("futopt-ws-candles_v1.0_doc.json")["data"]
    table = to_table("candles", [data], market="futopt")
    assert table.to_pylist() == [
        {
            "type": "FUTURE",
            "exchange": "TAIFEX",
            "symbol": "TXFG4",
            "market": None,
            "date": dt.datetime(2024, 6, 21, 11, 59, tzinfo=TAIPEI),
            "open": 23194.0,
            "high": 23195.0,
            "low": 23187.0,
            "close": 23187.0,
            "volume": 215,
            "average": 23176.58,
        }
    ]
    assert table_units(table)["volume"] == "contracts"
    df = to_pandas(table)
    assert str(df["date"].dtype) == "datetime64[us, Asia/Taipei]"
    assert str(df["volume"].dtype) == "Int64"


def test_v11_trades_keep_the_serial_string_and_spread_the_frame_over_its_trades() -> None:
    frame = {
        "symbol": "TXFL6",
        "type": "FUTURE",
        "exchange": "TAIFEX",
        "isTrial": True,
        "trades": [
            {
                "price": 22500,
                "size": 3,
                "bid": 22499,
                "ask": 22500,
                "time": 1795134611000000,
                "serial": "00000107",
                "isReplaced": False,
            },
            {
                "price": 22501,
                "size": 2,
                "time": 1795134612000000,
                "serial": "00000108",
                "isReplaced": True,
            },
        ],
        "total": {"tradeVolume": 5},
        "time": 1795134612500000,
        "serial": 108,
        "someNewField": "kept",
    }
    rows = futopt_trade_rows(frame)
    assert rows is not None
    df = to_pandas(to_table("trades", rows, market="futopt"))
    assert df["serial"].tolist() == ["00000107", "00000108"]  # the padding is kept
    assert df["frame_serial"].tolist() == [108, 108]
    assert df["is_trial"].tolist() == [True, True]
    assert df["is_replaced"].tolist() == [False, True]
    assert df["total_trade_volume"].isna().tolist() == [True, False]  # the frame's last trade
    assert df["time"].tolist() == [at(1795134611000000), at(1795134612000000)]
    assert df["some_new_field"].tolist() == ["kept", "kept"]  # unknown fields: extra columns
    assert futopt_trade_rows({"symbol": "X", "trades": "nope"}) is None


def test_every_futopt_channel_has_its_columns_on_both_backends() -> None:
    for channel, schema in FUTOPT_STREAM_SCHEMAS.items():
        empty = to_table(channel, [], market="futopt")
        assert empty.column_names == schema.names
        assert list(to_pandas(empty).columns) == schema.names
        assert to_polars(empty).columns == schema.names


def test_a_night_trade_after_midnight_belongs_to_the_session_of_the_evening_before() -> None:
    from marketframe.stream._ledger import AFTER_HOURS, day_of, position

    def us(when: str) -> int:
        return int(dt.datetime.fromisoformat(when + "+08:00").timestamp() * 1_000_000)

    evening = position(
        {"type": "FUTURE_AH", "time": us("2026-11-20T23:59:00"), "serial": "00000041"}
    )
    night = position({"type": "FUTURE_AH", "time": us("2026-11-21T01:00:00"), "serial": "00000042"})
    assert evening is not None and night is not None
    assert night == (evening[0], AFTER_HOURS, 42) and day_of(night) == "2026-11-20"
    assert evening < night  # one session, serials in order across midnight
    v10 = position({"type": "FUTURE", "time": us("2026-11-20T09:00:00"), "frameSerial": 7})
    assert v10 is not None and v10[2] == 7  # v1.0: the frame's serial
    assert position({"type": "FUTURE", "time": 1, "serial": "abc"}) is None


def test_a_drop_after_the_open_leaves_no_futures_trial_gap_even_when_nothing_follows() -> None:
    # the session's last trades fell in the drop and nothing came after the reconnect: at
    # close the regular gap is filled up to now, and no trial gap is left (trial matches only
    # precede the open, which was seen before the drop)
    from marketframe.stream import Subscription
    from marketframe.stream._ledger import TradeLedger

    ledger = TradeLedger("futopt")
    base = {"symbol": "TXFL6", "type": "FUTURE"}
    ledger.accept(
        {**base, "time": 1795134611000000, "serial": "00000003", "isTrial": True}, False, "TXF1!"
    )
    ledger.accept({**base, "time": 1795135516300967, "serial": "00085558"}, False, "TXF1!")
    ledger.dropped([Subscription("t", "trades", "TXF1!")])
    gaps = ledger.close_open()
    assert [(g.symbol, g.trial, g.after, g.before) for g in gaps] == [("TXFL6", False, 85558, None)]
