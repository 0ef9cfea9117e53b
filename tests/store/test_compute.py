"""Derived datasets: ``Store.compute`` over a store, against ``df.md`` over what it holds.

Incremental reruns equal a full recompute; a changed input is recomputed; a run killed with
SIGKILL and rerun equals a clean run; the derived data reads as it is in pyarrow, polars and
DuckDB; ``dask.distributed`` and Spark give the in-process result row for row.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

import marketframe  # noqa: F401  (registers df.md)
from marketframe.exceptions import InvalidParams
from marketframe.indicators import stateful as sf
from marketframe.sandbox import Sandbox
from marketframe.store import Store
from marketframe.store._compute._derive import bucket_of

from ._helpers import NOW, subprocess_env
from ._spark import local_spark
from .conftest import Place

DAILY = "stock.historical.candles"
SPECS = ["sma", "rsi", "kdj", "macd", "bbands"]
SYMS = ["2330", "2454", "0050"]


@pytest.fixture(scope="module")
def sb() -> object:
    with Sandbox(seed=11, now=NOW, rate_limit=None) as s:
        yield s


def store(sb: Sandbox, path: Path) -> Store:
    return Store(path, api_key=sb.api_key, base_url=sb.base_url)


def reference(raw: pd.DataFrame) -> pd.DataFrame:
    return raw.md.sma(20).md.rsi(14).md.kdj().md.macd().md.bbands().set_index(["symbol", "date"])


def check(st: Store, ref: pd.DataFrame, dataset: str = DAILY, **kw: object) -> int:
    """Every derived dataset equals ``df.md`` over the source (NaNs where md has them)."""
    n = 0
    for name in SPECS:
        got = st.read_derived(dataset, name, **kw)  # type: ignore[call-overload]
        want = ref.loc[list(zip(got["symbol"], got["date"], strict=True))]
        assert len(got) == len(ref)
        for col in sf.spec(name).names:
            a, b = got[col].to_numpy(float), want[col].to_numpy(float)
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=col)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9, err_msg=col)
        n += len(got)
    return n


def same(a: Store, b: Store, dataset: str = DAILY, **kw: Any) -> None:
    """Two stores hold the same derived rows (values to 1e-12 relative)."""
    for name in SPECS:
        x, y = (s.read_derived(dataset, name, **kw) for s in (a, b))
        pd.testing.assert_frame_equal(x, y, check_exact=False, rtol=1e-12, atol=1e-9)


def identical(a: Store, b: Store) -> None:
    """Row for row, value for value (NaN where NaN): what another engine wrote."""
    for name in SPECS:
        x, y = (s.read_derived(DAILY, name) for s in (a, b))
        pd.testing.assert_frame_equal(x, y, check_exact=True)


def test_derived_datasets_equal_md_and_read_in_pyarrow_polars_duckdb(
    sb: Sandbox, tmp_path: Path
) -> None:
    import duckdb
    import polars as pl
    import pyarrow.dataset as pads

    with store(sb, tmp_path / "s") as st:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == {"full": sorted(SYMS)} for m in rep.modes.values())
        check(st, reference(st.read(DAILY)))
        again = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == {"unchanged": sorted(SYMS)} for m in again.modes.values())
        rsi = st.read_derived(DAILY, "rsi")
        path = tmp_path / "s" / rep.paths()[1]
    assert path.parent.name.startswith("params=stock_historical_candles.14.")
    t = pads.dataset(path, format="parquet", partitioning="hive").to_table()
    assert t.num_rows == len(rsi) and {"bucket", "symbol", "date", "rsi_14"} <= set(t.column_names)
    p = pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True).collect()
    assert p.height == len(rsi)
    d = duckdb.sql(
        f"select symbol, date, rsi_14 from read_parquet('{path}/**/*.parquet', hive_partitioning=1)"
        " order by symbol, date"
    ).df()
    np.testing.assert_array_equal(d["rsi_14"].to_numpy(), rsi["rsi_14"].to_numpy())


def test_a_rerun_after_a_sync_computes_only_the_new_bars(sb: Sandbox, tmp_path: Path) -> None:
    with store(sb, tmp_path / "inc") as st, store(sb, tmp_path / "full") as full:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-10-31", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == {"appended": sorted(SYMS)} for m in rep.modes.values())
        new = len(st.read(DAILY, SYMS, "2026-11-01"))
        assert set(rep.rows.values()) == {new}  # only the new bars were computed
        full.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        full.compute(DAILY, SPECS, max_workers=1)
        same(st, full)
        check(st, reference(st.read(DAILY)))


def test_a_run_makes_its_files_durable_together_not_one_by_one(
    sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts and state slots of every task are flushed by one group commit before the
    log records them (a flush of the filesystem before and after their renames), not each
    with its own fsync and its directory's: a symbol's five parts and five slots cost 20
    fsyncs before, whatever the run's size. Every file is in place and checked after."""
    if not sys.platform.startswith("linux"):
        pytest.skip("no syncfs here: each file is fsynced, as before")
    calls: list[str] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)
        monkeypatch.setattr(
            os, name, lambda fd, real=real, name=name: [calls.append(name), real(fd)]
        )
    with store(sb, tmp_path / "s") as st:
        counted = 0
        for end in ("2026-10-31", "2026-11-20"):  # the first run, then an appended one
            st.sync(DAILY, SYMS, "2023-01-01", end, progress=False)
            before = len(calls)
            st.compute(DAILY, SPECS, max_workers=1)
            counted += len(calls) - before
        assert counted < 2 * len(SYMS) * len(SPECS)  # the log's own writes (before: 4 a file)
        # each file's recorded time is its own (a next run's cheap check, no hashing)
        log = st._parts.log
        for ds, _ in log.datasets():
            for rel, rec in log.files(ds).items():
                if "mtime_ns" in rec:
                    assert os.stat(Path(st.root) / rel).st_mtime_ns == rec["mtime_ns"], rel
        assert st.verify().ok
        check(st, reference(st.read(DAILY)))


