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
from marketframe.exceptions import InvalidParams, InvalidParamType  # noqa: E402
from marketframe.frames import MissingColumnsError  # noqa: E402
from marketframe.plot import _artists  # noqa: E402


@pytest.fixture(scope="module")
def frame(sandbox) -> pd.DataFrame:
    client = Client(sandbox.api_key, base_url=sandbox.base_url, cache=False)
    df = client.stock.historical.candles(
        symbol="2454", from_="2026-01-05", to="2026-11-20", timeframe="D", sort="asc"
    )
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
    with pytest.raises(MissingColumnsError, match="columns available"):
        plot.candles(frame.drop(columns=["high"]))
    with pytest.raises(InvalidParams, match="allowed: 2454"):
        plot.candles(frame, symbol="2330")


def test_readme_snippet_on_two_symbols_draws_one_block_per_symbol(sandbox) -> None:
    # README: daily.md.sma(20).md.rsi(14).md.kdj().md.plot() on a two-symbol frame
    client = Client(sandbox.api_key, base_url=sandbox.base_url, cache=False)
    daily = client.stock.historical.candles(
        symbol=["2330", "0050"], from_="2025-01-01", to="2025-06-30"
    )
    assert daily["symbol"].nunique() == 2
    fig = daily.md.sma(20).md.rsi(14).md.kdj().md.plot()
    # the default window (the last 120 bars) is stated in the title when it leaves bars out
    sizes = daily.groupby("symbol", observed=True).size()
    assert [sf.axes[0].get_title() for sf in fig.subfigs] == [
        f"{s} candles" + (f" (last 120 of {n} bars; last=None for all)" if n > 120 else "")
        for s, n in (("2330", sizes["2330"]), ("0050", sizes["0050"]))
    ]
    for sf in fig.subfigs:  # price, volume, rsi, kdj for each symbol
        assert [ax.get_ylabel() for ax in sf.axes] == ["", "volume", "rsi", "kdj"]
    one = daily.md.sma(20).md.plot(symbol="0050", last=None)
    assert not one.subfigs and one.axes[0].get_title() == "0050 candles"
    assert len(pl.from_pandas(daily).lazy().md.rsi(14).md.plot().subfigs) == 2


def test_blocks_over_the_same_bars_are_dated_once_at_the_bottom(frame) -> None:
    # two symbols over the same days: only the lowest block's time axis has the dates
    two = pd.concat([frame, frame.assign(symbol="2330")], ignore_index=True)
    fig = plot.candles(two, columns=[], last=60)
    top, bottom = fig.subfigs
    assert not any(ax.xaxis.get_visible() for ax in top.axes)
    labels = [t.get_text() for t in bottom.axes[-1].get_xticklabels()]
    assert labels[-1] == frame["date"].max().strftime("%Y-%m-%d") and len(labels) == 6
    # one symbol a day shorter: each block keeps its own dates
    shorter = pd.concat([frame, frame.iloc[:-1].assign(symbol="2330")], ignore_index=True)
    fig = plot.candles(shorter, columns=[], last=60)
    for sf in fig.subfigs:
        assert sf.axes[-1].xaxis.get_visible()
        assert len(sf.axes[-1].get_xticklabels()) == 6
    days = [sf.axes[-1].get_xticklabels()[-1].get_text() for sf in fig.subfigs]
    assert days[0] != days[1]


def test_intraday_ticks_show_the_time(sandbox) -> None:
    client = Client(sandbox.api_key, base_url=sandbox.base_url, cache=False)
    bars = client.stock.intraday.candles(symbol="2330")
    assert bars["date"].dt.normalize().nunique() == 1 and len(bars) > 10
    fig = bars.md.plot()
    labels = [t.get_text() for t in fig.axes[-1].get_xticklabels()]
    assert len(set(labels)) == len(labels) > 1
    assert all(len(t) == 5 and t[2] == ":" for t in labels)  # "09:00" ... not the date
    days = _artists._tick_labels(pd.to_datetime(["2026-01-05 09:00", "2026-01-06 13:30"]))
    assert days == ["01-05 09:00", "01-06 13:30"]
    assert _artists._tick_labels(pd.to_datetime(["2026-01-05", "2026-01-06"])) == [
        "2026-01-05",
        "2026-01-06",
    ]


