"""The ``md`` namespace on polars DataFrames and LazyFrames: a thin adapter over ``_core``.

Missing results (warm-up, gaps) are nulls, as polars users expect. On a LazyFrame the
columns are checked at once against the schema and the computation is a deferred source
of the plan (``pl.defer``): at ``collect()`` it collects its input plan once, on the whole
frame, and computes (never batch by batch, and no filter or slice after it is pushed
before it, since that would change the series).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from . import _core, _order, _wide
from ._methods import IndicatorMethods, SeriesMethods

DEFAULTS = ("symbol", "date")


def codes(values: pl.Series) -> pl.Series:
    """Integer symbol codes (the categorical's own; nulls a group of their own)."""
    if not isinstance(values.dtype, pl.Categorical | pl.Enum):
        values = values.cast(pl.String).cast(pl.Categorical)
    phys = values.to_physical()
    if phys.null_count():
        # the codes are unsigned integers; the stubs type max() as any literal value
        phys = phys.fill_null(int(phys.max() or 0) + 1)  # type: ignore[arg-type]
    return phys


def time_key(values: pl.Series, name: str) -> pl.Series:
    """A numeric key that sorts like the times in ``values`` (a clear error if none)."""
    if values.dtype == pl.String:
        try:
            values = values.str.to_datetime()
        except pl.exceptions.PolarsError as e:
            raise _order.not_times(name, f"e.g. {values[0]!r}: {e}", "str.to_datetime") from None
    if not (values.dtype.is_temporal() or values.dtype.is_numeric()):
        raise _order.not_times(name, f"type {values.dtype}", "a cast to a date or time")
    _order.check_no_missing_times(values.null_count(), name)
    phys = values.to_physical()
    return phys if phys.dtype.is_integer() else phys.cast(pl.Float64)


def _layout(df: pl.DataFrame, sym: str | None, date: str | None) -> _order.Layout:
    c = codes(df.get_column(sym)).to_numpy() if sym is not None else None
    name = date
    if date == DEFAULTS[1] and date not in df.columns:
        name = next((f for n in _order.TIME_COLUMNS if (f := _core.lookup(n, df.columns))), None)
    key = time_key(df.get_column(name), name).to_numpy() if name is not None else None
    return _order.layout(df.height, c, key)


def apply(
    df: pl.DataFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pl.DataFrame:
    """``df`` with the request's output columns appended (rows untouched, in their order);
    on a wide frame (date x symbol), the indicator of every column."""
    if _wide.polars_is_wide(df.schema, request, symbol):
        return _wide.polars_apply(df, request)
    request, sym, date = _core.check_columns(request, df.columns, symbol, date, DEFAULTS)
    layout = _layout(df, sym, date)
    arrays = [
        df.get_column(c).cast(pl.Float64).to_numpy().astype(np.float64, copy=False)
        for c in request.inputs
    ]
    outs = _core.compute(request, arrays, layout)
    return df.with_columns(
        pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)
        for name, values in zip(request.outputs, outs, strict=True)
    )


def apply_lazy(
    lf: pl.LazyFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pl.LazyFrame:
    """A LazyFrame that appends the request's columns when collected."""
    schema = lf.collect_schema()
    if _wide.polars_is_wide(schema, request, symbol):
        return pl.defer(
            lambda: _wide.polars_apply(lf.collect(engine="in-memory"), request),
            schema=_wide.polars_wide_schema(schema, request),
        )
    request, _, _ = _core.check_columns(request, schema.names(), symbol, date, DEFAULTS)
    out = dict(schema)
    out.update({name: pl.Float64() for name in request.outputs})

    def run() -> pl.DataFrame:
        # the input plan is collected once, by the in-memory engine: it hands over the
        # columns in one piece each (the streaming engine would give many small chunks,
        # and every column read would then be copied into one)
        return apply(lf.collect(engine="in-memory"), request, symbol, date)

    return pl.defer(run, schema=pl.Schema(out))


@pl.api.register_dataframe_namespace("md")
class PolarsIndicators(IndicatorMethods[pl.DataFrame]):
    """``df.md.sma(20)`` etc. on a polars DataFrame."""

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> pl.DataFrame:
        return apply(self._frame, request, symbol, date)

    def wide(
        self, column: str = "close", *, symbol: str = "symbol", date: str = "date"
    ) -> pl.DataFrame:
        """A date x symbol panel of ``column``: the date column (oldest first) and one column
        per symbol; ``.md`` indicators accept it (``df.md.wide().md.rsi(14)``)."""
        return _wide.polars_wide(self._frame, column, symbol, date)


@pl.api.register_series_namespace("md")
class PolarsSeriesIndicators(SeriesMethods[pl.Series | pl.DataFrame]):
    """``close.md.rsi(14)`` on one polars Series (row order = time order): a Series named
    ``rsi_14`` (a DataFrame for several outputs)."""

    def __init__(self, s: pl.Series) -> None:
        self._s = s

    def _apply(
        self, request: _core.Request, symbol: str | None, date: str | None
    ) -> pl.Series | pl.DataFrame:
        out = apply(self._s.to_frame(request.inputs[0]), request, None, None)
        if len(request.outputs) == 1:
            return out.get_column(request.outputs[0])
        return out.select(request.outputs)


@pl.api.register_lazyframe_namespace("md")
class PolarsLazyIndicators(IndicatorMethods[pl.LazyFrame]):
    """``lf.md.sma(20)`` etc. on a polars LazyFrame (stays lazy)."""

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> pl.LazyFrame:
        return apply_lazy(self._frame, request, symbol, date)
