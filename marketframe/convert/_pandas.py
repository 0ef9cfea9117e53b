"""Small typed tables -> pandas, column buffers straight into pandas blocks.

``pyarrow.Table.to_pandas`` has a fixed cost per column (metadata, one extension block each,
``__from_arrow__``) that dominates a one-row quote of 82 columns: about 7 ms, five times the
HTTP round trip. For tables of up to :data:`SMALL` rows this module reads each column's Arrow
buffers with numpy and hands pandas its blocks directly, with the same dtypes as the Arrow path
(``Int64``, ``boolean``, tz-aware ``datetime64[us, tz]``, ``datetime64[us]`` dates,
``category``, ``str``, ``float64``). A column of any other Arrow type makes :func:`small_frame`
answer ``None`` and the caller takes ``to_pandas``; the tests compare both on every endpoint.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import DTypeLike, NDArray

try:  # pandas 3 takes a frame's blocks through a public constructor
    from pandas.api.internals import create_dataframe_from_blocks
except ImportError:  # pandas < 3: the caller takes Arrow's own conversion
    create_dataframe_from_blocks = None

#: rows up to which :func:`small_frame` is used (past it Arrow's C++ conversion is as fast)
SMALL = 4096
_NAT = np.iinfo(np.int64).min
_US_PER_DAY = 86_400_000_000
_MAX_DAYS = np.iinfo(np.int64).max // _US_PER_DAY - 1


# ``np.frombuffer`` is given a ``pyarrow.Buffer`` below: numpy's stubs take no buffer-protocol
# object on Python 3.11 (``collections.abc.Buffer`` is 3.12), hence their ``call-overload``.
def _unpack(arr: pa.Array[Any], buffer: int) -> NDArray[np.bool_]:
    """A bitmap buffer of ``arr`` (0: validity, 1: a boolean's values) as numpy booleans."""
    bits: NDArray[np.uint8] = np.frombuffer(arr.buffers()[buffer], dtype=np.uint8)  # type: ignore[call-overload]
    got = np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")
    return got[arr.offset :].astype(bool)


def _valid(arr: pa.Array[Any]) -> NDArray[np.bool_] | None:
    """Which values are present (``None`` when all are)."""
    return None if arr.null_count == 0 else _unpack(arr, 0)


def _values(arr: pa.Array[Any], dtype: DTypeLike) -> NDArray[Any]:
    """The value buffer of a fixed-width array as numpy (read-only, a view)."""
    values: NDArray[Any] = np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + len(arr))  # type: ignore[call-overload]
    return values[arr.offset :]


@lru_cache(maxsize=1)
def _string_dtype() -> Any:
    """The dtype pyarrow gives string columns (``str`` on pandas 3), or ``None`` when it has no
    ``__from_arrow__`` (object strings: the caller takes the Arrow path)."""
    dtype = pa.array([""], pa.string()).to_pandas().dtype
    return dtype if hasattr(dtype, "__from_arrow__") else None


@lru_cache(maxsize=512)
def _category(words: tuple[str, ...], ordered: bool) -> Any:
    """A categorical dtype per dictionary: built (and its categories checked) once."""
    # an empty dictionary gets object categories from Arrow, as here
    categories = pd.Index(pa.array(words, pa.string()).to_pandas() if words else [], dtype=None)
    return pd.CategoricalDtype(categories, ordered=ordered)


def _group_of(field: pa.Field[Any], t: pa.DataType) -> tuple[Any, ...] | None:
    """The group a column of type ``t`` is converted with, its kind first (columns of one
    group are concatenated and read as one buffer), or ``None`` for a type this reader does
    not take."""
    if pa.types.is_floating(t):
        return ("float",) if t.bit_width == 64 else None
    if pa.types.is_integer(t):
        return ("int", t)
    if pa.types.is_boolean(t):
        nullable = bool(field.metadata and field.metadata.get(b"pandas") == b"boolean")
        return ("boolean",) if nullable else ("bool",)
    if pa.types.is_timestamp(t):
        return ("time", t.tz) if t.unit == "us" else None
    if pa.types.is_date32(t):
        return ("date",)
    if pa.types.is_dictionary(t):
        ok = pa.types.is_string(t.value_type) and pa.types.is_integer(t.index_type)
        return ("category",) if ok else None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ("str", t)
    return None


#: a table shape's plan: the columns of each group (:func:`_group_of`), in order, and the
#: frame's column labels (a string index costs about 80 us)
_Plan = tuple[list[tuple[tuple[Any, ...], list[int]]], Any]
#: the plans of the table shapes seen, by endpoint name: (schema, plan) pairs, a few each
_PLANS: dict[bytes, list[tuple[pa.Schema, _Plan | None]]] = {}
_PLANS_PER_NAME = 8
_PLANS_LOCK = threading.Lock()


def _plan(schema: pa.Schema) -> _Plan | None:
    """The plan of ``schema`` (:data:`_Plan`), or ``None`` when a column's type is not taken;
    worked out once per table shape (a per-column pass over a quote's 82 fields costs more
    than its values), a shape being the schema with its metadata."""
    name = (schema.metadata or {}).get(b"marketframe.endpoint", b"")
    known = _PLANS.setdefault(name, [])
    for seen, plan in known:
        if schema.equals(seen, check_metadata=True):
            return plan

    groups: dict[tuple[Any, ...], list[int]] = {}
    got: _Plan | None = None
    for i, field in enumerate(schema):
        group = _group_of(field, field.type)
        if group is None:
            break
        groups.setdefault(group, []).append(i)
    else:
        got = (list(groups.items()), pd.Index(schema.names))
    with _PLANS_LOCK:
        if len(known) >= _PLANS_PER_NAME:
            known.pop(0)
        known.append((schema, got))
    return got


