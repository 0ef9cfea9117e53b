"""Derived datasets, one task: every target of one symbol brought up to date.

A task reads the symbol's input partitions in time order, each **once for all its
targets** (the specs of one ``Store.compute`` call), runs each target's batch kernels over
the whole partition with that target's context in front (:mod:`._derive`), writes the new
bars' outputs and carries the context on, so it holds one partition (plus the contexts) in
memory, never the symbol's history. It is a plain picklable function of plain data
(:func:`run_task`), so any ``concurrent.futures.Executor`` runs it (a process pool,
``dask.distributed``, Ray) and so does Spark's ``mapInArrow``; it touches no log.

**Incremental.** Each target compares the source's current files with what its state
consumed. Unchanged files are skipped; a file that only grew (new bars appended: the rows
consumed are a prefix of it, by their digest) is continued from the saved context and its
new bars written as a new part file, and so are new files after the last one consumed (a
new year), the parts of the year before merged into one (:func:`._partfile.close_parts`);
any other change (a repaired file, values that moved, a new corporate action under
``adjust=``, a different spec) recomputes the target from the first changed file on, the
context before it rebuilt from the files before. The targets of a task may start at
different files; the partitions are read from the earliest start.
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
    block,
    context_rows,
    needs,
    outputs,
    rows_of,
    spec_of,
    used,
)
from marketframe.store._compute._partfile import close_parts, part_table, record, write_part
from marketframe.store._compute._statefile import (
    SLOTS,
    RowsDigest,
    read_state,
    state_bytes,
    state_slot,
)
from marketframe.store._upsert import lineage_of


def _none(use: slice) -> np.ndarray:
    """No context: the rows ``use`` of block(), no bars."""
    return np.empty((use.stop - use.start, 0))


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


class _Source:
    """The symbol's input files, read lazily and (adjusted when asked) kept one at a time:
    every target reads partition ``i`` from here, so it is parsed once. ``inputs``: the
    fields the targets' kernels read; only those are read (the symbol and timeframe strings
    cost a third of a read, and the close alone is half the bytes of the high, low and
    close), except to adjust, which needs every column."""

    def __init__(self, task: Task, storage: Any, inputs: tuple[str, ...]):
        self.task, self.storage = task, storage
        self.columns = ["date", *inputs]
        self._held: tuple[int, pa.Table, np.ndarray] | None = None
        self._digests: dict[tuple[Any, ...], str] = {}
        self._hashing: dict[bool, tuple[int, RowsDigest]] = {}  # wide -> (input, digests)

    def _table(self, i: int, columns: list[str]) -> pa.Table:
        rel, rec = self.task.inputs[i]
        events = self.task.events  # adjusting needs every column
        table: pa.Table = self.storage.read_file(rel, rec, columns=None if events else columns)
        if not events:
            return table
        from marketframe import adjust as _adjust

        return _adjust.apply(table, {self.task.symbol: events})

    def read(self, i: int) -> tuple[pa.Table, np.ndarray]:
        if self._held is None or self._held[0] != i:
            self._held = None  # release the previous partition before parsing the next
            table = self._table(i, self.columns)
            self._held = (i, table, block(table))
        return self._held[1], self._held[2]

    def digest(self, i: int, rows: tuple[int, ...]) -> str | None:
        """The digest of input ``i``'s ``rows`` of the block (:meth:`RowsDigest.upto`) if it
        is the last input, else None: only the last file consumed can be continued (a sync
        appends to the newest year), so only its rows need to be proved a prefix later; an
        earlier file is matched by its content hash."""
        if i != len(self.task.inputs) - 1:
            return None
        return self.prefix_digest(i, self.read(i)[1].shape[1], rows)

    def prefix_digest(self, i: int, n: int, rows: tuple[int, ...], like: str | None = None) -> str:
        """The digest of input ``i``'s first ``n`` rows (once for all the targets that
        read the same ``rows``), in the form of the recorded digest ``like`` (see
        :meth:`RowsDigest.upto`); a larger ``n`` goes on from the last one. A digest of
        an earlier form covers every input any indicator reads: read for it, once."""
        wide = like is not None and not like.startswith(RowsDigest.TAG)
        key = (i, n, rows, like if wide else None)
        if key not in self._digests:
            held = self._hashing.get(wide)
            if held is None or held[0] != i:
                cols = self.read(i)[1]
                if wide and not self.task.events and not set(used()) <= set(self.columns):
                    cols = block(self._table(i, ["date", *used()]))
                held = self._hashing[wide] = (i, RowsDigest(cols))
            self._digests[key] = held[1].upto(n, rows, like)
        return self._digests[key]

    def context_before(self, i: int, k: int, use: slice) -> np.ndarray:
        """The last ``k`` bars of input files ``0..i-1`` (read backwards, newest first), the
        rows ``use`` of their blocks."""
        parts: list[np.ndarray] = []
        have = 0
        for j in range(i - 1, -1, -1):
            if have >= k:
                break
            b = self.read(j)[1][use]
            parts.insert(0, b[:, -k:] if k else b[:, :0])
            have += parts[0].shape[1]
        if not parts or not k:
            return _none(use)
        return np.concatenate(parts, axis=1)[:, -k:].copy()


class _TargetRun:
    """One target: where it starts (``None``: up to date), then fed partitions in order."""

    def __init__(
        self, task: Task, storage: Any, source: _Source, target: Target, sp: sf.IndicatorSpec
    ):
        self.task, self.storage, self.source, self.target = task, storage, source, target
        self.sp = sp
        self.k = k = context_rows(sp)
        self.use = needs(sp)  # the rows of block() its kernels read, and its context holds
        # the rows of block() its outputs depend on: the time and its inputs (digested)
        self.rows = rows_of(sp.inputs)
        self.columns = ["date", *(f for f in INPUTS if f in sp.inputs)]  # the same, by name
        self.out = out = Outcome(target.ds)
        self.start: int | None = None
        self.skip = 0
        meta = self._meta()
        if meta is not None and not self._outputs_intact():
            meta = None  # a part of its own damaged or missing: computed again in full
        consumed: list[dict[str, Any]] = list(meta["consumed"]) if meta else []
        made: dict[str, list[str]] = dict(meta["made"]) if meta else {}
        inputs = task.inputs
        first = 0  # the first input that differs from what was consumed
        while (
            first < len(consumed)
            and first < len(inputs)
            and consumed[first]["rel"] == inputs[first][0]
            and consumed[first]["hash"] == inputs[first][1].get("hash")
        ):
            first += 1
        if first == len(consumed) == len(inputs) and meta is not None:
            out.state = target.state
            return  # nothing new
        appended = False
        if meta is not None and first == len(consumed) < len(inputs):
            # every file consumed as it was, new ones after (a new year's first bars): the
            # saved context goes on into them, nothing before is read again
            appended = True
        elif (
            meta is not None
            and first == len(consumed) - 1
            and first < len(inputs)
            and consumed[first]["rel"] == inputs[first][0]
        ):
            n = int(consumed[first]["rows"])
            was = consumed[first].get("lineage")
            rec = inputs[first][1]
            if was and was == lineage_of(rec, self.columns) and int(rec.get("rows", -1)) >= n:
                # the file grew from the one consumed, the first rows of the columns read
                # as they were (the sync compared them when it wrote it): nothing to read
                # or hash here
                appended, self.skip = True, n
            else:
                rows = source.read(first)[1]
                want = consumed[first].get("digest")
                if (
                    want
                    and rows.shape[1] >= n
                    and source.prefix_digest(first, n, self.rows, want) == want
                ):
                    appended, self.skip = True, n
        if appended:
            out.mode = "appended"
        else:
            if meta is None:
                first = 0
                out.mode = "full"
                self.context = _none(self.use)
            else:
                out.mode = "recomputed"
            # everything made from input ``first`` on is replaced; the context before it rebuilt
            keep = {c["rel"] for c in consumed[:first]}
            for rel in list(target.files):
                if not any(rel in made.get(c, []) for c in keep):
                    out.dropped.append(rel)
            made = {c: made.get(c, []) for c in keep}
            self.context = source.context_before(first, k, self.use) if first else _none(self.use)
        self.consumed, self.made, self.start = consumed[:first], made, first

    def _meta(self) -> dict[str, Any] | None:
        target, meta = self.target, None
        self.context = _none(self.use)
        if target.state is not None:
            rel, rec = target.state
            try:
                data = self.storage.read(rel)
                if _io.matches(data, rec):
                    meta, self.context = read_state(data, self.use)
            except (OSError, ValueError, KeyError):
                meta = None
        if meta is not None and (
            meta.get("format") != FORMAT
            or meta.get("version") != VERSION
            or meta.get("spec") != target.spec
            or meta.get("events") != self.task.events_digest
        ):
            meta = None
        return meta

    def _outputs_intact(self) -> bool:
        """Whether every part the log records for the target is there with its
        recorded content: its size and time (an object store's ETag, one listing of the
        symbol's folder) against the record, hashed only when they differ. Parts only
        touched are kept with their new stamps."""
        from marketframe.store._storage import recheck

        files, storage = self.target.files, self.storage
        listed = None
        if files and storage.remote:
            where = _io.symbol_rel(self.target.ds, self.task.symbol)
            listed = storage.stamps(where)
        for rel, rec in files.items():
            kept = recheck(storage, rel, rec, listed)
            if kept is None:
                self.out.restamped.clear()
                return False
            if kept is not rec:
                self.out.restamped[rel] = dict(kept)
        return True

    def feed(self, i: int, table: pa.Table, rows: np.ndarray) -> None:
        """Partition ``i``: the kernels over its new bars with the context in front."""
        rel, rec = self.task.inputs[i]
        skip = self.skip if i == self.start else 0
        new = rows[:, skip:]
        files = self.made.setdefault(rel, [])
        m = new.shape[1]
        if m:
            ctx, use = self.context, self.use
            cut = ctx.shape[1]
            if cut:  # only the columns the kernels read, the context in front: one copy
                both = np.empty((use.stop - use.start, cut + m))
                both[:, :cut] = ctx
                both[:, cut:] = new[use]
            else:
                both = new[use]  # rows of the block: a view, no copy
            res = outputs(self.sp, both)
            out, sym, ds = self.out, self.task.symbol, self.target.ds
            date = table.column("date").slice(skip)
            part = part_table(sym, self.sp, date, [r[cut:] for r in res])
            recorded = self.target.files
            self.made[rel] = write_part(self.storage, ds, sym, rel, files, recorded, part, out)
            out.rows += m
            k = self.k
            if not k:
                self.context = _none(use)
            else:  # the last k bars of the context and the new ones, already side by side
                self.context = both[:, -k:].copy()
        # a file with a lineage is continued by it (see __init__); the digest of its rows,
        # a pass over all of them, only for one without (a record of an earlier store)
        lineage = lineage_of(rec, self.columns)
        self.consumed.append(
            {
                "rel": rel,
                "hash": rec.get("hash"),
                "rows": rows.shape[1],
                "digest": self.source.digest(i, self.rows) if lineage is None else None,
                "lineage": lineage,
            }
        )

    def finish(self) -> Outcome:
        """Write the state (the context and what it consumed); the outcome for the driver."""
        out, target, task = self.out, self.target, self.task
        if self.start is None:
            return out
        # the year before the newest input file is closed: its parts merged into one. Only
        # that one: the years before it were merged when they closed (a store computed by
        # an earlier version keeps theirs, rather than rewrite its whole history at once)
        if len(task.inputs) > 1:
            rel = task.inputs[-2][0]
            if len(self.made.get(rel, ())) > 1:
                self.made[rel] = close_parts(
                    self.storage, target.ds, task.symbol, rel, self.made[rel], target.files, out
                )
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "spec": target.spec,
            "symbol": task.symbol,
            "events": task.events_digest,
            "consumed": self.consumed,
            "made": self.made,
            "context_rows": self.k,
            "rows": [self.use.start, self.use.stop],
        }
        data = state_bytes(meta, self.context)
        named = target.state[0] if target.state is not None else None
        rel = state_slot(target.ds, task.symbol, named)
        # the spare slot: nothing refers to it; flushed by the driver's group commit
        stamp = self.storage.rewrite(rel, data, durable=self.storage.remote)
        if not self.storage.remote:
            out.unsynced.append(rel)
        out.state = (rel, record(data, _io.digest(data), stamp))
        if named is not None and named.rsplit("/", 1)[-1] not in SLOTS:
            out.dropped.append(named)  # a store's state from before the slots
        return out


def run_task(task: Task) -> Result:
    """Bring every target of one symbol up to date (see the module docstring). Runs
    anywhere the store is reachable; touches no log."""
    storage = _storage(task)
    specs = [spec_of(t) for t in task.targets]
    read = {f for sp in specs for f in sp.inputs}
    source = _Source(task, storage, tuple(f for f in INPUTS if f in read))
    runs = [
        _TargetRun(task, storage, source, t, sp) for t, sp in zip(task.targets, specs, strict=True)
    ]
    starts = [r.start for r in runs if r.start is not None]
    for i in range(min(starts, default=len(task.inputs)), len(task.inputs)):
        table, rows = source.read(i)
        for r in runs:
            if r.start is not None and i >= r.start:
                r.feed(i, table, rows)
    return Result(task.symbol, [r.finish() for r in runs])


# ---------------------------------------------------------------------------------------
# the credentials of the tasks run in this process


def remember(store: str, secret: dict[str, Any]) -> None:
    """The credentials of ``store`` (a URL), for the tasks run in this process."""
    if secret:
        _CREDENTIALS[store] = secret
