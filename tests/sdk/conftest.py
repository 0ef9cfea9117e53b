"""Fixtures of the SDK-parity tests: marketframe's client on the session sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from marketframe import Client


@pytest.fixture(scope="module")
def client(sandbox: Any) -> Iterator[Client]:
    with Client(sandbox.api_key, base_url=sandbox.base_url, cache=False) as c:
        yield c
