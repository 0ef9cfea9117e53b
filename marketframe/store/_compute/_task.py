"""Derived datasets, one task: every target of one bucket of symbols brought up to date.

A task reads each member's input partitions in time order, each **once for all its
targets** (the specs of one ``Store.compute`` call), runs each target's batch kernels over
the whole partition with that member's context in front (:mod:`._derive`; short ones
queued and computed together as a panel: :mod:`._panel`) and carries the context on, so it
holds one partition (plus the contexts and the queued short feeds) in memory, never a
symbol's history. The members' new rows of one year are gathered into one part a target
(written as they reach ``LARGE`` rows, and at the end), so a day appended to the bucket is
one part and one state a target, whatever the number of members. It is a plain picklable
function of plain data (:func:`run_task`), so any ``concurrent.futures.Executor`` runs it
(a process pool, ``dask.distributed``, Ray) and so does Spark's ``mapInArrow``; it touches
no log.

**Incremental.** Each member compares its source's current files with what the state
consumed. Unchanged files are skipped; a file that only grew (new bars appended: the rows
consumed are a prefix of it, by their lineage or digest) is continued from the saved
context, and so are new files after the last one consumed (a new year), the small parts of
the year before merged into one (:func:`._partfile.close_parts`); any other change (a
repaired file, values that moved, a new corporate action under ``adjust=``, a different
spec) recomputes from the first changed file's year on: the bucket's parts of those years
are dropped, and every member with bars there goes back to that year, its context rebuilt
from the files before. A member new to the bucket is computed in full beside the others.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._compute._derive import (
    FORMAT,
    INPUTS,
    VERSION,
    Outcome,
    Result,
    Target,
    Task,
    context_rows,
    needs,
    rows_of,
    spec_of,
)
from marketframe.store._compute._member import MemberRun, Source, after, none, year_of
from marketframe.store._compute._panel import Feed, Panel
from marketframe.store._compute._partfile import (
    LARGE,
    bucket_part,
    close_parts,
    record,
    write_part,
)
from marketframe.store._compute._statefile import read_state, state_bytes, state_slot

#: the credentials of stores (by URL) given to the driver's ``Store(storage_options=...)``:
#: known in the driver's process and, through their initializer, to the workers of
#: compute's own pool; never in a task (:class:`._derive.Task`)
_CREDENTIALS: dict[str, dict[str, Any]] = {}


def _storage(task: Task) -> Any:
    from marketframe.exceptions import ConfigurationError
    from marketframe.store._storage import storage_for
    from marketframe.store._storage._remote import with_credentials

    secret = _CREDENTIALS.get(task.store, {})
    try:
        return storage_for(task.store, with_credentials(task.storage_options, secret), make=False)
    except ConfigurationError as exc:
        if not task.credentials or secret:
            raise
        raise ConfigurationError(
            f"{exc} here: the credentials given to the driver's Store(storage_options=...) "
            f"({', '.join(task.credentials)}) are never sent with a task",
            hint="give this executor's workers the standard AWS variables "
            "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or AWS_PROFILE in their environment",
        ) from None


class _BucketTarget:
    """One target over the bucket: its state, its parts by year, the members' new rows
    gathered into parts of many members."""

    def __init__(self, task: Task, storage: Any, target: Target, sp: sf.IndicatorSpec):
        self.task, self.storage, self.target, self.sp = task, storage, target, sp
        self.k = context_rows(sp)
        self.use = needs(sp)  # the rows of block() its kernels read, and its context holds
        # the rows of block() its outputs depend on: the time and its inputs (digested)
        self.rows = rows_of(sp.inputs)
        self.columns = ["date", *(f for f in INPUTS if f in sp.inputs)]  # the same, by name
        self.out = Outcome(target.ds)
        self.panel = Panel(sp)  # the members' short feeds, computed together
        self.pending: dict[int | None, list[tuple[list[tuple[str, int]], pa.Table]]] = {}
        self.gathered: dict[int | None, int] = {}  # rows pending, by year
        self.runs: list[MemberRun] = []
        self.cut: int | None | bool = False  # False: nothing dropped; else from that year
        self.meta, self.ctx = self._meta()
        if self.meta is not None and not self._outputs_intact():
            self.meta = None  # a part damaged or missing: the bucket computed again in full
        made = self.meta["made"] if self.meta else {}
        self.made: dict[int | None, list[str]] = {
            (None if y == "" else int(y)): list(v) for y, v in made.items()
        }
        if self.meta is None:  # everything recorded is replaced
            self.out.dropped.extend(target.files)
            self.made = {}

    def _meta(self) -> tuple[dict[str, Any] | None, np.ndarray]:
        target, meta, ctx = self.target, None, none(self.use)
        if target.state is not None:
            rel, rec = target.state
            try:
                data = self.storage.read(rel)
                if _io.matches(data, rec):
                    meta, ctx = read_state(data, self.use)
            except (OSError, ValueError, KeyError):
                meta = None
        if meta is not None and (
            meta.get("format") != FORMAT
            or meta.get("version") != VERSION
            or meta.get("spec") != target.spec
            or meta.get("bucket") != self.task.bucket
        ):
            meta = None
        return meta, ctx

    def member_meta(self, symbol: str) -> dict[str, Any] | None:
        return None if self.meta is None else self.meta["members"].get(symbol)

    def context_of(self, symbol: str, meta: dict[str, Any]) -> np.ndarray:
        at, k = meta["context"]
        return self.ctx[:, at : at + k].copy()

    def _outputs_intact(self) -> bool:
        """Whether every part the log records for the bucket is there with its recorded
        content: its size and time (an object store's ETag, one listing of the bucket's
        folder) against the record, hashed only when they differ. Parts only touched are
        kept with their new stamps."""
        from marketframe.store._storage import recheck

        files, storage = self.target.files, self.storage
        listed = None
        if files and storage.remote:
            listed = storage.stamps(_io.bucket_rel(self.target.ds, self.task.bucket))
        for rel, rec in files.items():
            kept = recheck(storage, rel, rec, listed)
            if kept is None:
                self.out.restamped.clear()
                return False
            if kept is not rec:
                self.out.restamped[rel] = dict(kept)
        return True

    def drop_from(self, year: int | None) -> None:
        """The bucket's parts of ``year`` on (None: all) are computed again."""
        if self.cut is False or (year is not None and self.cut is not None and year < self.cut):
            self.cut = year
        elif year is None:
            self.cut = None

    def settle_drops(self) -> None:
        """Once every member has decided: the parts dropped, every member with bars there
        sent back to them."""
        if self.cut is False:
            return
        cut = self.cut if isinstance(self.cut, int) and not isinstance(self.cut, bool) else None
        for y in [y for y in self.made if after(y, cut)]:
            self.out.dropped.extend(self.made.pop(y))
        for r in self.runs:
            r.back_to(cut)

    def compute(self, feed: Feed) -> None:
        self.panel.add(feed, self.add)

    def add(self, year: int | None, runs: list[tuple[str, int]], table: pa.Table) -> None:
        """New rows of ``year``: ``runs`` (symbol, rows) in the table's order."""
        self.pending.setdefault(year, []).append((runs, table))
        self.gathered[year] = self.gathered.get(year, 0) + table.num_rows
        if self.gathered[year] >= LARGE:
            self.flush(year)

    def flush(self, year: int | None) -> None:
        chunks = self.pending.pop(year, [])
        self.gathered.pop(year, None)
        if not chunks:
            return
        part = bucket_part(chunks)
        files = self.made.get(year, [])
        ds, bucket = self.target.ds, self.task.bucket
        self.made[year] = write_part(
            self.storage, ds, bucket, year, files, self.target.files, part, self.out
        )

    def release(self) -> None:
        """The members' runs let go: they refer to this target, so kept, each task's runs
        (and their contexts) would be freed only by the cyclic garbage collector's passes."""
        self.runs = []

    def finish(self) -> Outcome:
        """The parts left written, a closed year merged, the state (every member's context
        and what it consumed); the outcome for the driver."""
        out, target, task = self.out, self.target, self.task
        for r in self.runs:
            out.modes[r.member.symbol] = r.mode
        if all(r.start is None for r in self.runs) and self.meta is not None:
            out.state = target.state
            out.members = sorted(self.meta["members"])
            return out
        self.panel.run(self.add)
        for year in list(self.pending):
            self.flush(year)
        # the year before the newest one is closed: its small parts merged into one. Only
        # that one: the years before it were merged when they closed
        years = sorted(y for y in self.made if y is not None)
        if len(years) > 1:
            y = years[-2]
            self.made[y] = close_parts(
                self.storage, target.ds, task.bucket, y, self.made[y], target.files, out
            )
        members: dict[str, dict[str, Any]] = {}
        contexts: list[np.ndarray] = []
        at = 0
        old = dict(self.meta["members"]) if self.meta else {}
        mine = {r.member.symbol: r for r in self.runs}
        cut = self.cut if isinstance(self.cut, int) and not isinstance(self.cut, bool) else None
        for sym in sorted(set(old) | set(mine)):
            run = mine.get(sym)
            entry: dict[str, Any]
            if run is None:  # a member whose source is gone: as it was, but what dropped
                ctx = self.context_of(sym, old[sym])
                entry = dict(old[sym])
                if self.cut is not False:
                    entry["consumed"] = [
                        c for c in entry["consumed"] if not after(year_of(c["rel"]), cut)
                    ]
            else:
                ctx = run.context
                entry = {"consumed": run.consumed, "events": run.member.events_digest}
            entry["context"] = [at, ctx.shape[1]]
            at += ctx.shape[1]
            members[sym] = entry
            contexts.append(ctx)
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "spec": target.spec,
            "bucket": task.bucket,
            "members": members,
            "made": {("" if y is None else str(y)): v for y, v in self.made.items()},
            "context_rows": self.k,
            "rows": [self.use.start, self.use.stop],
        }
        context = np.concatenate(contexts, axis=1) if contexts else none(self.use)
        data = state_bytes(meta, context)
        named = target.state[0] if target.state is not None else None
        rel = state_slot(target.ds, task.bucket, named)
        # the spare slot: nothing refers to it; flushed by the driver's group commit
        stamp = self.storage.rewrite(rel, data, durable=self.storage.remote)
        if not self.storage.remote:
            out.unsynced.append(rel)
        out.state = (rel, record(data, _io.digest(data), stamp))
        out.members = sorted(members)
        return out


