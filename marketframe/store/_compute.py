"""Derived datasets: indicators computed over a stored dataset, one task per symbol.

A task reads one symbol's partitions of the source dataset in time order and carries the
indicators' state from one partition to the next, so it holds one partition (plus the state)
in memory, never the symbol's history. The tasks are plain picklable functions of plain
data (:func:`run_task`), so any ``concurrent.futures.Executor`` runs them (a process pool,
``dask.distributed``, Ray) and so does Spark's ``mapInArrow`` (:mod:`._spark`); the driver
(:func:`compute`) alone touches the manifest.

**The state.** A partition's outputs are the batch kernels (the ``df.md`` ones) run over the
partition with the last ``K`` bars before it in front (:func:`context_rows`): windows need
their last ``n-1`` bars; a recursion (EMA, Wilder's averages, MACD, the recursive KDJ) run
from a fresh seed ``K`` bars back differs from the one carried since the first bar by
``a**K`` times a price difference, and ``K`` is chosen so that this is below ``1e-17`` of the
price: the carried values equal one pass over the whole history to rounding. That context,
the last ``K`` bars, is the state kept per symbol (``_state-<hash>.npz``: arrays and a JSON
header, no pickle) beside the derived files, with what it has consumed: per input file its
path, content hash, rows and a digest of those rows.

**Incremental.** A rerun compares the source's current files with that record. Unchanged
files are skipped; a file that only grew (new bars appended: the rows consumed are a prefix
of it, by their digest) is continued from the saved state and its new bars written as a new
part file; any other change (a repaired file, values that moved, a new corporate action under
``adjust=``, a different spec) recomputes the symbol from the first changed file on, the
state before it rebuilt from the unchanged files. Part files are named by content
(``part-<first bar>-<hash>.parquet``), so a task never overwrites a recorded file; the driver
records a task's files in the manifest, then deletes the files they replace. A process killed
at any point leaves files the manifest does not record; the next run removes them first, so
a rerun after ``kill -9`` equals a clean run.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._manifest import DatasetId

FORMAT = "marketframe.store.derived"
VERSION = 1
INPUTS = ("open", "high", "low", "close", "volume")
_TOL = 1e-18  # a**K below this: a carried recursion's start is far below any price's rounding
COMPACT = 8  # part files in one (symbol, year) directory before they are merged into one


def _decay(a: float) -> int:
    return 1 if a <= 0.0 else int(math.log(_TOL) / math.log(a)) + 1


def context_rows(sp: sf.IndicatorSpec) -> int:
    """Bars of history in front of new bars that make the batch kernels' outputs on the new
    bars equal the carried state's (windows: exactly; recursions: to ``1e-18`` of the
    scale; see the module docstring)."""
    p = [int(v) for v in sp.params[:3]] if sp.indicator != "bbands" else [int(sp.params[0])]
    ind = sp.indicator
    if ind in ("sma", "bbands"):
        return p[0] - 1
    if ind == "ema":
        return 2 * p[0] + _decay(1.0 - 2.0 / (p[0] + 1))
    if ind == "rsi":
        return 2 * p[0] + 1 + _decay((p[0] - 1.0) / p[0])
    if ind == "macd":
        fast, slow, sig = p
        return 2 * (slow + sig) + _decay(1.0 - 2.0 / (slow + 1)) + _decay(1.0 - 2.0 / (sig + 1))
    n, m1, m2 = p  # kdj
    conv = sp.convention
    if getattr(conv, "smoothing", "recursive") == "sma":
        return n + m1 + m2
    return 2 * (n + m1 + m2) + _decay(1.0 - 1.0 / m1) + _decay(1.0 - 1.0 / m2)


def fingerprint(source: DatasetId, sp: sf.IndicatorSpec, adjust: str | None) -> str:
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
    return DatasetId(f"derived.{sp.indicator}", fingerprint(source, sp, adjust), source.timeframe)


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
    """One symbol: its source files in time order (checked against their records)."""

    store: str  # a local path or an fsspec URL
    storage_options: dict[str, Any] | None
    symbol: str
    inputs: list[tuple[str, dict[str, Any]]]
    targets: list[Target]
    events: list[Any] | None = None  # corporate actions of ``adjust=`` (adjust.Event)
    events_digest: str = ""


@dataclass
class Outcome:
    """What a task wrote for one target: the driver records it, then deletes ``dropped``."""

    ds: DatasetId
    written: dict[str, dict[str, Any]] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    state: tuple[str, dict[str, Any]] | None = None
    rows: int = 0  # rows computed (new bars)
    mode: str = "unchanged"  # unchanged | appended | recomputed | full


@dataclass
class Result:
    symbol: str
    outcomes: list[Outcome]


# ---------------------------------------------------------------------------------------
# the state file


def _state_bytes(meta: dict[str, Any], context: np.ndarray) -> bytes:
    buf = io.BytesIO()
    header = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    np.savez(buf, __meta__=header, context=context)
    return buf.getvalue()


def _read_state(data: bytes) -> tuple[dict[str, Any], np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        meta = json.loads(npz["__meta__"].tobytes().decode())
        return meta, np.array(npz["context"])


def rows_digest(block: np.ndarray) -> str:
    """A digest of input rows (time and the five inputs): whether consumed rows changed."""
    return hashlib.blake2b(np.ascontiguousarray(block).tobytes(), digest_size=16).hexdigest()


# ---------------------------------------------------------------------------------------
# the task


def _storage(task: Task) -> Any:
    from marketframe.store._fs import storage_for

    return storage_for(task.store, task.storage_options, Path)


def _block(table: pa.Table) -> np.ndarray:
    """(rows, 6): the bar time (epoch microseconds, or days for dates) and the inputs."""
    col = table.column("date")
    if pa.types.is_timestamp(col.type):
        t = pc.cast(col.cast(pa.timestamp("us", col.type.tz)), pa.int64())
    else:
        t = pc.cast(col.cast(pa.date32()), pa.int32()).cast(pa.int64())
    out = np.empty((table.num_rows, 6))
    out[:, 0] = np.asarray(t.to_numpy(zero_copy_only=False), dtype=np.float64)
    for j, name in enumerate(INPUTS, 1):
        if name in table.column_names:
            c = table.column(name).cast(pa.float64())
            out[:, j] = c.to_numpy(zero_copy_only=False)
            nulls = c.is_null().to_numpy(zero_copy_only=False)
            out[nulls, j] = np.nan
        else:
            out[:, j] = np.nan
    return out


def outputs(sp: sf.IndicatorSpec, block: np.ndarray) -> tuple[np.ndarray, ...]:
    """The batch kernels over ``block`` (rows of time and the inputs), one array per name."""
    from marketframe import indicators as ind

    c = np.ascontiguousarray(block[:, 4])
    p = sp.params
    conv = sp.convention
    res: Any
    if sp.indicator == "sma":
        res = ind.sma(c, int(p[0]), convention=conv)  # type: ignore[arg-type]
    elif sp.indicator == "ema":
        res = ind.ema(c, int(p[0]), convention=conv)  # type: ignore[arg-type]
    elif sp.indicator == "rsi":
        res = ind.rsi(c, int(p[0]), convention=conv)  # type: ignore[arg-type]
    elif sp.indicator == "macd":
        res = ind.macd(c, int(p[0]), int(p[1]), int(p[2]), convention=conv)  # type: ignore[arg-type]
    elif sp.indicator == "bbands":
        res = ind.bbands(c, int(p[0]), float(p[1]), convention=conv)  # type: ignore[arg-type]
    else:
        h, lo = np.ascontiguousarray(block[:, 2]), np.ascontiguousarray(block[:, 3])
        res = ind.kdj(h, lo, c, int(p[0]), int(p[1]), int(p[2]), convention=conv)  # type: ignore[arg-type]
    return tuple(res) if isinstance(res, tuple) else (res,)


class _Source:
    """The symbol's input files, read lazily, one at a time (and adjusted when asked)."""

    def __init__(self, task: Task, storage: Any):
        self.task, self.storage = task, storage

    def read(self, i: int) -> tuple[pa.Table, np.ndarray]:
        rel, rec = self.task.inputs[i]
        table = self.storage.read_file(rel, rec)
        if self.task.events:
            from marketframe import adjust as _adjust

            table = _adjust.apply(table, {self.task.symbol: self.task.events})
        return table, _block(table)

    def context_before(self, i: int, k: int) -> np.ndarray:
        """The last ``k`` bars of input files ``0..i-1`` (read backwards, newest first)."""
        parts: list[np.ndarray] = []
        have = 0
        for j in range(i - 1, -1, -1):
            if have >= k:
                break
            _, b = self.read(j)
            parts.insert(0, b)
            have += len(b)
        if not parts:
            return np.empty((0, 6))
        return np.concatenate(parts)[-k:] if k else np.empty((0, 6))


