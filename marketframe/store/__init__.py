"""``Store``: a local, hive-partitioned Parquet copy of the service's date-ranged endpoints.

``store.sync(...)`` fetches only what is missing, in the fewest windows of under one year,
concurrently through one client; ``store.read(...)`` returns pandas / polars / Arrow;
``store.coverage()`` says what is held. See ``docs/store.md``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa

from marketframe._params import to_date
from marketframe.convert import check_backend, to_frame
from marketframe.exceptions import (  # the store's errors live in the one error tree
    ComputeInterrupted,
    InvalidParams,
    LeaseLost,
    NotSynced,
    PartlySynced,
    StoreCorrupted,
    StoreLocked,
    StoreReadOnly,
    StoreUnavailable,
    SyncError,
)
from marketframe.store import _open, _read
from marketframe.store._compute._methods import Derived
from marketframe.store._log._manifest import Manifest
from marketframe.store._open import LOCK as LOCK  # the lock file's name
from marketframe.store._report import Failure, SyncReport, VerifyReport
from marketframe.store._sync import _call as _sync_call

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe.client import Client
    from marketframe.indicators.stateful import IndicatorSpec

from marketframe.store._compute import ComputeReport  # noqa: E402

__all__ = [
    "ComputeInterrupted",
    "ComputeReport",
    "spark_compute",
    "Failure",
    "LeaseLost",
    "NotSynced",
    "PartlySynced",
    "Store",
    "StoreCorrupted",
    "StoreLocked",
    "StoreReadOnly",
    "StoreUnavailable",
    "SyncError",
    "SyncReport",
    "VerifyReport",
]
for _cls in (ComputeReport, Failure, SyncReport, VerifyReport):
    _cls.__module__ = __name__  # shown (reprs, docs) where users import them from


class Store(Derived):
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
    ):
        from marketframe.store._storage import storage_for
        from marketframe.store._storage._local import LocalStorage, directory

        _open.check_timeout(timeout)
        self._storage = storage_for(path, storage_options, directory, timeout)
        self._storage_options = dict(storage_options) if storage_options else None
        self.root: Any = (
            self._storage.root if isinstance(self._storage, LocalStorage) else self._storage.url
        )
        _open.check_waits(lease_ttl, lock_timeout)
        _open.check_workers(max_workers)
        self.lease_ttl = float(lease_ttl)
        self._client = client
        self._own_client = client is None
        self._client_args = {"api_key": api_key, "base_url": base_url}
        self.max_workers = max_workers
        self.lock_timeout = lock_timeout
        self._manifest = Manifest(self.root, self._storage)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def client(self) -> Client[Any]:
        if self._client is None:
            args = self._client_args
            workers = self.max_workers or 16
            self._client = _open.default_client(args["api_key"], args["base_url"], workers)
        return self._client

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sync -------------------------------------------------------------------------------

    def sync(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None = None,
        start: Any = None,
        end: Any = None,
        timeframe: str | None = None,
        *,
        today: dt.date | str | None = None,
        progress: bool | None = None,
        strict: bool = True,
        **params: Any,
    ) -> SyncReport:
        """Fetch what the store is missing of ``endpoint`` for ``symbols`` from ``start`` to
        ``end`` (inclusive; ``end`` defaults to today) and write it.

        ``timeframe`` defaults to ``"D"`` where the endpoint has one; minute timeframes take no
        ``start``/``end`` (the service returns the latest 30 days; each sync keeps them).
        Other keyword arguments are the endpoint's parameters that shape the data
        (``period=20``, ``fields=[...]``); they are part of the dataset's identity.
        ``today`` is only used for responses without an envelope date (technical indicators,
        corporate actions): the default is today's date in Asia/Taipei.

        Returns a :class:`SyncReport`. If any window failed, everything else is still written
        and :class:`SyncError` (carrying ``.report``) is raised, unless ``strict=False``.
        Bad arguments raise :class:`~marketframe.InvalidParams` before any request.
        """
        spec, syms, day, want = _sync_call.check_args(
            endpoint, symbols, start, end, timeframe, today, params
        )
        held = _sync_call.held_already(self._storage, self._manifest, spec, syms, want)
        if held is not None:  # nothing to fetch or fix: no lock, nothing written
            return held
        with self._locked(spec.ds, syms, writing=f"sync {endpoint}"):
            return _sync_call.run_checked(
                self, spec, syms, day, want, progress=progress, strict=strict
            )

    # -- read -------------------------------------------------------------------------------

    @overload
    def read(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None = None,
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        timeframe: str | None = None,
        *,
        backend: Literal["pandas"] = "pandas",
        **params: Any,
    ) -> pd.DataFrame: ...

    @overload
    def read(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None = None,
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        timeframe: str | None = None,
        *,
        backend: Literal["polars"],
        **params: Any,
    ) -> pl.DataFrame: ...

    @overload
    def read(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None = None,
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        timeframe: str | None = None,
        *,
        backend: Literal["arrow"],
        **params: Any,
    ) -> pa.Table: ...

    def read(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None = None,
        start: Any = None,
        end: Any = None,
        timeframe: str | None = None,
        *,
        backend: str = "pandas",
        adjust: str | None = None,
        **params: Any,
    ) -> Any:
        """The stored rows of a dataset as a pandas / polars frame or Arrow table.

        ``symbols`` None reads every stored symbol; ``start``/``end`` (inclusive) filter on
        ``date`` (capital changes: ``effective_date``; listing applicants:
        ``application_date``; rows where it is null are left out by a range). Rows are sorted
        by the endpoint's key (oldest first; the items of one date, e.g. an ETF's
        constituents, in the service's order); columns are the loaders' columns. A symbol or
        range the store never synced raises :class:`NotSynced` (naming the ``sync`` call);
        a range synced only in part returns what is held and warns :class:`PartlySynced`. A
        synced range without rows (before a listing, a holiday) is an empty frame. Reading
        needs no lock: files are replaced atomically.
        Every file read is checked against the manifest (size, content hash): a damaged,
        missing or replaced file raises :class:`StoreCorrupted` naming it.
        ``adjust="splits"`` or ``"all"`` (historical candles) adjusts the stored raw prices on
        read with corporate actions fetched through the store's client (docs/adjusted.md).
        """
        check_backend("Store.read", backend)
        return to_frame(
            _read.read(self, endpoint, symbols, start, end, timeframe, adjust, params), backend
        )

    # -- integrity --------------------------------------------------------------------------

    @property
    def _fix(self) -> str:
        return (
            f"run `marketframe verify --store {self.root} --repair` (or store.verify(repair=True))"
        )

    def _locked(
        self, ds: Any = None, symbols: Sequence[str] | None = None, *, writing: str | None = None
    ) -> Any:
        """The inter-process lock of syncs and repairs (:func:`._open.lock`)."""
        return _open.lock(
            self._storage, self.root, ds, symbols, self.lock_timeout, self.lease_ttl, writing
        )

    def verify(
        self,
        repair: bool = False,
        *,
        today: dt.date | str | None = None,
        progress: bool | None = False,
    ) -> VerifyReport:
        """Check every file the manifest records (size, content hash, that it parses, rows)
        and the manifest itself. ``repair=True`` restores a damaged manifest from its
        previous generation, removes damaged files and fetches again what they held (minute
        data only as far back as the service still has it); a damaged part of a derived
        dataset is computed again from its source. What cannot be repaired is listed in
        the report's ``failures``. Returns a :class:`VerifyReport`.
        """
        from marketframe.store import _verify

        if self._storage.is_empty():  # a typo must not pass as a healthy, empty store
            raise InvalidParams(
                "Store.verify",
                "path",
                f"{str(self.root)!r} holds no store",
                "the directory of an existing store",
            )
        day = to_date("Store.verify", "today", today) if today is not None else None
        with self._locked(writing="verify(repair=True)" if repair else None):
            return _verify.run(self, repair, today=day, progress=progress)

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
        return to_frame(_read.coverage(self._manifest), backend)


def spark_compute(
    spark: Any,
    store: Store | str | os.PathLike[str],
    dataset: str,
    spec: IndicatorSpec | str | Sequence[IndicatorSpec | str],
    symbols: str | Sequence[str] | None = None,
    timeframe: str | None = None,
    *,
    adjust: str | None = None,
    partitions: int | None = None,
    storage_options: dict[str, Any] | None = None,
    **params: Any,
) -> ComputeReport:
    """:meth:`Store.compute` on Spark: the symbol list mapped with ``mapInArrow`` (no
    shuffle), each executor reading and writing the store on S3 or a shared path; the
    driver records the results in the manifest. See docs/compute.md."""
    from marketframe.store._compute._spark import spark_compute as run

    st = store if isinstance(store, Store) else Store(store, storage_options=storage_options)
    return run(
        spark, st, dataset, spec, symbols, timeframe, adjust=adjust, partitions=partitions, **params
    )
