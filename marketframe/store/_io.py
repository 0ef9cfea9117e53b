"""Parquet on disk: the hive layout, atomic upserts of one partition, and reading back.

Layout (every directory level is ``name=value``, so DuckDB, polars and pyarrow read it as is)::

    <root>/dataset=<endpoint>/params=<fingerprint>/tf=<minutes>/sym=<symbol>/
        year=<yyyy>/part-0.parquet                                  (minute data: by year)
    <root>/dataset=<endpoint>/params=<fingerprint>/tf=<D|W|M>/sym=<symbol>/
        part-0.parquet                                              (one file per symbol)
    <root>/dataset=<endpoint>/params=<fingerprint>/part-0.parquet     (no symbol: corporate
                                                                       actions, small)

Why two granularities: 15 years of daily candles are ~3,700 rows, and pyarrow pays about
0.2 ms to open and decode a file however small, so year files would make a symbol's history
16 reads (3.4x one file, measured) and a board 16x as many files. A year of one-minute
candles is ~67,000 rows, where year files keep rewrites small.

One physical schema per dataset: every file holds the loaders' columns with categorical
(dictionary) columns stored as plain strings, and the directory keys (``tf``, ``sym``) never
share a name with a column, so pyarrow, pandas, polars and DuckDB read a dataset directory
without a type clash ("0050" stays the string in the ``symbol`` column; ``sym`` is the
directory's, which readers may infer as an integer). :func:`from_physical` restores the
loaders' dictionary types on read. How a file is written and read back atomically is the
storage's (:mod:`._storage`); this module is the layout and the format.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marketframe.endpoints import MINUTE_TIMEFRAMES, Endpoint
from marketframe.exceptions import StoreCorrupted
from marketframe.store._dataset import DatasetId

PART = "part-0.parquet"
VERSIONS = "_versions"  # superseded files, by content hash
TF_KEY, SYM_KEY = "tf", "sym"  # directory keys: never a column's name (no type clash)
#: a derived dataset's directory key: a bucket of symbols (``_compute._derive.bucket_of``)
BUCKET_KEY = "bucket"
META_PARAMS = b"marketframe.store.params"
META_TIMEFRAME = b"marketframe.store.timeframe"
#: a column of a table, whole or in chunks
Column: TypeAlias = "pa.ChunkedArray[Any] | pa.Array[Any]"
#: a row mask
Mask: TypeAlias = "pa.ChunkedArray[pa.BooleanScalar] | pa.Array[pa.BooleanScalar]"


def dataset_dir(root: Path, ds: DatasetId) -> Path:
    d = root / f"dataset={ds.endpoint}" / f"params={ds.params}"
    return d / f"{TF_KEY}={ds.timeframe}" if ds.timeframe else d


def symbol_dir(root: Path, ds: DatasetId, symbol: str) -> Path:
    return dataset_dir(root, ds) / f"{SYM_KEY}={symbol}"


@functools.lru_cache(maxsize=256)
def dataset_rel(ds: DatasetId) -> str:
    """:func:`dataset_dir` relative to the root, as a string: made once per dataset (a
    compute writes several files a symbol, and pathlib's joins cost more than the rest of
    naming them)."""
    return dataset_dir(Path(), ds).as_posix()


def symbol_rel(ds: DatasetId, symbol: str) -> str:
    """:func:`symbol_dir` relative to the root, as a string."""
    return f"{dataset_rel(ds)}/{SYM_KEY}={symbol}"


def bucket_rel(ds: DatasetId, bucket: str) -> str:
    """A derived dataset's bucket directory relative to the root."""
    return f"{dataset_rel(ds)}/{BUCKET_KEY}={bucket}"


def version_path(digest: str, rel: str) -> str:
    """Where the bytes of a superseded file (content hash ``digest``, once at ``rel``) are
    kept: ``_versions/``, outside every dataset directory, so readers of a dataset directory
    (pyarrow, polars, DuckDB, Spark) never see them; and named without ``.parquet``, so a
    ``**/*.parquet`` glob over the whole store does not match them either."""
    return f"{VERSIONS}/{digest}"


def by_year(ds: DatasetId) -> bool:
    """Whether a dataset's symbol partitions are split by year (minute timeframes only)."""
    return ds.timeframe in MINUTE_TIMEFRAMES


def partition_path(root: Path, ds: DatasetId, symbol: str | None, year: int | None) -> Path:
    if symbol is None:
        return dataset_dir(root, ds) / PART
    if year is None:
        return symbol_dir(root, ds, symbol) / PART
    return symbol_dir(root, ds, symbol) / f"year={year}" / PART


