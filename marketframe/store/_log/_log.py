"""The store's state as a log of commits (:class:`Log`): what a writer changes, it commits as
one immutable entry holding only those changes; readers load the newest checkpoint and the
entries after it.

**Commit.** Entry ``g`` is created only if absent (``O_EXCL``-like on a local disk, ``If-None-
Match: *`` on S3) after entry ``g - 1``: two writers cannot both commit ``g``. The loser reads
the entries it missed, applies them under its own changes and commits ``g + 1``; if one of
them wrote a symbol this writer also wrote (its lease was lost meanwhile), it stops with
:class:`LeaseLost` instead (nothing of its commit lands). A reply lost after the entry landed
is told by the entry's id. Writers of one local store hold its lock, so they never race.

**Checkpoints.** After a commit that brings the entries since the last checkpoint to
:data:`CHECKPOINT_EVERY`, or their bytes to the checkpoint's own size, the writer writes the
whole state as ``<g>.checkpoint.json``: a reader replays at most that many entries, and the
bookkeeping a commit costs stays proportional to what it changed (plus the checkpoint,
amortised over the entries before it).

**Reload.** Reading the next entry's name is the whole cost of asking whether the store
changed (a ``stat`` locally, one GET on S3).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import orjson

from marketframe.endpoints import Interval, intersect, merge, subtract
from marketframe.exceptions import LeaseLost
from marketframe.store._dataset import DatasetId
from marketframe.store._log import _entries, _legacy
from marketframe.store._log._document import (
    KINDS,
    Changes,
    Doc,
    copy,
    dataset_meta,
    to_intervals,
    to_pairs,
    touched,
)
from marketframe.store._log._entries import FORMAT, checkpoint_name, entry_name
from marketframe.store._log._reader import CHECKPOINT_EVERY, Reader
from marketframe.store._storage import Storage, _PreconditionFailed


def now(after: str | None = None) -> str:
    """The time of a commit (UTC, ISO, microseconds), never before ``after`` (the previous
    generation's: generations are in time order even across writers' clocks)."""
    t = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
    return max(t, after) if after else t


class Log(Reader):
    """The store's state, kept current from its log; thread-safe. Updates are held in
    memory until :meth:`commit` writes them as one entry.

    A log that cannot be read does not stop the store from opening: :attr:`damage` says why,
    and every use raises ``StoreCorrupted`` until ``verify(repair=True)`` restores it.
    """

    def __init__(self, storage: Storage):
        super().__init__(storage)
        self.writer = uuid.uuid4().hex  # tells this writer's entries from others'
        self.commits = 0  # entries this log wrote (benchmarks count them)
        self.written = 0  # bytes of entries and checkpoints this log wrote
        self._touched: set[tuple[str, str, str]] = set()
        self.reload()

    def _pending(self) -> Changes | None:
        return self._collect() if self._touched else None

    # -- updates ----------------------------------------------------------------------------

    def _dataset(self, ds: DatasetId, values: dict[str, Any] | None) -> dict[str, Any]:
        """The dataset's entry, for a change (every update goes through here)."""
        self.check()
        d = self._data["datasets"].get(ds.key)
        if d is None:  # new: its meta goes with the next entry (an entry holds what changed)
            d = self._data["datasets"][ds.key] = {**dataset_meta(ds, values), "symbols": {}}
            self._touched.add(("datasets", ds.key, ""))
        d.setdefault("files", {})
        return d  # type: ignore[no-any-return]

    def declare(self, ds: DatasetId, values: dict[str, Any] | None) -> None:
        """Make sure the dataset exists, with ``values`` (what it is derived from) if new."""
        with self._lock:
            self._dataset(ds, values)

    def pend_file(
        self, ds: DatasetId, rel: str, rec: dict[str, Any], params: dict[str, Any] | None = None
    ) -> None:
        """``rec`` is about to replace file ``rel``: either version is accepted until
        :meth:`commit_file` (a process killed between the rename and the next commit leaves
        a file that is new, not corrupt)."""
        with self._lock:
            files = self._dataset(ds, params)["files"]
            self._touched.add(("files", ds.key, rel))
            files[rel] = {**files.get(rel, {}), "pending": [dict(rec)]}

    def commit_file(self, ds: DatasetId, rel: str, rec: dict[str, Any]) -> None:
        with self._lock:
            self._dataset(ds, None)["files"][rel] = dict(rec)
            self._touched.add(("files", ds.key, rel))

    def drop_file(self, ds: DatasetId, rel: str) -> None:
        with self._lock:
            self._dataset(ds, None)["files"].pop(rel, None)
            self._touched.add(("files", ds.key, rel))

    def drop_symbol(self, ds: DatasetId, symbol: str) -> None:
        """Forget what is held of ``symbol`` (its files were damaged): the next sync refetches."""
        with self._lock:
            self._dataset(ds, None)["symbols"].pop(symbol, None)
            self._touched.add(("symbols", ds.key, symbol))

    def note(self, ds: DatasetId, symbol: str, key: str, value: Any) -> None:
        """Keep ``value`` (JSON) under ``key`` in the symbol's entry (a derived dataset's
        state file, its rows); None removes it."""
        with self._lock:
            d = self._dataset(ds, None)
            self._touched.add(("symbols", ds.key, symbol))
            e = d["symbols"].setdefault(symbol, {"final": [], "open": [], "empty": []})
            if value is None:
                e.pop(key, None)
            else:
                e[key] = value

    def kept(self, digest: str, rel: str) -> None:
        """The superseded bytes of ``rel`` (content hash ``digest``) are now kept under
        ``_versions/``: recorded with the next commit's generation and time."""
        with self._lock:
            self._data.setdefault("versions", {})[digest] = {"rel": rel}
            self._touched.add(("versions", digest, ""))

    def forget_version(self, digest: str) -> None:
        with self._lock:
            self._data.setdefault("versions", {}).pop(digest, None)
            self._touched.add(("versions", digest, ""))

    def record(
        self,
        ds: DatasetId,
        symbol: str,
        window: Interval,
        final_until: dt.date | None,
        *,
        empty: bool,
        params: dict[str, Any] | None = None,
    ) -> None:
        """``window`` was fetched successfully (``empty``: with zero rows)."""
        with self._lock:
            d = self._dataset(ds, params)
            self._touched.add(("symbols", ds.key, symbol))
            e = d["symbols"].setdefault(symbol, {"final": [], "open": [], "empty": []})
            final, open_, empties = (
                to_intervals(e["final"]),
                to_intervals(e["open"]),
                to_intervals(e["empty"]),
            )
            fin = intersect(window, (dt.date.min, final_until)) if final_until else None
            if fin is not None:
                final = merge([*final, fin])
            # the open part is what is neither final now nor final before
            open_ = [piece for iv in merge([*open_, window]) for piece in subtract(iv, final)]
            if empty:
                empties = merge([*empties, window])
            else:
                # a window that now has rows is no longer confirmed empty
                empties = [p for iv in empties for p in subtract(iv, [window])]
            e["final"], e["open"], e["empty"] = (
                to_pairs(final),
                to_pairs(merge(open_)),
                to_pairs(empties),
            )
            e["updated"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

    def replace_state(self, doc: Doc) -> None:
        """Adopt ``doc`` whole (a repaired state); the next commit writes it as a
        checkpoint."""
        with self._lock:
            self._data, self.damage, self._legacy = doc, None, None
            self._touched = {("all", "", "")}

    # -- commit -----------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return bool(self._touched)

    def _collect(self) -> Changes:
        """This writer's uncommitted changes, each item's value as it is now."""
        out: Changes = {}
        data = self._data
        for kind, key, name in sorted(self._touched):
            if kind == "all":
                continue
            if kind == "versions":
                out.setdefault(kind, {})[key] = copy(data.get("versions", {}).get(key))
                continue
            d = data["datasets"].get(key)
            if kind == "datasets":
                meta = None if d is None else {k: d[k] for k in d if k not in ("symbols", "files")}
                out.setdefault(kind, {})[key] = copy(meta)
                continue
            value = None if d is None else d.get(kind, {}).get(name)
            out.setdefault(kind, {}).setdefault(key, {})[name] = copy(value)
        return out

    def commit(self, what: str = "") -> int | None:
        """Write this writer's changes as the next entry (nothing if there are none); the
        generation written, or None."""
        with self._lock:
            self.check()
            if not self._touched:
                return None
            if ("all", "", "") in self._touched:
                return self._commit_whole(what)
            if self._legacy is not None:
                self._upgrade()
            mine = self._collect()
            for h, info in mine.get("versions", {}).items():
                if info is not None and "time" not in info:  # kept now: this commit's
                    info.update(generation=self.generation + 1, time=now(self.time))
                    self._data["versions"][h] = copy(info)
            body: dict[str, Any] = {
                "format": FORMAT,
                "kind": "entry",
                "writer": self.writer,
                "id": uuid.uuid4().hex,
                "what": what,
                "changes": mine,
            }
            guard = getattr(self.storage, "guard", None)  # an object store's sync: its leases
            while True:
                g = self.generation + 1
                stamp = now(self.time)
                body.update(generation=g, time=stamp)
                data = _entries.encode(body)
                if guard is not None:
                    guard()  # a writer whose lease lapsed commits nothing (LeaseLost)
                try:
                    self.storage.create(entry_name(g), data)
                    break
                except _PreconditionFailed:
                    theirs = self._read_entry(g)
                    if theirs is not None and theirs[0].get("id") == body["id"]:
                        break  # ours: the reply to a PUT that landed was lost
                    self._behind(mine)
            self._touched.clear()
            self.generation, self.time = g, stamp
            self.commits += 1
            self.written += len(data)
            self._since += 1
            self._since_bytes += len(data)
            if self._since >= CHECKPOINT_EVERY or self._since_bytes >= self._checkpoint_bytes:
                self._write_checkpoint()
            return g

    def _behind(self, mine: Changes) -> None:
        """Another writer committed first: apply its entries under this writer's changes,
        unless it wrote what this writer wrote."""
        self._catch_up()
        self.check()
        clash = {p for p in touched(mine) if self._foreign.get(p, -1) > self._view}
        if clash:
            names = ", ".join(sorted(f"{k.split('|')[0]} {s}" for k, s in clash)[:5])
            leases = getattr(self.storage, "leases", None)
            raise LeaseLost(
                self.storage.url,
                leases.ttl if leases is not None else 0,
                f"another writer committed {names} while this writer held them; nothing "
                "of this commit was written, rerun",
            )

    def _upgrade(self) -> None:
        """A layout-2 store's first commit: its manifest's state becomes checkpoint 0."""
        assert self._legacy is not None
        body = self._checkpoint_body(0, self._legacy)
        data = _entries.encode(body)
        try:
            self.storage.create(checkpoint_name(0), data)
        except _PreconditionFailed:
            pass  # another writer upgraded it first (the same manifest)
        self._note_checkpoint(0, len(data))
        self._legacy = None
        _legacy.retire(self.storage)

    def _commit_whole(self, what: str) -> int:
        """A repaired state: written as a checkpoint of a new generation (with an entry
        saying so, so that readers replaying from an older checkpoint skip to it)."""
        while True:
            self._catch_up_names()
            g = self.generation + 1
            doc = self._data
            doc.setdefault("versions", {})
            try:
                self.storage.create(
                    checkpoint_name(g), _entries.encode(self._checkpoint_body(g, doc))
                )
            except _PreconditionFailed:
                self.generation = g
                continue
            break
        stamp = now(self.time)
        body = {
            "format": FORMAT,
            "kind": "entry",
            "writer": self.writer,
            "id": uuid.uuid4().hex,
            "what": what or "repair",
            "generation": g,
            "time": stamp,
            "replaces": True,
            "changes": {},
            "checkpoint": True,
        }
        self.storage.create(entry_name(g), _entries.encode(body))
        if self.storage.exists(_legacy.MANIFEST):  # a store upgraded by its repair
            _legacy.retire(self.storage)
        self._touched.clear()
        self.generation, self.time, self._legacy = g, stamp, None
        self._note_checkpoint(g, 0)
        return g

    def _catch_up_names(self) -> None:
        """The newest generation that exists, whatever can be read of the entries before it
        (a repair writes after all of them, damaged ones included)."""
        names = (_entries.parse_name(n) for n in self.storage.names(_entries.FOLDER))
        newest = max((g for g, _ in (n for n in names if n is not None)), default=-1)
        self.generation = max(self.generation, newest)

    def _checkpoint_body(self, g: int, doc: Doc) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kind": "checkpoint",
            "generation": g,
            "time": self.time or now(),
            "state": doc,
        }

    def _write_checkpoint(self) -> None:
        g = self.generation
        data = _entries.encode(self._checkpoint_body(g, self._data))
        try:
            self.storage.create(checkpoint_name(g), data)
        except _PreconditionFailed:
            return
        self.written += len(data)
        self._note_checkpoint(g, len(data))

    def _note_checkpoint(self, g: int, size: int) -> None:
        self._checkpoint, self._since, self._since_bytes = g, 0, 0
        self._checkpoint_bytes = max(size, 1 << 16)
        try:  # a hint only: readers that find it stale or missing look further
            self.storage.replace(_entries.HINT, orjson.dumps({"generation": g}))
        except OSError:
            return
        seen = self.storage.stat(_entries.HINT)  # this view is current: not a move to follow
        self._hint_seen = None if seen is None else (seen[0], seen[1].timestamp())

    def ensure_checkpoint(self) -> int:
        """A checkpoint of the committed state (a snapshot pins one); its generation (-1: a
        store that never committed, whose state is empty). Call with nothing uncommitted."""
        with self._lock:
            self.check()
            if self._legacy is not None:
                self._upgrade()
            g = self.generation
            if g >= 0 and not self.storage.exists(checkpoint_name(g)):
                self._write_checkpoint()
            return g


__all__ = ["CHECKPOINT_EVERY", "KINDS", "Log", "now"]
