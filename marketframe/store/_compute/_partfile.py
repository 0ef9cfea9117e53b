"""Derived datasets, the part files: a member's rows (:func:`part_table`), a bucket's part
of many members' rows (:func:`bucket_part`), its bytes (:func:`serialize`), where it goes
and how it is written (:func:`place`), and the small parts of a bucket's year kept few
(:func:`write_part` merges the newest, :func:`close_parts` a closed year's).

Imports run one way: the task loop (:mod:`._task`) -> this module -> :mod:`._derive`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._compute._derive import Outcome
from marketframe.store._dataset import DatasetId

COMPACT = 8  # small part files in one (bucket, year) directory before they are merged
#: rows from which a part is large: written as it is (a member's year of minute bars), never
#: merged again; a task's rows of one (bucket, year) are written once they reach it
LARGE = 65_536


def serialize(table: pa.Table) -> memoryview:
    """Parquet bytes of a derived part (:func:`bucket_part`), with page checksums as the
    store's files (a view of the writer's buffer: hashed and written as they are, never
    copied). Dictionary encoding only for the symbol: on the float columns it is tried,
    overflows and is abandoned, which made writing six times slower. Uncompressed: snappy
    saves 6% on indicator values (floats with full mantissas) and costs a third of the
    write. The bar times as in every file of the store (:func:`._io.time_encoding`).

    The symbol reaches the writer as a dictionary (a part holds a few runs of the bucket's
    symbols: :func:`bucket_part` makes the dictionary without hashing every row), the column
    declared a string in the file's Arrow schema: the same bytes as the string column
    gives."""
    sink = pa.BufferOutputStream()
    i = table.schema.get_field_index("symbol")
    col = table.column(i)
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    coded = table.set_column(i, pa.field("symbol", col.type, nullable=False), col)
    plain = table.schema.set(i, pa.field("symbol", pa.string(), nullable=False))
    with pq.ParquetWriter(
        sink,
        coded.schema,
        compression="none",
        write_page_checksum=True,
        use_dictionary=["symbol"],  # type: ignore[arg-type]
        column_encoding=_io.time_encoding(table.schema),
        store_schema=False,  # no metadata of its own: the table's schema below, a string
    ) as w:
        w.write_table(coded)
        w.add_key_value_metadata(_file_meta(plain))
    return memoryview(sink.getvalue())


@functools.lru_cache(maxsize=64)
def _file_meta(schema: pa.Schema) -> dict[str, str]:
    """The key-value metadata a writer storing ``schema`` gives a file: its own metadata and
    the serialized schema, as Arrow readers look for it (``ARROW:schema``)."""
    import base64

    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    meta["ARROW:schema"] = base64.b64encode(schema.serialize().to_pybytes()).decode()
    return meta


def part_dir(ds: DatasetId, bucket: str, year: int | None) -> str:
    """The directory of a bucket's parts of ``year`` (None: a dataset not split by year),
    relative to the root."""
    d = _io.bucket_rel(ds, bucket)
    return f"{d}/year={year}" if year is not None else d


def place(
    storage: Any, rel: str, data: bytes | memoryview, digest: str, rows: int, out: Outcome
) -> dict[str, Any]:
    """Write ``data`` (whose :func:`_io.digest` is ``digest``) for ``rel``; returns its record
    for the log. On a local store it is staged under a hidden name, not flushed
    (``out.staged``): the driver makes the run's files durable together and renames them into
    place before the log records them. An object store's PUT is published here (durable
    when it returns)."""
    if storage.remote:
        staged, stamp = storage.stage(rel, bytes(data))
        storage.publish(staged, rel)
    else:
        staged, stamp = storage.stage(rel, data, durable=False)
        out.staged[rel] = f"{rel.rsplit('/', 1)[0]}/{staged.name}"
    return record(data, digest, stamp, rows)


def record(
    data: bytes | memoryview, digest: str, stamp: Mapping[str, Any], rows: int | None = None
) -> dict[str, Any]:
    """The log's record of a written file: its size, hash, the storage's stamp."""
    return {"size": len(data), "hash": digest, **stamp, **({} if rows is None else {"rows": rows})}


def part_table(
    sp: sf.IndicatorSpec, date: pa.ChunkedArray[Any], values: Sequence[np.ndarray]
) -> pa.Table:
    """One member's new rows: the bar times and the outputs (:func:`bucket_part` puts the
    symbol in front). An output is null where the kernel leaves it undefined (NaN: the
    warm-up, a missing input), as ``df.md`` on polars gives it, so SQL and polars aggregates
    skip it (a NaN made DuckDB's ``avg`` NaN) and pandas reads it as NaN, as ``df.md`` on
    pandas gives it. Only a column with such values is declared nullable: a nullable
    column's definition levels cost twice the encoding of its values, and most rows have
    none. A nullable column is handed to the writer in two chunks, the rows up to its last
    null and the rest without a validity bitmap: the writer makes the rest's definition
    levels on its fast path (a fifth less time for a first part), the bytes are the same."""
    arrays: list[Any] = [date]
    fields = [pa.field("date", date.type, nullable=bool(date.null_count))]
    for name, v in zip(sp.names, values, strict=True):
        undefined = np.isnan(v)
        missing = bool(undefined.any())
        arrays.append(_nullable(v, undefined) if missing else pa.array(v, pa.float64()))
        fields.append(pa.field(name, pa.float64(), nullable=missing))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=_part_meta(sp)))


def bucket_part(chunks: Sequence[tuple[Sequence[tuple[str, int]], pa.Table]]) -> pa.Table:
    """The rows of :func:`part_table` chunks, in their order, the symbol in front as a
    dictionary (one entry a symbol, no row hashed). A chunk holds runs of members' rows:
    ``(symbol, rows)`` in its order."""
    runs = [run for got, table in chunks for run in _runs(got, table)]
    names = list(dict.fromkeys(sym for sym, _ in runs))
    index = {sym: i for i, sym in enumerate(names)}
    codes = np.repeat(np.array([index[sym] for sym, _ in runs], np.int32), [n for _, n in runs])
    symbol = pa.DictionaryArray.from_arrays(
        pa.array(codes, pa.int32()), pa.array(names, pa.string())
    )
    table = pa.concat_tables([t for _, t in chunks], promote_options="default")
    return table.add_column(0, pa.field("symbol", symbol.type, nullable=False), symbol)


def _runs(runs: Sequence[tuple[str, int]], table: pa.Table) -> Sequence[tuple[str, int]]:
    assert sum(n for _, n in runs) == table.num_rows, (runs, table.num_rows)
    return runs


def _nullable(v: np.ndarray, undefined: np.ndarray) -> pa.ChunkedArray[Any]:
    """``v`` with nulls where ``undefined``: the rows up to the last null with a validity
    bitmap, the rows after it without one."""
    cut = len(v) - int(np.argmax(undefined[::-1]))  # after the last undefined value
    head = pa.array(v[:cut], pa.float64(), mask=undefined[:cut])
    return pa.chunked_array([head, pa.array(v[cut:], pa.float64())], pa.float64())


@functools.lru_cache(maxsize=64)
def _part_meta(sp: sf.IndicatorSpec) -> dict[bytes | str, bytes | str]:
    """The schema metadata of every part of ``sp``: the spec, as JSON (made once a spec)."""
    return {b"marketframe.store.derived": json.dumps(sp.to_json()).encode()}


def _small(
    files: list[str], recorded: Mapping[str, Mapping[str, Any]], out: Outcome
) -> list[tuple[str, int]]:
    """The small parts among ``files`` (fewer than ``LARGE`` rows), with their rows, by
    the log's records or this run's (a part written by it is not recorded yet)."""
    rows = ((rel, int(_record(rel, recorded, out).get("rows", 0))) for rel in files)
    return [(rel, n) for rel, n in rows if n < LARGE]


def _record(rel: str, recorded: Mapping[str, Mapping[str, Any]], out: Outcome) -> Mapping[str, Any]:
    """A part's record: this run's if it wrote it (not in the log yet), else the log's."""
    return out.written.get(rel) or recorded[rel]


def write_part(
    storage: Any,
    ds: DatasetId,
    bucket: str,
    year: int | None,
    files: list[str],
    recorded: Mapping[str, dict[str, Any]],
    part: pa.Table,
    out: Outcome,
) -> list[str]:
    """The part file of new rows ``part`` (:func:`bucket_part`) of the bucket's ``year``,
    whose parts so far are ``files``; returns its parts after. Large parts (``LARGE`` rows
    or more: a member's year computed in full) are left as they are. When the small ones
    would be more than ``COMPACT`` (daily appends would otherwise leave one file a day), the
    new rows are written together with the newest small parts, merged in memory: those
    after each leading small part that holds more rows than all those after it (so a part
    is rewritten about log(n) times, and a merge holds only small parts)."""
    small = _small(files, recorded, out)
    kept, old = files, []
    if part.num_rows < LARGE and len(small) + 1 > COMPACT:
        rows = [n for _, n in small] + [part.num_rows]
        lead = 0
        while lead < len(rows) - 2 and rows[lead] > sum(rows[lead + 1 :]):
            lead += 1
        old = [rel for rel, _ in small[lead:]]
        gone = set(old)
        kept = [rel for rel in files if rel not in gone]
    return [*kept, _merged(storage, ds, bucket, year, old, recorded, part, out)]


def close_parts(
    storage: Any,
    ds: DatasetId,
    bucket: str,
    year: int | None,
    files: list[str],
    recorded: Mapping[str, dict[str, Any]],
    out: Outcome,
) -> list[str]:
    """The small parts among ``files``, of a year the bucket's data has moved past (no sync
    appends to it again), merged into one; returns its parts after. A year of daily appends
    ends with up to ``COMPACT`` small parts; merged once, when the next year's first bars
    are computed, what every later run checks, plans and records grows by a file or so a
    year."""
    small = [rel for rel, _ in _small(files, recorded, out)]
    if len(small) < 2:
        return files
    gone = set(small)
    kept = [rel for rel in files if rel not in gone]
    return [*kept, _merged(storage, ds, bucket, year, small, recorded, None, out)]


def _merged(
    storage: Any,
    ds: DatasetId,
    bucket: str,
    year: int | None,
    old: list[str],
    recorded: Mapping[str, dict[str, Any]],
    part: pa.Table | None,
    out: Outcome,
) -> str:
    """One part of the rows of the parts ``old`` (read back, checked) then ``part``, in
    that order, written; ``old`` goes to ``out.dropped`` (the driver deletes them once no
    log records them), except a part this run wrote (a year appended to, then closed):
    never recorded, it is forgotten, and a local store's staged file deleted at once.
    Returns its path."""
    if old:
        # a part staged by this run is read where it waits (not in place before the commit)
        tables = [
            storage.read_file(out.staged.get(rel, rel), _record(rel, recorded, out)) for rel in old
        ]
        if part is not None:
            i = part.schema.get_field_index("symbol")
            plain = part.column(i).cast(pa.string())
            tables.append(part.set_column(i, pa.field("symbol", pa.string(), False), plain))
        part = pa.concat_tables(tables, promote_options="default")
        for rel in old:
            if rel in out.written:
                del out.written[rel]
                staged = out.staged.pop(rel, None)
                if staged is not None:
                    storage.delete(staged)
                    continue
            out.dropped.append(rel)
    assert part is not None
    data = serialize(part)
    digest = _io.digest(data)
    first = pc.min(part.column("date")).value
    rel = f"{part_dir(ds, bucket, year)}/part-{first}-{digest[:12]}.parquet"
    out.written[rel] = place(storage, rel, data, digest, part.num_rows, out)
    return rel
