"""The wide layout: one row per date, one column per symbol (a date x symbol panel).

``df.md.wide("close")`` turns a long frame (one row per symbol and date) into that panel,
oldest date first: on pandas a DataFrame with a ``DatetimeIndex`` and one column per symbol
(the columns' name is the symbol column's), on polars a frame with the date column and one
column per symbol. The ``md`` indicators accept the panel too: the panel kernels run on all
columns at once (no per-symbol loop). A frame counts as wide when the indicator's input
column is absent, there is no symbol column, every other column is numeric and none is
named like a candle field (``open``, ``high``, ``low``, ``close``, ``volume``, also as a
part of the name: ``('close', '2330')``, ``close_2330``): so a typo in a column name of a
long frame, or a pivot of several fields (``download(..., layout="wide")``), is an error
naming the fix, never a panel computed over every column, volume included.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import MissingColumnsError, did_you_mean
from . import _core, _order

if TYPE_CHECKING:  # polars is optional: imported by the functions that use it
    import polars as pl


def _fieldless(names: Sequence[Hashable]) -> bool:
    """No column is named like a candle field: a pivot of several fields (close beside
    volume) is no panel of one quantity, whose every column an indicator could mean."""
    return not any(_core.field_of(n) for n in names)


def _names(cols: Sequence[Hashable], *wanted: str) -> tuple[str, ...]:
    """The columns ``wanted`` as the frame spells them; a clear error for absent ones."""
    names = [_core.lookup(c, cols) for c in wanted]
    missing = [c for c, f in zip(wanted, names, strict=True) if f is None]
    if missing:
        hints = "".join(did_you_mean(c, [str(a) for a in cols]) for c in missing)
        raise MissingColumnsError(
            f"wide needs column(s) {', '.join(map(repr, missing))}, not in the frame{hints}; "
            f"available columns: {', '.join(map(str, cols))}"
        )
    return tuple(str(n) for n in names)


def pandas_is_wide(df: pd.DataFrame, request: _core.Request, symbol: str | None) -> bool:
    cols = list(df.columns)
    return (
        len(request.inputs) == 1
        and _core.lookup(request.inputs[0], cols) is None
        and (symbol is None or _core.lookup(symbol, cols) is None)
        and len(cols) > 0
        and _fieldless(cols)
        and all(_numeric(df[c]) for c in cols)
    )


def _numeric(col: pd.Series[Any] | pd.DataFrame) -> bool:
    """A numeric column, or an object one holding only numbers and missing values (one field
    of a pivot of several fields of different dtypes, e.g. ``close`` beside an Int64
    ``volume``: pandas makes every column object)."""
    if isinstance(col, pd.DataFrame):  # a duplicated name: not a panel column
        return False
    if pd.api.types.is_numeric_dtype(col.dtype):
        return True
    return col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) in (
        "integer",
        "floating",
        "mixed-integer-float",
        "decimal",
        "empty",
    )


def numeric(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its object columns of numbers as float64 (missing values as NaN)."""
    objects = [c for c in df.columns if df[c].dtype == object]
    if not objects:
        return df
    out = df.copy(deep=False)
    for c in objects:  # by label: tuples of a pivot's columns stay tuples
        out[c] = pd.to_numeric(df[c]).astype("float64")
    return out


def pandas_wide(df: pd.DataFrame, column: str, symbol: str, date: str) -> pd.DataFrame:
    """``df`` (long) as a date x symbol panel of ``column``."""
    cols = list(df.columns) + [n for n in df.index.names if n is not None]
    value, sym, when = _names(cols, column, symbol, date)
    flat = df.reset_index() if when not in df.columns or sym not in df.columns else df
    sub = flat[[when, sym, value]]
    if isinstance(sub[sym].dtype, pd.CategoricalDtype):
        sub = sub.assign(**{sym: sub[sym].astype(str)})
    times = sub[when]
    if not pd.api.types.is_datetime64_any_dtype(times.dtype):
        sub = sub.assign(**{when: pd.to_datetime(times.astype(str), format="ISO8601")})
    panel = sub.pivot(index=when, columns=sym, values=value).sort_index()
    panel.columns = pd.Index([str(c) for c in panel.columns], name=sym)
    return panel


