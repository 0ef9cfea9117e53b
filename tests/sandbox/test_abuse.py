"""The sandbox under abuse: silent connections, connection floods, heavy REST bodies.

Every test here is bounded: a few hundred connections on 127.0.0.1 at most, and every wait
has an upper bound that only guards against a hang (no assertion measures time).
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import threading
import time
from datetime import datetime

import requests

from marketframe.sandbox import Sandbox
from marketframe.sandbox._limits import quiet_accept_errors

#: Upper bound for anything the server is expected to do "soon"; a guard, not a measure.
BOUND = 60.0


def _silent(sb: Sandbox, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection((sb.host, sb.port), timeout=BOUND)
        socks.append(s)
    return socks


def _closed_by_server(socks: list[socket.socket]) -> int:
    """How many of ``socks`` the server closes (EOF or reset), waiting at most ``BOUND``."""
    open_ = set(socks)
    closed = 0
    deadline = time.monotonic() + BOUND
    while open_ and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_), [], [], max(0.0, deadline - time.monotonic()))
        for s in ready:
            open_.discard(s)
            try:
                closed += s.recv(1) == b""
            except ConnectionResetError:
                closed += 1
    return closed


def _until(condition) -> bool:  # type: ignore[no-untyped-def]
    """Poll ``condition`` until it holds (at most ``BOUND``); the server works on its own."""
    deadline = time.monotonic() + BOUND
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _quote(sb: Sandbox) -> requests.Response:
    return requests.get(
        f"{sb.base_url}/stock/intraday/quote/2330", headers={"X-API-KEY": sb.api_key}, timeout=BOUND
    )


def test_silent_and_trickling_connections_are_closed_after_the_idle_timeout() -> None:
    with Sandbox(idle_timeout=0.5) as sb:
        silent = _silent(sb, 20)
        trickle = socket.create_connection((sb.host, sb.port), timeout=BOUND)
        trickle.sendall(b"GET /marketdata/v1.0/stock/intraday/quote/2330 HTTP/1.1\r\nHo")
        try:
            assert _closed_by_server([*silent, trickle]) == 21
            assert _quote(sb).status_code == 200
        finally:
            for s in [*silent, trickle]:
                s.close()


def test_connections_beyond_the_cap_are_refused_and_the_server_recovers(caplog) -> None:
    cap = 50
    with Sandbox(http_connections=cap, idle_timeout=BOUND) as sb:
        socks = _silent(sb, 300)
        try:
            refused = _closed_by_server(socks[cap:])
            assert refused == 300 - cap
            assert sb.connections == cap
        finally:
            for s in socks:
                s.close()
        assert _until(lambda: sb.connections == 0)
        assert _quote(sb).status_code == 200
    flood_lines = [r for r in caplog.records if "refusing" in r.getMessage()]
    assert len(flood_lines) == 1 and not flood_lines[0].exc_info


def test_a_slow_rest_body_does_not_stall_other_clients() -> None:
    """A request whose body takes long is built off the event loop.

    The first clock read of a request waits until the test releases it, so that request is
    "slow" for as long as the test wants; other requests must be answered meanwhile.
    """
    with Sandbox(now="2026-11-20T14:00:00+08:00") as sb:
        frozen = sb.now()
        entered, release = threading.Event(), threading.Event()
        first = threading.Lock()

        def clock() -> datetime:
            if first.acquire(blocking=False):
                entered.set()
                release.wait(3 * BOUND)
            return frozen

        sb.service.clock = clock
        slow: list[requests.Response] = []
        worker = threading.Thread(target=lambda: slow.append(_quote(sb)))
        worker.start()
        try:
            assert entered.wait(BOUND)
            fast = requests.get(
                f"{sb.base_url}/stock/intraday/ticker/2330",
                headers={"X-API-KEY": sb.api_key},
                timeout=BOUND,
            )
            assert fast.status_code == 200
            assert not slow, "the slow request finished first"
        finally:
            release.set()
            worker.join(BOUND)
        assert slow and slow[0].status_code == 200


def test_an_emulator_bug_is_a_json_500() -> None:
    with Sandbox() as sb:
        sb.service.clock = lambda: (_ for _ in ()).throw(RuntimeError("boom"))
        r = _quote(sb)
    assert r.status_code == 500
    assert r.json() == {"statusCode": 500, "message": "Internal Server Error"}


def test_accept_errors_are_logged_once_per_burst_without_traceback(caplog) -> None:
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop)
        with caplog.at_level(logging.WARNING):
            for _ in range(5000):
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(24, "Too many open files"),
                    }
                )
    finally:
        loop.close()
    lines = [r for r in caplog.records if "accept" in r.getMessage()]
    assert 1 <= len(lines) <= 6 and not any(r.exc_info for r in lines)