def split_partitions(ds: DatasetId, table: pa.Table) -> dict[int | None, pa.Table]:
    """The rows of one symbol by partition: by year for minute data, else all in one."""
    if not by_year(ds):
        return {None: table} if table.num_rows else {}
    return {year: part for year, part in split_by_year(table).items()}


def date_column(ep: Endpoint) -> str:
    """The column a date range filters on: ``date``, else the first date column of the schema
    (``effective_date`` of capital changes, ``application_date`` of listing applicants)."""
    schema = ep.schema.arrow()
    if "date" in schema.names:
        return "date"
    return next(f.name for f in schema if pa.types.is_date(f.type))


def days(col: Column) -> Column:
    """A date column's days: dates as they are, timestamps as their Asia/Taipei day (the day
    of their own zone's local time; a naive one's own)."""
    if pa.types.is_timestamp(col.type):
        stamps = cast("pa.ChunkedArray[pa.TimestampScalar[Any, Any]]", col)  # as just checked
        return pc.cast(pc.local_timestamp(stamps), pa.date32())
    return col


def within(col: Column, lo: dt.date | None, hi: dt.date | None) -> Mask:
    """The mask of ``col`` (dates, or timestamps taken as Asia/Taipei days) inside the
    inclusive range ``lo``..``hi`` (either end open when None; a missing day is in none)."""
    col = days(col)
    if lo is None and hi is None:
        return pc.is_valid(col)
    mask: Mask | None = None
    if lo is not None:
        mask = pc.greater_equal(col, pa.scalar(lo, pa.date32()))
    if hi is not None:
        m2 = pc.less_equal(col, pa.scalar(hi, pa.date32()))
        mask = m2 if mask is None else pc.and_(mask, m2)
    assert mask is not None
    return mask


def years_of(table: pa.Table) -> pa.Array[pa.Int64Scalar] | pa.ChunkedArray[pa.Int64Scalar]:
    """The calendar year of each row's ``date`` (in Asia/Taipei for timestamps)."""
    col = table.column("date")
    return pc.year(col)


def split_by_year(table: pa.Table) -> dict[int, pa.Table]:
    if table.num_rows == 0:
        return {}
    years = np.asarray(years_of(table).to_numpy(zero_copy_only=False))
    return {int(y): table.filter(pa.array(years == y)) for y in np.unique(years)}


def from_physical(table: pa.Table, logical: pa.Schema) -> pa.Table:
    """A stored table with the loaders' types back (categorical columns as dictionaries);
    each field keeps the file's own metadata (units differ between symbols). Only the
    categorical columns are converted (casting the whole table costs a quarter of a read)."""
    for i, f in enumerate(table.schema):
        j = logical.get_field_index(f.name)
        want = logical.field(j).type if j >= 0 else f.type
        if pa.types.is_dictionary(want) and not pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.with_type(want), table.column(i).cast(want))
    return table


def digest(data: bytes | memoryview) -> str:
    """The content hash the log keeps per file: SHA-256, 64 hex digits (the CPU's SHA
    instructions hash it at about 1.4 GB/s here, BLAKE2b at 0.5: every file written and
    every file read is hashed whole). Records written before hold BLAKE2b-128 (32 hex
    digits); :func:`matches` checks a record with the algorithm its length names."""
    return hashlib.sha256(data).hexdigest()


def _digest_like(data: bytes | memoryview, recorded: str) -> str:
    old = len(recorded) == 32  # BLAKE2b-128: the records of stores written before SHA-256
    return hashlib.blake2b(data, digest_size=16).hexdigest() if old else digest(data)


def time_encoding(schema: pa.Schema) -> dict[str, str] | None:
    """The ``column_encoding`` of every file the store writes: the bar times (``date``, a
    timestamp or a date) delta-encoded, read by every Parquet reader. They are all distinct,
    so a dictionary fills up and falls back to plain pages: parsing that mix was 0.8 ms of a
    minute year file's 1.4 ms read (delta: 0.16 ms; the benchmark's minute files are 45%
    smaller), and regular minutes pack to a few bytes a page instead of 8 a bar."""
    i = schema.get_field_index("date")
    date = schema.field(i).type if i >= 0 else None
    if date is None or not (pa.types.is_timestamp(date) or pa.types.is_date(date)):
        return None
    return {"date": "DELTA_BINARY_PACKED"}


