"""Writing one symbol's fetched windows: merge them into its partitions and stage the new
files; the sync's :class:`~._batch.Batch` records them as pending, puts them in place and
records them with the windows as held (see :mod:`._batch` for the order and what it
guarantees when the process dies). Split from :mod:`._run`, which plans and fetches; also the
cheap check of a sync's recorded files (:func:`forget_damaged`).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec

import pyarrow as pa
import pyarrow.compute as pc

from marketframe.convert import concat, order_keys
from marketframe.endpoints import Interval, final_until
from marketframe.exceptions import StoreCorrupted
from marketframe.store import _io, _upsert
from marketframe.store._dataset import NO_SYMBOL, Dataset, DatasetId, Fetch
from marketframe.store._log import Log
from marketframe.store._report import SyncReport
from marketframe.store._storage import Storage, recheck
from marketframe.store._sync._batch import Batch, Staged, Unit

P = ParamSpec("P")


def _date_bounds(table: pa.Table) -> Interval | None:
    if table.num_rows == 0:
        return None
    bounds = pc.min_max(_io.days(table.column("date")))
    return bounds["min"].as_py(), bounds["max"].as_py()


def _in_window(table: pa.Table, window: Interval) -> pa.Table:
    return table.filter(_io.within(table.column("date"), *window))


def commit_symbol(
    batch: Batch,
    root: Storage,
    log: Log,
    spec: Dataset,
    symbol: str,
    results: list[tuple[Fetch, pa.Table, dt.date]],
    report: SyncReport,
    lock: threading.Lock,
) -> None:
    """Stage one symbol's fetched windows and hand them to the sync's batch."""
    if not results:
        return
    counts = SyncReport(report.dataset)
    batch.add(_write(root, log, spec, symbol, results, counts))
    with lock:
        for k in ("rows_received", "rows_written", "windows_fetched", "empty_windows"):
            setattr(report, k, getattr(report, k) + getattr(counts, k))
        report.repaired += counts.repaired


def _write(
    root: Storage,
    log: Log,
    spec: Dataset,
    symbol: str,
    results: list[tuple[Fetch, pa.Table, dt.date]],
    report: SyncReport,
) -> Unit:
    results = sorted(results, key=lambda r: r[0].window[0] if r[0].window else dt.date.min)
    kept: list[pa.Table] = []
    for task, table, _ in results:
        report.rows_received += table.num_rows
        if task.window is not None and task.fetch_from != task.window[0] and table.num_rows:
            table = _in_window(table, task.window)  # drop the warm-up lead
        if table.num_rows:
            kept.append(table)
    # symbol-less datasets (corporate actions): a fetched window is the service's whole
    # answer for it, so it replaces the rows stored for it (their key holds values that a
    # correction may change: an upsert would keep the old row beside the new one)
    windows = [t.window for t, _, _ in results if t.window is not None]
    replace = windows if not spec.has_symbol else None
    unit = Unit(spec.ds, spec.params)
    if kept or replace:
        fetched = concat(kept) if kept else None
        unit.files = stage_rows(root, log, spec, symbol, fetched, report, replace=replace)
    for task, table, today in results:
        report.windows_fetched += 1
        if task.window is None:  # minute timeframe: what came back, never final
            bounds = _date_bounds(table)
            if bounds is None:
                report.empty_windows += 1
            else:
                unit.windows.append((symbol, bounds, None, False))
            continue
        rows = (
            table.num_rows
            if task.fetch_from == task.window[0]
            else _in_window(table, task.window).num_rows
        )
        if rows == 0:
            report.empty_windows += 1
        until = final_until(spec.ds.timeframe, today, spec.ep.name)
        unit.windows.append((symbol, task.window, until, rows == 0))
    return unit


def stage_rows(
    root: Storage,
    log: Log,
    spec: Dataset,
    symbol: str,
    table: pa.Table | None,
    report: SyncReport,
    *,
    replace: list[Interval] | None = None,
) -> list[Staged]:
    """Upsert one symbol's rows into its partitions: the new files staged (fsynced
    temporary files, or bytes for an object store), each with its record."""
    meta = {
        _io.META_PARAMS: spec.ds.params.encode(),
        _io.META_TIMEFRAME: (spec.ds.timeframe or "").encode(),
    }
    keys = list(spec.ep.keys)
    param = spec.ep.multi_param  # set where the dataset has symbols
    constant = (param, "timeframe") if param is not None else ()
    if table is None:
        table = spec.ep.schema.arrow(minute=spec.minute).empty_table()
    parts = _io.split_partitions(spec.ds, table) if spec.has_symbol else {None: table}
    _under_lease(root, log, spec.ds, symbol)
    staged: list[Staged] = []
    try:
        for year, part in parts.items():
            rel = _io.partition_path(
                Path(), spec.ds, symbol if spec.has_symbol else None, year
            ).as_posix()
            old, was = _current(root, log, spec, symbol, rel, report)  # was: old's record
            if old is not None and replace:
                old, was = _outside(old, _io.date_column(spec.ep), replace), None
            if old is None and not part.num_rows:
                continue
            data, rec, delta = _upsert.prepare(
                part, keys, meta, constant, old, order_keys(spec.ep), was
            )
            tmp, stamp = root.stage(rel, data)
            staged.append((tmp, rel, {**rec.as_dict(), **stamp}))
            report.rows_written += delta
    except BaseException:
        for tmp, *_ in staged:
            root.discard(tmp)
        raise
    return staged


def _at_once(
    stage: Callable[Concatenate[Storage, Log, Dataset, P], list[Staged]],
) -> Callable[Concatenate[Storage, Log, Dataset, P], None]:
    """``stage``, with what it stages committed at once (pending, in place, current) rather
    than handed to a sync's batch."""

    def write(root: Storage, log: Log, spec: Dataset, /, *args: P.args, **kw: P.kwargs) -> None:
        batch = Batch(root, log, "write", every=0)
        batch.add(Unit(spec.ds, spec.params, stage(root, log, spec, *args, **kw)))
        batch.close()

    return write


