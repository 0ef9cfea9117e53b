"""How commands reach the service: the real one when a credential variable is set
(``MARKETFRAME_API_KEY``, ``MARKETFRAME_BEARER_TOKEN`` or ``MARKETFRAME_SDK_TOKEN``, exactly
one), else the embedded sandbox (so every command works without a key)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from marketframe._http.credential import from_environment
from marketframe.client._client import ENV_KEY, Client


def connect(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    seed: int = 0,
    now: str | None = None,
    notice: TextIO | None = None,
    quiet: bool = False,
    **client_options: Any,
) -> Any:
    """A :class:`marketframe.Client` for a command: ``with connect() as client:`` closes it
    at the block's end.

    With ``api_key``: that key, at ``base_url`` (else ``MARKETFRAME_BASE_URL``, else the
    real service), said nowhere (the caller chose it). Else, with a credential variable set
    (``MARKETFRAME_API_KEY``, ``MARKETFRAME_BEARER_TOKEN`` or ``MARKETFRAME_SDK_TOKEN``;
    several: :class:`ConfigurationError`): that credential, at the same URL. Without one: a
    sandbox, the one at ``base_url`` when given (e.g. a ``marketframe sandbox --port 8000``
    already running) or an embedded one. ``notice`` is where to say which (default stderr,
    which keeps a command's data output clean); ``quiet`` says nothing.
    """
    notice = None if quiet else (notice or sys.stderr)
    base_url = base_url or os.environ.get("MARKETFRAME_BASE_URL")
    if base_url:
        client_options["base_url"] = base_url
    if api_key:
        return Client(api_key, **client_options)
    if from_environment():
        client = Client(**client_options)
        if notice:
            print(f"Using the service at {client.base_url}", file=notice)
        return client
    client_options.setdefault("cache", False)  # a sandbox: nothing worth keeping
    if base_url:
        # the emulator's keys: its module (aiohttp's server, about 0.1 s) only for a sandbox
        from marketframe.sandbox import DEMO_KEYS

        if notice:
            print(f"{ENV_KEY} is not set: using the sandbox at {base_url}", file=notice)
        return Client(DEMO_KEYS["advanced"], **client_options)
    return sandbox_client(notice, seed=seed, now=now, **client_options)


@contextmanager
def given_or_connected(client: Any) -> Iterator[Any]:
    """``client`` when given, else one made by :func:`connect`'s rule for the call (Arrow
    tables, no HTTP cache) and closed after it."""
    if client is not None:
        yield client
        return
    with connect(backend="arrow", cache=False) as made:
        yield made


#: :func:`connect`'s client for a caller that keeps it (``marketframe.Ticker``'s shared
#: client) and closes it itself
make_client = connect


def sandbox_client(notice: TextIO | None = None, **options: Any) -> Any:
    """The embedded sandbox the commands, ``download`` and ``Store.sync`` fall back to
    without a credential (unlimited plan), announced on ``notice`` (one line, as
    :func:`connect` says it)."""
    client = Client.sandbox(rate_limit=None, **options)
    if notice:
        print(
            f"{ENV_KEY} is not set: using the built-in sandbox at {client.base_url}",
            file=notice,
        )
    return client
