"""Stages 3 and 4 of the conversion: a parsed body's typed columns gathered into one table.

What depends only on the schema (each column's kind, the envelope's columns and how to type
them, the fields made so far) is worked out once per row source and kept in a
:class:`_Shape`: a one-row quote of 82 columns spent more on that than on its values.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, cast

import numpy as np
import orjson
import pyarrow as pa

from marketframe.codes import CODE_TABLES
from marketframe.convert._columns import _ARROW_ERRORS, OneRow, finish
from marketframe.convert._extras import extra_array, extras
from marketframe.convert._rows import Parsed, RowSource, walk
from marketframe.endpoints import MINUTE_TIMEFRAMES
from marketframe.exceptions import SchemaError
from marketframe.schemas import Col, Schema, resolve_unit

META_ENDPOINT = b"marketframe.endpoint"
META_UNITS = b"marketframe.units"


@lru_cache(maxsize=4096)
def _field(
    name: str, arrow_type: pa.DataType, nullable: bool, unit: str | None, boolean: bool
) -> pa.Field[Any]:
    """A column's field (shared by every shape that has the column with this type)."""
    meta = {"unit": unit} if unit is not None else {}
    if boolean:  # true/false/null: a nullable boolean in pandas too
        meta["pandas"] = "boolean"
    return pa.field(name, arrow_type, nullable=nullable, metadata=meta or None)


def _kind(col: Col, minute: bool) -> str:
    """The column's kind in this response: a ``date_or_time`` is a time in minute data."""
    if col.kind == "date_or_time":
        return "iso_time" if minute else "date"
    return col.kind


class _Shape:
    """What :func:`build` works out once per row source and timeframe kind."""

    def __init__(self, schema: Schema, minute: bool) -> None:
        self.schema = schema
        self.kinds = [(col, _kind(col, minute)) for col in schema.columns]
        self.envelope = [(col, kind) for col, kind in self.kinds if col.envelope]
        self.env_cols = [col for col, _ in self.envelope]
        self.row_cols = [col for col, _ in self.kinds if not col.envelope]
        self.names = frozenset(col.name for col in schema.columns)
        self.one_row = OneRow(self.envelope)
        #: every column is the envelope's (a quote): the table is one row, see :meth:`whole`
        self.one_row_only = not schema.rows and not self.row_cols
        self.required = [i for i, (col, _) in enumerate(self.envelope) if col.required]
        self.unfinished = [i for i, final in enumerate(self.one_row.final) if not final]
        #: the struct of plain types per units, its fields the table's (see :meth:`whole`)
        self.structs: dict[tuple[str | None, ...], pa.StructType] = {}
        #: (column name, unit) -> (Arrow type, field): a dict read instead of a field made
        #: (or an ``lru_cache`` key hashed: a DataType's hash costs 0.5-1.4 us) per column
        self.fields: dict[tuple[str, str | None], tuple[pa.DataType, pa.Field[Any]]] = {}
        #: the last table schema made, with the fields and units it was made of
        self.last: tuple[tuple[pa.Field[Any], ...], bytes, pa.Schema] | None = None

    def field(self, col: Col, arrow_type: pa.DataType, unit: str | None) -> pa.Field[Any]:
        hit = self.fields.get((col.name, unit))
        if hit is not None and hit[0] == arrow_type:
            return hit[1]
        made = _field(col.name, arrow_type, not col.required, unit, col.kind == "bool")
        self.fields[col.name, unit] = (arrow_type, made)
        return made

    def whole(self, name: str, values: list[Any], units: dict[str, str]) -> pa.Table | None:
        """The table of a one-row answer (:attr:`one_row_only`) from one conversion of a
        one-row struct whose fields are the table's (a column array made in Python costs 1-2
        us: a quote has 82); ``None`` when a value is not plain or a required one is missing,
        for the general path to type or refuse."""
        plain = self.one_row.plain(values)
        if plain is None or any(plain[i] is None for i in self.required):
            return None
        key = tuple(units.get(col.name) for col, _ in self.envelope)
        struct = self.structs.get(key)
        if struct is None:
            struct = self.structs[key] = pa.struct(
                [
                    _field(col.name, t, not col.required, unit, col.kind == "bool")
                    for (col, _), t, unit in zip(
                        self.envelope, self.one_row.types, key, strict=True
                    )
                ]
            )
        try:
            one = cast(pa.StructArray, pa.array([tuple(plain)], type=struct))
        except _ARROW_ERRORS:
            return None  # an integer past int64, say: the general path names the field
        batch = pa.RecordBatch.from_struct_array(one)
        table = pa.Table.from_batches([batch])
        for i in self.unfinished:  # a date from its string, say
            col, kind = self.envelope[i]
            arr = finish(name, col, kind, batch.column(i))
            table = table.set_column(i, self.field(col, arr.type, key[i]), arr)
        return table

    def table_schema(self, fields: list[pa.Field[Any]], units: bytes, name: str) -> pa.Schema:
        """The schema of these fields, the last one made when they are the same objects."""
        last = self.last
        if (
            last is not None
            and last[1] == units
            and len(last[0]) == len(fields)
            and all(map(operator.is_, last[0], fields))
        ):
            return last[2]
        meta: dict[bytes | str, bytes | str] = {META_ENDPOINT: name.encode(), META_UNITS: units}
        made = pa.schema(fields, metadata=meta)
        self.last = (tuple(fields), units, made)  # fields kept alive: ``is`` stays meaningful
        return made


