"""The first two stages of a conversion: parse the payload once, and read its rows.

:class:`RowSource` is what a table is converted *for*: anything with a ``name`` (used in
errors and in the table's metadata) and a :class:`Schema`. REST endpoints
(:class:`marketframe.endpoints.Endpoint`), the store (which converts through the client) and
streamed channels (:class:`Channel`) all are row sources; nothing stands in for another type.

:func:`parse` reads a body once into a :class:`Parsed`: the envelope (the document without its
``data`` rows; the store takes the session ``date`` from it) and a :class:`Rows` reader. The two
readers give the same columns: :class:`PyRows` over orjson objects, :class:`ArrowRows` over
the struct array of Arrow's JSON reader (large payloads, see :mod:`marketframe.convert._fastjson`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Protocol

import orjson
import pyarrow as pa

from marketframe._time import session_date
from marketframe.convert import _fastjson
from marketframe.convert._columns import column, finish
from marketframe.convert._extras import extra_array, extra_name, extras
from marketframe.exceptions import SchemaError
from marketframe.schemas import Col, Schema


class RowSource(Protocol):
    """What rows are converted for: a REST endpoint, a streamed channel."""

    @property
    def name(self) -> str: ...

    @property
    def schema(self) -> Schema: ...


@dataclass(frozen=True)
class Channel:
    """A named schema whose rows come without an endpoint (the ``data`` of streamed
    messages: ``Channel("stream.trades", schema)``)."""

    name: str
    schema: Schema


class Rows(Protocol):
    """The rows of one payload, as one of the two readers holds them."""

    def __len__(self) -> int: ...

    def column(self, source: str, col: Col, kind: str) -> pa.Array[Any]:
        """The typed column ``col`` (read as ``kind``) of every row."""
        ...

    def extras(self, known: Sequence[Col], taken: set[str]) -> list[tuple[str, pa.Array[Any]]]:
        """Columns of the fields no column in ``known`` reads (named uniquely in ``taken``)."""
        ...


#: ``dict.get`` typed for ``map`` over rows (as fast as a comprehension, and checked)
_GET: Callable[[dict[str, Any], str], Any] = dict.get


class PyRows:
    """Rows as orjson objects (``dict`` per row)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self._present = 0  # non-null values read by top-level columns
        self._flat = True  # every column read so far was a top-level key

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, source: str, col: Col, kind: str) -> pa.Array[Any]:
        if len(col.path) == 1:
            vals = list(map(_GET, self.rows, repeat(str(col.path[0]))))
            self._present += len(vals) - vals.count(None)
        else:
            vals = [walk(r, col.path) for r in self.rows]
            self._flat = False
        return column(source, col, kind, vals)

    def extras(self, known: Sequence[Col], taken: set[str]) -> list[tuple[str, pa.Array[Any]]]:
        # when every key of every row was read as a known, non-null value there is no unknown
        # field: a cheap count instead of a union of all keys
        if self._flat and sum(map(len, self.rows)) == self._present:
            return []
        return [(k, extra_array(v)) for k, v in extras(self.rows, known, frozenset(), taken)]


class ArrowRows:
    """Rows as the struct array of Arrow's JSON reader (typed already, strictly)."""

    def __init__(self, rows: pa.StructArray) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, source: str, col: Col, kind: str) -> pa.Array[Any]:
        return finish(source, col, kind, self.rows.field(col.path[0]))

    def extras(self, known: Sequence[Col], taken: set[str]) -> list[tuple[str, pa.Array[Any]]]:
        names = {c.path[0] for c in known}
        return [
            (extra_name((f.name,), taken), self.rows.field(f.name))
            for f in self.rows.type
            if f.name not in names
        ]


@dataclass(frozen=True)
class Parsed:
    """A body read once: the envelope (without ``data`` for row schemas) and its rows."""

    envelope: Mapping[str, Any]
    rows: Rows

    @property
    def session_date(self) -> dt.date | None:
        """The envelope's ``date`` (the service's session date), when it has a valid one."""
        return session_date(self.envelope)


def walk(obj: Any, path: Sequence[str | int]) -> Any:
    """The value at ``path`` (keys and list indices) in ``obj``, None when absent."""
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


def parse(
    payload: bytes | str | Mapping[str, Any], source: RowSource, engine: str = "auto"
) -> Parsed:
    """Stage 1 and 2: the body of ``source`` -> its envelope and a rows reader.

    ``engine``: ``"auto"`` reads large row payloads with Arrow's JSON reader, ``"python"``
    always uses orjson, ``"arrow"`` tries Arrow's reader whatever the size (falling back to
    orjson on anything it does not handle)."""
    schema = source.schema
    if isinstance(payload, bytes) and _fastjson.eligible(schema, len(payload), engine):
        fast = _fastjson.read_rows(payload, schema)
        if fast is not None:
            return Parsed(fast[0], ArrowRows(fast[1]))
    if isinstance(payload, bytes | bytearray | memoryview | str):
        try:
            doc = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise SchemaError(source.name, "<body>", f"is not valid JSON ({exc})") from None
    else:
        doc = payload
    if type(doc) is not dict:
        raise SchemaError(source.name, "<body>", "is not a JSON object")
    if not schema.rows:
        return Parsed(doc, PyRows([doc]))
    rows = doc.get("data")
    if rows is None and schema.data_optional:
        rows = []
    envelope = {k: v for k, v in doc.items() if k != "data"}
    if schema.explode is not None:
        rows = explode(source, rows, schema.explode)
    return Parsed(envelope, py_rows(source, rows))


def explode(source: RowSource, rows: Any, key: str) -> list[dict[str, Any]]:
    """One row per element of each item's ``key`` list, the item's other keys repeated:
    ``[{"date": d, "components": [a, b]}]`` -> ``[{"date": d, "components": a}, {"date": d,
    "components": b}]``, so the schema reads ``("components", "weight")`` like any nested
    key. An item whose list is absent, null or empty gives no row; anything else that is not
    a list of objects raises SchemaError."""
    items = py_rows(source, rows).rows
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        inner = item.get(key)
        if inner is None:
            continue
        if type(inner) is not list or (inner and set(map(type, inner)) != {dict}):
            raise SchemaError(source.name, f"data[{i}].{key}", "is not an array of objects")
        out.extend({**item, key: one} for one in inner)
    return out


def py_rows(source: RowSource, rows: Any) -> PyRows:
    """``rows`` (the ``data`` of a payload, or of many streamed messages) as a reader;
    SchemaError unless it is a list of objects."""
    if type(rows) is not list:
        raise SchemaError(source.name, "data", "is missing or not an array")
    if rows and set(map(type, rows)) != {dict}:
        raise SchemaError(source.name, "data", "has items that are not objects")
    return PyRows(rows)
