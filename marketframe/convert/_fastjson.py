"""The fast path for large row payloads: Arrow's C++ JSON reader instead of Python objects.

The whole body is one JSON object, read as a one-row table whose ``data`` column is a list of
structs typed from the schema (float64 / int64 / bool / string per field). Arrow's reader is
strict: a boolean where a number is expected, ``1.5`` in an integer field or a string in a
number field is an error, never a coercion. On any error, or on anything this path does not
handle (zero-padded string serials, nested unknown objects, values the reader would infer as
timestamps), :func:`read_rows` returns ``None`` and the caller uses the orjson path, which
either converts the payload or raises the precise ``SchemaError``. Both paths give the same
table; a hypothesis test checks it.
"""

from __future__ import annotations

import io
from typing import Any, cast

import pyarrow as pa
import pyarrow.json as pj

from marketframe.schemas import JSON_TYPES, Schema

#: bodies smaller than this go through orjson (no gain below it)
MIN_BYTES = 1 << 20

_SIMPLE = (
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_boolean,
    pa.types.is_string,
    pa.types.is_null,
)


def eligible(schema: Schema, size: int, engine: str = "auto") -> bool:
    """Whether to try this path (``engine``: auto by size, ``arrow`` always, ``python`` never)."""
    if engine == "python" or not schema.rows or schema.explode is not None:
        return False
    if not all(len(c.path) == 1 for c in schema.columns):
        return False
    return engine == "arrow" or size >= MIN_BYTES


def _explicit(schema: Schema) -> pa.Schema:
    # one key each (see :func:`eligible`): an object's key, never a list index
    env = [pa.field(cast(str, c.path[0]), JSON_TYPES[c.kind]) for c in schema.columns if c.envelope]
    row = pa.struct(
        [
            pa.field(cast(str, c.path[0]), JSON_TYPES[c.kind])
            for c in schema.columns
            if not c.envelope
        ]
    )
    return pa.schema([*env, pa.field("data", pa.list_(row))])


def read_rows(body: bytes, schema: Schema) -> tuple[dict[str, Any], pa.StructArray] | None:
    """(envelope as a dict, rows as one StructArray), or None to use the orjson path."""
    try:
        table = pj.read_json(
            io.BytesIO(body),
            read_options=pj.ReadOptions(block_size=len(body) + 64, use_threads=False),
            parse_options=pj.ParseOptions(
                explicit_schema=_explicit(schema),
                unexpected_field_behavior="infer",
                newlines_in_values=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != 1:
        return None
    # the explicit schema makes ``data`` a list of structs
    data = cast("pa.ListArray[Any]", table.column("data").combine_chunks())
    if data.null_count:
        return None
    rows = cast(pa.StructArray, data.flatten())
    if rows.null_count:
        return None
    if not all(any(ok(f.type) for ok in _SIMPLE) for f in rows.type):
        return None  # nested or inferred-timestamp unknown fields: the orjson path flattens them
    envelope: dict[str, Any] = {}
    for name in table.column_names:
        if name == "data":
            continue
        col = table.column(name)
        if not any(ok(col.type) for ok in _SIMPLE):
            return None
        envelope[name] = col[0].as_py()
    return envelope, rows