def test_reruns_rewrite_the_spare_state_slot(sb: Sandbox, place: Place) -> None:
    """Each rerun writes the state slot the log does not name, and continues from the
    named one: two state files per symbol and dataset however many days are appended, and
    no lease left behind on an object store."""
    with place.store("slots", api_key=sb.api_key, base_url=sb.base_url) as st:
        for n, end in enumerate(["2026-09-30", "2026-10-31", "2026-11-20"]):
            st.sync(DAILY, SYMS, "2023-01-01", end, progress=False)
            rep = st.compute(DAILY, SPECS, max_workers=1)
            mode = "appended" if n else "full"
            assert all(m == {mode: sorted(SYMS)} for m in rep.modes.values())
            states = place.files("slots", "/_state")
            slots = {f.rsplit("/", 1)[-1] for f in states}
            assert slots == ({"_state-a.bin", "_state-b.bin"} if n else {"_state-a.bin"})
            assert len(states) == len(SPECS) * len(SYMS) * len(slots)
        check(st, reference(st.read(DAILY)))
    assert not place.files("slots", "_leases/")


def test_a_torn_state_slot(sb: Sandbox, tmp_path: Path) -> None:
    """A run killed while it rewrote the spare slot leaves the named one intact: the next
    run continues from it. A damaged named slot (its hash no longer the recorded one) is
    never trusted: the symbol is recomputed. Both equal ``df.md`` over the source."""
    with store(sb, tmp_path / "torn") as st:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-09-30", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)  # names slot a
        st.sync(DAILY, SYMS, "2023-01-01", "2026-10-31", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)  # names slot b
        where = f"dataset=derived.*/*/*/bucket={bucket_of('2454')}/_state-a.bin"
        spares = list((tmp_path / "torn").glob(where))
        assert len(spares) == len(SPECS)
        for f in spares:
            f.write_bytes(f.read_bytes()[:40])  # the spare, half rewritten
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-10", progress=False)
        rep = st.compute(DAILY, SPECS, max_workers=1)  # continues from b, rewrites a
        assert all(m == {"appended": sorted(SYMS)} for m in rep.modes.values())
        check(st, reference(st.read(DAILY)))
        for f in spares:
            f.write_bytes(f.read_bytes()[:40])  # now the named slot, damaged
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        rep = st.compute(DAILY, SPECS, max_workers=1)
        want = {"full": ["2454"], "appended": ["0050", "2330"]}
        assert all(m == want for m in rep.modes.values())
        check(st, reference(st.read(DAILY)))


def test_minute_data_across_years_and_appends(sb: Sandbox, tmp_path: Path) -> None:
    sb.set_now("2027-01-08T14:00:00+08:00")  # the latest 30 days span two year partitions
    try:
        with store(sb, tmp_path / "m") as st:
            st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
            st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
            sb.advance(trading_days=2)
            st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
            rep = st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
            assert all(set(m) == {"appended"} for m in rep.modes.values())
            raw = st.read(DAILY, timeframe="1")
            years = {p.name for p in (tmp_path / "m").glob("dataset=derived.rsi/*/*/*/year=*")}
            assert years == {"year=2026", "year=2027"}
            check(st, reference(raw), timeframe="1")
    finally:
        sb.set_now(NOW)


def test_a_new_years_first_bars_go_on_from_the_saved_state(sb: Sandbox, tmp_path: Path) -> None:
    """A new year's file after the last one consumed, unchanged: only its bars computed, from
    the saved context (the year before is not read again)."""
    sb.set_now("2026-12-31T14:00:00+08:00")
    try:
        with store(sb, tmp_path / "y") as st:
            st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
            st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
            sb.set_now("2027-01-05T14:00:00+08:00")
            st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
            rep = st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
            assert all(m == {"appended": ["2330", "2454"]} for m in rep.modes.values())
            raw = st.read(DAILY, timeframe="1")
            new = int((raw["date"].dt.year == 2027).sum())
            assert set(rep.rows.values()) == {new}
            check(st, reference(raw), timeframe="1")
    finally:
        sb.set_now(NOW)


@pytest.mark.parametrize("together", [False, True], ids=["year-closed-before", "same-sync"])
def test_a_closed_year_is_merged_into_one_part_when_the_next_one_starts(
    sb: Sandbox, place: Place, together: bool
) -> None:
    """A year's parts, one per append, become one when the next year's first bars are
    computed; ``together``: the year's last sessions arrive in the same sync as the next
    year's first (the run appends a part to the year, then merges it with the others)."""

    def parts(year: int) -> dict[str, int]:
        out: dict[str, int] = {}
        for rel in place.files("m", f"/year={year}/part-"):
            if rel.startswith("dataset=derived."):
                key = "/".join(rel.split("/")[i] for i in (0, 3))
                out[key] = out.get(key, 0) + 1
        return out

    def step(**now: Any) -> Any:
        if "trading_days" in now:
            sb.advance(**now)
        else:
            sb.set_now(now["at"])
        st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
        return st.compute(DAILY, SPECS, timeframe="1", max_workers=1)

    sb.set_now("2026-12-28T14:00:00+08:00")
    try:
        with place.store("m", api_key=sb.api_key, base_url=sb.base_url) as st:
            st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
            st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
            step(trading_days=1)  # the year's last sessions, appended one by one
            if not together:
                step(at="2026-12-31T14:00:00+08:00")
            before = parts(2026)
            assert len(before) == 2 * len(SPECS)
            assert min(before.values()) == (2 if together else 3)
            rep = step(at="2027-01-05T14:00:00+08:00")  # the next year's first sessions
            assert all(set(m) == {"appended"} for m in rep.modes.values())
            assert parts(2026) == dict.fromkeys(before, 1)
            assert set(parts(2027).values()) == {1}
            check(st, reference(st.read(DAILY, timeframe="1")), timeframe="1")
            assert st.verify().ok
            assert not [f for f in place.files("m", "/year=") if f.endswith(".tmp")]
            step(trading_days=1)  # the next append leaves the closed year as it is
            assert parts(2026) == dict.fromkeys(before, 1)
            check(st, reference(st.read(DAILY, timeframe="1")), timeframe="1")
    finally:
        sb.set_now(NOW)


