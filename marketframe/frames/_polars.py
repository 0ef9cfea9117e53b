"""The ``md`` namespace on polars DataFrames and LazyFrames: a thin adapter over ``_core``.

Missing results (warm-up, gaps) are nulls, as polars users expect. On a LazyFrame the
columns are checked at once against the schema and the computation is a ``map_batches``
node of the plan: it runs at ``collect()`` on the whole frame (never batch by batch, and no
filter or slice is pushed through it, since that would change the series).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from . import _core
from ._methods import IndicatorMethods

DEFAULTS = ("symbol", "date")


def apply(
    df: pl.DataFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pl.DataFrame:
    """``df`` with the request's output columns appended (rows untouched, in their order)."""
    sym, dt = _core.check_columns(request, df.columns, symbol, date, DEFAULTS)
    arrays = [
        df.get_column(c).cast(pl.Float64).to_numpy().astype(np.float64, copy=False)
        for c in request.inputs
    ]
    order = new_group = None
    keys = [k for k in (sym, dt) if k is not None]
    if keys:
        order = df.select(pl.arg_sort_by(keys, maintain_order=True)).to_series().to_numpy()
        if sym is not None:
            s = df.get_column(sym).gather(order)
            new_group = s.ne_missing(s.shift(1)).fill_null(True).to_numpy()
    outs = _core.compute(request, arrays, order, new_group)
    return df.with_columns(
        pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)
        for name, values in zip(request.outputs, outs, strict=True)
    )


def apply_lazy(
    lf: pl.LazyFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pl.LazyFrame:
    """A LazyFrame that appends the request's columns when collected."""
    schema = lf.collect_schema()
    sym, dt = _core.check_columns(request, schema.names(), symbol, date, DEFAULTS)
    out = dict(schema)
    out.update({name: pl.Float64() for name in request.outputs})
    return lf.map_batches(lambda df: apply(df, request, sym, dt), schema=pl.Schema(out))


@pl.api.register_dataframe_namespace("md")
class PolarsIndicators(IndicatorMethods[pl.DataFrame]):
    """``df.md.sma(20)`` etc. on a polars DataFrame."""

    def __init__(self, df: pl.DataFrame) -> None:
        self._df = df

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> Any:
        return apply(self._df, request, symbol, date)


@pl.api.register_lazyframe_namespace("md")
class PolarsLazyIndicators(IndicatorMethods[pl.LazyFrame]):
    """``lf.md.sma(20)`` etc. on a polars LazyFrame (stays lazy)."""

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._lf = lf

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> Any:
        return apply_lazy(self._lf, request, symbol, date)
