"""A partition file's lineage: what lets compute continue a grown file without hashing the
rows it consumed. The rule: two versions of one file whose column has the same lineage hold
the same values in it up to the shorter one's row count, whatever sequence of writes made
them (appends, rewrites of old rows, replaced values, a NaN)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from marketframe.sandbox import Sandbox
from marketframe.store import Store, _upsert
from marketframe.store._dataset import resolve

DAILY = "stock.historical.candles"
KEYS = ["symbol", "date"]
COLUMNS = ["symbol", "date", "close", "volume"]


def _rows(days: list[int], close: float, volume: int) -> pa.Table:
    n = len(days)
    return pa.table(
        {
            "symbol": pa.array(["2330"] * n),
            "date": pa.array(np.array(days, dtype="datetime64[D]"), pa.date32()),
            "close": pa.array([close + d for d in days], pa.float64()),
            "volume": pa.array([volume] * n, pa.int64()),
        }
    )


def _same(x: list[Any], y: list[Any]) -> bool:
    """Equal values, a NaN equal to a NaN."""
    return len(x) == len(y) and all(
        u == v or (u != u and v != v) for u, v in zip(x, y, strict=True)
    )


# a write: days from..from+n (appended after the last day, or over earlier ones), with a
# close and a volume that either repeat what a first write gives or differ
writes = st.lists(
    st.tuples(
        st.integers(0, 12),  # first day
        st.integers(0, 4),  # days
        st.sampled_from([0.0, 0.5, float("nan")]),  # close shift (NaN: a NaN close)
        st.sampled_from([100, 101]),  # volume
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(writes)
def test_a_column_with_one_lineage_holds_the_same_values_up_to_the_shorter_file(
    seq: list[tuple[int, int, float, int]],
) -> None:
    versions: list[tuple[pa.Table, dict[str, Any]]] = []
    old: pa.Table | None = None
    was: dict[str, Any] | None = None
    for first, n, shift, volume in seq:
        new = _rows(list(range(first, first + n)), 10.0 + shift, volume)
        _, rec, _ = _upsert.prepare(new, KEYS, {}, ("symbol",), old, ["date"], was)
        merged = _upsert.upsert_table(old, new, KEYS, ("symbol",), ["date"])
        old, was = merged, rec.as_dict()
        versions.append((merged, was))
    for a, ra in versions:
        for b, rb in versions:
            la, lb = _upsert.lineage_of(ra, COLUMNS), _upsert.lineage_of(rb, COLUMNS)
            assert la is not None and lb is not None
            m = min(a.num_rows, b.num_rows)
            for c, x, y in zip(COLUMNS, la, lb, strict=True):
                if x == y:
                    assert _same(a.column(c)[:m].to_pylist(), b.column(c)[:m].to_pylist())


def test_an_append_keeps_the_lineage_and_a_changed_old_value_starts_one_in_its_column() -> None:
    first = _rows([0, 1, 2], 10.0, 100)
    _, r1, _ = _upsert.prepare(first, KEYS, {}, ("symbol",), None, ["date"], None)
    grown = _rows([3, 4], 10.0, 100)
    _, r2, _ = _upsert.prepare(grown, KEYS, {}, ("symbol",), first, ["date"], r1.as_dict())
    assert r2.lineage == r1.lineage == r1.hash  # one text: every column kept its lineage
    merged = _upsert.upsert_table(first, grown, KEYS, ("symbol",), ["date"])
    moved = _rows([1], 10.0, 101)  # day 1's volume revised, its close as it was
    _, r3, _ = _upsert.prepare(moved, KEYS, {}, ("symbol",), merged, ["date"], r2.as_dict())
    got = _upsert.lineage_of(r3.as_dict(), COLUMNS)
    assert got == [r1.hash, r1.hash, r1.hash, r3.hash]
    # a record that also accepts a pending version names no lineage: the file may be either
    assert _upsert.lineage_of({**r3.as_dict(), "pending": [r2.as_dict()]}, COLUMNS) is None


def test_a_sync_that_appends_keeps_the_recorded_lineage(sb: Sandbox, tmp_path: Path) -> None:
    spec = resolve(DAILY, None, {})
    with Store(tmp_path / "s", api_key=sb.api_key, base_url=sb.base_url) as s:
        s.sync(DAILY, ["2330"], "2026-01-01", "2026-10-31", progress=False)
        (rel,) = list(s._parts.log.files(spec.ds))
        before = s._parts.log.file(spec.ds, rel)
        s.sync(DAILY, ["2330"], "2026-01-01", "2026-11-20", progress=False)
        after = s._parts.log.file(spec.ds, rel)
    assert before is not None and after is not None
    assert after["hash"] != before["hash"] and after["rows"] > before["rows"]
    assert after["lineage"] == before["lineage"]