def run_task(task: Task) -> Result:
    """Bring every target of one symbol up to date (see the module docstring). Runs
    anywhere the store is reachable; touches no manifest."""
    storage = _storage(task)
    source = _Source(task, storage)
    return Result(task.symbol, [_target(task, storage, source, t) for t in task.targets])


def _target(task: Task, storage: Any, source: _Source, target: Target) -> Outcome:
    sp = sf.IndicatorSpec.from_json(target.spec)
    k = context_rows(sp)
    out = Outcome(target.ds)
    meta: dict[str, Any] | None = None
    context = np.empty((0, 6))
    if target.state is not None:
        rel, rec = target.state
        try:
            meta, context = _read_state(storage.read(rel))
            if not _io.matches(storage.read(rel), rec):
                meta = None
        except (OSError, ValueError, KeyError):
            meta = None
    if meta is not None and (
        meta.get("format") != FORMAT
        or meta.get("version") != VERSION
        or meta.get("spec") != target.spec
        or meta.get("events") != task.events_digest
    ):
        meta = None
    consumed: list[dict[str, Any]] = list(meta["consumed"]) if meta else []
    made: dict[str, list[str]] = dict(meta["made"]) if meta else {}
    # the first input that differs from what was consumed
    first = 0
    while (
        first < len(consumed)
        and first < len(task.inputs)
        and consumed[first]["rel"] == task.inputs[first][0]
        and consumed[first]["hash"] == task.inputs[first][1].get("hash")
    ):
        first += 1
    if first == len(consumed) == len(task.inputs) and meta is not None:
        out.state = target.state
        return out  # nothing new
    append = None
    if (
        meta is not None
        and first == len(consumed) - 1
        and first < len(task.inputs)
        and consumed[first]["rel"] == task.inputs[first][0]
    ):
        table, block = source.read(first)
        n = int(consumed[first]["rows"])
        if len(block) >= n and rows_digest(block[:n]) == consumed[first]["digest"]:
            append = (table, block, n)
    if append is None:
        if meta is None:
            first = 0
            out.mode = "full"
        else:
            out.mode = "recomputed"
        # everything made from input ``first`` on is replaced; the context before it rebuilt
        keep = {c["rel"] for c in consumed[:first]}
        for rel in list(target.files):
            if not any(rel in made.get(c, []) for c in keep):
                out.dropped.append(rel)
        made = {c: made.get(c, []) for c in keep}
        context = source.context_before(first, k) if first else np.empty((0, 6))
    else:
        out.mode = "appended"
    consumed = consumed[:first]
    start = first
    for i in range(start, len(task.inputs)):
        rel, rec = task.inputs[i]
        if append is not None and i == first:
            table, block, skip = append
        else:
            table, block = source.read(i)
            skip = 0
        new = block[skip:]
        files = made.setdefault(rel, [])
        if len(new):
            both = np.concatenate([context, new]) if len(context) else new
            res = outputs(sp, both)
            cut = len(both) - len(new)
            written = _write_part(
                storage, target.ds, task.symbol, rel, sp, table, skip, [r[cut:] for r in res]
            )
            out.written.update(written)
            files.extend(written)
            out.rows += len(new)
            context = both[-k:] if k else np.empty((0, 6))
            merged = _compact(storage, target.ds, task.symbol, rel, files, target.files, out)
            if merged is not None:
                made[rel] = files = merged
        consumed.append(
            {"rel": rel, "hash": rec.get("hash"), "rows": len(block), "digest": rows_digest(block)}
        )
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "spec": target.spec,
        "symbol": task.symbol,
        "events": task.events_digest,
        "consumed": consumed,
        "made": made,
        "context_rows": k,
    }
    data = _state_bytes(meta, context)
    digest = _io.digest(data)
    rel = (_io.symbol_dir(Path(), target.ds, task.symbol) / f"_state-{digest[:12]}.npz").as_posix()
    staged, stamp = storage.stage(rel, data)
    storage.publish(staged, rel)
    out.state = (rel, {"size": len(data), "hash": digest, **stamp})
    if target.state is not None and target.state[0] != rel:
        out.dropped.append(target.state[0])
    return out