#: (row source name, schema id, minute) -> its shape; a few hundred at most (one per endpoint
#: and channel), cleared past :data:`_MAX_SHAPES` (row sources made on the fly)
_SHAPES: dict[tuple[str, int, bool], _Shape] = {}
_MAX_SHAPES = 1024
_SHAPES_LOCK = threading.Lock()


def _shape(source: RowSource, minute: bool) -> _Shape:
    schema: Schema = source.schema
    key = (source.name, id(schema), minute)
    hit = _SHAPES.get(key)
    if hit is not None and hit.schema is schema:
        return hit
    made = _Shape(schema, minute)
    with _SHAPES_LOCK:
        if len(_SHAPES) >= _MAX_SHAPES:
            _SHAPES.clear()
        _SHAPES[key] = made  # the shape holds its schema: the id is not reused meanwhile
    return made


class _Table:
    """Stage 4: typed columns gathered into one table with units in the metadata."""

    def __init__(
        self,
        source: RowSource,
        shape: _Shape,
        envelope: Mapping[str, Any],
        params: Mapping[str, Any],
        decode: bool,
    ) -> None:
        self.source, self.shape, self.decode = source, shape, decode
        self.arrays: list[pa.Array[Any]] = []
        self.fields: list[pa.Field[Any]] = []
        self.units: dict[str, str] = {}
        self.unit_of = (
            envelope.get("type"),
            envelope.get("market"),
            params.get("type") == "oddlot",
        )

    def add(self, col: Col, arr: pa.Array[Any]) -> None:
        if col.required and arr.null_count:
            raise SchemaError(self.source.name, col.wire_name, "is required but missing or null")
        if self.decode and col.name in CODE_TABLES and len(arr):
            table = CODE_TABLES[col.name]
            coded = cast("pa.DictionaryArray[Any, Any]", arr)  # code columns are "cat"
            codes = cast("list[str]", coded.dictionary.to_pylist())  # a dictionary has no null
            words = [table.get(v, v) for v in codes]
            arr = pa.DictionaryArray.from_arrays(coded.indices, pa.array(words, pa.string()))
        unit = None
        if col.unit:
            unit = self.units[col.name] = resolve_unit(col.unit, *self.unit_of)
        self.arrays.append(arr)
        self.fields.append(self.shape.field(col, arr.type, unit))

    def extra(self, name: str, arr: pa.Array[Any]) -> None:
        self.arrays.append(arr)
        self.fields.append(pa.field(name, arr.type))

    def table(self) -> pa.Table:
        units = orjson.dumps(self.units)
        schema = self.shape.table_schema(self.fields, units, self.source.name)
        return pa.Table.from_arrays(self.arrays, schema=schema)


