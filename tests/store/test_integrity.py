"""Corruption is detected and repaired; a damaged log or file is a typed error naming the path
and the repair, never a raw one; stores written by earlier versions open and are upgraded."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store, StoreCorrupted, _io
from marketframe.store._log._legacy import MANIFEST, PREVIOUS

from ._helpers import arrow_equal

CANDLES = "stock.historical.candles"
SYMS = ["2330", "0050"]
START, END = "2023-01-01", "2024-12-31"


def _file(root: Path, sym: str) -> Path:
    return root / f"dataset={CANDLES}" / "params=default" / "tf=D" / f"sym={sym}" / _io.PART


def _flip_close(path: Path) -> None:
    """Change one byte inside the `close` column's data page (same size, still Parquet)."""
    meta = pq.ParquetFile(path).metadata
    col = next(
        meta.row_group(0).column(i)
        for i in range(meta.num_columns)
        if meta.row_group(0).column(i).path_in_schema == "close"
    )
    data = bytearray(path.read_bytes())
    at = col.data_page_offset + col.total_compressed_size - 8
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _delete(root: Path) -> None:
    _file(root, "2330").unlink()


def _restore_older(root: Path) -> None:
    older = root.parent / "older.parquet"
    shutil.copy2(_file(root, "2330"), older)  # taken before the second sync below
    root.joinpath(".older").write_text(str(older))


def _copy_over(root: Path) -> None:
    shutil.copyfile(_file(root, "0050"), _file(root, "2330"))


def _sync(st: Store, end: str = END) -> None:
    st.sync(CANDLES, SYMS, START, end, progress=False)


@pytest.fixture
def clean(make_store: Callable[..., Store]) -> pa.Table:
    st = make_store("clean")
    _sync(st)
    return st.read(CANDLES, SYMS, backend="arrow")


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "flipped byte in close": lambda r: _flip_close(_file(r, "2330")),
    "deleted partition": _delete,
    "one symbol's file copied over another's": _copy_over,
}


@pytest.mark.parametrize("damage", list(SCENARIOS))
def test_read_refuses_damage_and_verify_repairs_it(
    make_store: Callable[..., Store], clean: pa.Table, damage: str
) -> None:
    st = make_store()
    _sync(st)
    SCENARIOS[damage](st.root)
    with pytest.raises(StoreCorrupted) as err:
        st.read(CANDLES, SYMS, backend="arrow")
    assert "sym=2330" in str(err.value) and "verify" in str(err.value)
    found = st.verify()
    assert not found.ok and len(found.problems) == 1 and "sym=2330" in found.problems[0]
    fixed = st.verify(repair=True)
    assert fixed.ok and fixed.repaired
    assert st.verify().problems == []
    arrow_equal(st.read(CANDLES, SYMS, backend="arrow"), clean)


def test_a_restored_older_file_is_found_and_repaired(
    make_store: Callable[..., Store], clean: pa.Table, tmp_path: Path
) -> None:
    st = make_store()
    st.sync(CANDLES, SYMS, START, "2023-12-31", progress=False)
    older = tmp_path / "older.parquet"
    shutil.copy2(_file(st.root, "2330"), older)
    _sync(st)  # the file now holds 2024 too
    shutil.copy2(older, _file(st.root, "2330"))  # a backup restored over it
    with pytest.raises(StoreCorrupted):
        st.read(CANDLES, "2330", backend="arrow")
    assert len(st.verify().problems) == 1
    assert st.verify(repair=True).ok
    arrow_equal(st.read(CANDLES, SYMS, backend="arrow"), clean)


@pytest.mark.parametrize("damage", list(SCENARIOS))
def test_sync_repairs_what_its_cheap_check_finds(
    make_store: Callable[..., Store], clean: pa.Table, damage: str
) -> None:
    st = make_store()
    _sync(st)
    SCENARIOS[damage](st.root)
    report = st.sync(CANDLES, SYMS, START, END, progress=False)
    assert report.repaired and report.requests > 0
    arrow_equal(st.read(CANDLES, SYMS, backend="arrow"), clean)


