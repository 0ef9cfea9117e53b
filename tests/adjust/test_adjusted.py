"""Adjusted prices end to end on the sandbox (issue 12, "Done when").

* adjusted closes are continuous across 0050's 1:4 split and every ex-dividend date of every
  equity in the sandbox, from 2010 to the sandbox's today;
* ``adjust="all"`` equals the service's own ``adjusted=true`` candles (the sandbox computes
  them independently, forward, from its market's events) within ``TOLERANCE``;
* the store keeps raw prices and adjusts on read.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marketframe import Client, Store
from marketframe.adjust import TOLERANCE
from marketframe.sandbox._universe import EQUITIES

CANDLES = "stock.historical.candles"
START, END = dt.date(2010, 1, 1), dt.date(2026, 11, 20)  # END: the session sandbox's today
SYMBOLS = [e.symbol for e in EQUITIES]
LIMIT = 0.10  # the +/-10% daily price limit


@pytest.fixture(scope="module")
def store(client: Client, tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = Store(tmp_path_factory.mktemp("adjusted") / "store", client)
    st.sync(CANDLES, SYMBOLS, START, END)
    return st


@pytest.fixture(scope="module")
def actions(client: Client) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every capital change and every dividend that has happened in the sandbox."""
    from marketframe.endpoints import split as windows

    caps, divs = [], []
    for a, b in windows(START, END):
        caps.append(client.stock.corporate_actions.capital_changes(start_date=a, end_date=b))
        divs.append(client.stock.corporate_actions.dividends(start_date=a, end_date=b))
    div = pd.concat(divs, ignore_index=True)
    return pd.concat(caps, ignore_index=True), div[div.previous_close.notna()]


def _days(df: pd.DataFrame) -> pd.DataFrame:
    """``date`` as ``datetime.date`` values, whatever the frame's date dtype."""
    return df.assign(date=pd.to_datetime(df["date"].astype("string")).dt.date)


def _moves(df: pd.DataFrame) -> pd.DataFrame:
    """Day-over-day close moves per symbol, oldest first."""
    df = _days(df).sort_values(["symbol", "date"]).reset_index(drop=True)
    df["move"] = df.groupby("symbol")["close"].pct_change()
    return df.dropna(subset=["move"])


def _event_days(actions: tuple[pd.DataFrame, pd.DataFrame]) -> set[tuple[str, dt.date]]:
    caps, divs = actions
    day = lambda d: pd.Timestamp(d).date()  # noqa: E731 -- whatever the date dtype
    return {(s, day(d)) for s, d in zip(caps.symbol, caps.effective_date, strict=True)} | {
        (s, day(d)) for s, d in zip(divs.symbol, divs.date, strict=True)
    }


def test_the_sandbox_has_0050s_split_and_ex_dividend_dates_of_every_kind(actions):
    caps, divs = actions
    split = caps[caps.symbol == "0050"]
    assert split.action_type.tolist() == ["etf_split_or_merge"]
    assert split.effective_date.tolist() == [pd.Timestamp("2025-06-18")]
    assert split.adjustment_factor.tolist() == [0.25]  # 1:4
    assert {"etf_split_or_merge", "capital_reduction", "par_value_change"} <= set(caps.action_type)
    assert (divs.symbol == "0050").sum() >= 15  # a cash dividend every July
    assert ((divs.stock_dividend_shares > 0) & (divs.cash_dividend == 0)).any()  # stock only
    assert ((divs.stock_dividend_shares > 0) & (divs.cash_dividend > 0)).any()  # both


