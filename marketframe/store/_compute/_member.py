"""Derived datasets, a task's member side: a member's input files read once for all the
targets (:class:`Source`), and what one member does for one target (:class:`MemberRun`):
where it starts, its context, what it consumed, its new rows handed to the bucket.

Imports run one way: the task loop (:mod:`._task`) -> this module -> the panel, the state
file (:mod:`._panel`, :mod:`._statefile`) -> :mod:`._derive`. The bucket a run
works for is what :class:`Bucket` says, implemented by the task loop's target.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from marketframe.indicators import stateful as sf
from marketframe.store import _io
from marketframe.store._compute._derive import Member, Outcome, block, used
from marketframe.store._compute._panel import Feed
from marketframe.store._compute._statefile import RowsDigest
from marketframe.store._upsert import lineage_of


def none(use: slice) -> np.ndarray:
    """No context: the rows ``use`` of block(), no bars."""
    return np.empty((use.stop - use.start, 0))


class Bucket(Protocol):
    """What a member's run needs of its bucket's target (:class:`._task._BucketTarget`)."""

    sp: sf.IndicatorSpec
    k: int
    use: slice
    rows: tuple[int, ...]
    columns: list[str]
    out: Outcome

    def context_of(self, symbol: str, meta: dict[str, Any]) -> np.ndarray: ...

    def drop_from(self, year: int | None) -> None: ...

    def compute(self, feed: Feed) -> None: ...


class Source:
    """A member's input files, read lazily and (adjusted when asked) kept one at a time:
    every target reads partition ``i`` from here, so it is parsed once. ``inputs``: the
    fields the targets' kernels read; only those are read (the symbol and timeframe strings
    cost a third of a read, and the close alone is half the bytes of the high, low and
    close), except to adjust, which needs every column."""

    def __init__(self, member: Member, storage: Any, inputs: tuple[str, ...]):
        self.member, self.storage = member, storage
        self.columns = ["date", *inputs]
        self._held: tuple[int, pa.Table, np.ndarray] | None = None
        self._digests: dict[tuple[Any, ...], str] = {}
        self._hashing: dict[bool, tuple[int, RowsDigest]] = {}  # wide -> (input, digests)

    def _table(self, i: int, columns: list[str]) -> pa.Table:
        rel, rec = self.member.inputs[i]
        events = self.member.events  # adjusting needs every column
        table: pa.Table = self.storage.read_file(rel, rec, columns=None if events else columns)
        if not events:
            return table
        from marketframe import adjust as _adjust

        return _adjust.apply(table, {self.member.symbol: events})

    def read(self, i: int) -> tuple[pa.Table, np.ndarray]:
        if self._held is None or self._held[0] != i:
            self._held = None  # release the previous partition before parsing the next
            table = self._table(i, self.columns)
            self._held = (i, table, block(table))
        return self._held[1], self._held[2]

    def release(self) -> None:
        """The partition held, let go (the next member's are read next)."""
        self._held = None

    def digest(self, i: int, rows: tuple[int, ...]) -> str | None:
        """The digest of input ``i``'s ``rows`` of the block (:meth:`RowsDigest.upto`) if it
        is the last input, else None: only the last file consumed can be continued (a sync
        appends to the newest year), so only its rows need to be proved a prefix later; an
        earlier file is matched by its content hash."""
        if i != len(self.member.inputs) - 1:
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
                if wide and not self.member.events and not set(used()) <= set(self.columns):
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
            return none(use)
        return np.concatenate(parts, axis=1)[:, -k:].copy()


def year_of(rel: str) -> int | None:
    return _io.where(rel)[1]


def after(year: int | None, cut: int | None) -> bool:
    """Whether ``year``'s parts are dropped by a recomputation from ``cut`` (a dataset not
    split by year has one, None: everything)."""
    return year is None or cut is None or year >= cut


class MemberRun:
    """One member and one target: where it starts (``None``: up to date), its context, what
    it consumed, then fed its partitions in order."""

    def __init__(self, bucket: Bucket, member: Member, source: Source, meta: dict[str, Any] | None):
        self.bucket, self.member, self.source = bucket, member, source
        use = bucket.use
        self.k = bucket.k
        self.start: int | None = None
        self.skip = 0
        self.mode = "unchanged"
        self.context = none(use) if meta is None else bucket.context_of(member.symbol, meta)
        consumed: list[dict[str, Any]] = list(meta["consumed"]) if meta else []
        self.consumed = consumed
        inputs = member.inputs
        if meta is not None and meta.get("events") != member.events_digest:
            # a new corporate action under adjust=: from its first bar, its rows dropped
            self.mode = "recomputed"
            if inputs:
                bucket.drop_from(year_of(inputs[0][0]))
            self.restart(0)
            return
        first = 0  # the first input that differs from what was consumed
        while (
            first < len(consumed)
            and first < len(inputs)
            and consumed[first]["rel"] == inputs[first][0]
            and consumed[first]["hash"] == inputs[first][1].get("hash")
        ):
            first += 1
        if meta is not None and first == len(consumed) == len(inputs):
            return  # nothing new
        if meta is not None and not inputs:
            return  # no source files left: what it made stays
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
            if was and was == lineage_of(rec, bucket.columns) and int(rec.get("rows", -1)) >= n:
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
                    and source.prefix_digest(first, n, bucket.rows, want) == want
                ):
                    appended, self.skip = True, n
        if appended:
            self.mode = "appended"
            self.consumed, self.start = consumed[:first], first
            return
        # from input ``first`` on everything is computed again: the bucket drops its parts
        # of that year on (they hold other members' rows too), so every member with bars
        # there goes back to it (:meth:`restart`)
        self.mode = "recomputed" if meta is not None else "full"
        if meta is not None and first < len(inputs):
            bucket.drop_from(year_of(inputs[first][0]))
        elif meta is not None:  # files gone after the first changed one
            bucket.drop_from(year_of(consumed[first]["rel"]))
        self.restart(first if meta is not None else 0)

    def restart(self, first: int) -> None:
        """Computed again from input ``first`` on, the context before it rebuilt."""
        use = self.bucket.use
        self.consumed = self.consumed[:first]
        self.skip = 0
        self.context = self.source.context_before(first, self.k, use) if first else none(use)
        self.start = first

    def back_to(self, cut: int | None) -> None:
        """The bucket's parts of years from ``cut`` on are dropped: computed again from this
        member's first input of such a year, if it consumed any."""
        inputs = self.member.inputs
        first = next((i for i, (rel, _) in enumerate(inputs) if after(year_of(rel), cut)), None)
        if first is None:  # no source file there now: what it consumed there is gone
            kept = [c for c in self.consumed if not after(year_of(c["rel"]), cut)]
            if len(kept) < len(self.consumed):
                self.consumed = kept
                self.mode = "recomputed" if self.mode != "full" else self.mode
                self.start = self.start if self.start is not None else len(inputs)
            return
        if self.start is not None and self.start <= first and self.skip == 0:
            return  # already from there, or earlier
        if self.start is None and first >= len(self.consumed):
            return  # consumed nothing from there on: nothing of it was dropped
        if self.mode == "unchanged" or self.mode == "appended":
            self.mode = "recomputed"
        self.restart(min(first, self.start if self.start is not None else first))

    def feed(self, i: int, table: pa.Table, rows: np.ndarray) -> None:
        """Partition ``i``: the kernels over its new bars with the context in front."""
        rel, rec = self.member.inputs[i]
        bucket = self.bucket
        skip = self.skip if i == self.start else 0
        new = rows[:, skip:]
        m = new.shape[1]
        if m:
            ctx, use = self.context, bucket.use
            cut = ctx.shape[1]
            if cut:  # only the columns the kernels read, the context in front: one copy
                both = np.empty((use.stop - use.start, cut + m))
                both[:, :cut] = ctx
                both[:, cut:] = new[use]
            else:
                both = new[use]  # rows of the block: a view, no copy
            date = table.column("date").slice(skip)
            bucket.compute(Feed(year_of(rel), self.member.symbol, both, cut, date))
            bucket.out.rows += m
            k = self.k
            if not k:
                self.context = none(use)
            else:  # the last k bars of the context and the new ones, already side by side
                self.context = both[:, -k:].copy()
        # a file with a lineage is continued by it (see __init__); the digest of its rows,
        # a pass over all of them, only for one without (a record of an earlier store)
        lineage = lineage_of(rec, bucket.columns)
        self.consumed.append(
            {
                "rel": rel,
                "hash": rec.get("hash"),
                "rows": rows.shape[1],
                "digest": self.source.digest(i, bucket.rows) if lineage is None else None,
                "lineage": lineage,
            }
        )