def test_a_sync_that_finds_damage_only_while_merging_fetches_its_range_again(
    make_store: Callable[..., Store],
) -> None:
    """Bit rot keeps a file's size and modification time, so the sync's cheap check passes
    it and the damage is found only when the open tail is merged into the file: the sync
    still returns with its whole range held, as one over an intact file."""
    clean, st = make_store("clean"), make_store()
    for s in (clean, st):
        s.sync(CANDLES, SYMS, "2026-01-01", progress=False)  # up to today: the tail is open
    path = _file(st.root, "2330")
    before = path.stat()
    _flip_close(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as bit rot leaves it
    report = st.sync(CANDLES, SYMS, "2026-01-01", progress=False)
    assert report.ok and report.repaired == [path.relative_to(st.root).as_posix()]
    clean.sync(CANDLES, SYMS, "2026-01-01", progress=False)
    arrow_equal(st.read(CANDLES, SYMS, backend="arrow"), clean.read(CANDLES, SYMS, backend="arrow"))
    assert st.verify().problems == []
    assert st.sync(CANDLES, SYMS, "2026-01-01", progress=False).windows_fetched == len(SYMS)


def test_files_are_written_with_page_checksums(make_store: Callable[..., Store]) -> None:
    st = make_store()
    _sync(st)
    path = _file(st.root, "2330")
    _flip_close(path)
    # any reader that verifies checksums refuses the page, not only the store
    with pytest.raises(OSError, match="(?i)checksum|CRC"):
        pq.ParquetFile(path, page_checksum_verification=True).read()


def test_records_of_either_hash_are_checked_and_pages_without_a_record(
    make_store: Callable[..., Store],
) -> None:
    import hashlib

    st = make_store()
    _sync(st)
    path = _file(st.root, "2330")
    rel = path.relative_to(st.root).as_posix()
    storage = st._parts.storage
    data = path.read_bytes()
    sha = {"size": len(data), "hash": hashlib.sha256(data).hexdigest()}
    old = {"size": len(data), "hash": hashlib.blake2b(data, digest_size=16).hexdigest()}
    assert _io.digest(data) == sha["hash"]  # what the store records now: SHA-256
    for rec in (sha, old):  # a store written before SHA-256 holds BLAKE2b-128 records
        assert storage.read_file(rel, rec).num_rows > 0
    _flip_close(path)
    for rec in (sha, old):
        with pytest.raises(StoreCorrupted, match="content hash"):
            storage.read_file(rel, rec)
    # without a record, the page checksums are what catches the flipped byte
    with pytest.raises(StoreCorrupted, match="(?i)checksum|CRC"):
        storage.read_file(rel, None)


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in (root / "_log").iterdir() if p.name[0].isdigit())


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"",
        lambda b: b[: len(b) // 2],  # a torn write
        lambda b: b"\xff\xfe\x00garbage",
        lambda b: b[:20] + bytes([b[20] ^ 0x01]) + b[21:],  # one flipped bit, same size
        lambda b: b.replace(b"2330", b"2331", 1),  # valid JSON, wrong content
    ],
    ids=["empty", "torn", "garbage", "bitflip", "edited"],
)
def test_a_damaged_log_entry_is_typed_and_repaired(
    make_store: Callable[..., Store], clean: pa.Table, damage: Callable[[bytes], bytes]
) -> None:
    st = make_store()
    _sync(st)
    entry = _entries(st.root)[-1]
    entry.write_bytes(damage(entry.read_bytes()))
    again = Store(st.root, st.client)  # opening never raises
    with pytest.raises(StoreCorrupted) as err:
        again.read(CANDLES, SYMS)
    assert entry.name in str(err.value) and "verify --store" in str(err.value)
    with pytest.raises(StoreCorrupted):
        again.sync(CANDLES, SYMS, START, END, progress=False)
    assert [p.split(":")[0] for p in again.verify().problems] == [f"_log/{entry.name}"]
    report = again.verify(repair=True)
    assert report.ok and any("rebuilt from the log" in r for r in report.repaired)
    assert entry.exists()  # the damaged entry is never read again, nor removed
    # the state before the damaged entry may hold less than the store did; what it does not
    # record, the next sync fetches again
    again.sync(CANDLES, SYMS, START, END, progress=False)
    arrow_equal(again.read(CANDLES, SYMS, backend="arrow"), clean)
    assert again.verify().problems == []
    assert Store(st.root, st.client).read(CANDLES, SYMS, backend="arrow").num_rows