def test_a_changed_input_file_is_recomputed(sb: Sandbox, tmp_path: Path) -> None:
    from marketframe.store._dataset import resolve
    from marketframe.store._report import SyncReport
    from marketframe.store._sync import _commit

    with store(sb, tmp_path / "c") as st:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)
        # a repaired file: one old bar's prices differ (written as a sync writes)
        spec = resolve(DAILY, None, {})
        row = st.read(DAILY, "2454", "2024-03-04", "2024-03-04", backend="arrow")
        close = row.column("close").to_pylist()[0] * 1.01
        row = row.set_column(row.schema.get_field_index("close"), "close", pa.array([close]))
        _commit.write_rows(st._parts.storage, st._parts.log, spec, "2454", row, SyncReport(spec.ds))
        st._parts.log.commit()
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == {"recomputed": ["2454"], "unchanged": ["0050", "2330"]}
                   for m in rep.modes.values())  # fmt: skip
        check(st, reference(st.read(DAILY)))


@pytest.mark.parametrize(
    ("column", "modes"),
    [
        ("close", {"recomputed": ["2454"], "appended": ["0050", "2330"]}),
        ("volume", {"appended": sorted(SYMS)}),
    ],
)
def test_a_bar_changed_in_the_newest_file(
    sb: Sandbox, tmp_path: Path, column: str, modes: dict[str, list[str]]
) -> None:
    """The newest file (the one a sync appends to) rewritten with one consumed bar changed:
    a price the kernels read is recomputed from that file on; a volume (no indicator reads
    it) leaves the consumed bars as they were, and new bars continue from the state. Either
    way the derived data equals ``df.md`` over the source as it is now."""
    from marketframe.store._dataset import resolve
    from marketframe.store._report import SyncReport
    from marketframe.store._sync import _commit

    with store(sb, tmp_path / column) as st:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-10-31", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)  # new bars too
        spec = resolve(DAILY, None, {})
        row = st.read(DAILY, "2454", "2026-10-15", "2026-10-15", backend="arrow")
        i = row.schema.get_field_index(column)
        value = row.column(column).to_pylist()[0]
        changed = pa.array([value * 1.01 if column == "close" else value + 1], row.schema[i].type)
        row = row.set_column(i, column, changed)
        _commit.write_rows(st._parts.storage, st._parts.log, spec, "2454", row, SyncReport(spec.ds))
        st._parts.log.commit()
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == modes for m in rep.modes.values())
        check(st, reference(st.read(DAILY)))


def test_adjusted_prices_feed_their_own_dataset(sb: Sandbox, tmp_path: Path) -> None:
    with store(sb, tmp_path / "a") as st:
        st.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        rep = st.compute(DAILY, "rsi", max_workers=1, adjust="all")
        assert ".all." in rep.datasets[0].params
        got = st.read_derived(DAILY, "rsi", adjust="all")
        ref = st.read(DAILY, adjust="all").md.rsi(14).set_index(["symbol", "date"])
        want = ref.loc[list(zip(got["symbol"], got["date"], strict=True))]["rsi_14"]
        np.testing.assert_allclose(got["rsi_14"], want, rtol=1e-12, atol=1e-9)
        # the unadjusted one is another dataset, never computed: refused, naming this one
        from marketframe.exceptions import InvalidParams

        with pytest.raises(InvalidParams, match=r"computed here: rsi\(14\) adjust='all'"):
            st.read_derived(DAILY, "rsi")


CHILD = """
import json, sys, time
from marketframe.store import Store, _compute
real = _compute.run_task
calls = 0
def slow(task):
    global calls
    res = real(task)  # its files are published; the driver has not recorded them
    calls += 1
    if calls == {after}:
        print("ready", flush=True)
        time.sleep(120)
    return res
_compute.run_task = slow
with Store(sys.argv[1], **json.loads(sys.argv[2])) as st:
    st.compute("stock.historical.candles", {specs!r}, max_workers=1, **{kw!r})
"""