#: Upsert one symbol's rows and commit them at once: :func:`stage_rows`'s arguments.
write_rows = _at_once(stage_rows)


def _outside(table: pa.Table, column: str, windows: list[Interval]) -> pa.Table:
    """The rows of ``table`` whose ``column`` date is in none of ``windows`` (or null)."""
    col = _io.days(table.column(column))
    inside: _io.Mask | None = None
    for lo, hi in windows:
        m = _io.within(col, lo, hi)
        inside = m if inside is None else pc.or_(inside, m)
    if inside is None:
        return table
    outside = pc.invert(inside)  # null where the date is: such a row is kept
    return table.filter(pc.or_kleene(outside, pc.is_null(outside)))


def _under_lease(root: Storage, log: Log, ds: DatasetId, symbol: str) -> None:
    """Object stores: before a partition is built from this writer's view, its lease must
    still be this writer's (read back from the store) and the latest log must record
    the symbol as this writer last saw it; otherwise another writer wrote it meanwhile and
    building on this view would publish over its rows: :class:`LeaseLost`."""
    leases = getattr(root, "leases", None)
    if leases is None:
        return
    leases.confirm(ds, symbol)
    if log.refresh(ds, symbol):
        from marketframe.exceptions import LeaseLost

        raise LeaseLost(
            root.url,
            leases.ttl,
            f"the log's records of {ds.endpoint} {symbol} changed under this writer's "
            "lease (another writer synced it); nothing more is written, rerun the sync",
        )


def _current(
    root: Storage, log: Log, spec: Dataset, symbol: str, rel: str, report: SyncReport
) -> tuple[pa.Table | None, dict[str, Any] | None]:
    """The partition's rows to merge into, fully checked, and the log's record of them (its
    lineages carry on where the merge keeps the rows); ``(None, None)`` without a file. A
    damaged file is not merged but forgotten as the cheap check forgets one (:func:`_forget`;
    the sync then fetches its range again: :func:`._run.run`)."""
    rec = log.file(spec.ds, rel)
    if rec is None or not root.exists(rel):
        return None, None
    try:
        return root.read_file(rel, rec), rec
    except StoreCorrupted:
        _forget(root, log, spec.ds, rel, symbol, report)
        return None, None


def _forget(
    root: Storage, log: Log, ds: DatasetId, rel: str, symbol: str, report: SyncReport
) -> None:
    """A damaged file: removed with its record and its symbol's coverage (the sync fetches
    its range again). Its record goes too, so the batch never keeps the damaged bytes as the
    version a snapshot pins (bit rot passes the cheap check that keeping trusts)."""
    root.delete(rel)
    log.drop_file(ds, rel)
    log.drop_symbol(ds, symbol)
    report.repaired.append(rel)


def forget_damaged(
    root: Storage, log: Log, ds: DatasetId, symbols: Sequence[str], report: SyncReport
) -> None:
    """The cheap check of a sync, before planning: a recorded file of these symbols whose size
    or modification time differs from its record is hashed; if its content is not the recorded
    one (or it is missing) it is removed and its symbol's coverage forgotten, so this sync
    fetches the requested range again. A file only touched (a store copied without keeping
    times) keeps its content and gets its new time recorded."""
    want = set(symbols)
    for rel, rec in log.files(ds).items():
        sym, _ = _io.where(rel)
        if (sym or NO_SYMBOL) not in want:
            continue
        kept = recheck(root, rel, rec)
        if kept is not None:
            if kept is not rec:  # only touched: its new time recorded
                log.commit_file(ds, rel, dict(kept))
            continue
        _forget(root, log, ds, rel, sym or NO_SYMBOL, report)
