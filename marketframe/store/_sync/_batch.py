"""The group commit of a sync: many symbols' files and windows recorded in one log entry.

A symbol's writer hands its staged files (fsynced temporary files, or bytes for an object
store) and the windows it fetched to the :class:`Batch` as one :class:`Unit`. At most every
``every`` seconds, and when the sync ends, the batch commits one entry that

1. records the files published since the last entry as current, and their windows as held;
2. records the files staged since then as *pending* (either version is accepted),

and then publishes those staged files (the replaced version kept under ``_versions/`` first).
Whenever the process dies, every file in place is one the log accepts and nothing is recorded
that is not in place: a file is pending before it is published and held only after, as when
each symbol was committed alone, but a sync of the market writes a few dozen small entries
instead of two whole manifests per symbol.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from marketframe.endpoints import Interval
from marketframe.store import _io
from marketframe.store._dataset import DatasetId
from marketframe.store._log import Log
from marketframe.store._storage import Storage

#: seconds between two commits of one sync (at most one entry per period, plus the last)
EVERY = 2.0
#: a staged file: the storage's handle to it (``Storage.stage``), its path, its record
Staged = tuple[Any, str, dict[str, Any]]


@dataclass
class Unit:
    """One symbol's writes: its staged files and the windows to record once they are in."""

    ds: DatasetId
    params: dict[str, Any]
    files: list[Staged] = field(default_factory=list)
    # (symbol, window, final until, empty) for Log.record
    windows: list[tuple[str, Interval, dt.date | None, bool]] = field(default_factory=list)


class Batch:
    """The commits of one writer's sync (thread-safe). :meth:`close` commits what is left."""

    def __init__(self, storage: Storage, log: Log, what: str, every: float = EVERY):
        self.storage, self.log, self.what, self.every = storage, log, what, every
        self._lock = threading.Lock()
        self._staged: list[Unit] = []
        self._published: list[Unit] = []
        self._last = time.monotonic()

    def add(self, unit: Unit) -> None:
        with self._lock:
            self._staged.append(unit)
            if time.monotonic() - self._last >= self.every:
                self._flush()

    def close(self) -> None:
        """Commit everything added: publish what is staged, then record it."""
        with self._lock:
            while self._staged or self._published:
                self._flush()

    def discard(self) -> None:
        """A sync that failed: forget what was staged and never published."""
        with self._lock:
            for unit in self._staged:
                for staged, _, _ in unit.files:
                    self.storage.discard(staged)
            self._staged = []

    def _flush(self) -> None:
        log = self.log
        for unit in self._published:
            for _, rel, rec in unit.files:
                log.commit_file(unit.ds, rel, rec)
            for window in unit.windows:
                log.record(unit.ds, *window[:3], empty=window[3], params=unit.params)
        staged, self._staged, self._published = self._staged, [], []
        for unit in staged:
            if not unit.files:  # nothing to put in place: held at once
                for window in unit.windows:
                    log.record(unit.ds, *window[:3], empty=window[3], params=unit.params)
            for _, rel, rec in unit.files:
                log.pend_file(unit.ds, rel, rec, unit.params)
        try:
            log.commit(self.what)
        except BaseException:
            self._staged = staged  # never published: discard() removes them
            raise
        self._last = time.monotonic()
        self._published = [u for u in staged if u.files]
        kept = [
            self._keep_replaced(unit.ds, rel)
            for unit in self._published
            for _, rel, _ in unit.files
        ]
        self.storage.sync_dirs([k for k in kept if k is not None])  # durable before replaced
        for unit in self._published:
            for staged_file, rel, _ in unit.files:
                self.storage.publish(staged_file, rel)

    def _keep_replaced(self, ds: DatasetId, rel: str) -> str | None:
        """Before ``rel`` is replaced: its recorded version kept under ``_versions/`` (a
        snapshot or ``as_of`` may read it), if the file in place is that version; where."""
        rec = self.log.file(ds, rel)
        if rec is None or "hash" not in rec:
            return None
        was = {k: v for k, v in rec.items() if k != "pending"}
        # an object store's copy is checked when it is read (a HEAD first would cost a
        # request per file); a local file is linked only if it is still the recorded one
        if not (self.storage.remote or self.storage.unchanged(rel, was)):
            return None
        to = _io.version_path(str(rec["hash"]), rel)
        if not self.storage.keep(rel, to):
            return None
        self.log.kept(str(rec["hash"]), rel)
        return to