def run_task(task: Task) -> Result:
    """Bring every target of one bucket up to date (see the module docstring). Runs
    anywhere the store is reachable; touches no log."""
    storage = _storage(task)
    specs = [spec_of(t) for t in task.targets]
    read = {f for sp in specs for f in sp.inputs}
    fields = tuple(f for f in INPUTS if f in read)
    targets = [
        _BucketTarget(task, storage, t, sp) for t, sp in zip(task.targets, specs, strict=True)
    ]
    sources = [Source(m, storage, fields) for m in task.members]
    mine: list[list[MemberRun]] = []
    for m, source in zip(task.members, sources, strict=True):
        mine.append([])
        for bt in targets:
            meta = bt.member_meta(m.symbol)
            if m.asked or meta is not None:  # a dataset gains only the symbols asked for
                run = MemberRun(bt, m, source, meta)
                bt.runs.append(run)
                mine[-1].append(run)
    for bt in targets:
        bt.settle_drops()
    for runs, m, source in zip(mine, task.members, sources, strict=True):
        starts = [r.start for r in runs if r.start is not None]
        for i in range(min(starts, default=len(m.inputs)), len(m.inputs)):
            table, rows = source.read(i)
            for r in runs:
                if r.start is not None and i >= r.start:
                    r.feed(i, table, rows)
        source.release()  # one member's partition at a time
    outcomes = [bt.finish() for bt in targets]
    for bt in targets:
        bt.release()
    return Result(task.bucket, outcomes)


# ---------------------------------------------------------------------------------------
# the credentials of the tasks run in this process


def remember(store: str, secret: dict[str, Any]) -> None:
    """The credentials of ``store`` (a URL), for the tasks run in this process."""
    if secret:
        _CREDENTIALS[store] = secret
