"""Every frame comes oldest first and with one set of time dtypes (issue 12): loaders, store
reads, ``download`` and the stream recorder agree, checked against one table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import polars as pl
import pytest

import marketframe
from marketframe import Client, Store
from marketframe.stream import Recorder, read_recorded
from marketframe.stream._frames import Batch, to_table

#: (backend, kind of time column) -> dtype: the table docs/loaders.md documents
DTYPES: dict[tuple[str, str], Any] = {
    ("pandas", "calendar"): "datetime64[us]",
    ("pandas", "instant"): "datetime64[us, Asia/Taipei]",
    ("polars", "calendar"): pl.Date,
    ("polars", "instant"): pl.Datetime("us", "Asia/Taipei"),
}
CANDLES = "stock.historical.candles"


def _dtype(frame: Any, column: str) -> Any:
    return frame.schema[column] if isinstance(frame, pl.DataFrame) else str(frame[column].dtype)


@pytest.fixture(scope="module")
def store(client: Client, tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = Store(tmp_path_factory.mktemp("conventions"), client)
    st.sync(CANDLES, ["2330", "0050"], "2024-01-01", "2025-06-30", progress=False)
    st.sync(CANDLES, ["2330"], timeframe="5", progress=False)
    st.sync("stock.corporate_actions.dividends", None, "2020-01-01", "2025-06-30", progress=False)
    return st


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_loaders_store_and_download_agree_on_the_dtype_table(
    client: Client, store: Store, backend: str
) -> None:
    load = client.stock.historical.candles
    frames = {
        "calendar": [
            load(symbol="2330", from_="2025-01-01", to="2025-03-31", backend=backend),
            store.read(CANDLES, "2330", "2025-01-01", "2025-03-31", backend=backend),
            marketframe.download(
                "2330", "2025-01-01", "2025-03-31", client=client, backend=backend
            ),
        ],
        "instant": [
            load(symbol="2330", timeframe="5", backend=backend),
            store.read(CANDLES, "2330", timeframe="5", backend=backend),
            marketframe.download("2330", timeframe="5", client=client, backend=backend),
        ],
    }
    for kind, group in frames.items():
        for frame in group:
            assert _dtype(frame, "date") == DTYPES[(backend, kind)], kind
    actions = store.read("stock.corporate_actions.dividends", backend=backend)
    for col in ("date", "ex_dividend_date"):
        if col in actions.columns:
            assert _dtype(actions, col) == DTYPES[(backend, "calendar")], col
    quote = client.stock.intraday.quote("2330", backend=backend)
    assert _dtype(quote, "date") == DTYPES[(backend, "calendar")]
    trades = client.stock.intraday.trades(symbol="2330", backend=backend)
    assert _dtype(trades, "time") == DTYPES[(backend, "instant")]


def _stream_batch(client: Client, newest_first: bool) -> Batch:
    body = (
        client.fetch("stock.intraday.trades", symbol="2330", sort="asc", limit=30).responses[0].body
    )
    doc = orjson.loads(body)
    head = {k: doc[k] for k in ("type", "exchange", "market", "symbol")}
    rows = [{**head, **r} for r in doc["data"]]
    if newest_first:
        rows.reverse()
    return Batch("trades", to_table("trades", rows))


def test_the_stream_recorder_agrees(client: Client, tmp_path: Path) -> None:
    batch = _stream_batch(client, newest_first=False)
    assert str(batch.to_pandas()["time"].dtype) == DTYPES[("pandas", "instant")]
    assert batch.to_polars().schema["time"] == DTYPES[("polars", "instant")]
    rec = Recorder(tmp_path, rows_per_file=10)  # several files, the later ones written first
    rec.write(_stream_batch(client, newest_first=True))
    rec.close()
    times = read_recorded(tmp_path, "trades").column("time").to_pylist()
    assert times == sorted(times) and len(times) == 30


def test_loaders_return_oldest_first_whatever_the_wire_order(client: Client) -> None:
    # the service answers daily candles and trades newest first by default
    raw = orjson.loads(
        client.fetch(CANDLES, symbol="2330", from_="2025-01-01", to="2025-03-31").responses[0].body
    )["data"]
    assert raw[0]["date"] > raw[-1]["date"]
    daily = client.stock.historical.candles(
        symbol=["2330", "0050"], from_="2025-01-01", to="2025-03-31"
    )
    for _, one in daily.groupby("symbol"):
        assert one.date.is_monotonic_increasing
    trades = client.stock.intraday.trades(symbol="2330", limit=200)
    assert trades.time.is_monotonic_increasing and trades.serial.is_monotonic_increasing
    tech = client.stock.technical.sma(
        symbol="2330", from_="2025-01-01", to="2025-03-31", timeframe="D", period=5
    )
    assert tech.date.is_monotonic_increasing


def test_sort_desc_is_still_honoured(client: Client) -> None:
    desc = client.stock.historical.candles(
        symbol="2330", from_="2025-01-01", to="2025-03-31", sort="desc"
    )
    assert desc.date.is_monotonic_decreasing and len(desc) > 30
    trades = client.stock.intraday.trades(symbol="2330", limit=50, sort="desc")
    assert trades.serial.is_monotonic_decreasing


def test_store_reads_and_download_are_oldest_first(client: Client, store: Store) -> None:
    for frame in (
        store.read(CANDLES, ["2330", "0050"], "2024-01-01", "2025-06-30"),
        marketframe.download(["2330", "0050"], "2024-01-01", "2025-06-30", client=client),
    ):
        for _, one in frame.groupby("symbol"):
            assert one.date.is_monotonic_increasing
    actions = store.read("stock.corporate_actions.dividends")
    assert pd.Series(actions.date).is_monotonic_increasing or len(actions) < 2


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_the_calendar_and_ticker_actions_agree_on_the_dtype_table(
    client: Client, backend: str
) -> None:
    from marketframe import Ticker, calendar

    days = calendar.sessions_in_range("2025-01-02", "2025-01-31", backend=backend)
    got = days.dtype if backend == "polars" else str(days.dtype)
    assert got == DTYPES[(backend, "calendar")]
    sessions = calendar.sessions("2025-01-02", "2025-01-31", backend=backend)
    assert _dtype(sessions, "session") == DTYPES[(backend, "calendar")]
    assert _dtype(sessions, "open") == _dtype(sessions, "close") == DTYPES[(backend, "instant")]
    minutes = calendar.minutes("2025-01-02", backend=backend)
    assert (minutes.dtype if backend == "polars" else str(minutes.dtype)) == DTYPES[
        (backend, "instant")
    ]
    if backend == "pandas":
        assert str(calendar.base_sessions().dtype) == DTYPES[("pandas", "calendar")]
        actions = Ticker("0050", client=client).actions  # polars: Datetime, from the pandas
        assert _dtype(actions, "date") == DTYPES[("pandas", "calendar")]


def test_one_symbol_order_the_order_asked(client: Client, store: Store) -> None:
    """The loaders, download (with or without a store) and store.read give the symbols in
    the order asked; store.read of every stored symbol sorts them."""
    asked = ["2330", "0050"]
    span = ("2025-01-01", "2025-06-30")  # under a year: the loader's one request

    def order(frame: Any) -> list[str]:
        return list(dict.fromkeys(frame["symbol"].astype(str)))

    frames = {
        "loader": client.stock.historical.candles(symbol=asked, from_=span[0], to=span[1]),
        "download": marketframe.download(asked, *span, client=client),
        "download(store=)": marketframe.download(asked, *span, store=store),
        "store.read": store.read(CANDLES, asked, *span),
    }
    assert {name: order(f) for name, f in frames.items()} == dict.fromkeys(frames, asked)
    assert order(marketframe.download(asked[::-1], *span, client=client)) == asked[::-1]
    assert order(store.read(CANDLES, start=span[0], end=span[1])) == sorted(asked)
