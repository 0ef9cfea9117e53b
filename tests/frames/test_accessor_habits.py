"""Issue 12's accessor habits and wide layout: a Series accessor, case-insensitive column
names, a DatetimeIndex (or any date dtype) as the time order, ``marketframe.options`` as the
process-wide default convention (set from a cross-check report), and the date x symbol
panel (``df.md.wide``) that the indicators accept too."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import polars as pl
import pytest

import marketframe
from marketframe import indicators as ind
from marketframe.crosscheck import CrosscheckReport, VariantResult
from marketframe.exceptions import InvalidParams, InvalidParamType
from marketframe.frames import MissingColumnsError

DAYS = 80


def long_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    dates = pd.bdate_range("2024-01-01", periods=DAYS)
    parts = []
    for sym, level in (("2330", 600.0), ("0050", 150.0), ("2317", 100.0)):
        c = level * np.exp(np.cumsum(rng.normal(0, 0.02, DAYS)))
        parts.append(pd.DataFrame({"symbol": sym, "date": dates, "close": c}))
    return pd.concat(parts, ignore_index=True)


def per_symbol(df: pd.DataFrame, fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.empty(len(df))
    for _, g in df.groupby("symbol", sort=False):
        order = np.argsort(g["date"].to_numpy(), kind="stable")
        vals = fn(g["close"].to_numpy()[order])
        back = np.empty(len(g))
        back[order] = vals
        out[g.index.to_numpy()] = back
    return out


# -- Series accessor -----------------------------------------------------------------


def test_pandas_series_accessor_uses_its_datetime_index_as_time_order() -> None:
    df = long_frame()
    s = df[df.symbol == "2330"].set_index("date")["close"]
    want = ind.rsi(s.to_numpy(), 14)
    got = s.md.rsi(14)
    assert got.name == "rsi_14" and got.index.equals(s.index)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, equal_nan=True)
    newest_first = s[::-1].md.rsi(14)  # put in time order by the index, given back as is
    np.testing.assert_allclose(newest_first.to_numpy(), want[::-1], rtol=1e-12, equal_nan=True)
    macd = s.md.macd()
    assert list(macd.columns) == ["macd_12_26_9", "macd_signal_12_26_9", "macd_hist_12_26_9"]
    np.testing.assert_allclose(macd.iloc[:, 0], ind.macd(s.to_numpy()).line, equal_nan=True)


def test_polars_series_accessor() -> None:
    c = long_frame().close.to_numpy()[:DAYS]
    got = pl.Series("Close", c).md.rsi(14)
    assert isinstance(got, pl.Series) and got.name == "rsi_14"
    want = ind.rsi(c, 14)
    assert got.null_count() == int(np.isnan(want).sum())  # warm-up: nulls
    np.testing.assert_allclose(got.fill_null(np.nan).to_numpy(), want, equal_nan=True)
    assert pl.Series(c).md.bbands().columns[0] == "bb_upper_20_2"


@pytest.mark.parametrize("make", [lambda c: pd.Series(c), lambda c: pl.Series(c)])
def test_series_kdj_is_a_clear_error(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidParams, match="high, low and close"):
        make(np.arange(30.0)).md.kdj()


# -- column names in any case ----------------------------------------------------------


def test_column_lookup_ignores_case_pandas_and_polars() -> None:
    df = long_frame()
    caps = df.rename(columns={"symbol": "Symbol", "date": "Date", "close": "Close"})
    want = df.md.sma(10)["sma_10"].to_numpy()
    np.testing.assert_array_equal(caps.md.sma(10)["sma_10"].to_numpy(), want)
    np.testing.assert_array_equal(caps[::-1].md.sma(10)["sma_10"].to_numpy(), want[::-1])
    got = pl.from_pandas(caps).md.sma(10).get_column("sma_10").fill_null(np.nan).to_numpy()
    np.testing.assert_array_equal(got, want)


def test_absent_column_says_did_you_mean() -> None:
    df = long_frame().rename(columns={"close": "Close"})
    with pytest.raises(MissingColumnsError, match="did you mean 'Close'"):
        df.md.sma(10, column="clse")
    with pytest.raises(MissingColumnsError, match="did you mean 'Close'"):
        pl.from_pandas(df).md.sma(10, column="clse")


# -- the time order from a DatetimeIndex or any date dtype ----------------------------------


def _dates(kind: str, d: pd.Series) -> object:
    if kind == "ms":
        return d.astype("datetime64[ms]")
    if kind == "tz":
        return d.dt.tz_localize("Asia/Taipei")
    if kind == "date32":
        return pd.Series(pd.array(d.dt.date, dtype=pd.ArrowDtype(__import__("pyarrow").date32())))
    return d.dt.date.astype(object)  # python date objects


@pytest.mark.parametrize("kind", ["ms", "tz", "date32", "object"])
@pytest.mark.parametrize("as_index", [False, True], ids=["column", "index"])
def test_any_date_dtype_orders_a_newest_first_frame(kind: str, as_index: bool) -> None:
    df = long_frame()
    want = per_symbol(df, lambda c: ind.ema(c, 10))
    shuffled = df.assign(date=_dates(kind, df["date"]).to_numpy())
    shuffled = shuffled.iloc[::-1]  # newest first, as the wire used to send them
    if as_index:
        shuffled = shuffled.set_index("date")
    got = shuffled.md.ema(10)["ema_10"].to_numpy()
    np.testing.assert_allclose(got, want[::-1], rtol=1e-12, equal_nan=True)


def test_unnamed_datetime_index_is_the_time_order() -> None:
    df = long_frame()
    want = per_symbol(df, lambda c: ind.sma(c, 5))
    idx = pd.DatetimeIndex(df["date"].to_numpy())
    got = df.drop(columns="date").set_axis(idx)[::-1].md.sma(5)["sma_5"].to_numpy()
    np.testing.assert_allclose(got, want[::-1], equal_nan=True)


# -- marketframe.options ----------------------------------------------------------------


def test_options_set_the_default_convention_everywhere() -> None:
    df = long_frame()
    c = df.close.to_numpy()[:DAYS]
    first = ind.rsi(c, 14, convention="rsi_seed=first")
    assert not np.allclose(ind.rsi(c, 14)[20:], first[20:])
    with marketframe.options.context(conventions={"rsi": "rsi_seed=first"}):
        np.testing.assert_array_equal(ind.rsi(c, 14), first)
        np.testing.assert_array_equal(pd.Series(c).md.rsi(14).to_numpy(), first)
        talib = ind.rsi(c, 14, convention="talib")  # an explicit convention still wins
        assert np.isnan(talib[13]) and not np.isnan(first[13])
    assert np.isnan(ind.rsi(c, 14)[13])  # restored


def test_options_conventions_assignment_is_validated() -> None:
    saved = dict(marketframe.options.conventions)
    try:
        marketframe.options.conventions = {"kdj": "kdj=recursive50"}
        assert marketframe.options.conventions["kdj"] == ind.KdjConvention("recursive", 50.0)
        with pytest.raises(InvalidParams, match="did you mean 'rsi'"):
            marketframe.options.conventions = {"rsii": "talib"}
        with pytest.raises(InvalidParams, match="rsi_seed=first"):
            marketframe.options.conventions["rsi"] = "no such convention"
        assert dict(marketframe.options.conventions) == {
            "kdj": ind.KdjConvention("recursive", 50.0)
        }
    finally:
        marketframe.options.conventions = saved


def test_a_crosscheck_report_sets_the_options() -> None:
    found = VariantResult("kdj=recursive50", "range", 10, 0, 0.0, 0.0, None, True)
    report = CrosscheckReport(
        "2330",
        "kdj",
        "D",
        dt.date(2025, 1, 1),
        dt.date(2025, 3, 1),
        {},
        1e-9,
        100.0,
        [VariantResult("talib", "range", 10, 0, 1.0, 0.01, None, False), found],
        pd.DataFrame(),
    )
    assert report.conventions == {"kdj": "kdj=recursive50"}
    with marketframe.options.context(conventions=report.conventions):
        assert marketframe.options.conventions["kdj"].smoothing == "recursive"
    none = CrosscheckReport(
        "2330",
        "bb",
        "D",
        dt.date(2025, 1, 1),
        dt.date(2025, 3, 1),
        {},
        1e-9,
        1.0,
        [found.__class__(**{**found.__dict__, "matches": False})],
        pd.DataFrame(),
    )
    assert none.conventions == {}


# -- the wide layout --------------------------------------------------------------------


def test_pandas_wide_panel_and_indicators_on_it() -> None:
    df = long_frame()
    wide = df.iloc[::-1].md.wide("close")
    assert isinstance(wide.index, pd.DatetimeIndex) and wide.index.is_monotonic_increasing
    assert list(wide.columns) == ["0050", "2317", "2330"] and wide.columns.name == "symbol"
    np.testing.assert_array_equal(wide["2330"], df[df.symbol == "2330"].close)
    rsi = wide.md.rsi(14)
    np.testing.assert_allclose(rsi.to_numpy(), ind.rsi(wide.to_numpy(), 14), equal_nan=True)
    long_rsi = df.md.rsi(14)
    np.testing.assert_allclose(
        rsi["0050"].to_numpy(), long_rsi[df.symbol == "0050"].rsi_14.to_numpy(), equal_nan=True
    )
    macd = wide[::-1].md.macd()  # newest first: computed in time order, given back as is
    assert macd.columns.nlevels == 2
    np.testing.assert_allclose(
        macd["macd_12_26_9"].to_numpy()[::-1], ind.macd(wide.to_numpy()).line, equal_nan=True
    )
    assert wide.loc["2024-02"].shape[1] == 3  # dates a pandas user can slice


def test_polars_wide_panel_and_indicators_on_it() -> None:
    pf = pl.from_pandas(long_frame())
    wide = pf.reverse().md.wide("close")
    assert wide.columns[0] == "date" and set(wide.columns) == {"date", "2330", "0050", "2317"}
    assert wide.get_column("date").is_sorted()
    syms = [c for c in wide.columns if c != "date"]
    panel = wide.select(syms).to_numpy()
    got = wide.md.sma(5).select(syms).fill_null(np.nan).to_numpy()
    np.testing.assert_allclose(got, ind.sma(panel, 5), equal_nan=True)
    macd = wide.md.macd()
    assert f"macd_signal_12_26_9:{syms[0]}" in macd.columns
    lazy = wide.lazy().md.macd()  # stays lazy; its schema is known before collecting
    assert lazy.collect_schema().names() == macd.columns
    assert lazy.collect().equals(macd)
    assert wide.lazy().md.sma(5).collect().equals(wide.md.sma(5))


@pytest.mark.parametrize("tz", [None, "Asia/Taipei"])
def test_polars_newest_first_with_date_or_datetime(tz: str | None) -> None:
    df = long_frame()
    want = per_symbol(df, lambda c: ind.ema(c, 10))
    pf = pl.from_pandas(df)
    when = pl.col("date").cast(pl.Date) if tz is None else pl.col("date").dt.replace_time_zone(tz)
    got = pf.with_columns(when).reverse().md.ema(10).get_column("ema_10")
    np.testing.assert_allclose(got.fill_null(np.nan).to_numpy(), want[::-1], equal_nan=True)


def test_a_typo_in_a_long_frame_is_not_taken_for_a_wide_one() -> None:
    df = long_frame().drop(columns="symbol").set_index("date").rename(columns={"close": "Clse"})
    df["open"] = df["Clse"]
    with pytest.raises(MissingColumnsError):
        df.md.rsi(14)
    with pytest.raises(MissingColumnsError):
        pl.from_pandas(df.reset_index()).md.rsi(14)


# -- other libraries' keywords -----------------------------------------------------------


def _candles() -> pd.DataFrame:
    one = long_frame()
    return one.assign(open=one.close, high=one.close * 1.01, low=one.close * 0.99)


FRAMES = {
    "pandas": lambda df: df,
    "polars": pl.from_pandas,
    "lazy": lambda df: pl.from_pandas(df).lazy(),
}


@pytest.mark.parametrize("kind", list(FRAMES))
@pytest.mark.parametrize(
    ("method", "kwargs", "right"),
    [
        ("rsi", {"period": 14}, "n=14"),
        ("rsi", {"length": 14}, "n=14"),
        ("sma", {"window": 20}, "n=20"),
        ("ema", {"timeperiod": 10}, "n=10"),
        ("kdj", {"length": 9}, "n=9"),
        ("macd", {"fastperiod": 5}, "fast=5"),
        ("bbands", {"std": 2.5}, "mult=2.5"),
    ],
)
def test_another_librarys_keyword_is_refused_naming_the_right_one(
    kind: str, method: str, kwargs: dict[str, float], right: str
) -> None:
    """pandas-ta's ``length=`` and TA-Lib's ``timeperiod=`` habits: a marketframe error
    naming marketframe's keyword and every one the method takes, on every frame type."""
    md = FRAMES[kind](_candles()).md
    with pytest.raises(InvalidParamType) as info:
        getattr(md, method)(**kwargs)
    text = str(info.value)
    (key,) = kwargs
    assert text.startswith(f"md.{method}: parameter {key!r} is not a parameter of md.{method}")
    assert f"write {right}" in text
    assert "allowed: " in text and "symbol, date" in text
    assert isinstance(info.value, TypeError)  # as Python's own, for except TypeError


def test_the_same_refusal_through_indicator_series_and_functions() -> None:
    df = _candles()
    for call in (
        lambda: df.md.indicator("rsi", period=14),
        lambda: df.close.md.rsi(period=14),
        lambda: marketframe.frames.rsi(df, period=14),
    ):
        with pytest.raises(InvalidParamType, match="write n=14"):
            call()
    with pytest.raises(InvalidParamType, match="did you mean 'column'"):
        df.md.sma(20, colum="close")
    with pytest.raises(InvalidParamType, match="given twice"):
        df.md.rsi(14, n=14)
    with pytest.raises(InvalidParamType, match=r"takes 1 value\(s\) by position, got 2"):
        df.md.rsi(14, "close")
    assert "rsi_14" in df.md.rsi(n=14).columns  # the right keyword still works
