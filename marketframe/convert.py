"""JSON bytes -> ``pyarrow.Table`` with the endpoint's schema -> pandas / polars.

The one conversion path. Parsing is ``orjson``; each column is then built in one pass
(``[row.get(key) for row in rows]``), its JSON types checked with ``set(map(type, values))``
and handed to ``pa.array`` with the schema's type. A value of the wrong JSON type raises
:class:`~marketframe.exceptions.SchemaError` naming the endpoint and field; fields the schema
does not know are kept as extra columns with an inferred type.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from itertools import repeat as _repeat
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from marketframe import _fastjson
from marketframe._extras import extra_array, extra_name, extras
from marketframe.codes import CODE_TABLES
from marketframe.endpoints import MINUTE_TIMEFRAMES, TAIPEI, Endpoint, get
from marketframe.exceptions import SchemaError
from marketframe.schemas import (
    ARROW_TYPES,
    JSON_TYPES,
    TZ,
    Col,
    Schema,
    resolve_unit,
)

_NONE = type(None)
_TYPE_NAMES = {int: "number", float: "number", str: "string", bool: "boolean", dict: "object",
               list: "array"}
_EXPECTED: dict[str, tuple[set[type], str]] = {
    "float": ({int, float}, "a number"),
    "int": ({int}, "an integer"),
    "int_str": ({int, str}, "an integer or a string of digits"),
    "time_us": ({int}, "epoch microseconds (an integer)"),
    "iso_time": ({str}, "an ISO 8601 time string with offset"),
    "hhmmss": ({str}, "an HHmmss string"),
    "date": ({str}, "a YYYY-MM-DD string"),
    "date_or_time": ({str}, "a date or time string"),
    "str": ({str}, "a string"),
    "cat": ({str}, "a string code"),
    "flag": ({bool}, "a boolean"),
}
META_ENDPOINT = b"marketframe.endpoint"
META_UNITS = b"marketframe.units"


def _walk(obj: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        if isinstance(key, int):
            if not isinstance(obj, list) or key >= len(obj):
                return None
            obj = obj[key]
        elif isinstance(obj, dict):
            obj = obj.get(key)
        else:
            return None
    return obj


def _fail(endpoint: str, field: str, types: set[type], kind: str) -> SchemaError:
    got = ", ".join(sorted({_TYPE_NAMES.get(t, t.__name__) for t in types}))
    return SchemaError(endpoint, field, f"has JSON {got} where {_EXPECTED[kind][1]} is expected")


def _column(endpoint: str, col: Col, kind: str, vals: list[Any], date: Any = None) -> pa.Array:
    """Typed Arrow array of one column; SchemaError when a value has the wrong JSON type."""
    types = set(map(type, vals))
    types.discard(_NONE)
    allowed = _EXPECTED[kind][0]
    if not types <= allowed:
        if not (kind in ("int", "time_us") and types <= {int, float}):
            raise _fail(endpoint, col.wire_name, types, kind)
        # integral floats (1.0) are accepted for integer columns; 1.5 is not
        if any(v is not None and v != int(v) for v in vals if type(v) is float):
            raise SchemaError(endpoint, col.wire_name, "has a fractional number where an "
                              "integer is expected")
    try:
        if kind == "hhmmss":
            day = dt.date.fromisoformat(date) if isinstance(date, str) else None
            return pa.array([_hhmmss(day, v) for v in vals], type=ARROW_TYPES["hhmmss"])
        if kind == "int_str" and str in types:
            vals = [int(v) if type(v) is str else v for v in vals]
        raw = pa.array(vals, type=JSON_TYPES[kind])
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError, OverflowError) as exc:
        raise _unreadable(endpoint, col, kind, exc) from None
    return finish(endpoint, col, kind, raw)




def _unreadable(endpoint: str, col: Col, kind: str, exc: Exception) -> SchemaError:
    return SchemaError(endpoint, col.wire_name, f"cannot be read as {_EXPECTED[kind][1]} "
                       f"({type(exc).__name__}: {str(exc)[:120]})")


def finish(endpoint: str, col: Col, kind: str, raw: pa.Array) -> pa.Array:
    """JSON-level array (float64/int64/bool/string) -> the column's final Arrow type."""
    try:
        if kind in ("float", "int", "int_str", "str"):
            return raw
        if kind == "time_us":
            return raw.cast(ARROW_TYPES["time_us"])
        if kind == "flag":
            return pc.fill_null(raw, False)
        if kind == "cat":
            return raw.dictionary_encode()
        if kind == "date":
            return raw.cast(pa.date32())
        if kind == "iso_time":
            return raw.cast(pa.timestamp("us", tz=TZ))
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        raise _unreadable(endpoint, col, kind, exc) from None
    raise AssertionError(kind)  # pragma: no cover


def _hhmmss(day: dt.date | None, text: str | None) -> dt.datetime | None:
    if text is None or day is None:
        return None
    if len(text) != 6 or not text.isdigit():
        raise ValueError(f"not HHmmss: {text!r}")
    t = dt.time(int(text[:2]), int(text[2:4]), int(text[4:]))
    return dt.datetime.combine(day, t, TAIPEI)


