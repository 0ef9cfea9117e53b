"""``Store``: a local, hive-partitioned Parquet copy of the service's date-ranged endpoints.

``store.sync(...)`` fetches only what is missing, in the fewest windows of under one year,
concurrently through one client; ``store.read(...)`` returns pandas / polars / Arrow;
``store.coverage()`` says what is held. See ``docs/store.md``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa

from marketframe.convert import check_backend, to_frame
from marketframe.exceptions import (  # the store's errors live in the one error tree
    ComputeInterrupted,
    LeaseLost,
    NotSynced,
    PartlySynced,
    StoreCorrupted,
    StoreLocked,
    StoreReadOnly,
    StoreUnavailable,
    SyncError,
)
from marketframe.store import _compute, _read, _universe
from marketframe.store._compute import ComputeReport
from marketframe.store._core import StoreCore
from marketframe.store._log._history import GcReport, Snapshot
from marketframe.store._report import Failure, SyncReport, VerifyReport
from marketframe.store._storage import LOCK as LOCK  # the lock file's name
from marketframe.store._sync import _call as _sync_call

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe.indicators.stateful import IndicatorSpec

__all__ = [
    "ComputeInterrupted",
    "ComputeReport",
    "spark_compute",
    "Failure",
    "GcReport",
    "LeaseLost",
    "NotSynced",
    "PartlySynced",
    "Snapshot",
    "Store",
    "StoreCorrupted",
    "StoreLocked",
    "StoreReadOnly",
    "StoreUnavailable",
    "SyncError",
    "SyncReport",
    "VerifyReport",
]
for _cls in (ComputeReport, Failure, GcReport, Snapshot, SyncReport, VerifyReport):
    _cls.__module__ = __name__  # shown (reprs, docs) where users import them from


class Store(StoreCore):
    """A Parquet store rooted at ``path`` (:class:`StoreCore` holds its parts and settings;
    see docs/store.md)."""

    def __enter__(self) -> Store:
        return self

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

        ``endpoint="universe"`` (no other argument) records today's tickers lists into the
        archive of :meth:`universe` instead (docs/universe.md).

        Returns a :class:`SyncReport`. If any window failed, everything else is still written
        and :class:`SyncError` (carrying ``.report``) is raised, unless ``strict=False``.
        Bad arguments raise :class:`~marketframe.InvalidParams` before any request.
        """
        if endpoint == _universe.ENDPOINT:  # the day's tickers list, into the archive
            return _universe.record(self._parts, symbols, start, end, timeframe, today, params)
        spec, syms, day, want = _sync_call.check_args(
            endpoint, symbols, start, end, timeframe, today, params
        )
        parts = self._parts
        held = _sync_call.held_already(parts, spec, syms, want)
        if held is not None:  # nothing to fetch or fix: no lock, nothing written
            return held
        with parts.locked(spec.ds, syms, writing=f"sync {endpoint}"):
            return _sync_call.run_checked(
                parts, spec, syms, day, want, progress=progress, strict=strict
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
        as_of: str | dt.datetime | None = None,
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
        as_of: str | dt.datetime | None = None,
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
        as_of: str | dt.datetime | None = None,
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
        as_of: str | dt.datetime | None = None,
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
        Every file read is checked against the log (size, content hash): a damaged,
        missing or replaced file raises :class:`StoreCorrupted` naming it.
        ``adjust="splits"`` or ``"all"`` (historical candles) adjusts the stored raw prices on
        read with corporate actions fetched through the store's client (docs/adjusted.md).
        ``as_of``: the rows as the store held them then: a snapshot's name
        (:meth:`snapshot`) or a time (a ``datetime``, naive meaning this machine's local time
        as ``datetime.now()`` gives; a text with a time of day), within what :meth:`gc` keeps.
        """
        check_backend("Store.read", backend)
        parts = self._parts
        return to_frame(
            _read.read(parts, endpoint, symbols, start, end, timeframe, adjust, params, as_of),
            backend,
        )

    # -- the point-in-time universe (docs/universe.md) --------------------------------------

    @overload
    def universe(
        self,
        as_of: str | dt.date | None = None,
        *,
        board: str | None = None,
        type: str | None = None,
        backend: Literal["pandas"] = "pandas",
    ) -> pd.DataFrame: ...

    @overload
    def universe(
        self,
        as_of: str | dt.date | None = None,
        *,
        board: str | None = None,
        type: str | None = None,
        backend: Literal["polars"],
    ) -> pl.DataFrame: ...

    @overload
    def universe(
        self,
        as_of: str | dt.date | None = None,
        *,
        board: str | None = None,
        type: str | None = None,
        backend: Literal["arrow"],
    ) -> pa.Table: ...

    def universe(
        self,
        as_of: str | dt.date | None = None,
        *,
        board: str | None = None,
        type: str | None = None,  # noqa: A002 - the service's word
        backend: str = "pandas",
    ) -> Any:
        """The instruments listed on ``as_of`` (default: today), as the store knew them: the
        newest day on or before it of the archive ``sync("universe")`` records, else a
        reconstruction from the stored daily candles (docs/universe.md). Columns: ``date``,
        ``symbol``, ``name``, ``type``, ``etf``, ``exchange``, ``market``, ``status``,
        ``source`` (``archive`` or ``reconstructed``), by symbol. ``board``: ``TWSE``,
        ``TPEx``, ``TSE``, ``OTC`` or ``ESB``; ``type``: ``EQUITY`` (ETFs included), ``ETF``,
        ``INDEX`` or ``WARRANT``. Sends no request; bad arguments raise
        :class:`~marketframe.InvalidParams`, nothing to answer from :class:`NotSynced`."""
        check_backend("Store.universe", backend)
        day, board, type_ = _universe.check(as_of, board, type)
        return to_frame(_universe.universe(self._parts, day, board, type_), backend)

    # -- derived datasets (docs/compute.md) -------------------------------------------------

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
        return _compute.compute(
            self._parts, dataset, spec, symbols, timeframe, executor, max_workers, adjust, params
        )

    @overload
    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        adjust: str | None = None,
        backend: Literal["pandas"] = "pandas",
        as_of: str | dt.datetime | None = None,
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
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        adjust: str | None = None,
        backend: Literal["polars"],
        as_of: str | dt.datetime | None = None,
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
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        adjust: str | None = None,
        backend: Literal["arrow"],
        as_of: str | dt.datetime | None = None,
        **params: Any,
    ) -> pa.Table: ...

    def read_derived(
        self,
        dataset: str,
        spec: IndicatorSpec | str,
        symbols: str | Sequence[str] | None = None,
        timeframe: str | None = None,
        *,
        start: str | dt.date | None = None,
        end: str | dt.date | None = None,
        adjust: str | None = None,
        backend: str = "pandas",
        as_of: str | dt.datetime | None = None,
        **params: Any,
    ) -> Any:
        """The rows :meth:`compute` wrote for ``spec`` over ``dataset`` (``symbol``,
        ``date``, one column per output), sorted by symbol and date, every file checked
        against its record; ``start``/``end`` (inclusive) filter on ``date``; ``as_of`` as
        for :meth:`read`."""
        check_backend("Store.read_derived", backend)
        parts = self._parts
        return to_frame(
            _compute.read(
                parts, dataset, spec, symbols, timeframe, adjust, params, as_of, start, end
            ),
            backend,
        )


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
    driver records the results in the log. See docs/compute.md."""
    from marketframe.store._compute._spark import spark_compute as run

    st = store if isinstance(store, Store) else Store(store, storage_options=storage_options)
    return run(
        spark,
        st._parts,
        dataset,
        spec,
        symbols,
        timeframe,
        adjust=adjust,
        partitions=partitions,
        **params,
    )