def test_adjusted_closes_are_continuous_across_every_corporate_action(store, actions):
    raw = _moves(store.read(CANDLES, SYMBOLS, START, END))
    adj = _moves(store.read(CANDLES, SYMBOLS, START, END, adjust="all"))
    events = _event_days(actions)
    at_event = np.array([(s, d) in events for s, d in zip(adj.symbol, adj.date, strict=True)])
    assert at_event.sum() >= 0.9 * len(events)  # every event inside the history is checked
    # the raw series jumps at corporate actions (0050's split: -75%)...
    raw_0050 = raw[(raw.symbol == "0050") & (raw.date == dt.date(2025, 6, 18))]
    assert raw_0050.move.iloc[0] < -0.7
    # ...the adjusted one moves there no more than the limit, or than the raw series moves on
    # its other days (the emerging board has no limit)
    for sym, moves in adj[at_event].groupby("symbol"):
        quiet = raw[(raw.symbol == sym)]
        quiet = quiet[[(sym, d) not in events for d in quiet.date]]
        bound = max(LIMIT, quiet.move.abs().max()) + 0.005  # 0.5%: ticks of the reference price
        worst = moves.move.abs().max()
        assert worst <= bound, (sym, moves.loc[moves.move.abs().idxmax(), "date"], worst)
    # away from corporate actions, adjusted moves are the raw moves
    calm = adj[~at_event].merge(raw, on=["symbol", "date"], suffixes=("", "_raw"))
    np.testing.assert_allclose(calm.move, calm.move_raw, rtol=1e-9, atol=1e-12)


def test_adjust_all_equals_the_services_adjusted_candles_within_the_tolerance(client, store):
    symbols = SYMBOLS  # every equity: every kind of action, the emerging board, suspensions
    ours = store.read(CANDLES, symbols, START, END, adjust="all")
    from marketframe.endpoints import split as windows

    theirs = pd.concat(
        [
            client.stock.historical.candles(symbols, from_=a, to=b, adjusted=True)
            for a, b in windows(START, END)
        ],
        ignore_index=True,
    )
    both = ours.merge(theirs, on=["symbol", "date"], suffixes=("", "_service"))
    assert len(both) == len(ours) == len(theirs)
    for col in ("open", "high", "low", "close"):
        err = (both[col] - both[f"{col}_service"]).abs()
        allowed = TOLERANCE.abs + TOLERANCE.rel * both[f"{col}_service"].abs()
        assert (err <= allowed).all(), both.loc[(err - allowed).idxmax(), ["symbol", "date"]]
    # and the raw prices are far from it before 0050's split: the check can fail
    raw = store.read(CANDLES, "0050", "2025-06-10", "2025-06-10")
    day = both[(both.symbol == "0050") & (both.date == pd.Timestamp("2025-06-10"))]
    assert abs(raw.close.iloc[0] - day.close.iloc[0]) > 30


def test_split_divides_old_prices_and_multiplies_old_volume_by_four(client, store):
    raw = store.read(CANDLES, "0050", "2025-06-02", "2025-06-19")
    adj = client.stock.historical.candles(
        "0050", from_="2025-06-02", to="2025-06-19", adjust="splits", sort="asc"
    )
    raw = raw.sort_values("date").reset_index(drop=True)
    before = raw.date < pd.Timestamp("2025-06-18")
    np.testing.assert_allclose(adj.close[before], raw.close[before] / 4, rtol=1e-12)
    np.testing.assert_allclose(adj.change[before], raw.change[before] / 4, rtol=1e-12)
    assert (adj.volume[before] == raw.volume[before] * 4).all()
    # from the split on, prices are as traded ("splits" leaves 0050's later dividends out)
    assert (
        adj[~before][["close", "volume"]].values == raw[~before][["close", "volume"]].values
    ).all()


def test_store_read_and_load_agree_and_the_store_keeps_raw_prices(client, store):
    loaded = client.stock.historical.candles(
        ["0050", "2330"], from_="2024-11-21", to="2025-11-20", adjust="all"
    )
    read = store.read(CANDLES, ["0050", "2330"], "2024-11-21", "2025-11-20", adjust="all")
    key = ["symbol", "date"]
    loaded = loaded.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(loaded[read.columns], read, check_dtype=True)
    raw = store.read(CANDLES, "0050", "2025-06-10", "2025-06-10")
    assert raw.close.iloc[0] > 50  # the stored price is the traded one


def test_polars_frames_are_adjusted_too(store):
    import polars as pl

    got = store.read(CANDLES, "0050", "2025-06-10", "2025-06-18", adjust="splits", backend="polars")
    assert isinstance(got, pl.DataFrame)
    raw = store.read(CANDLES, "0050", "2025-06-10", "2025-06-18", backend="polars")
    # the day before the 1:4 split: the raw close divided by four
    assert got.sort("date")["close"].to_list()[0] == pytest.approx(
        raw.sort("date")["close"].to_list()[0] / 4, abs=0.01
    )