def to_table(payload: bytes | str | Mapping[str, Any], endpoint: str | Endpoint,
             params: Mapping[str, Any] | None = None, *, decode: bool = False,
             engine: str = "auto") -> pa.Table:
    """Convert one response body of ``endpoint`` into a typed ``pyarrow.Table``.

    ``params`` are the request's parameters (used for ``timeframe``-dependent date columns,
    unit resolution and envelope values the payload omits). ``decode=True`` replaces
    ``industry`` and ``security_type`` codes by their English names. ``engine``: ``"auto"``
    reads large row payloads with Arrow's JSON reader (see ``_fastjson``), ``"python"``
    always uses orjson, ``"arrow"`` tries Arrow's reader whatever the size.
    """
    ep = get(endpoint) if isinstance(endpoint, str) else endpoint
    params = params or {}
    name = ep.name
    fast = None
    doc: Any
    rows: Any
    if isinstance(payload, bytes) and _fastjson.eligible(ep.schema, len(payload), engine):
        fast = _fastjson.read_rows(payload, ep.schema)
    if fast is not None:
        doc = fast[0]
    elif isinstance(payload, bytes | bytearray | memoryview | str):
        try:
            doc = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise SchemaError(name, "<body>", f"is not valid JSON ({exc})") from None
    else:
        doc = payload
    if type(doc) is not dict:
        raise SchemaError(name, "<body>", "is not a JSON object")
    schema: Schema = ep.schema
    minute = str(params.get("timeframe", "")) in MINUTE_TIMEFRAMES
    env_cols = [c for c in schema.columns if c.envelope]
    row_cols = [c for c in schema.columns if not c.envelope]

    if fast is not None:
        rows, n = [], len(fast[1])
    elif schema.rows:
        rows = doc.get("data")
        if type(rows) is not list:
            raise SchemaError(name, "data", "is missing or not an array")
        if rows and set(map(type, rows)) != {dict}:
            raise SchemaError(name, "data", "has items that are not objects")
        n = len(rows)
    else:
        rows, n = [doc], 1

    names: list[str] = []
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    units: dict[str, str] = {}
    repeat = pa.array(np.zeros(n, dtype=np.int32))

    def add(col: Col, arr: pa.Array) -> None:
        if col.required and arr.null_count:
            raise SchemaError(name, col.wire_name, "is required but missing or null")
        if decode and col.name in CODE_TABLES and len(arr):
            table = CODE_TABLES[col.name]
            words = [table.get(v, v) for v in arr.dictionary.to_pylist()]
            arr = pa.DictionaryArray.from_arrays(arr.indices, pa.array(words, pa.string()))
        meta = None
        if col.unit:
            units[col.name] = resolve_unit(col.unit, doc.get("type"), doc.get("market"),
                                            params.get("type") == "oddlot")
            meta = {"unit": units[col.name]}
        names.append(col.name)
        arrays.append(arr)
        fields.append(pa.field(col.name, arr.type, nullable=not col.required, metadata=meta))

    present, flat = 0, True
    for col in schema.columns:
        kind = "iso_time" if col.kind == "date_or_time" and minute else col.kind
        if kind == "date_or_time":
            kind = "date"
        if col.envelope:
            value = _walk(doc, col.path)
            if value is None and col.param and params.get(col.param) is not None:
                value = str(params[col.param]) if col.kind in ("cat", "str") else params[col.param]
            one = _column(name, col, kind, [value], doc.get("date"))
            add(col, one if not schema.rows else one.take(repeat))
        else:
            if fast is not None:
                add(col, finish(name, col, kind, fast[1].field(col.path[0])))
                continue
            if len(col.path) == 1:
                vals = list(map(dict.get, rows, _repeat(col.path[0])))  # type: ignore[arg-type]
                present += n - vals.count(None)
            else:
                vals = [_walk(r, col.path) for r in rows]
                flat = False
            add(col, _column(name, col, kind, vals))

    taken = set(names)
    extra_env = extras([doc], env_cols, schema.ignore | ({"data"} if schema.rows else set()),
                        taken)
    extra_rows: list[tuple[str, list[Any]]] = []
    if fast is not None:
        known = {c.path[0] for c in row_cols}
        extra_rows = [(extra_name((k,), taken), fast[1].field(k)) for k in
                      (f.name for f in fast[1].type) if k not in known]
    # when every key of every row was read as a known, non-null value there is no unknown
    # field: a cheap count instead of a union of all keys
    elif schema.rows and not (flat and sum(map(len, rows)) == present):
        extra_rows = extras(rows, row_cols, frozenset(), taken)
    for col_name, vals in extra_env:
        arr = extra_array(vals)
        if schema.rows:
            arr = arr.take(repeat)
        names.append(col_name)
        arrays.append(arr)
        fields.append(pa.field(col_name, arr.type))
    for col_name, vals in extra_rows:
        arr = vals if isinstance(vals, pa.Array) else extra_array(vals)
        names.append(col_name)
        arrays.append(arr)
        fields.append(pa.field(col_name, arr.type))

    meta = {META_ENDPOINT: name.encode(), META_UNITS: orjson.dumps(units)}
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))


