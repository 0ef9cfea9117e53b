"""The four stock.ownership datasets sync and read like the other date-ranged ones: windows,
coverage, equality with the loader, a rerun after a failed sync, director holdings kept open
until their month can no longer be published."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.client import Client
from marketframe.endpoints import ENDPOINTS
from marketframe.sandbox import Sandbox
from marketframe.store import Store, SyncError

from ._helpers import NOW, arrow_equal

#: dataset -> symbols that have it in the sandbox
DATASETS = {
    "stock.ownership.etf_holdings": ["0050", "0056"],
    "stock.ownership.institutional_trades": ["2330", "0050"],
    "stock.ownership.director_holdings": ["2330", "2317"],
    "stock.ownership.tdcc_distribution": ["2330", "0056"],
}


@pytest.fixture
def own_sb() -> Iterator[Sandbox]:
    with Sandbox(seed=5, now=NOW, rate_limit=None) as s:
        yield s


@pytest.fixture(scope="module")
def arrow_client(sb: Sandbox) -> Iterator[Client]:
    with Client(sb.api_key, base_url=sb.base_url, cache=False, backend="arrow") as c:
        yield c


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(sorted(DATASETS)),
    pick=st.integers(0, 1),
    start=st.dates(dt.date(2010, 1, 1), dt.date(2026, 11, 1)),
    days=st.integers(0, 364),
    cut=st.integers(0, 364),
)
def test_keys_identify_every_row_and_a_sub_range_is_a_filter(
    arrow_client: Client, name: str, pick: int, start: dt.date, days: int, cut: int
) -> None:
    """The row's keys are unique in any answer (the store upserts on them), and asking for a
    later part of a range gives exactly the rows of the whole answer from that date on."""
    symbol, keys = DATASETS[name][pick], ENDPOINTS[name].keys
    end = start + dt.timedelta(days)
    whole = arrow_client.fetch_table(name, symbol=symbol, from_=start, to=end)
    got = list(zip(*(whole.column(k).to_pylist() for k in keys), strict=True))
    assert len(set(got)) == len(got), f"{name} {keys} repeats a key"
    mid = start + dt.timedelta(min(cut, days))
    part = arrow_client.fetch_table(name, symbol=symbol, from_=mid, to=end)
    lo = (
        mid
        if mid.day == 1 or name != "stock.ownership.director_holdings"
        else (mid.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    )  # months by first day
    tail = whole.filter(pc.greater_equal(whole.column("date"), pa.scalar(lo, pa.date32())))
    assert part.to_pylist() == tail.to_pylist()


def _store(sb: Sandbox, path: Path) -> Store:
    return Store(path, api_key=sb.api_key, base_url=sb.base_url)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_sync_then_read_equals_the_loader(sb: Sandbox, tmp_path: Path, name: str) -> None:
    syms = DATASETS[name]
    with _store(sb, tmp_path / "s") as st:
        # 2024-03-01..2025-08-31 is longer than a year: two windows per symbol
        first = st.sync(name, syms, "2024-03-01", "2025-08-31", progress=False)
        assert first.ok and first.windows_fetched == first.requests == 2 * len(syms)
        served = sb.requests_served
        again = st.sync(name, syms, "2024-03-01", "2025-08-31", progress=False)
        assert again.requests == 0 and sb.requests_served == served
        with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
            for sym in syms:
                fresh = c.fetch_table(name, symbol=sym, from_="2024-09-01", to="2025-08-31")
                held = st.read(name, sym, "2024-09-01", "2025-08-31", backend="arrow")
                assert held.num_rows > 0
                arrow_equal(held, fresh)
        cov = st.coverage()
        assert set(cov.symbol) == set(syms)
        assert set(cov.status) == {"final"}


def test_read_gives_both_backends_with_the_loaders_dtypes(sb: Sandbox, tmp_path: Path) -> None:
    name = "stock.ownership.director_holdings"
    with (
        _store(sb, tmp_path / "s") as st,
        Client(sb.api_key, base_url=sb.base_url, cache=False) as c,
    ):
        st.sync(name, "2330", "2025-01-01", "2025-06-30", progress=False)
        held = st.read(name, "2330")
        loaded = c.stock.ownership.director_holdings("2330", start="2025-01-01", end="2025-06-30")
        assert dict(held.dtypes) == dict(loaded.dtypes)
        assert str(held["date"].dtype) == "datetime64[us]"
        # monthly rows are dated the first of their month
        assert set(held["date"].dt.day) == {1}
        assert sorted(set(held["date"].dt.month)) == [1, 2, 3, 4, 5, 6]
        pl = st.read(name, "2330", backend="polars")
        assert str(pl.schema["date"]) == "Date" and pl.height == len(held)


def test_a_rerun_after_a_failed_sync_fetches_only_what_is_missing(
    own_sb: Sandbox, tmp_path: Path
) -> None:
    sb, name = own_sb, "stock.ownership.institutional_trades"
    syms = ["2330", "2317", "2454", "2412"]
    # no retries: a 5xx fails its window (as an interrupted sync leaves windows unfetched)
    with (
        Client(sb.api_key, base_url=sb.base_url, retries=0, cache=False) as client,
        Store(tmp_path / "s", client) as st,
    ):
        sb.configure(fault_rate=0.5, fault_seed=3)
        try:
            with pytest.raises(SyncError) as info:
                st.sync(name, syms, "2024-01-01", "2025-06-30", progress=False)
        finally:
            sb.configure(fault_rate=0.0)
        failed = info.value.report
        assert failed.failures  # some windows failed ...
        assert failed.windows_fetched > 0  # ... and others were written
        rerun = st.sync(name, syms, "2024-01-01", "2025-06-30", progress=False)
        assert rerun.ok and rerun.windows_skipped == failed.windows_fetched
        assert rerun.windows_fetched + failed.windows_fetched == 2 * len(syms)
        with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
            for sym in syms:
                arrow_equal(
                    st.read(name, sym, "2024-07-01", "2025-06-30", backend="arrow"),
                    c.fetch_table(name, symbol=sym, from_="2024-07-01", to="2025-06-30"),
                )


def test_recent_director_months_stay_open_until_published(own_sb: Sandbox, tmp_path: Path) -> None:
    """A month is published on the 15th of the next: the row's refresh_days keep the last
    46 days open, so the next sync after publication picks the month up."""
    sb, name = own_sb, "stock.ownership.director_holdings"
    sb.set_now("2026-10-14T10:00:00+08:00")  # September not published yet
    with _store(sb, tmp_path / "s") as st:
        st.sync(name, "2330", "2026-01-01", "2026-10-14", today="2026-10-14", progress=False)
        months = sorted(set(st.read(name, "2330")["date"].dt.month))
        assert months == list(range(1, 9))  # January..August
        cov = st.coverage()
        opened = cov[cov.status == "open"]
        assert list(opened.start) == [pd.Timestamp("2026-08-30")]  # 46 days before today
        sb.set_now("2026-10-15T10:00:00+08:00")  # September is published today
        served = sb.requests_served
        st.sync(name, "2330", "2026-01-01", "2026-10-15", today="2026-10-15", progress=False)
        assert sb.requests_served - served == 1  # only the open tail
        months = sorted(set(st.read(name, "2330")["date"].dt.month))
        assert months == list(range(1, 10))


def test_resynced_open_days_keep_the_items_in_the_services_order(
    own_sb: Sandbox, tmp_path: Path
) -> None:
    """The open tail is refetched and upserted into the partition: the brackets of each week
    stay smallest first (the partition is sorted by date, items in arrival order), as the
    loader gives them."""
    sb, name = own_sb, "stock.ownership.tdcc_distribution"
    with (
        _store(sb, tmp_path / "s") as st,
        Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c,
    ):
        st.sync(name, "2330", "2026-06-01", "2026-11-20", today="2026-11-20", progress=False)
        sb.set_now("2026-11-27T16:00:00+08:00")
        st.sync(name, "2330", "2026-06-01", "2026-11-27", today="2026-11-27", progress=False)
        held = st.read(name, "2330", "2026-06-01", "2026-11-27", backend="arrow")
        arrow_equal(held, c.fetch_table(name, symbol="2330", from_="2026-06-01", to="2026-11-27"))
    df = held.to_pandas()
    assert df.date.max() == dt.date(2026, 11, 27)
    for _, brackets in df.groupby("date"):
        assert list(brackets["range"])[:2] == ["1-999", "1,000-5,000"]
