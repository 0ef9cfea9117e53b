"""`marketframe.download`: one call for many symbols over any range (issue 12), replayed the
way a yfinance user works, with pandas and with polars, against the sandbox."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

import marketframe
from marketframe import BatchError, Client, InvalidParams, Store
from marketframe._time import taipei_today

FIVE = ["2330", "0050", "2317", "2454", "6669"]  # 6669 lists in 2018: earlier windows are empty


@pytest.fixture(scope="module")
def five(client: Client) -> pd.DataFrame:
    return marketframe.download(FIVE, "2010-01-01", "2025-12-31", client=client)


def test_download_equals_a_store_sync_and_read_row_for_row(
    five: pd.DataFrame, client: Client, tmp_path: Path
) -> None:
    with Store(tmp_path / "store", client) as st:
        st.sync("stock.historical.candles", FIVE, "2010-01-01", "2025-12-31", progress=False)
        # both give the symbols in the order asked
        stored = st.read("stock.historical.candles", FIVE, "2010-01-01", "2025-12-31")
    assert len(five) > 5 * 3000
    pd.testing.assert_frame_equal(five, stored)
    assert list(five.symbol.unique()) == list(FIVE)  # in the order asked, then by time
    for _, one in five.groupby("symbol"):
        assert one.date.is_monotonic_increasing and one.date.is_unique


def test_download_into_a_store_syncs_and_reads_from_it(
    five: pd.DataFrame, client: Client, tmp_path: Path
) -> None:
    got = marketframe.download(
        FIVE, "2010-01-01", "2025-12-31", client=client, store=tmp_path / "s"
    )
    pd.testing.assert_frame_equal(got, five)
    before = client.stats().requests
    again = marketframe.download(
        FIVE, "2010-01-01", "2025-12-31", client=client, store=tmp_path / "s"
    )
    assert client.stats().requests == before  # everything final was held: no request
    pd.testing.assert_frame_equal(again, five)


def test_pandas_habits_work_on_the_result(five: pd.DataFrame) -> None:
    df = five
    assert str(df.date.dtype) == "datetime64[us]"
    recent = df[df.date >= "2025-12-01"]
    assert len(recent) and recent.date.min() >= pd.Timestamp("2025-12-01")
    one = df[df.symbol == "2330"].set_index("date")
    march = one.loc["2025-03"]
    assert len(march) > 15 and (march.index.month == 3).all()
    assert len(one.loc["2025-03-03":"2025-03-07"]) == 5
    weekly = one.close.resample("W").last().dropna()
    assert len(weekly) > 52 * 15 * 0.9
    wide = df.pivot(index="date", columns="symbol", values="close")
    assert list(wide.columns) == sorted(FIVE) and wide.index.is_monotonic_increasing
    assert wide["6669"].first_valid_index() >= pd.Timestamp("2018-01-01")
    rolling = wide["2330"].rolling(20).mean()
    assert rolling.notna().sum() == wide["2330"].notna().sum() - 19
    trades = pd.DataFrame({"date": pd.to_datetime(["2025-03-05 10:30", "2025-06-02 09:00"])})
    asof = pd.merge_asof(trades, one.reset_index()[["date", "close"]], on="date")
    assert asof.close.notna().all()


def test_polars_habits_work_on_the_result(five: pd.DataFrame, client: Client) -> None:
    df = marketframe.download(FIVE, "2010-01-01", "2025-12-31", client=client, backend="polars")
    assert df.schema["date"] == pl.Date
    assert df.height == len(five)
    assert df["close"].to_list() == five.close.tolist()
    recent = df.filter(pl.col("date") >= dt.date(2025, 12, 1))
    assert recent.height and recent["date"].min() >= dt.date(2025, 12, 1)
    march = df.filter(
        (pl.col("symbol") == "2330") & (pl.col("date").dt.strftime("%Y-%m") == "2025-03")
    )
    assert march.height > 15
    weekly = (
        df.filter(pl.col("symbol") == "2330")
        .sort("date")
        .group_by_dynamic("date", every="1w")
        .agg(pl.col("close").last())
    )
    assert weekly.height > 52 * 15 * 0.9
    wide = df.pivot(on="symbol", index="date", values="close").sort("date")
    assert sorted(wide.columns[1:]) == sorted(FIVE)
    rolled = df.with_columns(pl.col("close").rolling_mean(20).over("symbol").alias("sma"))
    assert rolled.filter(pl.col("symbol") == "2330")["sma"].null_count() == 19


@pytest.mark.parametrize(
    ("kwargs", "param", "allowed"),
    [
        ({"symbols": ["2330", "23/30"]}, "symbols", "symbol strings"),
        ({"symbols": []}, "symbols", "one or more symbols"),
        ({"symbols": 2330}, "symbols", "a symbol string"),
        ({"start": "2025-02-01", "end": "2025-01-01"}, "start", "start <= end"),
        ({"start": "2025-13-01"}, "start", "YYYY-MM-DD"),
        ({"timeframe": "H"}, "timeframe", "D, W, M"),
        ({"fields": ["close", "vwap"]}, "fields", "open"),
        ({"adjust": "ALL"}, "adjust", "'splits'"),
        ({"adjust": "all", "timeframe": "W"}, "adjust", "timeframe D"),
        ({"backend": "numpy"}, "backend", "pandas, polars, arrow"),
        ({"store": 42}, "store", "a directory path"),
    ],
)
def test_bad_arguments_raise_invalid_params_before_any_request(
    client: Client, kwargs: dict[str, Any], param: str, allowed: str
) -> None:
    call: dict[str, Any] = {"symbols": "2330", "start": "2025-01-01", "end": "2025-03-31", **kwargs}
    before = client.stats().requests
    with pytest.raises(InvalidParams) as info:
        marketframe.download(call.pop("symbols"), client=client, **call)
    assert info.value.param == param
    assert info.value.endpoint == "download"
    assert allowed in str(info.value)
    assert client.stats().requests == before


def test_a_failing_symbol_is_reported_never_dropped(client: Client) -> None:
    with pytest.raises(BatchError) as info:
        marketframe.download(["2330", "9999", "0050"], "2024-01-01", "2025-06-30", client=client)
    err = info.value
    assert set(err.errors) == {"9999"}
    assert "SymbolNotFound" in type(err.errors["9999"]).__name__
    assert sorted(err.frame.symbol.unique()) == ["0050", "2330"]
    alone = marketframe.download(["2330", "0050"], "2024-01-01", "2025-06-30", client=client)
    pd.testing.assert_frame_equal(err.frame, alone)


def test_a_board_name_downloads_every_equity_of_the_board(client: Client) -> None:
    tickers = client.stock.intraday.tickers(type="EQUITY", market="OTC").symbol.tolist()
    df = marketframe.download("OTC", "2025-06-02", "2025-06-30", client=client)
    assert sorted(df.symbol.unique()) == sorted(tickers)


def test_weekly_and_minute_timeframes(client: Client) -> None:
    weekly = marketframe.download("2330", "2024-01-01", "2025-12-31", timeframe="W", client=client)
    assert weekly.date.is_monotonic_increasing and len(weekly) > 100
    minutes = marketframe.download(["2330", "0050"], timeframe="5", client=client)
    assert str(minutes.date.dtype) == "datetime64[us, Asia/Taipei]"
    assert list(minutes.symbol.unique()) == ["2330", "0050"]  # the order asked
    with pytest.raises(InvalidParams, match="minute timeframe"):
        marketframe.download("2330", "2025-01-01", timeframe="5", client=client)


def test_default_range_is_the_year_before_end(client: Client) -> None:
    df = marketframe.download("2330", end="2025-06-30", client=client)
    assert df.date.min() >= pd.Timestamp("2024-07-01") and df.date.max() <= pd.Timestamp(
        "2025-06-30"
    )
    assert df.date.min() <= pd.Timestamp("2024-07-05")


def test_without_a_client_or_key_it_runs_on_the_sandbox(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    monkeypatch.delenv("MARKETFRAME_BASE_URL", raising=False)
    df = marketframe.download(["2330", "0050"], "2024-01-01", "2024-03-31", backend="arrow")
    assert df.num_rows > 80
    assert "MARKETFRAME_API_KEY is not set: using the built-in sandbox" in capsys.readouterr().err


def test_progress_bar_counts_the_windows(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    marketframe.download(["2330", "0050"], "2020-01-01", "2025-12-31", client=client, progress=True)
    err = capsys.readouterr().err
    assert "download" in err and "/12 " in err  # a bar over 2 symbols x 6 windows
    marketframe.download(
        ["2330", "0050"], "2020-01-01", "2025-12-31", client=client, progress=False
    )
    assert capsys.readouterr().err == ""


def test_adjust_equals_a_store_read_adjusted(client: Client, tmp_path: Path) -> None:
    """``download(..., adjust=...)`` is the store's ``read(..., adjust=...)``: 0050's 1:4 split
    of 2025-06-18 divides the closes before it by 4."""
    args = (["0050", "2330"], "2025-01-02", "2025-12-31")
    raw = marketframe.download(*args, client=client)
    adj = marketframe.download(*args, adjust="splits", client=client)
    with Store(tmp_path / "st", client) as st:
        st.sync("stock.historical.candles", args[0], args[1], args[2], progress=False)
        read = st.read(
            "stock.historical.candles", sorted(args[0]), args[1], args[2], adjust="splits"
        )
    pd.testing.assert_frame_equal(adj.reset_index(drop=True), read.reset_index(drop=True))
    before = (raw.symbol == "0050") & (raw.date < pd.Timestamp("2025-06-18"))
    assert before.sum() > 100
    np.testing.assert_allclose(adj.close[before], raw.close[before] / 4, rtol=1e-12)


def test_numpy_datetime64_dates_are_taken_like_strings(client: Client) -> None:
    """A date taken from a numpy array (``df.date.values[0]``) is a day as a string is,
    for download and for the loaders alike."""
    want = marketframe.download("2330", "2025-01-02", "2025-01-10", client=client)
    got = marketframe.download(
        "2330",
        start=np.datetime64("2025-01-02"),
        end=np.datetime64("2025-01-10T13:30:00.000000000"),
        client=client,
    )
    assert len(want) > 3
    pd.testing.assert_frame_equal(got, want)
    loaded = client.stock.historical.candles(
        "2330", start=np.datetime64("2025-01-02"), end=np.datetime64("2025-01-10")
    )
    assert loaded.date.min() == pd.Timestamp("2025-01-02") and len(loaded) == len(want)


@pytest.mark.parametrize("board", ["otc", "Otc"])
def test_a_board_name_in_any_case_is_the_board(client: Client, board: str) -> None:
    want = marketframe.download("OTC", "2025-06-02", "2025-06-06", client=client)
    got = marketframe.download(board, "2025-06-02", "2025-06-06", client=client)
    assert want.symbol.nunique() > 1
    pd.testing.assert_frame_equal(got, want)
    # the loaders take a board in any case too
    listed = client.stock.intraday.tickers(type="EQUITY", market=board)
    assert sorted(listed.symbol) == sorted(want.symbol.unique())


@pytest.mark.parametrize("with_end", [False, True])
def test_a_start_after_today_is_refused_before_any_request(client: Client, with_end: bool) -> None:
    """The service has no data after today (Taipei): an empty frame would look like a
    symbol without history."""
    today = taipei_today()
    start = today + dt.timedelta(days=30)
    last = start + dt.timedelta(days=90) if with_end else None
    before = client.stats().requests
    with pytest.raises(InvalidParams) as info:
        marketframe.download("2330", start=start.isoformat(), end=last, client=client)
    assert info.value.param == "start"
    assert f"after today ({today}, Asia/Taipei)" in str(info.value)
    assert f"a start on or before {today}" in str(info.value)
    assert client.stats().requests == before