def killed_mid_compute(place: Place, name: str, after: int, **kw: Any) -> None:
    """A compute of store ``name`` in a child process, killed with SIGKILL once ``after``
    tasks have written their files and before the driver records them."""
    code = textwrap.dedent(CHILD.format(specs=SPECS, after=after, kw=kw))
    child = subprocess.Popen(
        [sys.executable, "-c", code, place.url(name), json.dumps(place.options())],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL


def test_a_finished_run_marks_its_datasets_clean_and_an_unfinished_one_is_swept(
    sb: Sandbox, tmp_path: Path
) -> None:
    with store(sb, tmp_path / "m") as st:
        st.sync(DAILY, ["2330"], "2024-01-01", "2024-12-31", progress=False)
        rep = st.compute(DAILY, SPECS[:2], max_workers=1)
        dirs = [st.root / rel for rel in rep.paths()]
        assert all((d / "_clean").is_file() for d in dirs)  # nothing left to look for
        # what a run killed after it began leaves: no marker, a file never recorded
        stray = dirs[0] / f"bucket={bucket_of('2330')}" / "part-0-000000000000.parquet"
        stray.write_bytes(b"torn")
        (dirs[0] / "_clean").unlink()
        again = st.compute(DAILY, SPECS[:2], max_workers=1)
        assert again.removed == 1 and not stray.exists()
        assert all((d / "_clean").is_file() for d in dirs)


def test_kill_9_mid_compute_then_rerun_equals_a_clean_run(
    sb: Sandbox, tmp_path: Path, place: Place
) -> None:
    """Killed after a task published its files and before the driver recorded them (on an
    object store: holding its leases), then rerun: equal to a clean run, and nothing the
    log does not record is left."""
    syms = SYMS + ["2317", "2412", "1301"]
    with (
        place.store("k", api_key=sb.api_key, base_url=sb.base_url) as st,
        store(sb, tmp_path / "clean") as clean,
    ):
        for s in (st, clean):
            s.sync(DAILY, syms, "2023-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, SPECS[:2], max_workers=1)  # an earlier run: states to resume from
        st.sync(DAILY, syms, "2026-11-20", "2026-11-20", progress=False)
        killed_mid_compute(place, "k", after=4)
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert rep.removed > 0  # the killed run's unrecorded files
        clean.compute(DAILY, SPECS, max_workers=1)
        same(st, clean)
        for name in SPECS:  # on disk, only what the log records: a part per symbol
            parts = [f for f in place.files("k", f"dataset=derived.{name}/") if "/part-" in f]
            assert len(parts) == len(st.read_derived(DAILY, name)["symbol"].unique())
    # object stores: the killed run's leases were taken over (their owner is gone) and released
    assert not place.files("k", "_leases/")


def test_kill_9_while_a_year_closes_then_rerun_equals_a_clean_run(
    sb: Sandbox, tmp_path: Path, place: Place
) -> None:
    """Killed after the task that merged a closed year's parts (and wrote the new year's)
    and before the driver recorded them, then rerun: equal to a clean run; on disk only
    what the log records, the closed year one part."""
    syms, minute = ["2330", "2454"], {"timeframe": "1"}
    try:
        with (
            place.store("k", api_key=sb.api_key, base_url=sb.base_url) as st,
            store(sb, tmp_path / "clean") as clean,
        ):
            for day in ("2026-12-29", "2026-12-30"):  # two parts in the year
                sb.set_now(f"{day}T14:00:00+08:00")
                for s in (st, clean):
                    s.sync(DAILY, syms, progress=False, **minute)
                    s.compute(DAILY, SPECS, max_workers=1, **minute)
            sb.set_now("2027-01-05T14:00:00+08:00")  # the year's last session and the next's
            for s in (st, clean):
                s.sync(DAILY, syms, progress=False, **minute)
            killed_mid_compute(place, "k", after=1, **minute)
            rep = st.compute(DAILY, SPECS, max_workers=1, **minute)
            assert rep.removed > 0  # the killed run's unrecorded files
            clean.compute(DAILY, SPECS, max_workers=1, **minute)
            same(st, clean, **minute)
            log = st._parts.log
            recorded = {
                rel
                for ds, _ in log.datasets()
                if ds.endpoint.startswith("derived.")
                for rel in log.files(ds)
            }
            kept = ("_state-a.bin", "_state-b.bin", "_clean")  # the slots, the marker
            on_disk = {
                f for f in place.files("k", "dataset=derived.") if f.rsplit("/", 1)[1] not in kept
            }
            assert on_disk == recorded  # no staged or stray file left
            closed = [f for f in on_disk if "/year=2026/" in f]
            assert len(closed) == len(SPECS) * len(syms)
        assert not place.files("k", "_leases/")
    finally:
        sb.set_now(NOW)


@pytest.mark.slow
def test_dask_distributed_and_a_process_pool_equal_in_process(sb: Sandbox, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    with store(sb, tmp_path / "one") as one, store(sb, tmp_path / "dask") as dk:
        for s in (one, dk):
            s.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        one.compute(DAILY, SPECS, max_workers=1)
        with (
            LocalCluster(
                n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
            ) as cl,
            Client(cl) as client,
        ):
            rep = dk.compute(DAILY, SPECS, executor=client.get_executor())
        assert all(m == {"full": sorted(SYMS)} for m in rep.modes.values())
        identical(one, dk)


UNGUARDED = """
import sys
from marketframe.store import Store
with Store(sys.argv[1]) as st:  # no `if __name__ == "__main__":` guard
    rep = st.compute("stock.historical.candles", ["rsi", "macd"], max_workers=2)
    print(*sorted(mode for m in rep.modes.values() for mode in m))
"""


@pytest.mark.parametrize("how", ["stdin", "script"])
def test_the_default_pool_runs_from_an_unguarded_script_or_stdin(
    sb: Sandbox, tmp_path: Path, how: str
) -> None:
    """The pool's workers never run the caller's main module: a script without a main
    guard (or code piped to ``python -``) would otherwise compute again in each worker,
    and the pool would break."""
    with store(sb, tmp_path / "s") as st, store(sb, tmp_path / "inline") as inline:
        for s in (st, inline):
            s.sync(DAILY, SYMS, "2024-01-01", "2024-12-31", progress=False)
        inline.compute(DAILY, ["rsi", "macd"], max_workers=1)
    script = tmp_path / "job.py"
    script.write_text(UNGUARDED)
    args = [sys.executable, "-"] if how == "stdin" else [sys.executable, str(script)]
    done = subprocess.run(
        [*args, str(tmp_path / "s")],
        input=UNGUARDED if how == "stdin" else None,
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["full", "full"]  # both datasets computed in full
    with Store(tmp_path / "s") as a, Store(tmp_path / "inline") as b:
        for name in ("rsi", "macd"):
            pd.testing.assert_frame_equal(
                a.read_derived(DAILY, name), b.read_derived(DAILY, name), check_exact=True
            )


@pytest.mark.slow
def test_spark_map_in_arrow_equals_in_process(sb: Sandbox, tmp_path: Path) -> None:
    from marketframe.store import spark_compute

    with store(sb, tmp_path / "one") as one, store(sb, tmp_path / "spark") as sp:
        for s in (one, sp):
            s.sync(DAILY, SYMS, "2023-01-01", "2026-11-20", progress=False)
        one.compute(DAILY, SPECS, max_workers=1)
    path = subprocess_env()["PYTHONPATH"]
    with local_spark("marketframe-compute", 2, **{"spark.executorEnv.PYTHONPATH": path}) as spark:
        rep = spark_compute(spark, str(tmp_path / "spark"), DAILY, SPECS, partitions=2)
        assert all(m == {"full": sorted(SYMS)} for m in rep.modes.values())
        # and Spark reads the derived dataset as any other
        rsi_dir = f"{tmp_path}/spark/{rep.paths()[1]}"
        df = spark.read.parquet(rsi_dir)
        assert df.count() == len(Store(tmp_path / "one").read_derived(DAILY, "rsi"))
    with Store(tmp_path / "one") as one, Store(tmp_path / "spark") as sp:
        identical(one, sp)


def test_a_rows_digest_goes_on_from_the_last_and_reads_the_earlier_forms() -> None:
    """An appended day hashes the newest file's rows once: the digest of more rows goes on
    from the last one and equals a fresh one. A target's digest covers the time and the
    inputs its outputs depend on: a moved high changes KDJ's, not the SMA's, and the open
    and the volume change none. The digests recorded before (``c:`` over every input any
    indicator reads, and the untagged single SHA-256 before that) are still made and
    matched, so an older store's states are continued, not recomputed."""
    import hashlib

    from marketframe.store._compute._derive import INPUTS, USED
    from marketframe.store._compute._statefile import RowsDigest

    def rows(*names: str) -> tuple[int, ...]:
        return (0, *sorted(1 + INPUTS.index(c) for c in names))

    close, kdj = rows("close"), rows("high", "low", "close")
    cols = np.random.default_rng(1).normal(size=(6, 1000))
    d = RowsDigest(cols)
    first, second = d.upto(600, close), d.upto(1000, close)
    assert first == RowsDigest(cols).upto(600, close)
    assert second == RowsDigest(cols).upto(1000, close)
    assert first != second and d.upto(600, close) == first  # fewer rows again: started over
    k600 = RowsDigest(cols).upto(600, kdj)
    for name, moves_sma, moves_kdj in [
        ("close", True, True),
        ("high", False, True),
        ("open", False, False),
        ("volume", False, False),
    ]:
        changed = cols.copy()
        changed[1 + INPUTS.index(name), 10] += 0.01
        assert (RowsDigest(changed).upto(600, close) != first) is moves_sma, name
        assert (RowsDigest(changed).upto(600, kdj) != k600) is moves_kdj, name
    wide = [(0, *(1 + INPUTS.index(c) for c in USED))][0]
    earlier = hashlib.sha256()
    for j in wide:
        earlier.update(cols[j, :600].tobytes())
    assert RowsDigest(cols).upto(600, close, like=earlier.hexdigest()) == earlier.hexdigest()
    tagged = (
        "c:"
        + hashlib.sha256(
            b"".join(hashlib.sha256(cols[j, :600].tobytes()).digest() for j in wide)
        ).hexdigest()
    )
    assert RowsDigest(cols).upto(600, close, like=tagged) == tagged


def test_a_state_slot_is_rewritten_in_place_at_any_size(tmp_path: Path) -> None:
    """A slot is overwritten in place (the same inode): at the same size only its data is
    flushed, at another it is cut or grown to the new state's bytes exactly."""
    from marketframe.store._storage._local import LocalStorage

    storage = LocalStorage(tmp_path)
    path = tmp_path / "d" / "_state-a.bin"
    inodes = set()
    for data in (b"a" * 8192, b"b" * 4096, b"c" * 4096, b"d" * 12288):  # shorter, same, longer
        stamp = storage.rewrite("d/_state-a.bin", data)
        assert path.read_bytes() == data
        assert stamp == {"mtime_ns": path.stat().st_mtime_ns}
        inodes.add(path.stat().st_ino)
    assert len(inodes) == 1


def test_a_state_holds_the_rows_its_kernels_read_and_reads_the_earlier_form() -> None:
    """A state's context holds only the rows of the block its spec's kernels read (the
    close; KDJ also the high and the low): MACD's 795 bars of context are one row, not six.
    A state written before (all six rows, no ``rows`` in its header) is still read, so an
    older store's states are continued; a state of other rows is refused (recomputed)."""
    from marketframe.store._compute._derive import needs
    from marketframe.store._compute._statefile import read_state, state_bytes

    ctx6 = np.random.default_rng(2).normal(size=(6, 794))
    for name in ("macd", "kdj"):
        use = needs(sf.spec(name))
        meta = {"format": "f", "rows": [use.start, use.stop]}
        data = state_bytes(meta, ctx6[use])
        rows = use.stop - use.start  # 8 bytes a bar and row, in whole 4 KiB pages
        assert len(data) == (8192 if rows == 1 else 20480)  # all six rows: 40960 bytes
        assert len(state_bytes(meta, ctx6)) == 40960
        got_meta, got = read_state(data, use)
        assert got_meta == meta
        np.testing.assert_array_equal(got, ctx6[use])
        _, old = read_state(state_bytes({"format": "f"}, ctx6), use)
        np.testing.assert_array_equal(old, ctx6[use])
    close_only = state_bytes({"rows": [4, 5]}, ctx6[4:5])
    with pytest.raises(ValueError, match="other rows"):
        read_state(close_only, needs(sf.spec("kdj")))


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"executor": "dask"}, "executor"),
        ({"executor": 2}, "executor"),
        ({"max_workers": 0}, "max_workers"),
        ({"max_workers": 1.5}, "max_workers"),
        ({"max_workers": True}, "max_workers"),
    ],
)
def test_a_bad_executor_or_worker_count_is_refused_before_the_store_is_locked(
    sb: Sandbox, tmp_path: Path, kw: dict[str, object], name: str
) -> None:
    """An executor given by name failed on its first task, once the store was locked and
    read; ``max_workers=0`` ran a pool of a process per core. Both are refused first: with
    the store locked by another process, the error is still the argument's."""
    from filelock import FileLock

    from marketframe.exceptions import InvalidParams
    from marketframe.store import LOCK

    st = Store(tmp_path, api_key=sb.api_key, base_url=sb.base_url, lock_timeout=0)
    with FileLock(str(tmp_path / LOCK)), pytest.raises(InvalidParams, match=name) as err:
        st.compute(DAILY, "sma", **kw)  # type: ignore[arg-type]
    assert "allowed:" in str(err.value)


