"""Derived datasets, the per-partition side: what a task is given and returns, and the
context a partition's batch kernels need in front of it.

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

The state file and the digest of consumed rows are :mod:`._statefile`'s, the part files
:mod:`._partfile`'s. Nothing here imports them, the driver (:mod:`._compute`) or the task
loop (:mod:`._task`): the imports run driver -> task -> state file, part files -> this
module.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.indicators import registry
from marketframe.indicators import stateful as sf
from marketframe.store._dataset import DatasetId

FORMAT = "marketframe.store.derived"
VERSION = 2  # of the state files; 2: a bucket of symbols each
#: of what shapes the values, in the ``params=`` directory's hash (not the layout)
PARAMS_VERSION = 1
INPUTS = registry.FIELDS  # the rows of block() after the time: the fields an indicator reads


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
        "version": PARAMS_VERSION,
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


#: symbols are computed in buckets (a task, a state file and the part files of a year each
#: hold many symbols): every file's fixed cost (making it, writing Parquet, reading and
#: writing a state) is shared by the bucket's members instead of paid per symbol
BUCKETS = 32


def bucket_of(symbol: str) -> str:
    """The bucket of ``symbol``: a stable hash of it, the same in every process."""
    h = int.from_bytes(hashlib.sha256(symbol.encode()).digest()[:8], "big")
    return f"{h % BUCKETS:02d}"


@dataclass
class Target:
    """One derived dataset of a task's bucket: the spec, where it lives and what is there."""

    spec: dict[str, Any]  # IndicatorSpec.to_json()
    ds: DatasetId
    state: tuple[str, dict[str, Any]] | None  # the recorded state file and its record
    files: dict[str, dict[str, Any]]  # the bucket's recorded part files


@dataclass
class Member:
    """One symbol of a task's bucket: its source files in time order (checked against
    their records) and, under ``adjust=``, its corporate actions."""

    symbol: str
    inputs: list[tuple[str, dict[str, Any]]]
    events: list[Any] | None = None  # corporate actions of ``adjust=`` (adjust.Event)
    events_digest: str = ""
    # asked for by the call; else a member a target's state already holds, brought up to
    # date with its bucket (never added to a dataset it is not in)
    asked: bool = True


@dataclass
class Task:
    """One bucket of symbols (:func:`bucket_of`): its members, and its targets.

    It crosses processes and machines, so it holds no secret: ``storage_options`` are the
    store's without their credentials, which ``credentials`` names (never their values). A
    worker of compute's own pool is given them by its initializer; any other worker (Dask,
    Ray, Spark) takes them from its environment (the AWS variables or profile)."""

    store: str  # a local path or an fsspec URL
    storage_options: dict[str, Any] | None
    bucket: str
    members: list[Member]
    targets: list[Target]
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
    # per member: unchanged | appended | recomputed | full
    modes: dict[str, str] = field(default_factory=dict)
    members: list[str] = field(default_factory=list)  # every symbol the state holds
    # on a local store, written but not flushed: the driver makes them durable in one group
    # commit before the log records them (Storage.settle): parts staged under a hidden name
    # (their path -> the temporary file), and the state slot written in place
    staged: dict[str, str] = field(default_factory=dict)
    unsynced: list[str] = field(default_factory=list)


@dataclass
class Result:
    bucket: str
    outcomes: list[Outcome]


# ---------------------------------------------------------------------------------------
# a partition's rows and the kernels over them


def block(table: pa.Table) -> np.ndarray:
    """(6, rows): the bar time (epoch microseconds, or days for dates) and the inputs, as
    float64 with NaN for nulls, one contiguous row per column (a kernel's input is a view,
    and a target copies only the columns it reads)."""
    col = table.column("date")
    if pa.types.is_timestamp(col.type):
        if col.type.unit != "us":
            col = col.cast(pa.timestamp("us", col.type.tz))
        t = col.cast(pa.int64())
    else:
        t = pc.cast(col.cast(pa.date32()), pa.int32()).cast(pa.int64())
    out = np.empty((6, table.num_rows))
    out[0] = t.to_numpy()
    names = set(table.column_names)
    for j, name in enumerate(INPUTS, 1):
        if name in names:
            c = table.column(name)
            if c.type != pa.float64():  # a cast of what is float64 already still copies it
                c = c.cast(pa.float64())
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
