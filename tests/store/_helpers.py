"""Helpers shared by the store tests (imported relatively, like tests/sandbox/spec_table)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

NOW = "2026-11-20T14:00:00+08:00"  # a Friday, after the close
ROOT = Path(__file__).resolve().parents[2]


def subprocess_env() -> dict[str, str]:
    """Environment for a child Python that imports this worktree's marketframe."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def plain(t: pa.Table) -> pa.Table:
    """``t`` in one chunk with its dictionary columns decoded (encodings may differ)."""
    cols = [
        c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c
        for c in t.combine_chunks().itercolumns()
    ]
    return pa.table(cols, names=t.column_names)


def arrow_equal(a: pa.Table, b: pa.Table) -> None:
    """Row-for-row, value-for-value equality (dictionary encodings may differ; NaN equals
    NaN: an indicator's warm-up)."""
    pa_a, pa_b = plain(a), plain(b)
    assert pa_a.column_names == pa_b.column_names
    assert pa_a.num_rows == pa_b.num_rows
    for name in pa_a.column_names:
        x, y = pa_a.column(name), pa_b.column(name)
        if pa.types.is_floating(x.type) and pa.types.is_floating(y.type):
            nan_x, nan_y = pc.fill_null(pc.is_nan(x), False), pc.fill_null(pc.is_nan(y), False)
            assert nan_x.equals(nan_y), name
            x, y = pc.if_else(nan_x, 0.0, x), pc.if_else(nan_y, 0.0, y)
        assert x.equals(y), name
