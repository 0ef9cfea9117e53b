"""A yfinance user's first hour, replayed: period and interval, Ticker, a wide OHLC frame,
Yahoo's suffixes, adjusted returns through a split, and unknown symbols answered with the
closest known one. On pandas and polars, against the sandbox."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import polars as pl
import pytest

import marketframe
from marketframe import BatchError, Client, InvalidParams, SymbolNotFound, Ticker
from marketframe.download._yf import months_before
from marketframe.frames import MissingColumnsError


@pytest.fixture(scope="module")
def client(sandbox: Any, api_key: str) -> Any:
    with Client(api_key, base_url=sandbox.base_url, cache=False) as c:
        yield c


def test_period_and_interval_as_in_yfinance(client: Any) -> None:
    from marketframe._time import taipei_today

    today = taipei_today()
    six = marketframe.download("2330", period="6mo", client=client)
    assert six["date"].min().date() >= months_before(today, 6)
    assert six["date"].min().date() <= months_before(today, 6) + dt.timedelta(days=5)
    ytd = marketframe.download("2330", period="ytd", client=client)
    assert ytd["date"].min().year == today.year
    last5 = marketframe.download(["2330", "0050"], period="5d", client=client)
    assert last5.groupby("symbol", observed=True)["date"].nunique().tolist() == [5, 5]
    weekly = marketframe.download("2330", period="1y", interval="1wk", client=client)
    assert (weekly["timeframe"] == "W").all() and 48 <= len(weekly) <= 54
    bars = marketframe.download("2330", period="1d", interval="5m", client=client)
    assert bars["date"].dt.date.nunique() == 1 and len(bars) > 40
    everything = marketframe.download("2330", period="max", interval="1mo", client=client)
    assert everything["date"].min().year == 2010


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"period": "1mo", "start": "2025-01-01"}, ("period", "start/end")),
        ({"interval": "1d", "timeframe": "D"}, ("interval", "timeframe")),
        ({"interval": "90m"}, ("no such candles", "60m")),
        ({"period": "1yr"}, ("'1y'",)),
        ({"period": "1y", "interval": "1m"}, ("30 days",)),
        ({"layout": "wide", "backend": "arrow"}, ("pandas or polars",)),
    ],
)
def test_conflicting_or_unknown_words_are_refused_before_any_request(
    client: Any, kwargs: dict[str, Any], words: tuple[str, ...]
) -> None:
    before = client.stats().requests
    with pytest.raises(InvalidParams) as exc:
        marketframe.download("2330", client=client, **kwargs)
    assert all(w in str(exc.value) for w in words), str(exc.value)
    assert client.stats().requests == before


def test_suffixes_are_dropped_and_the_board_checked(client: Any) -> None:
    df = marketframe.download(["2330.TW", "0050.tw"], period="1mo", client=client)
    assert sorted(df["symbol"].astype(str).unique()) == ["0050", "2330"]
    with pytest.raises(InvalidParams, match=r"listed on TSE.*2330\.TW"):
        marketframe.download("2330.TWO", period="1mo", client=client)
    # the loaders do not take the suffix, but their 404 says what to write
    with pytest.raises(SymbolNotFound, match="Yahoo's suffix.*'2330'"):
        client.stock.historical.candles(symbol="2330.TW")


def test_a_yahoo_index_symbol_is_refused_naming_the_services(client: Any) -> None:
    """``^TWII`` was refused as a string of bad characters, with no word of ``IX0001``."""
    before = client.stats().requests
    with pytest.raises(InvalidParams, match=r"'\^TWII', a Yahoo index symbol.*'IX0001'"):
        marketframe.download(["2330", "^TWII"], period="1mo", client=client)
    with pytest.raises(InvalidParams, match=r"Ticker: parameter 'symbol' .*'IX0043'"):
        Ticker("^TWOII", client=client)
    with pytest.raises(InvalidParams, match="type='INDEX'"):
        marketframe.download("^N225", period="1mo", client=client)
    assert client.stats().requests == before
    index = marketframe.download("IX0001", period="5d", client=client)
    assert index["symbol"].astype(str).unique().tolist() == ["IX0001"]


def test_an_unknown_symbol_gets_a_did_you_mean(client: Any) -> None:
    with pytest.raises(BatchError) as exc:
        marketframe.download(["2330", "2331"], period="1mo", client=client)
    assert "did you mean '2330'?" in str(exc.value.errors["2331"])
    assert sorted(exc.value.frame["symbol"].astype(str).unique()) == ["2330"]


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_wide_ohlc_in_one_call_one_dtype_per_field(client: Any, backend: str) -> None:
    wide = marketframe.download(
        ["2330", "0050"], period="3mo", layout="wide", backend=backend, client=client
    )
    long = marketframe.download(["2330", "0050"], period="3mo", client=client)
    if backend == "pandas":
        assert list(wide.columns.names) == ["field", "symbol"]
        assert wide.index.name == "date" and wide.index.is_monotonic_increasing
        assert {str(wide[f].dtypes.unique()[0]) for f in ("open", "close")} == {"float64"}
        assert len(wide["close"].dtypes.unique()) == 1
        assert str(wide["volume"].dtypes.unique()[0]) == "Int64"
        closes = wide["close"]  # yfinance: df["Close"] is a date x symbol frame
        want = long.pivot(index="date", columns="symbol", values="close")
        pd.testing.assert_frame_equal(
            closes[["0050", "2330"]], want[["0050", "2330"]], check_names=False
        )
        returns = closes.pct_change()  # numeric: no object columns
        assert returns.dtypes.eq("float64").all()
        by_ticker = marketframe.download(
            ["2330", "0050"], period="3mo", group_by="ticker", client=client
        )
        assert list(by_ticker.columns.names) == ["symbol", "field"]
        assert by_ticker["2330"]["close"].equals(closes["2330"])
    else:
        assert isinstance(wide, pl.DataFrame)
        assert {"date", "close_2330", "close_0050", "volume_2330"} <= set(wide.columns)
        assert wide.schema["close_2330"] == pl.Float64 and wide.schema["volume_0050"] == pl.Int64
        assert wide["date"].is_sorted()


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_the_ticker_object(client: Any, backend: str) -> None:
    t = Ticker("0050.TW", client=client, backend=backend)
    assert t.symbol == "0050" and repr(t) == "marketframe.Ticker('0050')"
    hist = t.history(period="1mo")
    frame = hist.to_pandas() if backend == "polars" else hist
    assert (frame["symbol"].astype(str) == "0050").all() and len(frame) >= 15
    assert len(t.history(start="2025-01-01", end="2025-01-31")) > 10  # start/end win
    splits = t.splits
    frame = splits.to_pandas() if backend == "polars" else splits
    assert (frame["symbol"] == "0050").all() and len(frame) >= 1  # the 2025 split
    assert len(t.dividends) >= 1
    actions = t.actions
    acts = actions.to_pandas() if backend == "polars" else actions
    assert {"dividend"} <= set(acts["action"]) and acts["date"].is_monotonic_increasing
    info = t.info
    assert info["symbol"] == "0050" and info["market"] == "TSE" and "close_price" in info
    assert len(t.quote) == 1
    trades = t.trades
    assert len(trades) > 50  # the whole day, not the service's default page of 50
    assert len(t.get_trades(limit=10)) == 10


def test_tickers_share_one_client_not_one_each(monkeypatch: Any) -> None:
    from marketframe.download import _ticker as ticker

    for name in ("MARKETFRAME_API_KEY", "MARKETFRAME_BEARER_TOKEN", "MARKETFRAME_SDK_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(ticker, "_shared", None)
    a, b = Ticker("2330"), Ticker("0050")
    assert a.client is b.client
    a.client.close()


def test_adjusted_returns_do_not_crash_at_the_split(client: Any) -> None:
    # 0050 split 4-for-1 in 2025: raw closes fall 75% in a day; adjust=True ("all") does not
    raw = marketframe.download("0050", start="2025-01-01", end="2025-12-31", client=client)
    adj = marketframe.download(
        "0050", start="2025-01-01", end="2025-12-31", adjust=True, client=client
    )
    assert raw["close"].pct_change().min() < -0.7
    assert adj["close"].pct_change().min() > -0.15
    same = marketframe.download(
        "0050", start="2025-01-01", end="2025-12-31", adjust="all", client=client
    )
    pd.testing.assert_frame_equal(adj, same)


def test_end_is_inclusive(client: Any) -> None:
    df = marketframe.download("2330", start="2025-03-03", end="2025-03-07", client=client)
    assert df["date"].max() == pd.Timestamp("2025-03-07")  # yfinance would stop on the 6th


def test_intraday_trades_without_limit_are_the_whole_day(client: Any) -> None:
    page = client.stock.intraday.trades(symbol="2330", limit=50)
    day = client.stock.intraday.trades(symbol="2330")
    assert len(page) == 50 and len(day) > 50
    assert day["serial"].is_unique and day["time"].is_monotonic_increasing
    newest = client.stock.intraday.trades(symbol="2330", sort="desc")
    assert newest["time"].is_monotonic_decreasing and len(newest) == len(day)


def test_yfinance_keywords_of_the_same_meaning_are_taken(client: Any) -> None:
    want = marketframe.download(["2330", "0050"], period="1mo", adjust=True, client=client)
    got = marketframe.download(
        tickers="2330 0050", period="1mo", auto_adjust=True, threads=True, client=client
    )
    pd.testing.assert_frame_equal(got, want)
    raw = marketframe.download("2330", period="1mo", client=client)
    quiet = marketframe.download(
        "2330,", period="1mo", auto_adjust=False, actions=False, threads=4, client=client
    )
    pd.testing.assert_frame_equal(quiet, raw)
    hist = Ticker("2330", client=client).history(period="1mo", auto_adjust=True)
    pd.testing.assert_frame_equal(hist, want[want["symbol"] == "2330"].reset_index(drop=True))


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"actions": True}, InvalidParams, ("'actions'", "Ticker(symbol).actions")),
        ({"back_adjust": True}, InvalidParams, ("'back_adjust'", "adjust=True")),
        ({"auto_adjust": True, "adjust": "splits"}, InvalidParams, ("both given",)),
        ({"auto_adjust": "yes"}, TypeError, ("'auto_adjust'", "True or False")),
        ({"tickers": "0050"}, InvalidParams, ("'tickers'", "both given")),
        ({"strat": "2025-01-01"}, TypeError, ("'strat'", "did you mean 'start'?")),
        ({"timeout": 10}, InvalidParams, ("Client(timeout=...)",)),
    ],
)
def test_other_yfinance_keywords_are_refused_naming_what_to_write(
    client: Any, kwargs: dict[str, Any], error: type[Exception], words: tuple[str, ...]
) -> None:
    before = client.stats().requests
    with pytest.raises(error) as exc:
        marketframe.download("2330", period="1mo", client=client, **kwargs)
    assert isinstance(exc.value, marketframe.MarketframeError)  # not Python's bare TypeError
    assert all(w in str(exc.value) for w in words), str(exc.value)
    assert client.stats().requests == before


@pytest.mark.parametrize(
    ("interval", "instead"), [("3mo", "'1mo'"), ("5d", "'1wk'"), ("90m", "'60m'")]
)
def test_an_interval_the_service_lacks_names_the_nearest_it_has(
    client: Any, interval: str, instead: str
) -> None:
    with pytest.raises(InvalidParams) as exc:
        marketframe.download("2330", interval=interval, client=client)
    message = str(exc.value)
    assert instead in message and "did you mean" not in message, message  # not '3m' (minutes)


def test_fast_info_has_yfinances_keys(client: Any) -> None:
    t = Ticker("2330", client=client)
    fast = t.fast_info
    assert fast is t.fast_info  # kept by the Ticker, as yfinance's
    quote = t.quote.iloc[0]
    assert fast["lastPrice"] == quote["last_price"] == fast.last_price == fast["last_price"]
    assert (fast["open"], fast["dayHigh"], fast["dayLow"]) == (
        quote["open_price"],
        quote["high_price"],
        quote["low_price"],
    )
    assert fast["previousClose"] == quote["previous_close"] and fast["currency"] == "TWD"
    year = marketframe.download("2330", period="1y", client=client)
    assert fast["yearHigh"] == year["high"].max() and fast["yearLow"] == year["low"].min()
    assert fast["fiftyDayAverage"] == pytest.approx(year["close"].tail(50).mean())
    assert fast["lastVolume"] == year["volume"].iloc[-1]  # shares
    assert fast["timezone"] == "Asia/Taipei" and fast["quoteType"] == "EQUITY"
    assert set(dict(fast)) == set(fast.keys()) and "lastPrice" in fast
    with pytest.raises(KeyError, match="no share counts") as exc:
        fast["marketCap"]
    assert isinstance(exc.value, marketframe.MarketframeError)
    assert fast.get("shares") is None


def test_tickers_holds_several_over_one_download(client: Any) -> None:
    from marketframe import Tickers

    many = Tickers("2330.TW 0050", client=client)
    assert list(many.tickers) == ["2330.TW", "0050"] and many.tickers["2330.TW"].symbol == "2330"
    assert many.tickers["0050"].fast_info["lastPrice"] > 0
    hist = many.history(period="5d")
    want = marketframe.download(["2330", "0050"], period="5d", client=client)
    pd.testing.assert_frame_equal(hist, want)
    wide = many.download(period="5d", group_by="ticker")
    assert list(wide.columns.names) == ["symbol", "field"]


def test_polars_group_by_ticker_lays_columns_out_by_symbol(client: Any) -> None:
    args: dict[str, Any] = {"period": "1mo", "backend": "polars", "client": client}
    by_column = marketframe.download(["2330", "0050"], group_by="column", **args)
    by_ticker = marketframe.download(["2330", "0050"], group_by="ticker", **args)
    fields = ("open", "high", "low", "close", "volume")
    order = list(dict.fromkeys(c.split("_", 1)[1] for c in by_column.columns[1:]))
    assert by_column.columns[1:] == [f"{f}_{s}" for f in fields for s in order]
    assert by_ticker.columns[1:] == [f"{s}_{f}" for s in order for f in fields]
    assert by_ticker["2330_close"].equals(by_column["close_2330"])


@pytest.mark.parametrize(
    ("backend", "shape"),
    [("pandas", {"layout": "wide"}), ("pandas", {"group_by": "ticker"})]
    + [("polars", {"layout": "wide"}), ("polars", {"group_by": "ticker"})],
)
def test_md_on_a_wide_ohlc_frame_is_refused_naming_the_fix(
    client: Any, backend: str, shape: dict[str, str]
) -> None:
    """Every column of a pivot of several fields, volume included, was replaced by its SMA
    under its own label; now every indicator refuses it, as kdj did, naming the fix."""
    wide = marketframe.download(
        ["2330", "0050"], period="3mo", backend=backend, client=client, **shape
    )
    calls = {
        "sma": lambda f: f.md.sma(5),
        "ema": lambda f: f.md.ema(5),
        "rsi": lambda f: f.md.rsi(),
        "macd": lambda f: f.md.macd(),
        "bbands": lambda f: f.md.bbands(),
        "kdj": lambda f: f.md.kdj(),
    }
    for name, call in calls.items():
        with pytest.raises(MissingColumnsError, match="pivot of several fields") as exc:
            call(wide)
        assert "long frame" in str(exc.value), name


@pytest.mark.parametrize("shape", [{"layout": "wide"}, {"group_by": "ticker"}])
def test_plot_draws_a_wide_ohlc_frame_one_block_per_symbol(
    client: Any, shape: dict[str, str]
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    wide = marketframe.download(["2330", "0050"], period="3mo", client=client, **shape)
    fig = wide.md.plot()  # was an AttributeError
    try:
        assert [sf.axes[0].get_title().split()[0] for sf in fig.subfigs] == ["2330", "0050"]
    finally:
        plt.close(fig)
    with pytest.raises(MissingColumnsError, match="pivot of several fields"):
        marketframe.download(
            ["2330", "0050"], period="3mo", backend="polars", client=client, **shape
        ).md.plot()
