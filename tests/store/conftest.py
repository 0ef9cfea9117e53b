"""Fixtures of the store tests: each module gets its own sandbox (tests move its clock)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

from ._helpers import NOW


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
