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

from functools import lru_cache
from typing import Any, cast

import numpy as np
import pyarrow as pa
from numpy.typing import DTypeLike, NDArray

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
    import pandas as pd

    # an empty dictionary gets object categories from Arrow, as here
    categories = pd.Index(pa.array(words, pa.string()).to_pandas() if words else [], dtype=None)
    return pd.CategoricalDtype(categories, ordered=ordered)


def _create() -> Any:
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:  # pandas < 3
        return None
    return create_dataframe_from_blocks


def small_frame(table: pa.Table) -> Any:
    """``table`` as a pandas frame, or ``None`` when it has more than :data:`SMALL` rows or a
    column type this reader does not take (the caller then uses Arrow's ``to_pandas``)."""
    n = table.num_rows
    if n > SMALL or (create := _create()) is None:
        return None
    import pandas as pd

    floats: list[np.ndarray] = []
    float_at: list[int] = []
    dates: list[np.ndarray] = []
    date_at: list[int] = []
    blocks: list[tuple[Any, np.ndarray]] = []
    zoned: dict[str, list[tuple[int, np.ndarray]]] = {}
    for i, (field, col) in enumerate(zip(table.schema, table.columns, strict=True)):
        if col.num_chunks != 1:
            if col.num_chunks == 0:
                return None
            combined = col.combine_chunks()
            arr = combined if isinstance(combined, pa.Array) else combined.chunk(0)
        else:
            arr = col.chunk(0)  # type: ignore[assignment]  # an Array: the stubs say ChunkedArray
        t = arr.type
        valid = _valid(arr)
        if pa.types.is_floating(t) and t.bit_width == 64:
            values = _values(arr, np.float64)
            if valid is not None:
                values = np.where(valid, values, np.nan)
            floats.append(values)
            float_at.append(i)
        elif pa.types.is_integer(t):
            values = _values(arr, t.to_pandas_dtype()).astype(np.int64)  # a copy: writable
            mask = np.zeros(n, dtype=bool) if valid is None else ~valid
            blocks.append((pd.arrays.IntegerArray(values, mask), np.array([i])))
        elif pa.types.is_boolean(t):
            boolean = bool(field.metadata and field.metadata.get(b"pandas") == b"boolean")
            if boolean:
                mask = np.zeros(n, dtype=bool) if valid is None else ~valid
                blocks.append((pd.arrays.BooleanArray(_unpack(arr, 1), mask), np.array([i])))
            elif valid is None:
                blocks.append((_unpack(arr, 1)[None, :], np.array([i])))
            else:  # pyarrow makes an object column of True/False/None
                return None
        elif pa.types.is_timestamp(t) and t.unit == "us":
            values = _values(arr, np.int64)
            values = values.copy() if valid is None else np.where(valid, values, _NAT)
            if t.tz is None:
                dates.append(values.view("M8[us]"))
                date_at.append(i)
            else:
                zoned.setdefault(t.tz, []).append((i, values))
        elif pa.types.is_date32(t):
            days = _values(arr, np.int32).astype(np.int64)
            if valid is not None:
                days[~valid] = 0
            if len(days) and max(-days.min(), days.max()) > _MAX_DAYS:
                return None  # past datetime64[us]'s range: Arrow's cast raises, as it should
            values = days * _US_PER_DAY
            if valid is not None:
                values[~valid] = _NAT
            dates.append(values.view("M8[us]"))
            date_at.append(i)
        elif pa.types.is_dictionary(t) and pa.types.is_string(t.value_type):
            if not pa.types.is_integer(t.index_type):
                return None
            coded = cast("pa.DictionaryArray[Any, Any]", arr)  # what a dictionary type holds
            codes = _values(coded.indices, t.index_type.to_pandas_dtype()).astype(np.int64)
            if valid is not None:
                codes[~valid] = -1
            words = tuple(coded.dictionary.to_pylist())
            cat = pd.Categorical.from_codes(codes, dtype=_category(words, t.ordered))
            blocks.append((cat, np.array([i])))
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            if (dtype := _string_dtype()) is None:
                return None
            blocks.append((dtype.__from_arrow__(arr), np.array([i])))
        else:
            return None
    if floats:
        blocks.append((np.vstack(floats), np.array(float_at)))
    if dates:
        blocks.append((np.vstack(dates), np.array(date_at)))
    for tz, cols in zoned.items():
        # one conversion to the zone for every column of it, then a view of each
        joined = pd.DatetimeIndex(np.concatenate([v for _, v in cols]).view("M8[us]"))
        zoned_arr = joined.tz_localize("UTC").tz_convert(tz).array
        for k, (i, _) in enumerate(cols):
            blocks.append((zoned_arr[k * n : (k + 1) * n], np.array([i])))
    columns = pd.Index(table.column_names)
    return create(blocks, index=pd.RangeIndex(n), columns=columns)
