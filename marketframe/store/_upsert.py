"""Merging new rows into one partition: one row per key (the new row wins), in key order,
as the stored physical schema, serialized and hashed for the log. Nothing is written
here; :mod:`._commit` stages and publishes what :func:`prepare` returns. Imports run one
way: this module -> :mod:`._io`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from marketframe.store._io import digest, serialize


def _key_table(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    cols = []
    for k in keys:
        c = table.column(k)
        if pa.types.is_dictionary(c.type):
            c = c.cast(c.type.value_type)
        cols.append(c)
    return pa.Table.from_arrays(cols, names=list(keys))


def _strictly_increasing(col: pa.ChunkedArray[Any] | pa.Array[Any]) -> bool:
    if len(col) < 2 or col.null_count:
        return len(col) < 2 and not col.null_count
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return bool(pc.all(pc.greater(arr[1:], arr[:-1])).as_py())


def upsert_table(
    old: pa.Table | None,
    new: pa.Table,
    keys: Sequence[str],
    constant: Sequence[str] = (),
    order: Sequence[str] | None = None,
) -> pa.Table:
    """``old`` plus ``new``, one row per key (``new`` wins), sorted by the key, or by ``order``
    (a prefix of the key, e.g. without the item of a date) with ties in arrival order.

    ``constant`` names key columns known to hold one value in this partition (``symbol`` and
    ``timeframe`` of a symbol partition): when the remaining key is a single column that is
    already strictly increasing in a fresh partition, there is nothing to merge or sort.
    """
    order = list(keys if order is None else order)
    rest = [k for k in keys if k not in constant]
    if old is None and len(rest) == 1 and _strictly_increasing(new.column(rest[0])):
        return new
    combined = new if old is None else pa.concat_tables([old, new], promote_options="permissive")
    combined = combined.combine_chunks().unify_dictionaries() if old is not None else combined
    kt = _key_table(combined, keys)
    kt = kt.append_column("__i", pa.array(np.arange(combined.num_rows, dtype=np.int64)))
    last = kt.group_by(list(keys), use_threads=False).aggregate([("__i", "max")])
    keep = last.column("__i_max")
    ordered = pc.sort_indices(
        last, sort_keys=[(k, "ascending") for k in order] + [("__i_max", "ascending")]
    )
    return combined.take(pc.take(keep, ordered))


def physical(table: pa.Table) -> pa.Table:
    """``table`` as stored: dictionary (categorical) columns decoded to their value type, so
    every file of a dataset has one schema whatever categories it holds."""
    if not any(pa.types.is_dictionary(f.type) for f in table.schema):
        return table
    schema = table.schema  # set() keeps the schema's metadata
    for i, f in enumerate(schema):
        if pa.types.is_dictionary(f.type):
            schema = schema.set(i, f.with_type(f.type.value_type))
    return table.cast(schema)


@dataclass(frozen=True)
class Written:
    """What the log records of a partition file: checked on every read and by verify."""

    size: int
    rows: int
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return {"size": self.size, "rows": self.rows, "hash": self.hash}


def prepare(
    new: pa.Table,
    keys: Sequence[str],
    meta: dict[bytes, bytes],
    constant: Sequence[str] = (),
    old: pa.Table | None = None,
    order: Sequence[str] | None = None,
) -> tuple[bytes, Written, int]:
    """Merge ``new`` into ``old`` (the partition's current rows); returns the file's new bytes,
    its record and the change in row count. Nothing is written yet."""
    merged = upsert_table(old, physical(new), keys, constant, order)
    merged = merged.replace_schema_metadata({**(merged.schema.metadata or {}), **meta})
    data = serialize(merged)
    rec = Written(len(data), merged.num_rows, digest(data))
    return data, rec, merged.num_rows - (old.num_rows if old is not None else 0)
