"""Derived datasets, the part files: a part's rows (:func:`part_table`), its bytes
(:func:`serialize`), where it goes and how it is written (:func:`place`), and the parts of
one input file kept few (:func:`write_part` merges the newest, :func:`close_parts` a closed
year's).

Imports run one way: the task loop (:mod:`._task`) -> this module -> :mod:`._derive`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._compute._derive import Outcome
from marketframe.store._dataset import DatasetId

COMPACT = 8  # part files in one (symbol, year) directory before they are merged into one


def serialize(table: pa.Table, symbol: str) -> memoryview:
    """Parquet bytes of a derived part of ``symbol``, with page checksums as the store's
    files (a view of the writer's buffer: hashed and written as they are, never copied).
    Dictionary encoding only for the symbol: on the float columns it is tried, overflows
    and is abandoned, which made writing six times slower. Uncompressed: snappy saves 6% on
    indicator values (floats with full mantissas) and costs a third of the write. No
    statistics for the symbol (one value per file, and in the path): min/max over its
    strings cost a fifth of the write). The bar times as in every file of the store
    (:func:`._io.time_encoding`): a third of a part's bytes before.

    The symbol reaches the writer as a dictionary of one value (every row of a part is the
    symbol's: a task writes one symbol's parts, under its ``sym=`` directory), the column
    declared a string in the file's Arrow schema, as the table's: the same bytes as the
    string column gives, without hashing every row's string into the dictionary (a third
    of the writing of a year's part)."""
    sink = pa.BufferOutputStream()
    stats = [n for n in table.column_names if n != "symbol"]
    i = table.schema.get_field_index("symbol")
    one = pa.DictionaryArray.from_arrays(_zeros(table.num_rows), pa.array([symbol], pa.string()))
    coded = table.set_column(i, pa.field("symbol", one.type, nullable=False), one)
    with pq.ParquetWriter(
        sink,
        coded.schema,
        compression="none",
        write_page_checksum=True,
        use_dictionary=["symbol"],  # type: ignore[arg-type]
        write_statistics=stats,
        column_encoding=_io.time_encoding(table.schema),
        store_schema=False,  # no metadata of its own: the table's schema below, a string
    ) as w:
        w.write_table(coded)
        w.add_key_value_metadata(_file_meta(table.schema))
    return memoryview(sink.getvalue())


@functools.lru_cache(maxsize=4)
def _zeros(rows: int) -> pa.Array[Any]:
    """The dictionary indices of a part of ``rows`` rows (all the one symbol's)."""
    return pa.array(np.zeros(rows, np.int32))


@functools.lru_cache(maxsize=64)
def _file_meta(schema: pa.Schema) -> dict[str, str]:
    """The key-value metadata a writer storing ``schema`` gives a file: its own metadata and
    the serialized schema, as Arrow readers look for it (``ARROW:schema``)."""
    import base64

    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    meta["ARROW:schema"] = base64.b64encode(schema.serialize().to_pybytes()).decode()
    return meta


def part_dir(ds: DatasetId, symbol: str, input_rel: str) -> str:
    """The directory of the parts made from input file ``input_rel``, relative to the root."""
    _, year = _io.where(input_rel)
    d = _io.symbol_rel(ds, symbol)
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


@functools.lru_cache(maxsize=4)
def _symbol_column(symbol: str, rows: int) -> pa.Array[Any]:
    """The symbol repeated ``rows`` times: the same for every target of a partition (the
    targets of a task write one part each per input file), so made once (Arrow arrays are
    immutable)."""
    return pa.repeat(pa.scalar(symbol, pa.string()), rows)