def _part_dir(ds: DatasetId, symbol: str, input_rel: str) -> Path:
    _, year = _io.where(input_rel)
    d = _io.symbol_dir(Path(), ds, symbol)
    return d / f"year={year}" if year is not None else d


def _write_part(
    storage: Any,
    ds: DatasetId,
    symbol: str,
    input_rel: str,
    sp: sf.IndicatorSpec,
    table: pa.Table,
    skip: int,
    values: Sequence[np.ndarray],
) -> dict[str, dict[str, Any]]:
    date = table.column("date").slice(skip)
    sym = pa.array([symbol] * len(date), pa.string())
    cols = {"symbol": sym, "date": date}
    for name, v in zip(sp.names, values, strict=True):
        cols[name] = pa.array(v, pa.float64())
    part = pa.table(cols)
    meta = {b"marketframe.store.derived": json.dumps(sp.to_json()).encode()}
    part = part.replace_schema_metadata(meta)
    data = _io.serialize(part)
    digest = _io.digest(data)
    first = date[0].value if hasattr(date[0], "value") else 0
    name = f"part-{first}-{digest[:12]}.parquet"
    rel = (_part_dir(ds, symbol, input_rel) / name).as_posix()
    staged, stamp = storage.stage(rel, data)
    storage.publish(staged, rel)
    return {rel: {"size": len(data), "rows": part.num_rows, "hash": digest, **stamp}}