def pandas_apply(df: pd.DataFrame, request: _core.Request) -> pd.DataFrame:
    """The indicator of every column of a wide frame, in time order (by the index when it
    holds times, else the row order); one output: a frame like ``df``, several: columns
    ``(output, symbol)``."""
    order = None
    idx = df.index
    if isinstance(idx, pd.DatetimeIndex) or pd.api.types.is_numeric_dtype(idx.dtype):
        if not idx.is_monotonic_increasing:
            order = np.argsort(np.asarray(idx), kind="stable")
    elif not idx.is_monotonic_increasing:
        raise _order.unordered("its index is not ascending")
    values = df.to_numpy(dtype=np.float64, na_value=np.nan)
    if order is not None:
        values = values[order]
    res = request.kernel(values)
    outs = list(res) if isinstance(res, tuple) else [res]
    if order is not None:
        back = []
        for o in outs:
            b = np.empty_like(o)
            b[order] = o
            back.append(b)
        outs = back
    frames = [pd.DataFrame(o, index=df.index, columns=df.columns) for o in outs]
    if len(frames) == 1:
        return frames[0]
    return pd.concat(dict(zip(request.outputs, frames, strict=True)), axis=1)


def polars_is_wide(schema: pl.Schema, request: _core.Request, symbol: str | None) -> bool:
    """``schema``: a polars frame's (or LazyFrame's collected) schema."""
    cols = list(schema.names())
    temporal = [c for c, t in schema.items() if t.is_temporal()]
    others = [c for c in cols if c not in temporal]
    return (
        len(request.inputs) == 1
        and _core.lookup(request.inputs[0], cols) is None
        and (symbol is None or _core.lookup(symbol, cols) is None)
        and len(temporal) == 1
        and len(others) > 0
        and _fieldless(others)
        and all(schema[c].is_numeric() for c in others)
    )


def polars_wide_schema(schema: pl.Schema, request: _core.Request) -> pl.Schema:
    """The schema of ``polars_apply``'s result on a frame of ``schema``."""
    import polars as pl

    when = next(c for c, t in schema.items() if t.is_temporal())
    syms = [c for c in schema.names() if c != when]
    out = {when: schema[when]}
    for name in request.outputs:
        for s in syms:
            out[s if len(request.outputs) == 1 else f"{name}:{s}"] = pl.Float64()
    return pl.Schema(out)


def polars_wide(df: pl.DataFrame, column: str, symbol: str, date: str) -> pl.DataFrame:
    import polars as pl

    value, sym, when = _names(list(df.columns), column, symbol, date)
    sub = df.select(pl.col(when), pl.col(sym).cast(pl.String), pl.col(value))
    return sub.pivot(on=sym, index=when, values=value).sort(when)


def polars_apply(df: pl.DataFrame, request: _core.Request) -> pl.DataFrame:
    """As ``pandas_apply``; several outputs are named ``{output}:{symbol}``."""
    import polars as pl

    when = next(c for c, t in df.schema.items() if t.is_temporal())
    syms = [c for c in df.columns if c != when]
    order = None
    key = df.get_column(when).to_physical().to_numpy()
    if len(key) > 1 and bool(np.any(key[1:] < key[:-1])):
        order = np.argsort(key, kind="stable")
    values = df.select(pl.col(syms).cast(pl.Float64)).to_numpy()
    if order is not None:
        values = values[order]
    res = request.kernel(np.ascontiguousarray(values))
    outs = list(res) if isinstance(res, tuple) else [res]
    columns = [df.get_column(when)]
    for name, o in zip(request.outputs, outs, strict=True):
        if order is not None:
            b = np.empty_like(o)
            b[order] = o
            o = b
        for j, s in enumerate(syms):
            label = s if len(outs) == 1 else f"{name}:{s}"
            columns.append(pl.Series(label, o[:, j], dtype=pl.Float64, nan_to_null=True))
    return pl.DataFrame(columns)