def _masks(joined: pa.Array[Any], shape: tuple[int, int]) -> NDArray[np.bool_]:
    """Which values of a concatenated group are missing, one row per column."""
    if joined.null_count == 0:
        return np.zeros(shape, dtype=bool)
    return ~_unpack(joined, 0).reshape(shape)


def small_frame(table: pa.Table) -> Any:
    """``table`` as a pandas frame, or ``None`` when it has more than :data:`SMALL` rows or a
    column type this reader does not take (the caller then uses Arrow's ``to_pandas``).

    Columns are taken by group (floats, each integer type, booleans, times per zone, dates):
    a group's arrays are concatenated by Arrow and read as one buffer, a 2-D block or one
    1-D array per column cut from it; a per-column read costs more than the values of a
    one-row table."""
    n = table.num_rows
    if n > SMALL or create_dataframe_from_blocks is None:
        return None

    plan = _plan(table.schema)
    if plan is None:
        return None
    by_group, labels = plan
    arrays: list[pa.Array[Any]] = []
    for col in table.columns:
        if col.num_chunks == 1:
            arrays.append(col.chunk(0))  # type: ignore[arg-type]  # an Array: the stubs say ChunkedArray
        elif col.num_chunks == 0:
            return None
        else:
            combined = col.combine_chunks()
            arrays.append(combined if isinstance(combined, pa.Array) else combined.chunk(0))
    groups = {group: [(i, arrays[i]) for i in at] for group, at in by_group}
    blocks: list[tuple[Any, NDArray[Any]]] = []
    dates: list[tuple[NDArray[Any], list[int]]] = []  # datetime64[us] 2-D parts, one block
    for group, cols in groups.items():
        kind = group[0]
        at = [i for i, _ in cols]
        shape = (len(cols), n)
        if kind == "category":  # few columns, each its own dictionary: one by one
            blocks += [(_category_array(arr), np.array([i])) for i, arr in cols]
            continue
        joined = pa.concat_arrays([arr for _, arr in cols])
        if kind == "str":
            if (dtype := _string_dtype()) is None:
                return None
            # pandas' str takes large_string: one cast for the group, a slice per column
            large = joined.cast(pa.large_string())
            for k, i in enumerate(at):
                blocks.append((dtype.__from_arrow__(large.slice(k * n, n)), np.array([i])))
            continue
        if kind == "float":
            floats = _values(joined, np.float64).reshape(shape)
            if joined.null_count:
                floats = np.where(_masks(joined, shape), np.nan, floats)
            blocks.append((floats, np.array(at)))
        elif kind == "int":
            ints = _values(joined, group[1].to_pandas_dtype()).astype(np.int64).reshape(shape)
            mask = _masks(joined, shape)  # both copies: each column's rows are its own
            for k, i in enumerate(at):
                blocks.append((pd.arrays.IntegerArray(ints[k], mask[k]), np.array([i])))
        elif kind == "boolean":
            values, mask = _unpack(joined, 1).reshape(shape), _masks(joined, shape)
            for k, i in enumerate(at):
                blocks.append((pd.arrays.BooleanArray(values[k], mask[k]), np.array([i])))
        elif kind == "bool":
            if joined.null_count:  # pyarrow makes an object column of True/False/None
                return None
            blocks.append((_unpack(joined, 1).reshape(shape), np.array(at)))
        elif kind == "date":
            days = _values(joined, np.int32).astype(np.int64)
            missing = _masks(joined, shape).reshape(-1)
            days[missing] = 0
            if len(days) and max(-days.min(), days.max()) > _MAX_DAYS:
                return None  # past datetime64[us]'s range: Arrow's cast raises, as it should
            stamps = days * _US_PER_DAY
            stamps[missing] = _NAT
            dates.append((stamps.view("M8[us]").reshape(shape), at))
        elif group[1] is not None:  # ("time", tz): the zone's columns as one 2-D block
            # pandas' own reader of Arrow times (a view of Arrow's buffer: copied, writable)
            zoned = _zone(group[1]).__from_arrow__(joined).copy()
            blocks.append((zoned.reshape(shape), np.array(at)))
        else:  # ("time", None)
            stamps = _values(joined, np.int64)
            if joined.null_count:
                stamps = np.where(_masks(joined, shape).reshape(-1), _NAT, stamps)
            else:
                stamps = stamps.copy()  # writable, not Arrow's buffer
            dates.append((stamps.view("M8[us]").reshape(shape), at))
    if dates:
        blocks.append(
            (np.vstack([d for d, _ in dates]), np.array([i for _, at in dates for i in at]))
        )
    # a view of the shape's labels: its own object (``columns.name`` may be set)
    return create_dataframe_from_blocks(blocks, index=pd.RangeIndex(n), columns=labels.view())


@lru_cache(maxsize=64)
def _zone(tz: str) -> Any:
    """The pandas dtype of ``timestamp[us, tz]`` (its ``__from_arrow__`` is pyarrow's own)."""
    return pd.DatetimeTZDtype(unit="us", tz=tz)


def _category_array(arr: pa.Array[Any]) -> Any:
    coded = cast("pa.DictionaryArray[Any, Any]", arr)  # what a dictionary type holds
    t = coded.type
    codes = _values(coded.indices, t.index_type.to_pandas_dtype()).astype(np.int64)
    valid = _valid(arr)
    if valid is not None:
        codes[~valid] = -1
    words = tuple(coded.dictionary.to_pylist())
    # Arrow's indices are within the dictionary: no check of each code
    return pd.Categorical.from_codes(codes, dtype=_category(words, t.ordered), validate=False)