def _compact(
    storage: Any,
    ds: DatasetId,
    symbol: str,
    input_rel: str,
    files: list[str],
    recorded: Mapping[str, dict[str, Any]],
    out: Outcome,
) -> list[str] | None:
    """Merge the part files of one input file into one when there are more than
    ``COMPACT`` (daily appends would otherwise leave one file a day)."""
    if len(files) <= COMPACT:
        return None
    recs = {**recorded, **out.written}
    tables = [storage.read_file(rel, recs[rel]) for rel in files]
    merged = pa.concat_tables(tables)
    data = _io.serialize(merged)
    digest = _io.digest(data)
    first = merged.column("date")[0].value
    rel = (_part_dir(ds, symbol, input_rel) / f"part-{first}-{digest[:12]}.parquet").as_posix()
    staged, stamp = storage.stage(rel, data)
    storage.publish(staged, rel)
    for old in files:
        if old in out.written:
            del out.written[old]
            storage.delete(old)  # never recorded: nobody reads it
        else:
            out.dropped.append(old)
    out.written[rel] = {"size": len(data), "rows": merged.num_rows, "hash": digest, **stamp}
    return [rel]


# ---------------------------------------------------------------------------------------
# the driver


@dataclass
class ComputeReport:
    """What :meth:`marketframe.store.Store.compute` did.

    ``datasets``: the derived datasets (``dataset=derived.<indicator>/params=<fingerprint>``);
    ``modes``: per dataset, symbols by what their task did (``full``: first computation,
    ``appended``: only new bars, from the saved state, ``recomputed``: from the first
    changed input file on, ``unchanged``); ``rows``: bars computed, per dataset.
    """

    datasets: list[DatasetId]
    symbols: list[str]
    rows: dict[str, int] = field(default_factory=dict)
    modes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    removed: int = 0  # files left by a killed run, removed first
    seconds: float = 0.0

    def paths(self) -> list[str]:
        """The derived datasets' directories relative to the store root."""
        return [_io.dataset_dir(Path(), ds).as_posix() for ds in self.datasets]


