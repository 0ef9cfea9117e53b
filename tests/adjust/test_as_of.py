"""``adjust=..., as_of=day``: prices adjusted with the corporate actions that had happened by
``day``, which must be exactly what a sandbox started on ``day`` adjusts them to; and
``marketframe.adjust.factor_table``, one row per action as the adjustment applies it."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet  # noqa: F401 - pa.parquet
import pytest

import marketframe as mf
from marketframe import Store
from marketframe.adjust import FACTOR_TABLE, factor_rows, factor_table
from marketframe.endpoints import get
from marketframe.exceptions import InvalidParams

CANDLES = "stock.historical.candles"
SPLIT = dt.date(2025, 6, 18)  # 0050's 1:4 split (docs/adjusted.md)


@pytest.fixture
def no_request(sandbox):  # type: ignore[no-untyped-def]
    before = sandbox.requests_served
    yield
    assert sandbox.requests_served == before


def _then(make_sandbox, day: dt.date):  # type: ignore[no-untyped-def]
    """A sandbox started after the close of ``day``: it knows nothing later."""
    return make_sandbox(now=f"{day}T14:00:00+08:00")


def _dividend_day(client, symbol: str) -> dt.date:  # type: ignore[no-untyped-def]
    """An ex-dividend day of ``symbol`` in 2025 (from the factor table itself)."""
    ft = factor_table(symbol, client=client, start="2025-01-01", as_of="2025-12-31")
    return ft[ft.kind == "dividend"].date.iloc[0].date()


@pytest.mark.parametrize("mode", ["splits", "all"])
@pytest.mark.parametrize("day", [SPLIT - dt.timedelta(days=1), SPLIT, dt.date(2025, 8, 29)])
def test_as_of_a_day_equals_a_sandbox_started_that_day(client, make_sandbox, mode, day):
    ask = {"from_": "2025-01-02", "to": day.isoformat(), "sort": "asc", "adjust": mode}
    got = client.stock.historical.candles(["0050", "2330"], **ask, as_of=day)
    with _then(make_sandbox, day) as (_, then):
        want = then.stock.historical.candles(["0050", "2330"], **ask)
    pd.testing.assert_frame_equal(got, want)
    if mode == "all" or day < SPLIT:  # and not what is known now: later actions move them
        now = client.stock.historical.candles(["0050", "2330"], **ask)
        assert (now.close - got.close).abs().max() > 0.01


def test_an_announced_dividend_is_not_applied_as_of_the_day_before(client, make_sandbox):
    ex = _dividend_day(client, "2330")
    day = ex - dt.timedelta(days=1)
    ask = {"from_": "2025-01-02", "to": day.isoformat(), "sort": "asc", "adjust": "all"}
    with _then(make_sandbox, day) as (_, then):
        listed = then.stock.corporate_actions.dividends(start_date=day, end_date=ex)
        want = then.stock.historical.candles("2330", **ask)
    row = listed[(listed.symbol == "2330") & (listed.date == pd.Timestamp(ex))]
    assert len(row) == 1 and row.previous_close.isna().all()  # announced: no price yet
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # announced is not "not applied": no warning
        got = client.stock.historical.candles("2330", **ask, as_of=day)
        after = client.stock.historical.candles("2330", **ask, as_of=ex)
    pd.testing.assert_frame_equal(got, want)
    r = factor_table("2330", ex, client=client, start=ex).factor.iloc[0]
    assert np.allclose(after.close, got.close * r, rtol=1e-12)  # the day after: applied


def test_load_and_download_take_as_of_the_same_way(client):
    ask = {"start": "2025-06-02", "end": "2025-06-30", "adjust": "all", "as_of": "2025-06-17"}
    loaded = client.load(CANDLES, symbol="0050", sort="asc", **ask)
    fetched = mf.download("0050", **ask, client=client, fields=["open", "high", "low", "close"])
    assert np.allclose(loaded.close, fetched.close.to_numpy(), rtol=1e-12)
    # bars after as_of are as traded: no action after as_of applies to them
    raw = client.load(CANDLES, symbol="0050", sort="asc", start="2025-06-18", end="2025-06-30")
    assert np.array_equal(loaded.close.iloc[-len(raw) :].to_numpy(), raw.close.to_numpy())
    assert loaded.close.iloc[0] > 40  # before the split, not divided by 4 as of the 17th


def test_store_reads_adjust_as_of_the_moment_they_name(tmp_path, client):
    span = ("2025-06-02", "2025-06-30")
    with Store(tmp_path / "s", client) as st:
        st.sync(CANDLES, "0050", *span, progress=False)
        st.snapshot("june")
        held = st.read(CANDLES, "0050", *span, as_of="june", backend="arrow")
        got = st.read(CANDLES, "0050", *span, as_of="june", adjust="all", backend="arrow")
        # a snapshot of this machine's today: the actions known on that day (all, here)
        day = dt.datetime.now(dt.UTC).astimezone(dt.timezone(dt.timedelta(hours=8))).date()
        assert got.equals(client.adjust_prices(held, "all", as_of=day))
        assert got.equals(st.read(CANDLES, "0050", *span, adjust="all", backend="arrow"))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda c: c.stock.historical.candles("0050", as_of="2025-06-17"), ["without adjust"]),
        (
            lambda c: c.stock.historical.candles("0050", adjust="all", as_of="June"),
            ["as_of", "not a date"],
        ),
        (
            lambda c: c.load("stock.intraday.quote", symbol="0050", as_of="2025-06-17"),
            ["as_of", "only a parameter of stock.historical.candles"],
        ),
        (lambda c: mf.download("0050", as_of="2025-06-17", client=c), ["without adjust"]),
        (lambda c: factor_table("0050", as_of="2025-13-01", client=c), ["as_of"]),
        (lambda c: factor_table(["0050", 7], client=c), ["symbols", "non-empty list"]),
        (lambda c: factor_table("0050", mode="dividends", client=c), ["'splits' or 'all'"]),
        (
            lambda c: factor_table("0050", "2024-01-01", start="2025-01-01", client=c),
            ["after as_of"],
        ),
        (lambda c: factor_table("0050", client=c, backend="numpy"), ["backend"]),
    ],
)
def test_bad_as_of_arguments_raise_before_any_request(client, no_request, call, words):
    with pytest.raises(InvalidParams) as err:
        call(client)
    for w in words:
        assert w in str(err.value)


def test_the_factor_table_as_of_a_day_equals_a_sandbox_started_that_day(client, make_sandbox):
    got = factor_table(["0050", "6446", "8069"], SPLIT, client=client)
    with _then(make_sandbox, SPLIT) as (_, then):
        want = factor_table(["0050", "6446", "8069"], client=then)
    pd.testing.assert_frame_equal(got, want)
    assert got.date.dtype == "datetime64[us]" and got.date.max() <= pd.Timestamp(SPLIT)
    split = got[(got.symbol == "0050") & (got.kind == "capital")]
    assert split.date.tolist() == [pd.Timestamp(SPLIT)] and split.factor.tolist() == [0.25]
    assert split.ratio.tolist() == [0.25]  # volume before it is multiplied by 4
    assert not got[["missing_previous_close", "factor_out_of_range", "non_session"]].any().any()


def test_the_cumulative_factor_is_what_adjusted_prices_apply(client):
    ft = factor_table("2330", "2025-12-31", client=client, start="2025-01-01", backend="polars")
    assert isinstance(ft, pl.DataFrame)
    assert dict(zip(ft.columns, ft.dtypes, strict=True))["date"] == pl.Date
    raw = client.stock.historical.candles("2330", from_="2025-01-02", to="2025-12-31", sort="asc")
    adj = client.stock.historical.candles(
        "2330", from_="2025-01-02", to="2025-12-31", sort="asc", adjust="all", as_of="2025-12-31"
    )
    days = raw.date.dt.date
    for row in ft.iter_rows(named=True):  # the last bar before each action
        before = raw[days < row["date"]].index[-1]
        assert adj.close[before] == pytest.approx(raw.close[before] * row["cumulative_factor"])
        after = ft.filter(pl.col("date") > row["date"])["factor"].product()
        assert row["cumulative_factor"] == pytest.approx(row["factor"] * (after or 1.0))


def _table(name: str, rows: list[dict[str, object]]) -> pa.Table:
    schema = get(name).schema.arrow()
    return pa.Table.from_pylist([{**dict.fromkeys(schema.names), **r} for r in rows], schema=schema)


def test_the_factor_table_flags_what_the_adjustment_cannot_apply():
    capital = _table(
        "stock.corporate_actions.capital_changes",
        [{"symbol": "1111", "effective_date": dt.date(2025, 6, 14), "adjustment_factor": 0.5}],
    )  # a Saturday
    dividends = _table(
        "stock.corporate_actions.dividends",
        [
            {"symbol": "1111", "date": dt.date(2025, 7, 1), "cash_dividend": 2.0},
            {
                "symbol": "1111",
                "date": dt.date(2025, 8, 1),
                "previous_close": 10.0,
                "cash_dividend": -5.0,
            },
            {
                "symbol": "1111",
                "date": dt.date(2025, 9, 1),
                "previous_close": 50.0,
                "cash_dividend": 1.0,
            },
        ],
    )
    t = factor_rows(capital, dividends, "all", dt.date(2025, 12, 31))
    assert t.schema == FACTOR_TABLE
    got = t.to_pylist()
    assert [r["kind"] for r in got] == ["capital", "dividend", "dividend", "dividend"]
    assert [r["non_session"] for r in got] == [True, False, False, False]
    assert [r["missing_previous_close"] for r in got] == [False, True, False, False]
    assert [r["factor_out_of_range"] for r in got] == [False, False, True, False]
    assert np.isnan(got[1]["factor"]) and got[2]["factor"] == pytest.approx(1.5)
    # flagged actions count 1: only the split and the last dividend multiply
    assert [r["cumulative_factor"] for r in got] == pytest.approx([0.5 * 0.98, 0.98, 0.98, 0.98])


@pytest.mark.parametrize("command", ["load", "download"])
def test_the_commands_take_as_of(sandbox, api_key, monkeypatch, tmp_path, capsys, client, command):
    from marketframe.cli import main

    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sandbox.base_url)
    out = tmp_path / "x.parquet"
    span = ["--start", "2025-06-02", "--end", "2025-06-30"]
    if command == "load":
        argv = ["load", CANDLES, "--symbol", "0050", "--from", "2025-06-02", "--to", "2025-06-30"]
    else:
        argv = ["download", "0050", *span]
    assert main([*argv, "--adjust", "all", "--as-of", "2025-06-17", "-o", str(out)]) == 0
    got = pa.parquet.read_table(out).sort_by("date").column("close").to_numpy()
    want = client.stock.historical.candles(
        "0050", from_="2025-06-02", to="2025-06-30", sort="asc", adjust="all", as_of="2025-06-17"
    )
    assert np.allclose(got, want.close.to_numpy(), rtol=1e-12)
    capsys.readouterr()
    assert main([*argv, "--as-of", "2025-06-17", "-o", str(out)]) != 0
    assert "without adjust" in capsys.readouterr().err


def test_the_factor_table_without_a_client_says_what_to_pass() -> None:
    from marketframe.exceptions import InvalidParams

    with pytest.raises(InvalidParams, match="Client.sandbox"):
        factor_table("0050", as_of="2025-12-31")