LAYOUT2 = Path(__file__).parents[1] / "data" / "stores" / "layout2"


def _layout2(tmp_path: Path) -> Path:
    """A store written by the previous layout (marketframe before the log; see
    tests/data/stores/make_layout2.py): one _manifest.json and its previous generation."""
    root = tmp_path / "old"
    shutil.copytree(LAYOUT2, root)
    return root


def test_a_store_written_before_the_log_opens_and_is_upgraded_in_place(
    tmp_path: Path, sb: Sandbox
) -> None:
    root = _layout2(tmp_path)
    old = json.loads((root / MANIFEST).read_text())
    assert old["version"] == 2 and not (root / "_log").exists()
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        before = st.read(CANDLES, SYMS, backend="arrow")
        sma = st.read_derived(CANDLES, "sma", backend="arrow")
        assert before.num_rows > 200 and sma.num_rows == before.num_rows
        assert st.verify().problems == []
        assert not (root / "_log").exists()  # reading and checking write nothing
        served = sb.requests_served
        report = st.sync(CANDLES, SYMS, "2025-06-01", "2026-03-31", progress=False)
        assert report.requests == 0 and sb.requests_served == served  # all held already
        st.sync(CANDLES, SYMS, "2025-06-01", "2026-06-30", progress=False)  # writes: upgrade
        assert (root / "_log" / "00000000000000000000.checkpoint.json").exists()
        stub = json.loads((root / MANIFEST).read_text())
        assert stub["version"] == 3 and stub["datasets"] == {}  # the old code refuses it
        assert not (root / PREVIOUS).exists()
        after = st.read(CANDLES, SYMS, end="2026-03-31", backend="arrow")
        arrow_equal(after, before)
        assert st.compute(CANDLES, ["sma", "rsi"], max_workers=1).modes
        assert st.verify().problems == []
        # computed again into buckets: nothing of the directory a symbol is left
        assert not list(root.glob("dataset=derived.*/*/*/sym=*/*"))
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as again:
        arrow_equal(again.read(CANDLES, SYMS, end="2026-03-31", backend="arrow"), before)
        full = again.read_derived(CANDLES, "sma", backend="arrow")
        assert full.num_rows > sma.num_rows


@pytest.mark.parametrize(
    "content", [b"", b'{"version": 2, "datas', b"\xff\xfe\x00garbage", b"[1, 2]", b"null"]
)
def test_a_damaged_manifest_of_an_old_store_is_typed_and_restored(
    tmp_path: Path, sb: Sandbox, content: bytes
) -> None:
    root = _layout2(tmp_path)
    with Store(root, api_key=sb.api_key, base_url=sb.base_url) as st:
        clean = st.read(CANDLES, SYMS, backend="arrow")
    (root / MANIFEST).write_bytes(content)
    again = Store(root, api_key=sb.api_key, base_url=sb.base_url)  # opening never raises
    with pytest.raises(StoreCorrupted) as err:
        again.read(CANDLES, SYMS)
    assert MANIFEST in str(err.value) and "verify --store" in str(err.value)
    report = again.verify(repair=True)
    assert report.ok and any(PREVIOUS in r for r in report.repaired)
    # the previous generation may hold less than the damaged one did; what it does not
    # record, the next sync fetches again; the repair upgraded the store to the log
    assert (root / "_log").is_dir() and json.loads((root / MANIFEST).read_text())["version"] == 3
    again.sync(CANDLES, SYMS, "2025-06-01", "2026-03-31", progress=False)
    arrow_equal(again.read(CANDLES, SYMS, backend="arrow"), clean)
    assert again.verify().problems == []
    again.close()


