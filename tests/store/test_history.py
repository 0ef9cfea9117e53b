"""Snapshots, reads as of a snapshot or a time, and gc: on a local store and on S3, a snapshot
reads afterwards exactly what it read when taken, whatever a resync, a repair or a new day
changed; gc removes only what nothing pins; readers of a dataset directory never see the
versions kept for them."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pds
import pytest

from marketframe.exceptions import InvalidParams, StoreCorrupted
from marketframe.sandbox import Sandbox
from marketframe.store import GcReport, Snapshot, Store, _io
from marketframe.store._dataset import resolve

from ._helpers import arrow_equal, subprocess_env
from .conftest import Place

C = "stock.historical.candles"
SYMS = ["2330", "0050"]
START = "2026-01-01"
TUESDAY = "2026-11-17T14:00:00+08:00"  # the weekly bar of this week changes every day


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    """A sandbox of this test alone: the tests move its clock."""
    with Sandbox(seed=11, now=TUESDAY, rate_limit=None) as s:
        yield s


def _open(place: Place, sb: Sandbox, name: str = "hist") -> Store:
    return place.store(name, api_key=sb.api_key, base_url=sb.base_url)


def _sync(st: Store) -> None:
    st.sync(C, SYMS, START, progress=False)
    st.sync(C, SYMS, START, timeframe="W", progress=False)


def _reads(st: Store, as_of: object = None) -> list[pa.Table]:
    return [
        st.read(C, SYMS, backend="arrow", as_of=as_of),  # type: ignore[arg-type]
        st.read(C, SYMS, timeframe="W", backend="arrow", as_of=as_of),  # type: ignore[arg-type]
        st.read_derived(C, "sma", backend="arrow", as_of=as_of),  # type: ignore[arg-type]
        st.read_derived(C, "rsi", timeframe="W", backend="arrow", as_of=as_of),  # type: ignore[arg-type]
    ]


def _same(got: list[pa.Table], want: list[pa.Table]) -> None:
    for a, b in zip(got, want, strict=True):
        arrow_equal(a, b)


def _compute(st: Store) -> None:
    st.compute(C, "sma", max_workers=1)
    st.compute(C, "rsi", timeframe="W", max_workers=1)


def test_a_snapshot_reads_what_it_read_when_taken(place: Place, sb: Sandbox) -> None:
    with _open(place, sb) as st:
        _sync(st)
        _compute(st)
        before = _reads(st)
        snap = st.snapshot("tuesday")
        assert isinstance(snap, Snapshot) and snap.name == "tuesday"
        taken = dt.datetime.now(dt.UTC)
        # a new day: new daily bars, this week's bar revised, the indicators appended
        sb.advance(trading_days=1)
        _sync(st)
        _compute(st)
        now = _reads(st)
        assert now[0].num_rows > before[0].num_rows
        week = now[1].filter(pa.compute.equal(now[1].column("symbol"), "2330"))
        old_week = before[1].filter(pa.compute.equal(before[1].column("symbol"), "2330"))
        assert week.column("close")[-1] != old_week.column("close")[-1]  # the bar changed
        _same(_reads(st, "tuesday"), before)
        _same(_reads(st, taken), before)  # the generation current at that time
        # another process opening the store reads the same
        with _open(place, sb) as again:
            _same(_reads(again, "tuesday"), before)
            _same(_reads(again), now)
            assert [s.name for s in again.list_snapshots()] == ["tuesday"]


def test_a_snapshot_survives_a_repair_and_a_resync(place: Place, sb: Sandbox) -> None:
    with _open(place, sb) as st:
        _sync(st)
        _compute(st)
        before = _reads(st)
        st.snapshot("s")
        rel = f"dataset={C}/params=default/tf=D/sym=2330/part-0.parquet"
        storage = st._parts.storage
        data = bytearray(storage.read(rel))
        data[len(data) // 2] ^= 0xFF
        storage.replace(rel, bytes(data))  # damaged in place, same size
        with pytest.raises(StoreCorrupted, match="sym=2330"):
            st.read(C, "2330", as_of="s")
        report = st.verify(repair=True)
        assert report.ok and any("fetched again" in r for r in report.repaired)
        _same(_reads(st, "s"), before)  # fetched again, byte for byte the same file
        sb.advance(trading_days=2)
        _sync(st)
        _compute(st)
        _same(_reads(st, "s"), before)


def test_a_kept_version_damaged_by_bit_rot_gives_way_to_an_intact_copy(
    tmp_path: Path, sb: Sandbox
) -> None:
    """Bit rot keeps a file's size and time, so the cheap check passes it: a sync that
    finds the damage as it merges (today's window is open: fetched again) writes the file
    again as it was, and keeps the damaged bytes as the version the snapshot pins. When the
    intact copy is replaced in turn (a new day), it becomes that version: the snapshot
    reads what it read, not StoreCorrupted."""
    with Store(tmp_path / "q", api_key=sb.api_key, base_url=sb.base_url) as st:
        _sync(st)
        _compute(st)
        before = _reads(st)
        st.snapshot("s")
        ds = resolve(C, "D", {}).ds
        rel = f"dataset={C}/params=default/tf=D/sym=2330/part-0.parquet"
        path = st.root / rel
        was = path.stat()
        with open(path, "r+b") as f:  # in place: a hard link to it is damaged too
            f.seek(was.st_size // 2)
            byte = f.read(1)[0]
            f.seek(was.st_size // 2)
            f.write(bytes([byte ^ 0xFF]))
        os.utime(path, ns=(was.st_atime_ns, was.st_mtime_ns))
        _sync(st)  # the same day: the file merged, found damaged, written again as it was
        assert _io.digest(path.read_bytes()) == st._parts.log.file(ds, rel)["hash"]
        _versions_intact(st.root)
        _same(_reads(st, "s"), before)
        sb.advance(trading_days=2)
        _sync(st)
        _compute(st)
        _same(_reads(st, "s"), before)
        _versions_intact(st.root)
        assert st.verify().ok


def _versions_intact(root: Path) -> None:
    """Every kept version holds the bytes its name (their hash) says."""
    for path in (root / _io.VERSIONS).glob("*"):
        assert _io.digest(path.read_bytes()) == path.name, f"damaged kept version {path.name}"


def test_gc_removes_only_what_nothing_pins(place: Place, sb: Sandbox) -> None:
    with _open(place, sb) as st:
        _sync(st)
        _compute(st)
        before = _reads(st)
        st.snapshot("keep-me")
        for _ in range(2):
            sb.advance(trading_days=1)
            _sync(st)
            _compute(st)
        now = _reads(st)
        assert place.files("hist", "_versions/")  # replaced files were kept
        report = st.gc(keep=dt.timedelta(0))
        assert isinstance(report, GcReport) and report.versions > 0 and report.bytes > 0
        _same(_reads(st, "keep-me"), before)  # pinned: kept
        _same(_reads(st), now)
        assert st.verify().problems == []
        st.delete_snapshot("keep-me")
        assert st.gc(keep=dt.timedelta(0)).versions > 0  # what only the snapshot pinned
        with pytest.raises(InvalidParams, match="'keep-me', which names no snapshot"):
            st.read(C, as_of="keep-me")
        _same(_reads(st), now)
        assert st.verify().problems == []


def test_gc_keeps_every_generation_of_the_last_keep(place: Place, sb: Sandbox) -> None:
    with _open(place, sb) as st:
        _sync(st)
        before = st.read(C, SYMS, backend="arrow")
        taken = dt.datetime.now(dt.UTC)
        sb.advance(trading_days=1)
        _sync(st)
        assert st.gc().versions == 0  # the default keeps a week: nothing is that old
        arrow_equal(st.read(C, SYMS, backend="arrow", as_of=taken), before)


def test_dataset_readers_never_see_the_kept_versions(tmp_path: Path, sb: Sandbox) -> None:
    with Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url) as st:
        _sync(st)
        sb.advance(trading_days=1)
        _sync(st)
        rows = st.read(C, SYMS, timeframe="W", backend="arrow").num_rows
        root = Path(st.root)
    assert list((root / "_versions").rglob("*"))  # the week's replaced files are kept
    weekly = root / f"dataset={C}" / "params=default" / "tf=W"
    assert pds.dataset(weekly, format="parquet", partitioning="hive").count_rows() == rows
    assert pl.scan_parquet(f"{weekly}/**/*.parquet").select(pl.len()).collect().item() == rows
    # even a glob over the whole store: kept versions are not named *.parquet
    everything = duckdb.sql(f"select count(*) from read_parquet('{root}/**/*.parquet')")
    daily = st.read(C, SYMS, backend="arrow").num_rows
    assert everything.fetchall() == [(rows + daily,)]


def test_history_arguments_are_checked(tmp_path: Path, sb: Sandbox) -> None:
    with Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(C, SYMS, START, progress=False)
        with pytest.raises(InvalidParams, match="before the store's first commit"):
            st.read(C, as_of=dt.datetime(2020, 1, 1))
        st.snapshot("a")
        for bad in ("", "has space", "../up", "x" * 101, 7):
            with pytest.raises(InvalidParams, match="letters, digits"):
                st.snapshot(bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidParams, match="'a', a snapshot's name"):
            st.snapshot("a")
        with pytest.raises(InvalidParams, match="date alone is ambiguous"):
            st.read(C, as_of="2026-11-17")
        with pytest.raises(InvalidParams, match="snapshot's name, or a datetime"):
            st.read(C, as_of=3)  # type: ignore[arg-type]
        with pytest.raises(InvalidParams, match="'b', which names no snapshot.*the snapshots: a"):
            st.delete_snapshot("b")
        with pytest.raises(InvalidParams, match="timedelta"):
            st.gc(keep=7)  # type: ignore[arg-type]
        # a time before the oldest generation gc kept: refused, not read as something else
        first = dt.datetime.now(dt.UTC)
        for _ in range(2):
            sb.advance(trading_days=1)
            st.sync(C, SYMS, START, progress=False)
            st._parts.log.ensure_checkpoint()
        st.delete_snapshot("a")
        st.gc(keep=dt.timedelta(0))
        with pytest.raises(InvalidParams, match="before the oldest generation the store keeps"):
            st.read(C, as_of=first)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "marketframe", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )


def test_the_commands(tmp_path: Path, sb: Sandbox) -> None:
    root = tmp_path / "s"
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        _sync(st)
        before = st.read(C, timeframe="W", backend="arrow")
    made = _cli("snapshot", "create", "q4", "--store", str(root))
    assert made.returncode == 0 and "'q4' pins generation" in made.stdout
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        sb.advance(trading_days=1)
        _sync(st)
    listed = _cli("snapshot", "list", "--store", str(root))
    assert listed.returncode == 0 and listed.stdout.startswith("q4\tgeneration")
    out = tmp_path / "q4.parquet"
    got = _cli(
        "export", C, "--store", str(root), "--timeframe", "W", "--as-of", "q4", "--out", str(out)
    )
    assert got.returncode == 0, got.stderr
    arrow_equal(pa.parquet.read_table(out), before)
    for args in (
        ("snapshot", "create", "q4", "--store", str(root)),  # exists
        ("snapshot", "delete", "nope", "--store", str(root)),
        ("snapshot", "list", "--store", str(tmp_path / "missing")),
        ("gc", "--store", str(root), "--keep", "a week"),
        ("export", C, "--as-of", "q4", "--out", str(out)),  # no --store
    ):
        bad = _cli(*args)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, (args, bad)
    gc = _cli("gc", "--store", str(root), "--keep", "0", "--json")
    assert gc.returncode == 0 and '"versions": 0' in gc.stdout  # q4 pins what was replaced
    assert _cli("snapshot", "delete", "q4", "--store", str(root)).returncode == 0
    assert '"versions": 0' not in _cli("gc", "--store", str(root), "--keep", "0", "--json").stdout


def test_gc_takes_the_commands_durations_and_refuses_others(tmp_path: Path) -> None:
    """``gc(keep=)`` reads ``"7d"``/``"36h"``/``"0"`` as the command's ``--keep`` does; a
    negative time or another word is refused before anything is removed."""
    st = Store(tmp_path / "st")
    assert st.gc(keep="0").versions == 0
    assert st.gc(keep="36h").versions == 0
    for bad in ("7x", "-1d", dt.timedelta(days=-1), 7):
        with pytest.raises(InvalidParams, match="'7d', '36h' or '0'"):
            st.gc(keep=bad)  # type: ignore[arg-type]
