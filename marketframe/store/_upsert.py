"""Merging new rows into one partition: one row per key (the new row wins), in key order,
as the stored physical schema, serialized and hashed for the log. Nothing is written
here; :mod:`._commit` stages and publishes what :func:`prepare` returns. Imports run one
way: this module -> :mod:`._io`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    """What the log records of a partition file: checked on every read and by verify.

    ``lineage``: two files of one path whose column has the same lineage hold the same
    values in it up to the shorter one's row count. A file's columns get its own hash as
    lineage, except a column whose first rows are those of the file it replaced, as they
    were (new rows appended after them): that column keeps the replaced file's lineage. A
    derived state that consumed ``n`` rows of a file continues on the new one, without
    hashing those rows again, when the columns it reads kept their lineage. Recorded as one
    text when every column has the same, else per column; absent in the records of earlier
    stores (each column's lineage is then the file's hash)."""

    size: int
    rows: int
    hash: str
    lineage: str | dict[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"size": self.size, "rows": self.rows, "hash": self.hash}
        if self.lineage is not None:
            out["lineage"] = self.lineage
        return out


def lineage_of(rec: Any, columns: Sequence[str]) -> list[str] | None:
    """The lineages of ``columns`` in the file a log record names (:class:`Written`), None
    where the record accepts a pending version too (the file may be either)."""
    if rec is None or "hash" not in rec or rec.get("pending"):
        return None
    lin = rec.get("lineage") or rec["hash"]
    if isinstance(lin, str):
        return [lin] * len(columns)
    return [str(lin.get(c, rec["hash"])) for c in columns]


def _lineage(
    merged: pa.Table, old: pa.Table | None, was: Mapping[str, Any] | None, h: str
) -> str | dict[str, str]:
    """The lineage of each column of ``merged`` (hashed ``h``): ``old``'s (whose record is
    ``was``) where its rows begin the column unchanged, else ``h``."""
    if old is None or was is None or merged.num_rows < old.num_rows:
        return h
    names = [c for c in merged.column_names if c in old.column_names]
    before = lineage_of(was, names)
    if before is None:
        return h
    head = merged.slice(0, old.num_rows)
    out = {c: h for c in merged.column_names}
    for c, lin in zip(names, before, strict=True):
        a, b = head.column(c), old.column(c)
        if a.type == b.type and a.equals(b):
            out[c] = lin
    first = next(iter(out.values()))
    return first if all(v == first for v in out.values()) else out


def prepare(
    new: pa.Table,
    keys: Sequence[str],
    meta: dict[bytes, bytes],
    constant: Sequence[str] = (),
    old: pa.Table | None = None,
    order: Sequence[str] | None = None,
    was: Mapping[str, Any] | None = None,
) -> tuple[bytes, Written, int]:
    """Merge ``new`` into ``old`` (the partition's current rows); returns the file's new bytes,
    its record and the change in row count. Nothing is written yet. ``was``: the record of
    the file ``old`` was read from, whose columns' lineages are kept where the merged rows
    begin with ``old``'s unchanged (compared, not assumed: a value replaced, a type widened
    or a NaN starts a lineage of its own)."""
    merged = upsert_table(old, physical(new), keys, constant, order)
    merged = merged.replace_schema_metadata({**(merged.schema.metadata or {}), **meta})
    data = serialize(merged)
    h = digest(data)
    rec = Written(len(data), merged.num_rows, h, _lineage(merged, old, was, h))
    return data, rec, merged.num_rows - (old.num_rows if old is not None else 0)