def build(
    parsed: Parsed,
    source: RowSource,
    params: Mapping[str, Any] | None = None,
    *,
    decode: bool = False,
) -> pa.Table:
    """Stages 3 and 4: the typed columns of a parsed body, then its unknown fields, as one
    table (see :func:`marketframe.convert.to_table`). A one-row answer whose values are all
    plain is typed whole (:meth:`_Shape.whole`); any other, column by column."""
    params = params or {}
    shape = _shape(source, _minute(parsed, params))
    if shape.one_row_only and not decode:
        values = _envelope_values(shape, source, parsed.envelope, params)
        whole = _whole(source, shape, parsed.envelope, params, values)
        if whole is not None:
            return whole
    return by_column(parsed, source, params, decode=decode)


def _minute(parsed: Parsed, params: Mapping[str, Any]) -> bool:
    """Whether the answer is minute data: the request's timeframe, else the envelope's echo
    (a default the server chose)."""
    timeframe = params.get("timeframe", parsed.envelope.get("timeframe", ""))
    return str(timeframe) in MINUTE_TIMEFRAMES


def _envelope_values(
    shape: _Shape, source: RowSource, env: Mapping[str, Any], params: Mapping[str, Any]
) -> list[Any]:
    """The value of each envelope column: the answer's, else the request's parameter."""
    values = []
    for col, _ in shape.envelope:
        value = walk(env, col.path)
        if value is None and col.param and params.get(col.param) is not None:
            value = str(params[col.param]) if col.kind in ("cat", "str") else params[col.param]
        elif value is None and col.param:  # the service's default, which it does not echo
            param = getattr(source, "param_map", {}).get(col.param)
            value = param.default if param is not None else None
        values.append(value)
    return values


def by_column(
    parsed: Parsed,
    source: RowSource,
    params: Mapping[str, Any] | None = None,
    *,
    decode: bool = False,
) -> pa.Table:
    """:func:`build` column by column, whatever the answer (the path every answer but a
    plain one-row one takes, and the one a one-row answer is checked against)."""
    params = params or {}
    schema: Schema = source.schema
    name, env, rows = source.name, parsed.envelope, parsed.rows
    shape = _shape(source, _minute(parsed, params))
    values = _envelope_values(shape, source, env, params)
    # an int32 array (the stubs' overloads of ``pa.array`` take a numpy array for booleans)
    repeat = (
        cast("pa.Int32Array", pa.array(np.zeros(len(rows), dtype=np.int32)))
        if schema.rows
        else None
    )
    out = _Table(source, shape, env, params, decode)
    env_arrays = iter(shape.one_row.arrays(name, values, env.get("date")))
    for col, kind in shape.kinds:
        if not col.envelope:
            out.add(col, rows.column(name, col, kind))
            continue
        one = next(env_arrays)
        out.add(col, one if repeat is None else one.take(repeat))
    taken = set(shape.names)
    for col_name, vals in extras([env], shape.env_cols, schema.ignore, taken):
        arr = extra_array(vals)
        out.extra(col_name, arr if repeat is None else arr.take(repeat))
    if schema.rows:
        for col_name, arr in rows.extras(shape.row_cols, taken):
            out.extra(col_name, arr)
    return out.table()


def _whole(
    source: RowSource,
    shape: _Shape,
    env: Mapping[str, Any],
    params: Mapping[str, Any],
    values: list[Any],
) -> pa.Table | None:
    """A one-row answer's table (:meth:`_Shape.whole`) with its unknown fields and metadata:
    the table the general path of :func:`build` gives, or ``None`` for that path to build."""
    unit_of = (env.get("type"), env.get("market"), params.get("type") == "oddlot")
    units = {col.name: resolve_unit(col.unit, *unit_of) for col, _ in shape.envelope if col.unit}
    table = shape.whole(source.name, values, units)
    if table is None:
        return None
    for col_name, vals in extras([env], shape.env_cols, shape.schema.ignore, set(shape.names)):
        arr = extra_array(vals)
        table = table.append_column(pa.field(col_name, arr.type), arr)
    meta = {META_ENDPOINT: source.name.encode(), META_UNITS: orjson.dumps(units)}
    return table.replace_schema_metadata(meta)