def serialize(table: pa.Table) -> bytes:
    """Parquet bytes of ``table`` with page checksums (for readers without the log's
    record: a read with one checks the whole file's hash), the bar times by
    :func:`time_encoding`."""
    sink = pa.BufferOutputStream()
    # snappy: small partitions read about twice as fast as with zstd (per-column codec set-up)
    delta = time_encoding(table.schema)
    dictionary = [n for n in table.column_names if n not in delta] if delta else True
    with pq.ParquetWriter(
        sink,
        table.schema,
        compression="snappy",
        write_page_checksum=True,
        # pyarrow also takes the list of columns to encode so; its stubs say bool only
        use_dictionary=dictionary,  # type: ignore[arg-type]
        column_encoding=delta,
    ) as w:
        w.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def where(rel: str) -> tuple[str | None, int | None]:
    """The symbol (a derived dataset's: its bucket) and year of a partition file from its
    path relative to the root."""
    sym = year = None
    for part in rel.split("/"):
        key, _, value = part.partition("=")
        if key == SYM_KEY or key == BUCKET_KEY:
            sym = value
        elif key == "year":
            year = int(value)
    return sym, year


def recorded(
    files: Mapping[str, Mapping[str, Any]],
    symbols: Iterable[str] | None,
    years: tuple[int, int] | None,
    ds: DatasetId | None = None,
) -> list[tuple[str, Mapping[str, Any]]]:
    """The log's published files of ``symbols`` (all when None) in the inclusive
    ``years``, in symbol then year order. The log, not a directory listing, says what is
    held: a deleted file is reported, a stray one is ignored."""
    want = None if symbols is None else set(symbols)
    out = []
    if want is not None and ds is not None and not by_year(ds):  # one file per symbol
        base = dataset_rel(ds)
        for sym in symbols or ():
            rel = f"{base}/{SYM_KEY}={sym}/{PART}"
            rec = files.get(rel)
            if rec is not None and "hash" in rec:
                out.append(((sym, 0), rel, rec))
        return [(rel, rec) for _, rel, rec in out]
    for rel, rec in files.items():
        if "hash" not in rec:
            continue  # staged by a sync that has not recorded it yet
        held, year = where(rel)
        if want is not None and held not in want:
            continue
        if years is not None and year is not None and not years[0] <= year <= years[1]:
            continue
        out.append(((held or "", year or 0), rel, rec))
    if want is not None:
        order = {s: i for i, s in enumerate(symbols or ())}
        out.sort(key=lambda t: (order[t[0][0]], t[0][1]))
    else:
        out.sort(key=lambda t: t[0])
    return [(rel, rec) for _, rel, rec in out]


def parse_checked(
    data: bytes,
    where: Callable[[], Path | str],
    expect: Mapping[str, Any] | None,
    repair_hint: str = "",
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """A file's bytes checked against its record (else its page checksums: bytes that match
    the size and hash are the ones written, their checksums too, so checking those as well
    cost a seventh of a read for nothing); parsed, only ``columns`` it has when given.
    ``where``: the file's path as errors show it, made only for an error (a path object a
    file was a tenth of reading a small one)."""
    if expect is not None and not matches(data, expect):
        raise StoreCorrupted(
            where(),
            "does not match its recorded size and content hash: it "
            "was changed, truncated or replaced after it was written",
            repair_hint,
        )
    try:
        pf = pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=expect is None)
        if columns is not None:
            names = set(pf.schema_arrow.names)
            columns = [c for c in columns if c in names]
        return pf.read(columns=columns, use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise StoreCorrupted(
            where(), f"is not readable Parquet ({type(exc).__name__}: {exc})", repair_hint
        ) from None


def matches(data: bytes | memoryview, expect: Mapping[str, Any]) -> bool:
    """Whether ``data`` is the recorded file or its recorded pending replacement (each
    hash computed once per algorithm the records use)."""
    got: dict[int, str] = {}
    for v in accepted(expect):
        if v["size"] != len(data):
            continue
        want = str(v["hash"])
        if len(want) not in got:
            got[len(want)] = _digest_like(data, want)
        if got[len(want)] == want:
            return True
    return False


def accepted(expect: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The versions of a file a record accepts: the recorded one and any pending one."""
    return ([expect] if "hash" in expect else []) + list(expect.get("pending", ()))


def concat_partitions(tables: Sequence[pa.Table]) -> pa.Table:
    """Partitions of one dataset as one table. Partitions written with the same schema and
    units (the usual case: one symbol's years) are chained without copying; otherwise
    :func:`marketframe.convert.concat` unions extra columns and says which symbol has which
    unit (an index's volume is TWD, a stock's shares)."""
    from marketframe.convert import concat

    first = tables[0]
    if all(t.schema.equals(first.schema, check_metadata=True) for t in tables[1:]):
        return pa.concat_tables(tables)
    return concat(tables)
