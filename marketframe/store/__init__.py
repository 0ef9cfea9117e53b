"""``Store``: a local, hive-partitioned Parquet copy of the service's date-ranged endpoints.

``store.sync(...)`` fetches only what is missing, in the fewest windows of under one year,
concurrently through one client; ``store.read(...)`` returns pandas / polars / Arrow;
``store.coverage()`` says what is held. See ``docs/store.md``.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa
import pyarrow.compute as pc

from marketframe import adjust as _adjust
from marketframe._params import to_date
from marketframe._time import taipei_today
from marketframe.convert import check_backend, oldest_first, to_frame
from marketframe.exceptions import (  # the store's errors live in the one error tree
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
from marketframe.store import _held, _io
from marketframe.store._document import NO_SYMBOL
from marketframe.store._manifest import Manifest
from marketframe.store._report import Failure, SyncReport, VerifyReport
from marketframe.store._sync import check_range, check_symbols, resolve

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe.client import Client
    from marketframe.indicators.stateful import IndicatorSpec

from marketframe.store._compute import ComputeReport  # noqa: E402

__all__ = [
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

LOCK = ".lock"


class Store:
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
        from marketframe.store._fs import storage_for
        from marketframe.store._local import LocalStorage, directory

        if timeout is not None and not (
            isinstance(timeout, int | float)
            and not isinstance(timeout, bool)
            and 0 < timeout < float("inf")
        ):
            raise InvalidParams("Store", "timeout", f"has value {timeout!r}", "seconds > 0")
        self._storage = storage_for(path, storage_options, directory, timeout)
        self._storage_options = dict(storage_options) if storage_options else None
        self.root: Any = (
            self._storage.root if isinstance(self._storage, LocalStorage) else self._storage.url
        )
        if not (
            isinstance(lease_ttl, int | float) and not isinstance(lease_ttl, bool) and lease_ttl > 0
        ):
            raise InvalidParams("Store", "lease_ttl", f"has value {lease_ttl!r}", "seconds > 0")
        self.lease_ttl = float(lease_ttl)
        if not (
            lock_timeout == -1
            or (
                isinstance(lock_timeout, int | float)
                and not isinstance(lock_timeout, bool)
                and lock_timeout >= 0
            )
        ):
            raise InvalidParams(
                "Store",
                "lock_timeout",
                f"has value {lock_timeout!r}",
                "seconds >= 0, or -1 to wait forever",
            )
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
            from marketframe._http.credential import from_environment
            from marketframe.client import DEFAULT_BASE_URL, Client

            if not (self._client_args["api_key"] or self._client_args["base_url"]):
                if not from_environment():  # download()'s and the commands' fallback
                    from marketframe._connect import sandbox_client

                    self._client = sandbox_client(
                        sys.stderr, backend="arrow", max_workers=self.max_workers or 16
                    )
                    return self._client
            self._client = Client(
                self._client_args["api_key"],
                base_url=self._client_args["base_url"] or DEFAULT_BASE_URL,
                backend="arrow",
                cache=False,
                max_workers=self.max_workers or 16,
            )
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
        args = self._check_sync(endpoint, symbols, start, end, timeframe, today, params)
        held = self._already_held(*args)
        if held is not None:  # nothing to fetch or fix: no lock, nothing written
            return held
        with self._locked(args[0].ds, args[1], writing=f"sync {endpoint}"):
            return self._run_sync(*args, progress=progress, strict=strict)

    def _already_held(
        self, spec: Any, syms: list[str], day: dt.date | None, want: Any
    ) -> SyncReport | None:
        """The report of a sync with nothing to do (every window held as final, every
        recorded file of these symbols unchanged by its cheap check), or None: such a sync
        takes no lock and writes nothing, so it also works on a read-only store."""
        from marketframe._windows import earliest, plan, split

        if want is None:  # minute timeframes: always refetched
            return None
        self._manifest.reload()
        self._manifest.check()
        report = SyncReport(spec.ds.key, symbols=len(syms) if spec.has_symbol else 0)
        for sym in syms:
            kind_symbol = sym if spec.has_symbol else None
            held = self._manifest.final(spec.ds, sym)
            windows, before = plan(want, held, kind_symbol, spec.lead_days())
            if windows or (before is not None and plan(before, held, None)[0]):
                return None
            floor = earliest(kind_symbol)
            lo = max(want[0], floor) if floor else want[0]
            if lo <= want[1]:
                report.windows_skipped += len(split(lo, want[1], spec.lead_days(), floor))
        for rel, rec in self._manifest.files(spec.ds).items():
            sym = _io.where(rel)[0] or NO_SYMBOL
            if sym in syms and not self._storage.unchanged(rel, rec):
                return None  # the sync's cheap check has something to fix
        return report

    def _check_sync(
        self,
        endpoint: str,
        symbols: str | Sequence[str] | None,
        start: Any,
        end: Any,
        timeframe: str | None,
        today: dt.date | str | None,
        params: dict[str, Any],
    ) -> tuple[Any, ...]:
        """Every argument of a sync checked (InvalidParams before any request or lock)."""
        spec = resolve(endpoint, timeframe, params)
        syms = check_symbols(spec, symbols)
        day = to_date("Store.sync", "today", today) if today is not None else None
        return spec, syms, day, check_range(spec, start, end, day or taipei_today())

    def _run_sync(
        self,
        spec: Any,
        syms: list[str],
        day: dt.date | None,
        want: Any,
        *,
        progress: bool | None,
        strict: bool,
    ) -> SyncReport:
        """A checked sync, under the store's lock."""
        from marketframe.store import _sync

        client = self.client
        workers = int(self.max_workers or getattr(client, "max_workers", 8) or 8)
        self._storage.clean_temporary()
        self._manifest.reload()  # another process may have synced while we waited
        self._manifest.check()
        report = _sync.run(
            client,
            self._storage,
            self._manifest,
            spec,
            syms,
            want,
            today=day,
            progress=progress,
            max_workers=workers,
        )
        if report.failures and strict:
            raise SyncError(report)
        return report

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
        Every file read is checked against the manifest (size, content hash) and its page
        checksums: a damaged, missing or replaced file raises :class:`StoreCorrupted` naming it.
        ``adjust="splits"`` or ``"all"`` (historical candles) adjusts the stored raw prices on
        read with corporate actions fetched through the store's client (docs/adjusted.md).
        """
        check_backend("Store.read", backend)
        spec = resolve(endpoint, timeframe, params)
        mode = _adjust.check_read(spec.ep.name, adjust, spec.params, spec.ds.timeframe)
        # symbol-less datasets (corporate actions) are filtered on their symbol column
        syms = None if symbols is None or not spec.has_symbol else check_symbols(spec, symbols)
        lo = to_date(endpoint, "start", start) if start is not None else None
        hi = to_date(endpoint, "end", end) if end is not None else None
        years = None
        if spec.has_symbol and (lo is not None or hi is not None):
            years = ((lo or dt.date(1900, 1, 1)).year, (hi or dt.date(2999, 12, 31)).year)
        self._manifest.reload()
        self._manifest.check()
        _held.check(self._manifest, spec, syms, lo, hi)  # never synced: NotSynced, not 0 rows
        logical = spec.ep.schema.arrow(minute=spec.minute)
        files = _io.recorded(self._manifest.files(spec.ds), syms, years, spec.ds)
        tables = [
            _io.from_physical(t, logical)
            for t in (self._storage.read_file(rel, rec, self._fix) for rel, rec in files)
            if t.num_rows
        ]
        if not tables:
            table = logical.empty_table()
        else:
            table = tables[0] if len(tables) == 1 else _io.concat_partitions(tables)
        if table.num_rows and (lo is not None or hi is not None):
            col: Any = table.column(_io.date_column(spec.ep))  # a date or timestamp column
            if pa.types.is_timestamp(col.type):
                col = pc.cast(pc.local_timestamp(col), pa.date32())
            mask: Any = None
            if lo is not None:
                mask = pc.greater_equal(col, pa.scalar(lo, pa.date32()))
            if hi is not None:
                m2 = pc.less_equal(col, pa.scalar(hi, pa.date32()))
                mask = m2 if mask is None else pc.and_(mask, m2)
            table = table.filter(mask)
        if not spec.has_symbol and symbols is not None and table.num_rows:
            wanted = [symbols] if isinstance(symbols, str) else list(symbols)
            table = table.filter(pc.is_in(table.column("symbol"), pa.array(wanted)))
        if not spec.has_symbol:  # every symbol in one dataset: by date, as the loaders
            table = oldest_first(spec.ep, {}, table)
        meta = {
            k: v
            for k, v in (table.schema.metadata or {}).items()
            if not k.startswith(b"marketframe.store.")
        }
        if mode is not None:
            table = self.client.adjust_prices(table, mode)
        return to_frame(table.replace_schema_metadata(meta), backend)

    # -- derived datasets -------------------------------------------------------------------

    def compute(
        self,
        dataset: str,
        spec: IndicatorSpec | str | Sequence[IndicatorSpec | str],
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        executor: Executor | None = None,
        max_workers: int | None = None,
        adjust: str | None = None,
        **params: Any,
    ) -> ComputeReport:
        """Compute indicators over a stored dataset into derived datasets of this store.

        ``spec``: one or more :func:`marketframe.indicators.stateful.spec` (or names, with
        the ``df.md`` defaults); each is written to
        ``dataset=derived.<indicator>/params=<fingerprint>/tf=<tf>/sym=<symbol>/...``,
        readable as any dataset (pyarrow, polars, DuckDB, Spark) and by
        :meth:`read_derived`. ``symbols``: None for every stored symbol of ``dataset``.
        One task per symbol reads its partitions in time order carrying the indicators'
        state (memory: one partition at a time); tasks run on ``executor``, any
        ``concurrent.futures.Executor`` (a process pool of ``max_workers`` by default;
        ``dask.distributed``'s ``client.get_executor()``; Ray's); ``max_workers=1`` runs
        them in this process. A rerun computes only new bars from each symbol's saved state
        and recomputes what a changed input (a repaired file, a new corporate action under
        ``adjust=``) invalidated; files a killed run left are removed first. Holds the
        store's lock (object stores: the derived symbols' leases) while it runs.
        See docs/compute.md.
        """
        from marketframe.store import _compute

        return _compute.compute(
            self, dataset, spec, symbols, timeframe, executor, max_workers, adjust, params
        )

    @overload
    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        adjust: str | None = None,
        backend: Literal["pandas"] = "pandas",
        **params: Any,
    ) -> pd.DataFrame: ...

    @overload
    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        adjust: str | None = None,
        backend: Literal["polars"],
        **params: Any,
    ) -> pl.DataFrame: ...

    @overload
    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        adjust: str | None = None,
        backend: Literal["arrow"],
        **params: Any,
    ) -> pa.Table: ...

    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        adjust: str | None = None,
        backend: str = "pandas",
        **params: Any,
    ) -> Any:
        """The rows :meth:`compute` wrote for ``spec`` over ``dataset`` (``symbol``,
        ``date``, one column per output), sorted by symbol and date, every file checked
        against the manifest."""
        from marketframe.store import _compute

        check_backend("Store.read_derived", backend)
        return to_frame(
            _compute.read(self, dataset, spec, symbols, timeframe, adjust, params), backend
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
        """The inter-process lock of syncs and repairs (a typed error when it times out): a
        file lock on a local store; on an object store, the leases of ``symbols`` of ``ds``
        (nothing for a check of the whole store). ``writing`` names what will write: on a
        read-only store it is refused with :class:`StoreReadOnly`; a check (``writing``
        None) of a read-only store runs without the lock (nobody can write it)."""
        import contextlib

        from marketframe.store._local import LocalStorage
        from marketframe.store._verify import locked

        if isinstance(self._storage, LocalStorage):
            return locked(self.root / LOCK, self.lock_timeout, writing)
        if ds is None or not symbols:
            return contextlib.nullcontext()
        from marketframe.store._lease import leased

        return leased(self._storage, ds, symbols, self.lock_timeout, self.lease_ttl)

    def verify(
        self,
        repair: bool = False,
        *,
        today: dt.date | str | None = None,
        progress: bool | None = False,
    ) -> VerifyReport:
        """Check every file the manifest records (size, content hash, page checksums, rows)
        and the manifest itself. ``repair=True`` restores a damaged manifest from its
        previous generation, removes damaged files and fetches again what they held (minute
        data only as far back as the service still has it). Returns a :class:`VerifyReport`.
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
        self._manifest.reload()
        self._manifest.check()
        rows: dict[str, list[Any]] = {
            k: [] for k in ("dataset", "params", "timeframe", "symbol", "status", "start", "end")
        }
        for ds, d in self._manifest.datasets():
            for sym, e in sorted(d.get("symbols", {}).items()):
                for status in ("final", "open", "empty"):
                    for a, b in e.get(status, []):
                        for k, v in zip(
                            rows,
                            (
                                ds.endpoint,
                                ds.params,
                                ds.timeframe,
                                None if sym == NO_SYMBOL else sym,
                                status,
                                dt.date.fromisoformat(a),
                                dt.date.fromisoformat(b),
                            ),
                            strict=True,
                        ):
                            rows[k].append(v)
        table = pa.table(
            {
                k: pa.array(v, pa.date32() if k in ("start", "end") else pa.string())
                for k, v in rows.items()
            }
        )
        return to_frame(table, backend)


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
    from marketframe.store._spark import spark_compute as run

    st = store if isinstance(store, Store) else Store(store, storage_options=storage_options)
    return run(
        spark, st, dataset, spec, symbols, timeframe, adjust=adjust, partitions=partitions, **params
    )
