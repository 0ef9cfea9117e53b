"""Reading the store's log (:class:`Reader`): the newest checkpoint, then the entries after it,
then, on each :meth:`Reader.reload`, the entries committed since. A reader of another
generation (a snapshot, ``as_of``) starts from the checkpoint at or before it. See
:mod:`._log` for the files and what a commit writes."""

from __future__ import annotations

from typing import Any

import orjson

from marketframe.store._dataset import DatasetId
from marketframe.store._log import _entries, _legacy
from marketframe.store._log._document import Changes, apply, check, copy, fresh, touched
from marketframe.store._log._entries import _Damaged, checkpoint_name, entry_name
from marketframe.store._log._view import View
from marketframe.store._storage import Storage

#: a checkpoint at the latest after this many entries
CHECKPOINT_EVERY = 100
#: ... or once the entries since the last one hold as many bytes as it does (at least these)
MIN_CHECKPOINT_BYTES = 1 << 16


class Reader(View):
    """The store's state, kept current from its log (:meth:`reload`). A log that cannot be
    read does not stop the store from opening: :attr:`damage` says why, and every use raises
    ``StoreCorrupted`` until ``verify(repair=True)`` restores it."""

    def __init__(self, storage: Storage):
        super().__init__()
        self.storage = storage
        self.path = storage.path(_entries.FOLDER)
        self.writer = ""  # whose entries are this reader's own (a writer's id)
        self._loaded = False
        self._legacy: dict[str, Any] | None = None  # a layout-2 manifest's state, upgraded
        self._checkpoint = -1  # the newest checkpoint's generation
        self._since = 0  # entries since it
        self._since_bytes = 0
        self._checkpoint_bytes = MIN_CHECKPOINT_BYTES
        self._foreign: dict[tuple[str, str], int] = {}  # (key, symbol) -> generation
        self._view = -1  # the generation a writer's view was built on
        self.where = _entries.FOLDER  # the file a damage is in, relative to the root
        self._hint_seen: tuple[int, float] | None = None  # the hint's size and time, last look

    def _pending(self) -> Changes | None:
        """This reader's own uncommitted changes, kept on top while it catches up."""
        return None

    # -- reading the log --------------------------------------------------------------------

    def reload(self) -> None:
        """Catch up with the entries committed since the last look (once: load the newest
        checkpoint and the entries after it). A writer calls it when it starts: its view of
        the store is this generation."""
        with self._lock:
            if not self._loaded or self.damage is not None:
                self._load()  # again after damage: a repair may have written a checkpoint
            else:
                was = self.generation
                self._catch_up()
                if self.generation == was and self._trimmed():
                    self._load()  # gc removed the entries after this view: start again
            self._view = self.generation

    def _trimmed(self) -> bool:
        """Whether a checkpoint newer than this view was written meanwhile (the hint moved):
        the next entry's absence then may mean gc removed it, not that nothing was committed
        (a view older than gc's ``keep``). One stat of the hint when nothing is new."""
        seen = self.storage.stat(_entries.HINT)
        stamp = None if seen is None else (seen[0], seen[1].timestamp())
        if stamp == self._hint_seen:
            return False
        self._hint_seen = stamp
        try:
            hinted = int(orjson.loads(self.storage.read(_entries.HINT))["generation"])
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return False
        return hinted > self.generation

    def _load(self) -> None:
        self._data, self.generation, self.damage, self._legacy = fresh(), -1, None, None
        self._checkpoint, self._since, self._since_bytes = -1, 0, 0
        start = self._newest_checkpoint()
        if start is None and not self.storage.exists(entry_name(0)):
            doc, problem = _legacy.read(self.storage)
            if problem is not None:
                self.damage, self.where = problem, _legacy.MANIFEST
                self.path = self.storage.path(self.where)
                self._loaded = True
                return
            if doc is not None:
                self._legacy, self._data, self.generation = copy(doc), doc, 0
        elif start is not None:
            g, body, size = start
            self._data, self.generation, self.time = body["state"], g, body.get("time")
            self._checkpoint = g
            self._checkpoint_bytes = max(size, MIN_CHECKPOINT_BYTES)
        self._loaded = True
        self._catch_up()

    def _newest_checkpoint(self) -> tuple[int, dict[str, Any], int] | None:
        """The newest checkpoint that reads whole (the hint's, else found by listing), and
        its size in bytes."""
        seen = self.storage.stat(_entries.HINT)
        self._hint_seen = None if seen is None else (seen[0], seen[1].timestamp())
        try:
            hinted: int | None = int(orjson.loads(self.storage.read(_entries.HINT))["generation"])
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            hinted = None
        if hinted is not None:
            found = self._read_checkpoint(hinted)
            if found is not None and not self.storage.exists(entry_name(hinted + CHECKPOINT_EVERY)):
                return hinted, *found
        for g in sorted(self._checkpoints(), reverse=True):
            found = self._read_checkpoint(g)
            if found is not None:
                return g, *found
        return None

    def _checkpoints(self) -> list[int]:
        names = (_entries.parse_name(n) for n in self.storage.names(_entries.FOLDER))
        return [g for g, is_checkpoint in (n for n in names if n is not None) if is_checkpoint]

    def _read_checkpoint(self, g: int) -> tuple[dict[str, Any], int] | None:
        try:
            data = self.storage.read(checkpoint_name(g))
            body = _entries.decode(data, "checkpoint")
        except (FileNotFoundError, _Damaged):
            return None
        return (body, len(data)) if check(body.get("state")) is None else None

    def _read_entry(self, g: int) -> tuple[dict[str, Any], int] | None:
        """Entry ``g`` and its size, or None if it does not exist (yet); a damaged one sets
        :attr:`damage`."""
        try:
            data = self.storage.read(entry_name(g))
        except FileNotFoundError:
            return None
        try:
            return _entries.decode(data, "entry"), len(data)
        except _Damaged as exc:
            self.damage, self.where = str(exc), entry_name(g)
            self.path = self.storage.path(self.where)
            return None

    def _catch_up(self) -> None:
        """Apply the entries after :attr:`generation`, keeping this writer's changes on top."""
        if self.damage is not None:
            return
        mine: Changes | None = None
        while (found := self._read_entry(self.generation + 1)) is not None:
            if mine is None:
                mine = self._pending()
            self._apply_entry(*found)
        if mine is not None:
            apply(self._data, copy(mine))

    def _apply_entry(self, body: dict[str, Any], size: int) -> None:
        g = int(body["generation"])
        changes = body.get("changes", {})
        if body.get("replaces"):  # a repair: the state is its checkpoint's, whole
            whole = self._read_checkpoint(g)
            if whole is None:
                self.where = checkpoint_name(g)
                self.damage, self.path = "cannot be read", self.storage.path(self.where)
                return
            self._data = whole[0]["state"]
            self._checkpoint, self._since, self._since_bytes = g, -1, 0
            self._foreign = {}
        else:
            apply(self._data, changes)
        if body.get("writer") != self.writer:
            for pair in touched(changes):
                self._foreign[pair] = g
        self.generation, self.time = g, body.get("time")
        self._since += 1
        self._since_bytes += size

    def refresh(self, ds: DatasetId, symbol: str) -> bool:
        """Catch up, and say whether another writer wrote ``symbol`` of ``ds`` since this
        writer's view was built (:meth:`reload`): then its lease was lost meanwhile."""
        with self._lock:
            self._catch_up()
            return self._foreign.get((ds.key, symbol), -1) > self._view

    def salvage(self) -> tuple[dict[str, Any], list[int]]:
        """What can be read of a damaged log: the newest checkpoint that reads whole (else
        nothing), then every entry after it that reads whole, the damaged ones skipped (their
        changes are lost: the files they recorded fail their checks and are fetched again).
        Returns the state and the generations skipped."""
        start = self._newest_checkpoint()
        doc, g = (fresh(), -1) if start is None else (start[1]["state"], start[0])
        names = (_entries.parse_name(n) for n in self.storage.names(_entries.FOLDER))
        newest = max((n[0] for n in names if n is not None), default=-1)
        skipped = []
        for k in range(g + 1, newest + 1):
            try:
                body = _entries.decode(self.storage.read(entry_name(k)), "entry")
            except FileNotFoundError:
                continue
            except _Damaged:
                skipped.append(k)
                continue
            if body.get("replaces"):
                whole = self._read_checkpoint(k)
                if whole is not None:
                    doc = whole[0]["state"]
                    continue
            apply(doc, body.get("changes", {}))
        return doc, skipped
