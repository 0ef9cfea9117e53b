"""Shared fixtures: a real sandbox server on 127.0.0.1, started once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

# A frozen "now" just after the close of a trading day keeps every test deterministic.
SANDBOX_NOW = "2026-11-20T14:00:00+08:00"
SANDBOX_SEED = 7


@pytest.fixture(scope="session")
def sandbox() -> Iterator[object]:
    from marketframe.sandbox import Sandbox

    with Sandbox(seed=SANDBOX_SEED, now=SANDBOX_NOW, rate_limit=1_000_000) as sb:
        yield sb


@pytest.fixture(scope="session")
def api_key(sandbox) -> str:  # type: ignore[no-untyped-def]
    return sandbox.keys["advanced"]
