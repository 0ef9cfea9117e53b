"""Derived datasets, the per-partition side: what a task is given and returns, the
context a partition's batch kernels need in front of it, the state file, and the part files.

A partition's outputs are the batch kernels (the ``df.md`` ones) run over the whole
partition at once with the last ``K`` bars before it in front (:func:`context_rows`, the
indicator's ``warmup`` in its row of ``marketframe.indicators.registry``): windows need
their last ``n-1`` bars; a recursion (EMA, Wilder's averages, MACD, the recursive KDJ) run
from a fresh seed ``K`` bars back differs from the one carried since the first bar by
``a**K`` times a price difference, and ``K`` is chosen so that this is below ``1e-17`` of
the price: the carried values equal one pass over the whole history to rounding.
That context, the last ``K`` bars, is the state kept per symbol (a JSON header and the raw
float64 context, no pickle) beside the derived files, with what it has consumed: per input
file its path, content hash and rows, and for the last one (the only one a sync can append
to) a digest of its rows.

The state file and the digest of consumed rows are :mod:`._state`'s. Nothing here imports
it, the driver (:mod:`._compute`) or the task loop (:mod:`._task`): the imports run driver ->
task -> state -> this module.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marketframe.indicators import registry
from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._dataset import DatasetId

FORMAT = "marketframe.store.derived"
VERSION = 1
INPUTS = registry.FIELDS  # the rows of block() after the time: the fields an indicator reads
COMPACT = 8  # part files in one (symbol, year) directory before they are merged into one


def used() -> tuple[str, ...]:
    """The inputs the registered indicators read (KDJ: high, low, close; the others: the
    close): what the digests of earlier stores cover (a task now reads and digests only
    the inputs of its own targets; the others stay NaN in its block). ``USED`` is the
    same, read as a constant."""
    read = {f for row in registry.rows() for f in row.inputs}
    return tuple(f for f in INPUTS if f in read)


def digested() -> tuple[int, ...]:
    """The rows of :func:`block` the digests of earlier stores cover: the time and
    :func:`used`."""
    return rows_of(used())


def rows_of(fields: Iterable[str]) -> tuple[int, ...]:
    """The rows of :func:`block` that hold the time and ``fields``, in the block's order:
    what the rows digest of a spec reading ``fields`` covers."""
    return (0, *sorted(1 + INPUTS.index(f) for f in fields))


def __getattr__(name: str) -> tuple[str, ...]:
    if name == "USED":  # computed when read: an indicator registered at run time counts
        return used()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def context_rows(sp: sf.IndicatorSpec) -> int:
    """Bars of history in front of new bars that make the batch kernels' outputs on the new
    bars equal the carried state's (windows: exactly; recursions: to ``1e-18`` of the
    scale; see the module docstring): the indicator's ``warmup`` (its row)."""
    return int(sp.row.warmup(sp.params, sp.convention))


def derived_params(source: DatasetId, sp: sf.IndicatorSpec, adjust: str | None) -> str:
    """The derived dataset's ``params=`` directory: readable periods plus a hash of
    everything that shapes it (the source dataset, the spec and its convention, adjust)."""
    ident = {
        "source": source.key,
        "spec": sp.to_json(),
        "adjust": adjust,
        "version": VERSION,
    }
    h = hashlib.blake2b(json.dumps(ident, sort_keys=True).encode(), digest_size=5).hexdigest()
    tag = "-".join(f"{v:g}" for v in sp.params)
    src = source.endpoint.replace(".", "_")
    return f"{src}.{tag}{'.' + adjust if adjust else ''}.{h}"


def derived_id(source: DatasetId, sp: sf.IndicatorSpec, adjust: str | None) -> DatasetId:
    """Where ``sp`` over ``source`` is stored: ``dataset=derived.<indicator>``."""
    return DatasetId(
        f"derived.{sp.indicator}", derived_params(source, sp, adjust), source.timeframe
    )


# ---------------------------------------------------------------------------------------
# what a task is given and returns (plain data: it crosses processes and machines)


@dataclass
class Target:
    """One derived dataset of a task's symbol: the spec, where it lives and what is there."""

    spec: dict[str, Any]  # IndicatorSpec.to_json()
    ds: DatasetId
    state: tuple[str, dict[str, Any]] | None  # the recorded state file and its record
    files: dict[str, dict[str, Any]]  # the symbol's recorded part files