def test_reading_a_dataset_never_computed_names_those_that_were(
    sb: Sandbox, tmp_path: Path
) -> None:
    """A spec read with other periods (or another convention) than it was computed with was
    an empty frame, as if the symbols had no bars; it is refused, naming what was computed."""
    from marketframe.exceptions import InvalidParams

    with store(sb, tmp_path / "s") as st:
        st.sync(DAILY, ["2330"], "2026-09-01", "2026-10-31", progress=False)
        with pytest.raises(InvalidParams, match=r"rsi\(14\) .* never computed.*store\.compute"):
            st.read_derived(DAILY, "rsi")
        st.compute(DAILY, ["rsi", sf.spec("macd", 5, 35, 5)], max_workers=1)
        with pytest.raises(
            InvalidParams, match=r"allowed: the specs computed here: macd\(5, 35, 5\), rsi\(14\)"
        ):
            st.read_derived(DAILY, sf.spec("rsi", 15))
        seeded = sf.spec("rsi", convention="rsi_seed=first")
        with pytest.raises(InvalidParams, match=r"rsi\(14\) \[RsiConvention\(seed='first'"):
            st.read_derived(DAILY, seeded)
        assert len(st.read_derived(DAILY, "rsi")) == len(st.read(DAILY))


def test_read_derived_takes_a_date_range(sb: Sandbox, tmp_path: Path) -> None:
    with store(sb, tmp_path / "r") as st:
        st.sync(DAILY, SYMS, "2024-06-01", "2025-06-30", progress=False)
        st.compute(DAILY, "sma", max_workers=1)
        whole = st.read_derived(DAILY, "sma", backend="arrow")
        part = st.read_derived(
            DAILY, "sma", ["2330"], start="2025-01-01", end="2025-03-31", backend="arrow"
        )
        dates = part.column("date").to_pylist()
        assert part.num_rows > 40 and set(part.column("symbol").to_pylist()) == {"2330"}
        assert min(dates) >= dt.date(2025, 1, 2) and max(dates) <= dt.date(2025, 3, 31)
        mask = pc.and_(
            pc.equal(whole.column("symbol"), "2330"),
            pc.and_(
                pc.greater_equal(whole.column("date"), pa.scalar(dt.date(2025, 1, 1))),
                pc.less_equal(whole.column("date"), pa.scalar(dt.date(2025, 3, 31))),
            ),
        )
        assert whole.filter(mask).column("sma_20").to_pylist() == part.column("sma_20").to_pylist()
        with pytest.raises(InvalidParams, match="start"):
            st.read_derived(DAILY, "sma", start="2025-13-01")