def test_the_md_accessor_plots_its_indicators(frame) -> None:
    base = frame[["symbol", "date", "open", "high", "low", "close", "volume"]]
    fig = base.md.sma(20).md.bbands().md.rsi(14).md.kdj().md.macd().md.plot(last=150)
    names = [ax.get_ylabel() for ax in fig.axes]
    assert names == ["", "volume", "rsi", "kdj", "macd"]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # the Bollinger middle is the SMA(20): drawn dashed, and the legend says they coincide
    assert legend == ["sma_20", "bb_upper_20_2", "bb_middle_20_2 (= sma_20)", "bb_lower_20_2"]
    lazy = pl.from_pandas(base).lazy().md.rsi(14)
    assert len(lazy.md.plot().axes) == 3


def test_capitalised_price_columns_and_a_date_index_as_yfinance_returns_them(frame) -> None:
    # the indicators accept Open/High/Low/Close; so does the chart, and a DatetimeIndex
    yf = frame[["date", "open", "high", "low", "close", "volume"]].rename(columns=str.title)
    yf = yf.set_index("Date")
    fig = yf.md.sma(20).md.plot()
    assert [ax.get_ylabel() for ax in fig.axes] == ["", "volume"]
    labels = [t.get_text() for t in fig.axes[-1].get_xticklabels()]
    assert labels[-1] == frame["date"].max().strftime("%Y-%m-%d")


def test_candles_are_collections_with_doji_ticks_padding_and_an_outside_legend(frame) -> None:
    from matplotlib.collections import LineCollection, PolyCollection

    df = frame.copy()
    df.loc[df.index[-5], "close"] = df.loc[df.index[-5], "open"]  # a doji
    fig = plot.candles(df.assign(sma_20=df["close"].rolling(20).mean()), columns=["sma_20"])
    ax = fig.axes[0]
    drawn = df.tail(plot.LAST)
    bodies = [c for c in ax.collections if isinstance(c, PolyCollection)]
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    # one collection of bodies, one of wicks, one of doji ticks: not an artist per bar
    assert len(bodies) == 1 and len(lines) == 2 and len(ax.patches) == 0
    assert len(bodies[0].get_paths()) == int((drawn["open"] != drawn["close"]).sum())
    assert len(lines[0].get_segments()) == len(drawn) and len(lines[1].get_segments()) >= 1
    lo, hi = ax.get_ylim()
    assert lo < drawn["low"].min() and hi > drawn["high"].max()  # room below and above
    assert ax.get_xlim() == (-1.0, float(len(drawn)))
    legend = ax.get_legend()  # outside the axes, to its right: it covers no bar
    fig.canvas.draw()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    volume = fig.axes[1]
    assert len(volume.collections) == 1 and len(volume.patches) == 0


def test_last_none_draws_every_bar_and_a_bad_last_is_refused(frame) -> None:
    fig = plot.candles(frame, last=None, volume=False, columns=[])
    assert fig.axes[0].get_title() == "2454 candles"
    assert fig.axes[0].get_xlim() == (-1.0, float(len(frame)))
    with pytest.raises(InvalidParams, match="last"):
        plot.candles(frame, last=0)


@pytest.mark.parametrize("make", [lambda df: df, pl.from_pandas])
def test_md_plot_refuses_an_option_it_lacks_naming_its_own(frame, make) -> None:  # type: ignore[no-untyped-def]
    """``df.md.plot(kind="line")`` (pandas' habit) names md.plot's options, not the internal
    function that draws, and draws nothing."""
    with pytest.raises(InvalidParamType) as info:
        make(frame).md.plot(kind="line")
    text = str(info.value)
    assert text.startswith("md.plot: parameter 'kind' is not a parameter of md.plot")
    assert "allowed: title, volume, columns, last, symbol, figsize" in text
    assert "candles" not in text
    assert isinstance(info.value, TypeError)  # as Python's own, for except TypeError
