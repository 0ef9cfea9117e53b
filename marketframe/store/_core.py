"""The part of :class:`~marketframe.store.Store` that holds what a store is made of (its
:class:`~._parts.Parts`): opening it, its settings and client, and the calls over the whole
store (``verify``, ``coverage``). ``Store`` adds the calls of one dataset (sync, read,
compute) on top; each class defines every attribute it reads."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa

from marketframe.convert import to_frame
from marketframe.endpoints import to_date
from marketframe.exceptions import InvalidParams
from marketframe.store import _open, _read, _verify
from marketframe.store._dataset import NO_SYMBOL, DatasetId
from marketframe.store._log import Log, _history
from marketframe.store._log._history import GcReport, Snapshot
from marketframe.store._parts import Parts
from marketframe.store._report import VerifyReport
from marketframe.store._storage import storage_for

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe.client import Client


class StoreCore:
    """A Parquet store rooted at ``path``.

    ``client`` is the :class:`~marketframe.Client` used by :meth:`sync` (its pooled session,
    retries and rate-limit pacing are shared by every window); by default one is made from
    ``api_key`` / ``base_url`` (or ``MARKETFRAME_API_KEY``) without an HTTP cache, because the
    store is the cache. With neither given and no credential variable set, it is the
    embedded sandbox, as for :func:`marketframe.download` and the commands (announced on
    stderr; ``Store(path, client=Client.sandbox())`` says so explicitly). ``max_workers``
    bounds concurrent requests (default: the client's).
    ``lock_timeout`` is how long a sync waits for another process's sync (-1: forever).

    ``path`` may also be an object-store URL (``"s3://bucket/prefix"``, or any fsspec URL):
    ``storage_options`` go to the filesystem (``endpoint_url=...`` for an S3-compatible
    server; credentials come from the standard AWS environment variables or profile unless
    given here, and are never stored or shown). Syncs into an object store hold a lease per
    symbol instead of a lock on the whole store (``lease_ttl`` seconds, renewed while the sync
    runs): see docs/store.md, "Object storage". ``timeout`` bounds each object-store
    operation (one GET, PUT, HEAD or listing with its retries; default 60 s, also
    ``storage_options={"timeout": ...}``): an endpoint that does not answer raises
    :class:`StoreUnavailable` naming the operation instead of blocking.

    A long sync or compute records its progress in one log entry at most every
    ``commit_every`` seconds (and when it ends): a killed run redoes at most that much.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        client: Client[Any] | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_workers: int | None = None,
        lock_timeout: float = -1,
        storage_options: dict[str, Any] | None = None,
        lease_ttl: float = 60.0,
        timeout: float | None = None,
        commit_every: float = 2.0,
    ):
        _open.check_timeout(timeout)  # every argument checked before a directory is made
        _open.check_waits(lease_ttl, lock_timeout, commit_every)
        _open.check_workers(max_workers)
        storage = storage_for(path, storage_options, timeout)
        self._parts = Parts(
            storage,
            Log(storage),
            lock_timeout=lock_timeout,
            lease_ttl=float(lease_ttl),
            commit_every=float(commit_every),
            max_workers=max_workers,
            storage_options=dict(storage_options) if storage_options else None,
            api_key=api_key,
            base_url=base_url,
            _client=client,
            own_client=client is None,
        )
        self.root: Any = self._parts.root

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def client(self) -> Client[Any]:
        """The client of syncs and adjusted reads (made on first use when none was given)."""
        return self._parts.client

    @property
    def max_workers(self) -> int | None:
        return self._parts.max_workers

    @property
    def lock_timeout(self) -> float:
        return self._parts.lock_timeout

    @property
    def lease_ttl(self) -> float:
        return self._parts.lease_ttl

    def close(self) -> None:
        self._parts.close()

    def __enter__(self) -> StoreCore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- integrity --------------------------------------------------------------------------

    def verify(
        self,
        repair: bool = False,
        *,
        today: dt.date | str | None = None,
        progress: bool | None = False,
    ) -> VerifyReport:
        """Check every file the store's log records (size, content hash, that it parses,
        rows) and the log itself. ``repair=True`` rebuilds a damaged log from what of it
        reads whole, removes damaged files and fetches again what they held (minute data
        only as far back as the service still has it); a damaged part of a derived dataset
        is computed again from its source. What cannot be repaired is listed in the report's
        ``failures``. Returns a :class:`VerifyReport`.
        """
        if self._parts.storage.is_empty():  # a typo must not pass as a healthy, empty store
            raise InvalidParams(
                "Store.verify",
                "path",
                f"{str(self.root)!r} holds no store",
                "the directory of an existing store",
            )
        day = to_date("Store.verify", "today", today) if today is not None else None
        with self._parts.locked(writing="verify(repair=True)" if repair else None):
            return _verify.run(self._parts, repair, today=day, progress=progress)

    # -- coverage ---------------------------------------------------------------------------

    @overload
    def coverage(self, backend: Literal["pandas"] = "pandas") -> pd.DataFrame: ...

    @overload
    def coverage(self, backend: Literal["polars"]) -> pl.DataFrame: ...

    @overload
    def coverage(self, backend: Literal["arrow"]) -> pa.Table: ...

    def coverage(self, backend: str = "pandas") -> Any:
        """What the store holds: one row per (dataset, params, timeframe, symbol, interval).

        ``status`` is ``final`` (will not change), ``open`` (refetched by the next sync:
        today, an unfinished week or month, minute candles) or ``empty`` (fetched and confirmed
        to hold no rows, e.g. before a listing; also listed under final or open).
        """
        return to_frame(_read.coverage(self._parts.log), backend)

    # -- history: snapshots, gc (docs/store.md, "Snapshots and reading as of") --------------

    def snapshot(self, name: str) -> Snapshot:
        """Pin the store as it is now under ``name``: ``read(..., as_of=name)`` and
        ``read_derived(..., as_of=name)`` then read exactly what they read now, whatever
        later syncs, repairs or corporate actions change, until ``delete_snapshot(name)``.
        Cheap: no data is copied (files replaced later are kept aside, see :meth:`gc`)."""
        name = _history.check_name(name)
        parts = self._parts
        with parts.locked(*_HISTORY, writing=f"snapshot {name!r}"):
            parts.log.reload()
            return _history.take(parts.storage, parts.log, name)

    def list_snapshots(self) -> list[Snapshot]:
        """The store's snapshots, oldest generation first."""
        return _history.listing(self._parts.storage)

    def delete_snapshot(self, name: str) -> None:
        """Forget a snapshot; what only it pinned goes at the next :meth:`gc`."""
        name = _history.check_name(name, "Store.delete_snapshot")
        with self._parts.locked(*_HISTORY, writing=f"delete_snapshot {name!r}"):
            _history.delete(self._parts.storage, name)

    def gc(self, keep: dt.timedelta = dt.timedelta(days=7)) -> GcReport:
        """Remove the file versions replaced more than ``keep`` ago that no snapshot and
        not the current state record, and the log before the newest checkpoint older than
        ``keep``: ``as_of`` reads any time of the last ``keep``, and a snapshot for as long
        as it exists. Returns what was removed."""
        if not isinstance(keep, dt.timedelta) or keep < dt.timedelta(0):
            raise InvalidParams(
                "Store.gc", "keep", f"has value {keep!r}", "a datetime.timedelta >= 0"
            )
        parts = self._parts
        with parts.locked(*_HISTORY, writing="gc"):
            parts.log.reload()
            return _history.gc(parts.storage, parts.log, keep)


#: what snapshots and gc lock: the whole store on a local disk; on an object store, a lease
#: of their own (writers of data never wait for them: they only pin or remove what is old)
_HISTORY = (DatasetId("_store", "history", None), [NO_SYMBOL])
