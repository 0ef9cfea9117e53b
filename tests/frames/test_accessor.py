"""The `md` accessor and the functional form on pandas, polars and polars lazy frames."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

import marketframe  # noqa: F401  (registers the accessors)
from marketframe import frames
from marketframe import indicators as ind
from marketframe.exceptions import InvalidParams
from marketframe.frames import MissingColumnsError
from marketframe.frames._order import UnorderedRowsError

BACKENDS = ["pandas", "polars", "lazy"]


def candles(symbols: dict[str, int], seed: int = 0, shuffle: bool = True) -> pd.DataFrame:
    """A long frame: `length` daily bars per symbol, a few dates skipped, rows shuffled."""
    rng = np.random.default_rng(seed)
    parts = []
    for i, (sym, length) in enumerate(symbols.items()):
        days = pd.bdate_range("2020-01-01", periods=length + 5, tz="Asia/Taipei")
        days = days.delete(rng.choice(length + 5, 5, replace=False))  # missing dates
        close = np.round(50.0 * (i + 1) + np.cumsum(rng.normal(0, 1, length)), 2)
        spread = np.round(np.abs(rng.normal(0, 0.5, length)), 2)
        parts.append(
            pd.DataFrame(
                {
                    "symbol": sym,
                    "date": days,
                    "open": close,
                    "high": close + spread,
                    "low": close - spread,
                    "close": close,
                    "volume": rng.integers(1, 10_000, length),
                }
            )
        )
    df = pd.concat(parts, ignore_index=True)
    if shuffle:
        df = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return df


def to_backend(df: pd.DataFrame, backend: str) -> Any:
    if backend == "pandas":
        return df
    p = pl.from_pandas(df)
    return p.lazy() if backend == "lazy" else p


def to_pandas(out: Any, backend: str) -> pd.DataFrame:
    if backend == "pandas":
        assert isinstance(out, pd.DataFrame)
        return out
    if backend == "lazy":
        assert isinstance(out, pl.LazyFrame)
        out = out.collect()
    assert isinstance(out, pl.DataFrame)
    return out.to_pandas()


def expected(
    df: pd.DataFrame, kernel: Callable[[pd.DataFrame], dict[str, np.ndarray]]
) -> pd.DataFrame:
    """The kernel run on each symbol's date-sorted rows, aligned back to the frame's rows."""
    out = pd.DataFrame(index=df.index)
    groups = df.groupby("symbol", sort=False) if "symbol" in df else [(None, df)]
    for _, g in groups:
        g = g.sort_values("date", kind="stable")
        for name, values in kernel(g).items():
            out.loc[g.index, name] = values
    return out


CASES: dict[str, tuple[Callable[[Any], Any], Callable[[pd.DataFrame], dict[str, np.ndarray]]]] = {
    "sma": (lambda f: f.md.sma(5), lambda g: {"sma_5": ind.sma(g["close"], 5)}),
    "ema": (lambda f: f.md.ema(4), lambda g: {"ema_4": ind.ema(g["close"], 4)}),
    "rsi": (lambda f: f.md.rsi(6), lambda g: {"rsi_6": ind.rsi(g["close"], 6)}),
    "rsi_volume": (
        lambda f: f.md.rsi(3, column="volume", convention="rsi_seed=first"),
        lambda g: {"volume_rsi_3": ind.rsi(g["volume"], 3, convention="rsi_seed=first")},
    ),
    "macd": (
        lambda f: f.md.macd(3, 7, 4),
        lambda g: dict(
            zip(
                ["macd_3_7_4", "macd_signal_3_7_4", "macd_hist_3_7_4"],
                ind.macd(g["close"], 3, 7, 4),
                strict=True,
            )
        ),
    ),
    "bbands": (
        lambda f: f.md.bbands(6, 2.5, convention="bb_ddof=1"),
        lambda g: dict(
            zip(
                ["bb_upper_6_2.5", "bb_middle_6_2.5", "bb_lower_6_2.5"],
                ind.bbands(g["close"], 6, 2.5, convention="bb_ddof=1"),
                strict=True,
            )
        ),
    ),
    "kdj": (
        lambda f: f.md.kdj(convention="kdj=recursive50"),
        lambda g: dict(
            zip(
                ["kdj_k_9_3_3", "kdj_d_9_3_3", "kdj_j_9_3_3"],
                ind.kdj(g["high"], g["low"], g["close"], convention="kdj=recursive50"),
                strict=True,
            )
        ),
    ),
}


def check(out: pd.DataFrame, df: pd.DataFrame, want: pd.DataFrame) -> None:
    # the user's rows and columns are untouched, in their order; new columns appended
    assert list(out.columns[: len(df.columns)]) == list(df.columns)
    assert list(out.columns[len(df.columns) :]) == list(want.columns)
    pd.testing.assert_frame_equal(
        out[list(df.columns)].reset_index(drop=True), df.reset_index(drop=True), check_dtype=False
    )
    for name in want.columns:
        got = out[name].to_numpy(dtype=float, na_value=np.nan)
        np.testing.assert_allclose(
            got, want[name].to_numpy(dtype=float), rtol=1e-12, atol=1e-10, equal_nan=True
        )
        assert np.isfinite(got).any()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_multi_symbol_long_frame(backend: str, case: str) -> None:
    df = candles({"2330": 60, "0050": 45, "2317": 80})
    call, kernel = CASES[case]
    check(to_pandas(call(to_backend(df, backend)), backend), df, expected(df, kernel))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["sma", "rsi", "macd", "kdj"])
def test_single_symbol_frame(backend: str, case: str) -> None:
    df = candles({"2330": 70}, seed=3).drop(columns="symbol")
    call, kernel = CASES[case]
    check(to_pandas(call(to_backend(df, backend)), backend), df, expected(df, kernel))


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_leak_across_symbol_boundary(backend: str) -> None:
    # A trades near 1000, B near 10: any window or recursion reaching from A into B would
    # pull B's values far from where B alone puts them.
    a = candles({"A": 40}, seed=1, shuffle=False)
    a[["open", "high", "low", "close"]] += 1000.0
    b = candles({"B": 40}, seed=2, shuffle=False)
    df = pd.concat([a, b], ignore_index=True)
    frame = to_backend(df, backend)
    out = to_pandas(frame.md.sma(5).md.rsi(5).md.kdj(5, 3, 3).md.macd(3, 6, 3), backend)
    ob = out[out["symbol"] == "B"]
    assert ob["sma_5"].iloc[:4].isna().all()  # B's own warm-up, not A's tail
    assert ob["rsi_5"].iloc[:5].isna().all()
    np.testing.assert_allclose(ob["sma_5"], ind.sma(b["close"], 5), equal_nan=True)
    np.testing.assert_allclose(ob["rsi_5"], ind.rsi(b["close"], 5), equal_nan=True)
    np.testing.assert_allclose(ob["macd_3_6_3"], ind.macd(b["close"], 3, 6, 3).line, equal_nan=True)
    k = ind.kdj(b["high"], b["low"], b["close"], 5, 3, 3).k
    np.testing.assert_allclose(ob["kdj_k_5_3_3"], k, equal_nan=True)
    # the same rows as one series (no symbol, row order = time order) do leak:
    mixed = to_pandas(to_backend(df.drop(columns=["symbol", "date"]), backend).md.sma(5), backend)
    assert mixed["sma_5"].iloc[40:44].notna().all()
    assert (mixed["sma_5"].iloc[40:44] > 100.0).all()


def test_ragged_symbols_match_the_panel_path() -> None:
    # one long symbol and many short ones takes the one-symbol-at-a-time path
    df = candles({"LONG": 400, **{f"S{i}": 3 + i % 5 for i in range(150)}}, seed=5)
    check(df.md.rsi(6), df, expected(df, CASES["rsi"][1]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_missing_column_lists_available(backend: str) -> None:
    df = candles({"2330": 10}).drop(columns=["high"])
    frame = to_backend(df, backend)
    with pytest.raises(MissingColumnsError) as err:
        frame.md.kdj()
    msg = str(err.value)
    assert "'high'" in msg
    assert "available columns: symbol, date, open, low, close, volume" in msg
    with pytest.raises(MissingColumnsError, match="'adj_close'.*available columns: symbol"):
        frame.md.sma(5, column="adj_close")
    with pytest.raises(MissingColumnsError, match="'ts'"):
        frame.md.rsi(5, date="ts")  # a non-default name must exist


@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_form_returns_same_type(backend: str) -> None:
    df = candles({"2330": 30, "2317": 30})
    frame = to_backend(df, backend)
    for fn in (frames.sma, frames.ema, frames.rsi, frames.macd, frames.bbands, frames.kdj):
        out = fn(frame)
        assert type(out) is type(frame)
    pd.testing.assert_frame_equal(
        to_pandas(frames.rsi(frame, 6), backend), to_pandas(frame.md.rsi(6), backend)
    )
    with pytest.raises(TypeError, match="expected a pandas DataFrame"):
        frames.sma([1.0, 2.0])  # type: ignore[type-var]


def test_lazy_frame_stays_lazy_and_checks_columns_early() -> None:
    df = candles({"2330": 50, "2317": 40})
    lf = pl.from_pandas(df).lazy()
    out = lf.md.bbands().md.rsi()  # type: ignore[attr-defined]
    assert isinstance(out, pl.LazyFrame)
    names = out.collect_schema().names()
    assert names[-4:] == ["bb_upper_20_2", "bb_middle_20_2", "bb_lower_20_2", "rsi_14"]
    # a filter after the indicator must not be pushed before it (it would change the series)
    last = out.filter(pl.col("date") == pl.col("date").max()).collect()
    eager = pl.from_pandas(df).md.bbands().md.rsi()  # type: ignore[attr-defined]
    want = eager.filter(pl.col("date") == pl.col("date").max())
    assert last.sort("symbol").equals(want.sort("symbol"))


def test_polars_nulls_are_gaps_and_results_are_null() -> None:
    df = candles({"2330": 40}, shuffle=False)
    p = pl.from_pandas(df).with_columns(
        pl.when(pl.int_range(pl.len()) == 20).then(None).otherwise(pl.col("close")).alias("close")
    )
    out = p.md.sma(3)  # type: ignore[attr-defined]
    col = out.get_column("sma_3")
    assert col.null_count() == 2 + 3  # warm-up, then bars 20..22 (the gap restarts the window)
    assert col.is_nan().sum() == 0
    x = df["close"].to_numpy().copy()
    x[20] = np.nan
    np.testing.assert_allclose(col.to_numpy(), ind.sma(x, 3), equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_plain_dates_and_categorical_symbols(backend: str) -> None:
    df = candles({"2330": 30, "0050": 25})
    df["date"] = [d.date() for d in df["date"]]
    df["symbol"] = df["symbol"].astype("category")
    frame: Any = df
    if backend != "pandas":
        frame = pl.from_pandas(df).with_columns(pl.col("date").cast(pl.Date))
        frame = frame.lazy() if backend == "lazy" else frame
    assert isinstance(df["date"].iloc[0], dt.date)
    out = to_pandas(frame.md.ema(5), backend)
    want = expected(
        df.assign(symbol=df["symbol"].astype(str)), lambda g: {"ema_5": ind.ema(g["close"], 5)}
    )
    np.testing.assert_allclose(
        out["ema_5"].to_numpy(dtype=float, na_value=np.nan), want["ema_5"], equal_nan=True
    )


# --- time order (issue 11.7): never a silently reversed series ---------------------------


def newest_first(symbols: dict[str, int]) -> pd.DataFrame:
    """Candles as the service sends them: newest first (symbol by symbol)."""
    df = candles(symbols, seed=7, shuffle=False)
    return df.sort_values(["symbol", "date"], ascending=[True, False]).reset_index(drop=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_newest_first_with_a_date_index_is_computed_along_time(case: str) -> None:
    df = newest_first({"2330": 60, "0050": 45})
    call, kernel = CASES[case]
    want = expected(df, kernel)
    out = call(df.set_index("date")).reset_index()
    # computed along time, aligned back to the (newest-first) rows
    check(out[list(df.columns) + list(want.columns)], df, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["time", "timestamp"])
def test_other_time_column_names_order_the_rows(backend: str, name: str) -> None:
    df = newest_first({"2330": 40, "2317": 30})
    want = expected(df, CASES["rsi"][1])
    renamed = df.rename(columns={"date": name})
    out = to_pandas(CASES["rsi"][0](to_backend(renamed, backend)), backend)
    np.testing.assert_allclose(
        out["rsi_6"].to_numpy(dtype=float, na_value=np.nan), want["rsi_6"], equal_nan=True
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_string_dates_are_ordered_as_times(backend: str) -> None:
    df = newest_first({"2330": 40})
    want = expected(df, CASES["sma"][1])
    df["date"] = df["date"].dt.strftime("%Y-%m-%d")
    out = to_pandas(CASES["sma"][0](to_backend(df, backend)), backend)
    np.testing.assert_allclose(
        out["sma_5"].to_numpy(dtype=float, na_value=np.nan), want["sma_5"], equal_nan=True
    )


def test_rows_out_of_order_without_any_time_information_raise() -> None:
    df = newest_first({"2330": 40}).drop(columns="date")
    shuffled = df.sample(frac=1.0, random_state=1)  # index no longer ascending
    with pytest.raises(UnorderedRowsError, match="date=None"):
        shuffled.md.sma(5)
    assert issubclass(UnorderedRowsError, InvalidParams)
    # declared: the row order is the time order
    out = shuffled.md.sma(5, date=None)
    np.testing.assert_allclose(out["sma_5"], ind.sma(shuffled["close"], 5), equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unusable_time_columns_raise_typed_errors(backend: str) -> None:
    df = candles({"2330": 20}, shuffle=False)
    bad = df.assign(date=["soon"] * len(df))
    with pytest.raises(InvalidParams, match="not dates or times"):
        to_pandas(to_backend(bad, backend).md.sma(5), backend)
    holes = df.assign(date=df["date"].where(df.index != 3))
    with pytest.raises(InvalidParams, match="has 1 missing value"):
        to_pandas(to_backend(holes, backend).md.sma(5), backend)


@pytest.mark.parametrize("rows", [[0], [0, 1], [4, 5, 6], [19]], ids=str)
def test_missing_datetimes_anywhere_are_counted(rows: list[int]) -> None:
    # NaT is found from where the time drops (and row 0), not by a pass over the column
    df = candles({"2330": 20}, shuffle=False)
    holes = df.assign(date=df["date"].where(~df.index.isin(rows)))
    with pytest.raises(InvalidParams, match=f"has {len(rows)} missing value"):
        holes.md.sma(5)
    with pytest.raises(InvalidParams, match=f"has {len(rows)} missing value"):
        holes.set_index("date").md.sma(5)


def test_polars_lazy_newest_first_matches_eager_and_pandas() -> None:
    df = newest_first({"2330": 50, "2317": 50, "0050": 50})
    want = df.md.macd(3, 7, 4).md.kdj()
    lazy = pl.from_pandas(df).lazy().md.macd(3, 7, 4).md.kdj().collect()
    for name in ["macd_3_7_4", "macd_signal_3_7_4", "kdj_k_9_3_3", "kdj_d_9_3_3"]:
        np.testing.assert_allclose(
            lazy.get_column(name).to_numpy(), want[name].to_numpy(), equal_nan=True
        )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["date-major", "shuffled"])
def test_unsorted_frames_with_many_distinct_times(backend: str, layout: str) -> None:
    # 40,000 distinct minute bars: too many for the small-integer sort, so the general one
    rng = np.random.default_rng(4)
    n = 20_000
    times = pd.date_range("2026-01-05 09:00", periods=2 * n, freq="min")
    df = pd.DataFrame(
        {
            "symbol": np.repeat(["A", "B"], n),
            "date": np.r_[times[0::2], times[1::2]],
            "close": 100.0 + np.cumsum(rng.normal(0, 1, 2 * n)),
        }
    )
    want = expected(df, CASES["ema"][1])
    if layout == "date-major":
        df = df.sort_values("date", kind="stable")
    else:
        df = df.sample(frac=1.0, random_state=4)
    want = want.loc[df.index]
    out = to_pandas(CASES["ema"][0](to_backend(df.reset_index(drop=True), backend)), backend)
    np.testing.assert_allclose(out["ema_4"].to_numpy(dtype=float), want["ema_4"], equal_nan=True)


@pytest.mark.parametrize("gap", [False, True], ids=["segmented", "nan-run"])
@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_macd_and_bbands_match_talib_per_symbol(backend: str, gap: bool) -> None:
    # the whole-column kernels (no NaN) or the panel path (a NaN run), on shuffled rows of
    # symbols of very different lengths and price levels, equal TA-Lib on each symbol's
    # date-sorted closes after its warm-up, mapped back to the user's row order
    talib = pytest.importorskip("talib")
    rng = np.random.default_rng(5)
    lengths = [40, 1500, 34, 700, 35, 1200, 90]
    levels = [1e5, 0.02, 3e3, 0.5, 7e4, 12.0, 1e-2]
    parts = []
    for i, (n, v) in enumerate(zip(lengths, levels, strict=True)):
        close = v * np.exp(np.cumsum(rng.normal(0, 0.02, n)))
        if gap and i == 3:
            close[300:310] = np.nan
        parts.append(
            pd.DataFrame(
                {
                    "symbol": f"S{i}",
                    "date": pd.bdate_range("2015-01-01", periods=n),
                    "close": close,
                }
            )
        )
    df = pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=1)
    out = to_pandas(to_backend(df, backend).md.macd().md.bbands(), backend)
    out.index = df.index
    for i, v in enumerate(levels):
        rows = df.index[df["symbol"] == f"S{i}"]
        g = out.loc[rows].sort_values("date")
        c = g["close"].to_numpy()
        want = {
            "macd": talib.MACD(c, 12, 26, 9),
            "bb": talib.BBANDS(c, 20, 2, 2, talib.MA_Type.SMA),
        }
        got = {
            "macd": [g[f"{p}_12_26_9"] for p in ("macd", "macd_signal", "macd_hist")],
            "bb": [g[f"bb_{p}_20_2"] for p in ("upper", "middle", "lower")],
        }
        for key in want:
            for w, o in zip(want[key], got[key], strict=True):
                o = o.to_numpy(dtype=float, na_value=np.nan)
                ok = ~np.isnan(w)  # past TA-Lib's warm-up and the NaN run
                assert ok.sum() > 0 or len(c) < 34
                np.testing.assert_allclose(o[ok], w[ok], rtol=0, atol=1e-9 * v * 3)
