"""JSON bytes -> ``pyarrow.Table`` with the endpoint's schema -> pandas / polars.

The one conversion path, in four stages (:func:`to_table` runs them in order):

1. :func:`._rows.parse` reads the body once (orjson, or Arrow's JSON reader for large row
   payloads) into an envelope and a rows reader (:class:`._rows.Rows`);
2. the rows reader is the row source's :class:`._rows.RowSource` view of the body: REST
   endpoints, the store (through the client) and streamed channels share it;
3. :func:`build` types each column of the schema (:mod:`._columns`: a value of the wrong JSON
   type raises :class:`~marketframe.exceptions.SchemaError` naming the source and field) and
   keeps fields the schema does not know as extra columns with an inferred type;
4. the columns become one typed table, with units and the source's name in its metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from marketframe._typing import Backend
from marketframe.convert._build import META_ENDPOINT, META_UNITS, build
from marketframe.convert._pandas import small_frame
from marketframe.convert._rows import Channel, Parsed, PyRows, RowSource, parse, py_rows
from marketframe.convert._timeorder import by_time, oldest_first, order_keys
from marketframe.endpoints import get
from marketframe.exceptions import InvalidParams, InvalidParamType, require_extra

__all__ = [
    "BACKENDS",
    "Channel",
    "Parsed",
    "PyRows",
    "RowSource",
    "build",
    "by_time",
    "check_backend",
    "concat",
    "oldest_first",
    "order_keys",
    "parse",
    "rows_to_table",
    "table_units",
    "to_frame",
    "to_pandas",
    "to_polars",
    "to_table",
    "units",
]

#: the kinds of frame every loader returns (Client, Store, streams): declared here only
BACKENDS = ("pandas", "polars", "arrow")


def to_table(
    payload: bytes | str | Mapping[str, Any],
    endpoint: str | RowSource,
    params: Mapping[str, Any] | None = None,
    *,
    decode: bool = False,
    engine: str = "auto",
) -> pa.Table:
    """Convert one response body of ``endpoint`` into a typed ``pyarrow.Table``.

    ``params`` are the request's parameters (used for ``timeframe``-dependent date columns,
    unit resolution and envelope values the payload omits). ``decode=True`` replaces
    ``industry`` and ``security_type`` codes by their English names. ``engine``: ``"auto"``
    reads large row payloads with Arrow's JSON reader (see ``_fastjson``), ``"python"``
    always uses orjson, ``"arrow"`` tries Arrow's reader whatever the size.
    """
    source = get(endpoint) if isinstance(endpoint, str) else endpoint
    return build(parse(payload, source, engine), source, params, decode=decode)


def rows_to_table(
    rows: list[dict[str, Any]], source: RowSource, params: Mapping[str, Any] | None = None
) -> pa.Table:
    """Many JSON objects (one row each, e.g. the ``data`` of streamed messages) -> a table.

    The same stages as :func:`to_table` after parsing (same checks, same types, unknown
    fields kept), for a ``rows=True`` schema whose columns are all read from each row."""
    return build(Parsed({}, py_rows(source, rows)), source, params)


def concat(tables: Sequence[pa.Table]) -> pa.Table:
    """Concatenate tables of one endpoint (extra columns are unioned; units are merged)."""
    if len(tables) == 1:
        return tables[0]
    try:  # one shape (the usual case): no type promotion to work out per table
        out = pa.concat_tables(tables)
    except pa.ArrowInvalid:  # extra columns or wider types in some tables
        out = pa.concat_tables(tables, promote_options="permissive")
    out = out.unify_dictionaries()
    if out.num_rows <= _COMBINE_ROWS:
        # one chunk per column: the cast below and every reader after it (pandas, polars)
        # pay per chunk, and a fan-out of one-row answers makes a chunk per answer
        out = out.combine_chunks()
    units = _merged_units(tables, out)
    fields = [
        f.with_metadata({"unit": units[f.name]}) if f.name in units else f for f in out.schema
    ]
    # a new dict: the wider key and value types ``pa.schema`` asks for are safe
    meta = cast("dict[bytes | str, bytes | str]", dict(tables[0].schema.metadata or {}))
    meta[META_UNITS] = orjson.dumps(units)
    return out.cast(pa.schema(fields, metadata=meta))


def _merged_units(tables: Sequence[pa.Table], out: pa.Table) -> dict[str, str]:
    """The units of ``out`` (``tables`` concatenated): each column's, or ``mixed (symbol:
    unit, ...)`` when its tables disagree (odd lots in shares beside board lots)."""
    payloads = [(t.schema.metadata or {}).get(META_UNITS, b"{}") for t in tables]
    parsed = {p: cast("dict[str, str]", orjson.loads(p)) for p in set(payloads)}
    if len(parsed) == 1:  # every table has the same units: read once
        return next(iter(parsed.values()))
    # each table's label: the symbol of its first row (one take over the concatenated column)
    starts = np.cumsum([0] + [t.num_rows for t in tables[:-1]])
    firsts: list[Any] = [None] * len(tables)
    if "symbol" in out.column_names:
        nonempty = [i for i, t in enumerate(tables) if t.num_rows]
        picked = out.column("symbol").take(pa.array(starts[nonempty])).to_pylist()
        for i, sym in zip(nonempty, picked, strict=True):
            firsts[i] = sym
    seen: dict[str, dict[str, str]] = {}  # column -> {symbol: unit}
    for i, payload in enumerate(payloads):
        label = str(i) if firsts[i] is None else str(firsts[i])
        for k, v in parsed[payload].items():
            seen.setdefault(k, {})[label] = v
    units: dict[str, str] = {}
    for k, by_symbol in seen.items():
        kinds = set(by_symbol.values())
        units[k] = (
            kinds.pop()
            if len(kinds) == 1
            else "mixed (" + ", ".join(f"{sym}: {u}" for sym, u in by_symbol.items()) + ")"
        )
    return units


#: tables up to this many rows are combined into one chunk per column by :func:`concat`
#: (past it the copy costs more than the chunks, and a string column could come near 2 GiB
#: of offsets; ``nbytes`` would tell, but it walks every chunk: longer than the combine)
_COMBINE_ROWS = 1 << 20


def table_units(table: pa.Table) -> dict[str, str]:
    meta = table.schema.metadata or {}
    return orjson.loads(meta[META_UNITS]) if META_UNITS in meta else {}


def _pandas_types(t: pa.DataType) -> Any:
    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    return None


def _dates_as_datetimes(table: pa.Table) -> pa.Table:
    """Arrow ``date32`` columns -> tz-naive ``timestamp[us]`` (a date is its midnight), so
    pandas gets a datetime64 column that takes string comparisons, ``.loc`` slices and
    ``resample``. Microseconds like the intraday timestamps and like pandas 3's own parsing
    of date strings, so ``merge_asof`` with ``pd.to_datetime(...)`` keys needs no cast."""
    dates = [i for i, f in enumerate(table.schema) if pa.types.is_date32(f.type)]
    for i in dates:
        f = table.schema.field(i)
        table = table.set_column(
            i, f.with_type(pa.timestamp("us")), table.column(i).cast(pa.timestamp("us"))
        )
    return table


def to_pandas(table: pa.Table) -> Any:
    """pandas: tz-aware ``datetime64[us, Asia/Taipei]`` timestamps, tz-naive
    ``datetime64[us]`` calendar dates, ``Int64``, ``category``, ``bool``; units in
    ``df.attrs["units"]``."""
    df = small_frame(table)  # small tables: buffers straight into pandas blocks
    if df is None:
        df = _arrow_to_pandas(table)
    df.attrs["units"] = table_units(table)
    meta = table.schema.metadata or {}
    if META_ENDPOINT in meta:
        df.attrs["endpoint"] = meta[META_ENDPOINT].decode()
    return df


def _arrow_to_pandas(table: pa.Table) -> Any:
    """Arrow's own conversion, with the dtypes :func:`to_pandas` promises."""
    df = _dates_as_datetimes(table).to_pandas(types_mapper=_pandas_types)
    for f in table.schema:  # nullable booleans ("bool" columns): pandas' "boolean" dtype
        if f.metadata and f.metadata.get(b"pandas") == b"boolean":
            df[f.name] = df[f.name].astype("boolean")
    return df