class _Rows:
    """A named schema standing in for an :class:`Endpoint` (streamed messages)."""

    def __init__(self, name: str, schema: Schema) -> None:
        self.name = name
        self.schema = schema


def rows_to_table(rows: list[dict[str, Any]], schema: Schema, name: str,
                  params: Mapping[str, Any] | None = None) -> pa.Table:
    """Many JSON objects (one row each, e.g. the ``data`` of streamed messages) -> a table.

    The same path as :func:`to_table` (same checks, same types, unknown fields kept), for a
    ``rows=True`` schema whose columns are all read from each row."""
    return to_table({"data": rows}, _Rows(name, schema), params,  # type: ignore[arg-type]
                    engine="python")


def concat(tables: Sequence[pa.Table]) -> pa.Table:
    """Concatenate tables of one endpoint (extra columns are unioned; units are merged)."""
    if len(tables) == 1:
        return tables[0]
    out = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
    seen: dict[str, dict[str, str]] = {}  # column -> {symbol: unit}
    for i, t in enumerate(tables):
        label = str(t.column("symbol")[0]) if "symbol" in t.column_names and t.num_rows else str(i)
        for k, v in table_units(t).items():
            seen.setdefault(k, {})[label] = v
    units: dict[str, str] = {}
    for k, by_symbol in seen.items():
        kinds = set(by_symbol.values())
        units[k] = kinds.pop() if len(kinds) == 1 else "mixed (" + ", ".join(
            f"{sym}: {u}" for sym, u in by_symbol.items()) + ")"
    fields = [f.with_metadata({"unit": units[f.name]}) if f.name in units else f
              for f in out.schema]
    meta = dict(tables[0].schema.metadata or {})
    meta[META_UNITS] = orjson.dumps(units)
    return out.cast(pa.schema(fields, metadata=meta))


def table_units(table: pa.Table) -> dict[str, str]:
    meta = table.schema.metadata or {}
    return orjson.loads(meta[META_UNITS]) if META_UNITS in meta else {}


def _pandas_types(t: pa.DataType) -> Any:
    import pandas as pd

    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    return None


#: pandas dtype of calendar dates (daily/weekly/monthly ``date`` and every other date column):
#: tz-naive, in microseconds like the intraday timestamps and like pandas 3's own parsing of
#: date strings, so ``merge_asof`` with ``pd.to_datetime(...)`` keys needs no cast.
PANDAS_DATE = "datetime64[us]"


def _dates_as_datetimes(table: pa.Table) -> pa.Table:
    """Arrow ``date32`` columns -> tz-naive ``timestamp[us]`` (a date is its midnight), so
    pandas gets a datetime64 column that takes string comparisons, ``.loc`` slices and
    ``resample``."""
    dates = [i for i, f in enumerate(table.schema) if pa.types.is_date32(f.type)]
    for i in dates:
        f = table.schema.field(i)
        table = table.set_column(i, f.with_type(pa.timestamp("us")),
                                 table.column(i).cast(pa.timestamp("us")))
    return table


def to_pandas(table: pa.Table) -> Any:
    """pandas: tz-aware ``datetime64[us, Asia/Taipei]`` timestamps, tz-naive
    ``datetime64[us]`` calendar dates, ``Int64``, ``category``, ``bool``; units in
    ``df.attrs["units"]``."""
    df = _dates_as_datetimes(table).to_pandas(types_mapper=_pandas_types)
    df.attrs["units"] = table_units(table)
    meta = table.schema.metadata or {}
    if META_ENDPOINT in meta:
        df.attrs["endpoint"] = meta[META_ENDPOINT].decode()
    return df


def to_polars(table: pa.Table) -> Any:
    """polars: ``Datetime("us", "Asia/Taipei")``, ``Int64``, ``Categorical``, ``Date``.

    polars frames carry no metadata: read units with :func:`marketframe.units`."""
    import polars as pl

    return pl.from_arrow(table)


def to_frame(table: pa.Table, backend: str) -> Any:
    if backend == "pandas":
        return to_pandas(table)
    if backend == "polars":
        return to_polars(table)
    if backend == "arrow":
        return table
    raise ValueError(f"backend {backend!r} is not one of 'pandas', 'polars', 'arrow'")


def units(obj: Any) -> dict[str, str]:
    """Units of the volume-like columns (lots, shares, TWD, contracts, ...).

    ``obj`` is an endpoint name (documented units), a ``pyarrow.Table`` or a pandas frame from
    marketframe (units resolved for that response, e.g. shares for odd-lot). polars frames carry
    no metadata: pass the endpoint name, or use ``client.fetch_table`` for resolved units.
    """
    if isinstance(obj, str):
        return get(obj).schema.units
    if isinstance(obj, pa.Table):
        return table_units(obj)
    attrs = getattr(obj, "attrs", None)
    if isinstance(attrs, dict) and "units" in attrs:
        return dict(attrs["units"])
    raise TypeError(
        f"cannot read units from {type(obj).__name__}: pass the endpoint name "
        "(marketframe.units('stock.intraday.trades')), a pyarrow.Table or a pandas frame"
    )