def test_a_garbage_parquet_file_names_itself(make_store: Callable[..., Store]) -> None:
    st = make_store()
    _sync(st)
    path = _file(st.root, "0050")
    path.write_bytes(b"not parquet at all" * 10)
    with pytest.raises(StoreCorrupted) as err:
        st.read(CANDLES, "0050")
    assert str(path) in str(err.value)


def test_a_file_renamed_in_but_not_yet_recorded_is_not_corruption(
    make_store: Callable[..., Store], clean: pa.Table
) -> None:
    """A sync killed between a file's rename and the commit that records it leaves a file
    the log lists as pending: it reads, and the next sync adopts it."""
    from marketframe.store._dataset import resolve
    from marketframe.store._report import SyncReport
    from marketframe.store._sync._batch import Batch, Unit
    from marketframe.store._sync._commit import stage_rows

    st = make_store()
    st.sync(CANDLES, SYMS, START, "2023-12-31", progress=False)
    parts = st._parts
    spec = resolve(CANDLES, "D", {})
    # the state such a kill leaves: the new files in place and recorded as pending, the
    # commit that would record them as current never made
    for sym in SYMS:
        rows = clean.filter(pa.compute.equal(clean.column("symbol"), sym))
        staged = stage_rows(parts.storage, parts.log, spec, sym, rows, SyncReport("x"))
        batch = Batch(parts.storage, parts.log, "test", every=0)
        batch.add(Unit(spec.ds, spec.params, staged))  # pending, then in place; not closed
    for sym in SYMS:
        rec = parts.log.file(spec.ds, _file(st.root, sym).relative_to(st.root).as_posix())
        assert rec is not None and rec.get("pending")
    again = Store(st.root, st.client)
    assert again.verify().problems == []
    again.read(CANDLES, "2330", backend="arrow")
    _sync(again)
    arrow_equal(again.read(CANDLES, SYMS, backend="arrow"), clean)


def test_a_store_copied_without_its_file_times_is_not_damaged(
    make_store: Callable[..., Store], sb: Sandbox, tmp_path: Path
) -> None:
    st = make_store()
    _sync(st)
    copy = tmp_path / "copy"
    shutil.copytree(st.root, copy, copy_function=shutil.copyfile)  # new modification times
    served = sb.requests_served
    with Store(copy, api_key=sb.api_key, base_url=sb.base_url) as moved:
        report = moved.sync(CANDLES, SYMS, START, END, progress=False)
        assert report.repaired == [] and report.requests == 0
        assert moved.verify().problems == []
    assert sb.requests_served == served


def test_a_layout_1_store_is_reported_and_migrated(
    make_store: Callable[..., Store], clean: pa.Table, sb: Sandbox
) -> None:
    st = make_store()
    _sync(st)
    # the same store as the previous layout wrote it: timeframe=/symbol= directories,
    # dictionary columns, a version-1 manifest without file records
    for sym in SYMS:
        old = st.root / f"dataset={CANDLES}" / "params=default" / "timeframe=D" / f"symbol={sym}"
        old.mkdir(parents=True)
        pq.write_table(st.read(CANDLES, sym, backend="arrow"), old / _io.PART)
    shutil.rmtree(_file(st.root, "2330").parents[1])
    manifest = {"version": 1, "datasets": {}}
    for ds, d in st._parts.log.datasets():
        d.pop("files")
        manifest["datasets"][ds.key] = d
    (st.root / MANIFEST).write_text(json.dumps(manifest))
    shutil.rmtree(st.root / "_log")
    again = Store(st.root, st.client)
    with pytest.raises(StoreCorrupted, match="layout version 1"):
        again.read(CANDLES, SYMS)
    served = sb.requests_served
    report = again.verify(repair=True)
    assert report.ok and any("migrated" in r for r in report.repaired)
    assert sb.requests_served == served  # nothing refetched: the files were kept
    arrow_equal(again.read(CANDLES, SYMS, backend="arrow"), clean)
    assert not (st.root / f"dataset={CANDLES}" / "params=default" / "timeframe=D").exists()
    assert again.verify().problems == []
    assert again.sync(CANDLES, SYMS, START, END, progress=False).requests == 0