def to_polars(table: pa.Table) -> Any:
    """polars: ``Datetime("us", "Asia/Taipei")``, ``Int64``, ``Categorical``, ``Date``.

    polars frames carry no metadata: read units with :func:`marketframe.units`."""
    import polars as pl  # an optional extra: loaded when asked for

    return pl.from_arrow(table)


def to_frame(table: pa.Table, backend: str) -> Any:
    """``table`` as a frame of ``backend`` (one of :data:`BACKENDS`)."""
    if check_backend("to_frame", backend) == "pandas":
        return to_pandas(table)
    if backend == "polars":
        return to_polars(table)
    return table


def check_backend(where: str, backend: Any) -> Backend:
    """``backend`` if it is one of :data:`BACKENDS`, else :class:`InvalidParams` naming them;
    ``"polars"`` without polars installed: :class:`ExtraNotInstalled` naming the extra (before
    any request, not once the answer is converted)."""
    if backend not in BACKENDS:
        raise InvalidParams(where, "backend", f"has value {backend!r}", ", ".join(BACKENDS))
    if backend == "polars":
        require_extra("polars", where)
    return cast(Backend, backend)


def units(obj: Any) -> dict[str, str]:
    """Units of the volume-like columns (lots, shares, TWD, contracts, ...).

    ``obj`` is an endpoint name (documented units), a ``pyarrow.Table`` or a pandas frame from
    marketframe (units resolved for that response, e.g. shares for odd-lot). polars frames carry
    no metadata: pass the endpoint name, or load with ``backend="arrow"`` for resolved units.
    """
    if isinstance(obj, str):
        return get(obj).schema.units
    if isinstance(obj, pa.Table):
        return table_units(obj)
    attrs = getattr(obj, "attrs", None)
    if isinstance(attrs, dict) and "units" in attrs:
        return dict(attrs["units"])
    raise InvalidParamType(
        "units",
        "obj",
        f"is a {type(obj).__name__}, which has no units",
        "the endpoint name (marketframe.units('stock.intraday.trades')), a pyarrow.Table or "
        "a pandas frame",
    )
