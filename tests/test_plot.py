"""Candlestick charts from candles frames (pandas and polars), saved as real images."""

from __future__ import annotations

import matplotlib

matplotlib.use("agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402

from marketframe import (
    Client,  # noqa: E402
    plot,  # noqa: E402
)


@pytest.fixture(scope="module")
def frame(sandbox) -> pd.DataFrame:
    client = Client(sandbox.api_key, base_url=sandbox.base_url, cache=False)
    df = client.stock.historical.candles(symbol="2454", from_="2026-01-05", to="2026-11-20",
                                         timeframe="D", sort="asc")
    df["sma_20"] = df["close"].rolling(20).mean()
    df["rsi_14"] = 50.0
    df["macd_line"] = np.sin(np.arange(len(df)) / 5)
    return df


def test_candles_with_volume_overlay_and_panels(frame, tmp_path) -> None:
    fig = plot.candles(frame, last=100)
    assert len(fig.axes) == 4  # price, volume, rsi, macd
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["sma_20"]
    path = tmp_path / "c.png"
    plot.save(fig, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_polars_input_and_column_choice(frame) -> None:
    fig = plot.candles(pl.from_pandas(frame), columns=[], volume=False)
    assert len(fig.axes) == 1


def test_clear_errors(frame) -> None:
    two = pd.concat([frame, frame.assign(symbol="2330")])
    with pytest.raises(ValueError, match="several symbols"):
        plot.candles(two)
    with pytest.raises(ValueError, match="columns available"):
        plot.candles(frame.drop(columns=["high"]))


def test_the_md_accessor_plots_its_indicators(frame) -> None:
    base = frame[["symbol", "date", "open", "high", "low", "close", "volume"]]
    fig = base.md.sma(20).md.bbands().md.rsi(14).md.kdj().md.macd().md.plot(last=150)
    names = [ax.get_ylabel() for ax in fig.axes]
    assert names == ["", "volume", "rsi", "kdj", "macd"]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["sma_20", "bb_upper_20_2", "bb_middle_20_2", "bb_lower_20_2"]
    lazy = pl.from_pandas(base).lazy().md.rsi(14)
    assert len(lazy.md.plot().axes) == 3
