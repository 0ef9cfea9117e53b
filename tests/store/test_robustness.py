"""Interruption, concurrency, faults and third-party readers: the store stays exact."""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.client import Client
from marketframe.sandbox import Sandbox
from marketframe.store import NotSynced, Store

from ._helpers import NOW, arrow_equal, subprocess_env
from .conftest import Place

SYMS = ["2330", "0050", "6669", "IX0001"]
START, END = "2012-01-01", "2026-11-19"

CHILD = """
import json, sys
from marketframe.store import Store
root, url, key, options = sys.argv[1:5]
with Store(root, api_key=key, base_url=url, max_workers=1, commit_every=0.05,
           **json.loads(options)) as st:
    r = st.sync("stock.historical.candles", {syms!r}, {start!r}, {end!r}, progress=False)
print(r.requests, flush=True)
"""


def _child(
    root: Path | str,
    sb: Sandbox,
    syms: list[str] = SYMS,
    start: str = START,
    end: str = END,
    options: dict[str, object] | None = None,
) -> subprocess.Popen[str]:
    """A child process syncing into ``root`` (credentials of an S3 store: from the AWS
    environment variables it inherits)."""
    code = CHILD.format(syms=syms, start=start, end=end)
    return subprocess.Popen(
        [sys.executable, "-c", code, str(root), sb.base_url, sb.api_key, json.dumps(options or {})],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read(st: Store, syms: list[str] = SYMS) -> pa.Table:
    return st.read("stock.historical.candles", syms, backend="arrow")


def _rows_held(store: Store) -> int:
    """Rows held of SYMS; a symbol the killed sync never committed holds none."""
    n = 0
    for sym in SYMS:
        try:
            n += _read(store, [sym]).num_rows
        except NotSynced:
            pass
    return n


@pytest.fixture(scope="module")
def slow_sb() -> Sandbox:
    # a little latency so that a sync lasts long enough to be killed in the middle
    with Sandbox(seed=5, now=NOW, rate_limit=None, latency=0.03) as s:
        yield s


@pytest.fixture(scope="module")
def clean(slow_sb: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    with Store(
        tmp_path_factory.mktemp("clean"), api_key=slow_sb.api_key, base_url=slow_sb.base_url
    ) as st:
        st.sync("stock.historical.candles", SYMS, START, END, progress=False)
        return _read(st)


@pytest.mark.slow
def test_sigkill_at_random_points_then_rerun_equals_one_clean_sync(
    slow_sb: Sandbox, clean: pa.Table, place: Place
) -> None:
    rng = random.Random(20261120)
    partial = 0
    for i in range(4):
        name = f"killed{i}"
        root = place.url(name)
        killed = set()
        for k in range(1 + i % 2):  # some stores are killed twice before the rerun
            child = _child(root, slow_sb, options=place.options())
            killed.add(child.pid)
            if (i + k) % 2:  # a random delay from the start (interpreter start-up ~0.5 s)
                time.sleep(rng.uniform(0.3, 1.3))
            else:  # a random delay once a symbol is held (two log entries: load-independent)
                deadline = time.monotonic() + 30
                while (
                    child.poll() is None
                    and time.monotonic() < deadline
                    and len(place.files(name, "_log/0")) < 2
                ):
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.3))
            child.kill()  # SIGKILL (a no-op if it already finished): no cleanup, no finally
            child.communicate()
        with place.store(name, api_key=slow_sb.api_key, base_url=slow_sb.base_url) as st:
            before = _rows_held(st)
            partial += 0 < before < clean.num_rows
            report = st.sync("stock.historical.candles", SYMS, START, END, progress=False)
            assert report.ok
            arrow_equal(_read(st), clean)
            assert (
                st.sync("stock.historical.candles", SYMS, START, END, progress=False).requests == 0
            )
        assert not place.files(name, ".tmp")  # leftovers of killed writers were removed
        # object stores: a killed writer's leases did not block the rerun, which took them
        # over and released them with its own. Only a writer killed after its last write
        # (the rerun then had nothing to do, so it took no lease) leaves its leases behind,
        # stale: they name that dead process
        owners = {place.lease(name, rel)["pid"] for rel in place.files(name, "_leases/")}
        assert owners <= (killed if report.requests == 0 else set()), owners
    assert partial >= 1, "no kill landed in the middle of a sync: the test proved nothing"


@pytest.mark.slow
def test_two_processes_contending_for_the_lock(
    slow_sb: Sandbox, clean: pa.Table, tmp_path: Path
) -> None:
    root = tmp_path / "shared"
    served = slow_sb.requests_served
    a, b = _child(root, slow_sb), _child(root, slow_sb)
    out_a, err_a = a.communicate(timeout=120)
    out_b, err_b = b.communicate(timeout=120)
    assert a.returncode == 0 and b.returncode == 0, err_a + err_b
    # one of them fetched everything; the other waited for the lock, then found it all held
    counts = sorted([int(out_a.split()[-1]), int(out_b.split()[-1])])
    assert counts[0] == 0 and counts[1] == slow_sb.requests_served - served
    with Store(root) as st:  # reading needs no key
        arrow_equal(_read(st), clean)


def test_threads_share_a_store(sb: Sandbox, place: Place) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def job(sym: str) -> int:
        with place.store("t", api_key=sb.api_key, base_url=sb.base_url) as st:
            return st.sync(
                "stock.historical.candles",
                [sym, "2330"],
                "2023-01-01",
                "2024-12-31",
                progress=False,
            ).rows_written

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(job, ["0050", "2317", "2454"]))
    st = place.store("t")
    df = st.read("stock.historical.candles")
    assert set(df.symbol) == {"0050", "2317", "2454", "2330"}
    assert not df.duplicated(["symbol", "date"]).any()


