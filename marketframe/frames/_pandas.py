"""The ``df.md`` accessor on pandas DataFrames: a thin adapter over ``_core``."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from . import _core, _order, _wide
from ._methods import IndicatorMethods, SeriesMethods

DEFAULTS = ("symbol", "date")


def _available(df: pd.DataFrame) -> list[Hashable]:
    """Columns, then index levels that have a name (``set_index("date")`` keeps it usable)."""
    names: list[Hashable] = list(df.columns)
    names += [n for n in df.index.names if n is not None and n not in df.columns]
    return names


def _get(df: pd.DataFrame, name: str) -> pd.Series | pd.Index:
    return df[name] if name in df.columns else df.index.get_level_values(name)


def codes(values: pd.Series | pd.Index) -> NDArray[np.integer]:
    """Integer symbol codes (a view of a categorical's codes; missing symbols one code)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return np.asarray(values.array.codes)  # -1 for a missing symbol: a group too
    return pd.factorize(values, use_na_sentinel=False)[0]


def time_key(values: pd.Series | pd.Index, name: str) -> NDArray[np.generic] | _order.NatKey:
    """A numeric key that sorts like the times in ``values`` (a clear error if none)."""
    v: Any = values
    if isinstance(v.dtype, pd.ArrowDtype) and pa.types.is_temporal(v.dtype.pyarrow_dtype):
        arr = pa.chunked_array([pa.array(v.array)])
        _order.check_no_missing_times(arr.null_count, name)
        return _order.arrow_time_key(arr)
    if not (
        pd.api.types.is_datetime64_any_dtype(v.dtype)
        or pd.api.types.is_timedelta64_dtype(v.dtype)
        or pd.api.types.is_numeric_dtype(v.dtype)
    ):
        try:
            v = pd.to_datetime(v, format="ISO8601")
        except (TypeError, ValueError, OverflowError) as e:
            sample = next(iter(values), None)
            raise _order.not_times(name, f"e.g. {sample!r}: {e}", "pd.to_datetime") from None
    if isinstance(v.dtype, np.dtype) and v.dtype.kind in "mM":
        # no copy; NaT (the lowest int64) is found by ``layout`` from the time drops
        return _order.NatKey(np.asarray(v).view(np.int64), name)
    missing = int(pd.isna(v).sum())
    _order.check_no_missing_times(missing, name)
    if pd.api.types.is_numeric_dtype(v.dtype) and not pd.api.types.is_bool_dtype(v.dtype):
        return np.asarray(v, dtype=np.float64)
    if pd.api.types.is_timedelta64_dtype(v.dtype):
        return np.asarray(pd.TimedeltaIndex(v).asi8)
    return np.asarray(pd.DatetimeIndex(v).asi8)


def _layout(df: pd.DataFrame, sym: str | None, date: str | None) -> _order.Layout:
    c = codes(_get(df, sym)) if sym is not None else None
    key = None
    if date is not None:
        name = date
        if date == DEFAULTS[1] and date not in _available(df):
            cols = list(df.columns)
            name = next((f for n in _order.TIME_COLUMNS if (f := _core.lookup(n, cols))), "")
            if not name and (
                isinstance(df.index, pd.DatetimeIndex)
                or str(df.index.name).lower() in _order.TIME_COLUMNS
            ):
                key = time_key(df.index, str(df.index.name or "the index"))
            elif not name and not df.index.is_monotonic_increasing:
                raise _order.unordered("its index is not ascending")
        if name:
            key = time_key(_get(df, name), name)
    return _order.layout(len(df), c, key)


def apply(
    df: pd.DataFrame, request: _core.Request, symbol: str | None, date: str | None
) -> pd.DataFrame:
    """``df`` with the request's output columns appended (rows untouched, in their order);
    on a wide frame (date x symbol), the indicator of every column."""
    if _wide.pandas_is_wide(df, request, symbol):
        return _wide.pandas_apply(_wide.numeric(df), request)
    request, sym, date = _core.check_columns(request, _available(df), symbol, date, DEFAULTS)
    arrays = [
        np.asarray(_get(df, c).to_numpy(dtype=np.float64, na_value=np.nan)) for c in request.inputs
    ]
    outs = dict(
        zip(request.outputs, _core.compute(request, arrays, _layout(df, sym, date)), strict=True)
    )
    if any(name in df.columns for name in outs):
        return df.assign(**outs)  # replaced in place, where the user had them
    # the new arrays are ours: put them in the frame as they are, rather than copied
    return pd.concat([df, pd.DataFrame(outs, index=df.index, copy=False)], axis=1)


@pd.api.extensions.register_dataframe_accessor("md")
class PandasIndicators(IndicatorMethods[pd.DataFrame]):
    """``df.md.sma(20)``, ``.rsi(14)``, ``.kdj()``, ``.macd()``, ``.bbands()`` on pandas."""

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> pd.DataFrame:
        return apply(self._frame, request, symbol, date)

    def wide(
        self, column: str = "close", *, symbol: str = "symbol", date: str = "date"
    ) -> pd.DataFrame:
        """A date x symbol panel of ``column``: a ``DatetimeIndex`` (oldest first) and one
        column per symbol; ``.md`` indicators accept it (``df.md.wide().md.rsi(14)``)."""
        return _wide.pandas_wide(self._frame, column, symbol, date)


@pd.api.extensions.register_series_accessor("md")
class PandasSeriesIndicators(SeriesMethods["pd.Series[float] | pd.DataFrame"]):
    """``close.md.rsi(14)`` on one pandas Series: a Series named ``rsi_14`` (a DataFrame
    for several outputs), on the Series' index; a ``DatetimeIndex`` is the time order."""

    def __init__(self, s: pd.Series[Any]) -> None:
        self._s = s

    def _apply(
        self, request: _core.Request, symbol: str | None, date: str | None
    ) -> pd.Series[float] | pd.DataFrame:
        frame = pd.DataFrame({request.inputs[0]: self._s})
        out = apply(frame, request, None, date)[list(request.outputs)]
        return out.iloc[:, 0] if len(request.outputs) == 1 else out