def test_compute_over_a_dataset_never_synced_says_so(sb: Sandbox, tmp_path: Path) -> None:
    from marketframe.store import NotSynced

    with store(sb, tmp_path / "e") as st:
        with pytest.raises(NotSynced, match=r"store\.sync\('stock\.historical\.candles'"):
            st.compute(DAILY, "sma", max_workers=1)
        st.sync(DAILY, "2330", "2025-01-01", "2025-03-31", progress=False)
        with pytest.raises(NotSynced, match="timeframe W"):
            st.compute(DAILY, "sma", timeframe="W", max_workers=1)


def test_undefined_outputs_are_nulls_that_sql_and_polars_skip(sb: Sandbox, tmp_path: Path) -> None:
    import duckdb
    import polars as pl

    with store(sb, tmp_path / "n") as st:
        st.sync(DAILY, SYMS, "2024-01-01", "2025-06-30", progress=False)
        report = st.compute(DAILY, "rsi", max_workers=1)
        path = f"{st.root}/{report.paths()[0]}"
        avg = duckdb.sql(f"select avg(rsi_14) from read_parquet('{path}/**/*.parquet')").fetchall()
        assert avg[0][0] == pytest.approx(avg[0][0]) and 0 < avg[0][0] < 100  # not NaN
        lazy = pl.scan_parquet(f"{path}/**/*.parquet", hive_partitioning=True)
        assert 0 < lazy.select(pl.col("rsi_14").mean()).collect().item() < 100
        got = st.read_derived(DAILY, "rsi", backend="polars").sort("symbol", "date")
        raw = st.read(DAILY, backend="polars")
        want = raw.md.rsi(14).sort("symbol", "date")
        assert got["rsi_14"].null_count() == want["rsi_14"].null_count() == 14 * len(SYMS)
        assert got["rsi_14"].is_nan().sum() == 0
        np.testing.assert_allclose(
            got["rsi_14"].fill_null(-1).to_numpy(), want["rsi_14"].fill_null(-1).to_numpy()
        )
        pandas = st.read_derived(DAILY, "rsi")  # nulls read as NaN, as df.md gives them
        assert pandas["rsi_14"].isna().sum() == 14 * len(SYMS)