day = st.integers(0, 700).map(lambda n: dt.date(2023, 1, 2) + dt.timedelta(days=n))
spans = st.tuples(day, day).map(lambda t: (min(t), max(t)))


@pytest.fixture(scope="module")
def big_fetch(sb: Sandbox) -> dict[str, pa.Table]:
    """The whole test span per symbol, straight from the client (no store code): the
    service's one-year limit makes that two requests."""
    out = {}
    with Client(sb.api_key, base_url=sb.base_url, backend="arrow", cache=False) as c:
        for sym in ("2330", "6446"):
            parts = [
                c.fetch_table(
                    "stock.historical.candles",
                    symbol=sym,
                    from_=lo,
                    to=hi,
                    timeframe="D",
                    sort="asc",
                )
                for lo, hi in (("2023-01-02", "2024-01-01"), ("2024-01-02", "2024-12-02"))
            ]
            out[sym] = pa.concat_tables(parts).unify_dictionaries()
    return out


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from([["2330"], ["6446"], ["2330", "6446"]]), spans),
        min_size=1,
        max_size=5,
    )
)
def test_random_overlapping_syncs_equal_one_big_fetch(
    sb: Sandbox,
    big_fetch: dict[str, pa.Table],
    place: Place,
    syncs: list[tuple[list[str], tuple[dt.date, dt.date]]],
) -> None:
    with place.store(f"hyp-{uuid.uuid4().hex}", api_key=sb.api_key, base_url=sb.base_url) as store:
        for syms, (lo, hi) in syncs:
            store.sync("stock.historical.candles", syms, lo, hi, progress=False)
        for sym in ("2330", "6446"):
            spans_of = [(lo, hi) for syms, (lo, hi) in syncs if sym in syms]
            if not spans_of:  # never synced: a typed error, not an empty table
                with pytest.raises(NotSynced):
                    _read(store, [sym])
                continue
            held = _read(store, [sym])
            dates = pa.compute.cast(big_fetch[sym].column("date"), pa.date32()).to_pylist()
            mask = pa.array([any(lo <= d <= hi for lo, hi in spans_of) for d in dates])
            arrow_equal(held, big_fetch[sym].filter(mask))


@pytest.mark.slow
def test_faults_and_a_tight_rate_limit_lose_and_duplicate_nothing(
    tmp_path: Path, place: Place
) -> None:
    with (
        Sandbox(seed=11, now=NOW, rate_limit=None) as ref_sb,
        Store(tmp_path / "ref", api_key=ref_sb.api_key, base_url=ref_sb.base_url) as ref,
    ):
        ref.sync("stock.historical.candles", SYMS, "2016-01-01", "2026-11-19", progress=False)
        expected = _read(ref)
    with Sandbox(seed=11, now=NOW, rate_limit=20, rate_window=1.0, fault_rate=0.2) as sb:
        client = Client(
            sb.api_key,
            base_url=sb.base_url,
            backend="arrow",
            cache=False,
            retries=10,
            backoff=0.05,
            max_workers=8,
        )
        with place.store("faulty", client) as st:
            report = st.sync(
                "stock.historical.candles", SYMS, "2016-01-01", "2026-11-19", progress=False
            )
            assert report.ok, str(report)
            assert report.retries > 0  # 20% of ~40 requests failed at least once
            assert report.requests == report.windows_fetched + report.retries
            assert (
                client.stats().statuses.get(500, 0)
                + client.stats().statuses.get(502, 0)
                + client.stats().statuses.get(503, 0)
                > 0
            )
            arrow_equal(_read(st), expected)
        client.close()


def test_duckdb_and_polars_read_the_directory_as_it_is(sb: Sandbox, tmp_path: Path) -> None:
    with Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(
            "stock.historical.candles",
            ["2330", "0050", "IX0001"],
            "2022-06-01",
            "2024-12-31",
            progress=False,
        )
        st.sync(
            "stock.technical.sma", ["2330"], "2024-01-01", "2024-12-31", period=20, progress=False
        )
        ours = st.read("stock.historical.candles", backend="arrow")
    cols = ", ".join(ours.column_names)
    glob = f"{tmp_path}/s/dataset=stock.historical.candles/**/*.parquet"
    got = duckdb.sql(
        f"SELECT {cols} FROM read_parquet('{glob}', hive_partitioning = true) "
        "WHERE timeframe = 'D' ORDER BY symbol, date"
    ).arrow()
    got = got.read_all() if hasattr(got, "read_all") else got
    arrow_equal(got.cast(ours.schema), ours)
    # the hive columns are there for filtering (partition pruning by symbol); daily data has
    # one file per symbol, filtered on its date
    n = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true) "
        "WHERE symbol = '0050' AND year(date) = 2023"
    ).fetchall()
    assert n[0][0] == sum(
        1
        for s, d in zip(
            ours.column("symbol").to_pylist(), ours.column("date").to_pylist(), strict=True
        )
        if s == "0050" and d.year == 2023
    )
    lazy = pl.scan_parquet(glob, hive_partitioning=True).filter(pl.col("symbol") == "0050")
    assert (
        lazy.collect().height
        == ours.filter(pa.compute.equal(ours.column("symbol"), "0050")).num_rows
    )
