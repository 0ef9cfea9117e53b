"""Fixtures of the store tests: each module gets its own sandbox (tests move its clock)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

NOW = "2026-11-20T14:00:00+08:00"  # a Friday, after the close
ROOT = Path(__file__).resolve().parents[2]


def subprocess_env() -> dict[str, str]:
    """Environment for a child Python that imports this worktree's marketframe."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(seed=11, now=NOW, rate_limit=None) as s:
        yield s


@pytest.fixture
def make_store(sb: Sandbox, tmp_path: Path) -> Iterator[Callable[..., Store]]:
    made: list[Store] = []

    def make(name: str = "store", **kw: object) -> Store:
        st = Store(tmp_path / name, api_key=sb.api_key, base_url=sb.base_url, **kw)  # type: ignore[arg-type]
        made.append(st)
        return st

    yield make
    for st in made:
        st.close()


def arrow_equal(a: pa.Table, b: pa.Table) -> None:
    """Row-for-row, value-for-value equality (dictionary encodings may differ)."""
    def plain(t: pa.Table) -> pa.Table:
        cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c
                for c in t.itercolumns()]
        return pa.table(cols, names=t.column_names)

    pa_a, pa_b = plain(a.combine_chunks()), plain(b.combine_chunks())
    assert pa_a.column_names == pa_b.column_names
    assert pa_a.num_rows == pa_b.num_rows
    for name in pa_a.column_names:
        assert pa_a.column(name).equals(pa_b.column(name)), name
