"""Shared fixtures: a real sandbox server on 127.0.0.1, started once per test session, and a
client of it.

``client`` is a client of the session sandbox (no HTTP cache) returning the frames of
``client_backend``: pandas, unless a module overrides that fixture (``params=["pandas",
"polars"]`` to run on both, or another backend).
Servers with other options (latency, faults, a stream clock) are made where they are used."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="module")
def client_backend() -> str:
    return "pandas"


@pytest.fixture(scope="module")
def client(sandbox: Any, api_key: str, client_backend: str) -> Iterator[Any]:
    from marketframe import Client

    with Client(api_key, base_url=sandbox.base_url, cache=False, backend=client_backend) as c:
        yield c