def part_table(
    symbol: str, sp: sf.IndicatorSpec, date: pa.ChunkedArray[Any], values: Sequence[np.ndarray]
) -> pa.Table:
    """One part's rows: the symbol, the bar times and the outputs. An output is
    null where the kernel leaves it undefined (NaN: the warm-up, a missing input), as
    ``df.md`` on polars gives it, so SQL and polars aggregates skip it (a NaN made DuckDB's
    ``avg`` NaN) and pandas reads it as NaN, as ``df.md`` on pandas gives it. Only a column
    with such values is declared nullable: a nullable column's definition levels cost twice
    the encoding of its values, and most parts (every one after a symbol's first) have
    none. A nullable column is handed to the writer in two chunks, the rows up to its last
    null and the rest without a validity bitmap: the writer makes the rest's definition
    levels on its fast path (a fifth less time for a first part), the bytes are the same."""
    arrays: list[Any] = [_symbol_column(symbol, len(date)), date]
    fields = [
        pa.field("symbol", pa.string(), nullable=False),
        pa.field("date", date.type, nullable=bool(date.null_count)),
    ]
    for name, v in zip(sp.names, values, strict=True):
        undefined = np.isnan(v)
        missing = bool(undefined.any())
        arrays.append(_nullable(v, undefined) if missing else pa.array(v, pa.float64()))
        fields.append(pa.field(name, pa.float64(), nullable=missing))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=_part_meta(sp)))


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


def write_part(
    storage: Any,
    ds: DatasetId,
    symbol: str,
    input_rel: str,
    files: list[str],
    recorded: Mapping[str, dict[str, Any]],
    part: pa.Table,
    out: Outcome,
) -> list[str]:
    """The part file of new bars ``part`` (:func:`part_table`) made from input file
    ``input_rel``, whose parts so far are ``files``; returns its parts after. When they
    would be more than ``COMPACT`` (daily appends would otherwise leave one file a day), the
    new bars are written together with the newest parts, merged in memory: those after each
    leading part that holds more rows than all those after it (merging the year's first,
    large part every 8 days re-read and rewrote the whole year; now a part is rewritten about
    log(n) times)."""
    kept, old = files, []
    if len(files) + 1 > COMPACT:
        recs = {**recorded, **out.written}
        rows = [int(recs[rel].get("rows", 0)) for rel in files] + [part.num_rows]
        lead = 0
        while lead < len(rows) - 2 and rows[lead] > sum(rows[lead + 1 :]):
            lead += 1
        kept, old = files[:lead], files[lead:]
    return [*kept, _merged(storage, ds, symbol, input_rel, old, recorded, part, out)]


def close_parts(
    storage: Any,
    ds: DatasetId,
    symbol: str,
    input_rel: str,
    files: list[str],
    recorded: Mapping[str, dict[str, Any]],
    out: Outcome,
) -> list[str]:
    """The parts ``files`` made from input file ``input_rel``, a year the symbol's data has
    moved past (no sync appends to it again), merged into one; returns its parts after.
    A year of daily appends ends with up to ``COMPACT`` parts; merged once, when the next
    year's first bars are computed, each closed year is one file: what every later run
    checks, plans and records for the symbol grows by one file a year, not eight."""
    if len(files) < 2:
        return files
    return [_merged(storage, ds, symbol, input_rel, files, recorded, None, out)]


def _merged(
    storage: Any,
    ds: DatasetId,
    symbol: str,
    input_rel: str,
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
        recs = {**recorded, **out.written}
        # a part staged by this run is read where it waits (not in place before the commit)
        tables = [storage.read_file(out.staged.get(rel, rel), recs[rel]) for rel in old]
        part = pa.concat_tables(
            tables + ([part] if part is not None else []), promote_options="default"
        )
        for rel in old:
            if rel in out.written:
                del out.written[rel]
                staged = out.staged.pop(rel, None)
                if staged is not None:
                    storage.delete(staged)
                    continue
            out.dropped.append(rel)
    assert part is not None
    data = serialize(part, symbol)
    digest = _io.digest(data)
    first = part.column("date")[0].value
    rel = f"{part_dir(ds, symbol, input_rel)}/part-{first}-{digest[:12]}.parquet"
    out.written[rel] = place(storage, rel, data, digest, part.num_rows, out)
    return rel
