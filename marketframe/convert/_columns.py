"""One column: JSON values -> a typed Arrow array, or a :class:`SchemaError` naming the field.

The third stage of :func:`marketframe.convert.to_table`. Each kind of :class:`Col` accepts
some JSON types (:data:`EXPECTED`); values are checked with ``set(map(type, values))`` and
handed to ``pa.array`` with the kind's JSON-level type, then :func:`finish` gives the
column's final Arrow type (the Arrow reader of :mod:`marketframe.convert._fastjson` enters here).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from marketframe._time import TAIPEI
from marketframe.exceptions import SchemaError
from marketframe.schemas import ARROW_TYPES, JSON_TYPES, TZ, Col

_NONE = type(None)
_TYPE_NAMES = {
    int: "number",
    float: "number",
    str: "string",
    bool: "boolean",
    dict: "object",
    list: "array",
}
#: kind -> (JSON types it accepts, how an error message names them)
EXPECTED: dict[str, tuple[set[type], str]] = {
    "float": ({int, float}, "a number"),
    "int": ({int}, "an integer"),
    "int_str": ({int, str}, "an integer or a string of digits"),
    "time_us": ({int}, "epoch microseconds (an integer)"),
    "iso_time": ({str}, "an ISO 8601 time string with offset"),
    "hhmmss": ({str}, "an HHmmss string"),
    "date": ({str}, "a YYYY-MM-DD string"),
    "date_or_time": ({str}, "a date or time string"),
    "month": ({str}, "a YYYY-MM (or YYYY-MM-DD) string"),
    "str": ({str}, "a string"),
    "cat": ({str}, "a string code"),
    "flag": ({bool}, "a boolean"),
    "bool": ({bool}, "a boolean"),
}


#: kinds whose Python values pyarrow converts to the final type directly (a cast or
#: ``fill_null`` after ``pa.array`` costs more than the conversion for small columns)
_DIRECT = frozenset({"time_us", "flag", "cat"})
#: kinds whose JSON-level Arrow type is their final type (:func:`finish` returns them as is)
_AS_IS = frozenset({"float", "int", "int_str", "str", "bool"})


def _fail(source: str, field: str, types: set[type], kind: str) -> SchemaError:
    got = ", ".join(sorted({_TYPE_NAMES.get(t, t.__name__) for t in types}))
    return SchemaError(source, field, f"has JSON {got} where {EXPECTED[kind][1]} is expected")


def _unreadable(source: str, col: Col, kind: str, exc: Exception) -> SchemaError:
    return SchemaError(
        source,
        col.wire_name,
        f"cannot be read as {EXPECTED[kind][1]} ({type(exc).__name__}: {str(exc)[:120]})",
    )


def _prepared(
    source: str, col: Col, kind: str, vals: list[Any], date: Any
) -> tuple[list[Any], pa.DataType, bool]:
    """The checks of :func:`column` and its Python-level fixes: the values to convert, the
    Arrow type to convert them to, and whether that type is final (no :func:`finish`)."""
    types = set(map(type, vals))
    has_none = _NONE in types
    types.discard(_NONE)
    if not types <= EXPECTED[kind][0]:
        if not (kind in ("int", "time_us") and types <= {int, float}):
            raise _fail(source, col.wire_name, types, kind)
        # integral floats (1.0) are accepted for integer columns; 1.5 is not
        if any(v is not None and v != int(v) for v in vals if type(v) is float):
            raise SchemaError(
                source, col.wire_name, "has a fractional number where an integer is expected"
            )
    try:
        if kind == "hhmmss":
            day = dt.date.fromisoformat(date) if isinstance(date, str) else None
            return [_hhmmss(day, v) for v in vals], ARROW_TYPES["hhmmss"], True
        if kind == "int_str" and str in types:
            vals = [int(v) if type(v) is str else v for v in vals]
    except (ValueError, TypeError, OverflowError) as exc:
        raise _unreadable(source, col, kind, exc) from None
    if kind in _DIRECT:  # Python values straight to the final type: no cast after
        if kind == "time_us" and float in types:
            vals = [int(v) if type(v) is float else v for v in vals]
        elif kind == "flag" and has_none:
            vals = [v is True for v in vals]  # absent means False
        return vals, ARROW_TYPES[kind], True
    return vals, JSON_TYPES[kind], False


_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError, OverflowError)


def column(source: str, col: Col, kind: str, vals: list[Any], date: Any = None) -> pa.Array[Any]:
    """Typed Arrow array of one column of ``source``; ``date`` is the envelope's session date
    (``hhmmss`` times are combined with it). SchemaError when a value has the wrong JSON
    type."""
    vals, arrow_type, final = _prepared(source, col, kind, vals, date)
    try:
        raw = pa.array(vals, type=arrow_type)
    except _ARROW_ERRORS as exc:
        raise _unreadable(source, col, kind, exc) from None
    return raw if final else finish(source, col, kind, raw)


@lru_cache(maxsize=256)
def _struct(types: tuple[pa.DataType, ...]) -> pa.StructType:
    return pa.struct([pa.field(f"f{i}", t) for i, t in enumerate(types)])


def row(source: str, cells: list[tuple[Col, str, Any]], date: Any = None) -> list[pa.Array[Any]]:
    """One value per column (an envelope's fields): the arrays :func:`column` gives, built in
    one Arrow conversion of a one-row struct instead of one ``pa.array`` call per column
    (whose fixed cost is most of a one-row quote's typing)."""
    if not cells:
        return []
    try:
        prepared = [_prepared(source, col, kind, [value], date) for col, kind, value in cells]
        values = tuple(vals[0] for vals, _, _ in prepared)
        struct = _struct(tuple(t for _, t, _ in prepared))
        whole = cast(pa.StructArray, pa.array([values], type=struct))
    except (SchemaError, *_ARROW_ERRORS):
        # column by column, in the schema's order: the error names the first bad field, as
        # one column at a time would (a bad date is the date's error, not the time's built on it)
        return [column(source, col, kind, [value], date) for col, kind, value in cells]
    return [
        raw if final else finish(source, col, kind, raw)
        for raw, (col, kind, _), (_, _, final) in zip(whole.flatten(), cells, prepared, strict=True)
    ]


def _plain(kind: str) -> tuple[frozenset[type], pa.DataType, bool]:
    """The JSON types a value of ``kind`` is converted from as it is (those :func:`_prepared`
    neither refuses nor rewrites but an absent flag, which :meth:`OneRow.plain` makes False),
    the Arrow type it is converted to, and whether that type is final."""
    accepted = EXPECTED[kind][0] | {_NONE}
    if kind == "hhmmss":  # combined with the session's date in Python
        accepted = set()
    elif kind == "int_str":  # a string of digits is made an int first
        accepted = {int, _NONE}
    if kind in _DIRECT:
        return frozenset(accepted), ARROW_TYPES[kind], True
    return frozenset(accepted), JSON_TYPES[kind], kind in _AS_IS


class OneRow:
    """:func:`row` for a fixed list of columns (an envelope's, worked out once per schema):
    the values of each Arrow type converted in one ``pa.array`` call and sliced per column,
    when every value is one its kind takes as it is; else :func:`row` itself."""

    def __init__(self, cols: Sequence[tuple[Col, str]]) -> None:
        self.cols = list(cols)
        plain = [_plain(kind) for _, kind in self.cols]
        self.accept = [accepted for accepted, _, _ in plain]
        #: each column's Arrow type for its plain values, and whether it is final
        self.types = [arrow_type for _, arrow_type, _ in plain]
        self.final = [final for _, _, final in plain]
        self.flags = [i for i, (_, kind) in enumerate(self.cols) if kind == "flag"]
        groups: dict[Any, tuple[pa.DataType, list[int]]] = {}
        for i, (_, arrow_type, _) in enumerate(plain):
            # a dictionary column alone: converted together, columns would share one dictionary
            key = i if pa.types.is_dictionary(arrow_type) else arrow_type
            groups.setdefault(key, (arrow_type, []))[1].append(i)
        self.groups = list(groups.values())

    def plain(self, values: Sequence[Any]) -> list[Any] | None:
        """``values`` as the plain types take them (an absent flag is False), or ``None``
        when one is not taken as it is."""
        if not all(type(v) in ok for v, ok in zip(values, self.accept, strict=True)):
            return None
        got = list(values)
        for i in self.flags:
            got[i] = got[i] is True
        return got

    def arrays(self, source: str, values: Sequence[Any], date: Any = None) -> list[pa.Array[Any]]:
        """One array per column (those :func:`row` gives for the same cells)."""
        plain = self.plain(values)
        if plain is not None:
            out: list[Any] = [None] * len(plain)
            try:
                for arrow_type, at in self.groups:
                    got = pa.array([plain[i] for i in at], type=arrow_type)
                    if len(at) == 1:
                        out[at[0]] = got
                        continue
                    for k, i in enumerate(at):
                        out[i] = got.slice(k, 1)
            except _ARROW_ERRORS:
                pass  # an integer past int64, say: row() names the field
            else:
                return [
                    raw if final else finish(source, col, kind, raw)
                    for raw, (col, kind), final in zip(out, self.cols, self.final, strict=True)
                ]
        cells = [(col, kind, v) for (col, kind), v in zip(self.cols, values, strict=True)]
        return row(source, cells, date)


def finish(source: str, col: Col, kind: str, raw: pa.Array[Any]) -> pa.Array[Any]:
    """JSON-level array (float64/int64/bool/string) -> the column's final Arrow type."""
    # (the compute functions take Python scalars, which the stubs do not: ``False``, ``7``,
    # ``"-01"`` below are their ``arg-type`` / ``call-overload``)
    try:
        if kind in _AS_IS:
            return raw
        if kind == "time_us":
            return raw.cast(ARROW_TYPES["time_us"])
        if kind == "flag":
            return pc.fill_null(raw, False)  # type: ignore[arg-type]
        if kind == "cat":
            return raw.dictionary_encode()
        if kind == "date":
            return raw.cast(pa.date32())
        if kind == "month":  # "2026-01" -> 2026-01-01; a full date is taken as it is
            text = cast(pa.StringArray, raw)  # the kind's JSON-level type is a string
            monthly = pc.equal(pc.utf8_length(text), 7)  # type: ignore[call-overload]
            with_day = pc.binary_join_element_wise(text, "-01", "")  # type: ignore[call-overload]
            full: pa.Array[Any] = pc.if_else(monthly, with_day, raw)
            return full.cast(pa.date32())
        if kind == "iso_time":
            return raw.cast(pa.timestamp("us", tz=TZ))
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
        raise _unreadable(source, col, kind, exc) from None
    raise AssertionError(kind)  # pragma: no cover


def _hhmmss(day: dt.date | None, text: str | None) -> dt.datetime | None:
    if text is None or day is None:
        return None
    if len(text) != 6 or not text.isdigit():
        raise ValueError(f"not HHmmss: {text!r}")
    t = dt.time(int(text[:2]), int(text[2:4]), int(text[4:]))
    return dt.datetime.combine(day, t, TAIPEI)