@settings(max_examples=60, deadline=None)
@given(
    st_.lists(st_.booleans(), min_size=1, max_size=300),
    st_.lists(st_.booleans(), min_size=1, max_size=300),
)
def test_a_part_holds_nulls_where_outputs_are_undefined_in_the_bytes_of_one_chunk(
    first: list[bool], second: list[bool]
) -> None:
    """Wherever a kernel leaves values undefined (the warm-up, a missing input in the
    middle, a trailing one), the part holds nulls exactly there and its bytes are those of
    a part written from one array with a validity bitmap (as every stored part's hash
    was made)."""
    from marketframe.store._compute._partfile import bucket_part, part_table, serialize

    n = min(len(first), len(second))
    sp = sf.spec("bbands", 20, 2.0)
    rng = np.random.default_rng(n)
    masks = [np.array(first[:n]), np.array(second[:n]), np.zeros(n, bool)]
    values = [np.where(m, np.nan, rng.normal(size=n)) for m in masks]
    date = pa.chunked_array([pa.array(np.arange(n), pa.int64()).cast(pa.timestamp("us"))])
    part = bucket_part([([("2330", n)], part_table(sp, date, values))])
    for name, m in zip(sp.names, masks, strict=True):
        assert part.column(name).is_null().to_numpy(zero_copy_only=False).tolist() == m.tolist()
    one = pa.table(
        [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in part.columns],
        schema=part.schema,
    )
    assert bytes(serialize(part)) == bytes(serialize(one)) == plain(one)


def plain(table: pa.Table) -> bytes:
    """A part's bytes from pyarrow's writer given the symbol as a string column, with the
    options of every stored part: the file a reader takes it for."""
    import pyarrow.parquet as pq

    i = table.schema.get_field_index("symbol")
    text = table.column(i).cast(pa.string())
    table = table.set_column(i, pa.field("symbol", pa.string(), nullable=False), text)
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(
        sink,
        table.schema,
        compression="none",
        write_page_checksum=True,
        use_dictionary=["symbol"],  # type: ignore[arg-type]
        column_encoding={"date": "DELTA_BINARY_PACKED"},
    ) as w:
        w.write_table(table)
    return bytes(sink.getvalue())


@pytest.mark.parametrize("name", ["sma", "rsi", "kdj", "macd", "bbands"])
@pytest.mark.parametrize("date_type", [pa.timestamp("us", "Asia/Taipei"), pa.date32()])
def test_a_part_is_the_bytes_pyarrow_writes_for_the_symbol_as_a_string(
    name: str, date_type: pa.DataType
) -> None:
    """A bucket's part: its members' rows, the symbol reaching the writer as a dictionary
    (no row hashed), declared a string: the file is the one the string column gives, byte
    for byte, and reads back with the symbol a string and the time zone kept."""
    import pyarrow.parquet as pq

    from marketframe.store._compute._partfile import bucket_part, part_table, serialize

    sp = sf.spec(name)
    rng = np.random.default_rng(7)
    chunks = []
    # a chunk a member's feed, and one of two members' feeds computed together
    for runs in ([("00878", 700)], [("2330", 30)], [("00878", 5), ("0050", 9)]):
        n = sum(k for _, k in runs)
        values = [rng.normal(size=n) for _ in sp.names]
        values[0][: min(25, n)] = np.nan  # a warm-up: a nullable column
        day = pa.array(np.arange(n), pa.int32()).cast(pa.date32()).cast(date_type)
        chunks.append((runs, part_table(sp, pa.chunked_array([day]), values)))
    part = bucket_part(chunks)
    got = bytes(serialize(part))
    assert got == plain(part)
    back = pq.read_table(pa.BufferReader(got))
    assert back.schema.field("symbol").type == pa.string()
    want_sym = ["00878"] * 700 + ["2330"] * 30 + ["00878"] * 5 + ["0050"] * 9
    assert back.column("symbol").to_pylist() == want_sym
    assert back.schema.field("date").type == date_type
    want = part.set_column(0, pa.field("symbol", pa.string(), False), back.column("symbol"))
    assert back.equals(want.combine_chunks())


