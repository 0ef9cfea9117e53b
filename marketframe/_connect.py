"""How commands reach the service: the real one when ``MARKETFRAME_API_KEY`` is set, else the
embedded sandbox (so every command works without a key)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def connect(*, seed: int = 0, now: str | None = None, quiet: bool = False,
            **client_options: Any) -> Iterator[Any]:
    """Yield a :class:`marketframe.Client` (the sandbox's while no key is set)."""
    from marketframe.client import Client

    if os.environ.get("MARKETFRAME_API_KEY"):
        base_url = os.environ.get("MARKETFRAME_BASE_URL")
        if base_url:
            client_options.setdefault("base_url", base_url)
        client = Client(**client_options)
        if not quiet:
            print(f"Using the service at {client.base_url}")
        yield client
        return
    from marketframe.sandbox import Sandbox

    with Sandbox(seed=seed, now=now, rate_limit=None) as sb:
        if not quiet:
            print(f"No MARKETFRAME_API_KEY set: using the built-in sandbox at {sb.base_url}")
        client_options.setdefault("cache", False)  # a throwaway server: nothing to keep
        yield Client(sb.api_key, base_url=sb.base_url, **client_options)
