"""What ``Store(...)`` is given, checked when it is made (its waits and worker count), and the
client it makes when given none."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from marketframe.exceptions import InvalidParams

if TYPE_CHECKING:
    from marketframe.client import Client


def check_timeout(timeout: float | None) -> None:
    """``Store(timeout=...)``: seconds > 0 (finite), or None for the default."""
    if timeout is not None and not (
        isinstance(timeout, int | float)
        and not isinstance(timeout, bool)
        and 0 < timeout < float("inf")
    ):
        raise InvalidParams("Store", "timeout", f"has value {timeout!r}", "seconds > 0")


def check_waits(lease_ttl: float, lock_timeout: float, commit_every: float = 2.0) -> None:
    """``Store(lease_ttl=..., lock_timeout=..., commit_every=...)``: seconds > 0; seconds >= 0
    or -1; seconds >= 0 (finite)."""
    if not (
        isinstance(lease_ttl, int | float) and not isinstance(lease_ttl, bool) and lease_ttl > 0
    ):
        raise InvalidParams("Store", "lease_ttl", f"has value {lease_ttl!r}", "seconds > 0")
    if not (
        lock_timeout == -1
        or (
            isinstance(lock_timeout, int | float)
            and not isinstance(lock_timeout, bool)
            and lock_timeout >= 0
        )
    ):
        raise InvalidParams(
            "Store",
            "lock_timeout",
            f"has value {lock_timeout!r}",
            "seconds >= 0, or -1 to wait forever",
        )
    if not (
        isinstance(commit_every, int | float)
        and not isinstance(commit_every, bool)
        and 0 <= commit_every < float("inf")
    ):
        raise InvalidParams(
            "Store", "commit_every", f"has value {commit_every!r}", "seconds >= 0 (finite)"
        )


def check_workers(max_workers: int | None) -> None:
    """``Store(max_workers=...)``: the default client's threads, an int >= 1 or None (16).
    Checked here, not when the client is first made: ``0`` was taken as the default."""
    from marketframe._checks import check_int

    if max_workers is not None:
        check_int("max_workers", max_workers, 1, "Store", "1, 2, ..., or None (16 at a time)")


def default_client(api_key: str | None, base_url: str | None, workers: int) -> Client[Any]:
    """The client of a store given none, by the rule ``download()`` and the commands follow
    (:func:`marketframe.client.connect`): ``api_key`` or the credential variables, at
    ``base_url`` or ``MARKETFRAME_BASE_URL``; with neither a key nor a variable, a sandbox
    (the one at ``base_url``, else the embedded one, announced on stderr). Without an HTTP
    cache: the store is the cache."""
    from marketframe.client import connect

    options: dict[str, Any] = {"backend": "arrow", "cache": False, "max_workers": workers}
    client: Client[Any] = connect(api_key=api_key, base_url=base_url, notice=sys.stderr, **options)
    return client