def test_an_infinite_close_is_missing_in_compute_as_in_md(sb: Sandbox, tmp_path: Path) -> None:
    """An inf close in an older minute-year file: the kernels take it as missing (NaN) in
    df.md, in the state-carrying path and in compute, whose later files start from a
    context holding it; every derived value equals df.md over the same rows."""
    from marketframe.store._dataset import resolve
    from marketframe.store._report import SyncReport
    from marketframe.store._sync import _commit

    sb.set_now("2027-01-08T14:00:00+08:00")  # the latest 30 days span two year partitions
    try:
        with store(sb, tmp_path / "inf") as st:
            st.sync(DAILY, ["2330"], timeframe="1", progress=False)
            raw = st.read(DAILY, "2330", timeframe="1", backend="arrow")
            last_2026 = pc.max(
                raw.filter(
                    pc.less(raw.column("date"), pa.scalar(dt.datetime(2027, 1, 1, tzinfo=dt.UTC)))
                ).column("date")
            ).as_py()
            spec = resolve(DAILY, "1", {})
            row = raw.filter(pc.equal(raw.column("date"), pa.scalar(last_2026)))
            i = row.schema.get_field_index("close")
            row = row.set_column(i, "close", pa.array([float("inf")], row.schema[i].type))
            _commit.write_rows(
                st._parts.storage, st._parts.log, spec, "2330", row, SyncReport(spec.ds)
            )
            st._parts.log.commit()
            st.compute(DAILY, ["sma", "ema", "rsi"], timeframe="1", max_workers=1)
            source = st.read(DAILY, "2330", timeframe="1")
            assert np.isinf(source["close"]).sum() == 1
            want = source.md.sma(20).md.ema(20).md.rsi(14).set_index(["symbol", "date"])
            for name, col in (("sma", "sma_20"), ("ema", "ema_20"), ("rsi", "rsi_14")):
                got = st.read_derived(DAILY, name, timeframe="1")
                ref = want.loc[list(zip(got["symbol"], got["date"], strict=True))][col]
                a, b = got[col].to_numpy(float), ref.to_numpy(float)
                np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=col)
                assert np.isfinite(a[~np.isnan(a)]).all()
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-9, err_msg=col)
    finally:
        sb.set_now(NOW)


def test_compute_takes_the_services_day_for_which_dividends_have_happened(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """As the loaders' adjustment does: a service whose day is behind this machine's lists
    0050's coming dividend as announced; compute neither applies it nor reports it as a past
    dividend that could not be applied, and its outputs equal ``df.md`` over the adjusted
    read."""
    import warnings

    from marketframe.adjust import ActionNotApplied

    with make_sandbox(now="2026-07-01T14:00:00+08:00") as (_, client):
        with Store(tmp_path / "s", client) as st, warnings.catch_warnings():
            warnings.simplefilter("error", ActionNotApplied)
            st.sync(DAILY, "0050", "2026-01-01", "2026-06-30", progress=False)
            st.compute(DAILY, "sma", max_workers=1, adjust="all")
            got = st.read_derived(DAILY, "sma", adjust="all")
            want = st.read(DAILY, adjust="all").md.sma(20)
    np.testing.assert_allclose(got["sma_20"], want["sma_20"], rtol=1e-12, equal_nan=True)


def test_symbols_of_one_bucket_share_its_files_and_each_reads_as_md(
    sb: Sandbox, tmp_path: Path
) -> None:
    """Two symbols of one bucket: one part a spec holds both; a symbol read alone is its
    own rows; a day appended to both is one new part a spec; a symbol computed alone
    brings its bucket's other member up to date (said in the report); a member joining
    later is computed in full beside the other's unchanged rows; a damaged shared part
    computes the bucket again. After each step every dataset equals df.md."""
    pair = ["0050", "2308"]
    assert bucket_of(pair[0]) == bucket_of(pair[1])  # the pair this test is about

    def parts(st: Store) -> list[Path]:
        return sorted((st.root).glob(f"dataset=derived.rsi/*/*/bucket={bucket_of('0050')}/part-*"))

    with store(sb, tmp_path / "b") as st:
        st.sync(DAILY, pair, "2023-01-01", "2026-10-30", progress=False)
        rep = st.compute(DAILY, SPECS, symbols=["0050"], max_workers=1)
        assert all(m == {"full": ["0050"]} for m in rep.modes.values())
        rep = st.compute(DAILY, SPECS, max_workers=1)  # 2308 joins the bucket
        assert all(m == {"full": ["2308"], "unchanged": ["0050"]} for m in rep.modes.values())
        check(st, reference(st.read(DAILY)))
        one = st.read_derived(DAILY, "rsi", symbols="2308")
        assert set(one["symbol"]) == {"2308"} and len(one) == len(st.read(DAILY, "2308"))
        before = parts(st)
        st.sync(DAILY, pair, "2023-01-01", "2026-11-06", progress=False)
        rep = st.compute(DAILY, SPECS, symbols=["0050"], max_workers=1)
        assert all(m == {"appended": pair} for m in rep.modes.values())  # 2308 said too
        after = parts(st)
        assert len(set(after) - set(before)) == 1  # the week of both: one file
        check(st, reference(st.read(DAILY)))
        shared = after[-1]
        shared.write_bytes(shared.read_bytes()[:-10])
        rep = st.compute(DAILY, SPECS, max_workers=1)
        rsi = next(k for k in rep.modes if k.startswith("derived.rsi|"))
        assert rep.modes[rsi] == {"full": pair}
        check(st, reference(st.read(DAILY)))
        assert st.verify().problems == []
        # a new indicator asked for one member, beside one both hold: its dataset gains
        # no other symbol
        rep = st.compute(DAILY, ["rsi", "ema"], symbols=["0050"], max_workers=1)
        assert list(rep.modes.values()) == [{"unchanged": ["0050"]}, {"full": ["0050"]}]
        assert set(st.read_derived(DAILY, "ema")["symbol"]) == {"0050"}
        with pytest.raises(InvalidParams, match="2308 not computed"):
            st.read_derived(DAILY, "ema", symbols="2308")
