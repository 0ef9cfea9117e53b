"""Every call ends within its total deadline, retries and their waits included (issue 11.10).

Before, a server that accepts connections and never answers held one quote call for
30 s x 5 attempts. These tests use real sockets on 127.0.0.1 and count what the servers saw;
nothing here measures time.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from marketframe import Client, DeadlineExceeded, ServerError, TransportError
from marketframe.sandbox import Sandbox


class _Silent:
    """Accepts TCP connections and never answers (holds them open until closed)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.changed:
                self.accepted.append(conn)
                self.changed.notify_all()

    def wait_accepted(self, n: int) -> int:
        """How many connections were accepted, once at least ``n`` were (or 30 s passed)."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.accepted) >= n, timeout=30)
            return len(self.accepted)

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self.sock.close()
        for conn in self.accepted:
            conn.close()
        self._thread.join(5)


@pytest.fixture
def silent() -> Iterator[_Silent]:
    server = _Silent()
    yield server
    server.close()


def test_a_silent_server_ends_at_the_deadline_saying_what_was_tried(silent: _Silent) -> None:
    base = f"http://127.0.0.1:{silent.port}/marketdata/v1.0"
    with Client(
        "k3y-for-a-silent-server",
        base_url=base,
        cache=False,
        pace=False,
        timeout=(5.0, 30.0),
        retries=5,
        backoff=0.01,
        deadline=1.0,
    ) as c:
        with pytest.raises(DeadlineExceeded) as info:
            c.stock.intraday.quote(symbol="2330")
    err = info.value
    assert isinstance(err, TransportError) and isinstance(err, TimeoutError)
    text = str(err)
    assert "within the 1 s deadline" in text
    assert f"GET {base}/stock/intraday/quote/2330" in text
    assert "ReadTimeout" in text
    attempts = c.stats().requests
    assert f"{attempts} attempt" in text
    assert silent.wait_accepted(attempts) == attempts  # what it says it tried, the server saw
    assert "Client(deadline=...)" in text
    assert "k3y-for-a-silent-server" not in text


def test_a_backoff_past_the_deadline_is_not_slept() -> None:
    with (
        Sandbox(seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=None, fault_rate=1.0) as sb,
        Client(
            sb.api_key, base_url=sb.base_url, cache=False, retries=2, backoff=3.0, deadline=1.0
        ) as c,
    ):
        with pytest.raises(ServerError):
            c.stock.intraday.quote(symbol="2330")
        assert sb.requests_served == 1  # the 1.5-4.5 s backoff would end past the deadline


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "60", None, True])
def test_the_deadline_must_be_a_positive_number(bad: Any) -> None:
    from marketframe import InvalidParams

    with pytest.raises(InvalidParams, match="deadline"):
        Client("some-key", deadline=bad)


class _Dribbler(http.server.BaseHTTPRequestHandler):
    """Answers 200 at once, then sends its 2,000-byte body one byte every 20 ms (40 s)."""

    connections: list[int] = []
    bytes_sent: list[int] = []

    def do_GET(self) -> None:  # noqa: N802
        self.connections.append(1)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2000")
        self.end_headers()
        self.wfile.flush()
        try:
            for _ in range(2000):
                self.wfile.write(b" ")
                self.wfile.flush()
                self.bytes_sent.append(1)
                time.sleep(0.02)
        except OSError:
            return  # the client hung up

    def log_message(self, *args: Any) -> None:
        pass


def test_a_dribbling_body_is_cut_at_the_deadline() -> None:
    """Each socket read gets a byte well within the read timeout, so only a deadline on the
    whole body stops this call (before, it took the 40 s the server chose)."""
    handler = type("H", (_Dribbler,), {"connections": [], "bytes_sent": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/marketdata/v1.0"
        with Client(
            "some-key",
            base_url=base,
            cache=False,
            pace=False,
            timeout=(5, 5),
            retries=3,
            backoff=0.01,
            deadline=1.0,
        ) as c:
            with pytest.raises(DeadlineExceeded, match=r"1 attempt \(ReadTimeout\)"):
                c.stock.intraday.quote(symbol="2330")
        assert len(handler.connections) == 1
        assert len(handler.bytes_sent) < 2000  # the body never completed
    finally:
        server.shutdown()
        server.server_close()
