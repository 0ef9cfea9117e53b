"""Reading a response body within a deadline.

``requests`` bounds each socket read by the read timeout, not the whole body: a server that
dribbles a byte every few seconds keeps a call alive for as long as it likes. The response
hook made by :func:`read_within` reads the body itself, one socket read at a time, each one
bounded by the time left, and gives up (as a ``requests.ReadTimeout``, which the retry loop
already handles) when the deadline has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests
import urllib3.exceptions

CHUNK = 1 << 16


def _set_timeout(raw: Any, seconds: float) -> None:
    """Bound the next socket read of ``raw`` (a urllib3 response) to ``seconds``."""
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.001))


def read_body(raw: Any, ends: float, close: Callable[[], Any]) -> bytes:
    """The whole body of ``raw`` (a urllib3 response) read before ``time.monotonic()`` reaches
    ``ends``; past it, or on a broken connection, ``close()`` is called and
    ``requests.ReadTimeout`` (or ``requests.ConnectionError``) raised, which the retry loop
    already handles."""
    chunks: list[bytes] = []
    while (left := ends - time.monotonic()) > 0:
        _set_timeout(raw, left)
        try:
            chunk = raw.read1(CHUNK, decode_content=True)
        except urllib3.exceptions.ReadTimeoutError as exc:
            close()
            raise requests.ReadTimeout(str(exc)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            close()
            raise requests.ConnectionError(str(exc)) from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    close()
    raise requests.ReadTimeout("the body was not complete at the deadline")


def read_within(ends: float) -> Callable[..., requests.Response]:
    """A ``requests`` response hook reading the whole body with :func:`read_body` (the
    cached session's path; an uncached client reads its answers with :func:`read_body`
    directly)."""

    def hook(resp: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
        raw = resp.raw
        if (
            resp._content is not False
            or getattr(resp, "from_cache", False)
            or not hasattr(raw, "read1")
        ):
            # already read (requests-cache dispatches hooks a second time, after storing),
            # or a stored answer: nothing to read from the network
            return resp
        resp._content = read_body(raw, ends, resp.close)
        resp._content_consumed = True
        return resp

    return hook
