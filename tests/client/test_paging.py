"""A day's trades come page after page; a server that repeats a page must not keep the client
asking for it for ever.

A real HTTP server stands between the client and the sandbox, as a misbehaving proxy (or a
service bug) would: it forwards every request with ``offset`` dropped (the server ignores it)
or moved back (pages overlap). Past a bound it refuses, so a client that never stops fails
here instead of running on (one did: 13,193 requests in 20 s, 2 GB, no end)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pandas as pd
import pytest
import requests

from marketframe import Client, ServiceError
from marketframe.exceptions import RepeatedPage

BOUND = 50  # requests the proxy forwards before it refuses (a day of 2330 is under 10 pages)


@contextmanager
def proxy(sandbox: Any, mode: str) -> Iterator[tuple[str, list[str]]]:
    """(base_url, queries forwarded) of a server in front of ``sandbox`` that drops
    ``offset`` (mode "ignore") or asks for 100 rows before it (mode "overlap")."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query))
            if mode == "ignore":
                query.pop("offset", None)
            elif int(query.get("offset", 0)) > 0:
                query["offset"] = str(int(query["offset"]) - 100)
            seen.append(urlencode(query))
            if len(seen) > BOUND:
                status, body, kind = 400, b'{"statusCode":400,"message":"bound"}', "json"
            else:
                got = requests.get(
                    f"{sandbox.base_url.rsplit('/marketdata', 1)[0]}{parts.path}",
                    params=query,
                    headers={"X-API-KEY": self.headers["X-API-KEY"]},
                    timeout=30,
                )
                status, body, kind = got.status_code, got.content, "json"
            self.send_response(status)
            self.send_header("Content-Type", f"application/{kind}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/marketdata/v1.0", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_that_ignores_offset_stops_paging_at_the_repeated_page(
    sandbox: Any, api_key: str
) -> None:
    with proxy(sandbox, "ignore") as (url, seen):
        with Client(api_key, base_url=url, cache=False) as c:
            with pytest.raises(RepeatedPage) as exc:
                c.stock.intraday.trades(symbol="2330")
    assert len(seen) == 2, seen  # the first page, then the same page again: stop
    assert isinstance(exc.value, ServiceError)
    message = str(exc.value)
    assert "stock.intraday.trades" in message and "offset" in message, message


def test_overlapping_pages_give_the_day_once(sandbox: Any, api_key: str) -> None:
    with Client(api_key, base_url=sandbox.base_url, cache=False) as c:
        day = c.stock.intraday.trades(symbol="2330")
    with proxy(sandbox, "overlap") as (url, seen):
        with Client(api_key, base_url=url, cache=False) as c:
            got = c.stock.intraday.trades(symbol="2330")
    assert len(day) > 2000 and len(seen) <= BOUND
    pd.testing.assert_frame_equal(got, day)
