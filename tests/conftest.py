"""Shared fixtures: a real sandbox server on 127.0.0.1, started once per test session, and a
client of it.

``client`` is a client of the session sandbox (no HTTP cache) returning the frames of
``client_backend``: pandas, unless a module overrides that fixture (``params=["pandas",
"polars"]`` to run on both, or another backend).
A test whose server needs other options (another day, drops, faults, a rate limit, a stream
clock) makes its own with ``make_sandbox``."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
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
def make_sandbox() -> Callable[..., AbstractContextManager[tuple[Any, Any]]]:
    """A sandbox of a test's own and a client of it: ``with make_sandbox(now=..., drop_after=30)
    as (sb, client):``. The sandbox has the suite's seed and frozen ``now`` and no rate limit,
    unless ``options`` say otherwise; the client has no HTTP cache and takes
    ``client_options``. Both stop when the block ends. Session-wide, so a fixture of any
    scope may use it."""
    from marketframe import Client
    from marketframe.sandbox import Sandbox

    @contextmanager
    def make(
        client_options: Mapping[str, Any] | None = None, **options: Any
    ) -> Iterator[tuple[Any, Any]]:
        settings = {"seed": SANDBOX_SEED, "now": SANDBOX_NOW, "rate_limit": None, **options}
        with (
            Sandbox(**settings) as sb,
            Client(sb.api_key, base_url=sb.base_url, cache=False, **(client_options or {})) as c,
        ):
            yield sb, c

    return make


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


@dataclass
class Silent:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""

    port: int
    accepted: threading.Semaphore  # released once per accepted connection

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/marketdata/v1.0"


@pytest.fixture
def silent_server() -> Iterator[Silent]:
    srv = socket.create_server(("127.0.0.1", 0), backlog=64)
    silent = Silent(srv.getsockname()[1], threading.Semaphore(0))
    conns: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conns.append(c)
            silent.accepted.release()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield silent
    stop.set()
    t.join()
    for c in conns:
        c.close()
    srv.close()