@dataclass
class Task:
    """One symbol: its source files in time order (checked against their records).

    It crosses processes and machines, so it holds no secret: ``storage_options`` are the
    store's without their credentials, which ``credentials`` names (never their values). A
    worker of compute's own pool is given them by its initializer; any other worker (Dask,
    Ray, Spark) takes them from its environment (the AWS variables or profile)."""

    store: str  # a local path or an fsspec URL
    storage_options: dict[str, Any] | None
    symbol: str
    inputs: list[tuple[str, dict[str, Any]]]
    targets: list[Target]
    events: list[Any] | None = None  # corporate actions of ``adjust=`` (adjust.Event)
    events_digest: str = ""
    credentials: tuple[str, ...] = ()  # the names of the storage options withheld


@dataclass
class Outcome:
    """What a task wrote for one target: the driver records it, then deletes ``dropped``
    (those the saved log no longer records)."""

    ds: DatasetId
    written: dict[str, dict[str, Any]] = field(default_factory=dict)
    # recorded parts intact but touched (a store copied without keeping times): new stamps
    restamped: dict[str, dict[str, Any]] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    state: tuple[str, dict[str, Any]] | None = None
    rows: int = 0  # rows computed (new bars)
    mode: str = "unchanged"  # unchanged | appended | recomputed | full
    # on a local store, written but not flushed: the driver makes them durable in one group
    # commit before the log records them (Storage.settle): parts staged under a hidden name
    # (their path -> the temporary file), and the state slot written in place
    staged: dict[str, str] = field(default_factory=dict)
    unsynced: list[str] = field(default_factory=list)


@dataclass
class Result:
    symbol: str
    outcomes: list[Outcome]


# ---------------------------------------------------------------------------------------
# a partition's rows and the kernels over them


def block(table: pa.Table) -> np.ndarray:
    """(6, rows): the bar time (epoch microseconds, or days for dates) and the inputs, as
    float64 with NaN for nulls, one contiguous row per column (a kernel's input is a view,
    and a target copies only the columns it reads)."""
    col = table.column("date")
    if pa.types.is_timestamp(col.type):
        t = pc.cast(col.cast(pa.timestamp("us", col.type.tz)), pa.int64())
    else:
        t = pc.cast(col.cast(pa.date32()), pa.int32()).cast(pa.int64())
    out = np.empty((6, table.num_rows))
    out[0] = t.to_numpy()
    for j, name in enumerate(INPUTS, 1):
        if name in table.column_names:
            c = table.column(name).cast(pa.float64())
            if c.null_count:
                c = c.fill_null(pa.scalar(np.nan, pa.float64()))
            out[j] = c.to_numpy()
        else:
            out[j] = np.nan
    return out


def spec_of(target: Target) -> sf.IndicatorSpec:
    """The spec ``target`` describes (its JSON), parsed once a process: every task of a
    run carries the same few, and specs are immutable."""
    return _parsed(orjson.dumps(target.spec, option=orjson.OPT_SORT_KEYS))


@functools.lru_cache(maxsize=64)
def _parsed(text: bytes) -> sf.IndicatorSpec:
    return sf.IndicatorSpec.from_json(orjson.loads(text))


def needs(sp: sf.IndicatorSpec) -> slice:
    """The rows of :func:`block` the spec's kernel reads (a slice: a view): from its first
    input to its last (high, low and close for KDJ; the close for the others)."""
    rows = [1 + INPUTS.index(f) for f in sp.inputs]
    return slice(min(rows), max(rows) + 1)


def outputs(sp: sf.IndicatorSpec, cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """The batch kernel over ``cols`` (the rows of :func:`block` that :func:`needs` names,
    in its order), one array per output name."""
    first = needs(sp).start
    arrays = [cols[1 + INPUTS.index(f) - first] for f in sp.inputs]
    res = sp.row.kernel(*arrays, *sp.params, convention=sp.convention)
    return tuple(res) if isinstance(res, tuple) else (res,)


# ---------------------------------------------------------------------------------------
# part files


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
