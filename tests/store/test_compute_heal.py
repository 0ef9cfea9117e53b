"""Derived data that heals: compute never deletes a file its log records, notices
damage to its own outputs, and ``verify(repair=True)`` recomputes a damaged derived symbol.

Each trigger of the lost-file case is tried as a user meets it: a hard-link backup restored,
a damaged state slot, a repaired older minute-year input file. After each, every derived
file the log records is there (``verify`` finds nothing), the derived data equals
``df.md`` over the source, and a rerun is ``unchanged``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from marketframe.indicators import stateful as sf
from marketframe.sandbox import Sandbox
from marketframe.store import Store
from marketframe.store._compute._derive import bucket_of

from ._helpers import NOW
from .conftest import Place
from .test_compute import DAILY, SPECS, check, reference

MINUTE_NOW = "2027-01-08T14:00:00+08:00"  # the latest 30 days span two year partitions


def store(sb: Sandbox, path: Path) -> Store:
    return Store(path, api_key=sb.api_key, base_url=sb.base_url)


@pytest.fixture
def minute_clock(sb: Sandbox) -> Iterator[None]:
    sb.set_now(MINUTE_NOW)
    try:
        yield
    finally:
        sb.set_now(NOW)


def healthy(st: Store, timeframe: str | None = None) -> None:
    """Every file the log records is there and intact, the derived data equals
    ``df.md`` over the source, and a rerun has nothing to do."""
    assert st.verify().problems == []
    check(st, reference(st.read(DAILY, timeframe=timeframe)), timeframe=timeframe)
    again = st.compute(DAILY, SPECS, timeframe=timeframe, max_workers=1)
    assert all(set(m) == {"unchanged"} for m in again.modes.values()), again.modes


def rewrite_first_bar(st: Store, symbol: str, column: str) -> None:
    """The first stored one-minute bar of ``symbol`` (the older year's) changed, written as
    a sync writes it (a repaired file): ``close`` 1% up, or ``volume`` one more."""
    from marketframe.store._dataset import resolve
    from marketframe.store._report import SyncReport
    from marketframe.store._sync import _commit

    spec = resolve(DAILY, "1", {})
    row = st.read(DAILY, symbol, timeframe="1", backend="arrow").slice(0, 1)
    i = row.schema.get_field_index(column)
    value = row.column(column).to_pylist()[0]
    changed = value * 1.01 if column == "close" else value + 1
    row = row.set_column(i, row.schema.field(i), pa.array([changed], row.schema[i].type))
    _commit.write_rows(st._parts.storage, st._parts.log, spec, symbol, row, SyncReport(spec.ds))
    st._parts.log.commit()


def test_restoring_a_hard_link_backup_loses_no_part(sb: Sandbox, tmp_path: Path) -> None:
    """A backup made with ``cp -al`` and restored as docs/compute.md describes: the slot a
    later run rewrote in place no longer matches the backup's log, so the symbols are
    computed again in full, to parts byte-identical to (named as) the backup's own."""
    live, backup = tmp_path / "live", tmp_path / "backup"
    with store(sb, live) as st:
        st.sync(DAILY, ["2330", "2454"], "2023-01-01", "2026-09-30", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)  # names slot a
    subprocess.run(["cp", "-al", str(live), str(backup)], check=True)
    with store(sb, live) as st:
        for end in ("2026-10-31", "2026-11-20"):  # slot b, then slot a rewritten in place
            st.sync(DAILY, ["2330", "2454"], "2023-01-01", end, progress=False)
            st.compute(DAILY, SPECS, max_workers=1)
    shutil.rmtree(live)
    os.rename(backup, live)  # the backup restored
    with store(sb, live) as st:
        rep = st.compute(DAILY, SPECS, max_workers=1)
        assert all(m == {"full": ["2330", "2454"]} for m in rep.modes.values()), rep.modes
        healthy(st)


@pytest.mark.parametrize("timeframe", [None, "1"])
@pytest.mark.usefixtures("minute_clock")
def test_a_zeroed_state_slot_loses_no_part(
    sb: Sandbox, tmp_path: Path, timeframe: str | None
) -> None:
    """A named state slot zeroed (a disk error, a bad restore): nothing else changed, so
    the symbol's full recomputation writes the very parts it has, under the same names."""
    with store(sb, tmp_path / "z") as st:
        kw = {"timeframe": timeframe} if timeframe else {"start": "2023-01-01"}
        st.sync(DAILY, ["2330", "2454"], progress=False, **kw)  # type: ignore[arg-type]
        st.compute(DAILY, SPECS, timeframe=timeframe, max_workers=1)
        where = f"dataset=derived.*/*/*/bucket={bucket_of('2454')}/_state-a.bin"
        slots = list((tmp_path / "z").glob(where))
        assert len(slots) == len(SPECS)
        for f in slots:
            f.write_bytes(bytes(f.stat().st_size))
        rep = st.compute(DAILY, SPECS, timeframe=timeframe, max_workers=1)
        want = {"full": ["2454"], "unchanged": ["2330"]}
        assert all(m == want for m in rep.modes.values()), rep.modes
        healthy(st, timeframe)


@pytest.mark.parametrize(
    "column",
    [
        "volume",  # no indicator reads it: every part comes out the same
        "close",  # far from the year's end: 2027's parts come out the same
    ],
)
@pytest.mark.usefixtures("minute_clock")
def test_a_repaired_older_minute_year_loses_no_part(
    sb: Sandbox, tmp_path: Path, column: str
) -> None:
    with store(sb, tmp_path / "y") as st:
        st.sync(DAILY, ["2330", "2454"], timeframe="1", progress=False)
        st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
        rewrite_first_bar(st, "2454", column)
        rep = st.compute(DAILY, SPECS, timeframe="1", max_workers=1)
        want = {"recomputed": ["2454"], "unchanged": ["2330"]}
        assert all(m == want for m in rep.modes.values()), rep.modes
        healthy(st, "1")


def test_compacting_never_deletes_a_recorded_part(tmp_path: Path) -> None:
    """Parts merged with a day's new bars are handed to the driver as replaced, never
    deleted by the task (the log records them until the driver's save), and the merge is
    the one file the task writes: staged under a hidden name, in place only once the
    driver's group commit has made it durable."""
    import numpy as np
    import pyarrow.parquet as pq

    from marketframe.indicators import stateful as sf
    from marketframe.store._compute._derive import Outcome
    from marketframe.store._compute._partfile import COMPACT, bucket_part, part_table, write_part
    from marketframe.store._dataset import DatasetId
    from marketframe.store._storage._local import LocalStorage

    storage, sp = LocalStorage(tmp_path), sf.spec("sma", 2)
    ds = DatasetId("derived.sma", "p", "D")

    def part(i: int) -> pa.Table:
        date = pa.chunked_array([pa.array([i * 10 + j for j in range(5)], pa.date32())])
        return bucket_part([([("2330", 5)], part_table(sp, date, [np.ones(5)]))])

    files: list[str] = []
    made: dict[str, dict[str, object]] = {}
    for i in range(COMPACT):
        out = Outcome(ds)
        files = write_part(storage, ds, "01", None, files, made, part(i), out)
        storage.settle([(tmp, rel) for rel, tmp in out.staged.items()], [])
        made |= out.written
    out = Outcome(ds)
    merged = write_part(storage, ds, "01", None, files, made, part(COMPACT), out)
    assert len(merged) < len(files) and set(out.dropped) == set(files) - set(merged)
    assert all((tmp_path / rel).is_file() for rel in files)  # none deleted by the task
    (new,) = out.written
    assert new in merged and not (tmp_path / new).exists()  # staged, not in place yet
    storage.settle([(out.staged[new], new)], [])
    got = pq.read_table(tmp_path / new)
    assert got.num_rows == 5 * (COMPACT + 1 - merged.index(new))


def damage(place: Place, name: str, rel: str, how: str) -> None:
    """Damage the file ``rel`` of store ``name``: truncated, one bit flipped, or deleted."""
    if place.server is None:
        path = place.tmp / name / rel
        data = path.read_bytes()
    else:
        s3, key = place.server.client(), f"{name}/{rel}"
        data = s3.get_object(Bucket=place.bucket, Key=key)["Body"].read()
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "bit-flipped":
        data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
    if place.server is None:
        path.unlink() if how == "deleted" else path.write_bytes(data)
    elif how == "deleted":
        s3.delete_object(Bucket=place.bucket, Key=key)
    else:
        s3.put_object(Bucket=place.bucket, Key=key, Body=data)


@pytest.mark.parametrize("how", ["truncated", "bit-flipped", "deleted"])
def test_a_damaged_derived_part_is_computed_again(sb: Sandbox, place: Place, how: str) -> None:
    """Compute checks its own outputs as a sync checks its files (size and time, an ETag on
    an object store; hashed only when they differ): a damaged part's symbol is computed
    again, not reported ``unchanged`` over a store that cannot be read."""
    with place.store("d", api_key=sb.api_key, base_url=sb.base_url) as st:
        st.sync(DAILY, ["2330", "2454"], "2023-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, SPECS, max_workers=1)
        mine = f"bucket={bucket_of('2454')}/part-"
        (part,) = [f for f in place.files("d", "dataset=derived.rsi/") if mine in f]
        damage(place, "d", part, how)
        rep = st.compute(DAILY, SPECS, max_workers=1)
        rsi = next(k for k in rep.modes if k.startswith("derived.rsi|"))
        assert rep.modes[rsi] == {"full": ["2454"], "unchanged": ["2330"]}
        assert all(set(m) == {"unchanged"} for k, m in rep.modes.items() if k != rsi)
        healthy(st)


def test_a_touched_derived_part_is_kept_and_its_time_recorded(sb: Sandbox, tmp_path: Path) -> None:
    """A part whose time changed but not its bytes (a store copied without keeping times)
    is hashed once, found intact and kept: its new time is recorded, nothing recomputed."""
    from marketframe.store._compute._derive import derived_id
    from marketframe.store._dataset import resolve

    with store(sb, tmp_path / "t") as st:
        st.sync(DAILY, ["2330"], "2023-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, "rsi", max_workers=1)
        (part,) = (tmp_path / "t").glob("dataset=derived.rsi/**/part-*.parquet")
        os.utime(part, ns=(1_000_000_000, 1_000_000_000))
        rep = st.compute(DAILY, "rsi", max_workers=1)
        assert list(rep.modes.values()) == [{"unchanged": ["2330"]}]
        ds = derived_id(resolve(DAILY, None, {}).ds, sf.spec("rsi"), None)
        rel = part.relative_to(tmp_path / "t").as_posix()
        assert st._parts.log.file(ds, rel)["mtime_ns"] == 1_000_000_000  # type: ignore[index]


@pytest.mark.parametrize("timeframe", [None, "1"])
@pytest.mark.usefixtures("minute_clock")
def test_verify_repair_computes_a_damaged_derived_part_again(
    sb: Sandbox, place: Place, timeframe: str | None
) -> None:
    """``verify(repair=True)``, the command ``StoreCorrupted`` names, repairs derived data
    (daily and minute) by computing the damaged symbol again from its source; the data
    then reads as ``df.md`` over the source and nothing is left to do."""
    with place.store("v", api_key=sb.api_key, base_url=sb.base_url) as st:
        kw = {"timeframe": timeframe} if timeframe else {"start": "2023-01-01"}
        st.sync(DAILY, ["2330", "2454"], progress=False, **kw)  # type: ignore[arg-type]
        st.compute(DAILY, SPECS, timeframe=timeframe, max_workers=1)
        mine = f"bucket={bucket_of('2454')}/"
        parts = [f for f in place.files("v", "dataset=derived.macd/") if mine in f]
        damage(place, "v", next(f for f in parts if "/part-" in f), "truncated")
        found = st.verify()
        assert len(found.problems) == 1
        rep = st.verify(repair=True)
        assert rep.failures == [] and len(rep.repaired) == 1, rep
        assert "computed again from stock.historical.candles" in rep.repaired[0]
        healthy(st, timeframe)


def test_verify_repair_fetches_a_source_then_computes_its_derived_data(
    sb: Sandbox, tmp_path: Path
) -> None:
    """A damaged source file and a damaged adjusted derived part of the same symbol: the
    source is fetched again first, then the derived symbol computed from it."""
    with store(sb, tmp_path / "both") as st:
        st.sync(DAILY, ["2330", "2454"], "2023-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, "rsi", max_workers=1, adjust="all")
        root = tmp_path / "both"
        (src,) = root.glob("dataset=stock.historical.candles/*/*/sym=2454/part-0.parquet")
        (der,) = root.glob(f"dataset=derived.rsi/*/*/bucket={bucket_of('2454')}/part-*.parquet")
        for f in (src, der):
            f.write_bytes(f.read_bytes()[:-10])
        rep = st.verify(repair=True)
        assert rep.failures == [] and len(rep.repaired) == 2, rep
        assert st.verify().problems == []
        got = st.read_derived(DAILY, "rsi", adjust="all")
        ref = st.read(DAILY, adjust="all").md.rsi(14).set_index(["symbol", "date"])
        want = ref.loc[list(zip(got["symbol"], got["date"], strict=True))]["rsi_14"]
        assert len(got) == len(ref)
        import numpy as np

        np.testing.assert_allclose(got["rsi_14"], want, rtol=1e-12, atol=1e-9)


def test_verify_repair_reports_what_it_cannot_compute_again(sb: Sandbox, tmp_path: Path) -> None:
    """A derived part whose source no longer holds the symbol (its coverage forgotten, as a
    failed refetch leaves it) cannot be computed again: a failure of the report naming
    the sync to run, never a raw error."""
    from marketframe.store._dataset import resolve

    with store(sb, tmp_path / "orphan") as st:
        st.sync(DAILY, ["2330"], "2026-01-01", "2026-11-20", progress=False)
        st.compute(DAILY, "rsi", max_workers=1)
        (der,) = (tmp_path / "orphan").glob("dataset=derived.rsi/**/part-*.parquet")
        der.write_bytes(b"x")
        st._parts.log.drop_symbol(resolve(DAILY, None, {}).ds, "2330")
        st._parts.log.commit()
        rep = st.verify(repair=True)
        assert rep.repaired == [] and len(rep.failures) == 1
        assert "not computed again" in rep.failures[0] and "sync(" in rep.failures[0]