def symbols_of(files: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return sorted({s for s in (_io.where(rel)[0] for rel in files) if s is not None})


def build_tasks(
    store: Any,
    spec: Any,
    specs: Sequence[sf.IndicatorSpec],
    symbols: Sequence[str],
    adjust: str | None,
    events: Mapping[str, list[Any]] | None,
    storage_options: dict[str, Any] | None,
) -> list[Task]:
    """One task per symbol, from the manifest as it is now."""
    man = store._manifest
    files = man.files(spec.ds)
    ids = [derived_id(spec.ds, sp, adjust) for sp in specs]
    dfiles = {ds.key: man.files(ds) for ds in ids}
    tasks = []
    for sym in symbols:
        inputs = [(rel, dict(rec)) for rel, rec in _io.recorded(files, [sym], None, spec.ds)]
        targets = []
        for sp, ds in zip(specs, ids, strict=True):
            prefix = _io.symbol_dir(Path(), ds, sym).as_posix() + "/"
            mine = {r: dict(v) for r, v in dfiles[ds.key].items() if r.startswith(prefix)}
            state = man.noted(ds, sym, "state")
            targets.append(
                Target(sp.to_json(), ds, tuple(state) if state else None, mine)  # type: ignore[arg-type]
            )
        evs = list((events or {}).get(sym, []))
        digest = ""
        if adjust:
            digest = adjust + ":" + json.dumps([[str(e.day), e.price, e.shares] for e in evs])
        tasks.append(
            Task(
                str(store.root),
                storage_options,
                sym,
                inputs,
                targets,
                evs or None,
                digest,
            )
        )
    return tasks


def remove_strays(storage: Any, manifest: Any, ids: Sequence[DatasetId]) -> int:
    """Files under the derived datasets the manifest does not record (a killed run's): gone."""
    n = 0
    for ds in ids:
        base = _io.dataset_dir(Path(), ds).as_posix()
        keep = set(manifest.files(ds))
        if storage.remote:
            found = storage.list(base)
        else:
            root = storage.root / base
            found = (
                [p.relative_to(storage.root).as_posix() for p in root.rglob("*") if p.is_file()]
                if root.exists()
                else []
            )
        for rel in found:
            if rel.endswith(".npz"):
                st = manifest.noted(ds, _io.where(rel)[0] or "", "state")
                if st and st[0] == rel:
                    continue
            if rel not in keep:
                storage.delete(rel)
                n += 1
    return n


def record(manifest: Any, result: Result, values: Mapping[str, dict[str, Any]]) -> list[str]:
    """A task's files into the manifest (not saved yet); returns the files to delete after
    the save."""
    gone: list[str] = []
    for o in result.outcomes:
        manifest._dataset(o.ds, values[o.ds.key])  # made with what it is derived from
        for rel in o.dropped:
            if rel.endswith(".parquet"):
                manifest.drop_file(o.ds, rel)
            gone.append(rel)
        for rel, rec in o.written.items():
            manifest.commit_file(o.ds, rel, rec)
        if o.state is not None:
            manifest.note(o.ds, result.symbol, "state", list(o.state))
        recs = [
            r
            for rel, r in manifest.files(o.ds).items()
            if rel.startswith(_io.symbol_dir(Path(), o.ds, result.symbol).as_posix() + "/")
        ]
        if o.written or o.dropped:
            # the symbol's entry carries the dataset's values (what it was derived from)
            manifest.note(o.ds, result.symbol, "rows", sum(int(r.get("rows", 0)) for r in recs))
    return gone


def _specs(spec: Any) -> list[sf.IndicatorSpec]:
    from marketframe.exceptions import InvalidParams

    items = [spec] if isinstance(spec, sf.IndicatorSpec | str) else list(spec)
    if not items:
        raise InvalidParams("Store.compute", "spec", "is empty", "one or more indicator specs")
    out = [s if isinstance(s, sf.IndicatorSpec) else sf.spec(s) for s in items]
    if len({(s.indicator, s.params, s.convention) for s in out}) != len(out):
        raise InvalidParams("Store.compute", "spec", "names one spec twice")
    return out


def _source(store: Any, dataset: str, timeframe: str | None, params: dict[str, Any]) -> Any:
    from marketframe.exceptions import InvalidParams
    from marketframe.store._sync import resolve

    src = resolve(dataset, timeframe, params)
    if not src.has_symbol or "close" not in src.ep.schema.arrow().names:
        raise InvalidParams(
            "Store.compute",
            "dataset",
            f"{dataset!r} has no per-symbol bars (date, open, high, low, close)",
            "a candles dataset, e.g. stock.historical.candles",
        )
    return src


def _events(store: Any, src: Any, mode: str, symbols: Sequence[str]) -> dict[str, list[Any]]:
    """The corporate actions of ``adjust=`` for ``symbols`` (one fetch, in the driver)."""
    import datetime as dt

    from marketframe import adjust as _adjust
    from marketframe._time import taipei_today

    man = store._manifest
    firsts = [
        iv[0][0]
        for s in symbols
        for iv in [sorted(sum(man.intervals(src.ds, s).values(), []))]
        if iv
    ]
    if not firsts:
        return {}
    end = taipei_today()
    start = min(firsts) + dt.timedelta(days=1)
    if start > end:
        return {}
    capital, dividends = _adjust.fetch_actions(store.client, start, end, mode)
    return _adjust.events_of(capital, dividends, mode, end, symbols)


def compute(
    store: Any,
    dataset: str,
    spec: Any,
    symbols: Any,
    timeframe: str | None,
    executor: Any,
    max_workers: int | None,
    adjust: str | None,
    params: dict[str, Any],
    runner: Callable[[list[Task]], Iterable[Result]] | None = None,
) -> ComputeReport:
    """``Store.compute``; ``runner``: maps the tasks to their results some other way
    (Spark's ``mapInArrow``, :mod:`._spark`) instead of an executor."""
    import contextlib
    import os
    import time
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from marketframe import adjust as _adjust
    from marketframe.store._fs import LocalStorage
    from marketframe.store._sync import check_symbols

    t0 = time.perf_counter()
    specs = _specs(spec)
    src = _source(store, dataset, timeframe, params)
    mode = _adjust.check_read(src.ep.name, adjust, src.params, src.ds.timeframe)
    man = store._manifest
    man.reload()
    man.check()
    if symbols is None:
        syms = symbols_of(man.files(src.ds))
    else:
        syms = check_symbols(src, symbols)
        from marketframe.store import _held

        _held.check(man, src, syms, None, None)  # never synced: NotSynced
    ids = [derived_id(src.ds, sp, mode) for sp in specs]
    values = {
        ds.key: {"source": src.ds.key, "spec": sp.to_json(), "adjust": mode}
        for ds, sp in zip(ids, specs, strict=True)
    }
    report = ComputeReport(ids, list(syms))
    for ds in ids:
        report.rows[ds.key] = 0
        report.modes[ds.key] = {}
    with contextlib.ExitStack() as locks:
        if isinstance(store._storage, LocalStorage):
            locks.enter_context(store._locked())
        elif syms:
            for ds in ids:
                locks.enter_context(store._locked(ds, syms))
        man.reload()
        man.check()
        report.removed = remove_strays(store._storage, man, ids)
        events = _events(store, src, mode, syms) if mode else None
        tasks = build_tasks(store, src, specs, syms, mode, events, store._storage_options)
        pool = executor
        own = None
        inline = pool is None and (max_workers == 1 or len(tasks) <= 1 or runner is not None)
        if pool is None and not inline:
            import multiprocessing as mp

            own = pool = ProcessPoolExecutor(
                max_workers=min(max_workers or os.cpu_count() or 1, len(tasks)),
                mp_context=mp.get_context("forkserver"),
            )
        gone: list[str] = []
        last = time.monotonic()

        def done(res: Result) -> None:
            nonlocal last
            gone.extend(record(man, res, values))
            for o in res.outcomes:
                report.rows[o.ds.key] += o.rows
                report.modes[o.ds.key].setdefault(o.mode, []).append(res.symbol)
            if time.monotonic() - last > 2.0:  # the manifest is saved every 2 s, not per task
                flush()
                last = time.monotonic()

        def flush() -> None:
            man.save()
            for rel in gone:  # only once the manifest no longer records them
                store._storage.delete(rel)
            gone.clear()

        try:
            if runner is not None:
                for res in runner(tasks):
                    done(res)
            elif inline:
                for t in tasks:
                    done(run_task(t))
            else:
                assert pool is not None
                pending = {pool.submit(run_task, t) for t in tasks}
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        done(f.result())
        finally:
            flush()
            if own is not None:
                own.shutdown(cancel_futures=True)
    for ds in ids:
        for m in report.modes[ds.key].values():
            m.sort()
    report.seconds = time.perf_counter() - t0
    return report


def read(
    store: Any,
    dataset: str,
    spec: Any,
    symbols: Any,
    timeframe: str | None,
    adjust: str | None,
    params: dict[str, Any],
) -> pa.Table:
    from marketframe import adjust as _adjust
    from marketframe.exceptions import InvalidParams

    (sp,) = _specs(spec)
    src = _source(store, dataset, timeframe, params)
    mode = _adjust.check_read(src.ep.name, adjust, src.params, src.ds.timeframe)
    ds = derived_id(src.ds, sp, mode)
    man = store._manifest
    man.reload()
    man.check()
    files = {r: v for r, v in man.files(ds).items() if r.endswith(".parquet")}
    want = None if symbols is None else ([symbols] if isinstance(symbols, str) else list(symbols))
    if want is not None:
        have = set(symbols_of(files))
        missing = [s for s in want if s not in have]
        if missing:
            raise InvalidParams(
                "Store.read_derived",
                "symbols",
                f"{', '.join(missing)} not computed for {ds.endpoint} ({ds.params})",
                f"store.compute({dataset!r}, spec, symbols) first",
            )
    chosen = _io.recorded(files, want, None)
    tables = [store._storage.read_file(rel, rec, store._fix) for rel, rec in chosen]
    tables = [t for t in tables if t.num_rows]
    if not tables:
        date = src.ep.schema.arrow(minute=src.minute).field("date").type
        fields = [pa.field("symbol", pa.string()), pa.field("date", date)]
        fields += [pa.field(n, pa.float64()) for n in sp.names]
        return pa.schema(fields).empty_table()
    table = pa.concat_tables(tables).replace_schema_metadata(None)
    order = pc.sort_indices(table, sort_keys=[("symbol", "ascending"), ("date", "ascending")])
    return table.take(order)
