"""The derived-datasets methods of :class:`~marketframe.store.Store` (docs/compute.md):
indicators computed over a stored dataset into derived datasets of the same store, and read
back. ``Store`` inherits them; the work is :mod:`._compute`'s."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa

from marketframe.convert import check_backend, to_frame
from marketframe.store import _compute
from marketframe.store._compute import ComputeReport

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from marketframe.indicators.stateful import IndicatorSpec


class Derived:
    """:meth:`compute` and :meth:`read_derived` of a :class:`~marketframe.store.Store`."""

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
        check_backend("Store.read_derived", backend)
        return to_frame(
            _compute.read(self, dataset, spec, symbols, timeframe, adjust, params), backend
        )
