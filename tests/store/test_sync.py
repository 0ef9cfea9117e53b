"""Exact incremental sync against a real sandbox: requests counted on the server side."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from marketframe import InvalidParams
from marketframe.client import Client
from marketframe.sandbox import Sandbox
from marketframe.store import NotSynced, Store, SyncError

from ._helpers import NOW, arrow_equal
from .conftest import Place

SYMS = ["2330", "0050", "6669"]


@pytest.fixture
def own_sb() -> Sandbox:
    with Sandbox(seed=3, now=NOW, rate_limit=None) as s:
        yield s


def _store(sb: Sandbox, path: Path, **kw: object) -> Store:
    return Store(path, api_key=sb.api_key, base_url=sb.base_url, **kw)  # type: ignore[arg-type]


def test_second_sync_is_free_and_one_trading_day_costs_one_request_per_symbol(
    own_sb: Sandbox, place: Place
) -> None:
    sb = own_sb
    with place.store("s", api_key=sb.api_key, base_url=sb.base_url) as st:
        first = st.sync("stock.historical.candles", SYMS, "2012-03-01", "2026-11-19")
        # 2012-03-01..2026-11-19: 15 windows for 2330 and 0050, fewer for 6669 (listed 2019)
        assert first.ok and first.requests == first.windows_fetched == 45
        served = sb.requests_served
        again = st.sync("stock.historical.candles", SYMS, "2012-03-01", "2026-11-19")
        assert sb.requests_served == served and again.requests == 0
        assert again.windows_skipped == 45 and again.rows_written == 0
        # a range reaching today: only the open tail (today) is fetched, once per symbol
        st.sync("stock.historical.candles", SYMS, "2012-03-01", "2026-11-20")
        served = sb.requests_served
        st.sync("stock.historical.candles", SYMS, "2012-03-01", "2026-11-20")
        assert sb.requests_served - served == len(SYMS)  # today is not final: refetched
        sb.advance(trading_days=1)  # Friday -> Monday 2026-11-23
        served = sb.requests_served
        sb.stats.record_paths = True
        report = st.sync("stock.historical.candles", SYMS, "2012-03-01", "2026-11-23")
        assert sb.requests_served - served == len(SYMS)
        assert sorted(p.rsplit("/", 1)[-1].split("?")[0] for p in sb.stats.paths[-3:]) == sorted(
            SYMS
        )
        assert report.requests == len(SYMS) and report.windows_fetched == len(SYMS)
        # the store equals a fresh fetch of the last year
        with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
            fresh = c.fetch_table(
                "stock.historical.candles",
                symbol="2330",
                from_="2025-11-24",
                to="2026-11-23",
                timeframe="D",
                sort="asc",
            )
        held = st.read(
            "stock.historical.candles", "2330", "2025-11-24", "2026-11-23", backend="arrow"
        )
        arrow_equal(held, fresh)
        cov = st.coverage()
        row = cov[(cov.symbol == "2330") & (cov.status == "final")]
        assert list(row.end) == [pd.Timestamp("2026-11-22")]
        assert list(cov[(cov.symbol == "2330") & (cov.status == "open")].start) == [
            pd.Timestamp("2026-11-23")
        ]


def test_confirmed_empty_windows(make_store: Callable[..., Store], sb: Sandbox) -> None:
    st = make_store()
    # 6669 listed 2019-03-27: the window before holds nothing and is recorded as empty
    r = st.sync("stock.historical.candles", "6669", "2018-01-01", "2019-06-30")
    assert r.ok and r.empty_windows == 1 and r.windows_fetched == 2
    # 3293 suspended 2018-03-01..20: a window inside the suspension is confirmed empty
    r = st.sync("stock.historical.candles", "3293", "2018-03-05", "2018-03-16")
    assert r.ok and r.empty_windows == 1
    # before the earliest stock date: empty by the service's rules, no request
    served = sb.requests_served
    r = st.sync("stock.historical.candles", "3293", "2008-01-01", "2009-12-31")
    assert sb.requests_served == served and r.requests == 0
    cov = st.coverage()
    empty = cov[cov.status == "empty"].set_index("symbol")
    assert empty.loc["6669", "start"] == pd.Timestamp("2018-01-01")
    assert empty.loc["6669", "end"] == pd.Timestamp("2018-12-31")
    got = {
        (s.date().isoformat(), e.date().isoformat())
        for s, e in zip(
            cov[(cov.symbol == "3293") & (cov.status == "empty")].start,
            cov[(cov.symbol == "3293") & (cov.status == "empty")].end,
            strict=True,
        )
    }
    assert got == {("2018-03-05", "2018-03-16"), ("2008-01-01", "2009-12-31")}
    # empty is covered: the next sync asks nothing
    served = sb.requests_served
    st.sync("stock.historical.candles", "6669", "2018-01-01", "2019-06-30")
    assert sb.requests_served == served
    df = st.read("stock.historical.candles", "6669")
    assert df.date.min() >= pd.Timestamp("2019-03-27")


def test_minute_history_accumulates_beyond_30_days(own_sb: Sandbox, tmp_path: Path) -> None:
    sb = own_sb
    with (
        _store(sb, tmp_path / "m") as st,
        Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c,
    ):
        day1 = c.fetch_table("stock.historical.candles", symbol="2330", timeframe="60")
        st.sync("stock.historical.candles", "2330", timeframe="60")
        sb.advance(trading_days=3)
        day2 = c.fetch_table("stock.historical.candles", symbol="2330", timeframe="60")
        served = sb.requests_served
        r = st.sync("stock.historical.candles", "2330", timeframe="60")
        assert sb.requests_served - served == 1 and r.requests == 1
        held = st.read("stock.historical.candles", "2330", timeframe="60", backend="arrow")
    first1 = pa.compute.min(day1.column("date")).as_py()
    first2 = pa.compute.min(day2.column("date")).as_py()
    assert first2 > first1  # the service's 30 days moved on ...
    assert pa.compute.min(held.column("date")).as_py() == first1  # ... the store kept them
    union = {r["date"] for r in day1.select(["date"]).to_pylist()} | {
        r["date"] for r in day2.select(["date"]).to_pylist()
    }
    assert held.num_rows == len(union)  # upserted: nothing duplicated
    assert held.column("date").to_pylist() == sorted(union)


def test_weekly_candles_of_an_unfinished_week_are_refetched(
    make_store: Callable[..., Store], sb: Sandbox
) -> None:
    st = make_store()
    st.sync("stock.historical.candles", "2330", "2026-01-01", "2026-11-18", timeframe="W")
    served = sb.requests_served
    st.sync("stock.historical.candles", "2330", "2026-01-01", "2026-11-18", timeframe="W")
    # the week of 2026-11-16 is still open on Friday 2026-11-20: one request again
    assert sb.requests_served - served == 1
    served = sb.requests_served
    st.sync("stock.historical.candles", "2330", "2026-01-01", "2026-11-13", timeframe="W")
    assert sb.requests_served == served


def test_technical_indicators_keep_warmup_bars_and_params_identity(
    make_store: Callable[..., Store], sb: Sandbox
) -> None:
    st = make_store()
    st.sync(
        "stock.technical.sma", "2330", "2025-01-01", "2026-06-30", period=20, today="2026-11-20"
    )
    st.sync("stock.technical.sma", "2330", "2025-01-01", "2025-06-30", period=5, today="2026-11-20")
    df20 = st.read("stock.technical.sma", "2330", period=20)
    df5 = st.read("stock.technical.sma", "2330", period=5)
    assert set(df20.period) == {20} and set(df5.period) == {5}
    # no gap at the window boundary (2026-01-01): warm-up days were requested before it
    st.sync("stock.historical.candles", "2330", "2025-01-01", "2026-06-30")
    days = st.read("stock.historical.candles", "2330")
    first = df20.date.min()
    assert list(df20.date) == [d for d in days.date if d >= first]
    assert first <= pd.Timestamp("2025-02-05")
    # SMA needs no seed, so the stored values equal a fetch of one range around the boundary
    with Client(sb.api_key, base_url=sb.base_url, backend="pandas", cache=False) as c:
        one = c.stock.technical.sma(
            symbol="2330", from_="2025-11-01", to="2026-02-28", timeframe="D", period=20
        )
    part = df20[(df20.date >= one.date.min()) & (df20.date <= one.date.max())]
    assert list(part.sma) == pytest.approx(list(one.sma))


def test_corporate_actions_have_no_symbol(make_store: Callable[..., Store], sb: Sandbox) -> None:
    st = make_store()
    r = st.sync(
        "stock.corporate_actions.dividends", None, "2023-01-01", "2024-12-31", today="2026-11-20"
    )
    assert r.ok and r.windows_fetched == 2
    df = st.read("stock.corporate_actions.dividends")
    with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
        a = c.stock.corporate_actions.dividends(start_date="2023-01-01", end_date="2023-12-31")
        b = c.stock.corporate_actions.dividends(start_date="2024-01-01", end_date="2024-12-31")
    assert len(df) == len(a) + len(b)
    assert not df.duplicated(["symbol", "date"]).any()
    assert len(st.read("stock.corporate_actions.dividends", symbols=["2330"])) == int(
        (a.symbol == "2330").sum() + (b.symbol == "2330").sum()
    )


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("stock.corporate_actions.capital_changes", "effective_date"),
        ("stock.corporate_actions.listing_applicants", "application_date"),
    ],
)
def test_other_corporate_actions_read_by_their_date(
    make_store: Callable[..., Store], name: str, column: str
) -> None:
    st = make_store()
    r = st.sync(name, None, "2015-01-01", "2025-12-31", today="2026-11-20")
    assert r.ok and r.windows_fetched == 11
    everything = st.read(name)
    assert len(everything) > 0
    part = st.read(name, start="2020-01-01", end="2022-12-31")
    inside = (
        everything[column].notna()
        & (everything[column] >= "2020-01-01")
        & (everything[column] <= "2022-12-31")
    )
    assert len(part) == int(inside.sum())


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        (
            {"endpoint": "stock.intraday.quote", "symbols": "2330", "start": "2024-01-01"},
            "endpoint",
        ),
        (
            {"endpoint": "stock.historical.candle", "symbols": "2330", "start": "2024-01-01"},
            "endpoint",
        ),
        (
            {
                "endpoint": "stock.historical.candles",
                "symbols": "2330",
                "start": "2024-01-01",
                "timeframe": "H",
            },
            "timeframe",
        ),
        (
            {"endpoint": "stock.historical.candles", "symbols": "2330", "start": "2024/01/01"},
            "start",
        ),
        (
            {
                "endpoint": "stock.historical.candles",
                "symbols": "2330",
                "start": "2024-05-01",
                "end": "2024-01-01",
            },
            "start",
        ),
        (
            {
                "endpoint": "stock.historical.candles",
                "symbols": "2330",
                "timeframe": "5",
                "start": "2024-01-01",
            },
            "start",
        ),
        ({"endpoint": "stock.historical.candles", "symbols": [], "start": "2024-01-01"}, "symbols"),
        ({"endpoint": "stock.historical.candles", "start": "2024-01-01"}, "symbols"),
        ({"endpoint": "stock.technical.sma", "symbols": "2330", "start": "2024-01-01"}, "period"),
        (
            {
                "endpoint": "stock.technical.sma",
                "symbols": "2330",
                "start": "2024-01-01",
                "period": 20,
                "perod": 3,
            },
            "perod",
        ),
        (
            {
                "endpoint": "stock.historical.candles",
                "symbols": "2330",
                "start": "2024-01-01",
                "fields": ["open", "vwap"],
            },
            "fields",
        ),
        (
            {
                "endpoint": "stock.corporate_actions.dividends",
                "symbols": "2330",
                "start": "2024-01-01",
            },
            "symbols",
        ),
    ],
)
def test_bad_input_fails_before_any_request(
    make_store: Callable[..., Store], sb: Sandbox, kwargs: dict[str, object], param: str
) -> None:
    st = make_store()
    served = sb.requests_served
    with pytest.raises(InvalidParams) as info:
        st.sync(**kwargs)  # type: ignore[arg-type]
    assert info.value.param == param
    assert "allowed" in str(info.value) or "required" in str(info.value)
    assert sb.requests_served == served


def test_failures_are_reported_never_hidden(make_store: Callable[..., Store], sb: Sandbox) -> None:
    st = make_store()
    with pytest.raises(SyncError) as info:
        st.sync("stock.historical.candles", ["2330", "9999"], "2024-01-01", "2024-06-30")
    rep = info.value.report
    assert [f.symbol for f in rep.failures] == ["9999"] and "SymbolNotFound" in str(rep)
    assert rep.windows_fetched == 1  # 2330 was still written
    assert len(st.read("stock.historical.candles", "2330")) > 100
    cov = st.coverage()
    assert "9999" not in set(cov.symbol)  # a failure is never recorded as covered
    r = st.sync(
        "stock.historical.candles", ["2330", "9999"], "2024-01-01", "2024-06-30", strict=False
    )
    assert not r.ok and r.requests == 1


def test_api_key_is_in_no_file_of_the_store(
    make_store: Callable[..., Store], sb: Sandbox, tmp_path: Path
) -> None:
    st = make_store()
    st.sync("stock.historical.candles", ["2330", "IX0001"], "2024-01-01", "2024-12-31")
    st.sync("stock.technical.rsi", "2330", "2024-01-01", "2024-12-31", period=14)
    with pytest.raises(SyncError) as info:
        st.sync("stock.historical.candles", "9998", "2024-01-01", "2024-12-31")
    key = sb.api_key.encode()
    assert key not in str(info.value).encode()
    files = [p for p in st.root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(
        p.parent.name == "_log" and p.suffix == ".json" for p in files
    )
    for p in files:
        assert key not in p.read_bytes(), p


def test_read_backends_and_schema(make_store: Callable[..., Store]) -> None:
    st = make_store()
    st.sync("stock.historical.candles", ["2330", "0050"], "2023-06-01", "2024-06-30")
    pdf = st.read("stock.historical.candles", ["0050", "2330"], "2024-01-01", "2024-03-31")
    pldf = st.read(
        "stock.historical.candles", ["0050", "2330"], "2024-01-01", "2024-03-31", backend="polars"
    )
    assert len(pdf) == pldf.height > 0
    assert set(pdf.symbol) == {"0050", "2330"}  # "0050" stays a string
    assert pdf.attrs["units"]["volume"] == "shares"
    assert pdf.date.min() >= pd.Timestamp("2024-01-01")
    assert pdf.date.max() <= pd.Timestamp("2024-03-31")
    with pytest.raises(NotSynced, match="store.sync"):  # never synced: not an empty frame
        st.read("stock.historical.candles", "2454")


def test_fields_are_part_of_the_dataset_identity(
    make_store: Callable[..., Store], sb: Sandbox
) -> None:
    st = make_store()
    st.sync(
        "stock.historical.candles", "2330", "2024-01-01", "2024-03-31", fields=["volume", "close"]
    )
    served = sb.requests_served
    st.sync(
        "stock.historical.candles", "2330", "2024-01-01", "2024-03-31", fields="close,volume"
    )  # the same dataset, spelled differently: nothing to fetch
    assert sb.requests_served == served
    narrow = st.read("stock.historical.candles", "2330", fields=["close", "volume"])
    assert narrow["close"].notna().all() and narrow["open"].isna().all()
    with pytest.raises(NotSynced):  # the default dataset is apart, and was never synced
        st.read("stock.historical.candles", "2330")
    assert (st.root / "dataset=stock.historical.candles" / "params=fields-close.volume").is_dir()


def test_layout_one_file_per_symbol_for_daily_data_years_for_minute_data(
    own_sb: Sandbox, tmp_path: Path
) -> None:
    with _store(own_sb, tmp_path / "l") as st:
        st.sync(
            "stock.historical.candles", ["2330", "0050"], "2016-01-01", "2025-12-31", progress=False
        )
        st.sync("stock.historical.candles", "2330", timeframe="5", progress=False)
    daily = tmp_path / "l" / "dataset=stock.historical.candles" / "params=default" / "tf=D"
    assert sorted(p.relative_to(daily).as_posix() for p in daily.rglob("*.parquet")) == [
        "sym=0050/part-0.parquet",
        "sym=2330/part-0.parquet",
    ]
    minute = daily.parent / "tf=5" / "sym=2330"
    years = sorted(p.parent.name for p in minute.rglob("*.parquet"))
    assert years and all(y.startswith("year=") for y in years)


def test_a_holiday_only_window_is_held_empty_not_a_problem(
    make_store: Callable[..., Store], sb: Sandbox
) -> None:
    from marketframe import calendar

    st = make_store()
    # the Lunar New Year closure of 2026: no session from Thursday 12 to Sunday 22 February
    assert len(calendar.sessions_in_range("2026-02-12", "2026-02-22")) == 0
    r = st.sync("stock.historical.candles", "2330", "2026-02-12", "2026-02-22")
    assert r.ok and r.empty_windows == 1
    cov = st.coverage()
    mine = cov[cov.symbol == "2330"]
    assert set(mine.status) == {"final", "empty"}
    assert all(
        (s, e) == (pd.Timestamp("2026-02-12"), pd.Timestamp("2026-02-22"))
        for s, e in zip(mine.start, mine.end, strict=True)
    )
    held = st.read("stock.historical.candles", "2330", "2026-02-12", "2026-02-22")
    assert len(held) == 0
    assert st.verify().ok  # nothing missing, nothing damaged
    served = sb.requests_served
    again = st.sync("stock.historical.candles", "2330", "2026-02-12", "2026-02-22")
    assert again.ok and again.requests == 0 and sb.requests_served == served
