"""Derived datasets: indicators computed over a stored dataset, one task per bucket of
symbols; the driver side (the tasks planned from the log, run on an executor, recorded).

The tasks (:mod:`._task`) are plain picklable functions of plain data, so any
``concurrent.futures.Executor`` runs them (a process pool, ``dask.distributed``, Ray) and so
does Spark's ``mapInArrow`` (:mod:`._spark`); the driver (:func:`compute`) alone touches the
log. A task reads each of its members' partitions once for all the specs and runs the
batch kernels over the whole partition with each spec's context of the last ``K`` bars in
front (:mod:`._derive`): it holds one partition, never a symbol's history.

Part files are named by content (``part-<first bar>-<hash>.parquet``), so a task never
overwrites a recorded file with other bytes. On a local store a task stages its parts under
hidden names and rewrites its state slots without flushing either; the driver records a
task's files in the log and, before each save, makes every file of the period durable and
puts the parts in place in one group commit (``Storage.settle``: two ``syncfs`` calls on
Linux, whatever the number of files); after the save it moves the files it replaced that the
saved log no longer records to ``_versions/`` (a part written again byte for byte keeps its
name, and stays). A process killed at any point leaves files the log does not record; the
next run removes them first, so a rerun after ``kill -9`` equals a clean run.
Imports run one way: this module -> :mod:`._pool` (its own process pool) -> :mod:`._task`
-> :mod:`._derive`; the arguments are checked by :mod:`._compute_args`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from marketframe.indicators import stateful as sf
from marketframe.store import _held, _io
from marketframe.store._compute._args import check_workers, source_of, specs_of
from marketframe.store._compute._derive import (
    Member,
    Result,
    Target,
    Task,
    bucket_of,
    context_rows,
    derived_id,
    derived_params,
)
from marketframe.store._compute._pool import no_main, own_pool, worker_deaths
from marketframe.store._compute._read import read
from marketframe.store._compute._strays import mark_clean, remove_strays, retire
from marketframe.store._compute._task import remember, run_task
from marketframe.store._dataset import DatasetId
from marketframe.store._log import Log
from marketframe.store._parts import Parts
from marketframe.store._storage._remote import credential_names, withhold_credentials

__all__ = ["ComputeReport", "Result", "Task", "compute", "context_rows", "derived_params"]
__all__ += ["read", "run_task"]

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
        return [_io.dataset_rel(ds) for ds in self.datasets]


def symbols_of(files: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return sorted({s for s in (_io.where(rel)[0] for rel in files) if s is not None})


def by_symbol(
    files: Iterable[tuple[str, Mapping[str, Any]]],
) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """``(path, record)`` pairs grouped by the path's symbol, in their order."""
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for rel, rec in files:
        sym = _io.where(rel)[0]
        if sym is not None:
            out.setdefault(sym, []).append((rel, rec))
    return out


def build_tasks(
    parts: Parts,
    spec: Any,
    specs: Sequence[sf.IndicatorSpec],
    symbols: Sequence[str],
    adjust: str | None,
    events: Mapping[str, list[Any]] | None,
    storage_options: dict[str, Any] | None,
    credentials: tuple[str, ...] = (),
) -> list[Task]:
    """One task per bucket of symbols (:func:`._derive.bucket_of`), from the log as it is
    now: the symbols asked for, and the members its states already hold (their parts are
    shared: a bucket is brought up to date as a whole). The files are grouped by symbol and
    bucket in one pass per dataset (a pass per symbol made planning quadratic in the
    symbols). ``storage_options``: without credentials, whose names are ``credentials``."""
    man = parts.log
    ids = [derived_id(spec.ds, sp, adjust) for sp in specs]
    srcs = by_symbol(_io.recorded(man.files(spec.ds), None, None))
    dfiles = {ds.key: by_symbol(man.files(ds).items()) for ds in ids}
    described = [sp.to_json() for sp in specs]  # once a spec, not once a symbol
    buckets: dict[str, set[str]] = {}
    for sym in symbols:
        buckets.setdefault(bucket_of(sym), set()).add(sym)
    asked = set(symbols)
    for ds in ids:
        for b, held in buckets.items():
            held.update(s for s in man.noted(ds, b, "members") or () if s in srcs)
    tasks = []
    root = str(parts.root)
    for b in sorted(buckets):
        members = []
        for sym in sorted(buckets[b]):
            evs = list((events or {}).get(sym, []))
            digest = ""
            if adjust:
                digest = adjust + ":" + json.dumps([[str(e.day), e.price, e.shares] for e in evs])
            inputs = [(rel, dict(rec)) for rel, rec in srcs.get(sym, [])]
            members.append(Member(sym, inputs, evs or None, digest, sym in asked))
        targets = []
        for js, ds in zip(described, ids, strict=True):
            mine = {r: dict(v) for r, v in dfiles[ds.key].get(b, [])}
            state = man.noted(ds, b, "state")
            targets.append(Target(js, ds, tuple(state) if state else None, mine))
        tasks.append(Task(root, storage_options, b, members, targets, credentials))
    return tasks


