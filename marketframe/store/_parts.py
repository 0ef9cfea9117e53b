"""What a :class:`~marketframe.store.Store` is made of, handed to the modules that do its work
(sync, read, verify, compute) instead of the ``Store`` itself: where its files live, its
log, the settings of its writers, and the client its syncs fetch with. Nothing reads a
``Store``'s private fields; everything a module needs is a field or a method here."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from marketframe.store import _open
from marketframe.store._dataset import DatasetId
from marketframe.store._log import Log, View, _history
from marketframe.store._storage import LocalStorage, ObjectStorage, Writer

if TYPE_CHECKING:
    from marketframe.client import Client


@dataclass(eq=False)
class Parts:
    """A store's parts. ``storage`` decides what a writer holds (:meth:`locked`)."""

    storage: LocalStorage | ObjectStorage
    log: Log
    lock_timeout: float = -1
    lease_ttl: float = 60.0
    commit_every: float = 2.0  # seconds between the log commits of a long sync or compute
    max_workers: int | None = None
    #: the filesystem settings of an object store, for compute's workers (never shown)
    storage_options: dict[str, Any] | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    _client: Client[Any] | None = field(default=None, repr=False)
    own_client: bool = True
    _views: dict[int, View] = field(default_factory=dict, repr=False)  # earlier generations
    #: what a reader derives from the current generation, by name: (generation, value);
    #: replaced when the log moves on (one value a name)
    memo: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False)

    def view(self, as_of: Any, where: str) -> View:
        """The store as ``as_of`` names it (a snapshot, a time); the current state when
        None. Earlier generations never change: the last few read are kept."""
        self.log.reload()
        if as_of is None:
            return self.log
        g = _history.generation_of(self.storage, self.log, as_of, where)
        if g == self.log.generation:
            return self.log
        if g not in self._views:
            while len(self._views) >= 4:
                self._views.pop(next(iter(self._views)))
            self._views[g] = _history.state_at(self.storage, g)
        return self._views[g]

    def caught_up(self) -> None:
        """What a writer does first under its lock: the temporary files a killed writer
        left removed, the log reloaded (another process may have written while this one
        waited) and checked."""
        self.storage.clean_temporary()
        self.log.reload()
        self.log.check()

    @property
    def root(self) -> Path | str:
        """The store's root as users name it: a directory, or the object store's URL."""
        return self.storage.root if isinstance(self.storage, LocalStorage) else self.storage.url

    @property
    def client(self) -> Client[Any]:
        """The client of syncs and adjusted reads: the one given, else one made on first use
        (see :func:`._open.default_client`)."""
        if self._client is None:
            workers = self.max_workers or 16
            self._client = _open.default_client(self.api_key, self.base_url, workers)
        return self._client

    def close(self) -> None:
        if self.own_client and self._client is not None:
            self._client.close()
            self._client = None

    def locked(
        self,
        ds: DatasetId | None = None,
        symbols: Sequence[str] | None = None,
        *,
        writing: str | None = None,
    ) -> AbstractContextManager[Any]:
        """What a writer holds while it writes (the storage decides: a file lock on a local
        store, leases of ``symbols`` of ``ds`` on an object store). ``writing`` names what
        will write: on a read-only store it is refused with ``StoreReadOnly``; a check
        (``writing`` None) of a read-only store runs without the lock."""
        want = Writer(ds, symbols, self.lock_timeout, self.lease_ttl, writing)
        return self.storage.writer_lock(want)

    @property
    def fix(self) -> str:
        """How to repair a damaged store, for :class:`StoreCorrupted`'s hint."""
        return (
            f"run `marketframe verify --store {self.root} --repair` (or store.verify(repair=True))"
        )

    def workers(self) -> int:
        """The requests a sync sends at once: the store's ``max_workers``, else the
        client's."""
        return int(self.max_workers or getattr(self.client, "max_workers", 8) or 8)