def test_a_new_corporate_action_needs_no_sync(make_sandbox: Any, tmp_path: Path):
    """The store holds raw prices: an ex-dividend day after the sync changes the adjusted
    prices read from the same files, and the coverage is untouched."""

    with make_sandbox(now="2026-07-01T14:00:00+08:00") as (sb, c):
        st = Store(tmp_path / "s", c)
        st.sync(CANDLES, "0050", "2026-01-01", "2026-07-01")
        before = st.read(CANDLES, "0050", "2026-01-01", "2026-06-30", adjust="all")
        coverage = st.coverage()
        sb.advance(days=30)  # past 0050's July ex-dividend day
        after = st.read(CANDLES, "0050", "2026-01-01", "2026-06-30", adjust="all")
        raw = st.read(CANDLES, "0050", "2026-01-01", "2026-06-30")
        pd.testing.assert_frame_equal(st.coverage(), coverage)
    ratio = (after.close / before.close).to_numpy()
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)  # one factor for every older day
    assert 0.9 < ratio[0] < 1  # one new cash dividend
    assert (raw.close > after.close).all()


def test_the_load_command_adjusts_with_adjust(
    tmp_path: Path,
    sandbox,
    api_key,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
):
    import argparse

    import pyarrow.parquet as pq

    from marketframe.cli import _load as _load_cli

    monkeypatch.setenv("MARKETFRAME_API_KEY", api_key)
    parser = argparse.ArgumentParser(prog="marketframe")
    _load_cli.register(parser.add_subparsers(dest="command"))
    out = {}
    for mode in ("splits", None):
        path = tmp_path / f"{mode}.parquet"
        argv = [
            "load",
            CANDLES,
            "--symbol",
            "0050",
            "--from",
            "2025-06-02",
            "--to",
            "2025-06-10",
            "--out",
            str(path),
            "--base-url",
            sandbox.base_url,
        ]
        args = parser.parse_args(argv + (["--adjust", mode] if mode else []))
        assert args.func(args) == 0
        out[mode] = pq.read_table(path).to_pandas().sort_values("date").close.to_numpy()
    np.testing.assert_allclose(out["splits"], out[None] / 4, rtol=1e-12)


def test_the_tree_call_shows_adjust(client: Client):
    import inspect

    call = client.stock.historical.candles
    assert "adjust" in inspect.signature(call).parameters
    assert "adjust (str, optional) one of splits, all" in (call.__doc__ or "")


def test_adjust_takes_the_glossarys_start_and_end(client):
    """``start``/``end`` (docs/glossary.md) work with ``adjust=`` as ``from_``/``to`` do."""
    named = client.stock.historical.candles(
        "0050", start="2025-06-02", end="2025-06-30", adjust="splits"
    )
    wire = client.stock.historical.candles(
        "0050", from_="2025-06-02", to="2025-06-30", adjust="splits"
    )
    assert len(named) > 10
    pd.testing.assert_frame_equal(named, wire)


def test_the_services_day_decides_which_dividends_have_happened(make_sandbox: Any) -> None:
    """A service whose day is behind this machine's lists a coming dividend as announced
    (no previous close): it has not happened, so it is neither applied nor reported as a
    past dividend that could not be applied; once the service's day passes it, it is."""
    import warnings

    from marketframe.adjust import ActionNotApplied

    with make_sandbox(now="2026-07-01T14:00:00+08:00") as (sb, c):
        args = {"symbol": "0050", "from_": "2026-06-01", "to": "2026-06-30"}
        raw = c.load(CANDLES, **args)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ActionNotApplied)
            before = c.load(CANDLES, adjust="all", **args)
        pd.testing.assert_series_equal(before["close"], raw["close"])
        sb.advance(days=30)  # past 0050's ex-dividend day of 2026-07-17
        with warnings.catch_warnings():
            warnings.simplefilter("error", ActionNotApplied)
            after = c.load(CANDLES, adjust="all", **args)
    ratio = (after["close"] / raw["close"]).to_numpy()
    assert 0.9 < ratio[0] < 1
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