def old_layout(
    log: Log, ids: Sequence[DatasetId], symbols: Sequence[str]
) -> list[tuple[DatasetId, str, Mapping[str, Any] | None]]:
    """The files of ``symbols`` a store computed before buckets (a directory a symbol, a
    state each) forgotten, to retire once the commit no longer records them: the symbols
    are computed again into their buckets."""
    gone: list[tuple[DatasetId, str, Mapping[str, Any] | None]] = []
    want = set(symbols)
    for ds in ids:
        for rel, rec in log.files(ds).items():
            if f"/{_io.SYM_KEY}=" in rel and _io.where(rel)[0] in want:
                log.drop_file(ds, rel)
                gone.append((ds, rel, rec))
        for sym in want:
            state = log.noted(ds, sym, "state")
            if state and f"/{_io.SYM_KEY}=" in state[0]:
                log.note(ds, sym, "state", None)
                log.note(ds, sym, "rows", None)
                gone.append((ds, state[0], None))
    return gone


def record(
    log: Log,
    result: Result,
    values: Mapping[str, dict[str, Any]],
    before: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> list[tuple[DatasetId, str, Mapping[str, Any] | None]]:
    """A task's files into the log (not committed yet); returns the files it replaced, to
    retire once the commit no longer records them (:func:`retire`). ``before``: per derived
    dataset, the bucket's files the task was given (its row count follows from them and the
    outcome, without a pass over the dataset's files)."""
    gone: list[tuple[DatasetId, str, Mapping[str, Any] | None]] = []
    b = result.bucket
    for o in result.outcomes:
        log.declare(o.ds, values[o.ds.key])  # made with what it is derived from
        for rel in o.dropped:
            if rel.endswith(".parquet"):
                log.drop_file(o.ds, rel)
            gone.append((o.ds, rel, before.get(o.ds.key, {}).get(rel)))
        for rel, rec in o.restamped.items():
            if rel not in o.dropped:
                log.commit_file(o.ds, rel, rec)
        for rel, rec in o.written.items():
            log.commit_file(o.ds, rel, rec)
        if o.state is not None:
            log.note(o.ds, b, "state", list(o.state))
            if o.members != (log.noted(o.ds, b, "members") or []):
                log.note(o.ds, b, "members", list(o.members))
        if o.written or o.dropped:
            # the bucket's entry carries the dataset's values (what it was derived from)
            dropped = set(o.dropped)
            kept = {rel: r for rel, r in before.get(o.ds.key, {}).items() if rel not in dropped}
            rows = sum(int(r.get("rows", 0)) for r in {**kept, **o.written}.values())
            log.note(o.ds, b, "rows", rows)
    return gone


def _events(parts: Parts, src: Any, mode: str, symbols: Sequence[str]) -> dict[str, list[Any]]:
    """The corporate actions of ``adjust=`` for ``symbols`` (one fetch, in the driver)."""

    from marketframe import adjust as _adjust
    from marketframe._time import taipei_today

    man = parts.log
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
    client = parts.client
    capital, dividends, served = _adjust.actions_served(
        client.prepare, client.send_all, start, end, mode
    )
    # the service's day decides which actions have happened, as for the loaders
    return _adjust.events_of(capital, dividends, mode, _adjust.happened_by(end, served), symbols)


def compute(
    parts: Parts,
    dataset: str,
    spec: Any,
    symbols: Any,
    timeframe: str | None,
    executor: Any,
    max_workers: int | None,
    adjust: str | None,
    params: dict[str, Any],
    runner: Callable[[list[Task]], Iterable[Result]] | None = None,
    *,
    held: bool = False,
) -> ComputeReport:
    """``Store.compute``; ``runner``: maps the tasks to their results some other way
    (Spark's ``mapInArrow``, :mod:`._spark`) instead of an executor; ``held``: the caller
    holds a local store's lock (a repair of ``verify``)."""
    import time
    from concurrent.futures import FIRST_COMPLETED, wait

    from marketframe import adjust as _adjust
    from marketframe.store._dataset import check_symbols

    t0 = time.perf_counter()
    specs = specs_of(spec)
    check_workers(executor, max_workers)
    src = source_of(dataset, timeframe, params)
    mode = _adjust.check_read(src.ep.name, adjust, src.params, src.ds.timeframe)
    man = parts.log
    man.reload()
    man.check()
    # a dataset (or symbol) never synced: NotSynced naming the sync, not an empty report
    syms = None if symbols is None else check_symbols(src, symbols)
    _held.check(man, src, syms, None, None)
    if syms is None:
        syms = symbols_of(man.files(src.ds))
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
        if not parts.storage.remote:
            if not held:
                locks.enter_context(parts.locked(writing="compute"))
        elif syms:
            held_by = sorted({bucket_of(s) for s in syms})
            for ds in ids:  # an object store: the leases of the derived buckets
                locks.enter_context(parts.locked(ds, held_by, writing="compute"))
        man.reload()
        man.check()
        report.removed = remove_strays(parts.storage, man, ids)
        gone: list[tuple[DatasetId, str, Mapping[str, Any] | None]] = []
        gone += old_layout(man, ids, syms)
        events = _events(parts, src, mode, syms) if mode else None
        # the credentials stay in this process and go to its own pool's workers, never
        # into a task: a task is pickled to Dask, Ray or Spark, and shown by its repr
        public, secret = withhold_credentials(parts.storage_options)
        remember(str(parts.root), secret)
        names = credential_names(secret)
        tasks = build_tasks(parts, src, specs, syms, mode, events, public, names)
        pool = executor
        own = None
        inline = pool is None and (max_workers == 1 or len(tasks) <= 1 or runner is not None)
        if pool is None and not inline:
            workers = min(max_workers or os.cpu_count() or 1, len(tasks))
            own = pool = own_pool(workers, str(parts.root), secret)
        # the tasks' files not flushed yet, made durable together before each commit
        staged: list[tuple[str, str]] = []
        unsynced: list[str] = []
        given = {t.bucket: t for t in tasks}
        asked = set(syms)
        last = time.monotonic()

        def done(res: Result) -> None:
            nonlocal last
            before = {t.ds.key: t.files for t in given[res.bucket].targets}
            gone.extend(record(man, res, values, before))
            for o in res.outcomes:
                report.rows[o.ds.key] += o.rows
                for sym, mode in o.modes.items():
                    # a member not asked for is brought up to date with its bucket: said
                    # only when that changed it
                    if sym in asked or mode != "unchanged":
                        report.modes[o.ds.key].setdefault(mode, []).append(sym)
                staged.extend((tmp, rel) for rel, tmp in o.staged.items())
                unsynced.extend(o.unsynced)
            if time.monotonic() - last >= parts.commit_every:  # one commit per period
                flush()
                last = time.monotonic()

        def flush() -> None:
            # every file the entry records durable and in place before it is written
            parts.storage.settle(staged, unsynced)
            staged.clear()
            unsynced.clear()
            man.commit("compute")
            retire(parts.storage, man, gone)
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
                with worker_deaths(parts.root) if own is not None else contextlib.nullcontext():
                    with no_main() if own is not None else contextlib.nullcontext():
                        pending = {pool.submit(run_task, t) for t in tasks}
                    while pending:
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for f in finished:
                            done(f.result())
        finally:
            flush()
            man.commit("compute")  # the versions kept by the last flush
            if own is not None:
                own.shutdown(cancel_futures=True)
        mark_clean(parts.storage, ids)  # finished: the next run need not look for strays
    for ds in ids:
        for m in report.modes[ds.key].values():
            m.sort()
    report.seconds = time.perf_counter() - t0
    return report
